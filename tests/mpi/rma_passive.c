/* Passive-target RMA (MPI 4.1 section 12.5.3) at MPI_THREAD_MULTIPLE, on an MPI_Win_allocate
 * window and an MPI_Win_create one:
 *   - a counter on rank 0 incremented by MPI_Fetch_and_op from every rank and T threads each
 *     under lock_all: every value 0 .. ranks*T*K-1 is returned exactly once;
 *   - a spin lock made of MPI_Compare_and_swap guarding a plain Get/Put increment;
 *   - exclusive locks: read-modify-write by Get and Put under MPI_LOCK_EXCLUSIVE from every rank
 *     is never lost; shared locks: concurrent readers see a consistent pair;
 *   - threads of one rank Put to distinct slots of every target under one lock_all epoch. */
#include <pthread.h>
#include "mpitest.h"

#define T 3
#define K 50

enum { CNT = 0, LOCKW, GUARDED, EXCL, PAIR0, PAIR1, SLOTS };   /* long slots of rank 0 */
#define NSLOT (SLOTS + 64)

static MPI_Win win;
static long *vals;   /* rank 0 gathers here */

static void *fop_thread(void *arg)
{
    long *out = arg, one = 1;
    for (int k = 0; k < K; k++) {
        MT_CALL(MPI_Fetch_and_op(&one, &out[k], MPI_LONG, 0, CNT, MPI_SUM, win));
        MT_CALL(MPI_Win_flush(0, win));
    }
    return NULL;
}

static void *put_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    long v = mt_rank * 1000 + t;   /* the origin buffer lives until the flush completes the Puts */
    for (int r = 0; r < mt_size; r++)
        MT_CALL(MPI_Put(&v, 1, MPI_LONG, r, SLOTS + mt_rank * T + t, 1, MPI_LONG, win));
    MT_CALL(MPI_Win_flush_all(win));
    return NULL;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

static void run(long *b)
{
    /* Fetch_and_op counter from all ranks and threads */
    long mine[T * K];
    MT_CALL(MPI_Win_lock_all(0, win));
    pthread_t th[T];
    for (int t = 0; t < T; t++)
        pthread_create(&th[t], NULL, fop_thread, &mine[t * K]);
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    MT_CALL(MPI_Win_unlock_all(win));
    MT_CALL(MPI_Gather(mine, T * K, MPI_LONG, vals, T * K, MPI_LONG, 0, MPI_COMM_WORLD));
    if (mt_rank == 0) {
        long n = (long)mt_size * T * K;
        qsort(vals, (size_t)n, sizeof(long), cmp_long);
        for (long i = 0; i < n; i++)
            MT_EQ("Fetch_and_op values, sorted, each once", i, vals[i]);
        MT_EQ("final counter", n, b[CNT]);
    }

    /* Compare_and_swap spin lock around a non-atomic increment */
    MT_CALL(MPI_Win_lock_all(0, win));
    for (int k = 0; k < 20; k++) {
        long zero = 0, me = mt_rank + 1, prev = -1;
        do {
            MT_CALL(MPI_Compare_and_swap(&me, &zero, &prev, MPI_LONG, 0, LOCKW, win));
            MT_CALL(MPI_Win_flush(0, win));
        } while (prev != 0);
        long g;
        MT_CALL(MPI_Get(&g, 1, MPI_LONG, 0, GUARDED, 1, MPI_LONG, win));
        MT_CALL(MPI_Win_flush(0, win));
        g++;
        MT_CALL(MPI_Put(&g, 1, MPI_LONG, 0, GUARDED, 1, MPI_LONG, win));
        MT_CALL(MPI_Win_flush(0, win));
        MT_CALL(MPI_Compare_and_swap(&zero, &me, &prev, MPI_LONG, 0, LOCKW, win));
        MT_CALL(MPI_Win_flush(0, win));
        MT_EQ("CAS unlock saw my own id", mt_rank + 1, prev);
    }
    MT_CALL(MPI_Win_unlock_all(win));

    /* exclusive lock: Get + Put increments are never lost */
    for (int k = 0; k < 20; k++) {
        long g;
        MT_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MT_CALL(MPI_Get(&g, 1, MPI_LONG, 0, EXCL, 1, MPI_LONG, win));
        MT_CALL(MPI_Win_flush(0, win));
        g++;
        MT_CALL(MPI_Put(&g, 1, MPI_LONG, 0, EXCL, 1, MPI_LONG, win));
        long pair[2] = {g, -g};
        MT_CALL(MPI_Put(pair, 2, MPI_LONG, 0, PAIR0, 2, MPI_LONG, win));
        MT_CALL(MPI_Win_unlock(0, win));
        /* shared lock: a writer holds the lock exclusively, so readers see pairs whole */
        MT_CALL(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        MT_CALL(MPI_Get(pair, 2, MPI_LONG, 0, PAIR0, 2, MPI_LONG, win));
        MT_CALL(MPI_Win_unlock(0, win));
        MT_EQ("pair read under a shared lock", -pair[0], pair[1]);
    }

    /* threads Put under one lock_all epoch opened by the main thread */
    MT_CALL(MPI_Win_lock_all(0, win));
    for (int t = 0; t < T; t++)
        pthread_create(&th[t], NULL, put_thread, (void *)(intptr_t)t);
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    MT_CALL(MPI_Win_unlock_all(win));
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MT_CALL(MPI_Win_lock(MPI_LOCK_SHARED, mt_rank, 0, win));
    for (int r = 0; r < mt_size; r++)
        for (int t = 0; t < T; t++)
            MT_EQ("slot put by a thread", r * 1000 + t, b[SLOTS + r * T + t]);
    MT_CALL(MPI_Win_unlock(mt_rank, win));
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0) {
        MT_EQ("CAS-guarded counter", mt_size * 20, b[GUARDED]);
        MT_EQ("exclusive-lock counter", mt_size * 20, b[EXCL]);
    }
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    int provided;
    MT_CALL(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MT_EQ("thread level", MPI_THREAD_MULTIPLE, provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
    if (mt_size * T > 64)
        MT_FAIL("at most %d ranks", 64 / T);
    vals = malloc(sizeof(long) * (size_t)mt_size * T * K);

    long *b;
    MT_CALL(MPI_Win_allocate(NSLOT * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &b,
                             &win));
    MT_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    memset(b, 0, NSLOT * sizeof(long));
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    run(b);
    MT_CALL(MPI_Win_free(&win));

    long *u = calloc(NSLOT, sizeof(long));
    MT_CALL(MPI_Win_create(u, NSLOT * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                           &win));
    MT_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    run(u);
    MT_CALL(MPI_Win_free(&win));
    free(u);
    free(vals);
    return mt_finish("rma_passive");
}
