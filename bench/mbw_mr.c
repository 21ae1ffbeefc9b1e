/* Multi-pair message rate, in the style of osu_mbw_mr (issue 16 item 1): P pairs of ranks, a window of W
 * nonblocking messages per iteration.
 *
 * 2P ranks (the job's size must be even; P = size / 2): rank i < P sends to rank i + P. One iteration: the
 * sender posts W MPI_Isend of s bytes and waits for them (MPI_Waitall), then receives a 4-byte
 * acknowledgement; the receiver posts W MPI_Irecv, waits for them, then sends the acknowledgement. So every
 * window is matched against pre-posted or unexpected receives as the two sides race, as in osu_mbw_mr.
 * The rate is the messages of all pairs per second (W * P * iterations / time, sends only, as OSU reports),
 * timed on every rank between two MPI_Barrier and reduced to the slowest sender.
 *
 * A repetition runs for about budget / reps seconds: rank 0 decides after each chunk of iterations whether
 * the pairs go on (one MPI_Bcast of the next chunk length per chunk; chunks double until one lasts 1/50 of
 * the repetition), so its cost is a few percent of the traffic at most. 2 warm-up chunks precede each size.
 * The payload of the last window is checked on the receivers (byte pattern of sender, size, message).
 *
 * Output on rank 0: a header line, one line per repetition, one summary line per size:
 *   size=8 rep=2 iters=.. seconds=.. rate_mmsg_s=..
 *   size=8 pairs=1 window=64 level=multiple mmsg_s=<median> min=.. max=.. reps=.. check=ok
 *
 * Options: -s sizes (8)  -w window (64)  -t budget seconds per size (1.0)  -r repetitions (5)
 *          -l thread level: single|funneled|serialized|multiple|init (multiple)  -p pin each rank early */
#include "bench_util.h"

#include <mpi.h>
#include <unistd.h>

#include "bench_mt_util.h"

enum { TAG_DATA = 1, TAG_ACK = 2, MAX_SIZES = 32, MAX_WINDOW = 4096, MAX_REPS = 1000 };

static unsigned char pattern(int rank, long size, int msg, long i)
{
    return (unsigned char)((rank * 37 + size * 11 + msg * 7 + i * 131 + 5) & 0xff);
}

typedef struct {
    int rank, peer, sender, window;
    long size;
    unsigned char *buf;   /* window * max(size, 1) bytes */
    MPI_Request *req;
} pair_t;

static void iterate(const pair_t *p, long iters)
{
    int ack = 0;
    size_t stride = (size_t)(p->size ? p->size : 1);
    for (long k = 0; k < iters; k++) {
        if (p->sender) {
            for (int i = 0; i < p->window; i++)
                MPI_Isend(p->buf + (size_t)i * stride, (int)p->size, MPI_BYTE, p->peer, TAG_DATA, MPI_COMM_WORLD,
                          &p->req[i]);
            MPI_Waitall(p->window, p->req, MPI_STATUSES_IGNORE);
            MPI_Recv(&ack, 1, MPI_INT, p->peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int i = 0; i < p->window; i++)
                MPI_Irecv(p->buf + (size_t)i * stride, (int)p->size, MPI_BYTE, p->peer, TAG_DATA, MPI_COMM_WORLD,
                          &p->req[i]);
            MPI_Waitall(p->window, p->req, MPI_STATUSES_IGNORE);
            MPI_Send(&ack, 1, MPI_INT, p->peer, TAG_ACK, MPI_COMM_WORLD);
        }
    }
}

/* Chunks of iterations for `budget` seconds (rank 0 decides); returns the iterations run. */
static long timed(const pair_t *p, double budget)
{
    double t0 = bench_now(), tc = t0;
    long chunk = 1, done = 0;
    for (;;) {
        iterate(p, chunk);
        done += chunk;
        long next = 0;
        if (p->rank == 0) {
            double now = bench_now();
            if (now - t0 < budget)
                next = now - tc < budget / 50 && chunk < (1L << 30) ? 2 * chunk : chunk;
            tc = now;
        }
        MPI_Bcast(&next, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        if (!next)
            return done;
        chunk = next;
    }
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    const char *size_list = "8";
    int window = 64, reps = 5, pin = 0, level = MPI_THREAD_MULTIPLE, opt;
    double budget = 1.0;
    while ((opt = getopt(argc, argv, "s:w:t:r:l:p")) != -1) {
        switch (opt) {
        case 's': size_list = optarg; break;
        case 'w': window = atoi(optarg); break;
        case 't': budget = atof(optarg); break;
        case 'r': reps = atoi(optarg); break;
        case 'l': level = mt_level_parse(optarg); break;
        case 'p': pin = 1; break;
        default:
            fprintf(stderr, "usage: %s [-s sizes] [-w window] [-t budget] [-r reps] [-l level] [-p]\n", argv[0]);
            return 2;
        }
    }
    long sizes[MAX_SIZES];
    int nsizes = bench_parse_list(size_list, sizes, MAX_SIZES);
    if (nsizes <= 0 || window < 1 || window > MAX_WINDOW || reps < 1 || reps > MAX_REPS || budget <= 0 ||
        level == -2) {
        fprintf(stderr, "mbw_mr: bad -s, -w (1 to %d), -r (1 to %d), -t or -l\n", MAX_WINDOW, MAX_REPS);
        return 2;
    }
    int cpu;
    const char *when;
    int provided = mt_init(&argc, &argv, level, pin, &cpu, &when);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || size % 2) {
        if (rank == 0)
            fprintf(stderr, "mbw_mr: needs an even number of ranks (got %d)\n", size);
        MPI_Finalize();
        return 2;
    }
    int pairs = size / 2;
    long max_size = 1;
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] > max_size)
            max_size = sizes[i];
    pair_t p = { .rank = rank, .sender = rank < pairs, .peer = rank < pairs ? rank + pairs : rank - pairs,
                 .window = window };
    p.buf = malloc((size_t)window * (size_t)max_size);
    p.req = malloc(sizeof(MPI_Request) * (size_t)window);
    if (!p.buf || !p.req) {
        fprintf(stderr, "mbw_mr: rank %d: no memory for a window of %d x %ld bytes\n", rank, window, max_size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(p.buf, 0, (size_t)window * (size_t)max_size);
    if (rank == 0) {
        printf("# mbw_mr ranks=%d pairs=%d window=%d level=%s provided=%s pin=%s cpu=%d budget_s=%.3f reps=%d\n",
               size, pairs, window, mt_level_name(level), mt_level_name(provided), when, cpu, budget, reps);
        fflush(stdout);
    }
    int bad_all = 0;
    for (int k = 0; k < nsizes; k++) {
        p.size = sizes[k];
        size_t stride = (size_t)(p.size ? p.size : 1);
        if (p.sender)
            for (int m = 0; m < window; m++)
                for (long i = 0; i < p.size; i++)
                    p.buf[(size_t)m * stride + (size_t)i] = pattern(rank, p.size, m, i);
        MPI_Barrier(MPI_COMM_WORLD);
        timed(&p, budget / reps / 5);   /* warm-up */
        double rate[MAX_REPS];
        for (int r = 0; r < reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = bench_now();
            long iters = timed(&p, budget / reps);
            double sec = bench_now() - t0, slowest = 0;
            MPI_Allreduce(&sec, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            rate[r] = (double)window * pairs * (double)iters / slowest / 1e6;
            if (rank == 0)
                printf("size=%ld rep=%d iters=%ld seconds=%.6f rate_mmsg_s=%.4f\n", p.size, r, iters, slowest,
                       rate[r]);
        }
        int bad = 0;
        if (!p.sender)
            for (int m = 0; m < window && !bad; m++)
                for (long i = 0; i < p.size; i++)
                    if (p.buf[(size_t)m * stride + (size_t)i] != pattern(p.peer, p.size, m, i)) {
                        bad = 1;
                        break;
                    }
        int bad_any = 0;
        MPI_Allreduce(&bad, &bad_any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        bad_all |= bad_any;
        if (rank == 0) {
            double lo = rate[0], hi = rate[0];
            for (int r = 1; r < reps; r++) {
                lo = rate[r] < lo ? rate[r] : lo;
                hi = rate[r] > hi ? rate[r] : hi;
            }
            printf("size=%ld pairs=%d window=%d level=%s mmsg_s=%.4f min=%.4f max=%.4f reps=%d check=%s\n", p.size,
                   pairs, window, mt_level_name(level), median(rate, reps), lo, hi, reps, bad_any ? "FAIL" : "ok");
            fflush(stdout);
        }
    }
    free(p.buf);
    free(p.req);
    MPI_Finalize();
    return bad_all ? 1 : 0;
}
