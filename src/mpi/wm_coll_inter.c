/* Collectives on intercommunicators (MPI 4.1 sections 6.2.2 and 6.4-6.11), as schedules run by
 * wm_coll_run like the intracommunicator ones, so their nonblocking forms progress alike.
 *
 * Data flows between the two groups. Every algorithm combines three kinds of phase:
 *  - within the local group: the intracommunicator builders run on the intercommunicator itself
 *    (they see only c->size, c->rank and wm_coll_world, i.e. the local group; local rank 0 is the
 *    group's leader);
 *  - across: messages to remote ranks (wm_comm_peer_world), usually leader to leader;
 *  - local copies and reductions.
 * A fence separates consecutive phases, so a phase reads only what the previous ones completed and
 * the messages between one pair of ranks are posted in the same order on both sides (the two
 * groups' processes are distinct, so local and cross-group messages never share a (source,
 * destination) pair). Messages across are posted even when empty: counts that disagree between
 * the groups then end in MPI_ERR_TRUNCATE at a receiver rather than in a wait for a message that
 * never comes.
 *
 * Roots (rooted collectives): a->root is MPI_ROOT at the root, MPI_PROC_NULL at the other processes
 * of the root's group (they do nothing: an empty schedule, which still takes its sequence number),
 * and the root's rank in the remote group at the processes of the other group. */
#include "mpi/wm_coll.h"

/* Bytes as a datatype, for packed temporaries handed to the intracommunicator builders. */
static const wm_datatype_t *wm_inter_byte(void)
{
    return wm_type_get(MPI_BYTE);
}

static inline int wm_inter_peer(const wm_comm_t *c, int r)
{
    return wm_comm_peer_world(c, r);
}

/* ---- barrier: local barrier, leaders swap empty messages, local barrier ---- */

/* The second local barrier holds every process until its leader has heard from the remote
 * leader, which sent only after its whole group had entered. */
void wm_coll_build_inter_barrier(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    wm_coll_build_barrier(s, c, a);
    wc_sched_fence(s);
    if (c->rank == 0) {
        wc_sched_recv(s, NULL, 0, &wc_dtype_bytes, wm_inter_peer(c, 0));
        wc_sched_send(s, NULL, 0, &wc_dtype_bytes, wm_inter_peer(c, 0));
        wc_sched_fence(s);
    }
    wm_coll_build_barrier(s, c, a);
}

/* ---- bcast: the root to the remote leader, which broadcasts in its group ---- */

void wm_coll_build_inter_bcast(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    if (a->root == MPI_PROC_NULL)
        return;
    if (a->root == MPI_ROOT) {
        wc_sched_send(s, a->rbuf, (uint64_t)a->rcount, &a->rtype->layout, wm_inter_peer(c, 0));
        return;
    }
    if (c->rank == 0) {
        wc_sched_recv(s, a->rbuf, (uint64_t)a->rcount, &a->rtype->layout,
                      wm_inter_peer(c, a->root));
        wc_sched_fence(s);
    }
    wm_coll_args_t la = *a;
    la.root = 0;
    wm_coll_build_bcast(s, c, &la);
}

/* ---- gather: the sending group gathers to its leader (packed, rank order), which sends the
 * whole to the root in one message; the root receives it as remote_size blocks ---- */

void wm_coll_build_inter_gather(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    if (a->root == MPI_PROC_NULL)
        return;
    if (a->root == MPI_ROOT) {
        wc_sched_recv(s, a->rbuf, (uint64_t)c->remote_size * (uint64_t)a->rcount,
                      &a->rtype->layout, wm_inter_peer(c, 0));
        return;
    }
    uint64_t bs = wm_coll_bytes(a->scount, a->stype), total = bs * (uint64_t)c->size;
    char *tmp = NULL;
    if (c->rank == 0 && !(tmp = wc_sched_tmp(s, (size_t)total)))
        return;
    if (bs > 0) {
        wm_coll_args_t la = { .sbuf = a->sbuf, .scount = a->scount, .stype = a->stype,
                              .rbuf = tmp, .rcount = (MPI_Count)bs, .rtype = wm_inter_byte(),
                              .root = 0 };
        wm_coll_build_gather(s, c, &la);
        wc_sched_fence(s);
    }
    if (c->rank == 0)
        wc_sched_send(s, tmp, total, &wc_dtype_bytes, wm_inter_peer(c, a->root));
}

/* Gatherv: every sender straight to the root, which posts one receive per remote rank. */
void wm_coll_build_inter_gatherv(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    if (a->root == MPI_PROC_NULL)
        return;
    if (a->root != MPI_ROOT) {
        wc_sched_send(s, a->sbuf, (uint64_t)a->scount, &a->stype->layout,
                      wm_inter_peer(c, a->root));
        return;
    }
    for (int j = 0; j < c->remote_size; j++)
        wc_sched_recv(s, wm_coll_at(a->rbuf, wm_coll_vec_at(&a->rdispls, j), a->rtype),
                      (uint64_t)wm_coll_vec_at(&a->rcounts, j), &a->rtype->layout,
                      wm_inter_peer(c, j));
}

/* ---- scatter: the root sends everything to the remote leader, which scatters in its group ---- */

void wm_coll_build_inter_scatter(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    if (a->root == MPI_PROC_NULL)
        return;
    if (a->root == MPI_ROOT) {
        wc_sched_send(s, a->sbuf, (uint64_t)c->remote_size * (uint64_t)a->scount,
                      &a->stype->layout, wm_inter_peer(c, 0));
        return;
    }
    uint64_t bs = wm_coll_bytes(a->rcount, a->rtype), total = bs * (uint64_t)c->size;
    char *tmp = NULL;
    if (c->rank == 0) {
        if (!(tmp = wc_sched_tmp(s, (size_t)total)))
            return;
        wc_sched_recv(s, tmp, total, &wc_dtype_bytes, wm_inter_peer(c, a->root));
        wc_sched_fence(s);
    }
    if (bs > 0) {
        wm_coll_args_t la = { .sbuf = tmp, .scount = (MPI_Count)bs, .stype = wm_inter_byte(),
                              .rbuf = a->rbuf, .rcount = a->rcount, .rtype = a->rtype, .root = 0 };
        wm_coll_build_scatter(s, c, &la);
    }
}

/* Scatterv: the root sends each remote rank its block. */
void wm_coll_build_inter_scatterv(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    if (a->root == MPI_PROC_NULL)
        return;
    if (a->root != MPI_ROOT) {
        wc_sched_recv(s, a->rbuf, (uint64_t)a->rcount, &a->rtype->layout,
                      wm_inter_peer(c, a->root));
        return;
    }
    for (int j = 0; j < c->remote_size; j++)
        wc_sched_send(s, wm_coll_at(a->sbuf, wm_coll_vec_at(&a->sdispls, j), a->stype),
                      (uint64_t)wm_coll_vec_at(&a->scounts, j), &a->stype->layout,
                      wm_inter_peer(c, j));
}

/* ---- allgather(v): every process sends its block to the remote leader, which receives the
 * remote group's blocks and broadcasts them in its group ---- */

void wm_coll_build_inter_allgather(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    uint64_t all = (uint64_t)c->remote_size * (uint64_t)a->rcount;
    wc_sched_send(s, a->sbuf, (uint64_t)a->scount, &a->stype->layout, wm_inter_peer(c, 0));
    if (c->rank == 0)
        for (int j = 0; j < c->remote_size; j++)
            wc_sched_recv(s, wm_coll_at(a->rbuf, (int64_t)j * a->rcount, a->rtype),
                          (uint64_t)a->rcount, &a->rtype->layout, wm_inter_peer(c, j));
    wc_sched_fence(s);
    /* the remote group's blocks lie back to back: one broadcast of remote_size * rcount */
    wm_coll_args_t la = { .rbuf = a->rbuf, .rcount = (MPI_Count)all, .rtype = a->rtype, .root = 0 };
    wm_coll_build_bcast(s, c, &la);
}

/* The blocks' displacements are arbitrary: the leader receives them packed, the packed whole is
 * broadcast, and every process unpacks it. */
void wm_coll_build_inter_allgatherv(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    int rn = c->remote_size;
    uint64_t *off = wc_sched_tmp(s, sizeof(uint64_t) * ((size_t)rn + 1));
    if (!off)
        return;
    off[0] = 0;
    for (int j = 0; j < rn; j++)
        off[j + 1] = off[j] + wm_coll_bytes(wm_coll_vec_at(&a->rcounts, j), a->rtype);
    uint64_t total = off[rn];
    char *tmp = wc_sched_tmp(s, (size_t)total);
    if (!tmp)
        return;
    wc_sched_send(s, a->sbuf, (uint64_t)a->scount, &a->stype->layout, wm_inter_peer(c, 0));
    if (c->rank == 0)
        for (int j = 0; j < rn; j++)
            wc_sched_recv(s, tmp + off[j], off[j + 1] - off[j], &wc_dtype_bytes,
                          wm_inter_peer(c, j));
    wc_sched_fence(s);
    wm_coll_args_t la = { .rbuf = tmp, .rcount = (MPI_Count)total, .rtype = wm_inter_byte(),
                          .root = 0 };
    wm_coll_build_bcast(s, c, &la);
    wc_sched_fence(s);
    for (int j = 0; j < rn; j++)
        wc_sched_copy(s, tmp + off[j], off[j + 1] - off[j], &wc_dtype_bytes,
                      wm_coll_at(a->rbuf, wm_coll_vec_at(&a->rdispls, j), a->rtype),
                      (uint64_t)wm_coll_vec_at(&a->rcounts, j), &a->rtype->layout);
}

/* ---- alltoall(v,w): every process exchanges a block with every remote process ---- */

enum { WM_IX_REGULAR, WM_IX_V, WM_IX_W };

/* Block j (a remote rank) of the send (send true) or receive side. */
static void wm_inter_block(const wm_coll_args_t *a, int kind, bool send, int j, void **p_p,
                           uint64_t *cnt_p, const wc_dtype_t **dt_p)
{
    char *base = send ? (char *)a->sbuf : (char *)a->rbuf;
    const wm_datatype_t *ti = send ? a->stype : a->rtype;
    const wm_coll_vec_t *d = send ? &a->sdispls : &a->rdispls;
    const wm_coll_vec_t *n = send ? &a->scounts : &a->rcounts;
    switch (kind) {
    case WM_IX_REGULAR: {
        MPI_Count cnt = send ? a->scount : a->rcount;
        *p_p = wm_coll_at(base, (int64_t)j * cnt, ti);
        *cnt_p = (uint64_t)cnt;
        *dt_p = &ti->layout;
        return;
    }
    case WM_IX_V:
        *p_p = wm_coll_at(base, wm_coll_vec_at(d, j), ti);
        *cnt_p = (uint64_t)wm_coll_vec_at(n, j);
        *dt_p = &ti->layout;
        return;
    default:
        *p_p = base + wm_coll_vec_at(d, j);
        *cnt_p = (uint64_t)wm_coll_vec_at(n, j);
        *dt_p = &(send ? a->stypes : a->rtypes)[j]->layout;
        return;
    }
}

/* MPICH's pairing over m = max(local size, remote size): in round i, local rank r sends to remote
 * rank (r + i) mod m and receives from remote rank (r - i) mod m, skipping ranks that do not
 * exist; the remote side's round i pairs the same processes. Large blocks: one round at a time
 * (a fence each), which bounds what is in flight; small ones: every round at once. */
static void wm_inter_exchange(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a, int kind,
                              uint64_t max_block)
{
    int rn = c->remote_size, me = c->rank, m = c->size > rn ? c->size : rn;
    bool rounds = max_block >= WM_COLL_ALLTOALL_LONG;
    for (int i = 0; i < m; i++) {
        int src = (me - i + m) % m, dst = (me + i) % m;
        void *p;
        uint64_t cnt;
        const wc_dtype_t *dt;
        if (src < rn) {
            wm_inter_block(a, kind, false, src, &p, &cnt, &dt);
            wc_sched_recv(s, p, cnt, dt, wm_inter_peer(c, src));
        }
        if (dst < rn) {
            wm_inter_block(a, kind, true, dst, &p, &cnt, &dt);
            wc_sched_send(s, p, cnt, dt, wm_inter_peer(c, dst));
        }
        if (rounds)
            wc_sched_fence(s);
    }
}

void wm_coll_build_inter_alltoall(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    wm_inter_exchange(s, c, a, WM_IX_REGULAR, wm_coll_bytes(a->rcount, a->rtype));
}

void wm_coll_build_inter_alltoallv(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    uint64_t max = 0;
    for (int j = 0; j < c->remote_size; j++) {
        uint64_t b = wm_coll_bytes(wm_coll_vec_at(&a->rcounts, j), a->rtype);
        max = b > max ? b : max;
    }
    wm_inter_exchange(s, c, a, WM_IX_V, max);
}

void wm_coll_build_inter_alltoallw(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    uint64_t max = 0;
    for (int j = 0; j < c->remote_size; j++) {
        uint64_t b = (uint64_t)wm_coll_vec_at(&a->rcounts, j) * a->rtypes[j]->layout.size;
        max = b > max ? b : max;
    }
    wm_inter_exchange(s, c, a, WM_IX_W, max);
}

/* ---- reductions: each group reduces its contributions to its leader (in rank order, so
 * non-commutative operations are honoured), then the result crosses over ---- */

/* The group's reduction of count elements at its leader: into a new temporary there (returned;
 * NULL elsewhere, and on no memory with the schedule's error set). */
static char *wm_inter_reduce_local(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a,
                                   uint64_t count, bool *ok_p)
{
    char *acc = NULL;
    *ok_p = true;
    if (c->rank == 0 && !(acc = wm_coll_tmp(s, count, a->rtype))) {
        *ok_p = false;
        return NULL;
    }
    wm_coll_args_t la = *a;
    la.rbuf = acc;
    la.rcount = (MPI_Count)count;
    la.root = 0;
    wm_coll_build_reduce(s, c, &la);
    wc_sched_fence(s);
    return acc;
}

/* Reduce: the group without the root reduces to its leader, which sends the result to the root. */
void wm_coll_build_inter_reduce(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    if (a->root == MPI_PROC_NULL)
        return;
    uint64_t count = (uint64_t)a->rcount;
    if (a->root == MPI_ROOT) {
        wc_sched_recv(s, a->rbuf, count, &a->rtype->layout, wm_inter_peer(c, 0));
        return;
    }
    bool ok;
    char *acc = wm_inter_reduce_local(s, c, a, count, &ok);
    if (ok && c->rank == 0)
        wc_sched_send(s, acc, count, &a->rtype->layout, wm_inter_peer(c, a->root));
}

/* Allreduce: both groups reduce to their leaders, the leaders swap, and each broadcasts what it
 * received in its group. */
void wm_coll_build_inter_allreduce(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    uint64_t count = (uint64_t)a->rcount;
    bool ok;
    char *acc = wm_inter_reduce_local(s, c, a, count, &ok);
    if (!ok)
        return;
    if (c->rank == 0) {
        wc_sched_recv(s, a->rbuf, count, &a->rtype->layout, wm_inter_peer(c, 0));
        wc_sched_send(s, acc, count, &a->rtype->layout, wm_inter_peer(c, 0));
        wc_sched_fence(s);
    }
    wm_coll_args_t la = { .rbuf = a->rbuf, .rcount = a->rcount, .rtype = a->rtype, .root = 0 };
    wm_coll_build_bcast(s, c, &la);
}

/* Reduce_scatter(_block): both groups reduce their whole vectors to their leaders, the leaders
 * swap, and each scatters what it received over its group by the local counts. The two groups'
 * vectors must have the same length (the standard's rule). */
void wm_coll_build_inter_reduce_scatter(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    int n = c->size;
    MPI_Count *cnts = wc_sched_tmp(s, sizeof(MPI_Count) * (size_t)n);
    MPI_Aint *disps = wc_sched_tmp(s, sizeof(MPI_Aint) * (size_t)n);
    if (!cnts || !disps)
        return;
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        cnts[i] = a->rcounts.i || a->rcounts.c ? wm_coll_vec_at(&a->rcounts, i) : a->rcount;
        disps[i] = (MPI_Aint)total;   /* elements: wm_coll_at scales by the extent */
        total += (uint64_t)cnts[i];
    }
    bool ok;
    char *acc = wm_inter_reduce_local(s, c, a, total, &ok);
    if (!ok)
        return;
    char *res = NULL;
    if (c->rank == 0) {
        if (!(res = wm_coll_tmp(s, total, a->rtype)))
            return;
        wc_sched_recv(s, res, total, &a->rtype->layout, wm_inter_peer(c, 0));
        wc_sched_send(s, acc, total, &a->rtype->layout, wm_inter_peer(c, 0));
        wc_sched_fence(s);
    }
    wm_coll_args_t la = { .sbuf = res, .stype = a->rtype, .scounts = { .c = cnts },
                          .sdispls = { .a = disps }, .rbuf = a->rbuf, .rcount = cnts[c->rank],
                          .rtype = a->rtype, .root = 0 };
    wm_coll_build_scatterv(s, c, &la);
}
