/* Light tasks (ltasks), after pioman (../shared/seeds/pioman-multithreaded-engine.txt): a small
 * function the progression engine runs at polling points. A REPEAT task stays in its queue and runs
 * at every poll until it is removed; a ONCE task runs until its function returns WP_TASK_DONE.
 *
 * In this version the engine is pioman's "nothread" flavor: tasks run only at explicit polling
 * points (inside MPI calls, wp_poll). The threaded engine keeps this interface.
 *
 * Concurrency contract (nothread flavor): submit, remove and poll are called by one thread at a
 * time (MPI_THREAD_SERIALIZED at most); the engine takes no lock.
 */
#ifndef WP_LTASK_H
#define WP_LTASK_H

#include "util/wu_list.h"

typedef enum { WP_TASK_AGAIN = 0, WP_TASK_DONE = 1 } wp_task_result_t;

/* Returns WP_TASK_DONE when a ONCE task has finished; a REPEAT task's result tells whether it did
 * any work (DONE) or found nothing (AGAIN), which the engine uses to decide whether to back off. */
typedef wp_task_result_t (*wp_task_fn_t)(void *arg);

typedef enum { WP_TASK_ONCE = 0, WP_TASK_REPEAT = 1 } wp_task_kind_t;

typedef struct wp_ltask {
    wp_task_fn_t   fn;
    void          *arg;
    wp_task_kind_t kind;
    int            queued;   /* owned by the engine */
    wu_list_t      link;     /* owned by the engine */
    const char    *name;     /* for debugging and weft-info */
} wp_ltask_t;

static inline void wp_ltask_init(wp_ltask_t *t, wp_task_fn_t fn, void *arg, wp_task_kind_t kind,
                                 const char *name)
{
    t->fn = fn;
    t->arg = arg;
    t->kind = kind;
    t->queued = 0;
    t->name = name;
    wu_list_init(&t->link);
}

void wp_ltask_submit(wp_ltask_t *t);
void wp_ltask_remove(wp_ltask_t *t);

#endif
