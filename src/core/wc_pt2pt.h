/* Internal to the core: the point-to-point engine's setup and its transport callback. */
#ifndef WC_PT2PT_H
#define WC_PT2PT_H

#include "core/wc_core.h"
#include "progress/wp_ltask.h"

wu_status_t wc_pt2pt_init(void);
void wc_pt2pt_finalize(void);
/* Reach world rank `peer` through tl (before any send to it; called once per rank by wc_init).
 * A transport that delivers inside send (self) is called without the peer's lock and never
 * queued; the others are polled by the progress task. */
void wc_pt2pt_peer_set(int peer, wx_tl_t *tl);
bool wc_pt2pt_sends_pending(void);     /* packets wait for ring space somewhere */

/* A packet handler: hdr, payload and len as the transport delivered them (valid during the call).
 * Runs inside a transport's progress (or inside a send to self); may send, must not wait. */
typedef void (*wc_handler_fn_t)(int src, const wc_hdr_t *hdr, const void *payload, size_t len);
/* Set the handler of a packet type, before the transports start (wc_init). */
void wc_handler_register(wc_pkt_type_t type, wc_handler_fn_t fn);
/* Send a header-only packet (control: ACK, FIN, CTS, ...) to dst, queued behind dst's pending
 * packets if the transport has no room. Any thread, inside a handler too. */
void wc_pt2pt_send_ctrl_hdr(int dst, const wc_hdr_t *hdr);

/* Context ids (wc_ctx.c): registers the CTX_REQ/CTX_REP handlers; before the transports start. */
void wc_ctx_init(void);
/* wx_recv_fn_t: one arriving packet. */
void wc_pt2pt_deliver(int src, const void *hdr, const void *payload, size_t len, void *arg);
/* wc_quiesce's part here: drop the queued packets of abandoned sends, withdraw abandoned posted
 * receives; *dropped_p and *withdrawn_p count them. Call after bumping wc_leave_gen. */
void wc_pt2pt_quiesce(size_t *dropped_p, size_t *withdrawn_p);
/* REPEAT ltask: poll the transports, push queued packets. */
wp_task_result_t wc_pt2pt_progress_task(void *arg);

#endif
