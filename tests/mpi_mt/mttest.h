/* Helpers of the multithreaded MPI test programs (tests/mpi_mt), on top of tests/mpi/mpitest.h.
 *
 * Every program asks for MPI_THREAD_MULTIPLE; given less, rank 0 prints "skipped: thread level N"
 * and every rank exits 77 (CTest's SKIP_RETURN_CODE). Worker threads are numbered 0..T-1. A failed
 * check prints, in a single write,
 *     rank R thread T: <what> expected X got Y (file:line)
 * and aborts the job. A watchdog thread ends the job when the program runs past its deadline and
 * names the step every thread of the rank is in, so a hang fails with a diagnosis, not a timeout.
 *
 * Arguments common to all programs: --weft (also check Weft's implementation-defined choices),
 * --threads=T (worker threads, default 8), --deadline=S (seconds, default 100). The other arguments
 * are numbers (counts) that the program reads in order.
 *
 * Only standard MPI is used, so every program runs under MPICH too (validate_mpich.sh). */
#ifndef WEFT_TESTS_MTTEST_H
#define WEFT_TESTS_MTTEST_H

#include "../mpi/mpitest.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <unistd.h>

#define MTT_SKIP 77
#define MTT_MAX_THREADS 64
#define MTT_MAX_NUMS 8

static __attribute__((unused)) int mtt_nthreads = 8;    /* --threads */
static __attribute__((unused)) double mtt_deadline = 100; /* --deadline, seconds after MPI_Init_thread */
static __attribute__((unused)) int mtt_provided = -1;
/* worker number; -1 main thread, -2 watchdog, -3 a thread of the program's own (mt_init's
 * initializing thread). Under the Pth build's shim (pth_shim.h) a Pth key: __thread is per OS thread,
 * shared by every Pth thread. */
#ifdef MTT_TID
#define mtt_tid MTT_TID
#else
static __thread int mtt_tid = -1;
#endif

/* ---- failing loudly from any thread ---- */

static inline void mtt_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
static inline void mtt_fail(const char *file, int line, const char *fmt, ...)
{
    char msg[1024];
    int n;
    if (mtt_tid >= 0)
        n = snprintf(msg, sizeof msg, "rank %d thread %d: ", mt_rank, mtt_tid);
    else
        n = snprintf(msg, sizeof msg, "rank %d %s: ", mt_rank,
                     mtt_tid == -1 ? "main" : mtt_tid == -2 ? "watchdog" : "initializing thread");
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(msg + n, sizeof msg - n, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof msg - 40)
        n = (int)sizeof msg - 40;
    snprintf(msg + n, sizeof msg - n, " (%s:%d)\n", file, line);
    fputs(msg, stderr); /* one call: lines of failing threads do not interleave */
    fflush(stderr);
    mt_abort();
    exit(1);
}

/* The checks of mpitest.h (MT_EQ, MT_TRUE, MT_CALL, ...) expand MT_FAIL where they are used, so
 * from here on they name the thread too. */
#undef MT_FAIL
#define MT_FAIL(...) mtt_fail(__FILE__, __LINE__, __VA_ARGS__)

/* ---- payload patterns: 8 bytes at a time, so verifying megabytes stays cheap ---- */

static inline uint64_t mtt_mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* The seed of a message named by up to four small numbers (origin rank, thread, sequence, kind). */
static inline uint64_t mtt_seed(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return mtt_mix(mtt_mix(mtt_mix(a * 0x100000001B3ull ^ b) ^ c) ^ d);
}

/* Word j of the pattern of `seed`; byte i of a message is byte i%8 of word i/8. The word index is
 * mixed in, so a shifted payload fails as well as a swapped one. */
static inline uint64_t mtt_word(uint64_t seed, size_t j) { return mtt_mix(seed ^ (j * 0xD6E8FEB86659FD93ull)); }

static inline void mtt_fill(void *buf, size_t n, uint64_t seed)
{
    uint8_t *p = buf;
    size_t j = 0;
    for (; (j + 1) * 8 <= n; j++) {
        uint64_t w = mtt_word(seed, j);
        memcpy(p + j * 8, &w, 8);
    }
    if (j * 8 < n) {
        uint64_t w = mtt_word(seed, j);
        memcpy(p + j * 8, &w, n - j * 8);
    }
}

/* Checks bytes [from, n) of buf against the pattern of `seed` (a header may occupy [0, from));
 * names the first wrong byte. `what` (a, b) names the message. */
static inline void mtt_check_at(const void *buf, size_t from, size_t n, uint64_t seed, const char *what, long a,
                                long b, const char *file, int line)
{
    const uint8_t *p = buf;
    for (size_t j = from / 8; j * 8 < n; j++) {
        uint64_t w = mtt_word(seed, j);
        const uint8_t *e = (const uint8_t *)&w;
        size_t lo = j * 8 < from ? from - j * 8 : 0, hi = n - j * 8 < 8 ? n - j * 8 : 8;
        if (memcmp(p + j * 8 + lo, e + lo, hi - lo) != 0) {
            size_t i = lo;
            while (i < hi && p[j * 8 + i] == e[i])
                i++;
            mtt_fail(file, line, "%s (%ld, %ld) byte %zu of %zu expected %u got %u", what, a, b, j * 8 + i, n,
                     e[i], p[j * 8 + i]);
        }
    }
}
#define mtt_check(buf, n, seed, what, a, b) mtt_check_at((buf), 0, (n), (seed), (what), (a), (b), __FILE__, __LINE__)
#define mtt_check_from(buf, from, n, seed, what, a, b)                                             \
    mtt_check_at((buf), (from), (n), (seed), (what), (a), (b), __FILE__, __LINE__)

/* Checks a receive status against source, tag and byte count. */
#define MTT_STATUS(what, a, b, st, src, tag, nbytes)                                                \
    do {                                                                                           \
        int cnt_ = -1;                                                                             \
        MT_CALL(MPI_Get_count(&(st), MPI_BYTE, &cnt_));                                            \
        if ((st).MPI_SOURCE != (src) || (st).MPI_TAG != (tag) || cnt_ != (int)(nbytes))            \
            MT_FAIL("%s (%ld, %ld) status expected (source %d, tag %d, count %d) got (%d, %d, %d)", \
                    (what), (long)(a), (long)(b), (int)(src), (int)(tag), (int)(nbytes),           \
                    (st).MPI_SOURCE, (st).MPI_TAG, cnt_);                                          \
    } while (0)

/* ---- where every thread is, for the watchdog ---- */

/* One slot per thread (index tid + 1; 0 is the main thread). `what` is a string literal with exactly
 * two %ld conversions, filled from a and b when the watchdog prints it (%.0ld hides a zero). Written by the owner thread
 * only, read by the watchdog (relaxed atomics: a torn report is harmless, a data race is not). */
typedef struct {
    _Atomic(const char *) what;
    _Atomic long a, b;
    _Atomic long done;  /* operations completed: the watchdog shows whether the thread moved at all */
    _Atomic int active; /* 1 while the thread runs */
} __attribute__((aligned(64))) mtt_slot_t; /* one cache line each: the owners write often */

static mtt_slot_t mtt_slots[MTT_MAX_THREADS + 1];

static inline mtt_slot_t *mtt_slot(void) { return &mtt_slots[mtt_tid + 1 < 0 ? 0 : mtt_tid + 1]; }

/* Records the step the calling thread starts, e.g. mtt_at("MPI_Recv from rank %ld seq %ld", p, i). */
static inline void mtt_at(const char *what, long a, long b)
{
    mtt_slot_t *s = mtt_slot();
    atomic_store_explicit(&s->a, a, memory_order_relaxed);
    atomic_store_explicit(&s->b, b, memory_order_relaxed);
    atomic_store_explicit(&s->what, what, memory_order_relaxed);
}

static inline void mtt_count(long k)
{
    atomic_fetch_add_explicit(&mtt_slot()->done, k, memory_order_relaxed);
}

static struct {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stop;
    int started;
    double t0;
} mtt_wd = {.lock = PTHREAD_MUTEX_INITIALIZER};

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void mtt_report(const char *who, mtt_slot_t *s)
{
    char line[512];
    const char *what = atomic_load_explicit(&s->what, memory_order_relaxed);
    int n = snprintf(line, sizeof line, "rank %d %s: watchdog: still running after %.0f s, in ", mt_rank, who,
                     mtt_deadline);
    n += snprintf(line + n, sizeof line - n, what ? what : "(no step recorded) %ld %ld",
                  atomic_load_explicit(&s->a, memory_order_relaxed),
                  atomic_load_explicit(&s->b, memory_order_relaxed));
    if (n < (int)sizeof line)
        snprintf(line + n, sizeof line - n, "; %ld operations done\n",
                 atomic_load_explicit(&s->done, memory_order_relaxed));
    fputs(line, stderr);
}
#pragma GCC diagnostic pop

static void *mtt_watchdog_main(void *arg)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t)mtt_deadline;
    until.tv_nsec += (long)((mtt_deadline - (double)(time_t)mtt_deadline) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    mtt_tid = -2;
    pthread_mutex_lock(&mtt_wd.lock);
    while (!mtt_wd.stop) {
        /* The clock decides, not the return value: a wait interrupted early (a debugger attaching
         * to look at a hang) must not end the job. */
        struct timespec now;
        if (pthread_cond_timedwait(&mtt_wd.cond, &mtt_wd.lock, &until) != 0 && !mtt_wd.stop &&
            clock_gettime(CLOCK_MONOTONIC, &now) == 0 &&
            (now.tv_sec > until.tv_sec ||
             (now.tv_sec == until.tv_sec && now.tv_nsec >= until.tv_nsec))) {
            pthread_mutex_unlock(&mtt_wd.lock);
            mtt_report("main", &mtt_slots[0]);
            for (int t = 0; t < MTT_MAX_THREADS; t++) {
                if (atomic_load_explicit(&mtt_slots[t + 1].active, memory_order_relaxed)) {
                    char who[32];
                    snprintf(who, sizeof who, "thread %d", t);
                    mtt_report(who, &mtt_slots[t + 1]);
                }
            }
            sleep(1); /* lets the watchdogs of the other ranks report too */
            MT_FAIL("deadline of %.0f s (--deadline) expected the end of the program got threads "
                    "still running (above)", mtt_deadline);
        }
    }
    pthread_mutex_unlock(&mtt_wd.lock);
    return NULL;
}

static inline void mtt_watchdog_start(void)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&mtt_wd.cond, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&mtt_wd.thread, NULL, mtt_watchdog_main, NULL) != 0)
        MT_FAIL("pthread_create of the watchdog expected 0 got an error");
    mtt_wd.started = 1;
}

static inline void mtt_watchdog_stop(void)
{
    if (!mtt_wd.started)
        return;
    pthread_mutex_lock(&mtt_wd.lock);
    mtt_wd.stop = 1;
    pthread_cond_signal(&mtt_wd.cond);
    pthread_mutex_unlock(&mtt_wd.lock);
    pthread_join(mtt_wd.thread, NULL);
    mtt_wd.started = 0;
}

/* ---- start and end ---- */

/* Reads the common arguments (see the top of this file) and fills nums[0..nnum-1] with the numeric
 * ones given, leaving the others at the caller's defaults. Returns how many were given. */
static inline int mtt_args(int argc, char **argv, long *nums, int nnum)
{
    int k = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--weft") == 0)
            mt_weft = 1;
        else if (strncmp(argv[i], "--threads=", 10) == 0)
            mtt_nthreads = atoi(argv[i] + 10);
        else if (strncmp(argv[i], "--deadline=", 11) == 0)
            mtt_deadline = atof(argv[i] + 11);
        else if (argv[i][0] == '-' && argv[i][1] == '-')
            ; /* a program's own option: the program reads it */
        else if (k < nnum)
            nums[k++] = strtol(argv[i], NULL, 0);
    }
    MT_TRUE(mtt_nthreads >= 1 && mtt_nthreads <= MTT_MAX_THREADS, "--threads expected 1..%d got %d",
            MTT_MAX_THREADS, mtt_nthreads);
    MT_TRUE(mtt_deadline > 0, "--deadline expected a positive number of seconds got %g", mtt_deadline);
    return k;
}

/* True when the flag (e.g. "--init-in-thread") is among the arguments. */
static inline int mtt_flag(int argc, char **argv, const char *flag)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], flag) == 0)
            return 1;
    return 0;
}

/* MPI_Init_thread(MPI_THREAD_MULTIPLE); exits 77 when the library provides less. Starts the
 * watchdog. Call from the main thread, after mtt_args. */
static inline void mtt_init(int *argc, char ***argv)
{
    MT_CALL(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &mtt_provided));
    MT_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
    MT_CALL(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
    if (mtt_provided < MPI_THREAD_MULTIPLE) {
        if (mt_rank == 0) {
            printf("skipped: thread level %d\n", mtt_provided);
            fflush(stdout);
        }
        MT_CALL(MPI_Finalize());
        exit(MTT_SKIP);
    }
    mtt_wd.t0 = MPI_Wtime();
    mtt_watchdog_start();
}

/* Barrier, one line from rank 0 so a passing log shows what ran, MPI_Finalize; returns 0. */
static inline int mtt_finish(const char *name)
{
    mtt_at("final MPI_Barrier%.0ld%.0ld", 0, 0);
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0) {
        printf("%s: %d ranks x %d threads ok (%.1f s)\n", name, mt_size, mtt_nthreads, MPI_Wtime() - mtt_wd.t0);
        fflush(stdout);
    }
    mtt_at("MPI_Finalize%.0ld%.0ld", 0, 0);
    MT_CALL(MPI_Finalize());
    mtt_watchdog_stop();
    return 0;
}

/* ---- worker threads ---- */

typedef void (*mtt_fn_t)(int tid, void *arg);

typedef struct {
    mtt_fn_t fn;
    void *arg;
    int tid;
} mtt_start_t;

static void *mtt_thread_main(void *p)
{
    mtt_start_t *s = p;
    mtt_tid = s->tid;
    atomic_store_explicit(&mtt_slot()->active, 1, memory_order_relaxed);
    s->fn(s->tid, s->arg);
    mtt_at("returned%.0ld%.0ld", 0, 0);
    atomic_store_explicit(&mtt_slot()->active, 0, memory_order_relaxed);
    return NULL;
}

/* Runs fn(tid, arg) in n new threads (tid 0..n-1) and waits for all of them. */
static inline void mtt_run(int n, mtt_fn_t fn, void *arg)
{
    pthread_t th[MTT_MAX_THREADS];
    mtt_start_t st[MTT_MAX_THREADS];
    MT_TRUE(n >= 1 && n <= MTT_MAX_THREADS, "thread count expected 1..%d got %d", MTT_MAX_THREADS, n);
    static long phase;
    mtt_at("waiting for %ld worker threads, phase %ld", n, phase++);
    for (int t = 0; t < n; t++) {
        st[t] = (mtt_start_t){fn, arg, t};
        int rc = pthread_create(&th[t], NULL, mtt_thread_main, &st[t]);
        MT_EQ("pthread_create", 0, rc);
    }
    for (int t = 0; t < n; t++)
        pthread_join(th[t], NULL);
    mtt_at("main thread after %ld worker threads, phase %ld", n, phase - 1);
}

/* A pthread barrier that checks its own calls. */
static inline void mtt_barrier_init(pthread_barrier_t *b, int n)
{
    MT_EQ("pthread_barrier_init", 0, pthread_barrier_init(b, NULL, (unsigned)n));
}
static inline void mtt_barrier_wait(pthread_barrier_t *b)
{
    int rc = pthread_barrier_wait(b);
    MT_TRUE(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD, "pthread_barrier_wait expected 0 got %d", rc);
}

/* A cheap per-thread pseudo-random generator (xorshift), seeded per (rank, thread). */
static inline uint64_t mtt_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

#endif
