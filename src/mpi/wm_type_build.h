/* Building derived datatypes: the flattened layout (a growing list of segments that merges what it
 * can as segments are appended), the bounds (lb, ub, sticky markers) and the new type object.
 * docs/datatypes.md explains the flattening. Used by the constructors (wm_type_build.c,
 * wm_type_array.c) and by MPI_Type_dup / MPI_Type_get_contents (wm_datatype.c).
 * Concurrency contract: a builder belongs to the one call building a type.
 */
#ifndef WM_TYPE_BUILD_H
#define WM_TYPE_BUILD_H

#include "mpi/wm_internal.h"

typedef struct wm_segbuf {
    wc_dtype_seg_t *segs;
    uint64_t n, cap;
    bool oom;            /* an allocation failed: the list is incomplete */
} wm_segbuf_t;

/* Append one segment (count blocks of blocklen bytes, stride apart), merging it into the last
 * segment when the two describe one run or one constant-stride series. Empty segments vanish. */
void wm_segbuf_append(wm_segbuf_t *b, int64_t disp, uint64_t count, uint64_t blocklen,
                      int64_t stride, uint32_t unit, uint32_t swap);
/* Append reps copies of the segment list s[0..n), copy r shifted by disp0 + r * step. */
void wm_segbuf_rep(wm_segbuf_t *b, const wc_dtype_seg_t *s, uint64_t n, uint64_t reps,
                   int64_t disp0, int64_t step);
void wm_segbuf_free(wm_segbuf_t *b);

/* The bounds of a type map being assembled from blocks of old types. */
typedef struct wm_bounds {
    bool    any, any_slb, any_sub;
    int64_t lo, hi;          /* over all blocks */
    int64_t slo, shi;        /* over blocks of types with sticky lb / ub */
    uint16_t align;
    bool    overflow;        /* a bound does not fit in 64 bits (or an old type's did not) */
} wm_bounds_t;

/* A block of blocklen consecutive copies of t at byte displacement disp. */
void wm_bounds_add(wm_bounds_t *bd, const wm_datatype_t *t, int64_t disp, uint64_t blocklen);

/* Contents of a constructor call: one block, zeroed, with room for the arrays. NULL: no memory. */
wm_type_contents_t *wm_contents_new(int nints, int naddrs, int nlarge, int ntypes);
void wm_contents_free(wm_type_contents_t *c);   /* releases the types it names */
/* Retain the types named by c (call once c->types is filled). */
void wm_contents_retain(wm_type_contents_t *c);

/* Make the type object: takes the segments of b (b is emptied either way), bounds, combiner and
 * contents (owned by the type from here, also on failure). pad: round the extent up to the
 * alignment when no sticky ub (struct). On success *newtype is the handle. */
int wm_type_finish(const char *fn, wm_segbuf_t *b, const wm_bounds_t *bd, bool pad, int combiner,
                   wm_type_contents_t *contents, MPI_Datatype *newtype);
/* The same with explicit bounds (resized, subarray, darray): lb and extent sticky. */
int wm_type_finish_resized(const char *fn, wm_segbuf_t *b, int64_t lb, int64_t extent,
                           uint16_t align, int combiner, wm_type_contents_t *contents,
                           MPI_Datatype *newtype);

/* size, elements, true bounds and contiguity of t from its segments and extent; sets
 * size_overflow, and bounds_overflow when the true bounds do not fit (never clears it). */
void wm_type_derive(wm_datatype_t *t);

/* A view of an integer argument array of any width (int, MPI_Aint, MPI_Count), or one scalar. */
typedef struct wm_iarr {
    const void *p;
    int         width;    /* 4, 8, or 0 for the scalar v */
    int64_t     v;
} wm_iarr_t;
static inline int64_t wm_iarr_at(wm_iarr_t a, uint64_t i)
{
    return a.width == 4 ? ((const int *)a.p)[i] : a.width == 8 ? ((const int64_t *)a.p)[i] : a.v;
}
#define WM_IARR_ONE(x) ((wm_iarr_t){ NULL, 0, (int64_t)(x) })
/* The view of an array a WM_TWINS_ helper received as a descriptor (src/mpi/gen/wm_entry.h). */
static inline wm_iarr_t wm_iarr_of(wm_ints_t a)
{
    return (wm_iarr_t){ a.p, (int)a.width, 0 };
}

#endif
