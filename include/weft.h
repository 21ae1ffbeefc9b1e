/* Weft's extensions to MPI (MPIX_). Include after <mpi.h>; installed next to it.
 *
 * Dynamic broadcast (docs/dynbcast.md): the calling rank (the root) sends one buffer to any list
 * of ranks of comm. The destinations take part with ordinary receives from the root with that tag
 * (MPI_Recv, MPI_Irecv, wildcards, probes); they need not know about each other nor that a
 * broadcast is under way. The message carries its routing: ranks of the list forward it to others
 * of the list from inside the library's progress, without the application's help.
 *   dests: ndests distinct ranks of comm, not the root; MPI_PROC_NULL entries are skipped.
 * MPIX_Dynbcast returns when buf may be reused; MPIX_Idynbcast's request completes then (it is
 * not a promise that any destination has received). Order: see docs/dynbcast.md.
 */
#ifndef WEFT_H
#define WEFT_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_MPIX_DYNBCAST 1

int MPIX_Dynbcast(const void *buf, int count, MPI_Datatype datatype, const int dests[], int ndests,
                  int tag, MPI_Comm comm);
int MPIX_Idynbcast(const void *buf, int count, MPI_Datatype datatype, const int dests[],
                   int ndests, int tag, MPI_Comm comm, MPI_Request *request);

#ifdef __cplusplus
}
#endif

#endif
