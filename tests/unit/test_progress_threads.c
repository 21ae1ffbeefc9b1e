/* The engine's own threads:
 *   - init/finalize over and over, with every combination of explicit polling, idle threads and
 *     timer thread; tasks run in every combination but the empty one (where nothing runs, by
 *     design), and finalize drops what is left;
 *   - the timer thread alone runs tasks (latency printed), the idle threads alone run tasks
 *     (latency printed), at the "package" and "core" levels;
 *   - wp_engine_kick wakes a deep-sleeping idle thread (latency printed);
 *   - wp_engine_stop_threads: no engine thread runs a task after it, explicit polling still does;
 *   - wp_engine_sync waits for the task run under way;
 *   - the timer parks while a thread watches (wp_engine_watch_begin): a REPEAT task's runs stop,
 *     and resume at once when the watch ends, when a task is submitted, and when
 *     wp_engine_wake_timer is called (each well before the parked timer's own time-out); two
 *     watchers keep it parked until the second ends;
 *   - the CPU used by an engine whose REPEAT task never finds work, with idle and timer threads
 *     on, over 1 s: printed, and bounded loosely (< 30% of a core) so that a loaded machine does
 *     not make the test fail; bench measures the real figure. */
#include <sys/resource.h>
#include "test_progress.h"
#include "progress/wp_threads.h"

typedef struct {
    wp_ltask_t t;
    atomic_int runs;
    int need;
} ttask_t;

static wp_task_result_t ttask_fn(void *arg)
{
    ttask_t *x = arg;
    int n = atomic_fetch_add(&x->runs, 1) + 1;
    if (x->t.kind == WP_TASK_ONCE)
        return n >= x->need ? WP_TASK_DONE : WP_TASK_AGAIN;
    return WP_TASK_AGAIN;   /* REPEAT: never finds work */
}

static void ttask_init(ttask_t *x, wp_task_kind_t kind, int need)
{
    memset(x, 0, sizeof(*x));
    wp_ltask_init(&x->t, ttask_fn, x, kind, "test");
    x->need = need;
}

/* Wait for every task's done, polling if explicit polling is on. Returns the seconds taken, or -1
 * after timeout_s. */
static double wait_done(ttask_t *tasks, int n, bool poll, double timeout_s)
{
    uint64_t t0 = tp_now_ns();
    for (int i = 0; i < n; i++) {
        while (!atomic_load_explicit(&tasks[i].t.done, memory_order_acquire)) {
            if ((double)(tp_now_ns() - t0) / 1e9 > timeout_s)
                return -1;
            if (!poll || !wp_poll())
                sched_yield();
        }
    }
    return (double)(tp_now_ns() - t0) / 1e9;
}

static void test_init_cycles(void)
{
    enum { N = 32 };
    static ttask_t tasks[N];
    for (int cycle = 0; cycle < 24; cycle++) {
        int combo = cycle % 8;
        bool ex = combo & 1, idle = combo & 2, timer = combo & 4;
        wp_engine_config_t c = tp_config(ex, idle, timer);
        c.idle_level = cycle & 8 ? "core" : "package";
        tp_init(c);
        ttask_t rep;
        ttask_init(&rep, WP_TASK_REPEAT, 0);
        wp_ltask_submit(&rep.t);
        for (int i = 0; i < N; i++) {
            ttask_init(&tasks[i], WP_TASK_ONCE, 1 + i % 2);
            if (i & 1)
                wp_ltask_submit_local(&tasks[i].t);
            else
                wp_ltask_submit(&tasks[i].t);
        }
        if (combo == 0) {
            tp_sleep_us(5000);
            CHECK_EQ("no poller at all: runs", 0, atomic_load(&tasks[0].runs) + wp_poll());
        } else {
            double s = wait_done(tasks, N, ex, 20.0);
            if (s < 0) {
                fprintf(stderr, "cycle %d (explicit %d idle %d timer %d): expected all %d tasks "
                        "done within 20 s, got some not done\n", cycle, ex, idle, timer, N);
                failures++;
            }
            for (int i = 0; i < N; i++)
                if (atomic_load(&tasks[i].runs) != tasks[i].need) {
                    fprintf(stderr, "cycle %d task %d: expected %d runs, got %d\n", cycle, i,
                            tasks[i].need, atomic_load(&tasks[i].runs));
                    failures++;
                }
        }
        wp_engine_finalize();
        CHECK_EQ("REPEAT dropped at finalize: state", WP_STATE_IDLE, atomic_load(&rep.t.state));
        if (combo == 0)
            CHECK_EQ("dropped at finalize: state", WP_STATE_IDLE, atomic_load(&tasks[0].t.state));
    }
}

/* One poller kind alone: the first task's latency from submit to done, then 200 more. */
static void test_alone(const char *what, wp_engine_config_t c)
{
    enum { N = 200 };
    static ttask_t tasks[N];
    tp_init(c);
    ttask_t rep;   /* like the transport's task: always there, never finds work */
    ttask_init(&rep, WP_TASK_REPEAT, 0);
    wp_ltask_submit(&rep.t);
    tp_sleep_us(20000);   /* let the idle threads fall asleep */
    ttask_init(&tasks[0], WP_TASK_ONCE, 1);
    wp_ltask_submit(&tasks[0].t);
    double first = wait_done(tasks, 1, false, 20.0);
    for (int i = 1; i < N; i++) {
        ttask_init(&tasks[i], WP_TASK_ONCE, 1 + i % 3);
        if (i & 1)
            wp_ltask_submit_local(&tasks[i].t);
        else
            wp_ltask_submit(&tasks[i].t);
    }
    double all = wait_done(tasks + 1, N - 1, false, 20.0);
    printf("%s: first task done %.0f us after submit; %d more in %.1f ms\n", what, first * 1e6,
           N - 1, all * 1e3);
    if (first < 0 || all < 0) {
        fprintf(stderr, "%s: expected every task done within 20 s, got some not done\n", what);
        failures++;
    }
    for (int i = 0; i < N; i++)
        if (atomic_load(&tasks[i].runs) != tasks[i].need) {
            fprintf(stderr, "%s task %d: expected %d runs, got %d\n", what, i, tasks[i].need,
                    atomic_load(&tasks[i].runs));
            failures++;
        }
    wp_ltask_remove(&rep.t);
    wp_engine_finalize();
}

static void test_kick(void)
{
    /* no timer thread: a sleeping idle thread's timeout doubles up to timer_period_us (1 s here) */
    wp_engine_config_t c = tp_config(false, true, false);
    c.timer_period_us = 1000000;
    tp_init(c);
    ttask_t rep;
    ttask_init(&rep, WP_TASK_REPEAT, 0);
    wp_ltask_submit(&rep.t);
    tp_sleep_us(600000);   /* the idle thread is now in a sleep of 200-400 ms */
    int r0 = atomic_load(&rep.runs);
    uint64_t t0 = tp_now_ns();
    wp_engine_kick();
    while (atomic_load(&rep.runs) == r0 && tp_now_ns() - t0 < 5000000000ull)
        tp_sleep_us(50);
    double us = (double)(tp_now_ns() - t0) / 1e3;
    printf("kick: a deep-sleeping idle thread polled %.0f us after wp_engine_kick%s\n", us,
           us > 100000 ? " (slow: loaded machine, or the kick was missed)" : "");
    CHECK("the idle thread polls again after a kick", atomic_load(&rep.runs) > r0);
    wp_ltask_remove(&rep.t);
    wp_engine_finalize();
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU used over 1 s by an engine whose REPEAT task never finds work, the main thread asleep. */
static double measure_cpu(const char *what, wp_engine_config_t c)
{
    tp_init(c);
    ttask_t rep;
    ttask_init(&rep, WP_TASK_REPEAT, 0);
    wp_ltask_submit(&rep.t);
    wp_engine_kick();
    tp_sleep_us(200000);   /* past the start-up and the first sleeps */
    int r0 = atomic_load(&rep.runs);
    double c0 = cpu_s();
    uint64_t t0 = tp_now_ns();
    tp_sleep_us(1000000);
    double c1 = cpu_s();
    double wall = (double)(tp_now_ns() - t0) / 1e9;
    int runs = atomic_load(&rep.runs) - r0;
    double pct = 100.0 * (c1 - c0) / wall;
    printf("CPU, %s: %.2f%% of a core (%.1f ms CPU in %.2f s), REPEAT task run %d times/s\n", what,
           pct, (c1 - c0) * 1e3, wall, (int)(runs / wall));
    wp_ltask_remove(&rep.t);
    wp_engine_finalize();
    return pct;
}

/* wp_engine_stop_threads: once it returns, no engine thread runs a task (a REPEAT task's run
 * count stays put for 20 ms); explicit polling still runs it; stopping twice, and finalizing after,
 * are fine. */
static void test_stop_threads(void)
{
    for (int cycle = 0; cycle < 4; cycle++) {
        wp_engine_config_t c = tp_config(true, cycle & 1, true);
        c.timer_period_us = 100;
        tp_init(c);
        ttask_t rep;
        ttask_init(&rep, WP_TASK_REPEAT, 0);
        wp_ltask_submit(&rep.t);
        uint64_t t0 = tp_now_ns();
        while (atomic_load(&rep.runs) < 3 && tp_now_ns() - t0 < 5000000000ull)
            tp_sleep_us(100);
        CHECK("engine threads run the task before the stop", atomic_load(&rep.runs) >= 3);
        wp_engine_stop_threads();
        int r0 = atomic_load(&rep.runs);
        tp_sleep_us(20000);
        CHECK_EQ("runs by engine threads after wp_engine_stop_threads", r0,
                 atomic_load(&rep.runs));
        for (int i = 0; i < 4; i++)
            wp_poll();   /* the root is reached every second poll at most */
        CHECK("explicit polling still runs the task", atomic_load(&rep.runs) > r0);
        if (cycle & 2)
            wp_engine_stop_threads();
        wp_ltask_remove(&rep.t);
        wp_engine_finalize();
    }
}

/* wp_engine_sync: a task run under way when it is called (one that takes 30 ms, in the timer
 * thread) has returned when it returns. */
static atomic_int slow_phase;   /* 1: inside the run, 2: returned */

static wp_task_result_t slow_fn(void *arg)
{
    (void)arg;
    atomic_store(&slow_phase, 1);
    tp_sleep_us(30000);
    atomic_store(&slow_phase, 2);
    return WP_TASK_DONE;
}

static void test_sync(void)
{
    tp_init(tp_config(false, false, true));
    wp_ltask_t t;
    atomic_store(&slow_phase, 0);
    wp_ltask_init(&t, slow_fn, NULL, WP_TASK_ONCE, "slow");
    wp_ltask_submit(&t);
    uint64_t t0 = tp_now_ns();
    while (atomic_load(&slow_phase) == 0 && tp_now_ns() - t0 < 5000000000ull)
        tp_sleep_us(100);
    CHECK_EQ("the timer thread is inside the slow task", 1, atomic_load(&slow_phase));
    wp_engine_sync();
    CHECK_EQ("wp_engine_sync returns after the run under way", 2, atomic_load(&slow_phase));
    wp_engine_finalize();
}

/* The timer parks while a thread watches; the end of the watch, a submission and
 * wp_engine_wake_timer wake it.
 * The timer ticks every 1 ms and runs the REPEAT task each time. Bounds: while parked, at most 2
 * runs in 30 ms (the tick under way when the watch began, and one spurious wake-up), against
 * about 30 unparked; after a wake-up, a run within 50 ms, while the parked timer's own time-out
 * (WP_TIMER_PARK_MAX_NS, 100 ms) would come 70 ms or more after the wake-up. */
static bool runs_within(ttask_t *rep, int r0, unsigned ms)
{
    uint64_t t0 = tp_now_ns();
    while (atomic_load(&rep->runs) == r0 && tp_now_ns() - t0 < (uint64_t)ms * 1000000u)
        tp_sleep_us(200);
    return atomic_load(&rep->runs) != r0;
}

static int parked_runs(ttask_t *rep, unsigned ms)
{
    tp_sleep_us(3000);   /* the next tick sees the watcher and parks */
    int r0 = atomic_load(&rep->runs);
    tp_sleep_us(ms * 1000u);
    return atomic_load(&rep->runs) - r0;
}

static void test_timer_park(void)
{
    _Static_assert(WP_TIMER_PARK_MAX_NS >= 100000000u, "the bounds below assume 100 ms");
    tp_init(tp_config(false, false, true));
    ttask_t rep;
    ttask_init(&rep, WP_TASK_REPEAT, 0);
    wp_ltask_submit(&rep.t);
    CHECK("the timer runs the task", runs_within(&rep, 0, 5000));

    for (int how = 0; how < 3; how++) {
        wp_engine_watch_begin();
        int during = parked_runs(&rep, 30);
        CHECK("at most 2 runs in 30 ms while a thread watches", during <= 2);
        int r0 = atomic_load(&rep.runs);
        ttask_t once;
        if (how == 0) {
            wp_engine_watch_end();
        } else if (how == 1) {
            ttask_init(&once, WP_TASK_ONCE, 1);
            wp_ltask_submit(&once.t);
        } else {
            wp_engine_wake_timer();
        }
        static const char *what[] = { "the watch's end", "a submission", "wp_engine_wake_timer" };
        if (!runs_within(&rep, r0, 50)) {
            fprintf(stderr, "test_timer_park: no tick within 50 ms of %s\n", what[how]);
            failures++;
        }
        if (how == 1)
            CHECK("the submitted task ran", wait_done(&once, 1, false, 5.0) >= 0);
        if (how != 0)
            wp_engine_watch_end();
    }

    /* two watchers: parked until the second ends */
    wp_engine_watch_begin();
    wp_engine_watch_begin();
    parked_runs(&rep, 10);
    wp_engine_watch_end();
    CHECK("one watcher left: still at most 2 runs in 30 ms", parked_runs(&rep, 30) <= 2);
    int r0 = atomic_load(&rep.runs);
    wp_engine_watch_end();
    CHECK("the last watcher's end wakes the timer within 50 ms", runs_within(&rep, r0, 50));

    wp_ltask_remove(&rep.t);
    wp_engine_finalize();

    /* finalize while parked: the stop wakes the timer */
    tp_init(tp_config(false, false, true));
    wp_engine_watch_begin();
    tp_sleep_us(5000);
    uint64_t t0 = tp_now_ns();
    wp_engine_finalize();
    CHECK("finalize with the timer parked takes under 50 ms", tp_now_ns() - t0 < 50000000u);
    wp_engine_watch_end();
}

int main(void)
{
    alarm(110);
    test_init_cycles();

    wp_engine_config_t c = tp_config(false, false, true);
    test_alone("timer thread alone (1000 us)", c);
    c = tp_config(false, true, false);
    test_alone("idle threads alone (package)", c);
    c.idle_level = "core";
    test_alone("idle threads alone (core)", c);
    tp_init(c);
    printf("%s\n", wp_engine_describe());
    wp_engine_finalize();

    test_kick();
    test_stop_threads();
    test_sync();
    test_timer_park();

    double pct = measure_cpu("idle + timer threads", tp_config(true, true, true));
    CHECK("CPU of an engine with nothing to do below 30% of a core", pct < 30.0);
    measure_cpu("idle threads only", tp_config(true, true, false));
    measure_cpu("timer thread only", tp_config(true, false, true));

    if (failures) {
        fprintf(stderr, "test_progress_threads: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_progress_threads: ok\n");
    return 0;
}
