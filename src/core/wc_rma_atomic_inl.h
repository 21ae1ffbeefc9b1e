/* CPU atomics for accumulates to a window memory that every origin maps (docs/rma.md, "Atomic
 * accumulates").
 *
 * The standard asks that concurrent accumulates to one location with one basic datatype act as if
 * done one at a time, element by element, whatever mix of ops (and Compare_and_swap) they use. So
 * the choice between a CPU atomic and the target's accumulate mutex is made per basic type and
 * location, never per op or per call: for a basic type of 1, 2, 4 or 8 bytes that the MPI layer
 * accepts (wm_op_atomic_plan: integers, logicals, bytes, float, double; not the pairs), EVERY
 * accumulate, Get_accumulate, Fetch_and_op and Compare_and_swap on a naturally aligned element of
 * a mapped target is one CPU atomic (native fetch-add/and/or/xor, exchange, load, or a
 * compare-and-swap loop around the op's own kernel, so results are bit for bit those of the mutex
 * path), and such an element is never touched by the mutex path. A misaligned element of those
 * types is always handled under the target's accumulate mutex, by everyone: misaligned locations
 * are only ever accessed there. Other types keep the mutex path unchanged.
 *
 * Bulk accumulates: see WC_RMA_AMODE_* below (the window leaves the atomic mode at the first one).
 *
 * "Every origin maps the target memory" (wc_rma_atomic_reach): allocated windows of one node. A
 * target reached by process_vm_readv/writev (Win_create, dynamic) uses the mutex for every
 * accumulate, the target itself included. Any other path that applies accumulates to a mapped
 * window memory (e.g. a target's engine serving origins of another node) must apply the types
 * above through wc_rma_atomic_apply too, or the window must be put in WC_RMA_AMODE_MUTEX at its
 * creation (one store before any operation), or the mix loses atomicity.
 *
 * Concurrency contract: any thread of any process may call these at any time on memory of a
 * window it maps; they take no lock except the target's accumulate mutex for misaligned elements
 * (held for the rest of the call), wait for nothing else than a mode switch under way (which
 * waits only for atomic accumulates under way, which never wait), and need nothing from the
 * target.
 */
#ifndef WC_RMA_ATOMIC_INL_H
#define WC_RMA_ATOMIC_INL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "core/wc_rma.h"

typedef enum {
    WC_RMA_A_LOAD,    /* MPI_NO_OP: fetch only */
    WC_RMA_A_SWAP,    /* MPI_REPLACE */
    WC_RMA_A_ADD,     /* MPI_SUM on integers */
    WC_RMA_A_AND,     /* MPI_BAND */
    WC_RMA_A_OR,      /* MPI_BOR */
    WC_RMA_A_XOR,     /* MPI_BXOR */
    WC_RMA_A_FN,      /* anything else: compare-and-swap loop around fn */
} wc_rma_aop_t;

/* inout = in op inout for n elements (the MPI layer's kernels have this signature). */
typedef void (*wc_rma_afn_t)(const void *in, void *inout, size_t n);

/* How to apply one op to elements of one basic type; filled by the MPI layer. */
typedef struct wc_rma_atomic {
    unsigned     esize;   /* 1, 2, 4 or 8 bytes */
    wc_rma_aop_t op;
    wc_rma_afn_t fn;      /* WC_RMA_A_FN */
} wc_rma_atomic_t;

/* The window's accumulate mode, in process 0's control block. It starts ATOMIC: accumulates of at
 * most WC_RMA_ATOMIC_MAX elements of the types above are CPU atomics. The first accumulate of
 * such a type with more elements (a bulk update, which one atomic per element would slow tenfold)
 * switches the window to MUTEX for good: every accumulate then takes the target's mutex, as other
 * types always do. The switch waits until no process has an atomic accumulate under way (each
 * counts its own in ainflight, in its own control block, so the count costs no shared line):
 * an origin raises its count, then reads the mode; the switcher writes the mode, then reads the
 * counts (both sequentially consistent), so either the origin sees the switch and backs off, or
 * the switcher sees the count and waits for it. */
enum { WC_RMA_AMODE_ATOMIC = 0, WC_RMA_AMODE_SWITCHING, WC_RMA_AMODE_MUTEX };
#define WC_RMA_ATOMIC_MAX 8

/* Before an atomic accumulate by process me: true if the window is in ATOMIC mode (then call
 * wc_rma_atomic_leave when done); false once it is MUTEX (waits for a switch under way). */
static inline bool wc_rma_atomic_enter(wc_rma_seg_t *seg, int me)
{
    _Atomic uint32_t *mine = &seg->peers[me].ainflight, *mode = &seg->peers[0].amode;
    if (atomic_load_explicit(mode, memory_order_acquire) != WC_RMA_AMODE_MUTEX) {
        atomic_fetch_add_explicit(mine, 1, memory_order_seq_cst);
        if (atomic_load_explicit(mode, memory_order_seq_cst) == WC_RMA_AMODE_ATOMIC)
            return true;
        atomic_fetch_sub_explicit(mine, 1, memory_order_release);
        unsigned spins = 0;
        while (atomic_load_explicit(mode, memory_order_acquire) != WC_RMA_AMODE_MUTEX)
            wc_rma_backoff(&spins);
    }
    /* The switcher saw every count at zero before it wrote MUTEX, and this process's count is
     * zero or counts only later entries that backed off: reading it (acquire) orders this
     * process's earlier atomic accumulates before the mutex path that follows, directly (the
     * chain through the switcher, possibly another process, holds too, but is invisible to
     * tools that watch one process). */
    (void)atomic_load_explicit(mine, memory_order_acquire);
    return false;
}

static inline void wc_rma_atomic_leave(wc_rma_seg_t *seg, int me)
{
    atomic_fetch_sub_explicit(&seg->peers[me].ainflight, 1, memory_order_release);
}

/* Switches the window to MUTEX mode (or waits for another's switch); returns once no atomic
 * accumulate of any process is under way. In wc_rma_io.c. */
void wc_rma_atomic_switch(wc_rma_seg_t *seg, int me);

/* Whether every origin reaches target memory t (of control block p) by loads and stores. */
static inline bool wc_rma_atomic_reach(const wc_rma_peer_t *p, const wc_rma_target_t *t)
{
    return t->addr != NULL && p->data_off != WC_RMA_USER_MEM;
}

#define WC_RMA_ATOMIC_ELEM(T)                                                                  \
    /* *addr = in op *addr, returning the previous value (fetch) or 0. addr aligned to      \
     * sizeof(T). A plain load or store is one atomic access of an aligned element: NO_OP   \
     * and REPLACE without fetch need no read-modify-write, and no ordering of their own:   \
     * one location is coherent, and the synchronization calls (flush, unlock, fence) are   \
     * full barriers that publish them. */                                                 \
    static inline T wc_rma_atomic_##T(const wc_rma_atomic_t *a, T *addr, T in, bool fetch)     \
    {                                                                                          \
        T old, nv;                                                                             \
        switch (a->op) {                                                                       \
        case WC_RMA_A_LOAD: return __atomic_load_n(addr, __ATOMIC_RELAXED);                    \
        case WC_RMA_A_SWAP:                                                                    \
            if (!fetch) {                                                                      \
                __atomic_store_n(addr, in, __ATOMIC_RELAXED);                                  \
                return 0;                                                                      \
            }                                                                                  \
            return __atomic_exchange_n(addr, in, __ATOMIC_SEQ_CST);                            \
        case WC_RMA_A_ADD:  return __atomic_fetch_add(addr, in, __ATOMIC_SEQ_CST);             \
        case WC_RMA_A_AND:  return __atomic_fetch_and(addr, in, __ATOMIC_SEQ_CST);             \
        case WC_RMA_A_OR:   return __atomic_fetch_or(addr, in, __ATOMIC_SEQ_CST);              \
        case WC_RMA_A_XOR:  return __atomic_fetch_xor(addr, in, __ATOMIC_SEQ_CST);             \
        default: break;                                                                        \
        }                                                                                      \
        old = __atomic_load_n(addr, __ATOMIC_RELAXED);                                         \
        do {                                                                                   \
            nv = old;                                                                          \
            a->fn(&in, &nv, 1);                                                                \
        } while (!__atomic_compare_exchange_n(addr, &old, nv, true, __ATOMIC_SEQ_CST,          \
                                              __ATOMIC_RELAXED));                              \
        return old;                                                                            \
    }                                                                                          \
    /* The same without atomicity (the caller holds the target's accumulate mutex). */         \
    static inline T wc_rma_plain_##T(const wc_rma_atomic_t *a, T *addr, T in)                  \
    {                                                                                          \
        T old, nv;                                                                             \
        memcpy(&old, addr, sizeof old);                                                        \
        switch (a->op) {                                                                       \
        case WC_RMA_A_LOAD: return old;                                                        \
        case WC_RMA_A_SWAP: nv = in; break;                                                    \
        case WC_RMA_A_ADD:  nv = (T)(old + in); break;                                         \
        case WC_RMA_A_AND:  nv = old & in; break;                                              \
        case WC_RMA_A_OR:   nv = old | in; break;                                              \
        case WC_RMA_A_XOR:  nv = old ^ in; break;                                              \
        default: nv = old; a->fn(&in, &nv, 1); break;                                          \
        }                                                                                      \
        memcpy(addr, &nv, sizeof nv);                                                          \
        return old;                                                                            \
    }

WC_RMA_ATOMIC_ELEM(uint8_t)
WC_RMA_ATOMIC_ELEM(uint16_t)
WC_RMA_ATOMIC_ELEM(uint32_t)
WC_RMA_ATOMIC_ELEM(uint64_t)
#undef WC_RMA_ATOMIC_ELEM

/* One element at addr: in (packed, any alignment; unused for LOAD) op *addr, the previous value
 * to old (packed, may be NULL). Aligned: one CPU atomic. Misaligned: under p's accumulate mutex,
 * taken here if *locked is false and then left held (*locked = true) for the caller to release. */
static inline __attribute__((always_inline)) void
wc_rma_atomic_elem(const wc_rma_atomic_t *a, wc_rma_peer_t *p, char *addr, const char *in,
                   char *old, bool *locked)
{
    bool aligned = ((uintptr_t)addr & (a->esize - 1)) == 0;
    if (!aligned && !*locked) {
        wc_rma_acc_lock(p);
        *locked = true;
    }
#define WC_RMA_ELEM_CASE(N, T)                                                                 \
    case N: {                                                                                  \
        T x = 0, r;                                                                            \
        if (in)                                                                                \
            memcpy(&x, in, N);                                                                 \
        r = aligned ? wc_rma_atomic_##T(a, (T *)(void *)addr, x, old != NULL)                  \
                    : wc_rma_plain_##T(a, (T *)(void *)addr, x);                               \
        if (old)                                                                               \
            memcpy(old, &r, N);                                                                \
        break;                                                                                 \
    }
    switch (a->esize) {
    WC_RMA_ELEM_CASE(1, uint8_t)
    WC_RMA_ELEM_CASE(2, uint16_t)
    WC_RMA_ELEM_CASE(4, uint32_t)
    WC_RMA_ELEM_CASE(8, uint64_t)
    default: break;
    }
#undef WC_RMA_ELEM_CASE
}

/* Compare_and_swap of one element at addr: if *addr equals *cmp (bitwise) it becomes *swap; the
 * previous value to *old. */
static inline __attribute__((always_inline)) void
wc_rma_atomic_cas(unsigned esize, wc_rma_peer_t *p, char *addr, const void *cmp, const void *swap,
                  void *old)
{
    if (((uintptr_t)addr & (esize - 1)) != 0) {
        wc_rma_acc_lock(p);
        memcpy(old, addr, esize);
        if (memcmp(old, cmp, esize) == 0)
            memcpy(addr, swap, esize);
        wc_rma_acc_unlock(p);
        return;
    }
#define WC_RMA_CAS_CASE(N, T)                                                                  \
    case N: {                                                                                  \
        T e, s;                                                                                \
        memcpy(&e, cmp, N);                                                                    \
        memcpy(&s, swap, N);                                                                   \
        __atomic_compare_exchange_n((T *)(void *)addr, &e, s, false, __ATOMIC_SEQ_CST,         \
                                    __ATOMIC_SEQ_CST);                                         \
        memcpy(old, &e, N);   /* the value found: cmp on success */                            \
        break;                                                                                 \
    }
    switch (esize) {
    WC_RMA_CAS_CASE(1, uint8_t)
    WC_RMA_CAS_CASE(2, uint16_t)
    WC_RMA_CAS_CASE(4, uint32_t)
    WC_RMA_CAS_CASE(8, uint64_t)
    default: break;
    }
#undef WC_RMA_CAS_CASE
}

/* count elements of layout dt at byte offset off of the mapped target memory tbase (control
 * block p): in (packed, NULL for LOAD) op target, element by element, the previous values to old
 * (packed, may be NULL). Every block of dt holds whole elements of a->esize bytes. In
 * wc_rma_io.c. */
void wc_rma_atomic_apply(const wc_rma_atomic_t *a, wc_rma_peer_t *p, char *tbase, uint64_t off,
                         const wc_dtype_t *dt, uint64_t count, const char *in, char *old);

#endif
