/* pthreads backend: types and inline primitives. Included through wt_thread_backend.h only; callers
 * use the gated wt_* calls of wt_thread_inl.h, never the wt_be_* primitives below.
 *
 * Each type wraps the pthread object in a one-member struct so that it cannot be handed to a pthread
 * call by mistake (which would bypass the gate) and so that clang can treat it as a capability. */
#ifndef WT_THREAD_PTHREADS_H
#define WT_THREAD_PTHREADS_H

#include <pthread.h>
#include <stdbool.h>
#include "thread/wt_thread_annot.h"
#include "util/wu_compiler.h"

#define WT_BACKEND_NAME "pthreads"
#define WT_BACKEND_WAIT "futex"
/* Kernel threads: each thread of the library is an OS thread of its own. */
#define WT_BACKEND_ULT 0

typedef struct WT_CAPABILITY("mutex") wt_mutex {
    pthread_mutex_t pm;
} wt_mutex_t;
#define WT_MUTEX_INITIALIZER { PTHREAD_MUTEX_INITIALIZER }

/* The spinlock is our own test-and-test-and-set lock on an int, not pthread_spinlock_t. Both take
 * one atomic exchange to lock and one plain store to unlock when uncontended, but glibc's
 * pthread_spin_lock/unlock are out-of-line calls into libc.so (through the PLT), while this one is
 * inline: bench/locks counts 5 instructions for an inline lock+unlock pair (11 with the gate's two
 * tests) against 13 for pthread_spin_lock+unlock, and times 4.9 against 5.4 ns; the exchange
 * dominates both (docs/threads.md). Contended, it spins on a plain load (the line stays shared until
 * the holder releases it) with a pause, and yields the core after a while, which matters when
 * threads outnumber cores (wt_spin_lock_slow). */
typedef struct WT_CAPABILITY("spinlock") wt_spinlock {
    int locked;   /* 0 free, 1 held; accessed with __atomic builtins only */
} wt_spinlock_t;
#define WT_SPIN_INITIALIZER { 0 }

typedef struct wt_cond {
    pthread_cond_t pc;
} wt_cond_t;
#define WT_COND_INITIALIZER { PTHREAD_COND_INITIALIZER }

typedef pthread_t wt_thread_t;
typedef pthread_key_t wt_tls_key_t;

/* The futex-based wait object needs nothing beyond its state word. */
#define WT_BACKEND_WAIT_FIELDS

/* Per-thread objects whose identity matters (WT_LOCAL, wt_thread.h): compiler TLS, one per kernel
 * thread, as fast as WT_TLS. */
#define WT_LOCAL(storage, type, name) storage __thread type name
#define WT_LOCAL_DECLARE(type, name) extern __thread type name
#define WT_LOCAL_PTR(type, name) (&(name))

void wt_spin_lock_slow(wt_spinlock_t *s);   /* wt_thread_pthreads.c, noinline */

static inline void wt_be_mutex_lock(wt_mutex_t *m) { pthread_mutex_lock(&m->pm); }
static inline bool wt_be_mutex_trylock(wt_mutex_t *m) { return pthread_mutex_trylock(&m->pm) == 0; }
static inline void wt_be_mutex_unlock(wt_mutex_t *m) { pthread_mutex_unlock(&m->pm); }

static inline void wt_be_spin_lock(wt_spinlock_t *s)
{
    if (WU_LIKELY(!__atomic_exchange_n(&s->locked, 1, __ATOMIC_ACQUIRE)))
        return;
    wt_spin_lock_slow(s);
}

/* Test first: a poller that finds the lock held skips without taking the line exclusive. */
static inline bool wt_be_spin_trylock(wt_spinlock_t *s)
{
    return !__atomic_load_n(&s->locked, __ATOMIC_RELAXED) &&
           !__atomic_exchange_n(&s->locked, 1, __ATOMIC_ACQUIRE);
}

static inline void wt_be_spin_unlock(wt_spinlock_t *s)
{
    __atomic_store_n(&s->locked, 0, __ATOMIC_RELEASE);
}

static inline void *wt_be_tls_get(wt_tls_key_t k) { return pthread_getspecific(k); }
static inline bool wt_be_tls_set(wt_tls_key_t k, void *v) { return pthread_setspecific(k, v) == 0; }

#endif
