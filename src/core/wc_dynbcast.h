/* The dynamic broadcast (NewMadeleine's "collectives dynamiques"): one rank sends one buffer to an
 * arbitrary list of ranks that only post ordinary receives. The routing travels with the message:
 * every WC_PKT_DYN packet names the sub-list its receiver must forward to, and the receiver
 * forwards from inside delivery (the transport's progress), whether or not the application has
 * posted the receive, then hands the message to matching as an eager message from the root.
 * Protocol and limits: docs/dynbcast.md.
 *
 * Concurrency contract: wc_idynbcast may be called by any thread (it only sends); wc_dyn_deliver
 * runs in delivery, one thread at a time, and alone touches the table of messages being received.
 * A message's packets may leave from any thread that drains a send queue: what they share (the
 * message's reference count) is atomic, and the last reference frees it.
 */
#ifndef WC_DYNBCAST_H
#define WC_DYNBCAST_H

#include "core/wc_core.h"

/* Send count elements of dt at buf from this rank of ep to the n ranks dsts (distinct, none of
 * them this rank) on (ctx, tag). Each destination receives it as an ordinary message of this
 * rank. req is zeroed and owned by the caller until complete; it completes when every packet this
 * rank sends has left (buf may be reused then; a non-contiguous layout is packed at once, so dt is
 * not used after the call). */
wu_status_t wc_idynbcast(wc_ep_t *ep, wc_request_t *req, const void *buf, uint64_t count,
                         const wc_dtype_t *dt, const int *dsts, int n, int tag, uint32_t ctx);

/* The handler of WC_PKT_DYN packets (wc_handler_fn_t; registered by wc_ep_init). */
void wc_dyn_deliver(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload, size_t len);

/* Internal to the core (wc_pt2pt.c): send req->op (a packet of another protocol, payload
 * contiguous) to dst in order behind dst's queued packets; req completes (wc_request_done) when
 * the packet has left. */
void wc_pt2pt_send_op(wc_ep_t *ep, int dst, wc_request_t *req);

/* Internal to the core (wc_pt2pt.c): take the posted receive that a message from src with (tag,
 * ctx) would match now, out of matching; NULL if none. The caller delivers into it and completes it. */
wc_request_t *wc_pt2pt_take_posted(wc_ep_t *ep, int src, int tag, uint32_t ctx);

/* Internal to the core (wc_pt2pt.c): deliver an EAGER message (hdr) from src whose hdr->len bytes
 * are in data, a malloc'd buffer handed over: kept as the unexpected message's storage without a
 * copy if nothing is posted, else copied into the receive and freed. */
void wc_pt2pt_deliver_owned(wc_ep_t *ep, int src, const wc_hdr_t *hdr, void *data);

#endif
