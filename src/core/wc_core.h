/* The communication core: world bootstrap, point-to-point operations on bytes, progress.
 * Ranks here are world ranks; the MPI layer translates communicator ranks and datatypes.
 *
 * Concurrency contract (this version): every function is called by one thread at a time
 * (MPI_THREAD_SERIALIZED at most); the core takes no lock.
 */
#ifndef WC_CORE_H
#define WC_CORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/wc_dtype.h"
#include "core/wc_ep.h"
#include "core/wc_request.h"
#include "core/wc_wait.h"
#include "util/wu_compiler.h"
#include "util/wu_status.h"

/* The job as PMI describes it to this process (MPI_COMM_WORLD's rank, size, MPI_APPNUM). The
 * default endpoint (wc_ep.h) is rank wc_world.rank of a job of wc_world.size. */
typedef struct wc_world {
    int  rank;
    int  size;
    bool singleton;
    int  appnum;         /* the launcher's MPMD section of this process (MPI_APPNUM) */
    int  nnodes;         /* nodes the job's ranks are on (wc_node_of), set before wc_init returns */
} wc_world_t;

extern wc_world_t wc_world;

/* Does a WC_SEND_BULK message of `bytes` contiguous bytes move by single copy (the receiver
 * reading the sender's buffer) to every peer of ep? Collectives then let every receiver pull from
 * the source. */
static inline bool wc_bulk_single_copy(const wc_ep_t *ep, uint64_t bytes)
{
    return ep->limits.get_bulk_min && bytes > ep->limits.eager_max &&
           bytes >= ep->limits.get_bulk_min;
}

/* Nodes: which world ranks share a node (shared memory), as wc_init found them (docs/ofi.md,
 * "Which transport reaches which rank"; WEFT_NODE_SPLIT=k makes ranks r / k a node). Nodes are
 * numbered 0 .. wc_node_count() - 1 by their first rank. Fixed between wc_init and wc_finalize:
 * any thread may call these, no lock. wc_node_of gives -1 for a rank outside the job. */
int wc_node_count(void);
int wc_node_of(int rank);

/* thread_multiple: the application may call concurrently (MPI_THREAD_MULTIPLE). Then the engine's
 * progress threads start (WEFT_PROGRESS_IDLE/TIMER, on by default) and every lock is real. Below
 * it, progress threads start only if those variables are set to 1 explicitly, and locks are real
 * only if they do: a single-threaded rank pays no atomics (the lock gate of wt_thread.h). */
wu_status_t wc_init(bool thread_multiple);
wu_status_t wc_finalize(void);
/* WEFT_WAIT_YIELD as wc_wait_yield_set takes it (-1 auto, 1, 0), and the ranks on this machine
 * (0 before wc_init): for MPI_T, which may change the setting at run time. */
int wc_wait_yield_mode(void);
long wc_machine_ranks(void);
void wc_abort(int code, const char *msg) __attribute__((noreturn));
/* An error found inside progress, which no call can return (an unexpected message past its
 * budget): wc_fatal_fn if set (the MPI layer's, set once by MPI_Init: it names the error class
 * and ends the job), else wu_log_fatal. Any thread; does not return. */
extern void (*wc_fatal_fn)(wu_status_t st, const char *msg);
void wc_fatal(wu_status_t st, const char *msg) __attribute__((noreturn));

/* The process is leaving while operations may still be pending: MPI_Finalize has begun (after the
 * attribute callbacks, which may still complete them), or the program exits without it
 * (exiting). Every operation that is then started, not complete and not detached is abandoned:
 * the application still owns it, and an erroneous program may already have freed its buffer, so
 * from the return on nothing in the library reads or writes that buffer again. Its queued packets
 * are dropped (eager data, rendezvous fragments, an RTS not yet out), its posted receive leaves
 * matching, a CTS or a fragment that arrives for it later is ignored, a nonblocking schedule stops
 * before its next step; it never completes. Detached requests (MPI_Request_free, buffered sends,
 * the library's own) go on: the standard lets them complete during MPI_Finalize. So do operations
 * started after the call (the barrier of MPI_Finalize). Before returning it waits for every task
 * run that was under way (wp_engine_sync): a copy an engine thread began before the call has
 * ended. Exiting, it also stops and joins the engine's threads, which must not run on into the
 * program's teardown; MPI_Finalize keeps them until wc_finalize (with WEFT_PROGRESS_EXPLICIT=0
 * they are what moves its barrier).
 *
 * Called by the thread that finalizes or exits, with no other application thread in the core
 * (MPI's rule for MPI_Finalize). It may be called again (an exit handler that calls MPI_Finalize
 * after the exit hook ran): each call abandons what is pending at that moment.
 *
 * How it is done without a cost per message: each call bumps wc_leave_gen. A rendezvous records
 * the generation when the send starts (RTS) or the receive answers CTS; a nonblocking schedule
 * when it starts; a peer's send queue when it was last purged (under its lock). A CTS, a fragment
 * or a schedule's task that finds an older generation on a request that is not detached drops it
 * (a load and a predictable branch, on those paths only). */
void wc_quiesce(bool exiting);
extern _Atomic uint32_t wc_leave_gen;
static inline uint32_t wc_leave_gen_now(void)
{
    return atomic_load_explicit(&wc_leave_gen, memory_order_relaxed);
}

/* n consecutive context ids no other communicator of the job uses (job-wide, any thread). Served
 * by world rank 0: elsewhere one round trip to it, waiting with progress (wc_ctx.c). */
uint32_t wc_ctx_alloc(wc_ep_t *ep, uint32_t n);
/* The same, with ids at or above min (the counter jumps to min first). Ids are still unique in
 * the job; agreeing on one id free in two jobs takes rounds of this (docs/dynamic.md). */
uint32_t wc_ctx_alloc_min(wc_ep_t *ep, uint32_t n, uint32_t min);
/* The n context ids of key (a 128-bit hash naming a communicator being created) for member
 * `member` of its nmembers members: every member of one creation gets the same ids, the next
 * creation with the same key new ones; no communicator is needed (wc_ctx_named.c). Any thread;
 * one round trip to world rank 0, waiting with progress. */
uint32_t wc_ctx_named(wc_ep_t *ep, const uint64_t key[2], uint32_t member, uint32_t nmembers,
                      uint32_t n);
void wc_ctx_named_init(wc_ep_t *ep);

/* Every operation below works on the endpoint ep (wc_ep.h; the MPI layer passes wc_ep_default()),
 * whose ranks they name.
 *
 * Start a send of len bytes at buf to rank dst. req is zeroed and owned by the caller until
 * complete. Returns an error only for local failures (no memory). */
wu_status_t wc_isend(wc_ep_t *ep, wc_request_t *req, const void *buf, size_t len, int dst, int tag,
                     uint32_t ctx, wc_send_mode_t mode);
/* Start a receive; src may be WC_ANY_SOURCE, tag WC_ANY_TAG. */
wu_status_t wc_irecv(wc_ep_t *ep, wc_request_t *req, void *buf, size_t len, int src, int tag,
                     uint32_t ctx);

/* Typed forms: count elements laid out by dt (core/wc_dtype.h) starting at buf. The message is
 * the packed stream (count * dt->size bytes), so layouts with the same type signature match
 * whatever their shape. A contiguous layout costs what the byte forms cost; any other is packed
 * straight into the transport's packets and unpacked straight out of them by a cursor in the
 * request (eager, each fragment of the pipelined rendezvous, unexpected messages stored packed),
 * never through a copy of the whole message. The single copy (CMA) is used when the sender is
 * contiguous (the receiver scatters with an iovec per block); a non-contiguous sender takes the
 * pipeline. A receive's capacity is its packed size: a longer message delivers what fits and
 * completes with WU_ERR_TRUNCATE. dt must stay valid until the request completes. */
wu_status_t wc_isend_dt(wc_ep_t *ep, wc_request_t *req, const void *buf, uint64_t count,
                        const wc_dtype_t *dt, int dst, int tag, uint32_t ctx, wc_send_mode_t mode);
wu_status_t wc_irecv_dt(wc_ep_t *ep, wc_request_t *req, void *buf, uint64_t count,
                        const wc_dtype_t *dt, int src, int tag, uint32_t ctx);
/* After the application posted a receive of len bytes from rank src on ep (MPI_Irecv, MPI_Start;
 * not a library-internal receive): poll once if a cooperative rendezvous may fill it (a large
 * receive from a rank on this node), so that an offer already delivered is matched before the
 * application goes on computing. Receives below WC_IRECV_LOOK_MIN bytes never need it (the caller
 * may skip the call). */
#define WC_IRECV_LOOK_MIN 65536
void wc_irecv_look(wc_ep_t *ep, int src, size_t len);
/* Cancel a posted receive that has not matched (on its endpoint, req->ep); true if cancelled (the
 * request is then complete). */
bool wc_cancel_recv(wc_request_t *req);
/* Cancel a send started on ep (MPI_Cancel), by its owner, at most once per start. A packet still
 * queued here is taken back at once; otherwise the receiver is asked (CANCEL_REQ) to withdraw the
 * message if it waits unmatched (eager payload or rendezvous offer), and the request completes
 * either cancelled (wc_request_cancelled) or as the send it is (the message is received). A
 * standard eager send already complete becomes pending again until the answer. Does not wait. */
void wc_cancel_send(wc_ep_t *ep, wc_request_t *req);

/* wc_message_t (wc_ep.h): an unexpected message taken out of matching (matched probe). */

typedef struct wc_probe_info {
    int    source;   /* world rank */
    int    tag;
    size_t len;
} wc_probe_info_t;

/* Look for a matching unexpected message without receiving it (one progress pass first).
 * take=true removes it and returns it in *msg_p (MPI_Improbe); take=false leaves it (MPI_Iprobe). */
bool wc_iprobe(wc_ep_t *ep, int src, int tag, uint32_t ctx, bool take, wc_probe_info_t *info_p,
               wc_message_t **msg_p);
/* Receive a message taken by wc_iprobe(take=true). */
wu_status_t wc_imrecv(wc_ep_t *ep, wc_request_t *req, void *buf, size_t len, wc_message_t *msg);
wu_status_t wc_imrecv_dt(wc_ep_t *ep, wc_request_t *req, void *buf, uint64_t count,
                         const wc_dtype_t *dt, wc_message_t *msg);

/* One explicit polling point: runs the progression engine once. */
int wc_progress(void);
/* Waiting: wc_wait, wc_idle_* (spin, then sleep) and wc_request_detach are in wc_wait.h. */

#endif
