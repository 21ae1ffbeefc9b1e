/* The cost of one lock+unlock pair, uncontended, through each path (docs/threads.md):
 *   bench_locks <variant> [pairs]   runs one variant's loop (bench_<variant>); run.sh counts its
 *                                   instructions under callgrind --toggle-collect=bench_<variant>
 *   bench_locks --time [pairs]      runs every variant natively and prints ns per pair: the best
 *                                   of batches of 1000 pairs (still noisy on a shared machine; the
 *                                   instruction counts are the stable measure)
 * The threading layer is compiled into this executable, as it is into libmpi_abi.so; liblockcall.so
 * holds the out-of-line variants. Every loop has the same compiler barrier, so subtracting the
 * `loop` variant leaves the pair alone. */
#include "thread/wt_thread.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void lock_call(pthread_mutex_t *m);
void unlock_call(pthread_mutex_t *m);
void wt_lock_call(wt_mutex_t *m);
void wt_unlock_call(wt_mutex_t *m);
void lockcall_set_multi(bool on);

#define BARRIER() __asm__ __volatile__("" ::: "memory")
#define BENCH __attribute__((noinline, visibility("default")))

static wt_mutex_t wm = WT_MUTEX_INITIALIZER;
static wt_spinlock_t ws = WT_SPIN_INITIALIZER;
static pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
static pthread_spinlock_t ps;

BENCH void bench_loop(long n)
{
    for (long i = 0; i < n; i++)
        BARRIER();
}

BENCH void bench_wt_mutex(long n)
{
    for (long i = 0; i < n; i++) {
        wt_mutex_lock(&wm);
        BARRIER();
        wt_mutex_unlock(&wm);
    }
}

BENCH void bench_wt_spin(long n)
{
    for (long i = 0; i < n; i++) {
        wt_spin_lock(&ws);
        BARRIER();
        wt_spin_unlock(&ws);
    }
}

BENCH void bench_wt_spin_always(long n)
{
    for (long i = 0; i < n; i++) {
        wt_spin_lock_always(&ws);
        BARRIER();
        wt_spin_unlock_always(&ws);
    }
}

BENCH void bench_wt_mutex_always(long n)
{
    for (long i = 0; i < n; i++) {
        wt_mutex_lock_always(&wm);
        BARRIER();
        wt_mutex_unlock_always(&wm);
    }
}

BENCH void bench_pthread_mutex(long n)
{
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&pm);
        BARRIER();
        pthread_mutex_unlock(&pm);
    }
}

BENCH void bench_pthread_spin(long n)
{
    for (long i = 0; i < n; i++) {
        pthread_spin_lock(&ps);
        BARRIER();
        pthread_spin_unlock(&ps);
    }
}

BENCH void bench_lock_call(long n)
{
    for (long i = 0; i < n; i++) {
        lock_call(&pm);
        BARRIER();
        unlock_call(&pm);
    }
}

BENCH void bench_wt_lock_call(long n)
{
    for (long i = 0; i < n; i++) {
        wt_lock_call(&wm);
        BARRIER();
        wt_unlock_call(&wm);
    }
}

typedef struct {
    const char *name;
    void (*fn)(long);
    const char *fn_name;
    int gate;            /* -1: not gated */
    const char *what;
} variant_t;

static const variant_t variants[] = {
    { "loop", bench_loop, "bench_loop",          -1, "empty loop (subtracted from the others)" },
    { "wt_mutex_on", bench_wt_mutex, "bench_wt_mutex",       1, "inline wt_mutex_lock/unlock, gate on" },
    { "wt_mutex_off", bench_wt_mutex, "bench_wt_mutex",       0, "inline wt_mutex_lock/unlock, gate off" },
    { "wt_mutex_always", bench_wt_mutex_always, "bench_wt_mutex_always", -1, "inline wt_mutex_lock/unlock_always (no gate)" },
    { "wt_spin_on", bench_wt_spin, "bench_wt_spin",        1, "inline wt_spin_lock/unlock, gate on" },
    { "wt_spin_off", bench_wt_spin, "bench_wt_spin",        0, "inline wt_spin_lock/unlock, gate off" },
    { "wt_spin_always", bench_wt_spin_always, "bench_wt_spin_always", -1, "inline wt_spin_lock/unlock_always (no gate)" },
    { "pthread_mutex", bench_pthread_mutex, "bench_pthread_mutex", -1, "pthread_mutex_lock/unlock called directly" },
    { "pthread_spin", bench_pthread_spin, "bench_pthread_spin",  -1, "pthread_spin_lock/unlock called directly" },
    { "lock_call", bench_lock_call, "bench_lock_call",     -1, "shared-library lock_call/unlock_call -> pthread" },
    { "wt_lock_call_on", bench_wt_lock_call, "bench_wt_lock_call",   1, "shared-library gated wt_mutex_lock/unlock, gate on" },
    { "wt_lock_call_off", bench_wt_lock_call, "bench_wt_lock_call",  0, "shared-library gated wt_mutex_lock/unlock, gate off" },
};

static void set_gate(int gate)
{
    if (gate < 0)
        return;
    wt_thread_set_multi(gate);
    lockcall_set_multi(gate);
}

static void *idle_thread(void *arg)
{
    return arg;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    pthread_spin_init(&ps, PTHREAD_PROCESS_PRIVATE);
    /* glibc skips the lock prefix of its mutexes while a process has never had a second thread;
     * a process running Weft at MPI_THREAD_MULTIPLE has had one, so this one has too. */
    pthread_t t;
    pthread_create(&t, NULL, idle_thread, NULL);
    pthread_join(t, NULL);
    long n = argc > 2 ? atol(argv[2]) : 1000000;
    if (argc < 2 || n <= 0) {
        fprintf(stderr, "usage: bench_locks <variant>|--list|--time [pairs]\n");
        return 2;
    }
    if (!strcmp(argv[1], "--list")) {
        for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++)
            printf("%s\t%s\t%s\n", variants[i].name, variants[i].fn_name, variants[i].what);
        return 0;
    }
    if (!strcmp(argv[1], "--time")) {
        /* the fastest of many short batches: a batch that was not interrupted nor shared its core */
        const long batch = 1000;
        double base = 0;
        for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
            const variant_t *v = &variants[i];
            set_gate(v->gate);
            double best = 1e300;
            for (long rep = 0; rep < n / batch; rep++) {
                double t0 = now_ns();
                v->fn(batch);
                double t = (now_ns() - t0) / (double)batch;
                best = t < best ? t : best;
            }
            if (i == 0)
                base = best;
            double net = i == 0 ? best : best - base;
            printf("%s\t%.1f\n", v->name, net > 0 ? net : 0.0);
        }
        return 0;
    }
    for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
        if (!strcmp(argv[1], variants[i].name)) {
            set_gate(variants[i].gate);
            variants[i].fn(n);
            return 0;
        }
    }
    fprintf(stderr, "bench_locks: unknown variant %s (--list)\n", argv[1]);
    return 2;
}
