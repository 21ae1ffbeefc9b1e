/* Per-thread event counters: the performance variables of MPI_T (src/mpi/wm_t_pvar.c) that count
 * events of the engine and the core. Each thread counts into its own block, with plain (relaxed
 * load + store, no locked instruction) increments; a reader sums every block. No cache line is
 * written by two threads.
 *
 * Counting is switched on only while somebody looks: MPI_T's counters are not continuous (a handle
 * sees only what was counted between its start and its stop), so events that happen while no
 * counter handle is started can never be seen, and are not counted. wu_counters_watch(+1) by
 * every start, (-1) by every stop (and by the free of a started handle); while the number of
 * watchers is 0 every count site costs one load and one predictable branch (the message path
 * counts at two sites per message, and pays nothing else). A count made just as the first
 * watcher arrives may be missed by a thread that has not yet seen the switch: such an event is
 * concurrent with the start, so either outcome is one the standard allows; a thread that
 * synchronized with the start (it started the handle, or took a lock after it) counts.
 *
 * Concurrency contract: wu_count from any thread, counting into that thread's block only (the
 * block is attached on first use and stays with the thread until it exits; an exited thread's
 * block, with its counts, is reused by a later thread, so sums never go back). wu_counter_sum from
 * any thread, at any time, also before MPI_Init and after MPI_Finalize: a sum taken while threads
 * count is some value between the sums at the start and at the end of the call. Blocks are never
 * freed (reachable from the list). */
#ifndef WU_COUNTERS_H
#define WU_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>
#include "util/wu_compiler.h"

/* name (MPI_T: weft_<lower-case name>), meaning */
#define WU_COUNTERS(X)                                                                             \
    X(SEND_MSGS, "messages this rank started sending (point-to-point and the messages of "         \
                 "collectives; control packets excluded)")                                          \
    X(SEND_BYTES, "bytes of the messages counted by weft_send_msgs")                               \
    X(RECV_MSGS, "messages matched by a receive of this rank (each counted once, when matched)")   \
    X(RECV_BYTES, "bytes delivered by the receives counted by weft_recv_msgs (after truncation)")  \
    X(RNDV_SELF, "rendezvous messages a rank sent to itself (copied directly)")                    \
    X(RNDV_PIPELINE, "rendezvous receives by the pipelined copy (CTS, then fragments)")            \
    X(RNDV_GET, "rendezvous receives by a single-copy read done by the receiving thread "         \
                "(shm: process_vm_readv)")                                                         \
    X(RNDV_COOP, "rendezvous receives by the cooperative copy (shm: both ranks copy chunks by "     \
                 "CMA, whichever is inside MPI)")                                                   \
    X(RNDV_GET_ASYNC, "rendezvous receives by a single-copy read the transport completes in the "  \
                      "background (ofi: RMA read)")                                                \
    X(SEND_QUEUED, "packets (of messages and control) that found no room in their transport (a "   \
                   "full shm ring or queue, no libfabric credit or buffer) and waited in the "       \
                   "peer's send queue")                                                           \
    X(LTASK_EXPLICIT, "ltask runs that found work, run at explicit polling points in MPI calls")   \
    X(LTASK_IDLE, "ltask runs that found work, run by idle threads")                               \
    X(LTASK_TIMER, "ltask runs that found work, run by the timer thread")                          \
    X(IDLE_POLLS, "polling rounds of idle threads")                                                \
    X(IDLE_SLEEPS, "deep sleeps of idle threads (nothing to do for ~100 us)")                      \
    X(IDLE_WAKEUPS, "deep sleeps of idle threads ended by a kick (the others timed out)")          \
    X(KICKS, "kicks that woke sleeping idle threads (new work only polling finds)")                \
    X(WAIT_SLEEPS, "sleeps of application threads waiting in MPI calls (after WEFT_SPIN_US)")      \
    X(WAIT_WAKEUPS, "wake-ups of sleeping waiters by the thread that completed their request")    \
    X(TIMER_PARKS, "times the timer thread stopped ticking because a waiting thread watched every "  \
                   "source of work (the transport's doorbell)")

typedef enum {
#define WU_X(name, desc) WU_COUNT_##name,
    WU_COUNTERS(WU_X)
#undef WU_X
    WU_COUNT_NUM
} wu_counter_t;

typedef struct wu_counters {
    uint64_t v[WU_COUNT_NUM];      /* written by the owning thread only (relaxed atomic stores) */
    struct wu_counters *next;      /* set before the block is published, then constant */
    int in_use;                    /* __atomic: a thread owns the block */
} WU_ALIGNED(WU_CACHELINE) wu_counters_t;

extern __thread wu_counters_t *wu_counters_mine;
wu_counters_t *wu_counters_attach(void);   /* slow path: the thread's first count */

/* The number of watchers (started MPI_T counter handles): __atomic, changed by
 * wu_counters_watch, read relaxed at every count site. */
extern uint32_t wu_counters_watchers __attribute__((visibility("hidden")));

/* Is counting on? The one test a count site makes when nobody watches. */
static inline bool wu_counting(void)
{
    return WU_UNLIKELY(__atomic_load_n(&wu_counters_watchers, __ATOMIC_RELAXED) != 0);
}

/* A watcher arrives (+1) or leaves (-1). Any thread, any time. */
void wu_counters_watch(int delta);

/* The calling thread's block, for a path that counts twice (one TLS load). */
static inline wu_counters_t *wu_counters_get(void)
{
    wu_counters_t *c = wu_counters_mine;
    if (WU_UNLIKELY(!c))
        c = wu_counters_attach();
    return c;
}

static inline void wu_counter_add(wu_counters_t *c, wu_counter_t id, uint64_t n)
{
    __atomic_store_n(&c->v[id], __atomic_load_n(&c->v[id], __ATOMIC_RELAXED) + n,
                     __ATOMIC_RELAXED);
}

static inline void wu_count(wu_counter_t id, uint64_t n)
{
    if (wu_counting())
        wu_counter_add(wu_counters_get(), id, n);
}

/* Two events at one site (a message and its bytes): one test, one TLS load. */
static inline void wu_count2(wu_counter_t id1, uint64_t n1, wu_counter_t id2, uint64_t n2)
{
    if (wu_counting()) {
        wu_counters_t *c = wu_counters_get();
        wu_counter_add(c, id1, n1);
        wu_counter_add(c, id2, n2);
    }
}

/* The sum of counter id over every thread that ever counted (while counting was on). */
uint64_t wu_counter_sum(wu_counter_t id);
const char *wu_counter_name(wu_counter_t id);   /* "SEND_MSGS" */
const char *wu_counter_desc(wu_counter_t id);

#endif
