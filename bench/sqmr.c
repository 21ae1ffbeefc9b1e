/* Message rate with threads sharing MPI objects (issue 4): the SQMR-based benchmark of Goodell, Balaji et al.,
 * "Reducing the impact of resource contention in MPI through garbage collection" (seed
 * mpich-resource-contention-gc.txt).
 *
 * 2 ranks, MPI_THREAD_MULTIPLE, T threads per rank. Thread t of each rank exchanges with thread t of the other
 * rank on tag t: one iteration posts 12 MPI_Irecv and 12 MPI_Isend of 0 bytes, then MPI_Waitall on the 24.
 * Two object modes, alternated repetition by repetition so both see the same machine:
 *   builtin  MPI_COMM_WORLD and MPI_BYTE (predefined: no implementation counts references on them)
 *   derived  one communicator from MPI_Comm_dup and one MPI_Type_contiguous datatype, shared by all threads
 *            (every request names them: reference counts or whatever the implementation does instead)
 * A repetition lasts budget / reps seconds: each thread runs chunks of iterations and its rank-0 side decides
 * after each chunk whether its pair goes on (a 1-long control message on MPI_COMM_WORLD, tag 1000 + t; chunks
 * double until one lasts 1/50 of the repetition). The time is from a thread barrier after an MPI_Barrier to
 * the barrier after the slowest thread; 10 checked warm-up iterations precede each repetition.
 *
 * Output on rank 0, one line per repetition, then one summary line per T:
 *   threads=2 mode=derived rep=3 iters=.. seconds=.. rate_mmsg_s=..    (iters: all threads together)
 *   threads=2 builtin_mmsg_s=.. derived_mmsg_s=.. ratio=.. ratio_min=.. ratio_max=.. reps=.. check=ok
 * rate: millions of messages per second and rank, sends and receives counted (24 per iteration and thread);
 * builtin/derived: medians over repetitions; ratio: median of the per-repetition derived/builtin ratios.
 * check=FAIL: a receive's status named the wrong source or tag (checked on the warm-up iterations).
 * If the implementation lacks MPI_THREAD_MULTIPLE: "# sqmr unsupported provided=<level>", exit 3. If it cannot
 * build the derived objects, derived figures are "unsupported" and only builtin is measured.
 *
 * Options: -n thread counts (1,2,4)  -t budget seconds per (T, mode) (1.0)  -r repetitions (7)  -p pin each
 * rank (all its threads) to one CPU before MPI_Init  -m modes (builtin,derived)  -l thread level asked for
 * (multiple; single, funneled or serialized measure T = 1 only, for the comparison of issue 16: Weft at
 * MULTIPLE against a peer at its best level; the header then says level=) */
#include "bench_util.h"

#include <mpi.h>
#include <pthread.h>
#include <unistd.h>

#include "bench_mt_util.h"

enum { NMSG = 12, MAX_THREADS = 64, WARMUP = 10, CTRL_TAG = 1000 };

typedef struct {
    int tid, peer, rank;
    double budget;          /* seconds of this repetition */
    long done;              /* iterations run */
    MPI_Comm comm;
    MPI_Datatype type;
    pthread_barrier_t *bar;
    int bad;
} worker_t;

static int iterate(worker_t *w, long iters, int check)
{
    MPI_Request req[2 * NMSG];
    MPI_Status st[2 * NMSG];
    char buf[1];
    for (long k = 0; k < iters; k++) {
        for (int i = 0; i < NMSG; i++)
            MPI_Irecv(buf, 0, w->type, w->peer, w->tid, w->comm, &req[i]);
        for (int i = 0; i < NMSG; i++)
            MPI_Isend(buf, 0, w->type, w->peer, w->tid, w->comm, &req[NMSG + i]);
        if (check) {
            if (MPI_Waitall(2 * NMSG, req, st) != MPI_SUCCESS)
                return 1;
            for (int i = 0; i < NMSG; i++)
                if (st[i].MPI_SOURCE != w->peer || st[i].MPI_TAG != w->tid)
                    return 1;
        } else {
            MPI_Waitall(2 * NMSG, req, MPI_STATUSES_IGNORE);
        }
    }
    return 0;
}

/* Chunks of iterations until the budget is spent. After each chunk the rank-0 thread tells its peer thread the
 * size of the next chunk (0: stop) on MPI_COMM_WORLD, tag CTRL_TAG + tid: the chunk doubles until it lasts
 * 1/50 of the budget, so the control messages are a few percent of the traffic at most, and a repetition
 * ends within about one chunk of its budget however slow the implementation gets meanwhile. */
static void timed(worker_t *w)
{
    double t0 = bench_now(), tc = t0;
    long chunk = 1;
    w->done = 0;
    for (;;) {
        iterate(w, chunk, 0);
        w->done += chunk;
        long next;
        if (w->rank == 0) {
            double now = bench_now();
            if (now - t0 >= w->budget)
                next = 0;
            else
                next = now - tc < w->budget / 50 && chunk < (1L << 30) ? 2 * chunk : chunk;
            tc = now;
            MPI_Send(&next, 1, MPI_LONG, w->peer, CTRL_TAG + w->tid, MPI_COMM_WORLD);
        } else {
            MPI_Recv(&next, 1, MPI_LONG, w->peer, CTRL_TAG + w->tid, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        if (!next)
            return;
        chunk = next;
    }
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    w->bad |= iterate(w, WARMUP, 1);
    pthread_barrier_wait(w->bar);   /* start */
    timed(w);
    pthread_barrier_wait(w->bar);   /* end */
    return NULL;
}

/* One repetition with T threads (the caller's thread is thread 0): seconds between the barriers, and the
 * iterations of all threads in *iters_p. */
static double run(int T, double budget, MPI_Comm comm, MPI_Datatype type, int rank, int peer, long *iters_p,
                  int *bad)
{
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, (unsigned)T);
    worker_t w[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    for (int t = 0; t < T; t++)
        w[t] = (worker_t){ .tid = t, .peer = peer, .rank = rank, .budget = budget, .comm = comm, .type = type,
                           .bar = &bar };
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 1; t < T; t++)
        pthread_create(&th[t], NULL, worker_main, &w[t]);
    w[0].bad |= iterate(&w[0], WARMUP, 1);
    pthread_barrier_wait(&bar);
    double t0 = bench_now();
    timed(&w[0]);
    pthread_barrier_wait(&bar);
    double t1 = bench_now();
    for (int t = 1; t < T; t++)
        pthread_join(th[t], NULL);
    *iters_p = 0;
    for (int t = 0; t < T; t++) {
        *bad |= w[t].bad;
        *iters_p += w[t].done;
    }
    pthread_barrier_destroy(&bar);
    return t1 - t0;
}

/* The other rank's value (point to point only: the benchmark must not depend on collectives). */
static long exchange(long v, int peer)
{
    long other = 0;
    MPI_Sendrecv(&v, 1, MPI_LONG, peer, 999, &other, 1, MPI_LONG, peer, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return other;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    long tlist[16];
    int nt = bench_parse_list("1,2,4", tlist, 16);
    double budget = 1.0;
    int reps = 7, pin = 0, want_builtin = 1, want_derived = 1, level = MPI_THREAD_MULTIPLE, opt;
    while ((opt = getopt(argc, argv, "n:t:r:pm:l:")) != -1) {
        switch (opt) {
        case 'n': nt = bench_parse_list(optarg, tlist, 16); break;
        case 't': budget = atof(optarg); break;
        case 'r': reps = atoi(optarg); break;
        case 'p': pin = 1; break;
        case 'm':
            want_builtin = strstr(optarg, "builtin") != NULL;
            want_derived = strstr(optarg, "derived") != NULL;
            break;
        case 'l': level = mt_level_parse(optarg); break;
        default:
            fprintf(stderr, "usage: %s [-n 1,2,4] [-t budget] [-r reps] [-m builtin,derived] [-l level] [-p]\n",
                    argv[0]);
            return 2;
        }
    }
    if (nt <= 0 || reps < 1 || reps > 1000 || level < MPI_THREAD_SINGLE) {
        fprintf(stderr, "sqmr: bad -n, -r or -l\n");
        return 2;
    }
    int cpu;
    const char *when;
    int provided = mt_init(&argc, &argv, level, pin, &cpu, &when);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "sqmr: needs exactly 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    if (provided < level) {
        if (rank == 0)
            printf("# sqmr unsupported provided=%s\n", mt_level_name(provided));
        MPI_Finalize();
        return 3;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);   /* errors tied to no communicator (MPI 4) */
    int peer = 1 - rank;

    /* the derived objects: built once, shared by every thread */
    MPI_Comm dcomm = MPI_COMM_NULL;
    MPI_Datatype dtype = MPI_DATATYPE_NULL;
    int derived_ok = want_derived && MPI_Comm_dup(MPI_COMM_WORLD, &dcomm) == MPI_SUCCESS &&
                     MPI_Type_contiguous(4, MPI_BYTE, &dtype) == MPI_SUCCESS &&
                     MPI_Type_commit(&dtype) == MPI_SUCCESS;
    derived_ok = derived_ok && exchange(derived_ok, peer);

    if (rank == 0) {
        printf("# sqmr ranks=2 provided=%s level=%s pin=%s cpu=%d msgs_per_iter=%d budget_s=%.3f reps=%d "
               "derived=%s\n", mt_level_name(provided), mt_level_name(level), when, cpu, 2 * NMSG, budget, reps,
               !want_derived ? "off" : derived_ok ? "ok" : "unsupported");
        fflush(stdout);
    }
    int bad_all = 0;
    for (int i = 0; i < nt; i++) {
        int T = (int)tlist[i];
        if (T < 1 || T > MAX_THREADS || (T > 1 && level < MPI_THREAD_MULTIPLE))
            continue;
        int bad = 0;
        double target = budget / reps;
        double rb[1000], rd[1000], ratio[1000];
        int nb = 0, nd = 0, nr = 0;
        for (int r = 0; r < reps; r++) {
            double b = 0, d = 0;
            /* alternate which mode goes first */
            for (int m = 0; m < 2; m++) {
                int derived = (m + r) % 2;
                if (derived ? !(want_derived && derived_ok) : !want_builtin)
                    continue;
                long iters = 0;
                double sec = run(T, target, derived ? dcomm : MPI_COMM_WORLD, derived ? dtype : MPI_BYTE, rank,
                                 peer, &iters, &bad);
                double rate = 2.0 * NMSG * (double)iters / sec / 1e6;
                if (rank == 0)
                    printf("threads=%d mode=%s rep=%d iters=%ld seconds=%.6f rate_mmsg_s=%.4f\n", T,
                           derived ? "derived" : "builtin", r, iters, sec, rate);
                if (derived)
                    rd[nd++] = d = rate;
                else
                    rb[nb++] = b = rate;
            }
            if (b > 0 && d > 0)
                ratio[nr++] = d / b;
        }
        int bad_any = bad || exchange(bad, peer);
        bad_all |= bad_any;
        if (rank == 0) {
            printf("threads=%d", T);
            if (nb)
                printf(" builtin_mmsg_s=%.4f", median(rb, nb));
            if (nd)
                printf(" derived_mmsg_s=%.4f", median(rd, nd));
            else if (want_derived)
                printf(" derived_mmsg_s=unsupported");
            if (nr) {
                double med = median(ratio, nr);
                printf(" ratio=%.4f ratio_min=%.4f ratio_max=%.4f", med, ratio[0], ratio[nr - 1]);
            }
            printf(" reps=%d check=%s\n", reps, bad_any ? "FAIL" : "ok");
            fflush(stdout);
        }
    }
    if (dtype != MPI_DATATYPE_NULL)
        MPI_Type_free(&dtype);
    if (dcomm != MPI_COMM_NULL)
        MPI_Comm_free(&dcomm);
    MPI_Finalize();
    return bad_all ? 1 : 0;
}
