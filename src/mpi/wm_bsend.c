/* Buffered sends: the message is packed into the attached buffer (or, with MPI_BUFFER_AUTOMATIC,
 * into memory of our own) and sent from there; the call returns at once. Blocks of the attached
 * buffer are kept in address order; allocation is first fit. Each block costs its data plus
 * MPI_BSEND_OVERHEAD bytes, as the standard tells users to budget. */
#include "mpi/wm_internal.h"
#include "thread/wt_thread.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

typedef struct wm_bblock {
    struct wm_bblock *next;
    size_t off, len;          /* position and charged length in the attached buffer */
    void  *data;
} wm_bblock_t;

static struct {
    char        *buf;
    size_t       size;
    bool         automatic;
    wm_bblock_t *blocks;      /* in-use blocks by increasing offset */
    int          inflight;
    wt_mutex_t   lock;        /* everything above */
} wm_bsend;

void wm_bsend_init(void)
{
    wt_mutex_init(&wm_bsend.lock);
}

static wm_bblock_t *wm_bblock_alloc(size_t bytes)
{
    wm_bblock_t *b = malloc(sizeof(*b));
    if (!b)
        return NULL;
    if (wm_bsend.automatic) {
        b->data = malloc(bytes ? bytes : 1);
        if (!b->data) {
            free(b);
            return NULL;
        }
        b->len = 0;
        b->next = NULL;
        return b;
    }
    size_t need = bytes + MPI_BSEND_OVERHEAD;
    size_t off = 0;
    wm_bblock_t **pp = &wm_bsend.blocks;
    while (*pp && (*pp)->off - off < need) {
        off = (*pp)->off + (*pp)->len;
        pp = &(*pp)->next;
    }
    if (!*pp && wm_bsend.size - off < need) {
        free(b);
        return NULL;
    }
    b->off = off;
    b->len = need;
    b->data = wm_bsend.buf + off;
    b->next = *pp;
    *pp = b;
    return b;
}

static void wm_bblock_free(wm_bblock_t *b)
{
    if (b->len == 0) {
        free(b->data);
    } else {
        wm_bblock_t **pp = &wm_bsend.blocks;
        while (*pp != b)
            pp = &(*pp)->next;
        *pp = b->next;
    }
    free(b);
}

static void wm_bsend_complete_cb(wc_request_t *core)
{
    wm_request_t *r = WU_CONTAINER_OF(core, wm_request_t, core);
    wt_mutex_lock(&wm_bsend.lock);
    wm_bblock_free(r->bsend_block);
    wm_bsend.inflight--;
    wt_mutex_unlock(&wm_bsend.lock);
    wm_request_release(r);
}

/* Pack the data into its block: the message leaves from the attached buffer as bytes, so the
 * datatype is not needed after this (the detached core request names no object). */
int wm_bsend_post(wm_comm_t *c, const char *fn, const void *buf, MPI_Count count,
                  const wm_datatype_t *ti, int dest, int tag)
{
    size_t bytes = (size_t)count * ti->layout.size;
    wt_mutex_lock(&wm_bsend.lock);
    if (!wm_bsend.buf && !wm_bsend.automatic) {
        wt_mutex_unlock(&wm_bsend.lock);
        return wm_error(c, MPI_ERR_BUFFER, fn, "no buffer attached (MPI_Buffer_attach)");
    }
    wm_bblock_t *b = wm_bblock_alloc(bytes);
    if (!b) {
        wt_mutex_unlock(&wm_bsend.lock);
        return wm_error(c, MPI_ERR_BUFFER, fn,
                        "attached buffer of %zu bytes has no room for %zu bytes + MPI_BSEND_OVERHEAD",
                        wm_bsend.size, bytes);
    }
    if (ti->layout.contig) {
        if (bytes)
            memcpy(b->data, (const char *)buf + ti->layout.contig_off, bytes);
    } else {
        wc_dtype_cursor_t cur;
        wc_dtype_cursor_init(&cur, &ti->layout, buf, (uint64_t)count);
        wc_dtype_pack(&cur, b->data, bytes);
    }
    wm_request_t *r = wm_request_alloc();
    if (!r) {
        wm_bblock_free(b);
        wt_mutex_unlock(&wm_bsend.lock);
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a request");
    }
    r->kind = WM_REQ_SEND;
    r->comm = c;
    r->active = true;
    r->bsend_block = b;
    wm_bsend.inflight++;
    wc_isend(wc_ep_default(), &r->core, b->data, bytes, wm_comm_peer_world(c, dest), tag, c->ctx, WC_SEND_STANDARD);
    wt_mutex_unlock(&wm_bsend.lock);
    wc_request_detach(&r->core, wm_bsend_complete_cb);
    return MPI_SUCCESS;
}

static int wm_bsend_start(const char *fn, const void *buf, MPI_Count count, MPI_Datatype type,
                          int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    WM_COMM_CHECK(fn, comm, c);
    const wm_datatype_t *ti;
    int rc = wm_check_buffer_args(c, fn, buf, count, type, &ti);
    if (rc)
        return rc;
    if ((dest < 0 || dest >= c->remote_size) && dest != MPI_PROC_NULL)
        return wm_error(c, MPI_ERR_RANK, fn, "invalid destination rank %d (%s has %d ranks)", dest,
                        c->name, c->remote_size);
    if (tag < 0 || tag > WM_TAG_UB)
        return wm_error(c, MPI_ERR_TAG, fn, "invalid tag %d (valid: 0 to %d)", tag, WM_TAG_UB);
    if (dest != MPI_PROC_NULL && (rc = wm_bsend_post(c, fn, buf, count, ti, dest, tag)))
        return rc;
    if (request) {
        wm_request_t *u = wm_request_alloc();
        if (!u)
            return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a request");
        u->kind = WM_REQ_DONE;    /* complete as soon as the data is buffered */
        u->comm = c;
        u->active = true;
        u->peer = dest;
        *request = wm_request_handle(u);
    }
    return MPI_SUCCESS;
}

WM_API int PMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm)
{
    return wm_bsend_start("MPI_Bsend", buf, count, datatype, dest, tag, comm, NULL);
}
WM_ALIAS(MPI_Bsend)

WM_API int PMPI_Bsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                        MPI_Comm comm)
{
    return wm_bsend_start("MPI_Bsend_c", buf, count, datatype, dest, tag, comm, NULL);
}
WM_ALIAS(MPI_Bsend_c)

WM_API int PMPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                       MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Ibsend", "request is NULL");
    return wm_bsend_start("MPI_Ibsend", buf, count, datatype, dest, tag, comm, request);
}
WM_ALIAS(MPI_Ibsend)

WM_API int PMPI_Ibsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                         int tag, MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Ibsend_c", "request is NULL");
    return wm_bsend_start("MPI_Ibsend_c", buf, count, datatype, dest, tag, comm, request);
}
WM_ALIAS(MPI_Ibsend_c)

static int wm_buffer_attach(const char *fn, void *buffer, MPI_Count size)
{
    if (wm_bsend.buf || wm_bsend.automatic)
        return wm_error(NULL, MPI_ERR_BUFFER, fn, "a buffer is already attached");
    if (buffer == MPI_BUFFER_AUTOMATIC) {
        wm_bsend.automatic = true;
        return MPI_SUCCESS;
    }
    if (size < 0)
        return wm_error(NULL, MPI_ERR_ARG, fn, "size %lld is negative", (long long)size);
    if (!buffer && size > 0)
        return wm_error(NULL, MPI_ERR_BUFFER, fn, "buffer is NULL with size %lld", (long long)size);
    wm_bsend.buf = buffer;
    wm_bsend.size = (size_t)size;
    return MPI_SUCCESS;
}

WM_API int PMPI_Buffer_attach(void *buffer, int size)
{
    return wm_buffer_attach("MPI_Buffer_attach", buffer, size);
}
WM_ALIAS(MPI_Buffer_attach)

WM_API int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    return wm_buffer_attach("MPI_Buffer_attach_c", buffer, size);
}
WM_ALIAS(MPI_Buffer_attach_c)

static int wm_buffer_detach(const char *fn, void *buffer_addr, MPI_Count *size)
{
    if (!buffer_addr || !size)
        return wm_error(NULL, MPI_ERR_ARG, fn, "%s is NULL", size ? "buffer_addr" : "size");
    if (!wm_bsend.buf && !wm_bsend.automatic)
        return wm_error(NULL, MPI_ERR_BUFFER, fn, "no buffer is attached");
    /* Detach blocks until every message sent from the buffer has left it. */
    wc_idle_t idle;
    wc_idle_init(&idle);
    for (;;) {
        wt_mutex_lock(&wm_bsend.lock);
        int inflight = wm_bsend.inflight;
        wt_mutex_unlock(&wm_bsend.lock);
        if (inflight == 0)
            break;
        if (!wc_progress())
            wc_idle_block(&idle, NULL, 0);
    }
    if (wm_bsend.automatic) {
        *(void **)buffer_addr = MPI_BUFFER_AUTOMATIC;
        *size = 0;
    } else {
        *(void **)buffer_addr = wm_bsend.buf;
        *size = (MPI_Count)wm_bsend.size;
    }
    wm_bsend.buf = NULL;
    wm_bsend.size = 0;
    wm_bsend.automatic = false;
    return MPI_SUCCESS;
}

WM_API int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    MPI_Count n = 0;
    int rc = wm_buffer_detach("MPI_Buffer_detach", buffer_addr, size ? &n : NULL);
    if (rc == MPI_SUCCESS)
        *size = (int)n;
    return rc;
}
WM_ALIAS(MPI_Buffer_detach)

WM_API int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    return wm_buffer_detach("MPI_Buffer_detach_c", buffer_addr, size);
}
WM_ALIAS(MPI_Buffer_detach_c)
