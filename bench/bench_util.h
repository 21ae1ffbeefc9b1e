/* Helpers shared by the benchmark programs: a clock that is the same for every MPI implementation, sample
 * statistics, size-list parsing and optional pinning of the process. Header-only so each program is one translation
 * unit that any mpicc (MPICH's, Open MPI's, Weft's CMake target) compiles without extra files.
 *
 * The programs use only MPI-1 point-to-point calls (Init, Comm_rank, Comm_size, Send, Recv, Irecv, Waitall,
 * Abort, Finalize) so they run on an implementation that is still young. */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity, CPU_* */
#endif
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

/* CLOCK_MONOTONIC through the vDSO (~20 ns), not MPI_Wtime, so the timer is identical for all three
 * implementations. */
static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Median cost of one bench_now() call, in seconds: part of every timed sample, reported so it can be judged. */
static inline double bench_timer_cost(void)
{
    double d[101];
    for (int i = 0; i < 101; i++) {
        double a = bench_now(), b = bench_now();
        d[i] = b - a;
    }
    for (int i = 1; i < 101; i++) /* insertion sort: 101 values, once */
        for (int j = i; j > 0 && d[j - 1] > d[j]; j--) {
            double t = d[j];
            d[j] = d[j - 1];
            d[j - 1] = t;
        }
    return d[50];
}

/* A growable array of samples; grown only outside timed regions. */
typedef struct {
    double *v;
    size_t n, cap;
} bench_samples_t;

static inline void bench_samples_reserve(bench_samples_t *s, size_t extra)
{
    if (s->n + extra <= s->cap)
        return;
    size_t cap = s->cap ? s->cap : 1024;
    while (cap < s->n + extra)
        cap *= 2;
    double *v = realloc(s->v, cap * sizeof(*v));
    if (!v) {
        fprintf(stderr, "bench: out of memory for %zu samples\n", cap);
        exit(2);
    }
    s->v = v;
    s->cap = cap;
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    double median, mean, p99, min, max;
} bench_stats_t;

/* Sorts the samples in place. p99 is the nearest-rank percentile: the smallest sample that is >= 99% of all. */
static inline bench_stats_t bench_stats(bench_samples_t *s)
{
    bench_stats_t r = {0};
    size_t n = s->n;
    if (n == 0)
        return r;
    qsort(s->v, n, sizeof(double), bench_cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += s->v[i];
    r.mean = sum / (double)n;
    r.median = (n % 2) ? s->v[n / 2] : 0.5 * (s->v[n / 2 - 1] + s->v[n / 2]);
    size_t k = (size_t)((99 * n + 99) / 100); /* ceil(0.99 n), 1-based rank */
    r.p99 = s->v[(k ? k : 1) - 1];
    r.min = s->v[0];
    r.max = s->v[n - 1];
    return r;
}

/* Parses "0,8,4K,1M" (K = 1024, M = 1024*1024) into out[], returns the count or -1. */
static inline int bench_parse_list(const char *str, long *out, int max)
{
    int n = 0;
    const char *p = str;
    while (*p) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 0)
            return -1;
        if (*end == 'k' || *end == 'K') {
            v *= 1024;
            end++;
        } else if (*end == 'm' || *end == 'M') {
            v *= 1024 * 1024;
            end++;
        }
        if (n == max)
            return -1;
        out[n++] = v;
        if (*end == ',')
            end++;
        else if (*end)
            return -1;
        p = end;
    }
    return n;
}

/* Pins the whole process (every thread it has, and so every thread they create later) to the rank-th CPU
 * (mod count) of the set it is allowed to run on: what a launcher's --bind-to core does before exec, done here
 * after MPI_Init so that the binding is identical whichever launcher started the process. Returns the CPU
 * chosen, or -1. */
static inline int bench_pin_self(int rank)
{
    cpu_set_t allowed, one;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
        return -1;
    int count = CPU_COUNT(&allowed);
    if (count == 0)
        return -1;
    int want = rank % count, seen = 0, cpu;
    for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &allowed) && seen++ == want)
            break;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks)
        return sched_setaffinity(0, sizeof(one), &one) == 0 ? cpu : -1;
    int ok = 1;
    struct dirent *e;
    while ((e = readdir(tasks)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        /* A thread may exit between readdir and here: ESRCH is not a failure. */
        if (sched_setaffinity((pid_t)atoi(e->d_name), sizeof(one), &one) != 0 && errno != ESRCH)
            ok = 0;
    }
    closedir(tasks);
    return ok ? cpu : -1;
}

#endif
