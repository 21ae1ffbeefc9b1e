/* The cost of the thread level on single-thread latency: the same ping-pong as bench/pingpong.c (0 and 8 bytes
 * by default) after MPI_Init_thread(<level>) - run it once with -l single and once with -l multiple and compare.
 * Only the main thread calls MPI, whatever the level.
 *
 * Rank 0 times each round trip (MPI_Send then MPI_Recv; rank 1 MPI_Recv then MPI_Send); the figure is half of
 * it. Before each batch rank 0 tells rank 1 the batch length in a control message outside the clock; batches
 * grow until one lasts about budget/50. A warm-up fraction of the budget is spent first, untimed. After each
 * size both ranks check the last message they received, byte by byte.
 *
 * Output on rank 0, one line per size:
 *   size=8 level=multiple provided=multiple iters=.. median_us=.. mean_us=.. p99_us=.. min_us=.. check=ok
 *
 * Options: -l init|single|funneled|serialized|multiple (single)  -s sizes (0,8)  -t budget seconds per size
 *          (0.5)  -w warm-up fraction (0.1)  -p pin each rank to one CPU */
#include "bench_util.h"

#include <mpi.h>
#include <unistd.h>

enum { TAG_DATA = 1, TAG_CTRL = 2, MAX_SIZES = 16 };

#include "bench_mt_util.h"

/* ---- this program ------------------------------------------------------------------------------------- */

static unsigned char pattern_byte(int rank, long size, long i)
{
    return (unsigned char)((i * 131 + size * 7 + rank * 59 + 17) & 0xff);
}

static void drive(unsigned char *sbuf, unsigned char *rbuf, long size, double budget, bench_samples_t *s)
{
    double start = bench_now();
    int batch = 1;
    for (;;) {
        int go = bench_now() - start < budget ? batch : 0;
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
        if (bench_now() - b0 < budget / 50 && batch < (1 << 20))
            batch *= 2;
    }
}

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
    const char *size_list = "0,8";
    double budget = 0.5, warm_frac = 0.1;
    int pin = 0, level = MPI_THREAD_SINGLE, opt, usage = 0;
    while ((opt = getopt(argc, argv, "l:s:t:w:p")) != -1) {
        switch (opt) {
        case 'l': level = mt_level_parse(optarg); break;
        case 's': size_list = optarg; break;
        case 't': budget = atof(optarg); break;
        case 'w': warm_frac = atof(optarg); break;
        case 'p': pin = 1; break;
        default: usage = 1;
        }
    }
    long sizes[MAX_SIZES];
    int nsizes = bench_parse_list(size_list, sizes, MAX_SIZES);
    long max_size = 1;
    for (int i = 0; i < nsizes; i++)
        max_size = sizes[i] > max_size ? sizes[i] : max_size;
    if (usage || nsizes <= 0 || max_size > (1L << 30) || budget <= 0 || warm_frac < 0 || level < -1) {
        fprintf(stderr, "usage: mt_initlevel [-l init|single|funneled|serialized|multiple] [-s sizes] "
                        "[-t budget_s] [-w warmup_frac] [-p]\n");
        return 2;
    }
    int cpu;
    const char *when;
    int provided = mt_init(&argc, &argv, level, pin, &cpu, &when);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks < 2) {
        fprintf(stderr, "mt_initlevel: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank > 1) {
        MPI_Finalize();
        return 0;
    }
    unsigned char *sbuf = NULL, *rbuf = NULL;
    if (posix_memalign((void **)&sbuf, 4096, (size_t)max_size) ||
        posix_memalign((void **)&rbuf, 4096, (size_t)max_size)) {
        fprintf(stderr, "mt_initlevel: cannot allocate 2 x %ld bytes\n", max_size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(sbuf, 0, (size_t)max_size);
    memset(rbuf, 0, (size_t)max_size);
    if (rank == 0) {
        printf("# mt_initlevel level=%s provided=%s budget_s=%g warmup_frac=%g pin=%s cpu=%d timer_ns=%.0f\n",
               mt_level_name(level), mt_level_name(provided), budget, warm_frac, pin ? "core" : "none", cpu,
               bench_timer_cost() * 1e9);
        fflush(stdout);
    } else {
        fprintf(stderr, "# mt_initlevel rank 1 pin=%s cpu=%d (%s)\n", pin ? "core" : "none", cpu, when);
    }
    int failures = 0;
    bench_samples_t s = {0};
    for (int k = 0; k < nsizes; k++) {
        long size = sizes[k];
        for (long i = 0; i < size; i++)
            sbuf[i] = pattern_byte(rank, size, i);
        memset(rbuf, 0, (size_t)max_size);
        int ok = 1;
        if (rank == 0) {
            drive(sbuf, rbuf, size, budget * warm_frac, NULL);
            s.n = 0;
            drive(sbuf, rbuf, size, budget, &s);
            int ok1;
            MPI_Recv(&ok1, 1, MPI_INT, 1, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (long i = 0; i < size && ok; i++)
                ok = rbuf[i] == pattern_byte(1, size, i);
            ok = ok && ok1;
            failures += !ok;
            size_t iters = s.n;
            bench_stats_t st = bench_stats(&s);
            double h = 0.5e6;
            printf("size=%ld level=%s provided=%s iters=%zu median_us=%.4f mean_us=%.4f p99_us=%.4f min_us=%.4f "
                   "check=%s\n", size, mt_level_name(level), mt_level_name(provided), iters, st.median * h,
                   st.mean * h, st.p99 * h, st.min * h, ok ? "ok" : "FAIL");
            fflush(stdout);
        } else {
            follow(sbuf, rbuf, size);
            follow(sbuf, rbuf, size);
            for (long i = 0; i < size && ok; i++)
                ok = rbuf[i] == pattern_byte(0, size, i);
            MPI_Send(&ok, 1, MPI_INT, 0, TAG_CTRL, MPI_COMM_WORLD);
        }
    }
    free(s.v);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return failures ? 1 : 0;
}
