/* Idle threads, the timer thread, and the word they sleep on (contract in wp_threads.h). The sleeps
 * are the threading layer's word waits (a futex under pthreads, a Pth condition under pth). */
#include "progress/wp_threads.h"
#include "util/wu_log.h"

#include <errno.h>
#include <stdatomic.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WP_TIMER_BACKOFF 16     /* the longest period, in periods, while the application polls */
#define WP_TIMER_SLACK_NS 5000   /* the kernel's default 50 us would dwarf a 20 us pause */

typedef struct wp_idle {
    wt_thread_t thread;
    unsigned id;
    unsigned node;          /* its queue: polls the subtree, then climbs */
    bool bind;
    cpu_set_t cpus;
} wp_idle_t;

/* Written by wp_threads_start/stop (the thread running wp_engine_init/finalize) while no engine
 * thread runs, except `stop`, which the engine threads read and also sleep on (wt_word_wait). */
static struct {
    wp_idle_t *idle;
    unsigned nidle;
    bool timer_on;
    wt_thread_t timer;
    unsigned pause_us;
    unsigned timer_us;
    unsigned sleep_max_us;
    uint32_t stop;          /* __atomic */
} wp_thr;

/* ---- clock ----------------------------------------------------------------------------------- */

static uint64_t wp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool wp_stopping(void)
{
    return __atomic_load_n(&wp_thr.stop, __ATOMIC_ACQUIRE) != 0;
}

/* The throttling pause between rounds; interrupted by wp_threads_stop. */
static void wp_pause(unsigned us)
{
    if (us == 0)
        wt_thread_yield();
    else
        wt_word_wait(&wp_thr.stop, 0, (uint64_t)us * 1000u);
}

/* The timer's parking (wp_engine.h, wp_engine_watch_begin). watchers: threads asleep watching
 * every source of work; wp_engine_g.timer_parked: the timer sleeps on seq instead of ticking. It
 * parks only after marking itself parked and then seeing watchers > 0 and no submission; a
 * watcher decrements watchers, then reads the mark; a submitter pushes, then reads it. All of
 * these are seq_cst: either the timer sees the watcher gone (the submission) and does not park,
 * or the other side sees it parked and wakes it. The timer is not one of the engine's sleepers:
 * wp_engine_kick, which every waiter about to sleep calls, stays one load. Not reset by
 * wp_threads_stop: begin and end come in pairs from threads of the application. */
static struct {
    uint32_t watchers;      /* __atomic */
    uint32_t seq;           /* __atomic, futex word: bumped to end the timer's parking */
} WU_ALIGNED(WU_CACHELINE) wp_watch;

static void wp_timer_sleep_end(void);

/* The timer is parked (wp_timer_park) or in a backed-off sleep (wp_timer_mark_backed_off): end
 * either. */
void wp_engine_wake_timer_slow(void)
{
    __atomic_fetch_add(&wp_watch.seq, 1, __ATOMIC_RELEASE);
    wt_word_wake_all(&wp_watch.seq);
    wp_timer_sleep_end();
}

void wp_engine_kick_slow(void)
{
    wu_count(WU_COUNT_KICKS, 1);
    __atomic_fetch_add(&wp_engine_g.kick_seq, 1, __ATOMIC_RELEASE);
    wt_word_wake_all(&wp_engine_g.kick_seq);
}

void wp_engine_watch_begin(void)
{
    __atomic_fetch_add(&wp_watch.watchers, 1, __ATOMIC_SEQ_CST);
}

void wp_engine_watch_end(void)
{
    __atomic_fetch_sub(&wp_watch.watchers, 1, __ATOMIC_SEQ_CST);
    wp_engine_wake_timer();
}

/* ---- polling from a background thread -------------------------------------------------------- */

/* force: poll even a queue that an explicit poller visited (the timer woken for work that only a
 * poll finds, which no application thread is polling for) */
static int wp_queue_poll_background(wp_queue_t *q, wu_counter_t kind, bool force)
{
    if (!wp_queue_has_tasks(q))
        return 0;
    if (__atomic_load_n(&q->explicit_seen, __ATOMIC_RELAXED)) {
        __atomic_store_n(&q->explicit_seen, 0, __ATOMIC_RELAXED);
        if (!force)
            return 0;
    }
    if (!wp_queue_trylock(q))
        return 0;
    bool idle = kind == WU_COUNT_LTASK_IDLE;
    if (idle)
        __atomic_store_n(&q->idle_holds, 1, __ATOMIC_RELAXED);
    int did = wp_queue_run_locked(q);
    if (idle)
        __atomic_store_n(&q->idle_holds, 0, __ATOMIC_RELAXED);
    wp_queue_unlock(q);
    if (did)
        wu_count(kind, (uint64_t)did);
    return did;
}

/* The node's subtree (the queues of the CPUs the thread is bound to), then its ancestors with the
 * same frequency rule as wp_poll. */
static int wp_idle_round(wp_tls_t *tls, unsigned node)
{
    wp_queue_t *qs = wp_engine_g.queues, *q = &qs[node];
    int did = 0;
    for (unsigned i = node; i < q->subtree_end; i++)
        did += wp_queue_poll_background(&qs[i], WU_COUNT_LTASK_IDLE, false);
    for (wp_queue_t *p; (p = q->parent); q = p) {
        if (p->nchildren > 1) {
            if (++tls->climb[p->depth] < p->nchildren)
                break;
            tls->climb[p->depth] = 0;
        }
        did += wp_queue_poll_background(p, WU_COUNT_LTASK_IDLE, false);
    }
    return did;
}

/* A task submitted where this idle thread polls and not yet taken. */
static bool wp_idle_pending(unsigned node)
{
    wp_queue_t *qs = wp_engine_g.queues, *q = &qs[node];
    for (unsigned i = node; i < q->subtree_end; i++)
        if (wp_queue_has_submissions(&qs[i]))
            return true;
    for (q = q->parent; q; q = q->parent)
        if (wp_queue_has_submissions(q))
            return true;
    return false;
}

/* Deep sleep. Returns true if woken by a kick (or something to do showed up), false on timeout.
 * The announcement (sleepers + 1) comes before the last look at the submission queues, and a
 * submitter pushes before it reads sleepers, both seq_cst: one of the two sees the other, so a
 * submission never waits for the timeout. A wp_engine_kick not tied to a submission can be missed
 * by a thread announcing itself at that instant; it then sleeps until the timeout. */
static bool wp_idle_sleep(unsigned node, unsigned us)
{
    uint32_t seq = __atomic_load_n(&wp_engine_g.kick_seq, __ATOMIC_ACQUIRE);
    bool woken = true;
    __atomic_fetch_add(&wp_engine_g.sleepers, 1, __ATOMIC_SEQ_CST);
    if (!wp_idle_pending(node) && !wp_stopping()) {
        wt_word_wait(&wp_engine_g.kick_seq, seq, (uint64_t)us * 1000u);
        woken = __atomic_load_n(&wp_engine_g.kick_seq, __ATOMIC_ACQUIRE) != seq;
    }
    __atomic_fetch_sub(&wp_engine_g.sleepers, 1, __ATOMIC_RELAXED);
    wu_count(WU_COUNT_IDLE_SLEEPS, 1);
    if (woken)
        wu_count(WU_COUNT_IDLE_WAKEUPS, 1);
    return woken;
}

static void *wp_idle_main(void *arg)
{
    wp_idle_t *me = arg;
    if (!WT_BACKEND_ULT) {
        /* Kernel threads only: with user-level threads these would bind, rename and demote the
         * OS thread that runs every thread of the process. */
        char name[16];
        snprintf(name, sizeof(name), "weft-idle%u", me->id);
        pthread_setname_np(pthread_self(), name);
        if (me->bind && sched_setaffinity(0, sizeof(me->cpus), &me->cpus) != 0)
            wu_debug("progress: idle thread %u not bound: %s", me->id, strerror(errno));
        struct sched_param sp = { 0 };
        if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp) != 0)
            (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
        prctl(PR_SET_TIMERSLACK, WP_TIMER_SLACK_NS, 0, 0, 0);
    }

    wp_tls_t *tls = WP_TLS;
    tls->idle_thread = true;
    uint64_t empty_since = 0;
    unsigned sleep_us = WP_IDLE_SLEEP_MIN_US;
    while (!wp_stopping()) {
        wu_count(WU_COUNT_IDLE_POLLS, 1);
        if (wp_idle_round(tls, me->node)) {
            empty_since = 0;
            sleep_us = WP_IDLE_SLEEP_MIN_US;
            wp_pause(wp_thr.pause_us);
            continue;
        }
        uint64_t now = wp_now_ns();
        if (!empty_since)
            empty_since = now;
        if (now - empty_since < WP_IDLE_ACTIVE_NS) {
            wp_pause(wp_thr.pause_us);
            continue;
        }
        if (wp_idle_sleep(me->node, sleep_us)) {
            empty_since = 0;
            sleep_us = WP_IDLE_SLEEP_MIN_US;
        } else if (sleep_us < wp_thr.sleep_max_us) {
            sleep_us = sleep_us * 2 < wp_thr.sleep_max_us ? sleep_us * 2 : wp_thr.sleep_max_us;
        }
    }
    return NULL;
}

/* While a thread sleeps watching every source of work (wp_engine_watch_begin), a tick would find
 * nothing that the watcher would not be woken for, and on a VM each tick costs tens of
 * microseconds of CPU: after a tick that found nothing, the timer sleeps until the watch ends, a
 * submission, a packet queued for room (wp_engine_wake_timer), or WP_TIMER_PARK_MAX_NS. Only
 * after an empty tick: with explicit polling off, a watcher woken by a packet that it cannot take
 * itself sleeps again, and the packet is the timer's. Like an idle thread, it marks itself parked
 * before its last look at the submissions, so a task submitted meanwhile either is seen here or
 * wakes it. (A packet queued for room between the tick's poll and the mark is not seen: it waits
 * for the watcher's wake-up, at most its 10 ms time-out.) Returns true if it slept. */
static bool wp_timer_park(void)
{
    uint32_t seq = __atomic_load_n(&wp_watch.seq, __ATOMIC_ACQUIRE);
    __atomic_store_n(&wp_engine_g.timer_parked, 1, __ATOMIC_SEQ_CST);
    bool park = __atomic_load_n(&wp_watch.watchers, __ATOMIC_SEQ_CST) &&
                !__atomic_load_n(&wp_thr.stop, __ATOMIC_SEQ_CST);
    for (unsigned i = 0; park && i < wp_engine_g.nqueues; i++)
        park = !wp_queue_has_submissions(&wp_engine_g.queues[i]);
    if (park) {
        wu_count(WU_COUNT_TIMER_PARKS, 1);
        wt_word_wait(&wp_watch.seq, seq, WP_TIMER_PARK_MAX_NS);
    }
    __atomic_store_n(&wp_engine_g.timer_parked, 0, __ATOMIC_RELAXED);
    return park;
}

/* The timer's sleep between ticks, and its replacement by the core (wp_engine_set_timer_sleep).
 * seq: the word the engine's own sleep waits on, bumped by the setter and by wp_threads_stop so
 * that a sleep of the old kind (read before the bump) ends. in_sleep is set around a call of the
 * replacement (its prepare and its sleep); the setter stores the new pointer and then waits for
 * in_sleep to clear, both seq_cst, so once it returns no call of the old one is under way. */
static struct {
    const wp_timer_sleep_t *_Atomic ts;
    _Atomic uint32_t in_sleep;
    _Atomic uint32_t waking;   /* threads in wp_timer_sleep_end, which may call a replacement's wake */
    uint32_t seq;   /* __atomic, futex word */
} wp_tsleep;

static void wp_tsleep_bump(void)
{
    __atomic_fetch_add(&wp_tsleep.seq, 1, __ATOMIC_SEQ_CST);
    wt_word_wake_all(&wp_tsleep.seq);
}

void wp_engine_set_timer_sleep(const wp_timer_sleep_t *ts)
{
    const wp_timer_sleep_t *old = atomic_exchange(&wp_tsleep.ts, ts);
    wp_tsleep_bump();   /* a sleep of the engine's own kind ends: the next one is the new kind */
    if (old)
        old->wake();    /* the same for one of the old replacement */
    /* Back to the engine's own: wait for a call of the replacement to return (a call of the new
     * one may run at once when one is set: nothing to wait for then) */
    while (!ts && atomic_load(&wp_tsleep.in_sleep))
        wt_thread_yield();
    /* and for a wp_timer_sleep_end that may have read the old pointer (it counts itself in waking
     * before it reads, both seq_cst): once this returns, nobody calls the old one's wake */
    while (atomic_load(&wp_tsleep.waking))
        wt_thread_yield();
}

/* End the timer's tick sleep now, whichever kind it is (a sleep that has not begun yet ends at once:
 * its token is stale). */
static void wp_timer_sleep_end(void)
{
    atomic_fetch_add(&wp_tsleep.waking, 1);
    const wp_timer_sleep_t *ts = atomic_load(&wp_tsleep.ts);
    if (ts)
        ts->wake();
    else
        wp_tsleep_bump();
    atomic_fetch_sub(&wp_tsleep.waking, 1);
}

bool wp_engine_has_timer(void)
{
    return wp_thr.timer_on;
}

/* Before a tick's poll: what the sleep after it compares with. The replacement that took it is
 * remembered, so that a token is only ever given back to the one that made it. */
typedef struct wp_tsleep_token {
    const wp_timer_sleep_t *ts;
    uint32_t token;
} wp_tsleep_token_t;

static wp_tsleep_token_t wp_timer_prepare(void)
{
    wp_tsleep_token_t t = { NULL, 0 };
    atomic_store(&wp_tsleep.in_sleep, 1);
    t.ts = atomic_load(&wp_tsleep.ts);
    if (t.ts)
        t.token = t.ts->prepare();
    else
        t.token = __atomic_load_n(&wp_tsleep.seq, __ATOMIC_SEQ_CST);
    atomic_store(&wp_tsleep.in_sleep, 0);
    return t;
}

/* Sleep until the absolute deadline, a wake-up (the stop; the replacement's own), or a change of
 * replacement since the token was taken. */
static void wp_timer_sleep(wp_tsleep_token_t t, uint64_t deadline)
{
    atomic_store(&wp_tsleep.in_sleep, 1);
    const wp_timer_sleep_t *ts = atomic_load(&wp_tsleep.ts);
    if (ts && ts == t.ts && !wp_stopping())
        ts->sleep(t.token, deadline);
    atomic_store(&wp_tsleep.in_sleep, 0);
    if (!ts && !t.ts && !wp_stopping())
        wt_word_wait_until(&wp_tsleep.seq, t.token, deadline);
    /* (a replacement set or restored since the token: no sleep, the next token is the new kind) */
}

/* Before a backed-off sleep: mark the timer parked, so that wp_engine_wake_timer (a submission, a
 * packet queued for room, the end of a watch) ends the sleep (wp_engine_wake_timer_slow), then look at
 * the submissions once more (seq_cst on both sides, as in wp_timer_park: a submission either is seen
 * here or sees the mark). Returns false, unmarked, if something was submitted since the tick's poll:
 * then the sleep is not a backed-off one. (A packet queued for room between the poll and the mark is
 * not seen: it waits for the sleep's end, at most WP_TIMER_BACKOFF periods.) */
static bool wp_timer_mark_backed_off(void)
{
    __atomic_store_n(&wp_engine_g.timer_parked, 1, __ATOMIC_SEQ_CST);
    for (unsigned i = 0; i < wp_engine_g.nqueues; i++) {
        if (wp_queue_has_submissions(&wp_engine_g.queues[i])) {
            __atomic_store_n(&wp_engine_g.timer_parked, 0, __ATOMIC_RELAXED);
            return false;
        }
    }
    return true;
}

/* pioman's timer: a thread sleeping to absolute deadlines, which spends little CPU and so keeps
 * the scheduler's favour even on a loaded machine. It walks the whole tree (the paper: "a single
 * timer thread traversing the full tree is a good-enough solution"), so a task submitted to any
 * queue runs even if nothing else polls. */
static void *wp_timer_main(void *arg)
{
    if (!WT_BACKEND_ULT) {   /* kernel threads only, as for the idle threads */
        pthread_setname_np(pthread_self(), "weft-timer");
        (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -5);   /* if allowed */
        prctl(PR_SET_TIMERSLACK, WP_TIMER_SLACK_NS, 0, 0, 0);
    }

    const uint64_t period = (uint64_t)wp_thr.timer_us * 1000u;
    uint64_t cur = period;   /* the period now: longer while the application polls (below) */
    uint64_t next = wp_now_ns();
    wp_tsleep_token_t token = wp_timer_prepare();
    while (!wp_stopping()) {
        uint64_t now = wp_now_ns();
        if (next <= now) {
            next += cur;
            if (next <= now)
                next = now + cur;   /* late (overloaded machine): drop the missed ticks */
        }   /* (else a wake-up ended the last sleep early: the deadline stays) */
        bool backed = cur > period && wp_timer_mark_backed_off();
        wp_timer_sleep(token, next);
        if (backed)
            __atomic_store_n(&wp_engine_g.timer_parked, 0, __ATOMIC_RELAXED);
        if (wp_stopping())
            break;
        /* woken before the deadline: by the core's wake-up for work that only a poll finds (an
         * offer to a computing rank, a submission or a packet queued for room while backed off),
         * which the application's last poll cannot have seen */
        bool woken = wp_now_ns() < next;
        token = wp_timer_prepare();   /* before the poll: work that comes after it ends the sleep */
        int did = 0;
        unsigned busy = 0, polled = 0;
        for (unsigned i = 0; i < wp_engine_g.nqueues; i++) {
            wp_queue_t *q = &wp_engine_g.queues[i];
            if (!wp_queue_has_tasks(q))
                continue;
            busy++;
            polled += __atomic_load_n(&q->explicit_seen, __ATOMIC_RELAXED) != 0;
            /* a tick after a long period polls even a queue the application polled: its mark may
             * be from the application's last poll before it started computing */
            did += wp_queue_poll_background(q, WU_COUNT_LTASK_TIMER, woken || cur > period);
        }
        /* Backing off: a tick that found every queue with tasks polled by the application since the
         * last tick did nothing but take the CPU from it (the timer runs on the application's CPUs,
         * at a higher priority); the next tick comes twice as late, up to WP_TIMER_BACKOFF periods.
         * Any tick that finds work, or was woken for it, brings the period back, and so does one
         * that finds a queue the application did not poll. So once the application stops polling,
         * its first tick comes within WP_TIMER_BACKOFF periods, or at once after a wake-up. */
        if (!woken && !did && busy && polled == busy) {
            cur = cur * 2 <= period * WP_TIMER_BACKOFF ? cur * 2 : period * WP_TIMER_BACKOFF;
        } else {
            if (woken && cur > period)
                next = wp_now_ns() + period;   /* not the backed-off deadline */
            cur = period;
        }
        if (did)
            wp_engine_kick();   /* traffic: let sleeping idle threads take over */
        else if (__atomic_load_n(&wp_watch.watchers, __ATOMIC_SEQ_CST) && wp_timer_park()) {
            next = wp_now_ns() + period;   /* the period restarts when the watch ends */
            cur = period;
        }
    }
    return NULL;
}

/* ---- start and stop -------------------------------------------------------------------------- */

wu_status_t wp_threads_start(const wp_engine_config_t *cfg, const wp_topo_t *topo,
                             unsigned idle_level)
{
    wu_status_t st = WU_OK;
    sigset_t all, old;

    memset(&wp_thr, 0, sizeof(wp_thr));
    wp_thr.pause_us = cfg->idle_pause_us;
    wp_thr.timer_us = cfg->timer_period_us;
    wp_thr.sleep_max_us = cfg->timer_thread ? WP_IDLE_SLEEP_MAX_US : cfg->timer_period_us;
    if (wp_thr.sleep_max_us < WP_IDLE_SLEEP_MIN_US)
        wp_thr.sleep_max_us = WP_IDLE_SLEEP_MIN_US;

    /* The engine's threads take no signals: the application's handlers run in its own threads. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);

    if (cfg->idle_threads) {
        unsigned *nodes = calloc(topo->nnodes, sizeof(*nodes));
        unsigned used;
        if (!nodes) {
            st = WU_ERR_NO_MEMORY;
            goto err_mask;
        }
        unsigned n = wp_topo_level_nodes(topo, idle_level, nodes, &used);
        wp_thr.idle = calloc(n, sizeof(*wp_thr.idle));
        if (!wp_thr.idle) {
            free(nodes);
            st = WU_ERR_NO_MEMORY;
            goto err_mask;
        }
        for (unsigned i = 0; i < n; i++) {
            wp_idle_t *w = &wp_thr.idle[i];
            w->id = i;
            w->node = nodes[i];
            w->cpus = topo->nodes[nodes[i]].cpus;
            w->bind = !topo->synthetic;
            if ((st = wt_thread_create(&w->thread, wp_idle_main, w)) != WU_OK)
                break;
            wp_thr.nidle++;
        }
        free(nodes);
        if (st != WU_OK)
            goto err_threads;
    }
    if (cfg->timer_thread) {
        if ((st = wt_thread_create(&wp_thr.timer, wp_timer_main, NULL)) != WU_OK)
            goto err_threads;
        wp_thr.timer_on = true;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return WU_OK;

err_threads:
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    wp_threads_stop();
    return st;
err_mask:
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    wu_log_error("progress: no memory for the idle threads");
    return st;
}

void wp_threads_stop(void)
{
    __atomic_store_n(&wp_thr.stop, 1, __ATOMIC_SEQ_CST);
    wt_word_wake_all(&wp_thr.stop);
    wp_tsleep_bump();   /* the timer's own sleep */
    const wp_timer_sleep_t *ts = atomic_load(&wp_tsleep.ts);
    if (ts)
        ts->wake();   /* a timer in the core's sleep (the sleep looks at stop before it starts) */
    wp_engine_kick_slow();
    wp_engine_wake_timer_slow();   /* a parked timer */
    for (unsigned i = 0; i < wp_thr.nidle; i++)
        wt_thread_join(wp_thr.idle[i].thread);
    if (wp_thr.timer_on)
        wt_thread_join(wp_thr.timer);
    free(wp_thr.idle);
    memset(&wp_thr, 0, sizeof(wp_thr));
}

bool wp_threads_running(void)
{
    return wp_thr.nidle || wp_thr.timer_on;
}

unsigned wp_threads_idle_count(void)
{
    return wp_thr.nidle;
}
