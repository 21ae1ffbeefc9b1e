/* The libfabric transport's constructor and what weft-info asks of it: all the core and the tools
 * need to know of it. Built from wx_ofi.c when CMake found libfabric (WEFT_WITH_OFI), else from
 * wx_ofi_none.c, whose constructor fails with WU_ERR_UNSUPPORTED and says why. */
#ifndef WX_OFI_H
#define WX_OFI_H

#include "transport/wx_transport.h"

/* Was Weft built with libfabric? */
extern const bool wx_ofi_built;

/* wx_create_fn_t, collective over the whole job (every rank calls it, or none): opens one FI_EP_RDM
 * endpoint on the provider wx_ofi_providers chooses, posts WEFT_OFI_RX_BUFS receive buffers,
 * exchanges the endpoints' names and the job key through bs (put, fence, get) and inserts every
 * rank's address into the address vector. A rank that cannot open libfabric still takes part in
 * the exchange (it publishes "-"), so that every rank fails alike instead of waiting in the fence.
 * Attributes from WEFT_OFI_EAGER_MAX, _FRAG_SIZE (docs/tuning.md). One instance per process. */
wu_status_t wx_ofi_create(const wx_bootstrap_t *bs, wx_recv_fn_t cb, void *cb_arg, wx_tl_t **tl_p);

/* Do the local part of wx_ofi_create for job rank `rank` of `size` (loading libfabric, choosing
 * the provider, opening the endpoint: the slow part, docs/ofi.md "Start-up") in a thread, so that
 * it overlaps the rest of the job's start-up; wx_ofi_create takes the result. Called by the core's
 * start-up thread when the job spans nodes, or the launcher says it will; a second call, or
 * WEFT_OFI_PREFETCH=0, does nothing. wx_ofi_prefetch_end waits for a prefetch that wx_ofi_create
 * did not take (the transport is not used after all, or start-up failed) and drops it. Both do
 * nothing without libfabric. */
void wx_ofi_prefetch(int rank, int size);
void wx_ofi_prefetch_end(void);

/* The providers libfabric offers for Weft's needs (FI_EP_RDM, FI_MSG, send-after-send order; with
 * FI_PROVIDER applied by libfabric itself), in libfabric's order, and the one chosen: fn is called
 * once per offer. rank orders the kinds (lower is preferred): 0 hardware (verbs, efa, cxi, psm3,
 * opx, psm2), 1 tcp;ofi_rxm, 2 tcp, 3 anything else (sockets, udp;ofi_rxd), 4 shm (one node
 * only). The first offer of the lowest rank is chosen. Returns WU_ERR_UNSUPPORTED without
 * libfabric, WU_ERR_NOT_FOUND when nothing fits. Any thread; does not need a job. */
typedef void (*wx_ofi_offer_fn_t)(const char *prov, const char *fabric, const char *domain,
                                  int rank, bool rma, bool chosen, void *arg);
wu_status_t wx_ofi_providers(wx_ofi_offer_fn_t fn, void *arg);

/* Packets whose job key was wrong or that were malformed, dropped by this process's instance
 * (0 without one). Any thread. */
uint64_t wx_ofi_dropped(void);

#endif
