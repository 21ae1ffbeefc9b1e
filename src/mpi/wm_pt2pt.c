/* Point-to-point entry points: blocking and nonblocking sends and receives, sendrecv, probes, and
 * their large-count (_c) forms. Every call hands the core count elements of the datatype's layout
 * (wc_isend_dt, wc_irecv_dt): contiguous layouts cost nothing more, others are packed in flight.
 * Blocking calls keep their core request on the stack unless a user communicator or datatype
 * must be named; nonblocking ones take one from the pool and name both. */
#include "mpi/wm_handle_conv.h"
#include "mpi/wm_internal.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

static inline int wm_check_dest(wm_comm_t *c, const char *fn, int dest, int tag)
{
    if (WU_UNLIKELY((dest < 0 || dest >= c->remote_size) && dest != MPI_PROC_NULL))
        return wm_error(c, MPI_ERR_RANK, fn, "invalid destination rank %d (%s has %d ranks)",
                        dest, c->name, c->remote_size);
    if (WU_UNLIKELY(tag < 0 || tag > WM_TAG_UB))
        return wm_error(c, MPI_ERR_TAG, fn, "invalid tag %d (valid: 0 to %d)", tag, WM_TAG_UB);
    return MPI_SUCCESS;
}

static inline int wm_check_source(wm_comm_t *c, const char *fn, int source, int tag)
{
    if (WU_UNLIKELY((source < 0 || source >= c->remote_size) && source != MPI_ANY_SOURCE &&
                    source != MPI_PROC_NULL))
        return wm_error(c, MPI_ERR_RANK, fn, "invalid source rank %d (%s has %d ranks)", source,
                        c->name, c->remote_size);
    if (WU_UNLIKELY((tag < 0 || tag > WM_TAG_UB) && tag != MPI_ANY_TAG))
        return wm_error(c, MPI_ERR_TAG, fn, "invalid tag %d (valid: MPI_ANY_TAG, 0 to %d)", tag,
                        WM_TAG_UB);
    /* a communicator made with mpi_assert_no_any_source/no_any_tag is matched exactly (wm_comm.c) */
    if (WU_UNLIKELY((c->ctx & WC_CTX_EXACT) && (source == MPI_ANY_SOURCE || tag == MPI_ANY_TAG)))
        return wm_error(c, MPI_ERR_ARG, fn, "%s on %s, created with the hints "
                        "mpi_assert_no_any_source and mpi_assert_no_any_tag",
                        source == MPI_ANY_SOURCE ? "MPI_ANY_SOURCE" : "MPI_ANY_TAG", c->name);
    return MPI_SUCCESS;
}

static inline void wm_proc_null_status(MPI_Status *status)
{
    if (status != MPI_STATUS_IGNORE)
        wm_status_fill(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, 0);
}

static inline int wm_core_source(const wm_comm_t *c, int source)
{
    return source == MPI_ANY_SOURCE ? WC_ANY_SOURCE : wm_comm_peer_world(c, source);
}

static inline int wm_core_tag(int tag)
{
    return tag == MPI_ANY_TAG ? WC_ANY_TAG : tag;
}

/* Status and error of a completed stack receive. */
static int wm_recv_finish(wm_comm_t *c, const char *fn, const wc_request_t *r, MPI_Status *status)
{
    int rc = MPI_SUCCESS;
    if (WU_UNLIKELY(r->error != WU_OK)) {
        if (r->error == WU_ERR_TRUNCATE)
            rc = wm_error_code(MPI_ERR_TRUNCATE, fn,
                               "message of %zu bytes from rank %d, tag %d, does not fit the %zu-byte buffer",
                               r->msg_len, wm_comm_peer_rank(c, r->st_source), r->st_tag, r->len);
        else
            rc = wm_error_code(wm_status_to_class(r->error), fn, "%s",
                               wu_status_str((wu_status_t)r->error));
    }
    if (status != MPI_STATUS_IGNORE)
        wm_status_fill(status, wm_comm_peer_rank(c, r->st_source), r->st_tag,
                       (MPI_Count)r->st_bytes, 0);
    return rc ? wm_error_raise(c, rc) : MPI_SUCCESS;
}

/* Blocking calls on predefined objects keep their core request on the stack. On a user
 * communicator or datatype they run on a pooled request that names the objects, so the collector
 * keeps them while the call is inside (another thread may free them meanwhile; docs/objects.md). */
static inline bool wm_all_predefined(const wm_comm_t *c, const wm_datatype_t *ti)
{
    return c->obj.predefined & ti->obj.predefined;
}

static wm_request_t *wm_request_named(wm_comm_t *c, const wm_datatype_t *ti)
{
    wm_request_t *r = wm_request_alloc_pt2pt();
    if (WU_UNLIKELY(!r))
        return NULL;
    r->comm = c;
    r->ti = ti;
    wm_request_use(r, WM_REQ_OBJ_COMM, &c->obj);
    wm_request_use(r, WM_REQ_OBJ_TYPE, (wm_obj_t *)&ti->obj);
    return r;
}

static inline int wm_core_error(wm_comm_t *c, const char *fn, int st)
{
    return wm_error(c, wm_status_to_class((wu_status_t)st), fn, "%s",
                    wu_status_str((wu_status_t)st));
}

static int wm_send(const char *fn, const void *buf, MPI_Count count, MPI_Datatype type, int dest,
                   int tag, MPI_Comm comm, wc_send_mode_t mode)
{
    WM_COMM_CHECK(fn, comm, c);
    if (WU_UNLIKELY(c->tcomm))
        return wm_tc_send(fn, c, buf, count, type, dest, tag, mode, false, NULL);
    const wm_datatype_t *ti;
    int rc = wm_check_buffer_args(c, fn, buf, count, type, &ti);
    if (WU_UNLIKELY(rc))
        return rc;
    if (WU_UNLIKELY((rc = wm_check_dest(c, fn, dest, tag))))
        return rc;
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    wc_request_t stack, *r = &stack;
    wm_request_t *named = NULL;
    if (WU_UNLIKELY(!wm_all_predefined(c, ti))) {
        if (!(named = wm_request_named(c, ti)))
            return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a request");
        r = &named->core;
    }
    int st = wc_isend_dt(wc_ep_default(), r, buf, (uint64_t)count, &ti->layout, wm_comm_peer_world(c, dest), tag,
                         c->ctx, mode);
    if (WU_LIKELY(st == WU_OK)) {
        wc_wait(r);
        st = r->error;
    }
    if (named)
        wm_request_release(named);
    if (WU_UNLIKELY(st != WU_OK))
        return wm_core_error(c, fn, st);
    return MPI_SUCCESS;
}

static int wm_recv(const char *fn, void *buf, MPI_Count count, MPI_Datatype type, int source,
                   int tag, MPI_Comm comm, MPI_Status *status)
{
    WM_COMM_CHECK(fn, comm, c);
    if (WU_UNLIKELY(c->tcomm))
        return wm_tc_recv(fn, c, buf, count, type, source, tag, status, NULL);
    const wm_datatype_t *ti;
    int rc = wm_check_buffer_args(c, fn, buf, count, type, &ti);
    if (WU_UNLIKELY(rc))
        return rc;
    if (WU_UNLIKELY((rc = wm_check_source(c, fn, source, tag))))
        return rc;
    if (source == MPI_PROC_NULL) {
        wm_proc_null_status(status);
        return MPI_SUCCESS;
    }
    wc_request_t stack, *r = &stack;
    wm_request_t *named = NULL;
    if (WU_UNLIKELY(!wm_all_predefined(c, ti))) {
        if (!(named = wm_request_named(c, ti)))
            return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a request");
        r = &named->core;
    }
    int st = wc_irecv_dt(wc_ep_default(), r, buf, (uint64_t)count, &ti->layout, wm_core_source(c, source),
                         wm_core_tag(tag), c->ctx);
    if (WU_LIKELY(st == WU_OK)) {
        wc_wait(r);
        rc = wm_recv_finish(c, fn, r, status);
    } else {
        rc = wm_core_error(c, fn, st);
    }
    if (named)
        wm_request_release(named);
    return rc;
}

WM_TWINS_MPI_Send(wm_send, WC_SEND_STANDARD)
WM_TWINS_MPI_Ssend(wm_send, WC_SEND_SYNC)
WM_TWINS_MPI_Rsend(wm_send, WC_SEND_READY)

WM_TWINS_MPI_Recv(wm_recv)

/* Start a nonblocking send or receive r built by wm_request_make: what wm_request_start does for
 * kinds WM_REQ_SEND and WM_REQ_RECV, with the kind known here (inlined into each entry point). */
static inline __attribute__((always_inline)) int wm_pt2pt_start(wm_request_t *r, wm_comm_t *c,
                                                                  const wm_datatype_t *ti,
                                                                  wm_req_kind_t kind, const char *fn)
{
    r->active = true;
    if (r->peer == MPI_PROC_NULL) {
        r->proc_null = true;
        return MPI_SUCCESS;
    }
    wu_status_t st;
    if (kind == WM_REQ_SEND)
        st = wc_isend_dt(wc_ep_default(), &r->core, r->buf, (uint64_t)r->count, &ti->layout,
                         wm_comm_peer_world(c, r->peer), r->tag, c->ctx, r->mode);
    else
        st = wc_irecv_dt(wc_ep_default(), &r->core, r->buf, (uint64_t)r->count, &ti->layout,
                         wm_core_source(c, r->peer), wm_core_tag(r->tag), c->ctx);
    if (WU_UNLIKELY(st != WU_OK)) {
        r->active = false;
        return wm_error(c, wm_status_to_class(st), fn, "%s", wu_status_str(st));
    }
    /* (from the arguments: the posted request belongs to whichever thread matches it) */
    size_t bytes = (size_t)r->count * ti->layout.size;
    if (kind == WM_REQ_RECV && WU_UNLIKELY(bytes >= WC_IRECV_LOOK_MIN))
        wc_irecv_look(wc_ep_default(), wm_core_source(c, r->peer), bytes);
    return MPI_SUCCESS;
}

/* Build a pooled request from checked arguments; persistent ones are not started. A persistent
 * request names its communicator and datatype for its whole life. Inlined into each entry point,
 * where kind, mode and persistent are constants. */
static inline __attribute__((always_inline)) int wm_request_make(const char *fn, wm_req_kind_t kind,
                                                                   void *buf, MPI_Count count,
                                                                   MPI_Datatype type, int peer,
                                                                   int tag, MPI_Comm comm,
                                                                   wc_send_mode_t mode,
                                                                   bool persistent,
                                                                   MPI_Request *request)
{
    WM_COMM_CHECK(fn, comm, c);
    if (WU_UNLIKELY(c->tcomm)) {
        if (persistent || !request)
            return persistent ? wm_tc_unsupported(fn, c)
                              : wm_error(c, MPI_ERR_ARG, fn, "request is NULL");
        return kind == WM_REQ_RECV
                   ? wm_tc_recv(fn, c, buf, count, type, peer, tag, MPI_STATUS_IGNORE, request)
                   : wm_tc_send(fn, c, buf, count, type, peer, tag, mode, false, request);
    }
    const wm_datatype_t *ti;
    int rc = wm_check_buffer_args(c, fn, buf, count, type, &ti);
    if (WU_UNLIKELY(rc))
        return rc;
    rc = kind == WM_REQ_RECV ? wm_check_source(c, fn, peer, tag) : wm_check_dest(c, fn, peer, tag);
    if (WU_UNLIKELY(rc))
        return rc;
    if (WU_UNLIKELY(!request))
        return wm_error(c, MPI_ERR_ARG, fn, "request is NULL");
    wm_request_t *r = wm_request_alloc_pt2pt();
    if (!r)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a request");
    r->kind = (uint8_t)kind;
    r->comm = c;
    r->ti = ti;
    wm_request_use(r, WM_REQ_OBJ_COMM, &c->obj);
    wm_request_use(r, WM_REQ_OBJ_TYPE, (wm_obj_t *)&ti->obj);
    r->buf = buf;
    r->count = count;
    r->type = type;
    r->peer = peer;
    r->tag = tag;
    r->mode = mode;
    r->persistent = persistent;
    if (!persistent) {
        rc = kind == WM_REQ_SEND || kind == WM_REQ_RECV ? wm_pt2pt_start(r, c, ti, kind, fn)
                                                        : wm_request_start(r, fn);
    }
    if (WU_UNLIKELY(rc != MPI_SUCCESS)) {
        wm_request_release(r);
        return rc;
    }
    *request = wm_request_handle(r);
    return MPI_SUCCESS;
}

/* The helpers of WM_TWINS_ (src/mpi/gen/wm_entry.h) for the nonblocking and persistent sends and
 * receives: wm_request_make with the entry point's parameters first. */
static inline __attribute__((always_inline)) int wm_isend(const char *fn, const void *buf,
                                                            MPI_Count count, MPI_Datatype datatype,
                                                            int dest, int tag, MPI_Comm comm,
                                                            MPI_Request *request,
                                                            wm_req_kind_t kind,
                                                            wc_send_mode_t mode, bool persistent)
{
    return wm_request_make(fn, kind, (void *)buf, count, datatype, dest, tag, comm, mode,
                           persistent, request);
}

static inline __attribute__((always_inline)) int wm_irecv(const char *fn, void *buf,
                                                            MPI_Count count, MPI_Datatype datatype,
                                                            int source, int tag, MPI_Comm comm,
                                                            MPI_Request *request, bool persistent)
{
    return wm_request_make(fn, WM_REQ_RECV, buf, count, datatype, source, tag, comm,
                           WC_SEND_STANDARD, persistent, request);
}

WM_TWINS_MPI_Isend(wm_isend, WM_REQ_SEND, WC_SEND_STANDARD, false)
WM_TWINS_MPI_Issend(wm_isend, WM_REQ_SEND, WC_SEND_SYNC, false)
WM_TWINS_MPI_Irsend(wm_isend, WM_REQ_SEND, WC_SEND_READY, false)
WM_TWINS_MPI_Send_init(wm_isend, WM_REQ_SEND, WC_SEND_STANDARD, true)
WM_TWINS_MPI_Ssend_init(wm_isend, WM_REQ_SEND, WC_SEND_SYNC, true)
WM_TWINS_MPI_Rsend_init(wm_isend, WM_REQ_SEND, WC_SEND_READY, true)
/* A persistent buffered send is a WM_REQ_DONE request that buffers its data at every start. */
WM_TWINS_MPI_Bsend_init(wm_isend, WM_REQ_DONE, WC_SEND_STANDARD, true)

WM_TWINS_MPI_Irecv(wm_irecv, false)
WM_TWINS_MPI_Recv_init(wm_irecv, true)

/* ---- sendrecv ---- */

/* Checked arguments. The send side is scount elements of slayout (sti names the datatype). */
static int wm_sendrecv_core(const char *fn, wm_comm_t *c, const void *sendbuf, MPI_Count scount,
                            const wc_dtype_t *slayout, const wm_datatype_t *sti, int dest,
                            int sendtag, void *recvbuf, MPI_Count rcount, const wm_datatype_t *rti,
                            int source, int recvtag, MPI_Status *status)
{
    wc_request_t ss, rs, *s = &ss, *r = &rs;
    wm_request_t *sn = NULL, *rn = NULL;
    int st = WU_OK, rc = MPI_SUCCESS;
    if (WU_UNLIKELY(!(c->obj.predefined & sti->obj.predefined & rti->obj.predefined))) {
        sn = wm_request_named(c, sti);
        rn = wm_request_named(c, rti);
        if (!sn || !rn) {
            if (sn)
                wm_request_release(sn);
            if (rn)
                wm_request_release(rn);
            return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a request");
        }
        s = &sn->core;
        r = &rn->core;
    }
    if (source != MPI_PROC_NULL)
        st = wc_irecv_dt(wc_ep_default(), r, recvbuf, (uint64_t)rcount, &rti->layout, wm_core_source(c, source),
                         wm_core_tag(recvtag), c->ctx);
    if (st == WU_OK && dest != MPI_PROC_NULL) {
        st = wc_isend_dt(wc_ep_default(), s, sendbuf, (uint64_t)scount, slayout, wm_comm_peer_world(c, dest),
                         sendtag, c->ctx, WC_SEND_STANDARD);
        if (st == WU_OK) {
            wc_wait(s);
            st = s->error;
        }
    }
    if (source == MPI_PROC_NULL) {
        wm_proc_null_status(status);
        if (st != WU_OK)
            rc = wm_core_error(c, fn, st);
    } else {
        /* a posted receive must finish before its request goes */
        wc_wait(r);
        rc = st == WU_OK ? wm_recv_finish(c, fn, r, status) : wm_core_error(c, fn, st);
    }
    if (sn) {
        wm_request_release(sn);
        wm_request_release(rn);
    }
    return rc;
}

static int wm_sendrecv(const char *fn, const void *sendbuf, MPI_Count sendcount,
                       MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                       MPI_Comm comm, MPI_Status *status)
{
    WM_COMM_CHECK(fn, comm, c);
    if (WU_UNLIKELY(c->tcomm))
        return wm_tc_sendrecv(fn, c, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                              recvcount, recvtype, source, recvtag, status);
    const wm_datatype_t *sti, *rti;
    int rc;
    if ((rc = wm_check_buffer_args(c, fn, sendbuf, sendcount, sendtype, &sti)) ||
        (rc = wm_check_dest(c, fn, dest, sendtag)) ||
        (rc = wm_check_buffer_args(c, fn, recvbuf, recvcount, recvtype, &rti)) ||
        (rc = wm_check_source(c, fn, source, recvtag)))
        return rc;
    return wm_sendrecv_core(fn, c, sendbuf, sendcount, &sti->layout, sti, dest, sendtag, recvbuf,
                            recvcount, rti, source, recvtag, status);
}

WM_TWINS_MPI_Sendrecv(wm_sendrecv)

/* The outgoing data is packed into a temporary (the only copy), sent as bytes, and the incoming
 * message is received straight into buf with the datatype. */
static const wc_dtype_t wm_layout_bytes = { .size = 1, .extent = 1, .contig = true };

static int wm_sendrecv_replace(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype,
                               int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
                               MPI_Status *status)
{
    WM_COMM_CHECK(fn, comm, c);
    if (WU_UNLIKELY(c->tcomm))
        return wm_tc_sendrecv_replace(fn, c, buf, count, datatype, dest, sendtag, source, recvtag,
                                      status);
    const wm_datatype_t *ti;
    int rc;
    if ((rc = wm_check_buffer_args(c, fn, buf, count, datatype, &ti)) ||
        (rc = wm_check_dest(c, fn, dest, sendtag)) ||
        (rc = wm_check_source(c, fn, source, recvtag)))
        return rc;
    size_t bytes = dest == MPI_PROC_NULL ? 0 : (size_t)count * ti->layout.size;
    void *tmp = malloc(bytes ? bytes : 1);
    if (!tmp)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a %zu-byte staging buffer", bytes);
    if (bytes && ti->layout.contig) {
        memcpy(tmp, (char *)buf + ti->layout.contig_off, bytes);
    } else if (bytes) {
        wc_dtype_cursor_t cur;
        wc_dtype_cursor_init(&cur, &ti->layout, buf, (uint64_t)count);
        wc_dtype_pack(&cur, tmp, bytes);
    }
    rc = wm_sendrecv_core(fn, c, tmp, (MPI_Count)bytes, &wm_layout_bytes, ti, dest, sendtag, buf,
                          count, ti, source, recvtag, status);
    free(tmp);
    return rc;
}

WM_TWINS_MPI_Sendrecv_replace(wm_sendrecv_replace)

/* ---- probes ---- */

#define WM_MAGIC_MSG 0x4d657367u
typedef struct wm_message {
    uint32_t      magic;
    wm_comm_t    *comm;
    wc_message_t *msg;
    wc_probe_info_t info;
} wm_message_t;

static void wm_probe_status(wm_comm_t *c, const wc_probe_info_t *info, MPI_Status *status)
{
    if (status != MPI_STATUS_IGNORE)
        wm_status_fill(status, wm_comm_peer_rank(c, info->source), info->tag,
                       (MPI_Count)info->len, 0);
}

static int wm_iprobe(const char *fn, int source, int tag, MPI_Comm comm, bool take, int *flag,
                     MPI_Message *message, MPI_Status *status, bool block)
{
    WM_COMM_CHECK(fn, comm, c);
    if (WU_UNLIKELY(c->tcomm))
        return take ? wm_tc_unsupported(fn, c) : wm_tc_probe(fn, c, source, tag, flag, status, block);
    int rc = wm_check_source(c, fn, source, tag);
    if (rc)
        return rc;
    if (WU_UNLIKELY(!flag || (take && !message)))
        return wm_error(c, MPI_ERR_ARG, fn, "%s is NULL", flag ? "message" : "flag");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        wm_proc_null_status(status);
        if (take)
            *message = MPI_MESSAGE_NO_PROC;
        return MPI_SUCCESS;
    }
    wc_probe_info_t info;
    wc_message_t *msg = NULL;
    wc_idle_t idle;
    wc_idle_init(&idle);
    while (!wc_iprobe(wc_ep_default(), wm_core_source(c, source), wm_core_tag(tag), c->ctx, take, &info, &msg)) {
        if (!block) {
            *flag = 0;
            return MPI_SUCCESS;
        }
        wc_idle_block(&idle, NULL, 0);
    }
    *flag = 1;
    wm_probe_status(c, &info, status);
    if (take) {
        wm_message_t *m = malloc(sizeof(*m));
        if (!m)
            return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a message handle");
        *m = (wm_message_t){ .magic = WM_MAGIC_MSG, .comm = c, .msg = msg, .info = info };
        *message = (MPI_Message)m;
    }
    return MPI_SUCCESS;
}

int wm_impl_MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    return wm_iprobe("MPI_Iprobe", source, tag, comm, false, flag, NULL, status, false);
}

int wm_impl_MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    int flag;
    return wm_iprobe("MPI_Probe", source, tag, comm, false, &flag, NULL, status, true);
}

int wm_impl_MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                        MPI_Status *status)
{
    return wm_iprobe("MPI_Improbe", source, tag, comm, true, flag, message, status, false);
}

int wm_impl_MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message,
                       MPI_Status *status)
{
    int flag;
    return wm_iprobe("MPI_Mprobe", source, tag, comm, true, &flag, message, status, true);
}

static int wm_message_take(const char *fn, MPI_Message *message, wm_message_t **m_p)
{
    WM_CHECK_INIT(fn);
    if (!message)
        return wm_error(NULL, MPI_ERR_ARG, fn, "message is NULL");
    wm_message_t *m = (uintptr_t)*message < 0x1000 ? NULL : (wm_message_t *)*message;
    if (*message != MPI_MESSAGE_NO_PROC && (!m || m->magic != WM_MAGIC_MSG))
        return wm_error(NULL, MPI_ERR_REQUEST, fn, "invalid message handle %p", (void *)*message);
    *m_p = m;
    return MPI_SUCCESS;
}

static int wm_mrecv(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Message *message, MPI_Status *status)
{
    wm_message_t *m;
    int rc = wm_message_take(fn, message, &m);
    if (rc)
        return rc;
    if (!m) {
        wm_proc_null_status(status);
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    const wm_datatype_t *ti;
    wm_comm_t *c = m->comm;
    if ((rc = wm_check_buffer_args(c, fn, buf, count, datatype, &ti)))
        return rc;
    wc_request_t stack, *r = &stack;
    wm_request_t *named = NULL;
    if (WU_UNLIKELY(!wm_all_predefined(c, ti))) {
        if (!(named = wm_request_named(c, ti)))
            return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a request");
        r = &named->core;
    }
    wc_imrecv_dt(wc_ep_default(), r, buf, (uint64_t)count, &ti->layout, m->msg);
    m->magic = 0;
    wm_handle_conv_forget_message((MPI_Message)m);
    free(m);
    *message = MPI_MESSAGE_NULL;
    wc_wait(r);
    rc = wm_recv_finish(c, fn, r, status);
    if (named)
        wm_request_release(named);
    return rc;
}

WM_TWINS_MPI_Mrecv(wm_mrecv)

static int wm_imrecv(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Message *message, MPI_Request *request)
{
    wm_message_t *m;
    int rc = wm_message_take(fn, message, &m);
    if (rc)
        return rc;
    if (!request)
        return wm_error(NULL, MPI_ERR_ARG, fn, "request is NULL");
    const wm_datatype_t *ti = NULL;
    if (m && (rc = wm_check_buffer_args(m->comm, fn, buf, count, datatype, &ti)))
        return rc;
    wm_request_t *r = wm_request_alloc();
    if (!r)
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "no memory for a request");
    r->kind = WM_REQ_RECV;
    r->active = true;
    r->peer = MPI_ANY_SOURCE;
    r->comm = m ? m->comm : &wm_comm_world;
    r->buf = buf;
    r->count = count;
    r->type = datatype;
    if (!m) {
        r->proc_null = true;
        *request = wm_request_handle(r);
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    r->ti = ti;
    wm_request_use(r, WM_REQ_OBJ_COMM, &m->comm->obj);
    wm_request_use(r, WM_REQ_OBJ_TYPE, (wm_obj_t *)&ti->obj);
    wc_imrecv_dt(wc_ep_default(), &r->core, buf, (uint64_t)count, &ti->layout, m->msg);
    m->magic = 0;
    wm_handle_conv_forget_message((MPI_Message)m);
    free(m);
    *message = MPI_MESSAGE_NULL;
    *request = wm_request_handle(r);
    return MPI_SUCCESS;
}

WM_TWINS_MPI_Imrecv(wm_imrecv)

/* ---- MPI_Isendrecv, MPI_Isendrecv_replace ----
 *
 * The request the user gets (kind WM_REQ_SENDRECV) is never given to the core. Each half is a
 * pooled request of its own (it names the communicator and its datatype, so both live as long as
 * the half does), detached at once: the core calls the half's callback when it completes, in
 * whatever thread ran the progress. The receive's callback copies its status fields (source, tag,
 * bytes, error) into the outer request; the callback that completes the second half completes the
 * outer request, which wakes its waiter. Concurrency: `left` orders the two callbacks (acq_rel),
 * so the last one sees what the other wrote; the outer request's owner reads those fields only
 * after its core state says complete (acquire). */
typedef struct wm_isr {
    _Atomic int left;       /* halves not complete */
    int         send_error; /* wu_status_t of the send half */
    void       *tmp;        /* _replace: the packed outgoing data, freed with the send half */
} wm_isr_t;

static void wm_isr_half_done(wm_request_t *outer)
{
    wm_isr_t *x = outer->ext;
    if (atomic_fetch_sub_explicit(&x->left, 1, memory_order_acq_rel) != 1)
        return;
    if (outer->core.error == WU_OK && x->send_error != WU_OK)
        outer->core.error = x->send_error;
    outer->ext = NULL;
    free(x);
    wc_request_done(&outer->core);
}

static void wm_isr_send_cb(wc_request_t *core)
{
    wm_request_t *half = WU_CONTAINER_OF(core, wm_request_t, core), *outer = half->ext;
    wm_isr_t *x = outer->ext;
    x->send_error = half->proc_null ? WU_OK : core->error;
    free(x->tmp);
    x->tmp = NULL;
    wm_request_release(half);
    wm_isr_half_done(outer);
}

static void wm_isr_recv_cb(wc_request_t *core)
{
    wm_request_t *half = WU_CONTAINER_OF(core, wm_request_t, core), *outer = half->ext;
    if (!half->proc_null) {
        outer->core.error = core->error;
        outer->core.st_source = core->st_source;
        outer->core.st_tag = core->st_tag;
        outer->core.st_bytes = core->st_bytes;
        outer->core.msg_len = core->msg_len;
        outer->core.len = core->len;
    }
    wm_request_release(half);
    wm_isr_half_done(outer);
}

/* A half of checked arguments, named objects, not started. */
static wm_request_t *wm_isr_half(wm_comm_t *c, wm_req_kind_t kind, void *buf, MPI_Count count,
                                 MPI_Datatype type, const wm_datatype_t *ti, int peer, int tag,
                                 wm_request_t *outer)
{
    wm_request_t *h = wm_request_alloc();
    if (!h)
        return NULL;
    h->kind = (uint8_t)kind;
    h->comm = c;
    h->ti = ti;
    wm_request_use(h, WM_REQ_OBJ_COMM, &c->obj);
    wm_request_use(h, WM_REQ_OBJ_TYPE, (wm_obj_t *)&ti->obj);
    h->buf = buf;
    h->count = count;
    h->type = type;
    h->peer = peer;
    h->tag = tag;
    h->mode = WC_SEND_STANDARD;
    h->ext = outer;
    return h;
}

/* Hands a started half to the core (or completes it now: MPI_PROC_NULL, or it failed to start). */
static void wm_isr_launch(wm_request_t *h, void (*cb)(wc_request_t *), wu_status_t st)
{
    if (st != WU_OK) {
        h->proc_null = false;
        h->core.error = st;
        cb(&h->core);
    } else if (h->proc_null) {
        cb(&h->core);
    } else {
        wc_request_detach(&h->core, cb);
    }
}

/* replace: sendbuf is NULL and the outgoing data is packed from recvbuf first. */
static int wm_isendrecv(const char *fn, const void *sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                        MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                        MPI_Comm comm, MPI_Request *request, bool replace)
{
    WM_COMM_CHECK(fn, comm, c);
    const wm_datatype_t *sti = NULL, *rti;
    int rc;
    if ((rc = wm_check_buffer_args(c, fn, recvbuf, recvcount, recvtype, &rti)) ||
        (!replace && (rc = wm_check_buffer_args(c, fn, sendbuf, sendcount, sendtype, &sti))) ||
        (rc = wm_check_dest(c, fn, dest, sendtag)) ||
        (rc = wm_check_source(c, fn, source, recvtag)))
        return rc;
    if (!request)
        return wm_error(c, MPI_ERR_ARG, fn, "request is NULL");
    if (replace)
        sti = rti;
    size_t bytes = replace && dest != MPI_PROC_NULL ? (size_t)recvcount * rti->layout.size : 0;
    wm_isr_t *x = calloc(1, sizeof(*x));
    void *tmp = replace ? malloc(bytes ? bytes : 1) : NULL;
    wm_request_t *r = x && (tmp || !replace) ? wm_request_alloc() : NULL;
    wm_request_t *hs = r ? wm_isr_half(c, WM_REQ_SEND, (void *)sendbuf, sendcount, sendtype, sti,
                                       dest, sendtag, r) : NULL;
    wm_request_t *hr = hs ? wm_isr_half(c, WM_REQ_RECV, recvbuf, recvcount, recvtype, rti, source,
                                        recvtag, r) : NULL;
    if (!hr) {
        if (hs)
            wm_request_release(hs);
        if (r)
            wm_request_release(r);
        free(tmp);
        free(x);
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a request");
    }
    if (bytes && rti->layout.contig) {
        memcpy(tmp, (char *)recvbuf + rti->layout.contig_off, bytes);
    } else if (bytes) {
        wc_dtype_cursor_t cur;
        wc_dtype_cursor_init(&cur, &rti->layout, recvbuf, (uint64_t)recvcount);
        wc_dtype_pack(&cur, tmp, bytes);
    }
    atomic_init(&x->left, 2);
    x->tmp = tmp;
    r->kind = WM_REQ_SENDRECV;
    r->comm = c;
    r->ti = rti;
    wm_request_use(r, WM_REQ_OBJ_COMM, &c->obj);
    wm_request_use(r, WM_REQ_OBJ_TYPE, (wm_obj_t *)&rti->obj);
    r->buf = recvbuf;
    r->count = recvcount;
    r->type = recvtype;
    r->peer = source;
    r->tag = recvtag;
    r->ext = x;
    r->active = true;
    *request = wm_request_handle(r);

    /* the receive first: a message to ourselves finds it posted */
    hr->active = true;
    hr->proc_null = source == MPI_PROC_NULL;
    wu_status_t st = WU_OK;
    if (!hr->proc_null)
        st = wc_irecv_dt(wc_ep_default(), &hr->core, recvbuf, (uint64_t)recvcount, &rti->layout,
                         source == MPI_ANY_SOURCE ? WC_ANY_SOURCE : wm_comm_peer_world(c, source),
                         recvtag == MPI_ANY_TAG ? WC_ANY_TAG : recvtag, c->ctx);
    wm_isr_launch(hr, wm_isr_recv_cb, st);
    hs->active = true;
    hs->proc_null = dest == MPI_PROC_NULL;
    st = WU_OK;
    if (!hs->proc_null && replace)
        st = wc_isend_dt(wc_ep_default(), &hs->core, tmp, bytes, &wm_layout_bytes,
                         wm_comm_peer_world(c, dest), sendtag, c->ctx, WC_SEND_STANDARD);
    else if (!hs->proc_null)
        st = wc_isend_dt(wc_ep_default(), &hs->core, sendbuf, (uint64_t)sendcount, &sti->layout,
                         wm_comm_peer_world(c, dest), sendtag, c->ctx, WC_SEND_STANDARD);
    wm_isr_launch(hs, wm_isr_send_cb, st);
    return MPI_SUCCESS;
}

WM_TWINS_MPI_Isendrecv(wm_isendrecv, false)

static int wm_isendrecv_replace(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype,
                                int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
                                MPI_Request *request)
{
    return wm_isendrecv(fn, NULL, count, datatype, dest, sendtag, buf, count, datatype, source,
                        recvtag, comm, request, true);
}
WM_TWINS_MPI_Isendrecv_replace(wm_isendrecv_replace)
