/* Schedules: a collective operation as a list of steps.
 *
 * A schedule is built by one thread (sends, receives, local copies and calls, fences), then
 * started. Steps run in list order; a fence waits until every step before it has completed, so the
 * steps between two fences form a round whose sends and receives are all outstanding at once, and
 * a copy or call placed after a fence sees the data that the rounds before it received. Messages go
 * on the schedule's context with the schedule's tag. The MPI layer gives every nonblocking
 * collective call on a communicator its own tag (a per-communicator sequence number), so several
 * schedules outstanding on one communicator never match each other's messages; blocking calls,
 * of which a process runs one at a time per communicator, share one tag. Within one schedule the
 * tag cannot name the round (a tree's sender and receiver are in different rounds of their own
 * schedules): the algorithms build both sides so that the messages from one rank to another are
 * sent and received in the same order, and messages of one (context, source, tag) do not overtake.
 *
 * Running, nonblocking. wc_sched_start runs the first rounds at once in the caller (the first
 * sends leave before the call returns), then submits a ONCE light task (wp_ltask.h) that advances
 * the schedule whenever a poller runs it: explicit polls inside MPI calls, idle threads, the timer
 * thread. So a nonblocking collective advances while the application computes, exactly as
 * point-to-point does. When the last step completes the schedule sets the request's error and
 * completes it with wc_request_done: the wait/test family of the MPI layer works on it unchanged
 * (a detached request gets its on_complete).
 *
 * Running, blocking. The schedule never enters the engine: wc_sched_wait runs every step in the
 * calling thread and, while a round is incomplete, polls and waits on the step that holds it back
 * as wc_wait does for one request (spin, then sleep until that step completes, a packet arrives
 * or a time-out), so it progresses with every core busy. No task, no request, no atomics of its
 * own.
 *
 * Memory. Each thread keeps its last freed schedule, with its step array and its arena of
 * temporaries, for its next collective. A nonblocking schedule owns itself once started: it frees
 * its malloc'd temporaries when it completes, and the schedule itself (whose task the engine still
 * touches after the task returns DONE) goes on a list of finished schedules that the next
 * wc_sched_create reclaims. A nonblocking schedule abandoned when the process leaves
 * (wc_quiesce, wc_core.h) stops at its task's next run, before any further step, and is kept for
 * good: a CTS or a FIN for one of its requests may still arrive.
 *
 * Concurrency contract: building (create .. start) by one thread. After start, a nonblocking
 * schedule is advanced by its task only (the engine runs a task in one thread at a time), a
 * blocking one by its waiter only; any number of schedules, on any communicators, run
 * concurrently from any threads. Buffers named by steps belong to the schedule until its request
 * completes (blocking: until wc_sched_wait returns).
 */
#ifndef WC_SCHED_H
#define WC_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/wc_dtype.h"
#include "core/wc_ep.h"
#include "core/wc_request.h"
#include "util/wu_status.h"

typedef struct wc_sched wc_sched_t;

/* Bytes: the layout of packed temporary buffers. */
extern const wc_dtype_t wc_dtype_bytes;

/* Arguments of a call step, copied into the schedule at build time. */
typedef struct wc_sched_args {
    void    *p[4];
    uint64_t n[4];
} wc_sched_args_t;
/* A local step (reduction, unpacking, ...); returns WU_OK or the error of the schedule. */
typedef wu_status_t (*wc_sched_fn_t)(const wc_sched_args_t *a);

/* A new empty schedule for messages of endpoint ep on context ctx with tag `tag`. Reclaims
 * finished schedules first. NULL: out of memory. */
wc_sched_t *wc_sched_create(wc_ep_t *ep, uint32_t ctx, int tag);

/* Build steps (inline, wc_sched_inl.h): wc_sched_send(s, buf, count, dt, dst) and
 * wc_sched_recv(s, buf, count, dt, src) move count elements of layout dt at buf (packed bytes
 * move; ranks are world ranks); wc_sched_copy(s, src, scount, sdt, dst, dcount, ddt) copies the
 * packed stream of (src, scount, sdt) into (dst, dcount, ddt), at most the smaller size;
 * wc_sched_call(s, fn, args) runs fn on a copy of args; wc_sched_fence(s) ends a round. Errors
 * (out of memory) are sticky: check wc_sched_error(s) once after building; wc_sched_nsteps(s)
 * counts the steps. wc_sched_send_mode(s, mode) sets the mode of all the schedule's sends:
 * WC_SEND_BULK (the default: large messages by single copy) or WC_SEND_BULK_EAGER (also eager up to
 * the largest packet: for exchanges of blocks, where a handshake per message costs more than the
 * second copy). */
/* A temporary buffer of `bytes` bytes (16-byte aligned), freed when the schedule completes. */
void *wc_sched_tmp(wc_sched_t *s, size_t bytes);

/* Free a schedule that was never started (an error while building it). */
void wc_sched_discard(wc_sched_t *s);

/* Start. req (not NULL): a nonblocking operation; req is reset to pending and completed when the
 * schedule is done; the schedule frees itself. req NULL: a blocking operation; the caller must
 * call wc_sched_wait. */
void wc_sched_start(wc_sched_t *s, wc_request_t *req);
/* Blocking: wait for a schedule started with req NULL (polling, advancing it, then sleeping like
 * wc_wait), free it, and return its status. */
wu_status_t wc_sched_wait(wc_sched_t *s);

/* Persistent schedules (MPI_*_init collectives): built once, started many times.
 * wc_sched_start_persistent (re)starts s like wc_sched_start with req (not NULL), but the schedule
 * and its temporaries stay when it completes, and a start allocates nothing (the steps and their
 * core requests are reused). The owner restarts it only after req completed, from one thread at a
 * time, and frees it with wc_sched_destroy when it is not running (never started, or req
 * completed). Both wait for the engine to let go of the task of the previous run (its `done`),
 * which the task writes right after completing req. */
void wc_sched_start_persistent(wc_sched_t *s, wc_request_t *req);
void wc_sched_destroy(wc_sched_t *s);

/* Tests and statistics: schedules allocated and not yet freed. */
long wc_sched_live(void);

#include "core/wc_sched_inl.h"

#endif
