/* Hierarchical collectives: Barrier, Bcast, Reduce, Allreduce and Allgather on a communicator
 * that spans several nodes with several of its ranks on some node. Each call is one schedule of
 * phases separated by fences: within every node (shared memory), among one representative per
 * node (the network), within every node again. Each phase is a flat builder (wm_coll_*.c) run on a
 * view of c: a wm_comm_t that has only size, rank and world_ranks, which is all the flat builders
 * read. The messages of every phase go on c's own collective context with the call's tag, so the
 * views need no context id and no communication to make: the ranks of one node talk only in the
 * node phases and the representatives of different nodes only in the network phase, and the
 * phases of a rank run in the same order on every rank, so between any two ranks the messages go
 * in the order both post them (docs/collectives.md, "Tags and sequence numbers").
 *
 * The layout (struct wm_coll_hier) is computed on a communicator's first collective from the
 * core's node table (wc_node_of) alone, identically on every rank, and cached on the
 * communicator: any thread may make it; a compare-and-swap keeps the first one stored. */
#include "mpi/wm_coll.h"
#include "util/wu_log.h"

#include <stdlib.h>

enum { WM_HIER_BARRIER, WM_HIER_BCAST, WM_HIER_REDUCE, WM_HIER_ALLREDUCE, WM_HIER_ALLGATHER,
       WM_HIER_NKINDS };
static const char *const wm_hier_kind_name[WM_HIER_NKINDS] = {
    "barrier", "bcast", "reduce", "allreduce", "allgather",
};

/* Read-only once published, but for the counters (any thread, relaxed). */
typedef struct wm_coll_hier {
    int nnodes;                /* nodes of c, numbered by their first rank of c */
    int my_node;
    bool contiguous;           /* node k holds the consecutive ranks by_node[first[k] ..]: rank
                                  order is node order (non-commutative ops may go hierarchical) */
    int *first;                /* [nnodes + 1]: node k: by_node[first[k] .. first[k + 1]) */
    int *by_node;              /* [size]: c's ranks grouped by node, ascending within a node */
    int *node_of;              /* [size]: c rank -> node */
    int *slot;                 /* [size]: c rank -> its index within its node */
    wm_comm_t node;            /* view: this rank's node (its first rank is the node's leader) */
    wm_comm_t leaders;         /* view: every node's leader, in node order (rank: this node's
                                  index if this rank leads it, else MPI_UNDEFINED) */
    _Atomic uint64_t calls[WM_HIER_NKINDS];   /* calls that took the hierarchical path */
} wm_coll_hier_t;

/* Stored for a communicator that the flat algorithms serve (one node, or one rank per node). */
static wm_coll_hier_t wm_coll_hier_flat;

/* A new layout for c; &wm_coll_hier_flat when c is flat; NULL: no memory. */
static wm_coll_hier_t *wm_coll_hier_new(const wm_comm_t *c)
{
    int n = c->size, jn = wc_world.nnodes;
    if (n < 3 || jn < 2)
        return &wm_coll_hier_flat;
    int *map = malloc(sizeof(int) * (size_t)jn);
    int *cnt = calloc((size_t)n, sizeof(int));
    wm_coll_hier_t *h = calloc(1, sizeof(*h));
    int *mem = malloc(sizeof(int) * ((size_t)n * 4 + 1));
    if (!map || !cnt || !h || !mem)
        goto err_mem;
    for (int k = 0; k < jn; k++)
        map[k] = -1;
    int nn = 0;
    int *node_of = mem, *by_node = mem + n, *slot = mem + 2 * n, *world = mem + 3 * n;
    for (int i = 0; i < n; i++) {
        int jnode = wc_node_of(wm_comm_world_rank(c, i));
        if (jnode < 0 || jnode >= jn) {   /* not a rank of this job: keep to the flat ones */
            nn = n;
            break;
        }
        if (map[jnode] < 0)
            map[jnode] = nn++;
        node_of[i] = map[jnode];
        slot[i] = cnt[node_of[i]]++;
    }
    if (nn == 1 || nn == n) {
        free(map);
        free(cnt);
        free(h);
        free(mem);
        return &wm_coll_hier_flat;
    }
    int *first = malloc(sizeof(int) * ((size_t)nn + 1));
    int *leader_world = malloc(sizeof(int) * (size_t)nn);
    if (!first || !leader_world) {
        free(first);
        free(leader_world);
        goto err_mem;
    }
    first[0] = 0;
    for (int k = 0; k < nn; k++)
        first[k + 1] = first[k] + cnt[k];
    h->contiguous = true;
    for (int i = 0; i < n; i++) {
        by_node[first[node_of[i]] + slot[i]] = i;
        h->contiguous = h->contiguous && (i == 0 || node_of[i] >= node_of[i - 1]);
    }
    for (int p = 0; p < n; p++)
        world[p] = wm_comm_world_rank(c, by_node[p]);
    for (int k = 0; k < nn; k++)
        leader_world[k] = world[first[k]];
    int me = c->rank, k = node_of[me];
    h->nnodes = nn;
    h->my_node = k;
    h->first = first;
    h->by_node = by_node;
    h->node_of = node_of;
    h->slot = slot;
    h->node = (wm_comm_t){ .rank = slot[me], .size = cnt[k], .world_ranks = world + first[k],
                           .remote_size = cnt[k], .remote_world_ranks = world + first[k] };
    h->leaders = (wm_comm_t){ .rank = slot[me] == 0 ? k : MPI_UNDEFINED, .size = nn,
                              .world_ranks = leader_world, .remote_size = nn,
                              .remote_world_ranks = leader_world };
    free(map);
    free(cnt);
    wu_debug("%s: %d ranks on %d nodes (%s): hierarchical collectives",
             c->name[0] ? c->name : "a communicator", n, nn,
             h->contiguous ? "consecutive ranks" : "ranks interleaved");
    return h;

err_mem:
    free(map);
    free(cnt);
    free(h);
    free(mem);
    wu_log_error("%s: no memory for the node layout of collectives", c->name);
    return NULL;
}

static void wm_coll_hier_destroy(wm_coll_hier_t *h)
{
    free(h->first);
    free((void *)h->leaders.world_ranks);
    free(h->node_of);   /* the block of node_of, by_node, slot and the node views' world ranks */
    free(h);
}

/* c's layout, made on first use; NULL with *st_p set: no memory. */
static wm_coll_hier_t *wm_coll_hier_get(wm_comm_t *c, wu_status_t *st_p)
{
    wm_coll_hier_t *h = atomic_load_explicit(&c->coll_hier, memory_order_acquire);
    if (WU_LIKELY(h))
        return h;
    h = wm_coll_hier_new(c);
    if (!h) {
        *st_p = WU_ERR_NO_MEMORY;
        return NULL;
    }
    wm_coll_hier_t *prev = NULL;
    if (!atomic_compare_exchange_strong_explicit(&c->coll_hier, &prev, h, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        if (h != &wm_coll_hier_flat)
            wm_coll_hier_destroy(h);
        h = prev;
    }
    return h;
}

void wm_coll_hier_free(wm_comm_t *c)
{
    wm_coll_hier_t *h = atomic_exchange_explicit(&c->coll_hier, NULL, memory_order_acq_rel);
    if (!h || h == &wm_coll_hier_flat)
        return;
    uint64_t k[WM_HIER_NKINDS];
    for (int i = 0; i < WM_HIER_NKINDS; i++)
        k[i] = atomic_load_explicit(&h->calls[i], memory_order_relaxed);
    wu_debug("%s: hierarchical collectives over %d nodes: %s %llu, %s %llu, %s %llu, %s %llu, "
             "%s %llu", c->name[0] ? c->name : "a communicator", h->nnodes,
             wm_hier_kind_name[0], (unsigned long long)k[0],
             wm_hier_kind_name[1], (unsigned long long)k[1],
             wm_hier_kind_name[2], (unsigned long long)k[2],
             wm_hier_kind_name[3], (unsigned long long)k[3],
             wm_hier_kind_name[4], (unsigned long long)k[4]);
    wm_coll_hier_destroy(h);
}

/* The layout to use for a call of kind `kind`, counted; NULL: the flat builder (or, with the
 * schedule's error set, no memory: every rank then fails the call rather than some running
 * another algorithm). */
static wm_coll_hier_t *wm_hier_use(wc_sched_t *s, wm_comm_t *c, int kind)
{
    wu_status_t st = WU_OK;
    wm_coll_hier_t *h = wm_coll_hier_get(c, &st);
    if (!h) {
        wc_sched_fail(s, st);
        return NULL;
    }
    if (h == &wm_coll_hier_flat)
        return NULL;
    atomic_fetch_add_explicit(&h->calls[kind], 1, memory_order_relaxed);
    return h;
}

/* The representatives of a rooted call: the root for its node, the leader for the others. *view_p
 * is the leaders' view with the root in its node's place (its world ranks in a temporary of s);
 * false: no memory. */
static bool wm_hier_reps(wc_sched_t *s, wm_comm_t *c, const wm_coll_hier_t *h, int root,
                         wm_comm_t *view_p)
{
    int kr = h->node_of[root];
    *view_p = h->leaders;
    view_p->rank = h->slot[c->rank] == 0 ? h->my_node : MPI_UNDEFINED;
    if (h->slot[root] == 0)
        return true;
    int *w = wc_sched_tmp(s, sizeof(int) * (size_t)h->nnodes);
    if (!w)
        return false;
    for (int k = 0; k < h->nnodes; k++)
        w[k] = h->leaders.world_ranks[k];
    w[kr] = wm_coll_world(c, root);
    view_p->world_ranks = view_p->remote_world_ranks = w;
    if (h->my_node == kr)
        view_p->rank = c->rank == root ? kr : MPI_UNDEFINED;
    return true;
}

/* ---- barrier: fan-in to the leader, barrier of the leaders, fan-out ---- */

void wm_coll_build_hier_barrier(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    wm_coll_hier_t *h = wm_hier_use(s, c, WM_HIER_BARRIER);
    if (!h) {
        wm_coll_build_barrier(s, c, a);
        return;
    }
    wm_comm_t *nv = &h->node;
    if (nv->rank != 0) {
        int leader = wm_coll_world(nv, 0);
        wc_sched_send(s, NULL, 0, &wc_dtype_bytes, leader);
        wc_sched_fence(s);
        wc_sched_recv(s, NULL, 0, &wc_dtype_bytes, leader);
        return;
    }
    for (int i = 1; i < nv->size; i++)
        wc_sched_recv(s, NULL, 0, &wc_dtype_bytes, wm_coll_world(nv, i));
    wc_sched_fence(s);
    wm_coll_build_barrier(s, &h->leaders, a);
    wc_sched_fence(s);
    for (int i = 1; i < nv->size; i++)
        wc_sched_send(s, NULL, 0, &wc_dtype_bytes, wm_coll_world(nv, i));
}

/* ---- bcast: among the representatives (the root for its node), then within each node ---- */

void wm_coll_build_hier_bcast(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    if (wm_coll_bytes(a->rcount, a->rtype) == 0) {
        wm_coll_build_bcast(s, c, a);
        return;
    }
    wm_coll_hier_t *h = wm_hier_use(s, c, WM_HIER_BCAST);
    if (!h) {
        wm_coll_build_bcast(s, c, a);
        return;
    }
    wm_comm_t reps;
    if (!wm_hier_reps(s, c, h, a->root, &reps))
        return;
    wm_coll_args_t na = *a;
    if (reps.rank != MPI_UNDEFINED) {
        na.root = h->node_of[a->root];
        wm_coll_build_bcast(s, &reps, &na);
        wc_sched_fence(s);
    }
    na.root = h->my_node == h->node_of[a->root] ? h->slot[a->root] : 0;
    wm_coll_build_bcast(s, &h->node, &na);
}

/* ---- reduce: within each node to its representative, then among the representatives ---- */

void wm_coll_build_hier_reduce(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    uint64_t count = (uint64_t)a->rcount;
    if (count == 0) {
        wm_coll_build_reduce(s, c, a);
        return;
    }
    wu_status_t st = WU_OK;
    wm_coll_hier_t *h = wm_coll_hier_get(c, &st);
    if (h && h != &wm_coll_hier_flat && !a->op->commute && !h->contiguous)
        h = NULL;   /* rank order would not be node order */
    else if (h)
        h = wm_hier_use(s, c, WM_HIER_REDUCE);
    else
        wc_sched_fail(s, st);
    if (!h) {
        wm_coll_build_reduce(s, c, a);
        return;
    }
    wm_comm_t reps;
    if (!wm_hier_reps(s, c, h, a->root, &reps))
        return;
    bool is_root = c->rank == a->root, is_rep = reps.rank != MPI_UNDEFINED;
    int kr = h->node_of[a->root];
    /* a representative other than the root reduces its node into a temporary */
    char *part = is_rep && !is_root ? wm_coll_tmp(s, count, a->rtype) : NULL;
    if (is_rep && !is_root && !part)
        return;
    wm_coll_args_t na = *a;
    na.root = h->my_node == kr ? h->slot[a->root] : 0;
    na.rbuf = is_root ? a->rbuf : part;
    wm_coll_build_reduce(s, &h->node, &na);
    if (!is_rep)
        return;
    wc_sched_fence(s);
    wm_coll_args_t la = *a;
    la.root = kr;
    la.sbuf = is_root ? MPI_IN_PLACE : part;
    la.rbuf = is_root ? a->rbuf : NULL;
    wm_coll_build_reduce(s, &reps, &la);
}

/* ---- allreduce: within each node to its leader, allreduce of the leaders, node bcast ---- */

void wm_coll_build_hier_allreduce(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    if (a->rcount == 0) {
        wm_coll_build_allreduce(s, c, a);
        return;
    }
    wu_status_t st = WU_OK;
    wm_coll_hier_t *h = wm_coll_hier_get(c, &st);
    if (h && h != &wm_coll_hier_flat && !a->op->commute && !h->contiguous)
        h = NULL;
    else if (h)
        h = wm_hier_use(s, c, WM_HIER_ALLREDUCE);
    else
        wc_sched_fail(s, st);
    if (!h) {
        wm_coll_build_allreduce(s, c, a);
        return;
    }
    /* the leader (node rank 0) reduces its node into its receive buffer; the others send their
     * input (the receive buffer itself in place, rewritten only after the fence) */
    wm_coll_args_t na = *a;
    na.root = 0;
    wm_coll_build_reduce(s, &h->node, &na);
    wc_sched_fence(s);
    if (h->node.rank == 0) {
        wm_coll_args_t la = *a;
        la.sbuf = MPI_IN_PLACE;
        wm_coll_build_allreduce(s, &h->leaders, &la);
        wc_sched_fence(s);
    }
    wm_coll_args_t ba = { .rbuf = a->rbuf, .rcount = a->rcount, .rtype = a->rtype, .root = 0 };
    wc_sched_send_mode(s, WC_SEND_BULK);
    wm_coll_build_bcast(s, &h->node, &ba);
}

/* ---- allgather: node gather to the leader, allgatherv of the node blocks among the leaders,
 * node bcast of everything, each rank unpacking the blocks to their ranks' places ---- */

void wm_coll_build_hier_allgather(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    uint64_t bs = wm_coll_bytes(a->rcount, a->rtype);
    const wm_datatype_t *bt = wm_type_get(MPI_BYTE);
    if (bs == 0 || !bt) {
        wm_coll_build_allgather(s, c, a);
        return;
    }
    wm_coll_hier_t *h = wm_hier_use(s, c, WM_HIER_ALLGATHER);
    if (!h) {
        wm_coll_build_allgather(s, c, a);
        return;
    }
    int n = c->size, me = c->rank, k = h->my_node, nn = h->nnodes;
    /* every block, packed, in node order (by_node) */
    char *all = wc_sched_tmp(s, (size_t)(bs * (uint64_t)n));
    if (!all)
        return;
    bool in_place = a->sbuf == MPI_IN_PLACE;
    wm_coll_args_t ga = {
        .sbuf = in_place ? wm_coll_at(a->rbuf, (int64_t)me * a->rcount, a->rtype) : a->sbuf,
        .scount = in_place ? a->rcount : a->scount,
        .stype = in_place ? a->rtype : a->stype,
        .rbuf = all + (uint64_t)h->first[k] * bs, .rcount = (MPI_Count)bs, .rtype = bt, .root = 0,
    };
    wm_coll_build_gather(s, &h->node, &ga);
    wc_sched_fence(s);
    if (h->node.rank == 0) {
        MPI_Count *cnts = wc_sched_tmp(s, sizeof(MPI_Count) * (size_t)nn);
        MPI_Aint *displs = wc_sched_tmp(s, sizeof(MPI_Aint) * (size_t)nn);
        if (!cnts || !displs)
            return;
        for (int j = 0; j < nn; j++) {
            cnts[j] = (MPI_Count)((uint64_t)(h->first[j + 1] - h->first[j]) * bs);
            displs[j] = (MPI_Aint)((uint64_t)h->first[j] * bs);
        }
        wm_coll_args_t va = { .sbuf = MPI_IN_PLACE, .rbuf = all, .rtype = bt,
                              .rcounts = { .c = cnts }, .rdispls = { .a = displs } };
        wm_coll_build_allgatherv(s, &h->leaders, &va);
        wc_sched_fence(s);
    }
    wm_coll_args_t ba = { .rbuf = all, .rcount = (MPI_Count)(bs * (uint64_t)n), .rtype = bt,
                          .root = 0 };
    wc_sched_send_mode(s, WC_SEND_BULK);
    wm_coll_build_bcast(s, &h->node, &ba);
    wc_sched_fence(s);
    /* runs of consecutive ranks in node order go in one copy each */
    for (int p = 0; p < n;) {
        int r = h->by_node[p], len = 1;
        while (p + len < n && h->by_node[p + len] == r + len)
            len++;
        wc_sched_copy(s, all + (uint64_t)p * bs, (uint64_t)len * bs, &wc_dtype_bytes,
                      wm_coll_at(a->rbuf, (int64_t)r * a->rcount, a->rtype),
                      (uint64_t)len * (uint64_t)a->rcount, &a->rtype->layout);
        p += len;
    }
}
