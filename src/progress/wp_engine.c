/* Interim engine: one queue, explicit polling only (pioman's "nothread" flavor), behind the
 * threaded engine's interface. Serialized callers only (MPI_THREAD_SERIALIZED). */
#include "progress/wp_engine.h"
#include "thread/wt_thread.h"
#include "util/wu_config.h"

#include <stddef.h>
#include <string.h>

static wp_ltask_t wp_head = { .next = &wp_head, .prev = &wp_head };

void wp_engine_config_from_env(wp_engine_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->explicit_poll = true;
}

wu_status_t wp_engine_init(const wp_engine_config_t *cfg)
{
    wp_head.next = wp_head.prev = &wp_head;
    return WU_OK;
}

void wp_engine_finalize(void)
{
    wp_head.next = wp_head.prev = &wp_head;
}

void wp_ltask_submit(wp_ltask_t *t)
{
    if (atomic_load(&t->state))
        return;
    atomic_store(&t->state, 1);
    atomic_store(&t->done, 0);
    t->prev = wp_head.prev;
    t->next = &wp_head;
    wp_head.prev->next = t;
    wp_head.prev = t;
}

void wp_ltask_submit_local(wp_ltask_t *t)
{
    wp_ltask_submit(t);
}

static void wp_unlink(wp_ltask_t *t)
{
    t->prev->next = t->next;
    t->next->prev = t->prev;
    t->next = t->prev = NULL;
    atomic_store(&t->state, 0);
}

void wp_ltask_remove(wp_ltask_t *t)
{
    if (atomic_load(&t->state))
        wp_unlink(t);
}

static _Atomic int wp_busy;   /* the queue's mask: a poller finding it set skips the queue */

int wp_poll(void)
{
    int did = 0;
    bool multi = wt_thread_multi;
    if (multi && atomic_exchange_explicit(&wp_busy, 1, memory_order_acquire))
        return 0;
    for (wp_ltask_t *t = wp_head.next, *n; t != &wp_head; t = n) {
        n = t->next;
        if (t->fn(t->arg) == WP_TASK_DONE) {
            did++;
            if (t->kind == WP_TASK_ONCE) {
                wp_unlink(t);
                atomic_store_explicit(&t->done, 1, memory_order_release);
            }
        }
    }
    if (multi)
        atomic_store_explicit(&wp_busy, 0, memory_order_release);
    return did;
}

void wp_engine_kick(void)
{
}

int wp_engine_queue_count(void)
{
    return 1;
}

const char *wp_engine_describe(void)
{
    return "one queue, explicit polling only";
}
