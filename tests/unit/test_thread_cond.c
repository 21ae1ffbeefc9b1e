/* Condition variables of the threading layer: signal hands a turn back and forth between two
 * threads; broadcast releases every waiter. */
#include "thread/wt_thread.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ROUNDS   5000
#define NWAITERS 6

#include "test_check.h"

static const char *volatile phase = "start";

static void watchdog(int sig)
{
    char msg[128];
    int n = snprintf(msg, sizeof(msg), "test_thread_cond: watchdog fired in phase '%s'\n", phase);
    ssize_t w = write(2, msg, (size_t)n);
    (void)w;
    _exit(2);
}

static wt_mutex_t lock;
static wt_cond_t cond;
static long turn WT_GUARDED_BY(lock);       /* even: main's turn, odd: the partner's */
static int go WT_GUARDED_BY(lock);
static int released WT_GUARDED_BY(lock);

static void *partner(void *arg)
{
    for (long i = 0; i < ROUNDS; i++) {
        wt_mutex_lock_always(&lock);
        while (turn != 2 * i + 1)
            wt_cond_wait(&cond, &lock);
        turn++;
        wt_cond_signal(&cond);
        wt_mutex_unlock_always(&lock);
    }
    return NULL;
}

static void *waiter(void *arg)
{
    wt_mutex_lock_always(&lock);
    while (!go)
        wt_cond_wait(&cond, &lock);
    released++;
    wt_mutex_unlock_always(&lock);
    return NULL;
}

/* Reads turn and released after the joins, with no thread running. */
int main(void) WT_NO_THREAD_SAFETY_ANALYSIS
{
    signal(SIGALRM, watchdog);
    alarm(30);
    CHECK(wt_mutex_init(&lock) == WU_OK, "wt_mutex_init failed");
    CHECK(wt_cond_init(&cond) == WU_OK, "wt_cond_init failed");

    phase = "signal ping-pong";
    wt_thread_t t;
    CHECK(wt_thread_create(&t, partner, NULL) == WU_OK, "thread not created");
    for (long i = 0; i < ROUNDS; i++) {
        wt_mutex_lock_always(&lock);
        while (turn != 2 * i)
            wt_cond_wait(&cond, &lock);
        turn++;
        wt_cond_signal(&cond);
        wt_mutex_unlock_always(&lock);
    }
    CHECK(wt_thread_join(t) == WU_OK, "thread not joined");
    CHECK(turn == 2 * ROUNDS, "turns expected %d, got %ld", 2 * ROUNDS, turn);

    phase = "broadcast";
    wt_thread_t w[NWAITERS];
    for (int i = 0; i < NWAITERS; i++)
        CHECK(wt_thread_create(&w[i], waiter, NULL) == WU_OK, "waiter %d not created", i);
    wt_mutex_lock_always(&lock);
    go = 1;
    wt_cond_broadcast(&cond);
    wt_mutex_unlock_always(&lock);
    for (int i = 0; i < NWAITERS; i++)
        CHECK(wt_thread_join(w[i]) == WU_OK, "waiter %d not joined", i);
    CHECK(released == NWAITERS, "released waiters expected %d, got %d", NWAITERS, released);

    wt_cond_destroy(&cond);
    wt_mutex_destroy(&lock);
    printf("test_thread_cond: ok (%d signal rounds, %d waiters broadcast)\n", ROUNDS, NWAITERS);
    return 0;
}
