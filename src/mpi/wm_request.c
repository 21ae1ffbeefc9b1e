/* Requests: the pool, starting (also persistent requests), completion, and the wait/test family.
 *
 * Waiting polls the progression engine; when a poll finds nothing to do for a while the thread
 * yields its core (ranks are often more than cores). The threaded engine replaces this with
 * spin-then-sleep on a wait object.
 */
#include "mpi/wm_internal.h"
#include "thread/wt_thread.h"
#include "thread/wt_thread_inl.h"
#include "util/wu_log.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- pool ---- */

/* Per-thread free lists: a request is taken from and returned to the calling thread's list, with no
 * synchronization. Requests come in chunks of WM_REQ_CHUNK slots carved from the arena
 * (wm_request.h) by one atomic add, so every request ever made lies between the arena's base and
 * wm_req_arena_used: the mark phase and the pending-request warning walk that range.
 *
 * A request released by another thread than its allocator changes lists (a thread that only
 * starts requests and one that only completes them: a task runtime, a progress thread freeing
 * detached requests). So that they do not pile up in the releasing thread's list for good while
 * the allocating thread carves new chunks, a list longer than WM_REQ_SPILL gives a batch of
 * WM_REQ_CHUNK requests to the shared pool, and a thread whose list is empty takes a batch from
 * there before it carves; a thread that exits gives its whole list. The shared pool is a stack of
 * batches under a spinlock, taken once per WM_REQ_CHUNK requests at most; the per-request path
 * adds one thread-local counter. */
#define WM_REQ_CHUNK 64
#define WM_REQ_SPILL (2 * WM_REQ_CHUNK)
#define WM_REQ_ARENA_BYTES ((size_t)4 << 30)   /* virtual: 8M requests of 512 bytes */
#define WM_REQ_ARENA_MIN ((size_t)64 << 20)

uintptr_t wm_req_arena_base, wm_req_arena_end;
static _Atomic uintptr_t wm_req_arena_used;   /* end of the chunks handed out */
static WT_TLS wm_request_t *wm_request_free_list;
static WT_TLS unsigned wm_request_free_count;  /* length of wm_request_free_list */
static WT_TLS bool wm_request_exit_hook;       /* this thread's list goes back at its exit */

/* The shared pool: batches chained by next_batch, each a chain by next_free. Any thread. */
static wt_spinlock_t wm_req_pool_lock = WT_SPIN_INITIALIZER;
static wm_request_t *wm_req_pool WT_GUARDED_BY(wm_req_pool_lock);
static wt_tls_key_t wm_req_exit_key;
static bool wm_req_exit_key_ok;                /* written once, under wm_req_once */

static pthread_once_t wm_req_once = PTHREAD_ONCE_INIT;

static void wm_request_pool_put(wm_request_t *batch)
{
    wt_spin_lock_always(&wm_req_pool_lock);
    batch->next_batch = wm_req_pool;
    wm_req_pool = batch;
    wt_spin_unlock_always(&wm_req_pool_lock);
}

/* At the exit of a thread that used the pool: its free list goes to the shared pool. */
static void wm_request_thread_exit(void *unused)
{
    (void)unused;
    if (wm_request_free_list)
        wm_request_pool_put(wm_request_free_list);
    wm_request_free_list = NULL;
    wm_request_free_count = 0;
}

static void wm_request_arena_map(void)
{
    wm_req_exit_key_ok = wt_tls_key_create(&wm_req_exit_key, wm_request_thread_exit) == WU_OK;
    /* under strict overcommit a large reservation may be refused: ask for less */
    for (size_t bytes = WM_REQ_ARENA_BYTES; bytes >= WM_REQ_ARENA_MIN; bytes /= 2) {
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            continue;
        atomic_store_explicit(&wm_req_arena_used, (uintptr_t)p, memory_order_relaxed);
        wm_req_arena_base = (uintptr_t)p;
        wm_req_arena_end = (uintptr_t)p + bytes / WM_REQ_STRIDE * WM_REQ_STRIDE;
        return;
    }
    /* every allocation then fails with MPI_ERR_NO_MEM */
}

void wm_request_init(void)
{
    pthread_once(&wm_req_once, wm_request_arena_map);
}

size_t wm_request_carved(void)
{
    uintptr_t used = atomic_load_explicit(&wm_req_arena_used, memory_order_relaxed);
    return wm_req_arena_base ? (size_t)(used - wm_req_arena_base) / WM_REQ_STRIDE : 0;
}

/* The calling thread's list is empty: a batch from the shared pool, else a new chunk. */
static WU_NOINLINE bool wm_request_refill(void)
{
    const uintptr_t bytes = WM_REQ_CHUNK * WM_REQ_STRIDE;
    wm_request_init();   /* done by MPI_Init; here for the unit tests, which skip it */
    if (!wm_request_exit_hook && wm_req_exit_key_ok) {
        wm_request_exit_hook = true;
        (void)wt_tls_set(wm_req_exit_key, (void *)1);
    }
    wt_spin_lock_always(&wm_req_pool_lock);
    wm_request_t *batch = wm_req_pool;
    if (batch)
        wm_req_pool = batch->next_batch;
    wt_spin_unlock_always(&wm_req_pool_lock);
    if (batch) {
        unsigned n = 0;
        for (wm_request_t *r = batch; r; r = r->next_free)
            n++;
        wm_request_free_list = batch;
        wm_request_free_count = n;
        return true;
    }
    uintptr_t at = atomic_load_explicit(&wm_req_arena_used, memory_order_relaxed);
    do {
        if (!wm_req_arena_base || wm_req_arena_end - at < bytes)
            return false;
    } while (!atomic_compare_exchange_weak_explicit(&wm_req_arena_used, &at, at + bytes,
                                                    memory_order_release, memory_order_relaxed));
    /* fresh anonymous memory reads as zero: magic 0, generation 0, objs[] NULL */
    for (int i = WM_REQ_CHUNK - 1; i >= 0; i--) {
        wm_request_t *r = (wm_request_t *)(at + (size_t)i * WM_REQ_STRIDE);
        r->next_free = wm_request_free_list;
        wm_request_free_list = r;
    }
    wm_request_free_count = WM_REQ_CHUNK;
    return true;
}

/* The calling thread's list is longer than WM_REQ_SPILL: its first WM_REQ_CHUNK requests go to
 * the shared pool as one batch. */
static WU_NOINLINE void wm_request_spill(void)
{
    wm_request_t *batch = wm_request_free_list, *tail = batch;
    for (int i = 1; i < WM_REQ_CHUNK; i++)
        tail = tail->next_free;
    wm_request_free_list = tail->next_free;
    wm_request_free_count -= WM_REQ_CHUNK;
    tail->next_free = NULL;
    wm_request_pool_put(batch);
}

static inline wm_request_t *wm_request_take(void)
{
    if (WU_UNLIKELY(!wm_request_free_list) && !wm_request_refill())
        return NULL;
    wm_request_t *r = wm_request_free_list;
    wm_request_free_list = r->next_free;
    wm_request_free_count--;
    if (r->next_free)   /* the next allocation's first line: a window of requests is allocated in a row */
        __builtin_prefetch(r->next_free, 1);
    return r;
}

/* The MPI-layer fields zeroed (objs: NULL since release, read by the collector), the generation
 * kept, magic set; the core request is left as its last use left it. */
static inline void wm_request_clear_mpi(wm_request_t *r)
{
    uint8_t gen = r->gen;
    memset(r, 0, offsetof(wm_request_t, core));
    memset(&r->buf, 0, offsetof(wm_request_t, objs) - offsetof(wm_request_t, buf));
    r->gen = gen;
    r->magic = WM_MAGIC_REQ;
}

wm_request_t *wm_request_alloc(void)
{
    wm_request_t *r = wm_request_take();
    if (WU_LIKELY(r != NULL)) {
        wm_request_clear_mpi(r);
        memset(&r->core, 0, sizeof(r->core));
    }
    return r;
}

wm_request_t *wm_request_alloc_pt2pt(void)
{
    wm_request_t *r = wm_request_take();
    if (WU_LIKELY(r != NULL))
        wm_request_clear_mpi(r);
    return r;
}

/* What a request holds besides its slot: the state of a persistent collective or partitioned one,
 * its marks on user objects (objs), its structural references (held). */
static WU_NOINLINE void wm_request_drop(wm_request_t *r)
{
    if (r->persistent && r->kind >= WM_REQ_COLL) {
        if (r->kind == WM_REQ_COLL)
            wm_coll_persist_free(r);
        else
            wm_part_free(r);
    }
    for (int i = 0; i < (int)WU_ARRAY_SIZE(r->objs); i++) {
        wm_obj_t *o = atomic_load_explicit(&r->objs[i], memory_order_relaxed);
        if (o) {
            atomic_store_explicit(&r->objs[i], NULL, memory_order_release);
            wm_obj_req_unref(o);
        }
    }
    if (r->held != NULL) {
        for (uint32_t i = 0; i < r->nheld; i++)
            wm_obj_release(r->held[i]);
        free(r->held);
        r->held = NULL;
    }
}

/* The release, inlined into the wait family's loops: the usual point-to-point request on
 * predefined objects holds nothing and costs a few stores. */
static inline void wm_request_release_inl(wm_request_t *r)
{
    uintptr_t objs = (uintptr_t)atomic_load_explicit(&r->objs[0], memory_order_relaxed) |
                     (uintptr_t)atomic_load_explicit(&r->objs[1], memory_order_relaxed) |
                     (uintptr_t)atomic_load_explicit(&r->objs[2], memory_order_relaxed);
    if (WU_UNLIKELY(objs != 0 || r->held != NULL || (r->persistent && r->kind >= WM_REQ_COLL)))
        wm_request_drop(r);
    r->magic = 0;
    wm_request_invalidate(r);
    r->next_free = wm_request_free_list;
    wm_request_free_list = r;
    if (WU_UNLIKELY(++wm_request_free_count > WM_REQ_SPILL))
        wm_request_spill();
}

void wm_request_release(wm_request_t *r)
{
    wm_request_release_inl(r);
}

void wm_request_scan_objs(void (*mark)(wm_obj_t *o, void *arg), void *arg)
{
    uintptr_t used = atomic_load_explicit(&wm_req_arena_used, memory_order_acquire);
    for (uintptr_t p = wm_req_arena_base; p < used; p += WM_REQ_STRIDE) {
        wm_request_t *r = (wm_request_t *)p;
        for (int j = 0; j < (int)WU_ARRAY_SIZE(r->objs); j++) {
            wm_obj_t *o = atomic_load_explicit(&r->objs[j], memory_order_acquire);
            if (o)
                mark(o, arg);
        }
    }
}

/* ---- pending requests of a process that leaves ---- */

#define WM_PENDING_NAMED 4   /* named in the warning; the others are counted */

typedef struct wm_pending {
    size_t n;
    size_t len;
    char   named[512];       /* the first WM_PENDING_NAMED, separated by "; " */
} wm_pending_t;

static void WU_PRINTF(2, 3) wm_pending_add(wm_pending_t *p, const char *fmt, ...)
{
    if (p->n++ >= WM_PENDING_NAMED || p->len >= sizeof(p->named))
        return;
    va_list ap;
    va_start(ap, fmt);
    if (p->len)
        p->len += (size_t)snprintf(p->named + p->len, sizeof(p->named) - p->len, "; ");
    if (p->len < sizeof(p->named)) {
        int k = vsnprintf(p->named + p->len, sizeof(p->named) - p->len, fmt, ap);
        p->len += k > 0 ? (size_t)k : 0;
    }
    va_end(ap);
    if (p->len >= sizeof(p->named))
        p->len = sizeof(p->named) - 1;   /* truncated */
}

static void wm_pending_warn(const wm_pending_t *p, const char *when, const char *what,
                            const char *one, const char *many)
{
    if (!p->n)
        return;
    char more[48] = "";
    if (p->n > WM_PENDING_NAMED)
        snprintf(more, sizeof(more), "; and %zu more", p->n - WM_PENDING_NAMED);
    wu_log_warn("%s with %zu pending %s%s (%.*s%s) not completed; %s", when, p->n, what,
                p->n == 1 ? "" : "s", (int)p->len, p->named, more, p->n == 1 ? one : many);
}

/* Ranks are the communicator's: " in <name>" after them unless it is MPI_COMM_WORLD. */
static const char *wm_pending_where(const wm_comm_t *c, char *buf, size_t size)
{
    if (c == &wm_comm_world)
        return "";
    snprintf(buf, size, " in %s", c->name[0] ? c->name : "a communicator");
    return buf;
}

void wm_request_warn_pending(const char *when)
{
    wm_pending_t sends = { 0 }, recvs = { 0 }, colls = { 0 };
    char where[MPI_MAX_OBJECT_NAME + 8], src[16], tag[16];
    uintptr_t used = atomic_load_explicit(&wm_req_arena_used, memory_order_acquire);
    for (uintptr_t p = wm_req_arena_base; p < used; p += WM_REQ_STRIDE) {
        wm_request_t *r = (wm_request_t *)p;
        /* The state first: an engine thread releases a detached request once it completed
         * it, and otherwise touches only the state of the others. */
        if (wc_request_is_complete(&r->core) || wc_request_is_detached(&r->core) ||
            r->magic != WM_MAGIC_REQ || !r->active || r->proc_null)
            continue;
        const char *in = wm_pending_where(r->comm, where, sizeof(where));
        if (r->kind == WM_REQ_SEND) {
            wm_pending_add(&sends, "rank %d → %d%s, tag %d, %zu bytes", r->comm->rank, r->peer,
                           in, r->tag, r->core.len);
        } else if (r->kind == WM_REQ_RECV) {
            snprintf(src, sizeof(src), "%d", r->peer);
            snprintf(tag, sizeof(tag), "%d", r->tag);
            wm_pending_add(&recvs, "rank %d ← %s%s, tag %s, %zu bytes", r->comm->rank,
                           r->peer == MPI_ANY_SOURCE ? "any" : src, in,
                           r->tag == MPI_ANY_TAG ? "any" : tag, r->core.len);
        } else if (r->kind == WM_REQ_COLL) {
            wm_pending_add(&colls, "on %s",
                           r->comm->name[0] ? r->comm->name : "a communicator");
        }
    }
    wm_pending_warn(&sends, when, "send", "its buffer is no longer read",
                    "their buffers are no longer read");
    wm_pending_warn(&recvs, when, "receive", "its buffer is no longer written",
                    "their buffers are no longer written");
    wm_pending_warn(&colls, when, "nonblocking collective", "its buffers are no longer used",
                    "their buffers are no longer used");
}

static void wm_request_release_cb(wc_request_t *core)
{
    wm_request_release(WU_CONTAINER_OF(core, wm_request_t, core));
}

/* ---- start ---- */

int wm_request_start(wm_request_t *r, const char *func)
{
    const wm_datatype_t *ti = r->ti;   /* not the handle: the user may have freed it */
    wm_comm_t *c = r->comm;
    wu_status_t st;
    int src = WC_ANY_SOURCE;   /* a receive's source (world rank) */

    if (WU_UNLIKELY(r->kind >= WM_REQ_COLL))
        return r->kind == WM_REQ_COLL ? wm_coll_persist_start(r, func) : wm_part_start(r, func);
    r->active = true;
    if ((r->peer == MPI_PROC_NULL)) {
        r->proc_null = true;
        return MPI_SUCCESS;
    }
    r->proc_null = false;
    if (r->kind == WM_REQ_SEND) {
        st = wc_isend_dt(wc_ep_default(), &r->core, r->buf, (uint64_t)r->count, &ti->layout,
                         wm_comm_peer_world(c, r->peer), r->tag, c->ctx, r->mode);
    } else if (r->kind == WM_REQ_RECV) {
        src = r->peer == MPI_ANY_SOURCE ? WC_ANY_SOURCE : wm_comm_peer_world(c, r->peer);
        st = wc_irecv_dt(wc_ep_default(), &r->core, r->buf, (uint64_t)r->count, &ti->layout, src,
                         r->tag == MPI_ANY_TAG ? WC_ANY_TAG : r->tag, c->ctx);
    } else {
        /* persistent buffered send: complete once the data is in the attached buffer */
        int rc = wm_bsend_post(c, func, r->buf, r->count, ti, r->peer, r->tag);
        if (rc != MPI_SUCCESS)
            r->active = false;
        return rc;
    }
    if (st != WU_OK) {
        r->active = false;
        return wm_error(c, wm_status_to_class(st), func, "%s", wu_status_str(st));
    }
    /* (from the arguments: the posted request belongs to whichever thread matches it) */
    size_t bytes = (size_t)r->count * ti->layout.size;
    if (r->kind == WM_REQ_RECV && WU_UNLIKELY(bytes >= WC_IRECV_LOOK_MIN))
        wc_irecv_look(wc_ep_default(), src, bytes);   /* (it ignores WC_ANY_SOURCE) */
    return MPI_SUCCESS;
}

static inline bool wm_request_done(const wm_request_t *r)
{
    return !r->active || r->proc_null || r->kind == WM_REQ_DONE ||
           wc_request_is_complete(&r->core);
}

/* ---- completion ---- */

int wm_request_error(const wm_request_t *r, const char *func)
{
    if (!r->active || r->proc_null || r->kind == WM_REQ_DONE || r->core.error == WU_OK)
        return MPI_SUCCESS;
    if (r->core.error == WU_ERR_TRUNCATE)
        return wm_error_code(MPI_ERR_TRUNCATE, func,
                             "message of %zu bytes from rank %d, tag %d, does not fit the %zu-byte buffer",
                             r->core.msg_len, wm_comm_peer_rank(r->comm, r->core.st_source),
                             r->core.st_tag, r->core.len);
    return wm_error_code(wm_status_to_class((wu_status_t)r->core.error), func, "%s",
                         wu_status_str((wu_status_t)r->core.error));
}

void wm_request_status(const wm_request_t *r, MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    if (!r->active) {
        wm_status_empty(status);
    } else if (r->proc_null) {
        wm_status_fill(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, 0);
    } else if (r->kind == WM_REQ_SENDRECV && r->peer == MPI_PROC_NULL) {
        wm_status_fill(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, 0);   /* received from nobody */
    } else if (r->kind == WM_REQ_RECV || r->kind == WM_REQ_PRECV || r->kind == WM_REQ_SENDRECV) {
        if (wc_request_cancelled(&r->core))
            wm_status_fill(status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, 1);
        else
            wm_status_fill(status, wm_comm_peer_rank(r->comm, r->core.st_source), r->core.st_tag,
                           (MPI_Count)r->core.st_bytes, 0);
    } else {
        wm_status_fill(status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0,
                       r->kind == WM_REQ_SEND && wc_request_cancelled(&r->core));
    }
}

void wm_request_retire(wm_request_t *r, MPI_Request *h)
{
    if (r->persistent) {
        r->active = false;
        return;
    }
    wm_request_release(r);
    *h = MPI_REQUEST_NULL;
}

/* ---- waiting ---- */

/* Poll once; with nothing done, spin or sleep until one of the array's active requests completes. */
static void wm_idle(wc_idle_t *idle, int count, MPI_Request reqs[])
{
    if (wc_progress())
        return;
    if (WU_LIKELY((idle->polls + 1) & 63)) {
        wc_idle_block(idle, NULL, 0);
        return;
    }
    wc_request_t *small[16], **cores = small;
    if (count > 16 && !(cores = malloc(sizeof(*cores) * (size_t)count)))
        cores = small, count = 16;
    int n = 0;
    for (int i = 0; i < count; i++) {
        wm_request_t *r = wm_request_ptr(reqs[i]);
        if (reqs[i] != MPI_REQUEST_NULL && r->active && !r->proc_null && r->kind != WM_REQ_DONE)
            cores[n++] = &r->core;
    }
    wc_idle_block(idle, cores, n);
    if (cores != small)
        free(cores);
}

static int wm_req_check(const char *fn, MPI_Request h, wm_request_t **r_p)
{
    wm_request_t *r = wm_request_get(h);
    if (WU_UNLIKELY(!r))
        return wm_error(NULL, MPI_ERR_REQUEST, fn, "invalid request %p", (void *)h);
    *r_p = r;
    return MPI_SUCCESS;
}

/* The MPI_Request * argument of Start, Request_free and Cancel: not NULL, a live request. */
static int wm_req_arg(const char *fn, const MPI_Request *request, wm_request_t **r_p)
{
    if (WU_UNLIKELY(!request))
        return wm_error(NULL, MPI_ERR_ARG, fn, "request is NULL");
    return wm_req_check(fn, *request, r_p);
}

/* Complete one request that is done: status (MPI_ERROR untouched), error, retire. Returns the MPI
 * error code; the error handler is invoked by the caller. */
static int wm_complete_one(const char *fn, wm_request_t *r, MPI_Request *h, MPI_Status *status)
{
    if (WU_UNLIKELY(r->kind == WM_REQ_GREQ))
        return wm_greq_finish(r, h, status);
    /* wm_request_error gives MPI_SUCCESS when the core's error is WU_OK (whatever the flags) */
    int rc = WU_LIKELY(r->core.error == WU_OK) ? MPI_SUCCESS : wm_request_error(r, fn);
    wm_request_status(r, status);
    wm_request_retire(r, h);
    return rc;
}

int wm_impl_MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    static const char fn[] = "MPI_Wait";
    WM_CHECK_INIT(fn);
    if (WU_UNLIKELY(!request))
        return wm_error(NULL, MPI_ERR_ARG, fn, "request is NULL");
    if (*request == MPI_REQUEST_NULL) {
        wm_status_empty(status);
        return MPI_SUCCESS;
    }
    wm_request_t *r = NULL;
    int rc = wm_req_check(fn, *request, &r);
    if (rc)
        return rc;
    if (!wm_request_done(r))
        wc_wait(&r->core);
    wm_comm_t *c = r->comm;
    rc = wm_complete_one(fn, r, request, status);
    return rc ? wm_error_raise(c, rc) : MPI_SUCCESS;
}

int wm_impl_MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    static const char fn[] = "MPI_Test";
    WM_CHECK_INIT(fn);
    if (WU_UNLIKELY(!request || !flag))
        return wm_error(NULL, MPI_ERR_ARG, fn, "%s is NULL", request ? "flag" : "request");
    if (*request == MPI_REQUEST_NULL) {
        *flag = 1;
        wm_status_empty(status);
        return MPI_SUCCESS;
    }
    wm_request_t *r = NULL;
    int rc = wm_req_check(fn, *request, &r);
    if (rc)
        return rc;
    if (!wm_request_done(r))
        wc_progress();
    if (!wm_request_done(r)) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    *flag = 1;
    wm_comm_t *c = r->comm;
    rc = wm_complete_one(fn, r, request, status);
    return rc ? wm_error_raise(c, rc) : MPI_SUCCESS;
}

static int wm_check_array(const char *fn, int count, MPI_Request reqs[])
{
    if (count < 0)
        return wm_error(NULL, MPI_ERR_COUNT, fn, "count %d is negative", count);
    if (count > 0 && !reqs)
        return wm_error(NULL, MPI_ERR_ARG, fn, "array_of_requests is NULL");
    for (int i = 0; i < count; i++)
        if (reqs[i] != MPI_REQUEST_NULL && !wm_request_get(reqs[i]))
            return wm_error(NULL, MPI_ERR_REQUEST, fn, "invalid request %p at index %d",
                            (void *)reqs[i], i);
    return MPI_SUCCESS;
}

static inline bool wm_slot_active(MPI_Request h)
{
    if (h == MPI_REQUEST_NULL)
        return false;
    return wm_request_ptr(h)->active || !wm_request_ptr(h)->persistent;
}

static inline bool wm_slot_done(MPI_Request h)
{
    return wm_request_done(wm_request_ptr(h));
}

/* Finish every request of the array in order; statuses carry per-request errors. */
static int wm_finish_all(const char *fn, int count, MPI_Request reqs[], MPI_Status statuses[])
{
    int err = 0;
    wm_comm_t *ec = NULL;
    int i = 0;
    /* Without statuses, a done non-persistent request with no error (not a generalized one) only
     * goes back to the pool: the usual window of sends and receives takes this loop; the first
     * other request leaves it for the general one (no error seen before it). */
    if (statuses == MPI_STATUSES_IGNORE) {
        for (; i < count; i++) {
            MPI_Request h = reqs[i];
            if (h == MPI_REQUEST_NULL)
                continue;
            wm_request_t *r = wm_request_ptr(h);
            if (WU_UNLIKELY(r->persistent || r->kind == WM_REQ_GREQ || r->core.error != WU_OK))
                break;
            wm_request_release_inl(r);
            reqs[i] = MPI_REQUEST_NULL;
        }
    }
    for (; i < count; i++) {
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
        if (reqs[i] == MPI_REQUEST_NULL || !wm_slot_active(reqs[i])) {
            if (reqs[i] != MPI_REQUEST_NULL)
                wm_request_status(wm_request_ptr(reqs[i]), st);
            else
                wm_status_empty(st);
            if (err && st != MPI_STATUS_IGNORE)
                st->MPI_ERROR = MPI_SUCCESS;
            continue;
        }
        wm_request_t *r = wm_request_ptr(reqs[i]);
        wm_comm_t *c = r->comm;
        int rc = wm_complete_one(fn, r, &reqs[i], st);
        if (rc && !err) {
            err = 1;
            ec = c;
            /* MPI_ERROR is set only when the call returns MPI_ERR_IN_STATUS: the statuses before
             * this one succeeded (or were inactive) */
            for (int j = 0; j < i && st != MPI_STATUS_IGNORE; j++)
                statuses[j].MPI_ERROR = MPI_SUCCESS;
        }
        if (err && st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = rc;
    }
    if (!err)
        return MPI_SUCCESS;
    return wm_error_raise(ec, wm_error_code(MPI_ERR_IN_STATUS, fn,
                                            "a request failed; see the statuses"));
}

int wm_impl_MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    static const char fn[] = "MPI_Waitall";
    WM_CHECK_INIT(fn);
    int rc = wm_check_array(fn, count, array_of_requests);
    if (rc)
        return rc;
    for (int i = 0; i < count; i++) {
        MPI_Request h = array_of_requests[i];
        if (h != MPI_REQUEST_NULL && wm_slot_active(h) && !wm_slot_done(h))
            wc_wait(&wm_request_ptr(h)->core);
    }
    return wm_finish_all(fn, count, array_of_requests, array_of_statuses);
}

int wm_impl_MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                        MPI_Status array_of_statuses[])
{
    static const char fn[] = "MPI_Testall";
    WM_CHECK_INIT(fn);
    int rc = wm_check_array(fn, count, array_of_requests);
    if (rc)
        return rc;
    if (!flag)
        return wm_error(NULL, MPI_ERR_ARG, fn, "flag is NULL");
    wc_progress();
    for (int i = 0; i < count; i++) {
        MPI_Request h = array_of_requests[i];
        if (h != MPI_REQUEST_NULL && wm_slot_active(h) && !wm_slot_done(h)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    return wm_finish_all(fn, count, array_of_requests, array_of_statuses);
}

/* Index of a done active request, -1 if none is done, MPI_UNDEFINED if none is active. */
static int wm_find_done(int count, MPI_Request reqs[])
{
    int active = 0;
    for (int i = 0; i < count; i++) {
        if (!wm_slot_active(reqs[i]))
            continue;
        active = 1;
        if (wm_slot_done(reqs[i]))
            return i;
    }
    return active ? -1 : MPI_UNDEFINED;
}

static int wm_any(const char *fn, int count, MPI_Request reqs[], int *index, int *flag,
                  MPI_Status *status, bool block)
{
    WM_CHECK_INIT(fn);
    int rc = wm_check_array(fn, count, reqs);
    if (rc)
        return rc;
    if (!index)
        return wm_error(NULL, MPI_ERR_ARG, fn, "index is NULL");
    wc_idle_t idle;
    wc_idle_init(&idle);
    int i = wm_find_done(count, reqs);
    if (i == -1 && !block) {
        wc_progress();
        i = wm_find_done(count, reqs);
    }
    while (i == -1 && block) {
        wm_idle(&idle, count, reqs);
        i = wm_find_done(count, reqs);
    }
    if (flag)
        *flag = i != -1;
    if (i == -1) {
        *index = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    if (i == MPI_UNDEFINED) {
        *index = MPI_UNDEFINED;
        wm_status_empty(status);
        return MPI_SUCCESS;
    }
    *index = i;
    wm_comm_t *c = wm_request_ptr(reqs[i])->comm;
    rc = wm_complete_one(fn, wm_request_ptr(reqs[i]), &reqs[i], status);
    return rc ? wm_error_raise(c, rc) : MPI_SUCCESS;
}

int wm_impl_MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    return wm_any("MPI_Waitany", count, array_of_requests, index, NULL, status, true);
}

int wm_impl_MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                        MPI_Status *status)
{
    if (!flag)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Testany", "flag is NULL");
    return wm_any("MPI_Testany", count, array_of_requests, index, flag, status, false);
}

static int wm_peek_one(const char *fn, MPI_Request h, MPI_Status *st);

/* Waitsome, Testsome (block: wait for one), and Request_get_status_some (peek: statuses of the
 * completed requests, which stay as they are). */
static int wm_some(const char *fn, int incount, MPI_Request reqs[], int *outcount, int indices[],
                   MPI_Status statuses[], bool block, bool peek)
{
    WM_CHECK_INIT(fn);
    int rc = wm_check_array(fn, incount, reqs);
    if (rc)
        return rc;
    if (!outcount || (incount > 0 && !indices))
        return wm_error(NULL, MPI_ERR_ARG, fn, "%s is NULL", outcount ? "array_of_indices" : "outcount");
    wc_idle_t idle;
    wc_idle_init(&idle);
    int first = wm_find_done(incount, reqs);
    if (first == -1 && !block) {
        wc_progress();
        first = wm_find_done(incount, reqs);
    }
    while (first == -1 && block) {
        wm_idle(&idle, incount, reqs);
        first = wm_find_done(incount, reqs);
    }
    if (first == MPI_UNDEFINED) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    int n = 0, err = 0;
    wm_comm_t *ec = NULL;
    for (int i = 0; i < incount && first != -1; i++) {
        if (!wm_slot_active(reqs[i]) || !wm_slot_done(reqs[i]))
            continue;
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[n];
        wm_comm_t *c = wm_request_ptr(reqs[i])->comm;   /* before completion frees it */
        int rc1 = peek ? wm_peek_one(fn, reqs[i], st)
                       : wm_complete_one(fn, wm_request_ptr(reqs[i]), &reqs[i], st);
        if (rc1 && !err) {
            err = 1;
            ec = c;
            for (int j = 0; j < n && st != MPI_STATUS_IGNORE; j++)   /* see wm_finish_all */
                statuses[j].MPI_ERROR = MPI_SUCCESS;
        }
        if (err && st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = rc1;
        indices[n++] = i;
    }
    *outcount = n;
    if (!err)
        return MPI_SUCCESS;
    return wm_error_raise(ec, wm_error_code(MPI_ERR_IN_STATUS, fn,
                                            "a request failed; see the statuses"));
}

int wm_impl_MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                         int array_of_indices[], MPI_Status array_of_statuses[])
{
    return wm_some("MPI_Waitsome", incount, array_of_requests, outcount, array_of_indices,
                   array_of_statuses, true, false);
}

int wm_impl_MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                         int array_of_indices[], MPI_Status array_of_statuses[])
{
    return wm_some("MPI_Testsome", incount, array_of_requests, outcount, array_of_indices,
                   array_of_statuses, false, false);
}

/* ---- MPI_Request_get_status_all / _any / _some (MPI 4.1): the test family without freeing ---- */

/* The status of a done request of the array, left active; its MPI error code. */
static int wm_peek_one(const char *fn, MPI_Request h, MPI_Status *st)
{
    wm_request_t *r = wm_request_ptr(h);
    if (r->kind == WM_REQ_GREQ && r->active)
        return wm_greq_query(r, st);
    int rc = wm_request_error(r, fn);
    wm_request_status(r, st);
    return rc;
}

int wm_impl_MPI_Request_get_status_all(int count, const MPI_Request array_of_requests[], int *flag,
                                       MPI_Status array_of_statuses[])
{
    static const char fn[] = "MPI_Request_get_status_all";
    WM_CHECK_INIT(fn);
    MPI_Request *reqs = (MPI_Request *)array_of_requests;   /* only read */
    int rc = wm_check_array(fn, count, reqs);
    if (rc)
        return rc;
    if (!flag)
        return wm_error(NULL, MPI_ERR_ARG, fn, "flag is NULL");
    wc_progress();
    for (int i = 0; i < count; i++)
        if (wm_slot_active(reqs[i]) && !wm_slot_done(reqs[i])) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    *flag = 1;
    int err = 0;
    wm_comm_t *ec = NULL;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = array_of_statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE
                                                                  : &array_of_statuses[i];
        int rc1 = MPI_SUCCESS;
        if (reqs[i] == MPI_REQUEST_NULL)
            wm_status_empty(st);
        else
            rc1 = wm_peek_one(fn, reqs[i], st);
        if (rc1 && !err) {
            err = 1;
            ec = wm_request_ptr(reqs[i])->comm;
            for (int j = 0; j < i && st != MPI_STATUS_IGNORE; j++)   /* see wm_finish_all */
                array_of_statuses[j].MPI_ERROR = MPI_SUCCESS;
        }
        if (err && st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = rc1;
    }
    if (!err)
        return MPI_SUCCESS;
    return wm_error_raise(ec, wm_error_code(MPI_ERR_IN_STATUS, fn,
                                            "a request failed; see the statuses"));
}

int wm_impl_MPI_Request_get_status_any(int count, const MPI_Request array_of_requests[], int *indx,
                                       int *flag, MPI_Status *status)
{
    static const char fn[] = "MPI_Request_get_status_any";
    WM_CHECK_INIT(fn);
    MPI_Request *reqs = (MPI_Request *)array_of_requests;
    int rc = wm_check_array(fn, count, reqs);
    if (rc)
        return rc;
    if (!indx || !flag)
        return wm_error(NULL, MPI_ERR_ARG, fn, "%s is NULL", indx ? "flag" : "indx");
    int i = wm_find_done(count, reqs);
    if (i == -1) {
        wc_progress();
        i = wm_find_done(count, reqs);
    }
    *flag = i != -1;
    if (i == -1 || i == MPI_UNDEFINED) {
        *indx = MPI_UNDEFINED;
        if (i == MPI_UNDEFINED) {
            /* no active request: the empty status, its MPI_ERROR included (MPICH and Open MPI
             * write it here, and mpi4py's suite checks it) */
            wm_status_empty(status);
            if (status != MPI_STATUS_IGNORE)
                status->MPI_ERROR = MPI_SUCCESS;
        }
        return MPI_SUCCESS;
    }
    *indx = i;
    rc = wm_peek_one(fn, reqs[i], status);
    return rc ? wm_error_raise(wm_request_ptr(reqs[i])->comm, rc) : MPI_SUCCESS;
}

int wm_impl_MPI_Request_get_status_some(int incount, const MPI_Request array_of_requests[],
                                        int *outcount, int array_of_indices[],
                                        MPI_Status array_of_statuses[])
{
    return wm_some("MPI_Request_get_status_some", incount, (MPI_Request *)array_of_requests,
                   outcount, array_of_indices, array_of_statuses, false, true);
}

/* ---- start, free, cancel, status ---- */

int wm_impl_MPI_Start(MPI_Request *request)
{
    static const char fn[] = "MPI_Start";
    WM_CHECK_INIT(fn);
    wm_request_t *r = NULL;
    int rc = wm_req_arg(fn, request, &r);
    if (rc)
        return rc;
    if (!r->persistent)
        return wm_error(r->comm, MPI_ERR_REQUEST, fn, "request is not persistent");
    if (r->active)
        return wm_error(r->comm, MPI_ERR_REQUEST, fn, "request is already active");
    return wm_request_start(r, fn);
}

int wm_impl_MPI_Startall(int count, MPI_Request array_of_requests[])
{
    static const char fn[] = "MPI_Startall";
    WM_CHECK_INIT(fn);
    int rc = wm_check_array(fn, count, array_of_requests);
    if (rc)
        return rc;
    for (int i = 0; i < count; i++) {
        wm_request_t *r = wm_request_get(array_of_requests[i]);
        if (!r || !r->persistent || r->active)
            return wm_error(r ? r->comm : NULL, MPI_ERR_REQUEST, fn,
                            "request %d is not an inactive persistent request", i);
    }
    for (int i = 0; i < count; i++)
        if ((rc = wm_request_start(wm_request_ptr(array_of_requests[i]), fn)))
            return rc;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Request_free(MPI_Request *request)
{
    static const char fn[] = "MPI_Request_free";
    WM_CHECK_INIT(fn);
    wm_request_t *r = NULL;
    int rc = wm_req_arg(fn, request, &r);
    if (rc)
        return rc;
    if (WU_UNLIKELY(r->persistent && r->active &&
                    (r->kind == WM_REQ_COLL || r->kind == WM_REQ_PSEND || r->kind == WM_REQ_PRECV)))
        return wm_error(r->comm, MPI_ERR_REQUEST, fn,
                        "the %s request is active: complete it (MPI_Wait/MPI_Test) before freeing it",
                        r->kind == WM_REQ_COLL ? "persistent collective" : "partitioned");
    *request = MPI_REQUEST_NULL;
    if (WU_UNLIKELY(r->kind == WM_REQ_GREQ)) {
        rc = wm_greq_free(r);
        return rc ? wm_error_raise(NULL, rc) : MPI_SUCCESS;
    }
    if (!r->active || r->proc_null || r->kind == WM_REQ_DONE) {
        wm_request_release(r);
    } else {
        wm_request_invalidate(r);
        wc_request_detach(&r->core, wm_request_release_cb);
    }
    return MPI_SUCCESS;
}

int wm_impl_MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    static const char fn[] = "MPI_Request_get_status";
    WM_CHECK_INIT(fn);
    if (!flag)
        return wm_error(NULL, MPI_ERR_ARG, fn, "flag is NULL");
    if (request == MPI_REQUEST_NULL) {
        *flag = 1;
        wm_status_empty(status);
        return MPI_SUCCESS;
    }
    wm_request_t *r = NULL;
    int rc = wm_req_check(fn, request, &r);
    if (rc)
        return rc;
    if (!wm_request_done(r))
        wc_progress();
    *flag = wm_request_done(r);
    if (*flag && r->kind == WM_REQ_GREQ) {
        rc = wm_greq_query(r, status);
        return rc ? wm_error_raise(NULL, rc) : MPI_SUCCESS;
    }
    if (*flag) {
        rc = wm_request_error(r, fn);
        wm_request_status(r, status);
        if (rc)
            return wm_error_raise(r->comm, rc);
    }
    return MPI_SUCCESS;
}

int wm_impl_MPI_Cancel(MPI_Request *request)
{
    static const char fn[] = "MPI_Cancel";
    WM_CHECK_INIT(fn);
    wm_request_t *r = NULL;
    int rc = wm_req_arg(fn, request, &r);
    if (rc)
        return rc;
    if (WU_UNLIKELY(r->kind == WM_REQ_GREQ)) {   /* the user's cancel_fn decides */
        rc = wm_greq_cancel(r);
        return rc ? wm_error_raise(NULL, rc) : MPI_SUCCESS;
    }
    if (r->active && !r->proc_null) {
        if (r->kind == WM_REQ_RECV)
            wc_cancel_recv(&r->core);
        else if (r->kind == WM_REQ_SEND)   /* the answer completes it (wc_cancel_send) */
            wc_cancel_send(wc_ep_default(), &r->core);
    }
    /* Buffered sends (complete at start, the data in the attached buffer) and collectives are not
     * cancelled: they complete normally and Test_cancelled says so. */
    return MPI_SUCCESS;
}

int wm_impl_MPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    if (!status || !flag)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Test_cancelled", "%s is NULL",
                        status ? "flag" : "status");
    *flag = status->MPI_internal[2] != 0;
    return MPI_SUCCESS;
}
