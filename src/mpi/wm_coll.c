/* Collectives: running schedules for the entry points (tagged by the communicator's sequence
 * number, wm_comm_t.coll_seq), the argument checks, and the barrier (used by MPI_Finalize too). See wm_coll.h. */
#include "mpi/wm_coll.h"

#include <stdlib.h>

/* ---- running ---- */

static int wm_coll_status_error(wm_comm_t *c, const char *fn, wu_status_t st)
{
    if (st == WU_ERR_TRUNCATE)
        return wm_error(c, MPI_ERR_TRUNCATE, fn,
                        "a message was longer than its buffer (counts or datatypes differ between "
                        "the ranks)");
    return wm_error(c, wm_status_to_class(st), fn, "%s", wu_status_str(st));
}

int wm_coll_run(const char *fn, wm_comm_t *c, wm_coll_build_fn_t build, const wm_coll_args_t *a,
                MPI_Request *request, wm_obj_t *obj1, wm_obj_t *obj2)
{
    /* A nonblocking call's sequence number on c names its messages, so that calls outstanding
     * together never match each other's; blocking calls share one tag, since a process runs one
     * of them at a time on c, and the messages between two ranks of one call are sent and received
     * in the same order on both sides (docs/collectives.md). One tag keeps the matching engine on
     * the same bins call after call. */
    int tag = WM_TAG_COLL_BLOCKING;
    if (!request && WU_UNLIKELY(atomic_load_explicit(&c->coll_broken, memory_order_relaxed)))
        return wm_error(c, MPI_ERR_OTHER, fn,
                        "an earlier blocking collective on %s failed on this rank before all its "
                        "messages were posted: later ones cannot be matched safely", c->name);
    if (request) {
        uint32_t seq = atomic_fetch_add_explicit(&c->coll_seq, 1, memory_order_relaxed);
        tag = WM_TAG_COLL_BASE + (int)(seq % (uint32_t)(WM_TAG_COLL_END - WM_TAG_COLL_BASE + 1));
    }
    wc_sched_t *s = wc_sched_create(wc_ep_default(), c->ctx | WM_CTX_COLL, tag);
    if (!s)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a schedule");
    build(s, c, a);
    wu_status_t st = wc_sched_error(s);
    if (WU_UNLIKELY(st != WU_OK)) {
        wc_sched_discard(s);
        if (!request)
            atomic_store_explicit(&c->coll_broken, true, memory_order_relaxed);
        return wm_coll_status_error(c, fn, st);
    }
    if (a->persist)
        return wm_coll_persist_new(fn, c, s, request, obj1, obj2);
    if (!request) {
        wc_sched_start(s, NULL);
        st = wc_sched_wait(s);
        if (WU_LIKELY(st == WU_OK))
            return MPI_SUCCESS;
        /* a truncated or unreadable message was still taken; anything else may have left steps
         * unposted */
        if (st != WU_ERR_TRUNCATE && st != WU_ERR_IO)
            atomic_store_explicit(&c->coll_broken, true, memory_order_relaxed);
        return wm_coll_status_error(c, fn, st);
    }
    wm_request_t *r = wm_request_alloc();
    if (!r) {
        wc_sched_discard(s);
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a request");
    }
    r->kind = WM_REQ_COLL;
    r->comm = c;
    r->peer = MPI_ANY_SOURCE;
    r->tag = MPI_ANY_TAG;
    wm_request_use(r, WM_REQ_OBJ_COMM, &c->obj);
    if (obj1)
        wm_request_use(r, WM_REQ_OBJ_TYPE, obj1);
    if (obj2)
        wm_request_use(r, WM_REQ_OBJ_OP, obj2);
    r->active = true;
    *request = wm_request_handle(r);
    wc_sched_start(s, &r->core);
    return MPI_SUCCESS;
}

char *wm_coll_tmp(wc_sched_t *s, uint64_t count, const wm_datatype_t *ti)
{
    if (count == 0)
        return wc_sched_tmp(s, 16);
    int64_t span = (int64_t)(count - 1) * ti->extent + ti->true_extent;
    char *p = wc_sched_tmp(s, (size_t)(span > 0 ? span : 1));
    return p ? p - ti->true_lb : NULL;
}

/* ---- checks ---- */

int wm_coll_check_comm(wm_comm_t *c, const char *fn, MPI_Request *request, bool nb)
{
    if (WU_UNLIKELY(c->tcomm))   /* the collectives threadcomms implement do not come here */
        return wm_tc_unsupported(fn, c);
    if (WU_UNLIKELY(nb && !request))
        return wm_error(c, MPI_ERR_ARG, fn, "request is NULL");
    return MPI_SUCCESS;
}

int wm_coll_check_intra(wm_comm_t *c, const char *fn)
{
    if (WU_UNLIKELY(c->inter))
        return wm_error(c, MPI_ERR_COMM, fn,
                        "%s is an intercommunicator: %s is not defined on intercommunicators",
                        c->name, fn);
    return MPI_SUCCESS;
}

int wm_coll_check_root(wm_comm_t *c, const char *fn, int root)
{
    if (c->inter) {
        if (WU_UNLIKELY(root != MPI_ROOT && root != MPI_PROC_NULL &&
                        (root < 0 || root >= c->remote_size)))
            return wm_error(c, MPI_ERR_ROOT, fn,
                            "invalid root %d on intercommunicator %s: MPI_ROOT, MPI_PROC_NULL or "
                            "a rank of the remote group (%d ranks)", root, c->name,
                            c->remote_size);
        return MPI_SUCCESS;
    }
    if (WU_UNLIKELY(root < 0 || root >= c->size))
        return wm_error(c, MPI_ERR_ROOT, fn, "invalid root %d (%s has %d ranks)", root, c->name,
                        c->size);
    return MPI_SUCCESS;
}

int wm_coll_check_buf(wm_comm_t *c, const char *fn, const char *which, const void *buf,
                      MPI_Count count, MPI_Datatype type, const wm_datatype_t **ti_p)
{
    if (WU_UNLIKELY(count < 0))
        return wm_error(c, MPI_ERR_COUNT, fn, "%s count %lld is negative", which,
                        (long long)count);
    const wm_datatype_t *ti = wm_type_get(type);
    if (WU_UNLIKELY(!ti))
        return wm_error(c, MPI_ERR_TYPE, fn, "invalid %s datatype %p", which, (void *)type);
    if (WU_UNLIKELY(!ti->committed))
        return wm_error(c, MPI_ERR_TYPE, fn, "%s datatype %p is not committed", which,
                        (void *)type);
    if (WU_UNLIKELY(ti->size_overflow | ti->bounds_overflow))
        return wm_error(c, MPI_ERR_TYPE, fn, "the %s of %s datatype %p does not fit in MPI_Count",
                        ti->size_overflow ? "size" : "extent", which, (void *)type);
    if (WU_UNLIKELY(buf == MPI_IN_PLACE))
        return wm_error(c, MPI_ERR_BUFFER, fn, "%s buffer cannot be MPI_IN_PLACE here", which);
    *ti_p = ti;
    return MPI_SUCCESS;
}

int wm_coll_check_not_in_place(wm_comm_t *c, const char *fn, const char *which, const void *buf)
{
    if (WU_UNLIKELY(buf == MPI_IN_PLACE))
        return wm_error(c, MPI_ERR_BUFFER, fn,
                        "%s cannot be MPI_IN_PLACE: %s is an intercommunicator", which, c->name);
    return MPI_SUCCESS;
}

int wm_coll_check_vec(wm_comm_t *c, const char *fn, const char *which, const wm_coll_vec_t *v,
                      int n)
{
    if (WU_UNLIKELY(!v->i && !v->c && !v->a && n > 0))
        return wm_error(c, MPI_ERR_ARG, fn, "%s is NULL", which);
    return MPI_SUCCESS;
}

/* ---- barrier ---- */

/* Dissemination (Hensgen, Finkel, Manber): ceil(log2 n) rounds of zero-byte messages. */
void wm_coll_build_barrier(wc_sched_t *s, wm_comm_t *c, const wm_coll_args_t *a)
{
    (void)a;
    int n = c->size, me = c->rank;
    for (int d = 1; d < n; d <<= 1) {
        wc_sched_recv(s, NULL, 0, &wc_dtype_bytes, wm_coll_world(c, (me - d + n) % n));
        wc_sched_send(s, NULL, 0, &wc_dtype_bytes, wm_coll_world(c, (me + d) % n));
        wc_sched_fence(s);
    }
}

static inline wm_coll_build_fn_t wm_barrier_builder(const wm_comm_t *c)
{
    return c->inter ? wm_coll_build_inter_barrier
                    : wm_coll_pick(wm_coll_build_barrier, wm_coll_build_hier_barrier);
}

int wm_barrier(wm_comm_t *c)
{
    wm_coll_args_t a = { 0 };
    return wm_coll_run("MPI_Barrier", c, wm_barrier_builder(c), &a, NULL, NULL, NULL);
}

int wm_impl_MPI_Barrier(MPI_Comm comm)
{
    static const char fn[] = "MPI_Barrier";
    WM_COMM_CHECK(fn, comm, c);
    if (WU_UNLIKELY(c->tcomm))
        return wm_tc_coll_entry(fn, c, &(wm_tc_coll_args_t){ .kind = WM_TC_BARRIER }, NULL, 0);
    int rc = wm_coll_check_comm(c, fn, NULL, false);
    if (rc)
        return rc;
    return wm_barrier(c);
}

int wm_impl_MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Ibarrier";
    WM_COMM_CHECK(fn, comm, c);
    if (WU_UNLIKELY(c->tcomm))
        return wm_tc_coll_entry(fn, c, &(wm_tc_coll_args_t){ .kind = WM_TC_BARRIER }, request, 1);
    int rc = wm_coll_check_comm(c, fn, request, true);
    if (rc)
        return rc;
    wm_coll_args_t a = { 0 };
    return wm_coll_run(fn, c, wm_barrier_builder(c), &a, request, NULL, NULL);
}

int wm_impl_MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    static const char fn[] = "MPI_Barrier_init";
    WM_COMM_CHECK(fn, comm, c);
    (void)info;   /* no hint Weft uses */
    int rc = wm_coll_check_comm(c, fn, request, true);
    if (rc)
        return rc;
    wm_coll_args_t a = { .persist = true };
    return wm_coll_run(fn, c, wm_barrier_builder(c), &a, request, NULL, NULL);
}
