/* Hot path of the engine: one explicit poll runs every queued task once. */
#ifndef WP_ENGINE_INL_H
#define WP_ENGINE_INL_H

#include "progress/wp_engine.h"
#include "util/wu_compiler.h"

/* Returns how many tasks reported work done. */
static inline int wp_poll(void)
{
    int did = 0;
    wu_list_t *pos, *tmp;
    wp_engine.polls++;
    wu_list_for_each_safe(pos, tmp, &wp_engine.tasks) {
        wp_ltask_t *t = WU_CONTAINER_OF(pos, wp_ltask_t, link);
        wp_task_result_t r = t->fn(t->arg);
        if (r == WP_TASK_DONE) {
            did++;
            if (t->kind == WP_TASK_ONCE) {
                wu_list_del(&t->link);
                t->queued = 0;
            }
        }
    }
    return did;
}

#endif
