/* The libfabric transport: one FI_EP_RDM endpoint per process, FI_MSG packets.
 *
 * A packet on the wire is a 16-byte prefix (wx_ofi_prefix_t: the job key, the sender's rank, flags)
 * followed by the core's 40-byte header and the payload, sent as one message. The sender's rank
 * travels in the prefix, so the endpoint needs no FI_SOURCE; the job key (64 random bits made by
 * rank 0 and published through the bootstrap) lets the receiver drop, and count, any packet that
 * does not come from this job: it is never delivered.
 *
 * Receiving: WEFT_OFI_RX_BUFS buffers of one packet each are posted; progress reads the receive
 * CQ, delivers each packet through the callback (the core copies what it keeps) and reposts its
 * buffer at once. Sending: a packet that fits the provider's inject size (at most
 * WX_OFI_INJECT_CAP) is built on the stack and fi_inject-ed; a larger one is copied into a bounce
 * buffer (WEFT_OFI_TX_BUFS of them), which returns to the pool when its send completes. With none
 * free, or when the provider answers -FI_EAGAIN, send returns WU_ERR_AGAIN and the core queues the
 * packet (and keeps order). Transmit and receive completions have separate CQs, so that a thread
 * that reaps send completions never finds a packet to deliver.
 *
 * Order: the endpoint is opened with FI_ORDER_SAS (send after send) in both directions and a
 * provider that cannot give it is not used. That orders how messages are matched to posted
 * buffers, not their completions (comp_order is FI_ORDER_NONE): tcp;ofi_rxm completes a message
 * above its own eager size (16 KiB) after smaller ones sent behind it. So each packet carries a
 * per-pair sequence number, and progress holds a packet that completes early (its buffer is not
 * reposted) until those before it are delivered. WX_CAP_ORDERED then holds.
 *
 * Addresses: every rank's endpoint name is inserted into the address vector at start-up (see
 * docs/ofi.md for why not lazily at 10,000 ranks).
 *
 * Concurrency contract (wx_transport.h's): the domain is opened FI_THREAD_SAFE, so the provider
 * serializes its own state; this file adds the bounce pool's spinlock (held for a pointer swap)
 * and nothing else. send to one destination: one thread at a time (the core's peer lock), which
 * is what makes the per-peer `sent` flag a plain store. progress: one thread at a time; it alone
 * reads the receive CQ and reposts receive buffers. The transmit CQ may be read by any thread.
 */
#include "transport/ofi/wx_ofi.h"
#include "transport/ofi/wx_ofi_rcache.h"
#include "thread/wt_thread.h"
#include "util/wu_config.h"
#include "util/wu_log.h"

#include "transport/ofi/wx_ofi_fabric.h"   /* libfabric, loaded on demand */

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

const bool wx_ofi_built = true;

#define WX_OFI_FI_VERSION FI_VERSION(1, 10)
#define WX_OFI_INJECT_CAP 256           /* largest packet built on the stack for fi_inject */
#define WX_OFI_NAME_MAX   256           /* largest endpoint name */
#define WX_OFI_CQ_BATCH   16
#define WX_OFI_FLUSH_NS   (10ull * 1000000000ull)   /* finalize waits this long for its sends */

/* The transport's prefix of every packet. */
typedef struct wx_ofi_prefix {
    uint64_t key;      /* the job key: anything else is dropped */
    uint32_t src;      /* the sender's rank */
    uint16_t flags;    /* WX_OFI_F_* */
    uint16_t seq;      /* per ordered pair: the receiver delivers in this order */
} wx_ofi_prefix_t;
#define WX_OFI_PREFIX sizeof(wx_ofi_prefix_t)
#define WX_OFI_HEAD   (WX_OFI_PREFIX + WX_HDR_SIZE)
#define WX_OFI_F_FLUSH  0x1u   /* the transport's own: sent at finalize, never delivered */
#define WX_OFI_F_CREDIT 0x2u   /* only returns credits: outside the sequence, never delivered */
#define WX_OFI_F_MASK   0xfu   /* the flags; the 12 bits above return credits to the receiver */
#define WX_OFI_CREDIT_SHIFT 4
#define WX_OFI_CREDIT_MAX   4095u

_Static_assert(sizeof(wx_ofi_prefix_t) == 16, "prefix is 16 bytes");

enum { WX_OFI_OP_BUF, WX_OFI_OP_READ };

/* A buffer the provider owns while an operation runs: the operation's context is its first field,
 * so a completion's op_context is the buffer. */
typedef struct wx_ofi_buf {
    struct fi_context2 ctx;
    int kind;          /* WX_OFI_OP_* (transmit CQ: a bounce buffer or a read) */
    struct wx_ofi_buf *next;
    char *data;
    size_t len;        /* a held packet's length */
    uint16_t seq;      /* a held packet's sequence number */
} wx_ofi_buf_t;

typedef struct wx_ofi {
    wx_tl_t tl;
    int rank, size;
    uint64_t key;
    wx_recv_fn_t cb;
    void *cb_arg;
    wx_bootstrap_t bs;             /* for the fence of finalize */

    struct fi_info *info;          /* the chosen offer (a copy) */
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *rxcq, *txcq;
    struct fid_ep *ep;
    fi_addr_t *addr;               /* [size], written at start-up */
    uint8_t *sent;                 /* [size]: something was sent to the peer (flushed at finalize) */
    uint16_t *tx_seq;              /* [size]: next sequence number to the peer (its sender only) */
    uint16_t *rx_seq;              /* [size]: next to deliver from the peer (progress only) */
    wx_ofi_buf_t **held;           /* [size]: progress only: early packets, by sequence number */
    /* Credits (flow control): a sender may have at most credit_max packets to one peer that the
     * peer has not yet delivered and reposted; credit_max * peers (+ the credit packets) fits in
     * the posted buffers when WEFT_OFI_RX_BUFS allows. */
    _Atomic int32_t *credits;      /* [size]: left to send to the peer (decremented by its sender
                                      only, raised by progress) */
    _Atomic uint32_t *owed;        /* [size]: delivered from the peer, not yet returned */
    uint8_t *credit_retry;         /* [size], progress only: a credit packet could not leave */
    int ncredit_retry;             /* progress only */
    _Atomic int credit_rescan;     /* a sender gave back piggy-backed credits: progress rescans */
    int32_t credit_max;
    uint32_t credit_thresh;        /* owed this many: return them by a credit packet */
    size_t inject_max;             /* whole packets up to this size are injected */
    size_t buf_bytes;              /* one packet: prefix, header, largest payload */

    char *rx_slab, *tx_slab;
    struct fid_mr *rx_mr, *tx_mr;  /* FI_MR_LOCAL only */
    void *rx_desc, *tx_desc;
    wx_ofi_buf_t *rx, *tx;
    int nrx, ntx;
    wx_ofi_buf_t *repost;          /* progress only: receive buffers the provider refused */

    /* Transmit operations posted with a completion (bounce-buffer sends, reads) not yet reaped:
     * raised before the post by its poster, lowered by the reaper. Progress reads the transmit CQ
     * only while it is above 0: with injected packets (no completion) nothing is to be reaped, and
     * every fi_cq_read runs the provider's progress engine (a poll or epoll_wait, and for
     * tcp;ofi_rxm a signal read) although reading the receive CQ has just run it for the whole
     * endpoint. A stale 0 seen by progress only delays reaping to its next call. */
    _Atomic int tx_out;
    wt_spinlock_t tx_lock;
    wx_ofi_buf_t *tx_free;         /* tx_lock */
    int tx_nfree;                  /* tx_lock */

    _Atomic uint64_t dropped;

    bool rma;                      /* FI_RMA granted: rendezvous by fi_read */
    bool rma_write;                /* FI_WRITE and FI_REMOTE_WRITE too: windows by fi_write */
    bool virt_addr;                /* FI_MR_VIRT_ADDR: remote addresses are virtual, else offsets */
    bool prov_key;                 /* FI_MR_PROV_KEY: the provider picks keys */
    _Atomic uint64_t next_key;     /* our keys otherwise */
    wx_rcache_t rcache;
} wx_ofi_t;

/* A read in flight: its completion is reaped by whichever thread reads the transmit CQ. A
 * blocking read (get) lives on its caller's stack and is told by `done`; a started one
 * (get_start) is allocated, and the reaper calls its `cb` and frees it. */
typedef struct wx_ofi_read {
    wx_ofi_buf_t op;               /* kind WX_OFI_OP_READ; first */
    _Atomic int done;              /* blocking: 1 completed; -errno failed */
    wx_get_done_fn_t cb;           /* started: called once at completion, then the read is freed */
    void *cb_arg;
    size_t len;
    int src;
    bool write;                    /* a window's fi_writemsg (win_write), not a read */
} wx_ofi_read_t;

static wx_ofi_t *wx_ofi_instance;   /* for wx_ofi_dropped; set at create, cleared at finalize */

uint64_t wx_ofi_dropped(void)
{
    wx_ofi_t *o = wx_ofi_instance;
    return o ? atomic_load_explicit(&o->dropped, memory_order_relaxed) : 0;
}

/* ---- the bounce pool ------------------------------------------------------------------------- */

static inline wx_ofi_buf_t *wx_ofi_tx_get(wx_ofi_t *o)
{
    wt_spin_lock(&o->tx_lock);
    wx_ofi_buf_t *b = o->tx_free;
    if (b) {
        o->tx_free = b->next;
        o->tx_nfree--;
    }
    wt_spin_unlock(&o->tx_lock);
    return b;
}

static inline void wx_ofi_tx_put(wx_ofi_t *o, wx_ofi_buf_t *b)
{
    wt_spin_lock(&o->tx_lock);
    b->next = o->tx_free;
    o->tx_free = b;
    o->tx_nfree++;
    wt_spin_unlock(&o->tx_lock);
}

/* ---- sending --------------------------------------------------------------------------------- */

/* Write the prefix (and the header); returns the credits it hands back to dst, which the caller
 * gives back to owed if the packet does not leave. */
static inline uint32_t wx_ofi_head(wx_ofi_t *o, int dst, char *pkt, uint16_t flags,
                                   const void *hdr)
{
    uint32_t give = 0;
    if (atomic_load_explicit(&o->owed[dst], memory_order_relaxed)) {
        give = atomic_exchange_explicit(&o->owed[dst], 0, memory_order_relaxed);
        if (give > WX_OFI_CREDIT_MAX) {
            atomic_fetch_add_explicit(&o->owed[dst], give - WX_OFI_CREDIT_MAX,
                                      memory_order_relaxed);
            give = WX_OFI_CREDIT_MAX;
        }
    }
    wx_ofi_prefix_t pre = { .key = o->key, .src = (uint32_t)o->rank,
                            .flags = (uint16_t)(flags | give << WX_OFI_CREDIT_SHIFT),
                            .seq = o->tx_seq[dst] };
    memcpy(pkt, &pre, sizeof(pre));
    if (hdr)
        memcpy(pkt + WX_OFI_PREFIX, hdr, WX_HDR_SIZE);
    return give;
}

static WU_NOINLINE wu_status_t wx_ofi_send_failed(wx_ofi_t *o, int dst, ssize_t r, const char *op)
{
    (void)o;
    wu_log_fatal("%s to rank %d failed: %s", op, dst, fi_strerror((int)-r));
}

/* The outcome of a post: r from fi_inject or fi_send. */
static inline wu_status_t wx_ofi_posted(wx_ofi_t *o, int dst, ssize_t r, const char *op,
                                        uint32_t give)
{
    if (WU_LIKELY(r == 0)) {
        o->sent[dst] = 1;
        o->tx_seq[dst]++;
        atomic_fetch_sub_explicit(&o->credits[dst], 1, memory_order_relaxed);
        return WU_OK;
    }
    if (give) {
        /* progress may have found nothing owed meanwhile, and dst, out of credits, may send
         * nothing that would make it look again */
        atomic_fetch_add_explicit(&o->owed[dst], give, memory_order_relaxed);
        atomic_store_explicit(&o->credit_rescan, 1, memory_order_release);
    }
    if (r == -FI_EAGAIN)
        return WU_ERR_AGAIN;
    return wx_ofi_send_failed(o, dst, r, op);
}

static wu_status_t wx_ofi_send(wx_tl_t *tl, int dst, const void *hdr, const void *payload,
                               size_t len)
{
    wx_ofi_t *o = tl->priv;
    size_t total = WX_OFI_HEAD + len;
    if (WU_UNLIKELY(atomic_load_explicit(&o->credits[dst], memory_order_relaxed) <= 0))
        return WU_ERR_AGAIN;
    if (total <= o->inject_max) {
        char pkt[WX_OFI_INJECT_CAP] WU_ALIGNED(8);
        uint32_t give = wx_ofi_head(o, dst, pkt, 0, hdr);
        if (len)
            memcpy(pkt + WX_OFI_HEAD, payload, len);
        return wx_ofi_posted(o, dst, fi_inject(o->ep, pkt, total, o->addr[dst]), "fi_inject",
                             give);
    }
    wx_ofi_buf_t *b = wx_ofi_tx_get(o);
    if (!b)
        return WU_ERR_AGAIN;
    uint32_t give = wx_ofi_head(o, dst, b->data, 0, hdr);
    memcpy(b->data + WX_OFI_HEAD, payload, len);
    atomic_fetch_add_explicit(&o->tx_out, 1, memory_order_relaxed);
    ssize_t r = fi_send(o->ep, b->data, total, o->tx_desc, o->addr[dst], &b->ctx);
    if (r) {
        atomic_fetch_sub_explicit(&o->tx_out, 1, memory_order_relaxed);
        wx_ofi_tx_put(o, b);
    }
    return wx_ofi_posted(o, dst, r, "fi_send", give);
}

static wu_status_t wx_ofi_send_fill(wx_tl_t *tl, int dst, const void *hdr, size_t len,
                                    wx_fill_fn_t fill, void *arg)
{
    wx_ofi_t *o = tl->priv;
    size_t total = WX_OFI_HEAD + len;
    if (WU_UNLIKELY(atomic_load_explicit(&o->credits[dst], memory_order_relaxed) <= 0))
        return WU_ERR_AGAIN;
    if (total <= o->inject_max) {
        /* the provider tells of no room only when asked to send: fill may then have run for
         * nothing (allowed: wx_transport.h) */
        char pkt[WX_OFI_INJECT_CAP] WU_ALIGNED(8);
        uint32_t give = wx_ofi_head(o, dst, pkt, 0, hdr);
        if (len)
            fill(arg, pkt + WX_OFI_HEAD, len);
        return wx_ofi_posted(o, dst, fi_inject(o->ep, pkt, total, o->addr[dst]), "fi_inject",
                             give);
    }
    wx_ofi_buf_t *b = wx_ofi_tx_get(o);
    if (!b)
        return WU_ERR_AGAIN;
    uint32_t give = wx_ofi_head(o, dst, b->data, 0, hdr);
    fill(arg, b->data + WX_OFI_HEAD, len);
    atomic_fetch_add_explicit(&o->tx_out, 1, memory_order_relaxed);
    ssize_t r = fi_send(o->ep, b->data, total, o->tx_desc, o->addr[dst], &b->ctx);
    if (r) {
        atomic_fetch_sub_explicit(&o->tx_out, 1, memory_order_relaxed);
        wx_ofi_tx_put(o, b);
    }
    return wx_ofi_posted(o, dst, r, "fi_send", give);
}

/* ---- completions ------------------------------------------------------------------------------- */

/* A read completed (err 0) or failed (a positive errno). */
static void wx_ofi_read_end(wx_ofi_read_t *rd, int err)
{
    if (!rd->cb) {
        atomic_store_explicit(&rd->done, err ? -err : 1, memory_order_release);
        return;
    }
    if (err)
        wu_log_error("ofi: %s of %zu bytes %s rank %d failed: %s", rd->write ? "write" : "read",
                     rd->len, rd->write ? "to" : "from", rd->src, fi_strerror(err));
    rd->cb(rd->cb_arg, err ? WU_ERR_IO : WU_OK);
    free(rd);
}

/* Reap send completions: their bounce buffers return to the pool, reads end. Any thread. */
static int wx_ofi_tx_poll(wx_ofi_t *o)
{
    struct fi_cq_entry e[WX_OFI_CQ_BATCH];
    ssize_t n = fi_cq_read(o->txcq, e, WX_OFI_CQ_BATCH);
    if (n > 0) {
        atomic_fetch_sub_explicit(&o->tx_out, (int)n, memory_order_relaxed);
        for (ssize_t i = 0; i < n; i++) {
            wx_ofi_buf_t *b = e[i].op_context;
            if (b->kind == WX_OFI_OP_READ)
                wx_ofi_read_end((wx_ofi_read_t *)b, 0);
            else
                wx_ofi_tx_put(o, b);
        }
        return (int)n;
    }
    if (n == -FI_EAVAIL) {
        struct fi_cq_err_entry err = { 0 };
        if (fi_cq_readerr(o->txcq, &err, 0) > 0) {
            atomic_fetch_sub_explicit(&o->tx_out, 1, memory_order_relaxed);
            wx_ofi_buf_t *b = err.op_context;
            if (b && b->kind == WX_OFI_OP_READ) {
                wx_ofi_read_end((wx_ofi_read_t *)b, err.err ? err.err : EIO);
                return 1;
            }
            char msg[128];
            wu_log_fatal("a send failed: %s (%s)", fi_strerror(err.err),
                         fi_cq_strerror(o->txcq, err.prov_errno, err.err_data, msg, sizeof(msg)));
        }
    }
    return 0;
}

static void wx_ofi_rx_post(wx_ofi_t *o, wx_ofi_buf_t *b)
{
    ssize_t r = fi_recv(o->ep, b->data, o->buf_bytes, o->rx_desc, FI_ADDR_UNSPEC, &b->ctx);
    if (r == 0)
        return;
    if (r != -FI_EAGAIN)
        wu_log_fatal("fi_recv: %s", fi_strerror((int)-r));
    b->next = o->repost;
    o->repost = b;
}

static void wx_ofi_rx_repost_pending(wx_ofi_t *o)
{
    wx_ofi_buf_t *b = o->repost;
    o->repost = NULL;
    while (b) {
        wx_ofi_buf_t *next = b->next;
        wx_ofi_rx_post(o, b);
        b = next;
    }
}

static WU_NOINLINE void wx_ofi_drop(wx_ofi_t *o, const char *why, size_t len)
{
    uint64_t n = atomic_fetch_add_explicit(&o->dropped, 1, memory_order_relaxed) + 1;
    if (n <= 4)
        wu_debug("ofi: dropped a packet of %zu bytes (%s)", len, why);
}

/* Deliver a checked packet (a FLUSH is only counted in sequence). */
static inline void wx_ofi_rx_deliver(wx_ofi_t *o, int src, const char *data, size_t len)
{
    wx_ofi_prefix_t pre;
    memcpy(&pre, data, sizeof(pre));
    if (WU_LIKELY(!(pre.flags & WX_OFI_F_FLUSH)))
        o->cb(src, data + WX_OFI_PREFIX, data + WX_OFI_HEAD, len - WX_OFI_HEAD, o->cb_arg);
}

/* A packet came before one sent ahead of it (the provider matched them in order but completed
 * them out of order): keep its buffer, sorted by distance from the one awaited. */
static WU_NOINLINE void wx_ofi_rx_hold(wx_ofi_t *o, int src, wx_ofi_buf_t *b, size_t len,
                                       uint16_t seq)
{
    uint16_t want = o->rx_seq[src];
    b->len = len;
    b->seq = seq;
    wx_ofi_buf_t **pp = &o->held[src];
    while (*pp && (uint16_t)((*pp)->seq - want) < (uint16_t)(seq - want))
        pp = &(*pp)->next;
    b->next = *pp;
    *pp = b;
}

/* Return what src is owed by a credit packet (outside the sequence) when enough is owed. Progress
 * only; concurrent with src's sender, which may piggy-back the same credits (owed is exchanged,
 * so each credit leaves once). */
static void wx_ofi_credit_return(wx_ofi_t *o, int src)
{
    uint32_t owed = atomic_load_explicit(&o->owed[src], memory_order_relaxed);
    if (owed < o->credit_thresh)
        return;
    owed = atomic_exchange_explicit(&o->owed[src], 0, memory_order_relaxed);
    if (owed > WX_OFI_CREDIT_MAX) {
        atomic_fetch_add_explicit(&o->owed[src], owed - WX_OFI_CREDIT_MAX, memory_order_relaxed);
        owed = WX_OFI_CREDIT_MAX;
    }
    wx_ofi_prefix_t pre = { .key = o->key, .src = (uint32_t)o->rank,
                            .flags = (uint16_t)(WX_OFI_F_CREDIT | owed << WX_OFI_CREDIT_SHIFT) };
    ssize_t r = fi_inject(o->ep, &pre, sizeof(pre), o->addr[src]);
    if (r == 0) {
        if (o->credit_retry[src]) {
            o->credit_retry[src] = 0;
            o->ncredit_retry--;
        }
        return;
    }
    if (r != -FI_EAGAIN)
        wx_ofi_send_failed(o, src, r, "fi_inject (credits)");
    atomic_fetch_add_explicit(&o->owed[src], owed, memory_order_relaxed);
    if (!o->credit_retry[src]) {   /* src may be waiting for them: progress retries */
        o->credit_retry[src] = 1;
        o->ncredit_retry++;
    }
}

static WU_NOINLINE void wx_ofi_credit_retry(wx_ofi_t *o)
{
    for (int src = 0; src < o->size && o->ncredit_retry; src++)
        if (o->credit_retry[src])
            wx_ofi_credit_return(o, src);
}

static WU_NOINLINE void wx_ofi_credit_rescan(wx_ofi_t *o)
{
    atomic_store_explicit(&o->credit_rescan, 0, memory_order_relaxed);
    for (int src = 0; src < o->size; src++)
        wx_ofi_credit_return(o, src);
}

/* A sequenced packet of src was handled and its buffer reposted: src may send one more. */
static inline void wx_ofi_credit_owe(wx_ofi_t *o, int src)
{
    atomic_fetch_add_explicit(&o->owed[src], 1, memory_order_relaxed);
    wx_ofi_credit_return(o, src);
}

/* Deliver the held packets that are now in sequence, reposting their buffers. */
static WU_NOINLINE void wx_ofi_rx_release(wx_ofi_t *o, int src)
{
    wx_ofi_buf_t *b;
    while ((b = o->held[src]) != NULL && b->seq == o->rx_seq[src]) {
        o->held[src] = b->next;
        o->rx_seq[src]++;
        wx_ofi_rx_deliver(o, src, b->data, b->len);
        wx_ofi_rx_post(o, b);
        wx_ofi_credit_owe(o, src);
    }
}

/* One arrived packet in buffer b: check it, then deliver it in its pair's order (deliver false,
 * at finalize: drop everything) and repost the buffer, or hold it until its turn. */
static inline void wx_ofi_rx_handle(wx_ofi_t *o, wx_ofi_buf_t *b, size_t len, bool deliver)
{
    wx_ofi_prefix_t pre;
    const char *data = b->data;
    if (WU_UNLIKELY(len < WX_OFI_PREFIX)) {
        wx_ofi_drop(o, "too short", len);
        goto repost;
    }
    memcpy(&pre, data, sizeof(pre));
    if (WU_UNLIKELY(pre.key != o->key)) {
        wx_ofi_drop(o, "wrong job key", len);
        goto repost;
    }
    if (WU_UNLIKELY(pre.src >= (uint32_t)o->size ||
                    (len < WX_OFI_HEAD && !(pre.flags & (WX_OFI_F_FLUSH | WX_OFI_F_CREDIT))))) {
        wx_ofi_drop(o, "malformed", len);
        goto repost;
    }
    if (WU_UNLIKELY(!deliver))
        goto repost;
    int src = (int)pre.src;
    if (pre.flags >> WX_OFI_CREDIT_SHIFT)   /* credits come back whatever the order */
        atomic_fetch_add_explicit(&o->credits[src], (int32_t)(pre.flags >> WX_OFI_CREDIT_SHIFT),
                                  memory_order_relaxed);
    if (WU_UNLIKELY(pre.flags & WX_OFI_F_CREDIT))
        goto repost;
    if (WU_UNLIKELY(pre.seq != o->rx_seq[src])) {
        wx_ofi_rx_hold(o, src, b, len, pre.seq);
        return;
    }
    o->rx_seq[src]++;
    wx_ofi_rx_deliver(o, src, data, len);
    wx_ofi_rx_post(o, b);
    if (WU_LIKELY(!(pre.flags & WX_OFI_F_FLUSH)))
        wx_ofi_credit_owe(o, src);
    if (WU_UNLIKELY(o->held[src] != NULL))
        wx_ofi_rx_release(o, src);
    return;
repost:
    wx_ofi_rx_post(o, b);
}

static int wx_ofi_rx_poll(wx_ofi_t *o, bool deliver)
{
    struct fi_cq_msg_entry e[WX_OFI_CQ_BATCH];
    ssize_t n = fi_cq_read(o->rxcq, e, WX_OFI_CQ_BATCH);
    if (n > 0) {
        for (ssize_t i = 0; i < n; i++)
            wx_ofi_rx_handle(o, e[i].op_context, e[i].len, deliver);
        return (int)n;
    }
    if (n == -FI_EAVAIL) {
        struct fi_cq_err_entry err = { 0 };
        if (fi_cq_readerr(o->rxcq, &err, 0) <= 0 || err.err == FI_ECANCELED)
            return 0;
        /* a packet longer than our buffers (FI_ETRUNC) cannot be ours: drop it */
        wx_ofi_drop(o, fi_strerror(err.err), err.len);
        if (err.op_context)
            wx_ofi_rx_post(o, err.op_context);
        return 1;
    }
    return 0;
}

static int wx_ofi_progress(wx_tl_t *tl)
{
    wx_ofi_t *o = tl->priv;
    int did = wx_ofi_rx_poll(o, true);
    if (atomic_load_explicit(&o->tx_out, memory_order_relaxed) > 0)
        did += wx_ofi_tx_poll(o);
    if (WU_UNLIKELY(o->repost != NULL))
        wx_ofi_rx_repost_pending(o);
    if (WU_UNLIKELY(o->ncredit_retry))
        wx_ofi_credit_retry(o);
    if (WU_UNLIKELY(atomic_load_explicit(&o->credit_rescan, memory_order_acquire)))
        wx_ofi_credit_rescan(o);
    return did;
}

/* ---- rendezvous by RMA read ------------------------------------------------------------------ */

static wu_status_t wx_ofi_mr_reg_fn(void *ctx, void *buf, size_t len, void **handle_p,
                                    uint64_t *key_p)
{
    wx_ofi_t *o = ctx;
    struct fid_mr *mr;
    uint64_t want = o->prov_key ? 0 : atomic_fetch_add(&o->next_key, 1);
    int r = fi_mr_reg(o->domain, buf, len, FI_REMOTE_READ, 0, want, 0, &mr, NULL);
    if (r) {
        wu_log_error("ofi: fi_mr_reg of %zu bytes: %s", len, fi_strerror(-r));
        return WU_ERR_IO;
    }
    *handle_p = mr;
    *key_p = fi_mr_key(mr);
    return WU_OK;
}

static void wx_ofi_mr_dereg_fn(void *ctx, void *handle)
{
    (void)ctx;
    fi_close(&((struct fid_mr *)handle)->fid);
}

/* The key names the cache entry's registration, which starts at the entry's page: the remote
 * address is the buffer's (virtual addresses) or its offset from that start. */
static wu_status_t wx_ofi_mem_reg(wx_tl_t *tl, const void *buf, size_t len, wx_rkey_t *rkey_p)
{
    wx_ofi_t *o = tl->priv;
    if (!tl->attr.get_min && !tl->attr.get_bulk_min)
        return WU_ERR_UNSUPPORTED;   /* rendezvous by read is off: the RTS says NOKEY, no fi_mr_reg */
    wx_rcache_entry_t *e;
    wu_status_t st = wx_rcache_acquire(&o->rcache, buf, len, &e);
    if (st != WU_OK)
        return st;
    uint64_t addr = (uint64_t)(uintptr_t)buf;
    *rkey_p = (wx_rkey_t){ .addr = o->virt_addr ? addr : addr - e->start, .key = e->key };
    return WU_OK;
}

static void wx_ofi_mem_dereg(wx_tl_t *tl, const wx_rkey_t *rkey)
{
    wx_ofi_t *o = tl->priv;
    wx_rcache_entry_t *e = wx_rcache_find_key(&o->rcache, rkey->key);
    if (e)
        wx_rcache_release(&o->rcache, e);
}

/* Blocking: posts fi_read and reaps the transmit CQ until it completes (the core's get is
 * synchronous; the peer's provider serves the read when the peer polls, which a rank waiting in
 * MPI does at least every timed poll). Reaping only the transmit CQ, it delivers nothing, so it may
 * run inside the receive callback. */
static wu_status_t wx_ofi_read(wx_ofi_t *o, int src, void *buf, size_t len, uint64_t raddr,
                               uint64_t key)
{
    wx_ofi_read_t rd = { .op = { .kind = WX_OFI_OP_READ } };
    atomic_init(&rd.done, 0);
    ssize_t r;
    atomic_fetch_add_explicit(&o->tx_out, 1, memory_order_relaxed);
    while ((r = fi_read(o->ep, buf, len, NULL, o->addr[src], raddr, key, &rd.op.ctx)) ==
           -FI_EAGAIN)
        wx_ofi_tx_poll(o);
    if (r) {
        atomic_fetch_sub_explicit(&o->tx_out, 1, memory_order_relaxed);
        wu_log_error("ofi: fi_read of %zu bytes from rank %d: %s", len, src, fi_strerror((int)-r));
        return WU_ERR_IO;
    }
    int done;
    while ((done = atomic_load_explicit(&rd.done, memory_order_acquire)) == 0)
        wx_ofi_tx_poll(o);
    if (done < 0) {
        wu_log_error("ofi: read of %zu bytes from rank %d failed: %s", len, src,
                     fi_strerror(-done));
        return WU_ERR_IO;
    }
    return WU_OK;
}

static wu_status_t wx_ofi_get(wx_tl_t *tl, int src, void *buf, const wx_rkey_t *rkey, uint64_t off,
                              size_t len)
{
    wx_ofi_t *o = tl->priv;
    size_t max = o->info->ep_attr->max_msg_size ? o->info->ep_attr->max_msg_size : len;
    for (size_t done = 0; done < len;) {
        size_t n = len - done < max ? len - done : max;
        wu_status_t st = wx_ofi_read(o, src, (char *)buf + done, n, rkey->addr + off + done,
                                     rkey->key);
        if (st != WU_OK)
            return st;
        done += n;
    }
    return WU_OK;
}

/* One fi_read, ended by the transmit CQ's reaper (wx_ofi_read_end). A read larger than the
 * provider's largest message, or one the provider has no room for, is not started. */
static wu_status_t wx_ofi_get_start(wx_tl_t *tl, int src, void *buf, const wx_rkey_t *rkey,
                                    uint64_t off, size_t len, wx_get_done_fn_t done, void *arg)
{
    wx_ofi_t *o = tl->priv;
    size_t max = o->info->ep_attr->max_msg_size;
    if (max && len > max)
        return WU_ERR_AGAIN;
    wx_ofi_read_t *rd = malloc(sizeof(*rd));
    if (!rd)
        return WU_ERR_AGAIN;
    *rd = (wx_ofi_read_t){ .op = { .kind = WX_OFI_OP_READ }, .cb = done, .cb_arg = arg,
                           .len = len, .src = src };
    atomic_fetch_add_explicit(&o->tx_out, 1, memory_order_relaxed);
    ssize_t r = fi_read(o->ep, buf, len, NULL, o->addr[src], rkey->addr + off, rkey->key,
                        &rd->op.ctx);
    if (r == 0)
        return WU_OK;
    atomic_fetch_sub_explicit(&o->tx_out, 1, memory_order_relaxed);
    free(rd);
    if (r == -FI_EAGAIN)
        return WU_ERR_AGAIN;
    wu_log_error("ofi: fi_read of %zu bytes from rank %d: %s", len, src, fi_strerror((int)-r));
    return WU_ERR_IO;
}

static wu_status_t wx_ofi_getv(wx_tl_t *tl, int src, struct iovec *iov, int niov,
                               const wx_rkey_t *rkey, uint64_t off, size_t len)
{
    for (int i = 0; i < niov && len; i++) {
        size_t n = iov[i].iov_len < len ? iov[i].iov_len : len;
        wu_status_t st = wx_ofi_get(tl, src, iov[i].iov_base, rkey, off, n);
        if (st != WU_OK)
            return st;
        off += n;
        len -= n;
    }
    return WU_OK;
}

/* ---- one-sided windows: registration and fi_write ------------------------------------------ */

/* A window's memory, registered for remote read and write for the window's life (not through the
 * registration cache: the window holds it). Needs no local descriptors (FI_MR_LOCAL off), as the
 * rendezvous's fi_read. */
static wu_status_t wx_ofi_win_reg(wx_tl_t *tl, void *buf, size_t len, wx_rkey_t *rkey_p,
                                  void **handle_p)
{
    wx_ofi_t *o = tl->priv;
    if (!o->rma_write || (o->info->domain_attr->mr_mode & FI_MR_LOCAL))
        return WU_ERR_UNSUPPORTED;
    struct fid_mr *mr;
    uint64_t want = o->prov_key ? 0 : atomic_fetch_add(&o->next_key, 1);
    int r = fi_mr_reg(o->domain, buf, len ? len : 1, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, want, 0,
                      &mr, NULL);
    if (r) {
        wu_log_error("ofi: fi_mr_reg of a window of %zu bytes: %s", len, fi_strerror(-r));
        return WU_ERR_IO;
    }
    *handle_p = mr;
    *rkey_p = (wx_rkey_t){ .addr = o->virt_addr ? (uint64_t)(uintptr_t)buf : 0,
                           .key = fi_mr_key(mr) };
    return WU_OK;
}

static void wx_ofi_win_dereg(wx_tl_t *tl, void *handle)
{
    (void)tl;
    if (handle)
        fi_close(&((struct fid_mr *)handle)->fid);
}

/* One fi_writemsg with FI_DELIVERY_COMPLETE: its completion (reaped with the reads by the
 * transmit CQ's reaper) says the data is in the target's memory. */
static wu_status_t wx_ofi_win_write(wx_tl_t *tl, int dst, const void *buf, const wx_rkey_t *rkey,
                                    uint64_t off, size_t len, wx_get_done_fn_t done, void *arg)
{
    wx_ofi_t *o = tl->priv;
    size_t max = o->info->ep_attr->max_msg_size;
    if (max && len > max)
        return WU_ERR_AGAIN;
    wx_ofi_read_t *rd = malloc(sizeof(*rd));
    if (!rd)
        return WU_ERR_AGAIN;
    *rd = (wx_ofi_read_t){ .op = { .kind = WX_OFI_OP_READ }, .cb = done, .cb_arg = arg,
                           .len = len, .src = dst, .write = true };
    struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
    struct fi_rma_iov riov = { .addr = rkey->addr + off, .len = len, .key = rkey->key };
    struct fi_msg_rma msg = { .msg_iov = &iov, .iov_count = 1, .addr = o->addr[dst],
                              .rma_iov = &riov, .rma_iov_count = 1, .context = &rd->op.ctx };
    atomic_fetch_add_explicit(&o->tx_out, 1, memory_order_relaxed);
    ssize_t r = fi_writemsg(o->ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE);
    if (r == 0)
        return WU_OK;
    atomic_fetch_sub_explicit(&o->tx_out, 1, memory_order_relaxed);
    free(rd);
    if (r == -FI_EAGAIN)
        return WU_ERR_AGAIN;
    wu_log_error("ofi: fi_writemsg of %zu bytes to rank %d: %s", len, dst, fi_strerror((int)-r));
    return WU_ERR_IO;
}

/* ---- choosing a provider ---------------------------------------------------------------------- */

static int wx_ofi_rank(const struct fi_info *fi)
{
    static const char *const hw[] = { "verbs", "efa", "cxi", "psm3", "opx", "psm2" };
    const char *p = fi->fabric_attr->prov_name;
    for (size_t i = 0; i < sizeof(hw) / sizeof(hw[0]); i++)
        if (!strncmp(p, hw[i], strlen(hw[i])))
            return 0;
    if (!strcmp(p, "tcp;ofi_rxm"))
        return 1;
    if (!strcmp(p, "tcp"))
        return 2;
    if (!strcmp(p, "shm"))
        return 4;
    return 3;
}

/* rma: 0 messages only; 1 and fi_read (rendezvous); 2 and fi_write (windows) */
static struct fi_info *wx_ofi_hints(int rma)
{
    struct fi_info *h = fi_allocinfo();
    if (!h)
        return NULL;
    h->ep_attr->type = FI_EP_RDM;
    h->caps = FI_MSG | (rma ? FI_RMA | FI_READ | FI_REMOTE_READ : 0) |
              (rma > 1 ? FI_WRITE | FI_REMOTE_WRITE : 0);
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
    h->domain_attr->threading = FI_THREAD_SAFE;
    h->tx_attr->msg_order = FI_ORDER_SAS;
    h->rx_attr->msg_order = FI_ORDER_SAS;
    return h;
}

/* libfabric's offers: with RMA when some provider has it, else message-only. */
static int wx_ofi_getinfo(struct fi_info **list_p)
{
    if (wx_ofi_fabric_load() != WU_OK)
        return -FI_ENOSYS;
    int r = -FI_ENODATA;
    for (int rma = 2; rma >= 0 && r; rma--) {
        struct fi_info *h = wx_ofi_hints(rma);
        if (!h)
            return -FI_ENOMEM;
        r = fi_getinfo(WX_OFI_FI_VERSION, NULL, NULL, 0, h, list_p);
        fi_freeinfo(h);
    }
    return r;
}

static struct fi_info *wx_ofi_choose(struct fi_info *list)
{
    struct fi_info *best = NULL;
    for (struct fi_info *fi = list; fi; fi = fi->next)
        if (!best || wx_ofi_rank(fi) < wx_ofi_rank(best))
            best = fi;
    return best;
}

wu_status_t wx_ofi_providers(wx_ofi_offer_fn_t fn, void *arg)
{
    struct fi_info *list = NULL;
    int r = wx_ofi_getinfo(&list);
    if (r)
        return WU_ERR_NOT_FOUND;
    struct fi_info *best = wx_ofi_choose(list);
    for (struct fi_info *fi = list; fi; fi = fi->next)
        fn(fi->fabric_attr->prov_name, fi->fabric_attr->name, fi->domain_attr->name,
           wx_ofi_rank(fi), (fi->caps & FI_RMA) != 0, fi == best, arg);
    fi_freeinfo(list);
    return WU_OK;
}

/* ---- start-up -------------------------------------------------------------------------------- */

static size_t wx_ofi_max(size_t a, size_t b)
{
    return a > b ? a : b;
}

static size_t wx_ofi_eager(void)
{
    return (size_t)wu_config_int(WU_CONFIG_OFI_EAGER_MAX);
}

static size_t wx_ofi_frag(void)
{
    size_t frag = (size_t)wu_config_int(WU_CONFIG_OFI_FRAG_SIZE);
    return frag < 1024 ? 1024 : frag;
}

#define WX_OFI_CHECK(call, what)                                                                   \
    do {                                                                                           \
        int r_ = (call);                                                                           \
        if (r_) {                                                                                  \
            wu_log_error("libfabric: %s: %s", what, fi_strerror(-r_));                             \
            return WU_ERR_IO;                                                                      \
        }                                                                                          \
    } while (0)

static wu_status_t wx_ofi_mr_local(wx_ofi_t *o, void *buf, size_t len, uint64_t access,
                                   uint64_t key, struct fid_mr **mr_p, void **desc_p)
{
    *mr_p = NULL;
    *desc_p = NULL;
    if (!(o->info->domain_attr->mr_mode & FI_MR_LOCAL))
        return WU_OK;
    WX_OFI_CHECK(fi_mr_reg(o->domain, buf, len, access, 0, key, 0, mr_p, NULL),
                 "fi_mr_reg of the packet buffers");
    *desc_p = fi_mr_desc(*mr_p);
    return WU_OK;
}

/* Fabric, domain, CQs, AV, endpoint, buffers, posted receives. */
static wu_status_t wx_ofi_open(wx_ofi_t *o)
{
    struct fi_info *list = NULL;
    int r = wx_ofi_getinfo(&list);
    if (r) {
        wu_log_error("libfabric offers no provider with reliable datagram endpoints, messages and "
                     "send-after-send order (fi_getinfo: %s)%s%s", fi_strerror(-r),
                     getenv("FI_PROVIDER") ? "; FI_PROVIDER=" : "",
                     getenv("FI_PROVIDER") ? getenv("FI_PROVIDER") : "");
        return WU_ERR_NOT_FOUND;
    }
    o->info = fi_dupinfo(wx_ofi_choose(list));
    fi_freeinfo(list);
    if (!o->info)
        return WU_ERR_NO_MEMORY;
    struct fi_info *fi = o->info;
    if (!(fi->tx_attr->msg_order & FI_ORDER_SAS) || !(fi->rx_attr->msg_order & FI_ORDER_SAS)) {
        wu_log_error("libfabric provider %s does not order messages (FI_ORDER_SAS)",
                     fi->fabric_attr->prov_name);
        return WU_ERR_UNSUPPORTED;
    }
    WX_OFI_CHECK(fi_fabric(fi->fabric_attr, &o->fabric, NULL), "fi_fabric");
    WX_OFI_CHECK(fi_domain(o->fabric, fi, &o->domain, NULL), "fi_domain");
    struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_MSG, .wait_obj = FI_WAIT_NONE };
    WX_OFI_CHECK(fi_cq_open(o->domain, &cqa, &o->rxcq, NULL), "fi_cq_open (receive)");
    cqa.format = FI_CQ_FORMAT_CONTEXT;
    WX_OFI_CHECK(fi_cq_open(o->domain, &cqa, &o->txcq, NULL), "fi_cq_open (transmit)");
    struct fi_av_attr ava = { .type = FI_AV_TABLE, .count = (size_t)o->size };
    WX_OFI_CHECK(fi_av_open(o->domain, &ava, &o->av, NULL), "fi_av_open");
    WX_OFI_CHECK(fi_endpoint(o->domain, fi, &o->ep, NULL), "fi_endpoint");
    WX_OFI_CHECK(fi_ep_bind(o->ep, &o->av->fid, 0), "fi_ep_bind (address vector)");
    WX_OFI_CHECK(fi_ep_bind(o->ep, &o->txcq->fid, FI_TRANSMIT), "fi_ep_bind (transmit CQ)");
    WX_OFI_CHECK(fi_ep_bind(o->ep, &o->rxcq->fid, FI_RECV), "fi_ep_bind (receive CQ)");
    WX_OFI_CHECK(fi_enable(o->ep), "fi_enable");

    o->inject_max = fi->tx_attr->inject_size < WX_OFI_INJECT_CAP ? fi->tx_attr->inject_size
                                                                  : WX_OFI_INJECT_CAP;
    o->nrx = (int)wu_config_int(WU_CONFIG_OFI_RX_BUFS);
    o->ntx = (int)wu_config_int(WU_CONFIG_OFI_TX_BUFS);
    if (o->nrx < 2)
        o->nrx = 2;
    if (o->ntx < 2)
        o->ntx = 2;
    /* C11: the size of an aligned_alloc is a multiple of its alignment */
    o->rx_slab = aligned_alloc(4096, (o->buf_bytes * (size_t)o->nrx + 4095) & ~(size_t)4095);
    o->tx_slab = aligned_alloc(4096, (o->buf_bytes * (size_t)o->ntx + 4095) & ~(size_t)4095);
    o->rx = calloc((size_t)o->nrx, sizeof(*o->rx));
    o->tx = calloc((size_t)o->ntx, sizeof(*o->tx));
    if (!o->rx_slab || !o->tx_slab || !o->rx || !o->tx) {
        wu_log_error("no memory for %d + %d packet buffers of %zu bytes", o->nrx, o->ntx,
                     o->buf_bytes);
        return WU_ERR_NO_MEMORY;
    }
    wu_status_t st = wx_ofi_mr_local(o, o->rx_slab, o->buf_bytes * (size_t)o->nrx, FI_RECV, 1,
                                     &o->rx_mr, &o->rx_desc);
    if (st == WU_OK)
        st = wx_ofi_mr_local(o, o->tx_slab, o->buf_bytes * (size_t)o->ntx, FI_SEND, 2, &o->tx_mr,
                             &o->tx_desc);
    if (st != WU_OK)
        return st;
    wt_spin_init(&o->tx_lock);
    for (int i = 0; i < o->ntx; i++) {
        o->tx[i].data = o->tx_slab + (size_t)i * o->buf_bytes;
        wx_ofi_tx_put(o, &o->tx[i]);
    }
    for (int i = 0; i < o->nrx; i++) {
        o->rx[i].data = o->rx_slab + (size_t)i * o->buf_bytes;
        wx_ofi_rx_post(o, &o->rx[i]);
    }
    return WU_OK;
}

static void wx_ofi_hex(const uint8_t *b, size_t n, char *out)
{
    static const char dig[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = dig[b[i] >> 4];
        out[2 * i + 1] = dig[b[i] & 15];
    }
    out[2 * n] = '\0';
}

static int wx_ofi_unhex(const char *s, uint8_t *b, size_t max)
{
    size_t n = strlen(s);
    if (n % 2 || n / 2 > max)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1)
            return -1;
        b[i] = (uint8_t)v;
    }
    return (int)(n / 2);
}

/* WEFT_OFI_ADDR_FILE (a test hook): the name where a program outside the job can read it. */
static void wx_ofi_addr_file(const wx_ofi_t *o, const char *hex)
{
    const char *base = wu_config_str(WU_CONFIG_OFI_ADDR_FILE);
    if (!*base)
        return;
    char path[512];
    snprintf(path, sizeof(path), "%s.%d", base, o->rank);
    FILE *f = fopen(path, "w");
    if (!f || fprintf(f, "%s %s\n", o->info->fabric_attr->prov_name, hex) < 0)
        wu_log_warn("ofi: cannot write the endpoint name to %s", path);
    if (f)
        fclose(f);
}

/* Publish this rank's name (or "-" when opening failed: ok false) and the job key (rank 0), fence,
 * read the key and insert every rank's address. Every rank calls it, so nobody waits forever. */
static wu_status_t wx_ofi_exchange(wx_ofi_t *o, bool ok)
{
    char val[2 * WX_OFI_NAME_MAX + 1] = "-";
    wu_status_t st;
    if (ok) {
        uint8_t name[WX_OFI_NAME_MAX];
        size_t len = sizeof(name);
        int r = fi_getname(&o->ep->fid, name, &len);
        if (r) {
            wu_log_error("libfabric: fi_getname: %s", fi_strerror(-r));
            ok = false;
        } else {
            wx_ofi_hex(name, len, val);
            wx_ofi_addr_file(o, val);
        }
    }
    if (!ok)
        strcpy(val, "-");
    if ((st = o->bs.put("ofi-addr", val)) != WU_OK)
        return st;
    if (o->bs.rank == 0) {
        uint64_t key = 0;
        while (key == 0)
            if (getrandom(&key, sizeof(key), 0) != sizeof(key))
                key = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
        char kv[17];
        snprintf(kv, sizeof(kv), "%016llx", (unsigned long long)key);
        if ((st = o->bs.put("ofi-key", kv)) != WU_OK)
            return st;
    }
    if ((st = o->bs.fence()) != WU_OK)
        return st;
    if (!ok)
        return WU_ERR_IO;
    char kv[32];
    if ((st = o->bs.get(0, "ofi-key", kv, sizeof(kv))) != WU_OK) {
        wu_log_error("ofi: no job key from rank 0");
        return st;
    }
    o->key = strtoull(kv, NULL, 16);
    for (int r = 0; r < o->size; r++) {
        uint8_t name[WX_OFI_NAME_MAX];
        if ((st = o->bs.get(r, "ofi-addr", val, sizeof(val))) != WU_OK) {
            wu_log_error("ofi: no endpoint address from rank %d", r);
            return st;
        }
        if (!strcmp(val, "-")) {
            wu_log_error("ofi: rank %d could not open libfabric", r);
            return WU_ERR_IO;
        }
        int n = wx_ofi_unhex(val, name, sizeof(name));
        if (n <= 0 || fi_av_insert(o->av, name, 1, &o->addr[r], 0, NULL) != 1) {
            wu_log_error("ofi: cannot insert rank %d's address %s", r, val);
            return WU_ERR_IO;
        }
    }
    return WU_OK;
}

/* ---- finalize -------------------------------------------------------------------------------- */

static uint64_t wx_ofi_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void wx_ofi_poll_quiet(wx_ofi_t *o)
{
    wx_ofi_rx_poll(o, false);
    wx_ofi_tx_poll(o);
    if (o->repost)
        wx_ofi_rx_repost_pending(o);
}

/* Injected packets have no completion and may still sit in the provider's queue: a FLUSH packet
 * with a completion, behind them on the same ordered channel, says when they have left. */
static void wx_ofi_flush(wx_ofi_t *o)
{
    uint64_t deadline = wx_ofi_now_ns() + WX_OFI_FLUSH_NS;
    for (int dst = 0; dst < o->size; dst++) {
        if (!o->sent[dst])
            continue;
        for (;;) {
            wx_ofi_buf_t *b = wx_ofi_tx_get(o);
            if (b) {
                uint32_t give = wx_ofi_head(o, dst, b->data, WX_OFI_F_FLUSH, NULL);
                (void)give;   /* nobody sends to us any more */
                atomic_fetch_add_explicit(&o->tx_out, 1, memory_order_relaxed);
                if (fi_send(o->ep, b->data, WX_OFI_PREFIX, o->tx_desc, o->addr[dst], &b->ctx) == 0) {
                    o->tx_seq[dst]++;
                    break;
                }
                atomic_fetch_sub_explicit(&o->tx_out, 1, memory_order_relaxed);
                wx_ofi_tx_put(o, b);
            }
            wx_ofi_poll_quiet(o);
            if (wx_ofi_now_ns() > deadline)
                goto late;
        }
    }
    for (;;) {
        wt_spin_lock(&o->tx_lock);
        bool all_back = o->tx_nfree == o->ntx;
        wt_spin_unlock(&o->tx_lock);
        if (all_back)
            return;
        wx_ofi_poll_quiet(o);
        if (wx_ofi_now_ns() > deadline)
            goto late;
    }
late:
    wu_log_warn("ofi: sends still in flight after %llu s at finalize",
                (unsigned long long)(WX_OFI_FLUSH_NS / 1000000000ull));
}

static void wx_ofi_close(wx_ofi_t *o)
{
    if (o->ep)
        fi_close(&o->ep->fid);
    wx_rcache_destroy(&o->rcache);
    if (o->rx_mr)
        fi_close(&o->rx_mr->fid);
    if (o->tx_mr)
        fi_close(&o->tx_mr->fid);
    if (o->av)
        fi_close(&o->av->fid);
    if (o->txcq)
        fi_close(&o->txcq->fid);
    if (o->rxcq)
        fi_close(&o->rxcq->fid);
    if (o->domain)
        fi_close(&o->domain->fid);
    if (o->fabric)
        fi_close(&o->fabric->fid);
    if (o->info)
        fi_freeinfo(o->info);
    free(o->rx_slab);
    free(o->tx_slab);
    free(o->rx);
    free(o->tx);
    free(o->addr);
    free(o->sent);
    free(o->tx_seq);
    free(o->rx_seq);
    free(o->held);
    free(o->credits);
    free(o->owed);
    free(o->credit_retry);
    free(o);
}

/* The core's barrier of MPI_Finalize has run: what every rank needs has arrived. Our packets
 * still queued leave (flush); the fence then keeps every endpoint open until every rank has
 * flushed, so that no connection closes under a packet still on its way. */
static void wx_ofi_finalize(wx_tl_t *tl)
{
    wx_ofi_t *o = tl->priv;
    wx_ofi_flush(o);
    if (o->bs.fence() != WU_OK)
        wu_log_warn("ofi: the fence of finalize failed");
    uint64_t dropped = atomic_load(&o->dropped);
    wu_debug("ofi: %llu foreign or malformed packets dropped", (unsigned long long)dropped);
    wx_ofi_instance = NULL;
    wx_ofi_close(o);
}

static const wx_ops_t wx_ofi_ops = {
    .size = sizeof(wx_ops_t),
    .send = wx_ofi_send,
    .send_fill = wx_ofi_send_fill,
    .progress = wx_ofi_progress,
    .get = wx_ofi_get,
    .getv = wx_ofi_getv,
    .get_start = wx_ofi_get_start,
    .put = wx_no_put,
    .mem_reg = wx_ofi_mem_reg,
    .mem_dereg = wx_ofi_mem_dereg,
    .db_arm = wx_no_db_arm,
    .db_disarm = wx_no_db_disarm,
    .db_sleep = wx_no_db_sleep,
    .db_ring = wx_no_db_ring,
    .set_prefetch = wx_no_set_prefetch,
    .finalize = wx_ofi_finalize,
    .win_reg = wx_ofi_win_reg,
    .win_dereg = wx_ofi_win_dereg,
    .win_write = wx_ofi_win_write,
};

/* The instance up to its endpoint with receives posted (wx_ofi_open): all that needs neither the
 * job's exchange nor the core's callback. NULL without memory for the instance; otherwise the
 * caller owns it (wx_ofi_close also undoes a failed open) and *st_p says whether it opened. */
static wx_ofi_t *wx_ofi_make(int rank, int size, wu_status_t *st_p)
{
    wx_ofi_t *o = calloc(1, sizeof(*o));
    if (!o)
        return NULL;
    o->rank = rank;
    o->size = size;
    atomic_init(&o->dropped, 0);
    atomic_init(&o->tx_out, 0);
    size_t maxp = wx_ofi_max(wx_ofi_max(wx_ofi_eager(), wx_ofi_frag()), 64);
    o->buf_bytes = (WX_OFI_HEAD + maxp + 63) & ~(size_t)63;
    o->addr = calloc((size_t)o->size, sizeof(*o->addr));
    o->sent = calloc((size_t)o->size, 1);
    o->tx_seq = calloc((size_t)o->size, sizeof(*o->tx_seq));
    o->rx_seq = calloc((size_t)o->size, sizeof(*o->rx_seq));
    o->held = calloc((size_t)o->size, sizeof(*o->held));
    o->credits = calloc((size_t)o->size, sizeof(*o->credits));
    o->owed = calloc((size_t)o->size, sizeof(*o->owed));
    o->credit_retry = calloc((size_t)o->size, 1);
    *st_p = o->addr && o->sent && o->tx_seq && o->rx_seq && o->held && o->credits && o->owed &&
            o->credit_retry ? wx_ofi_open(o) : WU_ERR_NO_MEMORY;
    return o;
}

/* ---- libfabric's own start-up, in the background ---------------------------------------------- */

/* The first libfabric call of a process is slow, whatever the hints (docs/ofi.md, "Start-up"):
 * Debian's libfabric 1.17 initialises every built-in provider before it looks at FI_PROVIDER or
 * the hints, and its verbs provider reads /proc/kallsyms from end to end twice (~0.25 s, and the
 * kernel serves one such read at a time on the whole machine); loading the library runs
 * libinfinipath's constructor, which sleeps ~0.2 s calibrating a clock; enabling a tcp;ofi_rxm
 * endpoint faults in ~70 MB of buffer pools (~0.1 s). The prefetch does all of that, up to the
 * open endpoint (wx_ofi_make), in a thread of its own as soon as the core knows, or the launcher
 * says, that the job spans nodes, so that it overlaps the rest of start-up (the PMI fences that
 * wait for the last rank to be launched, shm's set-up); wx_ofi_create takes the instance.
 *
 * Concurrency: started, thread, rank and size are touched only by the core's start-up and
 * finalize thread (wx_ofi_prefetch, wx_ofi_prefetch_end, wx_ofi_create); o and st are written by
 * the prefetch thread and read after joining it, which orders them. */
static struct {
    bool started;
    wt_thread_t thread;
    int rank, size;
    wx_ofi_t *o;               /* the instance made (NULL: no memory) */
    wu_status_t st;            /* whether it opened */
} wx_ofi_pre;

static void *wx_ofi_prefetch_main(void *arg)
{
    (void)arg;
    wx_ofi_pre.o = wx_ofi_make(wx_ofi_pre.rank, wx_ofi_pre.size, &wx_ofi_pre.st);
    return NULL;
}

void wx_ofi_prefetch(int rank, int size)
{
    if (wx_ofi_pre.started || !wu_config_int(WU_CONFIG_OFI_PREFETCH))
        return;
    wx_ofi_pre.rank = rank;
    wx_ofi_pre.size = size;
    wx_ofi_pre.o = NULL;
    /* without a thread, wx_ofi_create opens the transport itself: only the overlap is lost */
    wx_ofi_pre.started = wt_thread_create(&wx_ofi_pre.thread, wx_ofi_prefetch_main, NULL) == WU_OK;
}

/* The prefetch's instance, once its thread ended (NULL: none was started, or no memory). */
static wx_ofi_t *wx_ofi_prefetched(wu_status_t *st_p)
{
    if (!wx_ofi_pre.started)
        return NULL;
    wt_thread_join(wx_ofi_pre.thread);
    wx_ofi_pre.started = false;
    wx_ofi_t *o = wx_ofi_pre.o;
    wx_ofi_pre.o = NULL;
    *st_p = wx_ofi_pre.st;
    return o;
}

void wx_ofi_prefetch_end(void)
{
    wu_status_t st;
    wx_ofi_t *o = wx_ofi_prefetched(&st);
    if (!o)
        return;
    wu_debug("ofi: the transport opened ahead of need (WEFT_OFI_PREFETCH) is not used: closed");
    wx_ofi_close(o);
}

wu_status_t wx_ofi_create(const wx_bootstrap_t *bs, wx_recv_fn_t cb, void *cb_arg, wx_tl_t **tl_p)
{
    wu_status_t st = WU_OK;
    wx_ofi_t *o = wx_ofi_prefetched(&st);
    bool ahead = o != NULL;
    if (o && (o->rank != bs->rank || o->size != bs->size)) {
        wx_ofi_close(o);   /* made for another view of the job (never today): made again */
        o = NULL;
        ahead = false;
    }
    if (!o && !(o = wx_ofi_make(bs->rank, bs->size, &st))) {
        wu_log_error("no memory for the libfabric transport");
        return WU_ERR_NO_MEMORY;
    }
    o->bs = *bs;
    o->cb = cb;
    o->cb_arg = cb_arg;
    size_t eager = wx_ofi_eager(), frag = wx_ofi_frag();
    size_t maxp = wx_ofi_max(wx_ofi_max(eager, frag), 64);
    wu_status_t xst = wx_ofi_exchange(o, st == WU_OK);
    if (st == WU_OK)
        st = xst;
    if (st != WU_OK) {
        wx_ofi_close(o);
        return st;
    }
    struct fi_info *fi = o->info;
    /* credits: every peer's share of the posted buffers, less two for its credit packets */
    long cr = wu_config_int(WU_CONFIG_OFI_CREDITS);
    if (cr <= 0)
        cr = o->size > 1 ? o->nrx / (o->size - 1) - 2 : o->nrx;
    o->credit_max = cr < 1 ? 1 : cr > (long)WX_OFI_CREDIT_MAX ? (int32_t)WX_OFI_CREDIT_MAX
                                                             : (int32_t)cr;
    o->credit_thresh = o->credit_max / 2 ? (uint32_t)o->credit_max / 2 : 1;
    if ((long)o->credit_max * (o->size - 1) + 2L * (o->size - 1) > o->nrx)
        wu_debug("ofi: %d credits per peer exceed the %d posted buffers: a flood relies on the "
                 "provider's buffering too", o->credit_max, o->nrx);
    for (int r = 0; r < o->size; r++)
        atomic_init(&o->credits[r], o->credit_max);
    o->rma = (fi->caps & FI_RMA) && (fi->caps & FI_READ) && (fi->caps & FI_REMOTE_READ);
    o->rma_write = o->rma && (fi->caps & FI_WRITE) && (fi->caps & FI_REMOTE_WRITE);
    o->virt_addr = (fi->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
    o->prov_key = (fi->domain_attr->mr_mode & FI_MR_PROV_KEY) != 0;
    atomic_init(&o->next_key, (uint64_t)o->rank << 32 | 1);   /* unique in our domain */
    /* registrations that pin pages (hardware) are never kept idle: wx_ofi_rcache.h */
    st = wx_rcache_init(&o->rcache, (int)wu_config_int(WU_CONFIG_OFI_RCACHE_SIZE),
                        wx_ofi_rank(fi) > 0, wx_ofi_mr_reg_fn, wx_ofi_mr_dereg_fn, o);
    if (st != WU_OK) {
        wx_ofi_close(o);
        return st;
    }
    if (fi->ep_attr->max_msg_size && maxp + WX_OFI_HEAD > fi->ep_attr->max_msg_size)
        maxp = fi->ep_attr->max_msg_size - WX_OFI_HEAD;
    wx_attr_t a = {
        .name = "ofi",
        .caps = WX_CAP_ORDERED,
        .max_payload = maxp,
        .eager_max = eager < maxp ? eager : maxp,
        .frag_size = frag < maxp ? frag : maxp,
        .inline_max = o->inject_max > WX_OFI_HEAD ? o->inject_max - WX_OFI_HEAD : 0,
    };
    a.bulk_eager_max = a.eager_max;
    size_t get_min = (size_t)wu_config_int(WU_CONFIG_OFI_GET_MIN);
    if (o->rma && get_min) {
        a.caps |= WX_CAP_GET | WX_CAP_SINGLE_COPY | WX_CAP_GET_ASYNC;
        a.get_min = a.get_bulk_min = get_min;
    }
    o->tl = (wx_tl_t){ .ops = &wx_ofi_ops, .attr = a, .priv = o };
    wx_ofi_instance = o;
    wu_debug("ofi: provider %s, fabric %s, domain %s, inject %zu, eager %zu, fragment %zu, "
             "%d receive and %d send buffers of %zu bytes, memory registration modes 0x%llx, "
             "rendezvous by %s, %d credits per peer%s", fi->fabric_attr->prov_name, fi->fabric_attr->name,
             fi->domain_attr->name, o->inject_max, a.eager_max, a.frag_size, o->nrx, o->ntx,
             o->buf_bytes, (unsigned long long)fi->domain_attr->mr_mode,
             a.get_min ? "fi_read" : "pipelined send", o->credit_max,
             ahead ? ", opened ahead (WEFT_OFI_PREFETCH)" : "");
    *tl_p = &o->tl;
    return WU_OK;
}
