/* Datatype errors under MPI_ERRORS_RETURN: freed and garbage handles, uncommitted types in
 * communication and packing, negative counts and block lengths, freeing a predefined type,
 * contents of a predefined type, an unknown data representation, sizes and extents that overflow
 * MPI_Count; plus external32 byte order. */
#include <limits.h>
#include "mpitest.h"

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Datatype t, freed;
    int sz, buf[16] = { 0 }, pos = 0;
    char pk[256];

    MT_CALL(MPI_Type_contiguous(2, MPI_INT, &t));
    /* uncommitted: communication and packing refuse it */
    MT_CLASS_EQ("MPI_Send of an uncommitted type", MPI_ERR_TYPE,
                MPI_Send(buf, 1, t, mt_rank, 0, MPI_COMM_WORLD));
    MT_CLASS_EQ("MPI_Pack of an uncommitted type", MPI_ERR_TYPE,
                MPI_Pack(buf, 1, t, pk, sizeof pk, &pos, MPI_COMM_WORLD));
    MT_CALL(MPI_Type_commit(&t));
    freed = t;
    MT_CALL(MPI_Type_free(&t));
    MT_CLASS_EQ("MPI_Type_free of MPI_INT", MPI_ERR_TYPE, (t = MPI_INT, MPI_Type_free(&t)));
    MT_CLASS_EQ("MPI_Type_free of MPI_DATATYPE_NULL", MPI_ERR_TYPE,
                (t = MPI_DATATYPE_NULL, MPI_Type_free(&t)));
    MT_CLASS_EQ("MPI_Type_contiguous with count -1", MPI_ERR_COUNT,
                MPI_Type_contiguous(-1, MPI_INT, &t));
    MT_CLASS_EQ("MPI_Type_vector with count -1", MPI_ERR_COUNT,
                MPI_Type_vector(-1, 1, 1, MPI_INT, &t));
    MT_CLASS_EQ("MPI_Type_contiguous of MPI_DATATYPE_NULL", MPI_ERR_TYPE,
                MPI_Type_contiguous(1, MPI_DATATYPE_NULL, &t));
    MT_CLASS_EQ("MPI_Send with count -1", MPI_ERR_COUNT,
                MPI_Send(buf, -1, MPI_INT, mt_rank, 0, MPI_COMM_WORLD));
    MT_CLASS_EQ("MPI_Pack with incount -1", MPI_ERR_COUNT,
                MPI_Pack(buf, -1, MPI_INT, pk, sizeof pk, &pos, MPI_COMM_WORLD));
    if (mt_weft) {   /* MPICH 4.0 does not detect freed handles */
        MT_CLASS_EQ("MPI_Type_size of a freed type", MPI_ERR_TYPE, MPI_Type_size(freed, &sz));
        MT_CLASS_EQ("MPI_Type_commit of a freed type", MPI_ERR_TYPE, MPI_Type_commit(&freed));
        MT_CLASS_EQ("MPI_Send of a freed type", MPI_ERR_TYPE,
                    MPI_Send(buf, 1, freed, mt_rank, 0, MPI_COMM_WORLD));
        MT_CLASS_EQ("MPI_Type_vector of a freed type", MPI_ERR_TYPE,
                    MPI_Type_vector(2, 1, 1, freed, &t));
        int ni, na, nd, c;
        MT_CALL(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &c));
        MT_EQ("envelope of MPI_INT: combiner", MPI_COMBINER_NAMED, c);
        MT_CLASS_EQ("MPI_Type_get_contents of MPI_INT", MPI_ERR_ARG,
                    MPI_Type_get_contents(MPI_INT, 0, 0, 0, NULL, NULL, NULL));
        int bl = -1, d = 0;
        MT_CLASS_EQ("MPI_Type_indexed with blocklength -1", MPI_ERR_ARG,
                    MPI_Type_indexed(1, &bl, &d, MPI_INT, &t));
        MPI_Aint p2 = 0;
        MT_CLASS_EQ("MPI_Pack_external with \"native\"", MPI_ERR_ARG,
                    MPI_Pack_external("native", buf, 1, MPI_INT, pk, sizeof pk, &p2));
        MT_CLASS_EQ("MPI_Type_size of garbage", MPI_ERR_TYPE,
                    MPI_Type_size((MPI_Datatype)(intptr_t)0x12345678, &sz));
        pos = 0;
        MT_CLASS_EQ("MPI_Pack past the end of outbuf", MPI_ERR_TRUNCATE,
                    MPI_Pack(buf, 16, MPI_INT, pk, 8, &pos, MPI_COMM_WORLD));
    }

    /* Sizes and bounds that do not fit in MPI_Count: the _x and _c queries say MPI_UNDEFINED (the
     * int ones too), and communication with such a type is refused with MPI_ERR_TYPE; a count
     * whose bytes do not fit is MPI_ERR_COUNT. (MPICH 4.0 wraps: Weft-only.) */
    if (mt_weft) {
        MPI_Datatype big, huge, far;
        MPI_Count csz = 0, clb = 0, cext = 0;
        MPI_Aint alb = 0, aext = 0;
        MPI_Request rq = MPI_REQUEST_NULL;
        MT_CALL(MPI_Type_contiguous(INT_MAX, MPI_DOUBLE, &big));
        MT_CALL(MPI_Type_size_x(big, &csz));
        MT_EQ("size_x of contiguous(INT_MAX, double)", (MPI_Count)INT_MAX * 8, csz);
        MT_CALL(MPI_Type_size(big, &sz));
        MT_EQ("size (int) of contiguous(INT_MAX, double)", MPI_UNDEFINED, sz);
        MT_CALL(MPI_Type_contiguous(INT_MAX, big, &huge));
        MT_CALL(MPI_Type_size_x(huge, &csz));
        MT_EQ("size_x of contiguous(INT_MAX, contiguous(INT_MAX, double))", MPI_UNDEFINED, csz);
        csz = 0;
        MT_CALL(MPI_Type_size_c(huge, &csz));
        MT_EQ("size_c of the same", MPI_UNDEFINED, csz);
        MT_CALL(MPI_Type_size(huge, &sz));
        MT_EQ("size of the same", MPI_UNDEFINED, sz);
        MT_CALL(MPI_Type_get_extent_x(huge, &clb, &cext));
        MT_TRUE(clb == MPI_UNDEFINED && cext == MPI_UNDEFINED,
                "get_extent_x of the same expected MPI_UNDEFINED twice got %lld, %lld",
                (long long)clb, (long long)cext);
        MT_CALL(MPI_Type_get_extent(huge, &alb, &aext));
        MT_TRUE(alb == MPI_UNDEFINED && aext == MPI_UNDEFINED,
                "get_extent of the same expected MPI_UNDEFINED twice got %lld, %lld",
                (long long)alb, (long long)aext);
        MT_CALL(MPI_Type_get_true_extent_x(huge, &clb, &cext));
        MT_EQ("get_true_extent_x of the same: extent", MPI_UNDEFINED, cext);
        MT_CALL(MPI_Type_commit(&huge));
        MT_CLASS_EQ("MPI_Send of a type whose size overflows", MPI_ERR_TYPE,
                    MPI_Send(buf, 1, huge, mt_rank, 0, MPI_COMM_WORLD));
        MT_CLASS_EQ("MPI_Isend of it", MPI_ERR_TYPE,
                    MPI_Isend(buf, 1, huge, mt_rank, 0, MPI_COMM_WORLD, &rq));
        MT_CLASS_EQ("MPI_Recv of it", MPI_ERR_TYPE,
                    MPI_Recv(buf, 1, huge, mt_rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MT_TRUE(rq == MPI_REQUEST_NULL, "a refused Isend wrote its request");
        pos = 0;
        MT_CLASS_EQ("MPI_Pack of it", MPI_ERR_TYPE,
                    MPI_Pack(buf, 1, huge, pk, sizeof pk, &pos, MPI_COMM_WORLD));
        MT_CLASS_EQ("MPI_Bcast of it", MPI_ERR_TYPE, MPI_Bcast(buf, 1, huge, 0, MPI_COMM_WORLD));
        /* a type built from it inherits the overflow */
        MPI_Datatype two;
        MT_CALL(MPI_Type_contiguous(2, huge, &two));
        MT_CALL(MPI_Type_size_x(two, &csz));
        MT_EQ("size_x of contiguous(2, that type)", MPI_UNDEFINED, csz);
        MT_CALL(MPI_Type_free(&two));
        /* a fine type, too many of them */
        MT_CALL(MPI_Type_commit(&big));
        MT_CLASS_EQ("MPI_Send_c of 2^40 x 16 GiB", MPI_ERR_COUNT,
                    MPI_Send_c(buf, (MPI_Count)1 << 40, big, mt_rank, 0, MPI_COMM_WORLD));
        MT_CLASS_EQ("MPI_Irecv_c of 2^40 x 16 GiB", MPI_ERR_COUNT,
                    MPI_Irecv_c(buf, (MPI_Count)1 << 40, big, mt_rank, 0, MPI_COMM_WORLD, &rq));
        /* bounds that overflow with a size that fits: extent undefined, sends refused */
        MT_CALL(MPI_Type_create_hvector(3, 1, (MPI_Aint)1 << 62, MPI_INT, &far));
        MT_CALL(MPI_Type_size_x(far, &csz));
        MT_EQ("size_x of hvector(3, 1, 2^62, int)", 12, csz);
        MT_CALL(MPI_Type_get_extent_x(far, &clb, &cext));
        MT_EQ("get_extent_x of hvector(3, 1, 2^62, int): extent", MPI_UNDEFINED, cext);
        MT_CALL(MPI_Type_commit(&far));
        MT_CLASS_EQ("MPI_Send of hvector(3, 1, 2^62, int)", MPI_ERR_TYPE,
                    MPI_Send(buf, 1, far, mt_rank, 0, MPI_COMM_WORLD));
        MT_CALL(MPI_Type_free(&far));
        MT_CALL(MPI_Type_vector(2, 1, INT_MAX, big, &far));   /* stride x extent overflows */
        MT_CALL(MPI_Type_get_extent_x(far, &clb, &cext));
        MT_EQ("get_extent_x of vector(2, 1, INT_MAX, 16 GiB type): extent", MPI_UNDEFINED, cext);
        MT_CALL(MPI_Type_free(&far));
        MT_CALL(MPI_Type_free(&huge));
        MT_CALL(MPI_Type_free(&big));
        /* still fine afterwards */
        MT_CALL(MPI_Sendrecv(buf, 1, MPI_INT, mt_rank, 5, buf + 1, 1, MPI_INT, mt_rank, 5,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }

    /* external32: big-endian, one swap per basic element; round trip restores the data.
     * (MPICH 4.0 dies in MPI_Pack_external_size on this struct: Weft-only.) */
    if (mt_weft) {
        int bl[3] = { 1, 2, 1 };
        MPI_Aint d[3] = { 0, 8, 24 };
        MPI_Datatype ty[3] = { MPI_INT, MPI_DOUBLE, MPI_SHORT };
        struct { int i; int pad; double x[2]; short s; } in = { 0x01020304, 0, { 1.5, -2.25 }, 0x0a0b },
                                                           out;
        MT_CALL(MPI_Type_create_struct(3, bl, d, ty, &t));
        MT_CALL(MPI_Type_commit(&t));
        MPI_Aint esz = 0, p = 0;
        MT_CALL(MPI_Pack_external_size("external32", 1, t, &esz));
        MT_EQ("external32 size of {int, double[2], short}", 4 + 16 + 2, esz);
        unsigned char ext[64];
        MT_CALL(MPI_Pack_external("external32", &in, 1, t, ext, sizeof ext, &p));
        MT_EQ("external32 position", 22, p);
        unsigned char want_i[4] = { 1, 2, 3, 4 }, want_s[2] = { 0x0a, 0x0b };
        MT_TRUE(memcmp(ext, want_i, 4) == 0, "external32 int expected 01 02 03 04 got %02x %02x %02x %02x",
                ext[0], ext[1], ext[2], ext[3]);
        MT_TRUE(memcmp(ext + 20, want_s, 2) == 0, "external32 short expected 0a 0b got %02x %02x",
                ext[20], ext[21]);
        MT_TRUE(ext[4] == 0x3f && ext[5] == 0xf8, "external32 1.5 expected 3f f8 ... got %02x %02x",
                ext[4], ext[5]);
        memset(&out, 0, sizeof out);
        p = 0;
        MT_CALL(MPI_Unpack_external("external32", ext, sizeof ext, &p, &out, 1, t));
        MT_TRUE(out.i == in.i && out.x[0] == in.x[0] && out.x[1] == in.x[1] && out.s == in.s,
                "external32 round trip changed the data");
        MT_CALL(MPI_Type_free(&t));
    }
    return mt_finish("dtype_err");
}
