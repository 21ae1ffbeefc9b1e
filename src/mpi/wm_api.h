/* How an MPI entry point is defined: src/mpi/abi/gen_entry.py writes, from the ABI table, every
 * exported PMPI_<name> (src/mpi/gen/wm_entry_<family>.c), the weak alias MPI_<name> of it (so a
 * profiling library may define MPI_<name> and call PMPI_<name>), and the declaration of the hidden
 * function wm_impl_MPI_<name> that PMPI_<name> calls (src/mpi/gen/wm_entry.h). The files of
 * src/mpi define the wm_impl_ functions only; see docs/abi.md.
 *
 * Code inside the library calls PMPI_ names only. */
#ifndef WM_API_H
#define WM_API_H

#include "util/wu_compiler.h"
#include "mpi/gen/wm_entry.h"

#define WM_API WU_EXPORT

#endif
