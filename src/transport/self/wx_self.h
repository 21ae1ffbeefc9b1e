/* The self transport's constructor: packets from a rank to itself. */
#ifndef WX_SELF_H
#define WX_SELF_H

#include "transport/wx_transport.h"

/* wx_create_fn_t (not collective). send and send_fill deliver through cb before they return
 * (WX_CAP_INLINE_DELIVERY): nothing is queued, progress has nothing to do, there is no doorbell;
 * send never answers WU_ERR_AGAIN. The callback may send to self again (the delivery nests), so
 * the caller must not hold, around send, a lock that delivery takes. get, getv and put copy
 * within the address space. Attributes: the node's limits (WEFT_SHM_EAGER_MAX, WEFT_SHM_FRAG_SIZE)
 * so that a message to oneself follows the same protocol as one to a neighbour; no get threshold
 * (the core copies a self rendezvous directly, request to request). */
wu_status_t wx_self_create(const wx_bootstrap_t *bs, wx_recv_fn_t cb, void *cb_arg, wx_tl_t **tl_p);

#endif
