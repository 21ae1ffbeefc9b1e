/* Rooted collectives: Bcast, Gather(v), Scatter(v) and their nonblocking forms, as schedules.
 * Trees are binomial over relative ranks vr = (rank - root) mod n: the parent of vr clears its
 * lowest set bit, and the subtree of vr holds the relative ranks [vr, vr + sub(vr)). */
#include "mpi/wm_coll.h"

/* Lowest set bit of vr, or the power of two at or above n for the root: the subtree spans
 * min(that, n - vr) ranks. */
static int wm_tree_mask(int vr, int n)
{
    if (vr == 0) {
        int m = 1;
        while (m < n)
            m <<= 1;
        return m;
    }
    return vr & -vr;
}

static inline int wm_tree_sub(int vr, int n)
{
    int m = wm_tree_mask(vr, n);
    return m < n - vr ? m : n - vr;
}

static inline int wm_abs(int vr, int root, int n)
{
    return (vr + root) % n;
}

/* ---- bcast ---- */

static void wm_bcast_binomial(wc_sched_t *s, wm_comm_t *c, void *buf, uint64_t count,
                              const wc_dtype_t *dt, int root)
{
    int n = c->size, vr = (c->rank - root + n) % n;
    int mask = wm_tree_mask(vr, n);
    if (vr != 0) {
        wc_sched_recv(s, buf, count, dt, wm_coll_world(c, wm_abs(vr - mask, root, n)));
        wc_sched_fence(s);
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < n)
            wc_sched_send(s, buf, count, dt, wm_coll_world(c, wm_abs(vr + mask, root, n)));
}

/* Van de Geijn: binomial scatter of n chunks, then a ring allgather of the chunks. bytes of
 * contiguous data at p. */
static void wm_bcast_scatter_ring(wc_sched_t *s, wm_comm_t *c, char *p, uint64_t bytes, int root)
{
    int n = c->size, vr = (c->rank - root + n) % n;
    uint64_t cs = (bytes + (uint64_t)n - 1) / (uint64_t)n;
#define WM_CHUNK_OFF(j) ((uint64_t)(j) * cs < bytes ? (uint64_t)(j) * cs : bytes)
    int mask = wm_tree_mask(vr, n);
    if (vr != 0) {
        uint64_t lo = WM_CHUNK_OFF(vr), hi = WM_CHUNK_OFF(vr + wm_tree_sub(vr, n));
        wc_sched_recv(s, p + lo, hi - lo, &wc_dtype_bytes,
                      wm_coll_world(c, wm_abs(vr - mask, root, n)));
        wc_sched_fence(s);
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        int ch = vr + mask;
        if (ch >= n)
            continue;
        uint64_t lo = WM_CHUNK_OFF(ch), hi = WM_CHUNK_OFF(ch + wm_tree_sub(ch, n));
        wc_sched_send(s, p + lo, hi - lo, &wc_dtype_bytes, wm_coll_world(c, wm_abs(ch, root, n)));
    }
    wc_sched_fence(s);
    int right = wm_coll_world(c, wm_abs((vr + 1) % n, root, n));
    int left = wm_coll_world(c, wm_abs((vr - 1 + n) % n, root, n));
    for (int i = 0; i < n - 1; i++) {
        int sj = (vr - i + n) % n, rj = (vr - i - 1 + n) % n;
        wc_sched_recv(s, p + WM_CHUNK_OFF(rj), WM_CHUNK_OFF(rj + 1) - WM_CHUNK_OFF(rj),
                      &wc_dtype_bytes, left);
        wc_sched_send(s, p + WM_CHUNK_OFF(sj), WM_CHUNK_OFF(sj + 1) - WM_CHUNK_OFF(sj),
                      &wc_dtype_bytes, right);
        wc_sched_fence(s);
    }
#undef WM_CHUNK_OFF
}

void wm_coll_build_bcast(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    uint64_t bytes = wm_coll_bytes(a->rcount, a->rtype);
    int n = c->size;
    if (n == 1 || bytes == 0)
        return;
    const wc_dtype_t *dt = &a->rtype->layout;
    if (n <= WM_COLL_BCAST_LINEAR_RANKS && wc_bulk_single_copy(wc_ep_default(), bytes)) {
        /* linear: every rank reads the whole buffer straight from the root's, all at once. Every
         * rank decides alike: the condition does not look at the local layout (the root's and a
         * receiver's may differ in shape); a non-contiguous side takes the pipeline. */
        if (c->rank != a->root) {
            wc_sched_recv(s, a->rbuf, (uint64_t)a->rcount, dt, wm_coll_world(c, a->root));
            return;
        }
        for (int i = 1; i < n; i++)
            wc_sched_send(s, a->rbuf, (uint64_t)a->rcount, dt,
                          wm_coll_world(c, (a->root + i) % n));
        return;
    }
    if (bytes < WM_COLL_BCAST_LONG || n < 3) {
        wm_bcast_binomial(s, c, a->rbuf, (uint64_t)a->rcount, dt, a->root);
        return;
    }
    if (dt->contig) {
        wm_bcast_scatter_ring(s, c, (char *)a->rbuf + dt->contig_off, bytes, a->root);
        return;
    }
    /* the chunks are byte ranges: a non-contiguous layout goes through a packed temporary (the
     * algorithm must not depend on the layout, which may differ between the root and the rest) */
    char *tmp = wc_sched_tmp(s, (size_t)bytes);
    if (!tmp)
        return;
    bool root = c->rank == a->root;
    if (root) {
        wc_sched_copy(s, a->rbuf, (uint64_t)a->rcount, dt, tmp, bytes, &wc_dtype_bytes);
        wc_sched_fence(s);
    }
    wm_bcast_scatter_ring(s, c, tmp, bytes, a->root);
    if (!root) {
        wc_sched_fence(s);
        wc_sched_copy(s, tmp, bytes, &wc_dtype_bytes, a->rbuf, (uint64_t)a->rcount, dt);
    }
}

/* ---- gather ---- */

/* Copy the packed blocks tmp (relative order, bs bytes each) into the root's buffer: relative block
 * j is rank (j + root) mod n, element (rank * rcount) of rbuf. */
static void wm_gather_unrotate(wc_sched_t *s, const wm_coll_args_t *a, int n, char *tmp,
                               uint64_t bs, bool to_user)
{
    int root = a->root;
    int runs[2][2] = { { 0, n - root }, { n - root, root } };   /* first relative block, length */
    for (int k = 0; k < 2; k++) {
        int j = runs[k][0], len = runs[k][1];
        if (len == 0)
            continue;
        int rank = (j + root) % n;
        char *user = wm_coll_at(a->rbuf, (int64_t)rank * a->rcount, a->rtype);
        uint64_t cnt = (uint64_t)len * (uint64_t)a->rcount;
        if (to_user)
            wc_sched_copy(s, tmp + (uint64_t)j * bs, (uint64_t)len * bs, &wc_dtype_bytes, user,
                          cnt, &a->rtype->layout);
        else
            wc_sched_copy(s, user, cnt, &a->rtype->layout, tmp + (uint64_t)j * bs,
                          (uint64_t)len * bs, &wc_dtype_bytes);
    }
}

void wm_coll_build_gather(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    int n = c->size, me = c->rank, root = a->root;
    bool is_root = me == root, in_place = is_root && a->sbuf == MPI_IN_PLACE;
    /* the block every rank contributes, in packed bytes (the root's receive block equals it) */
    uint64_t bs = is_root ? wm_coll_bytes(a->rcount, a->rtype) : wm_coll_bytes(a->scount, a->stype);
    if (n == 1 || bs >= WM_COLL_GATHER_LONG) {
        if (!is_root) {
            wc_sched_send(s, a->sbuf, (uint64_t)a->scount, &a->stype->layout,
                          wm_coll_world(c, root));
            return;
        }
        for (int i = 1; i < n; i++) {
            int r = (root + i) % n;
            wc_sched_recv(s, wm_coll_at(a->rbuf, (int64_t)r * a->rcount, a->rtype),
                          (uint64_t)a->rcount, &a->rtype->layout, wm_coll_world(c, r));
        }
        if (!in_place)
            wc_sched_copy(s, a->sbuf, (uint64_t)a->scount, &a->stype->layout,
                          wm_coll_at(a->rbuf, (int64_t)root * a->rcount, a->rtype),
                          (uint64_t)a->rcount, &a->rtype->layout);
        return;
    }
    /* binomial: each rank gathers its subtree's blocks (packed, relative order) and sends them up */
    int vr = (me - root + n) % n, mask = wm_tree_mask(vr, n), sub = wm_tree_sub(vr, n);
    if (sub == 1) {
        wc_sched_send(s, a->sbuf, (uint64_t)a->scount, &a->stype->layout,
                      wm_coll_world(c, wm_abs(vr - mask, root, n)));
        return;
    }
    char *tmp = wc_sched_tmp(s, (size_t)bs * (size_t)sub);
    if (!tmp)
        return;
    if (is_root && in_place)
        wc_sched_copy(s, wm_coll_at(a->rbuf, (int64_t)root * a->rcount, a->rtype),
                      (uint64_t)a->rcount, &a->rtype->layout, tmp, bs, &wc_dtype_bytes);
    else
        wc_sched_copy(s, a->sbuf, (uint64_t)a->scount, &a->stype->layout, tmp, bs,
                      &wc_dtype_bytes);
    for (int m = 1; m < mask && vr + m < n; m <<= 1) {
        int ch = vr + m;
        wc_sched_recv(s, tmp + (uint64_t)m * bs, bs * (uint64_t)wm_tree_sub(ch, n), &wc_dtype_bytes,
                      wm_coll_world(c, wm_abs(ch, root, n)));
    }
    wc_sched_fence(s);
    if (vr != 0)
        wc_sched_send(s, tmp, bs * (uint64_t)sub, &wc_dtype_bytes,
                      wm_coll_world(c, wm_abs(vr - mask, root, n)));
    else
        wm_gather_unrotate(s, a, n, tmp, bs, true);
}

void wm_coll_build_gatherv(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    int n = c->size, me = c->rank, root = a->root;
    if (me != root) {
        wc_sched_send(s, a->sbuf, (uint64_t)a->scount, &a->stype->layout, wm_coll_world(c, root));
        return;
    }
    for (int i = 1; i < n; i++) {
        int r = (root + i) % n;
        wc_sched_recv(s, wm_coll_at(a->rbuf, wm_coll_vec_at(&a->rdispls, r), a->rtype),
                      (uint64_t)wm_coll_vec_at(&a->rcounts, r), &a->rtype->layout,
                      wm_coll_world(c, r));
    }
    if (a->sbuf != MPI_IN_PLACE)
        wc_sched_copy(s, a->sbuf, (uint64_t)a->scount, &a->stype->layout,
                      wm_coll_at(a->rbuf, wm_coll_vec_at(&a->rdispls, root), a->rtype),
                      (uint64_t)wm_coll_vec_at(&a->rcounts, root), &a->rtype->layout);
}

/* ---- scatter ---- */

void wm_coll_build_scatter(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    int n = c->size, me = c->rank, root = a->root;
    bool is_root = me == root, in_place = is_root && a->rbuf == MPI_IN_PLACE;
    uint64_t bs = is_root ? wm_coll_bytes(a->scount, a->stype) : wm_coll_bytes(a->rcount, a->rtype);
    if (n == 1 || bs >= WM_COLL_GATHER_LONG) {
        if (!is_root) {
            wc_sched_recv(s, a->rbuf, (uint64_t)a->rcount, &a->rtype->layout,
                          wm_coll_world(c, root));
            return;
        }
        for (int i = 1; i < n; i++) {
            int r = (root + i) % n;
            wc_sched_send(s, wm_coll_at(a->sbuf, (int64_t)r * a->scount, a->stype),
                          (uint64_t)a->scount, &a->stype->layout, wm_coll_world(c, r));
        }
        if (!in_place)
            wc_sched_copy(s, wm_coll_at(a->sbuf, (int64_t)root * a->scount, a->stype),
                          (uint64_t)a->scount, &a->stype->layout, a->rbuf, (uint64_t)a->rcount,
                          &a->rtype->layout);
        return;
    }
    int vr = (me - root + n) % n, mask = wm_tree_mask(vr, n), sub = wm_tree_sub(vr, n);
    if (sub == 1) {
        wc_sched_recv(s, a->rbuf, (uint64_t)a->rcount, &a->rtype->layout,
                      wm_coll_world(c, wm_abs(vr - mask, root, n)));
        return;
    }
    char *tmp = wc_sched_tmp(s, (size_t)bs * (size_t)sub);
    if (!tmp)
        return;
    if (vr == 0) {
        /* the root packs its blocks in relative order (reading, as gather's unrotate writes) */
        wm_coll_args_t ra = *a;
        ra.rbuf = (void *)a->sbuf;
        ra.rcount = a->scount;
        ra.rtype = a->stype;
        wm_gather_unrotate(s, &ra, n, tmp, bs, false);
    } else {
        wc_sched_recv(s, tmp, bs * (uint64_t)sub, &wc_dtype_bytes,
                      wm_coll_world(c, wm_abs(vr - mask, root, n)));
        wc_sched_fence(s);
    }
    for (int m = mask >> 1; m > 0; m >>= 1) {
        int ch = vr + m;
        if (ch < n)
            wc_sched_send(s, tmp + (uint64_t)m * bs, bs * (uint64_t)wm_tree_sub(ch, n),
                          &wc_dtype_bytes, wm_coll_world(c, wm_abs(ch, root, n)));
    }
    if (!in_place)
        wc_sched_copy(s, tmp, bs, &wc_dtype_bytes, a->rbuf, (uint64_t)a->rcount,
                      &a->rtype->layout);
}

void wm_coll_build_scatterv(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    int n = c->size, me = c->rank, root = a->root;
    if (me != root) {
        wc_sched_recv(s, a->rbuf, (uint64_t)a->rcount, &a->rtype->layout, wm_coll_world(c, root));
        return;
    }
    for (int i = 1; i < n; i++) {
        int r = (root + i) % n;
        wc_sched_send(s, wm_coll_at(a->sbuf, wm_coll_vec_at(&a->sdispls, r), a->stype),
                      (uint64_t)wm_coll_vec_at(&a->scounts, r), &a->stype->layout,
                      wm_coll_world(c, r));
    }
    if (a->rbuf != MPI_IN_PLACE)
        wc_sched_copy(s, wm_coll_at(a->sbuf, wm_coll_vec_at(&a->sdispls, root), a->stype),
                      (uint64_t)wm_coll_vec_at(&a->scounts, root), &a->stype->layout, a->rbuf,
                      (uint64_t)a->rcount, &a->rtype->layout);
}

/* ---- entry points ---- */

static inline wm_obj_t *wm_type_obj(const wm_datatype_t *ti)
{
    return ti && !ti->obj.predefined ? (wm_obj_t *)&ti->obj : NULL;
}

static int wm_bcast(const char *fn, void *buf, MPI_Count count, MPI_Datatype type, int root,
                    MPI_Comm comm, MPI_Request *request, int nb)
{
    WM_COMM_CHECK(fn, comm, c);
    if (WU_UNLIKELY(c->tcomm))
        return wm_tc_coll_entry(fn, c, &(wm_tc_coll_args_t){ .kind = WM_TC_BCAST, .rbuf = buf,
                                    .rcount = count, .rtype = type, .root = root }, request, nb);
    wm_coll_args_t a = { .rbuf = buf, .rcount = count, .root = root,
                         .persist = nb == WM_COLL_PERSISTENT };
    int rc;
    if ((rc = wm_coll_check_comm(c, fn, request, nb)) || (rc = wm_coll_check_root(c, fn, root)))
        return rc;
    /* on an intercommunicator nothing but root is significant at MPI_PROC_NULL */
    if (!(c->inter && root == MPI_PROC_NULL) &&
        (rc = wm_coll_check_buf(c, fn, "buffer", buf, count, type, &a.rtype)))
        return rc;
    wm_coll_build_fn_t build = c->inter ? wm_coll_build_inter_bcast
                                        : wm_coll_pick(wm_coll_build_bcast, wm_coll_build_hier_bcast);
    return wm_coll_run(fn, c, build, &a, request, wm_type_obj(a.rtype), NULL);
}

WM_TWINS_MPI_Bcast(wm_bcast, NULL, false)

WM_TWINS_MPI_Ibcast(wm_bcast, true)

/* Gather and scatter: the root's side of the vector forms is `v` (counts, displacements). */
static int wm_rooted(const char *fn, wm_coll_build_fn_t build, bool gather, bool vec,
                     const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                     MPI_Count rcount, MPI_Datatype rtype, wm_coll_vec_t counts,
                     wm_coll_vec_t displs, int root, MPI_Comm comm, MPI_Request *request, int nb)
{
    WM_COMM_CHECK(fn, comm, c);
    if (WU_UNLIKELY(c->tcomm))
        return wm_tc_coll_entry(fn, c, &(wm_tc_coll_args_t){
                   .kind = gather ? (vec ? WM_TC_GATHERV : WM_TC_GATHER)
                                  : (vec ? WM_TC_SCATTERV : WM_TC_SCATTER),
                   .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf, .rcount = rcount,
                   .rtype = rtype, .root = root,
                   .rcounts = WM_TC_VEC(counts), .rdispls = WM_TC_VEC(displs),
                   .scounts = WM_TC_VEC(counts), .sdispls = WM_TC_VEC(displs) }, request, nb);
    wm_coll_args_t a = { .sbuf = sbuf, .rbuf = rbuf, .scount = scount, .rcount = rcount,
                         .root = root, .persist = nb == WM_COLL_PERSISTENT };
    int rc;
    if ((rc = wm_coll_check_comm(c, fn, request, nb)) || (rc = wm_coll_check_root(c, fn, root)))
        return rc;
    /* intercommunicator: the root is MPI_ROOT, the rest of its group MPI_PROC_NULL (idle), and
     * the other group names the root by its remote rank; the vectors span the remote group */
    bool is_root = c->inter ? root == MPI_ROOT : c->rank == root;
    bool idle = c->inter && root == MPI_PROC_NULL;
    int nv = c->inter ? c->remote_size : c->size;
    if (c->inter)
        build = gather ? (vec ? wm_coll_build_inter_gatherv : wm_coll_build_inter_gather)
                       : (vec ? wm_coll_build_inter_scatterv : wm_coll_build_inter_scatter);
    /* the side significant on this rank: gather sends everywhere (intercommunicator: in the other
     * group), receives at the root */
    bool use_s = !idle && (c->inter ? gather != is_root : gather || is_root);
    bool use_r = !idle && (c->inter ? gather == is_root : !gather || is_root);
    if (c->inter && ((use_s && (rc = wm_coll_check_not_in_place(c, fn, "sendbuf", sbuf))) ||
                     (use_r && (rc = wm_coll_check_not_in_place(c, fn, "recvbuf", rbuf)))))
        return rc;
    bool s_in_place = gather && is_root && sbuf == MPI_IN_PLACE && !c->inter;
    bool r_in_place = !gather && is_root && rbuf == MPI_IN_PLACE && !c->inter;
    if (use_s && !s_in_place) {
        if (gather || !vec) {
            if ((rc = wm_coll_check_buf(c, fn, "send", sbuf, scount, stype, &a.stype)))
                return rc;
        } else if ((rc = wm_coll_check_buf(c, fn, "send", sbuf, 0, stype, &a.stype))) {
            return rc;
        }
    }
    if (use_r && !r_in_place) {
        if (!gather || !vec) {
            if ((rc = wm_coll_check_buf(c, fn, "receive", rbuf, rcount, rtype, &a.rtype)))
                return rc;
        } else if ((rc = wm_coll_check_buf(c, fn, "receive", rbuf, 0, rtype, &a.rtype))) {
            return rc;
        }
    }
    if (s_in_place && !(a.stype = wm_type_get(MPI_BYTE)))
        return MPI_ERR_INTERN;
    if (r_in_place && !(a.rtype = wm_type_get(MPI_BYTE)))
        return MPI_ERR_INTERN;
    if (vec && is_root) {
        if ((rc = wm_coll_check_vec(c, fn, gather ? "recvcounts" : "sendcounts", &counts, nv)) ||
            (rc = wm_coll_check_vec(c, fn, "displs", &displs, nv)))
            return rc;
        for (int i = 0; i < nv; i++)
            if (wm_coll_vec_at(&counts, i) < 0)
                return wm_error(c, MPI_ERR_COUNT, fn, "%s[%d] = %lld is negative",
                                gather ? "recvcounts" : "sendcounts", i,
                                (long long)wm_coll_vec_at(&counts, i));
        if (gather)
            a.rcounts = counts, a.rdispls = displs;
        else
            a.scounts = counts, a.sdispls = displs;
    }
    return wm_coll_run(fn, c, build, &a, request, use_s ? wm_type_obj(a.stype) : NULL,
                       use_r ? wm_type_obj(a.rtype) : NULL);
}

static const wm_coll_vec_t wm_no_vec;


/* Gather and Scatter: each helper serves an int form and its _c twin (WM_TWINS_MPI_X of
 * src/mpi/gen/wm_entry.h); build is the builder, gather whether the root receives. */
static inline int wm_rooted_blocks(const char *fn, const void *sendbuf, MPI_Count sendcount,
                                   MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                   MPI_Datatype recvtype, int root, MPI_Comm comm,
                                   MPI_Request *request, wm_coll_build_fn_t build, bool gather,
                                   int nb)
{
    return wm_rooted(fn, build, gather, false, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                     recvtype, wm_no_vec, wm_no_vec, root, comm, request, nb);
}

/* The persistent forms; the info argument carries no hint Weft uses. */
static inline int wm_rooted_blocks_init(const char *fn, const void *sendbuf, MPI_Count sendcount,
                                        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                        MPI_Datatype recvtype, int root, MPI_Comm comm,
                                        MPI_Info info, MPI_Request *request,
                                        wm_coll_build_fn_t build, bool gather)
{
    (void)info;
    return wm_rooted(fn, build, gather, false, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                     recvtype, wm_no_vec, wm_no_vec, root, comm, request, WM_COLL_PERSISTENT);
}

static inline int wm_bcast_init(const char *fn, void *buffer, MPI_Count count,
                                MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
                                MPI_Request *request)
{
    (void)info;
    return wm_bcast(fn, buffer, count, datatype, root, comm, request, WM_COLL_PERSISTENT);
}

WM_TWINS_MPI_Gather(wm_rooted_blocks, NULL, wm_coll_build_gather, true, false)
WM_TWINS_MPI_Igather(wm_rooted_blocks, wm_coll_build_gather, true, true)
WM_TWINS_MPI_Gather_init(wm_rooted_blocks_init, wm_coll_build_gather, true)
WM_TWINS_MPI_Scatter(wm_rooted_blocks, NULL, wm_coll_build_scatter, false, false)
WM_TWINS_MPI_Iscatter(wm_rooted_blocks, wm_coll_build_scatter, false, true)
WM_TWINS_MPI_Scatter_init(wm_rooted_blocks_init, wm_coll_build_scatter, false)
WM_TWINS_MPI_Bcast_init(wm_bcast_init)

/* Gatherv and Scatterv, each helper serving an int form and its _c twin. */
static inline int wm_gatherv(const char *fn, const void *sendbuf, MPI_Count sendcount,
                             MPI_Datatype sendtype, void *recvbuf, wm_ints_t recvcounts,
                             wm_ints_t displs, MPI_Datatype recvtype, int root, MPI_Comm comm,
                             MPI_Request *request, int nb)
{
    return wm_rooted(fn, wm_coll_build_gatherv, true, true, sendbuf, sendcount, sendtype, recvbuf,
                     0, recvtype, wm_coll_counts(recvcounts), wm_coll_displs(displs), root, comm,
                     request, nb);
}

static inline int wm_gatherv_init(const char *fn, const void *sendbuf, MPI_Count sendcount,
                                  MPI_Datatype sendtype, void *recvbuf, wm_ints_t recvcounts,
                                  wm_ints_t displs, MPI_Datatype recvtype, int root,
                                  MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return wm_gatherv(fn, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                      root, comm, request, WM_COLL_PERSISTENT);
}

static inline int wm_scatterv(const char *fn, const void *sendbuf, wm_ints_t sendcounts,
                              wm_ints_t displs, MPI_Datatype sendtype, void *recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                              MPI_Request *request, int nb)
{
    return wm_rooted(fn, wm_coll_build_scatterv, false, true, sendbuf, 0, sendtype, recvbuf,
                     recvcount, recvtype, wm_coll_counts(sendcounts), wm_coll_displs(displs),
                     root, comm, request, nb);
}

static inline int wm_scatterv_init(const char *fn, const void *sendbuf, wm_ints_t sendcounts,
                                   wm_ints_t displs, MPI_Datatype sendtype, void *recvbuf,
                                   MPI_Count recvcount, MPI_Datatype recvtype, int root,
                                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return wm_scatterv(fn, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                       root, comm, request, WM_COLL_PERSISTENT);
}

WM_TWINS_MPI_Gatherv(wm_gatherv, NULL, false)
WM_TWINS_MPI_Igatherv(wm_gatherv, true)
WM_TWINS_MPI_Gatherv_init(wm_gatherv_init)
WM_TWINS_MPI_Scatterv(wm_scatterv, NULL, false)
WM_TWINS_MPI_Iscatterv(wm_scatterv, true)
WM_TWINS_MPI_Scatterv_init(wm_scatterv_init)

