/* How an MPI entry point is defined: the real function is PMPI_<name>, exported; MPI_<name> is a
 * weak alias of it, so a profiling library may define MPI_<name> and call PMPI_<name>.
 *
 *     WM_API int PMPI_Send(...) { ... }
 *     WM_ALIAS(MPI_Send)
 *
 * Code inside the library calls PMPI_ names only. */
#ifndef WM_API_H
#define WM_API_H

#include "util/wu_compiler.h"

#define WM_API WU_EXPORT
#define WM_ALIAS(name) \
    extern __typeof__(P##name) name __attribute__((weak, alias("P" #name), visibility("default")));

#endif
