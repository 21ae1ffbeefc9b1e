/* Schedules of collective operations: see wc_sched.h. */
#include "core/wc_sched.h"
#include "core/wc_core.h"
#include "core/wc_wait.h"
#include "progress/wp_engine.h"
#include "thread/wt_thread.h"
#include "util/wu_compiler.h"
#include "util/wu_config.h"

#include <stdatomic.h>
#include <stddef.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const wc_dtype_t wc_dtype_bytes = { .size = 1, .extent = 1, .contig = true };

/* Finished nonblocking schedules whose task the engine may still be touching. Pushed by tasks
 * (lock-free), taken all at once by wc_sched_create (exchange): no ABA. */
static _Atomic(wc_sched_t *) wc_sched_zombies;
/* Nonblocking schedules abandoned when the process started leaving (wc_quiesce): never freed,
 * since a CTS or FIN for one of their requests may still arrive; linked here so that they stay
 * reachable. Pushed by tasks (lock-free), never taken. */
static _Atomic(wc_sched_t *) wc_sched_abandoned;
static _Atomic long wc_sched_count;

long wc_sched_live(void)
{
    return atomic_load_explicit(&wc_sched_count, memory_order_relaxed);
}

static void wc_sched_free_tmps(wc_sched_t *s)
{
    while (s->tmps) {
        wc_sched_tmp_hdr_t *t = s->tmps;
        s->tmps = t->next;
        free(t);
    }
}

/* One freed schedule kept per thread for the next collective of that thread (a schedule is ~2 KiB:
 * malloc and free were a third of a small collective's cost), with its grown step array and its
 * arena. A thread key's destructor frees it when the thread exits; the key is made once, by
 * whichever thread first caches. */
static WT_TLS wc_sched_t *wc_sched_cached;
static WT_TLS bool wc_sched_cache_armed;
static wt_tls_key_t wc_sched_cache_key;
static _Atomic int wc_sched_cache_key_state;   /* 0 none, 1 being made, 2 ready, 3 failed */

static void wc_sched_release(wc_sched_t *s)
{
    if (s->steps != s->inline_steps)
        free(s->steps);
    free(s->arena);
    free(s);
}

static void wc_sched_cache_dtor(void *unused)
{
    (void)unused;
    if (wc_sched_cached)
        wc_sched_release(wc_sched_cached);
    wc_sched_cached = NULL;
}

static bool wc_sched_cache_arm(void)
{
    if (WU_LIKELY(wc_sched_cache_armed))
        return true;
    int st = atomic_load_explicit(&wc_sched_cache_key_state, memory_order_acquire);
    if (st == 0 && atomic_compare_exchange_strong(&wc_sched_cache_key_state, &st, 1)) {
        st = wt_tls_key_create(&wc_sched_cache_key, wc_sched_cache_dtor) == WU_OK ? 2 : 3;
        atomic_store_explicit(&wc_sched_cache_key_state, st, memory_order_release);
    }
    if (st != 2 || wt_tls_set(wc_sched_cache_key, (void *)1) != WU_OK)
        return false;
    wc_sched_cache_armed = true;
    return true;
}

static void wc_sched_free(wc_sched_t *s)
{
    wc_sched_free_tmps(s);
    atomic_fetch_sub_explicit(&wc_sched_count, 1, memory_order_relaxed);
    if (wc_sched_cached || !wc_sched_cache_arm()) {
        wc_sched_release(s);
        return;
    }
    if (WU_UNLIKELY(s->tmp_bytes > s->arena_cap) && s->tmp_bytes <= WC_SCHED_ARENA_MAX) {
        /* next time, every temporary of a schedule like this one fits */
        free(s->arena);
        s->arena = malloc(s->tmp_bytes);
        s->arena_cap = s->arena ? s->tmp_bytes : 0;
    }
    wc_sched_cached = s;
}

static void wc_sched_list_push(_Atomic(wc_sched_t *) *list, wc_sched_t *s)
{
    wc_sched_t *head = atomic_load_explicit(list, memory_order_relaxed);
    do {
        s->zombie_next = head;
    } while (!atomic_compare_exchange_weak_explicit(list, &head, s, memory_order_release,
                                                    memory_order_relaxed));
}

static void wc_sched_zombie_push(wc_sched_t *s)
{
    wc_sched_list_push(&wc_sched_zombies, s);
}

static void wc_sched_reclaim(void)
{
    wc_sched_t *s = atomic_exchange_explicit(&wc_sched_zombies, NULL, memory_order_acquire);
    while (s) {
        wc_sched_t *next = s->zombie_next;
        if (atomic_load_explicit(&s->task.done, memory_order_acquire))
            wc_sched_free(s);
        else
            wc_sched_zombie_push(s);
        s = next;
    }
}

wc_sched_t *wc_sched_create(wc_ep_t *ep, uint32_t ctx, int tag)
{
    if (WU_UNLIKELY(atomic_load_explicit(&wc_sched_zombies, memory_order_relaxed) != NULL))
        wc_sched_reclaim();
    wc_sched_t *s = wc_sched_cached;
    if (s) {
        wc_sched_cached = NULL;
    } else {
        if (!(s = malloc(sizeof(*s))))
            return NULL;
        s->steps = s->inline_steps;
        s->cap = WC_SCHED_INLINE_STEPS;
        s->arena = NULL;
        s->arena_cap = 0;
    }
    /* only what building and running read before writing: the task is set up at submission */
    s->nsteps = s->next = s->pending = 0;
    s->ep = ep;
    s->ctx = ctx;
    s->tag = tag;
    s->error = WU_OK;
    s->send_mode = WC_SEND_BULK;
    s->persistent = s->task_used = false;
    s->arena_used = s->tmp_bytes = 0;
    s->tmps = NULL;
    atomic_fetch_add_explicit(&wc_sched_count, 1, memory_order_relaxed);
    return s;
}

void wc_sched_discard(wc_sched_t *s)
{
    wc_sched_free(s);
}

wc_sched_step_t *wc_sched_grow(wc_sched_t *s)
{
    int cap = 2 * s->cap;
    wc_sched_step_t *n = malloc(sizeof(*n) * (size_t)cap);
    if (!n) {
        s->error = WU_ERR_NO_MEMORY;
        return NULL;
    }
    memcpy(n, s->steps, sizeof(*n) * (size_t)s->nsteps);
    if (s->steps != s->inline_steps)
        free(s->steps);
    s->steps = n;
    s->cap = cap;
    return n;
}

void *wc_sched_tmp(wc_sched_t *s, size_t bytes)
{
    if (WU_UNLIKELY(s->error != WU_OK))
        return NULL;
    size_t n = (bytes + 15) & ~(size_t)15;
    if (n == 0)
        n = 16;
    s->tmp_bytes += n;
    if (WU_LIKELY(n <= s->arena_cap - s->arena_used)) {
        void *p = s->arena + s->arena_used;
        s->arena_used += n;
        return p;
    }
    wc_sched_tmp_hdr_t *t = malloc(sizeof(*t) + n);
    if (!t) {
        s->error = WU_ERR_NO_MEMORY;
        return NULL;
    }
    t->next = s->tmps;
    s->tmps = t;
    return t + 1;
}

/* ---- running ---- */

/* Copy min(source, destination) packed bytes between two typed buffers. */
static void wc_sched_do_copy(const wc_sched_step_t *st)
{
    const wc_dtype_t *sdt = st->copy.sdt, *ddt = st->copy.ddt;
    uint64_t n = st->copy.scount * sdt->size, dn = st->copy.dcount * ddt->size;
    if (dn < n)
        n = dn;
    if (n == 0)
        return;
    if (sdt->contig && ddt->contig) {
        memmove((char *)st->copy.dst + ddt->contig_off, (const char *)st->copy.src + sdt->contig_off,
                n);
        return;
    }
    wc_dtype_cursor_t sc, dc;
    if (sdt->contig) {
        wc_dtype_cursor_init(&dc, ddt, st->copy.dst, st->copy.dcount);
        wc_dtype_unpack(&dc, (const char *)st->copy.src + sdt->contig_off, n);
        return;
    }
    wc_dtype_cursor_init(&sc, sdt, st->copy.src, st->copy.scount);
    if (ddt->contig) {
        wc_dtype_pack(&sc, (char *)st->copy.dst + ddt->contig_off, n);
        return;
    }
    wc_dtype_cursor_init(&dc, ddt, st->copy.dst, st->copy.dcount);
    char chunk[4096];
    while (n) {
        uint64_t k = n < sizeof(chunk) ? n : sizeof(chunk);
        k = wc_dtype_pack(&sc, chunk, k);
        if (k == 0)
            break;
        wc_dtype_unpack(&dc, chunk, k);
        n -= k;
    }
}

/* Start steps from `next` up to the next fence (consumed) or the end. */
static void wc_sched_start_round(wc_sched_t *s)
{
    s->round_bytes = 0;
    while (s->next < s->nsteps) {
        wc_sched_step_t *st = &s->steps[s->next++];
        wu_status_t rc = WU_OK;
        switch (st->kind) {
        case WC_STEP_SEND:
            s->round_bytes += st->msg.count * st->msg.dt->size;
            rc = wc_isend_dt(s->ep, &st->req, st->msg.buf, st->msg.count, st->msg.dt, st->msg.peer,
                             s->tag, s->ctx, (wc_send_mode_t)s->send_mode);
            break;
        case WC_STEP_RECV:
            s->round_bytes += st->msg.count * st->msg.dt->size;
            rc = wc_irecv_dt(s->ep, &st->req, st->msg.buf, st->msg.count, st->msg.dt, st->msg.peer,
                             s->tag, s->ctx);
            break;
        case WC_STEP_COPY:
            wc_sched_do_copy(st);
            break;
        case WC_STEP_CALL:
            rc = st->call.fn(&st->call.args);
            break;
        case WC_STEP_FENCE:
            return;
        }
        if (WU_UNLIKELY(rc != WU_OK)) {
            wc_sched_fail(s, rc);
            if (st->kind == WC_STEP_SEND || st->kind == WC_STEP_RECV) {
                /* never started: mark it complete so the round can end */
                atomic_store_explicit(&st->req.state, WC_REQ_COMPLETE, memory_order_relaxed);
            }
        }
    }
}

/* Advance as far as possible: true when the last step has completed. Otherwise
 * steps[pending] is a started message that is not complete. */
static bool wc_sched_advance(wc_sched_t *s)
{
    for (;;) {
        while (s->pending < s->next) {
            wc_sched_step_t *st = &s->steps[s->pending];
            if (st->kind == WC_STEP_SEND || st->kind == WC_STEP_RECV) {
                if (!wc_request_is_complete(&st->req))
                    return false;
                if (WU_UNLIKELY(st->req.error != WU_OK))
                    wc_sched_fail(s, (wu_status_t)st->req.error);
            }
            s->pending++;
        }
        if (s->next == s->nsteps)
            return true;
        wc_sched_start_round(s);
    }
}

/* The last step of a nonblocking schedule completed: complete the request (after which it may
 * be gone). */
static void wc_sched_finish(wc_sched_t *s)
{
    if (!s->persistent)
        wc_sched_free_tmps(s);
    s->req->error = s->error;
    wc_request_done(s->req);
}

/* The engine runs a task in one thread at a time, and a started nonblocking schedule is advanced
 * by its task only. */
static wp_task_result_t wc_sched_task(void *arg)
{
    wc_sched_t *s = arg;
    if (WU_UNLIKELY(s->leave_gen != wc_leave_gen_now()) && !wc_request_is_detached(s->req)) {
        /* abandoned (wc_quiesce): no step that reads or writes the application's buffers runs
         * any more, and the request never completes */
        wc_sched_list_push(&wc_sched_abandoned, s);
        return WP_TASK_DONE;
    }
    if (!wc_sched_advance(s))
        return WP_TASK_AGAIN;
    wc_sched_finish(s);
    if (!s->persistent)
        wc_sched_zombie_push(s);   /* freed once the engine has written `done` */
    return WP_TASK_DONE;
}

void wc_sched_start(wc_sched_t *s, wc_request_t *req)
{
    /* a fence at the end waits for nothing that completion does not wait for */
    while (s->nsteps > 0 && s->steps[s->nsteps - 1].kind == WC_STEP_FENCE)
        s->nsteps--;
    s->blocking = (req == NULL);
    s->req = req;
    if (s->blocking)
        return;   /* wc_sched_wait runs it from the first step */
    wc_offer_leave(NULL, false);   /* (below: the receives this start posts) */
    req->error = WU_OK;
    wc_request_reset(req);
    s->leave_gen = wc_leave_gen_now();
    /* A persistent start polls before handing the schedule to the engine: started in a loop, its
     * peers' messages are often on their way, and a schedule done here costs no task. Twice: a
     * poll climbs to the root queue, where the endpoint's task delivers packets, only every
     * other time on a 2-CPU tree (wp_poll_branch), and one poll more per start shifted every
     * later wait of the rank to yield its CPU after the poll that looks at the local queue only:
     * with 4 ranks on 2 CPUs that made Start+Wait of 8 bytes 30-50% slower than the blocking
     * Allreduce (docs/collectives.md, "Persistent collectives"). */
    if (wc_sched_advance(s) ||
        (s->persistent && wp_poll() + wp_poll() > 0 && wc_sched_advance(s))) {
        wc_sched_finish(s);
        if (!s->persistent)
            wc_sched_free(s);
        return;
    }
    /* (read before the submit: from then on the task may finish and free the schedule) */
    wc_ep_t *ep = s->ep;
    bool bulk = s->send_mode == WC_SEND_BULK;
    wp_ltask_init(&s->task, wc_sched_task, s, WP_TASK_ONCE, "coll");
    s->task_used = true;
    wp_ltask_submit(&s->task);
    wc_offer_leave(ep, bulk);   /* the application leaves, and may compute (issue 16 §2) */
}

/* The task of the previous run completed the request and returns DONE at once: the engine's
 * last write, `done`, is a few instructions away (unless its thread was preempted). */
static void wc_sched_task_quiet(wc_sched_t *s)
{
    if (!s->task_used)
        return;
    while (!atomic_load_explicit(&s->task.done, memory_order_acquire))
        wt_thread_yield();
}

void wc_sched_start_persistent(wc_sched_t *s, wc_request_t *req)
{
    wc_sched_task_quiet(s);
    s->persistent = true;
    s->next = s->pending = 0;
    s->error = WU_OK;
    wc_sched_start(s, req);
}

void wc_sched_destroy(wc_sched_t *s)
{
    wc_sched_task_quiet(s);
    wc_sched_free(s);
}

/* Extra spin before a waiter sleeps while a round moves `bytes`: the time a copy of them takes
 * at ~4 GB/s (a peer's single-copy read gives no progress event until its FIN: sleeping through
 * it costs a wake-up per message), at most 1 ms. */
static inline uint64_t wc_sched_spin_extra(uint64_t bytes)
{
    uint64_t ns = bytes / 4;
    return ns < 1000000u ? ns : 1000000u;
}

/* A blocking schedule never enters the engine: its waiter runs every step and, between polls,
 * waits on the step that holds the round back, exactly as wc_wait does for one request (spin,
 * then sleep until it completes, a packet arrives or a time-out). The spin time counts from the
 * last progress, and grows with the bytes of the round. */
wu_status_t wc_sched_wait(wc_sched_t *s)
{
    wc_idle_t idle;
    wc_idle_init(&idle);
    while (!wc_sched_advance(s)) {
        /* until the step holding the round back completes, or a poll did something */
        wc_request_t *req = &s->steps[s->pending].req;
        idle.deadline_ns = 0;
        do {
            if (wp_poll())
                break;
            uint64_t d0 = idle.deadline_ns;
            wc_idle_block(&idle, &req, 1);
            if (!d0 && idle.deadline_ns)
                idle.deadline_ns += wc_sched_spin_extra(s->round_bytes);
        } while (!wc_request_is_complete(req));
    }
    wu_status_t st = s->error;
    wc_sched_free(s);
    return st;
}
