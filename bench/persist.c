/* Persistent and partitioned operations (bench/run_persist.sh; bench/README.md).
 *
 *   -m allreduce: 8-byte MPI_Allreduce (MPI_SUM of one double): blocking against a persistent request
 *                 made once (MPI_Allreduce_init) and run with MPI_Start + MPI_Wait; the two alternate in
 *                 batches of 200 calls for the time budget (a batch: from a barrier until the last rank
 *                 is done, the largest of the ranks' times). One line per kind with the median, mean
 *                 and 99th percentile of a batch's time per call.
 *   -m barrier, bcast, reduce, allgather, alltoall: the same for that collective (8-byte blocks, one
 *                 double; root 0); -m colls: all five in turn.
 *   -m part:      2 ranks, 4 MiB from rank 0 to rank 1 in 8 pieces of 512 KiB, each piece produced by one
 *                 of 8 sender threads: MPI_Psend_init/MPI_Precv_init with 8 partitions, each thread calling
 *                 MPI_Pready for its own (kind=partitioned), against each thread sending its piece with
 *                 MPI_Isend + MPI_Wait and the receiver posting 8 MPI_Irecv (kind=isend). A sample is one
 *                 message: from the moment the sender's threads start until the receiver's 0-byte
 *                 acknowledgement arrives, so both kinds include the same round trip.
 *
 * Options: -t seconds per kind (1.0), -p pin each rank to one CPU (not part), -k blocking or
 * -k persistent: run only that kind of the allreduce (for profiles and instruction counts). MPI_Init for
 * allreduce, MPI_Init_thread(MPI_THREAD_MULTIPLE) for part. Output lines:
 *   mode=allreduce kind=blocking np=4 calls=... median_us=... mean_us=... p99_us=...
 */
#include "bench_util.h"   /* first: _GNU_SOURCE */
#include <mpi.h>
#include <pthread.h>
#include <unistd.h>

/* Open MPI 4.1 has the persistent collectives as an extension (MPIX_, mpi-ext.h) and no partitioned
 * communication: the partitioned kind is then reported unavailable. */
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
#include <mpi-ext.h>
#define PINIT(name) MPIX_##name##_init
#define HAVE_PARTITIONED 0
#else
#define PINIT(name) MPI_##name##_init
#define HAVE_PARTITIONED 1
#endif
#define ALLREDUCE_INIT PINIT(Allreduce)
#define BARRIER_INIT PINIT(Barrier)
#define BCAST_INIT PINIT(Bcast)
#define REDUCE_INIT PINIT(Reduce)
#define ALLGATHER_INIT PINIT(Allgather)
#define ALLTOALL_INIT PINIT(Alltoall)

#define PART_THREADS 8
#define PART_BYTES (4u << 20)

static int rank, size;
static int only_kind = -1;   /* -k: run one kind of the allreduce only (profiling) */

static void report(const char *mode, const char *kind, bench_samples_t *s, long calls)
{
    if (rank != 0)
        return;
    bench_stats_t st = bench_stats(s);
    printf("mode=%s kind=%s np=%d calls=%ld median_us=%.3f mean_us=%.3f p99_us=%.3f\n", mode, kind,
           size, calls, st.median * 1e6, st.mean * 1e6, st.p99 * 1e6);
    fflush(stdout);
}

/* ---- small collectives: blocking against persistent ---- */

/* One collective: its blocking call and its persistent initialization, on 8-byte blocks. */
typedef struct coll_kind {
    const char *name;
    void (*blocking)(void);
    void (*init)(MPI_Request *req);
    int (*check)(void);   /* 0: the result is right */
} coll_kind_t;

static double ax = 1.0, ay;            /* Allreduce, Reduce, Bcast: one double */
static double gx, gy[64];              /* Allgather: one double per rank */
static double tx[64], ty[64];          /* Alltoall: one double per rank */

static void ar_b(void) { MPI_Allreduce(&ax, &ay, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); }
static void ar_i(MPI_Request *q)
{
    ALLREDUCE_INIT(&ax, &ay, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, q);
}
static int ar_c(void) { return ay != (double)size; }
static void ba_b(void) { MPI_Barrier(MPI_COMM_WORLD); }
static void ba_i(MPI_Request *q) { BARRIER_INIT(MPI_COMM_WORLD, MPI_INFO_NULL, q); }
static int no_c(void) { return 0; }
static void bc_b(void) { MPI_Bcast(&ay, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD); }
static void bc_i(MPI_Request *q) { BCAST_INIT(&ay, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, q); }
static int bc_c(void) { return ay != 42.0; }
static void re_b(void) { MPI_Reduce(&ax, &ay, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); }
static void re_i(MPI_Request *q)
{
    REDUCE_INIT(&ax, &ay, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, MPI_INFO_NULL, q);
}
static int re_c(void) { return rank == 0 && ay != (double)size; }
static void ag_b(void) { MPI_Allgather(&gx, 1, MPI_DOUBLE, gy, 1, MPI_DOUBLE, MPI_COMM_WORLD); }
static void ag_i(MPI_Request *q)
{
    ALLGATHER_INIT(&gx, 1, MPI_DOUBLE, gy, 1, MPI_DOUBLE, MPI_COMM_WORLD, MPI_INFO_NULL, q);
}
static int ag_c(void) { return gy[size - 1] != (double)(size - 1); }
static void aa_b(void) { MPI_Alltoall(tx, 1, MPI_DOUBLE, ty, 1, MPI_DOUBLE, MPI_COMM_WORLD); }
static void aa_i(MPI_Request *q)
{
    ALLTOALL_INIT(tx, 1, MPI_DOUBLE, ty, 1, MPI_DOUBLE, MPI_COMM_WORLD, MPI_INFO_NULL, q);
}
static int aa_c(void) { return ty[size - 1] != (double)(size - 1); }

static const coll_kind_t coll_kinds[] = {
    { "allreduce", ar_b, ar_i, ar_c }, { "barrier", ba_b, ba_i, no_c },
    { "bcast", bc_b, bc_i, bc_c },     { "reduce", re_b, re_i, re_c },
    { "allgather", ag_b, ag_i, ag_c }, { "alltoall", aa_b, aa_i, aa_c },
};

static void bench_coll(const coll_kind_t *ck, double budget)
{
    enum { BATCH = 200 };
    MPI_Request req;
    ck->init(&req);
    bench_samples_t s[2] = { { 0 }, { 0 } };
    long calls[2] = { 0, 0 };
    for (int w = 0; w < 50; w++) {   /* warm-up */
        ck->blocking();
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    double end = bench_now() + 2 * budget;
    int go = 1;
    while (go) {
        for (int k = 0; k < 2; k++) {
            if (only_kind >= 0 && k != only_kind)
                continue;
            bench_samples_reserve(&s[k], 1);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = bench_now();
            if (k == 0) {
                for (int i = 0; i < BATCH; i++)
                    ck->blocking();
            } else {
                for (int i = 0; i < BATCH; i++) {
                    MPI_Start(&req);
                    MPI_Wait(&req, MPI_STATUS_IGNORE);
                }
            }
            /* the batch ends when the last rank is done (a rooted collective's root may run
             * ahead of the others): the largest time over the ranks */
            double dt = bench_now() - t0, dtmax;
            MPI_Allreduce(&dt, &dtmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            s[k].v[s[k].n++] = dtmax / BATCH;
            calls[k] += BATCH;
            if (ck->check()) {
                fprintf(stderr, "%s: wrong result\n", ck->name);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        /* rank 0's clock decides, for everyone */
        go = bench_now() < end;
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    MPI_Request_free(&req);
    if (only_kind != 1)
        report(ck->name, "blocking", &s[0], calls[0]);
    if (only_kind != 0)
        report(ck->name, "persistent", &s[1], calls[1]);
    free(s[0].v), free(s[1].v);
}

static void bench_colls(const char *mode, double budget)
{
    gx = rank;
    for (int i = 0; i < 64; i++)
        tx[i] = rank;
    if (rank == 0)
        ay = 42.0;
    for (size_t i = 0; i < sizeof(coll_kinds) / sizeof(coll_kinds[0]); i++) {
        const coll_kind_t *ck = &coll_kinds[i];
        if (strcmp(mode, ck->name) != 0 && !(strcmp(mode, "colls") == 0 && i > 0))
            continue;
        if (strcmp(ck->name, "bcast") == 0 && rank == 0)
            ay = 42.0;
        bench_coll(ck, budget);
    }
}

/* ---- 4 MiB in 8 pieces from 8 threads ---- */

typedef struct part_state {
    pthread_barrier_t start, done;
    int kind;                  /* 0 partitioned, 1 isend */
    int quit;
    char *buf;
    MPI_Request preq;
} part_state_t;

static part_state_t ps;

static void *part_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    size_t piece = PART_BYTES / PART_THREADS;
    for (;;) {
        pthread_barrier_wait(&ps.start);
        if (ps.quit)
            return NULL;
        /* "produce" the piece: touch it, as an application computing it would */
        ps.buf[(size_t)t * piece] = (char)t;
        if (ps.kind == 0) {
#if HAVE_PARTITIONED
            MPI_Pready(t, ps.preq);
#endif
        } else {
            MPI_Request r;
            MPI_Isend(ps.buf + (size_t)t * piece, (int)piece, MPI_BYTE, 1, t, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        pthread_barrier_wait(&ps.done);
    }
}

static void bench_part(double budget)
{
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "part: needs 2 ranks\n");
        return;
    }
    size_t piece = PART_BYTES / PART_THREADS;
    ps.buf = malloc(PART_BYTES);
    memset(ps.buf, 1, PART_BYTES);
    pthread_t th[PART_THREADS];
    MPI_Request rreq = MPI_REQUEST_NULL;
    if (rank == 0) {
        pthread_barrier_init(&ps.start, NULL, PART_THREADS + 1);
        pthread_barrier_init(&ps.done, NULL, PART_THREADS + 1);
        for (int t = 0; t < PART_THREADS; t++)
            pthread_create(&th[t], NULL, part_thread, (void *)(intptr_t)t);
#if HAVE_PARTITIONED
        MPI_Psend_init(ps.buf, PART_THREADS, (int)piece, MPI_BYTE, 1, 0, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &ps.preq);
    } else {
        MPI_Precv_init(ps.buf, PART_THREADS, (int)piece, MPI_BYTE, 0, 0, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &rreq);
#endif
    }
    bench_samples_t s[2] = { { 0 }, { 0 } };
    long calls[2] = { 0, 0 };
    int ack = 0;
    for (int k = HAVE_PARTITIONED ? 0 : 1; k < 2; k++) {
        double end = 0;
        int go = 1;
        for (long it = 0; go; it++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = bench_now();
            if (rank == 0) {
                ps.kind = k;
                if (k == 0)
                    MPI_Start(&ps.preq);
                pthread_barrier_wait(&ps.start);
                pthread_barrier_wait(&ps.done);
                if (k == 0)
                    MPI_Wait(&ps.preq, MPI_STATUS_IGNORE);
                MPI_Recv(&ack, 1, MPI_INT, 1, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                if (k == 0) {
                    MPI_Start(&rreq);
                    MPI_Wait(&rreq, MPI_STATUS_IGNORE);
                } else {
                    MPI_Request r[PART_THREADS];
                    for (int t = 0; t < PART_THREADS; t++)
                        MPI_Irecv(ps.buf + (size_t)t * piece, (int)piece, MPI_BYTE, 0, t,
                                  MPI_COMM_WORLD, &r[t]);
                    MPI_Waitall(PART_THREADS, r, MPI_STATUSES_IGNORE);
                }
                MPI_Send(&ack, 1, MPI_INT, 0, 100, MPI_COMM_WORLD);
            }
            double dt = bench_now() - t0;
            if (it == 5)
                end = bench_now() + budget;   /* after a warm-up */
            if (it >= 5) {
                bench_samples_reserve(&s[k], 1);
                s[k].v[s[k].n++] = dt;
                calls[k]++;
            }
            go = it < 5 || bench_now() < end;
            MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) {
        ps.quit = 1;
        pthread_barrier_wait(&ps.start);
        for (int t = 0; t < PART_THREADS; t++)
            pthread_join(th[t], NULL);
        if (HAVE_PARTITIONED)
            MPI_Request_free(&ps.preq);
    } else if (HAVE_PARTITIONED) {
        MPI_Request_free(&rreq);
    }
    if (HAVE_PARTITIONED)
        report("part", "partitioned", &s[0], calls[0]);
    else if (rank == 0)
        printf("mode=part kind=partitioned np=%d unavailable=1\n", size);
    report("part", "isend", &s[1], calls[1]);
    free(s[0].v), free(s[1].v);
    free(ps.buf);
}

int main(int argc, char **argv)
{
    const char *mode = "allreduce";
    double budget = 1.0;
    int pin = 0, opt;
    while ((opt = getopt(argc, argv, "m:t:pk:")) != -1) {
        switch (opt) {
        case 'm': mode = optarg; break;
        case 't': budget = atof(optarg); break;
        case 'p': pin = 1; break;
        case 'k': only_kind = strcmp(optarg, "persistent") == 0; break;
        default:
            fprintf(stderr, "usage: persist [-m allreduce|barrier|bcast|reduce|allgather|alltoall|colls|part] [-t s] [-p] [-k blocking|persistent]\n");
            return 2;
        }
    }
    int provided = MPI_THREAD_SINGLE, part = strcmp(mode, "part") == 0;
    if (part)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (pin && !part)   /* the 8 threads of a partitioned sender need the whole machine */
        bench_pin_self(rank);
    if (part) {
        if (provided < MPI_THREAD_MULTIPLE) {
            if (rank == 0)
                fprintf(stderr, "part: MPI_THREAD_MULTIPLE not provided\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        bench_part(budget);
    } else {
        bench_colls(mode, budget);
    }
    MPI_Finalize();
    return 0;
}
