/* Buffered sends: the message is packed into an attached buffer (or, with MPI_BUFFER_AUTOMATIC,
 * into memory of our own) and sent from there; the call returns at once. Blocks of an attached
 * buffer are kept in address order; allocation is first fit. Each block costs its data plus
 * MPI_BSEND_OVERHEAD bytes, as the standard tells users to budget.
 *
 * Buffers (MPI 4.1 section 3.6): the process's (MPI_Buffer_attach) and one per communicator
 * (MPI_Comm_attach_buffer) and one per session (MPI_Session_attach_buffer); a buffered send uses
 * its communicator's buffer when one is attached, else its session's, else the process's. Each is a wm_bbuf_t. Every block gets a sequence number: flushing (the
 * blocking MPI_Buffer_flush / MPI_Comm_flush_buffer, detaching, and the requests of
 * MPI_Buffer_iflush / MPI_Comm_iflush_buffer) waits until no block older than the call is left,
 * so messages buffered later do not delay it. A message sent from a communicator's buffer names
 * the communicator (wm_request_use), so the communicator and its buffer live until it has left.
 * A communicator derived from a session (wm_session.h) without a buffer of its own uses the
 * session's (MPI_Session_attach_buffer) when one is attached, else the process's.
 *
 * Concurrency contract: a wm_bbuf_t's lock guards its fields; buffered sends, the completion
 * callbacks (any thread that runs progress) and flushes take it. Attaching and detaching are the
 * application's to serialize against buffered sends on the same buffer (MPI makes a send racing
 * its buffer's detach erroneous); a communicator's buffer pointer is published with release
 * stores and read with acquire loads. */
#include "mpi/wm_internal.h"
#include "mpi/wm_session.h"
#include "core/wc_wait.h"
#include "thread/wt_thread.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

typedef struct wm_bblock {
    struct wm_bblock *next;
    struct wm_bbuf   *pool;
    uint64_t          seq;
    size_t off, len;          /* position and charged length in the attached buffer; len 0:
                                 automatic, data is malloc'd */
    void  *data;
} wm_bblock_t;

/* A request of MPI_Buffer_iflush & co waiting for the blocks older than `target`. */
typedef struct wm_bflush {
    struct wm_bflush *next;
    wm_request_t     *req;
    uint64_t          target;
} wm_bflush_t;

typedef struct wm_bbuf {
    wt_mutex_t   lock;
    char        *buf;
    size_t       size;
    bool         attached;    /* a buffer (or MPI_BUFFER_AUTOMATIC) is attached */
    bool         automatic;
    wm_bblock_t *blocks;      /* in-use blocks of the attached buffer by increasing offset */
    wm_bblock_t *autos;       /* in-use blocks of MPI_BUFFER_AUTOMATIC */
    uint64_t     next_seq;    /* the sequence number of the next block */
    wm_bflush_t *flushes;     /* pending flush requests */
} wm_bbuf_t;

static wm_bbuf_t wm_bsend;   /* the process's buffer */

void wm_bsend_init(void)
{
    wt_mutex_init(&wm_bsend.lock);
}

static wm_bblock_t *wm_bblock_alloc(wm_bbuf_t *p, size_t bytes)
{
    wm_bblock_t *b = malloc(sizeof(*b));
    if (!b)
        return NULL;
    b->pool = p;
    if (p->automatic) {
        b->data = malloc(bytes ? bytes : 1);
        if (!b->data) {
            free(b);
            return NULL;
        }
        b->len = 0;
        b->next = p->autos;
        p->autos = b;
        b->seq = p->next_seq++;
        return b;
    }
    size_t need = bytes + MPI_BSEND_OVERHEAD;
    size_t off = 0;
    wm_bblock_t **pp = &p->blocks;
    while (*pp && (*pp)->off - off < need) {
        off = (*pp)->off + (*pp)->len;
        pp = &(*pp)->next;
    }
    if (!*pp && p->size - off < need) {
        free(b);
        return NULL;
    }
    b->off = off;
    b->len = need;
    b->data = p->buf + off;
    b->next = *pp;
    *pp = b;
    b->seq = p->next_seq++;
    return b;
}

static void wm_bblock_free(wm_bblock_t *b)
{
    wm_bbuf_t *p = b->pool;
    wm_bblock_t **pp = b->len == 0 ? &p->autos : &p->blocks;
    while (*pp != b)
        pp = &(*pp)->next;
    *pp = b->next;
    if (b->len == 0)
        free(b->data);
    free(b);
}

/* No block older than target is left. Lock held. */
static bool wm_bbuf_flushed_locked(const wm_bbuf_t *p, uint64_t target)
{
    for (const wm_bblock_t *b = p->blocks; b; b = b->next)
        if (b->seq < target)
            return false;
    for (const wm_bblock_t *b = p->autos; b; b = b->next)
        if (b->seq < target)
            return false;
    return true;
}

static void wm_bsend_complete_cb(wc_request_t *core)
{
    wm_request_t *r = WU_CONTAINER_OF(core, wm_request_t, core);
    wm_bblock_t *b = r->bsend_block;
    wm_bbuf_t *p = b->pool;
    wm_bflush_t *done = NULL;
    wt_mutex_lock(&p->lock);
    wm_bblock_free(b);
    for (wm_bflush_t **pp = &p->flushes; *pp;) {
        wm_bflush_t *f = *pp;
        if (wm_bbuf_flushed_locked(p, f->target)) {
            *pp = f->next;
            f->next = done;
            done = f;
        } else {
            pp = &f->next;
        }
    }
    wt_mutex_unlock(&p->lock);
    /* last: a communicator's buffer lives while this request names the communicator */
    wm_request_release(r);
    while (done) {
        wm_bflush_t *f = done;
        done = f->next;
        wc_request_done(&f->req->core);
        free(f);
    }
}

/* The buffer a buffered send on c uses. */
static wm_bbuf_t *wm_bbuf_of(wm_comm_t *c)
{
    wm_bbuf_t *p = atomic_load_explicit(&c->bbuf, memory_order_acquire);
    if (p && p->attached)
        return p;
    if (c->session) {
        wm_bbuf_t *q = atomic_load_explicit(&c->session->bbuf, memory_order_acquire);
        if (q && q->attached)
            return q;
    }
    return p ? p : &wm_bsend;
}

/* Pack the data into its block: the message leaves from the attached buffer as bytes, so the
 * datatype is not needed after this (the detached core request names no datatype). */
int wm_bsend_post(wm_comm_t *c, const char *fn, const void *buf, MPI_Count count,
                  const wm_datatype_t *ti, int dest, int tag)
{
    size_t bytes = (size_t)count * ti->layout.size;
    wm_bbuf_t *p = wm_bbuf_of(c);
    wt_mutex_lock(&p->lock);
    if (!p->attached) {
        wt_mutex_unlock(&p->lock);
        return wm_error(c, MPI_ERR_BUFFER, fn, "no buffer attached (MPI_Buffer_attach)");
    }
    wm_bblock_t *b = wm_bblock_alloc(p, bytes);
    if (!b) {
        wt_mutex_unlock(&p->lock);
        return wm_error(c, MPI_ERR_BUFFER, fn,
                        "attached buffer of %zu bytes%s has no room for %zu bytes + "
                        "MPI_BSEND_OVERHEAD", p->size, p == &wm_bsend ? "" : " (the communicator's)",
                        bytes);
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
        wt_mutex_unlock(&p->lock);
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a request");
    }
    r->kind = WM_REQ_SEND;
    r->comm = c;
    r->active = true;
    r->bsend_block = b;
    if (p != &wm_bsend)
        wm_request_use(r, WM_REQ_OBJ_COMM, &c->obj);
    wc_isend(wc_ep_default(), &r->core, b->data, bytes, wm_comm_peer_world(c, dest), tag, c->ctx, WC_SEND_STANDARD);
    wt_mutex_unlock(&p->lock);
    wc_request_detach(&r->core, wm_bsend_complete_cb);
    return MPI_SUCCESS;
}

static int wm_bsend_start(const char *fn, const void *buf, MPI_Count count, MPI_Datatype type,
                          int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    WM_COMM_CHECK(fn, comm, c);
    if (WU_UNLIKELY(c->tcomm))
        return wm_tc_send(fn, c, buf, count, type, dest, tag, WC_SEND_STANDARD, true, request);
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

WM_TWINS_MPI_Bsend(wm_bsend_start, NULL)

static int wm_ibsend(const char *fn, const void *buf, MPI_Count count, MPI_Datatype datatype,
                     int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return wm_error(NULL, MPI_ERR_ARG, fn, "request is NULL");
    return wm_bsend_start(fn, buf, count, datatype, dest, tag, comm, request);
}
WM_TWINS_MPI_Ibsend(wm_ibsend)

/* ---- attaching, detaching, flushing ---- */

static int wm_bbuf_attach(const char *fn, wm_comm_t *c, wm_bbuf_t *p, void *buffer,
                          MPI_Count size)
{
    if (buffer != MPI_BUFFER_AUTOMATIC) {
        if (size < 0)
            return wm_error(c, MPI_ERR_ARG, fn, "size %lld is negative", (long long)size);
        if (!buffer && size > 0)
            return wm_error(c, MPI_ERR_BUFFER, fn, "buffer is NULL with size %lld", (long long)size);
    }
    wt_mutex_lock(&p->lock);
    bool busy = p->attached;
    if (!busy) {
        p->attached = true;
        p->automatic = buffer == MPI_BUFFER_AUTOMATIC;
        p->buf = p->automatic ? NULL : buffer;
        p->size = p->automatic ? 0 : (size_t)size;
    }
    wt_mutex_unlock(&p->lock);
    if (busy)
        return wm_error(c, MPI_ERR_BUFFER, fn, "a buffer is already attached%s",
                        p == &wm_bsend ? "" : " to this communicator");
    return MPI_SUCCESS;
}

/* Blocks until no block of p older than the call is left. */
static void wm_bbuf_flush(wm_bbuf_t *p)
{
    wt_mutex_lock(&p->lock);
    uint64_t target = p->next_seq;
    wt_mutex_unlock(&p->lock);
    wc_idle_t idle;
    wc_idle_init(&idle);
    for (;;) {
        wt_mutex_lock(&p->lock);
        bool done = wm_bbuf_flushed_locked(p, target);
        wt_mutex_unlock(&p->lock);
        if (done)
            return;
        if (!wc_progress())
            wc_idle_block(&idle, NULL, 0);
    }
}

static void wm_bbuf_detach_locked(wm_bbuf_t *p, void *buffer_addr, MPI_Count *size)
{
    if (p->automatic) {
        *(void **)buffer_addr = MPI_BUFFER_AUTOMATIC;
        *size = 0;
    } else {
        *(void **)buffer_addr = p->buf;
        *size = (MPI_Count)p->size;
    }
    p->buf = NULL;
    p->size = 0;
    p->automatic = false;
    p->attached = false;
}

/* A request that completes when p has no block older than the call: done at once if it has none
 * (or p is NULL). */
static int wm_bbuf_iflush(const char *fn, wm_comm_t *c, wm_bbuf_t *p, MPI_Request *request)
{
    if (!request)
        return wm_error(c, MPI_ERR_ARG, fn, "request is NULL");
    wm_request_t *r = wm_request_alloc();
    wm_bflush_t *f = malloc(sizeof(*f));
    if (!r || !f) {
        if (r)
            wm_request_release(r);
        free(f);
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a request");
    }
    r->comm = c ? c : &wm_comm_self;
    r->peer = MPI_ANY_SOURCE;
    r->tag = MPI_ANY_TAG;
    r->active = true;
    if (c)
        wm_request_use(r, WM_REQ_OBJ_COMM, &c->obj);   /* keeps the communicator's buffer */
    if (!p) {
        free(f);
        r->kind = WM_REQ_DONE;
        *request = wm_request_handle(r);
        return MPI_SUCCESS;
    }
    wt_mutex_lock(&p->lock);
    f->target = p->next_seq;
    f->req = r;
    bool done = wm_bbuf_flushed_locked(p, f->target);
    r->kind = done ? WM_REQ_DONE : WM_REQ_FLUSH;
    if (!done) {
        f->next = p->flushes;
        p->flushes = f;
    }
    wt_mutex_unlock(&p->lock);
    if (done)
        free(f);
    *request = wm_request_handle(r);
    return MPI_SUCCESS;
}

/* ---- the process's buffer ---- */

static int wm_buffer_attach(const char *fn, void *buffer, MPI_Count size)
{
    return wm_bbuf_attach(fn, NULL, &wm_bsend, buffer, size);
}

WM_TWINS_MPI_Buffer_attach(wm_buffer_attach)

static int wm_buffer_detach(const char *fn, void *buffer_addr, MPI_Count *size)
{
    if (!buffer_addr || !size)
        return wm_error(NULL, MPI_ERR_ARG, fn, "%s is NULL", size ? "buffer_addr" : "size");
    if (!wm_bsend.attached)
        return wm_error(NULL, MPI_ERR_BUFFER, fn, "no buffer is attached");
    /* Detach blocks until every message sent from the buffer has left it. */
    wm_bbuf_flush(&wm_bsend);
    wt_mutex_lock(&wm_bsend.lock);
    wm_bbuf_detach_locked(&wm_bsend, buffer_addr, size);
    wt_mutex_unlock(&wm_bsend.lock);
    return MPI_SUCCESS;
}

/* Buffer_detach, serving the int form and its _c twin (WM_TWINS_MPI_X of
 * src/mpi/gen/wm_entry.h). */
static inline int wm_buffer_detach_twins(const char *fn, void *buffer_addr, wm_ints_out_t size)
{
    MPI_Count n = 0;
    int rc = wm_buffer_detach(fn, buffer_addr, size.p ? &n : NULL);
    if (rc == MPI_SUCCESS)
        wm_ints_set(size, 0, n);
    return rc;
}

WM_TWINS_MPI_Buffer_detach(wm_buffer_detach_twins)

int wm_impl_MPI_Buffer_flush(void)
{
    WM_CHECK_INIT("MPI_Buffer_flush");
    wm_bbuf_flush(&wm_bsend);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Buffer_iflush(MPI_Request *request)
{
    WM_CHECK_INIT("MPI_Buffer_iflush");
    return wm_bbuf_iflush("MPI_Buffer_iflush", NULL, &wm_bsend, request);
}

/* ---- a communicator's buffer ---- */

static int wm_comm_attach(const char *fn, MPI_Comm comm, void *buffer, MPI_Count size)
{
    WM_COMM_CHECK(fn, comm, c);
    wm_bbuf_t *p = atomic_load_explicit(&c->bbuf, memory_order_acquire);
    if (!p) {
        p = calloc(1, sizeof(*p));
        if (!p)
            return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a buffer");
        wt_mutex_init(&p->lock);
        wm_bbuf_t *none = NULL;
        if (!atomic_compare_exchange_strong_explicit(&c->bbuf, &none, p, memory_order_acq_rel,
                                                     memory_order_acquire)) {
            wt_mutex_destroy(&p->lock);
            free(p);
            p = none;
        }
    }
    return wm_bbuf_attach(fn, c, p, buffer, size);
}

WM_TWINS_MPI_Comm_attach_buffer(wm_comm_attach)

static int wm_comm_detach(const char *fn, MPI_Comm comm, void *buffer_addr, MPI_Count *size)
{
    WM_COMM_CHECK(fn, comm, c);
    if (!buffer_addr || !size)
        return wm_error(c, MPI_ERR_ARG, fn, "%s is NULL", size ? "buffer_addr" : "size");
    wm_bbuf_t *p = atomic_load_explicit(&c->bbuf, memory_order_acquire);
    if (!p || !p->attached)
        return wm_error(c, MPI_ERR_BUFFER, fn, "no buffer is attached to %s",
                        c->name[0] ? c->name : "the communicator");
    wm_bbuf_flush(p);
    wt_mutex_lock(&p->lock);
    wm_bbuf_detach_locked(p, buffer_addr, size);
    wt_mutex_unlock(&p->lock);
    /* the wm_bbuf_t stays with c (pending iflush requests may still point to it) */
    return MPI_SUCCESS;
}

/* Comm_detach_buffer, serving the int form and its _c twin (WM_TWINS_MPI_X of
 * src/mpi/gen/wm_entry.h). */
static inline int wm_comm_detach_twins(const char *fn, MPI_Comm comm, void *buffer_addr,
                                       wm_ints_out_t size)
{
    MPI_Count n = 0;
    int rc = wm_comm_detach(fn, comm, buffer_addr, size.p ? &n : NULL);
    if (rc == MPI_SUCCESS)
        wm_ints_set(size, 0, n);
    return rc;
}

WM_TWINS_MPI_Comm_detach_buffer(wm_comm_detach_twins)

int wm_impl_MPI_Comm_flush_buffer(MPI_Comm comm)
{
    WM_COMM_CHECK("MPI_Comm_flush_buffer", comm, c);
    wm_bbuf_t *p = atomic_load_explicit(&c->bbuf, memory_order_acquire);
    if (p)
        wm_bbuf_flush(p);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Comm_iflush_buffer";
    WM_COMM_CHECK(fn, comm, c);
    wm_bbuf_t *p = atomic_load_explicit(&c->bbuf, memory_order_acquire);
    return wm_bbuf_iflush(fn, c, p, request);   /* p NULL: nothing ever buffered on c */
}

void wm_bsend_comm_free(wm_comm_t *c)
{
    wm_bbuf_t *p = atomic_exchange_explicit(&c->bbuf, NULL, memory_order_acq_rel);
    if (!p)
        return;
    /* no message and no flush request names c any more: nothing uses p */
    wt_mutex_lock(&p->lock);
    wt_mutex_unlock(&p->lock);
    wt_mutex_destroy(&p->lock);
    free(p);
}

/* ---- a session's buffer ---- */

/* The session's buffer object, made on first use (NULL: no memory). */
static wm_bbuf_t *wm_session_bbuf(wm_session_t *s)
{
    wm_bbuf_t *p = atomic_load_explicit(&s->bbuf, memory_order_acquire);
    if (p)
        return p;
    p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    wt_mutex_init(&p->lock);
    wm_bbuf_t *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&s->bbuf, &none, p, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        wt_mutex_destroy(&p->lock);
        free(p);
        p = none;
    }
    return p;
}

/* The session argument: errors of these calls go to the session's handler. */
#define WM_BSESSION_CHECK(fn, h, s)                                                        \
    WM_CHECK_INIT(fn);                                                                     \
    wm_session_t *s = wm_session_get(h);                                                   \
    if (!s)                                                                                \
        return wm_error(NULL, MPI_ERR_SESSION, fn, "invalid session %p", (void *)(h))

static int wm_session_attach(const char *fn, MPI_Session session, void *buffer, MPI_Count size)
{
    WM_BSESSION_CHECK(fn, session, s);
    MPI_Session h = session;
    if (buffer != MPI_BUFFER_AUTOMATIC && size < 0)
        return wm_error_eh(s->errh, h, wm_error_code(MPI_ERR_ARG, fn, "size %lld is negative",
                                                     (long long)size));
    if (buffer != MPI_BUFFER_AUTOMATIC && !buffer && size > 0)
        return wm_error_eh(s->errh, h, wm_error_code(MPI_ERR_BUFFER, fn,
                                                     "buffer is NULL with size %lld", (long long)size));
    wm_bbuf_t *p = wm_session_bbuf(s);
    if (!p)
        return wm_error_eh(s->errh, h, wm_error_code(MPI_ERR_NO_MEM, fn, "no memory for a buffer"));
    if (p->attached)
        return wm_error_eh(s->errh, h, wm_error_code(MPI_ERR_BUFFER, fn,
                                                     "a buffer is already attached to this session"));
    return wm_bbuf_attach(fn, NULL, p, buffer, size);
}

WM_TWINS_MPI_Session_attach_buffer(wm_session_attach)

static int wm_session_detach(const char *fn, MPI_Session session, void *buffer_addr,
                             MPI_Count *size)
{
    WM_BSESSION_CHECK(fn, session, s);
    if (!buffer_addr || !size)
        return wm_error_eh(s->errh, session, wm_error_code(MPI_ERR_ARG, fn, "%s is NULL",
                                                           size ? "buffer_addr" : "size"));
    wm_bbuf_t *p = atomic_load_explicit(&s->bbuf, memory_order_acquire);
    if (!p || !p->attached)
        return wm_error_eh(s->errh, session, wm_error_code(MPI_ERR_BUFFER, fn,
                                                           "no buffer is attached to the session"));
    wm_bbuf_flush(p);
    wt_mutex_lock(&p->lock);
    wm_bbuf_detach_locked(p, buffer_addr, size);
    wt_mutex_unlock(&p->lock);
    return MPI_SUCCESS;
}

/* Session_detach_buffer, serving the int form and its _c twin (WM_TWINS_MPI_X of
 * src/mpi/gen/wm_entry.h). */
static inline int wm_session_detach_twins(const char *fn, MPI_Session session,
                                          void *buffer_addr, wm_ints_out_t size)
{
    MPI_Count n = 0;
    int rc = wm_session_detach(fn, session, buffer_addr, size.p ? &n : NULL);
    if (rc == MPI_SUCCESS)
        wm_ints_set(size, 0, n);
    return rc;
}

WM_TWINS_MPI_Session_detach_buffer(wm_session_detach_twins)

int wm_impl_MPI_Session_flush_buffer(MPI_Session session)
{
    WM_BSESSION_CHECK("MPI_Session_flush_buffer", session, s);
    wm_bbuf_t *p = atomic_load_explicit(&s->bbuf, memory_order_acquire);
    if (p)
        wm_bbuf_flush(p);
    return MPI_SUCCESS;
}

/* The request keeps no object alive: a pending flush request holds the session's buffer, which a
 * session keeps until the last communicator derived from it goes (the program must complete the
 * request before MPI_Session_finalize). */
int wm_impl_MPI_Session_iflush_buffer(MPI_Session session, MPI_Request *request)
{
    static const char fn[] = "MPI_Session_iflush_buffer";
    WM_BSESSION_CHECK(fn, session, s);
    if (!request)
        return wm_error_eh(s->errh, session, wm_error_code(MPI_ERR_ARG, fn, "request is NULL"));
    wm_bbuf_t *p = atomic_load_explicit(&s->bbuf, memory_order_acquire);
    return wm_bbuf_iflush(fn, NULL, p, request);
}

void wm_bsend_session_free(wm_session_t *s)
{
    wm_bbuf_t *p = atomic_exchange_explicit(&s->bbuf, NULL, memory_order_acq_rel);
    if (!p)
        return;
    /* the session goes when no communicator derived from it is left: no message uses p */
    wt_mutex_lock(&p->lock);
    wt_mutex_unlock(&p->lock);
    wt_mutex_destroy(&p->lock);
    free(p);
}
