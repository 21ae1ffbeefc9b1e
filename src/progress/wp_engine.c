/* The engine: configuration, start-up and shutdown, the task calls, the location cache.
 * Contracts in wp_engine.h and wp_ltask.h; the queues in wp_queue.c, the tree in wp_topology.c,
 * the threads in wp_threads.c; the design in docs/progress.md. */
#include "progress/wp_engine.h"
#include "thread/wt_thread.h"
#include "progress/wp_threads.h"
#include "progress/wp_topology.h"
#include "util/wu_config.h"
#include "util/wu_log.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

wp_engine_state_t wp_engine_g;
WT_LOCAL(, wp_tls_t, wp_tls);

/* Written by wp_engine_init/finalize only. */
static struct {
    wp_topo_t topo;
    char describe[1024];
} wp_eng;

void wp_engine_config_from_env(wp_engine_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->explicit_poll = wu_config_int(WU_CONFIG_PROGRESS_EXPLICIT) != 0;
    cfg->idle_threads = wu_config_int(WU_CONFIG_PROGRESS_IDLE) != 0;
    cfg->idle_level = wu_config_str(WU_CONFIG_PROGRESS_IDLE_LEVEL);
    long pause = wu_config_int(WU_CONFIG_PROGRESS_IDLE_US);
    cfg->idle_pause_us = pause < 0 ? 0 : pause > 1000000 ? 1000000 : (unsigned)pause;
    cfg->timer_thread = wu_config_int(WU_CONFIG_PROGRESS_TIMER) != 0;
    long period = wu_config_int(WU_CONFIG_PROGRESS_TIMER_US);
    cfg->timer_period_us = period < 10 ? 10 : period > 10000000 ? 10000000 : (unsigned)period;
}

static void wp_engine_describe_build(const wp_engine_config_t *cfg, unsigned level)
{
    char tree[512], idle[160] = "idle: off", timer[48] = "timer: off";
    wp_topo_format(&wp_eng.topo, tree, sizeof(tree));
    if (cfg->idle_threads) {
        unsigned n = wp_threads_idle_count(), used = level;
        unsigned *nodes = calloc(wp_eng.topo.nnodes, sizeof(*nodes));
        if (nodes)
            wp_topo_level_nodes(&wp_eng.topo, level, nodes, &used);
        free(nodes);
        snprintf(idle, sizeof(idle), "idle: %u thread%s, one per %s%s%s%s, SCHED_IDLE, pause %u us",
                 n, n == 1 ? "" : "s", wp_topo_level_name(used), used != level ? " (asked " : "",
                 used != level ? wp_topo_level_name(level) : "", used != level ? ")" : "",
                 cfg->idle_pause_us);
    }
    if (cfg->timer_thread)
        snprintf(timer, sizeof(timer), "timer: every %u us", cfg->timer_period_us);
    snprintf(wp_eng.describe, sizeof(wp_eng.describe),
             "tree %s (%u queue%s%s); %s; %s; explicit polling: %s", tree, wp_engine_g.nqueues,
             wp_engine_g.nqueues > 1 ? "s" : "",
             !wp_eng.topo.hwloc ? ", no hwloc" : wp_eng.topo.synthetic ? ", synthetic" : "", idle,
             timer, cfg->explicit_poll ? "on" : "off");
}

wu_status_t wp_engine_init(const wp_engine_config_t *cfg)
{
    wu_status_t st;

    /* Engine threads poll alongside the application: every lock must be real. */
    if (cfg->idle_threads || cfg->timer_thread)
        wt_thread_set_multi(true);
    if (wp_engine_g.up) {
        wu_log_error("progress: engine initialized twice");
        return WU_ERR_INVALID;
    }
    if ((st = wp_topo_build(&wp_eng.topo)) != WU_OK)
        return st;

    unsigned n = wp_eng.topo.nnodes;
    wp_queue_t *qs = aligned_alloc(WU_CACHELINE, n * sizeof(*qs));
    if (!qs) {
        wu_log_error("progress: no memory for %u queues", n);
        st = WU_ERR_NO_MEMORY;
        goto err_topo;
    }
    for (unsigned i = 0; i < n; i++) {
        const wp_topo_node_t *node = &wp_eng.topo.nodes[i];
        wp_queue_init(&qs[i]);
        qs[i].parent = node->parent >= 0 ? &qs[node->parent] : NULL;
        qs[i].nchildren = node->nchildren;
        qs[i].depth = node->depth < WP_MAX_DEPTH ? node->depth : WP_MAX_DEPTH - 1;
        qs[i].index = i;
        qs[i].subtree_end = node->subtree_end;
    }
    wp_engine_g.queues = qs;
    wp_engine_g.nqueues = n;
    wp_engine_g.cpu_queue = wp_eng.topo.cpu_node;
    wp_engine_g.ncpus = wp_eng.topo.ncpus;
    wp_engine_g.gen++;
    wp_engine_g.up = true;

    wp_engine_config_t c = *cfg;
    if (c.timer_period_us < 10)
        c.timer_period_us = 10;
    unsigned level = wp_topo_level_parse(c.idle_level);
    if ((c.idle_threads || c.timer_thread) && (st = wp_threads_start(&c, &wp_eng.topo, level)) != WU_OK)
        goto err_queues;
    /* last: explicit pollers may start now */
    wp_engine_g.explicit_poll = c.explicit_poll;
    wp_engine_describe_build(&c, level);
    wu_debug("progress: %s", wp_eng.describe);
    return WU_OK;

err_queues:
    wp_engine_g.up = false;
    wp_engine_g.queues = NULL;
    wp_engine_g.nqueues = 0;
    free(qs);
err_topo:
    wp_topo_free(&wp_eng.topo);
    return st;
}

void wp_engine_finalize(void)
{
    if (!wp_engine_g.up)
        return;
    wp_engine_g.explicit_poll = false;
    wp_threads_stop();
    for (unsigned i = 0; i < wp_engine_g.nqueues; i++) {
        wp_queue_t *q = &wp_engine_g.queues[i];
        if (wp_queue_trylock(q)) {   /* nobody polls any more: always free */
            wp_queue_drop_all_locked(q);
            wp_queue_unlock(q);
        }
    }
    free(wp_engine_g.queues);
    wp_engine_g.queues = NULL;
    wp_engine_g.nqueues = 0;
    wp_engine_g.cpu_queue = NULL;
    wp_engine_g.ncpus = 0;
    wp_engine_g.up = false;
    wp_topo_free(&wp_eng.topo);
    snprintf(wp_eng.describe, sizeof(wp_eng.describe), "engine down");
}

wu_status_t wp_engine_start_timer(void)
{
    if (!wp_engine_g.up || wp_threads_running())
        return WU_OK;
    wp_engine_config_t c;
    wp_engine_config_from_env(&c);
    if (!c.timer_thread)
        return WU_OK;
    c.idle_threads = false;
    if (c.timer_period_us < 10)
        c.timer_period_us = 10;
    wt_thread_set_multi(true);   /* the timer polls alongside the application from now on */
    wu_status_t st = wp_threads_start(&c, &wp_eng.topo, 0);
    if (st == WU_OK) {
        char *e = wp_eng.describe + strlen(wp_eng.describe);
        snprintf(e, sizeof(wp_eng.describe) - (size_t)(e - wp_eng.describe),
                 "; timer started late: every %u us", c.timer_period_us);
        wu_debug("progress: %s", wp_eng.describe);
    }
    return st;
}

void wp_engine_stop_threads(void)
{
    if (wp_engine_g.up)
        wp_threads_stop();   /* idempotent: the threads are forgotten once joined */
}

/* ---- location cache ----------------------------------------------------------------------------- */

wp_queue_t *wp_tls_refresh(wp_tls_t *tls)
{
    if (tls->gen != wp_engine_g.gen) {
        memset(tls->climb, 0, sizeof(tls->climb));
        tls->gen = wp_engine_g.gen;
    }
    tls->countdown = WP_LOCATION_REFRESH;
    int cpu = sched_getcpu();
    int i = cpu >= 0 && cpu < wp_engine_g.ncpus ? wp_engine_g.cpu_queue[cpu] : 0;
    return tls->local = &wp_engine_g.queues[i];
}

/* ---- tasks ------------------------------------------------------------------------------------ */

/* This thread runs q's tasks (in this frame or an outer one): it owns q. Only this thread stores
 * its own address there, so reading it back is exact. */
static bool wp_queue_runs_here(wp_queue_t *q)
{
    return __atomic_load_n(&q->runner, __ATOMIC_RELAXED) == WP_TLS;
}

/* The engine's last write to a FINISHED task is `done`; it follows the state at once. */
static void wp_ltask_wait_done(wp_ltask_t *t)
{
    for (unsigned spins = 0; !atomic_load_explicit(&t->done, memory_order_acquire); spins++) {
        if (spins < 128)
            wu_cpu_relax();
        else
            wt_thread_yield();
    }
}

static void wp_ltask_submit_to(wp_queue_t *q, wp_ltask_t *t)
{
    int s = atomic_load_explicit(&t->state, memory_order_acquire);
    for (;;) {
        if (s == WP_STATE_FINISHED)
            wp_ltask_wait_done(t);
        else if (s != WP_STATE_IDLE)
            return;   /* still in a queue */
        if (atomic_compare_exchange_weak_explicit(&t->state, &s, WP_STATE_SUBMITTED,
                                                  memory_order_acq_rel, memory_order_acquire))
            break;
    }
    atomic_store_explicit(&t->done, 0, memory_order_relaxed);
    __atomic_store_n(&t->queue, q, __ATOMIC_RELEASE);
    wp_queue_push(q, t);
    wp_engine_kick();
    wp_engine_wake_timer();
}

void wp_ltask_submit(wp_ltask_t *t)
{
    if (WU_UNLIKELY(!wp_engine_g.up)) {
        wu_log_error("progress: task %s submitted while the engine is down", t->name ? t->name : "?");
        return;
    }
    wp_ltask_submit_to(&wp_engine_g.queues[0], t);
}

void wp_ltask_submit_local(wp_ltask_t *t)
{
    if (WU_UNLIKELY(!wp_engine_g.up)) {
        wu_log_error("progress: task %s submitted while the engine is down", t->name ? t->name : "?");
        return;
    }
    wp_ltask_submit_to(wp_tls_location(WP_TLS), t);
}

void wp_ltask_submit_at(wp_ltask_t *t, int queue)
{
    if (WU_UNLIKELY(!wp_engine_g.up)) {
        wu_log_error("progress: task %s submitted while the engine is down", t->name ? t->name : "?");
        return;
    }
    if (queue < 0 || (unsigned)queue >= wp_engine_g.nqueues)
        queue = 0;
    wp_ltask_submit_to(&wp_engine_g.queues[queue], t);
}

void wp_ltask_remove(wp_ltask_t *t)
{
    int s = atomic_load_explicit(&t->state, memory_order_acquire);
    for (;;) {
        if (s == WP_STATE_IDLE)
            return;
        if (s == WP_STATE_FINISHED) {
            wp_ltask_wait_done(t);
            return;
        }
        if (s == WP_STATE_REMOVING)
            break;   /* another remover: wait with it */
        if (atomic_compare_exchange_weak_explicit(&t->state, &s, WP_STATE_REMOVING,
                                                  memory_order_acq_rel, memory_order_acquire))
            break;
    }
    wp_queue_t *q = __atomic_load_n(&t->queue, __ATOMIC_ACQUIRE);
    if (q && wp_queue_runs_here(q) && q->running == t)
        return;   /* from its own function: it leaves when the function returns */
    /* Whoever owns the task's queue drops it. Become that owner if the queue is free, so that
     * removal finishes even when nothing else polls; if this thread already owns it (a task of
     * that queue, or a task polled from inside one, removing this one), do it in place. */
    for (unsigned spins = 0; (s = atomic_load_explicit(&t->state, memory_order_acquire)) ==
                             WP_STATE_REMOVING; spins++) {
        q = __atomic_load_n(&t->queue, __ATOMIC_ACQUIRE);
        if (q && wp_queue_runs_here(q)) {
            wp_queue_service_locked(q);
        } else if (q && wp_queue_trylock(q)) {
            wp_queue_service_locked(q);
            wp_queue_unlock(q);
        }
        if (atomic_load_explicit(&t->state, memory_order_acquire) != WP_STATE_REMOVING)
            continue;
        if (spins < 64)
            wu_cpu_relax();
        else
            wt_thread_yield();
    }
    if (s == WP_STATE_FINISHED)
        wp_ltask_wait_done(t);
}

void wp_engine_sync(void)
{
    for (unsigned i = 0; wp_engine_g.up && i < wp_engine_g.nqueues; i++) {
        wp_queue_t *q = &wp_engine_g.queues[i];
        if (wp_queue_runs_here(q))
            continue;
        for (unsigned spins = 0; !wp_queue_trylock(q); spins++) {
            if (spins < 64)
                wu_cpu_relax();
            else
                wt_thread_yield();   /* a SCHED_IDLE holder may need this core */
        }
        wp_queue_unlock(q);
    }
}

/* ---- description ------------------------------------------------------------------------------ */

int wp_engine_queue_count(void)
{
    return (int)wp_engine_g.nqueues;
}

const char *wp_engine_describe(void)
{
    if (!wp_engine_g.up)
        return "engine down";
    return wp_eng.describe;
}
