/* Collectives of the MPI layer: every collective is a schedule (core/wc_sched.h) built by an
 * algorithm of wm_coll_*.c, started, and either waited for (blocking call) or handed to the
 * application as a request of kind WM_REQ_COLL (nonblocking call). docs/collectives.md gives the
 * algorithms and their thresholds.
 *
 * Messages go on the communicator's collective context (ctx | WM_CTX_COLL) with tag
 * WM_TAG_COLL_BASE + seq (modulo the range): seq is the communicator's collective sequence number
 * (every member numbers its collective calls alike, since MPI orders them alike), so outstanding
 * collectives on one communicator never match each other's messages.
 *
 * Concurrency contract: builders run in the calling thread and only read the arguments; the
 * sequence counter of a communicator is atomic (the application does not run two collectives on
 * one communicator at once, but different communicators share nothing).
 */
#ifndef WM_COLL_H
#define WM_COLL_H

#include "core/wc_sched.h"
#include "mpi/wm_internal.h"
#include "mpi/wm_op.h"

/* Counts and displacements of the v and w forms: int arrays, or MPI_Count / MPI_Aint arrays of the
 * large-count (_c) forms. */
typedef struct wm_coll_vec {
    const int *i;
    const MPI_Count *c;       /* counts (_c) */
    const MPI_Aint *a;        /* displacements (_c) */
} wm_coll_vec_t;

static inline int64_t wm_coll_vec_at(const wm_coll_vec_t *v, int k)
{
    if (v->i)
        return v->i[k];
    if (v->c)
        return (int64_t)v->c[k];
    return (int64_t)v->a[k];
}

/* The counts or displacements a WM_TWINS_ helper received as a descriptor (src/mpi/gen/
 * wm_entry.h): int elements from an int form, MPI_Count or MPI_Aint ones from its _c twin. */
static inline wm_coll_vec_t wm_coll_counts(wm_ints_t v)
{
    return v.width == sizeof(int) ? (wm_coll_vec_t){ .i = v.p } : (wm_coll_vec_t){ .c = v.p };
}

static inline wm_coll_vec_t wm_coll_displs(wm_ints_t v)
{
    return v.width == sizeof(int) ? (wm_coll_vec_t){ .i = v.p } : (wm_coll_vec_t){ .a = v.p };
}

/* A collective's checked arguments. Buffers are the user's; MPI_IN_PLACE stays as given. */
typedef struct wm_coll_args {
    const void *sbuf;
    void *rbuf;
    MPI_Count scount, rcount;
    const wm_datatype_t *stype, *rtype;
    wm_coll_vec_t scounts, sdispls, rcounts, rdispls;
    const wm_datatype_t *const *stypes, *const *rtypes;   /* alltoallw */
    int root;
    const wm_op_t *op;
    MPI_Datatype op_type;                                /* the handle, for user ops */
    bool persist;                        /* MPI_*_init: a persistent request, not started */
} wm_coll_args_t;

/* How an entry point runs its collective (the `nb` argument of the families' helpers). */
enum { WM_COLL_BLOCKING = 0, WM_COLL_NONBLOCKING = 1, WM_COLL_PERSISTENT = 2 };

typedef void (*wm_coll_build_fn_t)(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);

/* Build the schedule of a collective on c with build(a), then run it: blocking when request is
 * NULL, else return it as a new request. objs (up to 2, may be NULL) are user objects the request
 * must keep alive (datatypes, op). Returns an MPI error code (raised on c). */
int wm_coll_run(const char *fn, wm_comm_t *c, wm_coll_build_fn_t build, const wm_coll_args_t *a,
                MPI_Request *request, wm_obj_t *obj1, wm_obj_t *obj2);

/* A persistent collective (wm_coll_persist.c): the built schedule s becomes the inactive persistent
 * request *request (kind WM_REQ_COLL) using c and obj1/obj2. Returns an MPI error code. */
int wm_coll_persist_new(const char *fn, wm_comm_t *c, wc_sched_t *s, MPI_Request *request,
                        wm_obj_t *obj1, wm_obj_t *obj2);

/* Checks shared by the entry points; each returns MPI_SUCCESS or the raised error.
 * check_comm accepts intercommunicators (the caller dispatches to the wm_coll_build_inter_*
 * builders); check_intra rejects them (collectives the standard defines only on
 * intracommunicators). check_root: a rank of c, or on an intercommunicator MPI_ROOT,
 * MPI_PROC_NULL or a rank of the remote group. */
int wm_coll_check_comm(wm_comm_t *c, const char *fn, MPI_Request *request, bool nb);
int wm_coll_check_intra(wm_comm_t *c, const char *fn);
int wm_coll_check_root(wm_comm_t *c, const char *fn, int root);
/* Intercommunicators: MPI_IN_PLACE is never allowed (MPI_ERR_BUFFER naming `which`). */
int wm_coll_check_not_in_place(wm_comm_t *c, const char *fn, const char *which, const void *buf);
int wm_coll_check_buf(wm_comm_t *c, const char *fn, const char *which, const void *buf,
                      MPI_Count count, MPI_Datatype type, const wm_datatype_t **ti_p);
int wm_coll_check_vec(wm_comm_t *c, const char *fn, const char *which, const wm_coll_vec_t *v,
                      int n);

/* Alltoallw's datatypes (wm_coll_all.c): structural references on the user types among the n,
 * held by a nonblocking call's request (wm_request_t.held) or the blocking call while it runs.
 * NULL with *count_p > 0: no memory. */
wm_obj_t **wm_alltoallw_hold(const wm_datatype_t **types, int n, uint32_t *count_p);
void wm_alltoallw_unhold(wm_obj_t **held, uint32_t n);

/* World rank of communicator rank r. */
static inline int wm_coll_world(const wm_comm_t *c, int r)
{
    return wm_comm_world_rank(c, r);
}

/* Address of element `elem` of a buffer of type ti. */
static inline void *wm_coll_at(const void *buf, int64_t elem, const wm_datatype_t *ti)
{
    return (char *)buf + elem * ti->extent;
}

/* A temporary of count elements of ti laid out like a user buffer (count x extent, shifted by the
 * true lower bound: the op kernels work on typed buffers), freed with the schedule. NULL: no memory
 * (the schedule's error is set). */
char *wm_coll_tmp(wc_sched_t *s, uint64_t count, const wm_datatype_t *ti);

/* Packed bytes of count elements. */
static inline uint64_t wm_coll_bytes(MPI_Count count, const wm_datatype_t *ti)
{
    return (uint64_t)count * ti->layout.size;
}

/* Builders (wm_coll_*.c). The intracommunicator builders see only c's local group (c->size,
 * c->rank, wm_coll_world): the intercommunicator builders (wm_coll_inter.c) run them on an
 * intercommunicator for the phases within one group. */
void wm_coll_build_barrier(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_bcast(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_gather(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_gatherv(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_scatter(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_scatterv(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_allgather(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_allgatherv(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_alltoall(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_alltoallv(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_alltoallw(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_reduce(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_allreduce(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
/* Hierarchical forms (wm_coll_hier.c) for a job on several nodes: phases within each node and
 * among one process per node where c spans several nodes and some node holds several of its
 * ranks, else (or for a non-commutative op whose nodes are not consecutive blocks of ranks) the
 * flat builder above. wm_coll_pick gives them only when the job has several nodes, so a job on
 * one node runs exactly the flat builders. */
void wm_coll_build_hier_barrier(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_hier_bcast(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_hier_reduce(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_hier_allreduce(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_hier_allgather(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
/* Free c's node layout (c is going away; no collective runs on it). WEFT_DEBUG logs how many
 * calls took the hierarchical path. */
void wm_coll_hier_free(wm_comm_t *c);

/* The builder of an intracommunicator collective: the hierarchical one when the job spans several
 * nodes (a load and a predictable branch on one node). */
static inline wm_coll_build_fn_t wm_coll_pick(wm_coll_build_fn_t flat, wm_coll_build_fn_t hier)
{
    return WU_UNLIKELY(wc_world.nnodes > 1) ? hier : flat;
}
/* Neighborhood collectives (wm_coll_neighbor.c): c has a topology (wm_topo.h). */
void wm_coll_build_neighbor_allgather(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_neighbor_allgatherv(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_neighbor_alltoall(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_neighbor_alltoallv(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_neighbor_alltoallw(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
/* Intercommunicators (wm_coll_inter.c): a->root is MPI_ROOT, MPI_PROC_NULL or a remote rank. */
void wm_coll_build_inter_barrier(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_inter_bcast(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_inter_gather(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_inter_gatherv(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_inter_scatter(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_inter_scatterv(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_inter_allgather(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_inter_allgatherv(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_inter_alltoall(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_inter_alltoallv(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_inter_alltoallw(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_inter_reduce(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_inter_allreduce(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);
void wm_coll_build_inter_reduce_scatter(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a);

/* Thresholds (docs/collectives.md), in packed bytes. */
#define WM_COLL_BCAST_LINEAR_RANKS 8    /* up to this many ranks, single-copy sizes: linear */
#define WM_COLL_BCAST_LONG      65536   /* at least this and 3+ ranks: scatter + ring allgather */
#define WM_COLL_GATHER_LONG     8192    /* per-rank block of at least this: linear gather/scatter */
#define WM_COLL_ALLGATHER_LONG  65536   /* total of at least this: ring */
#define WM_COLL_ALLGATHER_LINEAR 16384  /* block of at least this: linear, one round */
#define WM_COLL_ALLTOALL_LONG   32768   /* per-pair block of at least this and more ranks than */
#define WM_COLL_ALLTOALL_PAIRWISE_RANKS 8   /* this: pairwise */
#define WM_COLL_ALLREDUCE_LONG  32768   /* at least this, predefined op: Rabenseifner */
#define WM_COLL_ALLREDUCE_LINEAR_RANKS 8 /* up to this many ranks, linear instead */
#define WM_COLL_ALLREDUCE_ALL_RANKS 4      /* up to this many ranks and */
#define WM_COLL_ALLREDUCE_ALL_MAX 256      /* bytes: one round, all to all (wm_allreduce_all) */

#endif
