/* Point-to-point protocols over packets: eager, synchronous eager, rendezvous by single copy
 * (process_vm_readv) or by pipelined fragments, and the self path. See wc_proto.h for the packets
 * and docs/design.md for the whole data flow.
 *
 * Concurrency contract: one thread at a time (see wc_core.h); the state below is owned by it.
 */
#include "core/wc_pt2pt.h"
#include "progress/wp_engine.h"
#include "transport/shm/wx_shm.h"
#include "util/wu_log.h"

#include <sched.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

/* An unexpected message: the eager payload copied out of the ring, or a rendezvous offer. */
#define WC_MSG_INLINE 192
struct wc_message {
    wc_match_entry_t match;
    wc_hdr_t         hdr;
    int              src;
    void            *data;        /* eager payload (inline_data or malloc'd) */
    struct wc_message *next_free;
    char             inline_data[WC_MSG_INLINE];
};

typedef struct wc_pt2pt {
    wc_match_t   *match;
    wu_list_t    *pending;        /* per destination: packets waiting for ring space, in order */
    int           npending;       /* destinations with a non-empty pending list */
    wc_message_t *msg_free;       /* free list of unexpected-message descriptors */
    wc_sendop_t  *ctrl_free;      /* free list of queued control packets (as wc_sendop_t) */
} wc_pt2pt_t;

static wc_pt2pt_t wc_p2p;

/* ---- pools ------------------------------------------------------------------------------ */

static wc_message_t *wc_message_get(size_t len)
{
    wc_message_t *m = wc_p2p.msg_free;
    if (m)
        wc_p2p.msg_free = m->next_free;
    else if (!(m = malloc(sizeof(*m))))
        return NULL;
    if (len <= WC_MSG_INLINE) {
        m->data = m->inline_data;
    } else if (!(m->data = malloc(len))) {
        m->next_free = wc_p2p.msg_free;
        wc_p2p.msg_free = m;
        return NULL;
    }
    return m;
}

static void wc_message_put(wc_message_t *m)
{
    if (m->data != m->inline_data)
        free(m->data);
    m->next_free = wc_p2p.msg_free;
    wc_p2p.msg_free = m;
}

static wc_sendop_t *wc_ctrl_get(void)
{
    wc_sendop_t *op = wc_p2p.ctrl_free;
    if (op) {
        wc_p2p.ctrl_free = (wc_sendop_t *)op->payload;
    } else if (!(op = malloc(sizeof(*op)))) {
        wu_log_fatal("out of memory queueing a control packet");
    }
    op->pooled = true;
    op->req = NULL;
    op->payload = NULL;
    op->len = 0;
    return op;
}

static void wc_ctrl_put(wc_sendop_t *op)
{
    op->payload = (const void *)wc_p2p.ctrl_free;
    wc_p2p.ctrl_free = op;
}

/* ---- completion ------------------------------------------------------------------------- */

static inline void wc_request_done(wc_request_t *req)
{
    atomic_store_explicit(&req->complete, 1, memory_order_release);
    if (req->on_complete)
        req->on_complete(req);
}

/* ---- sending packets -------------------------------------------------------------------- */

static void wc_packet_sent(wc_sendop_t *op);

static inline void wc_queue(int dst, wc_sendop_t *op)
{
    if (wu_list_empty(&wc_p2p.pending[dst]))
        wc_p2p.npending++;
    wu_list_push_back(&wc_p2p.pending[dst], &op->link);
}

/* Send op to dst now if its queue is empty and the ring has room, else queue it behind the
 * others so packets leave in order. Never called with dst == own rank. */
static inline void wc_packet_out(int dst, wc_sendop_t *op)
{
    if (WU_LIKELY(wu_list_empty(&wc_p2p.pending[dst])) &&
        WU_LIKELY(wx_shm_send(dst, &op->hdr, op->payload, op->len) == WU_OK)) {
        wc_packet_sent(op);
        return;
    }
    wc_queue(dst, op);
}

static void wc_send_ctrl(int dst, wc_pkt_type_t type, uint64_t sreq, uint64_t addr)
{
    wc_hdr_t hdr = { .type = (uint8_t)type, .sreq = sreq, .addr = addr };
    if (dst == wc_world.rank) {
        wc_pt2pt_deliver(dst, &hdr, NULL, 0, NULL);
        return;
    }
    if (wu_list_empty(&wc_p2p.pending[dst]) && wx_shm_send(dst, &hdr, NULL, 0) == WU_OK)
        return;
    wc_sendop_t *op = wc_ctrl_get();
    op->hdr = hdr;
    wc_queue(dst, op);
}

/* Set up the next fragment of a pipelined rendezvous send in its request's sendop. */
static inline void wc_frag_prepare(wc_request_t *req)
{
    size_t n = req->len - req->frag_off;
    if (n > wc_world.frag_size)
        n = wc_world.frag_size;
    req->op.hdr = (wc_hdr_t){ .type = WC_PKT_FRAG, .sreq = req->frag_off, .addr = req->frag_rreq,
                              .len = req->len };
    req->op.payload = (const char *)req->buf + req->frag_off;
    req->op.len = n;
}

/* A packet left for the ring: finish what it carried. */
static void wc_packet_sent(wc_sendop_t *op)
{
    if (op->pooled) {
        wc_ctrl_put(op);
        return;
    }
    wc_request_t *req = op->req;
    switch (op->hdr.type) {
    case WC_PKT_EAGER:
        if (!req->sync)
            wc_request_done(req);
        break;
    case WC_PKT_FRAG:
        req->frag_off += op->len;
        if (req->frag_off >= req->len)
            wc_request_done(req);
        break;
    default: /* RTS: the FIN or the fragments finish it */
        break;
    }
}

/* Push a pipelined send's fragments while the ring takes them. */
static void wc_frag_push(wc_request_t *req)
{
    int dst = req->peer;
    while (req->frag_off < req->len) {
        wc_frag_prepare(req);
        if (!wu_list_empty(&wc_p2p.pending[dst]) ||
            wx_shm_send(dst, &req->op.hdr, req->op.payload, req->op.len) != WU_OK) {
            wc_queue(dst, &req->op);
            return;
        }
        req->frag_off += req->op.len;
    }
    wc_request_done(req);
}

/* Drain the pending queues, in order per destination. */
static int wc_pending_drain(void)
{
    int did = 0;
    for (int dst = 0; dst < wc_world.size && wc_p2p.npending > 0; dst++) {
        wu_list_t *q = &wc_p2p.pending[dst];
        wu_list_t *e;
        if (wu_list_empty(q))
            continue;
        while ((e = wu_list_front(q)) != NULL) {
            wc_sendop_t *op = WU_CONTAINER_OF(e, wc_sendop_t, link);
            if (wx_shm_send(dst, &op->hdr, op->payload, op->len) != WU_OK)
                break;
            wu_list_del(e);
            did++;
            if (!op->pooled && op->hdr.type == WC_PKT_FRAG) {
                wc_request_t *req = op->req;
                req->frag_off += op->len;
                if (req->frag_off < req->len) {
                    wc_frag_prepare(req);
                    wu_list_push_front(q, &req->op.link);
                } else {
                    wc_request_done(req);
                }
                continue;
            }
            wc_packet_sent(op);
        }
        if (wu_list_empty(q))
            wc_p2p.npending--;
    }
    return did;
}

/* ---- receiving ---------------------------------------------------------------------------- */

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

static void wc_recv_eager(wc_request_t *rreq, int src, const wc_hdr_t *hdr, const void *payload)
{
    size_t n;
    wc_recv_status(rreq, src, hdr, &n);
    if (n)
        memcpy(rreq->buf, payload, n);
    if (hdr->flags & WC_PKT_FLAG_SYNC)
        wc_send_ctrl(src, WC_PKT_ACK, hdr->sreq, 0);
    wc_request_done(rreq);
}

static void wc_recv_rts(wc_request_t *rreq, int src, const wc_hdr_t *hdr)
{
    size_t n;
    wc_recv_status(rreq, src, hdr, &n);
    if (src == wc_world.rank) {
        memcpy(rreq->buf, (const void *)(uintptr_t)hdr->addr, n);
    } else if (wc_world.cma && hdr->len >= wc_world.cma_min) {
        wu_status_t st = wx_shm_get(src, rreq->buf, hdr->addr, n);
        if (st != WU_OK)
            rreq->error = st;
    } else {
        rreq->arrived = 0;
        wc_send_ctrl(src, WC_PKT_CTS, hdr->sreq, (uint64_t)(uintptr_t)rreq);
        return;
    }
    wc_send_ctrl(src, WC_PKT_FIN, hdr->sreq, 0);
    wc_request_done(rreq);
}

static void wc_recv_frag(const wc_hdr_t *hdr, const void *payload, size_t len)
{
    wc_request_t *rreq = (wc_request_t *)(uintptr_t)hdr->addr;
    size_t off = hdr->sreq;
    if (off < rreq->st_bytes) {
        size_t n = rreq->st_bytes - off;
        memcpy((char *)rreq->buf + off, payload, n < len ? n : len);
    }
    rreq->arrived += len;
    if (rreq->arrived >= rreq->msg_len)
        wc_request_done(rreq);
}

/* A receive matched an unexpected message: finish it as if the packet arrived now. */
static void wc_recv_matched_msg(wc_request_t *rreq, wc_message_t *msg)
{
    if (msg->hdr.type == WC_PKT_EAGER)
        wc_recv_eager(rreq, msg->src, &msg->hdr, msg->data);
    else
        wc_recv_rts(rreq, msg->src, &msg->hdr);
    wc_message_put(msg);
}

static void wc_unexpected_store(int src, const wc_hdr_t *hdr, const void *payload, size_t len)
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
}

void wc_pt2pt_deliver(int src, const void *hdrp, const void *payload, size_t len, void *arg)
{
    const wc_hdr_t *hdr = hdrp;
    wc_match_entry_t *e;

    switch (hdr->type) {
    case WC_PKT_EAGER:
    case WC_PKT_RTS:
        e = wc_match_posted_take(wc_p2p.match, hdr->ctx, src, hdr->tag);
        if (!e) {
            wc_unexpected_store(src, hdr, payload, len);
            return;
        }
        wc_request_t *rreq = WU_CONTAINER_OF(e, wc_request_t, match);
        if (hdr->type == WC_PKT_EAGER)
            wc_recv_eager(rreq, src, hdr, payload);
        else
            wc_recv_rts(rreq, src, hdr);
        return;
    case WC_PKT_FIN:
    case WC_PKT_ACK:
        wc_request_done((wc_request_t *)(uintptr_t)hdr->sreq);
        return;
    case WC_PKT_CTS: {
        wc_request_t *sreq = (wc_request_t *)(uintptr_t)hdr->sreq;
        sreq->frag_rreq = hdr->addr;
        sreq->frag_off = 0;
        wc_frag_push(sreq);
        return;
    }
    case WC_PKT_FRAG:
        wc_recv_frag(hdr, payload, len);
        return;
    default:
        wu_log_fatal("packet of unknown type %d from rank %d", hdr->type, src);
    }
}

/* Look-ahead over a batch of arriving packets: stage 0 prefetches the match bins, stage 1 the
 * receive requests that will match (their first two lines: completion state and match entry). */
static void wc_pt2pt_prefetch(int src, const void *hdrp, int stage)
{
    const wc_hdr_t *hdr = hdrp;
    if (hdr->type != WC_PKT_EAGER && hdr->type != WC_PKT_RTS)
        return;
    if (stage == 0) {
        wc_match_prefetch_bin(wc_p2p.match, hdr->ctx, src, hdr->tag);
        return;
    }
    wc_match_entry_t *e = wc_match_posted_peek_exact(wc_p2p.match, hdr->ctx, src, hdr->tag);
    if (e) {
        wc_request_t *r = WU_CONTAINER_OF(e, wc_request_t, match);
        __builtin_prefetch(r, 1);
        __builtin_prefetch(e, 1);
    }
}

/* ---- operations ----------------------------------------------------------------------------- */

wu_status_t wc_isend(wc_request_t *req, const void *buf, size_t len, int dst, int tag, uint32_t ctx,
                     wc_send_mode_t mode)
{
    req->kind = WC_REQ_SEND;
    req->buf = (void *)buf;
    req->len = len;
    req->peer = dst;
    req->error = WU_OK;
    req->sync = (mode == WC_SEND_SYNC);
    atomic_store_explicit(&req->complete, 0, memory_order_relaxed);

    wc_sendop_t *op = &req->op;
    op->req = req;
    op->pooled = false;
    if (len <= wc_world.eager_max) {
        op->hdr = (wc_hdr_t){ .type = WC_PKT_EAGER, .flags = req->sync ? WC_PKT_FLAG_SYNC : 0,
                              .tag = tag, .ctx = ctx, .len = len, .sreq = (uint64_t)(uintptr_t)req };
        op->payload = buf;
        op->len = len;
    } else {
        op->hdr = (wc_hdr_t){ .type = WC_PKT_RTS, .tag = tag, .ctx = ctx, .len = len,
                              .sreq = (uint64_t)(uintptr_t)req, .addr = (uint64_t)(uintptr_t)buf };
        op->payload = NULL;
        op->len = 0;
    }
    if (dst == wc_world.rank) {
        wc_pt2pt_deliver(dst, &op->hdr, op->payload, op->len, NULL);
        wc_packet_sent(op);
        return WU_OK;
    }
    wc_packet_out(dst, op);
    return WU_OK;
}

wu_status_t wc_irecv(wc_request_t *req, void *buf, size_t len, int src, int tag, uint32_t ctx)
{
    req->kind = WC_REQ_RECV;
    req->buf = buf;
    req->len = len;
    req->error = WU_OK;
    req->cancelled = 0;
    req->st_bytes = 0;
    atomic_store_explicit(&req->complete, 0, memory_order_relaxed);

    wc_match_entry_t *e = wc_match_unexpected_find(wc_p2p.match, ctx, src, tag, true);
    if (e) {
        wc_recv_matched_msg(req, WU_CONTAINER_OF(e, wc_message_t, match));
        return WU_OK;
    }
    req->match.ctx = ctx;
    req->match.src = src;
    req->match.tag = tag;
    return wc_match_post(wc_p2p.match, &req->match);
}

bool wc_cancel_recv(wc_request_t *req)
{
    if (req->kind != WC_REQ_RECV || wc_request_is_complete(req))
        return false;
    if (!wc_match_posted_remove(wc_p2p.match, &req->match))
        return false;
    req->cancelled = 1;
    wc_request_done(req);
    return true;
}

bool wc_iprobe(int src, int tag, uint32_t ctx, bool take, wc_probe_info_t *info_p,
               wc_message_t **msg_p)
{
    wc_match_entry_t *e = wc_match_unexpected_find(wc_p2p.match, ctx, src, tag, take);
    if (!e) {
        wc_progress();
        e = wc_match_unexpected_find(wc_p2p.match, ctx, src, tag, take);
        if (!e)
            return false;
    }
    wc_message_t *msg = WU_CONTAINER_OF(e, wc_message_t, match);
    info_p->source = msg->src;
    info_p->tag = msg->hdr.tag;
    info_p->len = msg->hdr.len;
    if (take)
        *msg_p = msg;
    return true;
}

wu_status_t wc_imrecv(wc_request_t *req, void *buf, size_t len, wc_message_t *msg)
{
    req->kind = WC_REQ_RECV;
    req->buf = buf;
    req->len = len;
    req->error = WU_OK;
    req->cancelled = 0;
    req->st_bytes = 0;
    atomic_store_explicit(&req->complete, 0, memory_order_relaxed);
    wc_recv_matched_msg(req, msg);
    return WU_OK;
}

/* ---- progress --------------------------------------------------------------------------------- */

wp_task_result_t wc_pt2pt_progress_task(void *arg)
{
    int did = 0;
    if (wc_world.size > 1)
        did = wx_shm_progress();
    if (WU_UNLIKELY(wc_p2p.npending > 0))
        did += wc_pending_drain();
    return did ? WP_TASK_DONE : WP_TASK_AGAIN;
}

int wc_progress(void)
{
    return wp_poll();
}

void wc_wait(wc_request_t *req)
{
    wc_idle_t idle;
    wc_idle_init(&idle);
    while (!wc_request_is_complete(req)) {
        if (wp_poll())
            wc_idle_init(&idle);
        else
            wc_idle_step(&idle);
    }
}

/* ---- setup ------------------------------------------------------------------------------------ */

wu_status_t wc_pt2pt_init(void)
{
    wu_status_t st = wc_match_create(&wc_p2p.match);
    if (st != WU_OK)
        return st;
    wc_p2p.pending = malloc(sizeof(wu_list_t) * (size_t)wc_world.size);
    if (!wc_p2p.pending) {
        wc_match_destroy(wc_p2p.match);
        wu_log_error("no memory for %d send queues", wc_world.size);
        return WU_ERR_NO_MEMORY;
    }
    for (int i = 0; i < wc_world.size; i++)
        wu_list_init(&wc_p2p.pending[i]);
    wc_p2p.npending = 0;
    return WU_OK;
}

void wc_pt2pt_enable_prefetch(void)
{
    wx_shm_set_prefetch(wc_pt2pt_prefetch);
}

void wc_pt2pt_finalize(void)
{
    if (wc_p2p.match) {
        size_t n = wc_match_unexpected_count(wc_p2p.match);
        if (n)
            wu_debug("%zu unexpected messages never received", n);
        wc_match_destroy(wc_p2p.match);
        wc_p2p.match = NULL;
    }
    free(wc_p2p.pending);
    wc_p2p.pending = NULL;
    while (wc_p2p.ctrl_free) {
        wc_sendop_t *op = wc_p2p.ctrl_free;
        wc_p2p.ctrl_free = (wc_sendop_t *)op->payload;
        free(op);
    }
    while (wc_p2p.msg_free) {
        wc_message_t *m = wc_p2p.msg_free;
        wc_p2p.msg_free = m->next_free;
        free(m);
    }
}
