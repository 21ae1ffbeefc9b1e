/* Mutexes of the threading layer: mutual exclusion with the gate on (8 threads), the _always
 * variants with the gate off, and the gate off making the gated calls no-ops. */
#include "thread/wt_thread.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    int n = snprintf(msg, sizeof(msg), "test_thread_mutex: watchdog fired in phase '%s'\n", phase);
    ssize_t w = write(2, msg, (size_t)n);
    (void)w;
    _exit(2);
}

static wt_mutex_t lock = WT_MUTEX_INITIALIZER;
static long counter WT_GUARDED_BY(lock);

static void *inc_gated(void *arg)
{
    start_together();
    for (int i = 0; i < NITERS; i++) {
        wt_mutex_lock(&lock);
        counter++;
        wt_mutex_unlock(&lock);
    }
    return NULL;
}

static void *inc_always(void *arg)
{
    start_together();
    for (int i = 0; i < NITERS; i++) {
        if (i & 1) {
            while (!wt_mutex_trylock_always(&lock))
                wt_thread_yield();
        } else {
            wt_mutex_lock_always(&lock);
        }
        counter++;
        wt_mutex_unlock_always(&lock);
    }
    return NULL;
}

/* counter is read and reset with no thread running: no lock needed */
static void run_threads(wt_thread_fn_t fn, const char *what) WT_NO_THREAD_SAFETY_ANALYSIS
{
    wt_thread_t t[NTHREADS];
    counter = 0;
    for (int i = 0; i < NTHREADS; i++)
        CHECK(wt_thread_create(&t[i], fn, NULL) == WU_OK, "%s: thread %d not created", what, i);
    for (int i = 0; i < NTHREADS; i++)
        CHECK(wt_thread_join(t[i]) == WU_OK, "%s: thread %d not joined", what, i);
    long expected = (long)NTHREADS * NITERS;
    CHECK(counter == expected, "%s: counter expected %ld, got %ld", what, expected, counter);
}

/* Gate off: the gated calls touch nothing; the mutex underneath stays free. Locks twice on purpose,
 * hence no analysis. */
static void test_gate_off(wt_mutex_t *m) WT_NO_THREAD_SAFETY_ANALYSIS
{
    wt_mutex_lock(m);
    wt_mutex_lock(m);   /* would deadlock if it locked */
    CHECK(wt_mutex_trylock(m), "gate off: trylock expected true, got false");
    CHECK(wt_mutex_trylock_always(m), "gate off: mutex expected free under a gated lock, got held");
    wt_mutex_unlock_always(m);
    wt_mutex_unlock(m);
    wt_mutex_unlock(m);
    wt_mutex_unlock(m);
}

/* Tries a held mutex on purpose, hence no analysis. */
int main(void) WT_NO_THREAD_SAFETY_ANALYSIS
{
    signal(SIGALRM, watchdog);
    alarm(30);

    phase = "gate off";
    wt_mutex_t m;
    CHECK(wt_mutex_init(&m) == WU_OK, "wt_mutex_init failed");
    CHECK(!wt_thread_multi, "gate expected off at start, got on");
    test_gate_off(&m);

    /* gate off: the _always variants still exclude */
    phase = "always, gate off";
    run_threads(inc_always, "_always with gate off");

    /* gate on */
    phase = "gate on";
    wt_thread_set_multi(true);
    CHECK(wt_thread_multi, "gate expected on, got off");
    wt_mutex_lock(&m);
    CHECK(!wt_mutex_trylock(&m), "gate on: trylock of a held mutex expected false, got true");
    wt_mutex_unlock(&m);
    CHECK(wt_mutex_trylock(&m), "gate on: trylock of a free mutex expected true, got false");
    wt_mutex_unlock(&m);
    wt_mutex_destroy(&m);

    phase = "8 threads, gate on";
    run_threads(inc_gated, "gated with gate on");

    wt_thread_set_multi(false);
    printf("test_thread_mutex: ok (%d threads x %d increments)\n", NTHREADS, NITERS);
    return 0;
}
