/* Partitioned communication (MPI 4.1 chapter 4): MPI_Psend_init, MPI_Precv_init, MPI_Pready,
 * MPI_Pready_range, MPI_Pready_list, MPI_Parrived.
 *
 * Many threads mark partitions of one message ready at once, and a partition leaves as soon as it
 * is ready: each send partition is its own internal point-to-point message, posted by the thread
 * that readies it (an atomic flag per partition catches a partition readied twice; no lock), and
 * the receiver posts one receive per send partition straight into its buffer, so early partitions
 * arrive while late ones are still being computed.
 *
 * Matching, once. At its first start the send side sends a hello (its total size, its number of
 * partitions, the first of its data tags) on the communicator's partitioned context
 * (ctx | WM_CTX_COLL | WM_CTX_PART) with the user's tag; the receive side's first start receives
 * it from (source, tag) in order, as point-to-point matches. The send and receive sides may cut
 * the message into different numbers of partitions: only the total size must agree (else the
 * receive fails with MPI_ERR_TRUNCATE). Data messages go on the collective context with the send
 * side's private tags (tag0 + partition, from a per-process counter in WM_TAG_PART_BASE ..
 * WM_TAG_PART_END): unique per sender, reused at every start; a partition's message of the next
 * round follows that of the last on the same (context, source, tag), so it cannot overtake it,
 * and the receiver posts the next round's receives only at its next start.
 *
 * Data messages are sent in WC_SEND_BULK mode: a large partition is read by the receiver with a
 * single copy straight from the sender's buffer (CMA) when it can, which needs no progress on the
 * sending side, whose threads are busy computing the next partitions (4 MiB in 8 partitions from 8
 * threads: ~0.4 ms against ~1.6 ms with the pipelined copy, on the loaded 2-CPU machine). A
 * partition of more than 256 KiB is a bulk cooperative rendezvous (docs/shm.md): the receiver
 * reads it alone while the sender computes, and a sending thread that waits copies runs of it too.
 *
 * Completion. A start submits a ONCE light task (wp_ltask.h) that completes the MPI request when
 * every partition has been readied and sent (send side), or when the hello arrived, the receives
 * were posted and all completed (receive side); the wait/test family then works unchanged.
 * MPI_Parrived reads the receives covering one receive partition, from any thread.
 *
 * Concurrency contract: Psend_init/Precv_init, MPI_Start and MPI_Request_free of one request from
 * one thread at a time (MPI's rules); MPI_Pready* from any number of threads at once between start
 * and completion, on distinct partitions; MPI_Parrived from any thread while active. `ready[]`,
 * `nposted`, `posted` and `error` are the fields shared between them and the task (atomics).
 */
#include "mpi/wm_internal.h"
#include "core/wc_sched.h"
#include "core/wc_wait.h"
#include "progress/wp_ltask.h"

#include <sched.h>
#include <stdlib.h>

/* The partitioned context of a communicator: its collective context with this bit (context ids
 * stay far below it; Psend_init/Precv_init check). */
#define WM_CTX_PART 0x20000000u

typedef struct wm_part_hello {
    uint64_t total;           /* packed bytes of the whole message */
    uint64_t part_bytes;      /* packed bytes of one send partition */
    int32_t nparts;           /* send partitions */
    int32_t tag0;             /* data tag of send partition 0 */
} wm_part_hello_t;

typedef struct wm_part {
    wm_request_t *r;
    bool send;
    int nparts;                       /* this side's partitions */
    uint64_t count;                   /* elements per partition of this side */
    const wm_datatype_t *ti;
    char *buf;
    int peer;                         /* world rank; -1: MPI_PROC_NULL */
    int utag;
    uint32_t hello_ctx, data_ctx;
    uint64_t total;                   /* packed bytes, this side */
    wm_part_hello_t hello;            /* send: what the first start sends; recv: what arrived */
    wc_request_t hello_req;
    bool hello_started;
    int nreqs;                        /* data messages: send partitions */
    wc_request_t *reqs;
    int pending;                      /* task: first data request that may not be complete */
    _Atomic int nposted;              /* send: partitions readied and posted this round */
    _Atomic int posted;               /* recv: this round's receives are posted */
    _Atomic int error;                /* first failure of this round (wu_status_t) */
    uint32_t leave_gen;
    bool task_used;
    wp_ltask_t task;
    _Atomic uint8_t ready[];          /* send: partition readied this round */
} wm_part_t;

static _Atomic uint32_t wm_part_next_tag;

static void wm_part_fail(wm_part_t *p, wu_status_t st)
{
    int ok = WU_OK;
    atomic_compare_exchange_strong_explicit(&p->error, &ok, (int)st, memory_order_relaxed,
                                            memory_order_relaxed);
}

/* Advance the pending index over completed data requests; true when all are complete. */
static bool wm_part_reqs_done(wm_part_t *p)
{
    while (p->pending < p->nreqs) {
        wc_request_t *q = &p->reqs[p->pending];
        if (!wc_request_is_complete(q))
            return false;
        if (WU_UNLIKELY(q->error != WU_OK))
            wm_part_fail(p, (wu_status_t)q->error);
        p->pending++;
    }
    return true;
}

/* Receive side: post one receive per send partition, each into its place in the buffer. */
static wu_status_t wm_part_post_recvs(wm_part_t *p)
{
    const wm_datatype_t *ti = p->ti;
    uint64_t pb = p->hello.part_bytes, size = ti->layout.size;
    bool bytes = ti->layout.contig && (uint64_t)ti->extent == size;
    for (int i = 0; i < p->nreqs; i++) {
        uint64_t off = (uint64_t)i * pb;
        wu_status_t st;
        if (bytes)
            st = wc_irecv_dt(wc_ep_default(), &p->reqs[i], p->buf + ti->layout.contig_off + off,
                             pb, &wc_dtype_bytes, p->peer, p->hello.tag0 + i, p->data_ctx);
        else
            st = wc_irecv_dt(wc_ep_default(), &p->reqs[i], p->buf + off / size * ti->extent,
                             pb / size, &ti->layout, p->peer, p->hello.tag0 + i, p->data_ctx);
        if (st != WU_OK) {
            wm_part_fail(p, st);
            for (int j = i; j < p->nreqs; j++)
                atomic_store_explicit(&p->reqs[j].state, WC_REQ_COMPLETE, memory_order_relaxed);
            return st;
        }
    }
    return WU_OK;
}

/* Receive side, first round: the hello arrived; check it and size the receives. */
static wu_status_t wm_part_matched(wm_part_t *p)
{
    wm_part_hello_t *h = &p->hello;
    if (p->hello_req.error != WU_OK)
        return (wu_status_t)p->hello_req.error;
    if (h->total != p->total || h->nparts <= 0 ||
        h->part_bytes * (uint64_t)h->nparts != h->total) {
        p->r->core.msg_len = h->total;
        p->r->core.len = p->total;
        return WU_ERR_TRUNCATE;
    }
    uint64_t size = p->ti->layout.size;
    bool bytes = p->ti->layout.contig && (uint64_t)p->ti->extent == size;
    if (!bytes && size && h->part_bytes % size)
        return WU_ERR_UNSUPPORTED;   /* a send partition would split an element of a gap-ful type */
    p->reqs = calloc((size_t)h->nparts, sizeof(*p->reqs));
    if (!p->reqs)
        return WU_ERR_NO_MEMORY;
    p->nreqs = h->nparts;
    return WU_OK;
}

static void wm_part_complete(wm_part_t *p)
{
    wm_request_t *r = p->r;
    if (!p->send) {
        r->core.st_source = p->peer;
        r->core.st_tag = p->utag;
        r->core.st_bytes = atomic_load_explicit(&p->error, memory_order_relaxed) == WU_OK
                               ? p->total : 0;
    }
    r->core.error = atomic_load_explicit(&p->error, memory_order_relaxed);
    wc_request_done(&r->core);
}

/* The engine runs a task in one thread at a time. */
static wp_task_result_t wm_part_task(void *arg)
{
    wm_part_t *p = arg;
    if (WU_UNLIKELY(p->leave_gen != wc_leave_gen_now()))
        return WP_TASK_DONE;   /* abandoned (wc_quiesce): the request never completes */
    if (p->send) {
        if (atomic_load_explicit(&p->nposted, memory_order_acquire) < p->nparts)
            return WP_TASK_AGAIN;
        if (!wc_request_is_complete(&p->hello_req))
            return WP_TASK_AGAIN;
        if (WU_UNLIKELY(p->hello_req.error != WU_OK))
            wm_part_fail(p, (wu_status_t)p->hello_req.error);
    } else if (!atomic_load_explicit(&p->posted, memory_order_relaxed)) {
        if (!wc_request_is_complete(&p->hello_req))
            return WP_TASK_AGAIN;
        wu_status_t st = p->reqs ? WU_OK : wm_part_matched(p);
        if (st == WU_OK)
            st = wm_part_post_recvs(p);
        if (st != WU_OK) {
            wm_part_fail(p, st);
            p->nreqs = 0;
        }
        atomic_store_explicit(&p->posted, 1, memory_order_release);
    }
    if (!wm_part_reqs_done(p))
        return WP_TASK_AGAIN;
    wm_part_complete(p);
    return WP_TASK_DONE;
}

/* The task of the previous round completed the request and returns DONE at once. */
static void wm_part_task_quiet(wm_part_t *p)
{
    if (!p->task_used)
        return;
    while (!atomic_load_explicit(&p->task.done, memory_order_acquire))
        wt_thread_yield();
}

int wm_part_start(wm_request_t *r, const char *func)
{
    wm_part_t *p = r->part;
    wm_part_task_quiet(p);
    r->active = true;
    r->core.error = WU_OK;
    wc_request_reset(&r->core);
    atomic_store_explicit(&p->error, WU_OK, memory_order_relaxed);
    p->pending = 0;
    if (p->peer < 0) {
        r->proc_null = true;
        return MPI_SUCCESS;
    }
    r->proc_null = false;
    wu_status_t st = WU_OK;
    if (p->send) {
        for (int i = 0; i < p->nparts; i++)
            atomic_store_explicit(&p->ready[i], 0, memory_order_relaxed);
        atomic_store_explicit(&p->nposted, 0, memory_order_relaxed);
        if (!p->hello_started) {
            st = wc_isend(wc_ep_default(), &p->hello_req, &p->hello, sizeof(p->hello), p->peer,
                          p->utag, p->hello_ctx, WC_SEND_STANDARD);
            p->hello_started = st == WU_OK;
        }
    } else if (!p->hello_started) {
        atomic_store_explicit(&p->posted, 0, memory_order_relaxed);
        st = wc_irecv(wc_ep_default(), &p->hello_req, &p->hello, sizeof(p->hello), p->peer,
                      p->utag, p->hello_ctx);
        p->hello_started = st == WU_OK;
    } else {
        atomic_store_explicit(&p->posted, 0, memory_order_relaxed);
        if (p->nreqs)
            st = wm_part_post_recvs(p);
        atomic_store_explicit(&p->posted, 1, memory_order_release);
    }
    if (st != WU_OK) {
        r->active = false;
        return wm_error(r->comm, wm_status_to_class(st), func, "%s", wu_status_str(st));
    }
    p->leave_gen = wc_leave_gen_now();
    wp_ltask_init(&p->task, wm_part_task, p, WP_TASK_ONCE, "part");
    p->task_used = true;
    wp_ltask_submit(&p->task);
    return MPI_SUCCESS;
}

void wm_part_free(wm_request_t *r)
{
    wm_part_t *p = r->part;
    if (!p)
        return;
    wm_part_task_quiet(p);
    free(p->reqs);
    free(p);
    r->part = NULL;
}

/* ---- initialization ---- */

static int wm_part_init(const char *fn, bool send, void *buf, int partitions, MPI_Count count,
                        MPI_Datatype type, int peer, int tag, MPI_Comm comm, MPI_Request *request)
{
    WM_COMM_CHECK(fn, comm, c);
    const wm_datatype_t *ti;
    int rc = wm_check_buffer_args(c, fn, buf, count, type, &ti);
    if (rc)
        return rc;
    if (partitions < 1)
        return wm_error(c, MPI_ERR_ARG, fn, "partitions = %d: must be at least 1", partitions);
    if ((peer < 0 || peer >= c->remote_size) && peer != MPI_PROC_NULL)
        return wm_error(c, MPI_ERR_RANK, fn, "invalid %s rank %d (%s has %d ranks)",
                        send ? "destination" : "source", peer, c->name, c->remote_size);
    if (tag < 0 || tag > WM_TAG_UB)
        return wm_error(c, MPI_ERR_TAG, fn, "invalid tag %d (valid: 0 to %d; no MPI_ANY_TAG)",
                        tag, WM_TAG_UB);
    if (!request)
        return wm_error(c, MPI_ERR_ARG, fn, "request is NULL");
    if (c->ctx & WM_CTX_PART)
        return wm_error(c, MPI_ERR_INTERN, fn, "context id 0x%x of %s too large for partitioned "
                        "communication", c->ctx, c->name);
    wm_part_t *p = calloc(1, sizeof(*p) + (send ? (size_t)partitions : 0));
    if (!p)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for %d partitions", partitions);
    p->send = send;
    p->nparts = partitions;
    p->count = (uint64_t)count;
    p->ti = ti;
    p->buf = buf;
    p->peer = peer == MPI_PROC_NULL ? -1 : wm_comm_peer_world(c, peer);
    p->utag = tag;
    p->data_ctx = c->ctx | WM_CTX_COLL;
    p->hello_ctx = c->ctx | WM_CTX_COLL | WM_CTX_PART;
    p->total = (uint64_t)partitions * (uint64_t)count * ti->layout.size;
    if (send) {
        uint32_t t0 = atomic_fetch_add_explicit(&wm_part_next_tag, (uint32_t)partitions,
                                                memory_order_relaxed);
        if ((uint64_t)t0 + (uint64_t)partitions > (uint64_t)(WM_TAG_PART_END - WM_TAG_PART_BASE)) {
            free(p);
            return wm_error(c, MPI_ERR_OTHER, fn, "out of internal tags for partitioned sends");
        }
        p->hello = (wm_part_hello_t){ .total = p->total,
                                      .part_bytes = p->count * ti->layout.size,
                                      .nparts = partitions,
                                      .tag0 = WM_TAG_PART_BASE + (int32_t)t0 };
        p->reqs = calloc((size_t)partitions, sizeof(*p->reqs));
        if (!p->reqs) {
            free(p);
            return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for %d partitions", partitions);
        }
        p->nreqs = partitions;
    }
    wm_request_t *r = wm_request_alloc();
    if (!r) {
        free(p->reqs);
        free(p);
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a request");
    }
    p->r = r;
    r->kind = send ? WM_REQ_PSEND : WM_REQ_PRECV;
    r->comm = c;
    r->ti = ti;
    r->buf = buf;
    r->count = count;
    r->type = type;
    r->peer = peer;
    r->tag = tag;
    r->persistent = true;
    r->part = p;
    wm_request_use(r, WM_REQ_OBJ_COMM, &c->obj);
    wm_request_use(r, WM_REQ_OBJ_TYPE, (wm_obj_t *)&ti->obj);
    *request = wm_request_handle(r);
    return MPI_SUCCESS;
}

/* Psend_init and Precv_init, each serving its int form and its _c twin (WM_TWINS_MPI_X of
 * src/mpi/gen/wm_entry.h). The info argument carries no hint Weft uses. */
static inline int wm_psend_init(const char *fn, const void *buf, int partitions, MPI_Count count,
                                MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
    (void)info;
    return wm_part_init(fn, true, (void *)buf, partitions, count, datatype, dest, tag, comm,
                        request);
}

static inline int wm_precv_init(const char *fn, void *buf, int partitions, MPI_Count count,
                                MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
    (void)info;
    return wm_part_init(fn, false, buf, partitions, count, datatype, source, tag, comm, request);
}

WM_TWINS_MPI_Psend_init(wm_psend_init)
WM_TWINS_MPI_Precv_init(wm_precv_init)

/* ---- ready and arrived ---- */

static int wm_part_req(const char *fn, MPI_Request h, bool send, wm_part_t **p_p)
{
    wm_request_t *r = h == MPI_REQUEST_NULL ? NULL : wm_request_get(h);
    if (!r || r->kind != (send ? WM_REQ_PSEND : WM_REQ_PRECV))
        return wm_error(r ? r->comm : NULL, MPI_ERR_REQUEST, fn,
                        "request %p is not a partitioned %s request", (void *)h,
                        send ? "send" : "receive");
    *p_p = r->part;
    return MPI_SUCCESS;
}

/* Ready partition i of an active send: post its message. Returns an MPI error code (raised). */
static int wm_part_ready(const char *fn, wm_part_t *p, int i)
{
    wm_request_t *r = p->r;
    if (WU_UNLIKELY(i < 0 || i >= p->nparts))
        return wm_error(r->comm, MPI_ERR_ARG, fn, "partition %d out of range (0 to %d)", i,
                        p->nparts - 1);
    if (WU_UNLIKELY(!r->active))
        return wm_error(r->comm, MPI_ERR_REQUEST, fn,
                        "the partitioned send is not active (MPI_Start it first)");
    if (WU_UNLIKELY(atomic_exchange_explicit(&p->ready[i], 1, memory_order_relaxed)))
        return wm_error(r->comm, MPI_ERR_ARG, fn, "partition %d is already ready in this round", i);
    if (p->peer < 0)
        return MPI_SUCCESS;
    const wm_datatype_t *ti = p->ti;
    wu_status_t st = wc_isend_dt(wc_ep_default(), &p->reqs[i],
                                 p->buf + (int64_t)((uint64_t)i * p->count) * ti->extent, p->count,
                                 &ti->layout, p->peer, p->hello.tag0 + i, p->data_ctx,
                                 WC_SEND_BULK);
    if (WU_UNLIKELY(st != WU_OK)) {
        wm_part_fail(p, st);
        atomic_store_explicit(&p->reqs[i].state, WC_REQ_COMPLETE, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&p->nposted, 1, memory_order_release);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Pready(int partition, MPI_Request request)
{
    static const char fn[] = "MPI_Pready";
    WM_CHECK_INIT(fn);
    wm_part_t *p;
    int rc = wm_part_req(fn, request, true, &p);
    return rc ? rc : wm_part_ready(fn, p, partition);
}

int wm_impl_MPI_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    static const char fn[] = "MPI_Pready_range";
    WM_CHECK_INIT(fn);
    wm_part_t *p;
    int rc = wm_part_req(fn, request, true, &p);
    if (rc)
        return rc;
    if (partition_low > partition_high)
        return wm_error(p->r->comm, MPI_ERR_ARG, fn, "partition_low %d > partition_high %d",
                        partition_low, partition_high);
    for (int i = partition_low; i <= partition_high; i++)
        if ((rc = wm_part_ready(fn, p, i)))
            return rc;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    static const char fn[] = "MPI_Pready_list";
    WM_CHECK_INIT(fn);
    wm_part_t *p;
    int rc = wm_part_req(fn, request, true, &p);
    if (rc)
        return rc;
    if (length < 0 || (length > 0 && !array_of_partitions))
        return wm_error(p->r->comm, MPI_ERR_ARG, fn, "%s",
                        length < 0 ? "length is negative" : "array_of_partitions is NULL");
    for (int k = 0; k < length; k++)
        if ((rc = wm_part_ready(fn, p, array_of_partitions[k])))
            return rc;
    return MPI_SUCCESS;
}

/* Have the send partitions covering receive partition j arrived? */
static bool wm_part_arrived(wm_part_t *p, int j)
{
    if (!atomic_load_explicit(&p->posted, memory_order_acquire))
        return false;
    if (!p->nreqs)
        return true;   /* failed: the request completes with the error */
    uint64_t rb = p->count * p->ti->layout.size, pb = p->hello.part_bytes;
    if (rb == 0 || pb == 0) {
        /* empty partitions: no byte maps one side's partitions onto the other's, so each receive
         * partition arrives with the last of the sender's (zero-byte) partitions */
        for (int i = 0; i < p->nreqs; i++)
            if (!wc_request_is_complete(&p->reqs[i]))
                return false;
        return true;
    }
    uint64_t lo = (uint64_t)j * rb / pb, hi = ((uint64_t)(j + 1) * rb - 1) / pb;
    for (uint64_t i = lo; i <= hi && i < (uint64_t)p->nreqs; i++)
        if (!wc_request_is_complete(&p->reqs[i]))
            return false;
    return true;
}

int wm_impl_MPI_Parrived(MPI_Request request, int partition, int *flag)
{
    static const char fn[] = "MPI_Parrived";
    WM_CHECK_INIT(fn);
    wm_part_t *p;
    int rc = wm_part_req(fn, request, false, &p);
    if (rc)
        return rc;
    wm_request_t *r = p->r;
    if (!flag)
        return wm_error(r->comm, MPI_ERR_ARG, fn, "flag is NULL");
    if (partition < 0 || partition >= p->nparts)
        return wm_error(r->comm, MPI_ERR_ARG, fn, "partition %d out of range (0 to %d)",
                        partition, p->nparts - 1);
    /* an inactive request (never started, or completed) has nothing pending */
    if (!r->active || r->proc_null || wc_request_is_complete(&r->core)) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    if (!wm_part_arrived(p, partition)) {
        wc_progress();
        *flag = wm_part_arrived(p, partition);
        return MPI_SUCCESS;
    }
    *flag = 1;
    return MPI_SUCCESS;
}
