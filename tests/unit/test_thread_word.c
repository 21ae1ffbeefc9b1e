/* Waiting on a word (wt_word_wait, wt_word_wait_until, wt_word_wake_all: the progression engine's
 * idle and timer threads sleep this way): a changed word does not sleep, a time limit ends the wait,
 * one wake-up reaches every waiter, and 20,000 turns ping-pong between two threads that wait
 * without time limit. A lost wake-up hangs a waiter: the watchdog then fails the test and names the
 * phase. Runs on every backend (the Pth build too: label pth). */
#include "thread/wt_thread.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "test_check.h"

#define NWAITERS 4
#define TURNS    20000

static const char *volatile phase = "start";

static void watchdog(int sig)
{
    char msg[160];
    int n = snprintf(msg, sizeof(msg), "test_thread_word: watchdog fired in phase '%s' (lost wake-up?)\n",
                     phase);
    ssize_t w = write(2, msg, (size_t)n);
    (void)w;
    _exit(2);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint32_t word;   /* __atomic */
static uint32_t woke;   /* __atomic: waiters that saw the word change */

static void test_no_sleep_and_limits(void)
{
    phase = "word already changed";
    __atomic_store_n(&word, 1, __ATOMIC_RELEASE);
    uint64_t t0 = now_ns();
    wt_word_wait(&word, 0, 10000000000u);          /* 10 s limit: must not be reached */
    wt_word_wait_until(&word, 0, now_ns() + 10000000000u);
    uint64_t dt = now_ns() - t0;
    CHECK(dt < 2000000000u, "waits on a changed word expected to return at once, took %.3f s", dt * 1e-9);

    phase = "time limits";
    __atomic_store_n(&word, 0, __ATOMIC_RELEASE);
    /* Returns may come early (the contract allows spurious ones): loop to the deadline as a caller
     * does, and check that the loop ends. */
    uint64_t deadline = now_ns() + 20000000u;
    while (now_ns() < deadline)
        wt_word_wait(&word, 0, deadline - now_ns());
    deadline = now_ns() + 20000000u;
    while (now_ns() < deadline)
        wt_word_wait_until(&word, 0, deadline);
    CHECK(__atomic_load_n(&word, __ATOMIC_ACQUIRE) == 0, "word expected 0, got %u", word);
}

static void *waiter(void *arg)
{
    while (__atomic_load_n(&word, __ATOMIC_ACQUIRE) == 0)
        wt_word_wait(&word, 0, 0);   /* no time limit: only the wake-up ends it */
    __atomic_fetch_add(&woke, 1, __ATOMIC_RELAXED);
    return NULL;
}

static void test_wake_all(void)
{
    phase = "one wake-up, every waiter";
    __atomic_store_n(&word, 0, __ATOMIC_RELEASE);
    wt_thread_t t[NWAITERS];
    for (int i = 0; i < NWAITERS; i++)
        CHECK(wt_thread_create(&t[i], waiter, NULL) == WU_OK, "waiter %d not created", i);
    /* let them fall asleep (not needed for correctness: a late waiter sees the word changed) */
    uint64_t until = now_ns() + 20000000u;
    while (now_ns() < until)
        wt_thread_yield();
    __atomic_store_n(&word, 1, __ATOMIC_RELEASE);
    wt_word_wake_all(&word);
    for (int i = 0; i < NWAITERS; i++)
        CHECK(wt_thread_join(t[i]) == WU_OK, "waiter %d not joined", i);
    CHECK(__atomic_load_n(&woke, __ATOMIC_RELAXED) == NWAITERS, "woken waiters expected %d, got %u",
          NWAITERS, woke);
}

static uint32_t turn;   /* __atomic: 0 main's turn, 1 the partner's */

static void wait_turn(uint32_t mine)
{
    uint32_t v;
    while ((v = __atomic_load_n(&turn, __ATOMIC_ACQUIRE)) != mine)
        wt_word_wait(&turn, v, 0);
}

static void *partner(void *arg)
{
    for (long i = 0; i < TURNS; i++) {
        wait_turn(1);
        __atomic_store_n(&turn, 0, __ATOMIC_RELEASE);
        wt_word_wake_all(&turn);
    }
    return NULL;
}

static void test_pingpong(void)
{
    phase = "ping-pong";
    wt_thread_t t;
    CHECK(wt_thread_create(&t, partner, NULL) == WU_OK, "partner not created");
    for (long i = 0; i < TURNS; i++) {
        __atomic_store_n(&turn, 1, __ATOMIC_RELEASE);
        wt_word_wake_all(&turn);
        wait_turn(0);
    }
    CHECK(wt_thread_join(t) == WU_OK, "partner not joined");
}

int main(void)
{
    signal(SIGALRM, watchdog);
    alarm(30);
    wt_thread_set_multi(true);
    test_no_sleep_and_limits();
    test_wake_all();
    test_pingpong();
    printf("test_thread_word: ok (%s: %d waiters woken at once, %d turns)\n", WT_BACKEND_NAME, NWAITERS, TURNS);
    return 0;
}
