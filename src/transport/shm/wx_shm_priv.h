/* Internals of the shm transport shared by its files (wx_shm.c: segment, rings, send, progress;
 * wx_shm_cma.c: process_vm_readv). Not for other layers.
 *
 * Segment layout ("/<job_id>-shm", created by rank 0, unlinked once every rank has mapped it):
 *   [0, hdr_bytes)       wx_shm_seg_hdr_t, then one wx_shm_rank_info_t per rank
 *   per receiver r:      an inbox block of block_bytes, page aligned:
 *                          nfast wx_shm_ring_ctl_t, one wx_shm_mpq_ctl_t and WX_SHM_COOP_SLOTS
 *                          wx_shm_coop_slot_t (this rank's as a sender), padded to a page
 *                          the shared queue's data, queue_size bytes (0 when nfast = n - 1)
 *                          nfast ring data areas of ring_size bytes each
 * so the segment grows linearly with the ranks n (not with the pairs):
 *   seg_bytes = hdr_bytes + n * (ctl_bytes + queue_size + nfast * ring_size),
 *   nfast = min(n - 1, WEFT_SHM_FAST_PATHS).
 *
 * Routes. The rings of r's block are a pool of fast paths: a sender's first packet to r takes the
 * next ring (fetch-and-add on r's `claimed` counter) and writes its rank into the ring's owner;
 * when the pool is empty the sender uses r's shared queue (wx_shm_mpq_inl.h). Either choice is
 * final (wx_shm_tx_t.route), so the packets of one source to r travel one FIFO path and arrive in
 * order. A job of at most nfast + 1 ranks (2 ranks, or a ring pattern) has a ring for every pair
 * and no queue at all; an all-to-all of 1000 ranks has 8 rings per receiver and the queue.
 * The receiver activates its rings in claim order as their owners appear (wx_shm_state_t.next).
 *
 * The receiver allocates (first touch, by fallocate) its own inbox block, so on a NUMA machine its
 * rings live next to the core that polls them, and a full /dev/shm is an error at start-up, not a
 * SIGBUS later. A sender maps its pages of a peer's ring or queue on first contact.
 */
#ifndef WX_SHM_PRIV_H
#define WX_SHM_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "transport/shm/wx_shm.h"
#include "transport/shm/wx_shm_ring_inl.h"
#include "transport/shm/wx_shm_mpq_inl.h"

#define WX_SHM_MAGIC 0x5745465453484d32ull   /* "WEFTSHM2" */

/* Written by rank 0 before the first fence, read-only afterwards. */
typedef struct wx_shm_seg_hdr {
    uint64_t magic;
    uint64_t seg_bytes;
    uint64_t ring_size;
    uint64_t queue_size;     /* 0: no shared queues (every pair has a ring) */
    uint32_t nranks;
    uint32_t nfast;          /* rings per receiver */
} WU_ALIGNED(WU_CACHELINE) wx_shm_seg_hdr_t;

/* A rank's doorbell: how a sleeping receiver is woken by its senders. The receiver sets `armed`
 * before it sleeps on `seq` (a process-shared futex) and clears it after; a sender that finds it
 * armed after pushing a packet increments seq and wakes one sleeper. Written by any rank.
 * offer_seq, offer_watch and offer_busy_ns: the same for the rank's engine timer and rendezvous
 * offers only (wx_shm_offer_watch, wx_shm.h): a separate word, so that a ring never wakes the
 * timer in place of the thread that armed the doorbell, nor an offer the other way round.
 * cpu: 1 + the CPU a waiting thread of the rank last ran on, 0 before it said (wx_shm_cpu_set);
 * written by the rank only when it changes, read by the others: in the line the senders read. */
typedef struct wx_shm_doorbell {
    _Atomic uint32_t seq;
    _Atomic uint32_t armed;
    _Atomic uint32_t offer_seq;
    _Atomic uint32_t offer_watch;
    _Atomic uint64_t offer_busy_ns;
    _Atomic uint32_t cpu;
} WU_ALIGNED(WU_CACHELINE) wx_shm_doorbell_t;

/* One per rank, written only by that rank (release stores) before a fence and read by the others
 * (acquire loads) after it. Zero means "not written": a rank that failed to attach leaves ok = 0. */
typedef struct wx_shm_rank_info {
    int32_t ok;              /* 1: mapped and inbox allocated (before fence 2) */
    int32_t pid;             /* before fence 2 */
    uint64_t probe_addr;     /* address of a word in this process, for the CMA probe (fence 2) */
    uint64_t probe_val;      /* the value that word holds */
    int32_t cma_ok;          /* 1: this rank could read its probe peer (fence 3, auto mode) */
    _Atomic uint32_t claimed;   /* rings of this rank's pool taken so far (may exceed nfast):
                                 * fetch-and-add by each sender on its first packet to this rank */
    wx_shm_doorbell_t db;    /* shared by every rank at any time, see above */
} WU_ALIGNED(WU_CACHELINE) wx_shm_rank_info_t;

/* One cooperative rendezvous slot (wx_shm.h), in its sender's inbox block. Shared by the sender and
 * one receiver at a time:
 *   claim     generation << 32 | next chunk. Either rank claims chunks by CAS while the generation
 *             is its message's and they are below its count; the sender's open stores a new
 *             generation (release, after resetting the other words), so a claim left over from
 *             the previous message fails instead of taking chunks of the next one.
 *   done      chunks finished (low 32 bits) and failed (high 32): added to only by a rank holding
 *             claimed chunks, so the slot cannot be closed (reopened, reset) under such an add.
 *   fsent     chunks the sender pushed through the ring (the core's FRAG packets), counted before
 *             they are finished; final once done is complete.
 *   consumed  generation << 32 | those of them the receiver copied out of the ring: a FRAG can be
 *             copied out after its message ended and the slot was reopened, so the add is a CAS
 *             on the generation (the sender reads it to pace its FRAGs).
 * A peer names a slot by its index (checked against WX_SHM_COOP_SLOTS); nothing a peer writes
 * here is used as an address or a length. */
typedef struct wx_shm_coop_slot {
    _Atomic uint64_t claim;
    _Atomic uint64_t done;
    _Atomic uint64_t consumed;
    _Atomic uint32_t fsent;
    char pad[WU_CACHELINE - 3 * sizeof(uint64_t) - sizeof(uint32_t)];
} WU_ALIGNED(WU_CACHELINE) wx_shm_coop_slot_t;

/* Process-wide state. Written by wx_shm_init/finalize only; read by the other calls, which the
 * core serializes (wx_transport.h). */
typedef struct wx_shm_state {
    int rank, size;
    bool ready;
    bool cma;
    bool in_progress;                /* guards against wx_shm_progress from inside the callback */
    wx_recv_fn_t cb;
    void *cb_arg;
    wx_prefetch_fn_t prefetch;   /* optional; NULL: no look-ahead */
    char *seg;
    size_t seg_bytes;
    size_t ring_size;
    size_t queue_size;               /* 0: no queues */
    size_t hdr_bytes, block_bytes, ctl_bytes;   /* the inbox block layout, wx_shm.c */
    int nfast;                       /* rings per receiver */
    int nactive;                     /* rings of this rank's pool activated so far (rx[0..)) */
    wx_shm_ring_ctl_t *next;         /* the ring of this rank's pool to activate next; NULL: all */
    bool poll_more;                  /* next != NULL or a queue: progress has more to look at than
                                      * its active rings (false in a small job once all are active) */
    size_t max_payload;
    wx_shm_rank_info_t *info;        /* [size], in the segment */
    wx_shm_tx_t *tx;                 /* [size], indexed by destination rank; tx[rank] unused */
    wx_shm_rx_t *rx;                 /* [nfast], the inbox rings, in claim order */
    wx_shm_rx_t rxq;                 /* the inbox's shared queue (data NULL: none) */
    /* Cooperative slots of this rank as a sender: a bit per free slot (atomic, any thread) and
     * each slot's last generation (written only by the thread that holds the slot open). */
    _Atomic uint32_t coop_free;
    uint32_t coop_gen[WX_SHM_COOP_SLOTS];
} wx_shm_state_t;

extern wx_shm_state_t wx_shm;

/* Largest single process_vm_readv by wx_shm_get (the kernel caps one call below 2 GiB).
 * A variable only so the unit test can make it small and exercise the splitting. */
extern size_t wx_shm_get_chunk;

/* The operations-table forms of the hot calls (wx_shm.c; the table is wx_shm_tl.c's). */
/* Node rank of each job rank (-1: another node), written by wx_shm_create (wx_shm_tl.c) before
 * any send and read-only afterwards: the hot sends below take job ranks. */
extern int *wx_shm_local;
/* Its inverse, the job rank of each node rank (wx_shm_tl.c; NULL in the unit tests that call
 * wx_shm_init directly: node ranks are then the ranks), also read by wx_shm_rx_corrupt. */
extern int *wx_shm_world;
wu_status_t wx_shm_tl_send(wx_tl_t *tl, int dst, const void *hdr, const void *payload, size_t len);
wu_status_t wx_shm_tl_send_fill(wx_tl_t *tl, int dst, const void *hdr, size_t len,
                                wx_fill_fn_t fill, void *arg);
int wx_shm_tl_progress(wx_tl_t *tl);

/* CMA (wx_shm_cma.c). */
void wx_shm_cma_publish(wx_shm_rank_info_t *mine);
/* The cooperative slots of rank owner (wx_shm.c). */
wx_shm_coop_slot_t *wx_shm_coop_slots(int owner);
bool wx_shm_cma_probe(const wx_shm_rank_info_t *peer, int peer_rank);

#endif
