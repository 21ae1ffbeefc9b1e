/* The progression engine (pioman): a tree of task queues over the machine topology, pollers that
 * run them (explicit polling points, idle threads, a timer thread), and nothing else: it knows
 * nothing of MPI or transports.
 *
 * Topology: read with hwloc (machine, package, L3, core, PU), pruned of levels whose nodes have a
 * single child; one wp_queue per remaining node. Without hwloc (or if it fails) one root queue.
 * Each queue = a lock-free multi-producer submission queue + a main queue under a spinlock used as a
 * mask (trylock; a poller finding it busy skips the queue, since someone is already running it).
 * A poller drains submissions into the main queue while it holds the lock, runs the main queue, then
 * climbs to the parent with a frequency divided by the parent's number of children. The calling
 * thread's location (its most local queue) is cached in TLS and refreshed every few hundred polls
 * (sched_getcpu).
 *
 * Pollers:
 *   explicit  wp_poll(), from MPI calls (WEFT_PROGRESS_EXPLICIT)
 *   idle      one thread per node of WEFT_PROGRESS_IDLE_LEVEL, bound to that node's CPUs, SCHED_IDLE,
 *             polling its queue and ancestors; after a poll that found work it pauses
 *             WEFT_PROGRESS_IDLE_US; after polls that found nothing for a while it sleeps until
 *             wp_engine_kick() (WEFT_PROGRESS_IDLE)
 *   timer     one thread polling the root queue every WEFT_PROGRESS_TIMER_US (WEFT_PROGRESS_TIMER)
 *
 * Concurrency contract: wp_engine_init/finalize by one thread (MPI_Init/Finalize). wp_poll,
 * wp_engine_kick and the ltask calls from any thread. The engine's threads are started only when
 * wp_engine_init is asked for them (threads=true).
 */
#ifndef WP_ENGINE_H
#define WP_ENGINE_H

#include <stdbool.h>
#include "progress/wp_ltask.h"
#include "util/wu_status.h"

typedef struct wp_engine_config {
    bool explicit_poll;
    bool idle_threads;
    const char *idle_level;     /* "package", "l3", "core", "machine" */
    unsigned idle_pause_us;
    bool timer_thread;
    unsigned timer_period_us;
} wp_engine_config_t;

/* Fill cfg from the WEFT_PROGRESS_* variables. */
void wp_engine_config_from_env(wp_engine_config_t *cfg);
wu_status_t wp_engine_init(const wp_engine_config_t *cfg);
void wp_engine_finalize(void);   /* stops the engine's threads; remaining tasks are dropped */

/* One explicit polling point. Returns the number of task runs that reported work. */
int wp_poll(void);

/* Idle threads that went to sleep (nothing to do) wake up and poll again: called when new work may
 * exist that only polling can find (e.g. a request starts waiting on a message). Cheap when no idle
 * thread sleeps (one load). */
void wp_engine_kick(void);

/* Description for weft-info and tests. */
int wp_engine_queue_count(void);
const char *wp_engine_describe(void);   /* e.g. "machine(2 cores) -> core x2; idle: 1 thread ..." */

#endif
