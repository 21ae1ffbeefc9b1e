/* The transport interface. A transport moves packets between ranks of one job: a fixed-size opaque
 * header (WX_HDR_SIZE bytes, defined and interpreted by the core) plus an optional payload, and may
 * read or write a peer's memory named by a remote key (rendezvous by get).
 *
 * A transport is an instance (wx_tl_t) made by its constructor (one small header per transport:
 * transport/shm/wx_shm_tl.h, transport/self/wx_self.h), which reads the transport's own WEFT_*
 * variables and fills the attributes (wx_attr_t) the core reads once at start-up: the core never
 * includes a transport's private header and holds no transport's thresholds of its own. Every
 * operation of the table is non-NULL: what a transport lacks is a stub of this file (wx_no_*) that
 * fails with WU_ERR_UNSUPPORTED or does nothing, so the hot path never tests for NULL
 * (libfabric's fi_ops_* and fi_no_*).
 *
 * Packets from one sender to one receiver are delivered in the order they were sent
 * (WX_CAP_ORDERED; every transport today).
 *
 * Concurrency contract (the core's, docs/design.md "Threads"):
 *   - send / send_fill to one destination: one thread at a time (the core's per-peer lock);
 *     different destinations concurrently.
 *   - progress: one thread at a time (the progression engine's queue mask), concurrently with
 *     sends. The receive callback runs inside it, in that thread; it may send (to any rank) and
 *     must handle WU_ERR_AGAIN by queueing, never by calling progress (a nested call delivers
 *     nothing).
 *   - get, getv, put, mem_reg, mem_dereg: any thread, concurrently.
 *   - Doorbell: db_arm, db_sleep, db_disarm by one sleeping thread of the rank at a time (the core
 *     elects it); db_ring by any thread of the rank.
 *   - finalize: once, when nothing else runs.
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
    /* NULL: rank and size are the job's. Otherwise the view spans part of the job (shm: the ranks
     * of one node): rank and size are within it, get's rank too, and world_rank[i] is the job
     * rank of its rank i (world_size ranks in the job). The transport's send, get and the receive
     * callback still use job ranks. fence stays job-wide: every rank of the job calls it as many
     * times, inside the view or not. */
    const int *world_rank;
    int world_size;
    wu_status_t (*put)(const char *key, const char *val);
    wu_status_t (*get)(int rank, const char *key, char *val, size_t len);
    wu_status_t (*fence)(void);   /* commit puts, barrier over all ranks */
} wx_bootstrap_t;

/* Called by a transport's progress function once per arriving packet. The header and payload are
 * valid only during the call: the callee copies what it keeps. */
typedef void (*wx_recv_fn_t)(int src, const void *hdr, const void *payload, size_t len, void *arg);

/* Prefetch hint for a packet about to be delivered (see wx_shm_set_prefetch). Stage 0 may touch
 * only what is already cached; stage 1 may read what stage 0 prefetched. arg is the receive
 * callback's argument (the core's endpoint). Returns false when the callee wants no look-ahead now
 * (what the packets will touch is small enough to be cached): the transport then skips the rest
 * of the batch's hints. */
#define WX_PREFETCH_STAGES 2
typedef bool (*wx_prefetch_fn_t)(void *arg, int src, const void *hdr, int stage);

/* The end of a get_start: status WU_OK, or why the read failed. */
typedef void (*wx_get_done_fn_t)(void *arg, wu_status_t status);

/* Writes len payload bytes at dst (inside a packet not yet published). */
typedef void (*wx_fill_fn_t)(void *arg, void *dst, size_t len);

/* A memory region of one rank as another rank names it: made by the owner's mem_reg, carried to
 * the peer inside a packet (the core's RTS), used by the peer's get. Opaque to the core. */
typedef struct wx_rkey {
    uint64_t addr;     /* the region's start in the owner's address space */
    uint64_t key;      /* the transport's key (an RDMA rkey); 0 for transports that need none */
} wx_rkey_t;

/* Capability bits (wx_attr_t.caps). */
#define WX_CAP_GET          0x01u   /* get/getv read a peer's registered memory */
#define WX_CAP_PUT          0x02u   /* put writes it */
#define WX_CAP_SINGLE_COPY  0x04u   /* get moves the data once, no bounce buffer (CMA, RDMA) */
#define WX_CAP_ORDERED      0x08u   /* packets of one pair arrive in send order */
#define WX_CAP_DOORBELL     0x10u   /* db_* put a thread to sleep until a packet arrives */
#define WX_CAP_INLINE_DELIVERY 0x20u /* send delivers before it returns: progress never has work,
                                       so the transport needs neither polling nor a doorbell */
#define WX_CAP_GET_ASYNC    0x40u   /* get_start reads in the background (RDMA read); the core
                                       then uses it, never the blocking get, for a rendezvous */
#define WX_CAP_COOP         0x80u   /* coop_* give shared chunk counters for a rendezvous that
                                       both sides copy (get by the receiver, put by the sender);
                                       the coop_* operations are set only with this bit */
#define WX_CAP_PEER_CPU     0x100u  /* cpu_set/peer_cpu tell which CPU a peer's waiting thread last
                                       ran on (peers that share this machine's memory) */

/* What the core reads once, after the constructor. Sizes in bytes. The protocol thresholds are the
 * transport's (each reads its own WEFT_<NAME>_* variables) because the best crossover points
 * depend on the medium. */
typedef struct wx_attr {
    const char *name;
    uint32_t caps;
    size_t max_payload;      /* largest payload of one packet */
    size_t eager_max;        /* point-to-point messages up to this size are sent eagerly */
    size_t bulk_eager_max;   /* the same for collectives' bulk messages (>= eager_max) */
    size_t inline_max;       /* payloads up to this size cost no more than an empty packet */
    size_t frag_size;        /* fragment of the pipelined rendezvous (<= max_payload) */
    size_t get_min;          /* point-to-point rendezvous of at least this size by get; 0: never */
    size_t get_bulk_min;     /* the same for collectives' bulk messages; 0: never */
    size_t coop_min;         /* WX_CAP_COOP: contiguous rendezvous of at least this size are
                                cooperative (either side copies, docs/shm.md); 0: never */
    size_t coop_chunk;       /* WX_CAP_COOP: the unit both sides claim, at most one packet's
                                payload (shm: frag_size); the same on every rank */
} wx_attr_t;

typedef struct wx_tl wx_tl_t;
struct iovec;

/* coop_count's counters (WX_CAP_COOP). */
enum { WX_COOP_FSENT, WX_COOP_CONSUMED };

typedef struct wx_ops {
    size_t size;             /* sizeof(wx_ops_t) the transport was built with */
    /* hdr (WX_HDR_SIZE bytes) and len payload bytes to dst. WU_OK: the caller may reuse both
     * buffers. WU_ERR_AGAIN: no room, nothing was sent, retry after progress. */
    wu_status_t (*send)(wx_tl_t *tl, int dst, const void *hdr, const void *payload, size_t len);
    /* send with the payload written by fill(arg, dst, len) straight into the packet. shm calls
     * fill only when there is room; a transport that learns of no room only by trying (ofi's
     * fi_inject) may call it and still answer WU_ERR_AGAIN, so fill must write the same bytes
     * when called again (the core's seeks its cursor first). */
    wu_status_t (*send_fill)(wx_tl_t *tl, int dst, const void *hdr, size_t len, wx_fill_fn_t fill,
                             void *arg);
    /* Deliver arrived packets through the receive callback; returns how many. */
    int (*progress)(wx_tl_t *tl);
    /* Read len bytes at offset off of src's region rkey into buf. The owner keeps the region
     * alive until the reader tells it (the core's FIN). */
    wu_status_t (*get)(wx_tl_t *tl, int src, void *buf, const wx_rkey_t *rkey, uint64_t off,
                       size_t len);
    /* get into niov local pieces (their lengths sum to len); iov may be left modified. */
    wu_status_t (*getv)(wx_tl_t *tl, int src, struct iovec *iov, int niov, const wx_rkey_t *rkey,
                        uint64_t off, size_t len);
    /* Start get's read (WX_CAP_GET_ASYNC) and return; done(arg, status) runs once, after the
     * data is in buf, on whichever thread next progresses this transport (never inside
     * get_start itself, so the caller may hold what done takes). WU_ERR_AGAIN: nothing was
     * started (no resources now, or a read too large for one operation). */
    wu_status_t (*get_start)(wx_tl_t *tl, int src, void *buf, const wx_rkey_t *rkey, uint64_t off,
                             size_t len, wx_get_done_fn_t done, void *arg);
    /* Write len bytes of buf at offset off of dst's region rkey. */
    wu_status_t (*put)(wx_tl_t *tl, int dst, const void *buf, const wx_rkey_t *rkey, uint64_t off,
                       size_t len);
    /* Make [buf, buf + len) readable by peers' get: *rkey_p is what to send them. */
    wu_status_t (*mem_reg)(wx_tl_t *tl, const void *buf, size_t len, wx_rkey_t *rkey_p);
    /* Undo a successful mem_reg. */
    void (*mem_dereg)(wx_tl_t *tl, const wx_rkey_t *rkey);
    /* The doorbell (WX_CAP_DOORBELL): seq = db_arm(); poll once more; if still nothing,
     * db_sleep(seq, timeout) (returns on a packet, a db_ring, the time-out or spuriously); ...;
     * db_disarm(). A packet pushed just as the sleeper arms may not ring: the caller's first sleep
     * must be short. db_ring wakes this rank's sleeper (called by the rank's own threads). */
    uint32_t (*db_arm)(wx_tl_t *tl);
    void (*db_disarm)(wx_tl_t *tl);
    void (*db_sleep)(wx_tl_t *tl, uint32_t seq, uint64_t timeout_ns);
    void (*db_ring)(wx_tl_t *tl);
    /* Optional look-ahead before delivering a batch of packets (no-op where unsupported). */
    void (*set_prefetch)(wx_tl_t *tl, wx_prefetch_fn_t fn);
    /* Release everything; tl is invalid afterwards. */
    void (*finalize)(wx_tl_t *tl);
    /* Cooperative rendezvous (WX_CAP_COOP only; NULL otherwise, and never called then): a slot
     * of shared chunk counters, opened by the sender per message and named to the receiver by a
     * token in the RTS (shm: wx_shm.h states the contract; owner is the sender's job rank). */
    wu_status_t (*coop_open)(wx_tl_t *tl, uint64_t *tok_p);
    void (*coop_close)(wx_tl_t *tl, uint64_t tok);
    bool (*coop_valid)(wx_tl_t *tl, int owner, uint64_t tok);
    uint32_t (*coop_claim)(wx_tl_t *tl, int owner, uint64_t tok, uint32_t n, uint32_t max,
                           uint32_t *idx_p);
    bool (*coop_finish)(wx_tl_t *tl, int owner, uint64_t tok, uint32_t n, uint32_t k,
                        bool failed, bool *failed_p);
    uint32_t (*coop_count)(wx_tl_t *tl, int owner, uint64_t tok, int which, uint32_t k);
    uint32_t (*coop_next)(wx_tl_t *tl, int owner, uint64_t tok);
    /* One-sided windows across nodes (docs/rma.md, "Across nodes"); wx_no_win_* where the
     * transport has no remote write. A table built before these existed leaves them NULL (its
     * size field says so): the core then treats the transport as lacking them.
     * win_reg: make [buf, buf + len) readable by peers' get and writable by their win_write for
     * a window's life; *rkey_p is what to tell them, *handle_p undoes it (win_dereg).
     * WU_ERR_UNSUPPORTED: no remote write (or no remote read) on this transport. */
    wu_status_t (*win_reg)(wx_tl_t *tl, void *buf, size_t len, wx_rkey_t *rkey_p,
                           void **handle_p);
    void (*win_dereg)(wx_tl_t *tl, void *handle);
    /* Start writing len bytes of buf at offset off of dst's region rkey (from win_reg) and
     * return; done(arg, status) runs once, after the data is in dst's memory (delivery
     * complete, not only sent), on whichever thread next progresses this transport (never inside
     * win_write). buf must stay unchanged until then. WU_ERR_AGAIN: nothing was started (no
     * resources now, or a write larger than one operation). Any thread, concurrently. */
    wu_status_t (*win_write)(wx_tl_t *tl, int dst, const void *buf, const wx_rkey_t *rkey,
                             uint64_t off, size_t len, wx_get_done_fn_t done, void *arg);
    /* Offers announced to a computing receiver (WX_CAP_COOP only; NULL otherwise, and never
     * called then; shm: wx_shm.h states the contract). offer_watch(on): this rank's application
     * has a posted receive that a cooperative offer may fill (the core's matching lock held).
     * offer_busy(now_ns or 0): a thread of this rank polls (it waits inside MPI) as of now_ns
     * (CLOCK_MONOTONIC), or none does (0: the application went back to computing).
     * The engine's timer thread: seq = offer_seq() before it polls, then offer_sleep(seq,
     * deadline_ns) sleeps until that CLOCK_MONOTONIC time unless an offer's wake-up came since
     * offer_seq. offer_wake(dst): after pushing an offer to job rank dst, wake its timer if it
     * watches and no thread of it polled lately; dst = this rank wakes its own timer whatever it
     * watches. */
    void (*offer_watch)(wx_tl_t *tl, bool on);
    void (*offer_busy)(wx_tl_t *tl, uint64_t now_ns);
    uint32_t (*offer_seq)(wx_tl_t *tl);
    void (*offer_sleep)(wx_tl_t *tl, uint32_t seq, uint64_t deadline_ns);
    void (*offer_wake)(wx_tl_t *tl, int dst);
    /* Where peers wait (WX_CAP_PEER_CPU only; NULL otherwise, and never called then; shm: wx_shm.h
     * states the contract). cpu_set(cpu): a thread of this rank that waits runs on CPU cpu.
     * peer_cpu(peer): the CPU that job rank peer last said, or -1 (never said, or not known). */
    void (*cpu_set)(wx_tl_t *tl, int cpu);
    int (*peer_cpu)(wx_tl_t *tl, int peer);
} wx_ops_t;

/* An instance. Its fields are written by the constructor and read-only afterwards; priv is the
 * transport's. */
struct wx_tl {
    const wx_ops_t *ops;
    wx_attr_t attr;
    void *priv;
};

/* Constructor signature shared by every transport: collective over the job through bs when the
 * transport needs peers' data; cb(src, hdr, payload, len, cb_arg) receives each packet. On
 * failure no instance is made and every rank fails alike. */
typedef wu_status_t (*wx_create_fn_t)(const wx_bootstrap_t *bs, wx_recv_fn_t cb, void *cb_arg,
                                      wx_tl_t **tl_p);

/* get, getv and put for peers that share this address space (self, loop): a remote key's addr is
 * a plain pointer, and each is a memcpy (wx_transport.c). */
wu_status_t wx_mem_get(wx_tl_t *tl, int src, void *buf, const wx_rkey_t *rkey, uint64_t off,
                       size_t len);
wu_status_t wx_mem_getv(wx_tl_t *tl, int src, struct iovec *iov, int niov, const wx_rkey_t *rkey,
                        uint64_t off, size_t len);
wu_status_t wx_mem_put(wx_tl_t *tl, int dst, const void *buf, const wx_rkey_t *rkey, uint64_t off,
                       size_t len);

/* A packet from peer src that breaks the transport's own format (shm: a ring record longer than
 * its ring, a sender rank out of range), found on the receive path before anything reads past it.
 * src is the sender's job rank, or -1 when the bad field is what names it. The job cannot go on: wx_protocol_error formats "protocol error: ..." and calls wx_fatal_fn,
 * which ends the job (the core sets it in wc_ep_init to its wc_fatal: MPI_ERR_INTERN, the job
 * aborted through the launcher), else logs and exits with status 1. Never returns. wx_fatal_fn is
 * written at set-up, before any packet arrives, and read-only afterwards. */
extern void (*wx_fatal_fn)(const char *msg);
void wx_protocol_error(int src, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn, noinline, cold));

/* Stubs for what a transport lacks (wx_transport.c). */
wu_status_t wx_no_send(wx_tl_t *tl, int dst, const void *hdr, const void *payload, size_t len);
wu_status_t wx_no_send_fill(wx_tl_t *tl, int dst, const void *hdr, size_t len, wx_fill_fn_t fill,
                            void *arg);
int wx_no_progress(wx_tl_t *tl);
wu_status_t wx_no_get(wx_tl_t *tl, int src, void *buf, const wx_rkey_t *rkey, uint64_t off,
                      size_t len);
wu_status_t wx_no_getv(wx_tl_t *tl, int src, struct iovec *iov, int niov, const wx_rkey_t *rkey,
                       uint64_t off, size_t len);
wu_status_t wx_no_get_start(wx_tl_t *tl, int src, void *buf, const wx_rkey_t *rkey, uint64_t off,
                            size_t len, wx_get_done_fn_t done, void *arg);
wu_status_t wx_no_put(wx_tl_t *tl, int dst, const void *buf, const wx_rkey_t *rkey, uint64_t off,
                      size_t len);
wu_status_t wx_no_mem_reg(wx_tl_t *tl, const void *buf, size_t len, wx_rkey_t *rkey_p);
void wx_no_mem_dereg(wx_tl_t *tl, const wx_rkey_t *rkey);
uint32_t wx_no_db_arm(wx_tl_t *tl);
void wx_no_db_disarm(wx_tl_t *tl);
void wx_no_db_sleep(wx_tl_t *tl, uint32_t seq, uint64_t timeout_ns);
void wx_no_db_ring(wx_tl_t *tl);
void wx_no_set_prefetch(wx_tl_t *tl, wx_prefetch_fn_t fn);
void wx_no_finalize(wx_tl_t *tl);
wu_status_t wx_no_win_reg(wx_tl_t *tl, void *buf, size_t len, wx_rkey_t *rkey_p, void **handle_p);
void wx_no_win_dereg(wx_tl_t *tl, void *handle);
wu_status_t wx_no_win_write(wx_tl_t *tl, int dst, const void *buf, const wx_rkey_t *rkey,
                            uint64_t off, size_t len, wx_get_done_fn_t done, void *arg);
/* Whether tl's table has the window operations (win_reg ... win_write) and they are not stubs'
 * NULLs: a table built before they existed is shorter (its size field). */
bool wx_has_win_ops(const wx_tl_t *tl);

#endif
