/* Spin, then sleep: see wc_wait.h. */
#include "core/wc_wait.h"
#include "core/wc_core.h"
#include "core/wc_pt2pt.h"
#include "progress/wp_engine.h"
#include "thread/wt_thread.h"
#include "util/wu_counters.h"
#include "util/wu_list.h"
#include "util/wu_log.h"

#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define WC_SLEEP_FIRST_NS 20000u       /* after arming the doorbell: bounds the arming race */
#define WC_SLEEP_MAX_NS   10000000u    /* every sleep ends by then; the caller re-polls */
#define WC_SLEEP_POLL_NS  50000u       /* timed polling: a transport with traffic has no doorbell */
/* Shortest spin of a crowded waiter (wc_crowded): 1toN with 8 threads on one CPU, mean one-way
 * 8-12 us with the 10 us spin, 3.4-5 us with 100 us or 1 ms (fewer sleeps; the 100 us figures no
 * worse than 1 ms'). A rank blocked for good pays it once per wake-up. */
#define WC_CROWD_SPIN_NS  100000u

uint64_t wc_spin_ns = 10000;
uint64_t wc_spin_max_ns = 200000;
/* A gap longer than this between two slow visits of a spinning waiter (64 empty polls apart, a few
 * microseconds) means it was descheduled. */
#define WC_SPIN_GAP_NS 50000u
bool wc_idle_yield;
_Atomic uint64_t wc_cma_wait_bytes;
_Atomic int wc_waiting;
int wc_cpus = 1;
static int wc_cpus_mine = 1;   /* the affinity's count; wc_cpus is INT_MAX when yielding is off */

/* One per thread that ever slept, never freed (a late wake-up of an exited thread's waiter must
 * land in valid memory), all linked on wc_waiters.all so they stay reachable. */
typedef struct wc_waiter {
    wt_wait_t  wait;
    wu_list_t  all;        /* wc_waiters.lock */
    wu_list_t  blocked;    /* wc_waiters.lock: on wc_waiters.blocked while blocked on `wait` */
} wc_waiter_t;

static struct {
    wt_mutex_t lock;
    wu_list_t  all;
    wu_list_t  blocked;
} wc_waiters = { .all = WU_LIST_INIT(wc_waiters.all), .blocked = WU_LIST_INIT(wc_waiters.blocked) };

/* The calling thread's waiter: WT_LOCAL, one per user-level thread under a ULT backend (two threads
 * sharing one would block on the same wait object). */
WT_LOCAL(static, wc_waiter_t *, wc_me);
/* The waiter watching the doorbell (0: nobody). */
static _Atomic uintptr_t wc_doorbell_owner;
/* Set by wc_wait_set_doorbell before other threads exist, read-only afterwards. */
static wx_tl_t *wc_doorbell;      /* the transport whose doorbell a sleeper watches, or NULL */
static _Atomic uint64_t wc_block_ns = WC_SLEEP_MAX_NS;   /* longest sleep without a doorbell */
/* Set once at run time by wc_wait_timed_poll (a transport without a doorbell joined); wc_doorbell
 * itself stays, so that a sleeper already watching it is still woken. */
static _Atomic bool wc_doorbell_off;

uint64_t wc_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void wc_wait_spin_set(uint64_t us)
{
    __atomic_store_n(&wc_spin_ns, us * 1000u, __ATOMIC_RELAXED);
}

void wc_wait_spin_max_set(uint64_t us)
{
    __atomic_store_n(&wc_spin_max_ns, us * 1000u, __ATOMIC_RELAXED);
}

/* The calling thread's spin (wc_wait.h, "Adaptive spin"): 0 until its first wait. */
WT_LOCAL(static, uint64_t, wc_spin_mine);

static uint64_t wc_spin_now(void)
{
    uint64_t base = __atomic_load_n(&wc_spin_ns, __ATOMIC_RELAXED);
    uint64_t max = __atomic_load_n(&wc_spin_max_ns, __ATOMIC_RELAXED);
    uint64_t mine = *WT_LOCAL_PTR(uint64_t, wc_spin_mine);
    if (mine <= base || max <= base)
        return base;
    return mine < max ? mine : max;
}

/* After a sleep of slept_ns: the next spin of this thread (wc_spin_next). */
static void wc_spin_adapt(const wc_idle_t *idle, uint64_t slept_ns)
{
    uint64_t *mine = WT_LOCAL_PTR(uint64_t, wc_spin_mine);
    bool yielding = __atomic_load_n(&wc_idle_yield, __ATOMIC_RELAXED) || idle->crowd_spun ||
                    idle->together;
    *mine = wc_spin_next(*mine, __atomic_load_n(&wc_spin_ns, __ATOMIC_RELAXED),
                         __atomic_load_n(&wc_spin_max_ns, __ATOMIC_RELAXED), slept_ns,
                         idle->preempted, yielding);
}

void wc_wait_yield_set(int mode, long nranks_here)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    /* User-level threads (auto): a poll that found nothing lets the rank's other threads run;
     * without the yield they would wait for the whole spin. */
    bool y = mode >= 0 ? mode != 0 : WT_BACKEND_ULT || (ncpu > 0 && nranks_here > ncpu);
    __atomic_store_n(&wc_idle_yield, y, __ATOMIC_RELAXED);
    /* 0 means never: crowded waiters do not yield either. */
    __atomic_store_n(&wc_cpus, mode == 0 ? INT_MAX : wc_cpus_mine, __ATOMIC_RELAXED);
}

void wc_wait_init(void)
{
    wt_mutex_init(&wc_waiters.lock);
    cpu_set_t set;
    int n = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
    if (n <= 0)
        n = (int)sysconf(_SC_NPROCESSORS_ONLN);
    wc_cpus_mine = n > 0 ? n : 1;
    __atomic_store_n(&wc_cpus, wc_cpus_mine, __ATOMIC_RELAXED);
    atomic_store(&wc_doorbell_owner, 0);
    wc_doorbell = NULL;
    wc_block_ns = WC_SLEEP_MAX_NS;
    wc_doorbell_off = false;
}

void wc_wait_set_doorbell(wx_tl_t *doorbell, bool timed_poll)
{
    if (WT_BACKEND_ULT && doorbell) {
        /* A doorbell sleep is a kernel wait: it would stop every user-level thread of the rank,
         * the ones that would ring it included. Sleepers block on their wait objects and poll on
         * time. */
        doorbell = NULL;
        timed_poll = true;
    }
    wc_doorbell = doorbell;
    wc_block_ns = timed_poll ? WC_SLEEP_POLL_NS : WC_SLEEP_MAX_NS;
}

void wc_wait_timed_poll(void)
{
    atomic_store(&wc_block_ns, WC_SLEEP_POLL_NS);
    atomic_store(&wc_doorbell_off, true);
}

void wc_wait_finalize(void)
{
    /* Waiters stay allocated: threads of the application may still hold them in TLS. */
}

static wc_waiter_t *wc_waiter_self(void)
{
    wc_waiter_t **me = WT_LOCAL_PTR(wc_waiter_t *, wc_me);
    if (WU_LIKELY(*me != NULL))
        return *me;
    wc_waiter_t *w = aligned_alloc(WU_CACHELINE, WU_ALIGN_UP(sizeof(*w), WU_CACHELINE));
    if (!w)
        wu_log_fatal("out of memory for a wait object");
    wt_wait_init(&w->wait);
    wu_list_init(&w->blocked);
    wt_mutex_lock_always(&wc_waiters.lock);
    wu_list_push_back(&wc_waiters.all, &w->all);
    wt_mutex_unlock_always(&wc_waiters.lock);
    *me = w;
    return w;
}

void wc_waiter_wake(uintptr_t waiter)
{
    wu_count(WU_COUNT_WAIT_WAKEUPS, 1);
    wt_wait_wake(&((wc_waiter_t *)waiter)->wait);
    if (atomic_load_explicit(&wc_doorbell_owner, memory_order_acquire) == waiter)
        wc_doorbell->ops->db_ring(wc_doorbell);
}

void wc_request_detach(wc_request_t *req, void (*on_complete)(wc_request_t *req))
{
    req->on_complete = on_complete;
    uintptr_t expect = WC_REQ_PENDING;
    if (!atomic_compare_exchange_strong_explicit(&req->state, &expect, WC_REQ_DETACHED,
                                                 memory_order_acq_rel, memory_order_acquire))
        on_complete(req);   /* already complete */
}

/* Wake one blocked thread, which may claim the doorbell (nobody watches it now). */
static void wc_doorbell_hand_over(void)
{
    wt_mutex_lock_always(&wc_waiters.lock);
    wu_list_t *e = wu_list_front(&wc_waiters.blocked);
    wt_mutex_unlock_always(&wc_waiters.lock);
    if (e)
        wt_wait_wake(&WU_CONTAINER_OF(e, wc_waiter_t, blocked)->wait);
}

/* A wake-up of our wait object pending (a completion by another thread): take it. The doorbell
 * path never blocks on the wait object, so a wake-up left pending would make every later sleep
 * return at once, and the thread spin. */
static bool wc_woken_take(wc_waiter_t *w)
{
    uint32_t expect = WT_WAIT_WOKEN;
    return __atomic_compare_exchange_n(&w->wait.state, &expect, WT_WAIT_IDLE, false,
                                       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/* Watch the doorbell until a packet arrives, our wait object is woken (it rings the doorbell), or
 * the time-out. Returns false if someone else is watching. */
static bool wc_sleep_doorbell(wc_waiter_t *w)
{
    uintptr_t none = 0;
    if (!atomic_compare_exchange_strong(&wc_doorbell_owner, &none, (uintptr_t)w))
        return false;
    wx_tl_t *db = wc_doorbell;
    uint32_t seq = db->ops->db_arm(db);
    /* A completion may have woken our wait object just before we became the owner (it then did not
     * ring): a pending wake-up means there is no reason to sleep. */
    bool woken = wc_woken_take(w);
    (void)wp_poll_missed_take();
    if (!woken && wp_poll() == 0) {
        db->ops->db_sleep(db, seq, WC_SLEEP_FIRST_NS);
        if (wp_poll() == 0) {
            seq = db->ops->db_arm(db);
            /* Look at the wait object again: a completion by another thread (wc_waiter_wake
             * wakes the object, then rings) may have come since the first look, its ring taken
             * by the short sleep or by this arm. Without this look the long sleep ran its whole
             * 10 ms with the request complete (p99 10.9 ms in mt_overlap's sender case). The
             * arm reads the sequence before the look and the waker rings after the wake: either
             * we see the wake, or its ring changes the sequence we sleep on. */
            if (!wc_woken_take(w) && wp_poll() == 0) {
                /* A poll that found a queue held by an idle thread (SCHED_IDLE, preempted by us
                 * or starved, maybe with our packet in hand) proves nothing: sleep short.
                 * Measured on a 1 MiB ping-pong, 6-15 of the 10 ms sleeps per run used to end
                 * with work found at once (p99 5.2 ms); with the short sleep 0-1 (p99 0.2 ms).
                 * With the idle threads off (WEFT_PROGRESS_IDLE=0) such sleeps were 0-1 before
                 * the change too. */
                if (wp_poll_missed_take()) {
                    db->ops->db_sleep(db, seq, WC_SLEEP_FIRST_NS);
                } else {
                    /* Every transport rings this doorbell: the timer thread need not tick
                     * meanwhile (wp_engine_watch_begin). */
                    wp_engine_watch_begin();
                    db->ops->db_sleep(db, seq, WC_SLEEP_MAX_NS);
                    wp_engine_watch_end();
                }
            }
        }
    }
    db->ops->db_disarm(db);
    atomic_store(&wc_doorbell_owner, 0);
    /* Hand the doorbell over: one blocked thread wakes and may take it. */
    wc_doorbell_hand_over();
    return true;
}

/* Returns true if the thread blocked on its own wait object (not on the doorbell). */
static bool wc_sleep(wc_waiter_t *w)
{
    if (wc_ep_sends_pending(wc_ep_default())) {   /* the process's endpoint: its queues */
        /* Packets wait for ring space: only polling moves them. */
        wt_thread_yield();
        return false;
    }
    bool db = wc_doorbell && !atomic_load_explicit(&wc_doorbell_off, memory_order_relaxed);
    if (db && wc_sleep_doorbell(w))
        return false;
    wt_mutex_lock_always(&wc_waiters.lock);
    wu_list_push_back(&wc_waiters.blocked, &w->blocked);
    wt_mutex_unlock_always(&wc_waiters.lock);
    /* The owner that made our claim fail may have left since, and looked for a blocked thread to
     * hand the doorbell to before we were on the list: then nobody would watch it, and a packet
     * for us would wait for our whole time-out. The owner clears wc_doorbell_owner before it
     * takes the lock to look, and we read it after our push under the same lock: either it saw
     * us, or we see it gone and return to poll (the next sleep claims the doorbell). */
    bool blocked = !db || atomic_load(&wc_doorbell_owner) != 0;
    if (blocked)
        wt_wait_block(&w->wait, atomic_load_explicit(&wc_block_ns, memory_order_relaxed));
    wt_mutex_lock_always(&wc_waiters.lock);
    wu_list_del(&w->blocked);
    wt_mutex_unlock_always(&wc_waiters.lock);
    return blocked && db;
}

/* Sleep until one of reqs completes (or a packet, a hand-over, a time-out). kick: let the idle
 * threads poll while we sleep (not after a sleep of this wait that timed out with nothing: each
 * kick costs an idle thread 100 us of polling and a chain of short sleeps, 2% of a core for a rank
 * blocked in MPI_Recv). */
static void wc_block(wc_request_t *const *reqs, int n, bool kick)
{
    wc_waiter_t *w = wc_waiter_self();
    wt_wait_prepare(&w->wait);
    int i;
    for (i = 0; i < n; i++) {
        uintptr_t expect = WC_REQ_PENDING;
        if (!atomic_compare_exchange_strong_explicit(&reqs[i]->state, &expect, (uintptr_t)w,
                                                     memory_order_acq_rel, memory_order_acquire))
            break;
    }
    bool blocked = false;
    if (i == n) {
        wu_count(WU_COUNT_WAIT_SLEEPS, 1);
        if (kick)
            wp_engine_kick();
        blocked = wc_sleep(w);
    }
    bool done = false;
    for (int j = 0; j < i; j++) {
        uintptr_t expect = (uintptr_t)w;
        if (!atomic_compare_exchange_strong_explicit(&reqs[j]->state, &expect, WC_REQ_PENDING,
                                                     memory_order_acq_rel, memory_order_acquire))
            done = true;   /* completed while we slept */
    }
    /* A blocked thread woken to take the doorbell (the owner left) that leaves instead, its
     * request done, passes the hand-over on: otherwise the other blocked threads would sleep
     * unwatched until their time-outs (2 ranks x 16 threads under TSan, no engine threads:
     * 14 s at 15% of a CPU, the ranks asleep on 10 ms time-outs). */
    if (blocked && done && atomic_load(&wc_doorbell_owner) == 0)
        wc_doorbell_hand_over();
}

static bool wc_wait_together(const wc_request_t *req);

void wc_idle_block_slow(wc_idle_t *idle, wc_request_t *const *reqs, int n)
{
    if (WU_UNLIKELY(atomic_load_explicit(&wc_offer_watching, memory_order_relaxed)))
        wc_offer_busy(true);
    /* Ranks not bound to CPUs of their own (--bind-to none, a launcher that does not bind) may be
     * stacked by the scheduler on one CPU for seconds: the peer we wait for then runs only when we
     * leave the CPU, and our spin only delays it. Seen with bench_sqmr, 2 ranks unbound at
     * MPI_THREAD_MULTIPLE on 2 CPUs, in about one run of five (not in 14 runs with the idle
     * threads off): each rank spun out its adaptive spin, grown to 200 us, before the other could
     * answer, 0.1 instead of 7-14 Mmsg/s; yielding makes it 2.6. Looked at on slow visits, as
     * the scheduler may move either rank at any time, but only on the first and every 16th (about
     * 20 us apart): each look may store our CPU into the doorbell line that senders read at every
     * push, and the threads of a rank spread over CPUs would otherwise pass that line around. With
     * more ranks than CPUs, waiters already yield (wc_idle_yield); WEFT_WAIT_YIELD=0 turns this off
     * too. */
    if (n > 0 && (idle->polls & 1023) == 64 && !__atomic_load_n(&wc_idle_yield, __ATOMIC_RELAXED) &&
        __atomic_load_n(&wc_cpus, __ATOMIC_RELAXED) != INT_MAX)
        idle->together = wc_wait_together(reqs[0]);
    uint64_t now = wc_now_ns();
    if (idle->deadline_ns == 0) {
        uint64_t extra = atomic_load_explicit(&wc_cma_wait_bytes, memory_order_relaxed) / 4;
        idle->deadline_ns = now + wc_spin_now() + (extra < 1000000u ? extra : 1000000u);
        idle->last_ns = now;
        return;
    }
    if (now - idle->last_ns > WC_SPIN_GAP_NS)
        idle->preempted = true;
    idle->last_ns = now;
    if (now < idle->deadline_ns)
        return;
    if (!idle->crowd_spun && wc_crowded()) {
        idle->crowd_spun = true;
        uint64_t spin = __atomic_load_n(&wc_spin_ns, __ATOMIC_RELAXED);
        if (spin < WC_CROWD_SPIN_NS) {
            idle->deadline_ns = now + WC_CROWD_SPIN_NS - spin;
            return;
        }
    }
    wc_block(reqs, n, !idle->quiet);
    uint64_t after = wc_now_ns();
    idle->quiet = after - now >= WC_SLEEP_MAX_NS / 2;   /* timed out: nothing came */
    wc_spin_adapt(idle, after - now);
    idle->last_ns = after;
    idle->polls = 0;
}

/* The transport of wc_wait_set_cpu_tl, or NULL: written by wc_init and wc_finalize while no other
 * thread waits, read by waiting threads. */
static wx_tl_t *wc_cpu_tl;

void wc_wait_set_cpu_tl(wx_tl_t *tl)
{
    if (tl && !(tl->attr.caps & WX_CAP_PEER_CPU))
        tl = NULL;
    wc_cpu_tl = tl;
    int cpu;
    if (tl && (cpu = sched_getcpu()) >= 0)
        tl->ops->cpu_set(tl, cpu);   /* a rank bound before MPI_Init is known from the start */
}

/* More ranks than CPUs (wc_idle_yield): does the receive req waits for come from a rank of this
 * machine that last waited on another CPU than the one we run on? That rank may be running and
 * about to answer, and a yield would give our CPU to another rank until the scheduler hands it back
 * (a whole time slice when that rank exchanges with its own partner): so the waiter polls 64 times
 * (about 1 us here) before it yields. A peer on our own CPU cannot run before we yield, so then we
 * yield at once, as does a wait for anything else (a send, a wildcard, another node, a collective's
 * schedule, which waits through wc_idle_block). Tells the transport our CPU on the way (a store
 * only when it changed). 8 ranks on 2 CPUs, pairs ping-ponging 1 byte across the CPUs
 * (bench/mt_ranks_lat -p): mean one-way 5.8-7.0 us -> ~1-2 us, as the two ranks of a pair that
 * run at once now keep their CPUs; yielding after 64 polls whatever the peer costs a pair on one
 * CPU 1.2 us a message (2.0 -> 3.2 us) and Allreduce of 8 B at 8 ranks 18-21 -> 26 us, which
 * yielding at once keeps. docs/progress.md, "Waiting with more ranks than cores". (Every wait
 * while waiters yield says our CPU, whatever it waits for: a peer that only sends to us, and so
 * never waits on us, still learns where we are.) */
static int wc_wait_where(const wc_request_t *req, int *cpu_p)
{
    wx_tl_t *tl = wc_cpu_tl;
    int cpu;
    if (WT_BACKEND_ULT || !tl || (cpu = sched_getcpu()) < 0)
        return -1;
    tl->ops->cpu_set(tl, cpu);
    *cpu_p = cpu;
    wc_ep_t *ep = wc_ep_default();
    int peer = req->match.src;
    if (req->kind != WC_REQ_RECV || req->ep != ep || peer < 0 || peer >= ep->size ||
        ep->peers[peer].tl != tl)
        return -1;
    return tl->ops->peer_cpu(tl, peer);
}

static bool wc_wait_apart(const wc_request_t *req)
{
    int cpu = -1, theirs = wc_wait_where(req, &cpu);
    return theirs >= 0 && theirs != cpu;
}

/* The other side of wc_wait_apart, for waiters that do not yield by default: does the receive req
 * waits for come from a rank of this machine that last waited on our CPU? */
static bool wc_wait_together(const wc_request_t *req)
{
    int cpu = -1, theirs = wc_wait_where(req, &cpu);
    return theirs >= 0 && theirs == cpu;
}

void wc_wait(wc_request_t *req)
{
    wc_idle_t idle;
    wc_idle_init(&idle);
    if (WU_UNLIKELY(__atomic_load_n(&wc_idle_yield, __ATOMIC_RELAXED)))
        idle.apart = wc_wait_apart(req);
    bool counted = false;
    /* (before the first poll, which may take an offer and leave no idle call to say it) */
    if (WU_UNLIKELY(atomic_load_explicit(&wc_offer_watching, memory_order_relaxed)) &&
        !wc_request_is_complete(req))
        wc_offer_busy(true);
    while (!wc_request_is_complete(req)) {
        if (wp_poll())
            continue;
        wc_idle_block(&idle, &req, 1);
        /* Counted once the spin has begun (first slow visit): a message that comes within the
         * first polls, as in a ping-pong with one thread, pays no shared atomic. */
        if (WU_UNLIKELY(idle.deadline_ns != 0 && !counted)) {
            counted = true;
            atomic_fetch_add_explicit(&wc_waiting, 1, memory_order_relaxed);
        }
    }
    if (counted)
        atomic_fetch_sub_explicit(&wc_waiting, 1, memory_order_relaxed);
}
