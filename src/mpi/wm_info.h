/* Info objects: ordered (key, value) string pairs.
 *
 * A user info object is a WM_OBJ_INFO in the handle arena; its pairs live in malloc'd arrays that
 * the destroy function frees. MPI_INFO_ENV is a predefined, read-only object filled on first use
 * (command, argv, maxprocs, host, arch, wdir, thread_level).
 *
 * Other families use only the public PMPI_Info_* functions (e.g. PMPI_Info_get_string on the info
 * argument of their call); wm_info_get is the same without an error handler, for code that only
 * wants to peek at a hint.
 *
 * Concurrency contract: calls on distinct info objects are independent (any thread, no shared
 * lock). Calls on one object from two threads at once, one of them modifying it, are the
 * application's race (MPI makes it erroneous). MPI_INFO_ENV is filled once (pthread_once) and never
 * modified after, so any thread may read it.
 */
#ifndef WM_INFO_H
#define WM_INFO_H

#include <mpi.h>
#include <stdbool.h>
#include "mpi/wm_object.h"

typedef struct wm_info {
    wm_obj_t obj;      /* first: lifetime and handle */
    int      n, cap;   /* pairs in insertion order (MPI_Info_get_nthkey) */
    char   **keys;
    char   **vals;
} wm_info_t;

/* The info of handle h (MPI_INFO_ENV included), or NULL if h is not a valid info object. */
wm_info_t *wm_info_get(MPI_Info h);

/* The value of key in info h, or NULL (no such key, or h is MPI_INFO_NULL or invalid). The
 * pointer is valid until the key is set, deleted or the object freed. */
const char *wm_info_value(MPI_Info h, const char *key);

#endif
