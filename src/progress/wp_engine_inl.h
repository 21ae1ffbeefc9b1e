/* The engine's hot path, inline in every caller: the explicit polling point and the kick.
 * Included by wp_engine.h; the slow paths are in wp_engine.c (location refresh) and wp_threads.c
 * (waking idle threads). */
#ifndef WP_ENGINE_INL_H
#define WP_ENGINE_INL_H

#include <stdbool.h>
#include <stdint.h>
#include "progress/wp_queue.h"
#include "util/wu_compiler.h"
#include "thread/wt_thread.h"
#include "util/wu_counters.h"

#define WP_MAX_DEPTH 16            /* machine, package, L3, core, PU: 5 at most today */
#define WP_LOCATION_REFRESH 256    /* polls between two sched_getcpu() of a thread */

/* The engine. The first block is written by wp_engine_init/finalize only, when no poller runs
 * (contract of wp_engine.h), and read by everyone without synchronization. */
typedef struct wp_engine_state {
    bool explicit_poll;            /* false while the engine is down */
    bool up;
    unsigned gen;                  /* bumped at each init: invalidates the threads' cached location */
    wp_queue_t *queues;            /* one per topology node, in pre-order; [0] is the root */
    unsigned nqueues;
    const int *cpu_queue;          /* CPU number -> index of its most local queue */
    int ncpus;
    /* Idle threads' sleep (wp_threads.c): sleepers counts idle threads in (or entering) a deep
     * sleep on the futex word kick_seq; a kicker bumps kick_seq and wakes them. */
    WU_ALIGNED(WU_CACHELINE) uint32_t sleepers;   /* __atomic */
    WU_ALIGNED(WU_CACHELINE) uint32_t kick_seq;   /* __atomic, futex word */
    /* 1 while the timer thread is parked (wp_threads.c, wp_timer_park): written by the timer
     * thread only, read by wp_engine_wake_timer. Its own line: read at every submission. */
    WU_ALIGNED(WU_CACHELINE) uint32_t timer_parked;   /* __atomic */
} wp_engine_state_t;

extern wp_engine_state_t wp_engine_g;

/* Per-thread state: the cached location, the climbing counters, and the queue whose tasks this
 * thread runs now (innermost, for debugging and tests; removal uses wp_queue_t.runner). */
typedef struct wp_tls {
    unsigned gen;                  /* engine generation `local` belongs to */
    unsigned countdown;            /* polls left before the next sched_getcpu() */
    wp_queue_t *local;             /* the most local queue of the thread's last seen CPU */
    wp_queue_t *held;
    bool missed;                   /* an explicit poll skipped a queue with tasks that an idle
                                      thread held (wp_poll_missed_take reads and clears it) */
    bool idle_thread;              /* this is one of the engine's idle threads (wp_threads.c),
                                      which run only where a CPU has nothing else to do */
    uint16_t climb[WP_MAX_DEPTH];  /* per depth: polls since this thread last went up from it */
} wp_tls_t;

/* One per thread: WT_LOCAL, so that under a user-level-thread backend each ULT has its own (the
 * queue's `runner` names a thread by the address of its wp_tls_t). WP_TLS is this thread's. */
WT_LOCAL_DECLARE(wp_tls_t, wp_tls);
#define WP_TLS WT_LOCAL_PTR(wp_tls_t, wp_tls)

wp_queue_t *wp_tls_refresh(wp_tls_t *tls);   /* wp_engine.c */
void wp_engine_kick_slow(void);                /* wp_threads.c */
void wp_engine_wake_timer_slow(void);          /* wp_threads.c */

/* The cached location of the calling thread. */
static inline wp_queue_t *wp_tls_location(wp_tls_t *tls)
{
    if (WU_UNLIKELY(tls->gen != wp_engine_g.gen || --tls->countdown == 0))
        return wp_tls_refresh(tls);
    return tls->local;
}

/* Run q's tasks if it has any and nobody runs them now. The mark tells background pollers that an
 * explicit poller is around (they leave the queue to it); it is written only when it changes. */
static inline int wp_queue_poll_explicit(wp_tls_t *tls, wp_queue_t *q)
{
    if (!wp_queue_has_tasks(q))
        return 0;
    if (!__atomic_load_n(&q->explicit_seen, __ATOMIC_RELAXED))
        __atomic_store_n(&q->explicit_seen, 1, __ATOMIC_RELAXED);
    if (!wp_queue_trylock(q)) {
        if (__atomic_load_n(&q->idle_holds, __ATOMIC_RELAXED))
            tls->missed = true;
        return 0;
    }
    int did = wp_queue_run_locked(q);
    wp_queue_unlock(q);
    if (did)
        wu_count(WU_COUNT_LTASK_EXPLICIT, (uint64_t)did);
    return did;
}

/* Poll q, then climb: the parent of a node with n children is visited once every n polls that
 * reach that node (pioman's frequency divided by the siblings), so the root is reached by every
 * thread eventually while a machine of N cores touches it about once per N polls. */
static inline int wp_poll_branch(wp_tls_t *tls, wp_queue_t *q)
{
    int did = wp_queue_poll_explicit(tls, q);
    for (wp_queue_t *p; (p = q->parent); q = p) {
        if (p->nchildren > 1) {
            if (++tls->climb[p->depth] < p->nchildren)
                break;
            tls->climb[p->depth] = 0;
        }
        did += wp_queue_poll_explicit(tls, p);
    }
    return did;
}

static inline int wp_poll(void)
{
    if (WU_UNLIKELY(!wp_engine_g.explicit_poll))
        return 0;
    wp_tls_t *tls = WP_TLS;
    return wp_poll_branch(tls, wp_tls_location(tls));
}

/* Whether a wp_poll of this thread since the last call skipped a queue that had tasks because an
 * idle thread held it; clears the mark. A waiter about to sleep for long asks: the idle thread
 * (SCHED_IDLE, preempted by the waiter itself or starved by other work) may hold the packet the
 * waiter needs (docs/progress.md, "Waiting with more threads than cores"). Only idle threads
 * count: an application thread or the timer holding the queue runs at normal priority, and a
 * short sleep for each of those costs wake-ups on a loaded machine. */
static inline bool wp_poll_missed_take(void)
{
    wp_tls_t *tls = WP_TLS;
    bool m = tls->missed;
    if (m)
        tls->missed = false;
    return m;
}

/* One load when no idle thread sleeps. An idle thread announcing its sleep at the same moment may
 * miss this kick; it then sleeps until its timeout (docs/progress.md, "Sleeping"). */
static inline void wp_engine_kick(void)
{
    if (WU_UNLIKELY(__atomic_load_n(&wp_engine_g.sleepers, __ATOMIC_SEQ_CST)))
        wp_engine_kick_slow();
}

/* A parked timer (wp_engine_watch_begin), or one in a backed-off sleep (its ticks found the
 * application polling, wp_threads.c), ticks again: for work that no doorbell announces (a
 * submission, a packet queued for lack of room). One load when it is neither. The caller made
 * the work visible before (seq_cst), and the timer marks itself parked before its last look
 * (seq_cst): one of the two sees the other. */
static inline void wp_engine_wake_timer(void)
{
    if (WU_UNLIKELY(__atomic_load_n(&wp_engine_g.timer_parked, __ATOMIC_SEQ_CST)))
        wp_engine_wake_timer_slow();
}

#endif
