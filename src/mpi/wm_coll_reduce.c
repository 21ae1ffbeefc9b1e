/* Reductions: Reduce, Allreduce, Reduce_scatter(_block), Scan, Exscan and their nonblocking and
 * large-count forms, as schedules. Intermediate values live in temporary buffers laid out like the
 * user's (count elements of the datatype at its extent), since the op kernels (wm_op.h) work on
 * typed buffers; messages move them with the datatype's layout.
 *
 * Order: wm_op_apply(in, inout) computes inout = in op inout. Every algorithm combines contiguous
 * ranges of ranks, lower ranks on the left, so non-commutative operations get the rank order the
 * standard asks for; a commutative operation may be applied either way round. */
#include "mpi/wm_coll.h"

#include <stdlib.h>

typedef struct wm_red {
    const wm_op_t *op;
    const wm_datatype_t *ti;
    MPI_Datatype type;
    bool commute;
} wm_red_t;

static wm_red_t wm_red_of(const wm_coll_args_t *a)
{
    return (wm_red_t){ .op = a->op, .ti = a->rtype, .type = a->op_type, .commute = a->op->commute };
}

static inline void *wm_red_at(const void *buf, uint64_t elem, const wm_red_t *r)
{
    return (char *)buf + (int64_t)elem * r->ti->extent;
}

static wu_status_t wm_red_apply_fn(const wc_sched_args_t *a)
{
    wm_op_apply(a->p[0], a->p[1], a->p[2], (MPI_Count)a->n[0], a->p[3],
                (MPI_Datatype)(uintptr_t)a->n[1]);
    return WU_OK;
}

/* inout = in op inout, as a step. */
static void wm_red_apply(wc_sched_t *s, const wm_red_t *r, const void *in, void *inout,
                         uint64_t count)
{
    if (count == 0)
        return;
    wc_sched_args_t args = { .p = { (void *)r->op, (void *)in, inout, (void *)r->ti },
                             .n = { count, (uint64_t)(uintptr_t)r->type } };
    wc_sched_call(s, wm_red_apply_fn, &args);
}

/* acc = acc op in when acc holds lower ranks than in; with a commutative op in op acc will do. */
static void wm_red_apply_right(wc_sched_t *s, const wm_red_t *r, const void *in, void *acc,
                               void *scratch, uint64_t count)
{
    if (r->commute) {
        wm_red_apply(s, r, in, acc, count);
        return;
    }
    /* scratch (holding `in`, or `in` itself when they are the same buffer) = acc op scratch */
    if (scratch != in)
        wc_sched_copy(s, in, count, &r->ti->layout, scratch, count, &r->ti->layout);
    wm_red_apply(s, r, acc, scratch, count);
    wc_sched_copy(s, scratch, count, &r->ti->layout, acc, count, &r->ti->layout);
}

static void wm_red_copy(wc_sched_t *s, const wm_red_t *r, const void *src, void *dst,
                        uint64_t count)
{
    wc_sched_copy(s, src, count, &r->ti->layout, dst, count, &r->ti->layout);
}

static void wm_allreduce_rab(wc_sched_t *s, wm_comm_t *c, const struct wm_red *r, char *acc,
                             uint64_t count);
/* Ranks beyond the largest power of two below n fold in first (MPICH's scheme): of the first
 * 2 * rem ranks, each even one hands its value to the odd one after it and sits out; the others
 * are numbered 0 .. pof2 - 1 in rank order. */
typedef struct wm_fold {
    int pof2, rem, newrank;
} wm_fold_t;
static wm_fold_t wm_fold_of(int n, int me);

/* ---- reduce: binomial tree ---- */

/* Reduce count elements of every rank's `in` to `out` at root. in may equal out (in place at the
 * root). A non-commutative op reduces on the tree of rank 0, in rank order, and rank 0 then sends
 * the result to the root. */
static void wm_reduce_tree(wc_sched_t *s, wm_comm_t *c, const wm_red_t *r, const void *in,
                           void *out, uint64_t count, int root)
{
    int n = c->size, me = c->rank;
    int troot = r->commute ? root : 0;
    int vr = (me - troot + n) % n;
    bool has_child = (vr & 1) == 0 && (vr | 1) < n;
    if (n == 1) {
        if (in != out)
            wm_red_copy(s, r, in, out, count);
        return;
    }
    if (!has_child) {
        /* a leaf sends its input as it is, to vr without its lowest set bit */
        wc_sched_send(s, in, count, &r->ti->layout,
                      wm_coll_world(c, ((vr & (vr - 1)) + troot) % n));
        if (me == root) {   /* the root is a leaf only when rank 0 reduces for it */
            wc_sched_fence(s);
            wc_sched_recv(s, out, count, &r->ti->layout, wm_coll_world(c, 0));
        }
        return;
    }
    char *acc = me == troot && me == root ? out : wm_coll_tmp(s, count, r->ti);
    char *tmp = wm_coll_tmp(s, count, r->ti);
    char *scratch = r->commute ? NULL : wm_coll_tmp(s, count, r->ti);
    if (!acc || !tmp || (!r->commute && !scratch))
        return;
    if (acc != in)
        wm_red_copy(s, r, in, acc, count);
    int mask;
    for (mask = 1; mask < n; mask <<= 1) {
        if (vr & mask) {
            wc_sched_send(s, acc, count, &r->ti->layout,
                          wm_coll_world(c, ((vr & ~mask) + troot) % n));
            break;
        }
        int src = vr | mask;
        if (src >= n)
            continue;
        wc_sched_recv(s, tmp, count, &r->ti->layout, wm_coll_world(c, (src + troot) % n));
        wc_sched_fence(s);
        wm_red_apply_right(s, r, tmp, acc, scratch, count);
    }
    if (troot != root) {
        wc_sched_fence(s);
        if (me == troot)
            wc_sched_send(s, acc, count, &r->ti->layout, wm_coll_world(c, root));
        else if (me == root)
            wc_sched_recv(s, out, count, &r->ti->layout, wm_coll_world(c, troot));
    }
}

void wm_coll_build_reduce(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    if (a->rcount == 0)
        return;
    wm_red_t r = wm_red_of(a);
    bool root = c->rank == a->root;
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    uint64_t count = (uint64_t)a->rcount;
    wm_fold_t f = wm_fold_of(c->size, c->rank);
    if (c->size > 1 && r.op->builtin >= 0 && count >= (uint64_t)f.pof2 &&
        count * r.ti->size >= WM_COLL_ALLREDUCE_LONG) {
        /* large, predefined op: Rabenseifner (its allgather half moves what a gather to the root
         * would, and spares the tree's log n full copies) */
        char *acc = root ? a->rbuf : wm_coll_tmp(s, count, r.ti);
        if (!acc)
            return;
        if (acc != in)
            wm_red_copy(s, &r, in, acc, count);
        wc_sched_fence(s);
        wm_allreduce_rab(s, c, &r, acc, count);
        return;
    }
    wm_reduce_tree(s, c, &r, in, root ? a->rbuf : NULL, count, a->root);
}

/* ---- allreduce ---- */

static wm_fold_t wm_fold_of(int n, int me)
{
    wm_fold_t f = { .pof2 = 1 };
    while (f.pof2 * 2 <= n)
        f.pof2 *= 2;
    f.rem = n - f.pof2;
    if (me < 2 * f.rem)
        f.newrank = me % 2 ? me / 2 : -1;
    else
        f.newrank = me - f.rem;
    return f;
}

static inline int wm_fold_real(const wm_fold_t *f, int newrank)
{
    return newrank < f->rem ? newrank * 2 + 1 : newrank + f->rem;
}

static void wm_fold_in(wc_sched_t *s, wm_comm_t *c, const wm_red_t *r, const wm_fold_t *f,
                       char *acc, char *tmp, uint64_t count)
{
    int me = c->rank;
    if (me >= 2 * f->rem)
        return;
    if (me % 2 == 0) {
        wc_sched_send(s, acc, count, &r->ti->layout, wm_coll_world(c, me + 1));
    } else {
        wc_sched_recv(s, tmp, count, &r->ti->layout, wm_coll_world(c, me - 1));
        wc_sched_fence(s);
        wm_red_apply(s, r, tmp, acc, count);   /* the lower rank on the left */
    }
    wc_sched_fence(s);
}

static void wm_fold_out(wc_sched_t *s, wm_comm_t *c, const wm_red_t *r, const wm_fold_t *f,
                        char *acc, uint64_t count)
{
    int me = c->rank;
    if (me >= 2 * f->rem)
        return;
    wc_sched_fence(s);
    if (me % 2)
        wc_sched_send(s, acc, count, &r->ti->layout, wm_coll_world(c, me - 1));
    else
        wc_sched_recv(s, acc, count, &r->ti->layout, wm_coll_world(c, me + 1));
}

/* Recursive doubling on acc (count elements). */
static void wm_allreduce_rd(wc_sched_t *s, wm_comm_t *c, const wm_red_t *r, char *acc,
                            uint64_t count)
{
    int me = c->rank;
    wm_fold_t f = wm_fold_of(c->size, me);
    char *tmp = wm_coll_tmp(s, count, r->ti);
    char *scratch = r->commute ? NULL : wm_coll_tmp(s, count, r->ti);
    if (!tmp || (!r->commute && !scratch))
        return;
    wm_fold_in(s, c, r, &f, acc, tmp, count);
    if (f.newrank >= 0) {
        for (int mask = 1; mask < f.pof2; mask <<= 1) {
            int dst = wm_fold_real(&f, f.newrank ^ mask);
            wc_sched_recv(s, tmp, count, &r->ti->layout, wm_coll_world(c, dst));
            wc_sched_send(s, acc, count, &r->ti->layout, wm_coll_world(c, dst));
            wc_sched_fence(s);
            if (dst < me)
                wm_red_apply(s, r, tmp, acc, count);
            else
                wm_red_apply_right(s, r, tmp, acc, scratch, count);
        }
    }
    wm_fold_out(s, c, r, &f, acc, count);
}

/* Rabenseifner: reduce-scatter by recursive halving, then allgather by recursive doubling, over
 * the pof2 ranks left after folding. Commutative operations only. */
static void wm_allreduce_rab(wc_sched_t *s, wm_comm_t *c, const wm_red_t *r, char *acc,
                             uint64_t count)
{
    int me = c->rank;
    wm_fold_t f = wm_fold_of(c->size, me);
    int pof2 = f.pof2;
    char *tmp = wm_coll_tmp(s, count, r->ti);
    uint64_t *cnts = wc_sched_tmp(s, sizeof(uint64_t) * 2 * (size_t)pof2);
    if (!tmp || !cnts)
        return;
    uint64_t *disps = cnts + pof2;
    for (int i = 0; i < pof2; i++) {
        cnts[i] = count / (uint64_t)pof2 + ((uint64_t)i < count % (uint64_t)pof2);
        disps[i] = i ? disps[i - 1] + cnts[i - 1] : 0;
    }
#define WM_SUM(lo, hi, v) do { v = 0; for (int i_ = (lo); i_ < (hi); i_++) v += cnts[i_]; } while (0)
    wm_fold_in(s, c, r, &f, acc, tmp, count);
    if (f.newrank >= 0) {
        int nr = f.newrank, send_idx = 0, recv_idx = 0, last_idx = pof2, mask;
        uint64_t scnt, rcnt;
        for (mask = 1; mask < pof2;) {
            int dst = wm_fold_real(&f, nr ^ mask);
            if (nr < (nr ^ mask)) {
                send_idx = recv_idx + pof2 / (mask * 2);
                WM_SUM(send_idx, last_idx, scnt);
                WM_SUM(recv_idx, send_idx, rcnt);
            } else {
                recv_idx = send_idx + pof2 / (mask * 2);
                WM_SUM(send_idx, recv_idx, scnt);
                WM_SUM(recv_idx, last_idx, rcnt);
            }
            wc_sched_recv(s, wm_red_at(tmp, disps[recv_idx], r), rcnt, &r->ti->layout,
                          wm_coll_world(c, dst));
            wc_sched_send(s, wm_red_at(acc, disps[send_idx], r), scnt, &r->ti->layout,
                          wm_coll_world(c, dst));
            wc_sched_fence(s);
            wm_red_apply(s, r, wm_red_at(tmp, disps[recv_idx], r), wm_red_at(acc, disps[recv_idx], r),
                         rcnt);
            send_idx = recv_idx;
            mask <<= 1;
            if (mask < pof2)
                last_idx = recv_idx + pof2 / mask;
        }
        wc_sched_fence(s);
        for (mask >>= 1; mask > 0; mask >>= 1) {
            int dst = wm_fold_real(&f, nr ^ mask);
            if (nr < (nr ^ mask)) {
                if (mask != pof2 / 2)
                    last_idx = last_idx + pof2 / (mask * 2);
                recv_idx = send_idx + pof2 / (mask * 2);
                WM_SUM(send_idx, recv_idx, scnt);
                WM_SUM(recv_idx, last_idx, rcnt);
            } else {
                recv_idx = send_idx - pof2 / (mask * 2);
                WM_SUM(send_idx, last_idx, scnt);
                WM_SUM(recv_idx, send_idx, rcnt);
            }
            wc_sched_recv(s, wm_red_at(acc, disps[recv_idx], r), rcnt, &r->ti->layout,
                          wm_coll_world(c, dst));
            wc_sched_send(s, wm_red_at(acc, disps[send_idx], r), scnt, &r->ti->layout,
                          wm_coll_world(c, dst));
            wc_sched_fence(s);
            if (nr > (nr ^ mask))
                send_idx = recv_idx;
        }
    }
#undef WM_SUM
    wm_fold_out(s, c, r, &f, acc, count);
}

/* Linear reduce-scatter + allgather (commutative ops): n blocks; in one round every rank sends
 * block j of its input to rank j and receives its own block from every rank; it reduces them
 * into block `me` of out; in a second round it sends that block to every rank and receives
 * theirs. Two rounds whatever n, sends straight from the input (no copy of the whole vector
 * first), each byte moved once: with few ranks, or more ranks than cores (a round costs each
 * rank a wake-up), it beats the 2 log n rounds of recursive halving and doubling. in may be out. */
static void wm_allreduce_linear(wc_sched_t *s, wm_comm_t *c, const wm_red_t *r, const void *in,
                                char *out, uint64_t count)
{
    int n = c->size, me = c->rank;
    uint64_t q = count / (uint64_t)n, m = count % (uint64_t)n;
    wc_sched_send_mode(s, WC_SEND_BULK_EAGER);
#define WM_BLK_OFF(j) ((uint64_t)(j) * q + ((uint64_t)(j) < m ? (uint64_t)(j) : m))
#define WM_BLK_CNT(j) (q + ((uint64_t)(j) < m))
    uint64_t mine = WM_BLK_CNT(me), off = WM_BLK_OFF(me);
    /* not in place: the first peer's block lands in the result, and the own block is reduced
     * into it (commutative), instead of being copied there first */
    int direct = in != out;
    char *tmp = wm_coll_tmp(s, mine * (uint64_t)(n - 1 - direct), r->ti);
    if (!tmp)
        return;
    const wc_dtype_t *dt = &r->ti->layout;
    char *res = wm_red_at(out, off, r);
    for (int i = 1; i < n; i++) {
        int from = (me - i + n) % n, to = (me + i) % n;
        char *dst = direct && i == 1 ? res : wm_red_at(tmp, (uint64_t)(i - 1 - direct) * mine, r);
        wc_sched_recv(s, dst, mine, dt, wm_coll_world(c, from));
        wc_sched_send(s, wm_red_at(in, WM_BLK_OFF(to), r), WM_BLK_CNT(to), dt,
                      wm_coll_world(c, to));
    }
    wc_sched_fence(s);
    if (direct)
        wm_red_apply(s, r, wm_red_at(in, off, r), res, mine);
    for (int i = 1 + direct; i < n; i++)
        wm_red_apply(s, r, wm_red_at(tmp, (uint64_t)(i - 1 - direct) * mine, r), res, mine);
    wc_sched_fence(s);
    for (int i = 1; i < n; i++) {
        int from = (me - i + n) % n, to = (me + i) % n;
        wc_sched_recv(s, wm_red_at(out, WM_BLK_OFF(from), r), WM_BLK_CNT(from), dt,
                      wm_coll_world(c, from));
        wc_sched_send(s, wm_red_at(out, off, r), mine, dt, wm_coll_world(c, to));
    }
#undef WM_BLK_OFF
#undef WM_BLK_CNT
}

/* Two ranks, where recursive doubling would run: one exchange of the whole vectors and a local
 * reduction (rank 0's data on the left). When the operands may be taken in the order at hand
 * (a commutative op, or rank 0), the peer's data lands in the receive buffer and is reduced with
 * the send buffer in place: no copy, no temporary. Otherwise the send leaves from the user's
 * buffer while it is copied into the receive buffer, so the copy costs no round of its own. */
static void wm_allreduce_pair(wc_sched_t *s, wm_comm_t *c, const wm_red_t *r, const void *sbuf,
                              char *acc, uint64_t count)
{
    const wc_dtype_t *dt = &r->ti->layout;
    int peer = wm_coll_world(c, c->rank ^ 1);
    if (sbuf != MPI_IN_PLACE && (r->commute || c->rank == 0)) {
        wc_sched_recv(s, acc, count, dt, peer);
        wc_sched_send(s, sbuf, count, dt, peer);
        wc_sched_fence(s);
        wm_red_apply(s, r, sbuf, acc, count);   /* acc = mine op the peer's */
        return;
    }
    char *tmp = wm_coll_tmp(s, count, r->ti);
    if (!tmp)
        return;
    const void *mine = sbuf == MPI_IN_PLACE ? acc : sbuf;
    wc_sched_recv(s, tmp, count, dt, peer);
    wc_sched_send(s, mine, count, dt, peer);
    if (mine != acc)
        wc_sched_copy(s, mine, count, dt, acc, count, dt);
    wc_sched_fence(s);
    if (c->rank == 1 || r->commute) {
        wm_red_apply(s, r, tmp, acc, count);   /* acc = rank 0's op acc */
    } else {
        wm_red_apply(s, r, acc, tmp, count);   /* tmp = acc op rank 1's */
        wm_red_copy(s, r, tmp, acc, count);
    }
}

/* One round for small vectors on few ranks: every rank sends its vector to every other one and
 * reduces the n vectors itself, in rank order from the right, x0 op (x1 op (... op x(n-1))), the
 * same order on every rank (so every rank gets the same bits, and a non-commutative op its rank
 * order). The last rank's vector lands in the receive buffer; the others in temporaries. With more
 * ranks than CPUs each dependent round costs a rank a turn on its CPU: one round instead of
 * log2(n) (docs/collectives.md). */
static void wm_allreduce_all(wc_sched_t *s, wm_comm_t *c, const wm_red_t *r, const void *sbuf,
                             char *acc, uint64_t count)
{
    const wc_dtype_t *dt = &r->ti->layout;
    int n = c->size, me = c->rank, last = n - 1;
    const char *x[WM_COLL_ALLREDUCE_ALL_RANKS];
    const void *mine = sbuf == MPI_IN_PLACE ? acc : sbuf;
    if (sbuf == MPI_IN_PLACE && me != last) {
        /* the receive buffer takes the last rank's vector: keep this rank's own apart */
        char *own = wm_coll_tmp(s, count, r->ti);
        if (!own)
            return;
        wm_red_copy(s, r, acc, own, count);
        mine = own;
    }
    for (int j = 0; j < n; j++) {
        if (j == me) {
            x[j] = mine;
            continue;
        }
        char *into = j == last ? acc : wm_coll_tmp(s, count, r->ti);
        if (!into)
            return;
        x[j] = into;
        wc_sched_recv(s, into, count, dt, wm_coll_world(c, j));
    }
    for (int i = 1; i < n; i++)
        wc_sched_send(s, mine, count, dt, wm_coll_world(c, (me + i) % n));
    if (me == last && mine != acc)
        wm_red_copy(s, r, mine, acc, count);
    wc_sched_fence(s);
    for (int j = last - 1; j >= 0; j--)
        wm_red_apply(s, r, x[j], acc, count);
}

void wm_coll_build_allreduce(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    uint64_t count = (uint64_t)a->rcount;
    if (count == 0)
        return;
    wm_red_t r = wm_red_of(a);
    if (c->size > 1 && c->size <= WM_COLL_ALLREDUCE_LINEAR_RANKS && r.op->builtin >= 0 &&
        count >= (uint64_t)c->size && count * r.ti->size >= WM_COLL_ALLREDUCE_LONG) {
        wm_allreduce_linear(s, c, &r, a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf, a->rbuf,
                            count);
        return;
    }
    if (c->size == 2 && (r.op->builtin < 0 || count * r.ti->size < WM_COLL_ALLREDUCE_LONG)) {
        wm_allreduce_pair(s, c, &r, a->sbuf, a->rbuf, count);
        return;
    }
    if (c->size > 2 && c->size <= WM_COLL_ALLREDUCE_ALL_RANKS &&
        count * r.ti->size <= WM_COLL_ALLREDUCE_ALL_MAX) {
        wm_allreduce_all(s, c, &r, a->sbuf, a->rbuf, count);
        return;
    }
    if (a->sbuf != MPI_IN_PLACE)
        wm_red_copy(s, &r, a->sbuf, a->rbuf, count);
    if (c->size == 1)
        return;
    wc_sched_fence(s);
    wm_fold_t f = wm_fold_of(c->size, c->rank);
    if (r.op->builtin >= 0 && count >= (uint64_t)f.pof2 &&
        count * r.ti->size >= WM_COLL_ALLREDUCE_LONG)
        wm_allreduce_rab(s, c, &r, a->rbuf, count);
    else
        wm_allreduce_rd(s, c, &r, a->rbuf, count);
}

/* ---- reduce_scatter: reduce to rank 0, then scatter (large: allreduce, keep a block) ---- */

static void wm_coll_build_reduce_scatter(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    int n = c->size, me = c->rank;
    wm_red_t r = wm_red_of(a);
    MPI_Count *cnts = wc_sched_tmp(s, sizeof(MPI_Count) * 2 * (size_t)n);
    if (!cnts)
        return;
    MPI_Count *disps = cnts + n;
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        cnts[i] = a->rcounts.i || a->rcounts.c ? wm_coll_vec_at(&a->rcounts, i) : a->rcount;
        disps[i] = (MPI_Count)total;
        total += (uint64_t)cnts[i];
    }
    if (total == 0)
        return;
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    wm_fold_t f = wm_fold_of(n, me);
    if (n > 1 && r.op->builtin >= 0 && total >= (uint64_t)f.pof2 &&
        total * r.ti->size >= WM_COLL_ALLREDUCE_LONG) {
        /* large, predefined op: Rabenseifner's allreduce on a copy, then this rank's block */
        char *all = wm_coll_tmp(s, total, r.ti);
        if (!all)
            return;
        wm_red_copy(s, &r, in, all, total);
        wc_sched_fence(s);
        wm_allreduce_rab(s, c, &r, all, total);
        wc_sched_fence(s);
        wm_red_copy(s, &r, wm_red_at(all, (uint64_t)disps[me], &r), a->rbuf, (uint64_t)cnts[me]);
        return;
    }
    char *res = me == 0 ? wm_coll_tmp(s, total, r.ti) : NULL;
    if (me == 0 && !res)
        return;
    wm_reduce_tree(s, c, &r, in, res, total, 0);
    wc_sched_fence(s);
    /* scatterv from rank 0's result; MPI_Aint displacements are element counts here */
    MPI_Aint *adisps = wc_sched_tmp(s, sizeof(MPI_Aint) * (size_t)n);
    if (!adisps)
        return;
    for (int i = 0; i < n; i++)
        adisps[i] = (MPI_Aint)disps[i];
    wm_coll_args_t sa = { .sbuf = res, .rbuf = a->rbuf, .rcount = cnts[me], .stype = r.ti,
                          .rtype = r.ti, .scounts = { .c = cnts }, .sdispls = { .a = adisps },
                          .root = 0 };
    wm_coll_build_scatterv(s, c, &sa);
}

/* ---- scan and exscan: recursive doubling (MPICH's) ---- */

static void wm_scan(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a, bool ex)
{
    int n = c->size, me = c->rank;
    uint64_t count = (uint64_t)a->rcount;
    if (count == 0)
        return;
    wm_red_t r = wm_red_of(a);
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    char *partial = wm_coll_tmp(s, count, r.ti), *tmp = wm_coll_tmp(s, count, r.ti);
    char *scratch = r.commute ? NULL : wm_coll_tmp(s, count, r.ti);
    if (!partial || !tmp || (!r.commute && !scratch))
        return;
    wm_red_copy(s, &r, in, partial, count);
    if (!ex && in != a->rbuf)
        wm_red_copy(s, &r, in, a->rbuf, count);
    bool have = !ex;   /* rbuf holds a value (exscan: rank 0's stays undefined) */
    wc_sched_fence(s);
    for (int mask = 1; mask < n; mask <<= 1) {
        int dst = me ^ mask;
        if (dst >= n)
            continue;
        wc_sched_recv(s, tmp, count, &r.ti->layout, wm_coll_world(c, dst));
        wc_sched_send(s, partial, count, &r.ti->layout, wm_coll_world(c, dst));
        wc_sched_fence(s);
        if (me > dst) {
            wm_red_apply(s, &r, tmp, partial, count);
            if (have) {
                wm_red_apply(s, &r, tmp, a->rbuf, count);
            } else {
                wm_red_copy(s, &r, tmp, a->rbuf, count);
                have = true;
            }
        } else {
            wm_red_apply_right(s, &r, tmp, partial, scratch, count);
        }
        wc_sched_fence(s);
    }
}

static void wm_coll_build_scan(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    wm_scan(s, c, a, false);
}

static void wm_coll_build_exscan(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    wm_scan(s, c, a, true);
}

/* ---- entry points ---- */

enum { WM_R_REDUCE, WM_R_ALLREDUCE, WM_R_RS, WM_R_RSB, WM_R_SCAN, WM_R_EXSCAN };

static int wm_reduction(const char *fn, int kind, const void *sbuf, void *rbuf, MPI_Count count,
                        wm_coll_vec_t rcounts, MPI_Datatype type, MPI_Op op, int root,
                        MPI_Comm comm, MPI_Request *request, int nb)
{
    WM_COMM_CHECK(fn, comm, c);
    if (WU_UNLIKELY(c->tcomm))
        return wm_tc_coll_entry(fn, c, &(wm_tc_coll_args_t){
                   .kind = kind == WM_R_REDUCE ? WM_TC_REDUCE
                           : kind == WM_R_ALLREDUCE ? WM_TC_ALLREDUCE
                           : kind == WM_R_RSB ? WM_TC_RSB
                           : kind == WM_R_RS ? WM_TC_RS
                           : kind == WM_R_SCAN ? WM_TC_SCAN : WM_TC_EXSCAN,
                   .sbuf = sbuf, .rbuf = rbuf, .rcount = count, .rtype = type, .op = op,
                   .root = root, .rcounts = WM_TC_VEC(rcounts) }, request, nb);
    int rc, n = c->size;
    if ((rc = wm_coll_check_comm(c, fn, request, nb)))
        return rc;
    if ((kind == WM_R_SCAN || kind == WM_R_EXSCAN) && (rc = wm_coll_check_intra(c, fn)))
        return rc;
    if (kind == WM_R_REDUCE && (rc = wm_coll_check_root(c, fn, root)))
        return rc;
    wm_coll_args_t a = { .sbuf = sbuf, .rbuf = rbuf, .rcount = count, .rcounts = rcounts,
                         .root = root, .op_type = type, .persist = nb == WM_COLL_PERSISTENT };
    /* intercommunicator Reduce: nothing is significant at MPI_PROC_NULL, the send side in the
     * other group, the receive side at MPI_ROOT; no MPI_IN_PLACE anywhere */
    bool inter_root = c->inter && kind == WM_R_REDUCE && root == MPI_ROOT;
    bool inter_send = c->inter && kind == WM_R_REDUCE && root >= 0;
    if (c->inter && kind == WM_R_REDUCE && root == MPI_PROC_NULL)
        return wm_coll_run(fn, c, wm_coll_build_inter_reduce, &a, request, NULL, NULL);
    if (c->inter && !inter_root && (rc = wm_coll_check_not_in_place(c, fn, "sendbuf", sbuf)))
        return rc;
    MPI_Count total = count;
    if (kind == WM_R_RS) {
        if ((rc = wm_coll_check_vec(c, fn, "recvcounts", &rcounts, n)))
            return rc;
        total = 0;
        for (int i = 0; i < n; i++) {
            if (wm_coll_vec_at(&rcounts, i) < 0)
                return wm_error(c, MPI_ERR_COUNT, fn, "recvcounts[%d] = %lld is negative", i,
                                (long long)wm_coll_vec_at(&rcounts, i));
            total += wm_coll_vec_at(&rcounts, i);
        }
        count = wm_coll_vec_at(&rcounts, c->rank);
    } else if (kind == WM_R_RSB) {
        total = count * n;
    }
    if ((rc = wm_coll_check_buf(c, fn, inter_send ? "send" : "receive",
                                inter_send ? sbuf : rbuf == MPI_IN_PLACE ? NULL : rbuf, count,
                                type, &a.rtype)))
        return rc;
    if (rbuf == MPI_IN_PLACE && !inter_send)
        return wm_error(c, MPI_ERR_BUFFER, fn, "recvbuf cannot be MPI_IN_PLACE");
    if (!c->inter && sbuf == MPI_IN_PLACE && kind == WM_R_REDUCE && c->rank != root)
        return wm_error(c, MPI_ERR_BUFFER, fn, "sendbuf is MPI_IN_PLACE on rank %d, not the root",
                        c->rank);
    (void)total;
    a.stype = a.rtype;
    a.op = wm_op_get(op);
    if (!a.op)
        return wm_error(c, MPI_ERR_OP, fn, "invalid operation %p", (void *)op);
    const char *why = NULL;
    if (!wm_op_valid(a.op, a.rtype, &why))
        return wm_error(c, MPI_ERR_OP, fn, "%s on %s: %s", wm_op_name(a.op), a.rtype->name,
                        why ? why : "not defined");
    static const wm_coll_build_fn_t builders[] = {
        [WM_R_REDUCE] = wm_coll_build_reduce, [WM_R_ALLREDUCE] = wm_coll_build_allreduce,
        [WM_R_RS] = wm_coll_build_reduce_scatter, [WM_R_RSB] = wm_coll_build_reduce_scatter,
        [WM_R_SCAN] = wm_coll_build_scan, [WM_R_EXSCAN] = wm_coll_build_exscan,
    };
    static const wm_coll_build_fn_t inter_builders[] = {
        [WM_R_REDUCE] = wm_coll_build_inter_reduce,
        [WM_R_ALLREDUCE] = wm_coll_build_inter_allreduce,
        [WM_R_RS] = wm_coll_build_inter_reduce_scatter,
        [WM_R_RSB] = wm_coll_build_inter_reduce_scatter,
    };
    wm_obj_t *to = a.rtype->obj.predefined ? NULL : (wm_obj_t *)&a.rtype->obj;
    wm_obj_t *oo = a.op->obj.predefined ? NULL : (wm_obj_t *)&a.op->obj;
    wm_coll_build_fn_t build = c->inter ? inter_builders[kind] : builders[kind];
    if (kind == WM_R_REDUCE && !c->inter)
        build = wm_coll_pick(build, wm_coll_build_hier_reduce);
    else if (kind == WM_R_ALLREDUCE && !c->inter)
        build = wm_coll_pick(build, wm_coll_build_hier_allreduce);
    return wm_coll_run(fn, c, build, &a, request, to, oo);
}

static const wm_coll_vec_t wm_no_vec;

/* The entry points' helpers, each serving an int form and its _c twin (WM_TWINS_MPI_X of
 * src/mpi/gen/wm_entry.h): Reduce's with a root, the others' without, the persistent forms' with
 * the info argument, which carries no hint Weft uses. */
static inline int wm_reduce_rooted(const char *fn, const void *sendbuf, void *recvbuf,
                                   MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                                   MPI_Comm comm, MPI_Request *request, int nb)
{
    return wm_reduction(fn, WM_R_REDUCE, sendbuf, recvbuf, count, wm_no_vec, datatype, op, root,
                        comm, request, nb);
}

static inline int wm_reduce_rooted_init(const char *fn, const void *sendbuf, void *recvbuf,
                                        MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                                        int root, MPI_Comm comm, MPI_Info info,
                                        MPI_Request *request)
{
    (void)info;
    return wm_reduction(fn, WM_R_REDUCE, sendbuf, recvbuf, count, wm_no_vec, datatype, op, root,
                        comm, request, WM_COLL_PERSISTENT);
}

static inline int wm_reduce_all(const char *fn, const void *sendbuf, void *recvbuf,
                                MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                MPI_Request *request, int kind, int nb)
{
    return wm_reduction(fn, kind, sendbuf, recvbuf, count, wm_no_vec, datatype, op, 0, comm,
                        request, nb);
}

static inline int wm_reduce_all_init(const char *fn, const void *sendbuf, void *recvbuf,
                                     MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                                     MPI_Comm comm, MPI_Info info, MPI_Request *request, int kind)
{
    (void)info;
    return wm_reduction(fn, kind, sendbuf, recvbuf, count, wm_no_vec, datatype, op, 0, comm,
                        request, WM_COLL_PERSISTENT);
}

WM_TWINS_MPI_Reduce(wm_reduce_rooted, NULL, false)
WM_TWINS_MPI_Ireduce(wm_reduce_rooted, true)
WM_TWINS_MPI_Reduce_init(wm_reduce_rooted_init)
WM_TWINS_MPI_Allreduce(wm_reduce_all, NULL, WM_R_ALLREDUCE, false)
WM_TWINS_MPI_Iallreduce(wm_reduce_all, WM_R_ALLREDUCE, true)
WM_TWINS_MPI_Allreduce_init(wm_reduce_all_init, WM_R_ALLREDUCE)
WM_TWINS_MPI_Scan(wm_reduce_all, NULL, WM_R_SCAN, false)
WM_TWINS_MPI_Iscan(wm_reduce_all, WM_R_SCAN, true)
WM_TWINS_MPI_Scan_init(wm_reduce_all_init, WM_R_SCAN)
WM_TWINS_MPI_Exscan(wm_reduce_all, NULL, WM_R_EXSCAN, false)
WM_TWINS_MPI_Iexscan(wm_reduce_all, WM_R_EXSCAN, true)
WM_TWINS_MPI_Exscan_init(wm_reduce_all_init, WM_R_EXSCAN)
WM_TWINS_MPI_Reduce_scatter_block(wm_reduce_all, NULL, WM_R_RSB, false)
WM_TWINS_MPI_Ireduce_scatter_block(wm_reduce_all, WM_R_RSB, true)
WM_TWINS_MPI_Reduce_scatter_block_init(wm_reduce_all_init, WM_R_RSB)

/* Reduce_scatter, whose counts differ in type between the int and _c forms. */
static inline int wm_reduce_scatter(const char *fn, const void *sendbuf, void *recvbuf,
                                    wm_ints_t recvcounts, MPI_Datatype datatype, MPI_Op op,
                                    MPI_Comm comm, MPI_Request *request, int nb)
{
    return wm_reduction(fn, WM_R_RS, sendbuf, recvbuf, 0, wm_coll_counts(recvcounts), datatype,
                        op, 0, comm, request, nb);
}

static inline int wm_reduce_scatter_init(const char *fn, const void *sendbuf, void *recvbuf,
                                         wm_ints_t recvcounts, MPI_Datatype datatype, MPI_Op op,
                                         MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return wm_reduce_scatter(fn, sendbuf, recvbuf, recvcounts, datatype, op, comm, request,
                             WM_COLL_PERSISTENT);
}

WM_TWINS_MPI_Reduce_scatter(wm_reduce_scatter, NULL, false)
WM_TWINS_MPI_Ireduce_scatter(wm_reduce_scatter, true)
WM_TWINS_MPI_Reduce_scatter_init(wm_reduce_scatter_init)
