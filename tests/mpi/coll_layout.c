/* Collectives whose ranks lay the same data out differently (a contiguous array on some ranks, a
 * strided vector on others: MPI only asks for matching type signatures), at sizes that take the
 * large-message algorithms and their single-copy or pipelined messages: Bcast (root contiguous,
 * receivers strided, and the reverse), Allgather (strided send side), Alltoall (strided receive
 * blocks). Every algorithm choice must be the same on every rank whatever its layout. The gaps of
 * strided buffers must stay untouched. Argument: the largest count of ints per block. */
#include "mpitest.h"

#include <stdbool.h>

#define BL 512        /* ints per block of the vector: 2 KiB, enough for the single-copy scatter */
#define GAP (-7)

static MPI_Comm comm;

static int val(int src, int i, int salt)
{
    return src * 1000003 + i * 7 + salt;
}

/* k ints (k a multiple of BL) as k / BL blocks of BL ints at a stride of 2 BL; extent 2 k ints */
static MPI_Datatype vec(int k)
{
    MPI_Datatype v, r;
    MT_CALL(MPI_Type_vector(k / BL, BL, 2 * BL, MPI_INT, &v));
    MT_CALL(MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * (size_t)k * sizeof(int)), &r));
    MT_CALL(MPI_Type_free(&v));
    MT_CALL(MPI_Type_commit(&r));
    return r;
}

/* where element i of a strided buffer lives */
static size_t sidx(int i)
{
    return (size_t)(i / BL) * 2 * BL + (size_t)(i % BL);
}

static void check_strided(const int *buf, int k, int src, int salt, const char *what)
{
    for (size_t j = 0; j < 2 * (size_t)k; j++) {
        size_t blk = j / BL;
        int expect = blk % 2 ? GAP : val(src, (int)((blk / 2) * BL + j % BL), salt);
        if (buf[j] != expect)
            MT_FAIL("%s k %d: int %zu from rank %d: expected %d got %d", what, k, j, src, expect,
                    buf[j]);
    }
}

static void check_contig(const int *buf, int k, int src, int salt, const char *what)
{
    for (int i = 0; i < k; i++)
        if (buf[i] != val(src, i, salt))
            MT_FAIL("%s k %d: int %d from rank %d: expected %d got %d", what, k, i, src,
                    val(src, i, salt), buf[i]);
}

static void test_bcast(int k, MPI_Datatype v)
{
    int n = mt_size, me = mt_rank;
    int *buf = mt_malloc(2 * (size_t)k * sizeof(int));
    for (int root = 0; root < n; root++) {
        for (int mode = 0; mode < 2; mode++) {
            /* mode 0: the root contiguous, the others strided; mode 1: the reverse */
            bool strided = (me == root) == (mode == 1);
            for (size_t j = 0; j < 2 * (size_t)k; j++)
                buf[j] = GAP;
            if (me == root)
                for (int i = 0; i < k; i++)
                    buf[strided ? sidx(i) : (size_t)i] = val(root, i, mode);
            MT_CALL(MPI_Bcast(buf, strided ? 1 : k, strided ? v : MPI_INT, root, comm));
            if (strided)
                check_strided(buf, k, root, mode, "bcast strided");
            else
                check_contig(buf, k, root, mode, "bcast contiguous");
        }
    }
    free(buf);
}

static void test_allgather(int k, MPI_Datatype v)
{
    int n = mt_size, me = mt_rank;
    int *s = mt_malloc(2 * (size_t)k * sizeof(int)), *r = mt_malloc((size_t)n * k * sizeof(int));
    for (size_t j = 0; j < 2 * (size_t)k; j++)
        s[j] = GAP;
    for (int i = 0; i < k; i++)
        s[sidx(i)] = val(me, i, 11);
    MT_CALL(MPI_Allgather(s, 1, v, r, k, MPI_INT, comm));
    for (int src = 0; src < n; src++)
        check_contig(r + (size_t)src * k, k, src, 11, "allgather");
    free(s);
    free(r);
}

static void test_alltoall(int k, MPI_Datatype v)
{
    int n = mt_size, me = mt_rank;
    int *s = mt_malloc((size_t)n * k * sizeof(int)), *r = mt_malloc((size_t)n * 2 * k * sizeof(int));
    for (int dst = 0; dst < n; dst++)
        for (int i = 0; i < k; i++)
            s[(size_t)dst * k + (size_t)i] = val(me, i, 100 + dst);
    for (size_t j = 0; j < (size_t)n * 2 * k; j++)
        r[j] = GAP;
    MT_CALL(MPI_Alltoall(s, k, MPI_INT, r, 1, v, comm));
    for (int src = 0; src < n; src++)
        check_strided(r + (size_t)src * 2 * k, k, src, 100 + me, "alltoall");
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    long kmax = mt_init_args(argc, argv, 65536);
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    static const int ks[] = { BL, 8 * BL, 32 * BL, 128 * BL };   /* 2 KiB .. 256 KiB */
    for (size_t t = 0; t < sizeof(ks) / sizeof(ks[0]); t++) {
        int k = ks[t];
        if (k > kmax)
            continue;
        MPI_Datatype v = vec(k);
        test_bcast(k, v);
        test_allgather(k, v);
        test_alltoall(k, v);
        MT_CALL(MPI_Type_free(&v));
    }
    MT_CALL(MPI_Comm_free(&comm));
    return mt_finish("coll_layout");
}
