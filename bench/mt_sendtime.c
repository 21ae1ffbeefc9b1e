/* Send time against message size with computation between MPI_Isend and MPI_Wait (after the pioman paper's
 * "send time" figure, bench/README.md "Threads and progression").
 *
 * Rank 0 sends `size` bytes to rank 1. For each size and each computation time C (100 and 500 us by default)
 * both ranks start the transfer (Isend / Irecv), compute for C, then Wait; rank 0 reports its own time from
 * before Isend to the return of Wait: the send time. Perfect overlap gives max(C, T_comm), none gives
 * C + T_comm, where T_comm is the same transfer with no computation (measured in the same loop, reported as
 * comp_us=0). The computation is a fixed number of steps of a dependent multiply-add chain, calibrated on each
 * rank to take C when run alone; its time alone (both ranks computing, no message) is measured in the same
 * loop too (comp_alone_us), so the overlap figure uses what the computation really took.
 *
 * One iteration runs, each step after a handshake (rank 1 "ready", rank 0 "go"): the transfer alone, then for
 * each C the computation alone and the overlapped transfer. Iterations repeat until the size's time budget is
 * spent, after a warm-up of a fraction of it whose samples are dropped.
 *
 * Output on rank 0, per size: one line with comp_us=0 (the transfer alone) and one per C:
 *   size=65536 comp_us=100 iters=.. comm_us=.. comp_alone_us=.. send_median_us=.. send_mean_us=..
 *       send_p99_us=.. ideal_us=.. no_overlap_us=.. overlap=.. check=ok
 * ideal_us = max(comp_alone, comm), no_overlap_us = their sum (medians), overlap = (comm + comp_alone -
 * send_median) / min(comm, comp_alone) clipped to [0, 1]. check=FAIL: rank 1's last message did not hold the
 * sender's pattern (exit status 1).
 *
 * Options: -s sizes (1K,4K,16K,64K,256K,1M,4M,8M)  -c computation times in us (100,500)  -t budget seconds per
 *          size (0.2)  -w warm-up fraction (0.1)  -l init|single|funneled|serialized|multiple (multiple)
 *          -p pin each rank to one CPU */
#include "bench_util.h"

#include <mpi.h>
#include <unistd.h>

enum { TAG_DATA = 1, TAG_SYNC = 2, TAG_CTRL = 3, MAX_SIZES = 32, MAX_COMPS = 8 };

#include "bench_mt_util.h"

/* ---- this program ------------------------------------------------------------------------------------- */

static unsigned char pattern_byte(long i, long salt)
{
    return (unsigned char)((i * 131 + salt * 7 + 17) & 0xff);
}

/* Handshake before each timed step; rank 0 decides whether there is a step (flag) and returns it. */
static int sync_step(int rank, int flag)
{
    int dummy = 0;
    if (rank == 0) {
        MPI_Recv(&dummy, 1, MPI_INT, 1, TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&flag, 1, MPI_INT, 1, TAG_SYNC, MPI_COMM_WORLD);
    } else {
        MPI_Send(&dummy, 1, MPI_INT, 0, TAG_SYNC, MPI_COMM_WORLD);
        MPI_Recv(&flag, 1, MPI_INT, 0, TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return flag;
}

/* One transfer with `work` computation steps between its start and MPI_Wait; elapsed seconds. */
static double transfer(int rank, unsigned char *buf, long size, uint64_t work)
{
    MPI_Request req;
    double t0 = bench_now();
    if (rank == 0)
        MPI_Isend(buf, (int)size, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, &req);
    else
        MPI_Irecv(buf, (int)size, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, &req);
    if (work)
        mt_work(work);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    return bench_now() - t0;
}

static void push(bench_samples_t *s, double v)
{
    bench_samples_reserve(s, 1);
    s->v[s->n++] = v;
}

int main(int argc, char **argv)
{
    const char *size_list = "1K,4K,16K,64K,256K,1M,4M,8M", *comp_list = "100,500";
    double budget = 0.2, warm_frac = 0.1;
    int pin = 0, level = MPI_THREAD_MULTIPLE, opt;
    while ((opt = getopt(argc, argv, "s:c:t:w:l:p")) != -1) {
        switch (opt) {
        case 's': size_list = optarg; break;
        case 'c': comp_list = optarg; break;
        case 't': budget = atof(optarg); break;
        case 'w': warm_frac = atof(optarg); break;
        case 'l': level = mt_level_parse(optarg); break;
        case 'p': pin = 1; break;
        default: level = -3;
        }
    }
    long sizes[MAX_SIZES], comps[MAX_COMPS];
    int nsizes = bench_parse_list(size_list, sizes, MAX_SIZES);
    int ncomps = bench_parse_list(comp_list, comps, MAX_COMPS);
    long max_size = 1;
    for (int i = 0; i < nsizes; i++)
        max_size = sizes[i] > max_size ? sizes[i] : max_size;
    if (nsizes <= 0 || ncomps <= 0 || max_size > (1L << 30) || budget <= 0 || warm_frac < 0 || level < -1) {
        fprintf(stderr, "usage: mt_sendtime [-s sizes] [-c comp_us,...] [-t budget_s] [-w warmup_frac] "
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
        fprintf(stderr, "mt_sendtime: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank > 1) {
        MPI_Finalize();
        return 0;
    }
    unsigned char *buf = NULL;
    if (posix_memalign((void **)&buf, 4096, (size_t)max_size)) {
        fprintf(stderr, "mt_sendtime: cannot allocate %ld bytes\n", max_size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(buf, 0, (size_t)max_size);
    double rate = mt_work_rate();
    uint64_t steps[MAX_COMPS];
    for (int c = 0; c < ncomps; c++)
        steps[c] = comps[c] ? (uint64_t)(1e-6 * (double)comps[c] * rate) + 1 : 0;
    if (rank == 0) {
        printf("# mt_sendtime budget_s=%g warmup_frac=%g level=%s provided=%s pin=%s cpu=%d timer_ns=%.0f "
               "work_steps_per_us=%.1f\n", budget, warm_frac, mt_level_name(level), mt_level_name(provided),
               pin ? "core" : "none", cpu, bench_timer_cost() * 1e9, rate * 1e-6);
        fflush(stdout);
    } else {
        fprintf(stderr, "# mt_sendtime rank 1 provided=%s pin=%s cpu=%d (%s) work_steps_per_us=%.1f\n",
                mt_level_name(provided), pin ? "core" : "none", cpu, when, rate * 1e-6);
    }

    bench_samples_t comm = {0}, alone[MAX_COMPS] = {{0}}, send[MAX_COMPS] = {{0}};
    int failures = 0;
    for (int k = 0; k < nsizes; k++) {
        long size = sizes[k];
        if (rank == 0)
            for (long i = 0; i < size; i++)
                buf[i] = pattern_byte(i, size);
        else
            memset(buf, 0, (size_t)(size ? size : 1));
        comm.n = 0;
        for (int c = 0; c < ncomps; c++)
            alone[c].n = send[c].n = 0;
        double start = bench_now();
        long iters = 0;
        for (;;) {
            /* go: 0 = size done, 1 = warm-up iteration (not recorded), 2 = timed */
            int go = 0;
            if (rank == 0) {
                double el = bench_now() - start;
                go = el < budget * warm_frac ? 1 : (el < budget * (1 + warm_frac) || iters < 3) ? 2 : 0;
            }
            go = sync_step(rank, go);
            if (!go)
                break;
            int rec = go == 2 && rank == 0;
            double t = transfer(rank, buf, size, 0);
            if (rec)
                push(&comm, t);
            for (int c = 0; c < ncomps; c++) {
                sync_step(rank, 1);
                double t0 = bench_now();
                mt_work(steps[c]);
                t = bench_now() - t0;
                if (rec)
                    push(&alone[c], t);
                sync_step(rank, 1);
                t = transfer(rank, buf, size, steps[c]);
                if (rec)
                    push(&send[c], t);
            }
            iters += go == 2;
        }
        int ok = 1;
        if (rank == 1) {
            for (long i = 0; i < size && ok; i++)
                ok = buf[i] == pattern_byte(i, size);
            MPI_Send(&ok, 1, MPI_INT, 0, TAG_CTRL, MPI_COMM_WORLD);
            continue;
        }
        MPI_Recv(&ok, 1, MPI_INT, 1, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        failures += !ok;
        bench_stats_t sc = bench_stats(&comm);
        printf("size=%ld comp_us=0 iters=%ld send_median_us=%.2f send_mean_us=%.2f send_p99_us=%.2f check=%s\n",
               size, iters, sc.median * 1e6, sc.mean * 1e6, sc.p99 * 1e6, ok ? "ok" : "FAIL");
        for (int c = 0; c < ncomps; c++) {
            bench_stats_t sa = bench_stats(&alone[c]), ss = bench_stats(&send[c]);
            double tc = sc.median, tp = sa.median;
            double mn = tc < tp ? tc : tp, mx = tc > tp ? tc : tp;
            double ov = mn > 0 ? (tc + tp - ss.median) / mn : 0;
            ov = ov < 0 ? 0 : ov > 1 ? 1 : ov;
            printf("size=%ld comp_us=%ld iters=%ld comm_us=%.2f comp_alone_us=%.2f send_median_us=%.2f "
                   "send_mean_us=%.2f send_p99_us=%.2f ideal_us=%.2f no_overlap_us=%.2f overlap=%.3f check=%s\n",
                   size, comps[c], iters, tc * 1e6, tp * 1e6, ss.median * 1e6, ss.mean * 1e6, ss.p99 * 1e6,
                   mx * 1e6, (tc + tp) * 1e6, ov, ok ? "ok" : "FAIL");
        }
        fflush(stdout);
    }
    free(comm.v);
    for (int c = 0; c < ncomps; c++) {
        free(alone[c].v);
        free(send[c].v);
    }
    free(buf);
    MPI_Finalize();
    return failures ? 1 : 0;
}
