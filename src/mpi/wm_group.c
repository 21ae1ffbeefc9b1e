/* Groups (see wm_group.h): every MPI_Group_* function but Group_from_session_pset, plus
 * Comm_group and Comm_remote_group. Set operations index the members by world rank in a table of
 * the world's size, so they cost O(|g1| + |g2| + world size). */
#include "mpi/wm_internal.h"
#include "mpi/wm_group.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(wm_group_t) <= WM_OBJ_SLOT, "wm_group_t must fit an object slot");

wm_group_t wm_group_empty;

void wm_group_init(void)
{
    wm_group_empty = (wm_group_t){ .size = 0, .rank = MPI_UNDEFINED, .ranks = NULL };
    wm_obj_init_predefined(&wm_group_empty.obj, WM_OBJ_GROUP, (uintptr_t)MPI_GROUP_EMPTY, NULL);
}

int wm_ranks_find(const int *ranks, int n, int w)
{
    for (int i = 0; i < n; i++)
        if (ranks[i] == w)
            return i;
    return MPI_UNDEFINED;
}

static void wm_group_destroy(wm_obj_t *o)
{
    wm_group_t *g = (wm_group_t *)o;
    if (g->ranks != g->inline_ranks)
        free(g->ranks);
    g->ranks = NULL;
    if (g->session)
        wm_obj_release((wm_obj_t *)g->session);
    g->session = NULL;
}

wm_group_t *wm_group_new(const int *world_ranks, int n)
{
    int *mem = NULL;
    if (n > WM_GROUP_INLINE && !(mem = malloc(sizeof(int) * (size_t)n)))
        return NULL;
    wm_group_t *g = wm_obj_create(WM_OBJ_GROUP, sizeof(*g), wm_group_destroy);
    if (!g) {
        free(mem);
        return NULL;
    }
    g->ranks = mem ? mem : g->inline_ranks;
    g->size = n;
    if (n)
        memcpy(g->ranks, world_ranks, sizeof(int) * (size_t)n);
    g->rank = wm_ranks_find(g->ranks, n, wc_world.rank);
    return g;
}

/* The group argument of an entry point: declares `wm_group_t *g` or returns MPI_ERR_GROUP. */
#define WM_GROUP_CHECK(fn, h, g, argname)                                                         \
    wm_group_t *g = wm_group_get(h);                                                             \
    if (WU_UNLIKELY(!g))                                                                         \
        return wm_error(NULL, MPI_ERR_GROUP, fn, "invalid group %p (%s)", (void *)(h), argname)

/* A new group of those ranks; no rank at all gives MPI_GROUP_EMPTY itself (MPI 4.1 section 7.3.2:
 * an empty result is MPI_GROUP_EMPTY), so handle comparisons and MPI_Group_compare agree. */
static int wm_group_out(const char *fn, const int *ranks, int n, MPI_Group *newgroup)
{
    if (n == 0) {
        *newgroup = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    wm_group_t *g = wm_group_new(ranks, n);
    if (!g)
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "no memory for a group of %d", n);
    *newgroup = (MPI_Group)g->obj.handle;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Group_size(MPI_Group group, int *size)
{
    static const char fn[] = "MPI_Group_size";
    WM_CHECK_INIT(fn);
    WM_GROUP_CHECK(fn, group, g, "group");
    if (!size)
        return wm_error(NULL, MPI_ERR_ARG, fn, "size is NULL");
    *size = g->size;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Group_rank(MPI_Group group, int *rank)
{
    static const char fn[] = "MPI_Group_rank";
    WM_CHECK_INIT(fn);
    WM_GROUP_CHECK(fn, group, g, "group");
    if (!rank)
        return wm_error(NULL, MPI_ERR_ARG, fn, "rank is NULL");
    *rank = g->rank;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Group_free(MPI_Group *group)
{
    static const char fn[] = "MPI_Group_free";
    WM_CHECK_INIT(fn);
    if (!group)
        return wm_error(NULL, MPI_ERR_ARG, fn, "group is NULL");
    WM_GROUP_CHECK(fn, *group, g, "*group");
    /* MPI_GROUP_EMPTY may be freed (it is what Group_incl of nothing returns elsewhere) */
    wm_obj_user_free(&g->obj);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

/* world rank -> 1 + index in g (0: not a member); NULL: no memory. */
static int *wm_group_index(const wm_group_t *g)
{
    int *idx = calloc((size_t)wc_world.size, sizeof(int));
    if (idx)
        for (int i = 0; i < g->size; i++)
            idx[g->ranks[i]] = i + 1;
    return idx;
}

int wm_impl_MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                                      int ranks2[])
{
    static const char fn[] = "MPI_Group_translate_ranks";
    WM_CHECK_INIT(fn);
    WM_GROUP_CHECK(fn, group1, g1, "group1");
    WM_GROUP_CHECK(fn, group2, g2, "group2");
    if (n < 0)
        return wm_error(NULL, MPI_ERR_ARG, fn, "n %d is negative", n);
    if (n > 0 && (!ranks1 || !ranks2))
        return wm_error(NULL, MPI_ERR_ARG, fn, "%s is NULL", ranks1 ? "ranks2" : "ranks1");
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= g1->size))
            return wm_error(NULL, MPI_ERR_RANK, fn, "ranks1[%d] = %d is not a rank of group1 (size %d)",
                            i, ranks1[i], g1->size);
    int *idx = n > 4 ? wm_group_index(g2) : NULL;
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        int w = g1->ranks[ranks1[i]];
        ranks2[i] = idx ? (idx[w] ? idx[w] - 1 : MPI_UNDEFINED) : wm_ranks_find(g2->ranks, g2->size, w);
    }
    free(idx);
    return MPI_SUCCESS;
}

/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL for two member lists. */
int wm_ranks_compare(const int *a, int na, const int *b, int nb)
{
    if (na != nb)
        return MPI_UNEQUAL;
    if (na == 0 || memcmp(a, b, sizeof(int) * (size_t)na) == 0)
        return MPI_IDENT;
    char *in = calloc((size_t)wc_world.size, 1);
    if (!in)
        return MPI_UNEQUAL;
    for (int i = 0; i < na; i++)
        in[a[i]] = 1;
    int res = MPI_SIMILAR;
    for (int i = 0; i < nb; i++)
        if (!in[b[i]])
            res = MPI_UNEQUAL;
    free(in);
    return res;
}

int wm_impl_MPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    static const char fn[] = "MPI_Group_compare";
    WM_CHECK_INIT(fn);
    WM_GROUP_CHECK(fn, group1, g1, "group1");
    WM_GROUP_CHECK(fn, group2, g2, "group2");
    if (!result)
        return wm_error(NULL, MPI_ERR_ARG, fn, "result is NULL");
    *result = wm_ranks_compare(g1->ranks, g1->size, g2->ranks, g2->size);
    return MPI_SUCCESS;
}

enum { WM_SET_UNION, WM_SET_INTER, WM_SET_DIFF };

static int wm_group_setop(const char *fn, int op, MPI_Group group1, MPI_Group group2,
                          MPI_Group *newgroup)
{
    WM_CHECK_INIT(fn);
    WM_GROUP_CHECK(fn, group1, g1, "group1");
    WM_GROUP_CHECK(fn, group2, g2, "group2");
    if (!newgroup)
        return wm_error(NULL, MPI_ERR_ARG, fn, "newgroup is NULL");
    int *in2 = wm_group_index(g2);
    int *out = malloc(sizeof(int) * ((size_t)g1->size + (size_t)g2->size + 1));
    if (!in2 || !out) {
        free(in2);
        free(out);
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "no memory");
    }
    int n = 0;
    for (int i = 0; i < g1->size; i++) {
        bool both = in2[g1->ranks[i]] != 0;
        if (op == WM_SET_UNION || (op == WM_SET_INTER) == both)
            out[n++] = g1->ranks[i];
    }
    if (op == WM_SET_UNION) {
        /* members of group2 not in group1, in group2's order */
        memset(in2, 0, sizeof(int) * (size_t)wc_world.size);
        for (int i = 0; i < g1->size; i++)
            in2[g1->ranks[i]] = 1;
        for (int i = 0; i < g2->size; i++)
            if (!in2[g2->ranks[i]])
                out[n++] = g2->ranks[i];
    }
    int rc = wm_group_out(fn, out, n, newgroup);
    free(in2);
    free(out);
    return rc;
}

int wm_impl_MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return wm_group_setop("MPI_Group_union", WM_SET_UNION, group1, group2, newgroup);
}

int wm_impl_MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return wm_group_setop("MPI_Group_intersection", WM_SET_INTER, group1, group2, newgroup);
}

int wm_impl_MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return wm_group_setop("MPI_Group_difference", WM_SET_DIFF, group1, group2, newgroup);
}

/* Checks a list of n distinct ranks of g; `seen` (g->size bytes, zeroed) marks them. */
static int wm_group_check_list(const char *fn, const wm_group_t *g, int n, const int ranks[],
                               char *seen)
{
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size)
            return wm_error(NULL, MPI_ERR_RANK, fn, "ranks[%d] = %d is not a rank of the group (size %d)",
                            i, ranks[i], g->size);
        if (seen[ranks[i]])
            return wm_error(NULL, MPI_ERR_RANK, fn, "ranks[%d] = %d appears twice", i, ranks[i]);
        seen[ranks[i]] = 1;
    }
    return MPI_SUCCESS;
}

static int wm_group_inex(const char *fn, bool incl, MPI_Group group, int n, const int ranks[],
                         MPI_Group *newgroup)
{
    WM_CHECK_INIT(fn);
    WM_GROUP_CHECK(fn, group, g, "group");
    if (!newgroup)
        return wm_error(NULL, MPI_ERR_ARG, fn, "newgroup is NULL");
    if (n < 0 || n > g->size)
        return wm_error(NULL, MPI_ERR_ARG, fn, "n %d is not in 0..%d (the group's size)", n, g->size);
    if (n > 0 && !ranks)
        return wm_error(NULL, MPI_ERR_ARG, fn, "ranks is NULL");
    char *seen = calloc((size_t)g->size + 1, 1);
    int *out = malloc(sizeof(int) * ((size_t)g->size + 1));
    if (!seen || !out) {
        free(seen);
        free(out);
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "no memory");
    }
    int rc = wm_group_check_list(fn, g, n, ranks, seen);
    if (rc == MPI_SUCCESS) {
        int k = 0;
        if (incl)
            for (int i = 0; i < n; i++)
                out[k++] = g->ranks[ranks[i]];
        else
            for (int i = 0; i < g->size; i++)
                if (!seen[i])
                    out[k++] = g->ranks[i];
        rc = wm_group_out(fn, out, k, newgroup);
    }
    free(seen);
    free(out);
    return rc;
}

int wm_impl_MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return wm_group_inex("MPI_Group_incl", true, group, n, ranks, newgroup);
}

int wm_impl_MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return wm_group_inex("MPI_Group_excl", false, group, n, ranks, newgroup);
}

/* The ranks named by n (first, last, stride) triplets, in order, into out (at most g->size of them,
 * each once); returns an MPI error code. */
static int wm_group_ranges(const char *fn, const wm_group_t *g, int n, int ranges[][3], int *out,
                           int *nout)
{
    char *seen = calloc((size_t)g->size + 1, 1);
    if (!seen)
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "no memory");
    int k = 0, rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        /* MPI 4.1 7.3.2: the ranks first + k * stride for k = 0 .. floor((last - first) / stride),
         * none when that is negative (a stride going away from last); each computed rank must be
         * a rank of the group, last itself need not be one */
        long span = (long)last - first;
        long lastc = stride ? first + span / stride * (long)stride : first;
        if (stride == 0) {
            rc = wm_error(NULL, MPI_ERR_ARG, fn, "ranges[%d] has stride 0", i);
        } else if ((stride > 0 && span < 0) || (stride < 0 && span > 0)) {
            continue;   /* an empty range */
        } else if (first < 0 || first >= g->size || lastc < 0 || lastc >= g->size) {
            rc = wm_error(NULL, MPI_ERR_RANK, fn, "ranges[%d] = (%d, %d, %d) names a rank outside 0..%d", i,
                          first, last, stride, g->size - 1);
        } else {
            for (long r = first; stride > 0 ? r <= lastc : r >= lastc; r += stride) {
                if (seen[r]) {
                    rc = wm_error(NULL, MPI_ERR_RANK, fn, "ranges[%d] names rank %ld a second time", i, r);
                    break;
                }
                seen[r] = 1;
                out[k++] = (int)r;
            }
        }
    }
    free(seen);
    *nout = k;
    return rc;
}

static int wm_group_range_inex(const char *fn, bool incl, MPI_Group group, int n, int ranges[][3],
                               MPI_Group *newgroup)
{
    WM_CHECK_INIT(fn);
    WM_GROUP_CHECK(fn, group, g, "group");
    if (!newgroup)
        return wm_error(NULL, MPI_ERR_ARG, fn, "newgroup is NULL");
    if (n < 0)
        return wm_error(NULL, MPI_ERR_ARG, fn, "n %d is negative", n);
    if (n > 0 && !ranges)
        return wm_error(NULL, MPI_ERR_ARG, fn, "ranges is NULL");
    int *sel = malloc(sizeof(int) * ((size_t)g->size + 1));
    int *out = malloc(sizeof(int) * ((size_t)g->size + 1));
    char *mark = calloc((size_t)g->size + 1, 1);
    int rc, nsel = 0;
    if (!sel || !out || !mark)
        rc = wm_error(NULL, MPI_ERR_NO_MEM, fn, "no memory");
    else
        rc = wm_group_ranges(fn, g, n, ranges, sel, &nsel);
    if (rc == MPI_SUCCESS) {
        int k = 0;
        if (incl) {
            for (int i = 0; i < nsel; i++)
                out[k++] = g->ranks[sel[i]];
        } else {
            for (int i = 0; i < nsel; i++)
                mark[sel[i]] = 1;
            for (int i = 0; i < g->size; i++)
                if (!mark[i])
                    out[k++] = g->ranks[i];
        }
        rc = wm_group_out(fn, out, k, newgroup);
    }
    free(sel);
    free(out);
    free(mark);
    return rc;
}

int wm_impl_MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return wm_group_range_inex("MPI_Group_range_incl", true, group, n, ranges, newgroup);
}

int wm_impl_MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return wm_group_range_inex("MPI_Group_range_excl", false, group, n, ranges, newgroup);
}

/* ---- groups of communicators ---- */

/* The local group of c as a list of world ranks into a malloc'd array (NULL: no memory). */
static int *wm_comm_ranks_copy(const int *ranks, int n)
{
    int *out = malloc(sizeof(int) * ((size_t)n + 1));
    if (out)
        for (int i = 0; i < n; i++)
            out[i] = ranks ? ranks[i] : i;
    return out;
}

int wm_impl_MPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    static const char fn[] = "MPI_Comm_group";
    WM_COMM_CHECK(fn, comm, c);
    if (!group)
        return wm_error(c, MPI_ERR_ARG, fn, "group is NULL");
    int *r = wm_comm_ranks_copy(c->world_ranks, c->size);
    if (!r)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory");
    int rc = wm_group_out(fn, r, c->size, group);
    free(r);
    return rc;
}

int wm_impl_MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    static const char fn[] = "MPI_Comm_remote_group";
    WM_COMM_CHECK(fn, comm, c);
    if (!c->inter)
        return wm_error(c, MPI_ERR_COMM, fn, "%s is not an intercommunicator", c->name);
    if (!group)
        return wm_error(c, MPI_ERR_ARG, fn, "group is NULL");
    return wm_group_out(fn, c->remote_world_ranks, c->remote_size, group);
}
