/* The owner's side of a queue: taking submissions, running the main queue, dropping tasks.
 * Contract and layout in wp_queue.h; the task states in wp_ltask.h. */
#include "progress/wp_queue.h"
#include "thread/wt_thread.h"
#include "progress/wp_engine_inl.h"

#include <string.h>

void wp_queue_init(wp_queue_t *q)
{
    memset(q, 0, sizeof(*q));
    wt_olock_init(&q->lock);
    q->sub_tail = &q->stub;
    q->sub_head = &q->stub;
}

/* Consumer end of Vyukov's intrusive MPSC list. A task is handed out only once its `next` is
 * linked (or it is the last one and the stub went in behind it), so no producer writes to it
 * afterwards: from here on its links belong to the owner. NULL means empty, or a producer is
 * between its exchange and its link (the task will be found at a later poll). */
static wp_ltask_t *wp_queue_pop(wp_queue_t *q)
{
    wp_ltask_t *head = q->sub_head;
    wp_ltask_t *next = __atomic_load_n(&head->next, __ATOMIC_ACQUIRE);
    if (head == &q->stub) {
        if (!next)
            return NULL;
        q->sub_head = head = next;
        next = __atomic_load_n(&head->next, __ATOMIC_ACQUIRE);
    }
    if (next) {
        q->sub_head = next;
        return head;
    }
    if (head != __atomic_load_n(&q->sub_tail, __ATOMIC_ACQUIRE))
        return NULL;
    wp_queue_link(q, &q->stub);
    next = __atomic_load_n(&head->next, __ATOMIC_ACQUIRE);
    if (!next)
        return NULL;
    q->sub_head = next;
    return head;
}

static void wp_main_append(wp_queue_t *q, wp_ltask_t *t)
{
    t->next = NULL;
    t->prev = q->main_tail;
    if (q->main_tail)
        q->main_tail->next = t;
    else
        q->main_head = t;
    q->main_tail = t;
}

static void wp_main_unlink(wp_queue_t *q, wp_ltask_t *t)
{
    if (q->cursor == t)
        q->cursor = t->next;
    if (t->prev)
        t->prev->next = t->next;
    else
        q->main_head = t->next;
    if (t->next)
        t->next->prev = t->prev;
    else
        q->main_tail = t->prev;
    t->next = t->prev = NULL;
}

/* The task is out of every list. IDLE is the engine's last write to it: a remover waiting for it
 * may reuse the task at once. */
static void wp_queue_drop(wp_queue_t *q, wp_ltask_t *t)
{
    __atomic_fetch_sub(&q->ntasks, 1, __ATOMIC_RELAXED);
    atomic_store_explicit(&t->state, WP_STATE_IDLE, memory_order_release);
}

static void wp_queue_drain(wp_queue_t *q)
{
    wp_ltask_t *t;
    while ((t = wp_queue_pop(q))) {
        int s = WP_STATE_SUBMITTED;
        if (atomic_compare_exchange_strong_explicit(&t->state, &s, WP_STATE_QUEUED,
                                                    memory_order_acq_rel, memory_order_acquire))
            wp_main_append(q, t);
        else
            wp_queue_drop(q, t);   /* REMOVING: removed before it ever reached the main queue */
    }
}

/* One thread in the library and no engine thread (the lock gate is off): nobody else can change a
 * task's state while we look at it, so plain loads and stores replace the compare-and-swaps. */
static int wp_queue_run_single(wp_queue_t *q)
{
    int did = 0;
    wp_queue_drain(q);
    for (wp_ltask_t *t = q->main_head; t; t = q->cursor) {
        q->cursor = t->next;
        if (atomic_load_explicit(&t->state, memory_order_relaxed) != WP_STATE_QUEUED) {
            wp_main_unlink(q, t);
            wp_queue_drop(q, t);
            continue;
        }
        atomic_store_explicit(&t->state, WP_STATE_RUNNING, memory_order_relaxed);
        q->running = t;
        wp_task_result_t r = t->fn(t->arg);
        q->running = NULL;
        if (r == WP_TASK_DONE) {
            did++;
            if (t->kind == WP_TASK_ONCE) {
                wp_main_unlink(q, t);
                __atomic_store_n(&q->ntasks, __atomic_load_n(&q->ntasks, __ATOMIC_RELAXED) - 1,
                                 __ATOMIC_RELAXED);
                atomic_store_explicit(&t->state, WP_STATE_FINISHED, memory_order_relaxed);
                atomic_store_explicit(&t->done, 1, memory_order_release);
                continue;
            }
        }
        if (atomic_load_explicit(&t->state, memory_order_relaxed) == WP_STATE_RUNNING) {
            atomic_store_explicit(&t->state, WP_STATE_QUEUED, memory_order_relaxed);
        } else {
            wp_main_unlink(q, t);   /* REMOVING, asked by the task itself */
            wp_queue_drop(q, t);
        }
    }
    q->cursor = NULL;
    return did;
}

int wp_queue_run_locked(wp_queue_t *q)
{
    wp_tls_t *tls = WP_TLS;
    wp_queue_t *held = tls->held;
    int did = 0;

    if (!wt_thread_is_multi()) {
        tls->held = q;
        __atomic_store_n(&q->runner, tls, __ATOMIC_RELAXED);
        did = wp_queue_run_single(q);
        __atomic_store_n(&q->runner, NULL, __ATOMIC_RELAXED);
        tls->held = held;
        return did;
    }
    tls->held = q;
    __atomic_store_n(&q->runner, tls, __ATOMIC_RELAXED);
    wp_queue_drain(q);
    /* No compare-and-swap per run (two locked instructions were ~14% of a message-rate run's
     * samples at MPI_THREAD_MULTIPLE): a task stays QUEUED while it runs, q->running names it, and
     * only a remover changes its state meanwhile (to REMOVING). A remover then waits until the
     * task is dropped, which only the holder of the queue's lock does: this thread, here after
     * the function returned, or the remover itself once it gets the lock. So a plain look before
     * the run and one after it see every removal in time. */
    for (wp_ltask_t *t = q->main_head; t; t = q->cursor) {
        q->cursor = t->next;
        if (atomic_load_explicit(&t->state, memory_order_acquire) != WP_STATE_QUEUED) {
            wp_main_unlink(q, t);   /* REMOVING */
            wp_queue_drop(q, t);
            continue;
        }
        q->running = t;
        wp_task_result_t r = t->fn(t->arg);
        q->running = NULL;
        if (r == WP_TASK_DONE) {
            did++;
            if (t->kind == WP_TASK_ONCE) {
                /* FINISHED whether or not a remover came meanwhile; a remover seeing FINISHED
                 * waits for `done`, which is the engine's last write. */
                wp_main_unlink(q, t);
                __atomic_fetch_sub(&q->ntasks, 1, __ATOMIC_RELAXED);
                atomic_store_explicit(&t->state, WP_STATE_FINISHED, memory_order_release);
                atomic_store_explicit(&t->done, 1, memory_order_release);
                continue;
            }
        }
        if (atomic_load_explicit(&t->state, memory_order_acquire) != WP_STATE_QUEUED) {
            wp_main_unlink(q, t);   /* REMOVING, asked while it ran */
            wp_queue_drop(q, t);
        }
    }
    q->cursor = NULL;
    __atomic_store_n(&q->runner, NULL, __ATOMIC_RELAXED);
    tls->held = held;
    return did;
}

void wp_queue_service_locked(wp_queue_t *q)
{
    wp_queue_drain(q);
    for (wp_ltask_t *t = q->main_head, *n; t; t = n) {
        n = t->next;
        if (t != q->running &&
            atomic_load_explicit(&t->state, memory_order_acquire) == WP_STATE_REMOVING) {
            wp_main_unlink(q, t);
            wp_queue_drop(q, t);
        }
    }
}

void wp_queue_drop_all_locked(wp_queue_t *q)
{
    wp_queue_drain(q);
    while (q->main_head) {
        wp_ltask_t *t = q->main_head;
        wp_main_unlink(q, t);
        wp_queue_drop(q, t);
    }
}
