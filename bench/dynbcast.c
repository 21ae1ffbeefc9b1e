/* The dynamic broadcast (docs/dynbcast.md; bench/README.md "Dynamic broadcast"): rank 0 sends one
 * buffer to k ranks of the job, a different random subset at every repetition (all ranks draw the
 * same subsets), by each method of -m:
 *   dyn     MPIX_Dynbcast; the destinations MPI_Recv (Weft only: built when <weft.h> is found)
 *   sends   k MPI_Isend from the root + MPI_Waitall; the destinations MPI_Recv
 *   bcast   the root and the destinations build a communicator with MPI_Group_incl +
 *           MPI_Comm_create_group, MPI_Bcast on it, MPI_Comm_free: the creation is counted
 *   split   the same with MPI_Comm_split (every rank takes part, the others with MPI_UNDEFINED)
 * A repetition: barrier, the root starts its clock, the operation, every destination answers with
 * an empty message once it has the data, the root stops its clock when all k answers are in. The
 * answer costs every method the same (about one message latency). Reported per point: median, mean
 * and p99 of the repetitions in microseconds; repetitions fill the time budget (-t) after a
 * warm-up. Every repetition checks the first and last byte, the last one every byte.
 *
 * Output (rank 0), one line per point:
 *   mode=dynbcast method=dyn np=8 k=3 size=1024 reps=.. median_us=.. mean_us=.. p99_us=.. check=ok
 * (check=unavailable: the implementation lacks MPI_Bcast or MPIX_Dynbcast.)
 *
 * Options: -m methods (dyn,sends,bcast,split)  -k list of k (1,2,4,7)  -s sizes (8,1K,32K,256K,1M)
 *          -t seconds per point (0.2)  -p pin each rank to one CPU */
#include "bench_util.h"

#include <mpi.h>
#include <unistd.h>
#if defined(__has_include)
#if __has_include(<weft.h>)
#include <weft.h>
#endif
#endif

#define TAG_DATA 7
#define TAG_ACK  8
#define MAXK     256

static int rank, nranks;

static void fail(const char *what)
{
    fprintf(stderr, "dynbcast: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* The subset of repetition rep: k distinct ranks of 1..nranks-1, the same on every rank. */
static void subset(long rep, int k, int *out)
{
    int pool[MAXK];
    int n = nranks - 1;
    for (int i = 0; i < n; i++)
        pool[i] = i + 1;
    uint64_t x = 0x9e3779b97f4a7c15ull ^ (uint64_t)(rep * 2654435761u + (uint64_t)k);
    for (int i = 0; i < k; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int j = i + (int)((x >> 11) % (uint64_t)(n - i));
        int t = pool[i];
        pool[i] = pool[j];
        pool[j] = t;
        out[i] = pool[i];
    }
}

static unsigned char pat(long rep, size_t j)
{
    return (unsigned char)(rep * 131 + (long)(j * 7) + (long)(j >> 9));
}

static int bcast_ok = 1;

/* One repetition; returns the root's time in seconds (0 elsewhere). */
static double one(const char *m, long rep, int k, unsigned char *buf, size_t size, int full_check,
                  int *bad)
{
    int dests[MAXK], member = rank == 0, idx = -1;
    subset(rep, k, dests);
    for (int i = 0; i < k; i++)
        if (dests[i] == rank) {
            member = 1;
            idx = i;
        }
    if (rank == 0) {
        if (full_check)
            for (size_t j = 0; j < size; j++)
                buf[j] = pat(rep, j);
        else if (size) {
            buf[0] = pat(rep, 0);
            buf[size - 1] = pat(rep, size - 1);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bench_now();
    if (!strcmp(m, "dyn")) {
#ifdef WEFT_MPIX_DYNBCAST
        if (rank == 0)
            MPIX_Dynbcast(buf, (int)size, MPI_BYTE, dests, k, TAG_DATA, MPI_COMM_WORLD);
        else if (member)
            MPI_Recv(buf, (int)size, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
#endif
    } else if (!strcmp(m, "sends")) {
        if (rank == 0) {
            MPI_Request req[MAXK];
            for (int i = 0; i < k; i++)
                MPI_Isend(buf, (int)size, MPI_BYTE, dests[i], TAG_DATA, MPI_COMM_WORLD, &req[i]);
            MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
        } else if (member) {
            MPI_Recv(buf, (int)size, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else {
        MPI_Comm sub = MPI_COMM_NULL;
        if (!strcmp(m, "bcast")) {
            if (member) {
                int ranks[MAXK + 1];
                ranks[0] = 0;
                memcpy(ranks + 1, dests, sizeof(int) * (size_t)k);
                MPI_Group wg, g;
                MPI_Comm_group(MPI_COMM_WORLD, &wg);
                MPI_Group_incl(wg, k + 1, ranks, &g);
                if (MPI_Comm_create_group(MPI_COMM_WORLD, g, TAG_DATA, &sub) != MPI_SUCCESS)
                    fail("MPI_Comm_create_group failed");
                MPI_Group_free(&g);
                MPI_Group_free(&wg);
            }
        } else {
            /* key: the root first, then the destinations in list order */
            if (MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, idx + 1, &sub) !=
                MPI_SUCCESS)
                fail("MPI_Comm_split failed");
        }
        if (member) {
            if (MPI_Bcast(buf, (int)size, MPI_BYTE, 0, sub) != MPI_SUCCESS)
                fail("MPI_Bcast failed");
            MPI_Comm_free(&sub);
        }
    }
    if (rank == 0) {
        for (int i = 0; i < k; i++)
            MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return bench_now() - t0;
    }
    if (idx >= 0) {
        MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_ACK, MPI_COMM_WORLD);
        if (full_check) {
            for (size_t j = 0; j < size; j++)
                if (buf[j] != pat(rep, j)) {
                    (*bad)++;
                    break;
                }
        } else if (size && (buf[0] != pat(rep, 0) || buf[size - 1] != pat(rep, size - 1))) {
            (*bad)++;
        }
        memset(buf, 0, size < 64 ? size : 64);
        if (size)
            buf[size - 1] = 0;
    }
    return 0;
}

/* Everybody learns rank 0's value (point-to-point: MPI_Bcast may be missing). */
static long share(long v)
{
    if (rank == 0) {
        for (int r = 1; r < nranks; r++)
            MPI_Send(&v, 1, MPI_LONG, r, TAG_ACK + 1, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&v, 1, MPI_LONG, 0, TAG_ACK + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return v;
}

/* The sum of v over the ranks, at rank 0. */
static long gather_sum(long v)
{
    if (rank != 0) {
        MPI_Send(&v, 1, MPI_LONG, 0, TAG_ACK + 2, MPI_COMM_WORLD);
        return 0;
    }
    for (int r = 1; r < nranks; r++) {
        long x;
        MPI_Recv(&x, 1, MPI_LONG, r, TAG_ACK + 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        v += x;
    }
    return v;
}

static void point(const char *m, int k, size_t size, double budget)
{
    int available = 1;
#ifndef WEFT_MPIX_DYNBCAST
    if (!strcmp(m, "dyn"))
        available = 0;
#endif
    if ((!strcmp(m, "bcast") || !strcmp(m, "split")) && !bcast_ok)
        available = 0;
    if (!available) {
        if (rank == 0)
            printf("mode=dynbcast method=%s np=%d k=%d size=%zu reps=0 median_us=nan mean_us=nan "
                   "p99_us=nan check=unavailable\n", m, nranks, k, size);
        return;
    }
    unsigned char *buf = malloc(size ? size : 1);
    if (!buf)
        fail("out of memory");
    memset(buf, 0, size ? size : 1);
    int bad = 0;
    long rep = 0;
    double warm = 0;
    for (int i = 0; i < 5; i++)
        warm += one(m, rep++, k, buf, size, 0, &bad);
    long reps = 0;
    if (rank == 0) {
        double per = warm / 5;
        reps = per > 0 ? (long)(budget / per) : 1000;
        reps = reps < 10 ? 10 : reps > 5000 ? 5000 : reps;
    }
    reps = share(reps);
    bench_samples_t s = { 0 };
    bench_samples_reserve(&s, (size_t)reps);
    for (long i = 0; i < reps; i++) {
        double t = one(m, rep++, k, buf, size, i == reps - 1, &bad);
        if (rank == 0)
            s.v[s.n++] = t;
    }
    long nbad = gather_sum(bad);
    if (rank == 0) {
        bench_stats_t st = bench_stats(&s);
        printf("mode=dynbcast method=%s np=%d k=%d size=%zu reps=%ld median_us=%.2f mean_us=%.2f "
               "p99_us=%.2f check=%s\n", m, nranks, k, size, reps, st.median * 1e6, st.mean * 1e6,
               st.p99 * 1e6, nbad ? "FAILED" : "ok");
        fflush(stdout);
    }
    free(s.v);
    free(buf);
}

int main(int argc, char **argv)
{
    const char *methods = "dyn,sends,bcast,split", *klist = "1,2,4,7",
               *sizes = "8,1K,32K,256K,1M";
    double budget = 0.2;
    int pin = 0, opt;
    while ((opt = getopt(argc, argv, "m:k:s:t:p")) != -1) {
        switch (opt) {
        case 'm': methods = optarg; break;
        case 'k': klist = optarg; break;
        case 's': sizes = optarg; break;
        case 't': budget = atof(optarg); break;
        case 'p': pin = 1; break;
        default:
            fprintf(stderr, "usage: dynbcast [-m methods] [-k list] [-s sizes] [-t s] [-p]\n");
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (pin)
        bench_pin_self(rank);
    long ks[16], sz[32];
    int nk = bench_parse_list(klist, ks, 16), ns = bench_parse_list(sizes, sz, 32);
    if (nk < 0 || ns < 0)
        fail("bad -k or -s list");
    if (nranks > MAXK)
        fail("too many ranks");
    /* MPI_Bcast may be missing (a stub that fails): find out once, together. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);   /* a stub's error may go there */
    char probe = 1;
    bcast_ok = MPI_Bcast(&probe, 1, MPI_BYTE, 0, MPI_COMM_WORLD) == MPI_SUCCESS;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    bcast_ok = (int)share(bcast_ok);
    char mlist[256];
    snprintf(mlist, sizeof(mlist), "%s", methods);
    for (int si = 0; si < ns; si++)
        for (int ki = 0; ki < nk; ki++) {
            if (ks[ki] < 1 || ks[ki] >= nranks)
                continue;
            char tmp[256], *save = NULL;
            memcpy(tmp, mlist, sizeof(tmp));
            for (char *m = strtok_r(tmp, ",", &save); m; m = strtok_r(NULL, ",", &save))
                point(m, (int)ks[ki], (size_t)sz[si], budget);
        }
    MPI_Finalize();
    return 0;
}
