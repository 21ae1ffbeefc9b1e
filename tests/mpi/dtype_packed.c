/* Packed data between processes: each rank packs derived types (a strided vector of doubles, a
 * struct with gaps, a 3-D subarray box) with MPI_Pack, sends them as MPI_PACKED around a ring, and
 * the receiver unpacks into a poisoned buffer and checks every byte against what the sender held.
 * Also derived types whose layout is contiguous (contiguous, vector with stride == blocklength,
 * a struct of adjacent fields) sent directly with MPI_Send / MPI_Recv. */
#include "mpitest.h"

#define N 12

static void check_region(const char *what, const unsigned char *got, const unsigned char *src,
                         const unsigned char *mask, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        unsigned char want = mask[k] ? src[k] : 0xEE;
        if (got[k] != want)
            MT_FAIL("%s: byte %zu expected %u got %u", what, k, want, got[k]);
    }
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    int next = (mt_rank + 1) % mt_size, prev = (mt_rank + mt_size - 1) % mt_size;

    MPI_Datatype types[3];
    MT_CALL(MPI_Type_vector(N * N, 1, 3, MPI_DOUBLE, &types[0]));
    int bl[3] = { 1, 2, 1 };
    MPI_Aint d[3] = { 0, 8, 32 };
    MPI_Datatype st[3] = { MPI_CHAR, MPI_DOUBLE, MPI_INT };
    MPI_Datatype s1;
    MT_CALL(MPI_Type_create_struct(3, bl, d, st, &s1));
    MT_CALL(MPI_Type_contiguous(7, s1, &types[1]));
    MT_CALL(MPI_Type_free(&s1));
    int sizes[3] = { N, N, N }, sub[3] = { 3, 5, 4 }, start[3] = { 2, 1, 7 };
    MT_CALL(MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_INT, &types[2]));
    for (int k = 0; k < 3; k++) {
        MT_CALL(MPI_Type_commit(&types[k]));
        MPI_Aint lb, ext;
        MT_CALL(MPI_Type_get_extent(types[k], &lb, &ext));
        size_t span = (size_t)(ext * 2);
        /* which bytes the type covers: unpack 0xFF into a zeroed buffer */
        int psize;
        MT_CALL(MPI_Pack_size(2, types[k], MPI_COMM_WORLD, &psize));
        unsigned char *ones = mt_malloc(psize), *mask = mt_malloc(span);
        memset(ones, 0xFF, psize);
        memset(mask, 0, span);
        int pos = 0, tsz;
        MT_CALL(MPI_Type_size(types[k], &tsz));
        /* a packed buffer of 0xFF bytes: unpacking marks exactly the covered bytes */
        MT_CALL(MPI_Unpack(ones, psize, &pos, mask, 2, types[k], MPI_COMM_WORLD));
        size_t covered = 0;
        for (size_t j = 0; j < span; j++)
            covered += mask[j] != 0;
        MT_EQ("bytes covered by two elements", 2 * tsz, covered);

        unsigned char *src = mt_malloc(span), *pk = mt_malloc(psize), *got = mt_malloc(span),
                      *theirs = mt_malloc(span);
        mt_fill(src, span, 100 * mt_rank + k);
        mt_fill(theirs, span, 100 * prev + k);
        pos = 0;
        MT_CALL(MPI_Pack(src, 2, types[k], pk, psize, &pos, MPI_COMM_WORLD));
        unsigned char *in = mt_malloc(psize);
        MPI_Status stt;
        MT_CALL(MPI_Sendrecv(pk, pos, MPI_PACKED, next, k, in, psize, MPI_PACKED, prev, k,
                             MPI_COMM_WORLD, &stt));
        int cnt;
        MT_CALL(MPI_Get_count(&stt, MPI_PACKED, &cnt));
        MT_EQ("packed bytes received", pos, cnt);
        memset(got, 0xEE, span);
        int upos = 0;
        MT_CALL(MPI_Unpack(in, cnt, &upos, got, 2, types[k], MPI_COMM_WORLD));
        char what[64];
        snprintf(what, sizeof what, "type %d unpacked from rank %d", k, prev);
        check_region(what, got, theirs, mask, span);
        free(ones); free(mask); free(src); free(pk); free(got); free(theirs); free(in);
        MT_CALL(MPI_Type_free(&types[k]));
    }

    /* absolute addresses: a struct of two separate variables packed from MPI_BOTTOM (MPICH 4.0
     * refuses a NULL inbuf in MPI_Pack, against the standard: Weft-only) */
    if (mt_weft) {
        static double x[3];
        static int y[2];
        MPI_Aint ax, ay;
        MT_CALL(MPI_Get_address(x, &ax));
        MT_CALL(MPI_Get_address(y, &ay));
        int abl[2] = { 3, 2 };
        MPI_Aint ad[2] = { ax, ay };
        MPI_Datatype at[2] = { MPI_DOUBLE, MPI_INT }, abs_t;
        MT_CALL(MPI_Type_create_struct(2, abl, ad, at, &abs_t));
        MT_CALL(MPI_Type_commit(&abs_t));
        x[0] = 1.5, x[1] = -2, x[2] = 1e300, y[0] = 7, y[1] = -9;
        char pk[64];
        int pos = 0;
        MT_CALL(MPI_Pack(MPI_BOTTOM, 1, abs_t, pk, sizeof pk, &pos, MPI_COMM_WORLD));
        memset(x, 0, sizeof x);
        memset(y, 0, sizeof y);
        int upos = 0;
        MT_CALL(MPI_Unpack(pk, pos, &upos, MPI_BOTTOM, 1, abs_t, MPI_COMM_WORLD));
        MT_TRUE(x[0] == 1.5 && x[1] == -2 && x[2] == 1e300 && y[0] == 7 && y[1] == -9,
                "MPI_BOTTOM round trip through MPI_Pack / MPI_Unpack changed the data");
        MT_CALL(MPI_Type_free(&abs_t));
    }

    /* contiguous layouts straight through point-to-point */
    MPI_Datatype c[3];
    MT_CALL(MPI_Type_contiguous(100, MPI_INT, &c[0]));
    MT_CALL(MPI_Type_vector(10, 4, 4, MPI_DOUBLE, &c[1]));
    int bl2[3] = { 2, 1, 2 };
    MPI_Aint d2[3] = { 0, 8, 16 };
    MPI_Datatype st2[3] = { MPI_INT, MPI_DOUBLE, MPI_DOUBLE };
    MT_CALL(MPI_Type_create_struct(3, bl2, d2, st2, &c[2]));
    for (int k = 0; k < 3; k++) {
        MT_CALL(MPI_Type_commit(&c[k]));
        int sz;
        MPI_Aint lb, ext;
        MT_CALL(MPI_Type_size(c[k], &sz));
        MT_CALL(MPI_Type_get_extent(c[k], &lb, &ext));
        MT_EQ("contiguous layout: size == extent", ext, sz);
        unsigned char *src = mt_malloc(3 * sz), *got = mt_malloc(3 * sz);
        mt_fill(src, 3 * sz, 10 * mt_rank + k);
        memset(got, 0, 3 * sz);
        MPI_Status stt;
        MT_CALL(MPI_Sendrecv(src, 3, c[k], next, 10 + k, got, 3, c[k], prev, 10 + k,
                             MPI_COMM_WORLD, &stt));
        int cnt;
        MT_CALL(MPI_Get_count(&stt, c[k], &cnt));
        MT_EQ("elements received", 3, cnt);
        mt_verify(got, 3 * sz, 10 * prev + k, "contiguous derived type received");
        free(src); free(got);
        MT_CALL(MPI_Type_free(&c[k]));
    }
    return mt_finish("dtype_packed");
}
