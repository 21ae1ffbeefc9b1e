/* The wait object: a wake-up before the block is kept, a block times out, 100k wake-ups ping-pong
 * between two threads, and rounds of several wakers and one waiter. A lost wake-up hangs a waiter
 * that blocks without timeout: the watchdog then fails the test and names the phase. */
#include "thread/wt_thread.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define PINGPONG_WAKEUPS 100000
#define NWAKERS          4
#define ROUNDS           4000

#include "test_check.h"

static const char *volatile phase = "start";
static long progress;   /* atomics: last step reached, for the watchdog's message */

static void watchdog(int sig)
{
    char msg[160];
    int n = snprintf(msg, sizeof(msg),
                     "test_thread_wait: watchdog fired in phase '%s' at step %ld (lost wake-up?)\n",
                     phase, __atomic_load_n(&progress, __ATOMIC_RELAXED));
    ssize_t w = write(2, msg, (size_t)n);
    (void)w;
    _exit(2);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The waiter's loop of the header's contract. */
static void wait_until_eq(wt_wait_t *w, long *var, long want)
{
    for (;;) {
        wt_wait_prepare(w);
        if (__atomic_load_n(var, __ATOMIC_ACQUIRE) == want)
            return;
        wu_status_t st = wt_wait_block(w, 0);
        CHECK(st == WU_OK, "block without timeout expected WU_OK, got %s", wu_status_str(st));
    }
}

static void test_pending(void)
{
    wt_wait_t w;
    wt_wait_init(&w);
    CHECK(((uintptr_t)&w & 63) == 0, "wait object expected 64-byte aligned, got %p", (void *)&w);

    phase = "prepare, wake, block";
    wt_wait_prepare(&w);
    wt_wait_wake(&w);
    double t0 = now_s();
    wu_status_t st = wt_wait_block(&w, 0);
    CHECK(st == WU_OK, "expected WU_OK, got %s", wu_status_str(st));

    phase = "wake, block (no prepare)";
    wt_wait_wake(&w);
    st = wt_wait_block(&w, 0);
    CHECK(st == WU_OK, "expected WU_OK, got %s", wu_status_str(st));

    phase = "wake, prepare, block";
    wt_wait_wake(&w);
    wt_wait_prepare(&w);
    st = wt_wait_block(&w, 0);
    CHECK(st == WU_OK, "expected WU_OK, got %s", wu_status_str(st));
    double dt = now_s() - t0;
    CHECK(dt < 1.0, "blocks after a wake-up expected to return at once, took %.3f s", dt);

    phase = "three wakes hold one wake-up";
    wt_wait_wake(&w);
    wt_wait_wake(&w);
    wt_wait_wake(&w);
    st = wt_wait_block(&w, 0);
    CHECK(st == WU_OK, "first block expected WU_OK, got %s", wu_status_str(st));
    st = wt_wait_block(&w, 10 * 1000 * 1000);
    CHECK(st == WU_ERR_TIMEOUT, "second block expected WU_ERR_TIMEOUT, got %s", wu_status_str(st));
    CHECK(w.state == WT_WAIT_IDLE, "state after timeout expected IDLE (%d), got %u", WT_WAIT_IDLE,
          w.state);
    wt_wait_destroy(&w);
}

static void test_timeout(void)
{
    phase = "timeout";
    wt_wait_t w;
    wt_wait_init(&w);
    const uint64_t timeout_ns = 50 * 1000 * 1000;
    wt_wait_prepare(&w);
    double t0 = now_s();
    wu_status_t st = wt_wait_block(&w, timeout_ns);
    double dt = now_s() - t0;
    CHECK(st == WU_ERR_TIMEOUT, "expected WU_ERR_TIMEOUT, got %s", wu_status_str(st));
    CHECK(dt >= 0.050, "block expected to last at least 0.050 s, lasted %.4f s", dt);
    CHECK(dt < 5.0, "block expected to last about 0.050 s, lasted %.4f s", dt);
    /* still usable after a timeout */
    wt_wait_wake(&w);
    st = wt_wait_block(&w, timeout_ns);
    CHECK(st == WU_OK, "block after a wake expected WU_OK, got %s", wu_status_str(st));
    wt_wait_destroy(&w);
}

/* ---- ping-pong: turn is even for main, odd for the partner ----------------------------------- */

static wt_wait_t wait_main, wait_partner;
static long turn;

static void *pingpong_partner(void *arg)
{
    for (long i = 0; i < PINGPONG_WAKEUPS / 2; i++) {
        wait_until_eq(&wait_partner, &turn, 2 * i + 1);
        __atomic_store_n(&turn, 2 * i + 2, __ATOMIC_RELEASE);
        wt_wait_wake(&wait_main);
    }
    return NULL;
}

static void test_pingpong(void)
{
    phase = "ping-pong";
    wt_wait_init(&wait_main);
    wt_wait_init(&wait_partner);
    wt_thread_t t;
    double t0 = now_s();
    CHECK(wt_thread_create(&t, pingpong_partner, NULL) == WU_OK, "thread not created");
    for (long i = 0; i < PINGPONG_WAKEUPS / 2; i++) {
        wait_until_eq(&wait_main, &turn, 2 * i);
        __atomic_store_n(&progress, 2 * i, __ATOMIC_RELAXED);
        __atomic_store_n(&turn, 2 * i + 1, __ATOMIC_RELEASE);
        wt_wait_wake(&wait_partner);
    }
    wait_until_eq(&wait_main, &turn, PINGPONG_WAKEUPS);
    CHECK(wt_thread_join(t) == WU_OK, "thread not joined");
    printf("  ping-pong: %d wake-ups in %.2f s\n", PINGPONG_WAKEUPS, now_s() - t0);
}

/* ---- rounds: in round r each waker adds one to posted and wakes; the waiter waits for all
 * NWAKERS of them, then opens round r+1. The last wake of each round is the one that must not be
 * lost. ---------------------------------------------------------------------------------------- */

static wt_wait_t wait_many;
static long posted, round_open;

static void *waker(void *arg)
{
    for (long r = 0; r < ROUNDS; r++) {
        while (__atomic_load_n(&round_open, __ATOMIC_ACQUIRE) < r)
            wt_thread_yield();
        __atomic_fetch_add(&posted, 1, __ATOMIC_RELEASE);
        wt_wait_wake(&wait_many);
    }
    return NULL;
}

static void test_many_wakers(void)
{
    phase = "many wakers, one waiter";
    __atomic_store_n(&progress, 0, __ATOMIC_RELAXED);
    wt_wait_init(&wait_many);
    wt_thread_t t[NWAKERS];
    for (int i = 0; i < NWAKERS; i++)
        CHECK(wt_thread_create(&t[i], waker, NULL) == WU_OK, "waker %d not created", i);
    for (long r = 0; r < ROUNDS; r++) {
        wait_until_eq(&wait_many, &posted, (r + 1) * NWAKERS);
        __atomic_store_n(&progress, r, __ATOMIC_RELAXED);
        __atomic_store_n(&round_open, r + 1, __ATOMIC_RELEASE);
    }
    for (int i = 0; i < NWAKERS; i++)
        CHECK(wt_thread_join(t[i]) == WU_OK, "waker %d not joined", i);
    long expected = (long)NWAKERS * ROUNDS;
    CHECK(posted == expected, "posted expected %ld, got %ld", expected, posted);
}

int main(void)
{
    signal(SIGALRM, watchdog);
    alarm(30);
    test_pending();
    test_timeout();
    test_pingpong();
    test_many_wakers();
    printf("test_thread_wait: ok\n");
    return 0;
}
