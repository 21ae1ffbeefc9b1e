/* Datatype constructors: contiguous, vector, hvector, indexed, hindexed, indexed_block,
 * hindexed_block, struct, resized (and their large-count _c forms). Each flattens its old types'
 * segments into the new layout (wm_type_build.h) and records its arguments for
 * MPI_Type_get_contents: the int forms in ints/addrs, the _c forms in large counts. */
#include "mpi/wm_type_build.h"

#include <limits.h>
#include <stdlib.h>

enum { WM_CT_INTS, WM_CT_ADDRS, WM_CT_LARGE };

/* Append n values of a to the contents array `where`, at *idx. */
static void wm_put(wm_type_contents_t *c, int where, int *idx, wm_iarr_t a, int64_t n)
{
    for (int64_t i = 0; i < n; i++, (*idx)++) {
        int64_t v = wm_iarr_at(a, (uint64_t)i);
        if (where == WM_CT_INTS)
            c->ints[*idx] = (int)v;
        else if (where == WM_CT_ADDRS)
            c->addrs[*idx] = (MPI_Aint)v;
        else
            c->large[*idx] = (MPI_Count)v;
    }
}

static int wm_newtype_check(const char *fn, MPI_Datatype *newtype)
{
    if (!newtype)
        return wm_error(NULL, MPI_ERR_ARG, fn, "newtype is NULL");
    return MPI_SUCCESS;
}

/* Contents made: retain its types and build the type; no contents: out of memory. */
static int wm_ctor_done(const char *fn, wm_segbuf_t *b, const wm_bounds_t *bd, bool pad,
                        int combiner, wm_type_contents_t *ct, MPI_Datatype *newtype)
{
    if (!ct) {
        wm_segbuf_free(b);
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    wm_contents_retain(ct);
    return wm_type_finish(fn, b, bd, pad, combiner, ct, newtype);
}

/* ---- contiguous, vector, hvector -------------------------------------------------------------- */

/* count blocks of bl copies of old, stride bytes apart. */
static int wm_vector_build(const char *fn, int64_t count, int64_t bl, int64_t stride,
                           const wm_datatype_t *old, wm_segbuf_t *b, wm_bounds_t *bd)
{
    if (count < 0)
        return wm_error(NULL, MPI_ERR_COUNT, fn, "count %lld is negative", (long long)count);
    if (bl < 0)
        return wm_error(NULL, MPI_ERR_ARG, fn, "blocklength %lld is negative", (long long)bl);
    wm_segbuf_t blk = { 0 };
    wm_segbuf_rep(&blk, old->layout.segs, old->layout.nsegs, (uint64_t)bl, 0, old->extent);
    wm_segbuf_rep(b, blk.segs, blk.n, (uint64_t)count, 0, stride);
    b->oom |= blk.oom;
    wm_segbuf_free(&blk);
    int64_t last;
    if (count > 0) {
        wm_bounds_add(bd, old, 0, (uint64_t)bl);
        if (__builtin_mul_overflow(count - 1, stride, &last))
            bd->overflow = true;
        else
            wm_bounds_add(bd, old, last, (uint64_t)bl);
    }
    return MPI_SUCCESS;
}

static int wm_vector_impl(const char *fn, int combiner, bool large, int64_t count, int64_t bl,
                          int64_t stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    int rc = wm_newtype_check(fn, newtype);
    if (rc)
        return rc;
    const wm_datatype_t *old = wm_type_arg(fn, oldtype, &rc);
    if (!old)
        return rc;
    if (count < 0)
        return wm_error(NULL, MPI_ERR_COUNT, fn, "count %lld is negative", (long long)count);
    int64_t stride_bytes = stride;
    wm_segbuf_t b = { 0 };
    wm_bounds_t bd = { 0 };
    if (combiner == MPI_COMBINER_VECTOR && __builtin_mul_overflow(stride, old->extent, &stride_bytes))
        bd.overflow = true;   /* the bytes wrap; the type's bounds are undefined */
    if (combiner == MPI_COMBINER_CONTIGUOUS)
        rc = wm_vector_build(fn, 1, count, 0, old, &b, &bd);
    else
        rc = wm_vector_build(fn, count, bl, stride_bytes, old, &b, &bd);
    if (rc)
        return rc;
    int nargs = combiner == MPI_COMBINER_CONTIGUOUS ? 1 : 3;
    wm_type_contents_t *ct;
    if (large) {
        ct = wm_contents_new(0, 0, nargs, 1);
        if (ct) {
            ct->large[0] = count;
            if (nargs == 3) {
                ct->large[1] = bl;
                ct->large[2] = stride;
            }
        }
    } else if (combiner == MPI_COMBINER_HVECTOR) {
        ct = wm_contents_new(2, 1, 0, 1);
        if (ct) {
            ct->ints[0] = (int)count;
            ct->ints[1] = (int)bl;
            ct->addrs[0] = (MPI_Aint)stride;
        }
    } else {
        ct = wm_contents_new(nargs, 0, 0, 1);
        if (ct) {
            ct->ints[0] = (int)count;
            if (nargs == 3) {
                ct->ints[1] = (int)bl;
                ct->ints[2] = (int)stride;
            }
        }
    }
    if (ct)
        ct->types[0] = oldtype;
    return wm_ctor_done(fn, &b, &bd, false, combiner, ct, newtype);
}

/* Contiguous, vector and hvector, each helper serving an int form and its _c twin
 * (WM_TWINS_MPI_X of src/mpi/gen/wm_entry.h); the _c form records large counts. */
static inline int wm_contiguous(const char *fn, MPI_Count count, MPI_Datatype oldtype,
                                MPI_Datatype *newtype)
{
    return wm_vector_impl(fn, MPI_COMBINER_CONTIGUOUS, wm_twin_is_c(fn), count, 0, 0, oldtype,
                          newtype);
}

static inline int wm_vector(const char *fn, MPI_Count count, MPI_Count blocklength,
                            MPI_Count stride, MPI_Datatype oldtype, MPI_Datatype *newtype,
                            int combiner)
{
    return wm_vector_impl(fn, combiner, wm_twin_is_c(fn), count, blocklength, stride, oldtype,
                          newtype);
}

WM_TWINS_MPI_Type_contiguous(wm_contiguous)
WM_TWINS_MPI_Type_vector(wm_vector, MPI_COMBINER_VECTOR)
WM_TWINS_MPI_Type_create_hvector(wm_vector, MPI_COMBINER_HVECTOR)

/* ---- indexed family and struct ---------------------------------------------------------------- */

/* count blocks: block i is bl(i) copies of (types ? types[i] : old) at disp(i) bytes, times the
 * old type's extent when in_extents. */
static int wm_blocks_build(const char *fn, int64_t count, wm_iarr_t bl, wm_iarr_t disp,
                           bool in_extents, const wm_datatype_t *old, const MPI_Datatype *types,
                           wm_segbuf_t *b, wm_bounds_t *bd)
{
    if (count < 0)
        return wm_error(NULL, MPI_ERR_COUNT, fn, "count %lld is negative", (long long)count);
    if (count > 0 && ((bl.width && !bl.p) || (disp.width && !disp.p) || (!old && !types)))
        return wm_error(NULL, MPI_ERR_ARG, fn, "an array argument is NULL with count %lld",
                        (long long)count);
    for (int64_t i = 0; i < count; i++) {
        int64_t n = wm_iarr_at(bl, (uint64_t)i);
        const wm_datatype_t *t = old;
        if (types && !(t = wm_type_get(types[i]))) {
            wm_segbuf_free(b);
            return wm_error(NULL, MPI_ERR_TYPE, fn, "array_of_types[%lld] is not a valid datatype",
                            (long long)i);
        }
        if (n < 0) {
            wm_segbuf_free(b);
            return wm_error(NULL, MPI_ERR_ARG, fn, "blocklength %lld (block %lld) is negative",
                            (long long)n, (long long)i);
        }
        int64_t d;
        if (__builtin_mul_overflow(wm_iarr_at(disp, (uint64_t)i), in_extents ? t->extent : 1, &d)) {
            bd->overflow = true;   /* the displacement does not fit: bounds undefined */
            continue;
        }
        wm_segbuf_rep(b, t->layout.segs, t->layout.nsegs, (uint64_t)n, d, t->extent);
        wm_bounds_add(bd, t, d, (uint64_t)n);
    }
    return MPI_SUCCESS;
}

static int wm_indexed_impl(const char *fn, int combiner, bool large, int64_t count, wm_iarr_t bl,
                           wm_iarr_t disp, MPI_Datatype oldtype, const MPI_Datatype *types,
                           MPI_Datatype *newtype)
{
    int rc = wm_newtype_check(fn, newtype);
    if (rc)
        return rc;
    const wm_datatype_t *old = NULL;
    if (!types && !(old = wm_type_arg(fn, oldtype, &rc)))
        return rc;
    if (count > INT_MAX / 2 - 2)
        return wm_error(NULL, MPI_ERR_COUNT, fn, "count %lld is too large", (long long)count);
    bool in_extents = combiner == MPI_COMBINER_INDEXED || combiner == MPI_COMBINER_INDEXED_BLOCK;
    bool block = combiner == MPI_COMBINER_INDEXED_BLOCK || combiner == MPI_COMBINER_HINDEXED_BLOCK;
    if (block && bl.v < 0)
        return wm_error(NULL, MPI_ERR_ARG, fn, "blocklength %lld is negative", (long long)bl.v);
    wm_segbuf_t b = { 0 };
    wm_bounds_t bd = { 0 };
    rc = wm_blocks_build(fn, count, bl, disp, in_extents, old, types, &b, &bd);
    if (rc)
        return rc;
    int n = (int)count, nbl = block ? 1 : n;
    bool addr_disp = !large && !in_extents;     /* hindexed, hindexed_block, struct */
    int ntypes = types ? n : 1;
    wm_type_contents_t *ct;
    if (large)
        ct = wm_contents_new(0, 0, 1 + nbl + n, ntypes);
    else
        ct = wm_contents_new(1 + nbl + (addr_disp ? 0 : n), addr_disp ? n : 0, 0, ntypes);
    if (ct) {
        int where = large ? WM_CT_LARGE : WM_CT_INTS, i = 0, ia = 0;
        wm_put(ct, where, &i, WM_IARR_ONE(count), 1);
        wm_put(ct, where, &i, bl, nbl);
        if (addr_disp)
            wm_put(ct, WM_CT_ADDRS, &ia, disp, n);
        else
            wm_put(ct, where, &i, disp, n);
        for (int k = 0; k < ntypes; k++)
            ct->types[k] = types ? types[k] : oldtype;
    }
    return wm_ctor_done(fn, &b, &bd, types != NULL, combiner, ct, newtype);
}

/* The indexed family and struct, each helper serving an int form and its _c twin (WM_TWINS_MPI_X
 * of src/mpi/gen/wm_entry.h); the _c form records large counts. */
static inline int wm_indexed(const char *fn, MPI_Count count, wm_ints_t array_of_blocklengths,
                             wm_ints_t array_of_displacements, MPI_Datatype oldtype,
                             MPI_Datatype *newtype, int combiner)
{
    return wm_indexed_impl(fn, combiner, wm_twin_is_c(fn), count,
                           wm_iarr_of(array_of_blocklengths), wm_iarr_of(array_of_displacements),
                           oldtype, NULL, newtype);
}

static inline int wm_indexed_block(const char *fn, MPI_Count count, MPI_Count blocklength,
                                   wm_ints_t array_of_displacements, MPI_Datatype oldtype,
                                   MPI_Datatype *newtype, int combiner)
{
    return wm_indexed_impl(fn, combiner, wm_twin_is_c(fn), count, WM_IARR_ONE(blocklength),
                           wm_iarr_of(array_of_displacements), oldtype, NULL, newtype);
}

static inline int wm_struct(const char *fn, MPI_Count count, wm_ints_t array_of_blocklengths,
                            wm_ints_t array_of_displacements, const MPI_Datatype array_of_types[],
                            MPI_Datatype *newtype)
{
    if (count > 0 && !array_of_types)
        return wm_error(NULL, MPI_ERR_ARG, fn, "array_of_types is NULL");
    static const MPI_Datatype none[1] = { MPI_DATATYPE_NULL };
    return wm_indexed_impl(fn, MPI_COMBINER_STRUCT, wm_twin_is_c(fn), count,
                           wm_iarr_of(array_of_blocklengths), wm_iarr_of(array_of_displacements),
                           MPI_DATATYPE_NULL, array_of_types ? array_of_types : none, newtype);
}

WM_TWINS_MPI_Type_indexed(wm_indexed, MPI_COMBINER_INDEXED)
WM_TWINS_MPI_Type_create_hindexed(wm_indexed, MPI_COMBINER_HINDEXED)
WM_TWINS_MPI_Type_create_indexed_block(wm_indexed_block, MPI_COMBINER_INDEXED_BLOCK)
WM_TWINS_MPI_Type_create_hindexed_block(wm_indexed_block, MPI_COMBINER_HINDEXED_BLOCK)
WM_TWINS_MPI_Type_create_struct(wm_struct)

/* ---- resized ---------------------------------------------------------------------------------- */

static int wm_resized_impl(const char *fn, bool large, MPI_Datatype oldtype, int64_t lb,
                           int64_t extent, MPI_Datatype *newtype)
{
    int rc = wm_newtype_check(fn, newtype);
    if (rc)
        return rc;
    const wm_datatype_t *old = wm_type_arg(fn, oldtype, &rc);
    if (!old)
        return rc;
    wm_segbuf_t b = { 0 };
    for (uint64_t i = 0; i < old->layout.nsegs; i++) {
        const wc_dtype_seg_t *s = &old->layout.segs[i];
        wm_segbuf_append(&b, s->disp, s->count, s->blocklen, s->stride, s->unit, s->swap);
    }
    wm_type_contents_t *ct = large ? wm_contents_new(0, 0, 2, 1) : wm_contents_new(0, 2, 0, 1);
    if (!ct) {
        wm_segbuf_free(&b);
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    if (large) {
        ct->large[0] = lb;
        ct->large[1] = extent;
    } else {
        ct->addrs[0] = (MPI_Aint)lb;
        ct->addrs[1] = (MPI_Aint)extent;
    }
    ct->types[0] = oldtype;
    wm_contents_retain(ct);
    return wm_type_finish_resized(fn, &b, lb, extent, old->align, MPI_COMBINER_RESIZED, ct,
                                  newtype);
}

static inline int wm_resized(const char *fn, MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                             MPI_Datatype *newtype)
{
    return wm_resized_impl(fn, wm_twin_is_c(fn), oldtype, lb, extent, newtype);
}

WM_TWINS_MPI_Type_create_resized(wm_resized)

/* ---- value-index pairs (MINLOC / MAXLOC) ------------------------------------------------------ */

/* The predefined pair type of (value, index) if there is one, else MPI_DATATYPE_NULL (MPI 4.1: the
 * call returns a predefined type "if such a predefined type exists"; MPICH and Open MPI agree). */
int wm_impl_MPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                                     MPI_Datatype *pair_type)
{
    const char *fn = "MPI_Type_get_value_index";
    int rc = wm_newtype_check(fn, pair_type);
    if (rc)
        return rc;
    if (!wm_type_arg(fn, value_type, &rc) || !wm_type_arg(fn, index_type, &rc))
        return rc;
    static const struct { MPI_Datatype v, i, pair; } known[] = {
        { MPI_FLOAT, MPI_INT, MPI_FLOAT_INT },       { MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT },
        { MPI_LONG, MPI_INT, MPI_LONG_INT },         { MPI_INT, MPI_INT, MPI_2INT },
        { MPI_SHORT, MPI_INT, MPI_SHORT_INT },       { MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT },
        { MPI_REAL, MPI_REAL, MPI_2REAL },           { MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER },
        { MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION },
    };
    *pair_type = MPI_DATATYPE_NULL;
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
        if (known[k].v == value_type && known[k].i == index_type)
            *pair_type = known[k].pair;
    return MPI_SUCCESS;
}
