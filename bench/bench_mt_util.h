/* Helpers shared by the mt_* benchmarks (thread level, early pinning, initialization, the
 * calibrated work loop). Include after bench_util.h and the system headers it needs. */
#ifndef BENCH_MT_UTIL_H
#define BENCH_MT_UTIL_H

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

#endif
