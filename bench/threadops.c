/* ThreadOps-style costs of the threading layer's backend (after ThreadOpsBench, in
 * ../shared/seeds/openmpi-flexible-threading.txt): the calls Weft makes, through wt_thread.h, timed
 * on whichever backend the build tree was configured with (WEFT_THREADS). bench/run_threadops.sh runs
 * it in one tree per backend and puts the figures side by side.
 *
 *   bench_threadops [-t budget_s] [-n threads] [-y yields] [-r reps]
 *
 * Prints one line per operation: `threadops backend=B op=NAME ns=X per=UNIT`, X the best of the
 * repetitions (the least disturbed on a shared machine):
 *   create_join      create n threads that return at once, then join them; per thread
 *   create_yield     the seed's second run: n threads each yielding y times; per yield
 *   yield            one thread yielding alone (no other runnable thread of the process); per yield
 *   mutex            wt_mutex_lock_always + unlock, uncontended; per pair
 *   spin             wt_spin_lock_always + unlock, uncontended; per pair
 *   cond_rt          two threads passing a turn back and forth with a mutex and a condition; per
 *                    round trip (two signals, two waits)
 *   wait_rt          the same with two wait objects (wt_wait_prepare/block/wake, the path of a
 *                    blocked MPI call); per round trip
 * The threading layer is compiled in (weft_internal), as it is into libmpi_abi.so. */
#include "thread/wt_thread.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BARRIER() __asm__ __volatile__("" ::: "memory")

static double budget = 0.2;   /* seconds per repetition, roughly */
static int nthreads = 16;
static long nyields = 4000;
static int reps = 5;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void report(const char *op, double ns, const char *per)
{
    printf("threadops backend=%s op=%s ns=%.1f per=%s\n", WT_BACKEND_NAME, op, ns, per);
    fflush(stdout);
}

static void die(const char *what)
{
    fprintf(stderr, "bench_threadops: %s failed\n", what);
    exit(1);
}

/* ---- create/join and the seed's yield run ------------------------------------------------------ */

static void *yield_main(void *arg)
{
    long n = (long)(intptr_t)arg;
    for (long i = 0; i < n; i++)
        wt_thread_yield();
    return NULL;
}

/* Time of one kernel: n threads each yielding y times, created then joined. */
static double kernel(long y)
{
    wt_thread_t th[256];
    double t0 = now_s();
    for (int i = 0; i < nthreads; i++)
        if (wt_thread_create(&th[i], yield_main, (void *)(intptr_t)y) != WU_OK)
            die("wt_thread_create");
    for (int i = 0; i < nthreads; i++)
        if (wt_thread_join(th[i]) != WU_OK)
            die("wt_thread_join");
    return now_s() - t0;
}

static void bench_create(void)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        int rounds = 0;
        double t = 0;
        do {
            t += kernel(0);
            rounds++;
        } while (t < budget);
        double per = t / rounds / nthreads * 1e9;
        if (per < best)
            best = per;
    }
    report("create_join", best, "thread");

    best = 1e30;
    for (int r = 0; r < reps; r++) {
        double per = kernel(nyields) / ((double)nthreads * (double)nyields) * 1e9;
        if (per < best)
            best = per;
    }
    report("create_yield", best, "yield");
}

/* ---- one thread alone ------------------------------------------------------------------------- */

static wt_mutex_t mu = WT_MUTEX_INITIALIZER;
static wt_spinlock_t sp = WT_SPIN_INITIALIZER;

static double time_loop(void (*fn)(long), long n)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        fn(n);
        double per = (now_s() - t0) / (double)n * 1e9;
        if (per < best)
            best = per;
    }
    return best;
}

static void loop_yield(long n)
{
    for (long i = 0; i < n; i++)
        wt_thread_yield();
}

static void loop_mutex(long n)
{
    for (long i = 0; i < n; i++) {
        wt_mutex_lock_always(&mu);
        BARRIER();
        wt_mutex_unlock_always(&mu);
    }
}

static void loop_spin(long n)
{
    for (long i = 0; i < n; i++) {
        wt_spin_lock_always(&sp);
        BARRIER();
        wt_spin_unlock_always(&sp);
    }
}

/* How many iterations of fn fill about `budget` seconds. */
static long calibrate(void (*fn)(long))
{
    long n = 1000;
    for (;;) {
        double t0 = now_s();
        fn(n);
        double t = now_s() - t0;
        if (t > budget / 10 || n > (1L << 34))
            return (long)((double)n * budget / (t > 0 ? t : 1e-9)) + 1;
        n *= 4;
    }
}

/* ---- two threads passing a turn --------------------------------------------------------------- */

static wt_cond_t cv;
static int turn;            /* under mu: 0 main's turn, 1 partner's */
static long rt_rounds;

static void *cond_partner(void *arg)
{
    wt_mutex_lock_always(&mu);
    for (long i = 0; i < rt_rounds; i++) {
        while (turn != 1)
            wt_cond_wait(&cv, &mu);
        turn = 0;
        wt_cond_signal(&cv);
    }
    wt_mutex_unlock_always(&mu);
    return NULL;
}

static double cond_rt(long n)
{
    wt_thread_t t;
    rt_rounds = n;
    turn = 0;
    if (wt_thread_create(&t, cond_partner, NULL) != WU_OK)
        die("wt_thread_create");
    double t0 = now_s();
    wt_mutex_lock_always(&mu);
    for (long i = 0; i < n; i++) {
        turn = 1;
        wt_cond_signal(&cv);
        while (turn != 0)
            wt_cond_wait(&cv, &mu);
    }
    wt_mutex_unlock_always(&mu);
    double t1 = now_s();
    wt_thread_join(t);
    return (t1 - t0) / (double)n * 1e9;
}

static wt_wait_t wait_main, wait_partner;
static uint32_t wturn;       /* __atomic: 0 main's turn, 1 partner's */

static void *wait_partner_main(void *arg)
{
    for (long i = 0; i < rt_rounds; i++) {
        for (;;) {
            wt_wait_prepare(&wait_partner);
            if (__atomic_load_n(&wturn, __ATOMIC_ACQUIRE) == 1)
                break;
            wt_wait_block(&wait_partner, 0);
        }
        __atomic_store_n(&wturn, 0, __ATOMIC_RELEASE);
        wt_wait_wake(&wait_main);
    }
    return NULL;
}

static double wait_rt(long n)
{
    wt_thread_t t;
    rt_rounds = n;
    __atomic_store_n(&wturn, 0, __ATOMIC_RELAXED);
    if (wt_thread_create(&t, wait_partner_main, NULL) != WU_OK)
        die("wt_thread_create");
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        __atomic_store_n(&wturn, 1, __ATOMIC_RELEASE);
        wt_wait_wake(&wait_partner);
        for (;;) {
            wt_wait_prepare(&wait_main);
            if (__atomic_load_n(&wturn, __ATOMIC_ACQUIRE) == 0)
                break;
            wt_wait_block(&wait_main, 0);
        }
    }
    double t1 = now_s();
    wt_thread_join(t);
    return (t1 - t0) / (double)n * 1e9;
}

/* Round trips of `fn` for about `budget` seconds, best of reps. */
static void bench_rt(const char *op, double (*fn)(long))
{
    long n = 1000;
    double per = fn(n);
    n = (long)(budget * 1e9 / (per > 1 ? per : 1)) + 1;
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        per = fn(n);
        if (per < best)
            best = per;
    }
    report(op, best, "round trip");
}

int main(int argc, char **argv)
{
    int opt;
    while ((opt = getopt(argc, argv, "t:n:y:r:")) != -1) {
        switch (opt) {
        case 't': budget = atof(optarg); break;
        case 'n': nthreads = atoi(optarg); break;
        case 'y': nyields = atol(optarg); break;
        case 'r': reps = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: %s [-t budget_s] [-n threads] [-y yields] [-r reps]\n", argv[0]);
            return 2;
        }
    }
    if (nthreads < 1 || nthreads > 256 || reps < 1 || budget <= 0 || nyields < 0) {
        fprintf(stderr, "bench_threadops: -n 1..256, -r >= 1, -t > 0, -y >= 0\n");
        return 2;
    }
    wt_thread_set_multi(true);
    if (wt_cond_init(&cv) != WU_OK)
        die("wt_cond_init");
    wt_wait_init(&wait_main);
    wt_wait_init(&wait_partner);

    /* threads first: glibc's mutex drops its lock prefix in a process that never had a second
     * thread, which would flatter the pthreads mutex row (docs/threads.md, "Lock cost") */
    bench_create();
    report("yield", time_loop(loop_yield, calibrate(loop_yield)), "yield");
    report("mutex", time_loop(loop_mutex, calibrate(loop_mutex)), "pair");
    report("spin", time_loop(loop_spin, calibrate(loop_spin)), "pair");
    bench_rt("cond_rt", cond_rt);
    bench_rt("wait_rt", wait_rt);
    return 0;
}
