/* The hot path of the threading layer, inline in every caller: the gate, lock and unlock, thread-
 * specific data, the wait object's prepare and wake. Included by wt_thread.h only.
 *
 * The gate is read with a relaxed load: it is written once, before the threads it concerns exist
 * (pthread_create orders the write before their reads), so no stronger ordering is needed; the
 * atomic load only tells the compiler and ThreadSanitizer that the read is intended. It costs the
 * same plain load as a non-atomic read. */
#ifndef WT_THREAD_INL_H
#define WT_THREAD_INL_H

#ifndef WT_THREAD_H
#error "include thread/wt_thread.h, not wt_thread_inl.h"
#endif

static inline bool wt_thread_is_multi(void)
{
    return __atomic_load_n(&wt_thread_multi, __ATOMIC_RELAXED);
}

/* ---- mutexes -------------------------------------------------------------------------------- */

static inline void wt_mutex_lock_always(wt_mutex_t *m) WT_ACQUIRE(*m) WT_NO_THREAD_SAFETY_ANALYSIS
{
    wt_be_mutex_lock(m);
}

static inline bool wt_mutex_trylock_always(wt_mutex_t *m) WT_TRY_ACQUIRE(true, *m)
    WT_NO_THREAD_SAFETY_ANALYSIS
{
    return wt_be_mutex_trylock(m);
}

static inline void wt_mutex_unlock_always(wt_mutex_t *m) WT_RELEASE(*m) WT_NO_THREAD_SAFETY_ANALYSIS
{
    wt_be_mutex_unlock(m);
}

static inline void wt_mutex_lock(wt_mutex_t *m) WT_ACQUIRE(*m) WT_NO_THREAD_SAFETY_ANALYSIS
{
    if (wt_thread_is_multi())
        wt_be_mutex_lock(m);
}

/* true if the lock was taken; always true while the gate is off */
static inline bool wt_mutex_trylock(wt_mutex_t *m) WT_TRY_ACQUIRE(true, *m) WT_NO_THREAD_SAFETY_ANALYSIS
{
    return !wt_thread_is_multi() || wt_be_mutex_trylock(m);
}

static inline void wt_mutex_unlock(wt_mutex_t *m) WT_RELEASE(*m) WT_NO_THREAD_SAFETY_ANALYSIS
{
    if (wt_thread_is_multi())
        wt_be_mutex_unlock(m);
}

/* ---- spinlocks ------------------------------------------------------------------------------ */

static inline void wt_spin_lock_always(wt_spinlock_t *s) WT_ACQUIRE(*s) WT_NO_THREAD_SAFETY_ANALYSIS
{
    wt_be_spin_lock(s);
}

static inline bool wt_spin_trylock_always(wt_spinlock_t *s) WT_TRY_ACQUIRE(true, *s)
    WT_NO_THREAD_SAFETY_ANALYSIS
{
    return wt_be_spin_trylock(s);
}

static inline void wt_spin_unlock_always(wt_spinlock_t *s) WT_RELEASE(*s) WT_NO_THREAD_SAFETY_ANALYSIS
{
    wt_be_spin_unlock(s);
}

static inline void wt_spin_lock(wt_spinlock_t *s) WT_ACQUIRE(*s) WT_NO_THREAD_SAFETY_ANALYSIS
{
    if (wt_thread_is_multi())
        wt_be_spin_lock(s);
}

/* true if the lock was taken; always true while the gate is off */
static inline bool wt_spin_trylock(wt_spinlock_t *s) WT_TRY_ACQUIRE(true, *s) WT_NO_THREAD_SAFETY_ANALYSIS
{
    return !wt_thread_is_multi() || wt_be_spin_trylock(s);
}

static inline void wt_spin_unlock(wt_spinlock_t *s) WT_RELEASE(*s) WT_NO_THREAD_SAFETY_ANALYSIS
{
    if (wt_thread_is_multi())
        wt_be_spin_unlock(s);
}

/* ---- thread-specific data ------------------------------------------------------------------- */

static inline void *wt_tls_get(wt_tls_key_t k)
{
    return wt_be_tls_get(k);
}

static inline wu_status_t wt_tls_set(wt_tls_key_t k, void *v)
{
    return wt_be_tls_set(k, v) ? WU_OK : WU_ERR_NO_MEMORY;
}

/* ---- the wait object ------------------------------------------------------------------------ */

/* Owner only, before checking its condition. A pending wake-up is kept (the block that follows
 * returns at once); otherwise IDLE -> ARMED. Relaxed: the ordering against wakers is made by the
 * exchange in wt_wait_wake and the compare-and-swap in wt_wait_block, not here. */
static inline void wt_wait_prepare(wt_wait_t *w)
{
    uint32_t idle = WT_WAIT_IDLE;
    __atomic_compare_exchange_n(&w->state, &idle, WT_WAIT_ARMED, false, __ATOMIC_RELAXED,
                                __ATOMIC_RELAXED);
}

/* Any thread, after making the waiter's condition true. One atomic exchange (release: the
 * condition's writes are visible to the waiter that consumes this wake-up); the kernel is entered
 * only if the owner was sleeping or about to. */
static inline void wt_wait_wake(wt_wait_t *w)
{
    if (WU_UNLIKELY(__atomic_exchange_n(&w->state, WT_WAIT_WOKEN, __ATOMIC_RELEASE) ==
                    WT_WAIT_SLEEPING))
        wt_wait_wake_slow(w);
}

#endif
