/* Atomicity of accumulates under concurrency (MPI 4.1 12.7.1), the CPU-atomic path and the mutex
 * path alike (docs/rma.md, "Atomic accumulates"): every rank and T threads each, at
 * MPI_THREAD_MULTIPLE under one lock_all epoch, mix operations on the same locations of rank 0's
 * window, which the final values and the fetched values must show were applied one at a time:
 *   - an int64 counter incremented by Accumulate, Fetch_and_op, Get_accumulate (MPI_SUM) and by
 *     Compare_and_swap loops, all at once;
 *   - a uint32 word: BOR of one bit per thread, BXOR of another bit three times;
 *   - int32 MAX, int8 MIN, uint16 SUM, double SUM (a compare-and-swap loop on the bits);
 *   - an int64 exchanged by Fetch_and_op MPI_REPLACE with unique values: the values fetched plus
 *     the final one are exactly the initial value and every value written, once each;
 *   - an int64 multiplied by -1 (MPI_PROD) while others read it (MPI_NO_OP): never torn;
 *   - an int32 at a misaligned byte offset (the mutex path for misaligned elements);
 *   - an int64 array updated by a vector datatype (every other element) and by Fetch_and_op on
 *     single elements; in the second run one thread also adds to the whole array at once halfway
 *     (16 elements: a bulk update, which switches the window from CPU atomics to the mutex while
 *     the other threads' atomics are under way).
 * On MPI_Win_allocate, MPI_Win_allocate_shared (CPU atomics) and MPI_Win_create (the mutex and
 * single copy), all with disp_unit 1. */
#include <pthread.h>
#include "mpitest.h"

#define T 3
#define K 100

enum {
    OFF_SUM = 0, OFF_BITS = 8, OFF_MAX = 16, OFF_DBL = 24, OFF_SWAP = 32, OFF_PROD = 40,
    OFF_MIS = 49, OFF_I8 = 56, OFF_U16 = 58, OFF_VEC = 64, NVEC = 16,
    WIN_BYTES = OFF_VEC + NVEC * 8,
};

static MPI_Win win;
static MPI_Datatype vec;   /* 8 x int64, every other one */
static int64_t *olds;      /* [T * K]: values fetched by this rank's exchanges */
static int bulk;           /* this run adds one bulk update to the array */

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg, id = mt_rank * T + t;
    int64_t one = 1, r64, minus = -1;
    for (int k = 0; k < K; k++) {
        switch (k % 4) {   /* one increment of the counter, four ways */
        case 0:
            MT_CALL(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, OFF_SUM, 1, MPI_INT64_T, MPI_SUM, win));
            break;
        case 1:
            MT_CALL(MPI_Fetch_and_op(&one, &r64, MPI_INT64_T, 0, OFF_SUM, MPI_SUM, win));
            break;
        case 2:
            MT_CALL(MPI_Get_accumulate(&one, 1, MPI_INT64_T, &r64, 1, MPI_INT64_T, 0, OFF_SUM, 1,
                                       MPI_INT64_T, MPI_SUM, win));
            break;
        default: {
            int64_t cur, want, got;
            MT_CALL(MPI_Fetch_and_op(NULL, &cur, MPI_INT64_T, 0, OFF_SUM, MPI_NO_OP, win));
            for (;;) {
                want = cur + 1;
                MT_CALL(MPI_Compare_and_swap(&want, &cur, &got, MPI_INT64_T, 0, OFF_SUM, win));
                if (got == cur)
                    break;
                cur = got;
            }
        }
        }
        if (k == 0) {
            uint32_t bit = 1u << id;
            MT_CALL(MPI_Accumulate(&bit, 1, MPI_UINT32_T, 0, OFF_BITS, 1, MPI_UINT32_T, MPI_BOR,
                                   win));
        }
        if (k < 3) {
            uint32_t bit = 1u << (16 + id), r32;
            MT_CALL(MPI_Fetch_and_op(&bit, &r32, MPI_UINT32_T, 0, OFF_BITS, MPI_BXOR, win));
        }
        int32_t m = id * 1000 + k, r32;
        MT_CALL(MPI_Fetch_and_op(&m, &r32, MPI_INT32_T, 0, OFF_MAX, MPI_MAX, win));
        int8_t neg = (int8_t)(-(id + 1)), r8;
        MT_CALL(MPI_Fetch_and_op(&neg, &r8, MPI_INT8_T, 0, OFF_I8, MPI_MIN, win));
        uint16_t u = 1;
        MT_CALL(MPI_Accumulate(&u, 1, MPI_UINT16_T, 0, OFF_U16, 1, MPI_UINT16_T, MPI_SUM, win));
        double d = 1.0, rd;
        if (k % 2)
            MT_CALL(MPI_Accumulate(&d, 1, MPI_DOUBLE, 0, OFF_DBL, 1, MPI_DOUBLE, MPI_SUM, win));
        else
            MT_CALL(MPI_Fetch_and_op(&d, &rd, MPI_DOUBLE, 0, OFF_DBL, MPI_SUM, win));
        int64_t v = (int64_t)id * K + k + 1;
        MT_CALL(MPI_Fetch_and_op(&v, &olds[t * K + k], MPI_INT64_T, 0, OFF_SWAP, MPI_REPLACE, win));
        MT_CALL(MPI_Accumulate(&minus, 1, MPI_INT64_T, 0, OFF_PROD, 1, MPI_INT64_T, MPI_PROD, win));
        MT_CALL(MPI_Fetch_and_op(NULL, &r64, MPI_INT64_T, 0, OFF_PROD, MPI_NO_OP, win));
        MT_TRUE(r64 == 7 || r64 == -7, "PROD by -1 read %lld, expected 7 or -7", (long long)r64);
        int32_t i1 = 1;
        MT_CALL(MPI_Fetch_and_op(&i1, &r32, MPI_INT32_T, 0, OFF_MIS, MPI_SUM, win));
        int64_t ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
        MT_CALL(MPI_Accumulate(ones, 8, MPI_INT64_T, 0, OFF_VEC, 1, vec, MPI_SUM, win));
        MT_CALL(MPI_Fetch_and_op(&one, &r64, MPI_INT64_T, 0, OFF_VEC + 8 * (k % NVEC), MPI_SUM,
                                 win));
        if (bulk && k == K / 2 && mt_rank == mt_size - 1 && t == 0) {
            int64_t all[NVEC];
            for (int i = 0; i < NVEC; i++)
                all[i] = 1;
            MT_CALL(MPI_Accumulate(all, NVEC, MPI_INT64_T, 0, OFF_VEC, NVEC, MPI_INT64_T, MPI_SUM,
                                   win));
        }
        if (k % 10 == 0)
            MT_CALL(MPI_Win_flush(0, win));
    }
    return NULL;
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void run(char *b, const char *kind)
{
    if (mt_rank == 0) {
        MT_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        memset(b, 0, WIN_BYTES);
        int64_t seven = 7;
        memcpy(b + OFF_PROD, &seven, 8);
        MT_CALL(MPI_Win_unlock(0, win));
    }
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MT_CALL(MPI_Win_lock_all(0, win));
    pthread_t th[T];
    for (int t = 0; t < T; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    MT_CALL(MPI_Win_unlock_all(win));
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));

    long p = (long)mt_size * T;
    int64_t *all = mt_rank == 0 ? mt_malloc(sizeof(int64_t) * (size_t)(p * K + 1)) : NULL;
    MT_CALL(MPI_Gather(olds, T * K, MPI_INT64_T, all, T * K, MPI_INT64_T, 0, MPI_COMM_WORLD));
    if (mt_rank == 0) {
        MT_CALL(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        int64_t i64;
        int32_t i32;
        uint32_t u32;
        uint16_t u16;
        double d;
        char what[96];
        memcpy(&i64, b + OFF_SUM, 8);
        snprintf(what, sizeof what, "%s: counter incremented 4 ways", kind);
        MT_EQ(what, p * K, i64);
        memcpy(&u32, b + OFF_BITS, 4);
        uint32_t mask = (uint32_t)((1ul << p) - 1);
        snprintf(what, sizeof what, "%s: BOR bits and thrice-BXORed bits", kind);
        MT_EQ(what, mask | mask << 16, u32);
        memcpy(&i32, b + OFF_MAX, 4);
        snprintf(what, sizeof what, "%s: MAX", kind);
        MT_EQ(what, (p - 1) * 1000 + K - 1, i32);
        snprintf(what, sizeof what, "%s: int8 MIN", kind);
        MT_EQ(what, -p, (int8_t)b[OFF_I8]);
        memcpy(&u16, b + OFF_U16, 2);
        snprintf(what, sizeof what, "%s: uint16 SUM", kind);
        MT_EQ(what, p * K, u16);
        memcpy(&d, b + OFF_DBL, 8);
        MT_TRUE(d == (double)(p * K), "%s: double SUM expected %ld got %g", kind, p * K, d);
        memcpy(&i64, b + OFF_PROD, 8);
        snprintf(what, sizeof what, "%s: PROD by -1, %ld times", kind, p * K);
        MT_EQ(what, (p * K) % 2 ? -7 : 7, i64);
        memcpy(&i32, b + OFF_MIS, 4);
        snprintf(what, sizeof what, "%s: misaligned int32 SUM", kind);
        MT_EQ(what, p * K, i32);
        for (int i = 0; i < NVEC; i++) {
            int64_t e;
            memcpy(&e, b + OFF_VEC + 8 * i, 8);
            long fops = 0;
            for (int k = 0; k < K; k++)
                fops += k % NVEC == i;
            snprintf(what, sizeof what, "%s: vector accumulate element %d", kind, i);
            MT_EQ(what, (i % 2 == 0 ? p * K : 0) + p * fops + bulk, e);
        }
        memcpy(&all[p * K], b + OFF_SWAP, 8);   /* the final value */
        MT_CALL(MPI_Win_unlock(0, win));
        qsort(all, (size_t)(p * K + 1), sizeof(int64_t), cmp64);
        for (long i = 0; i <= p * K; i++) {
            snprintf(what, sizeof what, "%s: exchanged values, sorted, each once", kind);
            MT_EQ(what, i, all[i]);
        }
        free(all);
    }
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    int provided;
    MT_CALL(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MT_EQ("thread level", MPI_THREAD_MULTIPLE, provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
    if (mt_size * T > 16)
        MT_FAIL("at most %d ranks", 16 / T);
    olds = mt_malloc(sizeof(int64_t) * T * K);
    MT_CALL(MPI_Type_vector(8, 1, 2, MPI_INT64_T, &vec));
    MT_CALL(MPI_Type_commit(&vec));

    char *b;
    MT_CALL(MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &b, &win));
    MT_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    run(b, "Win_allocate");
    MT_CALL(MPI_Win_free(&win));

    bulk = 1;
    MT_CALL(MPI_Win_allocate_shared(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &b, &win));
    MT_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    run(b, "Win_allocate_shared, with a bulk update");
    MT_CALL(MPI_Win_free(&win));

    char *u = mt_malloc(WIN_BYTES);
    MT_CALL(MPI_Win_create(u, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MT_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    run(u, "Win_create");
    MT_CALL(MPI_Win_free(&win));
    free(u);
    MT_CALL(MPI_Type_free(&vec));
    free(olds);
    return mt_finish("rma_atomic");
}
