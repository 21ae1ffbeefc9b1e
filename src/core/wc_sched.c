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

typedef enum {
    WC_STEP_SEND = 1,
    WC_STEP_RECV,
    WC_STEP_COPY,
    WC_STEP_CALL,
    WC_STEP_FENCE,
} wc_step_kind_t;

typedef struct wc_sched_step {
    uint8_t kind;
    union {
        struct {                       /* SEND, RECV */
            void *buf;
            uint64_t count;
            const wc_dtype_t *dt;
            int peer;
        } msg;
        struct {                       /* COPY */
            const void *src;
            uint64_t scount;
            const wc_dtype_t *sdt;
            void *dst;
            uint64_t dcount;
            const wc_dtype_t *ddt;
        } copy;
        struct {                       /* CALL */
            wc_sched_fn_t fn;
            wc_sched_args_t args;
        } call;
    };
    wc_request_t req;                  /* SEND, RECV: the core's request, once started */
} wc_sched_step_t;

#define WC_SCHED_INLINE_STEPS 6

typedef struct wc_sched_tmp_hdr {
    struct wc_sched_tmp_hdr *next;
    uint64_t pad;                      /* the data is 16-byte aligned */
} wc_sched_tmp_hdr_t;

struct wc_sched {
    wp_ltask_t task;                   /* first: the engine's; `done` is its last write */
    wc_request_t *req;                 /* completed when the schedule is done */
    wc_request_t own_req;              /* blocking schedules: req points here */
    uint32_t ctx;
    int tag;
    wc_sched_step_t *steps;
    int nsteps, cap;
    /* advancing state: written by the advancing thread only (under busy) */
    int next;                          /* next step to start */
    int pending;                       /* first started step that may not be complete */
    int round;                         /* fences passed */
    uint64_t round_bytes;              /* bytes the messages of the current round move */
    wu_status_t error;                 /* building, then the first failed step's */
    uint8_t send_mode;                 /* of every send step (wc_send_mode_t) */
    bool blocking;
    bool finished;                     /* the request was completed */
    bool submitted;                    /* the task is (or was) in the engine */
    _Atomic int busy;                  /* held by the thread advancing the schedule */
    wc_sched_tmp_hdr_t *tmps;
    struct wc_sched *zombie_next;
    wc_sched_step_t inline_steps[WC_SCHED_INLINE_STEPS];   /* small schedules: no second malloc */
};

/* Finished nonblocking schedules whose task the engine may still be touching. Pushed by tasks
 * (lock-free), taken all at once by wc_sched_create (exchange): no ABA. */
static _Atomic(wc_sched_t *) wc_sched_zombies;
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
 * malloc and free were a third of a small collective's cost). A thread key's destructor frees it
 * when the thread exits; the key is made once, by whichever thread first caches. */
static WT_TLS wc_sched_t *wc_sched_cached;
static WT_TLS bool wc_sched_cache_armed;
static wt_tls_key_t wc_sched_cache_key;
static _Atomic int wc_sched_cache_key_state;   /* 0 none, 1 being made, 2 ready, 3 failed */

static void wc_sched_cache_dtor(void *unused)
{
    (void)unused;
    free(wc_sched_cached);
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
    if (s->steps != s->inline_steps)
        free(s->steps);
    atomic_fetch_sub_explicit(&wc_sched_count, 1, memory_order_relaxed);
    if (!wc_sched_cached && wc_sched_cache_arm()) {
        wc_sched_cached = s;
        return;
    }
    free(s);
}

static void wc_sched_zombie_push(wc_sched_t *s)
{
    wc_sched_t *head = atomic_load_explicit(&wc_sched_zombies, memory_order_relaxed);
    do {
        s->zombie_next = head;
    } while (!atomic_compare_exchange_weak_explicit(&wc_sched_zombies, &head, s,
                                                    memory_order_release, memory_order_relaxed));
}

static void wc_sched_reclaim(void)
{
    if (!atomic_load_explicit(&wc_sched_zombies, memory_order_relaxed))
        return;
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

wc_sched_t *wc_sched_create(uint32_t ctx, int tag)
{
    wc_sched_reclaim();
    wc_sched_t *s = wc_sched_cached;
    if (s)
        wc_sched_cached = NULL;
    else if (!(s = malloc(sizeof(*s))))
        return NULL;
    memset(s, 0, offsetof(wc_sched_t, inline_steps));
    s->steps = s->inline_steps;
    s->cap = WC_SCHED_INLINE_STEPS;
    atomic_fetch_add_explicit(&wc_sched_count, 1, memory_order_relaxed);
    s->ctx = ctx;
    s->tag = tag;
    s->error = WU_OK;
    s->send_mode = WC_SEND_BULK;
    return s;
}

void wc_sched_discard(wc_sched_t *s)
{
    wc_sched_free(s);
}

wu_status_t wc_sched_error(const wc_sched_t *s)
{
    return s->error;
}

int wc_sched_nsteps(const wc_sched_t *s)
{
    return s->nsteps;
}

static wc_sched_step_t *wc_sched_add(wc_sched_t *s, wc_step_kind_t kind)
{
    if (WU_UNLIKELY(s->error != WU_OK))
        return NULL;
    if (s->nsteps == s->cap) {
        int cap = s->cap ? 2 * s->cap : 8;
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
    }
    wc_sched_step_t *st = &s->steps[s->nsteps++];
    st->kind = (uint8_t)kind;
    return st;
}

void wc_sched_send(wc_sched_t *s, const void *buf, uint64_t count, const wc_dtype_t *dt, int dst)
{
    wc_sched_step_t *st = wc_sched_add(s, WC_STEP_SEND);
    if (st)
        st->msg.buf = (void *)buf, st->msg.count = count, st->msg.dt = dt, st->msg.peer = dst;
}

void wc_sched_recv(wc_sched_t *s, void *buf, uint64_t count, const wc_dtype_t *dt, int src)
{
    wc_sched_step_t *st = wc_sched_add(s, WC_STEP_RECV);
    if (st)
        st->msg.buf = buf, st->msg.count = count, st->msg.dt = dt, st->msg.peer = src;
}

void wc_sched_copy(wc_sched_t *s, const void *src, uint64_t scount, const wc_dtype_t *sdt,
                   void *dst, uint64_t dcount, const wc_dtype_t *ddt)
{
    wc_sched_step_t *st = wc_sched_add(s, WC_STEP_COPY);
    if (st)
        st->copy.src = src, st->copy.scount = scount, st->copy.sdt = sdt, st->copy.dst = dst,
        st->copy.dcount = dcount, st->copy.ddt = ddt;
}

void wc_sched_call(wc_sched_t *s, wc_sched_fn_t fn, const wc_sched_args_t *args)
{
    wc_sched_step_t *st = wc_sched_add(s, WC_STEP_CALL);
    if (st)
        st->call.fn = fn, st->call.args = *args;
}

void wc_sched_send_mode(wc_sched_t *s, wc_send_mode_t mode)
{
    s->send_mode = (uint8_t)mode;
}

void wc_sched_fence(wc_sched_t *s)
{
    /* A fence right after another one (or first) is a no-op: no empty rounds. */
    if (s->nsteps == 0 || s->steps[s->nsteps - 1].kind == WC_STEP_FENCE)
        return;
    wc_sched_add(s, WC_STEP_FENCE);
}

void *wc_sched_tmp(wc_sched_t *s, size_t bytes)
{
    if (WU_UNLIKELY(s->error != WU_OK))
        return NULL;
    wc_sched_tmp_hdr_t *t = malloc(sizeof(*t) + (bytes ? bytes : 1));
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

static void wc_sched_fail(wc_sched_t *s, wu_status_t st)
{
    if (s->error == WU_OK && st != WU_OK)
        s->error = st;
}

/* Start steps from `next` up to the next fence (consumed) or the end. */
static void wc_sched_start_round(wc_sched_t *s)
{
    s->round_bytes = 0;
    while (s->next < s->nsteps) {
        wc_sched_step_t *st = &s->steps[s->next++];
        wu_status_t rc = WU_OK;
        if (st->kind == WC_STEP_SEND || st->kind == WC_STEP_RECV)
            s->round_bytes += st->msg.count * st->msg.dt->size;
        switch (st->kind) {
        case WC_STEP_SEND:
            rc = wc_isend_dt(&st->req, st->msg.buf, st->msg.count, st->msg.dt, st->msg.peer,
                             s->tag, s->ctx, (wc_send_mode_t)s->send_mode);
            break;
        case WC_STEP_RECV:
            rc = wc_irecv_dt(&st->req, st->msg.buf, st->msg.count, st->msg.dt, st->msg.peer,
                             s->tag, s->ctx);
            break;
        case WC_STEP_COPY:
            wc_sched_do_copy(st);
            break;
        case WC_STEP_CALL:
            rc = st->call.fn(&st->call.args);
            break;
        case WC_STEP_FENCE:
            s->round++;
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

typedef enum { WC_ADV_NONE, WC_ADV_PROGRESS, WC_ADV_DONE } wc_adv_t;

/* Advance as far as possible: the caller holds `busy`. */
static wc_adv_t wc_sched_advance(wc_sched_t *s)
{
    wc_adv_t did = WC_ADV_NONE;
    for (;;) {
        while (s->pending < s->next) {
            wc_sched_step_t *st = &s->steps[s->pending];
            if (st->kind == WC_STEP_SEND || st->kind == WC_STEP_RECV) {
                if (!wc_request_is_complete(&st->req))
                    return did;
                if (WU_UNLIKELY(st->req.error != WU_OK))
                    wc_sched_fail(s, (wu_status_t)st->req.error);
            }
            s->pending++;
        }
        if (s->next == s->nsteps)
            return WC_ADV_DONE;
        wc_sched_start_round(s);
        did = WC_ADV_PROGRESS;
    }
}

/* The last step completed: complete the request. After wc_request_done the request may be gone. */
static void wc_sched_finish(wc_sched_t *s)
{
    s->finished = true;
    if (!s->blocking)
        wc_sched_free_tmps(s);
    s->req->error = s->error;
    wc_request_done(s->req);
}

static inline bool wc_sched_trylock(wc_sched_t *s)
{
    return !atomic_load_explicit(&s->busy, memory_order_relaxed) &&
           !atomic_exchange_explicit(&s->busy, 1, memory_order_acquire);
}

static inline void wc_sched_unlock(wc_sched_t *s)
{
    atomic_store_explicit(&s->busy, 0, memory_order_release);
}

static wp_task_result_t wc_sched_task(void *arg)
{
    wc_sched_t *s = arg;
    if (!wc_sched_trylock(s))
        return WP_TASK_AGAIN;
    if (s->finished) {
        wc_sched_unlock(s);
        return WP_TASK_DONE;
    }
    wc_adv_t a = wc_sched_advance(s);
    if (a != WC_ADV_DONE) {
        wc_sched_unlock(s);
        return WP_TASK_AGAIN;
    }
    bool blocking = s->blocking;
    wc_sched_finish(s);
    wc_sched_unlock(s);
    if (!blocking)
        wc_sched_zombie_push(s);   /* freed once the engine has written `done` */
    return WP_TASK_DONE;
}

void wc_sched_start(wc_sched_t *s, wc_request_t *req)
{
    s->blocking = (req == NULL);
    s->req = req ? req : &s->own_req;
    s->req->error = WU_OK;
    wc_request_reset(s->req);
    wp_ltask_init(&s->task, wc_sched_task, s, WP_TASK_ONCE, "coll");
    if (wc_sched_advance(s) == WC_ADV_DONE) {
        bool blocking = s->blocking;
        wc_sched_finish(s);
        if (!blocking)
            wc_sched_free(s);
        return;
    }
    /* A blocking schedule is advanced by its waiter, which hands it to the engine only before it
     * may sleep (wc_sched_wait): a short collective never touches the engine's queues. */
    if (!s->blocking) {
        s->submitted = true;
        wp_ltask_submit(&s->task);
    }
}

/* More ranks than CPUs on the machine: a rank waiting in a collective hands its core over rather
 * than spin, since the rank it waits for may be the one that needs it. */
static bool wc_sched_oversubscribed(void)
{
    /* computed by the first waiter; threads racing to compute it store the same value */
    static _Atomic int cached = -1;
    int over = atomic_load_explicit(&cached, memory_order_relaxed);
    if (WU_UNLIKELY(over < 0)) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        const char *v = wu_config_str(WU_CONFIG_COLL_YIELD);   /* auto, or 0 / 1 force it */
        over = strcmp(v, "auto") ? atoi(v) != 0 : ncpu > 0 && wc_world.size > ncpu;
        atomic_store_explicit(&cached, over, memory_order_relaxed);
    }
    return over;
}

/* Extra spin before a waiter sleeps while a round moves `bytes`: the time a copy of them takes
 * at ~4 GB/s (a peer's single-copy read gives no progress event until its FIN: sleeping through
 * it costs a wake-up per message), at most 1 ms. */
static inline uint64_t wc_sched_spin_extra(uint64_t bytes)
{
    uint64_t ns = bytes / 4;
    return ns < 1000000u ? ns : 1000000u;
}

wu_status_t wc_sched_wait(wc_sched_t *s)
{
    wc_idle_t idle;
    wc_idle_init(&idle);
    wc_request_t *req = s->req;
    uint64_t bytes = 0;
    while (!wc_request_is_complete(req)) {
        if (wc_sched_trylock(s)) {
            wc_adv_t a = s->finished ? WC_ADV_NONE : wc_sched_advance(s);
            if (a == WC_ADV_DONE)
                wc_sched_finish(s);
            bytes = s->round_bytes;
            wc_sched_unlock(s);
            if (a != WC_ADV_NONE) {
                idle.deadline_ns = 0;   /* the spin time counts from the last progress */
                continue;
            }
        }
        if (wp_poll()) {
            idle.deadline_ns = 0;
            continue;
        }
        if (WU_UNLIKELY(!s->submitted) && (idle.polls & 63) == 63) {
            /* the next idle step may sleep: from now on the engine advances it too */
            s->submitted = true;
            wp_ltask_submit(&s->task);
        }
        if (wc_sched_oversubscribed())
            sched_yield();   /* the peer we wait for may be waiting for this core */
        uint64_t d0 = idle.deadline_ns;
        wc_idle_block(&idle, &req, 1);
        if (!d0 && idle.deadline_ns)
            idle.deadline_ns += wc_sched_spin_extra(bytes);
    }
    if (s->submitted)
        wp_ltask_remove(&s->task);
    wu_status_t st = s->error;
    wc_sched_free(s);
    return st;
}
