/* Thread-ranks against process-ranks against threads sharing a rank (issue 15; docs/threadcomm.md).
 * Pairs of peers run at the same time, each pair measuring, for a time budget per test:
 *   lat   8-byte ping-pong, one-way latency (half the round trip), median over round trips; also
 *         its mean (latmean): with more busy threads than cores the median shows the round trips
 *         of moments when both peers of a pair ran at once, the mean the time a pair really took
 *   rate  message rate: windows of 64 8-byte Isends answered by one 0-byte ack, messages per second
 *   bw    1 MiB bandwidth: windows of 8 1 MiB Isends answered by one ack, MB/s
 * The mode decides what a peer is:
 *   -m tcomm   thread-ranks of MPIX_Threadcomm (Weft only): every process starts -n threads, thread-rank
 *              2k pairs with 2k+1 (the pairs are inside a process when -n is even)
 *   -m flat    processes with one thread each (plain MPI_Init): rank 2k pairs with 2k+1
 *   -m mt      MPI_THREAD_MULTIPLE, -n threads per process, thread t of process 2k pairs with thread t of
 *              process 2k+1 on a communicator of their own (a per-thread duplicate of MPI_COMM_WORLD)
 * Output (rank 0, one line per test):
 *   mode=tcomm peers=4 pairs=2 test=lat value=.. unit=us  (median of the pairs' medians)
 *   mode=tcomm peers=4 pairs=2 test=latmean value=.. unit=us  (mean of the pairs' means)
 *   mode=tcomm peers=4 pairs=2 test=rate value=.. unit=msg/s  (sum over pairs)
 *   mode=tcomm peers=4 pairs=2 test=bw value=.. unit=MB/s  (sum over pairs)
 * Options: -m mode, -n threads per process (tcomm, mt; default 2), -t budget seconds per test (0.5),
 * -x the tests to run (comma-separated; default lat,rate,bw; the others print 0).
 * Each figure is checked: the echoed byte, the window's last message. */
#include "bench_util.h"

#include <mpi.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#if defined(__has_include)
#if __has_include(<weft.h>)
#include <weft.h>
#endif
#endif

#define WINDOW 64
#define BW_WINDOW 8
#define BW_SIZE (1 << 20)

enum { M_TCOMM, M_FLAT, M_MT };
static int mode = M_FLAT, nthreads = 2;
static double budget = 0.5;
static const char *only = "lat,rate,bw";   /* -x: the tests to run (the others report 0) */
static MPI_Comm tcomm;
static pthread_barrier_t tbar;

typedef struct {
    double lat_us, rate, bw, lat_mean;
} result_t;
#define NFIG 4   /* doubles per result_t, gathered to rank 0 */

/* Both sides agree to stop: the pinger decides by its clock and tells the ponger in the message. */
static double run_lat(MPI_Comm c, int peer, int pinger, double *mean_p)
{
    char b[8] = { 0 };
    bench_samples_t s = { 0 };
    double t_end = bench_now() + budget;
    for (;;) {
        if (pinger) {
            int stop = bench_now() > t_end;
            b[0] = stop ? 0 : (char)(1 + (s.n % 100));
            double t0 = bench_now();
            MPI_Send(b, 8, MPI_BYTE, peer, 1, c);
            if (stop)
                break;
            MPI_Recv(b, 8, MPI_BYTE, peer, 1, c, MPI_STATUS_IGNORE);
            double t1 = bench_now();
            if (b[1] != b[0]) {
                fprintf(stderr, "threadcomm bench: bad echo\n");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            bench_samples_reserve(&s, 1);
            s.v[s.n++] = (t1 - t0) / 2 * 1e6;
        } else {
            MPI_Recv(b, 8, MPI_BYTE, peer, 1, c, MPI_STATUS_IGNORE);
            if (b[0] == 0)
                break;
            b[1] = b[0];
            MPI_Send(b, 8, MPI_BYTE, peer, 1, c);
        }
    }
    if (!pinger)
        return 0;
    bench_stats_t st = bench_stats(&s);
    free(s.v);
    *mean_p = st.mean;
    return st.median;
}

/* Windows of `win` messages of `size` bytes, one ack each; returns messages per second (sender). */
static double run_stream(MPI_Comm c, int peer, int sender, size_t size, int win, char *buf)
{
    MPI_Request rq[WINDOW];
    long windows = 0;
    double t0 = bench_now(), t_end = t0 + budget;
    int go = 1;
    while (go) {
        if (sender) {
            go = bench_now() < t_end;
            for (int i = 0; i < win; i++) {
                buf[(size_t)i * size % (size_t)BW_SIZE] = (char)go;
                MPI_Isend(buf + (size_t)i * size % (size_t)BW_SIZE, (int)size, MPI_BYTE, peer, 2, c,
                          &rq[i]);
            }
            MPI_Waitall(win, rq, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, peer, 3, c, MPI_STATUS_IGNORE);
        } else {
            for (int i = 0; i < win; i++)
                MPI_Irecv(buf + (size_t)i * size % (size_t)BW_SIZE, (int)size, MPI_BYTE, peer, 2, c,
                          &rq[i]);
            MPI_Waitall(win, rq, MPI_STATUSES_IGNORE);
            go = buf[(size_t)(win - 1) * size % (size_t)BW_SIZE];
            MPI_Send(NULL, 0, MPI_BYTE, peer, 3, c);
        }
        windows++;
    }
    double dt = bench_now() - t0;
    return sender ? (double)windows * win / dt : 0;
}

static void run_peer(MPI_Comm c, int me, result_t *r)
{
    int peer = me ^ 1, first = !(me & 1);
    char *buf = malloc((size_t)BW_SIZE * BW_WINDOW);
    memset(buf, 1, (size_t)BW_SIZE * BW_WINDOW);
    if (strstr(only, "lat"))
        r->lat_us = run_lat(c, peer, first, &r->lat_mean);
    if (strstr(only, "rate"))
        r->rate = run_stream(c, peer, first, 8, WINDOW, buf);
    if (!strstr(only, "bw")) {
        free(buf);
        return;
    }
    /* bandwidth: 8 distinct 1 MiB buffers */
    MPI_Request rq[BW_WINDOW];
    long windows = 0;
    double t0 = bench_now(), t_end = t0 + budget;
    int go = 1;
    while (go) {
        if (first) {
            go = bench_now() < t_end;
            for (int i = 0; i < BW_WINDOW; i++) {
                buf[(size_t)i * BW_SIZE] = (char)go;
                MPI_Isend(buf + (size_t)i * BW_SIZE, BW_SIZE, MPI_BYTE, peer, 4, c, &rq[i]);
            }
            MPI_Waitall(BW_WINDOW, rq, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, peer, 5, c, MPI_STATUS_IGNORE);
        } else {
            for (int i = 0; i < BW_WINDOW; i++)
                MPI_Irecv(buf + (size_t)i * BW_SIZE, BW_SIZE, MPI_BYTE, peer, 4, c, &rq[i]);
            MPI_Waitall(BW_WINDOW, rq, MPI_STATUSES_IGNORE);
            go = buf[(size_t)(BW_WINDOW - 1) * BW_SIZE];
            MPI_Send(NULL, 0, MPI_BYTE, peer, 5, c);
        }
        windows++;
    }
    r->bw = first ? (double)windows * BW_WINDOW * BW_SIZE / (bench_now() - t0) / 1e6 : 0;
    free(buf);
}

static result_t *results;   /* [threads] of this process */
static MPI_Comm *tcomms;    /* mt: per-thread communicators */

static void *thread_main(void *arg)
{
    int t = (int)(intptr_t)arg;
    if (mode == M_TCOMM) {
#ifdef WEFT_MPIX_THREADCOMM
        int me;
        MPIX_Threadcomm_start(tcomm);
        MPI_Comm_rank(tcomm, &me);
        MPI_Barrier(tcomm);
        run_peer(tcomm, me, &results[t]);
        MPIX_Threadcomm_finish(tcomm);
#endif
    } else {
        int prank;
        MPI_Comm_rank(tcomms[t], &prank);
        pthread_barrier_wait(&tbar);
        run_peer(tcomms[t], prank, &results[t]);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int opt;
    while ((opt = getopt(argc, argv, "m:n:t:x:")) != -1) {
        switch (opt) {
        case 'm':
            mode = !strcmp(optarg, "tcomm") ? M_TCOMM : !strcmp(optarg, "mt") ? M_MT : M_FLAT;
            break;
        case 'n': nthreads = atoi(optarg); break;
        case 't': budget = atof(optarg); break;
        case 'x': only = optarg; break;
        default:
            fprintf(stderr, "usage: threadcomm [-m tcomm|flat|mt] [-n threads] [-t budget_s] [-x lat,rate,bw]\n");
            return 2;
        }
    }
    int provided, rank, np;
    if (mode == M_FLAT) {
        MPI_Init(&argc, &argv);
        nthreads = 1;
    } else {
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *mname = mode == M_TCOMM ? "tcomm" : mode == M_MT ? "mt" : "flat";
#ifndef WEFT_MPIX_THREADCOMM
    if (mode == M_TCOMM) {
        if (rank == 0)
            printf("mode=tcomm skipped: this MPI has no MPIX_Threadcomm\n");
        MPI_Finalize();
        return 0;
    }
#endif
    int peers = np * nthreads;
    if (peers % 2 || (mode == M_MT && np % 2)) {
        if (rank == 0)
            fprintf(stderr, "threadcomm bench: needs an even number of peers (mt: of processes)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    results = calloc((size_t)nthreads, sizeof(*results));
    if (mode == M_FLAT) {
        MPI_Barrier(MPI_COMM_WORLD);
        run_peer(MPI_COMM_WORLD, rank, &results[0]);
    } else {
        pthread_t th[256];
        if (mode == M_MT) {
            /* thread t of process p is rank p of tcomms[t]: pairs (2k, 2k+1) of processes */
            tcomms = malloc(sizeof(MPI_Comm) * (size_t)nthreads);
            for (int t = 0; t < nthreads; t++)
                MPI_Comm_dup(MPI_COMM_WORLD, &tcomms[t]);
            pthread_barrier_init(&tbar, NULL, (unsigned)nthreads);
            MPI_Barrier(MPI_COMM_WORLD);
        } else {
#ifdef WEFT_MPIX_THREADCOMM
            MPIX_Threadcomm_init(MPI_COMM_WORLD, nthreads, &tcomm);
#endif
        }
        for (int t = 0; t < nthreads; t++)
            pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t);
        for (int t = 0; t < nthreads; t++)
            pthread_join(th[t], NULL);
        if (mode == M_MT) {
            for (int t = 0; t < nthreads; t++)
                MPI_Comm_free(&tcomms[t]);
            free(tcomms);
        } else {
#ifdef WEFT_MPIX_THREADCOMM
            MPIX_Threadcomm_free(&tcomm);
#endif
        }
    }
    /* pairs' figures are on their first peers: gather every peer's, rank 0 combines */
    _Static_assert(sizeof(result_t) == NFIG * sizeof(double), "result_t is NFIG doubles");
    double *all = rank == 0 ? malloc(sizeof(double) * NFIG * (size_t)peers) : NULL;
    MPI_Gather(results, NFIG * nthreads, MPI_DOUBLE, all, NFIG * nthreads, MPI_DOUBLE, 0,
               MPI_COMM_WORLD);
    if (rank == 0) {
        bench_samples_t lat = { 0 };
        double rate = 0, bw = 0, mean = 0;
        for (int i = 0; i < peers; i++) {
            const double *f = &all[NFIG * i];
            if (f[0] == 0 && f[1] == 0 && f[2] == 0)
                continue;   /* the second peer of a pair (its figures are 0) */
            bench_samples_reserve(&lat, 1);
            lat.v[lat.n++] = f[0];
            rate += f[1];
            bw += f[2];
            mean += f[3];
        }
        bench_stats_t st = bench_stats(&lat);
        if (strstr(only, "lat"))
        {
            printf("mode=%s peers=%d pairs=%d test=lat value=%.3f unit=us\n", mname, peers,
                   peers / 2, st.median);
            printf("mode=%s peers=%d pairs=%d test=latmean value=%.3f unit=us\n", mname, peers,
                   peers / 2, lat.n ? mean / (double)lat.n : 0);
        }
        if (strstr(only, "rate"))
            printf("mode=%s peers=%d pairs=%d test=rate value=%.0f unit=msg/s\n", mname, peers,
                   peers / 2, rate);
        if (strstr(only, "bw"))
            printf("mode=%s peers=%d pairs=%d test=bw value=%.0f unit=MB/s\n", mname, peers,
                   peers / 2, bw);
        free(lat.v);
        free(all);
    }
    free(results);
    MPI_Finalize();
    return 0;
}
