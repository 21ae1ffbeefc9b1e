/* Locks and counters in a window's segment (see wc_rma.h). Every word is a plain C11 atomic on
 * shared memory: the processes of a node see one coherent copy. */
#include "core/wc_rma.h"

#include <sched.h>
#include "util/wu_compiler.h"

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
