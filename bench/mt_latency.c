/* 1-byte latency with several threads per rank calling MPI at once (MPI_THREAD_MULTIPLE), N = 1, 2, 4, 8.
 *
 * Two patterns, each run for every N:
 *   1toN  rank 0's main thread ping-pongs with N threads of rank 1, round robin: round trip k goes to thread
 *         k mod N on tag 100 + (k mod N). N-1 threads of rank 1 are waiting in MPI_Recv while one is served.
 *   NtoN  thread i of rank 0 ping-pongs with thread i of rank 1 on tag 100 + i, the N pairs concurrently.
 * The pinging thread times every round trip; the figure is half of it (one-way), pooled over all threads.
 *
 * The ping is one byte, 1..127 (0 means stop); the pong is that byte plus the thread number, checked by the
 * pinging thread after its clock stops (a wrong value means a message went to the wrong thread: check=FAIL).
 * Each point runs for a time budget, after a warm-up of a fraction of it whose samples are dropped: with busy
 * polling and more threads than cores a round trip can take a scheduler time slice, and the run still ends.
 * Between points the ranks' main threads exchange a control message, with no other thread in MPI.
 *
 * Needs MPI_THREAD_MULTIPLE: if the library provides less, the program prints "unsupported provided=<level>"
 * on rank 0 and exits with status 3 (no figures).
 *
 * Output on rank 0, one line per pattern and N:
 *   pattern=1toN threads=4 iters=.. rate_krt_s=.. median_us=.. mean_us=.. p99_us=.. min_us=.. max_us=.. check=ok
 * rate_krt_s: thousands of round trips per second, all threads together.
 *
 * Options: -n thread counts (1,2,4,8)  -P patterns (1toN,NtoN)  -t budget seconds per point (0.5)
 *          -w warm-up fraction (0.1)  -p pin each rank (all its threads) to one CPU */
#include "bench_util.h"

#include <mpi.h>
#include <pthread.h>
#include <unistd.h>

enum { TAG_BASE = 100, TAG_CTRL = 3, MAX_THREADS = 64 };

#include "bench_mt_util.h"

/* ---- this program ------------------------------------------------------------------------------------- */

static double g_budget = 0.5, g_warm = 0.1;

static void push(bench_samples_t *s, double v)
{
    bench_samples_reserve(s, 1);
    s->v[s->n++] = v;
}

/* Rank 1 side of both patterns: echo pings on tag TAG_BASE + id until the stop byte. */
typedef struct {
    int id;
    int bad;    /* pings outside 1..127 */
    pthread_t th;
} echo_t;

static void *echo_main(void *arg)
{
    echo_t *e = arg;
    for (;;) {
        unsigned char b;
        MPI_Recv(&b, 1, MPI_BYTE, 0, TAG_BASE + e->id, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (b == 0)
            break;
        if (b > 127)
            e->bad++;
        b = (unsigned char)(b + e->id);
        MPI_Send(&b, 1, MPI_BYTE, 0, TAG_BASE + e->id, MPI_COMM_WORLD);
    }
    return NULL;
}

/* Rank 0 side of NtoN: thread id pings its partner until its budget is spent. */
typedef struct {
    int id;
    int bad;
    pthread_barrier_t *start;
    bench_samples_t s;
    pthread_t th;
} ping_t;

static void *ping_main(void *arg)
{
    ping_t *p = arg;
    int tag = TAG_BASE + p->id;
    pthread_barrier_wait(p->start);
    double start = bench_now(), warm_end = start + g_budget * g_warm, end = warm_end + g_budget;
    for (long k = 0;; k++) {
        double t0 = bench_now();
        if (t0 >= end && p->s.n > 0)
            break;
        unsigned char b = (unsigned char)(1 + k % 127), r;
        MPI_Send(&b, 1, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
        MPI_Recv(&r, 1, MPI_BYTE, 1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double t1 = bench_now();
        if (t0 >= warm_end)
            push(&p->s, t1 - t0);
        if (r != (unsigned char)(b + p->id))
            p->bad++;
    }
    unsigned char stop = 0;
    MPI_Send(&stop, 1, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
    return NULL;
}

static void start_thread(pthread_t *th, void *(*fn)(void *), void *arg)
{
    int rc = pthread_create(th, NULL, fn, arg);
    if (rc) {
        fprintf(stderr, "mt_latency: pthread_create: %s\n", strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* One point on rank 0: fills s (one-way = half round trip, seconds), returns the number of bad pongs;
 * *elapsed = timed seconds. */
static int rank0_point(int pattern, int n, bench_samples_t *s, double *elapsed)
{
    int bad = 0;
    s->n = 0;
    if (pattern == 0) { /* 1toN */
        double start = bench_now(), warm_end = start + g_budget * g_warm, end = warm_end + g_budget;
        for (long k = 0;; k++) {
            double t0 = bench_now();
            if (t0 >= end && s->n > 0)
                break;
            int t = (int)(k % n);
            unsigned char b = (unsigned char)(1 + k % 127), r;
            MPI_Send(&b, 1, MPI_BYTE, 1, TAG_BASE + t, MPI_COMM_WORLD);
            MPI_Recv(&r, 1, MPI_BYTE, 1, TAG_BASE + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double t1 = bench_now();
            if (t0 >= warm_end)
                push(s, t1 - t0);
            bad += r != (unsigned char)(b + t);
        }
        *elapsed = bench_now() - warm_end;
        for (int t = 0; t < n; t++) {
            unsigned char stop = 0;
            MPI_Send(&stop, 1, MPI_BYTE, 1, TAG_BASE + t, MPI_COMM_WORLD);
        }
    } else { /* NtoN */
        ping_t p[MAX_THREADS];
        pthread_barrier_t bar;
        pthread_barrier_init(&bar, NULL, (unsigned)n);
        for (int t = 0; t < n; t++) {
            p[t] = (ping_t){ .id = t, .start = &bar };
            start_thread(&p[t].th, ping_main, &p[t]);
        }
        double t0 = bench_now();
        for (int t = 0; t < n; t++) {
            pthread_join(p[t].th, NULL);
            bench_samples_reserve(s, p[t].s.n);
            memcpy(s->v + s->n, p[t].s.v, p[t].s.n * sizeof(double));
            s->n += p[t].s.n;
            bad += p[t].bad;
            free(p[t].s.v);
        }
        *elapsed = bench_now() - t0 - g_budget * g_warm;
        pthread_barrier_destroy(&bar);
    }
    return bad;
}

int main(int argc, char **argv)
{
    const char *n_list = "1,2,4,8", *patterns = "1toN,NtoN";
    int pin = 0, opt, usage = 0;
    while ((opt = getopt(argc, argv, "n:P:t:w:p")) != -1) {
        switch (opt) {
        case 'n': n_list = optarg; break;
        case 'P': patterns = optarg; break;
        case 't': g_budget = atof(optarg); break;
        case 'w': g_warm = atof(optarg); break;
        case 'p': pin = 1; break;
        default: usage = 1;
        }
    }
    long ns[16];
    int nn = bench_parse_list(n_list, ns, 16);
    int want[2] = { strstr(patterns, "1toN") != NULL, strstr(patterns, "NtoN") != NULL };
    for (int i = 0; i < nn; i++)
        usage |= ns[i] < 1 || ns[i] > MAX_THREADS;
    if (usage || nn <= 0 || g_budget <= 0 || g_warm < 0 || !(want[0] || want[1])) {
        fprintf(stderr, "usage: mt_latency [-n threads,...] [-P 1toN,NtoN] [-t budget_s] [-w warmup_frac] [-p]\n");
        return 2;
    }
    int cpu;
    const char *when;
    int provided = mt_init(&argc, &argv, MPI_THREAD_MULTIPLE, pin, &cpu, &when);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks < 2) {
        fprintf(stderr, "mt_latency: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0) {
            printf("# mt_latency unsupported provided=%s\n", mt_level_name(provided));
            fflush(stdout);
        }
        MPI_Finalize();
        return 3;
    }
    if (rank > 1) {
        MPI_Finalize();
        return 0;
    }
    if (rank == 0) {
        printf("# mt_latency budget_s=%g warmup_frac=%g provided=%s pin=%s cpu=%d timer_ns=%.0f\n", g_budget, g_warm,
               mt_level_name(provided), pin ? "core" : "none", cpu, bench_timer_cost() * 1e9);
        fflush(stdout);
    } else {
        fprintf(stderr, "# mt_latency rank 1 pin=%s cpu=%d (%s)\n", pin ? "core" : "none", cpu, when);
    }

    static const char *pname[2] = { "1toN", "NtoN" };
    int failures = 0;
    bench_samples_t s = {0};
    for (int pat = 0; pat < 2; pat++) {
        if (!want[pat])
            continue;
        for (int i = 0; i < nn; i++) {
            int n = (int)ns[i];
            if (rank == 1) {
                echo_t e[MAX_THREADS];
                for (int t = 0; t < n; t++) {
                    e[t] = (echo_t){ .id = t };
                    start_thread(&e[t].th, echo_main, &e[t]);
                }
                int bad = 0;
                for (int t = 0; t < n; t++) {
                    pthread_join(e[t].th, NULL);
                    bad += e[t].bad;
                }
                MPI_Send(&bad, 1, MPI_INT, 0, TAG_CTRL, MPI_COMM_WORLD);
                continue;
            }
            double elapsed;
            int bad = rank0_point(pat, n, &s, &elapsed), bad1;
            MPI_Recv(&bad1, 1, MPI_INT, 1, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int ok = bad == 0 && bad1 == 0;
            failures += !ok;
            size_t iters = s.n;
            bench_stats_t st = bench_stats(&s);
            double h = 0.5e6;
            printf("pattern=%s threads=%d iters=%zu rate_krt_s=%.3g median_us=%.3f mean_us=%.3f p99_us=%.3f "
                   "min_us=%.3f max_us=%.3f check=%s\n", pname[pat], n, iters,
                   elapsed > 0 ? 1e-3 * (double)iters / elapsed : 0.0, st.median * h, st.mean * h, st.p99 * h,
                   st.min * h, st.max * h, ok ? "ok" : "FAIL");
            fflush(stdout);
        }
    }
    free(s.v);
    MPI_Finalize();
    return failures ? 1 : 0;
}
