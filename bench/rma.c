/* One-sided communication, 2 ranks: rank 0 is the origin, rank 1 the target (bench/run_rma.sh;
 * docs/benchmarks.md, "One-sided"). One MPI_Win_allocate window of 4 MiB + a control line, the
 * same for all three implementations.
 *
 *   -m lat      Put and Get of 8 B; a sample is one operation and its synchronization:
 *               sync=flush: MPI_Win_flush inside one MPI_Win_lock_all epoch (target idle in a
 *               barrier); sync=fence: MPI_Win_fence, which the target calls too.
 *   -m bw       Put and Get of 64 KiB (64 per sample) and 1 MiB (4 per sample), 4 MiB in all, then
 *               the synchronization; bandwidth = bytes of a sample / median sample time.
 *   -m atomic   MPI_Fetch_and_op (MPI_SUM, int64) and MPI_Compare_and_swap (int64) + flush.
 *   -m mt       RMA-MT-style Put bandwidth: T threads of rank 0 (the main thread is thread 0)
 *               share 128 Puts of 16 KiB per sample (2 MiB, the same for every T, so that the
 *               working set does not grow with T), each thread 128/T to its own part of the
 *               target; -s fence: the main thread closes the sample with MPI_Win_fence; -s flush:
 *               every thread calls MPI_Win_flush inside one lock_all epoch. -T lists the thread
 *               counts (1,2,4,8). Needs MPI_THREAD_MULTIPLE. -R rounds (8): a sample is that
 *               many rounds of the 128 Puts between the threads' two barriers (16 MiB; 1 gives
 *               the earlier 2 MiB samples). Each rank runs on one CPU (-p), so a barrier wakes
 *               T threads one after the other: measured here, with 2 MiB samples 8 threads
 *               reached 0.52x the 1-thread bandwidth while with 16 MiB samples they reached
 *               1.0x, with nothing else changed: the barrier's wake-ups, not the Puts, were
 *               the cost (Open MPI showed the same 0.5).
 *   -m passive  Accumulate (MPI_SUM, one int64) + MPI_Win_flush under lock_all while the target
 *               (-g idle) waits in MPI_Barrier or (-g compute) runs a loop of arithmetic that calls
 *               no MPI function until the origin raises a flag in the window (a plain load) or a
 *               time limit passes (so an implementation that needs the target in MPI to progress
 *               still finishes, with one slow sample; the line says which ended it).
 *
 * -w create: the window is user memory (malloc) given to MPI_Win_create instead of MPI_Win_allocate
 * (job bw_create of run_rma.sh; implementations reach such memory by single copy or messages).
 *
 * Latency samples are 16 operations (each with its synchronization) timed together, divided by 16:
 * one clock read costs 20-30 ns, as much as a whole same-node Put + flush.
 *
 * Options: -t seconds per case (1.0; 10% more is spent first as warm-up), -p pin each rank to
 * CPU rank (before MPI_Init, so every thread inherits it), -l init|multiple (the thread level; mt
 * always asks for multiple). Output, one line per case from rank 0:
 *   case=put_flush op=put sync=flush size=8 ops=1 threads=1 target=idle n=... median_us=...
 *   mean_us=... p99_us=... min_us=... mbps=... check=ok
 * check=FAIL voids the line: the data moved are checked after every case, outside the clock.
 */
#include "bench_util.h"   /* first: _GNU_SOURCE */
#include <mpi.h>
#include <pthread.h>
#include <unistd.h>
#include "bench_mt_util.h"

#define DATA (4L << 20)          /* data part of the window */
#define CTRL (DATA)              /* int64 counter of the atomics */
#define FLAG (DATA + 64)         /* int64 flag: the origin tells a computing target to stop */
#define WIN_BYTES (DATA + 4096)
#define MT_SIZE (16L << 10)
#define MT_OPS 128         /* per sample, shared by the threads */
#define MAX_THREADS 8
#define TAG 7
#define LAT_REPS 16               /* latency: a sample is 16 operations, so the clock's own cost
                                     (20-30 ns a read) is spread over them */

typedef struct rcase {
    const char *op;       /* put get fop cas acc */
    const char *sync;     /* flush fence */
    long size;            /* bytes per operation */
    int ops;              /* operations per sample (per thread for mt) */
    int threads;
    const char *target;   /* active (fence), idle, compute */
    int reps;             /* operations + synchronizations timed together as one sample */
    int rounds;           /* mt: rounds of the Puts between the threads' barriers (0: not mt) */
} rcase_t;

static int rank, nranks;
static MPI_Win win;
static char *base;        /* this rank's window memory */
static const char *case_suffix = "";   /* "_create" with -w create */
static char *local;       /* origin buffer, DATA bytes */
static int64_t next_val;  /* atomics: the value the target counter holds */
static long bad;          /* data checks that failed on this rank */
static uint64_t work_chunk;   /* -g compute: steps of mt_work in about 20 us */

static inline unsigned char pattern(long j, int salt)
{
    return (unsigned char)((j * 131 + salt) & 0xff);
}

/* ---- the threads of -m mt ---------------------------------------------------------------- */

static pthread_barrier_t mt_go, mt_done;
static const rcase_t *mt_case;
static volatile int mt_stop;

static void mt_puts(int t)
{
    const rcase_t *c = mt_case;
    for (int r = 0; r < c->rounds; r++)
        for (int i = 0; i < c->ops; i++)
            MPI_Put(local + ((long)t * c->ops + i) * c->size, (int)c->size, MPI_BYTE, 1,
                    (MPI_Aint)((long)t * c->ops + i) * c->size, (int)c->size, MPI_BYTE, win);
    if (!strcmp(c->sync, "flush"))
        MPI_Win_flush(1, win);
}

static void *mt_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (;;) {
        pthread_barrier_wait(&mt_go);
        if (mt_stop)
            return NULL;
        mt_puts(t);
        pthread_barrier_wait(&mt_done);
    }
}

/* ---- one sample at the origin ---------------------------------------------------------------- */

static void origin_sample(const rcase_t *c)
{
    const int fence = !strcmp(c->sync, "fence");
    if (c->threads > 1) {
        pthread_barrier_wait(&mt_go);
        mt_puts(0);
        pthread_barrier_wait(&mt_done);
    } else if (c->rounds) {
        mt_puts(0);   /* its flush included */
    } else if (!strcmp(c->op, "put")) {
        for (int i = 0; i < c->ops; i++)
            MPI_Put(local + (long)i * c->size, (int)c->size, MPI_BYTE, 1, (MPI_Aint)i * c->size,
                    (int)c->size, MPI_BYTE, win);
    } else if (!strcmp(c->op, "get")) {
        for (int i = 0; i < c->ops; i++)
            MPI_Get(local + (long)i * c->size, (int)c->size, MPI_BYTE, 1, (MPI_Aint)i * c->size,
                    (int)c->size, MPI_BYTE, win);
    } else if (!strcmp(c->op, "fop")) {
        int64_t one = 1, got = -1;
        MPI_Fetch_and_op(&one, &got, MPI_INT64_T, 1, CTRL, MPI_SUM, win);
        MPI_Win_flush(1, win);
        bad += got != next_val++;
        return;
    } else if (!strcmp(c->op, "cas")) {
        int64_t cmp = next_val, swap = next_val + 1, got = -1;
        MPI_Compare_and_swap(&swap, &cmp, &got, MPI_INT64_T, 1, CTRL, win);
        MPI_Win_flush(1, win);
        bad += got != next_val++;
        return;
    } else if (!strcmp(c->op, "acc")) {
        int64_t one = 1;
        MPI_Accumulate(&one, 1, MPI_INT64_T, 1, CTRL, 1, MPI_INT64_T, MPI_SUM, win);
        MPI_Win_flush(1, win);
        next_val++;
        return;
    }
    if (fence)
        MPI_Win_fence(0, win);
    else if (c->threads == 1 && !c->rounds)
        MPI_Win_flush(1, win);
}

/* The computing target: arithmetic in chunks of about 20 us, a plain load of the flag between
 * chunks, no MPI call. Returns 1 if the flag ended it, 0 if the time limit did. */
static int target_compute(double limit)
{
    volatile int64_t *flag = (volatile int64_t *)(base + FLAG);
    double t0 = bench_now();
    while (bench_now() - t0 < limit) {
        mt_work(work_chunk);
        if (*flag)
            return 1;
    }
    return 0;
}

/* ---- one case on both ranks ---------------------------------------------------------------- */

static void run_case(const rcase_t *c, double budget, int salt)
{
    const int fence = !strcmp(c->sync, "fence");
    const int atomic = !strcmp(c->op, "fop") || !strcmp(c->op, "cas") || !strcmp(c->op, "acc");
    long span = (long)c->threads * c->ops * c->size;   /* target bytes written or read */

    /* setup: origin pattern for put, target pattern for get, counters and flag zero */
    if (rank == 0)
        for (long j = 0; j < span; j++)
            local[j] = !strcmp(c->op, "put") ? (char)pattern(j, salt) : 0;
    if (rank == 1) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        for (long j = 0; j < span; j++)
            base[j] = !strcmp(c->op, "get") ? (char)pattern(j, salt) : 0;
        memset(base + DATA, 0, 4096);
        MPI_Win_unlock(1, win);
    }
    next_val = 0;
    bad = 0;
    mt_case = c;
    mt_stop = 0;
    pthread_t th[MAX_THREADS];
    if (rank == 0 && c->threads > 1) {
        pthread_barrier_init(&mt_go, NULL, (unsigned)c->threads);
        pthread_barrier_init(&mt_done, NULL, (unsigned)c->threads);
        for (int t = 1; t < c->threads; t++)
            pthread_create(&th[t], NULL, mt_thread, (void *)(intptr_t)t);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    if (fence)
        MPI_Win_fence(0, win);
    else if (rank == 0)
        MPI_Win_lock_all(0, win);

    bench_samples_t s = { 0 };
    int target_end = -1;
    if (rank == 0) {
        double start = bench_now(), warm_end = start + 0.1 * budget, end = warm_end + budget;
        long batch = 1;
        for (;;) {
            double b0 = bench_now();
            if (b0 >= end)
                break;
            if (fence)
                MPI_Send(&batch, 1, MPI_LONG, 1, TAG, MPI_COMM_WORLD);
            bench_samples_reserve(&s, (size_t)batch);
            for (long i = 0; i < batch; i++) {
                double t0 = bench_now();
                for (int k = 0; k < c->reps; k++)
                    origin_sample(c);
                double t1 = bench_now();
                if (t0 >= warm_end)
                    s.v[s.n++] = (t1 - t0) / c->reps;
            }
            if (bench_now() - b0 < budget / 50 && batch < (1L << 20))
                batch *= 2;
        }
        if (fence) {
            long zero = 0;
            MPI_Send(&zero, 1, MPI_LONG, 1, TAG, MPI_COMM_WORLD);
        }
        if (!strcmp(c->target, "compute")) {
            int64_t one = 1;
            MPI_Put(&one, 1, MPI_INT64_T, 1, FLAG, 1, MPI_INT64_T, win);
            MPI_Win_flush(1, win);
        }
        if (atomic) {
            int64_t got = -1;
            MPI_Get(&got, 1, MPI_INT64_T, 1, CTRL, 1, MPI_INT64_T, win);
            MPI_Win_flush(1, win);
            bad += got != next_val;
        }
    } else if (rank == 1 && fence) {
        for (;;) {
            long n;
            MPI_Recv(&n, 1, MPI_LONG, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (!n)
                break;
            for (long i = 0; i < n * c->reps; i++)
                MPI_Win_fence(0, win);
        }
    } else if (rank == 1 && !strcmp(c->target, "compute")) {
        target_end = target_compute(1.1 * budget + 2.0);
    }

    if (fence)
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    else if (rank == 0)
        MPI_Win_unlock_all(win);
    if (rank == 0 && c->threads > 1) {
        mt_stop = 1;
        pthread_barrier_wait(&mt_go);
        for (int t = 1; t < c->threads; t++)
            pthread_join(th[t], NULL);
        pthread_barrier_destroy(&mt_go);
        pthread_barrier_destroy(&mt_done);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* data checks, outside the clock */
    if (rank == 1 && (!strcmp(c->op, "put"))) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        for (long j = 0; j < span; j++) {
            /* every operation puts its own part of local[] to the same offset */
            if ((unsigned char)base[j] != pattern(j, salt)) {
                bad++;
                break;
            }
        }
        MPI_Win_unlock(1, win);
    }
    if (rank == 0 && !strcmp(c->op, "get"))
        for (long j = 0; j < span; j++)
            if ((unsigned char)local[j] != pattern(j, salt)) {
                bad++;
                break;
            }
    long bad1 = bad;
    int end1 = target_end;
    if (rank == 1) {
        MPI_Send(&bad1, 1, MPI_LONG, 0, TAG, MPI_COMM_WORLD);
        MPI_Send(&end1, 1, MPI_INT, 0, TAG, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&bad1, 1, MPI_LONG, 1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&end1, 1, MPI_INT, 1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bench_stats_t st = bench_stats(&s);
        double bytes = (double)c->threads * c->ops * c->size * (c->rounds ? c->rounds : 1);
        printf("case=%s_%s%s op=%s sync=%s size=%ld ops=%d threads=%d target=%s reps=%d n=%zu "
               "median_us=%.4f mean_us=%.4f p99_us=%.4f min_us=%.4f mbps=%.1f check=%s",
               c->op, c->sync, case_suffix, c->op, c->sync, c->size, c->ops, c->threads, c->target, c->reps, s.n,
               st.median * 1e6, st.mean * 1e6, st.p99 * 1e6, st.min * 1e6,
               st.median > 0 ? bytes / st.median / 1e6 : 0.0, bad + bad1 ? "FAIL" : "ok");
        if (end1 >= 0)
            printf(" target_end=%s", end1 ? "flag" : "limit");
        printf("\n");
        fflush(stdout);
    }
    free(s.v);
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_rma -m lat|bw|atomic|mt|passive [-s flush|fence] [-T 1,2,4,8] "
                    "[-g idle|compute] [-t seconds] [-p] [-l init|multiple] [-R mt_rounds] "
                    "[-w allocate|create]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *mode = NULL, *sync = "flush", *tlist = "1,2,4,8", *target = "idle";
    double budget = 1.0;
    const char *flavor = "allocate";
    int pin = 0, level = -1, opt, mt_rounds = 8;
    while ((opt = getopt(argc, argv, "m:s:T:g:t:pl:R:w:")) != -1) {
        switch (opt) {
        case 'm': mode = optarg; break;
        case 's': sync = optarg; break;
        case 'T': tlist = optarg; break;
        case 'g': target = optarg; break;
        case 't': budget = atof(optarg); break;
        case 'p': pin = 1; break;
        case 'R': mt_rounds = atoi(optarg); break;
        case 'l': level = mt_level_parse(optarg); break;
        case 'w': flavor = optarg; break;
        default: usage();
        }
    }
    if (!mode || level < -1 || mt_rounds < 1 ||
        (strcmp(sync, "flush") && strcmp(sync, "fence")) ||
        (strcmp(target, "idle") && strcmp(target, "compute")) ||
        (strcmp(flavor, "allocate") && strcmp(flavor, "create")))
        usage();
    int create = !strcmp(flavor, "create");
    if (create)
        case_suffix = "_create";
    int is_mt = !strcmp(mode, "mt");
    if (is_mt)
        level = MPI_THREAD_MULTIPLE;
    int cpu;
    const char *when;
    int provided = mt_init(&argc, &argv, level, pin, &cpu, &when);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks != 2) {
        if (rank == 0)
            fprintf(stderr, "bench_rma: needs exactly 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    local = malloc(DATA);
    void *user = create ? calloc(1, WIN_BYTES) : NULL;
    if (create)
        base = user;
    if (!local || (create && !user) ||
        (create ? MPI_Win_create(user, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win)
                : MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win)) !=
            MPI_SUCCESS) {
        fprintf(stderr, "bench_rma: no window\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(local, 0, DATA);   /* first touch outside the clock */
    if (rank == 0)
        printf("# mode=%s level=%s cpu=%d pinned=%s timer_ns=%.1f window=%s\n", mode,
               mt_level_name(provided), cpu, when, bench_timer_cost() * 1e9, flavor);

    int salt = 1;
    if (!strcmp(mode, "lat")) {
        const char *ops[] = { "put", "get" }, *syncs[] = { "flush", "fence" };
        for (int o = 0; o < 2; o++)
            for (int y = 0; y < 2; y++) {
                rcase_t c = { ops[o], syncs[y], 8, 1, 1, y ? "active" : "idle", LAT_REPS };
                run_case(&c, budget, salt++);
            }
    } else if (!strcmp(mode, "bw")) {
        const char *ops[] = { "put", "get" }, *syncs[] = { "flush", "fence" };
        long sizes[] = { 64L << 10, 1L << 20 };
        for (int o = 0; o < 2; o++)
            for (int z = 0; z < 2; z++)
                for (int y = 0; y < 2; y++) {
                    rcase_t c = { ops[o], syncs[y], sizes[z], (int)(DATA / sizes[z]), 1,
                                  y ? "active" : "idle", 1 };
                    run_case(&c, budget, salt++);
                }
    } else if (!strcmp(mode, "atomic")) {
        rcase_t f = { "fop", "flush", 8, 1, 1, "idle", LAT_REPS },
                c = { "cas", "flush", 8, 1, 1, "idle", LAT_REPS };
        run_case(&f, budget, salt++);
        run_case(&c, budget, salt++);
    } else if (is_mt) {
        long tl[8];
        int nt = bench_parse_list(tlist, tl, 8);
        if (nt < 1)
            usage();
        if (provided != MPI_THREAD_MULTIPLE) {
            if (rank == 0)
                printf("case=put_%s op=put sync=%s unavailable=thread_level_%s\n", sync, sync,
                       mt_level_name(provided));
        } else {
            for (int i = 0; i < nt; i++) {
                if (tl[i] < 1 || tl[i] > MAX_THREADS)
                    usage();
                rcase_t c = { "put", sync, MT_SIZE, MT_OPS / (int)tl[i], (int)tl[i],
                              strcmp(sync, "fence") ? "idle" : "active", 1, mt_rounds };
                run_case(&c, budget, salt++);
            }
        }
    } else if (!strcmp(mode, "passive")) {
        work_chunk = (uint64_t)(mt_work_rate() * 20e-6) + 1;   /* calibrated before the clock */
        rcase_t c = { "acc", "flush", 8, 1, 1, target, LAT_REPS };
        run_case(&c, budget, salt++);
    } else {
        usage();
    }
    MPI_Win_free(&win);
    free(user);
    free(local);
    MPI_Finalize();
    return 0;
}
