/* One ltask queue of the engine (one per node of the topology tree), after pioman's submission
 * queues (section IV-B of ../shared/seeds/pioman-multithreaded-engine.txt):
 *
 *   submission queue  lock-free, multi-producer, single-consumer, intrusive (Vyukov's MPSC list:
 *                     producers exchange the tail, then link the old tail to the new task). Tasks
 *                     carry the link (`next`), so there is no capacity limit and no allocation.
 *   main queue        a doubly-linked list (`next`/`prev`) owned by whoever holds `lock`.
 *   lock              an owner-biased lock (thread/wt_olock.h: the thread that polls the queue
 *                     alone takes it with plain stores) used only with trylock, as a MASK: a
 *                     poller that finds it held skips the queue, since its holder is already
 *                     running the queue's tasks.
 *
 * The holder (the queue's "owner" for the time it holds the lock) is the single consumer of the
 * submission queue: it moves submitted tasks to the main queue, then runs the main queue.
 *
 * Concurrency contract:
 *   wp_queue_push            any thread, any time between wp_queue_init and wp_queue_fini.
 *   wp_queue_trylock         any thread; on success the caller owns the queue until it unlocks.
 *   wp_queue_*_locked        the owner only. A task's function runs with its queue owned by the
 *                            calling thread (`runner` is that thread's wp_tls while it runs the
 *                            tasks), so a task may call wp_queue_service_locked on its own queue,
 *                            or on a queue an outer frame of its thread runs (through
 *                            wp_ltask_remove).
 *   ntasks                   +1 by submitters before the push, -1 by the owner when a task leaves:
 *                            a hint read with a relaxed load so that an empty queue costs pollers
 *                            one load and no lock.
 *   explicit_seen            set (relaxed) by explicit pollers, cleared by background pollers.
 *   parent .. subtree_end    written by wp_engine_init before any poller exists, then read-only.
 *
 * Progress of the submission queue: a producer preempted between its exchange and its link hides
 * the tasks pushed after it until it resumes (the consumer sees a gap and retries at its next
 * poll); no task is ever lost.
 */
#ifndef WP_QUEUE_H
#define WP_QUEUE_H

#include <stdbool.h>
#include <stdint.h>
#include "progress/wp_ltask.h"
#include "thread/wt_olock.h"
#include "thread/wt_thread.h"
#include "util/wu_compiler.h"

/* wp_ltask_t.state */
typedef enum {
    WP_STATE_IDLE = 0,      /* not in a queue */
    WP_STATE_SUBMITTED,     /* in a submission queue (or about to be pushed) */
    WP_STATE_QUEUED,        /* in a main queue, not running */
    WP_STATE_RUNNING,       /* its function runs, in the thread owning its queue (only while
                               the lock gate is off: with it on, a running task stays QUEUED and
                               its queue's `running` names it, wp_queue_run_locked) */
    WP_STATE_REMOVING,      /* wp_ltask_remove asked; the queue's owner drops it (-> IDLE) */
    WP_STATE_FINISHED,      /* ONCE, returned DONE: out of its queue; `done` is set right after */
} wp_task_state_t;

typedef struct wp_queue {
    /* written by submitters */
    WU_ALIGNED(WU_CACHELINE) wp_ltask_t *sub_tail;   /* __atomic exchange */
    int ntasks;                                       /* __atomic */
    bool held_single;     /* the mask while the lock gate is off (one thread, see wp_queue_trylock) */
    /* the MPSC stub: written by a producer when the submission queue was empty */
    WU_ALIGNED(WU_CACHELINE) wp_ltask_t stub;
    /* the owner's */
    WU_ALIGNED(WU_CACHELINE) wt_olock_t lock;
    wp_ltask_t *sub_head;      /* consumer end of the submission queue */
    wp_ltask_t *main_head;     /* main queue, NULL-terminated both ways */
    wp_ltask_t *main_tail;
    wp_ltask_t *cursor;        /* the next main task the running poll will visit */
    wp_ltask_t *running;       /* the task whose function runs now */
    struct wp_tls *runner;     /* __atomic: the thread running the tasks, NULL outside a run */
    uint8_t idle_holds;        /* __atomic: set by an idle thread (SCHED_IDLE) while it holds
                                  the mask, read by explicit pollers that found it held */
    /* read-mostly */
    WU_ALIGNED(WU_CACHELINE) struct wp_queue *parent;
    unsigned nchildren;
    unsigned depth;            /* root 0 */
    unsigned index;            /* pre-order: the subtree is [index, subtree_end) */
    unsigned subtree_end;
    uint8_t explicit_seen;     /* __atomic: an explicit poller came by since a background one */
} wp_queue_t;

void wp_queue_init(wp_queue_t *q);
/* Owner: drop every task (state IDLE, done untouched). For wp_engine_finalize. */
void wp_queue_drop_all_locked(wp_queue_t *q);
/* Owner: move submissions to the main queue and run it once. Returns the runs that reported work
 * (WP_TASK_DONE). */
int wp_queue_run_locked(wp_queue_t *q);
/* Owner: move submissions and drop the tasks being removed, without running anything. */
void wp_queue_service_locked(wp_queue_t *q);

static inline bool wp_queue_has_tasks(const wp_queue_t *q)
{
    return __atomic_load_n(&q->ntasks, __ATOMIC_RELAXED) != 0;
}

/* With the lock gate off there is one thread in the library and no engine thread: the mask only
 * has to keep out a nested poll of the same thread (a task that polls), so a plain flag does. */
static inline bool wp_queue_trylock(wp_queue_t *q)
{
    if (WU_LIKELY(!wt_thread_is_multi())) {
        if (q->held_single)
            return false;
        q->held_single = true;
        return true;
    }
    return wt_olock_trylock_always(&q->lock);
}

static inline void wp_queue_unlock(wp_queue_t *q)
{
    if (WU_LIKELY(!wt_thread_is_multi())) {
        q->held_single = false;
        return;
    }
    wt_olock_unlock_always(&q->lock);
}

/* Any thread. The task is in state SUBMITTED. The exchange is seq_cst: a submitter that pushes
 * and then reads wp_engine_g.sleepers cannot miss an idle thread that announced itself and then
 * looked at this queue's tail (wp_threads.c). */
static inline void wp_queue_link(wp_queue_t *q, wp_ltask_t *t)
{
    __atomic_store_n(&t->next, NULL, __ATOMIC_RELAXED);
    wp_ltask_t *prev = __atomic_exchange_n(&q->sub_tail, t, __ATOMIC_SEQ_CST);
    __atomic_store_n(&prev->next, t, __ATOMIC_RELEASE);
}

static inline void wp_queue_push(wp_queue_t *q, wp_ltask_t *t)
{
    __atomic_fetch_add(&q->ntasks, 1, __ATOMIC_RELAXED);
    wp_queue_link(q, t);
}

/* Any thread: something was pushed and not yet taken by an owner (or a push is under way). */
static inline bool wp_queue_has_submissions(wp_queue_t *q)
{
    return __atomic_load_n(&q->sub_tail, __ATOMIC_SEQ_CST) != &q->stub;
}

#endif
