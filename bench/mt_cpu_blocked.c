/* CPU used by a rank blocked in MPI_Recv: rank 0 waits in MPI_Recv for a message that rank 1 sends only after
 * sleeping for D seconds (3 by default, nanosleep, outside MPI).
 *
 * Each rank reads getrusage(RUSAGE_SELF) - user + system time of the whole process, every thread included
 * (the library's own progress or helper threads too) - and the monotonic clock just before and after its
 * part: rank 0 around MPI_Recv, rank 1 around its sleep. cpu_pct = CPU seconds / wall seconds * 100: 100 is
 * one core kept busy. The launcher's own processes are not counted. The two ranks are released together by a
 * small message from rank 0 to rank 1 ("go"), after a warm-up exchange in both directions.
 *
 * Output on rank 0:
 *   role=blocked_recv wall_s=3.001 cpu_s=.. user_s=.. sys_s=.. cpu_pct=.. vcsw=.. ivcsw=.. check=ok
 *   role=sleeper ...  (rank 1: the cost of the library while the application sleeps outside MPI)
 * vcsw / ivcsw: voluntary / involuntary context switches of the process in that time.
 *
 * Options: -d seconds (3)  -l init|single|funneled|serialized|multiple (multiple)  -p pin each rank to one CPU */
#include "bench_util.h"

#include <mpi.h>
#include <sys/resource.h>
#include <unistd.h>

enum { TAG_DATA = 1, TAG_CTRL = 2 };

#include "bench_mt_util.h"

/* ---- this program ------------------------------------------------------------------------------------- */

typedef struct {
    double wall, user, sys, vcsw, ivcsw;
} usage_t;

static usage_t usage_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (usage_t){ bench_now(), (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec,
                      (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec, (double)ru.ru_nvcsw,
                      (double)ru.ru_nivcsw };
}

static usage_t usage_diff(usage_t a, usage_t b)
{
    return (usage_t){ b.wall - a.wall, b.user - a.user, b.sys - a.sys, b.vcsw - a.vcsw, b.ivcsw - a.ivcsw };
}

static void print_usage(const char *role, usage_t u, int ok)
{
    double cpu = u.user + u.sys;
    printf("role=%s wall_s=%.3f cpu_s=%.3f user_s=%.3f sys_s=%.3f cpu_pct=%.1f vcsw=%.0f ivcsw=%.0f check=%s\n",
           role, u.wall, cpu, u.user, u.sys, u.wall > 0 ? 100 * cpu / u.wall : 0, u.vcsw, u.ivcsw,
           ok ? "ok" : "FAIL");
}

int main(int argc, char **argv)
{
    double seconds = 3;
    int pin = 0, level = MPI_THREAD_MULTIPLE, opt, usage = 0;
    while ((opt = getopt(argc, argv, "d:l:p")) != -1) {
        switch (opt) {
        case 'd': seconds = atof(optarg); break;
        case 'l': level = mt_level_parse(optarg); break;
        case 'p': pin = 1; break;
        default: usage = 1;
        }
    }
    if (usage || seconds <= 0 || seconds > 3600 || level < -1) {
        fprintf(stderr, "usage: mt_cpu_blocked [-d seconds] [-l init|single|funneled|serialized|multiple] [-p]\n");
        return 2;
    }
    int cpu;
    const char *when;
    int provided = mt_init(&argc, &argv, level, pin, &cpu, &when);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks < 2) {
        fprintf(stderr, "mt_cpu_blocked: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank > 1) {
        MPI_Finalize();
        return 0;
    }
    if (rank == 0) {
        printf("# mt_cpu_blocked seconds=%g level=%s provided=%s pin=%s cpu=%d\n", seconds, mt_level_name(level),
               mt_level_name(provided), pin ? "core" : "none", cpu);
        fflush(stdout);
    } else {
        fprintf(stderr, "# mt_cpu_blocked rank 1 provided=%s pin=%s cpu=%d (%s)\n", mt_level_name(provided),
                pin ? "core" : "none", cpu, when);
    }
    int x = 0, msg = 0;
    /* warm-up: a round trip, so that connection set-up is not in the measured wait */
    if (rank == 0) {
        MPI_Send(&x, 1, MPI_INT, 1, TAG_CTRL, MPI_COMM_WORLD);
        MPI_Recv(&x, 1, MPI_INT, 1, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        x = 1;
        MPI_Send(&x, 1, MPI_INT, 1, TAG_CTRL, MPI_COMM_WORLD); /* go */
        usage_t a = usage_now();
        MPI_Recv(&msg, 1, MPI_INT, 1, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        usage_t d = usage_diff(a, usage_now());
        double fig[6];
        MPI_Recv(fig, 6, MPI_DOUBLE, 1, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        print_usage("blocked_recv", d, msg == 12345);
        print_usage("sleeper", (usage_t){ fig[0], fig[1], fig[2], fig[3], fig[4] }, fig[5] != 0);
        fflush(stdout);
    } else {
        MPI_Recv(&x, 1, MPI_INT, 0, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&x, 1, MPI_INT, 0, TAG_CTRL, MPI_COMM_WORLD);
        MPI_Recv(&x, 1, MPI_INT, 0, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* go */
        usage_t a = usage_now();
        struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
        usage_t d = usage_diff(a, usage_now());
        msg = 12345;
        MPI_Send(&msg, 1, MPI_INT, 0, TAG_DATA, MPI_COMM_WORLD);
        double fig[6] = { d.wall, d.user, d.sys, d.vcsw, d.ivcsw, x == 1 };
        MPI_Send(fig, 6, MPI_DOUBLE, 0, TAG_CTRL, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
