/* 1-byte latency with more ranks than cores: every pair of ranks (2k, 2k+1) ping-pongs at the same time, so
 * with 2, 4, 8 ranks on 2 cores there are 1, 2, 4 pairs (an odd last rank idles). Run it once per rank count.
 *
 * Rank 2k pings rank 2k+1 with one byte (1..127; 0 means stop) and times each round trip; rank 2k+1 echoes
 * the byte plus one, checked after the clock stops. All pairs start together (a "ready" from every rank to
 * rank 0, then a "go" back) and each pinging rank runs for the time budget by its own clock after a warm-up
 * of a fraction of it whose samples are dropped: with busy polling and more ranks than cores a round trip
 * can cost scheduler time slices (milliseconds), and the run still ends. The pinging ranks then send their
 * samples to rank 0, which reports them pooled and per pair. Figures are one-way (half a round trip).
 *
 * Output on rank 0:
 *   ranks=8 pairs=4 iters=.. median_us=.. mean_us=.. p99_us=.. min_us=.. max_us=.. check=ok
 *   pair=0 ranks=8 iters=.. median_us=.. mean_us=.. p99_us=..      (one line per pair)
 *
 * Options: -t budget seconds (1.0)  -w warm-up fraction (0.1)  -l init|single|funneled|serialized|multiple
 *          (init: plain MPI_Init)  -p pin rank r to CPU r mod C of its allowed set (pairs on different CPUs) */
#include "bench_util.h"

#include <mpi.h>
#include <unistd.h>

enum { TAG_DATA = 1, TAG_CTRL = 2, TAG_SAMPLES = 3 };

#include "bench_mt_util.h"

/* ---- this program ------------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    double budget = 1.0, warm_frac = 0.1;
    int pin = 0, level = -1, opt, usage = 0;
    while ((opt = getopt(argc, argv, "t:w:l:p")) != -1) {
        switch (opt) {
        case 't': budget = atof(optarg); break;
        case 'w': warm_frac = atof(optarg); break;
        case 'l': level = mt_level_parse(optarg); break;
        case 'p': pin = 1; break;
        default: usage = 1;
        }
    }
    if (usage || budget <= 0 || warm_frac < 0 || level < -1) {
        fprintf(stderr, "usage: mt_ranks_lat [-t budget_s] [-w warmup_frac] "
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
        fprintf(stderr, "mt_ranks_lat: needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int pairs = nranks / 2;
    if (rank == 0) {
        printf("# mt_ranks_lat ranks=%d pairs=%d budget_s=%g warmup_frac=%g level=%s provided=%s pin=%s cpu=%d "
               "timer_ns=%.0f\n", nranks, pairs, budget, warm_frac, mt_level_name(level), mt_level_name(provided),
               pin ? "core" : "none", cpu, bench_timer_cost() * 1e9);
        fflush(stdout);
    } else if (pin) {
        fprintf(stderr, "# mt_ranks_lat rank %d pinned to cpu %d (%s)\n", rank, cpu, when);
    }

    /* start together */
    int x = 0;
    if (rank == 0) {
        for (int r = 1; r < nranks; r++)
            MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int r = 1; r < nranks; r++)
            MPI_Send(&x, 1, MPI_INT, r, TAG_CTRL, MPI_COMM_WORLD);
    } else {
        MPI_Send(&x, 1, MPI_INT, 0, TAG_CTRL, MPI_COMM_WORLD);
        MPI_Recv(&x, 1, MPI_INT, 0, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }

    bench_samples_t s = {0};
    int bad = 0;
    if (rank % 2 == 0 && rank + 1 < nranks) {
        int peer = rank + 1;
        double start = bench_now(), warm_end = start + budget * warm_frac, end = warm_end + budget;
        for (long k = 0;; k++) {
            double t0 = bench_now();
            if (t0 >= end && s.n > 0)
                break;
            unsigned char b = (unsigned char)(1 + k % 127), r;
            MPI_Send(&b, 1, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
            MPI_Recv(&r, 1, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double t1 = bench_now();
            if (t0 >= warm_end) {
                bench_samples_reserve(&s, 1);
                s.v[s.n++] = t1 - t0;
            }
            bad += r != (unsigned char)(b + 1);
        }
        unsigned char stop = 0;
        MPI_Send(&stop, 1, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
    } else if (rank % 2 == 1) {
        for (;;) {
            unsigned char b;
            MPI_Recv(&b, 1, MPI_BYTE, rank - 1, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (b == 0)
                break;
            bad += b > 127;
            b = (unsigned char)(b + 1);
            MPI_Send(&b, 1, MPI_BYTE, rank - 1, TAG_DATA, MPI_COMM_WORLD);
        }
    }

    /* everything to rank 0: every rank's check, the pinging ranks' samples */
    int failures = 0;
    if (rank != 0) {
        MPI_Send(&bad, 1, MPI_INT, 0, TAG_CTRL, MPI_COMM_WORLD);
        if (rank % 2 == 0 && rank + 1 < nranks) {
            long n = (long)s.n;
            MPI_Send(&n, 1, MPI_LONG, 0, TAG_SAMPLES, MPI_COMM_WORLD);
            if (n)
                MPI_Send(s.v, (int)n, MPI_DOUBLE, 0, TAG_SAMPLES, MPI_COMM_WORLD);
        }
    } else {
        for (int r = 1; r < nranks; r++) {
            int b;
            MPI_Recv(&b, 1, MPI_INT, r, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            bad += b;
        }
        int ok = bad == 0;
        failures = !ok;
        bench_samples_t all = {0}, one = {0};
        double h = 0.5e6;
        char lines[64][256];
        for (int p = 0; p < pairs && p < 64; p++) {
            one.n = 0;
            if (p == 0) {
                bench_samples_reserve(&one, s.n);
                memcpy(one.v, s.v, s.n * sizeof(double));
                one.n = s.n;
            } else {
                long n;
                MPI_Recv(&n, 1, MPI_LONG, 2 * p, TAG_SAMPLES, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                bench_samples_reserve(&one, (size_t)n);
                if (n)
                    MPI_Recv(one.v, (int)n, MPI_DOUBLE, 2 * p, TAG_SAMPLES, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                one.n = (size_t)n;
            }
            bench_samples_reserve(&all, one.n);
            memcpy(all.v + all.n, one.v, one.n * sizeof(double));
            all.n += one.n;
            size_t n = one.n;
            bench_stats_t st = bench_stats(&one);
            snprintf(lines[p], sizeof(lines[p]), "pair=%d ranks=%d iters=%zu median_us=%.3f mean_us=%.3f "
                     "p99_us=%.3f\n", p, nranks, n, st.median * h, st.mean * h, st.p99 * h);
        }
        size_t n = all.n;
        bench_stats_t st = bench_stats(&all);
        printf("ranks=%d pairs=%d iters=%zu median_us=%.3f mean_us=%.3f p99_us=%.3f min_us=%.3f max_us=%.3f "
               "check=%s\n", nranks, pairs, n, st.median * h, st.mean * h, st.p99 * h, st.min * h, st.max * h,
               ok ? "ok" : "FAIL");
        for (int p = 0; p < pairs && p < 64; p++)
            fputs(lines[p], stdout);
        fflush(stdout);
        free(all.v);
        free(one.v);
    }
    free(s.v);
    MPI_Finalize();
    return failures;
}
