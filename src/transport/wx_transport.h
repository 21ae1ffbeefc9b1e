/* The transport interface. A transport moves packets between ranks of one job: a fixed-size opaque
 * header (WX_HDR_SIZE bytes, defined and interpreted by the core) plus an optional payload.
 * Packets from one sender to one receiver are delivered in the order they were sent.
 *
 * Concurrency contract (this issue: MPI_THREAD_SERIALIZED at most): one thread at a time calls any
 * function of a transport; the core serializes. The threaded engine (next issue) will hold a
 * per-transport lock around send and progress, taken with trylock by pollers.
 */
#ifndef WX_TRANSPORT_H
#define WX_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/wu_status.h"

#define WX_HDR_SIZE 40

/* How a transport exchanges its startup data (the job's key-value space). Supplied by the core,
 * which gets it from PMI, so transports never depend on the PMI layer. */
typedef struct wx_bootstrap {
    int rank, size;
    const char *job_id;      /* unique per job, safe in a file name, e.g. "weft-12345" */
    wu_status_t (*put)(const char *key, const char *val);
    wu_status_t (*get)(int rank, const char *key, char *val, size_t len);
    wu_status_t (*fence)(void);   /* commit puts, barrier over all ranks */
} wx_bootstrap_t;

/* Called by a transport's progress function once per arriving packet. The header and payload are
 * valid only during the call: the callee copies what it keeps. */
typedef void (*wx_recv_fn_t)(int src, const void *hdr, const void *payload, size_t len, void *arg);

/* Prefetch hint for a packet about to be delivered (see wx_shm_set_prefetch). Stage 0 may touch
 * only what is already cached; stage 1 may read what stage 0 prefetched. */
#define WX_PREFETCH_STAGES 2
typedef void (*wx_prefetch_fn_t)(int src, const void *hdr, int stage);

#endif
