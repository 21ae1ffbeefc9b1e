/* The loopback transport: several endpoints of ONE process exchange packets through in-memory
 * FIFO queues, one per ordered pair of ranks. Built for the core's protocol unit tests (a job of
 * endpoints in one process, no shared memory, no PMI): small packets and small queues force the
 * core's pending queues (WU_ERR_AGAIN) and the pipelined rendezvous; get (a memcpy from the
 * address in the remote key: the peers share the address space) may be turned off so that both
 * rendezvous paths run. Packets are delivered by the receiver's progress, in send order per pair.
 *
 * Concurrency contract (wx_transport.h's): sends from rank s to rank d come from one thread at a
 * time (the core's peer lock), rank d's progress from one thread at a time; the two sides of a
 * queue meet only through its head and tail (single producer, single consumer, acquire/release).
 * get/getv/mem_reg: any thread.
 */
#ifndef WX_LOOP_H
#define WX_LOOP_H

#include "transport/wx_transport.h"

typedef struct wx_loop_fabric wx_loop_fabric_t;

typedef struct wx_loop_config {
    int      nranks;
    size_t   max_payload;   /* largest payload of one packet */
    size_t   eager_max;     /* attribute eager_max (<= max_payload) */
    size_t   frag_size;     /* attribute frag_size (<= max_payload) */
    unsigned queue_cap;     /* packets in flight per ordered pair (>= 1) */
    bool     get;           /* WX_CAP_GET: every rendezvous by get; false: always the pipeline */
} wx_loop_config_t;

/* The queues between nranks ranks. Destroy after every instance is finalized. */
wu_status_t wx_loop_fabric_create(const wx_loop_config_t *cfg, wx_loop_fabric_t **fab_p);
void wx_loop_fabric_destroy(wx_loop_fabric_t *fab);
/* Rank `rank`'s instance on fab; cb(src, hdr, payload, len, cb_arg) receives its packets inside
 * its progress. One instance per rank. */
wu_status_t wx_loop_create(wx_loop_fabric_t *fab, int rank, wx_recv_fn_t cb, void *cb_arg,
                           wx_tl_t **tl_p);

#endif
