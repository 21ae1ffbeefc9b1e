/* Thread communicators (MPIX_Threadcomm_*, include/weft.h; docs/threadcomm.md): the entry points of
 * the MPI layer hand a communicator whose tcomm flag is set to these functions (one predictable
 * branch on a field of the communicator's first cache line, next to inter). Arguments are the
 * caller's, unchecked apart from the communicator; fn names the MPI call for errors.
 */
#ifndef WM_THREADCOMM_H
#define WM_THREADCOMM_H

#include <mpi.h>
#include <stdbool.h>
#include "core/wc_core.h"

struct wm_comm;

/* mode: WC_SEND_STANDARD, _SYNC or _READY; buffered: MPI_Bsend/Ibsend. request NULL: blocking. */
int wm_tc_send(const char *fn, struct wm_comm *c, const void *buf, MPI_Count count,
               MPI_Datatype type, int dest, int tag, int mode, bool buffered,
               MPI_Request *request);
int wm_tc_recv(const char *fn, struct wm_comm *c, void *buf, MPI_Count count, MPI_Datatype type,
               int source, int tag, MPI_Status *status, MPI_Request *request);
int wm_tc_sendrecv(const char *fn, struct wm_comm *c, const void *sbuf, MPI_Count scount,
                   MPI_Datatype stype, int dest, int stag, void *rbuf, MPI_Count rcount,
                   MPI_Datatype rtype, int source, int rtag, MPI_Status *status);
int wm_tc_sendrecv_replace(const char *fn, struct wm_comm *c, void *buf, MPI_Count count,
                           MPI_Datatype type, int dest, int stag, int source, int rtag,
                           MPI_Status *status);
/* block: MPI_Probe (waits); else MPI_Iprobe. */
int wm_tc_probe(const char *fn, struct wm_comm *c, int source, int tag, int *flag,
                MPI_Status *status, bool block);
/* A call the thread communicators do not implement (matched probes, persistent requests, ...). */
int wm_tc_unsupported(const char *fn, struct wm_comm *c);

/* The calling thread's rank in c and c's size (MPI_UNDEFINED when the calling thread is not a
 * started member of c). */
int wm_tc_rank(struct wm_comm *c);
int wm_tc_size(struct wm_comm *c);
int wm_tc_dup(const char *fn, struct wm_comm *c, MPI_Comm *newcomm);
int wm_tc_split(const char *fn, struct wm_comm *c, int color, int key, MPI_Comm *newcomm);
/* MPI_Comm_free of a communicator derived from a threadcomm (the threadcomm itself: refused). */
int wm_tc_comm_free(const char *fn, struct wm_comm *c, MPI_Comm *comm);

/* Collectives. request NULL: blocking. */
enum { WM_TC_BARRIER, WM_TC_BCAST, WM_TC_REDUCE, WM_TC_ALLREDUCE, WM_TC_GATHER, WM_TC_SCATTER,
       WM_TC_ALLGATHER, WM_TC_ALLTOALL, WM_TC_SCAN, WM_TC_EXSCAN,
       WM_TC_RSB /* Reduce_scatter_block: rcount per rank */,
       WM_TC_GATHERV, WM_TC_SCATTERV, WM_TC_ALLGATHERV, WM_TC_ALLTOALLV,
       WM_TC_RS /* Reduce_scatter: rcounts */,
       WM_TC_ALLTOALLW /* stypes, rtypes; displacements in bytes */ };
/* Counts or displacements of the v forms (the user's arrays, as wm_coll_vec_t: int, or MPI_Count /
 * MPI_Aint of the _c forms); they must stay unchanged until a nonblocking call completes. */
typedef struct wm_tc_vec {
    const int *i;
    const MPI_Count *c;
    const MPI_Aint *a;
} wm_tc_vec_t;
#define WM_TC_VEC(v) ((wm_tc_vec_t){ (v).i, (v).c, (v).a })
typedef struct wm_tc_coll_args {
    int kind;
    const void *sbuf;
    void *rbuf;
    MPI_Count scount, rcount;
    MPI_Datatype stype, rtype;
    MPI_Op op;
    int root;
    wm_tc_vec_t scounts, sdispls, rcounts, rdispls;
    const MPI_Datatype *stypes, *rtypes;   /* Alltoallw: per peer (the user's arrays) */
} wm_tc_coll_args_t;
int wm_tc_coll(const char *fn, struct wm_comm *c, const wm_tc_coll_args_t *a,
               MPI_Request *request);
/* The same from an entry point with nb = 0 (blocking), 1 (nonblocking: request must not be NULL)
 * or 2 (persistent: not implemented). */
int wm_tc_coll_entry(const char *fn, struct wm_comm *c, const wm_tc_coll_args_t *a,
                     MPI_Request *request, int nb);

#endif
