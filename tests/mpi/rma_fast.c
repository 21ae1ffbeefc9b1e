/* The fast paths of Put, Get, Fetch_and_op, Compare_and_swap, Accumulate of one element and
 * Win_flush on a window of one node
 * (src/mpi/wm_win_ops.c, docs/rma.md "Per-call costs"): what they must leave to the general path.
 *   - Fetch_and_op on one thread alternating types (int64, int32, double, uint8) and ops (SUM,
 *     REPLACE, NO_OP, MAX), and Compare_and_swap on the same types in between (the per-thread
 *     plan cache is keyed by op and type: a Compare_and_swap of int64 must not reuse a
 *     Fetch_and_op's plan, nor the reverse), and Accumulate (SUM of int64, REPLACE of int32)
 *     in between; every fetched value and the final words checked against a model;
 *   - Put and Get of 1 to 16 bytes (the inline copy), bytes around them untouched;
 *   - Put and Get with a contiguous derived type, with different origin and target types, and
 *     with a count of zero (left to the general path, same results);
 *   - errors met first by a fast path: range (MPI_ERR_RMA_RANGE), no epoch (MPI_ERR_RMA_SYNC),
 *     bad rank (MPI_ERR_RANK), MPI_OP_NULL (MPI_ERR_OP), Compare_and_swap of a derived type
 *     (MPI_ERR_TYPE), a freed window (MPI_ERR_WIN), Accumulate with MPI_NO_OP (MPI_ERR_OP) and
 *     past the window (MPI_ERR_RMA_RANGE);
 *   - a Put followed by a Fetch_and_op and a flush (the flush after a CPU atomic skips its own
 *     fence): the target reads the Put's data after a barrier.
 * Every rank does it to its right neighbour, on Win_allocate and Win_create windows. */
#include "mpitest.h"

enum { OFF_I64 = 0, OFF_I32 = 8, OFF_DBL = 16, OFF_U8 = 24, OFF_PUT = 32, OFF_ACC = 64,
       OFF_ACC32 = 72, OFF_SMALL = 80, WIN_BYTES = 128 };

static void run(int flavor)
{
    const char *kind = flavor ? "Win_create" : "Win_allocate";
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    char *b;
    MPI_Win win;
    if (flavor) {
        b = mt_malloc(WIN_BYTES);
        MT_CALL(MPI_Win_create(b, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else {
        MT_CALL(MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &b, &win));
    }
    MT_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    memset(b, 0, WIN_BYTES);
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));

    int rc = MPI_Put(b, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, win);
    MT_CLASS_EQ("Put outside any epoch", MPI_ERR_RMA_SYNC, rc);
    MT_CALL(MPI_Win_lock_all(0, win));

    /* one thread, types and ops alternating: model m* of the right neighbour's words (only this
     * rank touches them) */
    int64_t m64 = 0, r64, one = 1;
    int32_t m32 = 0, r32, v32;
    double md = 0, rd, vd;
    uint8_t m8 = 0, r8, v8;
    int64_t ma = 0;
    int32_t ma32 = 0;
    for (int k = 0; k < 50; k++) {
        int64_t add = k + 1;
        MT_CALL(MPI_Accumulate(&add, 1, MPI_INT64_T, right, OFF_ACC, 1, MPI_INT64_T, MPI_SUM,
                               win));
        ma += add;
        int32_t rep = 7 * k - 3;
        MT_CALL(MPI_Accumulate(&rep, 1, MPI_INT32_T, right, OFF_ACC32, 1, MPI_INT32_T,
                               MPI_REPLACE, win));
        ma32 = rep;
        MT_CALL(MPI_Fetch_and_op(&one, &r64, MPI_INT64_T, right, OFF_I64, MPI_SUM, win));
        MT_TRUE(r64 == m64, "%s: int64 SUM fetched %lld, expected %lld", kind, (long long)r64,
                (long long)m64);
        m64 += 1;
        v32 = k * 3 - 20;
        MT_CALL(MPI_Fetch_and_op(&v32, &r32, MPI_INT32_T, right, OFF_I32, MPI_MAX, win));
        MT_TRUE(r32 == m32, "%s: int32 MAX fetched %d, expected %d", kind, r32, m32);
        m32 = v32 > m32 ? v32 : m32;
        vd = 0.5 * k;
        MT_CALL(MPI_Fetch_and_op(&vd, &rd, MPI_DOUBLE, right, OFF_DBL, MPI_SUM, win));
        MT_TRUE(rd == md, "%s: double SUM fetched %g, expected %g", kind, rd, md);
        md += vd;
        int64_t cmp = m64, swap = m64 + 10;   /* succeeds */
        MT_CALL(MPI_Compare_and_swap(&swap, &cmp, &r64, MPI_INT64_T, right, OFF_I64, win));
        MT_TRUE(r64 == m64, "%s: int64 CAS found %lld, expected %lld", kind, (long long)r64,
                (long long)m64);
        m64 = swap;
        cmp = -1;                             /* fails */
        MT_CALL(MPI_Compare_and_swap(&swap, &cmp, &r64, MPI_INT64_T, right, OFF_I64, win));
        MT_TRUE(r64 == m64, "%s: failed CAS found %lld, expected %lld", kind, (long long)r64,
                (long long)m64);
        v8 = (uint8_t)(k + 1);
        MT_CALL(MPI_Fetch_and_op(&v8, &r8, MPI_UINT8_T, right, OFF_U8, MPI_REPLACE, win));
        MT_TRUE(r8 == m8, "%s: uint8 REPLACE fetched %u, expected %u", kind, r8, m8);
        m8 = v8;
        MT_CALL(MPI_Fetch_and_op(NULL, &r32, MPI_INT32_T, right, OFF_I32, MPI_NO_OP, win));
        MT_TRUE(r32 == m32, "%s: int32 NO_OP fetched %d, expected %d", kind, r32, m32);
        int32_t c32 = m32, s32 = m32;          /* CAS of int32 after FOP of int32 */
        MT_CALL(MPI_Compare_and_swap(&s32, &c32, &r32, MPI_INT32_T, right, OFF_I32, win));
        MT_TRUE(r32 == m32, "%s: int32 CAS found %d, expected %d", kind, r32, m32);
        MT_CALL(MPI_Win_flush(right, win));
    }

    /* Put and Get the general path takes: a derived contiguous target type, differing types,
     * count 0 */
    MPI_Datatype two;
    MT_CALL(MPI_Type_contiguous(2, MPI_INT32_T, &two));
    MT_CALL(MPI_Type_commit(&two));
    int32_t src[4] = { mt_rank + 1, mt_rank + 2, mt_rank + 3, mt_rank + 4 }, got[4] = { 0 };
    MT_CALL(MPI_Put(src, 2, two, right, OFF_PUT, 2, two, win));              /* derived, same */
    MT_CALL(MPI_Put(src, 0, MPI_INT32_T, right, OFF_PUT + 16, 0, MPI_INT32_T, win));
    MT_CALL(MPI_Win_flush(right, win));
    MT_CALL(MPI_Get(got, 4, MPI_INT32_T, right, OFF_PUT, 2, two, win));     /* types differ */
    MT_CALL(MPI_Win_flush(right, win));
    for (int i = 0; i < 4; i++)
        MT_TRUE(got[i] == src[i], "%s: Get of a derived type: [%d] = %d, expected %d", kind, i,
                got[i], src[i]);

    /* small Puts and Gets: the inline copy of 1 to 16 bytes */
    for (int n = 1; n <= 16; n++) {
        unsigned char pat[16], back[18];
        for (int i = 0; i < 16; i++)
            pat[i] = (unsigned char)(n * 16 + i);
        memset(back, 0xee, sizeof back);
        MT_CALL(MPI_Put(pat, n, MPI_BYTE, right, OFF_SMALL, n, MPI_BYTE, win));
        MT_CALL(MPI_Win_flush(right, win));
        MT_CALL(MPI_Get(back + 1, n, MPI_BYTE, right, OFF_SMALL, n, MPI_BYTE, win));
        MT_CALL(MPI_Win_flush(right, win));
        MT_TRUE(back[0] == 0xee && back[n + 1] == 0xee && !memcmp(back + 1, pat, (size_t)n),
                "%s: Put then Get of %d bytes: got back %02x %02x .. %02x %02x", kind, n,
                back[0], back[1], back[n], back[n + 1]);
    }

    /* errors a fast path meets first */
    MT_CLASS_EQ("Accumulate with MPI_NO_OP", MPI_ERR_OP,
                MPI_Accumulate(&one, 1, MPI_INT64_T, right, OFF_ACC, 1, MPI_INT64_T, MPI_NO_OP,
                               win));
    MT_CLASS_EQ("Accumulate past the window", MPI_ERR_RMA_RANGE,
                MPI_Accumulate(&one, 1, MPI_INT64_T, right, WIN_BYTES - 4, 1, MPI_INT64_T,
                               MPI_SUM, win));
    MT_CLASS_EQ("Fetch_and_op past the window", MPI_ERR_RMA_RANGE,
                MPI_Fetch_and_op(&one, &r64, MPI_INT64_T, right, WIN_BYTES - 4, MPI_SUM, win));
    MT_CLASS_EQ("Put past the window", MPI_ERR_RMA_RANGE,
                MPI_Put(src, 4, MPI_INT32_T, right, WIN_BYTES - 8, 4, MPI_INT32_T, win));
    MT_CLASS_EQ("Get at a negative displacement", MPI_ERR_RMA_RANGE,
                MPI_Get(got, 1, MPI_INT32_T, right, -4, 1, MPI_INT32_T, win));
    MT_CLASS_EQ("Put to rank -2", MPI_ERR_RANK,
                MPI_Put(src, 1, MPI_INT32_T, -2, 0, 1, MPI_INT32_T, win));
    MT_CLASS_EQ("Fetch_and_op with MPI_OP_NULL", MPI_ERR_OP,
                MPI_Fetch_and_op(&one, &r64, MPI_INT64_T, right, OFF_I64, MPI_OP_NULL, win));
    MT_CLASS_EQ("Compare_and_swap of a derived type", MPI_ERR_TYPE,
                MPI_Compare_and_swap(src, src, got, two, right, OFF_PUT, win));
    MT_CLASS_EQ("Win_flush of rank size", MPI_ERR_RANK, MPI_Win_flush(mt_size, win));
    MT_CALL(MPI_Type_free(&two));

    /* a Put, then a CPU atomic, then the flush without a fence of its own */
    int64_t mark = 1000 + mt_rank;
    MT_CALL(MPI_Put(&mark, 1, MPI_INT64_T, right, OFF_PUT + 24, 1, MPI_INT64_T, win));
    MT_CALL(MPI_Fetch_and_op(&one, &r64, MPI_INT64_T, right, OFF_I64, MPI_SUM, win));
    m64 += 1;
    MT_CALL(MPI_Win_flush(right, win));
    MT_CALL(MPI_Win_unlock_all(win));
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MT_CALL(MPI_Win_sync(win));

    /* the left neighbour's model, checked in this rank's memory */
    int64_t w64, wput;
    int32_t w32;
    double wd;
    int64_t wa;
    int32_t wa32;
    memcpy(&wa, b + OFF_ACC, 8);
    memcpy(&wa32, b + OFF_ACC32, 4);
    MT_TRUE(wa == ma && wa32 == ma32, "%s: accumulated int64 %lld (expected %lld), int32 %d (%d)",
            kind, (long long)wa, (long long)ma, wa32, ma32);
    memcpy(&w64, b + OFF_I64, 8);
    memcpy(&w32, b + OFF_I32, 4);
    memcpy(&wd, b + OFF_DBL, 8);
    memcpy(&wput, b + OFF_PUT + 24, 8);
    MT_TRUE(w64 == m64, "%s: int64 word %lld, expected %lld", kind, (long long)w64,
            (long long)m64);
    MT_TRUE(w32 == m32 && wd == md && (uint8_t)b[OFF_U8] == m8,
            "%s: int32 %d (expected %d), double %g (%g), uint8 %u (%u)", kind, w32, m32, wd, md,
            (uint8_t)b[OFF_U8], m8);
    MT_TRUE(wput == 1000 + left, "%s: Put before the atomic: %lld, expected %d", kind,
            (long long)wput, 1000 + left);

    MPI_Win freed = win;
    MT_CALL(MPI_Win_free(&win));
    MT_CLASS_EQ("Put on a freed window", MPI_ERR_WIN,
                MPI_Put(src, 1, MPI_INT32_T, right, 0, 1, MPI_INT32_T, freed));
    if (flavor)
        free(b);
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    run(0);
    run(1);
    return mt_finish("rma_fast");
}
