/* Core requests: one per send or receive, decoupled from the packets that carry them
 * (NewMadeleine). The MPI layer embeds a wc_request_t in its own request object.
 *
 * Concurrency contract: a request is started by one thread; afterwards the core (any thread that
 * runs progress) completes it exactly once, and any one thread may wait for it. `state` is the only
 * field shared by the completer and the waiter:
 *   WC_REQ_PENDING   started, not complete
 *   WC_REQ_COMPLETE  complete; the owner may reuse or free the request at once
 *   WC_REQ_DETACHED  nobody will wait: the completer calls on_complete (bsend, MPI_Request_free)
 *   any other value  a wt_wait_t * of a thread sleeping until completion
 * The completer swaps in COMPLETE (acq_rel) and then touches only what it swapped out (the wait
 * object to wake, or on_complete of a detached request): after the swap the owner may already
 * have freed the request. A waiter installs its wait object by CAS from PENDING and removes it by
 * CAS back; a failed CAS means the request completed.
 */
#ifndef WC_REQUEST_H
#define WC_REQUEST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/wc_dtype.h"
#include "core/wc_match.h"
#include "core/wc_proto.h"
#include "util/wu_compiler.h"
#include "util/wu_list.h"

typedef enum { WC_REQ_SEND = 1, WC_REQ_RECV } wc_req_kind_t;

typedef enum {
    WC_SEND_STANDARD = 0,
    WC_SEND_SYNC,
    WC_SEND_READY,
    WC_SEND_BULK,      /* standard, and a rendezvous prefers the single copy (collectives) */
    WC_SEND_BULK_EAGER,   /* WC_SEND_BULK, eager up to the largest packet (bulk_eager_max) */
} wc_send_mode_t;

/* A packet waiting for room in a transport ring, queued per destination in send order. */
typedef struct wc_sendop {
    wu_list_t link;
    wc_hdr_t  hdr;
    const void *payload;
    size_t    len;
    struct wc_request *req;   /* request completed or advanced when the packet leaves, or NULL */
    bool      pooled;         /* allocated from the control-packet pool */
    bool      pack;           /* the payload is packed by req's cursor (payload unused) */
} wc_sendop_t;

struct wc_ep;

typedef struct wc_request {
    /* Hot: what matching and completion touch, in the first 64 bytes. */
    _Atomic uintptr_t state;
    uint8_t           kind;
    uint8_t           cancelled;     /* WC_CANCEL_*: the operation was cancelled, or asked to */
    uint8_t           sync;          /* send: wait for the receiver's ACK or FIN */
    uint8_t           cma_wait;      /* send: counted in wc_cma_wait_bytes until its FIN or CTS */
    int               error;         /* wu_status_t of the completed operation */
    int               peer;          /* send: destination (world rank) */
    /* completion status (receives): world rank of the source, tag, bytes delivered */
    int               st_source;
    int               st_tag;
    void             *buf;
    size_t            len;           /* send: bytes to send; recv: capacity */
    size_t            st_bytes;
    void            (*on_complete)(struct wc_request *req);   /* detached requests only */
    wc_match_entry_t  match;         /* receive: the posted pattern */
    /* Cold: rendezvous and queued sends. */
    struct wc_ep     *ep;            /* receive: its endpoint (cancel) */
    size_t            msg_len;       /* receive: the whole message's length */
    size_t            arrived;       /* pipelined receive: bytes arrived */
    size_t            frag_off;      /* pipelined send: next offset */
    uint64_t          frag_rreq;     /* pipelined send: the receiver's request; receive by
                                      * get_start: the sender's */
    uint32_t          leave_gen;     /* rendezvous: wc_leave_gen when the send started or the
                                      * receive answered CTS (see wc_quiesce) */
    wc_sendop_t       op;            /* send: the packet of this request while queued */
    wx_rkey_t         rkey;          /* rendezvous send: the buffer as the RTS names it */
    uint8_t           rkey_reg;      /* rendezvous send: rkey is registered until FIN or CTS */
    /* Cooperative rendezvous (wc_pt2pt.c, docs/shm.md): chunks of coop_len bytes claimed through
     * the transport's slot coop_tok (the sender's) and copied by either side. coop_state is
     * written by the thread that starts the send or matches the receive, then under the
     * endpoint's coop_lock; coop_n .. coop_rtok are set before the request enters the
     * endpoint's coop list and read-only while it is there; the _Atomic ones are shared by the
     * threads that copy. */
    uint8_t           coop_state;    /* WC_COOP_*: send: NONE, OPEN (RTS offered it), ACTIVE
                                      * (matched, in the list); receive: NONE, MATCHING, ACTIVE */
    uint8_t           coop_bulk;     /* a collective's message (RTS flag BULK): both sides copy
                                      * runs by single copy from the match, no FRAGs */
    uint32_t          coop_n;        /* chunks of the message */
    uint64_t          coop_tok;      /* the slot's token (sender's transport) */
    uint64_t          coop_raddr;    /* the peer's buffer: send: the receiver's; receive: the
                                      * sender's */
    size_t            coop_len;      /* bytes the receive accepted (truncation) */
    uint64_t          coop_rtok;     /* send: the receive's token (its FRAGs name it) */
    _Atomic uint32_t  coop_seen;     /* the peer's last seen progress (receive: the next chunk;
                                      * send: chunks consumed from the ring) ... */
    _Atomic uint64_t  coop_seen_ns;  /* ... and when it last moved (wc_now_ns) */
    _Atomic uint32_t  coop_consumed; /* receive: its FRAGs copied out, plus WC_COOP_DEFER once
                                      * its chunks are finished (one word: the last of the FRAGs
                                      * and the finish ends it, and the other no longer reads the
                                      * request, which may be reused at once) */
    _Atomic uint8_t   coop_ended;    /* receive: WC_COOP_END_* (wc_pt2pt.c): ended once, by whoever
                                      * ends it; the end waits for the match to be done */
    wu_list_t         coop_link;     /* in ep->coop while MATCHING or ACTIVE */
    /* Typed data: dt non-NULL when buf holds a non-contiguous layout; len is then packed bytes
     * and cur (on buf, dt, count elements) streams them. NULL: buf is len contiguous bytes. */
    const wc_dtype_t *dt;
    wc_dtype_cursor_t cur;
} wc_request_t;

/* wc_request_t.cancelled: set by the thread that cancels (before the request completes again) or
 * by the completer before its completing swap; read by the owner after completion. */
#define WC_CANCEL_NONE  0
#define WC_CANCEL_DONE  1   /* cancelled: the message is not received / nothing was received */
#define WC_CANCEL_ASKED 2   /* a send's cancel was asked for; it may fail (the message arrives) */

/* wc_request_t.coop_state */
#define WC_COOP_NONE   0
#define WC_COOP_OPEN   1
#define WC_COOP_ACTIVE 2
#define WC_COOP_MATCHING 3   /* receive: in the list, its COOP_MATCH not yet handed over */

#define WC_REQ_PENDING  ((uintptr_t)0)
#define WC_REQ_COMPLETE ((uintptr_t)1)
#define WC_REQ_DETACHED ((uintptr_t)2)

static inline bool wc_request_is_complete(const wc_request_t *r)
{
    return atomic_load_explicit(&r->state, memory_order_acquire) == WC_REQ_COMPLETE;
}

/* Handed to the core for good (wc_request_detach): nobody waits, the core completes it. */
static inline bool wc_request_is_detached(const wc_request_t *r)
{
    return atomic_load_explicit(&r->state, memory_order_acquire) == WC_REQ_DETACHED;
}

/* After completion: did a cancel succeed (MPI_Test_cancelled)? */
static inline bool wc_request_cancelled(const wc_request_t *r)
{
    return r->cancelled == WC_CANCEL_DONE;
}

static inline void wc_request_reset(wc_request_t *r)
{
    atomic_store_explicit(&r->state, WC_REQ_PENDING, memory_order_relaxed);
}

/* Request tokens: how a packet names a request of the rank that sent it first (the sender's
 * request in EAGER, RTS, CANCEL_REQ, CTX_REQ; the receiver's in CTS), echoed back by the peer
 * (ACK, FIN, CTS, CANCEL_REP, CTX_REP; FRAG's addr) and turned back into a pointer only by the
 * process that made it. A token is the address (below 2^48, 8-byte aligned) with a 16-bit check
 * of it in the top bits, keyed by a per-process random value (wc_req_key), so that a corrupt
 * or forged value coming back is refused before it is dereferenced: a random value passes with a
 * probability of 2^-19. (A stale but well-formed token of this process is not detected.)
 * The check is the top 16 bits of address x key (mod 2^64, key odd): a multiplicative hash in
 * which every address bit reaches the top bits, one multiply by a memory operand on the send
 * path. wc_req_key is written once by the first wc_ep_init, before any packet, read-only
 * afterwards. */
extern uint64_t wc_req_key __attribute__((visibility("hidden")));

static inline uint64_t wc_req_tag(uint64_t p)
{
    return (p * wc_req_key) >> 48;
}

static inline uint64_t wc_req_token(const void *req)
{
    uint64_t p = (uint64_t)(uintptr_t)req;
    return p | wc_req_tag(p) << 48;
}

/* The object a token names, or NULL if the token is not one this process made. */
static inline void *wc_req_untoken(uint64_t tok)
{
    uint64_t p = tok & ((1ull << 48) - 1);
    if (WU_UNLIKELY((tok >> 48) != wc_req_tag(p) || !p || (p & 7)))
        return NULL;
    return (void *)(uintptr_t)p;
}

#endif
