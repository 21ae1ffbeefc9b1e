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
 * a `layout.contig` type needs no pack engine.
 * Concurrency contract: a datatype is immutable once created (committed); any thread may read it.
 */
typedef struct wm_datatype {
    wm_obj_t   obj;          /* first: lifetime and handle */
    wc_dtype_t layout;       /* the packed form (core/wc_dtype.h) */
    uint64_t   size;         /* MPI_Type_size */
    int64_t    extent;       /* MPI_Type_get_extent */
    uint8_t    elements;     /* basic elements in one element (2 for the pair types) */
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


#endif
