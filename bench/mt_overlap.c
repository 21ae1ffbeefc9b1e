/* Overlap of communication and computation for one large message (4 MiB by default), rank 0 -> rank 1.
 *
 * Method (after the pioman paper's overlap ratio, bench/README.md "Threads and progression"):
 *   T_comm   Isend (rank 0) / Irecv (rank 1) then Wait, nothing in between;
 *   T_comp   the computation alone: a fixed amount of work (a dependent chain of integer multiply-adds, no
 *            memory traffic), calibrated on each rank so that it takes about factor * T_comm;
 *   T_total  Isend/Irecv, the same computation, then Wait;
 *   overlap = (T_comm + T_comp - T_total) / min(T_comm, T_comp), clipped to [0, 1]: 1 when the transfer
 *            happened entirely behind the computation, 0 when it only started in Wait.
 * The computation is a number of iterations, not "spin until time t": if a progress thread takes the CPU
 * from the computing thread, the computation takes longer and T_total shows it.
 *
 * Three cases: computation on both ranks, on the sender only, on the receiver only. Each side's overlap is
 * computed from that side's own medians of T_comm, T_comp, T_total (each rank times itself); a side that does
 * not compute in a case has no overlap figure there.
 *
 * Each repetition of a case runs the three steps (comm, comp, overlapped) one after the other, each
 * started by a handshake (rank 1 "ready" -> rank 0, rank 0 "go" -> rank 1; rank 0 starts its clock after
 * sending go, rank 1 after receiving it, so rank 1 starts about one small-message latency later), so that
 * drift of a shared machine touches the three alike. Repetitions run until the case's time budget is spent.
 * Before the cases, comm-only repetitions for a warm-up fraction of the budget (at least 3, and 10 if they
 * fit in the budget) give the T_comm used to calibrate the computation: the larger of the two sides'
 * medians, at most a tenth of the budget so that a badly disturbed warm-up cannot make repetitions run away
 * (a "# mt_overlap calibration" line reports it).
 *
 * Output on rank 0, one line per (case, computing side):
 *   case=both side=sender size=4194304 reps=.. comm_median_us=.. comm_mean_us=.. comm_p99_us=..
 *       comp_median_us=.. comp_mean_us=.. comp_p99_us=.. total_median_us=.. total_mean_us=.. total_p99_us=..
 *       overlap=0.973 check=ok
 * check=FAIL: the last message received did not hold the sender's pattern. Exit status 1 then.
 *
 * Options: -s size (4M)  -t budget seconds per case (1.0)  -w warm-up fraction (0.2)  -c computation / T_comm
 *          (1.0)  -l init|single|funneled|serialized|multiple (multiple)  -p pin each rank to one CPU */
#include "bench_util.h"

#include <mpi.h>
#include <unistd.h>

enum { TAG_DATA = 1, TAG_SYNC = 2, TAG_CTRL = 3 };

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

/* One transfer of `size` bytes with `work` steps of computation between the start and the Wait
 * (work = 0: none). Returns the elapsed seconds on this rank. */
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

enum { CASE_BOTH, CASE_SENDER, CASE_RECEIVER, NCASES };
static const char *case_name[NCASES] = { "both", "sender", "receiver" };

int main(int argc, char **argv)
{
    long size = 4L << 20;
    double budget = 1.0, warm_frac = 0.2, factor = 1.0;
    int pin = 0, level = MPI_THREAD_MULTIPLE, opt;
    while ((opt = getopt(argc, argv, "s:t:w:c:l:p")) != -1) {
        switch (opt) {
        case 's': {
            long v[1];
            if (bench_parse_list(optarg, v, 1) != 1) size = -1; else size = v[0];
            break;
        }
        case 't': budget = atof(optarg); break;
        case 'w': warm_frac = atof(optarg); break;
        case 'c': factor = atof(optarg); break;
        case 'l': level = mt_level_parse(optarg); break;
        case 'p': pin = 1; break;
        default: level = -3;
        }
    }
    if (size <= 0 || size > (1L << 30) || budget <= 0 || warm_frac < 0 || factor <= 0 || level < -1) {
        fprintf(stderr, "usage: mt_overlap [-s size] [-t budget_s] [-w warmup_frac] [-c comp/comm] "
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
        fprintf(stderr, "mt_overlap: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank > 1) { /* idle ranks */
        MPI_Finalize();
        return 0;
    }

    unsigned char *buf = NULL;
    if (posix_memalign((void **)&buf, 4096, (size_t)size)) {
        fprintf(stderr, "mt_overlap: cannot allocate %ld bytes\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (long i = 0; i < size; i++) /* first touch outside the clock; rank 1's buffer is overwritten */
        buf[i] = rank == 0 ? pattern_byte(i, size) : 0;
    double rate = mt_work_rate();

    if (rank == 0) {
        printf("# mt_overlap size=%ld budget_s=%g warmup_frac=%g factor=%g level=%s provided=%s pin=%s cpu=%d "
               "timer_ns=%.0f work_steps_per_us=%.1f\n",
               size, budget, warm_frac, factor, mt_level_name(level), mt_level_name(provided),
               pin ? "core" : "none", cpu, bench_timer_cost() * 1e9, rate * 1e-6);
        fflush(stdout);
    } else {
        fprintf(stderr, "# mt_overlap rank 1 provided=%s pin=%s cpu=%d (%s) work_steps_per_us=%.1f\n",
                mt_level_name(provided), pin ? "core" : "none", cpu, when, rate * 1e-6);
    }

    /* Warm-up and calibration: comm-only steps, then the target computation time. */
    bench_samples_t comm = {0}, comp = {0}, total = {0};
    double start = bench_now();
    for (int k = 0;; k++) {
        double el = bench_now() - start; /* at least 3, 10 unless that takes longer than the budget */
        int go = rank == 0 ? (k < 3 || el < budget * warm_frac || (k < 10 && el < budget)) : 0;
        if (!sync_step(rank, go))
            break;
        push(&comm, transfer(rank, buf, size, 0));
    }
    double my_comm = bench_stats(&comm).median, other_comm = 0, target;
    int capped = 0;
    if (rank == 0) {
        MPI_Recv(&other_comm, 1, MPI_DOUBLE, 1, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        target = factor * (my_comm > other_comm ? my_comm : other_comm);
        /* On a machine busy with other work a warm-up median can be far off; never let one repetition
         * run away from the budget (the header line says so when this happens). */
        if (target > budget / 10) {
            target = budget / 10;
            capped = 1;
        }
        MPI_Send(&target, 1, MPI_DOUBLE, 1, TAG_CTRL, MPI_COMM_WORLD);
    } else {
        MPI_Send(&my_comm, 1, MPI_DOUBLE, 0, TAG_CTRL, MPI_COMM_WORLD);
        MPI_Recv(&target, 1, MPI_DOUBLE, 0, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    uint64_t steps = (uint64_t)(target * rate);
    if (steps == 0)
        steps = 1;
    if (rank == 0) {
        printf("# mt_overlap calibration comm_sender_us=%.1f comm_receiver_us=%.1f target_comp_us=%.1f%s\n",
               my_comm * 1e6, other_comm * 1e6, target * 1e6, capped ? " capped=budget/10" : "");
        fflush(stdout);
    }

    int failures = 0;
    for (int c = 0; c < NCASES; c++) {
        int computes = c == CASE_BOTH || (c == CASE_SENDER) == (rank == 0);
        uint64_t my_work = computes ? steps : 0;
        comm.n = comp.n = total.n = 0;
        start = bench_now();
        long reps = 0;
        for (;;) {
            int go = rank == 0 ? (reps < 3 || bench_now() - start < budget) : 0;
            if (!sync_step(rank, go))
                break;
            push(&comm, transfer(rank, buf, size, 0));
            sync_step(rank, 1);
            if (my_work) {
                double t0 = bench_now();
                mt_work(my_work);
                push(&comp, bench_now() - t0);
            }
            sync_step(rank, 1);
            push(&total, transfer(rank, buf, size, my_work));
            reps++;
        }
        /* Rank 1: data check of the last message, and its figures, to rank 0. */
        double fig[10] = {0};
        bench_stats_t sc = bench_stats(&comm), sp = bench_stats(&comp), st = bench_stats(&total);
        if (rank == 1) {
            int ok = 1;
            for (long i = 0; i < size && ok; i++)
                ok = buf[i] == pattern_byte(i, size);
            memset(buf, 0, (size_t)size);
            double mine[10] = { sc.median, sc.mean, sc.p99, sp.median, sp.mean, sp.p99,
                                st.median, st.mean, st.p99, ok };
            MPI_Send(mine, 10, MPI_DOUBLE, 0, TAG_CTRL, MPI_COMM_WORLD);
            continue;
        }
        MPI_Recv(fig, 10, MPI_DOUBLE, 1, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int ok = fig[9] != 0;
        failures += !ok;
        for (int side = 0; side < 2; side++) {
            int side_computes = c == CASE_BOTH || (c == CASE_SENDER) == (side == 0);
            if (!side_computes)
                continue;
            double f[9];
            if (side == 0) {
                double m[9] = { sc.median, sc.mean, sc.p99, sp.median, sp.mean, sp.p99,
                                st.median, st.mean, st.p99 };
                memcpy(f, m, sizeof(f));
            } else {
                memcpy(f, fig, sizeof(f));
            }
            double tc = f[0], tp = f[3], tt = f[6];
            double mn = tc < tp ? tc : tp;
            double ov = mn > 0 ? (tc + tp - tt) / mn : 0;
            if (ov < 0) ov = 0;
            if (ov > 1) ov = 1;
            printf("case=%s side=%s size=%ld reps=%ld comm_median_us=%.1f comm_mean_us=%.1f comm_p99_us=%.1f "
                   "comp_median_us=%.1f comp_mean_us=%.1f comp_p99_us=%.1f total_median_us=%.1f "
                   "total_mean_us=%.1f total_p99_us=%.1f overlap=%.3f check=%s\n",
                   case_name[c], side == 0 ? "sender" : "receiver", size, reps, f[0] * 1e6, f[1] * 1e6,
                   f[2] * 1e6, f[3] * 1e6, f[4] * 1e6, f[5] * 1e6, f[6] * 1e6, f[7] * 1e6, f[8] * 1e6, ov,
                   ok ? "ok" : "FAIL");
        }
        fflush(stdout);
    }
    free(comm.v);
    free(comp.v);
    free(total.v);
    free(buf);
    MPI_Finalize();
    return failures ? 1 : 0;
}
