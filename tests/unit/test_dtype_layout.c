/* The flattening (src/mpi/wm_type_build.c): which layouts the constructors produce. Contiguous
 * data must come out as `contig` (no pack engine), regular patterns as one strided segment, and
 * the pair types without their padding. Calls the MPI constructors directly (no MPI_Init). */
#include <stdio.h>
#include <stdlib.h>
#include "mpi/wm_internal.h"

static int fails;

static const wc_dtype_t *L(MPI_Datatype t) { return &wm_type_get(t)->layout; }

static void expect(const char *what, MPI_Datatype t, bool contig, int64_t contig_off, uint64_t nsegs,
                   uint64_t size, int64_t extent)
{
    const wc_dtype_t *l = L(t);
    if (l->contig != contig || (contig && l->contig_off != contig_off) || l->nsegs != nsegs ||
        l->size != size || l->extent != extent) {
        fprintf(stderr, "%s: expected (contig %d off %lld, %llu segs, size %llu, extent %lld) got "
                "(contig %d off %lld, %llu segs, size %llu, extent %lld)\n", what, contig,
                (long long)contig_off, (unsigned long long)nsegs, (unsigned long long)size,
                (long long)extent, l->contig, (long long)l->contig_off,
                (unsigned long long)l->nsegs, (unsigned long long)l->size, (long long)l->extent);
        fails++;
    }
}

static void expect_seg(const char *what, MPI_Datatype t, uint64_t i, int64_t disp, uint64_t count,
                       uint64_t blocklen, int64_t stride)
{
    const wc_dtype_seg_t *s = &L(t)->segs[i];
    if (s->disp != disp || s->count != count || s->blocklen != blocklen ||
        (count > 1 && s->stride != stride)) {
        fprintf(stderr, "%s: segment %llu expected (disp %lld, %llu x %llu bytes, stride %lld) got "
                "(%lld, %llu x %llu, %lld)\n", what, (unsigned long long)i, (long long)disp,
                (unsigned long long)count, (unsigned long long)blocklen, (long long)stride,
                (long long)s->disp, (unsigned long long)s->count,
                (unsigned long long)s->blocklen, (long long)s->stride);
        fails++;
    }
}

int main(void)
{
    wm_datatype_init();
    MPI_Datatype t, u, v;

    expect("MPI_DOUBLE_INT", MPI_DOUBLE_INT, false, 0, 2, 12, 16);
    expect("MPI_2INT", MPI_2INT, true, 0, 1, 8, 8);
    expect("MPI_SHORT_INT", MPI_SHORT_INT, false, 0, 2, 6, 8);

    PMPI_Type_contiguous(10, MPI_INT, &t);
    expect("contiguous(10, int)", t, true, 0, 1, 40, 40);
    PMPI_Type_free(&t);
    PMPI_Type_contiguous(0, MPI_INT, &t);
    expect("contiguous(0, int)", t, true, 0, 0, 0, 0);
    PMPI_Type_free(&t);

    PMPI_Type_vector(5, 2, 2, MPI_DOUBLE, &t);
    expect("vector(5,2,2,double)", t, true, 0, 1, 80, 80);
    PMPI_Type_free(&t);
    PMPI_Type_vector(5, 1, 2, MPI_DOUBLE, &t);
    expect("vector(5,1,2,double)", t, false, 0, 1, 40, 72);
    expect_seg("vector(5,1,2,double)", t, 0, 0, 5, 8, 16);
    PMPI_Type_free(&t);
    PMPI_Type_vector(4, 1, -3, MPI_INT, &t);
    expect_seg("vector(4,1,-3,int)", t, 0, 0, 4, 4, -12);
    PMPI_Type_free(&t);

    int bl[4] = { 1, 1, 1, 1 }, di[4] = { 0, 3, 6, 9 };
    PMPI_Type_indexed(4, bl, di, MPI_INT, &t);
    expect("indexed at 0,3,6,9", t, false, 0, 1, 16, 40);
    expect_seg("indexed at 0,3,6,9", t, 0, 0, 4, 4, 12);
    PMPI_Type_free(&t);

    int sbl[2] = { 2, 1 };
    MPI_Aint sd[2] = { 0, 8 };
    MPI_Datatype st[2] = { MPI_INT, MPI_DOUBLE };
    PMPI_Type_create_struct(2, sbl, sd, st, &t);
    expect("struct{int[2], double}", t, true, 0, 2, 16, 16);
    PMPI_Type_free(&t);
    sbl[0] = 1;
    PMPI_Type_create_struct(2, sbl, sd, st, &t);
    expect("struct{int, double}", t, false, 0, 2, 12, 16);
    PMPI_Type_free(&t);

    MPI_Aint hd[1] = { 16 };
    int hbl[1] = { 3 };
    PMPI_Type_create_hindexed(1, hbl, hd, MPI_INT, &t);
    expect("hindexed one block at 16", t, true, 16, 1, 12, 12);   /* lb 16 */
    PMPI_Type_free(&t);

    PMPI_Type_create_resized(MPI_DOUBLE, 0, 16, &u);
    PMPI_Type_contiguous(3, u, &t);
    expect("contiguous(3, resized(double, 16))", t, false, 0, 1, 24, 48);
    expect_seg("contiguous(3, resized(double, 16))", t, 0, 0, 3, 8, 16);
    PMPI_Type_free(&t);
    PMPI_Type_free(&u);

    /* a vector of vectors: one series when the inner one runs on, else one per block */
    PMPI_Type_vector(4, 1, 2, MPI_DOUBLE, &v);
    PMPI_Type_create_hvector(3, 1, 64, v, &t);
    expect("hvector(3,1,64,vector(4,1,2,double))", t, false, 0, 1, 96, 184);
    expect_seg("hvector(3,1,64,vector(4,1,2,double))", t, 0, 0, 12, 8, 16);
    PMPI_Type_free(&t);
    PMPI_Type_create_hvector(3, 1, 100, v, &t);
    expect("hvector(3,1,100,vector(4,1,2,double))", t, false, 0, 3, 96, 256);
    PMPI_Type_free(&t);
    PMPI_Type_free(&v);

    /* 3-D subarray faces: one segment each; a box: one series per plane */
    int sizes[3] = { 8, 9, 10 };
    int faces[3][3] = { { 1, 9, 10 }, { 8, 1, 10 }, { 8, 9, 1 } };
    for (int f = 0; f < 3; f++) {
        int start[3] = { 0, 0, 0 };
        start[f] = 3;
        PMPI_Type_create_subarray(3, sizes, faces[f], start, MPI_ORDER_C, MPI_DOUBLE, &t);
        char what[64];
        snprintf(what, sizeof what, "subarray face %d", f);
        expect(what, t, false, 0, 1, (uint64_t)(faces[f][0] * faces[f][1] * faces[f][2]) * 8, 8 * 9 * 10 * 8);
        PMPI_Type_free(&t);
    }
    int box[3] = { 4, 5, 6 }, bstart[3] = { 1, 2, 3 };
    PMPI_Type_create_subarray(3, sizes, box, bstart, MPI_ORDER_C, MPI_DOUBLE, &t);
    expect("subarray box 4x5x6", t, false, 0, 4, 4 * 5 * 6 * 8, 8 * 9 * 10 * 8);
    expect_seg("subarray box 4x5x6", t, 0, ((1 * 9 + 2) * 10 + 3) * 8, 5, 48, 80);
    PMPI_Type_free(&t);

    wm_gc_collect();   /* freed types wait for a collection cycle (MPI_Finalize runs one) */
    if (fails) {
        fprintf(stderr, "test_dtype_layout: %d failures\n", fails);
        return 1;
    }
    printf("test_dtype_layout: ok\n");
    return 0;
}
