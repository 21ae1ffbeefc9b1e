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

/* ---- shared by the mt_* programs (each is one file on purpose: any mpicc builds it alone) ---------------- */

/* -l: -1 means plain MPI_Init. */
static inline int mt_level_parse(const char *s)
{
    if (!strcmp(s, "init")) return -1;
    if (!strcmp(s, "single")) return MPI_THREAD_SINGLE;
    if (!strcmp(s, "funneled")) return MPI_THREAD_FUNNELED;
    if (!strcmp(s, "serialized")) return MPI_THREAD_SERIALIZED;
    if (!strcmp(s, "multiple")) return MPI_THREAD_MULTIPLE;
    return -2;
}

static inline const char *mt_level_name(int level)
{
    if (level == -1) return "init";
    if (level == MPI_THREAD_SINGLE) return "single";
    if (level == MPI_THREAD_FUNNELED) return "funneled";
    if (level == MPI_THREAD_SERIALIZED) return "serialized";
    if (level == MPI_THREAD_MULTIPLE) return "multiple";
    return "?";
}

/* The rank as the launcher tells it, before MPI_Init: Hydra and Weft's mpiexec set PMI_RANK, Open MPI sets
 * OMPI_COMM_WORLD_RANK (and PMIX_RANK). -1 if none is set. */
static inline int mt_env_rank(void)
{
    const char *v[] = { "PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK" };
    for (int i = 0; i < 3; i++) {
        const char *s = getenv(v[i]);
        if (s && *s)
            return atoi(s);
    }
    return -1;
}

/* -p: pins the process to CPU (rank mod count) of its allowed set BEFORE MPI_Init, so that every thread the
 * library starts inherits the binding and sees it when it sizes itself (what a launcher's --bind-to core
 * does). Returns the CPU, or -1 if the rank is not known yet (then bench_pin_self after MPI_Init). */
static inline int mt_pin_early(void)
{
    int rank = mt_env_rank();
    cpu_set_t allowed, one;
    if (rank < 0 || sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || CPU_COUNT(&allowed) == 0)
        return -1;
    int want = rank % CPU_COUNT(&allowed), seen = 0, cpu;
    for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &allowed) && seen++ == want)
            break;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(0, sizeof(one), &one) == 0 ? cpu : -1;
}

/* Initializes MPI at `level` (pinning first if asked); returns the level provided (-1 for MPI_Init). */
static inline int mt_init(int *argc, char ***argv, int level, int pin, int *cpu, const char **when)
{
    *cpu = -1;
    *when = "none";
    if (pin) {
        *cpu = mt_pin_early();
        *when = "before_init";
    }
    int provided = -1;
    if (level == -1)
        MPI_Init(argc, argv);
    else
        MPI_Init_thread(argc, argv, level, &provided);
    if (pin && *cpu < 0) {
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        *cpu = bench_pin_self(rank);
        *when = "after_init";
    }
    return provided;
}

static volatile uint64_t mt_sink;

/* n steps of a dependent multiply-add chain: about 4 cycles each, no memory traffic, not vectorizable. */
static inline void mt_work(uint64_t n)
{
    uint64_t x = mt_sink + 1;
    for (uint64_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ volatile("" : "+r"(x));
    }
    mt_sink = x;
}

/* Work steps per second on this thread: the best of 20 timings of a run of at least 1 ms (short runs, so that
 * some of them are not interrupted even on a busy machine). */
static inline double mt_work_rate(void)
{
    uint64_t n = 1000;
    for (;;) {
        double t0 = bench_now();
        mt_work(n);
        if (bench_now() - t0 >= 0.001)
            break;
        n *= 2;
    }
    double best = 1e30;
    for (int i = 0; i < 20; i++) {
        double t0 = bench_now();
        mt_work(n);
        double d = bench_now() - t0;
        if (d < best)
            best = d;
    }
    return (double)n / best;
}

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
