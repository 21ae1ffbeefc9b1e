/* The progression engine (pioman): a tree of task queues over the machine topology, pollers that
 * run them (explicit polling points, idle threads, a timer thread), and nothing else: it knows
 * nothing of MPI or transports. Design, states and costs: docs/progress.md.
 *
 * Topology (wp_topology.c): read with hwloc (machine, package, L3, core, PU), restricted to the CPUs
 * the process may use at init, pruned of nodes that are their parent's only child; one wp_queue
 * per remaining node. Without hwloc (or if it fails) one root queue.
 * Each queue (wp_queue.h) = a lock-free multi-producer submission queue + a main queue under a
 * spinlock used as a mask (trylock; a poller finding it busy skips the queue, since someone is
 * already running it). A poller drains submissions into the main queue while it holds the lock,
 * runs the main queue, then climbs to the parent with a frequency divided by the parent's number
 * of children. The calling thread's location (its most local queue) is cached in TLS and refreshed
 * every WP_LOCATION_REFRESH polls (sched_getcpu).
 *
 * Pollers (wp_threads.h):
 *   explicit  wp_poll(), from MPI calls (WEFT_PROGRESS_EXPLICIT)
 *   idle      one thread per node of WEFT_PROGRESS_IDLE_LEVEL (or of the nearest level above it
 *             that the tree has), bound to that node's CPUs, SCHED_IDLE, polling the node's
 *             subtree and its ancestors; after a round that found work it pauses
 *             WEFT_PROGRESS_IDLE_US; after ~100 us of rounds that found nothing it sleeps until
 *             wp_engine_kick(), a submission, or a timeout (WEFT_PROGRESS_IDLE)
 *   timer     one thread polling every queue of the tree every WEFT_PROGRESS_TIMER_US
 *             (WEFT_PROGRESS_TIMER)
 * Background pollers leave alone a queue that an explicit poller visited since their last visit.
 *
 * Concurrency contract: wp_engine_init/finalize by one thread (MPI_Init/Finalize), with no other
 * thread inside the engine. wp_poll, wp_engine_kick and the ltask calls from any thread in
 * between. The engine's threads are started only when the configuration asks for them
 * (idle_threads, timer_thread); they run tasks concurrently with the application's threads.
 */
#ifndef WP_ENGINE_H
#define WP_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include "progress/wp_ltask.h"
#include "util/wu_status.h"

typedef struct wp_engine_config {
    bool explicit_poll;
    bool idle_threads;
    const char *idle_level;     /* "machine", "package", "l3", "core", "pu" */
    unsigned idle_pause_us;
    bool timer_thread;
    unsigned timer_period_us;
} wp_engine_config_t;

/* Fill cfg from the WEFT_PROGRESS_* variables. */
void wp_engine_config_from_env(wp_engine_config_t *cfg);
wu_status_t wp_engine_init(const wp_engine_config_t *cfg);
void wp_engine_finalize(void);   /* stops the engine's threads; remaining tasks are dropped (IDLE) */
/* Stop the engine's threads (idle, timer) and join them; tasks stay queued and explicit polling
 * goes on. When it returns, no thread of the engine runs a task or will run one again before the
 * next wp_engine_init: a task that one of them was running has returned. For a process that is
 * leaving (MPI_Finalize, exit), whose memory only its own threads may touch from then on.
 * Called by one thread, like wp_engine_init/finalize; a no-op when there are no threads (the
 * engine is down, the threads are off or already stopped). */
void wp_engine_stop_threads(void);
/* Start the timer thread now if the engine runs none (a program below MPI_THREAD_MULTIPLE, where
 * the threads are off unless asked for) and WEFT_PROGRESS_TIMER is not set to 0: for a process that
 * comes to need background progress (a one-sided window across nodes, whose targets serve origins
 * from their progress while they compute). Turns the lock gate on (wt_thread_set_multi): the
 * caller is the only thread in the library and holds no lock of it. One thread, like init. */
wu_status_t wp_engine_start_timer(void);
/* Wait until every task run that had begun when it was called has returned: take and release each
 * queue's mask once (the queues this thread is running itself, from inside a task, are skipped).
 * A state change made before the call is then seen by every later run, and nothing a run read
 * before it is still in use. Any thread; no task of this thread's own frames may wait on it. */
void wp_engine_sync(void);

/* A thread about to sleep while watching every source of work of the process (the core's waiter
 * on a doorbell that every polled transport rings) calls wp_engine_watch_begin, and
 * wp_engine_watch_end when it wakes. Meanwhile the timer thread parks instead of ticking: a tick
 * could find only what would wake the watcher anyway, and on a VM each tick costs tens of
 * microseconds of CPU (a rank blocked in MPI_Recv paid 3.5% of a core for the ticks alone). The
 * end of the watch, any submission and wp_engine_wake_timer (work no doorbell announces) wake it.
 * Any thread; calls come in pairs. */
void wp_engine_watch_begin(void);
void wp_engine_watch_end(void);

/* The timer thread's sleep between its ticks, replaced by the caller's (the core's: a sleep that a
 * peer's rendezvous offer can end, wc_pt2pt.c "offers announced to a computing receiver"). Before
 * each tick polls, the timer takes token = prepare(); then sleep(token, deadline_ns) returns by that
 * CLOCK_MONOTONIC time, or earlier when the work it watches for came after prepare (the timer then
 * ticks at once and keeps its deadline); wake() makes a sleep under way or about to start return
 * soon. NULL restores the engine's own sleep; that call returns only once no call of the replaced
 * sleep is under way (it calls the replaced wake to hurry it), so whatever those functions use may
 * be released then. Set, then restore: one replacement at a time; one thread at a time (the core's
 * init and finalize). */
typedef struct wp_timer_sleep {
    uint32_t (*prepare)(void);
    void (*sleep)(uint32_t token, uint64_t deadline_ns);
    void (*wake)(void);
} wp_timer_sleep_t;
void wp_engine_set_timer_sleep(const wp_timer_sleep_t *ts);
/* Whether the timer thread runs. */
bool wp_engine_has_timer(void);

/* Inline (wp_engine_inl.h):
 *
 * int wp_poll(void);
 *   One explicit polling point: the caller's most local queue, then its ancestors (each with a
 *   frequency divided by its number of children). Returns the number of task runs that reported
 *   work. Returns 0 at once when WEFT_PROGRESS_EXPLICIT is off or the engine is down: with explicit
 *   polling off and no engine threads nothing runs at all (the user's choice).
 *
 * void wp_engine_kick(void);
 *   Idle threads that went to sleep (nothing to do) wake up and poll again: called when new work
 *   may exist that only polling can find (e.g. a request starts waiting on a message, a rendezvous
 *   is posted). Cheap when no idle thread sleeps (one load). Submitting a task kicks too.
 */

/* Submit to queue number `queue` (the tree in pre-order, 0 = root; see wp_engine_describe): for a
 * task tied to where a device or a memory region sits, and for tests. An index out of range means
 * the root. */
void wp_ltask_submit_at(wp_ltask_t *t, int queue);

/* Description for weft-info and tests. */
int wp_engine_queue_count(void);        /* 0 while the engine is down */
/* e.g. "tree machine+package+l3{0-1} > core+pu{0} core+pu{1} (3 queues); idle: 1 thread, one per
 * package, SCHED_IDLE, pause 20 us; timer: every 1000 us; explicit polling: on" */
const char *wp_engine_describe(void);

#include "progress/wp_engine_inl.h"

#endif
