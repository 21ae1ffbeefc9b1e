#include "progress/wp_engine.h"

wp_engine_t wp_engine = { .tasks = WU_LIST_INIT(wp_engine.tasks) };

void wp_engine_init(void)
{
    wu_list_init(&wp_engine.tasks);
    wp_engine.polls = 0;
}

void wp_engine_finalize(void)
{
    wu_list_init(&wp_engine.tasks);
}

void wp_ltask_submit(wp_ltask_t *t)
{
    if (t->queued)
        return;
    t->queued = 1;
    wu_list_push_back(&wp_engine.tasks, &t->link);
}

void wp_ltask_remove(wp_ltask_t *t)
{
    if (!t->queued)
        return;
    wu_list_del(&t->link);
    t->queued = 0;
}
