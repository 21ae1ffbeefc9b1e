/* Schedules, the inline part: the layout of a schedule and the building calls, which every
 * builder makes once per step of every collective (a call across files cost as much as the step).
 * Included by wc_sched.h only; the contract is there. */
#ifndef WC_SCHED_INL_H
#define WC_SCHED_INL_H

#include "progress/wp_ltask.h"
#include "util/wu_compiler.h"

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

/* Temporaries of up to this many bytes in all come from the schedule's arena, which a cached
 * schedule keeps (grown to what the last schedules needed): no malloc per call for the small
 * buffers of reductions and packed blocks. Larger ones are malloc'd per schedule. */
#define WC_SCHED_ARENA_MAX 65536

struct wc_sched {
    /* building, then advancing: one thread at a time (the builder; then the blocking waiter, or
     * the starter and then the engine, which runs a task in one thread at a time) */
    wc_sched_step_t *steps;
    int nsteps, cap;
    int next;                          /* next step to start */
    int pending;                       /* first started step that may not be complete */
    wc_ep_t *ep;
    uint32_t ctx;
    int tag;
    wu_status_t error;                 /* building, then the first failed step's */
    uint8_t send_mode;                 /* of every send step (wc_send_mode_t) */
    bool blocking;
    bool persistent;                   /* wc_sched_start_persistent: kept and rerun (wc_sched.h) */
    bool task_used;                    /* the task was submitted once: wait for `done` to reuse it */
    uint64_t round_bytes;              /* bytes the messages of the current round move */
    wc_request_t *req;                 /* nonblocking: completed when the schedule is done */
    char *arena;                       /* WC_SCHED_ARENA_MAX at most; kept by the cache */
    size_t arena_cap, arena_used;
    size_t tmp_bytes;                  /* all temporaries asked for: the arena's next size */
    wc_sched_tmp_hdr_t *tmps;          /* temporaries that did not fit the arena */
    struct wc_sched *zombie_next;      /* on the zombie or the abandoned list */
    uint32_t leave_gen;                /* nonblocking: wc_leave_gen when started */
    wp_ltask_t task;                   /* nonblocking only; the engine's until `done` reads 1 */
    wc_sched_step_t inline_steps[WC_SCHED_INLINE_STEPS];   /* small schedules: no second malloc */
};

/* Double the step array (out of line: rare). NULL, with the schedule's error set: no memory. */
wc_sched_step_t *wc_sched_grow(wc_sched_t *s);

static inline wc_sched_step_t *wc_sched_add(wc_sched_t *s, wc_step_kind_t kind)
{
    if (WU_UNLIKELY(s->error != WU_OK))
        return NULL;
    if (WU_UNLIKELY(s->nsteps == s->cap) && !wc_sched_grow(s))
        return NULL;
    wc_sched_step_t *st = &s->steps[s->nsteps++];
    st->kind = (uint8_t)kind;
    return st;
}

static inline void wc_sched_send(wc_sched_t *s, const void *buf, uint64_t count,
                                 const wc_dtype_t *dt, int dst)
{
    wc_sched_step_t *st = wc_sched_add(s, WC_STEP_SEND);
    if (st)
        st->msg.buf = (void *)buf, st->msg.count = count, st->msg.dt = dt, st->msg.peer = dst;
}

static inline void wc_sched_recv(wc_sched_t *s, void *buf, uint64_t count, const wc_dtype_t *dt,
                                 int src)
{
    wc_sched_step_t *st = wc_sched_add(s, WC_STEP_RECV);
    if (st)
        st->msg.buf = buf, st->msg.count = count, st->msg.dt = dt, st->msg.peer = src;
}

static inline void wc_sched_copy(wc_sched_t *s, const void *src, uint64_t scount,
                                 const wc_dtype_t *sdt, void *dst, uint64_t dcount,
                                 const wc_dtype_t *ddt)
{
    wc_sched_step_t *st = wc_sched_add(s, WC_STEP_COPY);
    if (st)
        st->copy.src = src, st->copy.scount = scount, st->copy.sdt = sdt, st->copy.dst = dst,
        st->copy.dcount = dcount, st->copy.ddt = ddt;
}

static inline void wc_sched_call(wc_sched_t *s, wc_sched_fn_t fn, const wc_sched_args_t *args)
{
    wc_sched_step_t *st = wc_sched_add(s, WC_STEP_CALL);
    if (st)
        st->call.fn = fn, st->call.args = *args;
}

static inline void wc_sched_fence(wc_sched_t *s)
{
    /* A fence right after another one (or first) is a no-op: no empty rounds. */
    if (s->nsteps == 0 || s->steps[s->nsteps - 1].kind == WC_STEP_FENCE)
        return;
    wc_sched_add(s, WC_STEP_FENCE);
}

static inline void wc_sched_send_mode(wc_sched_t *s, wc_send_mode_t mode)
{
    s->send_mode = (uint8_t)mode;
}

/* The schedule fails with st unless it failed already (sticky: the first error stays): a builder
 * that cannot go on (no memory), or a step that failed. */
static inline void wc_sched_fail(wc_sched_t *s, wu_status_t st)
{
    if (s->error == WU_OK && st != WU_OK)
        s->error = st;
}

static inline wu_status_t wc_sched_error(const wc_sched_t *s)
{
    return s->error;
}

static inline int wc_sched_nsteps(const wc_sched_t *s)
{
    return s->nsteps;
}

#endif
