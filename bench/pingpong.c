/* Ping-pong latency and bandwidth between ranks 0 and 1 (other ranks idle in MPI_Finalize).
 *
 * For each message size: touch and fill the buffers, warm up for a fraction of the budget, then repeat
 * round trips until the time budget is spent. Rank 0 times every round trip on its own; half of it is the
 * one-way latency reported. Bandwidth is size / median one-way latency. The same buffers are reused for every
 * iteration; the payload is not checked inside the timed loop, but after it both ranks check that the last
 * message they received is the other side's pattern, byte for byte.
 *
 * Each sample includes one clock read (timer_ns in the header line, 20-30 ns here, so 10-15 ns of the one-way
 * figure), the same for every implementation.
 *
 * The clock's resolution quantizes each sample (to about 10 ns of round trip here, 4% of an 8 B figure), and so
 * the median. gmed_us is the finer figure of the same samples: they are cut, in the order they were taken, into
 * groups of GROUP consecutive round trips; each group's mean has a resolution GROUP times finer, and gmed_us is
 * the median of the groups' means (one-way), which keeps the median's robustness to the rare slow round trip.
 *
 * Rank 0 drives: before each batch of iterations it tells rank 1 the batch length (0 = size done) in a
 * control message, so the stop decision costs nothing inside the timed loop. Batches grow until one lasts
 * about budget/50, which keeps the overshoot past the budget small.
 *
 * Output, one line per size on rank 0's stdout:
 *   size=<bytes> iters=<k> median_us=<> mean_us=<> p99_us=<> min_us=<> gmed_us=<> bw_MBps=<> check=ok|FAIL
 * MB is 10^6 bytes. Exit status 1 if any check failed.
 *
 * Options: -s sizes (e.g. 0,8,4K,1M)  -t budget seconds per size (0.3)  -w warm-up fraction of the budget
 *          (0.1)  -m max iterations per size (4000000)  -p pin each rank to a CPU after MPI_Init */
#include "bench_util.h"

#include <mpi.h>
#include <unistd.h>

enum { TAG_DATA = 1, TAG_CTRL = 2, MAX_SIZES = 64, GROUP = 64 };

/* Median of the means of consecutive groups of GROUP samples (the last, partial group left out; all of them
 * as one group if there are fewer). Call before bench_stats, which sorts the samples. */
static double group_median(const bench_samples_t *s)
{
    size_t ng = s->n / GROUP;
    if (ng == 0) {
        double sum = 0;
        for (size_t i = 0; i < s->n; i++)
            sum += s->v[i];
        return s->n ? sum / (double)s->n : 0;
    }
    bench_samples_t g = {0};
    bench_samples_reserve(&g, ng);
    for (size_t k = 0; k < ng; k++) {
        double sum = 0;
        for (size_t i = 0; i < GROUP; i++)
            sum += s->v[k * GROUP + i];
        g.v[g.n++] = sum / GROUP;
    }
    double med = bench_stats(&g).median;
    free(g.v);
    return med;
}

static unsigned char pattern_byte(int rank, long size, long i)
{
    return (unsigned char)((i * 131 + size * 7 + rank * 59 + 17) & 0xff);
}

static void fill(unsigned char *buf, long size, int rank)
{
    for (long i = 0; i < size; i++)
        buf[i] = pattern_byte(rank, size, i);
}

static int check(const unsigned char *buf, long size, int from_rank)
{
    for (long i = 0; i < size; i++)
        if (buf[i] != pattern_byte(from_rank, size, i))
            return 0;
    return 1;
}

/* Rank 0: runs batches until budget seconds pass; records each round trip in s if s != NULL. */
static void drive(unsigned char *sbuf, unsigned char *rbuf, long size, double budget, long max_iters,
                  bench_samples_t *s)
{
    double start = bench_now();
    long done = 0;
    int batch = 1;
    for (;;) {
        double now = bench_now();
        int go = (now - start < budget && done < max_iters) ? batch : 0;
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
    const char *size_list = "0,8,64,512,4K,16K,64K,256K,1M,4M";
    double budget = 0.3, warm_frac = 0.1;
    long max_iters = 4000000;
    int pin = 0, opt;

    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    while ((opt = getopt(argc, argv, "s:t:w:m:p")) != -1) {
        switch (opt) {
        case 's': size_list = optarg; break;
        case 't': budget = atof(optarg); break;
        case 'w': warm_frac = atof(optarg); break;
        case 'm': max_iters = atol(optarg); break;
        case 'p': pin = 1; break;
        default:
            if (rank == 0)
                fprintf(stderr, "usage: pingpong [-s sizes] [-t budget_s] [-w warmup_frac] [-m max_iters] [-p]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    long sizes[MAX_SIZES];
    int nsizes = bench_parse_list(size_list, sizes, MAX_SIZES);
    if (nsizes <= 0 || budget <= 0 || max_iters <= 0 || nranks < 2) {
        if (rank == 0)
            fprintf(stderr, "pingpong: bad size list '%s', budget %g, max_iters %ld or %d ranks (need >= 2)\n",
                    size_list, budget, max_iters, nranks);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int cpu = pin ? bench_pin_self(rank) : -1;

    long max_size = 1;
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] > max_size)
            max_size = sizes[i];
    unsigned char *sbuf = NULL, *rbuf = NULL;
    if (posix_memalign((void **)&sbuf, 4096, (size_t)max_size) ||
        posix_memalign((void **)&rbuf, 4096, (size_t)max_size)) {
        fprintf(stderr, "pingpong: rank %d cannot allocate 2 x %ld bytes\n", rank, max_size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(sbuf, 0, (size_t)max_size); /* first touch: page faults happen here, not in the timed loop */
    memset(rbuf, 0, (size_t)max_size);

    if (rank == 0) {
        printf("# pingpong ranks=%d budget_s=%g warmup_frac=%g timer_ns=%.0f pin=%s", nranks, budget, warm_frac,
               bench_timer_cost() * 1e9, pin ? "core" : "none");
        if (pin)
            printf(" cpu0=%d", cpu);
        printf("\n");
        fflush(stdout);
    } else if (rank == 1 && pin) {
        fprintf(stderr, "# pingpong rank 1 pinned to cpu %d\n", cpu);
    }

    int failures = 0;
    bench_samples_t s = {0};
    for (int k = 0; k < nsizes; k++) {
        long size = sizes[k];
        if (rank > 1)
            continue;
        fill(sbuf, size, rank);
        memset(rbuf, 0, (size_t)(size ? size : 1));
        if (rank == 0) {
            drive(sbuf, rbuf, size, budget * warm_frac, max_iters, NULL);
            s.n = 0;
            drive(sbuf, rbuf, size, budget, max_iters, &s);
            int ok1;
            MPI_Recv(&ok1, 1, MPI_INT, 1, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int ok = ok1 && check(rbuf, size, 1);
            failures += !ok;
            double gmed = group_median(&s);
            bench_stats_t st = bench_stats(&s);
            double half = 0.5e6; /* seconds of round trip -> microseconds one way */
            double lat = st.median * half;
            printf("size=%ld iters=%zu median_us=%.3f mean_us=%.3f p99_us=%.3f min_us=%.3f gmed_us=%.4f bw_MBps=%.1f "
                   "check=%s\n",
                   size, s.n, lat, st.mean * half, st.p99 * half, st.min * half, gmed * half,
                   lat > 0 ? (double)size / lat : 0.0, ok ? "ok" : "FAIL");
            fflush(stdout);
        } else {
            follow(sbuf, rbuf, size); /* warm-up */
            follow(sbuf, rbuf, size); /* timed */
            int ok1 = check(rbuf, size, 0);
            MPI_Send(&ok1, 1, MPI_INT, 0, TAG_CTRL, MPI_COMM_WORLD);
        }
    }
    free(s.v);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return failures ? 1 : 0;
}
