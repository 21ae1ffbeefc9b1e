/* Initialization, thread level and the main thread, seen from several threads.
 * - Before, during and after MPI_Init_thread, worker threads poll MPI_Initialized and
 *   MPI_Finalized (always thread-safe): the flags only ever go from 0 to 1, and once Init_thread
 *   has returned every thread sees initialized = 1, finalized = 0.
 * - After it, all threads at once: Query_thread gives the level Init_thread provided,
 *   Is_thread_main is false (true only in the thread that called Init_thread), Comm_rank/size,
 *   Wtime (never backwards within a thread), Get_processor_name, Get_version, Error_string and
 *   Error_class, and a message exchange of thread t with thread t of the neighbours.
 * - Around MPI_Finalize (called by the thread that initialized), the threads poll MPI_Finalized only;
 *   afterwards all see initialized = 1 and finalized = 1.
 * With --init-in-thread, MPI is initialized (and finalized) by a new thread instead of the process's
 * main thread: that thread is MPI's main thread, and the process's main thread is not.
 * Arguments: n (iterations of the concurrent calls, default 20000), --threads=T. */
#include "mttest.h"

#include <sched.h>

static long n_iter = 20000;
static int init_in_thread;
static pthread_t mpi_main;          /* the thread that calls MPI_Init_thread */
static _Atomic int stage;           /* 0 before Init_thread returned, 1 after, 2 Finalize started, 3 done */
static pthread_barrier_t bar;       /* the workers, the initializing thread (and the process's main
                                       thread with --init-in-thread) */
static int provided = -1;

static void poll_flags(int *init_seen, int *fin_seen, const char *when)
{
    int i = -1, f = -1;
    MT_CALL(MPI_Initialized(&i));
    MT_CALL(MPI_Finalized(&f));
    MT_TRUE(i == 0 || i == 1, "%s: MPI_Initialized flag expected 0 or 1 got %d", when, i);
    MT_TRUE(f == 0 || f == 1, "%s: MPI_Finalized flag expected 0 or 1 got %d", when, f);
    MT_TRUE(i >= *init_seen, "%s: MPI_Initialized expected 1 again after it was 1 got 0", when);
    MT_TRUE(f >= *fin_seen, "%s: MPI_Finalized expected 1 again after it was 1 got 0", when);
    MT_TRUE(!f || i, "%s: MPI_Finalized 1 expected MPI_Initialized 1 got 0", when);
    *init_seen = i;
    *fin_seen = f;
}

static void worker(int t, void *arg)
{
    int ini = 0, fin = 0;
    /* 1: while MPI is being initialized */
    mtt_at("polling MPI_Initialized and MPI_Finalized during MPI_Init_thread%.0ld%.0ld", 0, 0);
    long polls = 0;
    while (atomic_load(&stage) == 0) {
        poll_flags(&ini, &fin, "during MPI_Init_thread");
        if (++polls % 64 == 0)
            sched_yield();
    }
    mtt_barrier_wait(&bar); /* Init_thread has returned everywhere in this process */
    poll_flags(&ini, &fin, "after MPI_Init_thread");
    MT_EQ("MPI_Initialized after MPI_Init_thread returned", 1, ini);
    MT_EQ("MPI_Finalized after MPI_Init_thread returned", 0, fin);
    if (provided < MPI_THREAD_MULTIPLE) {
        mtt_barrier_wait(&bar);
        return; /* skipped: no concurrent calls allowed */
    }

    /* 2: everything at once */
    int next = (mt_rank + 1) % mt_size, prev = (mt_rank + mt_size - 1) % mt_size;
    double last = MPI_Wtime();
    for (long it = 0; it < n_iter; it++) {
        mtt_at("concurrent calls, iteration %ld%.0ld", it, 0);
        int q = -1, m = -1, r = -1, s = -1, v = -1, sv = -1, len = -1, cls = -1;
        MT_CALL(MPI_Query_thread(&q));
        MT_EQ("MPI_Query_thread in a thread", provided, q);
        MT_CALL(MPI_Is_thread_main(&m));
        MT_EQ("MPI_Is_thread_main in a thread that did not initialize MPI", 0, m);
        MT_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &r));
        MT_CALL(MPI_Comm_size(MPI_COMM_WORLD, &s));
        MT_EQ("MPI_Comm_rank in a thread", mt_rank, r);
        MT_EQ("MPI_Comm_size in a thread", mt_size, s);
        double w = MPI_Wtime();
        MT_TRUE(w >= last, "MPI_Wtime in a thread expected not to go back got %.9f after %.9f", w, last);
        last = w;
        MT_CALL(MPI_Get_version(&v, &sv));
        MT_EQ("MPI_Get_version in a thread", MPI_VERSION, v);
        if (it % 16 == 0) {
            char name[MPI_MAX_PROCESSOR_NAME], msg[MPI_MAX_ERROR_STRING];
            MT_CALL(MPI_Get_processor_name(name, &len));
            MT_TRUE(len > 0 && len < MPI_MAX_PROCESSOR_NAME && (int)strlen(name) == len,
                    "MPI_Get_processor_name in a thread expected a terminated non-empty name, length %d", len);
            MT_CALL(MPI_Error_string(MPI_ERR_TRUNCATE, msg, &len));
            MT_TRUE(len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(msg) == len,
                    "MPI_Error_string in a thread expected a terminated non-empty string, length %d", len);
            MT_CALL(MPI_Error_class(MPI_ERR_TRUNCATE, &cls));
            MT_EQ("MPI_Error_class(MPI_ERR_TRUNCATE) in a thread", MPI_ERR_TRUNCATE, cls);
        }
        if (it % 8 == 0 && mt_size > 1) {
            long out[2] = {t, it}, in[2] = {-1, -1};
            MPI_Status st;
            MT_CALL(MPI_Sendrecv(out, 2, MPI_LONG, next, t, in, 2, MPI_LONG, prev, t, MPI_COMM_WORLD, &st));
            MT_TRUE(in[0] == t && in[1] == it, "Sendrecv in a thread expected (thread %d, iteration %ld) got "
                    "(%ld, %ld)", t, it, in[0], in[1]);
        }
        mtt_count(1);
    }
    mtt_barrier_wait(&bar); /* all calls done: the initializing thread may finalize */

    /* 3: during and after MPI_Finalize, only Initialized and Finalized */
    mtt_at("polling MPI_Initialized and MPI_Finalized during MPI_Finalize%.0ld%.0ld", 0, 0);
    polls = 0;
    while (atomic_load(&stage) < 3) {
        poll_flags(&ini, &fin, "during MPI_Finalize");
        MT_EQ("MPI_Initialized during MPI_Finalize", 1, ini);
        if (++polls % 64 == 0)
            sched_yield();
    }
    poll_flags(&ini, &fin, "after MPI_Finalize");
    MT_EQ("MPI_Initialized after MPI_Finalize", 1, ini);
    MT_EQ("MPI_Finalized after MPI_Finalize", 1, fin);
}

typedef struct {
    int argc;
    char **argv;
    int rc; /* the exit status */
} prog_t;

static void *workers_main(void *arg)
{
    mtt_run(mtt_nthreads, worker, NULL);
    return NULL;
}

/* The thread that initializes and finalizes MPI: the process's main thread, or a new one. */
static void *mpi_main_thread(void *arg)
{
    prog_t *pr = arg;
    pthread_t workers;
    int flag = -1;
    if (init_in_thread)
        mtt_tid = -3;
    MT_EQ("pthread_create", 0, pthread_create(&workers, NULL, workers_main, NULL));
    mtt_at("MPI_Init_thread%.0ld%.0ld", 0, 0);
    MT_CALL(MPI_Init_thread(&pr->argc, &pr->argv, MPI_THREAD_MULTIPLE, &provided));
    MT_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
    MT_CALL(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
    MT_TRUE(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE,
            "MPI_Init_thread provided expected a thread level got %d", provided);
    atomic_store(&stage, 1);
    mtt_barrier_wait(&bar);
    MT_CALL(MPI_Is_thread_main(&flag));
    MT_EQ("MPI_Is_thread_main in the thread that called MPI_Init_thread", 1, flag);
    MT_CALL(MPI_Query_thread(&flag));
    MT_EQ("MPI_Query_thread in the thread that called MPI_Init_thread", provided, flag);
    if (provided >= MPI_THREAD_MULTIPLE) {
        /* the same calls as the workers, at the same time */
        for (long it = 0; it < n_iter / 4; it++) {
            MT_CALL(MPI_Is_thread_main(&flag));
            MT_EQ("MPI_Is_thread_main in the initializing thread, beside the others", 1, flag);
            MT_CALL(MPI_Query_thread(&flag));
            MT_EQ("MPI_Query_thread in the initializing thread, beside the others", provided, flag);
        }
    }
    mtt_barrier_wait(&bar);
    if (provided >= MPI_THREAD_MULTIPLE) {
        mtt_at("final MPI_Barrier%.0ld%.0ld", 0, 0);
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
        if (mt_rank == 0)
            printf("mt_init%s: %d ranks x %d threads ok\n", init_in_thread ? " --init-in-thread" : "", mt_size,
                   mtt_nthreads);
    } else if (mt_rank == 0) {
        printf("skipped: thread level %d\n", provided);
    }
    fflush(stdout);
    atomic_store(&stage, 2);
    mtt_at("MPI_Finalize%.0ld%.0ld", 0, 0);
    MT_CALL(MPI_Finalize());
    atomic_store(&stage, 3);
    mtt_at("joining the worker threads%.0ld%.0ld", 0, 0);
    pthread_join(workers, NULL);
    pr->rc = provided >= MPI_THREAD_MULTIPLE ? 0 : MTT_SKIP;
    return NULL;
}

int main(int argc, char **argv)
{
    long nums[1] = {20000};
    mtt_args(argc, argv, nums, 1);
    n_iter = nums[0];
    init_in_thread = mtt_flag(argc, argv, "--init-in-thread");
    mtt_barrier_init(&bar, mtt_nthreads + 1 + init_in_thread);
    mtt_watchdog_start(); /* before MPI_Init_thread: it must not hang either */
    prog_t pr = {argc, argv, 1};
    if (init_in_thread) {
        MT_EQ("pthread_create", 0, pthread_create(&mpi_main, NULL, mpi_main_thread, &pr));
        /* this thread is not MPI's main thread */
        int ini = 0, fin = 0, flag = -1;
        mtt_at("polling MPI_Initialized in the process's main thread during MPI_Init_thread%.0ld%.0ld", 0, 0);
        while (atomic_load(&stage) == 0) {
            poll_flags(&ini, &fin, "in the process's main thread during MPI_Init_thread");
            mt_sleep_ms(1);
        }
        mtt_barrier_wait(&bar);
        if (provided >= MPI_THREAD_MULTIPLE) {
            MT_CALL(MPI_Is_thread_main(&flag));
            MT_EQ("MPI_Is_thread_main in the process's main thread when another thread initialized MPI", 0, flag);
        }
        mtt_barrier_wait(&bar);
        mtt_at("polling MPI_Finalized in the process's main thread during MPI_Finalize%.0ld%.0ld", 0, 0);
        while (atomic_load(&stage) < 3) {
            poll_flags(&ini, &fin, "in the process's main thread during MPI_Finalize");
            mt_sleep_ms(1);
        }
        pthread_join(mpi_main, NULL);
        poll_flags(&ini, &fin, "in the process's main thread after MPI_Finalize");
        MT_EQ("MPI_Finalized in the process's main thread after MPI_Finalize", 1, fin);
    } else {
        mpi_main_thread(&pr);
    }
    mtt_watchdog_stop();
    pthread_barrier_destroy(&bar);
    return pr.rc;
}
