/* The RMA operations: Put, Get, Accumulate, Get_accumulate, Fetch_and_op, Compare_and_swap.
 * On a target of this node each completes before it returns (the target's memory is reached
 * directly, core/wc_rma.h), so the synchronization calls only order and publish (wm_win_sync.c).
 * Accumulates to one target are CPU atomics element by element where every origin maps the target
 * and the basic type has them (core/wc_rma_atomic_inl.h), else serialized by the target's
 * accumulate mutex in the node's segment: either gives the per-element atomicity and the default
 * ordering (rar,raw,war,waw) the standard asks for. A target of another node is reached by
 * messages its progress applies under that same mutex (core/wc_rma_msg.h), so a window across
 * nodes keeps the mutex for every accumulate (wm_win.c leaves the atomic mode at creation): Put and
 * Accumulate return once their data is copied into packets (complete at the target at the next
 * flush, unlock or fence), the others wait for their answer. */
#include "mpi/wm_win.h"

#include <stdlib.h>
#include <string.h>
#include "mpi/wm_internal.h"
#include "mpi/wm_op.h"

#define WM_RMA_STACK 256   /* packed bytes handled without malloc */

__thread bool wm_rma_ordered;

/* A packed form of (buf, count, type): the buffer itself when contiguous, else a copy. */
typedef struct wm_rma_packed {
    char *p;
    bool  owned;
    char  stack[WM_RMA_STACK];
} wm_rma_packed_t;

static bool wm_rma_packed_alloc(wm_rma_packed_t *pk, uint64_t bytes)
{
    pk->owned = bytes > WM_RMA_STACK;
    pk->p = pk->owned ? malloc(bytes) : pk->stack;
    return pk->p != NULL;
}

static void wm_rma_packed_free(wm_rma_packed_t *pk)
{
    if (pk->owned)
        free(pk->p);
}

static bool wm_rma_pack(wm_rma_packed_t *pk, const void *buf, MPI_Count count,
                        const wm_datatype_t *dt)
{
    uint64_t bytes = (uint64_t)count * dt->size;
    if (dt->layout.contig) {
        pk->owned = false;
        pk->p = (char *)buf + dt->layout.contig_off;
        return true;
    }
    if (!wm_rma_packed_alloc(pk, bytes))
        return false;
    wc_dtype_cursor_t c;
    wc_dtype_cursor_init(&c, &dt->layout, buf, (uint64_t)count);
    wc_dtype_pack(&c, pk->p, bytes);
    return true;
}

static void wm_rma_unpack(void *buf, MPI_Count count, const wm_datatype_t *dt, const void *packed)
{
    uint64_t bytes = (uint64_t)count * dt->size;
    if (dt->layout.contig) {
        memcpy((char *)buf + dt->layout.contig_off, packed, bytes);
        return;
    }
    wc_dtype_cursor_t c;
    wc_dtype_cursor_init(&c, &dt->layout, buf, (uint64_t)count);
    wc_dtype_unpack(&c, packed, bytes);
}

static const wm_datatype_t *wm_rma_type(const char *fn, wm_win_t *w, MPI_Datatype t,
                                        MPI_Count count, const char *which, int *rc_p)
{
    const wm_datatype_t *ti = wm_type_get(t);
    if (!ti || !ti->committed || ti->size_overflow || ti->bounds_overflow) {
        *rc_p = wm_win_error(w, MPI_ERR_TYPE, fn, "%s %p is %s", which, (void *)t,
                             !ti ? "not a valid datatype" : !ti->committed ? "not committed"
                                                                             : "too large");
        return NULL;
    }
    if (count < 0) {
        *rc_p = wm_win_error(w, MPI_ERR_COUNT, fn, "the count of %s is negative (%lld)", which,
                             (long long)count);
        return NULL;
    }
    return ti;
}

/* The target of an operation: rank, epoch and range checks. On success *at holds the byte offset
 * of the target's first element in its window memory (an address for dynamic windows) and the
 * bytes the data spans. A target on another node checks a dynamic window's regions itself. */
static int wm_rma_target(const char *fn, wm_win_t *w, int target, MPI_Aint disp, MPI_Count tcount,
                         const wm_datatype_t *tdt, wc_rma_where_t *at)
{
    if (target < 0 || target >= w->size)
        return wm_win_error(w, MPI_ERR_RANK, fn, "target_rank %d is not in the window's group of %d",
                            target, w->size);
    if (!wm_win_can_access(w, target))
        return wm_win_error(w, MPI_ERR_RMA_SYNC, fn,
                            "no access epoch to target %d is open (fence, lock, lock_all or start)",
                            target);
    if (disp < 0)
        return wm_win_error(w, MPI_ERR_RMA_RANGE, fn, "target_disp %lld is negative",
                            (long long)disp);
    int64_t off = (int64_t)disp * w->meta[target][1], lo = off, hi = off;
    if (tcount > 0) {
        /* the first and the last element bound the data, whatever the extent's sign */
        int64_t step = (tcount - 1) * tdt->extent;
        lo = off + tdt->true_lb + (step < 0 ? step : 0);
        hi = off + tdt->true_lb + tdt->true_extent + (step > 0 ? step : 0);
    }
    *at = (wc_rma_where_t){ .off = (uint64_t)off, .lo = (uint64_t)lo, .hi = (uint64_t)hi };
    if (tcount > 0 && w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        if (w->remote[target])
            return MPI_SUCCESS;
        /* disp is an address: the bytes must lie in one region the target attached */
        const wc_rma_region_t *reg = &w->seg.regions[(size_t)target * WC_RMA_REGIONS];
        for (int i = 0; i < WC_RMA_REGIONS; i++) {
            uint64_t rs = atomic_load_explicit(&reg[i].size, memory_order_acquire);
            uint64_t rb = atomic_load_explicit(&reg[i].base, memory_order_relaxed);
            if (rs && (uint64_t)lo >= rb && (uint64_t)hi <= rb + rs)
                return MPI_SUCCESS;
        }
        return wm_win_error(w, MPI_ERR_RMA_RANGE, fn,
                            "target bytes [%#llx, %#llx) are in no region target %d attached",
                            (unsigned long long)lo, (unsigned long long)hi, target);
    }
    if (tcount > 0 && (lo < 0 || hi > w->meta[target][0]))
        return wm_win_error(w, MPI_ERR_RMA_RANGE, fn,
                            "target bytes [%lld, %lld) are outside target %d's window of %llu "
                            "bytes", (long long)lo, (long long)hi, target,
                            (unsigned long long)w->meta[target][0]);
    return MPI_SUCCESS;
}

/* An operation on a target of another node failed (core/wc_rma_msg.h). */
static int wm_rma_msg_error(const char *fn, wm_win_t *w, int target, wu_status_t st)
{
    if (st == WU_ERR_INVALID)
        return wm_win_error(w, MPI_ERR_RMA_RANGE, fn, "target %d found the data outside its "
                            "window memory or attached regions", target);
    if (st == WU_ERR_UNSUPPORTED)
        return wm_win_error(w, MPI_ERR_UNSUPPORTED_OPERATION, fn, "the target datatype is too "
                            "large to describe in one packet to target %d on another node",
                            target);
    if (st == WU_ERR_IO)
        return wm_win_error(w, MPI_ERR_OTHER, fn, "the transport's RMA to target %d on another "
                            "node failed (see the log)", target);
    return wm_win_error(w, MPI_ERR_NO_MEM, fn, "no memory for an operation on target %d", target);
}

static int wm_rma_io_error(const char *fn, wm_win_t *w, int target)
{
    return wm_win_error(w, MPI_ERR_OTHER, fn, "moving data to or from target %d failed (see the log)",
                        target);
}

/* req: Rput, whose request completes when the origin buffer may be reused: a fabric write is
 * waited for. */
static WU_NOINLINE int wm_rma_put(const char *fn, const void *obuf, MPI_Count ocount,
                                  MPI_Datatype otype, int target, MPI_Aint disp, MPI_Count tcount,
                                  MPI_Datatype ttype, MPI_Win win, bool req)
{
    wm_rma_ordered = false;
    WM_WIN_ARG(fn, win, w);
    int rc = MPI_SUCCESS;
    const wm_datatype_t *odt = wm_rma_type(fn, w, otype, ocount, "origin_datatype", &rc);
    if (!odt)
        return rc;
    const wm_datatype_t *tdt = wm_rma_type(fn, w, ttype, tcount, "target_datatype", &rc);
    if (!tdt)
        return rc;
    if (target == MPI_PROC_NULL)
        return MPI_SUCCESS;
    wc_rma_where_t at;
    if ((rc = wm_rma_target(fn, w, target, disp, tcount, tdt, &at)) != MPI_SUCCESS)
        return rc;
    if ((uint64_t)ocount * odt->size != (uint64_t)tcount * tdt->size)
        return wm_win_error(w, MPI_ERR_TYPE, fn, "origin data is %llu bytes, target data %llu",
                            (unsigned long long)((uint64_t)ocount * odt->size),
                            (unsigned long long)((uint64_t)tcount * tdt->size));
    if (w->remote[target] && odt->layout.contig) {
        /* the transport's RMA straight from the origin's buffer, in use until the next
         * synchronization (contiguous target data; else messages below) */
        wu_status_t st = wc_rma_net_put(w->cw, target, &at, &tdt->layout, (uint64_t)tcount,
                                        (const char *)obuf + odt->layout.contig_off);
        if (st == WU_OK && req)
            st = wc_rma_msg_flush_local(w->cw, target);
        if (st != WU_ERR_AGAIN)
            return st == WU_OK ? MPI_SUCCESS : wm_rma_msg_error(fn, w, target, st);
    }
    wm_rma_packed_t pk;
    if (!wm_rma_pack(&pk, obuf, ocount, odt))
        return wm_win_error(w, MPI_ERR_NO_MEM, fn, "no memory to pack the origin data");
    if (w->remote[target]) {
        wu_status_t st = wc_rma_msg_put(w->cw, target, &at, &tdt->layout, (uint64_t)tcount, pk.p);
        wm_rma_packed_free(&pk);
        return st == WU_OK ? MPI_SUCCESS : wm_rma_msg_error(fn, w, target, st);
    }
    /* a contiguous origin is read at the epoch's end (MPI: unchanged until then); Rput's request
     * completes at once, so it copies now */
    wu_status_t st;
    if (!pk.owned && !req) {
        wm_win_mark_deferred(w, &w->targets[target]);
        st = wc_rma_write_deferred(&w->targets[target], at.off, &tdt->layout, (uint64_t)tcount, pk.p);
    } else {
        st = wc_rma_write(&w->targets[target], at.off, &tdt->layout, (uint64_t)tcount, pk.p);
    }
    wm_rma_packed_free(&pk);
    return st == WU_OK ? MPI_SUCCESS : wm_rma_io_error(fn, w, target);
}

static WU_NOINLINE int wm_rma_get(const char *fn, void *obuf, MPI_Count ocount, MPI_Datatype otype,
                                  int target, MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype,
                                  MPI_Win win, bool req)
{
    wm_rma_ordered = false;
    WM_WIN_ARG(fn, win, w);
    int rc = MPI_SUCCESS;
    const wm_datatype_t *odt = wm_rma_type(fn, w, otype, ocount, "origin_datatype", &rc);
    if (!odt)
        return rc;
    const wm_datatype_t *tdt = wm_rma_type(fn, w, ttype, tcount, "target_datatype", &rc);
    if (!tdt)
        return rc;
    if (target == MPI_PROC_NULL)
        return MPI_SUCCESS;
    wc_rma_where_t at;
    if ((rc = wm_rma_target(fn, w, target, disp, tcount, tdt, &at)) != MPI_SUCCESS)
        return rc;
    uint64_t bytes = (uint64_t)tcount * tdt->size;
    if ((uint64_t)ocount * odt->size != bytes)
        return wm_win_error(w, MPI_ERR_TYPE, fn, "origin data is %llu bytes, target data %llu",
                            (unsigned long long)((uint64_t)ocount * odt->size),
                            (unsigned long long)bytes);
    wm_rma_packed_t pk;
    if (odt->layout.contig) {
        pk.owned = false;
        pk.p = (char *)obuf + odt->layout.contig_off;
    } else if (!wm_rma_packed_alloc(&pk, bytes)) {
        return wm_win_error(w, MPI_ERR_NO_MEM, fn, "no memory for the packed data");
    }
    wu_status_t st;
    if (w->remote[target]) {
        st = wc_rma_net_get(w->cw, target, &at, &tdt->layout, (uint64_t)tcount, pk.p);
        if (st == WU_ERR_AGAIN)
            st = wc_rma_msg_get(w->cw, target, &at, &tdt->layout, (uint64_t)tcount, pk.p);
    } else {
        if (odt->layout.contig && !req) {   /* lands by the epoch's end, as MPI allows */
            wm_win_mark_deferred(w, &w->targets[target]);
            st = wc_rma_read_deferred(&w->targets[target], at.off, &tdt->layout, (uint64_t)tcount,
                                      pk.p);
        } else {
            st = wc_rma_read(&w->targets[target], at.off, &tdt->layout, (uint64_t)tcount, pk.p);
        }
    }
    if (st == WU_OK && !odt->layout.contig)
        wm_rma_unpack(obuf, ocount, odt, pk.p);
    wm_rma_packed_free(&pk);
    if (st != WU_OK && w->remote[target])
        return wm_rma_msg_error(fn, w, target, st);
    return st == WU_OK ? MPI_SUCCESS : wm_rma_io_error(fn, w, target);
}

/* inout_packed = in_packed op inout_packed for tcount elements of tdt (packed streams). */
static bool wm_rma_reduce_packed(const wm_op_t *op, const char *in, char *inout, MPI_Count tcount,
                                 const wm_datatype_t *tdt, MPI_Datatype ttype)
{
    if (tdt->layout.contig) {
        wm_op_apply(op, in - tdt->layout.contig_off, inout - tdt->layout.contig_off, tcount, tdt,
                    ttype);
        return true;
    }
    /* Lay both out as the type says, reduce, pack back. */
    size_t span = (size_t)((tcount - 1) * tdt->extent + tdt->true_extent);
    char *a = malloc(span), *b = malloc(span);
    if (!a || !b) {
        free(a);
        free(b);
        return false;
    }
    char *ao = a - tdt->true_lb, *bo = b - tdt->true_lb;
    wm_rma_unpack(ao, tcount, tdt, inout);
    wm_rma_unpack(bo, tcount, tdt, in);
    wm_op_apply(op, bo, ao, tcount, tdt, ttype);
    wc_dtype_cursor_t c;
    wc_dtype_cursor_init(&c, &tdt->layout, ao, (uint64_t)tcount);
    wc_dtype_pack(&c, inout, (uint64_t)tcount * tdt->size);
    free(a);
    free(b);
    return true;
}

/* Accumulate and Get_accumulate (rbuf NULL: no result). */
static WU_NOINLINE int wm_rma_acc(const char *fn, const void *obuf, MPI_Count ocount,
                                  MPI_Datatype otype, void *rbuf, MPI_Count rcount,
                                  MPI_Datatype rtype, int target, MPI_Aint disp, MPI_Count tcount,
                                  MPI_Datatype ttype, MPI_Op oph, MPI_Win win, bool fetch)
{
    wm_rma_ordered = false;
    WM_WIN_ARG(fn, win, w);
    int rc = MPI_SUCCESS;
    const wm_op_t *op = wm_op_get(oph);
    if (!op)
        return wm_win_error(w, MPI_ERR_OP, fn, "invalid op %p", (void *)oph);
    if (!op->obj.predefined)
        return wm_win_error(w, MPI_ERR_OP, fn, "user operations are not allowed in accumulates");
    bool noop = oph == MPI_NO_OP;
    if (noop && !fetch)
        return wm_win_error(w, MPI_ERR_OP, fn, "MPI_NO_OP is only for Get_accumulate");
    const wm_datatype_t *tdt = wm_rma_type(fn, w, ttype, tcount, "target_datatype", &rc);
    if (!tdt)
        return rc;
    const wm_datatype_t *odt = NULL, *rdt = NULL;
    if (!noop && !(odt = wm_rma_type(fn, w, otype, ocount, "origin_datatype", &rc)))
        return rc;
    if (fetch && !(rdt = wm_rma_type(fn, w, rtype, rcount, "result_datatype", &rc)))
        return rc;
    /* nothing is combined when there is no element: both peers then accept any predefined op on
     * any type (mpi4py's Get_accumulate of zero MPI_BYTEs with the default MPI_SUM) */
    const char *why;
    if (tcount > 0 && !wm_op_valid_rma(op, tdt, &why))
        return wm_win_error(w, MPI_ERR_OP, fn, "%s on target_datatype: %s", wm_op_name(op), why);
    if (target == MPI_PROC_NULL)
        return MPI_SUCCESS;
    wc_rma_where_t at;
    if ((rc = wm_rma_target(fn, w, target, disp, tcount, tdt, &at)) != MPI_SUCCESS)
        return rc;
    uint64_t off = at.off;
    uint64_t bytes = (uint64_t)tcount * tdt->size;
    if ((odt && (uint64_t)ocount * odt->size != bytes) ||
        (rdt && (uint64_t)rcount * rdt->size != bytes))
        return wm_win_error(w, MPI_ERR_TYPE, fn,
                            "origin, result and target data differ in size (target: %llu bytes)",
                            (unsigned long long)bytes);

    wm_rma_packed_t in, cur;   /* not zero-initialized: that would clear their stack buffers */
    in.owned = false;
    in.p = NULL;
    if (odt && !wm_rma_pack(&in, obuf, ocount, odt))
        return wm_win_error(w, MPI_ERR_NO_MEM, fn, "no memory to pack the origin data");
    if (!wm_rma_packed_alloc(&cur, bytes)) {
        wm_rma_packed_free(&in);
        return wm_win_error(w, MPI_ERR_NO_MEM, fn, "no memory for the target data");
    }
    if (w->remote[target]) {
        MPI_Datatype b = wm_op_basic(tdt);
        const wm_datatype_t *bdt = b != MPI_DATATYPE_NULL ? wm_type_get(b) : NULL;
        wu_status_t st = wc_rma_msg_acc(w->cw, target, &at, &tdt->layout, (uint64_t)tcount,
                                        (uint64_t)(uintptr_t)oph, (uint64_t)(uintptr_t)b,
                                        bdt ? bdt->layout.size : 1, noop ? NULL : in.p,
                                        fetch ? cur.p : NULL);
        if (st == WU_OK && fetch)
            wm_rma_unpack(rbuf, rcount, rdt, cur.p);
        wm_rma_packed_free(&cur);
        wm_rma_packed_free(&in);
        return st == WU_OK ? MPI_SUCCESS : wm_rma_msg_error(fn, w, target, st);
    }
    const wc_rma_target_t *t = &w->targets[target];
    wc_rma_peer_t *p = &w->seg.peers[target];
    wc_rma_atomic_t a;
    bool atomic = wc_rma_atomic_reach(p, t) && wm_op_atomic_plan(op, tdt, &a);
    if (atomic && bytes > WC_RMA_ATOMIC_MAX * a.esize) {
        wc_rma_atomic_switch(&w->seg, w->rank);   /* a bulk update: the window leaves the atomic mode */
        atomic = false;
    }
    if (atomic && wc_rma_atomic_enter(&w->seg, w->rank)) {
        /* CPU atomics, element by element (core/wc_rma_atomic_inl.h); one contiguous element
         * (Fetch_and_op and its like) straight between the user's buffers */
        if (bytes == a.esize && tdt->layout.contig && (!fetch || rdt->layout.contig)) {
            bool locked = false;
            wc_rma_atomic_elem(&a, p, t->addr + off + tdt->layout.contig_off, in.p,
                               fetch ? (char *)rbuf + rdt->layout.contig_off : NULL, &locked);
            if (locked)
                wc_rma_acc_unlock(p);
        } else {
            wc_rma_atomic_apply(&a, p, t->addr, off, &tdt->layout, (uint64_t)tcount, in.p,
                                fetch ? cur.p : NULL);
            if (fetch)
                wm_rma_unpack(rbuf, rcount, rdt, cur.p);
        }
        wc_rma_atomic_leave(&w->seg, w->rank);
        wm_rma_packed_free(&cur);
        wm_rma_packed_free(&in);
        return MPI_SUCCESS;
    }
    wu_status_t st = wc_rma_drain((wc_rma_target_t *)t);   /* this process's Puts before */
    bool mem = true;
    wc_rma_acc_lock(p);
    if (st == WU_OK && (fetch || (!noop && oph != MPI_REPLACE)))
        st = wc_rma_read(t, off, &tdt->layout, (uint64_t)tcount, cur.p);
    if (st == WU_OK && fetch)
        wm_rma_unpack(rbuf, rcount, rdt, cur.p);
    if (st == WU_OK && oph == MPI_REPLACE)
        st = wc_rma_write(t, off, &tdt->layout, (uint64_t)tcount, in.p);
    else if (st == WU_OK && !noop) {
        mem = wm_rma_reduce_packed(op, in.p, cur.p, tcount, tdt, ttype);
        if (mem)
            st = wc_rma_write(t, off, &tdt->layout, (uint64_t)tcount, cur.p);
    }
    wc_rma_acc_unlock(p);
    wm_rma_packed_free(&cur);
    wm_rma_packed_free(&in);
    if (!mem)
        return wm_win_error(w, MPI_ERR_NO_MEM, fn, "no memory to reduce a derived datatype");
    return st == WU_OK ? MPI_SUCCESS : wm_rma_io_error(fn, w, target);
}

/* ---- fast paths --------------------------------------------------------------------------------
 * The common operation: one window of this node whose target memory this process maps (allocated
 * flavors, or its own Win_create memory), contiguous data of one type on both sides, inside an
 * open epoch and the target's window. Each fast path checks exactly what the general path checks
 * and returns false, having done nothing, when anything is off (an error, a derived or
 * non-contiguous type, a target of another node, the mutex mode): the general path then runs from
 * the start and raises the error. What the fast paths skip is work, not checks: the packing
 * machinery, the second and third lookup of one type, the op's validity and atomic plan (cached
 * per thread, below). Put, Get, and one element of Fetch_and_op, Compare_and_swap and Accumulate
 * (the CPU-atomic path, forced inline so that each entry point keeps only its own case). */

/* Where `bytes` of contiguous type dt at disp lie in target's mapped memory, or NULL (then the
 * general path decides). */
static inline char *wm_rma_fast_addr(wm_win_t *w, int target, MPI_Aint disp, MPI_Count count,
                                     const wm_datatype_t *dt)
{
    if (WU_UNLIKELY((unsigned)target >= (unsigned)w->size || disp < 0 || count <= 0))
        return NULL;
    const wm_win_fast_t *f = &w->fast[target];
    if (WU_UNLIKELY(!f->addr || !wm_win_can_access(w, target)))
        return NULL;
    int64_t off = (int64_t)disp * f->disp_unit;
    int64_t lo = off + dt->true_lb, hi = lo + dt->true_extent + (count - 1) * dt->extent;
    if (WU_UNLIKELY(lo < 0 || hi > f->size))
        return NULL;
    return f->addr + off + dt->layout.contig_off;
}

/* memcpy for the fast paths: up to 16 bytes (an element or two) inline, by two possibly
 * overlapping loads then two stores, rather than through the PLT and memcpy's size dispatch. */
static inline void wm_rma_copy(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    if (WU_LIKELY(n >= 8 && n <= 16)) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else {
        memcpy(d, s, n);
    }
}

/* A contiguous type usable by the fast paths, or NULL. */
static inline const wm_datatype_t *wm_rma_fast_type(MPI_Datatype t)
{
    const wm_datatype_t *dt = wm_type_get(t);
    if (WU_UNLIKELY(!dt || !dt->committed || dt->size_overflow || dt->bounds_overflow ||
                    !dt->layout.contig || !dt->size))
        return NULL;
    return dt;
}

static inline bool wm_rma_put_fast(const void *obuf, MPI_Count count, MPI_Datatype type,
                                   int target, MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype,
                                   MPI_Win win)
{
    if (WU_UNLIKELY(!wm_state.up) || type != ttype || count != tcount)
        return false;
    wm_win_t *w = wm_win_get(win);
    const wm_datatype_t *dt = wm_rma_fast_type(type);
    char *addr = w && dt ? wm_rma_fast_addr(w, target, disp, count, dt) : NULL;
    if (!addr)
        return false;
    wm_rma_copy(addr, (const char *)obuf + dt->layout.contig_off, (size_t)count * dt->size);
    wm_rma_ordered = false;
    return true;
}

static inline bool wm_rma_get_fast(void *obuf, MPI_Count count, MPI_Datatype type, int target,
                                   MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype,
                                   MPI_Win win)
{
    if (WU_UNLIKELY(!wm_state.up) || type != ttype || count != tcount)
        return false;
    wm_win_t *w = wm_win_get(win);
    const wm_datatype_t *dt = wm_rma_fast_type(type);
    const char *addr = w && dt ? wm_rma_fast_addr(w, target, disp, count, dt) : NULL;
    if (!addr)
        return false;
    wm_rma_copy((char *)obuf + dt->layout.contig_off, addr, (size_t)count * dt->size);
#if !defined(__x86_64__)
    wm_rma_ordered = false;   /* x86-64: loads are ordered before every later access anyway */
#endif
    return true;
}

/* The atomic plan of (op, predefined type), op MPI_OP_NULL for Compare_and_swap: per thread, the
 * last one asked (a Fetch_and_op loop asks the same each time). Keyed by handles that never
 * change meaning (predefined types and ops: static objects, never freed), so a hit is exact;
 * only pairs the general path would accept and do by CPU atomics are cached. Thread-local, so no
 * contract beyond the thread. */
typedef struct wm_rma_plan_cache {
    MPI_Op          op;
    MPI_Datatype    type;
    wc_rma_atomic_t a;
} wm_rma_plan_cache_t;
static __thread wm_rma_plan_cache_t wm_rma_plan_tls;

static WU_NOINLINE bool wm_rma_plan_fill(MPI_Op oph, MPI_Datatype type, const wm_datatype_t *dt)
{
    wc_rma_atomic_t a;
    const wm_op_t *op = NULL;
    const char *why;
    if (!dt->obj.predefined)
        return false;
    if (oph != MPI_OP_NULL) {
        op = wm_op_get(oph);
        if (!op || !op->obj.predefined || !wm_op_valid_rma(op, dt, &why))
            return false;
    } else if (dt->size > 16) {
        return false;
    }
    if (!wm_op_atomic_plan(op, dt, &a) || a.esize != dt->size)
        return false;
    wm_rma_plan_tls = (wm_rma_plan_cache_t){ .op = oph, .type = type, .a = a };
    return true;
}

static inline const wc_rma_atomic_t *wm_rma_plan(MPI_Op oph, MPI_Datatype type,
                                                 const wm_datatype_t *dt)
{
    wm_rma_plan_cache_t *c = &wm_rma_plan_tls;
    if (WU_LIKELY(c->type == type && c->op == oph && c->a.esize))
        return &c->a;
    return wm_rma_plan_fill(oph, type, dt) ? &c->a : NULL;
}

/* Fetch_and_op (oph), Compare_and_swap (oph MPI_OP_NULL, cmp set) or Accumulate (rbuf NULL) of
 * one element. */
static inline __attribute__((always_inline)) bool
wm_rma_atomic_fast(const void *obuf, const void *cmp, void *rbuf, MPI_Datatype type, int target,
                   MPI_Aint disp, MPI_Op oph, MPI_Win win)
{
    if (WU_UNLIKELY(!wm_state.up) || (!cmp && oph == MPI_OP_NULL) || (!rbuf && oph == MPI_NO_OP))
        return false;   /* MPI_OP_NULL, or Accumulate with MPI_NO_OP: the general path's error */
    wm_win_t *w = wm_win_get(win);
    const wm_datatype_t *dt = wm_rma_fast_type(type);
    char *addr = w && dt ? wm_rma_fast_addr(w, target, disp, 1, dt) : NULL;
    if (!addr || !w->fast[target].atomic)
        return false;
    const wc_rma_atomic_t *a = wm_rma_plan(oph, type, dt);
    if (!a || !wc_rma_atomic_enter(&w->seg, w->rank))
        return false;   /* the mutex mode: the general path */
    wc_rma_peer_t *p = &w->seg.peers[target];
    int64_t co = dt->layout.contig_off;
    if (cmp) {
        wc_rma_atomic_cas(a->esize, p, addr, (const char *)cmp + co, (const char *)obuf + co,
                          (char *)rbuf + co);
    } else {
        bool locked = false;
        wc_rma_atomic_elem(a, p, addr, oph == MPI_NO_OP ? NULL : (const char *)obuf + co,
                           rbuf ? (char *)rbuf + co : NULL, &locked);
        if (locked)
            wc_rma_acc_unlock(p);
    }
    wc_rma_atomic_leave(&w->seg, w->rank);   /* a locked read-modify-write too */
#if defined(__x86_64__)
    wm_rma_ordered = true;   /* (an unaligned element took the mutex: leave still fenced) */
#endif
    return true;
}

/* Put, Get and Accumulate, each helper serving the int form and its _c twin (WM_TWINS_MPI_X of
 * src/mpi/gen/wm_entry.h): the fast path inline, the general one a call. */
static inline int wm_put(const char *fn, const void *origin_addr, MPI_Count origin_count,
                         MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    if (wm_rma_put_fast(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                        target_count, target_datatype, win))
        return MPI_SUCCESS;
    return wm_rma_put(fn, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                      target_count, target_datatype, win, false);
}

static inline int wm_get(const char *fn, void *origin_addr, MPI_Count origin_count,
                         MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    if (wm_rma_get_fast(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                        target_count, target_datatype, win))
        return MPI_SUCCESS;
    return wm_rma_get(fn, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                      target_count, target_datatype, win, false);
}

static inline int wm_accumulate(const char *fn, const void *origin_addr, MPI_Count origin_count,
                                MPI_Datatype origin_datatype, int target_rank,
                                MPI_Aint target_disp, MPI_Count target_count,
                                MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    if (origin_count == 1 && target_count == 1 && origin_datatype == target_datatype &&
        wm_rma_atomic_fast(origin_addr, NULL, NULL, origin_datatype, target_rank, target_disp, op,
                           win))
        return MPI_SUCCESS;
    return wm_rma_acc(fn, origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL,
                      target_rank, target_disp, target_count, target_datatype, op, win, false);
}

WM_TWINS_MPI_Put(wm_put)
WM_TWINS_MPI_Get(wm_get)
WM_TWINS_MPI_Accumulate(wm_accumulate)

WM_TWINS_MPI_Get_accumulate(wm_rma_acc, true)

int wm_impl_MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                             int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    if (wm_rma_atomic_fast(origin_addr, NULL, result_addr, datatype, target_rank, target_disp, op,
                           win))
        return MPI_SUCCESS;
    return wm_rma_acc("MPI_Fetch_and_op", origin_addr, 1, datatype, result_addr, 1, datatype,
                      target_rank, target_disp, 1, datatype, op, win, true);
}

static WU_NOINLINE int wm_rma_cas(const void *origin_addr, const void *compare_addr,
                                  void *result_addr, MPI_Datatype datatype, int target_rank,
                                  MPI_Aint target_disp, MPI_Win win)
{
    wm_rma_ordered = false;
    static const char fn[] = "MPI_Compare_and_swap";
    WM_WIN_ARG(fn, win, w);
    int rc = MPI_SUCCESS;
    const wm_datatype_t *dt = wm_rma_type(fn, w, datatype, 1, "datatype", &rc);
    if (!dt)
        return rc;
    if (!dt->obj.predefined || !dt->layout.contig || dt->size > 16)
        return wm_win_error(w, MPI_ERR_TYPE, fn, "datatype %p is not a predefined basic type",
                            (void *)datatype);
    if (target_rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    wc_rma_where_t at;
    if ((rc = wm_rma_target(fn, w, target_rank, target_disp, 1, dt, &at)) != MPI_SUCCESS)
        return rc;
    uint64_t off = at.off;
    char cur[16];
    size_t n = (size_t)dt->size;
    if (w->remote[target_rank]) {
        wu_status_t st = wc_rma_msg_cas(w->cw, target_rank, &at, n, origin_addr, compare_addr,
                                        cur);
        if (st != WU_OK)
            return wm_rma_msg_error(fn, w, target_rank, st);
        memcpy(result_addr, cur, n);
        return MPI_SUCCESS;
    }
    const wc_rma_target_t *t = &w->targets[target_rank];
    wc_rma_peer_t *p = &w->seg.peers[target_rank];
    wc_rma_atomic_t a;
    if (wc_rma_atomic_reach(p, t) && wm_op_atomic_plan(NULL, dt, &a) &&
        wc_rma_atomic_enter(&w->seg, w->rank)) {
        wc_rma_atomic_cas(a.esize, p, t->addr + off, compare_addr, origin_addr, result_addr);
        wc_rma_atomic_leave(&w->seg, w->rank);
        return MPI_SUCCESS;
    }
    wc_rma_acc_lock(p);
    wu_status_t st = wc_rma_drain((wc_rma_target_t *)t);
    if (st == WU_OK)
        st = wc_rma_read(t, off, &dt->layout, 1, cur);
    if (st == WU_OK && memcmp(cur, compare_addr, n) == 0)
        st = wc_rma_write(t, off, &dt->layout, 1, origin_addr);
    wc_rma_acc_unlock(p);
    if (st != WU_OK)
        return wm_rma_io_error(fn, w, target_rank);
    memcpy(result_addr, cur, n);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr,
                                 void *result_addr, MPI_Datatype datatype, int target_rank,
                                 MPI_Aint target_disp, MPI_Win win)
{
    if (wm_rma_atomic_fast(origin_addr, compare_addr, result_addr, datatype, target_rank,
                           target_disp, MPI_OP_NULL, win))
        return MPI_SUCCESS;
    return wm_rma_cas(origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp,
                      win);
}

/* ---- request-based operations: the operation is complete when it returns, so the request is
 * born complete (the standard's local and remote completion both hold at once). ---- */

static int wm_rma_request(const char *fn, int rc, MPI_Win win, MPI_Request *request)
{
    if (rc != MPI_SUCCESS)
        return rc;
    wm_request_t *r = wm_request_alloc();
    if (!r)
        return wm_win_error(wm_win_get(win), MPI_ERR_NO_MEM, fn, "no memory for a request");
    r->kind = WM_REQ_DONE;
    r->active = true;
    r->proc_null = true;   /* completes at once with an empty status */
    r->comm = &wm_comm_self;
    *request = wm_request_handle(r);
    return MPI_SUCCESS;
}

#define WM_RMA_REQ_CHECK(fn, win, request)                                                      \
    do {                                                                                        \
        WM_WIN_ARG(fn, win, w_);                                                                \
        if (!(request))                                                                         \
            return wm_win_error(w_, MPI_ERR_ARG, fn, "request is NULL");                        \
    } while (0)

/* The request-based forms, each helper serving the int form and its _c twin. */
static inline int wm_rput(const char *fn, const void *origin_addr, MPI_Count origin_count,
                          MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                          MPI_Request *request)
{
    WM_RMA_REQ_CHECK(fn, win, request);
    return wm_rma_request(fn,
                          wm_rma_put(fn, origin_addr, origin_count, origin_datatype, target_rank,
                                     target_disp, target_count, target_datatype, win, true),
                          win, request);
}

static inline int wm_rget(const char *fn, void *origin_addr, MPI_Count origin_count,
                          MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                          MPI_Request *request)
{
    WM_RMA_REQ_CHECK(fn, win, request);
    return wm_rma_request(fn,
                          wm_rma_get(fn, origin_addr, origin_count, origin_datatype, target_rank,
                                     target_disp, target_count, target_datatype, win, true),
                          win, request);
}

static inline int wm_raccumulate(const char *fn, const void *origin_addr, MPI_Count origin_count,
                                 MPI_Datatype origin_datatype, int target_rank,
                                 MPI_Aint target_disp, MPI_Count target_count,
                                 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                                 MPI_Request *request)
{
    WM_RMA_REQ_CHECK(fn, win, request);
    return wm_rma_request(fn,
                          wm_rma_acc(fn, origin_addr, origin_count, origin_datatype, NULL, 0,
                                     MPI_DATATYPE_NULL, target_rank, target_disp, target_count,
                                     target_datatype, op, win, false),
                          win, request);
}

static inline int wm_rget_accumulate(const char *fn, const void *origin_addr,
                                     MPI_Count origin_count, MPI_Datatype origin_datatype,
                                     void *result_addr, MPI_Count result_count,
                                     MPI_Datatype result_datatype, int target_rank,
                                     MPI_Aint target_disp, MPI_Count target_count,
                                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                                     MPI_Request *request)
{
    WM_RMA_REQ_CHECK(fn, win, request);
    return wm_rma_request(fn,
                          wm_rma_acc(fn, origin_addr, origin_count, origin_datatype, result_addr,
                                     result_count, result_datatype, target_rank, target_disp,
                                     target_count, target_datatype, op, win, true),
                          win, request);
}

WM_TWINS_MPI_Rput(wm_rput)
WM_TWINS_MPI_Rget(wm_rget)
WM_TWINS_MPI_Raccumulate(wm_raccumulate)
WM_TWINS_MPI_Rget_accumulate(wm_rget_accumulate)
