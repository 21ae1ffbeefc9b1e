/* Tag matching cost as the posted-receive queue grows.
 *
 * For each N, one repetition is:
 *   rank 1 poisons its N receive slots, posts N MPI_Irecv from rank 0 with the tags 0..N-1 in a shuffled
 *   order (a fresh Fisher-Yates permutation each repetition), then sends rank 0 a one-int "go" message;
 *   rank 0, waiting for it, sends N small messages with tags 0, 1, ..., N-1 (the payload is the tag);
 *   rank 1 times from just after its "go" send to the return of MPI_Waitall over the N requests, then checks
 *   that every slot holds its own tag (outside the timed region).
 * Repetitions go on until the time budget for this N is spent (at least -r of them, after one untimed warm-up
 * repetition unless that would be long: see receiver()). The figure is time / N: the cost of one message, from
 * arrival to completed receive.
 *
 * Why it measures matching: every receive is posted before the first message leaves rank 0 (rank 0 does not
 * send before the "go" message, and rank 1 sends it only after the last Irecv), so no message can take the
 * unexpected-queue path; the messages are tiny (8 bytes by default), so copying is negligible next to
 * matching; the sources and communicator are fixed and there are no wildcards, so the implementation has to
 * find the receive by tag; and because the receives were posted in shuffled tag order while the messages come
 * in ascending order, an implementation that walks its posted queue in posting order visits on average half of
 * what is left per message (~N/2 at first, N^2/4 entries in all). One that indexes by tag stays flat.
 * At small N the fixed cost of the "go" message (about one one-way latency) is spread over the N messages, so
 * the per-message time at N=16 includes a little of it.
 *
 * Output, one line per N on rank 0's stdout (rank 1 measures and sends its results to rank 0):
 *   N=<n> reps=<k> msg_bytes=<b> median_us_per_msg=<> mean_us_per_msg=<> min_us_per_msg=<> max_us_per_msg=<>
 *   post_us_per_recv=<> ratio_to_first=<> warmup=0|1 check=ok|FAIL
 * ratio_to_first is the median per message time divided by that of the first N of the list.
 *
 * Options: -n list of N (16,64,...,65536)  -t budget seconds per N (0.3)  -b message bytes (8, 0..8)
 *          -r minimum timed repetitions (1)  -p pin each rank to a CPU after MPI_Init */
#include "bench_util.h"

#include <mpi.h>
#include <unistd.h>

enum { TAG_CTRL = 1 << 19, MAX_NS = 64, MAX_N = 1 << 19 };

typedef struct {
    double median, mean, min, max, post;
    double reps;
    int ok, warm;
} result_t;

/* xorshift64*: deterministic shuffles, the same sequence for every implementation. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

static void shuffle(int *tags, int n, uint64_t *seed)
{
    for (int i = 0; i < n; i++)
        tags[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rng_next(seed) % (uint64_t)(i + 1));
        int t = tags[i];
        tags[i] = tags[j];
        tags[j] = t;
    }
}

/* Rank 0: sends N messages per "go" until told to stop. */
static void sender(int n, int bytes)
{
    for (;;) {
        int go;
        MPI_Recv(&go, 1, MPI_INT, 1, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (!go)
            break;
        for (int t = 0; t < n; t++) {
            int64_t payload = t;
            MPI_Send(&payload, bytes, MPI_BYTE, 1, t, MPI_COMM_WORLD);
        }
    }
}

/* Rank 1: one repetition; returns the seconds from "go" to Waitall's return, post time in *post_p. */
static double one_rep(int n, int bytes, int *tags, int64_t *slots, MPI_Request *reqs, uint64_t *seed,
                      double *post_p, int *ok_p)
{
    shuffle(tags, n, seed);
    memset(slots, 0xff, (size_t)n * sizeof(*slots));
    double p0 = bench_now();
    for (int i = 0; i < n; i++)
        MPI_Irecv(&slots[i], bytes, MPI_BYTE, 0, tags[i], MPI_COMM_WORLD, &reqs[i]);
    double p1 = bench_now();
    int go = 1;
    MPI_Send(&go, 1, MPI_INT, 0, TAG_CTRL, MPI_COMM_WORLD);
    double t0 = bench_now();
    MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    double t1 = bench_now();
    if (bytes >= (int)sizeof(int64_t)) {
        for (int i = 0; i < n; i++)
            if (slots[i] != tags[i])
                *ok_p = 0;
    }
    *post_p = p1 - p0;
    return t1 - t0;
}

/* *rep_s_p and *last_n_p carry a typical repetition time and its N to the next N, for the warm-up decision. */
static result_t receiver(int n, int bytes, double budget, int min_reps, uint64_t *seed, double *rep_s_p,
                         int *last_n_p)
{
    result_t r = {.ok = 1};
    int *tags = malloc((size_t)n * sizeof(*tags));
    int64_t *slots = malloc((size_t)n * sizeof(*slots));
    MPI_Request *reqs = malloc((size_t)n * sizeof(*reqs));
    if (!tags || !slots || !reqs) {
        fprintf(stderr, "tagmatch: cannot allocate for N=%d\n", n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    bench_samples_t s = {0};
    double post_sum = 0, post;
    /* Warm-up (request pools grow, pages fault) unless one repetition, extrapolated quadratically from the
     * previous N as a list-walking matcher would grow, exceeds the budget: then a first-touch effect of a few
     * milliseconds is noise next to the repetition, and skipping it keeps the run short. Same rule for all. */
    double grow = *last_n_p ? (double)n / *last_n_p : 0;
    r.warm = *last_n_p == 0 || *rep_s_p * grow * grow < budget;
    if (r.warm)
        one_rep(n, bytes, tags, slots, reqs, seed, &post, &r.ok);
    double start = bench_now();
    while (s.n < (size_t)min_reps || (bench_now() - start < budget && s.n < 1000000)) {
        double t = one_rep(n, bytes, tags, slots, reqs, seed, &post, &r.ok);
        bench_samples_reserve(&s, 1);
        s.v[s.n++] = t / n;
        post_sum += post / n;
    }
    *last_n_p = n;
    int stop = 0;
    MPI_Send(&stop, 1, MPI_INT, 0, TAG_CTRL, MPI_COMM_WORLD);
    r.reps = (double)s.n;
    r.post = post_sum / (double)s.n;
    bench_stats_t st = bench_stats(&s);
    r.median = st.median;
    r.mean = st.mean;
    r.min = st.min;
    r.max = st.max;
    *rep_s_p = st.median * n; /* a typical repetition, not the last one, which may have been disturbed */
    free(s.v);
    free(tags);
    free(slots);
    free(reqs);
    return r;
}

int main(int argc, char **argv)
{
    const char *n_list = "16,64,256,1024,4096,16384,65536";
    double budget = 0.3;
    int bytes = 8, min_reps = 1, pin = 0, opt;

    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    while ((opt = getopt(argc, argv, "n:t:b:r:p")) != -1) {
        switch (opt) {
        case 'n': n_list = optarg; break;
        case 't': budget = atof(optarg); break;
        case 'b': bytes = atoi(optarg); break;
        case 'r': min_reps = atoi(optarg); break;
        case 'p': pin = 1; break;
        default:
            if (rank == 0)
                fprintf(stderr, "usage: tagmatch [-n N,N,...] [-t budget_s] [-b bytes<=8] [-r min_reps] [-p]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    long ns[MAX_NS];
    int nn = bench_parse_list(n_list, ns, MAX_NS);
    int bad = nn <= 0 || budget <= 0 || bytes < 0 || bytes > 8 || min_reps < 1 || nranks < 2;
    for (int i = 0; i < nn && !bad; i++)
        bad = ns[i] < 1 || ns[i] > MAX_N; /* tags stay below TAG_CTRL = 2^19 */
    if (bad) {
        if (rank == 0)
            fprintf(stderr, "tagmatch: bad N list '%s' (1..%d each), budget %g, bytes %d (0..8), min_reps %d "
                    "or %d ranks (need >= 2)\n", n_list, MAX_N, budget, bytes, min_reps, nranks);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int cpu = pin ? bench_pin_self(rank) : -1;
    if (rank == 0) {
        printf("# tagmatch ranks=%d budget_s=%g msg_bytes=%d min_reps=%d pin=%s", nranks, budget, bytes, min_reps,
               pin ? "core" : "none");
        if (pin)
            printf(" cpu0=%d", cpu);
        printf("\n");
        fflush(stdout);
    } else if (rank == 1 && pin) {
        fprintf(stderr, "# tagmatch rank 1 pinned to cpu %d\n", cpu);
    }

    int failures = 0;
    double first = 0;
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    double rep_s = 0;
    int last_n = 0;
    for (int k = 0; k < nn && rank <= 1; k++) {
        int n = (int)ns[k];
        if (rank == 0) {
            sender(n, bytes);
            double v[8];
            MPI_Recv(v, 8, MPI_DOUBLE, 1, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            result_t r = {.median = v[0], .mean = v[1], .min = v[2], .max = v[3], .post = v[4], .reps = v[5],
                          .ok = v[6] != 0, .warm = v[7] != 0};
            if (k == 0)
                first = r.median;
            failures += !r.ok;
            printf("N=%d reps=%.0f msg_bytes=%d median_us_per_msg=%.4f mean_us_per_msg=%.4f min_us_per_msg=%.4f "
                   "max_us_per_msg=%.4f post_us_per_recv=%.4f ratio_to_first=%.2f warmup=%d check=%s\n",
                   n, r.reps, bytes, r.median * 1e6, r.mean * 1e6, r.min * 1e6, r.max * 1e6, r.post * 1e6,
                   first > 0 ? r.median / first : 0.0, r.warm, r.ok ? "ok" : "FAIL");
            fflush(stdout);
        } else {
            result_t r = receiver(n, bytes, budget, min_reps, &seed, &rep_s, &last_n);
            double v[8] = {r.median, r.mean, r.min, r.max, r.post, r.reps, r.ok, r.warm};
            MPI_Send(v, 8, MPI_DOUBLE, 0, TAG_CTRL, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return failures ? 1 : 0;
}
