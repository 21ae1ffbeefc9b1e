/* Ping-pong latency of a 1 MiB message while other threads of both ranks compute, N = 0..4 computing threads.
 *
 * In each rank, N threads run a computation (a dependent multiply-add chain, no memory traffic) in chunks of
 * about 50 us until told to stop; the main thread of each rank runs a ping-pong of `size` bytes between ranks
 * 0 and 1 (MPI_Send / MPI_Recv, as bench/pingpong.c: batches announced by a control message outside the
 * clock, a warm-up fraction of the budget untimed, then round trips until the budget is spent). Only the main
 * threads call MPI. The figure is half a round trip (one-way), timed by rank 0: median, mean, p99.
 *
 * Also reported, per rank: compute_cores = work done by the N threads / (work one thread does alone per
 * second * elapsed seconds): how many cores' worth of computation the threads got while the ping-pong ran
 * (at most 1 when the rank is pinned to one CPU), so that a latency bought by starving the computation shows.
 *
 * Output on rank 0, one line per N:
 *   threads=2 size=1048576 iters=.. median_us=.. mean_us=.. p99_us=.. min_us=.. compute_cores0=.. compute_cores1=..
 *       check=ok
 * check=FAIL: the last message received by either rank did not hold the other's pattern (exit status 1).
 *
 * Options: -n thread counts (0,1,2,3,4)  -s size (1M)  -t budget seconds per N (0.5)  -w warm-up fraction (0.1)
 *          -l init|single|funneled|serialized|multiple (multiple)  -p pin each rank (all its threads) to one CPU */
#include "bench_util.h"

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

enum { TAG_DATA = 1, TAG_CTRL = 2, MAX_THREADS = 64 };

#include "bench_mt_util.h"

/* ---- this program ------------------------------------------------------------------------------------- */

static unsigned char pattern_byte(int rank, long size, long i)
{
    return (unsigned char)((i * 131 + size * 7 + rank * 59 + 17) & 0xff);
}

static atomic_int g_stop;
static uint64_t g_chunk; /* work steps per chunk */

typedef struct {
    pthread_t th;
    uint64_t chunks;
} worker_t;

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    uint64_t n = 0;
    while (!atomic_load_explicit(&g_stop, memory_order_relaxed)) {
        mt_work(g_chunk);
        n++;
    }
    w->chunks = n;
    return NULL;
}

/* Rank 0: batches of round trips until budget seconds pass; records each round trip in s if s != NULL. */
static void drive(unsigned char *sbuf, unsigned char *rbuf, long size, double budget, bench_samples_t *s)
{
    double start = bench_now();
    int batch = 1;
    long done = 0;
    for (;;) {
        int go = (bench_now() - start < budget || (s && done < 3)) ? batch : 0;
        MPI_Send(&go, 1, MPI_INT, 1, TAG_CTRL, MPI_COMM_WORLD);
        if (!go)
            break;
        if (s)
            bench_samples_reserve(s, (size_t)go);
        double b0 = bench_now();
        for (int i = 0; i < go; i++) {
            double t0 = bench_now();
            MPI_Send(sbuf, (int)size, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int)size, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double t1 = bench_now();
            if (s)
                s->v[s->n++] = t1 - t0;
        }
        done += go;
        if (bench_now() - b0 < budget / 50 && batch < (1 << 20))
            batch *= 2;
    }
}

/* Rank 1: echoes batches until told 0. */
static void follow(unsigned char *sbuf, unsigned char *rbuf, long size)
{
    for (;;) {
        int go;
        MPI_Recv(&go, 1, MPI_INT, 0, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (!go)
            break;
        for (int i = 0; i < go; i++) {
            MPI_Recv(rbuf, (int)size, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, (int)size, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD);
        }
    }
}

int main(int argc, char **argv)
{
    const char *n_list = "0,1,2,3,4";
    long size = 1L << 20;
    double budget = 0.5, warm_frac = 0.1;
    int pin = 0, level = MPI_THREAD_MULTIPLE, opt, usage = 0;
    while ((opt = getopt(argc, argv, "n:s:t:w:l:p")) != -1) {
        switch (opt) {
        case 'n': n_list = optarg; break;
        case 's': {
            long v[1];
            size = bench_parse_list(optarg, v, 1) == 1 ? v[0] : -1;
            break;
        }
        case 't': budget = atof(optarg); break;
        case 'w': warm_frac = atof(optarg); break;
        case 'l': level = mt_level_parse(optarg); break;
        case 'p': pin = 1; break;
        default: usage = 1;
        }
    }
    long ns[16];
    int nn = bench_parse_list(n_list, ns, 16);
    for (int i = 0; i < nn; i++)
        usage |= ns[i] > MAX_THREADS;
    if (usage || nn <= 0 || size < 0 || size > (1L << 30) || budget <= 0 || warm_frac < 0 || level < -1) {
        fprintf(stderr, "usage: mt_compute_lat [-n threads,...] [-s size] [-t budget_s] [-w warmup_frac] "
                        "[-l init|single|funneled|serialized|multiple] [-p]\n");
        return 2;
    }
    int cpu;
    const char *when;
    int provided = mt_init(&argc, &argv, level, pin, &cpu, &when);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks < 2) {
        fprintf(stderr, "mt_compute_lat: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank > 1) {
        MPI_Finalize();
        return 0;
    }
    size_t alloc = (size_t)(size ? size : 1);
    unsigned char *sbuf = NULL, *rbuf = NULL;
    if (posix_memalign((void **)&sbuf, 4096, alloc) || posix_memalign((void **)&rbuf, 4096, alloc)) {
        fprintf(stderr, "mt_compute_lat: cannot allocate 2 x %ld bytes\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (long i = 0; i < size; i++)
        sbuf[i] = pattern_byte(rank, size, i);
    memset(rbuf, 0, alloc);
    double rate = mt_work_rate();
    g_chunk = (uint64_t)(50e-6 * rate) + 1;
    if (rank == 0) {
        printf("# mt_compute_lat size=%ld budget_s=%g warmup_frac=%g level=%s provided=%s pin=%s cpu=%d "
               "timer_ns=%.0f work_steps_per_us=%.1f\n", size, budget, warm_frac, mt_level_name(level),
               mt_level_name(provided), pin ? "core" : "none", cpu, bench_timer_cost() * 1e9, rate * 1e-6);
        fflush(stdout);
    } else {
        fprintf(stderr, "# mt_compute_lat rank 1 provided=%s pin=%s cpu=%d (%s) work_steps_per_us=%.1f\n",
                mt_level_name(provided), pin ? "core" : "none", cpu, when, rate * 1e-6);
    }

    int failures = 0;
    bench_samples_t s = {0};
    worker_t w[MAX_THREADS];
    for (int k = 0; k < nn; k++) {
        int n = (int)ns[k];
        atomic_store(&g_stop, 0);
        double c0 = bench_now();
        for (int t = 0; t < n; t++) {
            w[t].chunks = 0;
            int rc = pthread_create(&w[t].th, NULL, worker_main, &w[t]);
            if (rc) {
                fprintf(stderr, "mt_compute_lat: pthread_create: %s\n", strerror(rc));
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
        }
        memset(rbuf, 0, alloc);
        if (rank == 0) {
            drive(sbuf, rbuf, size, budget * warm_frac, NULL);
            s.n = 0;
            drive(sbuf, rbuf, size, budget, &s);
        } else {
            follow(sbuf, rbuf, size);
            follow(sbuf, rbuf, size);
        }
        atomic_store(&g_stop, 1);
        uint64_t chunks = 0;
        for (int t = 0; t < n; t++) {
            pthread_join(w[t].th, NULL);
            chunks += w[t].chunks;
        }
        double cores = (double)chunks * (double)g_chunk / rate / (bench_now() - c0);
        int ok = 1;
        for (long i = 0; i < size && ok; i++)
            ok = rbuf[i] == pattern_byte(1 - rank, size, i);
        if (rank == 1) {
            double fig[2] = { cores, ok };
            MPI_Send(fig, 2, MPI_DOUBLE, 0, TAG_CTRL, MPI_COMM_WORLD);
            continue;
        }
        double fig[2];
        MPI_Recv(fig, 2, MPI_DOUBLE, 1, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        ok = ok && fig[1] != 0;
        failures += !ok;
        size_t iters = s.n;
        bench_stats_t st = bench_stats(&s);
        double h = 0.5e6;
        printf("threads=%d size=%ld iters=%zu median_us=%.2f mean_us=%.2f p99_us=%.2f min_us=%.2f "
               "compute_cores0=%.3f compute_cores1=%.3f check=%s\n", n, size, iters, st.median * h, st.mean * h,
               st.p99 * h, st.min * h, cores, fig[0], ok ? "ok" : "FAIL");
        fflush(stdout);
    }
    free(s.v);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return failures ? 1 : 0;
}
