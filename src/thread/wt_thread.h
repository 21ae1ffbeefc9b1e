/* The threading layer: one API over the backend chosen at build time (CMake WEFT_THREADS: pthreads
 * by default, or pth, GNU Pth's M:1 user-level threads), after Open MPI's threads framework (../shared/seeds/openmpi-flexible-threading.txt).
 * Hot-path operations (mutex and spinlock lock/unlock, thread-local data, the wait object's fast
 * path) are static inline in wt_thread_inl.h, calling the backend directly; management calls
 * (create, join, init/destroy, blocking) are ordinary functions in wt_thread_<backend>.c.
 *
 * The run-time gate: wt_thread_multi is false until MPI_Init_thread provides MPI_THREAD_MULTIPLE
 * (or starts progress threads); while it is false, wt_mutex_lock/unlock and wt_spin_lock/unlock are a predictable branch and
 * nothing else (one thread at a time is in the library), so single-threaded runs pay no atomics.
 * Code that must synchronize even below MULTIPLE (e.g. with Weft's own progress threads) uses the
 * *_always variants.
 *
 * Concurrency contract: every function may be called by any thread; wt_thread_set_multi is called
 * by MPI_Init_thread, before any other thread calls into the library, and again (to turn the gate
 * on) by the start of the engine's timer thread for a window across nodes (wp_engine_start_timer),
 * from the only thread in the library then, holding none of its locks: a lock taken while the gate
 * was off must not be released after it turned on, and vice versa.
 *
 * docs/threads.md describes the gate, the wait object's state machine and how to add a backend.
 */
#ifndef WT_THREAD_H
#define WT_THREAD_H

#include <stdbool.h>
#include <stdint.h>
#include "thread/wt_thread_annot.h"
#include "util/wu_status.h"

/* Backend types: wt_mutex_t, wt_spinlock_t, wt_cond_t, wt_thread_t, wt_tls_key_t. */
#include "thread/wt_thread_backend.h"

/* The gate (read with a relaxed atomic load by the inline calls; written by wt_thread_set_multi). */
extern bool wt_thread_multi;
void wt_thread_set_multi(bool on);

/* mutexes: wt_mutex_lock/trylock/unlock are inline (gated), wt_mutex_*_always are not gated;
 * WT_MUTEX_INITIALIZER initializes a static one. A mutex may sleep when contended. */
wu_status_t wt_mutex_init(wt_mutex_t *m);
void wt_mutex_destroy(wt_mutex_t *m);

/* spinlocks: wt_spin_lock/trylock/unlock are inline (gated), wt_spin_*_always are not gated;
 * trylock is used as a mask by pollers. For critical sections of a few hundred instructions at most;
 * a contended lock spins, then yields the core. WT_SPIN_INITIALIZER initializes a static one. */
void wt_spin_init(wt_spinlock_t *s);

/* condition variables (management path: may block) */
wu_status_t wt_cond_init(wt_cond_t *c);
void wt_cond_destroy(wt_cond_t *c);
void wt_cond_wait(wt_cond_t *c, wt_mutex_t *m) WT_REQUIRES(*m);   /* m locked with wt_mutex_lock_always */
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
 * plain per-thread variables use WT_TLS (compiler TLS), inline-fast.
 *
 * WT_TLS is per kernel thread. Under a user-level-thread backend (WT_BACKEND_ULT) the threads that
 * share a kernel thread share a WT_TLS variable: fine for caches and pools that no thread uses
 * across a wait or a yield (a free list popped and pushed in a few instructions), wrong for anything
 * that names the thread (a wait object, "this thread runs that queue"). Those use WT_LOCAL, which is
 * WT_TLS under pthreads and a per-ULT object under a ULT backend:
 *     WT_LOCAL(static, my_t, my_state);            (WT_LOCAL_DECLARE(my_t, my_state) in a header)
 *     my_t *me = WT_LOCAL_PTR(my_t, my_state);     this thread's object, zeroed at its first use
 * A ULT's object is freed at its exit; a kernel thread's is the TLS block. */
#define WT_TLS __thread
wu_status_t wt_tls_key_create(wt_tls_key_t *k, void (*destructor)(void *));
void wt_tls_key_delete(wt_tls_key_t k);
/* inline: static inline void *wt_tls_get(wt_tls_key_t k); wu_status_t wt_tls_set(k, v).
 * The destructor runs at the exit of each thread whose value is not NULL (not for the thread that
 * calls wt_tls_key_delete, nor for the main thread returning from main). */

/* The wait object: one thread blocks on it, any number of others wake it (futex on Linux).
 *   waiter:  wt_wait_prepare(w); if (!condition) wt_wait_block(w, timeout_ns); re-check condition
 *   waker:   make condition true (a release store or an RMW); wt_wait_wake(w);
 * wt_wait_wake before wt_wait_block makes the block return at once (no lost wake-up): the object
 * holds one pending wake-up (several wakes before a block count as one). timeout_ns 0 means no
 * timeout. Blocking returns WU_OK on a wake-up, WU_ERR_TIMEOUT on timeout (spurious returns are
 * allowed: callers re-check their condition). A wake-up returned by wt_wait_block, or taken by the
 * waiter, makes every write the waker did before wt_wait_wake visible to the waiter (acquire).
 *
 * Who calls what: wt_wait_prepare and wt_wait_block by the one thread that owns the object (never
 * two threads blocking at once); wt_wait_wake by any thread. The object must stay allocated until
 * no waker can still call wt_wait_wake on it (the waiter's return does not tell that: deregister
 * the object from where wakers find it first).
 *
 * The state word (wt_thread_pthreads.c has the transition table):
 *   IDLE     nobody is about to sleep and no wake-up is pending
 *   ARMED    the owner called wt_wait_prepare and will check its condition, then maybe block
 *   WOKEN    a wake-up is pending: the next wt_wait_block returns at once and consumes it
 *   SLEEPING the owner is in wt_wait_block, in or about to enter the kernel
 * wt_wait_wake is one atomic exchange to WOKEN; only if it replaced SLEEPING does the waker call
 * the kernel (wt_wait_wake_slow). */
enum { WT_WAIT_IDLE = 0, WT_WAIT_ARMED = 1, WT_WAIT_WOKEN = 2, WT_WAIT_SLEEPING = 3 };

typedef struct wt_wait {
    _Alignas(64) uint32_t state;   /* WT_WAIT_*; accessed with __atomic builtins only */
    WT_BACKEND_WAIT_FIELDS
} wt_wait_t;

/* Waiting on a 32-bit word (the futex protocol, process-private): wt_word_wait sleeps while
 * *word == val, at most rel_ns (0: no limit), wt_word_wait_until until the CLOCK_MONOTONIC deadline
 * abs_ns; both may return early (a wake-up, a signal, a spurious return): callers re-check.
 * wt_word_wake_all wakes every thread waiting on word; the waker changes *word first (release).
 * A futex under pthreads; under Pth a condition per hashed address (a wait there must yield to the
 * scheduler, not sleep in the kernel). Used by the progression engine's idle and timer threads. */
void wt_word_wait(uint32_t *word, uint32_t val, uint64_t rel_ns);
void wt_word_wait_until(uint32_t *word, uint32_t val, uint64_t abs_ns);
void wt_word_wake_all(uint32_t *word);

void wt_wait_init(wt_wait_t *w);
void wt_wait_destroy(wt_wait_t *w);
wu_status_t wt_wait_block(wt_wait_t *w, uint64_t timeout_ns);   /* slow path: syscall */
void wt_wait_wake_slow(wt_wait_t *w);
/* inline: wt_wait_prepare(w), wt_wait_wake(w) */

#include "thread/wt_thread_inl.h"

#endif
