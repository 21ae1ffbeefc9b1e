/* All-to-all collectives: Allgather(v), Alltoall(v,w) and their nonblocking forms, as schedules. */
#include "mpi/wm_coll.h"

#include <stdlib.h>
#include <string.h>

/* ---- allgather ---- */

/* Block j of the receive buffer of allgather: element j * rcount. */
static inline void *wm_ag_block(const wm_coll_args_t *a, int j)
{
    return wm_coll_at(a->rbuf, (int64_t)j * a->rcount, a->rtype);
}

/* Ring: n - 1 rounds, each passing one block to the right. */
static void wm_allgather_ring(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    int n = c->size, me = c->rank;
    int right = wm_coll_world(c, (me + 1) % n), left = wm_coll_world(c, (me - 1 + n) % n);
    const wc_dtype_t *dt = &a->rtype->layout;
    for (int i = 0; i < n - 1; i++) {
        int sj = (me - i + n) % n, rj = (me - i - 1 + n) % n;
        wc_sched_recv(s, wm_ag_block(a, rj), (uint64_t)a->rcount, dt, left);
        wc_sched_send(s, wm_ag_block(a, sj), (uint64_t)a->rcount, dt, right);
        wc_sched_fence(s);
    }
}

/* Recursive doubling (n a power of two): in round k, exchange the 2^k blocks gathered so far with
 * rank ^ 2^k; the blocks of a group are consecutive in the receive buffer. */
static void wm_allgather_rd(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    int n = c->size, me = c->rank;
    const wc_dtype_t *dt = &a->rtype->layout;
    for (int m = 1; m < n; m <<= 1) {
        int peer = me ^ m, mine = me & ~(m - 1), theirs = peer & ~(m - 1);
        uint64_t cnt = (uint64_t)m * (uint64_t)a->rcount;
        wc_sched_recv(s, wm_ag_block(a, theirs), cnt, dt, wm_coll_world(c, peer));
        wc_sched_send(s, wm_ag_block(a, mine), cnt, dt, wm_coll_world(c, peer));
        wc_sched_fence(s);
    }
}

/* Bruck: blocks gathered in a packed buffer in order me, me+1, ...; in the round of distance d,
 * send the first min(d, n - d) blocks to me - d and receive as many from me + d after them. */
static void wm_allgather_bruck(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a, uint64_t bs)
{
    int n = c->size, me = c->rank;
    char *tmp = wc_sched_tmp(s, (size_t)bs * (size_t)n);
    if (!tmp)
        return;
    wc_sched_copy(s, wm_ag_block(a, me), (uint64_t)a->rcount, &a->rtype->layout, tmp, bs,
                  &wc_dtype_bytes);
    for (int d = 1; d < n; d <<= 1) {
        int cnt = d < n - d ? d : n - d;
        wc_sched_recv(s, tmp + (uint64_t)d * bs, (uint64_t)cnt * bs, &wc_dtype_bytes,
                      wm_coll_world(c, (me + d) % n));
        wc_sched_send(s, tmp, (uint64_t)cnt * bs, &wc_dtype_bytes,
                      wm_coll_world(c, (me - d + n) % n));
        wc_sched_fence(s);
    }
    /* tmp block j is rank (me + j) mod n: two runs of consecutive ranks */
    int first = n - me;
    wc_sched_copy(s, tmp, (uint64_t)first * bs, &wc_dtype_bytes, wm_ag_block(a, me),
                  (uint64_t)first * (uint64_t)a->rcount, &a->rtype->layout);
    if (me > 0)
        wc_sched_copy(s, tmp + (uint64_t)first * bs, (uint64_t)me * bs, &wc_dtype_bytes,
                      wm_ag_block(a, 0), (uint64_t)me * (uint64_t)a->rcount, &a->rtype->layout);
}

/* Linear: one round, every rank sends its block to every other and receives theirs, sending from
 * the send buffer (which no step writes: a peer's single-copy read of it costs the owner no
 * coherence traffic later), and copies its own block last, while the peers read. */
static void wm_allgather_linear(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    int n = c->size, me = c->rank;
    bool in_place = a->sbuf == MPI_IN_PLACE;
    const void *sp = in_place ? wm_ag_block(a, me) : a->sbuf;
    uint64_t sc = (uint64_t)(in_place ? a->rcount : a->scount);
    const wc_dtype_t *sdt = in_place ? &a->rtype->layout : &a->stype->layout;
    for (int i = 1; i < n; i++) {
        int from = (me - i + n) % n;
        wc_sched_recv(s, wm_ag_block(a, from), (uint64_t)a->rcount, &a->rtype->layout,
                      wm_coll_world(c, from));
        wc_sched_send(s, sp, sc, sdt, wm_coll_world(c, (me + i) % n));
    }
    if (!in_place)
        wc_sched_copy(s, a->sbuf, (uint64_t)a->scount, &a->stype->layout, wm_ag_block(a, me),
                      (uint64_t)a->rcount, &a->rtype->layout);
}

void wm_coll_build_allgather(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    int n = c->size;
    uint64_t bs = wm_coll_bytes(a->rcount, a->rtype);
    wc_sched_send_mode(s, WC_SEND_BULK_EAGER);
    if (n > 1 && bs >= WM_COLL_ALLGATHER_LINEAR) {
        wm_allgather_linear(s, c, a);
        return;
    }
    if (a->sbuf != MPI_IN_PLACE)
        wc_sched_copy(s, a->sbuf, (uint64_t)a->scount, &a->stype->layout, wm_ag_block(a, c->rank),
                      (uint64_t)a->rcount, &a->rtype->layout);
    if (n == 1)
        return;
    wc_sched_fence(s);
    if (bs * (uint64_t)n >= WM_COLL_ALLGATHER_LONG)
        wm_allgather_ring(s, c, a);
    else if ((n & (n - 1)) == 0)
        wm_allgather_rd(s, c, a);
    else
        wm_allgather_bruck(s, c, a, bs);
}

/* Ring with per-rank counts and displacements. */
void wm_coll_build_allgatherv(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    int n = c->size, me = c->rank;
    const wc_dtype_t *dt = &a->rtype->layout;
#define WM_AGV_BLOCK(j) wm_coll_at(a->rbuf, wm_coll_vec_at(&a->rdispls, (j)), a->rtype)
#define WM_AGV_COUNT(j) ((uint64_t)wm_coll_vec_at(&a->rcounts, (j)))
    if (a->sbuf != MPI_IN_PLACE)
        wc_sched_copy(s, a->sbuf, (uint64_t)a->scount, &a->stype->layout, WM_AGV_BLOCK(me),
                      WM_AGV_COUNT(me), dt);
    if (n == 1)
        return;
    wc_sched_fence(s);
    int right = wm_coll_world(c, (me + 1) % n), left = wm_coll_world(c, (me - 1 + n) % n);
    for (int i = 0; i < n - 1; i++) {
        int sj = (me - i + n) % n, rj = (me - i - 1 + n) % n;
        wc_sched_recv(s, WM_AGV_BLOCK(rj), WM_AGV_COUNT(rj), dt, left);
        wc_sched_send(s, WM_AGV_BLOCK(sj), WM_AGV_COUNT(sj), dt, right);
        wc_sched_fence(s);
    }
#undef WM_AGV_BLOCK
#undef WM_AGV_COUNT
}

/* ---- alltoall ---- */

/* Where block j of a side of an exchange is: address, count and layout. */
typedef struct wm_x_side {
    char *base;
    const wm_datatype_t *type;       /* NULL: per-block types (alltoallw) or packed bytes */
    const wm_coll_args_t *a;
    int kind;                        /* 0 regular, 1 v (element displacements), 2 w (byte
                                        displacements, per-peer types), 3 packed tmp */
    bool send;
    uint64_t *tmp_off, *tmp_len;     /* kind 3: packed offsets and lengths per block */
} wm_x_side_t;

static void wm_x_block(const wm_x_side_t *x, int j, void **p_p, uint64_t *cnt_p,
                       const wc_dtype_t **dt_p)
{
    const wm_coll_args_t *a = x->a;
    switch (x->kind) {
    case 0: {
        MPI_Count cnt = x->send ? a->scount : a->rcount;
        *p_p = wm_coll_at(x->base, (int64_t)j * cnt, x->type);
        *cnt_p = (uint64_t)cnt;
        *dt_p = &x->type->layout;
        return;
    }
    case 1: {
        const wm_coll_vec_t *d = x->send ? &a->sdispls : &a->rdispls;
        const wm_coll_vec_t *n = x->send ? &a->scounts : &a->rcounts;
        *p_p = wm_coll_at(x->base, wm_coll_vec_at(d, j), x->type);
        *cnt_p = (uint64_t)wm_coll_vec_at(n, j);
        *dt_p = &x->type->layout;
        return;
    }
    case 2: {
        const wm_coll_vec_t *d = x->send ? &a->sdispls : &a->rdispls;
        const wm_coll_vec_t *n = x->send ? &a->scounts : &a->rcounts;
        *p_p = x->base + wm_coll_vec_at(d, j);
        *cnt_p = (uint64_t)wm_coll_vec_at(n, j);
        *dt_p = &(x->send ? a->stypes : a->rtypes)[j]->layout;
        return;
    }
    default:
        *p_p = x->base + x->tmp_off[j];
        *cnt_p = x->tmp_len[j];
        *dt_p = &wc_dtype_bytes;
        return;
    }
}

/* The receive side of an exchange, and its send side (the same buffer for MPI_IN_PLACE, saved
 * first to a packed temporary). */
static bool wm_x_sides(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a, int kind,
                       wm_x_side_t *sx, wm_x_side_t *rx)
{
    int n = c->size;
    *rx = (wm_x_side_t){ .base = a->rbuf, .type = a->rtype, .a = a, .kind = kind, .send = false };
    if (a->sbuf != MPI_IN_PLACE) {
        *sx = (wm_x_side_t){ .base = (char *)a->sbuf, .type = a->stype, .a = a, .kind = kind,
                             .send = true };
        return true;
    }
    uint64_t *off = wc_sched_tmp(s, sizeof(uint64_t) * 2 * (size_t)n);
    if (!off)
        return false;
    uint64_t *len = off + n, total = 0;
    for (int j = 0; j < n; j++) {
        void *p;
        uint64_t cnt;
        const wc_dtype_t *dt;
        wm_x_block(rx, j, &p, &cnt, &dt);
        off[j] = total;
        len[j] = cnt * dt->size;
        total += len[j];
    }
    char *tmp = wc_sched_tmp(s, (size_t)total);
    if (!tmp)
        return false;
    for (int j = 0; j < n; j++) {
        if (j == c->rank)
            continue;
        void *p;
        uint64_t cnt;
        const wc_dtype_t *dt;
        wm_x_block(rx, j, &p, &cnt, &dt);
        wc_sched_copy(s, p, cnt, dt, tmp + off[j], len[j], &wc_dtype_bytes);
    }
    *sx = (wm_x_side_t){ .base = tmp, .a = a, .kind = 3, .send = true, .tmp_off = off,
                         .tmp_len = len };
    return true;
}

static void wm_x_send(wc_sched_t *s, wm_comm_t *c, const wm_x_side_t *x, int j)
{
    void *p;
    uint64_t cnt;
    const wc_dtype_t *dt;
    wm_x_block(x, j, &p, &cnt, &dt);
    wc_sched_send(s, p, cnt, dt, wm_coll_world(c, j));
}

static void wm_x_recv(wc_sched_t *s, wm_comm_t *c, const wm_x_side_t *x, int j)
{
    void *p;
    uint64_t cnt;
    const wc_dtype_t *dt;
    wm_x_block(x, j, &p, &cnt, &dt);
    wc_sched_recv(s, p, cnt, dt, wm_coll_world(c, j));
}

/* Every block to its rank: all messages at once (small blocks), or pairwise exchange in n - 1
 * rounds (round i: send to me + i, receive from me - i), which bounds what is in flight. */
static void wm_exchange(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a, int kind,
                        bool pairwise)
{
    int n = c->size, me = c->rank;
    wm_x_side_t sx, rx;
    wc_sched_send_mode(s, WC_SEND_BULK_EAGER);
    if (!wm_x_sides(s, c, a, kind, &sx, &rx))
        return;
    wc_sched_fence(s);   /* in place: the send side is saved first */
    for (int i = 1; i < n; i++) {
        wm_x_recv(s, c, &rx, (me - i + n) % n);
        wm_x_send(s, c, &sx, (me + i) % n);
        if (pairwise)
            wc_sched_fence(s);
    }
    /* the own block last: copied while the peers move theirs */
    if (a->sbuf != MPI_IN_PLACE) {
        void *sp, *rp;
        uint64_t sc, rc;
        const wc_dtype_t *sd, *rd;
        wm_x_block(&sx, me, &sp, &sc, &sd);
        wm_x_block(&rx, me, &rp, &rc, &rd);
        wc_sched_copy(s, sp, sc, sd, rp, rc, rd);
    }
}

/* Pairwise for large blocks among many ranks only: with few ranks, and above all with more ranks
 * than cores, every round costs each rank a wake-up, while one round of single-copy messages
 * moves each byte once whatever the order. */
static inline bool wm_alltoall_pairwise(int n, uint64_t max_block)
{
    return n > WM_COLL_ALLTOALL_PAIRWISE_RANKS && max_block >= WM_COLL_ALLTOALL_LONG;
}

void wm_coll_build_alltoall(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    uint64_t bs = wm_coll_bytes(a->rcount, a->rtype);
    wm_exchange(s, c, a, 0, wm_alltoall_pairwise(c->size, bs));
}

void wm_coll_build_alltoallv(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    uint64_t max = 0;
    for (int j = 0; j < c->size; j++) {
        uint64_t b = wm_coll_bytes(wm_coll_vec_at(&a->rcounts, j), a->rtype);
        max = b > max ? b : max;
    }
    wm_exchange(s, c, a, 1, wm_alltoall_pairwise(c->size, max));
}

void wm_coll_build_alltoallw(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    uint64_t max = 0;
    for (int j = 0; j < c->size; j++) {
        uint64_t b = (uint64_t)wm_coll_vec_at(&a->rcounts, j) * a->rtypes[j]->layout.size;
        max = b > max ? b : max;
    }
    wm_exchange(s, c, a, 2, wm_alltoall_pairwise(c->size, max));
}

/* ---- entry points ---- */

static inline wm_obj_t *wm_type_obj(const wm_datatype_t *ti)
{
    return ti && !ti->obj.predefined ? (wm_obj_t *)&ti->obj : NULL;
}

static const wm_coll_vec_t wm_no_vec;

/* Allgather, allgatherv, alltoall, alltoallv. vec: the counts/displacements of the v forms. */
static int wm_allx(const char *fn, wm_coll_build_fn_t build, bool vec, bool gather,
                   const void *sbuf, MPI_Count scount, wm_coll_vec_t scounts, wm_coll_vec_t sdispls,
                   MPI_Datatype stype, void *rbuf, MPI_Count rcount, wm_coll_vec_t rcounts,
                   wm_coll_vec_t rdispls, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request,
                   int nb)
{
    WM_COMM_CHECK(fn, comm, c);
    if (WU_UNLIKELY(c->tcomm))
        return wm_tc_coll_entry(fn, c, &(wm_tc_coll_args_t){
                   .kind = gather ? (vec ? WM_TC_ALLGATHERV : WM_TC_ALLGATHER)
                                  : (vec ? WM_TC_ALLTOALLV : WM_TC_ALLTOALL),
                   .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf, .rcount = rcount,
                   .rtype = rtype, .scounts = WM_TC_VEC(scounts), .sdispls = WM_TC_VEC(sdispls),
                   .rcounts = WM_TC_VEC(rcounts), .rdispls = WM_TC_VEC(rdispls) }, request, nb);
    wm_coll_args_t a = { .sbuf = sbuf, .rbuf = rbuf, .scount = scount, .rcount = rcount,
                         .scounts = scounts, .sdispls = sdispls, .rcounts = rcounts,
                         .rdispls = rdispls, .persist = nb == WM_COLL_PERSISTENT };
    int rc, n = c->size;
    if ((rc = wm_coll_check_comm(c, fn, request, nb)))
        return rc;
    if (c->inter) {
        /* data comes from the remote group: the vectors span it */
        if ((rc = wm_coll_check_not_in_place(c, fn, "sendbuf", sbuf)))
            return rc;
        n = c->remote_size;
        build = gather ? (vec ? wm_coll_build_inter_allgatherv : wm_coll_build_inter_allgather)
                       : (vec ? wm_coll_build_inter_alltoallv : wm_coll_build_inter_alltoall);
    } else if (build == wm_coll_build_allgather) {
        build = wm_coll_pick(build, wm_coll_build_hier_allgather);
    }
    bool in_place = sbuf == MPI_IN_PLACE;
    bool svec = vec && !gather;   /* alltoallv has send vectors, allgatherv does not */
    if (!in_place) {
        if ((rc = wm_coll_check_buf(c, fn, "send", sbuf, svec ? 0 : scount, stype, &a.stype)))
            return rc;
        if (svec && ((rc = wm_coll_check_vec(c, fn, "sendcounts", &scounts, n)) ||
                     (rc = wm_coll_check_vec(c, fn, "sdispls", &sdispls, n))))
            return rc;
    }
    if ((rc = wm_coll_check_buf(c, fn, "receive", rbuf, vec ? 0 : rcount, rtype, &a.rtype)))
        return rc;
    if (vec && ((rc = wm_coll_check_vec(c, fn, "recvcounts", &rcounts, n)) ||
                (rc = wm_coll_check_vec(c, fn, "rdispls", &rdispls, n))))
        return rc;
    for (int i = 0; vec && i < n; i++) {
        if (wm_coll_vec_at(&rcounts, i) < 0 || (svec && !in_place && wm_coll_vec_at(&scounts, i) < 0))
            return wm_error(c, MPI_ERR_COUNT, fn, "a count of rank %d is negative", i);
    }
    return wm_coll_run(fn, c, build, &a, request, in_place ? NULL : wm_type_obj(a.stype),
                       wm_type_obj(a.rtype));
}

/* Allgather and Alltoall share their signature, and each helper serves an int form and its _c
 * twin (WM_TWINS_MPI_X of src/mpi/gen/wm_entry.h): build is the builder, gather whether the send
 * block is one block for everyone (allgather) rather than one per peer. */
static inline int wm_allx_blocks(const char *fn, const void *sendbuf, MPI_Count sendcount,
                                 MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request,
                                 wm_coll_build_fn_t build, bool gather, int nb)
{
    return wm_allx(fn, build, false, gather, sendbuf, sendcount, wm_no_vec, wm_no_vec, sendtype,
                   recvbuf, recvcount, wm_no_vec, wm_no_vec, recvtype, comm, request, nb);
}

/* The persistent forms; the info argument carries no hint Weft uses. */
static inline int wm_allx_blocks_init(const char *fn, const void *sendbuf, MPI_Count sendcount,
                                      MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                      MPI_Request *request, wm_coll_build_fn_t build, bool gather)
{
    (void)info;
    return wm_allx(fn, build, false, gather, sendbuf, sendcount, wm_no_vec, wm_no_vec, sendtype,
                   recvbuf, recvcount, wm_no_vec, wm_no_vec, recvtype, comm, request,
                   WM_COLL_PERSISTENT);
}

WM_TWINS_MPI_Allgather(wm_allx_blocks, NULL, wm_coll_build_allgather, true, false)
WM_TWINS_MPI_Iallgather(wm_allx_blocks, wm_coll_build_allgather, true, true)
WM_TWINS_MPI_Allgather_init(wm_allx_blocks_init, wm_coll_build_allgather, true)
WM_TWINS_MPI_Alltoall(wm_allx_blocks, NULL, wm_coll_build_alltoall, false, false)
WM_TWINS_MPI_Ialltoall(wm_allx_blocks, wm_coll_build_alltoall, false, true)
WM_TWINS_MPI_Alltoall_init(wm_allx_blocks_init, wm_coll_build_alltoall, false)

/* Allgatherv and Alltoallv, each helper serving an int form and its _c twin. */
static inline int wm_allgatherv(const char *fn, const void *sendbuf, MPI_Count sendcount,
                                MPI_Datatype sendtype, void *recvbuf, wm_ints_t recvcounts,
                                wm_ints_t displs, MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Request *request, int nb)
{
    return wm_allx(fn, wm_coll_build_allgatherv, true, true, sendbuf, sendcount, wm_no_vec,
                   wm_no_vec, sendtype, recvbuf, 0, wm_coll_counts(recvcounts),
                   wm_coll_displs(displs), recvtype, comm, request, nb);
}

static inline int wm_allgatherv_init(const char *fn, const void *sendbuf, MPI_Count sendcount,
                                     MPI_Datatype sendtype, void *recvbuf, wm_ints_t recvcounts,
                                     wm_ints_t displs, MPI_Datatype recvtype, MPI_Comm comm,
                                     MPI_Info info, MPI_Request *request)
{
    (void)info;
    return wm_allgatherv(fn, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                         comm, request, WM_COLL_PERSISTENT);
}

static inline int wm_alltoallv(const char *fn, const void *sendbuf, wm_ints_t sendcounts,
                               wm_ints_t sdispls, MPI_Datatype sendtype, void *recvbuf,
                               wm_ints_t recvcounts, wm_ints_t rdispls, MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Request *request, int nb)
{
    return wm_allx(fn, wm_coll_build_alltoallv, true, false, sendbuf, 0,
                   wm_coll_counts(sendcounts), wm_coll_displs(sdispls), sendtype, recvbuf, 0,
                   wm_coll_counts(recvcounts), wm_coll_displs(rdispls), recvtype, comm, request,
                   nb);
}

static inline int wm_alltoallv_init(const char *fn, const void *sendbuf, wm_ints_t sendcounts,
                                    wm_ints_t sdispls, MPI_Datatype sendtype, void *recvbuf,
                                    wm_ints_t recvcounts, wm_ints_t rdispls,
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                    MPI_Request *request)
{
    (void)info;
    return wm_alltoallv(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                        recvtype, comm, request, WM_COLL_PERSISTENT);
}

WM_TWINS_MPI_Allgatherv(wm_allgatherv, NULL, false)
WM_TWINS_MPI_Iallgatherv(wm_allgatherv, true)
WM_TWINS_MPI_Allgatherv_init(wm_allgatherv_init)
WM_TWINS_MPI_Alltoallv(wm_alltoallv, NULL, false)
WM_TWINS_MPI_Ialltoallv(wm_alltoallv, true)
WM_TWINS_MPI_Alltoallv_init(wm_alltoallv_init)

/* Alltoallw: per-peer datatypes, byte displacements. The types are looked up into a temporary
 * array. A request names at most three objects (wm_request_t.objs), so the call holds structural
 * references on the user datatypes instead: the blocking form while it runs, the nonblocking one
 * through its request (wm_request_t.held) until the request is freed. The user may free them at
 * once (premature release) either way. */
wm_obj_t **wm_alltoallw_hold(const wm_datatype_t **types, int n, uint32_t *count_p)
{
    uint32_t k = 0;
    for (int j = 0; j < n; j++)
        k += types[j] && !types[j]->obj.predefined;
    *count_p = k;
    if (!k)
        return NULL;
    wm_obj_t **held = malloc(sizeof(*held) * k);
    if (!held)
        return NULL;
    k = 0;
    for (int j = 0; j < n; j++)
        if (types[j] && !types[j]->obj.predefined) {
            held[k] = (wm_obj_t *)&types[j]->obj;
            wm_obj_retain(held[k++]);
        }
    return held;
}

void wm_alltoallw_unhold(wm_obj_t **held, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        wm_obj_release(held[i]);
    free(held);
}
static int wm_alltoallw(const char *fn, const void *sbuf, wm_coll_vec_t scounts,
                        wm_coll_vec_t sdispls, const MPI_Datatype stypes[], void *rbuf,
                        wm_coll_vec_t rcounts, wm_coll_vec_t rdispls, const MPI_Datatype rtypes[],
                        MPI_Comm comm, MPI_Request *request, int nb)
{
    WM_COMM_CHECK(fn, comm, c);
    if (WU_UNLIKELY(c->tcomm))
        return wm_tc_coll_entry(fn, c, &(wm_tc_coll_args_t){
                   .kind = WM_TC_ALLTOALLW, .sbuf = sbuf, .rbuf = rbuf,
                   .scounts = WM_TC_VEC(scounts), .sdispls = WM_TC_VEC(sdispls),
                   .rcounts = WM_TC_VEC(rcounts), .rdispls = WM_TC_VEC(rdispls),
                   .stypes = stypes, .rtypes = rtypes }, request, nb);
    int rc, n = c->size;
    if ((rc = wm_coll_check_comm(c, fn, request, nb)))
        return rc;
    if (c->inter) {
        if ((rc = wm_coll_check_not_in_place(c, fn, "sendbuf", sbuf)))
            return rc;
        n = c->remote_size;
    }
    bool in_place = sbuf == MPI_IN_PLACE;
    if ((!in_place && ((rc = wm_coll_check_vec(c, fn, "sendcounts", &scounts, n)) ||
                       (rc = wm_coll_check_vec(c, fn, "sdispls", &sdispls, n)))) ||
        (rc = wm_coll_check_vec(c, fn, "recvcounts", &rcounts, n)) ||
        (rc = wm_coll_check_vec(c, fn, "rdispls", &rdispls, n)))
        return rc;
    if ((!in_place && !stypes) || !rtypes)
        return wm_error(c, MPI_ERR_ARG, fn, "%s is NULL", rtypes ? "sendtypes" : "recvtypes");
    const wm_datatype_t **types = calloc(2 * (size_t)(n ? n : 1), sizeof(*types));
    if (!types)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for %d datatypes", 2 * n);
    wm_coll_args_t a = { .sbuf = sbuf, .rbuf = rbuf, .scounts = scounts, .sdispls = sdispls,
                         .rcounts = rcounts, .rdispls = rdispls, .stypes = types,
                         .rtypes = types + n, .persist = nb == WM_COLL_PERSISTENT };
    for (int j = 0; j < n; j++) {
        if ((!in_place &&
             (rc = wm_coll_check_buf(c, fn, "send", sbuf, wm_coll_vec_at(&scounts, j), stypes[j],
                                     &types[j]))) ||
            (rc = wm_coll_check_buf(c, fn, "receive", rbuf, wm_coll_vec_at(&rcounts, j),
                                    rtypes[j], &types[n + j]))) {
            free(types);
            return rc;
        }
    }
    uint32_t nheld;
    wm_obj_t **held = wm_alltoallw_hold(types, 2 * n, &nheld);
    if (nheld && !held) {
        free(types);
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for %d datatypes", 2 * n);
    }
    rc = wm_coll_run(fn, c, c->inter ? wm_coll_build_inter_alltoallw : wm_coll_build_alltoallw,
                     &a, request, NULL, NULL);
    free(types);
    if (rc == MPI_SUCCESS && request) {
        wm_request_t *r = wm_request_ptr(*request);
        r->held = held;
        r->nheld = nheld;
    } else if (held) {
        wm_alltoallw_unhold(held, nheld);
    }
    return rc;
}

static inline int wm_alltoallw_twins(const char *fn, const void *sendbuf, wm_ints_t sendcounts,
                                     wm_ints_t sdispls, const MPI_Datatype sendtypes[],
                                     void *recvbuf, wm_ints_t recvcounts, wm_ints_t rdispls,
                                     const MPI_Datatype recvtypes[], MPI_Comm comm,
                                     MPI_Request *request, int nb)
{
    return wm_alltoallw(fn, sendbuf, wm_coll_counts(sendcounts), wm_coll_displs(sdispls),
                        sendtypes, recvbuf, wm_coll_counts(recvcounts), wm_coll_displs(rdispls),
                        recvtypes, comm, request, nb);
}

static inline int wm_alltoallw_init(const char *fn, const void *sendbuf, wm_ints_t sendcounts,
                                    wm_ints_t sdispls, const MPI_Datatype sendtypes[],
                                    void *recvbuf, wm_ints_t recvcounts, wm_ints_t rdispls,
                                    const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                    MPI_Request *request)
{
    (void)info;
    return wm_alltoallw_twins(fn, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                              rdispls, recvtypes, comm, request, WM_COLL_PERSISTENT);
}

WM_TWINS_MPI_Alltoallw(wm_alltoallw_twins, NULL, false)
WM_TWINS_MPI_Ialltoallw(wm_alltoallw_twins, true)
WM_TWINS_MPI_Alltoallw_init(wm_alltoallw_init)

