/* Neighborhood collectives (MPI 4.1 8.6, 8.7): Neighbor_allgather(v), Neighbor_alltoall(v,w),
 * blocking and nonblocking, on Cartesian, graph and distributed-graph communicators.
 *
 * Each call is one round of the collective engine (wm_coll_run, docs/collectives.md): a receive
 * from every source into its block, a send to every destination, all in flight at once. Block i of
 * the receive buffer belongs to sources[i] and block j of the send buffer to destinations[j] of the
 * topology (wm_topo.h); an MPI_PROC_NULL neighbour moves nothing and its block stays untouched.
 * Receives are posted in the topology's recv_order, which keeps the -1/+1 slots right where one
 * process is both neighbours of a periodic dimension. Persistent forms (*_init) are not
 * implemented: the library has no persistent collectives yet. */
#include "mpi/wm_coll.h"
#include "mpi/wm_topo.h"

#include <stdlib.h>

/* ---- builders ---- */

/* Where block k of one side is, by the kind of call. */
static void wm_nb_block(const wm_coll_args_t *a, bool send, int kind, int k, const void **p_p,
                        uint64_t *cnt_p, const wc_dtype_t **dt_p)
{
    const void *base = send ? a->sbuf : a->rbuf;
    const wm_datatype_t *ti = send ? a->stype : a->rtype;
    MPI_Count cnt = send ? a->scount : a->rcount;
    switch (kind) {
    case 0:   /* one block per neighbour, count elements each; allgather sends the same one */
        *p_p = wm_coll_at(base, (int64_t)k * cnt, ti);
        *cnt_p = (uint64_t)cnt;
        *dt_p = &ti->layout;
        return;
    case 1:   /* counts and element displacements */
        *p_p = wm_coll_at(base, wm_coll_vec_at(send ? &a->sdispls : &a->rdispls, k), ti);
        *cnt_p = (uint64_t)wm_coll_vec_at(send ? &a->scounts : &a->rcounts, k);
        *dt_p = &ti->layout;
        return;
    default:  /* alltoallw: byte displacements, a datatype per neighbour */
        ti = send ? a->stypes[k] : a->rtypes[k];
        *p_p = (const char *)base + wm_coll_vec_at(send ? &a->sdispls : &a->rdispls, k);
        *cnt_p = (uint64_t)wm_coll_vec_at(send ? &a->scounts : &a->rcounts, k);
        *dt_p = &ti->layout;
        return;
    }
}

/* One round: every receive (in recv_order), then every send. rkind/skind: the layout of the
 * receive and send sides (0 blocks, 1 v, 2 w); same_send: the one send block for everyone. */
static void wm_nb_build(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a, int rkind, int skind,
                        bool same_send)
{
    const wm_topo_t *t = c->topo;
    const void *p;
    uint64_t cnt;
    const wc_dtype_t *dt;
    wc_sched_send_mode(s, WC_SEND_BULK_EAGER);
    for (int k = 0; k < t->indegree; k++) {
        int i = t->recv_order[k], src = t->sources[i];
        if (src == MPI_PROC_NULL)
            continue;
        wm_nb_block(a, false, rkind, i, &p, &cnt, &dt);
        wc_sched_recv(s, (void *)p, cnt, dt, wm_coll_world(c, src));
    }
    for (int j = 0; j < t->outdegree; j++) {
        int dst = t->destinations[j];
        if (dst == MPI_PROC_NULL)
            continue;
        wm_nb_block(a, true, skind, same_send ? 0 : j, &p, &cnt, &dt);
        wc_sched_send(s, p, cnt, dt, wm_coll_world(c, dst));
    }
}

void wm_coll_build_neighbor_allgather(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    wm_nb_build(s, c, a, 0, 0, true);
}

void wm_coll_build_neighbor_allgatherv(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    wm_nb_build(s, c, a, 1, 0, true);
}

void wm_coll_build_neighbor_alltoall(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    wm_nb_build(s, c, a, 0, 0, false);
}

void wm_coll_build_neighbor_alltoallv(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    wm_nb_build(s, c, a, 1, 1, false);
}

void wm_coll_build_neighbor_alltoallw(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    wm_nb_build(s, c, a, 2, 2, false);
}

/* ---- entry points ---- */

static inline wm_obj_t *wm_nb_type_obj(const wm_datatype_t *ti)
{
    return ti && !ti->obj.predefined ? (wm_obj_t *)&ti->obj : NULL;
}

/* The communicator and its topology; the request argument of a nonblocking call. */
static int wm_nb_check_comm(const char *fn, MPI_Comm comm, MPI_Request *request, bool nb,
                            wm_comm_t **c_p, const wm_topo_t **t_p)
{
    WM_COMM_CHECK(fn, comm, c);
    int rc = MPI_SUCCESS;
    const wm_topo_t *t = wm_topo_need(c, fn, 0, &rc);
    if (!t)
        return rc;
    if ((rc = wm_coll_check_comm(c, fn, request, nb)))
        return rc;
    *c_p = c;
    *t_p = t;
    return MPI_SUCCESS;
}

static int wm_nb_check_counts(wm_comm_t *c, const char *fn, const char *which,
                              const wm_coll_vec_t *v, int n)
{
    int rc = wm_coll_check_vec(c, fn, which, v, n);
    if (rc)
        return rc;
    for (int i = 0; i < n; i++)
        if (wm_coll_vec_at(v, i) < 0)
            return wm_error(c, MPI_ERR_COUNT, fn, "%s[%d] = %lld is negative", which, i,
                            (long long)wm_coll_vec_at(v, i));
    return MPI_SUCCESS;
}

/* Neighbor_allgather(v), Neighbor_alltoall(v). vec: the v form (counts and displacements on the
 * receive side, and on the send side too for alltoallv). */
static int wm_nb_allx(const char *fn, wm_coll_build_fn_t build, bool vec, bool gather,
                      const void *sbuf, MPI_Count scount, wm_coll_vec_t scounts,
                      wm_coll_vec_t sdispls, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                      wm_coll_vec_t rcounts, wm_coll_vec_t rdispls, MPI_Datatype rtype,
                      MPI_Comm comm, MPI_Request *request, int nb)
{
    wm_comm_t *c;
    const wm_topo_t *t;
    int rc = wm_nb_check_comm(fn, comm, request, nb, &c, &t);
    if (rc)
        return rc;
    wm_coll_args_t a = { .sbuf = sbuf, .rbuf = rbuf, .scount = scount, .rcount = rcount,
                         .scounts = scounts, .sdispls = sdispls, .rcounts = rcounts,
                         .rdispls = rdispls, .persist = nb == WM_COLL_PERSISTENT };
    bool svec = vec && !gather;
    /* MPI_IN_PLACE is not defined for neighborhood collectives: check_buf refuses it */
    if ((rc = wm_coll_check_buf(c, fn, "send", sbuf, svec ? 0 : scount, stype, &a.stype)) ||
        (rc = wm_coll_check_buf(c, fn, "receive", rbuf, vec ? 0 : rcount, rtype, &a.rtype)))
        return rc;
    if (svec && ((rc = wm_nb_check_counts(c, fn, "sendcounts", &scounts, t->outdegree)) ||
                 (rc = wm_coll_check_vec(c, fn, "sdispls", &sdispls, t->outdegree))))
        return rc;
    if (vec && ((rc = wm_nb_check_counts(c, fn, "recvcounts", &rcounts, t->indegree)) ||
                (rc = wm_coll_check_vec(c, fn, "displs", &rdispls, t->indegree))))
        return rc;
    return wm_coll_run(fn, c, build, &a, request, wm_nb_type_obj(a.stype),
                       wm_nb_type_obj(a.rtype));
}

#define WM_VEC_A(p) ((wm_coll_vec_t){ .a = (p) })
static const wm_coll_vec_t wm_nb_no_vec;

/* Neighbor_allgather and Neighbor_alltoall: each helper serves an int form and its _c twin
 * (WM_TWINS_MPI_X of src/mpi/gen/wm_entry.h). */
static inline int wm_nb_blocks(const char *fn, const void *sendbuf, MPI_Count sendcount,
                               MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request,
                               wm_coll_build_fn_t build, bool gather, int nb)
{
    return wm_nb_allx(fn, build, false, gather, sendbuf, sendcount, wm_nb_no_vec, wm_nb_no_vec,
                      sendtype, recvbuf, recvcount, wm_nb_no_vec, wm_nb_no_vec, recvtype, comm,
                      request, nb);
}

/* The persistent forms; the info argument carries no hint Weft uses. */
static inline int wm_nb_blocks_init(const char *fn, const void *sendbuf, MPI_Count sendcount,
                                    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                    MPI_Request *request, wm_coll_build_fn_t build, bool gather)
{
    (void)info;
    return wm_nb_blocks(fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                        request, build, gather, WM_COLL_PERSISTENT);
}

WM_TWINS_MPI_Neighbor_allgather(wm_nb_blocks, NULL, wm_coll_build_neighbor_allgather, true, false)
WM_TWINS_MPI_Ineighbor_allgather(wm_nb_blocks, wm_coll_build_neighbor_allgather, true, true)
WM_TWINS_MPI_Neighbor_allgather_init(wm_nb_blocks_init, wm_coll_build_neighbor_allgather, true)
WM_TWINS_MPI_Neighbor_alltoall(wm_nb_blocks, NULL, wm_coll_build_neighbor_alltoall, false, false)
WM_TWINS_MPI_Ineighbor_alltoall(wm_nb_blocks, wm_coll_build_neighbor_alltoall, false, true)
WM_TWINS_MPI_Neighbor_alltoall_init(wm_nb_blocks_init, wm_coll_build_neighbor_alltoall, false)

/* Neighbor_allgatherv and Neighbor_alltoallv, each helper serving an int form and its _c twin. */
static inline int wm_nb_allgatherv(const char *fn, const void *sendbuf, MPI_Count sendcount,
                                   MPI_Datatype sendtype, void *recvbuf, wm_ints_t recvcounts,
                                   wm_ints_t displs, MPI_Datatype recvtype, MPI_Comm comm,
                                   MPI_Request *request, int nb)
{
    return wm_nb_allx(fn, wm_coll_build_neighbor_allgatherv, true, true, sendbuf, sendcount,
                      wm_nb_no_vec, wm_nb_no_vec, sendtype, recvbuf, 0,
                      wm_coll_counts(recvcounts), wm_coll_displs(displs), recvtype, comm, request,
                      nb);
}

static inline int wm_nb_allgatherv_init(const char *fn, const void *sendbuf, MPI_Count sendcount,
                                        MPI_Datatype sendtype, void *recvbuf,
                                        wm_ints_t recvcounts, wm_ints_t displs,
                                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                        MPI_Request *request)
{
    (void)info;
    return wm_nb_allgatherv(fn, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                            recvtype, comm, request, WM_COLL_PERSISTENT);
}

static inline int wm_nb_alltoallv(const char *fn, const void *sendbuf, wm_ints_t sendcounts,
                                  wm_ints_t sdispls, MPI_Datatype sendtype, void *recvbuf,
                                  wm_ints_t recvcounts, wm_ints_t rdispls, MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Request *request, int nb)
{
    return wm_nb_allx(fn, wm_coll_build_neighbor_alltoallv, true, false, sendbuf, 0,
                      wm_coll_counts(sendcounts), wm_coll_displs(sdispls), sendtype, recvbuf, 0,
                      wm_coll_counts(recvcounts), wm_coll_displs(rdispls), recvtype, comm,
                      request, nb);
}

static inline int wm_nb_alltoallv_init(const char *fn, const void *sendbuf, wm_ints_t sendcounts,
                                       wm_ints_t sdispls, MPI_Datatype sendtype, void *recvbuf,
                                       wm_ints_t recvcounts, wm_ints_t rdispls,
                                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                       MPI_Request *request)
{
    (void)info;
    return wm_nb_alltoallv(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                           rdispls, recvtype, comm, request, WM_COLL_PERSISTENT);
}

WM_TWINS_MPI_Neighbor_allgatherv(wm_nb_allgatherv, NULL, false)
WM_TWINS_MPI_Ineighbor_allgatherv(wm_nb_allgatherv, true)
WM_TWINS_MPI_Neighbor_allgatherv_init(wm_nb_allgatherv_init)
WM_TWINS_MPI_Neighbor_alltoallv(wm_nb_alltoallv, NULL, false)
WM_TWINS_MPI_Ineighbor_alltoallv(wm_nb_alltoallv, true)
WM_TWINS_MPI_Neighbor_alltoallv_init(wm_nb_alltoallv_init)

/* Neighbor_alltoallw: a datatype per neighbour, held like Alltoallw's (wm_alltoallw_hold). */
static int wm_nb_alltoallw(const char *fn, const void *sbuf, wm_coll_vec_t scounts,
                           wm_coll_vec_t sdispls, const MPI_Datatype stypes[], void *rbuf,
                           wm_coll_vec_t rcounts, wm_coll_vec_t rdispls,
                           const MPI_Datatype rtypes[], MPI_Comm comm, MPI_Request *request,
                           int nb)
{
    wm_comm_t *c;
    const wm_topo_t *t;
    int rc = wm_nb_check_comm(fn, comm, request, nb, &c, &t);
    if (rc)
        return rc;
    int nout = t->outdegree, nin = t->indegree;
    if ((rc = wm_nb_check_counts(c, fn, "sendcounts", &scounts, nout)) ||
        (rc = wm_coll_check_vec(c, fn, "sdispls", &sdispls, nout)) ||
        (rc = wm_nb_check_counts(c, fn, "recvcounts", &rcounts, nin)) ||
        (rc = wm_coll_check_vec(c, fn, "rdispls", &rdispls, nin)))
        return rc;
    if ((nout > 0 && !stypes) || (nin > 0 && !rtypes))
        return wm_error(c, MPI_ERR_ARG, fn, "%s is NULL", stypes ? "recvtypes" : "sendtypes");
    const wm_datatype_t **types = calloc((size_t)(nout + nin) + 1, sizeof(*types));
    if (!types)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for %d datatypes", nout + nin);
    wm_coll_args_t a = { .sbuf = sbuf, .rbuf = rbuf, .scounts = scounts, .sdispls = sdispls,
                         .rcounts = rcounts, .rdispls = rdispls, .stypes = types,
                         .rtypes = types + nout, .persist = nb == WM_COLL_PERSISTENT };
    for (int j = 0; j < nout; j++)
        if ((rc = wm_coll_check_buf(c, fn, "send", sbuf, 0, stypes[j], &types[j]))) {
            free(types);
            return rc;
        }
    for (int i = 0; i < nin; i++)
        if ((rc = wm_coll_check_buf(c, fn, "receive", rbuf, 0, rtypes[i], &types[nout + i]))) {
            free(types);
            return rc;
        }
    uint32_t nheld;
    wm_obj_t **held = wm_alltoallw_hold(types, nout + nin, &nheld);
    if (nheld && !held) {
        free(types);
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for %d datatypes", nout + nin);
    }
    rc = wm_coll_run(fn, c, wm_coll_build_neighbor_alltoallw, &a, request, NULL, NULL);
    free(types);
    if (rc == MPI_SUCCESS && request) {
        wm_request_t *r = wm_request_ptr(*request);
        r->held = held;
        r->nheld = nheld;
    } else if (held) {
        wm_alltoallw_unhold(held, nheld);
    }
    return rc;
}

/* Neighbor_alltoallw: its displacements are MPI_Aint in both forms, its counts differ. */
static inline int wm_nb_alltoallw_twins(const char *fn, const void *sendbuf, wm_ints_t sendcounts,
                                        const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                        void *recvbuf, wm_ints_t recvcounts,
                                        const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                        MPI_Comm comm, MPI_Request *request, int nb)
{
    return wm_nb_alltoallw(fn, sendbuf, wm_coll_counts(sendcounts), WM_VEC_A(sdispls), sendtypes,
                           recvbuf, wm_coll_counts(recvcounts), WM_VEC_A(rdispls), recvtypes,
                           comm, request, nb);
}

static inline int wm_nb_alltoallw_init(const char *fn, const void *sendbuf, wm_ints_t sendcounts,
                                       const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                       void *recvbuf, wm_ints_t recvcounts,
                                       const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return wm_nb_alltoallw_twins(fn, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                 recvcounts, rdispls, recvtypes, comm, request,
                                 WM_COLL_PERSISTENT);
}

WM_TWINS_MPI_Neighbor_alltoallw(wm_nb_alltoallw_twins, NULL, false)
WM_TWINS_MPI_Ineighbor_alltoallw(wm_nb_alltoallw_twins, true)
WM_TWINS_MPI_Neighbor_alltoallw_init(wm_nb_alltoallw_init)
