/* RMA with windows across nodes (docs/rma.md, "Across nodes"); on one node the same program checks
 * the one-node path. Run with WEFT_NODE_SPLIT or on fake hosts (tests/net) so that some targets
 * are on other nodes:
 *   - Put and Get of more than a packet (1 MiB and up), derived datatypes on both sides (origin
 *     contiguous, target vector; origin vector, target indexed), fence and lock epochs, checked
 *     element by element;
 *   - Accumulate atomicity per element: every rank and 2 threads each (MPI_THREAD_MULTIPLE) add 1
 *     to K longs of rank 0 many times, rank 0's own threads (node-local CPU path) too, under
 *     lock_all; every counter is exactly the total; Get_accumulate of a large vector returns the
 *     values before its update (checked against the model) and MPI_MAXLOC on MPI_DOUBLE_INT;
 *   - Fetch_and_op and Compare_and_swap to every target;
 *   - PSCW ring with a derived target datatype;
 *   - passive target while the target computes (never calls MPI): Get of a large block, exclusive
 *     lock, accumulate and Put complete;
 *   - errors: a Get outside a remote dynamic window's regions is MPI_ERR_RMA_RANGE at once, a Put
 *     there at the flush; a dynamic window's attached region written from other nodes. */
#include <pthread.h>
#include <time.h>
#include "mpitest.h"

#define BIG (300 * 1000)   /* ints: 1.2 MB */
#define K 16               /* counters */
#define ITERS 200
#define THREADS 2

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int val(int rank, int i)
{
    return rank * 1000003 + i;
}

static void big_put_get(void)
{
    int right = (mt_rank + 1) % mt_size, left = (mt_rank - 1 + mt_size) % mt_size;
    int *b = mt_malloc(sizeof(int) * 2 * BIG);
    int *src = mt_malloc(sizeof(int) * 2 * BIG);
    MPI_Win win;
    MT_CALL(MPI_Win_create(b, (MPI_Aint)sizeof(int) * 2 * BIG, sizeof(int), MPI_INFO_NULL,
                           MPI_COMM_WORLD, &win));
    MT_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < 2 * BIG; i++) {
        b[i] = -1;
        src[i] = val(mt_rank, i);
    }
    /* origin contiguous, target every other int */
    MPI_Datatype every2;
    MPI_Type_vector(BIG, 1, 2, MPI_INT, &every2);
    MPI_Type_commit(&every2);
    MT_CALL(MPI_Win_fence(0, win));
    MT_CALL(MPI_Put(src, BIG, MPI_INT, right, 0, 1, every2, win));
    MT_CALL(MPI_Win_fence(0, win));
    for (int i = 0; i < 2 * BIG; i++)
        MT_EQ("big Put into a vector", i % 2 ? -1 : val(left, i / 2), b[i]);
    /* Get back the right neighbour's odd ints (still -1) and even ones into a vector */
    int *got = mt_malloc(sizeof(int) * 2 * BIG);
    for (int i = 0; i < 2 * BIG; i++)
        got[i] = -7;
    MT_CALL(MPI_Get(got, 1, every2, right, 0, 1, every2, win));
    MT_CALL(MPI_Win_fence(0, win));
    for (int i = 0; i < 2 * BIG; i++)
        MT_EQ("big Get from a vector into a vector", i % 2 ? -7 : val(mt_rank, i / 2), got[i]);
    /* lock epoch: indexed target (blocks of 3 at a stride of 5), vector origin */
    int nb = BIG / 5;
    MPI_Datatype blk, idx;
    int *lens = mt_malloc(sizeof(int) * (size_t)nb), *disps = mt_malloc(sizeof(int) * (size_t)nb);
    for (int k = 0; k < nb; k++) {
        lens[k] = 3;
        disps[k] = 5 * k + 1;
    }
    MPI_Type_indexed(nb, lens, disps, MPI_INT, &idx);
    MPI_Type_commit(&idx);
    MPI_Type_vector(nb * 3, 1, 2, MPI_INT, &blk);
    MPI_Type_commit(&blk);
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MT_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    MT_CALL(MPI_Put(src, 1, blk, right, 0, 1, idx, win));
    MT_CALL(MPI_Win_unlock(right, win));
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MT_CALL(MPI_Win_lock(MPI_LOCK_SHARED, mt_rank, 0, win));
    for (int k = 0, j = 0; k < nb; k++)
        for (int l = 0; l < 3; l++, j++)
            MT_EQ("Put vector -> indexed", val(left, 2 * j), b[5 * k + 1 + l]);
    MT_CALL(MPI_Win_unlock(mt_rank, win));
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Type_free(&idx);
    MPI_Type_free(&blk);
    MPI_Type_free(&every2);
    MT_CALL(MPI_Win_free(&win));
    free(lens);
    free(disps);
    free(got);
    free(src);
    free(b);
}

static MPI_Win cwin;

static void *acc_thread(void *arg)
{
    (void)arg;
    long one[K];
    for (int k = 0; k < K; k++)
        one[k] = 1;
    for (int i = 0; i < ITERS; i++) {
        MT_CALL(MPI_Accumulate(one, K, MPI_LONG, 0, 0, K, MPI_LONG, MPI_SUM, cwin));
        if (i % 50 == 49)
            MT_CALL(MPI_Win_flush(0, cwin));
    }
    long f, o = 1;
    MT_CALL(MPI_Fetch_and_op(&o, &f, MPI_LONG, 0, K, MPI_SUM, cwin));
    MT_TRUE(f >= 0 && f < (long)mt_size * THREADS, "Fetch_and_op returned %ld", f);
    return NULL;
}

static void atomicity(void)
{
    long *c;
    MT_CALL(MPI_Win_allocate(sizeof(long) * (K + 1), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                             &c, &cwin));
    MT_CALL(MPI_Win_set_errhandler(cwin, MPI_ERRORS_RETURN));
    for (int k = 0; k <= K; k++)
        c[k] = 0;
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MT_CALL(MPI_Win_lock_all(0, cwin));
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, acc_thread, NULL);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    MT_CALL(MPI_Win_unlock_all(cwin));
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0) {
        MT_CALL(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, cwin));
        for (int k = 0; k < K; k++)
            MT_EQ("accumulated counter", (long)mt_size * THREADS * ITERS, c[k]);
        MT_EQ("Fetch_and_op counter", (long)mt_size * THREADS, c[K]);
        MT_CALL(MPI_Win_unlock(0, cwin));
    }
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MT_CALL(MPI_Win_free(&cwin));
}

static void fetching(void)
{
    int right = (mt_rank + 1) % mt_size, left = (mt_rank - 1 + mt_size) % mt_size;
    enum { N = 100000 };   /* ints of a vector with stride 3: larger than a packet */
    int *b;
    MPI_Win win;
    MT_CALL(MPI_Win_allocate(sizeof(int) * 3 * N + 64, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                             &b, &win));
    MT_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < 3 * N; i++)
        b[i] = i;
    MPI_Datatype v3;
    MPI_Type_vector(N, 1, 3, MPI_INT, &v3);
    MPI_Type_commit(&v3);
    int *in = mt_malloc(sizeof(int) * N), *old = mt_malloc(sizeof(int) * N);
    for (int i = 0; i < N; i++)
        in[i] = mt_rank + 1 + i % 7;
    MT_CALL(MPI_Win_fence(0, win));
    MT_CALL(MPI_Get_accumulate(in, N, MPI_INT, old, N, MPI_INT, right, 1, 1, v3, MPI_SUM, win));
    MT_CALL(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++)
        MT_EQ("Get_accumulate old value", 3 * i + 1, old[i]);
    for (int i = 0; i < 3 * N; i++)
        MT_EQ("Get_accumulate result", i % 3 == 1 ? i + left + 1 + (i / 3) % 7 : i, b[i]);
    /* MPI_MAXLOC on pairs */
    struct {
        double v;
        int i;
    } mine = {(double)(mt_rank % 3), mt_rank};
    struct {
        double v;
        int i;
    } *pr = (void *)(b + 3 * N);
    MT_CALL(MPI_Win_fence(0, win));
    if (mt_rank == 0) {
        pr->v = -1;
        pr->i = -1;
    }
    MT_CALL(MPI_Win_fence(0, win));
    MT_CALL(MPI_Accumulate(&mine, 1, MPI_DOUBLE_INT, 0, 3 * N, 1, MPI_DOUBLE_INT, MPI_MAXLOC,
                           win));
    MT_CALL(MPI_Win_fence(0, win));
    if (mt_rank == 0) {
        int best = mt_size > 2 ? 2 : mt_size - 1;
        MT_TRUE(pr->v == (double)(best % 3) && pr->i == best, "MAXLOC gave (%g, %d)", pr->v,
                pr->i);
    }
    /* Compare_and_swap and Fetch_and_op to every target under lock_all */
    MT_CALL(MPI_Win_fence(0, win));
    b[0] = -5;
    MT_CALL(MPI_Win_fence(0, win));
    MT_CALL(MPI_Win_lock_all(0, win));
    for (int t = 0; t < mt_size; t++) {
        int cmp = -5, swp = 1000 + mt_rank, res;
        MT_CALL(MPI_Compare_and_swap(&swp, &cmp, &res, MPI_INT, t, 0, win));
        MT_TRUE(res == -5 || (res >= 1000 && res < 1000 + mt_size), "CAS read %d", res);
        int one = 1, f;
        MT_CALL(MPI_Fetch_and_op(&one, &f, MPI_INT, t, 2, MPI_SUM, win));
        MT_TRUE(f >= 2 && f < 2 + mt_size, "Fetch_and_op read %d", f);
    }
    MT_CALL(MPI_Win_unlock_all(win));
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MT_TRUE(b[0] >= 1000 && b[0] < 1000 + mt_size, "CAS winner %d", b[0]);
    MT_EQ("Fetch_and_op total", 2 + mt_size, b[2]);
    /* PSCW ring into a vector target */
    MPI_Group wg, gl, gr;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_incl(wg, 1, &left, &gl);
    MPI_Group_incl(wg, 1, &right, &gr);
    MT_CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MT_CALL(MPI_Win_post(gl, 0, win));
    MT_CALL(MPI_Win_start(gr, 0, win));
    MT_CALL(MPI_Put(in, N, MPI_INT, right, 0, 1, v3, win));
    MT_CALL(MPI_Win_complete(win));
    MT_CALL(MPI_Win_wait(win));
    for (int i = 0; i < N; i++)
        MT_EQ("PSCW Put into a vector", left + 1 + i % 7, b[3 * i]);
    MPI_Group_free(&gl);
    MPI_Group_free(&gr);
    MPI_Group_free(&wg);
    MPI_Type_free(&v3);
    MT_CALL(MPI_Win_free(&win));
    free(in);
    free(old);
}

/* Rank 0 computes without MPI until every other rank is done with it: w[M] counts them, w[M + r]
 * is what rank r Put. */
static void busy_target(void)
{
    enum { M = 200000 };
    long *w;
    MPI_Win win;
    MT_CALL(MPI_Win_allocate(sizeof(long) * (M + 1 + (size_t)mt_size), sizeof(long), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &w, &win));
    MT_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < M; i++)
        w[i] = 3 * (long)i + mt_rank;
    for (int r = 0; r <= mt_size; r++)
        w[M + r] = 0;
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0) {
        double t0 = now(), x = 1;
#ifndef __SANITIZE_THREAD__
        while (__atomic_load_n(&w[M], __ATOMIC_ACQUIRE) < mt_size - 1) {
            x = x * 1.0000001 + 1e-9;   /* computing */
            if (now() - t0 > 60)
                MT_FAIL("busy target: %ld of %d origins done in 60 s", w[M], mt_size - 1);
        }
#else
        /* Watching the count while this process's progress thread accumulates into it is a race
         * by the C memory model (a load against the handler's memcpy), which TSan reports: here
         * rank 0 computes for 2 s, and the values are checked after the barrier. */
        while (now() - t0 < 2)
            x = x * 1.0000001 + 1e-9;
#endif
        MT_TRUE(x > 0, "computation");
    } else {
        long *got = mt_malloc(sizeof(long) * M);
        MT_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MT_CALL(MPI_Get(got, M, MPI_LONG, 0, 0, M, MPI_LONG, win));
        MT_CALL(MPI_Win_flush(0, win));
        for (int i = 0; i < M; i++)
            MT_EQ("Get from a computing target", 3 * (long)i, got[i]);
        long v = 100 + mt_rank;
        MT_CALL(MPI_Put(&v, 1, MPI_LONG, 0, M + mt_rank, 1, MPI_LONG, win));
        MT_CALL(MPI_Win_flush(0, win));   /* the Put before the count that ends the wait */
        long one = 1;
        MT_CALL(MPI_Accumulate(&one, 1, MPI_LONG, 0, M, 1, MPI_LONG, MPI_SUM, win));
        MT_CALL(MPI_Win_unlock(0, win));
        free(got);
    }
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0) {
        MT_EQ("origins done with the computing target", (long)mt_size - 1, w[M]);
        for (int r = 1; r < mt_size; r++)
            MT_EQ("Put while the target computed", 100 + r, w[M + r]);
    }
    MT_CALL(MPI_Win_free(&win));
}

static void dynamic_errors(void)
{
    int right = (mt_rank + 1) % mt_size, left = (mt_rank - 1 + mt_size) % mt_size;
    MPI_Win win;
    MT_CALL(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MT_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    long *mem = mt_malloc(sizeof(long) * 64);
    for (int i = 0; i < 64; i++)
        mem[i] = -1;
    MT_CALL(MPI_Win_attach(win, mem, sizeof(long) * 64));
    MPI_Aint mine, *addrs = mt_malloc(sizeof(MPI_Aint) * (size_t)mt_size);
    MPI_Get_address(mem, &mine);
    MT_CALL(MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
    MT_CALL(MPI_Win_lock_all(0, win));
    long v[8];
    for (int i = 0; i < 8; i++)
        v[i] = mt_rank * 10 + i;
    MT_CALL(MPI_Put(v, 8, MPI_LONG, right, addrs[right] + 8 * (MPI_Aint)sizeof(long), 8, MPI_LONG,
                    win));
    MT_CALL(MPI_Win_flush(right, win));
    long g[8];
    MT_CALL(MPI_Get(g, 8, MPI_LONG, right, addrs[right] + 8 * (MPI_Aint)sizeof(long), 8, MPI_LONG,
                    win));
    MT_CALL(MPI_Win_flush(right, win));
    for (int i = 0; i < 8; i++)
        MT_EQ("dynamic window: Get after Put", mt_rank * 10 + i, g[i]);
    /* outside every region: the last 4 longs run past the end */
    MPI_Aint bad = addrs[right] + 60 * (MPI_Aint)sizeof(long);
    MT_CLASS_EQ("Get outside the target's regions", MPI_ERR_RMA_RANGE,
                MPI_Get(g, 8, MPI_LONG, right, bad, 8, MPI_LONG, win));
    int rc = MPI_Put(v, 8, MPI_LONG, right, bad, 8, MPI_LONG, win);
    if (rc == MPI_SUCCESS)   /* a target on another node finds out: the flush says so */
        rc = MPI_Win_flush(right, win);
    MT_CLASS_EQ("Put outside the target's regions", MPI_ERR_RMA_RANGE, rc);
    MT_CALL(MPI_Win_flush_all(win));   /* the error was taken */
    MT_CALL(MPI_Win_unlock_all(win));
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 64; i++)
        MT_EQ("dynamic window memory", i >= 8 && i < 16 ? left * 10 + i - 8 : -1, mem[i]);
    MT_CALL(MPI_Win_detach(win, mem));
    MT_CALL(MPI_Win_free(&win));
    free(addrs);
    free(mem);
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    int prov;
    MT_CALL(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov));
    MT_TRUE(prov == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", prov);
    MT_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
    MT_CALL(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
    big_put_get();
    atomicity();
    fetching();
    busy_target();
    dynamic_errors();
    return mt_finish("rma_net");
}
