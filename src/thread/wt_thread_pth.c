/* GNU Pth backend of the threading layer: management calls and slow paths (the hot path is in
 * wt_thread_inl.h and wt_thread_pth.h).
 *
 * Pth is M:1 and cooperative: one OS thread runs every thread of the process, and switches only in
 * a Pth call that waits (mutex, condition, event, sleep) or yields. Consequences used below:
 * - between two such calls a thread runs alone, so "check a word, then start waiting" needs no
 *   lock against wakers: they run on the same OS thread, before or after, never in between;
 * - a wait must go through Pth (pth_cond_await with a time event), never the kernel: a futex wait
 *   or nanosleep would stop the thread that is to wake us;
 * - a spinning waiter must pth_yield: the holder of what it waits for cannot run otherwise.
 * Pth is not thread-safe: a kernel thread other than the one Pth runs on must not call the library
 * (docs/threads.md, "The Pth backend").
 *
 * Concurrency contract of the file's globals: wt_pth_lock and wt_word_conds are set up by the
 * constructor before main (pth_init, which the library needs before any other Pth call) and then
 * used by Pth threads only, which never run at once. */
#include "thread/wt_thread.h"
#include "util/wu_log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* In the run-time-selected build (wt_thread_runtime.c) this file is compiled with WT_RENAME=pth:
 * its functions get a prefix, and the gate and the start-up belong to wt_thread_runtime.c. */
#ifndef WT_RENAME
bool wt_thread_multi;

void wt_thread_set_multi(bool on)
{
    __atomic_store_n(&wt_thread_multi, on, __ATOMIC_RELAXED);
}
#endif

/* The mutex that pth_cond_await needs; never contended: it is only held between a state check
 * and the await that releases it, with no switch in between. */
static pth_mutex_t wt_pth_lock = PTH_MUTEX_INIT;

#define WT_WORD_BUCKETS 64
static pth_cond_t wt_word_conds[WT_WORD_BUCKETS];

/* Stack of a thread the library creates (engine threads): Pth's default of 64 KiB is less than
 * some library paths use (error strings, describe buffers); the pages are touched only if used. */
#define WT_PTH_STACK (1u << 20)

#ifdef WT_RENAME
void wt_pth_boot(void);   /* called by wt_thread_runtime.c when WEFT_THREADS=pth */
void wt_pth_boot(void)
#else
__attribute__((constructor)) static void wt_pth_boot(void)
#endif
{
    /* FALSE with EPERM: already initialized (the application did it first), which is fine */
    if (!pth_init() && errno != EPERM) {
        wu_log_fatal("pth_init: %s (threading backend pth)", strerror(errno));
    }
    for (int i = 0; i < WT_WORD_BUCKETS; i++)
        pth_cond_init(&wt_word_conds[i]);
}

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

/* A mutex or condition initialized statically by the run-time-selected build is all zeros (its
 * initializer is pthreads'): Pth's own is made on first use (no switch between test and init). */
static pth_mutex_t *wt_pth_mutex(wt_mutex_t *m)
{
    if (WU_UNLIKELY(!(m->xm.mx_state & PTH_MUTEX_INITIALIZED)))
        pth_mutex_init(&m->xm);
    return &m->xm;
}

static pth_cond_t *wt_pth_cond(wt_cond_t *c)
{
    if (WU_UNLIKELY(!(c->xc.cn_state & PTH_COND_INITIALIZED)))
        pth_cond_init(&c->xc);
    return &c->xc;
}

wu_status_t wt_mutex_init(wt_mutex_t *m)
{
    if (!pth_mutex_init(&m->xm)) {
        wu_log_error("pth_mutex_init: %s", strerror(errno));
        return wt_errno_status(errno);
    }
    return WU_OK;
}

void wt_mutex_destroy(wt_mutex_t *m)
{
    (void)m;   /* a Pth mutex holds no resource */
}

void wt_spin_init(wt_spinlock_t *s)
{
    __atomic_store_n(&s->locked, 0, __ATOMIC_RELAXED);
}

/* The holder lost the CPU inside its critical section (it waited or yielded there): it runs again
 * only if we give the OS thread back to the scheduler. */
WU_NOINLINE void wt_spin_lock_slow(wt_spinlock_t *s)
{
    for (;;) {
        while (__atomic_load_n(&s->locked, __ATOMIC_RELAXED))
            pth_yield(NULL);
        if (!__atomic_exchange_n(&s->locked, 1, __ATOMIC_ACQUIRE))
            return;
    }
}

wu_status_t wt_cond_init(wt_cond_t *c)
{
    if (!pth_cond_init(&c->xc)) {
        wu_log_error("pth_cond_init: %s", strerror(errno));
        return wt_errno_status(errno);
    }
    return WU_OK;
}

void wt_cond_destroy(wt_cond_t *c)
{
    (void)c;
}

void wt_cond_wait(wt_cond_t *c, wt_mutex_t *m)
{
    pth_cond_await(wt_pth_cond(c), wt_pth_mutex(m), NULL);
}

void wt_cond_signal(wt_cond_t *c)
{
    pth_cond_notify(wt_pth_cond(c), FALSE);
}

void wt_cond_broadcast(wt_cond_t *c)
{
    pth_cond_notify(wt_pth_cond(c), TRUE);
}

/* ---- threads and thread-specific data ------------------------------------------------------- */

wu_status_t wt_thread_create(wt_thread_t *t, wt_thread_fn_t fn, void *arg)
{
    pth_attr_t attr = pth_attr_new();
    if (!attr) {
        wu_log_error("pth_attr_new: %s", strerror(errno));
        return wt_errno_status(errno);
    }
    pth_attr_set(attr, PTH_ATTR_JOINABLE, TRUE);
    pth_attr_set(attr, PTH_ATTR_STACK_SIZE, WT_PTH_STACK);
    pth_t tid = pth_spawn(attr, fn, arg);
    int err = errno;
    pth_attr_destroy(attr);
    if (!tid) {
        wu_log_error("pth_spawn: %s", strerror(err));
        return wt_errno_status(err);
    }
    *t = (wt_thread_t)tid;
    return WU_OK;
}

wu_status_t wt_thread_join(wt_thread_t t)
{
    if (!pth_join((pth_t)t, NULL)) {
        wu_log_error("pth_join: %s", strerror(errno));
        return wt_errno_status(errno);
    }
    return WU_OK;
}

wt_thread_t wt_thread_self(void)
{
    return (wt_thread_t)pth_self();
}

bool wt_thread_equal(wt_thread_t a, wt_thread_t b)
{
    return a == b;
}

void wt_thread_yield(void)
{
    pth_yield(NULL);
}

wu_status_t wt_tls_key_create(wt_tls_key_t *k, void (*destructor)(void *))
{
    pth_key_t key;
    if (!pth_key_create(&key, destructor)) {
        wu_log_error("pth_key_create: %s", strerror(errno));
        return wt_errno_status(errno);
    }
    *k = (wt_tls_key_t)key;
    return WU_OK;
}

void wt_tls_key_delete(wt_tls_key_t k)
{
    pth_key_delete((pth_key_t)k);
}

/* WT_LOCAL's first use by a thread (or by anyone: the key is made then; no switch can come between
 * the test of l->key and its store, so two threads never both make it). */
void *wt_local_slow(wt_local_t *l)
{
    if (l->key == 0) {
        pth_key_t key;
        if (!pth_key_create(&key, free))
            wu_log_fatal("pth_key_create for a per-thread object: %s", strerror(errno));
        l->key = (int)key + 1;
    }
    pth_key_t key = (pth_key_t)(l->key - 1);
    void *p = pth_key_getdata(key);
    if (p)
        return p;
    if (!(p = calloc(1, l->size)) || !pth_key_setdata(key, p))
        wu_log_fatal("out of memory for a per-thread object of %zu bytes", l->size);
    return p;
}

/* ---- time ------------------------------------------------------------------------------------ */

static uint64_t wt_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A Pth time event rel_ns from now (Pth's clock is gettimeofday's, so deadlines are relative). */
static pth_event_t wt_pth_timeout(uint64_t rel_ns)
{
    uint64_t us = (rel_ns + 999) / 1000;
    pth_event_t ev = pth_event(PTH_EVENT_TIME, pth_timeout((long)(us / 1000000u), (long)(us % 1000000u)));
    if (!ev)
        wu_log_fatal("pth_event(PTH_EVENT_TIME): %s", strerror(errno));
    return ev;
}

/* ---- waiting on a word ----------------------------------------------------------------------- */

static pth_cond_t *wt_word_cond(const uint32_t *word)
{
    uintptr_t a = (uintptr_t)word;
    return &wt_word_conds[((a >> 2) ^ (a >> 8) ^ (a >> 14)) % WT_WORD_BUCKETS];
}

void wt_word_wait(uint32_t *word, uint32_t val, uint64_t rel_ns)
{
    pth_event_t ev = rel_ns ? wt_pth_timeout(rel_ns) : NULL;
    pth_mutex_acquire(&wt_pth_lock, FALSE, NULL);
    if (__atomic_load_n(word, __ATOMIC_ACQUIRE) == val)
        pth_cond_await(wt_word_cond(word), &wt_pth_lock, ev);
    pth_mutex_release(&wt_pth_lock);
    if (ev)
        pth_event_free(ev, PTH_FREE_THIS);
}

void wt_word_wait_until(uint32_t *word, uint32_t val, uint64_t abs_ns)
{
    uint64_t now = wt_mono_ns();
    if (abs_ns <= now)
        return;
    wt_word_wait(word, val, abs_ns - now);
}

void wt_word_wake_all(uint32_t *word)
{
    pth_cond_notify(wt_word_cond(word), TRUE);
}

/* ---- the wait object ------------------------------------------------------------------------
 *
 * The state machine of wt_thread.h, with the kernel's futex replaced by the owner's Pth condition:
 *
 *   IDLE, ARMED   wt_wait_block                 SLEEPING  O  (CAS), then pth_cond_await
 *   any           wt_wait_wake                  WOKEN     W  (exchange); pth_cond_notify if it was
 *                                                            SLEEPING
 *   SLEEPING      await returns, still SLEEPING SLEEPING  O  awaits again (another thread's notify)
 *   SLEEPING      time event occurred           IDLE      O  (CAS) WU_ERR_TIMEOUT, or WOKEN: take it
 *
 * No lost wake-up: the owner checks SLEEPING and enters pth_cond_await without a switch in between,
 * and a waker runs on the same OS thread, so it runs either before the check (the owner then sees
 * WOKEN) or while the owner is queued on the condition (its notify reaches it). */

void wt_wait_init(wt_wait_t *w)
{
    __atomic_store_n(&w->state, WT_WAIT_IDLE, __ATOMIC_RELAXED);
    pth_cond_init(&w->be_cond);
}

void wt_wait_destroy(wt_wait_t *w)
{
    (void)w;
}

static wu_status_t wt_wait_take(wt_wait_t *w)
{
    __atomic_exchange_n(&w->state, WT_WAIT_IDLE, __ATOMIC_ACQUIRE);
    return WU_OK;
}

WU_NOINLINE wu_status_t wt_wait_block(wt_wait_t *w, uint64_t timeout_ns)
{
    uint32_t s = __atomic_load_n(&w->state, __ATOMIC_ACQUIRE);
    while (s != WT_WAIT_SLEEPING) {
        if (s == WT_WAIT_WOKEN)
            return wt_wait_take(w);
        __atomic_compare_exchange_n(&w->state, &s, WT_WAIT_SLEEPING, false, __ATOMIC_ACQUIRE,
                                    __ATOMIC_ACQUIRE);
    }

    pth_event_t ev = timeout_ns ? wt_pth_timeout(timeout_ns) : NULL;
    bool timed_out = false;
    pth_mutex_acquire(&wt_pth_lock, FALSE, NULL);
    while (__atomic_load_n(&w->state, __ATOMIC_ACQUIRE) == WT_WAIT_SLEEPING) {
        pth_cond_await(&w->be_cond, &wt_pth_lock, ev);
        if (ev && pth_event_status(ev) == PTH_STATUS_OCCURRED) {
            timed_out = true;
            break;
        }
    }
    pth_mutex_release(&wt_pth_lock);
    if (ev)
        pth_event_free(ev, PTH_FREE_THIS);

    if (timed_out) {
        s = WT_WAIT_SLEEPING;
        if (__atomic_compare_exchange_n(&w->state, &s, WT_WAIT_IDLE, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return WU_ERR_TIMEOUT;
    }
    return wt_wait_take(w);   /* WOKEN */
}

WU_NOINLINE void wt_wait_wake_slow(wt_wait_t *w)
{
    pth_cond_notify(&w->be_cond, FALSE);
}
