/* Helpers shared by the progression engine's tests (test_progress_*.c). */
#ifndef TEST_PROGRESS_H
#define TEST_PROGRESS_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "progress/wp_engine.h"

static int failures;

#define CHECK_EQ(what, expected, got)                                                            \
    do {                                                                                         \
        long long e_ = (long long)(expected), g_ = (long long)(got);                            \
        if (e_ != g_) {                                                                          \
            fprintf(stderr, "%s:%d: %s: expected %lld, got %lld\n", __FILE__, __LINE__, (what), \
                    e_, g_);                                                                     \
            failures++;                                                                          \
        }                                                                                        \
    } while (0)

#define CHECK(what, cond)                                                                        \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "%s:%d: %s: expected %s\n", __FILE__, __LINE__, (what), #cond);      \
            failures++;                                                                          \
        }                                                                                        \
    } while (0)

static inline uint64_t tp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void tp_sleep_us(unsigned us)
{
    struct timespec ts = { us / 1000000u, (long)(us % 1000000u) * 1000 };
    nanosleep(&ts, NULL);
}

/* An engine configuration: explicit polling, idle threads, timer thread. */
static inline wp_engine_config_t tp_config(bool explicit_poll, bool idle, bool timer)
{
    wp_engine_config_t c = {
        .explicit_poll = explicit_poll,
        .idle_threads = idle,
        .idle_level = "package",
        .idle_pause_us = 20,
        .timer_thread = timer,
        .timer_period_us = 1000,
    };
    return c;
}

static inline void tp_init(wp_engine_config_t c)
{
    wu_status_t st = wp_engine_init(&c);
    if (st != WU_OK) {
        fprintf(stderr, "wp_engine_init: expected WU_OK, got %s\n", wu_status_str(st));
        exit(1);
    }
}

#endif
