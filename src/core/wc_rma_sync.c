/* Locks and counters in a window's segment (see wc_rma.h). Every word is a plain C11 atomic on
 * shared memory: the processes of a node see one coherent copy. */
#include "core/wc_rma.h"

#include <sched.h>
#include "core/wc_core.h"
#include "util/wu_compiler.h"

void wc_rma_fence_barrier(wc_rma_seg_t *seg, int n)
{
    wc_rma_peer_t *p = &seg->peers[0];
    uint32_t gen = atomic_load_explicit(&p->fence_gen, memory_order_acquire);
    if (atomic_fetch_add_explicit(&p->fence_in, 1, memory_order_acq_rel) == (uint32_t)n - 1) {
        /* the last: reset before publishing, so the next fence's arrivals (which acquire the new
         * generation first) count from zero */
        atomic_store_explicit(&p->fence_in, 0, memory_order_relaxed);
        atomic_store_explicit(&p->fence_gen, gen + 1, memory_order_release);
        return;
    }
    /* No sleep: nothing would wake a sleeper (the last arrival only stores; a doorbell rings
     * for packets), so it would oversleep up to the engine's longest sleep. Spin, then yield
     * the CPU at every step, as the segment's lock waits do. */
    unsigned spins = 0;
    while (atomic_load_explicit(&p->fence_gen, memory_order_acquire) == gen)
        if (!wc_progress())
            wc_rma_backoff(&spins);
}

void wc_rma_backoff(unsigned *spins)
{
    /* A holder may be descheduled (4 ranks x threads on 2 cores): after a short spin, give the
     * CPU away at every step rather than burn the holder's time slice. */
    if (++*spins < 64)
        wu_cpu_relax();
    else
        sched_yield();
}

bool wc_rma_trylock(wc_rma_peer_t *p, bool exclusive)
{
    uint32_t v = atomic_load_explicit(&p->lock, memory_order_relaxed);
    if (exclusive)
        return v == 0 && atomic_compare_exchange_strong_explicit(&p->lock, &v, WC_RMA_WRITER,
                                                                 memory_order_acquire,
                                                                 memory_order_relaxed);
    while (!(v & WC_RMA_WRITER))
        if (atomic_compare_exchange_weak_explicit(&p->lock, &v, v + 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return true;
    return false;
}

void wc_rma_lock(wc_rma_peer_t *p, bool exclusive)
{
    unsigned spins = 0;
    while (!wc_rma_trylock(p, exclusive))
        wc_rma_backoff(&spins);
}

void wc_rma_unlock(wc_rma_peer_t *p, bool exclusive)
{
    if (exclusive)
        atomic_store_explicit(&p->lock, 0, memory_order_release);
    else
        atomic_fetch_sub_explicit(&p->lock, 1, memory_order_release);
}

void wc_rma_acc_lock(wc_rma_peer_t *p)
{
    unsigned spins = 0;
    for (;;) {
        uint32_t v = 0;
        if (atomic_load_explicit(&p->acc, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(&p->acc, &v, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return;
        wc_rma_backoff(&spins);
    }
}

void wc_rma_acc_unlock(wc_rma_peer_t *p)
{
    atomic_store_explicit(&p->acc, 0, memory_order_release);
}

void wc_rma_wait_ge(_Atomic uint32_t *w, uint32_t v)
{
    unsigned spins = 0;
    /* wrap-safe: counters only grow */
    while ((int32_t)(atomic_load_explicit(w, memory_order_acquire) - v) < 0)
        wc_rma_backoff(&spins);
}
