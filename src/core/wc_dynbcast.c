/* The dynamic broadcast: routing carried by the message, forwarding inside delivery.
 *
 * Packets (type WC_PKT_DYN, one of the flags below):
 *   WHOLE  route + the whole data in one packet (data of at most wc_limits.eager_max bytes)
 *   HEAD   route only; the data follows in FRAG packets of at most wc_limits.frag_size bytes
 *   FRAG   data at offset hdr.addr of the message hdr.sreq of the same sender
 * Header: tag, ctx the message's; reserved2 the root (world rank); len the data's length; sreq the
 * sender's id of the message (its wc_dyn_msg_t: it lives until its last packet has left, and a
 * later message's HEAD cannot overtake that packet on the same ring, so ids never clash); addr the
 * route's length (WHOLE, HEAD) or the fragment's offset (FRAG). The route is an int32 array of
 * world ranks padded to 8 bytes, ahead of the data in WHOLE.
 *
 * Tree: a sender holding the list L (m ranks) sends to L[0] with the sub-list L[1..h), h = (m+1)/2,
 * and goes on with L[h..m): a binomial tree over the list, with the first child taking the biggest
 * subtree. A receiver forwards its sub-list the same way, then delivers the message to its own
 * matching as an eager message from the root: at once for WHOLE, when the last FRAG is in for a
 * HEAD (each FRAG is forwarded as it arrives, so the tree is pipelined). A HEAD matches a posted
 * receive on arrival, and the FRAGs then go straight into its buffer; an unmatched one gathers in
 * a temporary buffer and is delivered as an eager message when complete. docs/dynbcast.md.
 */
#include "core/wc_dynbcast.h"
#include "core/wc_core.h"
#include "core/wc_pt2pt.h"
#include "core/wc_wait.h"
#include "util/wu_log.h"
#include "util/wu_tsan.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WC_DYN_WHOLE 0x1
#define WC_DYN_HEAD  0x2
#define WC_DYN_FRAG  0x4

#define WC_DYN_MAXCHILD 64   /* children of one rank: at most ceil(log2(m + 1)) */

/* One dynamic broadcast at this rank (the root's, or one being received and forwarded).
 * refs: one per packet not yet left, plus one held by the root's start or by the receive until
 * its last fragment; atomic because packets leave from whichever thread drains the send queue.
 * Every other field is written before the first packet is sent and read-only afterwards, except
 * arrived and next (delivery only). */
typedef struct wc_dyn_msg {
    _Atomic int   refs;
    wc_ep_t      *ep;
    char         *data;        /* the packed data */
    bool          own_data;
    size_t        len;
    int           root;
    int           tag;
    uint32_t      ctx;
    int           nroute;
    int32_t      *route;       /* the ranks below this one (malloc'd) */
    int           nchild;
    int           child_off[WC_DYN_MAXCHILD];   /* child i: route[child_off[i]], its sub-list */
    int           child_end[WC_DYN_MAXCHILD];   /*   route[child_off[i] + 1 .. child_end[i]) */
    wc_request_t *user;        /* completed with the last reference (root; receiver whose posted
                                  buffer is data) */
    /* receiving a HEAD + FRAG message */
    wc_request_t *rreq;        /* the posted receive it matched on arrival of its HEAD, or NULL */
    int           src;
    uint64_t      sid;         /* the sender's id */
    size_t        arrived;
    struct wc_dyn_msg *next;
} wc_dyn_msg_t;

/* One packet of a message to one child, carried by a detached core request. */
typedef struct wc_dyn_pkt {
    wc_request_t  req;
    wc_dyn_msg_t *msg;
    void         *stage;       /* malloc'd payload (route + data), or NULL */
} wc_dyn_pkt_t;

/* Messages whose FRAGs are still arriving: the endpoint's dyn_incoming (delivery only, one thread
 * at a time). */

static inline size_t wc_dyn_round8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static void wc_dyn_unref(wc_dyn_msg_t *m)
{
    if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1)
        return;
    wc_request_t *user = m->user;
    if (m->own_data)
        free(m->data);
    free(m->route);
    free(m);
    if (user)
        wc_request_done(user);
}

static void wc_dyn_pkt_done(wc_request_t *req)
{
    wc_dyn_pkt_t *p = WU_CONTAINER_OF(req, wc_dyn_pkt_t, req);
    WU_TSAN_ACQUIRE(p);
    wc_dyn_msg_t *m = p->msg;
    free(p->stage);
    free(p);
    wc_dyn_unref(m);
}

static void wc_dyn_send(wc_dyn_msg_t *m, int dst, const wc_hdr_t *hdr, const void *payload,
                        size_t len, void *stage)
{
    wc_dyn_pkt_t *p = malloc(sizeof(*p));
    if (!p)
        wu_log_fatal("out of memory sending a dynamic broadcast packet to rank %d", dst);
    p->msg = m;
    p->stage = stage;
    wc_request_t *r = &p->req;
    r->kind = WC_REQ_SEND;
    r->sync = 0;
    r->error = WU_OK;
    r->peer = dst;
    r->dt = NULL;
    r->on_complete = wc_dyn_pkt_done;
    r->op = (wc_sendop_t){ .hdr = *hdr, .payload = payload, .len = len, .req = r };
    atomic_store_explicit(&r->state, WC_REQ_DETACHED, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
    WU_TSAN_RELEASE(p);
    wc_pt2pt_send_op(m->ep, dst, r);
}

/* Split m's route into children (see the file comment). */
static void wc_dyn_split(wc_dyn_msg_t *m)
{
    int n = 0;
    for (int lo = 0; lo < m->nroute && n < WC_DYN_MAXCHILD;) {
        int h = (m->nroute - lo + 1) / 2;
        m->child_off[n] = lo;
        m->child_end[n] = lo + h;
        n++;
        lo += h;
    }
    m->nchild = n;
}

static inline wc_hdr_t wc_dyn_hdr(const wc_dyn_msg_t *m, uint8_t flags, uint64_t addr)
{
    return (wc_hdr_t){ .type = WC_PKT_DYN, .flags = flags, .tag = m->tag, .ctx = m->ctx,
                       .reserved2 = (uint32_t)m->root, .len = m->len,
                       .sreq = (uint64_t)(uintptr_t)m, .addr = addr };
}

/* Send every child its WHOLE (with data) or HEAD packet. */
static void wc_dyn_send_heads(wc_dyn_msg_t *m, bool whole)
{
    for (int i = 0; i < m->nchild; i++) {
        int dst = m->route[m->child_off[i]];
        int nsub = m->child_end[i] - m->child_off[i] - 1;
        wc_hdr_t hdr = wc_dyn_hdr(m, whole ? WC_DYN_WHOLE : WC_DYN_HEAD, (uint64_t)nsub);
        if (nsub == 0) {   /* a leaf: no route, the data straight from m */
            wc_dyn_send(m, dst, &hdr, whole ? m->data : NULL, whole ? m->len : 0, NULL);
            continue;
        }
        size_t rb = wc_dyn_round8((size_t)nsub * sizeof(int32_t));
        size_t plen = rb + (whole ? m->len : 0);
        char *stage = malloc(plen);
        if (!stage)
            wu_log_fatal("out of memory forwarding a dynamic broadcast to rank %d", dst);
        memcpy(stage, &m->route[m->child_off[i] + 1], (size_t)nsub * sizeof(int32_t));
        if (whole && m->len)
            memcpy(stage + rb, m->data, m->len);
        wc_dyn_send(m, dst, &hdr, stage, plen, stage);
    }
}

static void wc_dyn_send_frag(wc_dyn_msg_t *m, size_t off, size_t n)
{
    for (int i = 0; i < m->nchild; i++) {
        wc_hdr_t hdr = wc_dyn_hdr(m, WC_DYN_FRAG, off);
        wc_dyn_send(m, m->route[m->child_off[i]], &hdr, m->data + off, n, NULL);
    }
}

/* Hand the message to this rank's matching as an eager message from the root. */
static void wc_dyn_local(wc_ep_t *ep, int root, int tag, uint32_t ctx, const void *data,
                         size_t len)
{
    wc_hdr_t h = { .type = WC_PKT_EAGER, .tag = tag, .ctx = ctx, .len = len };
    wc_ep_deliver(root, &h, data, len, ep);
}

static wc_dyn_msg_t *wc_dyn_msg_new(wc_ep_t *ep, int root, int tag, uint32_t ctx, size_t len,
                                    const int32_t *route, int nroute)
{
    wc_dyn_msg_t *m = calloc(1, sizeof(*m));
    if (!m || (nroute && !(m->route = malloc((size_t)nroute * sizeof(int32_t)))))
        wu_log_fatal("out of memory for a dynamic broadcast of %d ranks", nroute);
    if (nroute)
        memcpy(m->route, route, (size_t)nroute * sizeof(int32_t));
    m->ep = ep;
    m->nroute = nroute;
    m->root = root;
    m->tag = tag;
    m->ctx = ctx;
    m->len = len;
    atomic_init(&m->refs, 1);
    wc_dyn_split(m);
    return m;
}

/* Sent as WHOLE when the data and the longest route fit in one packet. */
static bool wc_dyn_whole(const wc_ep_t *ep, size_t len, int nroute)
{
    return len <= ep->limits.eager_max &&
           wc_dyn_round8((size_t)nroute * sizeof(int32_t)) + len <= ep->limits.max_payload;
}

wu_status_t wc_idynbcast(wc_ep_t *ep, wc_request_t *req, const void *buf, uint64_t count,
                         const wc_dtype_t *dt, const int *dsts, int n, int tag, uint32_t ctx)
{
    size_t len = (size_t)(count * dt->size);
    req->kind = WC_REQ_SEND;
    req->error = WU_OK;
    req->sync = 0;
    req->dt = NULL;
    req->buf = (void *)buf;
    req->len = len;
    wc_request_reset(req);
    if (n <= 0) {
        wc_request_done(req);
        return WU_OK;
    }
    if ((size_t)n * sizeof(int32_t) + 8 > ep->limits.max_payload)
        return WU_ERR_INVALID;   /* the route must fit in one packet */
    int32_t small[64], *route = small;
    if (n > 64 && !(route = malloc((size_t)n * sizeof(int32_t))))
        return WU_ERR_NO_MEMORY;
    for (int i = 0; i < n; i++)
        route[i] = dsts[i];
    wc_dyn_msg_t *m = wc_dyn_msg_new(ep, ep->rank, tag, ctx, len, route, n);
    if (route != small)
        free(route);
    if (dt->contig) {
        m->data = (char *)buf + dt->contig_off;
    } else if (len) {
        if (!(m->data = malloc(len))) {
            free(m->route);
            free(m);
            return WU_ERR_NO_MEMORY;
        }
        m->own_data = true;
        wc_dtype_cursor_t cur;
        wc_dtype_cursor_init(&cur, dt, buf, count);
        wc_dtype_pack(&cur, m->data, len);
    }
    m->user = req;
    WU_TSAN_RELEASE(req);
    if (wc_dyn_whole(ep, len, n)) {
        wc_dyn_send_heads(m, true);
    } else {
        wc_dyn_send_heads(m, false);
        size_t fs = ep->limits.frag_size;
        for (size_t off = 0; off < len; off += fs)
            wc_dyn_send_frag(m, off, len - off < fs ? len - off : fs);
    }
    wc_dyn_unref(m);
    return WU_OK;
}

/* Copy n bytes at offset off of a matched message into its receive (packed offset; what does not
 * fit a truncating receive is dropped). */
static void wc_dyn_copy_in(wc_request_t *rreq, size_t off, const void *data, size_t n)
{
    if (off >= rreq->st_bytes)
        return;
    if (n > rreq->st_bytes - off)
        n = rreq->st_bytes - off;
    if (!rreq->dt) {
        memcpy((char *)rreq->buf + off, data, n);
        return;
    }
    wc_dtype_cursor_seek(&rreq->cur, off);
    wc_dtype_unpack(&rreq->cur, data, n);
}

static void wc_dyn_recv_frag(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload,
                             size_t len)
{
    wc_dyn_msg_t **pp = (wc_dyn_msg_t **)&ep->dyn_incoming, *m;
    while ((m = *pp) && !(m->src == src && m->sid == hdr->sreq))
        pp = &m->next;
    if (!m)
        wc_proto_error(ep, src, hdr, "DYN fragment for no message of that sender (field sreq)");
    size_t off = (size_t)hdr->addr;
    if (off > m->len || len > m->len - off)
        wc_proto_error(ep, src, hdr, "DYN fragment of %zu bytes at offset %zu (field addr) past "
                       "its message of %zu bytes", len, off, m->len);
    if (m->data)
        memcpy(m->data + off, payload, len);
    if (m->rreq && (!m->data || m->data != m->rreq->buf))
        wc_dyn_copy_in(m->rreq, off, payload, len);
    m->arrived += len;
    wc_dyn_send_frag(m, off, len);
    if (m->arrived < m->len)
        return;
    *pp = m->next;
    if (!m->rreq && atomic_load_explicit(&m->refs, memory_order_acquire) == 1) {
        /* No forwarded packet reads the temporary any more: it becomes the message's storage. */
        wc_hdr_t h = { .type = WC_PKT_EAGER, .tag = m->tag, .ctx = m->ctx, .len = m->len };
        wc_pt2pt_deliver_owned(ep, m->root, &h, m->data);
        m->own_data = false;
    } else if (!m->rreq) {
        wc_dyn_local(ep, m->root, m->tag, m->ctx, m->data, m->len);
    } else if (m->user != m->rreq) {
        wc_request_done(m->rreq);
    }
    wc_dyn_unref(m);   /* m->user == m->rreq: completes once the forwarded packets have left */
}

/* A WHOLE or HEAD packet: its route (nsub ranks, payload's first rb bytes) and root name ranks of
 * the job other than this one, and the payload is the route plus, for WHOLE, the data. */
static void wc_dyn_check(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload,
                         size_t len)
{
    uint64_t nsub = hdr->addr, rb = wc_dyn_round8((size_t)(nsub & 0xffffffffu) * sizeof(int32_t));
    if (nsub >= (uint64_t)ep->size || rb > len)
        wc_proto_error(ep, src, hdr, "DYN route of %llu ranks (field addr) in a job of %d, "
                       "payload %zu bytes", (unsigned long long)nsub, ep->size, len);
    if (hdr->reserved2 >= (uint32_t)ep->size || hdr->reserved2 == (uint32_t)ep->rank)
        wc_proto_error(ep, src, hdr, "DYN root %u (field reserved2) is not another rank of a job "
                       "of %d", hdr->reserved2, ep->size);
    if ((hdr->flags & WC_DYN_WHOLE) ? hdr->len != len - rb : len != rb)
        wc_proto_error(ep, src, hdr, "DYN %s of %llu data bytes (field len) with a payload of %zu "
                       "bytes and a route of %llu", (hdr->flags & WC_DYN_WHOLE) ? "WHOLE" : "HEAD",
                       (unsigned long long)hdr->len, len, (unsigned long long)rb);
    const int32_t *route = payload;
    for (uint64_t i = 0; i < nsub; i++)
        if (route[i] < 0 || route[i] >= ep->size || route[i] == ep->rank)
            wc_proto_error(ep, src, hdr, "DYN route entry %llu is rank %d, not another rank of a "
                           "job of %d", (unsigned long long)i, (int)route[i], ep->size);
}

void wc_dyn_deliver(wc_ep_t *ep, int src, const wc_hdr_t *hdrp, const void *payload, size_t len)
{
    const wc_hdr_t *hdr = hdrp;
    uint8_t kind = hdr->flags & (WC_DYN_WHOLE | WC_DYN_HEAD | WC_DYN_FRAG);
    if (kind != WC_DYN_WHOLE && kind != WC_DYN_HEAD && kind != WC_DYN_FRAG)
        wc_proto_error(ep, src, hdr, "DYN flags 0x%x are not one of WHOLE, HEAD, FRAG", hdr->flags);
    if (hdr->flags & WC_DYN_FRAG) {
        wc_dyn_recv_frag(ep, src, hdr, payload, len);
        return;
    }
    wc_dyn_check(ep, src, hdr, payload, len);
    int nsub = (int)hdr->addr;
    int root = (int)hdr->reserved2;
    size_t rb = wc_dyn_round8((size_t)nsub * sizeof(int32_t));
    if (hdr->flags & WC_DYN_WHOLE) {
        const char *data = (const char *)payload + rb;
        if (nsub) {
            /* The children's packets may wait in a queue: they take the data from m's copy. */
            wc_dyn_msg_t *m = wc_dyn_msg_new(ep, root, hdr->tag, hdr->ctx, hdr->len, payload, nsub);
            if (hdr->len) {
                if (!(m->data = malloc(hdr->len)))
                    wu_log_fatal("out of memory forwarding a dynamic broadcast");
                m->own_data = true;
                memcpy(m->data, data, hdr->len);
            }
            wc_dyn_send_heads(m, true);
            wc_dyn_unref(m);
        }
        wc_dyn_local(ep, root, hdr->tag, hdr->ctx, data, (size_t)hdr->len);
        return;
    }
    /* HEAD: matched now if a receive is posted (as an RTS would be). The FRAGs are gathered where
     * the forwarding can take them from: the posted buffer if it is contiguous and large enough
     * (the receive then completes when the last forwarded packet has left, since they read it),
     * else a temporary; a leaf with a posted receive keeps nothing and copies straight into it. */
    wc_dyn_msg_t *m = wc_dyn_msg_new(ep, root, hdr->tag, hdr->ctx, hdr->len, payload, nsub);
    wc_request_t *rreq = wc_pt2pt_take_posted(ep, root, hdr->tag, hdr->ctx);
    if (rreq) {
        size_t n = hdr->len;
        rreq->st_source = root;
        rreq->st_tag = hdr->tag;
        rreq->msg_len = hdr->len;
        if (n > rreq->len) {
            n = rreq->len;
            rreq->error = WU_ERR_TRUNCATE;
        }
        rreq->st_bytes = n;
        m->rreq = rreq;
    }
    if (rreq && !rreq->dt && rreq->len >= hdr->len) {
        m->data = rreq->buf;
        m->user = rreq;
    } else if (!rreq || m->nchild) {
        if (!(m->data = malloc(hdr->len ? hdr->len : 1))) {
            char msg[160];
            snprintf(msg, sizeof(msg), "rank %d: out of memory receiving a dynamic broadcast of "
                     "%llu bytes from rank %d", ep->rank, (unsigned long long)hdr->len, src);
            wc_fatal(WU_ERR_NO_MEMORY, msg);
        }
        m->own_data = true;
    }
    m->src = src;
    m->sid = hdr->sreq;
    m->next = ep->dyn_incoming;
    ep->dyn_incoming = m;
    wc_dyn_send_heads(m, false);
}
