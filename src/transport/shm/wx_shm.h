/* Shared-memory transport: per-pair single-producer single-consumer rings in one segment shared by
 * all ranks of the job (a rank's inbox is the set of rings whose consumer it is), plus single-copy
 * reads of a peer's memory (process_vm_readv) for the rendezvous protocol.
 *
 * Concurrency contract: see wx_transport.h. wx_shm_send is called by the sending rank only;
 * wx_shm_progress by the receiving rank only; no locks inside, correctness comes from the SPSC
 * ring protocol (release store of the record stamp, acquire load by the consumer).
 */
#ifndef WX_SHM_H
#define WX_SHM_H

#include "transport/wx_transport.h"

/* Create or attach the segment (collective over the job through bs), unlink it as soon as every
 * rank has mapped it, and detect whether process_vm_readv works between ranks
 * (WEFT_SHM_CMA=auto|1|0). cb is called from wx_shm_progress for every arriving packet. */
wu_status_t wx_shm_init(const wx_bootstrap_t *bs, wx_recv_fn_t cb, void *cb_arg);
void wx_shm_finalize(void);

/* Largest payload one packet may carry (at least WEFT_SHM_EAGER_MAX and WEFT_SHM_FRAG_SIZE). */
size_t wx_shm_max_payload(void);

/* Enqueue hdr (WX_HDR_SIZE bytes) and len payload bytes for dst (dst != own rank).
 * WU_OK: copied into the ring, the caller may reuse both buffers. WU_ERR_AGAIN: the ring is full;
 * nothing was written, retry after progress. */
wu_status_t wx_shm_send(int dst, const void *hdr, const void *payload, size_t len);

/* Deliver arrived packets (at most a small batch per ring) through the callback.
 * Returns the number of packets delivered. */
int wx_shm_progress(void);

/* true when rendezvous may read a peer's memory directly. */
bool wx_shm_has_cma(void);

/* Copy len bytes at address remote_addr of rank src's address space into local buf (one copy,
 * process_vm_readv). WU_ERR_IO if the kernel refuses. */
wu_status_t wx_shm_get(int src, void *buf, uint64_t remote_addr, size_t len);

#endif
