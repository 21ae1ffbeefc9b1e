/* Completing requests and waiting for them: spin briefly, then sleep (pioman's fixed-spin
 * waiting). See wc_request.h for the state protocol between a completer and a waiter.
 *
 * A waiting thread polls for WEFT_SPIN_US, then sleeps. One sleeping thread of the rank watches
 * the transport's doorbell (senders ring it when they push a packet to a sleeping rank): it wakes,
 * runs progress, and the requests that progress completes wake their own waiters through their
 * wait objects. Other sleepers block on their own wait object. Every sleep has a time-out, so a
 * missed wake-up costs a delay, never a hang.
 *
 * The doorbell contract with several transports (wc_wait_set_doorbell, decided by wc_init): a
 * sleeper may watch a doorbell only if it is the doorbell of every transport that can bring
 * packets (those polled by progress; self delivers inside send and brings none). When one
 * transport is polled and has WX_CAP_DOORBELL, its doorbell is watched. When one of them has no
 * doorbell, or several are polled (a sleeper can watch one doorbell only), nothing is watched and
 * sleeps are short (timed polling, WC_SLEEP_POLL_NS): sleeping on one doorbell while another
 * transport has traffic would delay that traffic by a whole sleep. With no polled transport (one
 * rank) sleepers block on their wait objects with the long time-out.
 *
 * More threads waiting than CPUs (wc_crowded, below): waiters yield the core between polls and
 * spin longer before sleeping, so the thread a message is for gets the core by a round of yields
 * rather than by a futex wake-up. docs/progress.md, "Waiting", has the measurements.
 *
 * Concurrency contract: any thread may complete any request (wc_request_done) and any thread may
 * wait; a request is waited for by at most one thread at a time (MPI's rule).
 */
#ifndef WC_WAIT_H
#define WC_WAIT_H

#include "core/wc_request.h"
#include "thread/wt_thread.h"
#include "util/wu_compiler.h"

void wc_waiter_wake(uintptr_t waiter);

static inline void wc_request_done(wc_request_t *req)
{
    uintptr_t old;
    if (WU_LIKELY(!wt_thread_is_multi())) {
        /* One thread in the library and no progress threads: nobody can install a waiter while
         * we complete (a waiter removes itself before it polls again), so no atomic swap. */
        old = atomic_load_explicit(&req->state, memory_order_relaxed);
        atomic_store_explicit(&req->state, WC_REQ_COMPLETE, memory_order_release);
    } else {
        old = atomic_exchange_explicit(&req->state, WC_REQ_COMPLETE, memory_order_acq_rel);
    }
    if (WU_LIKELY(old == WC_REQ_PENDING))
        return;
    if (old == WC_REQ_DETACHED) {
        req->on_complete(req);
        return;
    }
    wc_waiter_wake(old);
}

/* Complete a request inside its own start (a send that left at once): nobody else knows it yet (its
 * handle has not been returned, a blocking call's is on the caller's stack), so no waiter can be
 * installed and it cannot be detached: a release store, no atomic swap even with several threads.
 * A persistent request's handle is known, but a wait or test on it concurrent with its MPI_Start is
 * erroneous (one thread uses a request at a time), so the same holds. */
static inline void wc_request_done_at_start(wc_request_t *req)
{
    atomic_store_explicit(&req->state, WC_REQ_COMPLETE, memory_order_release);
}

/* Hand a request to the core for good: the core calls req->on_complete when it completes (at once
 * if it already has). Used by MPI_Request_free and buffered sends. */
void wc_request_detach(wc_request_t *req, void (*on_complete)(wc_request_t *req));

/* Spin-then-sleep waiting. An idle loop over several requests (Waitany, Waitsome, probes):
 *     wc_idle_t idle; wc_idle_init(&idle);
 *     while (!done) { if (!wc_progress()) wc_idle_block(&idle, reqs, n); }
 * blocks in wc_idle_block once the spin time is over, until one of reqs (n may be 0) completes, a
 * packet arrives, or a time-out; the caller re-checks. */
typedef struct wc_idle {
    unsigned polls;
    bool crowd_spun;        /* the spin was extended once for crowding */
    bool preempted;         /* a gap between two slow visits: the spinner lost its core */
    uint64_t deadline_ns;   /* end of the spin; 0 until the first slow visit (64 polls) */
    uint64_t last_ns;       /* the last slow visit */
    bool quiet;             /* the last sleep timed out: the next one does not kick idle threads */
    bool apart;             /* wc_idle_yield: the peer runs on another CPU, so the first 64 polls
                             * do not yield (wc_wait_apart, wc_wait.c) */
    bool together;          /* not wc_idle_yield: the peer last waited on our CPU, so a poll that
                             * found nothing yields (wc_wait_together, wc_wait.c) */
} wc_idle_t;

extern uint64_t wc_spin_ns;      /* __atomic (MPI_T may change it): wc_wait_spin_set */
/* Adaptive spin (WEFT_SPIN_MAX_US): each thread's spin starts at wc_spin_ns and doubles, up to
 * wc_spin_max_ns, after every sleep that its message ended sooner than that (a longer spin would
 * have caught it without a futex round trip, on this VM tens of microseconds for the sleeper and a
 * system call for the sender); it halves back after a sleep that lasted longer. It grows only when
 * the spinner kept its core (no gap between its polls) and nothing asks waiters to yield (more
 * ranks than CPUs, crowded threads): a spin that shares a core delays whoever runs the message.
 * Two ranks exchanging small messages on two cores otherwise fall into a lockstep of sleeps, each
 * one's reply waking the other (sqmr: 15,000 futex calls a second per rank under load).
 * __atomic (MPI_T may change it): wc_wait_spin_max_set. Equal to wc_spin_ns: no adaptation. */
extern uint64_t wc_spin_max_ns;
void wc_wait_spin_max_set(uint64_t us);

/* The adaptive spin's rule: a thread's next spin after a sleep of slept_ns that followed a spin of
 * cur (base <= cur). Doubles when the sleep was shorter than max and the spinner neither lost its
 * core nor had to yield it; halves (not below base) when the sleep lasted max or longer, or when
 * the spinner had to yield; otherwise keeps cur. max <= base: base (no adaptation). */
static inline uint64_t wc_spin_next(uint64_t cur, uint64_t base, uint64_t max, uint64_t slept_ns,
                                    bool preempted, bool yielding)
{
    if (max <= base)
        return base;
    if (cur < base)
        cur = base;
    if (!yielding && !preempted && slept_ns < max)
        return cur * 2 < max ? cur * 2 : max;
    if (yielding || slept_ns >= max)
        return cur / 2 > base ? cur / 2 : base;
    return cur;
}
/* More ranks than CPUs (WEFT_WAIT_YIELD): a waiter yields its core after every poll that found
 * nothing, instead of spinning on it; but a thread in wc_wait for a receive from a rank of this
 * machine that last waited on another CPU than this thread's polls 64 times before its first
 * yield (wc_wait_apart, wc_wait.c: two ranks that both run then keep their CPUs while they
 * answer each other). Set by wc_init, changed by MPI_T: wc_wait_yield_set. */
extern bool wc_idle_yield;       /* __atomic */
/* WEFT_SPIN_US and WEFT_WAIT_YIELD, at start-up and from MPI_T (any thread; later waits see the
 * new value). mode: 1 or 0 force yielding (0 also turns off the crowded waiters' yields, below);
 * -1 (auto) yields when nranks_here, the ranks sharing this machine's CPUs, outnumber them. */
void wc_wait_spin_set(uint64_t us);
/* Crowding: more threads of this process wait in wc_wait (past their first 64 polls: their message
 * did not come at once) than it has CPUs (its affinity at wc_wait_init). Then the threads that
 * wait share cores, and the one whose message came may be queued behind the others' spins:
 *   - a waiter past its first 64 polls yields after every poll that found nothing, so the core
 *     goes round the waiters in one round of yields (1toN, 8 threads on one CPU: the woken thread
 *     used to wait for futex round trips, median 22-27 us -> 2-4 us);
 *   - its spin before sleeping lasts at least WC_CROWD_SPIN_NS (wc_wait.c): yielding costs its
 *     peers nothing, while a sleep costs a futex round trip to wake (tens of us on a VM).
 * Only wc_wait counts (the other wait loops have no exit hook), and threads that compute do not,
 * on purpose: yielding to computing threads waits for their time slices (1 MiB ping-pong with 4
 * computing threads per CPU: 75 us -> 55-105 ms with WEFT_WAIT_YIELD=1); a sleeper instead is
 * woken with preemption. Relaxed atomics: a stale count costs a yield too many or too few. */
extern _Atomic int wc_waiting;   /* threads counted in wc_wait now */
extern int wc_cpus;   /* __atomic: wc_wait_init, then wc_wait_yield_set (INT_MAX: never crowded) */
static inline bool wc_crowded(void)
{
    return atomic_load_explicit(&wc_waiting, memory_order_relaxed) >
           __atomic_load_n(&wc_cpus, __ATOMIC_RELAXED);
}
void wc_wait_yield_set(int mode, long nranks_here);
/* Bytes of this rank's sends that receivers are reading by single copy (sent, FIN not yet in):
 * such a transfer gives its sender no event until it ends, so a waiter spins longer before it
 * sleeps (the time a copy of them takes, at most 1 ms) instead of paying a wake-up per message. */
extern _Atomic uint64_t wc_cma_wait_bytes;
/* Cooperative rendezvous under way that this process may copy chunks of (wc_pt2pt.c): a waiting
 * or testing thread copies them (wc_coop_poll, the default endpoint's; returns how many steps
 * copied, *pending_p set while some transfer has chunks left to claim) before it idles, and does
 * not sleep while chunks are left: a transfer advances whenever either of its ranks is in MPI. */
extern _Atomic int wc_coop_active;
int wc_coop_poll(bool *pending_p);
uint64_t wc_now_ns(void);

/* Offers announced to a computing receiver (wc_pt2pt.c): while this process watches for them
 * (wc_offer_watching: written under the process endpoint's match_lock, read anywhere), a thread
 * whose wait found nothing at its first poll, and every slow visit of a waiting thread, tells
 * would-be senders that the rank is polling (wc_offer_busy), so that they do not wake a timer whose
 * rank would see their offer anyway: the wake-up preempts the waiting thread on its CPU and stalls
 * a pipelined copy. (Not a wait that completes at once, as a small blocking send's: its caller is
 * about to go back to computing.) */
extern _Atomic bool wc_offer_watching;
void wc_offer_busy(bool busy);
void wc_offer_leave(struct wc_ep *ep, bool wake);   /* wc_pt2pt.c */

static inline void wc_idle_init(wc_idle_t *idle)
{
    idle->polls = 0;
    idle->crowd_spun = false;
    idle->preempted = false;
    idle->deadline_ns = 0;
    idle->quiet = false;
    idle->apart = false;
    idle->together = false;
}

void wc_idle_block_slow(wc_idle_t *idle, wc_request_t *const *reqs, int n);

static inline void wc_idle_block(wc_idle_t *idle, wc_request_t *const *reqs, int n)
{
    if (WU_UNLIKELY(idle->polls == 0) &&
        WU_UNLIKELY(atomic_load_explicit(&wc_offer_watching, memory_order_relaxed)))
        wc_offer_busy(true);
    if (WU_UNLIKELY(atomic_load_explicit(&wc_coop_active, memory_order_relaxed))) {
        bool pending = false;
        if (wc_coop_poll(&pending) || pending) {
            idle->deadline_ns = 0;   /* copying, or chunks left: spin on, do not sleep */
            if (__atomic_load_n(&wc_idle_yield, __ATOMIC_RELAXED))
                wt_thread_yield();
            return;
        }
    }
    /* The rank or thread we wait for may be waiting for this core. (With more ranks than CPUs, a
     * waiter whose peer runs on another CPU polls 64 times first: wc_wait_apart.) */
    if (WU_UNLIKELY(idle->deadline_ns != 0
                        ? __atomic_load_n(&wc_idle_yield, __ATOMIC_RELAXED) || wc_crowded() ||
                              idle->together
                        : __atomic_load_n(&wc_idle_yield, __ATOMIC_RELAXED) && !idle->apart))
        wt_thread_yield();
    /* No pause instruction: it costs tens of cycles on some cores, straight onto latency. */
    if (WU_LIKELY((++idle->polls & 63) != 0))
        return;
    wc_idle_block_slow(idle, reqs, n);
}

/* Wait for one request: poll, spin, sleep. */
void wc_wait(wc_request_t *req);

void wc_wait_init(void);
void wc_wait_finalize(void);
/* After wc_wait_init, before other threads: the transport whose doorbell sleepers watch (NULL:
 * none), and whether sleeps must be short because some transport with traffic has no doorbell. */
struct wx_tl;
void wc_wait_set_doorbell(struct wx_tl *doorbell, bool timed_poll);
/* After the transports are open, before other threads: the transport that tells where this
 * machine's ranks wait (WX_CAP_PEER_CPU; NULL: none), to which this rank says its CPU at once and
 * then at every wait while waiters yield (wc_wait_apart). NULL again in finalize, before the
 * transports close. */
void wc_wait_set_cpu_tl(struct wx_tl *tl);
/* Any time, any thread: a transport without a doorbell now brings packets (dynamic processes,
 * core/wc_dyn.c); from now on sleeps are timed polling. */
void wc_wait_timed_poll(void);

#endif
