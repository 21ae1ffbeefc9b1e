/* Per-thread counters (util/wu_counters.h): nothing is counted while nobody watches; then, with
 * a watcher, 8 threads in 4 waves (so later threads reuse the blocks of exited ones) each count
 * NITERS events into two counters while a reader sums them again and again; every sum goes
 * forward and the final sums are exact; after the watcher leaves, counting stops again. */
#include "util/wu_counters.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 8
#define NWAVES   4
#define NITERS   100000

#include "test_check.h"

static int done;   /* __atomic */

static void *counter(void *arg)
{
    (void)arg;
    for (int i = 0; i < NITERS; i++) {
        wu_count(WU_COUNT_SEND_MSGS, 1);
        wu_count(WU_COUNT_SEND_BYTES, 3);
    }
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    uint64_t last = 0;
    while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
        uint64_t v = wu_counter_sum(WU_COUNT_SEND_MSGS);
        CHECK(v >= last, "sums go forward: %llu then %llu", (unsigned long long)last,
              (unsigned long long)v);
        CHECK(v <= (uint64_t)NTHREADS * NWAVES * NITERS, "at most every event: %llu",
              (unsigned long long)v);
        last = v;
    }
    return NULL;
}

int main(void)
{
    CHECK(wu_counter_sum(WU_COUNT_SEND_MSGS) == 0, "nothing counted yet");
    CHECK(!wu_counting(), "counting is off with no watcher");
    counter(NULL);
    wu_count2(WU_COUNT_RECV_MSGS, 1, WU_COUNT_RECV_BYTES, 5);
    CHECK(wu_counter_sum(WU_COUNT_SEND_MSGS) == 0 && wu_counter_sum(WU_COUNT_RECV_BYTES) == 0,
          "events with no watcher are not counted: %llu, %llu",
          (unsigned long long)wu_counter_sum(WU_COUNT_SEND_MSGS),
          (unsigned long long)wu_counter_sum(WU_COUNT_RECV_BYTES));
    wu_counters_watch(1);
    wu_counters_watch(1);
    wu_counters_watch(-1);
    CHECK(wu_counting(), "counting is on with a watcher");
    pthread_t r, t[NTHREADS];
    pthread_create(&r, NULL, reader, NULL);
    for (int w = 0; w < NWAVES; w++) {
        for (int i = 0; i < NTHREADS; i++)
            pthread_create(&t[i], NULL, counter, NULL);
        for (int i = 0; i < NTHREADS; i++)
            pthread_join(t[i], NULL);
        uint64_t want = (uint64_t)NTHREADS * (uint64_t)(w + 1) * NITERS;
        CHECK(wu_counter_sum(WU_COUNT_SEND_MSGS) == want, "after wave %d: expected %llu got %llu",
              w, (unsigned long long)want,
              (unsigned long long)wu_counter_sum(WU_COUNT_SEND_MSGS));
        CHECK(wu_counter_sum(WU_COUNT_SEND_BYTES) == 3 * want, "bytes after wave %d", w);
    }
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    pthread_join(r, NULL);
    CHECK(wu_counter_sum(WU_COUNT_RECV_MSGS) == 0, "a counter nobody counted stays 0");
    wu_count2(WU_COUNT_RECV_MSGS, 1, WU_COUNT_RECV_BYTES, 5);
    CHECK(wu_counter_sum(WU_COUNT_RECV_MSGS) == 1 && wu_counter_sum(WU_COUNT_RECV_BYTES) == 5,
          "wu_count2 counts both");
    wu_counters_watch(-1);
    CHECK(!wu_counting(), "counting is off when the last watcher leaves");
    counter(NULL);
    CHECK(wu_counter_sum(WU_COUNT_SEND_MSGS) == (uint64_t)NTHREADS * NWAVES * NITERS,
          "nothing counted after the watcher left");
    printf("test_counters: %d threads x %d waves x %d events, sums exact\n", NTHREADS, NWAVES,
           NITERS);
    return 0;
}
