/* The threading layer: one API over the backend chosen at build time (CMake WEFT_THREADS, pthreads
 * by default), after Open MPI's threads framework (../shared/seeds/openmpi-flexible-threading.txt).
 * Hot-path operations (mutex and spinlock lock/unlock, thread-local data, the wait object's fast
 * path) are static inline in wt_thread_inl.h, calling the backend directly; management calls
 * (create, join, init/destroy, blocking) are ordinary functions in wt_thread_<backend>.c.
 *
 * The run-time gate: wt_thread_multi is false until MPI_Init_thread provides MPI_THREAD_MULTIPLE;
 * while it is false, wt_mutex_lock/unlock and wt_spin_lock/unlock are a predictable branch and
 * nothing else (one thread at a time is in the library), so single-threaded runs pay no atomics.
 * Code that must synchronize even below MULTIPLE (e.g. with Weft's own progress threads) uses the
 * *_always variants.
 *
 * Concurrency contract: every function may be called by any thread; wt_thread_set_multi is called
 * once, by MPI_Init_thread, before any other thread calls into the library.
 */
#ifndef WT_THREAD_H
#define WT_THREAD_H

#include <stdbool.h>
#include <stdint.h>
#include "util/wu_status.h"

/* Backend types: wt_mutex_t, wt_spinlock_t, wt_cond_t, wt_thread_t, wt_tls_key_t. */
#include "thread/wt_thread_backend.h"

extern bool wt_thread_multi;
void wt_thread_set_multi(bool on);

/* mutexes: wt_mutex_lock/trylock/unlock are inline (gated) */
wu_status_t wt_mutex_init(wt_mutex_t *m);
void wt_mutex_destroy(wt_mutex_t *m);

/* spinlocks: wt_spin_lock/trylock/unlock are inline (gated); trylock is used as a mask by pollers */
void wt_spin_init(wt_spinlock_t *s);

/* condition variables (management path: may block) */
wu_status_t wt_cond_init(wt_cond_t *c);
void wt_cond_destroy(wt_cond_t *c);
void wt_cond_wait(wt_cond_t *c, wt_mutex_t *m);   /* m locked with wt_mutex_lock_always */
void wt_cond_signal(wt_cond_t *c);
void wt_cond_broadcast(wt_cond_t *c);

/* threads */
typedef void *(*wt_thread_fn_t)(void *arg);
wu_status_t wt_thread_create(wt_thread_t *t, wt_thread_fn_t fn, void *arg);
wu_status_t wt_thread_join(wt_thread_t t);
wt_thread_t wt_thread_self(void);
bool wt_thread_equal(wt_thread_t a, wt_thread_t b);
void wt_thread_yield(void);

/* thread-specific data with a destructor (for pools that must be returned at thread exit);
 * plain per-thread variables use WT_TLS (compiler TLS), inline-fast */
#define WT_TLS __thread
wu_status_t wt_tls_key_create(wt_tls_key_t *k, void (*destructor)(void *));
void wt_tls_key_delete(wt_tls_key_t k);

/* The wait object: one thread blocks on it, another wakes it (futex on Linux).
 *   waiter:  wt_wait_prepare(w); if (!condition) wt_wait_block(w, timeout_ns); ...
 *   waker:   make condition true (release); wt_wait_wake(w);
 * wt_wait_wake before wt_wait_block makes the block return at once (no lost wake-up): the object
 * holds one pending wake-up. timeout_ns 0 means no timeout. Blocking returns WU_OK on a wake-up,
 * WU_ERR_TIMEOUT on timeout (spurious returns are allowed: callers re-check their condition). */
typedef struct wt_wait {
    _Alignas(64) uint32_t state;   /* 0 idle, 1 armed (waiter may sleep), 2 woken */
} wt_wait_t;

void wt_wait_init(wt_wait_t *w);
wu_status_t wt_wait_block(wt_wait_t *w, uint64_t timeout_ns);   /* slow path: syscall */
void wt_wait_wake_slow(wt_wait_t *w);

#include "thread/wt_thread_inl.h"

#endif
