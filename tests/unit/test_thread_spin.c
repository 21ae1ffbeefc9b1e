/* Spinlocks of the threading layer: the gate, trylock used as a mask (a poller that finds the lock
 * held skips; never two inside), and mutual exclusion of lock/unlock with 8 threads. */
#include "thread/wt_thread.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NTHREADS 8
#define NITERS   100000

#include "test_check.h"

static const char *volatile phase = "start";
static int started;   /* threads released together by the last one to arrive; atomics */

static void start_together(void)
{
    __atomic_fetch_add(&started, 1, __ATOMIC_ACQ_REL);
    while (__atomic_load_n(&started, __ATOMIC_ACQUIRE) % NTHREADS != 0)
        wt_thread_yield();
}

static void watchdog(int sig)
{
    char msg[128];
    int n = snprintf(msg, sizeof(msg), "test_thread_spin: watchdog fired in phase '%s'\n", phase);
    ssize_t w = write(2, msg, (size_t)n);
    (void)w;
    _exit(2);
}

static wt_spinlock_t lock = WT_SPIN_INITIALIZER;
static long counter WT_GUARDED_BY(lock);
static int inside;          /* threads inside the masked section; atomics */
static long entered, skipped, overlaps;

static void *masked(void *arg)
{
    long e = 0, s = 0;
    start_together();
    for (int i = 0; i < NITERS; i++) {
        if (!wt_spin_trylock(&lock)) {
            s++;
            continue;
        }
        if (__atomic_fetch_add(&inside, 1, __ATOMIC_RELAXED) != 0)
            __atomic_fetch_add(&overlaps, 1, __ATOMIC_RELAXED);
        counter++;
        e++;
        if ((i & 63) == 0)
            wt_thread_yield();   /* hold the lock across a yield now and then: others must skip */
        __atomic_fetch_sub(&inside, 1, __ATOMIC_RELAXED);
        wt_spin_unlock(&lock);
    }
    __atomic_fetch_add(&entered, e, __ATOMIC_RELAXED);
    __atomic_fetch_add(&skipped, s, __ATOMIC_RELAXED);
    return NULL;
}

static void *inc(void *arg)
{
    start_together();
    for (int i = 0; i < NITERS; i++) {
        wt_spin_lock(&lock);
        counter++;
        wt_spin_unlock(&lock);
    }
    return NULL;
}

/* counter is reset with no thread running: no lock needed */
static void run_threads(wt_thread_fn_t fn, const char *what) WT_NO_THREAD_SAFETY_ANALYSIS
{
    wt_thread_t t[NTHREADS];
    counter = 0;
    for (int i = 0; i < NTHREADS; i++)
        CHECK(wt_thread_create(&t[i], fn, NULL) == WU_OK, "%s: thread %d not created", what, i);
    for (int i = 0; i < NTHREADS; i++)
        CHECK(wt_thread_join(t[i]) == WU_OK, "%s: thread %d not joined", what, i);
}

/* Gate off: the gated calls touch nothing. Locks twice on purpose, hence no analysis. */
static void test_gate_off(void) WT_NO_THREAD_SAFETY_ANALYSIS
{
    wt_spinlock_t s;
    wt_spin_init(&s);
    wt_spin_lock(&s);
    wt_spin_lock(&s);   /* would spin forever if it locked */
    CHECK(wt_spin_trylock(&s), "gate off: trylock expected true, got false");
    CHECK(wt_spin_trylock_always(&s), "gate off: spinlock expected free under a gated lock, got held");
    CHECK(!wt_spin_trylock_always(&s), "_always: trylock of a held spinlock expected false, got true");
    wt_spin_unlock_always(&s);
    wt_spin_unlock(&s);
    wt_spin_unlock(&s);
    wt_spin_unlock(&s);
}

/* Reads counter after the joins, with no thread running. */
int main(void) WT_NO_THREAD_SAFETY_ANALYSIS
{
    signal(SIGALRM, watchdog);
    alarm(30);

    phase = "gate off";
    test_gate_off();

    phase = "gate on";
    wt_spinlock_t s;
    wt_spin_init(&s);
    wt_thread_set_multi(true);
    CHECK(wt_spin_trylock(&s), "gate on: trylock of a free spinlock expected true, got false");
    CHECK(!wt_spin_trylock(&s), "gate on: trylock of a held spinlock expected false, got true");
    wt_spin_unlock(&s);
    wt_spin_lock(&s);
    CHECK(!wt_spin_trylock(&s), "gate on: trylock after lock expected false, got true");
    wt_spin_unlock(&s);
    CHECK(wt_spin_trylock(&s), "gate on: trylock after unlock expected true, got false");
    wt_spin_unlock(&s);

    phase = "trylock as a mask";
    run_threads(masked, "mask");
    CHECK(overlaps == 0, "mask: threads inside together expected 0 times, got %ld", overlaps);
    CHECK(entered + skipped == (long)NTHREADS * NITERS, "mask: entered+skipped expected %ld, got %ld",
          (long)NTHREADS * NITERS, entered + skipped);
    CHECK(counter == entered, "mask: counter expected %ld, got %ld", entered, counter);
    CHECK(entered > 0, "mask: expected some entries, got none");

    phase = "8 threads lock/unlock";
    run_threads(inc, "lock");
    CHECK(counter == (long)NTHREADS * NITERS, "lock: counter expected %ld, got %ld",
          (long)NTHREADS * NITERS, counter);

    wt_thread_set_multi(false);
    printf("test_thread_spin: ok (mask: %ld entered, %ld skipped)\n", entered, skipped);
    return 0;
}
