/* Array datatypes: MPI_Type_create_subarray and MPI_Type_create_darray (and _c), flattened one
 * dimension at a time from the fastest-varying one (the last in C order, the first in Fortran
 * order), each dimension repeating the previous dimension's segment list. Both types have lb 0
 * and the extent of the whole array, as the standard defines them (through resized). */
#include "mpi/wm_type_build.h"

#include <stdlib.h>
#include <string.h>

#define WM_MAX_DIMS 64

/* Dimension k in fastest-first order. */
static inline int wm_dim(int ndims, int order, int k)
{
    return order == MPI_ORDER_C ? ndims - 1 - k : k;
}

/* cur := next (next is emptied). */
static void wm_segbuf_swap(wm_segbuf_t *cur, wm_segbuf_t *next)
{
    cur->oom |= next->oom;
    wm_segbuf_free(cur);
    *cur = *next;
    *next = (wm_segbuf_t){ 0 };
}

static int wm_subarray_impl(const char *fn, bool large, int ndims, wm_iarr_t sizes,
                            wm_iarr_t subsizes, wm_iarr_t starts, int order, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    if (!newtype)
        return wm_error(NULL, MPI_ERR_ARG, fn, "newtype is NULL");
    int rc = MPI_SUCCESS;
    const wm_datatype_t *old = wm_type_arg(fn, oldtype, &rc);
    if (!old)
        return rc;
    if (ndims <= 0 || ndims > WM_MAX_DIMS)
        return wm_error(NULL, MPI_ERR_ARG, fn, "ndims %d is not in 1..%d", ndims, WM_MAX_DIMS);
    if (!sizes.p || !subsizes.p || !starts.p)
        return wm_error(NULL, MPI_ERR_ARG, fn, "an array argument is NULL");
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return wm_error(NULL, MPI_ERR_ARG, fn, "order %d is neither MPI_ORDER_C nor "
                        "MPI_ORDER_FORTRAN", order);
    for (int i = 0; i < ndims; i++) {
        int64_t n = wm_iarr_at(sizes, i), s = wm_iarr_at(subsizes, i), st = wm_iarr_at(starts, i);
        if (n <= 0 || s < 0 || s > n || st < 0 || st > n - s)
            return wm_error(NULL, MPI_ERR_ARG, fn,
                            "dimension %d: size %lld, subsize %lld, start %lld are inconsistent",
                            i, (long long)n, (long long)s, (long long)st);
    }
    wm_segbuf_t cur = { 0 }, next = { 0 };
    int64_t stride = old->extent, offset = 0;
    wm_segbuf_rep(&cur, old->layout.segs, old->layout.nsegs, 1, 0, 0);
    for (int k = 0; k < ndims; k++) {
        int d = wm_dim(ndims, order, k);
        wm_segbuf_rep(&next, cur.segs, cur.n, (uint64_t)wm_iarr_at(subsizes, d), 0, stride);
        wm_segbuf_swap(&cur, &next);
        offset += wm_iarr_at(starts, d) * stride;
        stride *= wm_iarr_at(sizes, d);
    }
    wm_segbuf_rep(&next, cur.segs, cur.n, 1, offset, 0);
    wm_segbuf_swap(&cur, &next);

    wm_type_contents_t *ct = large ? wm_contents_new(2, 0, 3 * ndims, 1)
                                   : wm_contents_new(3 * ndims + 2, 0, 0, 1);
    if (!ct) {
        wm_segbuf_free(&cur);
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    ct->ints[0] = ndims;
    for (int i = 0; i < ndims; i++) {
        if (large) {
            ct->large[i] = wm_iarr_at(sizes, i);
            ct->large[ndims + i] = wm_iarr_at(subsizes, i);
            ct->large[2 * ndims + i] = wm_iarr_at(starts, i);
        } else {
            ct->ints[1 + i] = (int)wm_iarr_at(sizes, i);
            ct->ints[1 + ndims + i] = (int)wm_iarr_at(subsizes, i);
            ct->ints[1 + 2 * ndims + i] = (int)wm_iarr_at(starts, i);
        }
    }
    ct->ints[large ? 1 : 3 * ndims + 1] = order;
    ct->types[0] = oldtype;
    wm_contents_retain(ct);
    return wm_type_finish_resized(fn, &cur, 0, stride, old->align, MPI_COMBINER_SUBARRAY, ct,
                                  newtype);
}

/* Subarray, one helper serving the int form and its _c twin (WM_TWINS_MPI_X of
 * src/mpi/gen/wm_entry.h); the _c form records large counts. */
static inline int wm_subarray(const char *fn, int ndims, wm_ints_t array_of_sizes,
                              wm_ints_t array_of_subsizes, wm_ints_t array_of_starts, int order,
                              MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return wm_subarray_impl(fn, wm_twin_is_c(fn), ndims, wm_iarr_of(array_of_sizes),
                            wm_iarr_of(array_of_subsizes), wm_iarr_of(array_of_starts), order,
                            oldtype, newtype);
}

WM_TWINS_MPI_Type_create_subarray(wm_subarray)

static int wm_darray_impl(const char *fn, bool large, int size, int rank, int ndims,
                          wm_iarr_t gsizes, const int distribs[], const int dargs[],
                          const int psizes[], int order, MPI_Datatype oldtype,
                          MPI_Datatype *newtype)
{
    if (!newtype)
        return wm_error(NULL, MPI_ERR_ARG, fn, "newtype is NULL");
    int rc = MPI_SUCCESS;
    const wm_datatype_t *old = wm_type_arg(fn, oldtype, &rc);
    if (!old)
        return rc;
    if (ndims <= 0 || ndims > WM_MAX_DIMS)
        return wm_error(NULL, MPI_ERR_ARG, fn, "ndims %d is not in 1..%d", ndims, WM_MAX_DIMS);
    if (!gsizes.p || !distribs || !dargs || !psizes)
        return wm_error(NULL, MPI_ERR_ARG, fn, "an array argument is NULL");
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return wm_error(NULL, MPI_ERR_ARG, fn, "order %d is neither MPI_ORDER_C nor "
                        "MPI_ORDER_FORTRAN", order);
    int64_t nprocs = 1;
    for (int i = 0; i < ndims; i++) {
        if (psizes[i] <= 0 || wm_iarr_at(gsizes, i) <= 0)
            return wm_error(NULL, MPI_ERR_ARG, fn, "dimension %d: gsize %lld, psize %d", i,
                            (long long)wm_iarr_at(gsizes, i), psizes[i]);
        nprocs *= psizes[i];
    }
    if (size <= 0 || nprocs != size || rank < 0 || rank >= size)
        return wm_error(NULL, MPI_ERR_ARG, fn,
                        "size %d, rank %d and the process grid (%lld processes) disagree", size,
                        rank, (long long)nprocs);
    int coords[WM_MAX_DIMS];
    for (int i = ndims - 1, r = rank; i >= 0; i--) {   /* processes in row-major order */
        coords[i] = r % psizes[i];
        r /= psizes[i];
    }
    int64_t darg[WM_MAX_DIMS];
    for (int i = 0; i < ndims; i++) {
        int64_t g = wm_iarr_at(gsizes, i), p = psizes[i];
        if (distribs[i] == MPI_DISTRIBUTE_NONE) {
            darg[i] = g;
        } else if (distribs[i] == MPI_DISTRIBUTE_BLOCK) {
            darg[i] = dargs[i] == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : dargs[i];
            if (darg[i] <= 0 || darg[i] * p < g)
                return wm_error(NULL, MPI_ERR_ARG, fn,
                                "dimension %d: block size %lld * %lld processes < gsize %lld", i,
                                (long long)darg[i], (long long)p, (long long)g);
        } else if (distribs[i] == MPI_DISTRIBUTE_CYCLIC) {
            darg[i] = dargs[i] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : dargs[i];
            if (darg[i] <= 0)
                return wm_error(NULL, MPI_ERR_ARG, fn, "dimension %d: darg %d", i, dargs[i]);
        } else {
            return wm_error(NULL, MPI_ERR_ARG, fn, "dimension %d: distribution %d", i,
                            distribs[i]);
        }
    }
    wm_segbuf_t cur = { 0 }, next = { 0 };
    int64_t ext = old->extent;
    wm_segbuf_rep(&cur, old->layout.segs, old->layout.nsegs, 1, 0, 0);
    for (int k = 0; k < ndims; k++) {
        int d = wm_dim(ndims, order, k);
        int64_t g = wm_iarr_at(gsizes, d), p = psizes[d], c = coords[d];
        if (distribs[d] == MPI_DISTRIBUTE_NONE)
            p = 1, c = 0;
        for (int64_t j = c; j * darg[d] < g && !next.oom; j += p) {
            int64_t len = g - j * darg[d] < darg[d] ? g - j * darg[d] : darg[d];
            wm_segbuf_rep(&next, cur.segs, cur.n, (uint64_t)len, j * darg[d] * ext, ext);
        }
        wm_segbuf_swap(&cur, &next);
        ext *= g;
    }

    int n = ndims;
    wm_type_contents_t *ct = large ? wm_contents_new(3 * n + 4, 0, n, 1)
                                   : wm_contents_new(4 * n + 4, 0, 0, 1);
    if (!ct) {
        wm_segbuf_free(&cur);
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    int *ip = ct->ints;
    *ip++ = size;
    *ip++ = rank;
    *ip++ = ndims;
    for (int i = 0; i < n; i++) {
        if (large)
            ct->large[i] = wm_iarr_at(gsizes, i);
        else
            *ip++ = (int)wm_iarr_at(gsizes, i);
    }
    memcpy(ip, distribs, (size_t)n * sizeof(int));
    memcpy(ip + n, dargs, (size_t)n * sizeof(int));
    memcpy(ip + 2 * n, psizes, (size_t)n * sizeof(int));
    ip[3 * n] = order;
    ct->types[0] = oldtype;
    wm_contents_retain(ct);
    return wm_type_finish_resized(fn, &cur, 0, ext, old->align, MPI_COMBINER_DARRAY, ct, newtype);
}

static inline int wm_darray(const char *fn, int size, int rank, int ndims,
                            wm_ints_t array_of_gsizes, const int array_of_distribs[],
                            const int array_of_dargs[], const int array_of_psizes[], int order,
                            MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return wm_darray_impl(fn, wm_twin_is_c(fn), size, rank, ndims, wm_iarr_of(array_of_gsizes),
                          array_of_distribs, array_of_dargs, array_of_psizes, order, oldtype,
                          newtype);
}

WM_TWINS_MPI_Type_create_darray(wm_darray)
