/* The engine under concurrency, with every kind of poller at once (4 explicit polling threads,
 * idle threads, a timer thread):
 *   - 8 submitter threads x 5000 ONCE tasks each, half to the root, half local, three rounds (the
 *     later ones reuse each task once its `done` is seen): every task runs exactly as many times as
 *     it asked for (1 to 3) and `done` is set;
 *   - the mask: tasks of one queue never run at the same time (an "in task" flag per queue);
 *   - removal racing with polling: REPEAT tasks (and ONCE tasks that never finish) submitted and
 *     removed over and over, removed while submitted, queued or running, sometimes while the task
 *     removes itself: once remove returns the task is not running and never runs again;
 *   - afterwards every queue's task count is back to 0. */
#include <pthread.h>
#include "test_progress.h"
#include "thread/wt_thread.h"

#define NSUB 8
#define NTASK 5000
#define ROUNDS 3
#define NPOLL 4
#define NREM 4
#define REM_TASKS 4
#define REM_ITERS 20000

static atomic_int in_task[256];
static atomic_int mask_violations, stop_polling;
static atomic_long explicit_runs;

static void busy(int n)
{
    for (volatile int i = 0; i < n; i++)
        ;
}

/* The queue running the task, by its owner's TLS (white box). */
static void mask_enter(void)
{
    unsigned q = WP_TLS->held ? WP_TLS->held->index : 255;
    if (atomic_exchange(&in_task[q & 255], 1))
        atomic_fetch_add(&mask_violations, 1);
}

static void mask_leave(void)
{
    unsigned q = WP_TLS->held ? WP_TLS->held->index : 255;
    atomic_store(&in_task[q & 255], 0);
}

/* ---- exactly once ----------------------------------------------------------------------------- */

typedef struct {
    wp_ltask_t t;
    atomic_int runs;
    int need;
} mtask_t;

static wp_task_result_t mtask_fn(void *arg)
{
    mtask_t *x = arg;
    mask_enter();
    int n = atomic_fetch_add_explicit(&x->runs, 1, memory_order_relaxed) + 1;
    busy(50);
    mask_leave();
    return n >= x->need ? WP_TASK_DONE : WP_TASK_AGAIN;
}

static atomic_int wrong_runs, not_done;

static void *submitter(void *arg)
{
    int id = (int)(intptr_t)arg;
    mtask_t *tasks = calloc(NTASK, sizeof(*tasks));
    for (int j = 0; j < NTASK; j++)
        wp_ltask_init(&tasks[j].t, mtask_fn, &tasks[j], WP_TASK_ONCE, "mt");
    for (int round = 0; round < ROUNDS; round++) {
        for (int j = 0; j < NTASK; j++) {
            tasks[j].need = 1 + (j + id + round) % 3;
            atomic_store_explicit(&tasks[j].runs, 0, memory_order_relaxed);
            if (j & 1)
                wp_ltask_submit_local(&tasks[j].t);
            else
                wp_ltask_submit(&tasks[j].t);
            if (j % 128 == 127)
                sched_yield();
        }
        for (int j = 0; j < NTASK; j++)
            while (!atomic_load_explicit(&tasks[j].t.done, memory_order_acquire))
                sched_yield();
        for (int j = 0; j < NTASK; j++) {
            int runs = atomic_load(&tasks[j].runs);
            if (runs != tasks[j].need && atomic_fetch_add(&wrong_runs, 1) < 5)
                fprintf(stderr, "submitter %d round %d task %d: expected %d runs, got %d\n", id,
                        round, j, tasks[j].need, runs);
        }
    }
    /* nothing runs after done: look again once the others have polled a while */
    sched_yield();
    for (int j = 0; j < NTASK; j++) {
        if (atomic_load(&tasks[j].runs) != tasks[j].need)
            atomic_fetch_add(&wrong_runs, 1);
        if (!atomic_load(&tasks[j].t.done))
            atomic_fetch_add(&not_done, 1);
    }
    free(tasks);
    return NULL;
}

static void *poller(void *arg)
{
    long did = 0;
    while (!atomic_load_explicit(&stop_polling, memory_order_relaxed)) {
        int n = wp_poll();
        did += n;
        if (!n)
            sched_yield();
    }
    atomic_fetch_add(&explicit_runs, did);
    return NULL;
}

/* ---- removal racing with polling --------------------------------------------------------------- */

typedef struct {
    wp_ltask_t t;
    atomic_int runs;
    atomic_int running;
    atomic_int self_remove;   /* the function removes its own task, racing with the remover */
    int snap;             /* runs when remove returned; -1 before the first removal */
} rtask_t;

static atomic_int concurrent_runs, late_runs, running_after_remove, bad_state;

static wp_task_result_t rtask_fn(void *arg)
{
    rtask_t *x = arg;
    mask_enter();
    if (atomic_exchange(&x->running, 1))
        atomic_fetch_add(&concurrent_runs, 1);
    atomic_fetch_add_explicit(&x->runs, 1, memory_order_relaxed);
    busy(200);
    if (atomic_load(&x->self_remove))
        wp_ltask_remove(&x->t);
    atomic_store(&x->running, 0);
    mask_leave();
    return WP_TASK_AGAIN;   /* REPEAT: found nothing; ONCE: never finishes */
}

static void *remover(void *arg)
{
    int id = (int)(intptr_t)arg;
    rtask_t tasks[REM_TASKS];
    unsigned seed = 12345u + (unsigned)id;
    for (int k = 0; k < REM_TASKS; k++) {
        memset(&tasks[k], 0, sizeof(tasks[k]));
        wp_ltask_init(&tasks[k].t, rtask_fn, &tasks[k], k == 0 ? WP_TASK_ONCE : WP_TASK_REPEAT,
                      "rm");
        tasks[k].snap = -1;
    }
    for (int it = 0; it < REM_ITERS; it++) {
        rtask_t *x = &tasks[it % REM_TASKS];
        if (x->snap >= 0 && atomic_load(&x->runs) != x->snap &&
            atomic_fetch_add(&late_runs, 1) < 5)
            fprintf(stderr, "remover %d: task ran after remove returned (%d runs, then %d)\n", id,
                    x->snap, atomic_load(&x->runs));
        if (it & 1)
            wp_ltask_submit(&x->t);
        else
            wp_ltask_submit_local(&x->t);
        switch (rand_r(&seed) % 4) {
        case 0:   /* most likely still in the submission queue */
            break;
        case 1:
            sched_yield();
            break;
        case 2: { /* queued or running; half the time the task removes itself meanwhile */
            atomic_store(&x->self_remove, (int)(rand_r(&seed) & 1));
            int r0 = atomic_load(&x->runs);
            for (int spin = 0; spin < 20000 && atomic_load(&x->runs) == r0; spin++)
                busy(10);
            break;
        }
        default:
            for (int p = 0; p < 3; p++)
                wp_poll();
            break;
        }
        wp_ltask_remove(&x->t);
        if (atomic_load(&x->running))
            atomic_fetch_add(&running_after_remove, 1);
        if (atomic_load(&x->t.state) != WP_STATE_IDLE)
            atomic_fetch_add(&bad_state, 1);
        x->snap = atomic_load(&x->runs);
        atomic_store(&x->self_remove, 0);
    }
    /* let the pollers go round a few more times, then check the last removals */
    for (int i = 0; i < 50; i++)
        sched_yield();
    for (int k = 0; k < REM_TASKS; k++)
        if (tasks[k].snap >= 0 && atomic_load(&tasks[k].runs) != tasks[k].snap)
            atomic_fetch_add(&late_runs, 1);
    return NULL;
}

static void run_phase(const char *name, void *(*fn)(void *), int nthreads)
{
    pthread_t pollers[NPOLL], workers[NSUB];
    atomic_store(&stop_polling, 0);
    uint64_t t0 = tp_now_ns();
    for (int i = 0; i < NPOLL; i++)
        pthread_create(&pollers[i], NULL, poller, NULL);
    for (int i = 0; i < nthreads; i++)
        pthread_create(&workers[i], NULL, fn, (void *)(intptr_t)i);
    for (int i = 0; i < nthreads; i++)
        pthread_join(workers[i], NULL);
    atomic_store(&stop_polling, 1);
    for (int i = 0; i < NPOLL; i++)
        pthread_join(pollers[i], NULL);
    printf("%s: %.2f s\n", name, (double)(tp_now_ns() - t0) / 1e9);
}

int main(void)
{
    alarm(100);
    wt_thread_set_multi(true);   /* several application threads poll: MPI_THREAD_MULTIPLE's gate */
    wp_engine_config_t c = tp_config(true, true, true);
    c.timer_period_us = 200;
    tp_init(c);
    printf("%s\n", wp_engine_describe());

    run_phase("exactly once", submitter, NSUB);
    CHECK_EQ("tasks with a wrong number of runs", 0, atomic_load(&wrong_runs));
    CHECK_EQ("tasks not done", 0, atomic_load(&not_done));

    run_phase("remove racing with polling", remover, NREM);
    CHECK_EQ("task run by two threads at once", 0, atomic_load(&concurrent_runs));
    CHECK_EQ("runs after remove returned", 0, atomic_load(&late_runs));
    CHECK_EQ("running when remove returned", 0, atomic_load(&running_after_remove));
    CHECK_EQ("state not IDLE after remove", 0, atomic_load(&bad_state));

    CHECK_EQ("mask: tasks of one queue running at once", 0, atomic_load(&mask_violations));
    for (int i = 0; i < wp_engine_queue_count(); i++)
        CHECK_EQ("queue task count at the end",
                 0, __atomic_load_n(&wp_engine_g.queues[i].ntasks, __ATOMIC_RELAXED));
    printf("explicit polls that found work: %ld\n", atomic_load(&explicit_runs));
    wp_engine_finalize();
    if (failures) {
        fprintf(stderr, "test_progress_mt: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_progress_mt: ok\n");
    return 0;
}
