/* Light tasks, one thread, explicit polling only (no engine threads): ONCE tasks run until DONE and
 * then exactly never again, REPEAT tasks run at every poll until removed, removal of a task that
 * is submitted but never polled, cancelling, double submission, a task removing itself or another
 * task of its queue (the poll's cursor) or of a queue an outer frame runs (a task that polls), a
 * task submitting another, local submission, explicit
 * polling off, finalize with tasks queued, and the cost of an empty poll (printed). */
#include "test_progress.h"

typedef struct {
    wp_ltask_t t;
    atomic_int runs;
    int need;                 /* ONCE: DONE at this run */
    wp_ltask_t *remove_at;    /* remove this task at run `remove_when` */
    int remove_when;
    wp_ltask_t *submit;       /* submit this task at the first run */
} ttask_t;

static wp_task_result_t ttask_fn(void *arg)
{
    ttask_t *x = arg;
    int n = atomic_fetch_add(&x->runs, 1) + 1;
    if (x->remove_at && n == x->remove_when)
        wp_ltask_remove(x->remove_at);
    if (x->submit && n == 1)
        wp_ltask_submit(x->submit);
    if (x->t.kind == WP_TASK_ONCE)
        return n >= x->need ? WP_TASK_DONE : WP_TASK_AGAIN;
    return WP_TASK_AGAIN;
}

static void ttask_init(ttask_t *x, wp_task_kind_t kind, int need)
{
    memset(x, 0, sizeof(*x));
    wp_ltask_init(&x->t, ttask_fn, x, kind, "test");
    x->need = need;
}

/* Enough polls for every queue of the caller's branch to be visited a few times. */
static int poll_n(int n)
{
    int did = 0;
    for (int i = 0; i < n; i++)
        did += wp_poll();
    return did;
}

static int root_ntasks(void)
{
    return __atomic_load_n(&wp_engine_g.queues[0].ntasks, __ATOMIC_RELAXED);
}

static void test_once(void)
{
    ttask_t a;
    ttask_init(&a, WP_TASK_ONCE, 1);
    wp_ltask_submit(&a.t);
    CHECK_EQ("done before any poll", 0, atomic_load(&a.t.done));
    int did = poll_n(64);
    CHECK_EQ("ONCE: runs", 1, atomic_load(&a.runs));
    CHECK_EQ("ONCE: done", 1, atomic_load(&a.t.done));
    CHECK_EQ("ONCE: polls that reported work", 1, did);
    poll_n(64);
    CHECK_EQ("ONCE: runs after more polls", 1, atomic_load(&a.runs));
    CHECK_EQ("ONCE: root queue count", 0, root_ntasks());

    /* again, after done: the submitter owns it */
    wp_ltask_submit(&a.t);
    CHECK_EQ("resubmitted: done reset", 0, atomic_load(&a.t.done));
    poll_n(64);
    CHECK_EQ("resubmitted: runs", 2, atomic_load(&a.runs));
    CHECK_EQ("resubmitted: done", 1, atomic_load(&a.t.done));

    /* AGAIN, AGAIN, DONE */
    ttask_t b;
    ttask_init(&b, WP_TASK_ONCE, 3);
    wp_ltask_submit(&b.t);
    did = poll_n(64);
    CHECK_EQ("ONCE x3: runs", 3, atomic_load(&b.runs));
    CHECK_EQ("ONCE x3: reported work", 1, did);
    CHECK_EQ("ONCE x3: done", 1, atomic_load(&b.t.done));
}

static void test_repeat(void)
{
    ttask_t r;
    ttask_init(&r, WP_TASK_REPEAT, 0);
    wp_ltask_submit(&r.t);
    poll_n(64);
    int n = atomic_load(&r.runs);
    CHECK("REPEAT ran at several polls", n >= 16);
    poll_n(64);
    CHECK("REPEAT keeps running", atomic_load(&r.runs) > n);
    wp_ltask_remove(&r.t);
    n = atomic_load(&r.runs);
    poll_n(64);
    CHECK_EQ("REPEAT: runs after remove", n, atomic_load(&r.runs));
    CHECK_EQ("REPEAT: state after remove", WP_STATE_IDLE, atomic_load(&r.t.state));
    CHECK_EQ("REPEAT: root queue count", 0, root_ntasks());
    wp_ltask_remove(&r.t);   /* not queued: returns at once */

    /* double submission is a no-op: one run per visit of the queue */
    wp_ltask_submit(&r.t);
    wp_ltask_submit(&r.t);
    CHECK_EQ("double submit: root queue count", 1, root_ntasks());
    n = atomic_load(&r.runs);
    poll_n(64);
    int m = atomic_load(&r.runs) - n;
    CHECK("double submit: at most one run per poll", m > 0 && m <= 64);
    wp_ltask_remove(&r.t);
}

static void test_remove_unpolled(void)
{
    /* submitted, never polled: remove drains the submission queue itself */
    ttask_t r, o;
    ttask_init(&r, WP_TASK_REPEAT, 0);
    ttask_init(&o, WP_TASK_ONCE, 1);
    wp_ltask_submit(&r.t);
    wp_ltask_submit(&o.t);
    wp_ltask_remove(&r.t);
    wp_ltask_remove(&o.t);
    CHECK_EQ("removed unpolled REPEAT: runs", 0, atomic_load(&r.runs));
    CHECK_EQ("cancelled ONCE: runs", 0, atomic_load(&o.runs));
    CHECK_EQ("cancelled ONCE: done", 0, atomic_load(&o.t.done));
    CHECK_EQ("removed: root queue count", 0, root_ntasks());
    poll_n(64);
    CHECK_EQ("removed unpolled REPEAT: runs after polls", 0, atomic_load(&r.runs));
    CHECK_EQ("cancelled ONCE: runs after polls", 0, atomic_load(&o.runs));

    /* a ONCE task that keeps returning AGAIN, cancelled after it ran */
    ttask_init(&o, WP_TASK_ONCE, 1000000);
    wp_ltask_submit(&o.t);
    poll_n(8);
    int n = atomic_load(&o.runs);
    CHECK("slow ONCE ran", n > 0);
    wp_ltask_remove(&o.t);
    poll_n(64);
    CHECK_EQ("cancelled slow ONCE: runs after polls", n, atomic_load(&o.runs));
    CHECK_EQ("cancelled slow ONCE: done", 0, atomic_load(&o.t.done));
}

static void test_remove_from_task(void)
{
    /* itself, at its third run */
    ttask_t s;
    ttask_init(&s, WP_TASK_REPEAT, 0);
    s.remove_at = &s.t;
    s.remove_when = 3;
    wp_ltask_submit(&s.t);
    poll_n(64);
    CHECK_EQ("self-removal: runs", 3, atomic_load(&s.runs));
    CHECK_EQ("self-removal: state", WP_STATE_IDLE, atomic_load(&s.t.state));

    /* A removes B, which comes right after A in the queue (the poll's cursor moves on) */
    ttask_t a, b, c;
    ttask_init(&a, WP_TASK_REPEAT, 0);
    ttask_init(&b, WP_TASK_REPEAT, 0);
    ttask_init(&c, WP_TASK_REPEAT, 0);
    a.remove_at = &b.t;
    a.remove_when = 2;
    wp_ltask_submit(&a.t);
    wp_ltask_submit(&b.t);
    wp_ltask_submit(&c.t);
    poll_n(64);
    CHECK_EQ("removed by a task of its queue: runs", 1, atomic_load(&b.runs));
    CHECK_EQ("the task after it still runs", atomic_load(&a.runs), atomic_load(&c.runs));
    CHECK_EQ("root queue count", 2, root_ntasks());
    wp_ltask_remove(&a.t);
    wp_ltask_remove(&c.t);

    /* A removes B, which is still in the submission queue */
    ttask_init(&a, WP_TASK_REPEAT, 0);
    ttask_init(&b, WP_TASK_REPEAT, 0);
    a.remove_at = &b.t;
    wp_ltask_submit(&a.t);
    poll_n(8);
    a.remove_when = atomic_load(&a.runs) + 1;   /* the next run: B is drained in just before */
    wp_ltask_submit(&b.t);
    poll_n(64);
    CHECK_EQ("removed from the submission queue by a task: runs", 0, atomic_load(&b.runs));
    CHECK_EQ("B: state", WP_STATE_IDLE, atomic_load(&b.t.state));
    wp_ltask_remove(&a.t);
    CHECK_EQ("root queue count", 0, root_ntasks());
}

/* X (root) polls from inside its function; that nested poll runs Y (the local queue), which
 * removes Z, a task of the root queue that the outer frame is running. */
static atomic_int inside_x, y_removed;
static ttask_t nest_z;

static wp_task_result_t nest_x_fn(void *arg)
{
    atomic_store(&inside_x, 1);
    for (int i = 0; i < 8; i++)
        wp_poll();
    atomic_store(&inside_x, 0);
    return WP_TASK_DONE;
}

static wp_task_result_t nest_y_fn(void *arg)
{
    if (atomic_load(&inside_x) && !atomic_exchange(&y_removed, 1))
        wp_ltask_remove(&nest_z.t);
    return WP_TASK_AGAIN;
}

static void test_remove_nested(void)
{
    if (wp_engine_queue_count() < 2)
        return;   /* needs a local queue below the root */
    wp_ltask_t x, y;
    ttask_init(&nest_z, WP_TASK_REPEAT, 0);
    wp_ltask_init(&x, nest_x_fn, NULL, WP_TASK_ONCE, "x");
    wp_ltask_init(&y, nest_y_fn, NULL, WP_TASK_REPEAT, "y");
    wp_ltask_submit(&x);
    wp_ltask_submit(&nest_z.t);
    wp_ltask_submit_local(&y);
    poll_n(64);
    CHECK_EQ("nested: Y removed Z", 1, atomic_load(&y_removed));
    CHECK_EQ("nested: X done", 1, atomic_load(&x.done));
    CHECK_EQ("nested: Z state", WP_STATE_IDLE, atomic_load(&nest_z.t.state));
    int n = atomic_load(&nest_z.runs);
    poll_n(64);
    CHECK_EQ("nested: Z runs after removal", n, atomic_load(&nest_z.runs));
    wp_ltask_remove(&y);
    CHECK_EQ("nested: root queue count", 0, root_ntasks());
}

static void test_submit_from_task(void)
{
    ttask_t a, c;
    ttask_init(&a, WP_TASK_ONCE, 1);
    ttask_init(&c, WP_TASK_ONCE, 1);
    a.submit = &c.t;
    wp_ltask_submit(&a.t);
    poll_n(64);
    CHECK_EQ("submitter task: done", 1, atomic_load(&a.t.done));
    CHECK_EQ("task submitted by a task: runs", 1, atomic_load(&c.runs));
    CHECK_EQ("task submitted by a task: done", 1, atomic_load(&c.t.done));
}

static void test_local(void)
{
    ttask_t a;
    ttask_init(&a, WP_TASK_ONCE, 1);
    wp_ltask_submit_local(&a.t);
    wp_queue_t *q = __atomic_load_n(&a.t.queue, __ATOMIC_RELAXED);
    if (wp_engine_queue_count() > 1)
        CHECK("local submission went below the root", q && q->index != 0);
    poll_n(4);
    CHECK_EQ("local ONCE: runs", 1, atomic_load(&a.runs));
    CHECK_EQ("local ONCE: done", 1, atomic_load(&a.t.done));
}

static void test_explicit_off_and_finalize(void)
{
    wp_engine_finalize();
    tp_init(tp_config(false, false, false));
    ttask_t a, r;
    ttask_init(&a, WP_TASK_ONCE, 1);
    ttask_init(&r, WP_TASK_REPEAT, 0);
    wp_ltask_submit(&a.t);
    wp_ltask_submit(&r.t);
    CHECK_EQ("explicit polling off: wp_poll", 0, poll_n(64));
    CHECK_EQ("explicit polling off: runs", 0, atomic_load(&a.runs));
    wp_engine_finalize();   /* drops both */
    CHECK_EQ("dropped at finalize: state", WP_STATE_IDLE, atomic_load(&r.t.state));
    CHECK_EQ("dropped at finalize: done", 0, atomic_load(&a.t.done));
    CHECK_EQ("engine down: wp_poll", 0, wp_poll());
    CHECK_EQ("engine down: queues", 0, wp_engine_queue_count());

    tp_init(tp_config(true, false, false));
    wp_ltask_submit(&a.t);   /* reusable after finalize */
    poll_n(64);
    CHECK_EQ("after re-init: runs", 1, atomic_load(&a.runs));
}

static void bench_empty_poll(void)
{
    const int n = 2000000;
    uint64_t t0 = tp_now_ns();
    poll_n(n);
    uint64_t t1 = tp_now_ns();
    ttask_t r;
    ttask_init(&r, WP_TASK_REPEAT, 0);
    wp_ltask_submit(&r.t);
    poll_n(n);
    uint64_t t2 = tp_now_ns();
    wp_ltask_remove(&r.t);
    printf("wp_poll: %.1f ns with no task, %.1f ns with one REPEAT task (run at %d of %d polls)\n",
           (double)(t1 - t0) / n, (double)(t2 - t1) / n, atomic_load(&r.runs), n);
}

int main(void)
{
    alarm(60);
    tp_init(tp_config(true, false, false));
    printf("%s\n", wp_engine_describe());
    test_once();
    test_repeat();
    test_remove_unpolled();
    test_remove_from_task();
    test_remove_nested();
    test_submit_from_task();
    test_local();
    test_explicit_off_and_finalize();
    bench_empty_poll();
    wp_engine_finalize();
    if (failures) {
        fprintf(stderr, "test_progress_ltask: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_progress_ltask: ok\n");
    return 0;
}
