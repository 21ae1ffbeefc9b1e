/* The endpoint: everything the core's protocols need to talk to the ranks of one job, in one
 * object passed explicitly (no process-wide singleton): the matching engine and its lock, the
 * unexpected-message pool, the peer table (per peer: transport, its send entry points and limits,
 * send queue), the pending counters, the transports it polls, its progress task and the packet
 * handlers. A process has one default endpoint (wc_ep_default, made by wc_init over PMI); a unit
 * test builds a small job of endpoints in one process (wc_ep_create, then one transport per peer
 * with wc_ep_deliver as the receive callback and the endpoint as its argument, wc_ep_peer_set,
 * wc_ep_start) and moves it with wc_ep_progress.
 *
 * Every operation reaches its endpoint explicitly: the transport's receive callback argument is
 * the endpoint, a request records it (req->ep) for cancel and the rendezvous, and wc_isend,
 * wc_irecv, ... take it from the caller.
 *
 * Concurrency contract:
 *   - Set-up (wc_ep_create/init, wc_handler_register, wc_ep_peer_set, wc_ep_start): one thread,
 *     before any operation on the endpoint; the fields they write are read-only afterwards.
 *   - Operations (wc_isend, wc_irecv, wc_cancel_recv, wc_iprobe, ...): any thread, concurrently.
 *     match_lock (a spinlock) guards the matching engine and the unexpected-message pool (match,
 *     msg_free, cls_free, cls_nfree, unexp_bytes); a peer's lock guards its send queue and the producer side of its
 *     transport (wc_pt2pt.c states the protocol). Neither is held while calling the other's code
 *     nor while completing a request.
 *   - Progress (wc_ep_progress, or the endpoint's ltask in the progression engine): one thread at
 *     a time (the ltask's queue mask; a test that calls wc_ep_progress from several threads must
 *     serialize them), concurrently with operations. Packet handlers run inside it and may send.
 *   - wc_ep_destroy / wc_ep_fini: once, when nothing else runs on the endpoint.
 * Hot path: the matching lock, the matching engine and the peer table are fields of the endpoint
 * (one load from it; the default endpoint is a static object, so from the MPI layer not even
 * that).
 */
#ifndef WC_EP_H
#define WC_EP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/wc_match.h"
#include "core/wc_proto.h"
#include "progress/wp_ltask.h"
#include "thread/wt_olock.h"
#include "thread/wt_thread.h"
#include "transport/wx_transport.h"
#include "util/wu_compiler.h"
#include "util/wu_list.h"
#include "util/wu_status.h"

typedef struct wc_ep wc_ep_t;
typedef struct wc_message wc_message_t;

/* A packet handler: hdr, payload and len as the transport delivered them (valid during the call).
 * Runs inside a transport's progress (or inside a send to self); may send, must not wait. */
typedef void (*wc_handler_fn_t)(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload,
                                size_t len);

/* A peer: its transport, that transport's send entry points and limits (copied: what a send reads
 * sits on the peer's first line, one load from the table, one indirect call into the transport)
 * and its send queue. tl, send, send_fill, direct and the limits are written by wc_ep_peer_set
 * before the first send and read-only afterwards. */
typedef struct wc_peer {
    wt_olock_t    lock;          /* owner-biased (wt_olock.h) */
    _Atomic bool  queued;         /* written under lock: pending is not empty; read without it */
    bool          direct;         /* tl delivers inside send (WX_CAP_INLINE_DELIVERY, self):
                                     sent without the lock, never queued */
    uint32_t      leave_gen;      /* lock: wc_leave_gen when pending was last purged */
    wu_status_t (*send)(wx_tl_t *tl, int dst, const void *hdr, const void *payload, size_t len);
    wx_tl_t      *tl;
    size_t        eager_max;
    wu_list_t     pending;        /* lock: packets waiting for ring space, in send order */
    /* second line: packed sends, bulk and pipelined rendezvous */
    wu_status_t (*send_fill)(wx_tl_t *tl, int dst, const void *hdr, size_t len, wx_fill_fn_t fill,
                             void *arg);
    size_t        bulk_eager_max;
    size_t        frag_size;
} WU_ALIGNED(WU_CACHELINE) wc_peer_t;

/* Protocol limits that hold towards every other rank of the endpoint (the most restrictive of
 * their transports' attributes; the self transport's when the job has one rank), for code that
 * does not send to one peer: collectives choosing an algorithm, the dynamic broadcast. Set by
 * wc_ep_start, read-only afterwards. A message to one peer uses that peer's limits instead. On
 * several nodes the ranks' peers differ (a node's only rank has no shm peer), so wc_core.c makes
 * the limits the job's: the most restrictive over every rank's, or ranks would choose different
 * collective algorithms and packet sizes for one operation. */
typedef struct wc_limits {
    size_t eager_max;      /* smallest eager limit */
    size_t max_payload;    /* smallest packet */
    size_t frag_size;      /* smallest fragment */
    size_t get_bulk_min;   /* largest bulk single-copy threshold; 0: some peer has none */
} wc_limits_t;

#define WC_EP_TL_MAX 4     /* transports polled by one endpoint */
#define WC_EP_DYN_MAX 256  /* processes of other jobs one endpoint can reach (docs/dynamic.md) */
/* Unexpected-message storage size classes (wc_pt2pt.c): payloads above the descriptor's inline
 * bytes and up to WC_MSG_CLASS_MAX bytes are rounded up to a quarter power of two (at most 25%
 * more) and kept for reuse per class, a bounded number each; larger ones are allocated exactly. */
#define WC_MSG_CLASSES   36
#define WC_MSG_CLASS_MAX 65536

struct wc_ep {
    /* Hot: what a send, a receive and delivery read first. */
    wc_peer_t     *peers;          /* [size] */
    wc_match_t    *match;          /* match_lock */
    int            rank, size;     /* this endpoint's rank in its job, and the job's size */
    _Atomic int    npending;       /* destinations with a non-empty pending queue */
    _Atomic int    npoll;          /* set-up, or wc_ep_peer_add (release after the entry) */
    struct {                       /* transports whose progress delivers packets */
        int      (*progress)(wx_tl_t *tl);   /* tl->ops->progress, copied: one indirect call */
        wx_tl_t   *tl;
    } poll[WC_EP_TL_MAX];
    wt_olock_t     match_lock WU_ALIGNED(WU_CACHELINE);
    wc_message_t  *msg_free;       /* match_lock: free descriptors with inline payload room */
    uint32_t       msg_nfree;      /* match_lock: how many (bounded) */
    uint32_t       cls_nfree[WC_MSG_CLASSES];       /* match_lock */
    wc_message_t  *cls_free[WC_MSG_CLASSES];        /* match_lock: free messages per size class */
    size_t         unexp_bytes;    /* match_lock: bytes the stored unexpected messages take */
    size_t         unexp_max;      /* match_lock: budget for unexp_bytes (WEFT_UNEXPECTED_MAX); 0:
                                      none. Set up by wc_init, changed by MPI_T (wc_ep_unexp_max_set) */
    /* Written under match_lock with relaxed atomic stores, read by MPI_T without it: */
    size_t         unexp_nmsgs;    /* unexpected messages stored now */
    size_t         unexp_hwm;      /* the most stored at once since wc_ep_init */
    /* Cold. */
    wc_limits_t    limits;         /* set by wc_ep_start */
    _Atomic size_t ndropped;       /* packets of abandoned sends dropped (wc_quiesce), for the log */
    void          *dyn_incoming;   /* delivery only: dynamic broadcasts whose FRAGs are arriving */
    _Atomic uint32_t ctx_next;     /* rank 0 only: the job's next free context id (wc_ctx.c) */
    wp_ltask_t     ltask;          /* progress task (wc_ep_start submits it to the engine) */
    bool           started;
    int            cap;            /* peer table slots: size, plus WC_EP_DYN_MAX (dynamic peers) */
    _Atomic int    npeers;         /* slots in use: size, then one more per wc_ep_peer_add */
    wc_handler_fn_t handlers[256]; /* indexed by the header's type byte, every entry set */
    /* Cooperative rendezvous under way (wc_pt2pt.c): requests whose chunks this rank may still
     * copy. coop_lock guards the list (any thread: the handlers that add and remove, the waiting
     * threads that copy); ncoop mirrors its length for a lock-free look. */
    wt_spinlock_t  coop_lock WU_ALIGNED(WU_CACHELINE);
    wu_list_t      coop;
    _Atomic int    ncoop;
};

/* The process's endpoint (made by wc_init). A static object: its address is a constant. */
extern wc_ep_t wc_ep_dflt;
static inline wc_ep_t *wc_ep_default(void)
{
    return &wc_ep_dflt;
}

/* Initialize ep in place as rank `rank` of a job of `size`: matching, the pool, an empty peer
 * table, the core's handlers. wc_ep_create allocates it. */
wu_status_t wc_ep_init(wc_ep_t *ep, int rank, int size);
wu_status_t wc_ep_create(int rank, int size, wc_ep_t **ep_p);
/* wx_recv_fn_t of every transport of an endpoint: arg is the endpoint. */
void wc_ep_deliver(int src, const void *hdr, const void *payload, size_t len, void *arg);
/* A packet from src whose header breaks the protocol (no such type, a length that is not its
 * payload's, a request token this rank never made, a fragment outside its message, a route naming
 * no rank...), found by a handler before it reads or copies anything the header names. Logs what
 * is wrong, naming the sender and the field, and ends the job through wc_fatal (MPI_ERR_INTERN).
 * Any handler, inside delivery; does not return. */
void wc_proto_error(const wc_ep_t *ep, int src, const wc_hdr_t *hdr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noreturn, noinline, cold));
/* Set the handler of a packet type (set-up). */
void wc_handler_register(wc_ep_t *ep, wc_pkt_type_t type, wc_handler_fn_t fn);
/* Reach rank `peer` through tl (set-up, once per peer, before any send). A transport that delivers
 * inside send (self) is called without the peer's lock and never queued; the others are polled. */
void wc_ep_peer_set(wc_ep_t *ep, int peer, wx_tl_t *tl);
/* Run time, any thread (dynamic processes): take the next free slot beyond the job's ranks for a
 * process of another job reached through tl, and make it usable (its id in *peer_p). tl joins the
 * polled transports if it is new. The caller publishes the id (in a communicator) only after this
 * returns. WU_ERR_NO_MEMORY when the table is full. */
wu_status_t wc_ep_peer_add(wc_ep_t *ep, wx_tl_t *tl, int *peer_p);
/* Slots in use (the job's ranks and the dynamic peers). */
static inline int wc_ep_npeers(wc_ep_t *ep)
{
    return atomic_load_explicit(&ep->npeers, memory_order_acquire);
}
/* After every peer is set: derive the limits; with submit, hand the progress task to the
 * progression engine (a unit test may instead call wc_ep_progress itself). */
void wc_ep_start(wc_ep_t *ep, bool submit);
/* What wc_ep_start(ep, true) does after the limits: submit the progress task. For a caller that
 * adjusts ep->limits in between (wc_core.c: the limits a job on several nodes agrees on). */
void wc_ep_submit(wc_ep_t *ep);
/* Poll the transports once, push queued packets; returns how much was done (0: nothing). */
int wc_ep_progress(wc_ep_t *ep);
/* Packets wait for transport room somewhere (only polling moves them). */
static inline bool wc_ep_sends_pending(wc_ep_t *ep)
{
    return atomic_load_explicit(&ep->npending, memory_order_relaxed) > 0;
}
/* MPI_T (any thread, any time): the unexpected messages stored now and the most at once; a new
 * budget for their bytes (0: none), used from the next message on. */
void wc_ep_unexp_stats(wc_ep_t *ep, size_t *nmsgs_p, size_t *hwm_p);
void wc_ep_unexp_max_set(wc_ep_t *ep, size_t max);
/* Release what ep holds (unreceived messages, queued control packets); the transports are the
 * caller's. wc_ep_destroy also frees an endpoint of wc_ep_create. */
void wc_ep_fini(wc_ep_t *ep);
void wc_ep_destroy(wc_ep_t *ep);

#endif
