/* pthreads backend of the threading layer: management calls and slow paths (the hot path is in
 * wt_thread_inl.h and wt_thread_pthreads.h). The wait object sleeps on a Linux futex. */
#include "thread/wt_thread.h"
#include "util/wu_log.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if !defined(__linux__)
#error "the pthreads backend's wait object uses futex(2): Linux only"
#endif
#include <linux/futex.h>
#include <sys/syscall.h>

/* In the run-time-selected build (wt_thread_runtime.c) this file is compiled with
 * WT_RENAME=pthreads: its functions get a prefix, and the gate belongs to wt_thread_runtime.c. */
#ifndef WT_RENAME
bool wt_thread_multi;

void wt_thread_set_multi(bool on)
{
    __atomic_store_n(&wt_thread_multi, on, __ATOMIC_RELAXED);
}
#endif

static wu_status_t wt_errno_status(int err)
{
    switch (err) {
    case 0:      return WU_OK;
    case EAGAIN: return WU_ERR_AGAIN;
    case ENOMEM: return WU_ERR_NO_MEMORY;
    case EINVAL: return WU_ERR_INVALID;
    default:     return WU_ERR_IO;
    }
}

/* ---- mutexes, spinlocks, condition variables ------------------------------------------------ */

wu_status_t wt_mutex_init(wt_mutex_t *m)
{
    int err = pthread_mutex_init(&m->pm, NULL);
    if (err) {
        wu_log_error("pthread_mutex_init: %s", strerror(err));
        return wt_errno_status(err);
    }
    return WU_OK;
}

void wt_mutex_destroy(wt_mutex_t *m)
{
    pthread_mutex_destroy(&m->pm);
}

void wt_spin_init(wt_spinlock_t *s)
{
    __atomic_store_n(&s->locked, 0, __ATOMIC_RELAXED);
}

/* Pauses between two yields of a waiting thread: ~64 x 40-140 cycles, a few microseconds, longer
 * than any critical section a spinlock should guard; past that the holder has likely been
 * descheduled (more threads than cores) and spinning on would only delay it. */
#define WT_SPIN_PAUSES_BEFORE_YIELD 64

WU_NOINLINE void wt_spin_lock_slow(wt_spinlock_t *s)
{
    unsigned pauses = 0;
    for (;;) {
        while (__atomic_load_n(&s->locked, __ATOMIC_RELAXED)) {
            if (++pauses < WT_SPIN_PAUSES_BEFORE_YIELD) {
                wu_cpu_relax();
            } else {
                pauses = 0;
                sched_yield();
            }
        }
        if (!__atomic_exchange_n(&s->locked, 1, __ATOMIC_ACQUIRE))
            return;
    }
}

wu_status_t wt_cond_init(wt_cond_t *c)
{
    int err = pthread_cond_init(&c->pc, NULL);
    if (err) {
        wu_log_error("pthread_cond_init: %s", strerror(err));
        return wt_errno_status(err);
    }
    return WU_OK;
}

void wt_cond_destroy(wt_cond_t *c)
{
    pthread_cond_destroy(&c->pc);
}

void wt_cond_wait(wt_cond_t *c, wt_mutex_t *m)
{
    pthread_cond_wait(&c->pc, &m->pm);
}

void wt_cond_signal(wt_cond_t *c)
{
    pthread_cond_signal(&c->pc);
}

void wt_cond_broadcast(wt_cond_t *c)
{
    pthread_cond_broadcast(&c->pc);
}

/* ---- threads and thread-specific data ------------------------------------------------------- */

wu_status_t wt_thread_create(wt_thread_t *t, wt_thread_fn_t fn, void *arg)
{
    pthread_t tid;
    int err = pthread_create(&tid, NULL, fn, arg);
    if (err) {
        wu_log_error("pthread_create: %s", strerror(err));
        return wt_errno_status(err);
    }
    *t = tid;
    return WU_OK;
}

wu_status_t wt_thread_join(wt_thread_t t)
{
    int err = pthread_join(t, NULL);
    if (err) {
        wu_log_error("pthread_join: %s", strerror(err));
        return wt_errno_status(err);
    }
    return WU_OK;
}

wt_thread_t wt_thread_self(void)
{
    return pthread_self();
}

bool wt_thread_equal(wt_thread_t a, wt_thread_t b)
{
    return pthread_equal(a, b) != 0;
}

void wt_thread_yield(void)
{
    sched_yield();
}

wu_status_t wt_tls_key_create(wt_tls_key_t *k, void (*destructor)(void *))
{
    pthread_key_t key;
    int err = pthread_key_create(&key, destructor);
    if (err) {
        wu_log_error("pthread_key_create: %s", strerror(err));
        return wt_errno_status(err);
    }
    *k = key;
    return WU_OK;
}

void wt_tls_key_delete(wt_tls_key_t k)
{
    pthread_key_delete(k);
}

/* ---- the wait object ------------------------------------------------------------------------
 *
 * Transitions of w->state (one owner thread O, any number of wakers W):
 *
 *   from          event                         to        by
 *   IDLE          wt_wait_prepare               ARMED     O  (CAS; from any other state: no change)
 *   IDLE, ARMED   wt_wait_block                 SLEEPING  O  (CAS), then futex_wait(SLEEPING)
 *   any           wt_wait_wake                  WOKEN     W  (exchange); futex_wake if it was SLEEPING
 *   WOKEN         wt_wait_block finds it        IDLE      O  returns WU_OK
 *   SLEEPING      futex returns, state SLEEPING SLEEPING  O  sleeps again (spurious or signal)
 *   SLEEPING      deadline passed               IDLE      O  (CAS) returns WU_ERR_TIMEOUT; if the CAS
 *                                                            fails the state is WOKEN: take it, WU_OK
 *
 * Only the owner leaves WOKEN and SLEEPING; wakers only ever write WOKEN. Why no wake-up is lost:
 * the owner sleeps only inside futex_wait(&state, SLEEPING), which the kernel enters only if the
 * word still holds SLEEPING, atomically with respect to futex_wake on the same word. A waker whose
 * exchange comes before the owner's CAS to SLEEPING leaves WOKEN, which makes that CAS fail and the
 * block return; a waker whose exchange comes after it reads SLEEPING (the owner cannot have left it
 * without seeing WOKEN) and calls futex_wake; of several such wakers only the first reads SLEEPING
 * and enters the kernel. Why the condition is visible: the wake's exchange is a release, and the
 * owner reads WOKEN with an acquire before it returns.
 *
 * A waker that read SLEEPING may call futex_wake after the owner has already returned (it saw
 * WOKEN without sleeping) and blocked again: that wake is spurious and the owner, still finding
 * SLEEPING, sleeps again. */

static long wt_futex(uint32_t *addr, int op, uint32_t val, const struct timespec *rel)
{
    return syscall(SYS_futex, addr, op, val, rel, NULL, 0);
}

void wt_wait_init(wt_wait_t *w)
{
    __atomic_store_n(&w->state, WT_WAIT_IDLE, __ATOMIC_RELAXED);
}

void wt_wait_destroy(wt_wait_t *w)
{
}

static wu_status_t wt_wait_take(wt_wait_t *w)
{
    __atomic_exchange_n(&w->state, WT_WAIT_IDLE, __ATOMIC_ACQUIRE);
    return WU_OK;
}

/* Remaining time to deadline into *rel; false when it has passed. */
static bool wt_time_left(const struct timespec *deadline, struct timespec *rel)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t ns = (int64_t)(deadline->tv_sec - now.tv_sec) * 1000000000 +
                 (deadline->tv_nsec - now.tv_nsec);
    if (ns <= 0)
        return false;
    rel->tv_sec = (time_t)(ns / 1000000000);
    rel->tv_nsec = (long)(ns % 1000000000);
    return true;
}

WU_NOINLINE wu_status_t wt_wait_block(wt_wait_t *w, uint64_t timeout_ns)
{
    struct timespec deadline, rel;
    if (timeout_ns) {
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        uint64_t ns = (uint64_t)deadline.tv_nsec + timeout_ns % 1000000000;
        deadline.tv_sec += (time_t)(timeout_ns / 1000000000 + ns / 1000000000);
        deadline.tv_nsec = (long)(ns % 1000000000);
    }

    uint32_t s = __atomic_load_n(&w->state, __ATOMIC_ACQUIRE);
    while (s != WT_WAIT_SLEEPING) {
        if (s == WT_WAIT_WOKEN)
            return wt_wait_take(w);
        /* IDLE or ARMED; a failed CAS reloads s (then WOKEN) */
        __atomic_compare_exchange_n(&w->state, &s, WT_WAIT_SLEEPING, false, __ATOMIC_ACQUIRE,
                                    __ATOMIC_ACQUIRE);
    }

    for (;;) {
        const struct timespec *relp = NULL;
        if (timeout_ns) {
            if (!wt_time_left(&deadline, &rel))
                break;
            relp = &rel;
        }
        if (wt_futex(&w->state, FUTEX_WAIT_PRIVATE, WT_WAIT_SLEEPING, relp) != 0 &&
            errno != EAGAIN && errno != EINTR && errno != ETIMEDOUT)
            wu_log_fatal("futex(FUTEX_WAIT_PRIVATE) on wait object %p: %s", (void *)w, strerror(errno));
        if (__atomic_load_n(&w->state, __ATOMIC_ACQUIRE) == WT_WAIT_WOKEN)
            return wt_wait_take(w);
    }

    s = WT_WAIT_SLEEPING;
    if (__atomic_compare_exchange_n(&w->state, &s, WT_WAIT_IDLE, false, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
        return WU_ERR_TIMEOUT;
    return wt_wait_take(w);   /* a wake-up came with the deadline */
}

WU_NOINLINE void wt_wait_wake_slow(wt_wait_t *w)
{
    if (wt_futex(&w->state, FUTEX_WAKE_PRIVATE, 1, NULL) < 0)
        wu_log_fatal("futex(FUTEX_WAKE_PRIVATE) on wait object %p: %s", (void *)w, strerror(errno));
}

/* ---- waiting on a word ----------------------------------------------------------------------- */

void wt_word_wait(uint32_t *word, uint32_t val, uint64_t rel_ns)
{
    struct timespec ts = { (time_t)(rel_ns / 1000000000u), (long)(rel_ns % 1000000000u) };
    wt_futex(word, FUTEX_WAIT_PRIVATE, val, rel_ns ? &ts : NULL);
}

void wt_word_wait_until(uint32_t *word, uint32_t val, uint64_t abs_ns)
{
    /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline */
    struct timespec abs = { (time_t)(abs_ns / 1000000000u), (long)(abs_ns % 1000000000u) };
    syscall(SYS_futex, word, FUTEX_WAIT_BITSET_PRIVATE, val, &abs, NULL, FUTEX_BITSET_MATCH_ANY);
}

void wt_word_wake_all(uint32_t *word)
{
    wt_futex(word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}
