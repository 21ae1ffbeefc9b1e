/* The run-time-selected threading backend (cmake -DWEFT_THREADS=runtime): pthreads and GNU Pth both
 * linked in, one chosen at start-up by the environment variable WEFT_THREADS (pthreads, the
 * default, or pth; wt_thread_runtime.c). The seed's "what's next": the hot path is no longer inline
 * in the caller but one indirect call through wt_hot, the table of the chosen backend, which is
 * what this build exists to measure (bench/run_threadops.sh). The default build keeps the inline
 * path (WEFT_THREADS=pthreads).
 *
 * The types hold either backend's object (an anonymous union: pm/pc are pthreads', xm/xc Pth's);
 * the static initializers are pthreads' (all zeros), and the Pth side makes its object on first use.
 * Included through wt_thread_backend.h only. */
#ifndef WT_THREAD_RUNTIME_H
#define WT_THREAD_RUNTIME_H

#include <pthread.h>
#include <pth.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "thread/wt_thread_annot.h"
#include "util/wu_compiler.h"

typedef struct WT_CAPABILITY("mutex") wt_mutex {
    union {
        pthread_mutex_t pm;
        pth_mutex_t xm;
    };
} wt_mutex_t;
#define WT_MUTEX_INITIALIZER { { PTHREAD_MUTEX_INITIALIZER } }

typedef struct WT_CAPABILITY("spinlock") wt_spinlock {
    int locked;   /* 0 free, 1 held; accessed with __atomic builtins only */
} wt_spinlock_t;
#define WT_SPIN_INITIALIZER { 0 }

typedef struct wt_cond {
    union {
        pthread_cond_t pc;
        pth_cond_t xc;
    };
} wt_cond_t;
#define WT_COND_INITIALIZER { { PTHREAD_COND_INITIALIZER } }

typedef uintptr_t wt_thread_t;       /* a pthread_t or a pth_t */
typedef unsigned int wt_tls_key_t;   /* a pthread_key_t or a pth_key_t */

#define WT_BACKEND_WAIT_FIELDS pth_cond_t be_cond;   /* used by Pth only */

/* The chosen backend's hot path and facts; written once by wt_thread_runtime.c's constructor,
 * before main and before any other thread, read-only afterwards. */
typedef struct wt_hot_ops {
    void (*mutex_lock)(wt_mutex_t *m);
    bool (*mutex_trylock)(wt_mutex_t *m);
    void (*mutex_unlock)(wt_mutex_t *m);
    void (*spin_lock_slow)(wt_spinlock_t *s);
    void *(*tls_get)(wt_tls_key_t k);
    bool (*tls_set)(wt_tls_key_t k, void *v);
    bool ult;
    const char *name;
    const char *wait;
} wt_hot_ops_t;
extern wt_hot_ops_t wt_hot;

#define WT_BACKEND_NAME (wt_hot.name)
#define WT_BACKEND_WAIT (wt_hot.wait)
#define WT_BACKEND_ULT (wt_hot.ult)

/* WT_LOCAL: the __thread object under pthreads, a Pth key's block under Pth (as wt_thread_pth.h). */
typedef struct wt_local {
    int key;        /* pth_key_t + 1; 0 until made */
    size_t size;
} wt_local_t;
void *wt_local_slow(wt_local_t *l);   /* wt_thread_pth.c */
#define WT_LOCAL(storage, type, name)                                                             \
    storage __thread type name;                                                                    \
    storage wt_local_t name##_ult = { 0, sizeof(type) }
#define WT_LOCAL_DECLARE(type, name)                                                              \
    extern __thread type name;                                                                     \
    extern wt_local_t name##_ult
#define WT_LOCAL_PTR(type, name)                                                                  \
    (WU_UNLIKELY(wt_hot.ult) ? (type *)wt_local_get(&name##_ult) : &(name))

static inline void *wt_local_get(wt_local_t *l)
{
    void *p;
    if (WU_LIKELY(l->key != 0) && WU_LIKELY((p = pth_key_getdata((pth_key_t)(l->key - 1))) != NULL))
        return p;
    return wt_local_slow(l);
}

static inline void wt_be_mutex_lock(wt_mutex_t *m) { wt_hot.mutex_lock(m); }
static inline bool wt_be_mutex_trylock(wt_mutex_t *m) { return wt_hot.mutex_trylock(m); }
static inline void wt_be_mutex_unlock(wt_mutex_t *m) { wt_hot.mutex_unlock(m); }

/* The spinlock's fast path is the same word under both backends: inline; only the slow path
 * differs (sched_yield or pth_yield). */
static inline void wt_be_spin_lock(wt_spinlock_t *s)
{
    if (WU_LIKELY(!__atomic_exchange_n(&s->locked, 1, __ATOMIC_ACQUIRE)))
        return;
    wt_hot.spin_lock_slow(s);
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

static inline void *wt_be_tls_get(wt_tls_key_t k) { return wt_hot.tls_get(k); }
static inline bool wt_be_tls_set(wt_tls_key_t k, void *v) { return wt_hot.tls_set(k, v); }

#endif
