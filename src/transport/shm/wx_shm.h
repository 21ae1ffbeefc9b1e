/* Shared-memory transport, its own interface (the shm unit tests and wx_shm_tl.c, which puts it
 * behind the operations table of wx_transport.h; the core sees only that table): one segment
 * shared by all ranks of the job, linear in their number. A rank's inbox is a pool of per-pair
 * single-producer single-consumer rings, each taken by a sender on its first packet, and one
 * multi-producer queue shared by the senders that found the pool empty; plus single-copy reads of
 * a peer's memory (process_vm_readv) for the rendezvous protocol. Memory formula: docs/shm.md.
 * Ring and record layout: wx_shm_ring_inl.h; queue: wx_shm_mpq_inl.h; segment layout, routes and
 * setup: wx_shm_priv.h, wx_shm.c.
 *
 * Concurrency contract: see wx_transport.h. wx_shm_send is called by the sending rank only;
 * wx_shm_progress by the receiving rank only; no locks inside, correctness comes from the ring and
 * queue protocols (release store of the record stamp, acquire load by the consumer; reservation
 * in the queue by compare-and-swap). Neither allocates nor makes a system call, except a sender's
 * first packet to a destination, which chooses the route once (and maps its pages).
 *
 * The receive callback (wx_recv_fn_t), called from wx_shm_progress in the calling thread:
 *  - hdr and payload point into the ring (shared memory), read-only, 8-byte aligned, valid only
 *    until the callback returns; copy what must outlive it. The space is handed back to the sender
 *    after the callback, so a slow callback holds the sender up, and a rank that stops calling
 *    wx_shm_progress makes its senders' wx_shm_send return WU_ERR_AGAIN.
 *  - Packets from one source arrive in the order sent (a source uses one channel, ring or queue,
 *    to a receiver for the whole job); no order between sources.
 *  - It may call wx_shm_send (to any rank, the source included) and must handle WU_ERR_AGAIN there
 *    by queueing, not by waiting: it must not call wx_shm_progress (a nested call returns 0 and
 *    delivers nothing) nor wx_shm_finalize.
 */
#ifndef WX_SHM_H
#define WX_SHM_H

#include "transport/wx_transport.h"

/* Create or attach the segment (collective over the job through bs: one put by rank 0, one get by
 * the others, three fences), unlink it as soon as every rank has mapped it (the name is gone when
 * init returns on any rank), and detect whether process_vm_readv works between ranks
 * (WEFT_SHM_CMA=auto|1|0; every rank reaches the same answer). On failure every rank returns an
 * error (none is left waiting in a fence). With one rank: no segment, always succeeds.
 * cb is called from wx_shm_progress for every arriving packet. */
wu_status_t wx_shm_init(const wx_bootstrap_t *bs, wx_recv_fn_t cb, void *cb_arg);
void wx_shm_finalize(void);

/* Optional look-ahead: before delivering a batch of two or more packets from one ring, call fn on
 * every packet's header for stage 0, then for stage 1, so the receiver can prefetch what delivery
 * will touch; a call that returns false ends the batch's look-ahead. */
void wx_shm_set_prefetch(wx_prefetch_fn_t fn);

/* Bytes of /dev/shm the segment of a job of n ranks on one node takes with this process's
 * WEFT_SHM_* settings (0 for one rank): what rank 0 would create. */
size_t wx_shm_seg_bytes(int n);

/* Largest payload one packet may carry (at least WEFT_SHM_EAGER_MAX and WEFT_SHM_FRAG_SIZE). */
size_t wx_shm_max_payload(void);

/* Enqueue hdr (WX_HDR_SIZE bytes) and len payload bytes for dst (dst != own rank).
 * WU_OK: copied into the ring, the caller may reuse both buffers. WU_ERR_AGAIN: the ring is full;
 * nothing was written, retry after progress. */
wu_status_t wx_shm_send(int dst, const void *hdr, const void *payload, size_t len);

/* wx_shm_send with the payload written by fill(arg, dst, len) straight into the ring record (a
 * pack engine streaming non-contiguous data: no copy through a contiguous buffer). fill is called
 * only when there is room, before the record is published; WU_ERR_AGAIN: it was not called. */
wu_status_t wx_shm_send_fill(int dst, const void *hdr, size_t len, wx_fill_fn_t fill, void *arg);

/* Deliver arrived packets (at most a small batch per ring) through the callback.
 * Returns the number of packets delivered. */
int wx_shm_progress(void);

/* The doorbell of this rank (for a thread about to sleep until a packet arrives):
 *   seq = wx_shm_doorbell_arm(); poll once more; if still nothing:
 *   wx_shm_doorbell_sleep(seq, short); poll; wx_shm_doorbell_sleep(seq, long); ...; disarm.
 * Senders ring it after a push when they see it armed; they read `armed` without a fence, so a
 * packet pushed at the very moment of arming may not ring: the first, short sleep bounds that
 * delay. wx_shm_doorbell_ring may also be called by this rank's own threads to wake its sleeper. */
uint32_t wx_shm_doorbell_arm(void);
void wx_shm_doorbell_disarm(void);
void wx_shm_doorbell_sleep(uint32_t seq, uint64_t timeout_ns);
void wx_shm_doorbell_ring(int rank);

/* true when rendezvous may read a peer's memory directly. The same on every rank; false with one
 * rank. */
bool wx_shm_has_cma(void);

/* Copy len bytes (any size: split below the kernel's 2 GiB per call) at address remote_addr of
 * rank src's address space into local buf (one copy, process_vm_readv). The caller keeps the
 * remote buffer alive until the reader says it is done (the FIN packet). WU_ERR_UNSUPPORTED when
 * wx_shm_has_cma() is false; WU_ERR_IO if the kernel refuses (logged). */
wu_status_t wx_shm_get(int src, void *buf, uint64_t remote_addr, size_t len);

/* wx_shm_get into the niov local pieces of iov (their lengths sum to len) from the contiguous
 * remote range [remote_addr, remote_addr + len): one process_vm_readv per at most 1024 pieces
 * (IOV_MAX) or wx_shm_get_chunk bytes. iov is left modified. */
struct iovec;
wu_status_t wx_shm_getv(int src, struct iovec *iov, int niov, uint64_t remote_addr, size_t len);

/* Copy len bytes of local buf to address remote_addr of rank dst (one copy, process_vm_writev),
 * split and looped like wx_shm_get. The receiver keeps its buffer alive until the transfer ends. */
wu_status_t wx_shm_put(int dst, const void *buf, uint64_t remote_addr, size_t len);

/* Cooperative rendezvous slots (docs/shm.md "Cooperative rendezvous"): the shared words through
 * which the two ranks of one large message claim and finish its chunks, so that either may copy
 * any chunk (the receiver by wx_shm_get, the sender by wx_shm_put or through the ring) and the
 * message ends when all are done. A slot belongs to the sender's inbox block; its token (slot
 * index and a generation) travels in the RTS and names it to the receiver.
 *   wx_shm_coop_open   sender, any thread: a free slot, reset for a new message; WU_ERR_AGAIN
 *                      when all WX_SHM_COOP_SLOTS are in use (the caller takes the old path).
 *   wx_shm_coop_close  sender, once the message ended: the slot may be reused; a late claim of
 *                      the old message fails.
 *   wx_shm_coop_valid  receiver: is tok a slot token of rank owner (a peer's value, checked)?
 *   wx_shm_coop_claim  either side, any thread: up to max consecutive unclaimed chunks of n;
 *                      returns how many (0: all are claimed, or the slot moved on to another
 *                      message), the first in *idx_p.
 *   wx_shm_coop_finish after copying k claimed chunks (failed: the copy failed): true for the
 *                      call that completed the n chunks (*failed_p: some chunk failed); that
 *                      caller ends the message.
 *   wx_shm_coop_count  WX_SHM_COOP_FSENT: add k to the chunks the sender pushed through the ring
 *                      (before finishing them; final once they are all done); WX_SHM_COOP_CONSUMED:
 *                      the receiver copied k of them out (ignored, and 0 read, once the slot
 *                      moved on to another message), read by the sender to pace its pushes.
 *                      Returns the new value; k = 0 reads it. Sequentially consistent.
 *   wx_shm_coop_next   the next unclaimed chunk (the claim word's low half; generation unchecked),
 *                      for a rank that watches whether its peer is copying. */
#define WX_SHM_COOP_SLOTS 32
enum { WX_SHM_COOP_FSENT, WX_SHM_COOP_CONSUMED };
wu_status_t wx_shm_coop_open(uint64_t *tok_p);
void wx_shm_coop_close(uint64_t tok);
bool wx_shm_coop_valid(int owner, uint64_t tok);
uint32_t wx_shm_coop_claim(int owner, uint64_t tok, uint32_t n, uint32_t max, uint32_t *idx_p);
bool wx_shm_coop_finish(int owner, uint64_t tok, uint32_t n, uint32_t k, bool failed,
                        bool *failed_p);
uint32_t wx_shm_coop_count(int owner, uint64_t tok, int which, uint32_t k);
uint32_t wx_shm_coop_next(int owner, uint64_t tok);

/* Offers announced to a computing receiver (docs/shm.md, "Cooperative rendezvous"): a rank whose
 * application posted a receive that an offer may fill, and went back to computing, has its engine's
 * timer sleep on a word of its doorbell line instead of a private one; a sender that pushed an
 * offer to it wakes that sleep, so the offer is matched at once rather than at the next tick.
 *   wx_shm_offer_watch  this rank, under the core's matching lock: whether offers should wake it.
 *   wx_shm_offer_busy   this rank, any thread: a thread polls as of now_ns (CLOCK_MONOTONIC), or
 *                       none does (0). A sender does not wake a rank that polled within the
 *                       last WX_SHM_OFFER_BUSY_NS: the rank will see the offer itself, and the
 *                       wake-up would preempt its polling thread.
 *   wx_shm_offer_seq    this rank's timer thread, before it polls: the wake-ups' count.
 *   wx_shm_offer_sleep  then: sleep until deadline_ns (CLOCK_MONOTONIC, absolute) unless the count
 *                       moved from seq (an offer's wake-up, or wx_shm_offer_wake(own rank), since
 *                       the poll); may return early, spuriously.
 *   wx_shm_offer_wake   any rank, any thread, after pushing an offer to dst: wake dst's timer if
 *                       dst watches and is not busy (the push and the look at the watch are
 *                       ordered by a fence,
 *                       as are the watch and the look at the rings that follows it on dst);
 *                       dst = this rank: wake its own timer, watched or not. */
#define WX_SHM_OFFER_BUSY_NS 50000u
void wx_shm_offer_watch(bool on);
void wx_shm_offer_busy(uint64_t now_ns);
uint32_t wx_shm_offer_seq(void);
void wx_shm_offer_sleep(uint32_t seq, uint64_t deadline_ns);
void wx_shm_offer_wake(int dst);

/* Where ranks wait (WX_CAP_PEER_CPU): with more ranks than CPUs, a waiter whose peer runs on
 * another CPU may spin a little before it yields, since the peer may be answering right now, while
 * a waiter whose peer shares its CPU yields at once (the peer cannot run until it does; core's
 * wc_wait.c).
 *   wx_shm_cpu_set   this rank, any thread about to wait: it runs on CPU cpu (>= 0). A relaxed
 *                    store, only when the value changes.
 *   wx_shm_peer_cpu  any rank: the CPU that local rank peer last said, or -1 (not yet). A hint:
 *                    the peer may have moved since. */
void wx_shm_cpu_set(int cpu);
int wx_shm_peer_cpu(int peer);

#endif
