#ifndef WM_DATATYPE_H
#define WM_DATATYPE_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include "core/wc_core.h"
#include "mpi/wm_object.h"
#include "util/wu_compiler.h"

/* Datatypes. */
/* ---- datatypes (predefined, contiguous) ---- */
typedef struct wm_type_info {
    uint32_t size;      /* bytes of data in one element */
    uint32_t extent;    /* bytes one element spans */
    uint8_t  elements;  /* basic elements in one element (2 for the pair types) */
} wm_type_info_t;

#define WM_TYPE_BASE 0x200
#define WM_TYPE_COUNT 0x100
extern wm_type_info_t wm_type_table[WM_TYPE_COUNT];
void wm_datatype_init(void);

static inline const wm_type_info_t *wm_type_get(MPI_Datatype t)
{
    uintptr_t i = (uintptr_t)t - WM_TYPE_BASE;
    if (i >= WM_TYPE_COUNT || wm_type_table[i].extent == 0)
        return NULL;
    return &wm_type_table[i];
}


#endif
