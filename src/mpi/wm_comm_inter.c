/* Intercommunicators: Intercomm_create, Intercomm_merge, and Comm_split / Comm_create on an
 * intercommunicator.
 *
 * An intercommunicator's two groups share one context id; point-to-point goes to the remote group
 * (remote_world_ranks). Its collective context carries the library's traffic within each group
 * (local rank 0 is the group's leader) and between the two leaders: processes of the two groups
 * are distinct, so (source, tag) keeps the flows apart. */
#include "mpi/wm_internal.h"
#include "mpi/wm_group.h"

#include <stdlib.h>
#include <string.h>

/* Local leader of c exchanges `len_out` bytes for `len_in` with the remote leader, then broadcasts
 * what it received to its group. Everybody ends with the remote side's data in `in`. */
wu_status_t wm_inter_swap(wm_comm_t *c, const void *outb, size_t len_out, void *in, size_t len_in,
                                 const int *local)
{
    uint32_t coll = c->ctx | WM_CTX_COLL;
    wu_status_t st = WU_OK;
    if (c->rank == 0) {
        wc_request_t s, r;
        st = wc_irecv(wc_ep_default(), &r, in, len_in, c->remote_world_ranks[0], WM_TAG_INTER_LEADERS, coll);
        if (st != WU_OK)
            return st;
        st = wc_isend(wc_ep_default(), &s, outb, len_out, c->remote_world_ranks[0], WM_TAG_INTER_LEADERS, coll,
                      WC_SEND_STANDARD);
        if (st == WU_OK)
            wc_wait(&s);
        wc_wait(&r);
        if (st == WU_OK)
            st = (wu_status_t)r.error;
        if (st != WU_OK)
            return st;
    }
    return wm_cx_bcast(in, len_in, local, c->size, c->rank, 0, WM_TAG_INTER_BCAST, coll);
}

/* ---- Intercomm_create ---- */

int wm_impl_MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                                 int remote_leader, int tag, MPI_Comm *newintercomm)
{
    static const char fn[] = "MPI_Intercomm_create";
    WM_COMM_CHECK(fn, local_comm, lc);
    if (lc->inter)
        return wm_error(lc, MPI_ERR_COMM, fn, "local_comm %s is an intercommunicator", lc->name);
    if (local_leader < 0 || local_leader >= lc->size)
        return wm_error(lc, MPI_ERR_RANK, fn, "local_leader %d is not a rank of local_comm (size %d)",
                        local_leader, lc->size);
    if (tag < 0 || tag > WM_TAG_UB)
        return wm_error(lc, MPI_ERR_TAG, fn, "tag %d is not in 0..%d", tag, WM_TAG_UB);
    if (!newintercomm)
        return wm_error(lc, MPI_ERR_ARG, fn, "newintercomm is NULL");
    wm_comm_t *pc = NULL;
    if (lc->rank == local_leader) {
        /* peer_comm is significant only at the local leader */
        pc = wm_comm_get(peer_comm);
        if (!pc)
            return wm_error(lc, MPI_ERR_COMM, fn, "invalid peer_comm %p", (void *)peer_comm);
        if (remote_leader < 0 || remote_leader >= pc->remote_size)
            return wm_error(lc, MPI_ERR_RANK, fn, "remote_leader %d is not a rank of peer_comm (size %d)",
                            remote_leader, pc->remote_size);
        if (wm_comm_peer_world(pc, remote_leader) == wc_world.rank)
            return wm_error(lc, MPI_ERR_RANK, fn, "remote_leader is the local leader itself");
    }
    int *local = wm_comm_local_ranks(lc);
    if (!local)
        return wm_error(lc, MPI_ERR_NO_MEM, fn, "no memory");
    /* header: remote size, context id, remote leader's world rank */
    struct { int32_t n; uint32_t ctx; int32_t leader; } mine = { lc->size, 0, wc_world.rank }, theirs = { 0 };
    int *remote = NULL;
    wu_status_t st = WU_OK;
    uint32_t lcoll = lc->ctx | WM_CTX_COLL;
    if (lc->rank == local_leader) {
        /* both leaders propose an id; the one of the leader lower in world rank wins */
        mine.ctx = wc_ctx_alloc(wc_ep_default(), 2);
        uint32_t pcoll = pc->ctx | WM_CTX_COLL;
        int rl = wm_comm_peer_world(pc, remote_leader);
        int utag = WM_TAG_USER_BIT | tag;
        wc_request_t s, r;
        st = wc_irecv(wc_ep_default(), &r, &theirs, sizeof(theirs), rl, utag, pcoll);
        if (st == WU_OK) {
            if ((st = wc_isend(wc_ep_default(), &s, &mine, sizeof(mine), rl, utag, pcoll, WC_SEND_STANDARD)) == WU_OK)
                wc_wait(&s);
            wc_wait(&r);
        }
        if (st == WU_OK && !(remote = malloc(sizeof(int) * ((size_t)theirs.n + 1))))
            st = WU_ERR_NO_MEMORY;  /* the peer's next message stays unmatched; the job is broken */
        if (st == WU_OK) {
            if ((st = wc_irecv(wc_ep_default(), &r, remote, sizeof(int) * (size_t)theirs.n, rl, utag, pcoll)) == WU_OK) {
                if ((st = wc_isend(wc_ep_default(), &s, local, sizeof(int) * (size_t)lc->size, rl, utag, pcoll,
                                   WC_SEND_STANDARD)) == WU_OK)
                    wc_wait(&s);
                wc_wait(&r);
            }
        }
        if (st == WU_OK && rl < wc_world.rank)
            mine.ctx = theirs.ctx;
        theirs.ctx = mine.ctx;
    }
    if (st == WU_OK)
        st = wm_cx_bcast(&theirs, sizeof(theirs), local, lc->size, lc->rank, local_leader, WM_TAG_INTER_BCAST,
                         lcoll);
    if (st == WU_OK && lc->rank != local_leader && !(remote = malloc(sizeof(int) * ((size_t)theirs.n + 1))))
        st = WU_ERR_NO_MEMORY;
    if (st == WU_OK)
        st = wm_cx_bcast(remote, sizeof(int) * (size_t)theirs.n, local, lc->size, lc->rank, local_leader,
                         WM_TAG_INTER_BCAST, lcoll);
    int rc = MPI_SUCCESS;
    if (st != WU_OK) {
        rc = wm_error(lc, wm_status_to_class(st), fn, "%s", wu_status_str(st));
    } else {
        wm_comm_t *d = wm_comm_new(lc, theirs.ctx, local, lc->size, remote, theirs.n, true);
        if (!d)
            rc = wm_error(lc, MPI_ERR_NO_MEM, fn, "no memory for a communicator");
        else
            *newintercomm = wm_comm_handle(d);
    }
    free(local);
    free(remote);
    return rc;
}

/* ---- Intercomm_merge ---- */

int wm_impl_MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    static const char fn[] = "MPI_Intercomm_merge";
    WM_COMM_CHECK(fn, intercomm, c);
    if (!c->inter)
        return wm_error(c, MPI_ERR_COMM, fn, "%s is not an intercommunicator", c->name);
    if (!newintracomm)
        return wm_error(c, MPI_ERR_ARG, fn, "newintracomm is NULL");
    int *local = wm_comm_local_ranks(c);
    int *all = malloc(sizeof(int) * ((size_t)c->size + (size_t)c->remote_size + 1));
    int rc = MPI_SUCCESS;
    if (!local || !all) {
        rc = wm_error(c, MPI_ERR_NO_MEM, fn, "no memory");
        goto out;
    }
    /* the leaders' high flags; equal flags: the group whose leader is lower in world rank first */
    int32_t mine = high ? 1 : 0, theirs = 0;
    wu_status_t st = wm_inter_swap(c, &mine, sizeof(mine), &theirs, sizeof(theirs), local);
    if (st != WU_OK) {
        rc = wm_error(c, wm_status_to_class(st), fn, "%s", wu_status_str(st));
        goto out;
    }
    uint32_t ctx = wm_ctx_agree(c);
    bool local_first = mine != theirs ? !mine : wm_world_lt(local[0], c->remote_world_ranks[0]);
    const int *first = local_first ? local : c->remote_world_ranks;
    const int *second = local_first ? c->remote_world_ranks : local;
    int n1 = local_first ? c->size : c->remote_size, n2 = local_first ? c->remote_size : c->size;
    memcpy(all, first, sizeof(int) * (size_t)n1);
    memcpy(all + n1, second, sizeof(int) * (size_t)n2);
    wm_comm_t *d = wm_comm_new(c, ctx, all, n1 + n2, NULL, 0, false);
    if (!d)
        rc = wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a communicator");
    else
        *newintracomm = wm_comm_handle(d);
out:
    free(local);
    free(all);
    return rc;
}

/* ---- Comm_create and Comm_split on an intercommunicator ---- */

/* Each group's subset g (of its local group) is swapped between the groups; processes in g get an
 * intercommunicator to the remote subset, or MPI_COMM_NULL if either is empty. */
int wm_comm_create_inter(wm_comm_t *c, const wm_group_t *g, wm_comm_t **out)
{
    static const char fn[] = "MPI_Comm_create";
    int *local = wm_comm_local_ranks(c);
    int *mine = malloc(sizeof(int) * ((size_t)c->size + 1));
    int *theirs = malloc(sizeof(int) * ((size_t)c->remote_size + 1));
    int rc = MPI_SUCCESS;
    *out = NULL;
    if (!local || !mine || !theirs) {
        rc = wm_error(c, MPI_ERR_NO_MEM, fn, "no memory");
        goto out;
    }
    mine[0] = g->size;
    memcpy(mine + 1, g->ranks, sizeof(int) * (size_t)g->size);
    wu_status_t st = wm_inter_swap(c, mine, sizeof(int) * ((size_t)g->size + 1), theirs,
                                   sizeof(int) * ((size_t)c->remote_size + 1), local);
    if (st != WU_OK) {
        rc = wm_error(c, wm_status_to_class(st), fn, "%s", wu_status_str(st));
        goto out;
    }
    uint32_t ctx = wm_ctx_agree(c);
    if (g->rank != MPI_UNDEFINED && theirs[0] > 0 && !(*out = wm_comm_new(c, ctx, g->ranks, g->size, theirs + 1,
                                                                          theirs[0], true)))
        rc = wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a communicator");
out:
    free(local);
    free(mine);
    free(theirs);
    return rc;
}

typedef struct { int key, idx; } wm_ikey_t;

static int wm_ikey_cmp(const void *a, const void *b)
{
    const wm_ikey_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Members of `color` in a (color, key) table of n, ordered by (key, index), as world ranks. */
static int wm_ikey_members(const int *tab, int n, const int *world, int color, int *out)
{
    wm_ikey_t *e = malloc(sizeof(*e) * ((size_t)n + 1));
    if (!e)
        return -1;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (tab[2 * i] == color)
            e[k++] = (wm_ikey_t){ tab[2 * i + 1], i };
    qsort(e, (size_t)k, sizeof(*e), wm_ikey_cmp);
    for (int i = 0; i < k; i++)
        out[i] = world[e[i].idx];
    free(e);
    return k;
}

/* Each group gathers its (color, key) table at its leader; the leaders swap tables with a context id
 * base from the leader lower in world rank; each process makes an intercommunicator between the
 * processes of its color on both sides (MPI_COMM_NULL if either side has none). The id of color
 * class k is base + 2 * (index in the lower group of its first member). */
int wm_comm_split_inter(wm_comm_t *c, int color, int key, wm_comm_t **out)
{
    static const char fn[] = "MPI_Comm_split";
    int n = c->size, rn = c->remote_size;
    int *local = wm_comm_local_ranks(c);
    int *tab = malloc(sizeof(int) * (2 * (size_t)n + 1));     /* [base, (color, key) * n] */
    int *rtab = malloc(sizeof(int) * (2 * (size_t)rn + 1));
    int *lm = malloc(sizeof(int) * ((size_t)n + 1)), *rm = malloc(sizeof(int) * ((size_t)rn + 1));
    int rc = MPI_SUCCESS;
    *out = NULL;
    if (!local || !tab || !rtab || !lm || !rm) {
        rc = wm_error(c, MPI_ERR_NO_MEM, fn, "no memory");
        goto out;
    }
    uint32_t coll = c->ctx | WM_CTX_COLL;
    bool lower = wm_world_lt(local[0], c->remote_world_ranks[0]);
    tab[1 + 2 * c->rank] = color;
    tab[2 + 2 * c->rank] = key;
    wu_status_t st = wm_cx_gather(tab + 1, 2 * sizeof(int), local, n, c->rank, 0, WM_TAG_SPLIT_GATHER, coll);
    if (c->rank == 0)
        tab[0] = lower ? (int)wc_ctx_alloc(wc_ep_default(), 2 * (uint32_t)(n > rn ? n : rn)) : 0;
    if (st == WU_OK)
        st = wm_inter_swap(c, tab, sizeof(int) * (2 * (size_t)n + 1), rtab, sizeof(int) * (2 * (size_t)rn + 1),
                           local);
    if (st == WU_OK)
        st = wm_cx_bcast(tab, sizeof(int) * (2 * (size_t)n + 1), local, n, c->rank, 0, WM_TAG_SPLIT_BCAST, coll);
    if (st != WU_OK) {
        rc = wm_error(c, wm_status_to_class(st), fn, "%s", wu_status_str(st));
        goto out;
    }
    if (color == MPI_UNDEFINED)
        goto out;
    int kl = wm_ikey_members(tab + 1, n, local, color, lm);
    int kr = wm_ikey_members(rtab + 1, rn, c->remote_world_ranks, color, rm);
    if (kl < 0 || kr < 0) {
        rc = wm_error(c, MPI_ERR_NO_MEM, fn, "no memory");
        goto out;
    }
    if (kr == 0)
        goto out;
    /* index in the lower group of the color's first member there (lowest index with that color) */
    const int *lt = lower ? tab + 1 : rtab + 1;
    int ln = lower ? n : rn, first = 0;
    while (first < ln && lt[2 * first] != color)
        first++;
    uint32_t base = (uint32_t)(lower ? tab[0] : rtab[0]);
    if (!(*out = wm_comm_new(c, base + 2u * (uint32_t)first, lm, kl, rm, kr, true)))
        rc = wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a communicator");
out:
    free(local);
    free(tab);
    free(rtab);
    free(lm);
    free(rm);
    return rc;
}
