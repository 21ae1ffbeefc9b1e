/* Point-to-point protocols over packets: eager, synchronous eager, rendezvous by pipelined
 * fragments or by single copy (process_vm_readv), and the self path. See wc_proto.h for the packets
 * and docs/design.md for the whole data flow.
 *
 * Concurrency contract (MPI_THREAD_MULTIPLE, no library-wide lock):
 *   - wc_p2p.match_lock (spinlock) guards the matching engine and the unexpected-message pool;
 *     held only to match, post, probe or store, never while copying a rendezvous message or
 *     sending a packet.
 *   - wc_peer_t.lock (one per destination, own cache line) guards the producer side of the ring to
 *     that destination and the destination's pending queue, so packets to one peer leave in order
 *     and threads sending to different peers never meet.
 *   - Delivery (wc_pt2pt_deliver) runs inside the transport's progress, which the progression
 *     engine runs in one thread at a time (the ltask's queue lock is a mask).
 *   - Requests complete through wc_request_done, outside every lock (a completion may run a
 *     detached request's callback, which may start sends).
 *   - Leaving (wc_quiesce, wc_core.h): the generation is bumped first, then each peer's queue is
 *     purged under its lock and the posted receives are swept under match_lock. A queue records the
 *     generation of its last purge (under its lock); a drain that sees a newer one purges first,
 *     and a drain already under way when the purge comes finishes before it (the purge waits for
 *     the lock), so once a queue is purged nothing reads an abandoned send's buffer from it. A CTS
 *     compares its request's generation under the peer lock: handled after the purge's unlock of
 *     that lock, it sees the bump. A fragment compares without a lock. Delivery that began before
 *     it saw the bump ends before wc_quiesce returns (wp_engine_sync: delivery runs in a task).
 * Below MPI_THREAD_MULTIPLE the wt_ locks are a predictable branch and nothing else.
 */
#include "core/wc_pt2pt.h"
#include "core/wc_dynbcast.h"
#include "core/wc_wait.h"
#include "progress/wp_engine.h"
#include "thread/wt_thread.h"
#include "transport/shm/wx_shm.h"
#include "util/wu_log.h"
#include "util/wu_tsan.h"

#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* An unexpected message: the eager payload copied out of the ring, or a rendezvous offer. */
#define WC_MSG_INLINE 192
/* Payloads longer than that go to buffers of eager_max bytes, of which this many are kept for
 * reuse: a rank that posts its receives late (a broadcast's leaf behind its root) stores every
 * message, and a malloc and free each was a tenth of a 4 KiB broadcast's cost. */
#define WC_MSG_BUFS 16
struct wc_message {
    wc_match_entry_t match;
    wc_hdr_t         hdr;
    int              src;
    void            *data;        /* eager payload (inline_data or malloc'd) */
    bool             data_pooled; /* data is an eager_max buffer of wc_p2p.bufs */
    struct wc_message *next_free;
    char             inline_data[WC_MSG_INLINE];
};

typedef struct wc_peer {
    wt_spinlock_t lock;
    wu_list_t     pending;        /* lock: packets waiting for ring space, in send order */
    _Atomic bool  queued;         /* written under lock: pending is not empty; read without it */
    uint32_t      leave_gen;      /* lock: wc_leave_gen when pending was last purged */
} WU_ALIGNED(WU_CACHELINE) wc_peer_t;

typedef struct wc_pt2pt {
    wt_spinlock_t  match_lock;
    wc_match_t    *match;          /* match_lock */
    wc_message_t  *msg_free;       /* match_lock: free unexpected-message descriptors */
    void          *bufs[WC_MSG_BUFS];   /* match_lock: free payload buffers of eager_max bytes */
    int            nbufs;
    wc_peer_t     *peers;          /* [size] */
    _Atomic int    npending;       /* destinations with a non-empty pending queue */
    _Atomic size_t ndropped;       /* packets of abandoned sends dropped (wc_quiesce): the log */
} wc_pt2pt_t;

static wc_pt2pt_t wc_p2p;

/* ---- unexpected-message pool (match_lock held) --------------------------------------------- */

static wc_message_t *wc_message_get(size_t len)
{
    wc_message_t *m = wc_p2p.msg_free;
    if (m)
        wc_p2p.msg_free = m->next_free;
    else if (!(m = malloc(sizeof(*m))))
        return NULL;
    m->data_pooled = false;
    if (len <= WC_MSG_INLINE) {
        m->data = m->inline_data;
    } else if (len <= wc_world.eager_max) {
        m->data_pooled = true;
        m->data = wc_p2p.nbufs ? wc_p2p.bufs[--wc_p2p.nbufs] : malloc(wc_world.eager_max);
    } else {
        m->data = malloc(len);
    }
    if (!m->data) {
        m->next_free = wc_p2p.msg_free;
        wc_p2p.msg_free = m;
        return NULL;
    }
    return m;
}

static void wc_message_put_locked(wc_message_t *m)
{
    if (m->data_pooled && wc_p2p.nbufs < WC_MSG_BUFS)
        wc_p2p.bufs[wc_p2p.nbufs++] = m->data;
    else if (m->data != m->inline_data)
        free(m->data);
    m->next_free = wc_p2p.msg_free;
    wc_p2p.msg_free = m;
}

static void wc_message_put(wc_message_t *m)
{
    wt_spin_lock(&wc_p2p.match_lock);
    wc_message_put_locked(m);
    wt_spin_unlock(&wc_p2p.match_lock);
}

/* ---- sending packets -------------------------------------------------------------------------- */

/* wx_fill_fn_t of a packed send: the pack engine writes the packet's payload straight into the
 * ring record from the request's cursor (the eager packet from offset 0, a FRAG from its offset). */
static void wc_pack_fill(void *arg, void *dst, size_t len)
{
    wc_request_t *req = arg;
    wc_dtype_cursor_seek(&req->cur, req->op.hdr.type == WC_PKT_FRAG ? req->op.hdr.sreq : 0);
    wc_dtype_pack(&req->cur, dst, len);
}

static inline wu_status_t wc_op_send(int dst, wc_sendop_t *op)
{
    if (WU_UNLIKELY(op->pack))
        return wx_shm_send_fill(dst, &op->hdr, op->len, wc_pack_fill, op->req);
    return wx_shm_send(dst, &op->hdr, op->payload, op->len);
}

/* Queue op behind dst's pending packets. Peer lock held. */
static inline void wc_queue_locked(wc_peer_t *p, wc_sendop_t *op)
{
    if (wu_list_empty(&p->pending)) {
        atomic_fetch_add_explicit(&wc_p2p.npending, 1, memory_order_relaxed);
        atomic_store_explicit(&p->queued, true, memory_order_relaxed);
    }
    wu_list_push_back(&p->pending, &op->link);
}

/* Try to put op in the ring now (in order behind queued packets), else queue it. Peer lock held.
 * Returns true if it left. */
static inline bool wc_out_locked(int dst, wc_peer_t *p, wc_sendop_t *op)
{
    if (WU_LIKELY(wu_list_empty(&p->pending)) &&
        WU_LIKELY(wc_op_send(dst, op) == WU_OK))
        return true;
    wc_queue_locked(p, op);
    return false;
}

static void wc_send_ctrl(int dst, wc_pkt_type_t type, uint64_t sreq, uint64_t addr)
{
    wc_hdr_t hdr = { .type = (uint8_t)type, .sreq = sreq, .addr = addr };
    if (dst == wc_world.rank) {
        wc_pt2pt_deliver(dst, &hdr, NULL, 0, NULL);
        return;
    }
    wc_peer_t *p = &wc_p2p.peers[dst];
    wt_spin_lock(&p->lock);
    if (wu_list_empty(&p->pending) && wx_shm_send(dst, &hdr, NULL, 0) == WU_OK) {
        wt_spin_unlock(&p->lock);
        return;
    }
    wc_sendop_t *op = malloc(sizeof(*op));
    if (!op)
        wu_log_fatal("out of memory queueing a control packet for rank %d", dst);
    op->hdr = hdr;
    op->payload = NULL;
    op->len = 0;
    op->req = NULL;
    op->pooled = true;
    op->pack = false;
    wc_queue_locked(p, op);
    wt_spin_unlock(&p->lock);
}

/* Set up the next fragment of a pipelined rendezvous send in its request's sendop. */
static inline void wc_frag_prepare(wc_request_t *req)
{
    size_t n = req->len - req->frag_off;
    if (n > wc_world.frag_size)
        n = wc_world.frag_size;
    req->op.hdr = (wc_hdr_t){ .type = WC_PKT_FRAG, .sreq = req->frag_off, .addr = req->frag_rreq,
                              .len = req->len };
    req->op.payload = req->dt ? NULL : (const char *)req->buf + req->frag_off;
    req->op.pack = req->dt != NULL;
    req->op.len = n;
}

/* Push a pipelined send's fragments while the ring takes them. Returns true when all have left
 * (the caller completes the request, outside the lock). Peer lock held. */
static bool wc_frag_push_locked(int dst, wc_peer_t *p, wc_request_t *req)
{
    while (req->frag_off < req->len) {
        wc_frag_prepare(req);
        if (!wc_out_locked(dst, p, &req->op))
            return false;
        req->frag_off += req->op.len;
    }
    return true;
}

/* A packet of req left the ring: is req complete? (EAGER non-synchronous: yes; RTS: no, the FIN or
 * the fragments finish it.) */
static inline bool wc_sent_completes(const wc_sendop_t *op)
{
    return (op->hdr.type == WC_PKT_EAGER && !op->req->sync) || op->hdr.type == WC_PKT_DYN;
}

void wc_pt2pt_send_op(int dst, wc_request_t *req)
{
    wc_peer_t *p = &wc_p2p.peers[dst];
    wt_spin_lock(&p->lock);
    bool out = wc_out_locked(dst, p, &req->op);
    wt_spin_unlock(&p->lock);
    if (out)
        wc_request_done(req);
}

/* The process is leaving (wc_quiesce): drop the queued packets of sends that the application
 * still owns (not detached), so that nothing reads their buffers any more. Packets of detached
 * requests and control packets stay, in order. Peer lock held. */
static WU_NOINLINE void wc_peer_purge_locked(wc_peer_t *p)
{
    p->leave_gen = wc_leave_gen_now();
    if (wu_list_empty(&p->pending))
        return;
    size_t n = 0;
    for (wu_list_t *e = p->pending.next, *next; e != &p->pending; e = next) {
        next = e->next;
        wc_sendop_t *op = WU_CONTAINER_OF(e, wc_sendop_t, link);
        if (op->req && !op->pooled && !wc_request_is_detached(op->req)) {
            wu_list_del(e);
            n++;
        }
    }
    atomic_fetch_add_explicit(&wc_p2p.ndropped, n, memory_order_relaxed);
    if (wu_list_empty(&p->pending)) {
        atomic_fetch_sub_explicit(&wc_p2p.npending, 1, memory_order_relaxed);
        atomic_store_explicit(&p->queued, false, memory_order_relaxed);
    }
}

/* Drain dst's pending queue while the ring takes packets; requests that complete are linked on
 * *done (through op.link) to be completed by the caller outside the lock. Peer lock held. */
static int wc_drain_locked(int dst, wc_peer_t *p, wu_list_t *done)
{
    int did = 0;
    wu_list_t *e;
    if (WU_UNLIKELY(p->leave_gen != wc_leave_gen_now())) {
        wc_peer_purge_locked(p);
        if (wu_list_empty(&p->pending))
            return 0;
    }
    while ((e = wu_list_front(&p->pending)) != NULL) {
        wc_sendop_t *op = WU_CONTAINER_OF(e, wc_sendop_t, link);
        if (wc_op_send(dst, op) != WU_OK)
            break;
        wu_list_del(e);
        did++;
        if (op->pooled) {
            free(op);
            continue;
        }
        wc_request_t *req = op->req;
        if (op->hdr.type == WC_PKT_FRAG) {
            req->frag_off += op->len;
            if (req->frag_off < req->len) {
                wc_frag_prepare(req);
                wu_list_push_front(&p->pending, &req->op.link);
            } else {
                wu_list_push_back(done, &req->op.link);
            }
        } else if (wc_sent_completes(op)) {
            wu_list_push_back(done, &req->op.link);
        }
    }
    if (wu_list_empty(&p->pending)) {
        atomic_fetch_sub_explicit(&wc_p2p.npending, 1, memory_order_relaxed);
        atomic_store_explicit(&p->queued, false, memory_order_relaxed);
    }
    return did;
}

static void wc_complete_list(wu_list_t *done)
{
    wu_list_t *e;
    while ((e = wu_list_front(done)) != NULL) {
        wu_list_del(e);
        wc_request_done(WU_CONTAINER_OF(e, wc_sendop_t, link)->req);
    }
}

/* Drain every pending queue whose lock is free (a busy lock means its owner is sending). */
static int wc_pending_drain(void)
{
    int did = 0;
    wu_list_t done = WU_LIST_INIT(done);
    for (int dst = 0; dst < wc_world.size; dst++) {
        wc_peer_t *p = &wc_p2p.peers[dst];
        if (!atomic_load_explicit(&p->queued, memory_order_relaxed) || !wt_spin_trylock(&p->lock))
            continue;
        if (!wu_list_empty(&p->pending))
            did += wc_drain_locked(dst, p, &done);
        wt_spin_unlock(&p->lock);
    }
    wc_complete_list(&done);
    return did;
}

bool wc_pt2pt_sends_pending(void)
{
    return atomic_load_explicit(&wc_p2p.npending, memory_order_relaxed) > 0;
}

/* ---- receiving ---------------------------------------------------------------------------------- */

static inline void wc_recv_status(wc_request_t *rreq, int src, const wc_hdr_t *hdr, size_t *n_p)
{
    size_t n = hdr->len;
    rreq->st_source = src;
    rreq->st_tag = hdr->tag;
    if (n > rreq->len) {
        n = rreq->len;
        rreq->error = WU_ERR_TRUNCATE;
    }
    rreq->st_bytes = n;
    rreq->msg_len = hdr->len;
    *n_p = n;
}

/* Write n packed bytes from data at packed offset off of rreq's buffer. */
static inline void wc_recv_copy_in(wc_request_t *rreq, size_t off, const void *data, size_t n)
{
    if (WU_LIKELY(!rreq->dt)) {
        memcpy((char *)rreq->buf + off, data, n);
        return;
    }
    wc_dtype_cursor_seek(&rreq->cur, off);
    wc_dtype_unpack(&rreq->cur, data, n);
}

/* The self path's rendezvous: the first n packed bytes of sreq's data into rreq's buffer, packing
 * and unpacking through a small bounce buffer when both sides are non-contiguous. */
static void wc_copy_local(wc_request_t *rreq, wc_request_t *sreq, size_t n)
{
    if (!sreq->dt) {
        wc_recv_copy_in(rreq, 0, sreq->buf, n);
        return;
    }
    wc_dtype_cursor_seek(&sreq->cur, 0);
    if (!rreq->dt) {
        wc_dtype_pack(&sreq->cur, rreq->buf, n);
        return;
    }
    char bounce[4096];
    wc_dtype_cursor_seek(&rreq->cur, 0);
    for (size_t off = 0; off < n;) {
        size_t k = n - off < sizeof(bounce) ? n - off : sizeof(bounce);
        wc_dtype_pack(&sreq->cur, bounce, k);
        wc_dtype_unpack(&rreq->cur, bounce, k);
        off += k;
    }
}

/* Single copy from a contiguous sender into a non-contiguous receive buffer: the local pieces are
 * built from the layout, WC_IOV_BATCH at a time (adjacent blocks merged), one process_vm_readv per
 * batch. */
#define WC_IOV_BATCH 256
static wu_status_t wc_cma_scatter(wc_request_t *rreq, int src, uint64_t addr, size_t n)
{
    const wc_dtype_t *dt = rreq->dt;
    char *base = rreq->buf;
    struct iovec iov[WC_IOV_BATCH];
    uint64_t elem = 0, seg = 0, block = 0;
    size_t left = n;
    while (left) {
        int k = 0;
        size_t bytes = 0;
        while (left && k < WC_IOV_BATCH) {
            const wc_dtype_seg_t *sg = &dt->segs[seg];
            char *mem = base + (int64_t)elem * dt->extent + sg->disp + (int64_t)block * sg->stride;
            size_t len = sg->blocklen < left ? sg->blocklen : left;
            if (k && (char *)iov[k - 1].iov_base + iov[k - 1].iov_len == mem)
                iov[k - 1].iov_len += len;
            else
                iov[k++] = (struct iovec){ mem, len };
            left -= len;
            bytes += len;
            if (++block == sg->count) {
                block = 0;
                if (++seg == dt->nsegs) {
                    seg = 0;
                    elem++;
                }
            }
        }
        wu_status_t st = wx_shm_getv(src, iov, k, addr, bytes);
        if (st != WU_OK)
            return st;
        addr += bytes;
    }
    return WU_OK;
}

static void wc_recv_eager(wc_request_t *rreq, int src, const wc_hdr_t *hdr, const void *payload)
{
    size_t n;
    wc_recv_status(rreq, src, hdr, &n);
    if (n)
        wc_recv_copy_in(rreq, 0, payload, n);
    if (hdr->flags & WC_PKT_FLAG_SYNC)
        wc_send_ctrl(src, WC_PKT_ACK, hdr->sreq, 0);
    wc_request_done(rreq);
}

/* A non-contiguous receiver takes the single copy only if its blocks average at least this many
 * bytes: the kernel's cost per iovec makes a scatter into small blocks several times slower than
 * the pipeline (docs/design.md, "Derived datatypes on the wire"). */
#define WC_CMA_MIN_BLOCK 1024

static bool wc_cma_scatter_ok(const wc_dtype_t *dt)
{
    uint64_t blocks = 0;
    for (uint64_t i = 0; i < dt->nsegs; i++)
        blocks += dt->segs[i].count;
    return blocks && dt->size / blocks >= WC_CMA_MIN_BLOCK;
}

/* Single copy for this RTS? Collectives (BULK) take it from a lower size than point-to-point: a
 * rank of a collective often waits on several peers at once, on a machine whose cores run other
 * ranks, where the pipeline (both ranks copying at once) loses its parallelism and copies twice. */
static inline bool wc_cma_wanted(const wc_hdr_t *hdr)
{
    if (hdr->flags & WC_PKT_FLAG_PACKED)
        return false;
    if (wc_world.cma && hdr->len >= wc_world.cma_min)
        return true;
    return (hdr->flags & WC_PKT_FLAG_BULK) && wc_world.cma_bulk_min &&
           hdr->len >= wc_world.cma_bulk_min;
}

static void wc_recv_rts(wc_request_t *rreq, int src, const wc_hdr_t *hdr)
{
    size_t n;
    wc_recv_status(rreq, src, hdr, &n);
    if (src == wc_world.rank) {
        wc_copy_local(rreq, (wc_request_t *)(uintptr_t)hdr->sreq, n);
    } else if (wc_cma_wanted(hdr) && (!rreq->dt || wc_cma_scatter_ok(rreq->dt))) {
        wu_status_t st = rreq->dt ? wc_cma_scatter(rreq, src, hdr->addr, n)
                                  : wx_shm_get(src, rreq->buf, hdr->addr, n);
        if (st != WU_OK)
            rreq->error = st;
    } else {
        rreq->arrived = 0;
        rreq->leave_gen = wc_leave_gen_now();
        WU_TSAN_RELEASE(rreq);
        wc_send_ctrl(src, WC_PKT_CTS, hdr->sreq, (uint64_t)(uintptr_t)rreq);
        return;
    }
    wc_send_ctrl(src, WC_PKT_FIN, hdr->sreq, 0);
    wc_request_done(rreq);
}

/* Fragments of one message come from one sender and are delivered by one thread at a time, in
 * order; the request is the protocol's until its last fragment. */
static void wc_recv_frag(const wc_hdr_t *hdr, const void *payload, size_t len)
{
    wc_request_t *rreq = (wc_request_t *)(uintptr_t)hdr->addr;
    size_t off = hdr->sreq;
    WU_TSAN_ACQUIRE(rreq);
    if (WU_UNLIKELY(rreq->leave_gen != wc_leave_gen_now()) && !wc_request_is_detached(rreq))
        return;   /* abandoned (wc_quiesce): its buffer is no longer written */
    if (off < rreq->st_bytes) {
        size_t n = rreq->st_bytes - off;
        wc_recv_copy_in(rreq, off, payload, n < len ? n : len);
    }
    rreq->arrived += len;
    if (rreq->arrived >= rreq->msg_len)
        wc_request_done(rreq);
}

/* A receive matched an unexpected message (taken out of matching): finish it. */
static void wc_recv_matched_msg(wc_request_t *rreq, wc_message_t *msg)
{
    if (msg->hdr.type == WC_PKT_EAGER)
        wc_recv_eager(rreq, msg->src, &msg->hdr, msg->data);
    else
        wc_recv_rts(rreq, msg->src, &msg->hdr);
    wc_message_put(msg);
}

/* match_lock held. */
static wc_message_t *wc_unexpected_store_locked(int src, const wc_hdr_t *hdr, const void *payload,
                                                size_t len)
{
    wc_message_t *msg = wc_message_get(hdr->type == WC_PKT_EAGER ? len : 0);
    if (!msg)
        wu_log_fatal("out of memory storing an unexpected message of %zu bytes", len);
    msg->hdr = *hdr;
    msg->src = src;
    if (hdr->type == WC_PKT_EAGER && len)
        memcpy(msg->data, payload, len);
    msg->match.ctx = hdr->ctx;
    msg->match.src = src;
    msg->match.tag = hdr->tag;
    if (wc_match_unexpected_add(wc_p2p.match, &msg->match) != WU_OK)
        wu_log_fatal("out of memory in the unexpected-message index");
    return msg;
}

static inline void wc_cma_wait_end(wc_request_t *sreq)
{
    if (sreq->cma_wait) {
        sreq->cma_wait = 0;
        atomic_fetch_sub_explicit(&wc_cma_wait_bytes, sreq->len, memory_order_relaxed);
    }
}

void wc_pt2pt_deliver_owned(int src, const wc_hdr_t *hdr, void *data)
{
    wt_spin_lock(&wc_p2p.match_lock);
    wc_match_entry_t *e = wc_match_posted_take(wc_p2p.match, hdr->ctx, src, hdr->tag);
    if (!e) {
        wc_unexpected_store_locked(src, hdr, NULL, 0)->data = data;   /* freed with the message */
        wt_spin_unlock(&wc_p2p.match_lock);
        return;
    }
    wt_spin_unlock(&wc_p2p.match_lock);
    wc_recv_eager(WU_CONTAINER_OF(e, wc_request_t, match), src, hdr, data);
    free(data);
}

void wc_pt2pt_deliver(int src, const void *hdrp, const void *payload, size_t len, void *arg)
{
    const wc_hdr_t *hdr = hdrp;
    wc_match_entry_t *e;

    switch (hdr->type) {
    case WC_PKT_EAGER:
    case WC_PKT_RTS:
        wt_spin_lock(&wc_p2p.match_lock);
        e = wc_match_posted_take(wc_p2p.match, hdr->ctx, src, hdr->tag);
        if (!e) {
            wc_unexpected_store_locked(src, hdr, payload, len);
            wt_spin_unlock(&wc_p2p.match_lock);
            return;
        }
        wt_spin_unlock(&wc_p2p.match_lock);
        wc_request_t *rreq = WU_CONTAINER_OF(e, wc_request_t, match);
        if (hdr->type == WC_PKT_EAGER)
            wc_recv_eager(rreq, src, hdr, payload);
        else
            wc_recv_rts(rreq, src, hdr);
        return;
    case WC_PKT_FIN:
    case WC_PKT_ACK: {
        wc_request_t *sreq = (wc_request_t *)(uintptr_t)hdr->sreq;
        WU_TSAN_ACQUIRE(sreq);
        wc_cma_wait_end(sreq);
        wc_request_done(sreq);
        return;
    }
    case WC_PKT_CTS: {
        wc_request_t *sreq = (wc_request_t *)(uintptr_t)hdr->sreq;
        WU_TSAN_ACQUIRE(sreq);
        wc_cma_wait_end(sreq);   /* the receiver chose the pipeline after all */
        wc_peer_t *p = &wc_p2p.peers[src];
        wt_spin_lock(&p->lock);
        if (WU_UNLIKELY(sreq->leave_gen != wc_leave_gen_now()) &&
            !wc_request_is_detached(sreq)) {
            wt_spin_unlock(&p->lock);
            return;   /* abandoned (wc_quiesce): its buffer is no longer read */
        }
        sreq->frag_rreq = hdr->addr;
        sreq->frag_off = 0;
        bool all_out = wc_frag_push_locked(src, p, sreq);
        wt_spin_unlock(&p->lock);
        if (all_out)
            wc_request_done(sreq);
        return;
    }
    case WC_PKT_FRAG:
        wc_recv_frag(hdr, payload, len);
        return;
    case WC_PKT_DYN:
        wc_dyn_deliver(src, hdr, payload, len);
        return;
    default:
        wu_log_fatal("packet of unknown type %d from rank %d", hdr->type, src);
    }
}

wc_request_t *wc_pt2pt_take_posted(int src, int tag, uint32_t ctx)
{
    wt_spin_lock(&wc_p2p.match_lock);
    wc_match_entry_t *e = wc_match_posted_take(wc_p2p.match, ctx, src, tag);
    wt_spin_unlock(&wc_p2p.match_lock);
    return e ? WU_CONTAINER_OF(e, wc_request_t, match) : NULL;
}

/* Look-ahead over a batch of arriving packets: stage 0 prefetches the match bins, stage 1 the
 * receive requests that will match. Runs in the progress thread, before delivery; reads the
 * engine without the lock (a hint: a torn read only prefetches the wrong line), so it is skipped
 * when other threads may be posting concurrently. */
static void wc_pt2pt_prefetch(int src, const void *hdrp, int stage)
{
    const wc_hdr_t *hdr = hdrp;
    if (hdr->type != WC_PKT_EAGER && hdr->type != WC_PKT_RTS)
        return;
    if (!wt_spin_trylock(&wc_p2p.match_lock))
        return;
    if (stage == 0) {
        wc_match_prefetch_bin(wc_p2p.match, hdr->ctx, src, hdr->tag);
    } else {
        wc_match_entry_t *e = wc_match_posted_peek_exact(wc_p2p.match, hdr->ctx, src, hdr->tag);
        if (e) {
            __builtin_prefetch(WU_CONTAINER_OF(e, wc_request_t, match), 1);
            __builtin_prefetch(e, 1);
        }
    }
    wt_spin_unlock(&wc_p2p.match_lock);
}

/* ---- operations ----------------------------------------------------------------------------------- */

/* Self-sent eager packet of a packed send: packed into a staging buffer of at most eager_max
 * bytes, since the receive side may have to keep it as an unexpected message. */
static wu_status_t wc_self_eager_packed(wc_request_t *req)
{
    char small[512];
    size_t len = req->op.len;
    char *tmp = len <= sizeof(small) ? small : malloc(len);
    if (!tmp)
        return WU_ERR_NO_MEMORY;
    wc_dtype_pack(&req->cur, tmp, len);
    wc_pt2pt_deliver(wc_world.rank, &req->op.hdr, tmp, len, NULL);
    if (tmp != small)
        free(tmp);
    return WU_OK;
}

/* dt: NULL for len contiguous bytes at buf, else the non-contiguous layout of buf (len packed
 * bytes, req->cur already on it). */
static inline wu_status_t wc_isend_start(wc_request_t *req, const void *buf, size_t len,
                                         const wc_dtype_t *dt, int dst, int tag, uint32_t ctx,
                                         wc_send_mode_t mode)
{
    req->kind = WC_REQ_SEND;
    req->buf = (void *)buf;
    req->len = len;
    req->peer = dst;
    req->error = WU_OK;
    req->sync = (mode == WC_SEND_SYNC);
    req->cma_wait = 0;
    req->dt = dt;
    wc_request_reset(req);

    wc_sendop_t *op = &req->op;
    op->req = req;
    op->pooled = false;
    if (len <= wc_world.eager_max ||
        (WU_UNLIKELY(mode == WC_SEND_BULK_EAGER) && len <= wc_world.bulk_eager_max)) {
        op->hdr = (wc_hdr_t){ .type = WC_PKT_EAGER, .flags = req->sync ? WC_PKT_FLAG_SYNC : 0,
                              .tag = tag, .ctx = ctx, .len = len, .sreq = (uint64_t)(uintptr_t)req };
        op->payload = dt ? NULL : buf;
        op->pack = dt != NULL;
        op->len = len;
    } else {
        uint8_t flags = (uint8_t)((dt ? WC_PKT_FLAG_PACKED : 0) |
                                  (mode >= WC_SEND_BULK ? WC_PKT_FLAG_BULK : 0));
        op->hdr = (wc_hdr_t){ .type = WC_PKT_RTS, .flags = flags, .tag = tag, .ctx = ctx,
                              .len = len, .sreq = (uint64_t)(uintptr_t)req,
                              .addr = (uint64_t)(uintptr_t)buf };
        op->payload = NULL;
        op->pack = false;
        op->len = 0;
        req->leave_gen = wc_leave_gen_now();
        if (mode >= WC_SEND_BULK && !dt && wc_bulk_single_copy(len)) {
            /* the receiver will read it: no event here until its FIN (wc_wait.h) */
            req->cma_wait = 1;
            atomic_fetch_add_explicit(&wc_cma_wait_bytes, len, memory_order_relaxed);
        }
    }
    bool completes = wc_sent_completes(op);
    WU_TSAN_RELEASE(req);   /* the peer's FIN, ACK or CTS for req may be handled by another thread */
    if (dst == wc_world.rank) {
        if (WU_UNLIKELY(op->pack)) {
            wu_status_t st = wc_self_eager_packed(req);
            if (st != WU_OK)
                return st;
        } else {
            wc_pt2pt_deliver(dst, &op->hdr, op->payload, op->len, NULL);
        }
        if (completes)
            wc_request_done(req);
        return WU_OK;
    }
    wc_peer_t *p = &wc_p2p.peers[dst];
    wt_spin_lock(&p->lock);
    bool out = wc_out_locked(dst, p, op);
    wt_spin_unlock(&p->lock);
    if (out && completes)
        wc_request_done(req);
    return WU_OK;
}

wu_status_t wc_isend(wc_request_t *req, const void *buf, size_t len, int dst, int tag, uint32_t ctx,
                     wc_send_mode_t mode)
{
    return wc_isend_start(req, buf, len, NULL, dst, tag, ctx, mode);
}

static inline void wc_recv_init(wc_request_t *req, void *buf, size_t len, const wc_dtype_t *dt)
{
    req->kind = WC_REQ_RECV;
    req->buf = buf;
    req->len = len;
    req->dt = dt;
    req->error = WU_OK;
    req->cancelled = 0;
    req->st_bytes = 0;
    req->match.owner = NULL;
    wc_request_reset(req);
}

static inline wu_status_t wc_irecv_start(wc_request_t *req, void *buf, size_t len,
                                         const wc_dtype_t *dt, int src, int tag, uint32_t ctx)
{
    wc_recv_init(req, buf, len, dt);
    req->match.ctx = ctx;
    req->match.src = src;
    req->match.tag = tag;
    wt_spin_lock(&wc_p2p.match_lock);
    wc_match_entry_t *e = wc_match_unexpected_find(wc_p2p.match, ctx, src, tag, true);
    if (e) {
        wt_spin_unlock(&wc_p2p.match_lock);
        wc_recv_matched_msg(req, WU_CONTAINER_OF(e, wc_message_t, match));
        return WU_OK;
    }
    wu_status_t st = wc_match_post(wc_p2p.match, &req->match);
    wt_spin_unlock(&wc_p2p.match_lock);
    return st;
}

wu_status_t wc_irecv(wc_request_t *req, void *buf, size_t len, int src, int tag, uint32_t ctx)
{
    return wc_irecv_start(req, buf, len, NULL, src, tag, ctx);
}

bool wc_cancel_recv(wc_request_t *req)
{
    if (req->kind != WC_REQ_RECV || wc_request_is_complete(req))
        return false;
    wt_spin_lock(&wc_p2p.match_lock);
    bool removed = wc_match_posted_remove(wc_p2p.match, &req->match);
    wt_spin_unlock(&wc_p2p.match_lock);
    if (!removed)
        return false;
    req->cancelled = 1;
    wc_request_done(req);
    return true;
}

static bool wc_iprobe_once(int src, int tag, uint32_t ctx, bool take, wc_probe_info_t *info_p,
                           wc_message_t **msg_p)
{
    wt_spin_lock(&wc_p2p.match_lock);
    wc_match_entry_t *e = wc_match_unexpected_find(wc_p2p.match, ctx, src, tag, take);
    if (e) {
        wc_message_t *msg = WU_CONTAINER_OF(e, wc_message_t, match);
        info_p->source = msg->src;
        info_p->tag = msg->hdr.tag;
        info_p->len = msg->hdr.len;
        if (take)
            *msg_p = msg;
    }
    wt_spin_unlock(&wc_p2p.match_lock);
    return e != NULL;
}

bool wc_iprobe(int src, int tag, uint32_t ctx, bool take, wc_probe_info_t *info_p,
               wc_message_t **msg_p)
{
    if (wc_iprobe_once(src, tag, ctx, take, info_p, msg_p))
        return true;
    wc_progress();
    return wc_iprobe_once(src, tag, ctx, take, info_p, msg_p);
}

wu_status_t wc_imrecv(wc_request_t *req, void *buf, size_t len, wc_message_t *msg)
{
    wc_recv_init(req, buf, len, NULL);
    wc_recv_matched_msg(req, msg);
    return WU_OK;
}

/* ---- progress ------------------------------------------------------------------------------------- */

wp_task_result_t wc_pt2pt_progress_task(void *arg)
{
    int did = 0;
    if (wc_world.size > 1)
        did = wx_shm_progress();
    if (WU_UNLIKELY(atomic_load_explicit(&wc_p2p.npending, memory_order_relaxed) > 0))
        did += wc_pending_drain();
    return did ? WP_TASK_DONE : WP_TASK_AGAIN;
}

int wc_progress(void)
{
    return wp_poll();
}

/* ---- leaving (wc_quiesce) -------------------------------------------------------------------- */

/* A posted receive that the application still owns. */
static bool wc_recv_abandoned(wc_match_entry_t *e, void *arg)
{
    (void)arg;
    return !wc_request_is_detached(WU_CONTAINER_OF(e, wc_request_t, match));
}

void wc_pt2pt_quiesce(size_t *dropped_p, size_t *withdrawn_p)
{
    size_t withdrawn = 0;
    for (int dst = 0; wc_p2p.peers && dst < wc_world.size; dst++) {
        wc_peer_t *p = &wc_p2p.peers[dst];
        wt_spin_lock(&p->lock);
        wc_peer_purge_locked(p);
        wt_spin_unlock(&p->lock);
    }
    wt_spin_lock(&wc_p2p.match_lock);
    if (wc_p2p.match)
        withdrawn = wc_match_posted_sweep(wc_p2p.match, wc_recv_abandoned, NULL);
    wt_spin_unlock(&wc_p2p.match_lock);
    *dropped_p = atomic_exchange_explicit(&wc_p2p.ndropped, 0, memory_order_relaxed);
    *withdrawn_p = withdrawn;
}

/* ---- setup ---------------------------------------------------------------------------------------- */

wu_status_t wc_pt2pt_init(void)
{
    wt_spin_init(&wc_p2p.match_lock);
    wu_status_t st = wc_match_create(&wc_p2p.match);
    if (st != WU_OK)
        return st;
    wc_p2p.peers = aligned_alloc(WU_CACHELINE, sizeof(wc_peer_t) * (size_t)wc_world.size);
    if (!wc_p2p.peers) {
        wc_match_destroy(wc_p2p.match);
        wu_log_error("no memory for %d send queues", wc_world.size);
        return WU_ERR_NO_MEMORY;
    }
    for (int i = 0; i < wc_world.size; i++) {
        wt_spin_init(&wc_p2p.peers[i].lock);
        wu_list_init(&wc_p2p.peers[i].pending);
        atomic_init(&wc_p2p.peers[i].queued, false);
        wc_p2p.peers[i].leave_gen = wc_leave_gen_now();
    }
    atomic_store(&wc_p2p.npending, 0);
    atomic_store(&wc_p2p.ndropped, 0);
    return WU_OK;
}

void wc_pt2pt_enable_prefetch(void)
{
    wx_shm_set_prefetch(wc_pt2pt_prefetch);
}

static void wc_message_drop(wc_match_entry_t *e, void *arg)
{
    (void)arg;
    wc_message_put_locked(WU_CONTAINER_OF(e, wc_message_t, match));
}

void wc_pt2pt_finalize(void)
{
    if (wc_p2p.match) {
        /* messages nobody received (an erroneous program, or one that sent to a rank that left) */
        size_t n = wc_match_unexpected_sweep(wc_p2p.match, wc_message_drop, NULL);
        if (n)
            wu_debug("%zu unexpected messages never received", n);
        wc_match_destroy(wc_p2p.match);
        wc_p2p.match = NULL;
    }
    for (int dst = 0; wc_p2p.peers && dst < wc_world.size; dst++) {
        /* control packets that never found ring space; others are embedded in requests */
        wu_list_t *e, *next;
        for (e = wc_p2p.peers[dst].pending.next; e != &wc_p2p.peers[dst].pending; e = next) {
            next = e->next;
            wc_sendop_t *op = WU_CONTAINER_OF(e, wc_sendop_t, link);
            if (op->pooled)
                free(op);
        }
    }
    free(wc_p2p.peers);
    wc_p2p.peers = NULL;
    while (wc_p2p.nbufs)
        free(wc_p2p.bufs[--wc_p2p.nbufs]);
    while (wc_p2p.msg_free) {
        wc_message_t *m = wc_p2p.msg_free;
        wc_p2p.msg_free = m->next_free;
        free(m);
    }
}

/* ---- typed operations ------------------------------------------------------------------------- */
/* Contiguity is decided here, once per call, from the layout's flag: a contiguous layout is the
 * byte path above with nothing more; any other gets a cursor that packs or unpacks its data in
 * place, packet by packet (wc_pack_fill, wc_recv_copy_in). */

wu_status_t wc_isend_dt(wc_request_t *req, const void *buf, uint64_t count, const wc_dtype_t *dt,
                        int dst, int tag, uint32_t ctx, wc_send_mode_t mode)
{
    if (WU_LIKELY(dt->contig))
        return wc_isend_start(req, (const char *)buf + dt->contig_off, count * dt->size, NULL, dst,
                              tag, ctx, mode);
    wc_dtype_cursor_init(&req->cur, dt, buf, count);
    return wc_isend_start(req, buf, count * dt->size, dt, dst, tag, ctx, mode);
}

wu_status_t wc_irecv_dt(wc_request_t *req, void *buf, uint64_t count, const wc_dtype_t *dt,
                        int src, int tag, uint32_t ctx)
{
    if (WU_LIKELY(dt->contig))
        return wc_irecv_start(req, (char *)buf + dt->contig_off, count * dt->size, NULL, src, tag,
                              ctx);
    wc_dtype_cursor_init(&req->cur, dt, buf, count);
    return wc_irecv_start(req, buf, count * dt->size, dt, src, tag, ctx);
}

wu_status_t wc_imrecv_dt(wc_request_t *req, void *buf, uint64_t count, const wc_dtype_t *dt,
                         wc_message_t *msg)
{
    if (WU_LIKELY(dt->contig)) {
        wc_recv_init(req, (char *)buf + dt->contig_off, count * dt->size, NULL);
    } else {
        wc_dtype_cursor_init(&req->cur, dt, buf, count);
        wc_recv_init(req, buf, count * dt->size, dt);
    }
    wc_recv_matched_msg(req, msg);
    return WU_OK;
}
