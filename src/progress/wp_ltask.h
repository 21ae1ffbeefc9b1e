/* Light tasks (ltasks), after pioman (../shared/seeds/pioman-multithreaded-engine.txt): a small
 * function the progression engine runs at polling points: explicit (inside MPI calls, wp_poll),
 * idle threads, and a timer thread.
 *
 * A ONCE task runs until its function returns WP_TASK_DONE, then leaves its queue (its `done` flag
 * is set with a release store; the submitter may then reuse the task). A REPEAT task stays in its
 * queue and runs at every poll until wp_ltask_remove; its result only tells whether it found work.
 *
 * A task runs in at most one thread at a time (it is in one queue, and a queue is polled by one
 * thread at a time: its lock is a mask, a poller finding it busy skips the queue).
 *
 * Concurrency contract: wp_ltask_submit may be called by any thread at any time (lock-free
 * submission queue). wp_ltask_remove may be called by any thread; it returns once the task is out
 * of its queue and not running. A task's function must not submit itself (that is a no-op: it is
 * still queued). It may remove itself: the call then returns at once and the task leaves its queue
 * when the function returns (the only case where remove returns while the task runs). It may
 * submit other tasks anywhere and remove tasks of its own queue; removing a task of another queue
 * from inside a task waits for that queue's runner, so two tasks doing it crosswise would wait
 * forever.
 *
 * Ownership: the engine owns a task from a successful submit until (a) `done` reads 1 (ONCE that
 * finished; `done` is the engine's last write) or (b) wp_ltask_remove returns. Submitting a task
 * that is still queued is a no-op; submitting a task while removing it is an error. States, in
 * `state` (see docs/progress.md):
 *
 *   IDLE --submit--> SUBMITTED --drain--> QUEUED --poll--> RUNNING --AGAIN or REPEAT--> QUEUED
 *                                                          RUNNING --ONCE, DONE-->  FINISHED
 *   SUBMITTED/QUEUED/RUNNING --remove--> REMOVING --dropped by the queue's owner--> IDLE
 *   FINISHED (with done == 1) is like IDLE: the task may be submitted again.
 */
#ifndef WP_LTASK_H
#define WP_LTASK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum { WP_TASK_AGAIN = 0, WP_TASK_DONE = 1 } wp_task_result_t;

typedef wp_task_result_t (*wp_task_fn_t)(void *arg);

typedef enum { WP_TASK_ONCE = 0, WP_TASK_REPEAT = 1 } wp_task_kind_t;

struct wp_queue;

typedef struct wp_ltask {
    wp_task_fn_t     fn;
    void            *arg;
    wp_task_kind_t   kind;
    const char      *name;       /* for debugging and weft-info */
    struct wp_queue *queue;      /* owned by the engine: where it is submitted */
    _Atomic int      state;      /* owned by the engine: a wp_task_state_t (wp_queue.h) */
    _Atomic int      done;       /* ONCE: set when finished */
    struct wp_ltask *next;       /* owned by the engine: submission and main queue links */
    struct wp_ltask *prev;
} wp_ltask_t;

static inline void wp_ltask_init(wp_ltask_t *t, wp_task_fn_t fn, void *arg, wp_task_kind_t kind,
                                 const char *name)
{
    t->fn = fn;
    t->arg = arg;
    t->kind = kind;
    t->name = name;
    t->queue = NULL;
    atomic_init(&t->state, 0);
    atomic_init(&t->done, 0);
    t->next = t->prev = NULL;
}

/* Submit to the queue of the machine (root): every poller reaches it. The engine must be up
 * (between wp_engine_init and wp_engine_finalize). */
void wp_ltask_submit(wp_ltask_t *t);
/* Submit to the most local queue of the calling thread's current location. */
void wp_ltask_submit_local(wp_ltask_t *t);
/* Stop a REPEAT task (or cancel a ONCE task not yet run); waits until it is not running. */
void wp_ltask_remove(wp_ltask_t *t);

#endif
