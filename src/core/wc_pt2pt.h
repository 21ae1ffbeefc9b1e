/* Internal to the core: the point-to-point engine's parts that the endpoint (wc_ep.c), the
 * context-id service and the dynamic broadcast call. The endpoint itself is wc_ep.h. */
#ifndef WC_PT2PT_H
#define WC_PT2PT_H

#include "core/wc_core.h"
#include "core/wc_ep.h"

/* Set every handler of ep: the point-to-point protocols' and wc_on_unknown elsewhere
 * (wc_ep_init). */
void wc_pt2pt_handlers_init(wc_ep_t *ep);
/* wx_prefetch_fn_t (arg: the endpoint): look-ahead over a batch of arriving packets. */
bool wc_pt2pt_prefetch(void *arg, int src, const void *hdr, int stage);
/* Drain every pending queue whose lock is free; returns how many packets left. */
int wc_pt2pt_pending_drain(wc_ep_t *ep);
/* Free the unexpected messages nobody received, the queued control packets and the pools
 * (wc_ep_fini). */
void wc_pt2pt_release(wc_ep_t *ep);

/* Send a header-only packet (control: ACK, FIN, CTS, ...) to dst, queued behind dst's pending
 * packets if the transport has no room. Any thread, inside a handler too. */
void wc_pt2pt_send_ctrl_hdr(wc_ep_t *ep, int dst, const wc_hdr_t *hdr);
/* The same with len payload bytes (at most the peer's transport's max_payload), copied if the
 * packet must wait: the caller may reuse payload at once (one-sided messages, wc_rma_msg.c). */
void wc_pt2pt_send_ctrl(wc_ep_t *ep, int dst, const wc_hdr_t *hdr, const void *payload,
                        size_t len);

/* One step of each of ep's cooperative rendezvous (a chunk through the ring, or a run of them by
 * get or put); returns how many copied. *pending_p (if not NULL) is set when some transfer still
 * has unclaimed chunks: the caller should poll again rather than sleep. Any thread inside an MPI
 * call that waits or tests; never the engine's background threads. */
int wc_pt2pt_coop_progress(wc_ep_t *ep, bool *pending_p);
/* Offers announced to a computing receiver (wc_pt2pt.c): wc_offer_init(the transport with
 * WX_CAP_COOP, or NULL) after the transports are open and the engine's threads started, before
 * traffic; wc_offer_fini before the transports close. One thread (init, finalize). */
void wc_offer_init(struct wx_tl *coop_tl);
void wc_offer_fini(void);

/* Context ids (wc_ctx.c): registers the CTX_REQ/CTX_REP handlers of ep (wc_ep_init). */
void wc_ctx_init(wc_ep_t *ep);
/* wc_quiesce's part here: drop the queued packets of abandoned sends, withdraw abandoned posted
 * receives; *dropped_p and *withdrawn_p count them. Call after bumping wc_leave_gen. */
void wc_pt2pt_quiesce(wc_ep_t *ep, size_t *dropped_p, size_t *withdrawn_p);

#endif
