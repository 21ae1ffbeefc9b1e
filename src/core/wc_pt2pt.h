/* Internal to the core: the point-to-point engine's setup and its transport callback. */
#ifndef WC_PT2PT_H
#define WC_PT2PT_H

#include "core/wc_core.h"
#include "progress/wp_ltask.h"

wu_status_t wc_pt2pt_init(void);
void wc_pt2pt_finalize(void);
void wc_pt2pt_enable_prefetch(void);   /* after the transports are up */
bool wc_pt2pt_sends_pending(void);     /* packets wait for ring space somewhere */
/* wx_recv_fn_t: one arriving packet. */
void wc_pt2pt_deliver(int src, const void *hdr, const void *payload, size_t len, void *arg);
/* wc_quiesce's part here: drop the queued packets of abandoned sends, withdraw abandoned posted
 * receives; *dropped_p and *withdrawn_p count them. Call after bumping wc_leave_gen. */
void wc_pt2pt_quiesce(size_t *dropped_p, size_t *withdrawn_p);
/* REPEAT ltask: poll the transports, push queued packets. */
wp_task_result_t wc_pt2pt_progress_task(void *arg);

#endif
