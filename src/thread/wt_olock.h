/* An owner-biased spinlock: a spinlock that one thread (its owner) takes and releases with plain
 * stores and no atomic read-modify-write, while it is the only thread using it.
 *
 * Why: an uncontended atomic exchange costs ~5 ns here and drains the store buffer; the message-rate
 * path takes three of them per message pair (the destination's send lock, the matching engine's lock
 * twice), about a quarter of a single thread's time at MPI_THREAD_MULTIPLE (docs/threads.md, "The
 * owner-biased lock"). Most of the time one application thread is the only one taking them; the
 * engine's timer and idle threads come by a few hundred times a second.
 *
 * How (an asymmetric Dekker lock, as in biased locking of the JVMs and user-space RCU):
 *   - `lock` is an ordinary spinlock. Every thread but a biased owner takes it.
 *   - While `biased` is 1, the owner enters by storing owner_in = 1 and reading `biased` again: no
 *     fence. It leaves by storing owner_in = 0 (release).
 *   - Another thread takes `lock`, and if `biased` is 1 revokes the bias: it stores biased = 0, runs
 *     membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), which makes every running thread of the process
 *     execute a full memory barrier (a thread not running has passed one in the scheduler), and then
 *     waits until owner_in is 0 (acquire). After the barrier, the owner either had its owner_in = 1
 *     visible (so the revoker waits for it to leave) or reads biased = 0 on its second look and goes
 *     to `lock` like everyone else.
 *   - The owner is the first thread that takes `lock` WT_OLOCK_STREAK times in a row; it never
 *     changes afterwards (its stores to owner_in must be the only ones). After a revocation it takes
 *     `lock` normally and biases the lock again once it has taken it WT_OLOCK_STREAK times in a row,
 *     as it releases `lock` (never while it holds `lock`: a nested trylock of its own, the engine's
 *     queue mask, must fail, and owner_in set shows it holds by bias).
 *     A lock used by several threads in turn stays an ordinary spinlock plus three plain stores.
 *   - A bias that a revocation ends before the owner entered by it WT_OLOCK_PAYOFF times cost more
 *     than it saved: the streak that biases the lock again doubles (backoff), up to 128 K
 *     acquisitions; a bias that paid resets it. Threads that take turns every few microseconds
 *     (8 threads per rank on 2 cores) thus revoke rarely.
 *   - Only in the pthreads backend on Linux, with the membarrier command registered (the first
 *     bias registers it; if the kernel lacks it, no lock is ever biased).
 *   A revocation costs a system call (~0.2 us if the owner is not running, ~9 us on this VM if it
 *   is: an inter-processor interrupt); the timer's few hundred a second cost well under 1% of a core.
 *
 * Concurrency contract: any thread of this process may lock, trylock and unlock (the holder
 * unlocks); not for memory shared between processes (membarrier orders this process's threads
 * only). The same lock gate as wt_spinlock_t: wt_olock_lock/trylock/unlock do nothing while
 * wt_thread_is_multi() is false; the *_always variants are not gated. owner_in is written by the
 * owner only; biased is set by the owner holding `lock`, cleared by a revoker holding `lock`, and
 * set back by a trylock's revoker that found the owner inside (before it releases `lock`);
 * owner, streak and last are written under `lock` (owner once, 0 to the owner's token).
 */
#ifndef WT_OLOCK_H
#define WT_OLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include "thread/wt_thread.h"
#include "util/wu_compiler.h"

#if defined(WEFT_THREADS_PTHREADS) && defined(__linux__)
#define WT_OLOCK_BIAS 1
#else
#define WT_OLOCK_BIAS 0
#endif

/* Acquisitions of `lock` in a row by one thread that make it the owner, or re-bias the lock to it. */
#define WT_OLOCK_STREAK 128
/* A revocation costs as much as a few thousand atomic exchanges: a bias revoked after fewer entries
 * than this did not pay, and the next streak needed to bias again doubles (up to
 * WT_OLOCK_STREAK << WT_OLOCK_BACKOFF_MAX); one that paid resets it. */
#define WT_OLOCK_PAYOFF      4096
#define WT_OLOCK_BACKOFF_MAX 10

typedef struct WT_CAPABILITY("olock") wt_olock {
    wt_spinlock_t lock;       /* everyone but a biased owner */
    uint8_t       owner_in;   /* __atomic; the owner only: 1 while it enters or holds by bias */
    uint8_t       biased;     /* __atomic: the owner may enter without `lock` */
    uint8_t       rebias;     /* lock: the holder completed a streak; looked at as it unlocks */
    uint8_t       backoff;    /* lock: a streak is WT_OLOCK_STREAK << backoff acquisitions */
    uint32_t      streak;     /* lock: acquisitions of `lock` in a row by `last` */
    uint32_t      nbiased;    /* __atomic; the owner only: entries by bias since it last biased */
    uintptr_t     owner;      /* __atomic, written once under lock: the owner's token, 0 none */
    uintptr_t     last;       /* lock: token of the last thread that took `lock` */
} wt_olock_t;
#define WT_OLOCK_INITIALIZER { WT_SPIN_INITIALIZER, 0, 0, 0, 0, 0, 0, 0, 0 }

void wt_olock_init(wt_olock_t *l);

/* wt_olock.c, called holding `lock` when `biased` is set (so the caller is not the owner): clear it,
 * make the owner's entry visible (membarrier), then wait until the owner is out (wait) or look once
 * (!wait). true if the owner is out: the caller holds the lock. */
bool wt_olock_revoke(wt_olock_t *l, bool wait);

/* How many biases were revoked in this process (weft-info and tests read it). */
uint64_t wt_olock_revocations(void);
/* Whether biasing is compiled in and the kernel's membarrier command could be registered (the
 * first bias tries; false before that). */
bool wt_olock_bias_active(void);

#include "thread/wt_olock_inl.h"

#endif
