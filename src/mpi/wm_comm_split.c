/* Communicators from a parent's subsets: Comm_split, Comm_split_type, Comm_create,
 * Comm_create_group (intercommunicators: wm_comm_inter.c).
 *
 * Context ids: where one call makes several disjoint communicators (split, create with disjoint
 * groups), the parent's rank 0 takes 2 * size ids from the job-wide counter and broadcasts the base
 * with the call's other data; the communicator whose first member is parent rank p takes
 * base + 2p. Every id is then unique in the job without a second round. */
#include "mpi/wm_internal.h"
#include "mpi/wm_group.h"

#include <stdlib.h>
#include <string.h>

/* ---- Comm_split ---- */

typedef struct { int color, key, prank; } wm_split_ent_t;

static int wm_split_cmp(const void *a, const void *b)
{
    const wm_split_ent_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->prank > y->prank) - (x->prank < y->prank);
}

/* Members of `color` from the table of n (color, key) pairs, ordered by (key, parent rank): their
 * parent ranks into out; returns how many. */
static int wm_split_members(const int *tab, int n, int color, int *out)
{
    wm_split_ent_t *e = malloc(sizeof(*e) * ((size_t)n + 1));
    if (!e)
        return -1;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (tab[2 * i] == color)
            e[k++] = (wm_split_ent_t){ tab[2 * i], tab[2 * i + 1], i };
    qsort(e, (size_t)k, sizeof(*e), wm_split_cmp);
    for (int i = 0; i < k; i++)
        out[i] = e[i].prank;
    free(e);
    return k;
}

/* Intracommunicator split: gather (color, key) at rank 0, broadcast the table with a context base. */
static int wm_split_intra(wm_comm_t *c, int color, int key, wm_comm_t **out)
{
    static const char fn[] = "MPI_Comm_split";
    int n = c->size;
    int *buf = malloc(sizeof(int) * (2 * (size_t)n + 1));   /* [ctx base, (color, key) * n] */
    int *ranks = wm_comm_local_ranks(c);
    int *members = malloc(sizeof(int) * ((size_t)n + 1));
    int rc = MPI_SUCCESS;
    if (!buf || !ranks || !members) {
        rc = wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for %d ranks", n);
        goto out;
    }
    uint32_t coll = c->ctx | WM_CTX_COLL;
    buf[1 + 2 * c->rank] = color;
    buf[2 + 2 * c->rank] = key;
    wu_status_t st = wm_cx_gather(buf + 1, 2 * sizeof(int), ranks, n, c->rank, 0, WM_TAG_SPLIT_GATHER, coll);
    if (c->rank == 0)
        buf[0] = (int)wc_ctx_alloc(wc_ep_default(), 2 * (uint32_t)n);
    if (st == WU_OK)
        st = wm_cx_bcast(buf, sizeof(int) * (2 * (size_t)n + 1), ranks, n, c->rank, 0, WM_TAG_SPLIT_BCAST, coll);
    if (st != WU_OK) {
        rc = wm_error(c, wm_status_to_class(st), fn, "%s", wu_status_str(st));
        goto out;
    }
    *out = NULL;
    if (color == MPI_UNDEFINED)
        goto out;
    int k = wm_split_members(buf + 1, n, color, members);
    if (k < 0) {
        rc = wm_error(c, MPI_ERR_NO_MEM, fn, "no memory");
        goto out;
    }
    uint32_t ctx = (uint32_t)buf[0] + 2u * (uint32_t)members[0];
    for (int i = 0; i < k; i++)
        members[i] = ranks[members[i]];
    *out = wm_comm_new(c, ctx, members, k, NULL, 0, false);
    if (!*out)
        rc = wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a communicator");
out:
    free(buf);
    free(ranks);
    free(members);
    return rc;
}

int wm_comm_split(wm_comm_t *c, int color, int key, wm_comm_t **out)
{
    return c->inter ? wm_comm_split_inter(c, color, key, out) : wm_split_intra(c, color, key, out);
}

int wm_impl_MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_split";
    WM_COMM_CHECK(fn, comm, c);
    if (WU_UNLIKELY(c->tcomm))
        return wm_tc_split(fn, c, color, key, newcomm);
    if (!newcomm)
        return wm_error(c, MPI_ERR_ARG, fn, "newcomm is NULL");
    if (color < 0 && color != MPI_UNDEFINED)
        return wm_error(c, MPI_ERR_ARG, fn, "color %d is negative and not MPI_UNDEFINED", color);
    wm_comm_t *d = NULL;
    int rc = wm_comm_split(c, color, key, &d);
    if (rc != MPI_SUCCESS)
        return rc;
    *newcomm = d ? wm_comm_handle(d) : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* ---- Comm_create ---- */

/* g must be a subset of c's local group. */
static int wm_check_subgroup(const char *fn, wm_comm_t *c, const wm_group_t *g)
{
    for (int i = 0; i < g->size; i++)
        if (wm_comm_local_rank(c, g->ranks[i]) == MPI_UNDEFINED)
            return wm_error(c, MPI_ERR_GROUP, fn, "group member %d (world rank %d) is not in the communicator",
                            i, g->ranks[i]);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create";
    WM_COMM_CHECK(fn, comm, c);
    wm_group_t *g = wm_group_get(group);
    if (!g)
        return wm_error(c, MPI_ERR_GROUP, fn, "invalid group %p", (void *)group);
    if (!newcomm)
        return wm_error(c, MPI_ERR_ARG, fn, "newcomm is NULL");
    int rc = wm_check_subgroup(fn, c, g);
    if (rc != MPI_SUCCESS)
        return rc;
    wm_comm_t *d = NULL;
    if (c->inter) {
        rc = wm_comm_create_inter(c, g, &d);
    } else {
        /* groups may differ between processes if they are disjoint (MPI 2.2): one id base for all */
        int *ranks = wm_comm_local_ranks(c);
        if (!ranks)
            return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory");
        uint32_t base = c->rank == 0 ? wc_ctx_alloc(wc_ep_default(), 2 * (uint32_t)c->size) : 0;
        wu_status_t st = wm_cx_bcast(&base, sizeof(base), ranks, c->size, c->rank, 0, WM_TAG_CREATE_BCAST,
                                     c->ctx | WM_CTX_COLL);
        free(ranks);
        if (st != WU_OK)
            return wm_error(c, wm_status_to_class(st), fn, "%s", wu_status_str(st));
        if (g->rank != MPI_UNDEFINED) {
            uint32_t ctx = base + 2u * (uint32_t)wm_comm_local_rank(c, g->ranks[0]);
            if (!(d = wm_comm_new(c, ctx, g->ranks, g->size, NULL, 0, false)))
                rc = wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a communicator");
        }
    }
    if (rc != MPI_SUCCESS)
        return rc;
    *newcomm = d ? wm_comm_handle(d) : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* Collective over the group only: its rank 0 allocates the id and sends it to the others on the
 * parent's collective context, with the user's tag (concurrent calls of different threads on one
 * parent are told apart by their tags, as the standard asks of the application). */
int wm_impl_MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create_group";
    WM_COMM_CHECK(fn, comm, c);
    if (c->inter)
        return wm_error(c, MPI_ERR_COMM, fn, "%s is an intercommunicator", c->name);
    wm_group_t *g = wm_group_get(group);
    if (!g)
        return wm_error(c, MPI_ERR_GROUP, fn, "invalid group %p", (void *)group);
    if (tag < 0 || tag > WM_TAG_UB)
        return wm_error(c, MPI_ERR_TAG, fn, "tag %d is not in 0..%d", tag, WM_TAG_UB);
    if (!newcomm)
        return wm_error(c, MPI_ERR_ARG, fn, "newcomm is NULL");
    int rc = wm_check_subgroup(fn, c, g);
    if (rc != MPI_SUCCESS)
        return rc;
    if (g->rank == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    uint32_t ctx = 0, coll = c->ctx | WM_CTX_COLL;
    wu_status_t st = WU_OK;
    if (g->rank == 0) {
        ctx = wc_ctx_alloc(wc_ep_default(), 2);
        wc_request_t *rq = calloc((size_t)g->size, sizeof(*rq));
        if (!rq)
            return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory");
        int nposted = 1;
        for (int i = 1; i < g->size && st == WU_OK; i++, nposted++)
            st = wc_isend(wc_ep_default(), &rq[i], &ctx, sizeof(ctx), g->ranks[i], WM_TAG_USER_BIT | tag, coll,
                          WC_SEND_STANDARD);
        if (st != WU_OK)
            nposted--;
        for (int i = 1; i < nposted; i++)
            wc_wait(&rq[i]);
        free(rq);
    } else {
        st = wm_cx_recv(&ctx, sizeof(ctx), g->ranks[0], WM_TAG_USER_BIT | tag, coll);
    }
    if (st != WU_OK)
        return wm_error(c, wm_status_to_class(st), fn, "%s", wu_status_str(st));
    wm_comm_t *d = wm_comm_new(c, ctx, g->ranks, g->size, NULL, 0, false);
    if (!d)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a communicator");
    *newcomm = wm_comm_handle(d);
    return MPI_SUCCESS;
}
