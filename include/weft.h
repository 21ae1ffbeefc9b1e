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

/* Thread communicators (docs/threadcomm.md), as MPICH's extension: MPIX_Threadcomm_init is
 * collective over the process intracommunicator comm, each process giving how many of its threads
 * will be ranks; the handle is usable by a thread between its MPIX_Threadcomm_start and
 * MPIX_Threadcomm_finish (each of the num_threads threads calls both; finish is a barrier of all
 * the thread-ranks). Ranks: by comm rank of the process, then by the order in which its threads
 * called start. Between start and finish the threadcomm takes point-to-point calls (all modes,
 * wildcards, probes, nonblocking ones with the wait/test family), Barrier, Bcast, Reduce,
 * Allreduce, Gather, Scatter, Allgather, Alltoall (blocking and nonblocking), Comm_dup,
 * Comm_split, Comm_rank/size and derived datatypes. MPIX_Threadcomm_free: by one thread of each
 * process, after the last region (collective over comm). Regions may repeat. */
#define WEFT_MPIX_THREADCOMM 1

int MPIX_Threadcomm_init(MPI_Comm comm, int num_threads, MPI_Comm *threadcomm);
int MPIX_Threadcomm_start(MPI_Comm threadcomm);
int MPIX_Threadcomm_finish(MPI_Comm threadcomm);
int MPIX_Threadcomm_free(MPI_Comm *threadcomm);

#ifdef __cplusplus
}
#endif

#endif
