#ifndef WM_DATATYPE_H
#define WM_DATATYPE_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include "core/wc_core.h"
#include "core/wc_dtype.h"
#include "mpi/wm_object.h"
#include "util/wu_compiler.h"

/* Datatypes: predefined ones in a static table indexed by the standard ABI's handle value, user
 * ones in the object arena (wm_object.h). Point-to-point moves `count * layout.size` packed bytes;
 * a `layout.contig` type needs no pack engine. docs/datatypes.md describes the flattening.
 * Concurrency contract: a datatype's fields are written by its constructor before the handle is
 * handed out, and afterwards only `committed` (MPI_Type_commit) and `name` change, by calls the
 * application must not race with uses of the same type; any thread may read it.
 */

/* What the constructor was given (MPI_Type_get_envelope / MPI_Type_get_contents), in one
 * malloc'd block owned by the type. The derived types in `types` are retained (a derived type's
 * handle is its object's address plus a generation, so the object is found even once the user
 * has freed the handle). */
typedef struct wm_type_contents {
    int           nints, naddrs, nlarge, ntypes;
    bool          retained;
    int          *ints;
    MPI_Aint     *addrs;
    MPI_Count    *large;
    MPI_Datatype *types;
} wm_type_contents_t;

#define WM_TYPE_INLINE_SEGS 2

typedef struct wm_datatype {
    wm_obj_t   obj;          /* first: lifetime and handle */
    wc_dtype_t layout;       /* the packed form (core/wc_dtype.h) */
    uint64_t   size;         /* MPI_Type_size: packed bytes per element (== layout.size) */
    uint64_t   max_count;    /* the largest count whose bytes fit in MPI_Count; 0 when the
                                type's own size or bounds do not (one compare per message) */
    int64_t    extent;       /* MPI_Type_get_extent (== layout.extent) */
    int64_t    lb;           /* MPI_Type_get_extent: lower bound */
    int64_t    true_lb;      /* MPI_Type_get_true_extent: bounds of the data itself */
    int64_t    true_extent;
    uint64_t   elements;     /* basic elements in one element (2 for the pair types) */
    uint16_t   align;        /* alignment of the most aligned basic type (struct padding) */
    bool       committed;    /* predefined types always; derived ones after MPI_Type_commit */
    bool       sticky_lb;    /* lb / ub set explicitly (MPI_Type_create_resized, subarray, darray) */
    bool       sticky_ub;
    /* The size (bytes of one element) or the bounds (lb, extent, true bounds) do not fit in
     * MPI_Count: the queries give MPI_UNDEFINED and communication with the type is refused
     * (MPI_ERR_TYPE); size, extent and bounds are then 0. Set by the constructor. */
    bool       size_overflow;
    bool       bounds_overflow;
    int        combiner;     /* MPI_COMBINER_* */
    wm_type_contents_t *contents;   /* NULL for predefined types */
    wc_dtype_seg_t inline_segs[WM_TYPE_INLINE_SEGS];   /* layout.segs when nsegs is small */
    char       name[MPI_MAX_OBJECT_NAME];
} wm_datatype_t;

#define WM_TYPE_BASE 0x200
#define WM_TYPE_COUNT 0x100
extern wm_datatype_t wm_type_table[WM_TYPE_COUNT];
void wm_datatype_init(void);

/* The datatype of handle t, or NULL if t is not a valid datatype. */
static inline const wm_datatype_t *wm_type_get(MPI_Datatype t)
{
    uintptr_t i = (uintptr_t)t - WM_TYPE_BASE;
    if (WU_LIKELY(i < WM_TYPE_COUNT))
        return wm_type_table[i].extent ? &wm_type_table[i] : NULL;
    return (const wm_datatype_t *)wm_obj_lookup((uintptr_t)t, WM_OBJ_TYPE);
}

/* The datatype argument `t` of entry point fn: the type, or NULL after raising MPI_ERR_TYPE
 * (code in *rc_p). Usable before MPI_Init (sets up the predefined table). */
const wm_datatype_t *wm_type_arg(const char *fn, MPI_Datatype t, int *rc_p);

/* Basic elements in the first `bytes` packed bytes of elements of ti; -1 if a basic element is
 * cut (MPI_UNDEFINED for MPI_Get_elements). */
int64_t wm_type_elements(const wm_datatype_t *ti, uint64_t bytes);

/* external32 (MPI 4.1 section 14.5.2) gives long and unsigned long 4 bytes, wchar_t 2 and long
 * double 16 (IEEE binary128), whatever the platform's sizes: a segment of such elements carries,
 * above the byte-swap unit in the low 8 bits of its `swap`, how its elements convert
 * (wm_type_pack.c). WM_EXT32_SAME: the same size, only byte order changes. */
enum { WM_EXT32_SAME = 0, WM_EXT32_LONG, WM_EXT32_ULONG, WM_EXT32_WCHAR, WM_EXT32_LDOUBLE };
#define WM_EXT32_SHIFT 8
#define WM_EXT32_SWAP(swap) ((swap) & 0xffu)
#define WM_EXT32_CONV(swap) ((swap) >> WM_EXT32_SHIFT)

/* A type of MPI_Type_create_f90_real / _complex / _integer (wm_type_f90.c): predefined in the
 * standard's sense (never freed by the user, committed, reducible with predefined operations) but
 * an object of the arena, one per (combiner, p, r), living until MPI_Finalize. Its contents hold
 * the integers of its envelope, (p, r) or (r), and as types[0] the named sized type it behaves as
 * (MPI_REAL4, ...): MPI_Type_get_envelope and MPI_Type_get_contents do not show that type (the
 * standard's num_datatypes is 0), the reductions find their basic type through it. */
static inline bool wm_type_is_f90(const wm_datatype_t *t)
{
    return t->combiner == MPI_COMBINER_F90_REAL || t->combiner == MPI_COMBINER_F90_COMPLEX ||
           t->combiner == MPI_COMBINER_F90_INTEGER;
}

/* "MPI_Type_create_f90_real(6, MPI_UNDEFINED)": how an F90 type was made, for messages. */
void wm_type_f90_describe(const wm_datatype_t *t, char *buf, size_t n);

/* A new datatype object sharing ti's definition (MPI_Type_get_contents hands these out for
 * derived types: the user frees them). NULL: out of memory. */
wm_datatype_t *wm_type_clone(const wm_datatype_t *ti);

#endif
