/* The owner-biased lock's hot path (wt_olock.h), inline in every caller. Included by wt_olock.h
 * only. */
#ifndef WT_OLOCK_INL_H
#define WT_OLOCK_INL_H

#ifndef WT_OLOCK_H
#error "include thread/wt_olock.h, not wt_olock_inl.h"
#endif

#if WT_OLOCK_BIAS
/* The calling thread's token: the address of its instance of this variable (initial-exec TLS: one
 * add to the thread pointer). Unique among live threads; a thread created later may get the token
 * of one that exited, and with it that thread's locks, which is harmless. */
extern __thread char wt_olock_self;
static inline uintptr_t wt_olock_token(void)
{
    return (uintptr_t)&wt_olock_self;
}

void wt_olock_streak_end(wt_olock_t *l);   /* wt_olock.c: make the caller the owner, or re-bias */
#endif

/* The owner's entry by bias: 1 if the caller holds the lock now, -1 if it already held it by bias
 * (a nested trylock, which must fail), 0 if it has to go through `lock`. */
static inline int wt_olock_enter_biased(wt_olock_t *l)
{
#if WT_OLOCK_BIAS
    if (__atomic_load_n(&l->owner, __ATOMIC_RELAXED) != wt_olock_token())
        return 0;
    if (__atomic_load_n(&l->owner_in, __ATOMIC_RELAXED))
        return -1;
    if (!__atomic_load_n(&l->biased, __ATOMIC_RELAXED))
        return 0;
    __atomic_store_n(&l->owner_in, 1, __ATOMIC_RELAXED);
    /* No fence: a revoker's membarrier orders the store above before the load below (wt_olock.h).
     * The acquire keeps the compiler from hoisting the critical section above the look. */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (WU_LIKELY(__atomic_load_n(&l->biased, __ATOMIC_ACQUIRE))) {
        __atomic_store_n(&l->nbiased, __atomic_load_n(&l->nbiased, __ATOMIC_RELAXED) + 1,
                         __ATOMIC_RELAXED);
        return 1;
    }
    __atomic_store_n(&l->owner_in, 0, __ATOMIC_RELEASE);
#else
    (void)l;
#endif
    return 0;
}

/* `lock` was just taken, by a thread that is not in by bias: count the streak. */
static inline void wt_olock_count(wt_olock_t *l)
{
#if WT_OLOCK_BIAS
    uintptr_t self = wt_olock_token();
    if (l->last != self) {
        l->last = self;
        l->streak = 1;
    } else if (++l->streak >= (uint32_t)WT_OLOCK_STREAK << l->backoff) {
        l->streak = 0;   /* (>=: a backoff that shrank since must not make the streak unreachable) */
        l->rebias = 1;
    }
#else
    (void)l;
#endif
}

static inline void wt_olock_lock_always(wt_olock_t *l) WT_ACQUIRE(*l) WT_NO_THREAD_SAFETY_ANALYSIS
{
    if (wt_olock_enter_biased(l) > 0)
        return;
    wt_be_spin_lock(&l->lock);
    if (WU_UNLIKELY(__atomic_load_n(&l->biased, __ATOMIC_RELAXED)))
        wt_olock_revoke(l, true);
    wt_olock_count(l);
}

/* true if the lock was taken. While the lock is biased, a trylock that sees the owner inside fails
 * at once, with no system call (a poller may retry in a loop); one that does not revokes, and
 * fails if the owner entered meanwhile (the bias is left on). */
static inline bool wt_olock_trylock_always(wt_olock_t *l) WT_TRY_ACQUIRE(true, *l)
    WT_NO_THREAD_SAFETY_ANALYSIS
{
    int e = wt_olock_enter_biased(l);
    if (e)
        return e > 0;
    if (!wt_be_spin_trylock(&l->lock))
        return false;
    if (WU_UNLIKELY(__atomic_load_n(&l->biased, __ATOMIC_RELAXED)) &&
        (__atomic_load_n(&l->owner_in, __ATOMIC_RELAXED) || !wt_olock_revoke(l, false))) {
        wt_be_spin_unlock(&l->lock);
        return false;
    }
    wt_olock_count(l);
    return true;
}

static inline void wt_olock_unlock_always(wt_olock_t *l) WT_RELEASE(*l) WT_NO_THREAD_SAFETY_ANALYSIS
{
#if WT_OLOCK_BIAS
    /* owner_in is 1 only while its owner enters or holds by bias; a holder of `lock` never has it set
     * by itself, and another thread's holder must not read the owner's transient 1 as its own. */
    if (__atomic_load_n(&l->owner_in, __ATOMIC_RELAXED) &&
        __atomic_load_n(&l->owner, __ATOMIC_RELAXED) == wt_olock_token()) {
        __atomic_store_n(&l->owner_in, 0, __ATOMIC_RELEASE);
        return;
    }
    if (WU_UNLIKELY(l->rebias)) {
        l->rebias = 0;
        wt_olock_streak_end(l);   /* biased = 1 now, as `lock` is released below */
    }
#endif
    wt_be_spin_unlock(&l->lock);
}

static inline void wt_olock_lock(wt_olock_t *l) WT_ACQUIRE(*l) WT_NO_THREAD_SAFETY_ANALYSIS
{
    if (wt_thread_is_multi())
        wt_olock_lock_always(l);
}

/* true if the lock was taken; always true while the gate is off */
static inline bool wt_olock_trylock(wt_olock_t *l) WT_TRY_ACQUIRE(true, *l) WT_NO_THREAD_SAFETY_ANALYSIS
{
    return !wt_thread_is_multi() || wt_olock_trylock_always(l);
}

static inline void wt_olock_unlock(wt_olock_t *l) WT_RELEASE(*l) WT_NO_THREAD_SAFETY_ANALYSIS
{
    if (wt_thread_is_multi())
        wt_olock_unlock_always(l);
}

#endif
