/* Point-to-point protocols over packets: eager, synchronous eager, rendezvous by pipelined
 * fragments, by single copy (process_vm_readv) or cooperative (both sides copy, whichever is in
 * MPI), and the self path. See wc_proto.h for the packets
 * and docs/design.md for the whole data flow.
 *
 * Concurrency contract (MPI_THREAD_MULTIPLE, no library-wide lock):
 *   - ep->match_lock (owner-biased, thread/wt_olock.h: the one thread that posts and matches
 *     alone takes it without atomics) guards the matching engine and the unexpected-message pool;
 *     held only to match, post, probe or store, never while copying a rendezvous message or
 *     sending a packet.
 *   - wc_peer_t.lock (one per destination, own cache line, owner-biased) guards the producer side of the ring to
 *     that destination and the destination's pending queue, so packets to one peer leave in order
 *     and threads sending to different peers never meet.
 *   - ep->coop_lock (spinlock) guards the list of cooperative rendezvous under way and their
 *     requests' coop_state; held only to link, unlink or snapshot, never while copying or
 *     sending (the cooperative section below).
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
#include "util/wu_log.h"
#include "util/wu_copy_inl.h"
#include "util/wu_counters.h"
#include "util/wu_tsan.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* An unexpected message: the eager payload copied out of the ring, or a rendezvous offer (its
 * remote key), in one allocation with its descriptor. Storage is proportional to the message:
 *   - up to WC_MSG_INLINE bytes: a descriptor with that much room, from ep->msg_free (the common
 *     small message and every RTS);
 *   - up to WC_MSG_CLASS_MAX: room rounded up to a quarter power of two (wc_msg_class), from the
 *     class's free list, so a rank that posts its receives late (a broadcast's leaf behind its
 *     root) reuses its buffers instead of a malloc and free each (a tenth of a 4 KiB broadcast's
 *     cost when measured);
 *   - larger: exactly the payload (no reuse: a malloc is small next to copying it).
 * Free lists are bounded (WC_MSG_FREE_BYTES of room per class, WC_MSG_FREE_INLINE descriptors),
 * so a flood's storage goes back to the allocator once it is received. ep->unexp_bytes counts
 * what the stored messages take (descriptor and room), checked against ep->unexp_max. */
#define WC_MSG_INLINE       192
#define WC_MSG_FREE_INLINE  4096
#define WC_MSG_FREE_BYTES   (256u * 1024u)
#define WC_MSG_CLS_INLINE   0xfe   /* descriptor of ep->msg_free */
#define WC_MSG_CLS_EXACT    0xff   /* exact size, freed when received */
struct wc_message {
    wc_match_entry_t match;
    wc_hdr_t         hdr;
    int              src;
    uint8_t          cls;         /* size class, WC_MSG_CLS_INLINE or WC_MSG_CLS_EXACT */
    bool             data_owned;  /* data was handed over (wc_pt2pt_deliver_owned): free it */
    size_t           bytes;       /* counted in ep->unexp_bytes */
    void            *data;        /* the payload: room, or handed over */
    struct wc_message *next_free;
    char             room[];      /* WC_MSG_INLINE bytes, or the class's room, or exact */
};

/* The class of a payload of len bytes, WC_MSG_INLINE < len <= WC_MSG_CLASS_MAX, and its room:
 * len in (2^b, 2^(b+1)] is rounded up to 2^b + k * 2^(b-2), k = 1..4. */
static inline unsigned wc_msg_class(size_t len, size_t *room_p)
{
    unsigned b = 63u - (unsigned)__builtin_clzll((unsigned long long)(len - 1));
    size_t q = ((len - 1) - ((size_t)1 << b)) >> (b - 2);
    *room_p = ((size_t)1 << b) + ((q + 1) << (b - 2));
    return (b - 7) * 4 + (unsigned)q;
}
_Static_assert(WC_MSG_INLINE > 128 && WC_MSG_CLASS_MAX == 65536 && WC_MSG_CLASSES == (16 - 7) * 4,
               "classes cover (128, 65536] in quarter powers of two");

/* Look-ahead over a batch of arriving packets (wc_pt2pt_prefetch) only from this many posted
 * receives and unexpected messages: below, the bins and requests a packet touches are cached. */
#define WC_LOOKAHEAD_MIN 128

/* ---- unexpected-message pool (match_lock held) --------------------------------------------- */

static inline size_t wc_msg_class_keep(unsigned cls)
{
    size_t room = ((size_t)1 << (cls / 4 + 7)) + ((size_t)(cls % 4 + 1) << (cls / 4 + 5));
    size_t n = WC_MSG_FREE_BYTES / room;
    return n < 4 ? 4 : n;
}

/* Storage for a message with len payload bytes, counted in ep->unexp_bytes; NULL when the malloc
 * fails. */
static wc_message_t *wc_message_get(wc_ep_t *ep, size_t len)
{
    wc_message_t *m;
    size_t room;
    if (WU_LIKELY(len <= WC_MSG_INLINE)) {
        room = WC_MSG_INLINE;
        if ((m = ep->msg_free) != NULL) {
            ep->msg_free = m->next_free;
            ep->msg_nfree--;
        } else if (!(m = malloc(sizeof(*m) + room))) {
            return NULL;
        }
        m->cls = WC_MSG_CLS_INLINE;
    } else if (len <= WC_MSG_CLASS_MAX) {
        unsigned c = wc_msg_class(len, &room);
        if ((m = ep->cls_free[c]) != NULL) {
            ep->cls_free[c] = m->next_free;
            ep->cls_nfree[c]--;
        } else if (!(m = malloc(sizeof(*m) + room))) {
            return NULL;
        }
        m->cls = (uint8_t)c;
    } else {
        room = len;
        if (!(m = malloc(sizeof(*m) + room)))
            return NULL;
        m->cls = WC_MSG_CLS_EXACT;
    }
    m->data = m->room;
    m->data_owned = false;
    m->bytes = sizeof(*m) + room;
    ep->unexp_bytes += m->bytes;
    size_t n = ep->unexp_nmsgs + 1;   /* read by MPI_T without the lock: atomic stores */
    __atomic_store_n(&ep->unexp_nmsgs, n, __ATOMIC_RELAXED);
    if (n > ep->unexp_hwm)
        __atomic_store_n(&ep->unexp_hwm, n, __ATOMIC_RELAXED);
    return m;
}

static void wc_message_put_locked(wc_ep_t *ep, wc_message_t *m)
{
    ep->unexp_bytes -= m->bytes;
    __atomic_store_n(&ep->unexp_nmsgs, ep->unexp_nmsgs - 1, __ATOMIC_RELAXED);
    if (WU_UNLIKELY(m->data_owned))
        free(m->data);
    if (m->cls == WC_MSG_CLS_INLINE) {
        if (ep->msg_nfree < WC_MSG_FREE_INLINE) {
            m->next_free = ep->msg_free;
            ep->msg_free = m;
            ep->msg_nfree++;
            return;
        }
    } else if (m->cls != WC_MSG_CLS_EXACT && ep->cls_nfree[m->cls] < wc_msg_class_keep(m->cls)) {
        m->next_free = ep->cls_free[m->cls];
        ep->cls_free[m->cls] = m;
        ep->cls_nfree[m->cls]++;
        return;
    }
    free(m);
}

static void wc_message_put(wc_ep_t *ep, wc_message_t *m)
{
    wt_olock_lock(&ep->match_lock);
    wc_message_put_locked(ep, m);
    wt_olock_unlock(&ep->match_lock);
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

static inline wu_status_t wc_op_send(int dst, const wc_peer_t *p, wc_sendop_t *op)
{
    if (WU_UNLIKELY(op->pack))
        return p->send_fill(p->tl, dst, &op->hdr, op->len, wc_pack_fill, op->req);
    return p->send(p->tl, dst, &op->hdr, op->payload, op->len);
}

/* Queue op behind dst's pending packets. Peer lock held. */
static inline void wc_queue_locked(wc_ep_t *ep, wc_peer_t *p, wc_sendop_t *op)
{
    wu_count(WU_COUNT_SEND_QUEUED, 1);
    bool first = wu_list_empty(&p->pending);
    if (first) {
        atomic_fetch_add_explicit(&ep->npending, 1, memory_order_relaxed);
        atomic_store_explicit(&p->queued, true, memory_order_relaxed);
    }
    wu_list_push_back(&p->pending, &op->link);
    /* Only polling moves queued packets, and no doorbell rings for them: wake the idle threads
     * and a parked timer (a thread of ours asleep on the doorbell does not see them). */
    if (first) {
        wp_engine_kick();
        wp_engine_wake_timer();
    }
}

/* Try to put op in the ring now (in order behind queued packets), else queue it. Peer lock held.
 * Returns true if it left. */
static inline bool wc_out_locked(wc_ep_t *ep, int dst, wc_peer_t *p, wc_sendop_t *op)
{
    if (WU_LIKELY(wu_list_empty(&p->pending)) &&
        WU_LIKELY(wc_op_send(dst, p, op) == WU_OK))
        return true;
    wc_queue_locked(ep, p, op);
    return false;
}

void wc_pt2pt_send_ctrl(wc_ep_t *ep, int dst, const wc_hdr_t *hdrp, const void *payload,
                        size_t len)
{
    wc_hdr_t hdr = *hdrp;
    wc_peer_t *p = &ep->peers[dst];
    if (p->direct) {
        p->send(p->tl, dst, &hdr, payload, len);
        return;
    }
    wt_olock_lock(&p->lock);
    if (wu_list_empty(&p->pending) && p->send(p->tl, dst, &hdr, payload, len) == WU_OK) {
        wt_olock_unlock(&p->lock);
        return;
    }
    /* queued: the payload is copied behind the descriptor (freed with it once sent) */
    wc_sendop_t *op = malloc(sizeof(*op) + len);
    if (!op)
        wu_log_fatal("out of memory queueing a control packet for rank %d", dst);
    op->hdr = hdr;
    op->payload = len ? memcpy(op + 1, payload, len) : NULL;
    op->len = len;
    op->req = NULL;
    op->pooled = true;
    op->pack = false;
    wc_queue_locked(ep, p, op);
    wt_olock_unlock(&p->lock);
}

void wc_pt2pt_send_ctrl_hdr(wc_ep_t *ep, int dst, const wc_hdr_t *hdrp)
{
    wc_pt2pt_send_ctrl(ep, dst, hdrp, NULL, 0);
}

static inline void wc_send_ctrl(wc_ep_t *ep, int dst, wc_pkt_type_t type, uint64_t sreq,
                                uint64_t addr)
{
    wc_hdr_t hdr = { .type = (uint8_t)type, .sreq = sreq, .addr = addr };
    wc_pt2pt_send_ctrl_hdr(ep, dst, &hdr);
}

/* Set up the next fragment of a pipelined rendezvous send in its request's sendop. */
static inline void wc_frag_prepare(const wc_peer_t *p, wc_request_t *req)
{
    size_t n = req->len - req->frag_off;
    if (n > p->frag_size)
        n = p->frag_size;
    req->op.hdr = (wc_hdr_t){ .type = WC_PKT_FRAG, .sreq = req->frag_off, .addr = req->frag_rreq,
                              .len = req->len };
    req->op.payload = req->dt ? NULL : (const char *)req->buf + req->frag_off;
    req->op.pack = req->dt != NULL;
    req->op.len = n;
}

/* Push a pipelined send's fragments while the ring takes them. Returns true when all have left
 * (the caller completes the request, outside the lock). Peer lock held. */
static bool wc_frag_push_locked(wc_ep_t *ep, int dst, wc_peer_t *p, wc_request_t *req)
{
    while (req->frag_off < req->len) {
        wc_frag_prepare(p, req);
        if (!wc_out_locked(ep, dst, p, &req->op))
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

void wc_pt2pt_send_op(wc_ep_t *ep, int dst, wc_request_t *req)
{
    wc_peer_t *p = &ep->peers[dst];
    if (p->direct) {
        wc_op_send(dst, p, &req->op);
        wc_request_done(req);
        return;
    }
    wt_olock_lock(&p->lock);
    bool out = wc_out_locked(ep, dst, p, &req->op);
    wt_olock_unlock(&p->lock);
    if (out)
        wc_request_done(req);
}

/* The process is leaving (wc_quiesce): drop the queued packets of sends that the application
 * still owns (not detached), so that nothing reads their buffers any more. Packets of detached
 * requests and control packets stay, in order. Peer lock held. */
static WU_NOINLINE void wc_peer_purge_locked(wc_ep_t *ep, wc_peer_t *p)
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
    atomic_fetch_add_explicit(&ep->ndropped, n, memory_order_relaxed);
    if (wu_list_empty(&p->pending)) {
        atomic_fetch_sub_explicit(&ep->npending, 1, memory_order_relaxed);
        atomic_store_explicit(&p->queued, false, memory_order_relaxed);
    }
}

/* Drain dst's pending queue while the ring takes packets; requests that complete are linked on
 * *done (through op.link) to be completed by the caller outside the lock. Peer lock held. */
static int wc_drain_locked(wc_ep_t *ep, int dst, wc_peer_t *p, wu_list_t *done)
{
    int did = 0;
    wu_list_t *e;
    if (WU_UNLIKELY(p->leave_gen != wc_leave_gen_now())) {
        wc_peer_purge_locked(ep, p);
        if (wu_list_empty(&p->pending))
            return 0;
    }
    while ((e = wu_list_front(&p->pending)) != NULL) {
        wc_sendop_t *op = WU_CONTAINER_OF(e, wc_sendop_t, link);
        if (wc_op_send(dst, p, op) != WU_OK)
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
                wc_frag_prepare(p, req);
                wu_list_push_front(&p->pending, &req->op.link);
            } else {
                wu_list_push_back(done, &req->op.link);
            }
        } else if (wc_sent_completes(op)) {
            wu_list_push_back(done, &req->op.link);
        }
    }
    if (wu_list_empty(&p->pending)) {
        atomic_fetch_sub_explicit(&ep->npending, 1, memory_order_relaxed);
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
int wc_pt2pt_pending_drain(wc_ep_t *ep)
{
    int did = 0;
    wu_list_t done = WU_LIST_INIT(done);
    int npeers = wc_ep_npeers(ep);
    for (int dst = 0; dst < npeers; dst++) {
        wc_peer_t *p = &ep->peers[dst];
        if (!atomic_load_explicit(&p->queued, memory_order_relaxed) || !wt_olock_trylock(&p->lock))
            continue;
        if (!wu_list_empty(&p->pending))
            did += wc_drain_locked(ep, dst, p, &done);
        wt_olock_unlock(&p->lock);
    }
    wc_complete_list(&done);
    return did;
}

/* ---- cooperative rendezvous ------------------------------------------------------------------- */
/* A contiguous rendezvous through a transport with WX_CAP_COOP (shm with CMA, docs/shm.md): the RTS
 * offers the sender's slot; the receive that matches it answers COOP_MATCH (its token, its buffer,
 * the bytes it accepts) and does nothing more there. From then on the message's chunks (one FRAG
 * payload each) are claimed through the slot by whichever rank is inside MPI, by the threads that
 * wait or test (wc_coop_poll, from wc_idle_block and wc_progress; the engine's background threads
 * never copy, they would take the core from the computation):
 *   - the sender pushes a claimed chunk through the ring as a FRAG, with at most WC_COOP_INFLIGHT
 *     of them not yet copied out: with both ranks in MPI this is the pipelined copy on two cores;
 *     when the ring is full, or the receiver has copied nothing out for WC_COOP_QUIET_NS, the
 *     receiver is away and the sender writes runs of chunks into its buffer (put);
 *   - the receiver copies FRAGs out as they arrive (its progress, any thread); while FRAGs and
 *     the sender's claims keep coming it does nothing else; when the sender has claimed nothing
 *     for WC_COOP_QUIET_NS it is away, and the receiver reads runs of chunks (get).
 * A FRAG chunk is finished when its packet is in the ring (the sender's buffer is free of it).
 * Whoever finishes the last chunk ends the message: the sender sends COOP_FIN (after its FRAGs,
 * in order) and completes its send; the receiver completes its receive and answers FIN, but only
 * once it copied every FRAG out (coop_consumed == fsent; else the last FRAG ends it, seeing
 * WC_COOP_DEFER in the same word), and whichever of the two gets there first ends it (coop_ended).
 *
 * ep->coop lists the requests whose chunks this process may still copy (coop_lock). A receive
 * enters it as MATCHING (found by COOP_FIN and its FRAGs, not copied yet) before its COOP_MATCH
 * leaves, and becomes ACTIVE after: so no chunk is read, and no FIN sent, before the sender can
 * have the COOP_MATCH in order ahead of it. A copier takes a snapshot of entries under the lock and
 * copies outside it; a snapshot that outlived its request only fails to claim (its slot's chunks
 * are all claimed, or the generation moved on), and claimed chunks keep both requests alive
 * until they are finished. */
_Atomic int wc_coop_active;
#define WC_COOP_BATCH 8           /* requests one copier looks at per call */
#define WC_COOP_INFLIGHT 4        /* FRAG chunks of a message not yet copied out, at most */
#define WC_COOP_RUN 8             /* chunks one get or put copies when the peer is away */
#define WC_COOP_QUIET_NS 30000u   /* no sign of the peer for this long: it is away */
#define WC_COOP_DEFER (1u << 31)  /* in a receive's coop_consumed: its chunks are finished */

static inline uint32_t wc_coop_chunks(size_t len, size_t chunk)
{
    return (uint32_t)((len + chunk - 1) / chunk);
}

/* coop_lock held: req enters the list. */
static void wc_coop_link_locked(wc_ep_t *ep, wc_request_t *req, uint8_t state)
{
    req->coop_state = state;
    wu_list_push_back(&ep->coop, &req->coop_link);
    atomic_fetch_add_explicit(&ep->ncoop, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&wc_coop_active, 1, memory_order_relaxed);
}

/* coop_lock held: take req out of the list (it is in it). */
static void wc_coop_unlink_locked(wc_ep_t *ep, wc_request_t *req)
{
    wu_list_del(&req->coop_link);
    atomic_fetch_sub_explicit(&ep->ncoop, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&wc_coop_active, 1, memory_order_relaxed);
    req->coop_state = WC_COOP_NONE;
}

/* There are chunks to copy: a waiter asleep on the doorbell wakes for them (the packet that
 * brought them may have been taken by an engine thread, which rang nothing). */
static void wc_coop_wake(wx_tl_t *tl)
{
    if (tl->attr.caps & WX_CAP_DOORBELL)
        tl->ops->db_ring(tl);
}

/* A send's rendezvous ended (FIN, CTS, its last chunk, or a cancel): out of the list, and its
 * slot closed, if it had one. */
static void wc_coop_release(wc_ep_t *ep, int dst, wc_request_t *sreq)
{
    wt_spin_lock(&ep->coop_lock);
    uint8_t was = sreq->coop_state;
    if (was == WC_COOP_ACTIVE)
        wc_coop_unlink_locked(ep, sreq);
    sreq->coop_state = WC_COOP_NONE;
    wt_spin_unlock(&ep->coop_lock);
    if (was != WC_COOP_NONE) {
        wx_tl_t *tl = ep->peers[dst].tl;
        tl->ops->coop_close(tl, sreq->coop_tok);
    }
}

static inline void wc_rkey_release(wc_ep_t *ep, int dst, wc_request_t *sreq);

/* wc_request_t.coop_ended of a cooperative receive: ENDED once somebody ends it; STARTING while
 * wc_coop_recv_start has not finished with the request (its COOP_MATCH sent, the state moved on):
 * an end that comes meanwhile (the sender, or a thread of this rank, finished every chunk: quick
 * with the bulk variant, where the sender copies right after COOP_MATCH) only records itself, with
 * FAILED and FIN, and the start ends the request as it leaves, so it never touches a completed
 * request (which its owner may free or post again at once). */
#define WC_COOP_END_ENDED 1u
#define WC_COOP_END_STARTING 2u
#define WC_COOP_END_FAILED 4u
#define WC_COOP_END_FIN 8u

/* The end itself: out of the list, and complete; fin: answer FIN (this rank finished the chunks)
 * rather than having had the sender's COOP_FIN. */
static void wc_coop_recv_end_now(wc_ep_t *ep, wc_request_t *rreq, bool failed, bool fin)
{
    int src = rreq->st_source;
    wt_spin_lock(&ep->coop_lock);
    if (rreq->coop_state != WC_COOP_NONE)
        wc_coop_unlink_locked(ep, rreq);
    wt_spin_unlock(&ep->coop_lock);
    if (failed && rreq->error == WU_OK)
        rreq->error = WU_ERR_IO;
    if (fin) {
        wc_hdr_t h = { .type = WC_PKT_FIN, .flags = failed ? WC_PKT_FLAG_ERR : 0,
                       .sreq = rreq->frag_rreq };
        wc_pt2pt_send_ctrl_hdr(ep, src, &h);
    }
    wc_request_done(rreq);
}

/* End a cooperative receive, once (or record the end for its start to carry out, above). */
static void wc_coop_recv_end(wc_ep_t *ep, wc_request_t *rreq, bool failed, bool fin)
{
    uint8_t cur = atomic_load(&rreq->coop_ended);
    uint8_t want;
    do {
        if (cur & WC_COOP_END_ENDED)
            return;
        want = (uint8_t)(cur | WC_COOP_END_ENDED | (failed ? WC_COOP_END_FAILED : 0) |
                         (fin ? WC_COOP_END_FIN : 0));
    } while (!atomic_compare_exchange_weak(&rreq->coop_ended, &cur, want));
    if (!(cur & WC_COOP_END_STARTING))
        wc_coop_recv_end_now(ep, rreq, failed, fin);
}

/* The receiver finished the last chunk: end now if every FRAG was copied out, else leave it to
 * the last FRAG (both orders: the counters are sequentially consistent). */
static void wc_coop_recv_finished(wc_ep_t *ep, wc_request_t *rreq, wx_tl_t *tl, bool failed)
{
    int src = rreq->st_source;
    uint64_t tok = rreq->coop_tok;
    if (failed)
        rreq->error = WU_ERR_IO;
    /* Every FRAG is counted in fsent by now (pushed before its chunk finished). A FRAG copied out
     * after this sees the flag and may end the request at once: only locals from here on. */
    uint32_t consumed = atomic_fetch_or(&rreq->coop_consumed, WC_COOP_DEFER);
    if (consumed == tl->ops->coop_count(tl, src, tok, WX_COOP_FSENT, 0))
        wc_coop_recv_end(ep, rreq, failed, true);
}

/* A send counted in wc_cma_wait_bytes is answered (FIN, CTS, COOP_FIN, cancel). */
static inline void wc_cma_wait_end(wc_request_t *sreq)
{
    if (sreq->cma_wait) {
        sreq->cma_wait = 0;
        atomic_fetch_sub_explicit(&wc_cma_wait_bytes, sreq->len, memory_order_relaxed);
    }
}

/* The sender finished the last chunk: COOP_FIN behind its FRAGs, and the send is complete. */
static void wc_coop_send_end(wc_ep_t *ep, wc_request_t *sreq, bool failed)
{
    int dst = sreq->peer;
    wc_hdr_t h = { .type = WC_PKT_COOP_FIN, .flags = failed ? WC_PKT_FLAG_ERR : 0,
                   .addr = sreq->coop_tok };
    wc_cma_wait_end(sreq);
    wc_coop_release(ep, dst, sreq);
    wc_rkey_release(ep, dst, sreq);
    wc_pt2pt_send_ctrl_hdr(ep, dst, &h);
    wc_request_done(sreq);
}

typedef struct wc_coop_work {
    wc_request_t *req;
    wx_tl_t *tl;
    int peer, owner;          /* the rank copied from or to; the slot's owner (the sender) */
    uint64_t tok, raddr, rtok;
    char *buf;
    size_t len, chunk;
    uint32_t n;
    bool send;
    uint8_t mode;             /* WC_COOP_FRAG or WC_COOP_RUN */
} wc_coop_work_t;
enum { WC_COOP_SKIP, WC_COOP_FRAG, WC_COOP_RUN1 };

/* coop_lock held (req is live): has the peer shown no sign for WC_COOP_QUIET_NS? sign: its
 * progress counter now. */
static bool wc_coop_peer_away_locked(wc_request_t *req, uint32_t sign, uint64_t now)
{
    if (atomic_load_explicit(&req->coop_seen, memory_order_relaxed) != sign) {
        atomic_store_explicit(&req->coop_seen, sign, memory_order_relaxed);
        atomic_store_explicit(&req->coop_seen_ns, now, memory_order_relaxed);
        return false;
    }
    return now - atomic_load_explicit(&req->coop_seen_ns, memory_order_relaxed) >=
           WC_COOP_QUIET_NS;
}

/* coop_lock held: what this rank should do for req now. */
static uint8_t wc_coop_mode_locked(wc_request_t *req, wx_tl_t *tl, int owner, uint64_t *now_p)
{
    if (req->coop_bulk)
        return WC_COOP_RUN1;   /* a collective's: single-copy runs from both ends at once */
    if (!*now_p)
        *now_p = wc_now_ns();
    if (req->kind == WC_REQ_SEND) {
        uint32_t consumed = tl->ops->coop_count(tl, owner, req->coop_tok, WX_COOP_CONSUMED, 0);
        uint32_t inflight = tl->ops->coop_count(tl, owner, req->coop_tok, WX_COOP_FSENT, 0) -
                            consumed;
        if (inflight < WC_COOP_INFLIGHT)
            return WC_COOP_FRAG;
        /* the receiver is copying them out, or it is away */
        return wc_coop_peer_away_locked(req, consumed, *now_p) ? WC_COOP_RUN1 : WC_COOP_SKIP;
    }
    /* the sender is pushing (it claimed lately), or it is away */
    return wc_coop_peer_away_locked(req, tl->ops->coop_next(tl, owner, req->coop_tok), *now_p)
               ? WC_COOP_RUN1 : WC_COOP_SKIP;
}

/* Push chunk idx of a send through the ring as a FRAG if the ring takes it now (in order behind
 * nothing: a queue in front means the ring is full). */
static bool wc_coop_push_frag(wc_ep_t *ep, const wc_coop_work_t *c, uint32_t idx)
{
    size_t off = (size_t)idx * c->chunk;
    size_t m = c->len - off < c->chunk ? c->len - off : c->chunk;
    wc_peer_t *p = &ep->peers[c->peer];
    wc_hdr_t h = { .type = WC_PKT_FRAG, .flags = WC_PKT_FLAG_COOP, .sreq = off, .addr = c->rtok,
                   .len = c->len };
    c->tl->ops->coop_count(c->tl, c->owner, c->tok, WX_COOP_FSENT, 1);
    wt_olock_lock(&p->lock);
    bool sent = wu_list_empty(&p->pending) && p->send(p->tl, c->peer, &h, c->buf + off, m) == WU_OK;
    wt_olock_unlock(&p->lock);
    if (!sent)
        c->tl->ops->coop_count(c->tl, c->owner, c->tok, WX_COOP_FSENT, (uint32_t)-1);
    return sent;
}

/* One step of one transfer for a thread inside MPI, outside coop_lock: the request is touched
 * only after a claim succeeded (a claimed chunk keeps it alive). Returns whether it copied. */
static bool wc_coop_step(wc_ep_t *ep, const wc_coop_work_t *c)
{
    wx_tl_t *tl = c->tl;
    uint32_t idx, k;
    bool run = c->mode == WC_COOP_RUN1;
    if (!(k = tl->ops->coop_claim(tl, c->owner, c->tok, c->n, run ? WC_COOP_RUN : 1, &idx)))
        return false;
    if (c->send && !run && wc_coop_push_frag(ep, c, idx)) {
        bool failed;
        WU_TSAN_RELEASE(c->req);   /* the chunk left the user's buffer: see below */
        if (tl->ops->coop_finish(tl, c->owner, c->tok, c->n, 1, false, &failed))
            wc_coop_send_end(ep, c->req, failed);
        return true;
    }
    if (!c->send)   /* our own claims are no sign of the sender */
        atomic_store_explicit(&c->req->coop_seen, idx + k, memory_order_relaxed);
    size_t off = (size_t)idx * c->chunk;
    size_t end = (size_t)(idx + k) * c->chunk;
    size_t m = (end < c->len ? end : c->len) - off;
    wx_rkey_t rk = { .addr = c->raddr, .key = 0 };
    wu_status_t st = c->send ? tl->ops->put(tl, c->peer, c->buf + off, &rk, off, m)
                             : tl->ops->get(tl, c->peer, c->buf + off, &rk, off, m);
    bool failed = false;
    /* A chunk is ordered before the completion of its request by coop_finish (shared counters)
     * and, when the other rank finishes the message, through the other process and its COOP_FIN
     * or FIN (acquired by their handlers): a chain through another process that TSan cannot see,
     * so it is told here, while the claimed chunk still keeps the request alive. */
    WU_TSAN_RELEASE(c->req);
    if (tl->ops->coop_finish(tl, c->owner, c->tok, c->n, k, st != WU_OK, &failed)) {
        if (c->send)
            wc_coop_send_end(ep, c->req, failed);
        else
            wc_coop_recv_finished(ep, c->req, tl, failed);
    }
    return true;
}

int wc_pt2pt_coop_progress(wc_ep_t *ep, bool *pending_p)
{
    if (!atomic_load_explicit(&ep->ncoop, memory_order_relaxed))
        return 0;
    wc_coop_work_t w[WC_COOP_BATCH];
    int k = 0;
    uint64_t now = 0;
    bool pending = false;
    wt_spin_lock(&ep->coop_lock);
    for (wu_list_t *e = ep->coop.next; e != &ep->coop && k < WC_COOP_BATCH; e = e->next) {
        wc_request_t *r = WU_CONTAINER_OF(e, wc_request_t, coop_link);
        if (r->coop_state != WC_COOP_ACTIVE ||
            (WU_UNLIKELY(r->leave_gen != wc_leave_gen_now()) && !wc_request_is_detached(r)))
            continue;   /* (abandoned, wc_quiesce: its buffer is no longer touched here) */
        bool send = r->kind == WC_REQ_SEND;
        int peer = send ? r->peer : r->st_source;
        int owner = send ? ep->rank : peer;
        wx_tl_t *tl = ep->peers[peer].tl;
        if (tl->ops->coop_next(tl, owner, r->coop_tok) >= r->coop_n)
            continue;   /* every chunk claimed: the claimers finish it */
        pending = true;
        uint8_t mode = wc_coop_mode_locked(r, tl, owner, &now);
        if (mode == WC_COOP_SKIP)
            continue;
        w[k++] = (wc_coop_work_t){ .req = r, .tl = tl, .peer = peer, .owner = owner,
                                   .tok = r->coop_tok, .raddr = r->coop_raddr,
                                   .rtok = r->coop_rtok, .buf = r->buf, .len = r->coop_len,
                                   .chunk = tl->attr.coop_chunk, .n = r->coop_n, .send = send,
                                   .mode = mode };
    }
    wt_spin_unlock(&ep->coop_lock);
    int did = 0;
    for (int i = 0; i < k; i++)
        did += wc_coop_step(ep, &w[i]);
    if (pending_p && pending)
        *pending_p = true;
    return did;
}

int wc_coop_poll(bool *pending_p)
{
    return wc_pt2pt_coop_progress(wc_ep_default(), pending_p);
}

/* Offers announced to a computing receiver. A receive that a cooperative rendezvous may fill,
 * posted unmatched, is matched by whoever polls when its offer comes: if the application went back
 * to computing, only the engine's threads can. Idle threads are SCHED_IDLE and cannot run beside a
 * busy computation on its CPU; the timer can (it preempts), but it ticks only every
 * WEFT_PROGRESS_TIMER_US (1 ms), so the sender, waiting for the match, sat idle up to a whole period
 * (4 MiB overlap, receiver computing). So while such receives are posted (wc_match_post_watched
 * counts them), the transport is told to watch (offer_watch), the timer sleeps where offers wake it
 * (offer_sleep, installed as the engine's timer sleep by wc_offer_init), and a sender wakes it after
 * pushing an offer (offer_wake: a fence and one load when nobody watches). The match then happens
 * within a wake-up of the offer, and the sender pushes the message while the receiver computes.
 * The watch is turned on by the posting thread (under match_lock, before its look at the
 * transports in wc_irecv_look: the transport's fences order the two sides, so either the look finds
 * the offer or the sender sees the watch) and off by the timer once no watched receive is posted
 * (under match_lock too), so an offer to a rank that stopped watching a moment ago costs at most one
 * early tick. A rank whose threads poll is not woken (wc_offer_busy, wc_wait.h: waiting threads
 * stamp the time, the look clears it as the application leaves): its poll takes the offer, and
 * the timer, at its higher priority, would only preempt the poller. Only for the process's
 * endpoint (thread-ranks' endpoints are matched by their own threads), only with a timer thread,
 * and not under a user-level-thread backend (the timer's sleep would be a kernel wait there). */
static wx_tl_t *wc_offer_tl;   /* set and cleared by wc_offer_init/fini (one thread, no traffic) */
_Atomic bool wc_offer_watching;   /* the default endpoint's match_lock (wc_wait.h) */

static _Atomic uint64_t wc_offer_busy_ns;   /* what wc_offer_busy told the transport last */

void wc_offer_busy(bool busy)
{
    uint64_t now = busy ? wc_now_ns() : 0;
    atomic_store_explicit(&wc_offer_busy_ns, now, memory_order_relaxed);
    wc_offer_tl->ops->offer_busy(wc_offer_tl, now);
}

/* The timer, before its poll: stop watching if no watched receive is left, and take the count of
 * the offers' wake-ups (a wake-up after this ends the sleep that follows the poll). */
static uint32_t wc_offer_timer_prepare(void)
{
    wc_ep_t *ep = wc_ep_default();
    wx_tl_t *tl = wc_offer_tl;
    if (atomic_load_explicit(&wc_offer_watching, memory_order_relaxed)) {
        wt_olock_lock(&ep->match_lock);
        if (atomic_load_explicit(&wc_offer_watching, memory_order_relaxed) &&
            wc_match_watched(ep->match) == 0) {
            atomic_store_explicit(&wc_offer_watching, false, memory_order_relaxed);
            tl->ops->offer_watch(tl, false);
        }
        wt_olock_unlock(&ep->match_lock);
    }
    return tl->ops->offer_seq(tl);
}

/* The timer's sleep. Woken by an offer while a thread of this rank polls (it began waiting since
 * the sender looked): that thread takes the offer, so the timer sleeps on instead of ticking, which
 * would take the queues (and the CPU, at its higher priority) from it. */
#define WC_OFFER_BUSY_NS 20000u
static void wc_offer_timer_sleep(uint32_t seq, uint64_t deadline_ns)
{
    wx_tl_t *tl = wc_offer_tl;
    for (;;) {
        tl->ops->offer_sleep(tl, seq, deadline_ns);
        uint64_t now = wc_now_ns(),
                 busy = atomic_load_explicit(&wc_offer_busy_ns, memory_order_relaxed);
        if (now >= deadline_ns || !busy || now >= busy + WC_OFFER_BUSY_NS)
            return;
        seq = tl->ops->offer_seq(tl);
    }
}

static void wc_offer_timer_wake(void)
{
    wc_offer_tl->ops->offer_wake(wc_offer_tl, wc_ep_default()->rank);
}

static const wp_timer_sleep_t wc_offer_timer = {
    .prepare = wc_offer_timer_prepare, .sleep = wc_offer_timer_sleep, .wake = wc_offer_timer_wake,
};

void wc_offer_init(wx_tl_t *coop_tl)
{
    if (WT_BACKEND_ULT || !coop_tl || !(coop_tl->attr.caps & WX_CAP_COOP) ||
        !wp_engine_has_timer())
        return;
    wc_offer_tl = coop_tl;
    wp_engine_set_timer_sleep(&wc_offer_timer);
}

void wc_offer_fini(void)
{
    if (!wc_offer_tl)
        return;
    wp_engine_set_timer_sleep(NULL);   /* returns once the timer left offer_sleep */
    atomic_store(&wc_offer_watching, false);
    wc_offer_tl = NULL;
}

/* A receive of len >= WC_COOP_EARLY_MIN bytes from src (not a wildcard) is about to be posted: may
 * an offer match it while the application computes? (Of any such size: a receive shorter than
 * WEFT_SHM_COOP_MIN may match a larger offer and truncate it.) */
static inline bool wc_offer_watchable(wc_ep_t *ep, int src)
{
    return ep->peers[src].tl == wc_offer_tl && ep == wc_ep_default();
}

/* Set by the thread that posted a watched receive, taken by wc_offer_leave (kernel threads only:
 * offers are not watched under a user-level-thread backend, wc_offer_init). */
static _Thread_local bool wc_offer_posted;

/* match_lock held: a watched receive was posted, by a thread inside MPI (busy: until the look as
 * it leaves, wc_irecv_look; a blocking receive waits next, and its wait stamps on). */
static WU_NOINLINE void wc_offer_watch_on(void)
{
    wc_offer_posted = true;
    wc_offer_busy(true);
    if (!atomic_load_explicit(&wc_offer_watching, memory_order_relaxed)) {
        atomic_store_explicit(&wc_offer_watching, true, memory_order_relaxed);
        wc_offer_tl->ops->offer_watch(wc_offer_tl, true);
    }
    /* The stamp before the look at the ring that follows (wc_irecv_look), against a sender's push,
     * fence, read of the stamp: match_lock may be owner-biased (no atomic instruction, so no
     * implied fence on x86) and the look is not under it. */
    atomic_thread_fence(memory_order_seq_cst);
}

/* A nonblocking collective's start returns to the application (wc_sched_start), which may
 * compute: if it posted a watched receive, its offer must reach the timer. Clear the stamp (a
 * sender then wakes the timer, wx_shm_offer_wake), and wake the own timer once: an offer pushed
 * before the receive was posted saw no watch and sits unread in the ring (MPI_Irecv's look polls
 * for it, wc_irecv_look; no poll here, inside a collective's start). wake: offers may come (the
 * schedule's own sends are WC_SEND_BULK, as are its peers'; exchanges send WC_SEND_BULK_EAGER,
 * which offers nothing: an early tick there only preempted the rank). ep NULL: only forget the
 * posts made so far (at the start of a schedule: what the leave then sees are its own). */
void wc_offer_leave(wc_ep_t *ep, bool wake)
{
    if (!wc_offer_posted)
        return;
    wc_offer_posted = false;
    if (!ep || !atomic_load_explicit(&wc_offer_watching, memory_order_relaxed) ||
        ep != wc_ep_default())
        return;
    wc_offer_busy(false);
    if (wake)
        wc_offer_tl->ops->offer_wake(wc_offer_tl, ep->rank);
}

/* A receive that a cooperative rendezvous may fill was posted unmatched: if its offer comes while
 * the application computes, only the engine's threads match it, so wake them (the idle threads,
 * which run where a CPU is free; the timer is woken by the offer itself, above). (No poll here: a
 * receive may be posted while its caller is setting up a collective's schedule whose task is
 * already in the engine's queues, and running that task from inside its own set-up lost the
 * schedule: finalize_pending.coll under ASan.) */
#define WC_COOP_EARLY_MIN WC_IRECV_LOOK_MIN
static WU_NOINLINE void wc_coop_early(wc_ep_t *ep, int src, size_t len)
{
    const wx_tl_t *tl = ep->peers[src].tl;
    if (!(tl->attr.caps & WX_CAP_COOP) || len < tl->attr.coop_min)
        return;
    wp_engine_kick();
}

/* A receive the application posted itself (MPI_Irecv, MPI_Start of a persistent receive), so
 * never from inside a collective's set-up (see above): if a cooperative rendezvous may fill it,
 * look at the transports once. An offer already in the ring is then matched here, and the sender can copy the whole
 * message while this rank computes (issue 16 §2, "receiver computes"), instead of after the
 * computation or at the timer's next tick. Not from a thread running the engine's tasks. The
 * request is not read here: once posted it belongs to whichever thread matches it. */
void wc_irecv_look(wc_ep_t *ep, int src, size_t len)
{
    if (len < WC_IRECV_LOOK_MIN || src < 0 || src >= ep->size)
        return;
    const wx_tl_t *tl = ep->peers[src].tl;
    if (!(tl->attr.caps & WX_CAP_COOP) || WP_TLS->held)   /* (any size: a shorter receive */
        return;                                                /* may truncate a larger offer) */
    wp_poll();
    /* the application goes back to computing: an offer that comes now should wake the timer */
    if (atomic_load_explicit(&wc_offer_watching, memory_order_relaxed) && tl == wc_offer_tl)
        wc_offer_busy(false);
}

/* The sender's RTS offers a slot: COOP flag, its token in addr. Returns true if it does. bulk: a
 * collective's message (wc_rts_prepare). */
static bool wc_coop_offer(wc_request_t *req, const wc_peer_t *p, size_t len, bool bulk)
{
    wx_tl_t *tl = p->tl;
    if (!(tl->attr.caps & WX_CAP_COOP) || len < tl->attr.coop_min ||
        len / tl->attr.coop_chunk >= WC_COOP_DEFER)
        return false;
    if (tl->ops->coop_open(tl, &req->coop_tok) != WU_OK)
        return false;   /* every slot is in use: the plain rendezvous */
    req->coop_state = WC_COOP_OPEN;
    req->coop_bulk = bulk;
    req->op.hdr.flags |= WC_PKT_FLAG_COOP;
    req->op.hdr.addr = req->coop_tok;
    return true;
}

/* The receive side of a cooperative RTS that rreq matched (contiguous, n > 0 bytes accepted). */
static void wc_coop_recv_start(wc_ep_t *ep, wc_request_t *rreq, int src, const wc_hdr_t *hdr,
                               const wx_rkey_t *rkey, size_t n)
{
    wx_tl_t *tl = ep->peers[src].tl;
    /* rreq->ep is ep already (wc_recv_init, when it was posted): not written again here, where
     * MPI_Cancel on the posting thread may read it at the same time */
    rreq->frag_rreq = hdr->sreq;
    rreq->coop_tok = hdr->addr;
    rreq->coop_bulk = (hdr->flags & WC_PKT_FLAG_BULK) != 0;
    rreq->coop_raddr = rkey->addr;
    rreq->coop_len = n;
    rreq->coop_n = wc_coop_chunks(n, tl->attr.coop_chunk);
    atomic_store_explicit(&rreq->coop_seen, 0, memory_order_relaxed);
    atomic_store_explicit(&rreq->coop_seen_ns, wc_now_ns(), memory_order_relaxed);
    atomic_store_explicit(&rreq->coop_consumed, 0, memory_order_relaxed);
    atomic_store_explicit(&rreq->coop_ended, WC_COOP_END_STARTING, memory_order_relaxed);
    rreq->leave_gen = wc_leave_gen_now();
    WU_TSAN_RELEASE(rreq);
    wt_spin_lock(&ep->coop_lock);
    wc_coop_link_locked(ep, rreq, WC_COOP_MATCHING);
    wt_spin_unlock(&ep->coop_lock);
    uint64_t b = (uint64_t)(uintptr_t)rreq->buf;
    wc_hdr_t h = { .type = WC_PKT_COOP_MATCH, .sreq = hdr->sreq, .addr = wc_req_token(rreq),
                   .len = n, .ctx = (uint32_t)b, .tag = (int32_t)(uint32_t)(b >> 32) };
    wc_pt2pt_send_ctrl_hdr(ep, src, &h);
    wt_spin_lock(&ep->coop_lock);
    if (rreq->coop_state == WC_COOP_MATCHING)
        rreq->coop_state = WC_COOP_ACTIVE;
    wt_spin_unlock(&ep->coop_lock);
    /* the sender may have finished it already: then its end waited for this */
    uint8_t was = atomic_fetch_and(&rreq->coop_ended, (uint8_t)~WC_COOP_END_STARTING);
    if (was & WC_COOP_END_ENDED) {
        wc_coop_recv_end_now(ep, rreq, (was & WC_COOP_END_FAILED) != 0,
                             (was & WC_COOP_END_FIN) != 0);
        return;
    }
    wc_coop_wake(tl);
}

/* A FRAG of a cooperative receive (flag COOP; its chunk, whole): copy it out, count it, and end the
 * receive if it was waiting for this one (wc_coop_recv_finished). */
static void wc_coop_recv_frag(wc_ep_t *ep, wc_request_t *rreq, int src, const wc_hdr_t *hdr,
                              const void *payload, size_t len)
{
    wx_tl_t *tl = ep->peers[src].tl;
    size_t off = hdr->sreq, chunk = tl->attr.coop_chunk;
    wt_spin_lock(&ep->coop_lock);
    uint8_t state = rreq->coop_state;
    wt_spin_unlock(&ep->coop_lock);
    if (WU_UNLIKELY(state == WC_COOP_NONE || rreq->st_source != src))
        wc_proto_error(ep, src, hdr, "cooperative FRAG names no cooperative receive from that "
                       "rank (field addr)");
    if (WU_UNLIKELY(off >= rreq->coop_len || off % chunk ||
                    len != (rreq->coop_len - off < chunk ? rreq->coop_len - off : chunk)))
        wc_proto_error(ep, src, hdr, "cooperative FRAG of %zu bytes at offset %zu (field sreq) is "
                       "no chunk of its %zu bytes", len, off, rreq->coop_len);
    memcpy((char *)rreq->buf + off, payload, len);
    uint64_t tok = rreq->coop_tok;
    tl->ops->coop_count(tl, src, tok, WX_COOP_CONSUMED, 1);   /* paces the sender */
    /* Before the flag, the finisher ends the request once it sees this count, and it may be
     * reused at once: without the flag, rreq is not touched again here. */
    uint32_t consumed = atomic_fetch_add(&rreq->coop_consumed, 1) + 1;
    if ((consumed & WC_COOP_DEFER) &&
        (consumed & ~WC_COOP_DEFER) == tl->ops->coop_count(tl, src, tok, WX_COOP_FSENT, 0))
        wc_coop_recv_end(ep, rreq, rreq->error == WU_ERR_IO, true);
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
    wu_count2(WU_COUNT_RECV_MSGS, 1, WU_COUNT_RECV_BYTES, n);
    *n_p = n;
}

/* Write n packed bytes from data at packed offset off of rreq's buffer. */
static inline void wc_recv_copy_in(wc_request_t *rreq, size_t off, const void *data, size_t n)
{
    if (WU_LIKELY(!rreq->dt)) {
        wu_copy((char *)rreq->buf + off, data, n);
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
 * built from the layout, WC_IOV_BATCH at a time (adjacent blocks merged), one getv (one
 * process_vm_readv for shm) per batch. */
#define WC_IOV_BATCH 256
static wu_status_t wc_cma_scatter(wc_request_t *rreq, wx_tl_t *tl, int src, const wx_rkey_t *rkey,
                                  size_t n)
{
    uint64_t off = 0;
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
        wu_status_t st = tl->ops->getv(tl, src, iov, k, rkey, off, bytes);
        if (st != WU_OK)
            return st;
        off += bytes;
    }
    return WU_OK;
}

/* Inlined into the EAGER handler (the small-message path); wc_recv_eager for the others. */
static inline __attribute__((always_inline)) void
wc_recv_eager_inl(wc_ep_t *ep, wc_request_t *rreq, int src, const wc_hdr_t *hdr,
                  const void *payload)
{
    size_t n;
    wc_recv_status(rreq, src, hdr, &n);
    if (n)
        wc_recv_copy_in(rreq, 0, payload, n);
    if (hdr->flags & WC_PKT_FLAG_SYNC)
        wc_send_ctrl(ep, src, WC_PKT_ACK, hdr->sreq, 0);
    wc_request_done(rreq);
}

static void wc_recv_eager(wc_ep_t *ep, wc_request_t *rreq, int src, const wc_hdr_t *hdr,
                          const void *payload)
{
    wc_recv_eager_inl(ep, rreq, src, hdr, payload);
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
static inline bool wc_cma_wanted(const wc_hdr_t *hdr, const wx_attr_t *a)
{
    if (hdr->flags & (WC_PKT_FLAG_PACKED | WC_PKT_FLAG_NOKEY))
        return false;
    if (a->get_min && hdr->len >= a->get_min)
        return true;
    return (hdr->flags & WC_PKT_FLAG_BULK) && a->get_bulk_min && hdr->len >= a->get_bulk_min;
}

/* The end of a get started by wc_recv_rts (the transport's progress, any thread): FIN to the
 * sender, which releases its buffer, and the receive is done. rreq->frag_rreq is the sender's
 * request. */
static void wc_recv_get_done(void *arg, wu_status_t st)
{
    wc_request_t *rreq = arg;
    WU_TSAN_ACQUIRE(rreq);
    if (WU_UNLIKELY(rreq->leave_gen != wc_leave_gen_now()) && !wc_request_is_detached(rreq))
        return;   /* abandoned (wc_quiesce) */
    if (st != WU_OK)
        rreq->error = st;
    wc_send_ctrl(rreq->ep, rreq->st_source, WC_PKT_FIN, rreq->frag_rreq, 0);
    wc_request_done(rreq);
}

/* rkey: the RTS's payload (the sender's registered buffer). A transport that reads in the
 * background (WX_CAP_GET_ASYNC: RDMA) gets a contiguous buffer that way, the delivering thread
 * moving on at once; a non-contiguous one takes the pipeline there. One that reads synchronously
 * (shm's CMA) reads here. */
static void wc_recv_rts(wc_ep_t *ep, wc_request_t *rreq, int src, const wc_hdr_t *hdr,
                        const wx_rkey_t *rkey)
{
    size_t n;
    wx_tl_t *tl = ep->peers[src].tl;
    wc_recv_status(rreq, src, hdr, &n);
    bool get = src != ep->rank && wc_cma_wanted(hdr, &tl->attr);
    if (src == ep->rank) {
        wu_count(WU_COUNT_RNDV_SELF, 1);
        wc_copy_local(rreq, wc_req_untoken(hdr->sreq), n);   /* our own token (self) */
    } else if ((hdr->flags & WC_PKT_FLAG_COOP) && !rreq->dt && n &&
               !((hdr->flags & WC_PKT_FLAG_BULK) && WP_TLS->idle_thread)) {
        /* (a non-contiguous or empty receive takes the paths below; the sender's FIN or CTS
         * handler closes its slot. So does a collective's offer that an idle thread matched: it
         * runs on a free CPU, and its single copy finishes the message even while both ranks
         * compute, where the cooperative copy waits for one of them to enter MPI.) */
        wu_count(WU_COUNT_RNDV_COOP, 1);
        wc_coop_recv_start(ep, rreq, src, hdr, rkey, n);
        return;
    } else if (get && (tl->attr.caps & WX_CAP_GET_ASYNC)) {
        if (rreq->dt)
            goto cts;
        rreq->frag_rreq = hdr->sreq;   /* (rreq->ep: set when posted, see wc_coop_recv_start) */
        rreq->leave_gen = wc_leave_gen_now();
        WU_TSAN_RELEASE(rreq);
        wu_status_t st = tl->ops->get_start(tl, src, rreq->buf, rkey, 0, n, wc_recv_get_done,
                                            rreq);
        if (st == WU_OK) {
            wu_count(WU_COUNT_RNDV_GET_ASYNC, 1);
            return;
        }
        if (st == WU_ERR_AGAIN || st == WU_ERR_UNSUPPORTED)
            goto cts;
        rreq->error = st;
    } else if (get && (!rreq->dt || wc_cma_scatter_ok(rreq->dt))) {
        wu_count(WU_COUNT_RNDV_GET, 1);
        wu_status_t st = rreq->dt ? wc_cma_scatter(rreq, tl, src, rkey, n)
                                  : tl->ops->get(tl, src, rreq->buf, rkey, 0, n);
        if (st != WU_OK)
            rreq->error = st;
    } else {
    cts:
        wu_count(WU_COUNT_RNDV_PIPELINE, 1);
        rreq->arrived = 0;
        rreq->leave_gen = wc_leave_gen_now();
        WU_TSAN_RELEASE(rreq);
        wc_send_ctrl(ep, src, WC_PKT_CTS, hdr->sreq, wc_req_token(rreq));
        return;
    }
    wc_send_ctrl(ep, src, WC_PKT_FIN, hdr->sreq, 0);
    wc_request_done(rreq);
}

/* Fragments of one message come from one sender and are delivered by one thread at a time, in
 * order; the request is the protocol's until its last fragment. addr is the token of our CTS. */
static void wc_recv_frag(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload,
                         size_t len)
{
    wc_request_t *rreq = wc_req_untoken(hdr->addr);
    size_t off = hdr->sreq;
    if (rreq)
        WU_TSAN_ACQUIRE(rreq);   /* before reading kind: released with our CTS */
    if (WU_UNLIKELY(!rreq || rreq->kind != WC_REQ_RECV))
        wc_proto_error(ep, src, hdr, "FRAG names no receive request of this rank (field addr)");
    if (WU_UNLIKELY(rreq->leave_gen != wc_leave_gen_now()) && !wc_request_is_detached(rreq))
        return;   /* abandoned (wc_quiesce): its buffer is no longer written */
    if (hdr->flags & WC_PKT_FLAG_COOP) {
        wc_coop_recv_frag(ep, rreq, src, hdr, payload, len);
        return;
    }
    if (WU_UNLIKELY(off > rreq->msg_len || len > rreq->msg_len - off))
        wc_proto_error(ep, src, hdr, "FRAG of %zu bytes at offset %zu (field sreq) lies outside "
                       "its message of %zu bytes", len, off, rreq->msg_len);
    if (off < rreq->st_bytes) {
        size_t n = rreq->st_bytes - off;
        wc_recv_copy_in(rreq, off, payload, n < len ? n : len);
    }
    rreq->arrived += len;
    if (rreq->arrived >= rreq->msg_len)
        wc_request_done(rreq);
}

/* A receive matched an unexpected message (taken out of matching): finish it. */
static void wc_recv_matched_msg(wc_ep_t *ep, wc_request_t *rreq, wc_message_t *msg)
{
    if (msg->hdr.type == WC_PKT_EAGER)
        wc_recv_eager(ep, rreq, msg->src, &msg->hdr, msg->data);
    else
        wc_recv_rts(ep, rreq, msg->src, &msg->hdr, msg->data);
    wc_message_put(ep, msg);
}

/* A message cannot be stored: past the budget (WEFT_UNEXPECTED_MAX) or out of memory. The job
 * cannot go on: the message cannot be dropped, and leaving it in the transport would stall the
 * sender's other packets behind it, which a receive this rank waits for may be. match_lock held
 * (the job ends). */
static WU_NOINLINE void wc_unexpected_fail(wc_ep_t *ep, int src, const wc_hdr_t *hdr, size_t len,
                                           bool nomem)
{
    char msg[640];
    if (nomem)
        snprintf(msg, sizeof(msg),
                 "rank %d: out of memory storing an unexpected message of %zu bytes from rank %d "
                 "(tag %d), with %zu bytes of unexpected messages already stored",
                 ep->rank, len, src, (int)hdr->tag, ep->unexp_bytes);
    else
        snprintf(msg, sizeof(msg),
                 "rank %d: unexpected messages (arrived before their receive was posted) exceed "
                 "the budget of %zu bytes: %zu bytes are stored and a message of %zu bytes from "
                 "rank %d (tag %d) does not fit; post the receives earlier or raise "
                 "WEFT_UNEXPECTED_MAX (docs/tuning.md)",
                 ep->rank, ep->unexp_max, ep->unexp_bytes, len, src, (int)hdr->tag);
    wc_fatal(WU_ERR_NO_MEMORY, msg);
}

/* match_lock held. */
static wc_message_t *wc_unexpected_store_locked(wc_ep_t *ep, int src, const wc_hdr_t *hdr,
                                                const void *payload, size_t len)
{
    wc_message_t *msg = wc_message_get(ep, len);   /* EAGER: the data; RTS: the remote key */
    if (WU_UNLIKELY(!msg))
        wc_unexpected_fail(ep, src, hdr, len, true);
    if (WU_UNLIKELY(ep->unexp_bytes > ep->unexp_max) && ep->unexp_max)
        wc_unexpected_fail(ep, src, hdr, len, false);
    msg->hdr = *hdr;
    msg->src = src;
    if (len)
        memcpy(msg->data, payload, len);
    msg->match.ctx = hdr->ctx;
    msg->match.src = src;
    msg->match.tag = hdr->tag;
    if (wc_match_unexpected_add(ep->match, &msg->match) != WU_OK)
        wc_unexpected_fail(ep, src, hdr, len, true);
    return msg;
}

void wc_pt2pt_deliver_owned(wc_ep_t *ep, int src, const wc_hdr_t *hdr, void *data)
{
    wt_olock_lock(&ep->match_lock);
    wc_match_entry_t *e = wc_match_posted_take(ep->match, hdr->ctx, src, hdr->tag);
    if (!e) {
        /* the data is freed with the message, and counted while it is stored */
        wc_message_t *m = wc_unexpected_store_locked(ep, src, hdr, NULL, 0);
        m->data = data;
        m->data_owned = true;
        m->bytes += hdr->len;
        ep->unexp_bytes += hdr->len;
        if (WU_UNLIKELY(ep->unexp_bytes > ep->unexp_max) && ep->unexp_max)
            wc_unexpected_fail(ep, src, hdr, hdr->len, false);
        wt_olock_unlock(&ep->match_lock);
        return;
    }
    wt_olock_unlock(&ep->match_lock);
    wc_recv_eager(ep, WU_CONTAINER_OF(e, wc_request_t, match), src, hdr, data);
    free(data);
}

/* ---- packet handlers ------------------------------------------------------------------------ */

/* A token echoed back to us (ACK, FIN, CTS, CANCEL_REP): the send request it names. */
static inline wc_request_t *wc_sreq_of(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const char *what)
{
    wc_request_t *sreq = wc_req_untoken(hdr->sreq);
    if (sreq)
        WU_TSAN_ACQUIRE(sreq);   /* before reading kind: released when the request was sent */
    if (WU_UNLIKELY(!sreq || sreq->kind != WC_REQ_SEND))
        wc_proto_error(ep, src, hdr, "%s names no send request of this rank (field sreq)", what);
    return sreq;
}

/* EAGER and RTS: match, or store as unexpected. The payload of an EAGER is the whole message (its
 * length, which the receive copies, must be the payload's); an RTS's is a remote key. */
static void wc_on_eager(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload, size_t len)
{
    if (WU_UNLIKELY(hdr->len != len))
        wc_proto_error(ep, src, hdr, "EAGER message length %llu (field len) differs from its "
                       "payload of %zu bytes", (unsigned long long)hdr->len, len);
    wt_olock_lock(&ep->match_lock);
    wc_match_entry_t *e = wc_match_posted_take(ep->match, hdr->ctx, src, hdr->tag);
    if (!e) {
        wc_unexpected_store_locked(ep, src, hdr, payload, len);
        wt_olock_unlock(&ep->match_lock);
        return;
    }
    wt_olock_unlock(&ep->match_lock);
    wc_recv_eager_inl(ep, WU_CONTAINER_OF(e, wc_request_t, match), src, hdr, payload);
}

static void wc_on_rts(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload, size_t len)
{
    if (WU_UNLIKELY(len != sizeof(wx_rkey_t)))
        wc_proto_error(ep, src, hdr, "RTS payload of %zu bytes, not a remote key of %zu", len,
                       sizeof(wx_rkey_t));
    if (WU_UNLIKELY(hdr->flags & WC_PKT_FLAG_COOP)) {
        wx_tl_t *tl = ep->peers[src].tl;
        if (!(tl->attr.caps & WX_CAP_COOP) || !tl->ops->coop_valid(tl, src, hdr->addr))
            wc_proto_error(ep, src, hdr, "RTS offers cooperative slot 0x%llx (field addr), which "
                           "is no slot of that rank", (unsigned long long)hdr->addr);
    }
    wt_olock_lock(&ep->match_lock);
    wc_match_entry_t *e = wc_match_posted_take(ep->match, hdr->ctx, src, hdr->tag);
    if (!e) {
        wc_unexpected_store_locked(ep, src, hdr, payload, len);
        wt_olock_unlock(&ep->match_lock);
        return;
    }
    wt_olock_unlock(&ep->match_lock);
    wc_recv_rts(ep, WU_CONTAINER_OF(e, wc_request_t, match), src, hdr, payload);
}

/* The receiver has read the data (FIN) or chose the pipeline (CTS): the key is no longer used. */
static inline void wc_rkey_release(wc_ep_t *ep, int dst, wc_request_t *sreq)
{
    if (sreq->rkey_reg) {
        sreq->rkey_reg = 0;
        wx_tl_t *tl = ep->peers[dst].tl;
        tl->ops->mem_dereg(tl, &sreq->rkey);
    }
}

static void wc_on_fin(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload, size_t len)
{
    wc_request_t *sreq = wc_sreq_of(ep, src, hdr, "FIN");
    (void)payload, (void)len;
    wc_cma_wait_end(sreq);
    wc_coop_release(ep, src, sreq);
    wc_rkey_release(ep, src, sreq);
    if (WU_UNLIKELY(hdr->flags & WC_PKT_FLAG_ERR))
        sreq->error = WU_ERR_IO;
    wc_request_done(sreq);
}

/* COOP_MATCH: the receiver matched our cooperative RTS; from now on this side copies too. */
static void wc_on_coop_match(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload,
                             size_t len)
{
    wc_request_t *sreq = wc_sreq_of(ep, src, hdr, "COOP_MATCH");
    (void)payload, (void)len;
    if (WU_UNLIKELY(hdr->len == 0 || hdr->len > sreq->len))
        wc_proto_error(ep, src, hdr, "COOP_MATCH accepts %llu bytes (field len) of a message of %zu",
                       (unsigned long long)hdr->len, sreq->len);
    wx_tl_t *tl = ep->peers[src].tl;
    wt_spin_lock(&ep->coop_lock);
    uint8_t state = sreq->coop_state;
    bool leaving = sreq->leave_gen != wc_leave_gen_now() && !wc_request_is_detached(sreq);
    if (state == WC_COOP_OPEN && !leaving) {
        /* (leaving, wc_quiesce: the buffer is no longer read here; the receiver copies it all) */
        sreq->coop_raddr = (uint64_t)(uint32_t)hdr->tag << 32 | hdr->ctx;
        sreq->coop_rtok = hdr->addr;
        sreq->coop_len = hdr->len;
        atomic_store_explicit(&sreq->coop_seen, 0, memory_order_relaxed);
        atomic_store_explicit(&sreq->coop_seen_ns, wc_now_ns(), memory_order_relaxed);
        sreq->coop_n = wc_coop_chunks(hdr->len, tl->attr.coop_chunk);
        wc_coop_link_locked(ep, sreq, WC_COOP_ACTIVE);
    }
    wt_spin_unlock(&ep->coop_lock);
    if (state == WC_COOP_OPEN)
        wc_coop_wake(tl);
    if (WU_UNLIKELY(state != WC_COOP_OPEN))
        wc_proto_error(ep, src, hdr, "COOP_MATCH names a send that offered no cooperative "
                       "rendezvous (field sreq)");
}

/* COOP_FIN: the sender finished the last chunk of a cooperative receive from it (its FRAGs came
 * before, in order, and were copied out). */
static void wc_on_coop_fin(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload,
                           size_t len)
{
    (void)payload, (void)len;
    wc_request_t *rreq = NULL;
    wt_spin_lock(&ep->coop_lock);
    for (wu_list_t *e = ep->coop.next; e != &ep->coop; e = e->next) {
        wc_request_t *r = WU_CONTAINER_OF(e, wc_request_t, coop_link);
        if (r->kind == WC_REQ_RECV && r->st_source == src && r->coop_tok == hdr->addr) {
            rreq = r;
            break;
        }
    }
    wt_spin_unlock(&ep->coop_lock);
    if (WU_UNLIKELY(!rreq))
        wc_proto_error(ep, src, hdr, "COOP_FIN names no cooperative receive from that rank "
                       "(field addr 0x%llx)", (unsigned long long)hdr->addr);
    WU_TSAN_ACQUIRE(rreq);
    wc_coop_recv_end(ep, rreq, (hdr->flags & WC_PKT_FLAG_ERR) != 0, false);
}

static void wc_on_ack(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload, size_t len)
{
    wc_request_t *sreq = wc_sreq_of(ep, src, hdr, "ACK");
    (void)payload, (void)len;
    wc_request_done(sreq);
}

static void wc_on_cts(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload, size_t len)
{
    wc_request_t *sreq = wc_sreq_of(ep, src, hdr, "CTS");
    (void)payload, (void)len;
    wc_cma_wait_end(sreq);   /* the receiver chose the pipeline after all */
    wc_coop_release(ep, src, sreq);
    wc_rkey_release(ep, src, sreq);
    wc_peer_t *p = &ep->peers[src];
    wt_olock_lock(&p->lock);
    if (WU_UNLIKELY(sreq->leave_gen != wc_leave_gen_now()) && !wc_request_is_detached(sreq)) {
        wt_olock_unlock(&p->lock);
        return;   /* abandoned (wc_quiesce): its buffer is no longer read */
    }
    sreq->frag_rreq = hdr->addr;
    sreq->frag_off = 0;
    bool all_out = wc_frag_push_locked(ep, src, p, sreq);
    wt_olock_unlock(&p->lock);
    if (all_out)
        wc_request_done(sreq);
}

static void wc_on_frag(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload, size_t len)
{
    wc_recv_frag(ep, src, hdr, payload, len);
}

/* CANCEL_REQ (wc_cancel_send): withdraw the sender's message if it still waits unmatched. The
 * newest of its key with that sender's request is the one: an older one from an earlier use of
 * the same request object would have been matched before it (messages of one key are matched in
 * order), so once the cancelled one is matched no message of that key and request is left. */
/* Is e the message a CANCEL_REQ (arg) names? An RTS or a synchronous EAGER carries the send's
 * token, a standard EAGER its bare address (wc_isend_start); the CANCEL_REQ carries both. */
static bool wc_msg_of_sreq(wc_match_entry_t *e, void *arg)
{
    const wc_message_t *msg = WU_CONTAINER_OF(e, wc_message_t, match);
    const wc_hdr_t *cancel = arg;
    if (msg->hdr.type == WC_PKT_EAGER && !(msg->hdr.flags & WC_PKT_FLAG_SYNC))
        return msg->hdr.sreq == cancel->addr;
    return msg->hdr.sreq == cancel->sreq &&
           (msg->hdr.type == WC_PKT_EAGER || msg->hdr.type == WC_PKT_RTS);
}

static void wc_on_cancel_req(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload,
                             size_t len)
{
    (void)payload, (void)len;
    uint64_t sreq = hdr->sreq;
    wt_olock_lock(&ep->match_lock);
    wc_match_entry_t *e = wc_match_unexpected_take_newest(ep->match, hdr->ctx, src, hdr->tag,
                                                          wc_msg_of_sreq, (void *)hdr);
    if (e)
        wc_message_put_locked(ep, WU_CONTAINER_OF(e, wc_message_t, match));
    wt_olock_unlock(&ep->match_lock);
    wc_hdr_t rep = { .type = WC_PKT_CANCEL_REP, .sreq = sreq,
                     .flags = (uint8_t)((e ? WC_PKT_FLAG_CANCELLED : 0) |
                                        (hdr->flags & WC_PKT_FLAG_WAIT)) };
    wc_pt2pt_send_ctrl_hdr(ep, src, &rep);
}

/* CANCEL_REP. Withdrawn: nothing else will come for the send (no ACK, CTS or FIN), so this
 * completes it, cancelled. Not withdrawn: the message was matched; a synchronous or rendezvous
 * send completes by its protocol (before or after this answer: the request is not touched), a
 * standard eager send that was complete waits for this answer only (WAIT). */
static void wc_on_cancel_rep(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload,
                             size_t len)
{
    (void)payload, (void)len;
    if (!(hdr->flags & (WC_PKT_FLAG_CANCELLED | WC_PKT_FLAG_WAIT)))
        return;
    wc_request_t *sreq = wc_sreq_of(ep, src, hdr, "CANCEL_REP");
    if (hdr->flags & WC_PKT_FLAG_CANCELLED) {
        wc_cma_wait_end(sreq);
        wc_coop_release(ep, src, sreq);
        wc_rkey_release(ep, src, sreq);
        sreq->cancelled = WC_CANCEL_DONE;
    }
    wc_request_done(sreq);
}

static void wc_on_unknown(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload,
                          size_t len)
{
    (void)payload, (void)len;
    wc_proto_error(ep, src, hdr, "no packet type %u (field type)", hdr->type);
}

void wc_pt2pt_handlers_init(wc_ep_t *ep)
{
    for (int i = 0; i < 256; i++)
        ep->handlers[i] = wc_on_unknown;
    wc_handler_register(ep, WC_PKT_EAGER, wc_on_eager);
    wc_handler_register(ep, WC_PKT_RTS, wc_on_rts);
    wc_handler_register(ep, WC_PKT_FIN, wc_on_fin);
    wc_handler_register(ep, WC_PKT_ACK, wc_on_ack);
    wc_handler_register(ep, WC_PKT_CTS, wc_on_cts);
    wc_handler_register(ep, WC_PKT_FRAG, wc_on_frag);
    wc_handler_register(ep, WC_PKT_CANCEL_REQ, wc_on_cancel_req);
    wc_handler_register(ep, WC_PKT_CANCEL_REP, wc_on_cancel_rep);
    wc_handler_register(ep, WC_PKT_COOP_MATCH, wc_on_coop_match);
    wc_handler_register(ep, WC_PKT_COOP_FIN, wc_on_coop_fin);
}

wc_request_t *wc_pt2pt_take_posted(wc_ep_t *ep, int src, int tag, uint32_t ctx)
{
    wt_olock_lock(&ep->match_lock);
    wc_match_entry_t *e = wc_match_posted_take(ep->match, ctx, src, tag);
    wt_olock_unlock(&ep->match_lock);
    return e ? WU_CONTAINER_OF(e, wc_request_t, match) : NULL;
}

/* Look-ahead over a batch of arriving packets: stage 0 prefetches the match bins, stage 1 the
 * receive requests that will match. Runs in the progress thread, before delivery; reads the
 * engine without the lock (a hint: a torn read only prefetches the wrong line), so it is skipped
 * when other threads may be posting concurrently. */
bool wc_pt2pt_prefetch(void *arg, int src, const void *hdrp, int stage)
{
    const wc_hdr_t *hdr = hdrp;
    wc_ep_t *ep = arg;
    if (hdr->type != WC_PKT_EAGER && hdr->type != WC_PKT_RTS)
        return true;
    if (!wt_olock_trylock(&ep->match_lock))
        return true;
    /* A small matching engine is cached already: the hints would cost two lock round trips and
     * a bin lookup per packet for nothing (sqmr's 12 receives a round: ~100 instructions and two
     * atomics of the ~1,400 per message). */
    if (wc_match_posted_count(ep->match) + wc_match_unexpected_count(ep->match) <
        WC_LOOKAHEAD_MIN) {
        wt_olock_unlock(&ep->match_lock);
        return false;
    }
    if (stage == 0) {
        wc_match_prefetch_bin(ep->match, hdr->ctx, src, hdr->tag);
    } else {
        wc_match_entry_t *e = wc_match_posted_peek_exact(ep->match, hdr->ctx, src, hdr->tag);
        if (e) {
            __builtin_prefetch(WU_CONTAINER_OF(e, wc_request_t, match), 1);
            __builtin_prefetch(e, 1);
        }
    }
    wt_olock_unlock(&ep->match_lock);
    return true;
}

/* ---- operations ----------------------------------------------------------------------------------- */

/* The rendezvous offer: the RTS carries the sender's registered buffer (its remote key) as its
 * payload when the buffer is contiguous and the transport can register it; otherwise NOKEY (or
 * PACKED) tells the receiver to take the pipeline. */
static void wc_rts_prepare(wc_request_t *req, const wc_peer_t *p, size_t len,
                           wc_send_mode_t mode)
{
    wc_sendop_t *op = &req->op;
    wx_tl_t *tl = p->tl;
    uint8_t flags = mode >= WC_SEND_BULK ? WC_PKT_FLAG_BULK : 0;
    req->rkey_reg = 0;
    if (req->dt)
        flags |= WC_PKT_FLAG_PACKED;
    else if (tl->ops->mem_reg(tl, req->buf, len, &req->rkey) == WU_OK)
        req->rkey_reg = 1;
    else
        flags |= WC_PKT_FLAG_NOKEY;
    op->hdr.type = WC_PKT_RTS;
    op->hdr.flags = flags;
    op->hdr.sreq = wc_req_token(req);   /* echoed back by CTS, FIN, COOP_MATCH */
    op->payload = &req->rkey;
    op->pack = false;
    op->len = sizeof(req->rkey);
    req->leave_gen = wc_leave_gen_now();
    if (req->rkey_reg && mode < WC_SEND_BULK && wc_coop_offer(req, p, len, false))
        return;   /* both sides copy: the sender waits actively, no cma_wait */
    if (mode >= WC_SEND_BULK && req->rkey_reg && tl->attr.get_bulk_min && len > p->eager_max &&
        len >= tl->attr.get_bulk_min) {
        /* A collective's bulk message is read by single copy, which needs no second rank running
         * (a collective's ranks often outnumber the free cores), so no pipeline through the ring.
         * From WEFT_SHM_COOP_MIN it is offered as a bulk cooperative rendezvous: from the match,
         * whichever rank is inside MPI copies runs of it by single copy, the sender writing while
         * the receiver computes (issue 16 §2, Ibcast with the receiver computing), both when both
         * wait. No event here until the receiver's FIN or COOP_MATCH (wc_wait.h). */
        req->cma_wait = 1;
        atomic_fetch_add_explicit(&wc_cma_wait_bytes, len, memory_order_relaxed);
        /* Not where blocks are exchanged (WC_SEND_BULK_EAGER: both ranks copy anyway), nor for
         * one run of chunks (WC_COOP_RUN: only one side could copy, after a handshake more). */
        if (mode == WC_SEND_BULK && len > (size_t)WC_COOP_RUN * tl->attr.coop_chunk)
            (void)wc_coop_offer(req, p, len, true);
    }
}

/* dt: NULL for len contiguous bytes at buf, else the non-contiguous layout of buf (len packed
 * bytes, req->cur already on it). */
static inline __attribute__((always_inline)) wu_status_t
wc_isend_start(wc_ep_t *ep, wc_request_t *req, const void *buf, size_t len, const wc_dtype_t *dt,
               int dst, int tag, uint32_t ctx, wc_send_mode_t mode)
{
    wc_peer_t *p = &ep->peers[dst];
    req->kind = WC_REQ_SEND;
    req->cancelled = WC_CANCEL_NONE;
    req->buf = (void *)buf;
    req->len = len;
    req->peer = dst;
    req->error = WU_OK;
    req->sync = (mode == WC_SEND_SYNC);
    req->cma_wait = 0;
    req->coop_state = WC_COOP_NONE;
    req->dt = dt;
    wc_request_reset(req);
    wu_count2(WU_COUNT_SEND_MSGS, 1, WU_COUNT_SEND_BYTES, len);

    wc_sendop_t *op = &req->op;
    op->req = req;
    op->pooled = false;
    /* sreq: a token where the receiver echoes it back (ACK of a synchronous send; an RTS gets its
     * token in wc_rts_prepare); a standard EAGER is never answered, its sreq only names it to a
     * CANCEL_REQ (wc_msg_of_sreq), so the bare address does, and costs no hash. */
    op->hdr = (wc_hdr_t){ .type = WC_PKT_EAGER, .flags = req->sync ? WC_PKT_FLAG_SYNC : 0,
                          .tag = tag, .ctx = ctx, .len = len,
                          .sreq = WU_UNLIKELY(req->sync) ? wc_req_token(req)
                                                          : (uint64_t)(uintptr_t)req };
    if (WU_LIKELY(len <= p->eager_max) ||
        (WU_UNLIKELY(mode == WC_SEND_BULK_EAGER) && len <= p->bulk_eager_max)) {
        op->payload = dt ? NULL : buf;
        op->pack = dt != NULL;
        op->len = len;
    } else {
        wc_rts_prepare(req, p, len, mode);
    }
    bool completes = wc_sent_completes(op);
    /* a cooperative offer: wake the receiver's timer if it watches for one (read now: once sent,
     * the request may be the peer's handlers') */
    bool offer = WU_UNLIKELY(op->hdr.flags & WC_PKT_FLAG_COOP) && op->hdr.type == WC_PKT_RTS;
    WU_TSAN_RELEASE(req);   /* the peer's FIN, ACK or CTS for req may be handled by another thread */
    if (WU_UNLIKELY(p->direct)) {
        /* self: delivered inside the call, which may nest sends to self: no lock, no queue */
        wu_status_t st = wc_op_send(dst, p, op);
        if (st != WU_OK)
            return st;
        if (completes)
            wc_request_done(req);
        return WU_OK;
    }
    wt_olock_lock(&p->lock);
    bool out = wc_out_locked(ep, dst, p, op);
    wt_olock_unlock(&p->lock);
    if (out && completes)
        wc_request_done_at_start(req);   /* req is not handed out yet */
    if (offer && out)   /* (a queued offer waits for the receiver's next tick or call) */
        p->tl->ops->offer_wake(p->tl, dst);
    return WU_OK;
}

wu_status_t wc_isend(wc_ep_t *ep, wc_request_t *req, const void *buf, size_t len, int dst, int tag,
                     uint32_t ctx, wc_send_mode_t mode)
{
    return wc_isend_start(ep, req, buf, len, NULL, dst, tag, ctx, mode);
}

static inline void wc_recv_init(wc_ep_t *ep, wc_request_t *req, void *buf, size_t len,
                                const wc_dtype_t *dt)
{
    req->ep = ep;
    req->kind = WC_REQ_RECV;
    req->buf = buf;
    req->len = len;
    req->dt = dt;
    req->error = WU_OK;
    req->cancelled = 0;
    req->st_bytes = 0;
    req->coop_state = WC_COOP_NONE;
    req->match.owner = NULL;
    wc_request_reset(req);
}

static inline __attribute__((always_inline)) wu_status_t
wc_irecv_start(wc_ep_t *ep, wc_request_t *req, void *buf, size_t len, const wc_dtype_t *dt, int src,
               int tag, uint32_t ctx)
{
    wc_recv_init(ep, req, buf, len, dt);
    req->match.ctx = ctx;
    req->match.src = src;
    req->match.tag = tag;
    wt_olock_lock(&ep->match_lock);
    wc_match_entry_t *e = wc_match_unexpected_find(ep->match, ctx, src, tag, true);
    if (e) {
        wt_olock_unlock(&ep->match_lock);
        wc_recv_matched_msg(ep, req, WU_CONTAINER_OF(e, wc_message_t, match));
        return WU_OK;
    }
    wu_status_t st;
    if (WU_UNLIKELY(len >= WC_COOP_EARLY_MIN) && src >= 0 && src < ep->size && wc_offer_tl &&
        wc_offer_watchable(ep, src)) {
        if ((st = wc_match_post_watched(ep->match, &req->match)) == WU_OK)
            wc_offer_watch_on();
    } else {
        st = wc_match_post(ep->match, &req->match);
    }
    wt_olock_unlock(&ep->match_lock);
    if (WU_UNLIKELY(len >= WC_COOP_EARLY_MIN) && st == WU_OK && src >= 0 && src < ep->size)
        wc_coop_early(ep, src, len);
    return st;
}

wu_status_t wc_irecv(wc_ep_t *ep, wc_request_t *req, void *buf, size_t len, int src, int tag,
                     uint32_t ctx)
{
    return wc_irecv_start(ep, req, buf, len, NULL, src, tag, ctx);
}

bool wc_cancel_recv(wc_request_t *req)
{
    if (req->kind != WC_REQ_RECV || wc_request_is_complete(req))
        return false;
    wc_ep_t *ep = req->ep;
    wt_olock_lock(&ep->match_lock);
    bool removed = wc_match_posted_remove(ep->match, &req->match);
    wt_olock_unlock(&ep->match_lock);
    if (!removed)
        return false;
    req->cancelled = 1;
    wc_request_done(req);
    return true;
}

/* Take req's packet back from dst's pending queue if it is still there. Peer lock held. */
static bool wc_unqueue_locked(wc_ep_t *ep, wc_peer_t *p, wc_request_t *req)
{
    for (wu_list_t *e = p->pending.next; e != &p->pending; e = e->next) {
        if (e != &req->op.link)
            continue;
        wu_list_del(e);
        if (wu_list_empty(&p->pending)) {
            atomic_fetch_sub_explicit(&ep->npending, 1, memory_order_relaxed);
            atomic_store_explicit(&p->queued, false, memory_order_relaxed);
        }
        return true;
    }
    return false;
}

void wc_cancel_send(wc_ep_t *ep, wc_request_t *req)
{
    if (req->kind != WC_REQ_SEND || req->cancelled != WC_CANCEL_NONE)
        return;
    int dst = req->peer;
    wc_peer_t *p = &ep->peers[dst];
    wc_hdr_t h;
    if (!p->direct) {
        /* the CTS handler rewrites op.hdr (to FRAG) under this lock */
        wt_olock_lock(&p->lock);
        h = req->op.hdr;
        bool unqueued = (h.type == WC_PKT_EAGER || h.type == WC_PKT_RTS) &&
                        !wc_request_is_complete(req) && wc_unqueue_locked(ep, p, req);
        wt_olock_unlock(&p->lock);
        if (unqueued) {   /* it never left: nothing will answer it */
            wc_cma_wait_end(req);
            wc_coop_release(ep, dst, req);
            wc_rkey_release(ep, dst, req);
            req->cancelled = WC_CANCEL_DONE;
            wc_request_done(req);
            return;
        }
    } else {
        h = req->op.hdr;
    }
    if (h.type != WC_PKT_EAGER && h.type != WC_PKT_RTS)
        return;   /* fragments are flowing: the receiver matched it */
    uint8_t flags = 0;
    if (h.type == WC_PKT_EAGER && !req->sync) {
        /* it left the queue: the thread that pushed it completes it outside the lock, at once */
        while (!wc_request_is_complete(req))
            wt_thread_yield();
        flags = WC_PKT_FLAG_WAIT;
        wc_request_reset(req);   /* complete again on the answer */
    } else if (wc_request_is_complete(req)) {
        return;   /* the receiver matched it (ACK, FIN or the last fragment) */
    }
    req->cancelled = WC_CANCEL_ASKED;
    WU_TSAN_RELEASE(req);
    wc_hdr_t hdr = { .type = WC_PKT_CANCEL_REQ, .flags = flags, .tag = h.tag, .ctx = h.ctx,
                     .sreq = wc_req_token(req), .addr = (uint64_t)(uintptr_t)req };
    wc_pt2pt_send_ctrl_hdr(ep, dst, &hdr);
}

static bool wc_iprobe_once(wc_ep_t *ep, int src, int tag, uint32_t ctx, bool take,
                           wc_probe_info_t *info_p, wc_message_t **msg_p)
{
    wt_olock_lock(&ep->match_lock);
    wc_match_entry_t *e = wc_match_unexpected_find(ep->match, ctx, src, tag, take);
    if (e) {
        wc_message_t *msg = WU_CONTAINER_OF(e, wc_message_t, match);
        info_p->source = msg->src;
        info_p->tag = msg->hdr.tag;
        info_p->len = msg->hdr.len;
        if (take)
            *msg_p = msg;
    }
    wt_olock_unlock(&ep->match_lock);
    return e != NULL;
}

bool wc_iprobe(wc_ep_t *ep, int src, int tag, uint32_t ctx, bool take, wc_probe_info_t *info_p,
               wc_message_t **msg_p)
{
    if (wc_iprobe_once(ep, src, tag, ctx, take, info_p, msg_p))
        return true;
    wc_progress();   /* the engine runs ep's task (a unit test's endpoints: wc_ep_progress) */
    return wc_iprobe_once(ep, src, tag, ctx, take, info_p, msg_p);
}

wu_status_t wc_imrecv(wc_ep_t *ep, wc_request_t *req, void *buf, size_t len, wc_message_t *msg)
{
    wc_recv_init(ep, req, buf, len, NULL);
    wc_recv_matched_msg(ep, req, msg);
    return WU_OK;
}

/* ---- progress ------------------------------------------------------------------------------------- */

int wc_progress(void)
{
    int did = wp_poll();
    if (WU_UNLIKELY(atomic_load_explicit(&wc_coop_active, memory_order_relaxed)))
        did += wc_coop_poll(NULL);
    /* Under user-level threads (WT_BACKEND_ULT) a thread that polls in a loop (MPI_Test, MPI_Iprobe,
     * MPI_Parrived) would keep the OS thread from the thread it waits for: a poll that found
     * nothing yields. A constant 0 under pthreads. */
    if (WT_BACKEND_ULT && !did)
        wt_thread_yield();
    return did;
}

/* ---- leaving (wc_quiesce) -------------------------------------------------------------------- */

/* A posted receive that the application still owns. */
static bool wc_recv_abandoned(wc_match_entry_t *e, void *arg)
{
    (void)arg;
    return !wc_request_is_detached(WU_CONTAINER_OF(e, wc_request_t, match));
}

void wc_pt2pt_quiesce(wc_ep_t *ep, size_t *dropped_p, size_t *withdrawn_p)
{
    size_t withdrawn = 0;
    for (int dst = 0; ep->peers && dst < wc_ep_npeers(ep); dst++) {
        wc_peer_t *p = &ep->peers[dst];
        wt_olock_lock(&p->lock);
        wc_peer_purge_locked(ep, p);
        wt_olock_unlock(&p->lock);
    }
    wt_olock_lock(&ep->match_lock);
    if (ep->match)
        withdrawn = wc_match_posted_sweep(ep->match, wc_recv_abandoned, NULL);
    wt_olock_unlock(&ep->match_lock);
    *dropped_p = atomic_exchange_explicit(&ep->ndropped, 0, memory_order_relaxed);
    *withdrawn_p = withdrawn;
}

/* ---- setup ---------------------------------------------------------------------------------------- */

static void wc_message_drop(wc_match_entry_t *e, void *arg)
{
    wc_message_put_locked(arg, WU_CONTAINER_OF(e, wc_message_t, match));
}

void wc_pt2pt_release(wc_ep_t *ep)
{
    if (ep->match) {
        /* messages nobody received (an erroneous program, or one that sent to a rank that left) */
        size_t n = wc_match_unexpected_sweep(ep->match, wc_message_drop, ep);
        if (n)
            wu_debug("%zu unexpected messages never received", n);
        wc_match_destroy(ep->match);
        ep->match = NULL;
    }
    for (int dst = 0; ep->peers && dst < wc_ep_npeers(ep); dst++) {
        /* control packets that never found ring space; others are embedded in requests */
        wu_list_t *e, *next;
        for (e = ep->peers[dst].pending.next; e != &ep->peers[dst].pending; e = next) {
            next = e->next;
            wc_sendop_t *op = WU_CONTAINER_OF(e, wc_sendop_t, link);
            if (op->pooled)
                free(op);
        }
    }
    free(ep->peers);
    ep->peers = NULL;
    for (unsigned c = 0; c <= WC_MSG_CLASSES; c++) {
        wc_message_t **head = c < WC_MSG_CLASSES ? &ep->cls_free[c] : &ep->msg_free;
        while (*head) {
            wc_message_t *m = *head;
            *head = m->next_free;
            free(m);
        }
        if (c < WC_MSG_CLASSES)
            ep->cls_nfree[c] = 0;
    }
    ep->msg_nfree = 0;
}

/* ---- typed operations ------------------------------------------------------------------------- */
/* Contiguity is decided here, once per call, from the layout's flag: a contiguous layout is the
 * byte path above with nothing more; any other gets a cursor that packs or unpacks its data in
 * place, packet by packet (wc_pack_fill, wc_recv_copy_in). */

wu_status_t wc_isend_dt(wc_ep_t *ep, wc_request_t *req, const void *buf, uint64_t count,
                        const wc_dtype_t *dt, int dst, int tag, uint32_t ctx, wc_send_mode_t mode)
{
    /* one call site, so that the start is inlined here */
    const char *p = (const char *)buf + dt->contig_off;
    const wc_dtype_t *cur_dt = NULL;
    if (WU_UNLIKELY(!dt->contig)) {
        wc_dtype_cursor_init(&req->cur, dt, buf, count);
        p = buf;
        cur_dt = dt;
    }
    return wc_isend_start(ep, req, p, count * dt->size, cur_dt, dst, tag, ctx, mode);
}

wu_status_t wc_irecv_dt(wc_ep_t *ep, wc_request_t *req, void *buf, uint64_t count,
                        const wc_dtype_t *dt, int src, int tag, uint32_t ctx)
{
    /* one call site, so that the start is inlined here */
    char *p = (char *)buf + dt->contig_off;
    const wc_dtype_t *cur_dt = NULL;
    if (WU_UNLIKELY(!dt->contig)) {
        wc_dtype_cursor_init(&req->cur, dt, buf, count);
        p = buf;
        cur_dt = dt;
    }
    return wc_irecv_start(ep, req, p, count * dt->size, cur_dt, src, tag, ctx);
}

wu_status_t wc_imrecv_dt(wc_ep_t *ep, wc_request_t *req, void *buf, uint64_t count,
                         const wc_dtype_t *dt, wc_message_t *msg)
{
    if (WU_LIKELY(dt->contig)) {
        wc_recv_init(ep, req, (char *)buf + dt->contig_off, count * dt->size, NULL);
    } else {
        wc_dtype_cursor_init(&req->cur, dt, buf, count);
        wc_recv_init(ep, req, buf, count * dt->size, dt);
    }
    wc_recv_matched_msg(ep, req, msg);
    return WU_OK;
}
