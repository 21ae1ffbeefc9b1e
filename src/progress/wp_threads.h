/* The engine's own pollers (pioman section III-B): idle threads and the timer thread.
 *
 *   idle   one per node of the idle level, bound to the node's CPUs, SCHED_IDLE (nice 19 if
 *          refused). A round polls the node's subtree, then climbs to its ancestors like wp_poll.
 *          Work found: pause idle_pause_us (throttling), poll again. No work for WP_IDLE_ACTIVE_NS:
 *          deep sleep on a futex, woken by wp_engine_kick (and by submissions, and by the timer
 *          thread when it finds work), with a timeout doubling from WP_IDLE_SLEEP_MIN_US up to
 *          timer_period_us (no timer thread) or WP_IDLE_SLEEP_MAX_US (with one).
 *   timer  one thread, normal priority (raised if allowed), polling every queue of the tree every
 *          timer_period_us on absolute deadlines; it kicks sleeping idle threads when it found work.
 *          While a thread sleeps watching every source of work (wp_engine_watch_begin), it parks
 *          instead of ticking: until the watch ends, a kick, or WP_TIMER_PARK_MAX_NS.
 *
 * Both leave alone a queue that an explicit poller visited since their last visit (its
 * explicit_seen mark): the explicit poller is running it anyway, and a background thread that
 * takes the lock only adds cache traffic and, if it is preempted while holding it, a stall.
 *
 * Concurrency contract: wp_threads_start by wp_engine_init only; wp_threads_stop by
 * wp_engine_finalize and wp_engine_stop_threads (one thread, as for init and finalize). Stopping
 * joins every thread and forgets them, so stopping again is a no-op.
 */
#ifndef WP_THREADS_H
#define WP_THREADS_H

#include "progress/wp_engine.h"
#include "progress/wp_topology.h"

#define WP_IDLE_ACTIVE_NS   100000u   /* empty rounds for this long before a deep sleep */
#define WP_IDLE_SLEEP_MIN_US   100u
#define WP_IDLE_SLEEP_MAX_US 100000u  /* with a timer thread, which kicks when it finds work */
#define WP_TIMER_PARK_MAX_NS 100000000u   /* a parked timer ticks at least this often */

wu_status_t wp_threads_start(const wp_engine_config_t *cfg, const wp_topo_t *topo,
                             unsigned idle_level);
void wp_threads_stop(void);
/* Whether idle or timer threads run (between wp_threads_start and wp_threads_stop). */
bool wp_threads_running(void);
/* For wp_engine_describe. */
unsigned wp_threads_idle_count(void);

#endif
