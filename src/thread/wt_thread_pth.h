/* GNU Pth backend: types and inline primitives. Included through wt_thread_backend.h only; callers
 * use the gated wt_* calls of wt_thread_inl.h, never the wt_be_* primitives below.
 *
 * Pth runs M:1: every thread of the process is a user-level thread on the one OS thread, switched
 * only when it waits on a Pth object or yields (no preemption). So nothing in the library may
 * block the OS thread (a futex wait or a sleeping system call would stop every thread of the rank,
 * including the one that would wake it): mutexes and conditions are Pth's, spinning waits yield to
 * Pth's scheduler, and the wait object sleeps on a Pth condition (wt_thread_pth.c). The whole
 * process must be Pth threads: a kernel thread calling into the library would race with Pth's
 * scheduler, which is not thread-safe. docs/threads.md ("The Pth backend") tells the design. */
#ifndef WT_THREAD_PTH_H
#define WT_THREAD_PTH_H

#include <pth.h>
#include <pthread.h>   /* not for threads: parts of the library include it through this header */
#include <stdbool.h>
#include <stddef.h>
#include "thread/wt_thread_annot.h"
#include "util/wu_compiler.h"

#define WT_BACKEND_NAME "pth"
#define WT_BACKEND_WAIT "Pth condition variable (M:1 user-level threads)"
/* User-level threads: OS-thread calls (CPU binding, scheduling class, thread names, kernel waits)
 * would act on every thread of the process at once. */
#define WT_BACKEND_ULT 1

typedef struct WT_CAPABILITY("mutex") wt_mutex {
    pth_mutex_t xm;   /* recursive for its holder, as every Pth mutex */
} wt_mutex_t;
#define WT_MUTEX_INITIALIZER { PTH_MUTEX_INIT }

/* The same test-and-test-and-set word as the pthreads backend: with no preemption a holder only
 * loses the CPU if it waits or yields inside its critical section, so contention is rare, and a
 * waiter must then yield to Pth's scheduler (wt_spin_lock_slow), never spin: the holder runs on
 * this very OS thread. */
typedef struct WT_CAPABILITY("spinlock") wt_spinlock {
    int locked;   /* 0 free, 1 held; accessed with __atomic builtins only */
} wt_spinlock_t;
#define WT_SPIN_INITIALIZER { 0 }

typedef struct wt_cond {
    pth_cond_t xc;
} wt_cond_t;
#define WT_COND_INITIALIZER { PTH_COND_INIT }

typedef pth_t wt_thread_t;
typedef pth_key_t wt_tls_key_t;

/* The wait object's owner sleeps on a Pth condition (wt_thread_pth.c). */
#define WT_BACKEND_WAIT_FIELDS pth_cond_t be_cond;

/* Per-thread objects whose identity matters (WT_LOCAL, wt_thread.h): a Pth key per object, made on
 * first use, holding a zeroed block of `size` bytes per thread, freed at the thread's exit. */
typedef struct wt_local {
    int key;        /* pth_key_t + 1; 0 until made (first use, no yield between test and set) */
    size_t size;
} wt_local_t;
void *wt_local_slow(wt_local_t *l);   /* wt_thread_pth.c */
#define WT_LOCAL(storage, type, name) storage wt_local_t name = { 0, sizeof(type) }
#define WT_LOCAL_DECLARE(type, name) extern wt_local_t name
#define WT_LOCAL_PTR(type, name) ((type *)wt_local_get(&(name)))

static inline void *wt_local_get(wt_local_t *l)
{
    void *p;
    if (WU_LIKELY(l->key != 0) && WU_LIKELY((p = pth_key_getdata((pth_key_t)(l->key - 1))) != NULL))
        return p;
    return wt_local_slow(l);
}

void wt_spin_lock_slow(wt_spinlock_t *s);   /* wt_thread_pth.c, noinline */

static inline void wt_be_mutex_lock(wt_mutex_t *m) { pth_mutex_acquire(&m->xm, FALSE, NULL); }
/* A Pth mutex is recursive: its holder's trylock would succeed. Fail it as pthreads' default mutex
 * does, so that code written against either backend sees the same answer. */
static inline bool wt_be_mutex_trylock(wt_mutex_t *m)
{
    if ((m->xm.mx_state & PTH_MUTEX_LOCKED) && m->xm.mx_owner == pth_self())
        return false;
    return pth_mutex_acquire(&m->xm, TRUE, NULL) != FALSE;
}
static inline void wt_be_mutex_unlock(wt_mutex_t *m) { pth_mutex_release(&m->xm); }

static inline void wt_be_spin_lock(wt_spinlock_t *s)
{
    if (WU_LIKELY(!__atomic_exchange_n(&s->locked, 1, __ATOMIC_ACQUIRE)))
        return;
    wt_spin_lock_slow(s);
}

static inline bool wt_be_spin_trylock(wt_spinlock_t *s)
{
    return !__atomic_load_n(&s->locked, __ATOMIC_RELAXED) &&
           !__atomic_exchange_n(&s->locked, 1, __ATOMIC_ACQUIRE);
}

static inline void wt_be_spin_unlock(wt_spinlock_t *s)
{
    __atomic_store_n(&s->locked, 0, __ATOMIC_RELEASE);
}

static inline void *wt_be_tls_get(wt_tls_key_t k) { return pth_key_getdata(k); }
static inline bool wt_be_tls_set(wt_tls_key_t k, void *v) { return pth_key_setdata(k, v) != FALSE; }

#endif
