/* Point-to-point entry points: blocking and nonblocking sends and receives, sendrecv, probes.
 * Blocking calls keep their core request on the stack; nonblocking ones take one from the pool. */
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
    return MPI_SUCCESS;
}

static inline void wm_proc_null_status(MPI_Status *status)
{
    if (status != MPI_STATUS_IGNORE)
        wm_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
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
        wm_status_set(status, wm_comm_peer_rank(c, r->st_source), r->st_tag, rc,
                      (MPI_Count)r->st_bytes, 0);
    return rc ? wm_error_raise(c, rc) : MPI_SUCCESS;
}

static int wm_send(const char *fn, const void *buf, MPI_Count count, MPI_Datatype type, int dest,
                   int tag, MPI_Comm comm, wc_send_mode_t mode)
{
    WM_COMM_CHECK(fn, comm, c);
    const wm_datatype_t *ti;
    int rc = wm_check_buffer_args(c, fn, buf, count, type, &ti);
    if (WU_UNLIKELY(rc))
        return rc;
    if (WU_UNLIKELY((rc = wm_check_dest(c, fn, dest, tag))))
        return rc;
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    wc_request_t r;
    wc_isend(&r, buf, (size_t)count * ti->layout.size, wm_comm_peer_world(c, dest), tag, c->ctx, mode);
    wc_wait(&r);
    if (WU_UNLIKELY(r.error != WU_OK))
        return wm_error(c, wm_status_to_class(r.error), fn, "%s", wu_status_str(r.error));
    return MPI_SUCCESS;
}

static int wm_recv(const char *fn, void *buf, MPI_Count count, MPI_Datatype type, int source,
                   int tag, MPI_Comm comm, MPI_Status *status)
{
    WM_COMM_CHECK(fn, comm, c);
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
    wc_request_t r;
    rc = wc_irecv(&r, buf, (size_t)count * ti->layout.size, wm_core_source(c, source), wm_core_tag(tag),
                  c->ctx);
    if (WU_UNLIKELY(rc != WU_OK))
        return wm_error(c, wm_status_to_class(rc), fn, "%s", wu_status_str(rc));
    wc_wait(&r);
    return wm_recv_finish(c, fn, &r, status);
}

WM_API int PMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm)
{
    return wm_send("MPI_Send", buf, count, datatype, dest, tag, comm, WC_SEND_STANDARD);
}
WM_ALIAS(MPI_Send)

WM_API int PMPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm)
{
    return wm_send("MPI_Ssend", buf, count, datatype, dest, tag, comm, WC_SEND_SYNC);
}
WM_ALIAS(MPI_Ssend)

WM_API int PMPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm)
{
    return wm_send("MPI_Rsend", buf, count, datatype, dest, tag, comm, WC_SEND_READY);
}
WM_ALIAS(MPI_Rsend)

WM_API int PMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                     MPI_Comm comm, MPI_Status *status)
{
    return wm_recv("MPI_Recv", buf, count, datatype, source, tag, comm, status);
}
WM_ALIAS(MPI_Recv)

/* Build a pooled request from checked arguments; persistent ones are not started. */
static int wm_request_make(const char *fn, wm_req_kind_t kind, void *buf, MPI_Count count,
                           MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                           wc_send_mode_t mode, bool persistent, MPI_Request *request)
{
    WM_COMM_CHECK(fn, comm, c);
    const wm_datatype_t *ti;
    int rc = wm_check_buffer_args(c, fn, buf, count, type, &ti);
    if (WU_UNLIKELY(rc))
        return rc;
    rc = kind == WM_REQ_SEND ? wm_check_dest(c, fn, peer, tag) : wm_check_source(c, fn, peer, tag);
    if (WU_UNLIKELY(rc))
        return rc;
    if (WU_UNLIKELY(!request))
        return wm_error(c, MPI_ERR_ARG, fn, "request is NULL");
    wm_request_t *r = wm_request_alloc();
    if (!r)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a request");
    r->kind = (uint8_t)kind;
    r->comm = c;
    wm_request_use(r, WM_REQ_OBJ_COMM, &c->obj);
    r->buf = buf;
    r->count = count;
    r->type = type;
    r->peer = peer;
    r->tag = tag;
    r->mode = mode;
    r->persistent = persistent;
    if (!persistent && (rc = wm_request_start(r, fn)) != MPI_SUCCESS) {
        wm_request_release(r);
        return rc;
    }
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}

#define WM_ISEND(NAME, MODE, PERSISTENT)                                                         \
    WM_API int P##NAME(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,     \
                       MPI_Comm comm, MPI_Request *request)                                      \
    {                                                                                            \
        return wm_request_make(#NAME, WM_REQ_SEND, (void *)buf, count, datatype, dest, tag, comm, \
                               MODE, PERSISTENT, request);                                       \
    }                                                                                            \
    WM_ALIAS(NAME)

WM_ISEND(MPI_Isend, WC_SEND_STANDARD, false)
WM_ISEND(MPI_Issend, WC_SEND_SYNC, false)
WM_ISEND(MPI_Irsend, WC_SEND_READY, false)
WM_ISEND(MPI_Send_init, WC_SEND_STANDARD, true)

WM_API int PMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                      MPI_Comm comm, MPI_Request *request)
{
    return wm_request_make("MPI_Irecv", WM_REQ_RECV, buf, count, datatype, source, tag, comm,
                           WC_SEND_STANDARD, false, request);
}
WM_ALIAS(MPI_Irecv)

WM_API int PMPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                          MPI_Comm comm, MPI_Request *request)
{
    return wm_request_make("MPI_Recv_init", WM_REQ_RECV, buf, count, datatype, source, tag, comm,
                           WC_SEND_STANDARD, true, request);
}
WM_ALIAS(MPI_Recv_init)

/* ---- sendrecv ---- */

static int wm_sendrecv(const char *fn, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       int dest, int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    WM_COMM_CHECK(fn, comm, c);
    const wm_datatype_t *sti, *rti;
    int rc;
    if ((rc = wm_check_buffer_args(c, fn, sendbuf, sendcount, sendtype, &sti)) ||
        (rc = wm_check_dest(c, fn, dest, sendtag)) ||
        (rc = wm_check_buffer_args(c, fn, recvbuf, recvcount, recvtype, &rti)) ||
        (rc = wm_check_source(c, fn, source, recvtag)))
        return rc;
    wc_request_t s, r;
    if (source != MPI_PROC_NULL)
        wc_irecv(&r, recvbuf, (size_t)recvcount * rti->layout.size, wm_core_source(c, source),
                 wm_core_tag(recvtag), c->ctx);
    if (dest != MPI_PROC_NULL) {
        wc_isend(&s, sendbuf, (size_t)sendcount * sti->layout.size, wm_comm_peer_world(c, dest),
                 sendtag, c->ctx, WC_SEND_STANDARD);
        wc_wait(&s);
    }
    if (source == MPI_PROC_NULL) {
        wm_proc_null_status(status);
        return MPI_SUCCESS;
    }
    wc_wait(&r);
    return wm_recv_finish(c, fn, &r, status);
}

WM_API int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                         int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return wm_sendrecv("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                       recvcount, recvtype, source, recvtag, comm, status);
}
WM_ALIAS(MPI_Sendrecv)

WM_API int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest,
                                 int sendtag, int source, int recvtag, MPI_Comm comm,
                                 MPI_Status *status)
{
    static const char fn[] = "MPI_Sendrecv_replace";
    WM_COMM_CHECK(fn, comm, c);
    const wm_datatype_t *ti;
    int rc = wm_check_buffer_args(c, fn, buf, count, datatype, &ti);
    if (rc)
        return rc;
    size_t bytes = (size_t)count * ti->layout.size;
    void *tmp = malloc(bytes ? bytes : 1);
    if (!tmp)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a %zu-byte staging buffer", bytes);
    MPI_Status st;
    rc = wm_sendrecv(fn, buf, count, datatype, dest, sendtag, tmp, count, datatype, source,
                     recvtag, comm, &st);
    if (rc == MPI_SUCCESS || (rc & 0x7f) == MPI_ERR_TRUNCATE)
        memcpy(buf, tmp, (size_t)wm_status_bytes(&st));
    free(tmp);
    if (status != MPI_STATUS_IGNORE)
        *status = st;
    return rc;
}
WM_ALIAS(MPI_Sendrecv_replace)

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
        wm_status_set(status, wm_comm_peer_rank(c, info->source), info->tag, MPI_SUCCESS,
                      (MPI_Count)info->len, 0);
}

static int wm_iprobe(const char *fn, int source, int tag, MPI_Comm comm, bool take, int *flag,
                     MPI_Message *message, MPI_Status *status, bool block)
{
    WM_COMM_CHECK(fn, comm, c);
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
    while (!wc_iprobe(wm_core_source(c, source), wm_core_tag(tag), c->ctx, take, &info, &msg)) {
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

WM_API int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    return wm_iprobe("MPI_Iprobe", source, tag, comm, false, flag, NULL, status, false);
}
WM_ALIAS(MPI_Iprobe)

WM_API int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    int flag;
    return wm_iprobe("MPI_Probe", source, tag, comm, false, &flag, NULL, status, true);
}
WM_ALIAS(MPI_Probe)

WM_API int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                        MPI_Status *status)
{
    return wm_iprobe("MPI_Improbe", source, tag, comm, true, flag, message, status, false);
}
WM_ALIAS(MPI_Improbe)

WM_API int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message,
                       MPI_Status *status)
{
    int flag;
    return wm_iprobe("MPI_Mprobe", source, tag, comm, true, &flag, message, status, true);
}
WM_ALIAS(MPI_Mprobe)

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

WM_API int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                      MPI_Status *status)
{
    static const char fn[] = "MPI_Mrecv";
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
    if ((rc = wm_check_buffer_args(m->comm, fn, buf, count, datatype, &ti)))
        return rc;
    wc_request_t r;
    wc_imrecv(&r, buf, (size_t)count * ti->layout.size, m->msg);
    wm_comm_t *c = m->comm;
    m->magic = 0;
    free(m);
    *message = MPI_MESSAGE_NULL;
    wc_wait(&r);
    return wm_recv_finish(c, fn, &r, status);
}
WM_ALIAS(MPI_Mrecv)

WM_API int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                       MPI_Request *request)
{
    static const char fn[] = "MPI_Imrecv";
    wm_message_t *m;
    int rc = wm_message_take(fn, message, &m);
    if (rc)
        return rc;
    if (!request)
        return wm_error(NULL, MPI_ERR_ARG, fn, "request is NULL");
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
        *request = (MPI_Request)r;
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    const wm_datatype_t *ti;
    if ((rc = wm_check_buffer_args(m->comm, fn, buf, count, datatype, &ti))) {
        wm_request_release(r);
        return rc;
    }
    wc_imrecv(&r->core, buf, (size_t)count * ti->layout.size, m->msg);
    m->magic = 0;
    free(m);
    *message = MPI_MESSAGE_NULL;
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Imrecv)
