/* One-sided communication with targets on other nodes: messages handled by the target's
 * progression engine (docs/rma.md, "Across nodes").
 *
 * A window whose processes span several nodes keeps the one-node path (wc_rma.h: loads, stores,
 * single copies, the segment's lock words) between the processes of a node, and reaches a process
 * of another node with WC_PKT_RMA packets. The target applies each in its packet handler, inside
 * its progress: from an explicit polling point, an idle thread or the timer thread, so a target
 * that computes outside MPI still serves Put, Get, accumulates and locks. The handler takes the
 * same words of the target's node segment as its node's CPU path (lock word, accumulate mutex,
 * PSCW counters), so atomicity and locks hold between node-local accesses and messages alike.
 *
 * Ordering: packets of one pair arrive in send order (WX_CAP_ORDERED, every transport) and one
 * thread delivers at a time, so a target applies one origin's operations in issue order. Put and
 * Accumulate are sent and forgotten (their data is copied into the packet: they are complete at
 * the origin when the call returns); a flush is a FLUSH packet whose answer comes after every
 * earlier operation was applied. Get, Get_accumulate, Fetch_and_op and Compare_and_swap wait for
 * their answer, sent once the target's update is written: they are complete at the target when
 * they return, and a flush need not cover them. Operations larger than a packet go as fragments
 * (accumulates split on element boundaries, each fragment atomic per element under the accumulate
 * mutex).
 *
 * Concurrency contract: every function may be called by any thread at any time on a registered
 * window (MPI_THREAD_MULTIPLE, no library-wide lock); the origin's waits poll progress. A
 * wc_rma_win_t's fields are written before wc_rma_win_register and read-only afterwards except
 * sent[], flushed[] and err (atomics). The window table is process-wide on purpose (windows live
 * on the default endpoint): a slot is taken and freed by compare-and-swap and store, looked up by
 * acquire loads, no lock. A window is
 * unregistered only when no packet for it can still come (MPI_Win_free's barrier follows closed
 * epochs, whose last packets were answered).
 */
#ifndef WC_RMA_MSG_H
#define WC_RMA_MSG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "core/wc_ep.h"
#include "core/wc_rma.h"
#include "transport/wx_transport.h"

/* reduce(op, basic, in, inout, bytes): inout = in op inout over a packed stream of elements of the
 * predefined type basic (handles, the standard ABI's constants). false: out of memory. */
typedef bool (*wc_rma_reduce_fn_t)(uint64_t op, uint64_t basic, const void *in, void *inout,
                                   uint64_t bytes);

/* A target's fabric writes under way (the transport's win_write); the completion callback's
 * argument. */
typedef struct wc_rma_wtgt {
    struct wc_rma_win *w;
    _Atomic uint64_t out;     /* started, not yet delivered (raised by the origin before the
                                 start, lowered by the completion on the progressing thread) */
} wc_rma_wtgt_t;

typedef struct wc_rma_win {
    uint32_t       id;        /* the same in every process of the window, unique among live ones */
    int            n, me;     /* processes, this one's rank */
    const int     *world;     /* [n] window rank -> endpoint rank */
    wc_ep_t       *ep;
    wc_rma_seg_t  *seg;       /* this node's segment: peers[me] words, post matrix, regions */
    char          *base;      /* this process's window memory (dynamic: NULL, offsets are
                                 addresses) */
    uint64_t       size;
    bool           dynamic;
    wc_rma_reduce_fn_t reduce;
    _Atomic uint64_t *sent;   /* [n]: sent-and-forgotten operations sent to that target, ever */
    _Atomic uint64_t *flushed;/* [n]: how many of them a flush's answer covered */
    _Atomic int    err;       /* the first error a target reported for a sent-and-forgotten
                                 operation (wu_status_t), taken by the next flush */
    /* The transport's RMA (docs/rma.md, "Across nodes"): written by the creating call before the
     * window handle is returned (after wc_rma_win_register, but before this process issues any
     * operation; no handler reads them), read-only afterwards. */
    bool           fabric;    /* Put/Get of contiguous target data by tl's win_write and get */
    struct wx_tl  *tl;        /* the one transport of every remote target (fabric only) */
    wx_rkey_t     *rkey;      /* [n]: each process's registered window memory (fabric only) */
    void          *reg;       /* this process's registration (win_dereg at free), or NULL */
    wc_rma_wtgt_t *wtgt;      /* [n]: fabric writes under way per target */
} wc_rma_win_t;

/* Where an operation's data lies at the target: the byte offset of its first element (an address
 * for dynamic windows) and the bytes it spans, [lo, hi) (offsets in the window, or addresses),
 * which the target checks against its memory or its attached regions. */
typedef struct wc_rma_where {
    uint64_t off, lo, hi;
} wc_rma_where_t;

/* Registers the handlers of ep (wc_ep_init). */
void wc_rma_msg_init(wc_ep_t *ep);
/* The window's creating thread, the only one in the library (window creation is collective, and
 * below MPI_THREAD_MULTIPLE one thread calls at a time): starts the engine's timer thread if none
 * runs (wp_engine_start_timer), so that this process serves other nodes' origins while it
 * computes. WU_ERR_NO_MEMORY: too many windows across nodes at once. */
wu_status_t wc_rma_win_register(wc_rma_win_t *w);
void wc_rma_win_unregister(wc_rma_win_t *w);

/* Operations on target t (another node). Errors: WU_ERR_INVALID the target found the data
 * outside its memory (MPI_ERR_RMA_RANGE), WU_ERR_UNSUPPORTED a target layout too large for a
 * packet, WU_ERR_NO_MEMORY. Put and acc without result report a target's error at the next
 * flush instead. */
wu_status_t wc_rma_msg_put(wc_rma_win_t *w, int t, const wc_rma_where_t *at, const wc_dtype_t *dt,
                           uint64_t count, const void *packed);
wu_status_t wc_rma_msg_get(wc_rma_win_t *w, int t, const wc_rma_where_t *at, const wc_dtype_t *dt,
                           uint64_t count, void *packed);
/* Accumulate (result NULL) or Get_accumulate; in NULL for MPI_NO_OP; esize: packed bytes of one
 * element of the basic type. */
wu_status_t wc_rma_msg_acc(wc_rma_win_t *w, int t, const wc_rma_where_t *at, const wc_dtype_t *dt,
                           uint64_t count, uint64_t op, uint64_t basic, uint64_t esize,
                           const void *in, void *result);
wu_status_t wc_rma_msg_cas(wc_rma_win_t *w, int t, const wc_rma_where_t *at, uint64_t size,
                           const void *origin, const void *compare, void *result);
/* Passive target: one attempt at t's lock word (true: taken); release (answered, so everything
 * sent before is applied when it returns). */
bool wc_rma_msg_lock(wc_rma_win_t *w, int t, bool exclusive);
void wc_rma_msg_unlock(wc_rma_win_t *w, int t, bool exclusive);
/* The transport's RMA (w->fabric): Put and Get of contiguous target data. WU_ERR_AGAIN: not for
 * this path (not fabric, or the target data is not contiguous): use the messages above. A Put
 * returns once its write is started (buf, the origin's own contiguous buffer, stays in use until
 * the next flush, flush_local, unlock, complete or fence: the standard's rule); a Get once the
 * data is here. Errors: WU_ERR_IO (logged); a Put's write error is reported at the next flush. */
wu_status_t wc_rma_net_put(wc_rma_win_t *w, int t, const wc_rma_where_t *at, const wc_dtype_t *dt,
                           uint64_t count, const void *buf);
wu_status_t wc_rma_net_get(wc_rma_win_t *w, int t, const wc_rma_where_t *at, const wc_dtype_t *dt,
                           uint64_t count, void *packed);
/* Waits until the fabric writes to t (t == -1: every target) are delivered, polling progress;
 * flush, flush_all, unlock and complete below do it first. Returns and clears err. */
wu_status_t wc_rma_msg_flush_local(wc_rma_win_t *w, int t);
/* Everything sent to t (every target) so far is applied; returns and clears err. */
wu_status_t wc_rma_msg_flush(wc_rma_win_t *w, int t);
wu_status_t wc_rma_msg_flush_all(wc_rma_win_t *w, const bool *remote);
/* PSCW: MPI_Win_post's word to origin o, MPI_Win_complete's to target t. */
void wc_rma_msg_post(wc_rma_win_t *w, int o);
void wc_rma_msg_complete(wc_rma_win_t *w, int t);
/* Waits until *c >= v, polling progress (the counter may be moved by a packet). */
void wc_rma_wait_ge_poll(_Atomic uint32_t *c, uint32_t v);

#endif
