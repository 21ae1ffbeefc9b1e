/* Thread communicators: MPIX_Threadcomm_init/start/finish/free (include/weft.h) and the calls the
 * MPI layer hands over for a communicator with the tcomm flag (wm_threadcomm.h). Design, what is
 * done and the limits: docs/threadcomm.md.
 *
 * Objects:
 *   - tc_root (one per threadcomm per process, made by init, freed by free): the process's part of
 *     the threadcomm: its thread-ranks' matching states (tc_rank, one per local thread-rank), the
 *     layout of the thread-ranks over the processes, the hidden process-level communicator `net`
 *     (a duplicate of the parent) that carries messages to thread-ranks of other processes, and
 *     the progress thread that receives them (only when the threadcomm spans several processes).
 *   - tc_rank (a thread-rank's matching state): posted receives and unexpected messages, FIFO
 *     lists under the thread-rank's own spinlock, and its pool of messages. Its owner posts and takes; senders (other
 *     thread-ranks of the process, the progress thread for remote ones) match or append. Two
 *     thread-ranks never share a lock for their own traffic.
 *   - tc_view (a thread-rank's view of a communicator): the threadcomm itself (context 0, rank =
 *     thread-rank) or one derived from it by Comm_dup/Comm_split (its own context id, members as
 *     thread-ranks of the threadcomm). A view belongs to one thread; its handle is found through
 *     the thread's bindings (the threadcomm's handle is shared by the process's threads) or is
 *     private (a derived communicator: one handle per thread-rank).
 *
 * Messages between thread-ranks of one process: the sender matches in the receiver's posted list
 * and copies once from its buffer into the receiver's; or, if no receive is posted, appends an
 * unexpected message that points at its own buffer (the send completes when the receiver copies
 * from it: one copy) or, for messages up to TC_EAGER bytes and buffered sends, at a copy (the send
 * completes at once). Messages to another process on the threadcomm itself: the library's own
 * send and receive on the pair communicator of (sender index, receiver index); a receive that may
 * also match local messages (MPI_ANY_SOURCE), or one posted behind such a receive, waits in the
 * lists and the pair communicators' messages are pulled into them in order (tc_pull). Other
 * traffic to another process: header and packed data in one MPI message on `net`, matched in the
 * destination thread-rank's state like a local one by whichever thread polls net (a synchronous
 * send completes when the receiver's ACK comes back).
 *
 * Concurrency contract: a tc_root's layout fields are written by init before its handle is
 * returned and read-only afterwards; arrived/bar_* are atomics; a tc_rank's lists are guarded by
 * its spinlock, its pool is described at tc_rank; next_ctx and every tc_view field but refs are
 * the owning thread's only (a nonblocking collective's thread works on a copy); the direct remote
 * path's fields are described at tc_rank and tc_root. A tc_req is
 * completed once, by whichever thread matches it; the completer touches it no more after the
 * release store of done (or after MPI_Grequest_complete for a user-visible request, whose free_fn
 * frees it).
 */
#include "mpi/wm_internal.h"
#include "mpi/wm_threadcomm.h"
#include "core/wc_dtype.h"
#include "core/wc_wait.h"
#include "thread/wt_thread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <weft.h>

#define TC_EAGER     1024u            /* local messages up to this size are copied when unexpected */
#define TC_CHUNK     8192u            /* staging of a copy between two non-contiguous layouts */
#define TC_COLL_BIT  0x80000000u      /* collective traffic of a context */
#define TC_TAG_MSG   1
#define TC_TAG_ACK   2
#define TC_DIRECT_MAX 8               /* direct remote path: up to this many thread-ranks/process */
#define TC_NO_PEER   (-0x40000000)    /* a pair communicator's rank that is nobody */
#define TC_BIND_MAX  8
#define TC_SELF_BIT  0x40000000u      /* a rank's copy to itself inside a collective */
/* the context id of a threadcomm handle's wm_comm_t: never allocated (ids stay far below), never
 * used (every call on the handle is dispatched here) */
#define TC_HANDLE_CTX (WC_CTX_EXACT - 1u)

typedef struct tc_req tc_req_t;

/* One send or receive, completed in one of three ways:
 *   - core non-NULL: a user-visible point-to-point request, a pooled wm_request_t that never
 *     enters the core (tc_user_req): the results go into its core's status fields and
 *     wc_request_done completes it (wakes its waiter, or releases it if MPI_Request_free came
 *     first), so the whole wait/test family takes it like any request, without a callback;
 *   - greq set: a nonblocking collective's generalized request (MPI_Grequest_complete);
 *   - else: an internal request on its caller's stack, `done` watched by tc_wait. */
struct tc_req {
    tc_req_t   *next;                 /* posted list */
    wc_request_t *core;
    _Atomic int done;
    uint32_t    ctx;                  /* receive pattern */
    int         src, tag;
    void       *buf;                  /* receive buffer */
    uint64_t    count;
    const wc_dtype_t *layout;
    int         st_src, st_tag, err;  /* result */
    size_t      st_bytes, st_msg;     /* delivered, and the whole message (truncation) */
    MPI_Request greq;                 /* MPI_REQUEST_NULL unless a generalized request */
    bool        remote;               /* posted in the list while it may match a message of a
                                         pair communicator (counted in its rank's wild) */
    bool        prog;                 /* a user's request that needs the progress thread while
                                         pending (counted in the root's nwild) */
};

typedef struct tc_rank tc_rank_t;

typedef struct tc_msg {
    struct tc_msg *next;
    tc_rank_t  *pool;                 /* the sender's pool it goes back to, or NULL: malloc'd */
    uint32_t    ctx;
    int         src, tag;
    size_t      bytes;
    const void *sbuf;                 /* pinned sender data (local), or NULL */
    uint64_t    scount;
    const wc_dtype_t *slayout;
    void       *owned;                /* malloc'd block holding the data (copy, or remote) */
    const char *data;                 /* packed data inside owned */
    tc_req_t   *sreq;                 /* local send to complete when taken, or NULL */
    uint64_t    ack;                  /* remote synchronous send: its request, 0: none */
    int         ack_proc, ack_idx;
    bool        mq;                   /* a matched-probed message of a pair communicator (mmsg):
                                         received straight into the receive buffer when taken */
    MPI_Message mmsg;
} tc_msg_t;

/* A thread-rank's matching state. The lock is a spinlock (it yields the core when contended for
 * long): every critical section is a few list operations, plus the copy of an eager message of at
 * most TC_EAGER bytes, with no allocation and no system call inside. Local messages come from the
 * sender's pool: slots of TC_EAGER bytes of data, taken by the owner thread (mfree; refilled from
 * mret), given back by whichever thread consumed them (pushed on mret, a lock-free stack with one
 * popper, which takes it whole: no ABA). */
struct tc_rank {
    wt_spinlock_t lock;
    tc_req_t   *posted, *posted_tail; /* lock */
    tc_msg_t   *unexp, *unexp_tail;   /* lock */
    /* Direct remote path (docs/threadcomm.md, "Messages between processes"): wild counts the
     * posted receives marked remote (written under lock, read without it as a hint), rstash the
     * remote messages taken out of the pair communicators into unexp (lock). While either is
     * non-zero, receives from other processes go through the lists; else straight to the library.
     * plock serialises the pulls from the pair communicators (tc_pull), which keeps their order. */
    _Atomic int wild;
    int         rstash;
    wt_spinlock_t plock;
    struct tc_root *root;
    _Atomic(tc_msg_t *) mret WU_ALIGNED(WU_CACHELINE);   /* consumers push, the owner takes all */
    tc_msg_t   *mfree WU_ALIGNED(WU_CACHELINE);          /* owner only, as below */
    uint32_t    next_ctx;
    int         trank;
} WU_ALIGNED(WU_CACHELINE);

typedef struct tc_nsend tc_nsend_t;

typedef struct tc_root {
    MPI_Comm    net;
    _Atomic(tc_nsend_t *) nsends;     /* packets on net whose sends are not complete yet */
    wt_spinlock_t slock;              /* one reaper at a time */
    int         nprocs, myproc, nlocal, base, total;
    int        *tbase;                /* [nprocs + 1]: first thread-rank of each process */
    int        *proc_of;              /* [total] */
    tc_rank_t  *ranks;                /* [nlocal] */
    _Atomic int arrived;
    _Atomic int bar_count, bar_gen;
    wt_thread_t prog;
    /* finished nonblocking-collective threads, joined by the next one's start and by free */
    wt_mutex_t  zlock;
    struct tc_zombie *zombies;
    bool        prog_on;
    long        extra_ranks;          /* counted in tc_extra_ranks */
    /* Direct remote path: point-to-point on the threadcomm itself between thread-ranks of two
     * processes goes over pair[s * kmax + d], the communicator of sender index s to receiver
     * index d (local indices), whose rank tbase[p] + s is process p and whose other ranks are
     * nobody: the library's matching keeps each (sender, receiver) stream, and its statuses name
     * the sending thread-rank. Written by init, read-only afterwards. */
    bool        direct;
    int         kmax;
    MPI_Comm   *pair;
    /* Progress without a thread blocked in the library: the thread-ranks' blocking calls poll
     * net (tc_net_poll, one at a time: netlock) and their pair communicators (tc_pull); the
     * progress thread polls only while nwild, the user requests that need it, is non-zero
     * (remote-marked receives, counted in their rank's wild too, and synchronous sends waiting
     * for an ACK), and sleeps on pgen otherwise (psleep set). */
    wt_spinlock_t netlock;
    _Atomic int nwild;
    _Atomic int psleep, pstop;
    uint32_t    pgen;                 /* __atomic */
} tc_root_t;

/* Thread-ranks share the machine's CPUs as ranks do: the library's waits (MPI_Wait & co on the
 * thread-ranks' requests, wc_wait.h) should yield the core after an empty poll when the ranks and
 * thread-ranks of this machine outnumber its CPUs, as they do for processes (WEFT_WAIT_YIELD=auto).
 * tc_extra_ranks counts the thread-ranks of this machine beyond one per process, over the
 * threadcomms that exist (changed by init and free, one thread per process; atomic because
 * several threadcomms may be made or freed at once by different threads of a process). */
static _Atomic long tc_extra_ranks;

static void tc_yield_update(long delta)
{
    long extra = atomic_fetch_add(&tc_extra_ranks, delta) + delta;
    wc_wait_yield_set(wc_wait_yield_mode(), wc_machine_ranks() + extra);
}

typedef struct tc_view {
    tc_root_t  *root;
    tc_rank_t  *me;
    uint32_t    ctx;
    int         rank, size;
    int        *members;              /* [size] comm rank -> thread-rank; NULL: identity */
    uint32_t    coll_seq;
    _Atomic int refs;                 /* the handle, plus one per running nonblocking collective */
    bool        helper;               /* a nonblocking collective's copy, run by its own thread:
                                         not the owner of me's message pool */
} tc_view_t;

/* wm_comm_t.tc */
struct wm_tc {
    tc_root_t *root;                  /* the threadcomm (shared handle) */
    tc_view_t *view;                  /* a derived communicator (one thread's handle) */
};

/* The calling thread's started threadcomms: a thread-local object of the threading layer
 * (WT_LOCAL: compiler TLS under pthreads, one per user-level thread under a ULT backend), zeroed at
 * the thread's first use and gone with the thread. */
typedef struct { tc_root_t *root; tc_view_t *view; } tc_bind_t;
typedef struct tc_binds {
    int       n;
    tc_bind_t b[TC_BIND_MAX];
} tc_binds_t;
WT_LOCAL(static, tc_binds_t, tc_local);

/* NULL only if a ULT backend has no memory for the thread's object. */
static inline tc_binds_t *tc_binds_get(void)
{
    return WT_LOCAL_PTR(tc_binds_t, tc_local);
}

typedef struct tc_hdr {
    uint32_t ctx;
    int32_t  src, tag, dst;           /* dst: local index at the receiving process */
    uint64_t ack;                     /* synchronous: the sender's request */
    uint64_t bytes;
    int32_t  ack_idx;                 /* synchronous: the sender's local index */
    int32_t  pad;
} tc_hdr_t;

/* The ACK of a synchronous send to another process: the sender's request and local index. The
 * progress thread completes the request under the sender's thread-rank lock, which the sender
 * took and released before sending: the order through the other process is then visible to race
 * detectors too. */
typedef struct tc_ack {
    uint64_t req;
    int32_t  idx, pad;
} tc_ack_t;

/* ---- views ---- */

static tc_view_t *tc_view_of(wm_comm_t *c)
{
    struct wm_tc *t = c->tc;
    if (t->view)
        return t->view;
    tc_binds_t *b = tc_binds_get();
    if (WU_UNLIKELY(!b))
        return NULL;
    for (int i = 0; i < b->n; i++)
        if (b->b[i].root == t->root)
            return b->b[i].view;
    return NULL;
}

#define TC_VIEW(fn, c, v)                                                                         \
    tc_view_t *v = tc_view_of(c);                                                                 \
    if (WU_UNLIKELY(!v))                                                                          \
        return wm_error(c, MPI_ERR_COMM, fn, "threadcomm used by a thread that has not called "   \
                        "MPIX_Threadcomm_start on it")

static inline int tc_trank(const tc_view_t *v, int r)
{
    return v->members ? v->members[r] : r;
}

static void tc_view_unref(tc_view_t *v)
{
    if (atomic_fetch_sub_explicit(&v->refs, 1, memory_order_acq_rel) == 1) {
        free(v->members);
        free(v);
    }
}

/* ---- completion and waiting ---- */

/* After this, r (and a user request around it) may be gone: touch nothing of it. */
static void tc_complete(tc_req_t *r)
{
    wc_request_t *c = r->core;
    if (c) {
        c->error = r->err == MPI_SUCCESS        ? WU_OK
                   : r->err == MPI_ERR_TRUNCATE ? WU_ERR_TRUNCATE
                                                : WU_ERR_NO_MEMORY;
        c->st_source = r->st_src;
        c->st_tag = r->st_tag;
        c->st_bytes = r->st_bytes;
        c->msg_len = r->st_msg;
        c->len = r->layout ? (size_t)(r->count * r->layout->size) : 0;
        wc_request_done(c);
    } else if (r->greq != MPI_REQUEST_NULL) {
        PMPI_Grequest_complete(r->greq);
    } else {
        atomic_store_explicit(&r->done, 1, memory_order_release);
    }
}

/* Spin briefly, then yield (the partner may need this core), then nap: a long wait on a
 * machine with more threads than cores must leave them the CPU. When the ranks and thread-ranks
 * of this machine outnumber its CPUs (wc_idle_yield, as the library's own waits) the first empty
 * look yields already: the partner is rarely running on another CPU at that moment, and each spin
 * delays the thread that is. Measured with 2 processes x 4 thread-ranks in pairs on 2 CPUs
 * (bench_threadcomm, 8 B): median latency 10.5 us with 32 spins, 5.1-5.7 us yielding at once, 24-48
 * us with 256 spins; message rate 5.4 M/s against 6.3-6.8 M/s. */
static void tc_pause(unsigned *spins)
{
    unsigned n = ++*spins;
    if (n <= 32 && !__atomic_load_n(&wc_idle_yield, __ATOMIC_RELAXED))
        return;
    if (n <= 4096) {
        wt_thread_yield();
        return;
    }
    uint32_t nap = 0;
    wt_word_wait(&nap, 0, 20000);   /* 20 us of sleep in the threading backend's terms */
}

static void tc_net_poll(struct tc_root *root);
static void tc_nwild_inc(struct tc_root *root);
static void tc_pull(struct tc_root *root, int d);

/* Wait for an internal request, polling net (several processes) and, pull >= 0, the pair
 * communicators of local thread-rank pull. */
static void tc_wait_x(struct tc_root *root, tc_req_t *r, int pull)
{
    unsigned spins = 0;
    while (!atomic_load_explicit(&r->done, memory_order_acquire)) {
        tc_net_poll(root);
        if (pull >= 0)
            tc_pull(root, pull);
        tc_pause(&spins);
    }
}

/* Wait for an internal request of a thread-rank of root (no pair communicator to pull). */
static inline void tc_wait(struct tc_root *root, tc_req_t *r)
{
    tc_wait_x(root, r, -1);
}

static int tc_greq_query(void *extra, MPI_Status *status)
{
    tc_req_t *r = extra;
    wm_status_fill(status, r->st_src, r->st_tag, (MPI_Count)r->st_bytes, 0);
    return r->err;
}

static int tc_greq_free(void *extra)
{
    free(extra);
    return MPI_SUCCESS;
}

static int tc_greq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;       /* not cancellable: the request completes as if not cancelled */
}

/* A nonblocking collective's request: a generalized request, MPI_Wait & co complete it (its
 * error code goes through query_fn whole). */
static tc_req_t *tc_req_new(MPI_Request *request, int *rc_p)
{
    tc_req_t *r = calloc(1, sizeof(*r));
    *rc_p = MPI_SUCCESS;
    if (!r) {
        *rc_p = MPI_ERR_NO_MEM;
        return NULL;
    }
    r->greq = MPI_REQUEST_NULL;
    if (request) {
        int rc = PMPI_Grequest_start(tc_greq_query, tc_greq_free, tc_greq_cancel, r, request);
        if (rc != MPI_SUCCESS) {
            free(r);
            *rc_p = rc;
            return NULL;
        }
        r->greq = *request;
    }
    return r;
}

/* A nonblocking point-to-point call's request: a pooled request of the MPI layer (no allocation
 * on the usual path) of kind WM_REQ_SENDRECV, the kind that is never given to the core: the
 * wait/test family reads its status from the core's st_* fields (tc_complete fills them; the
 * source is the communicator rank, which wm_comm_peer_rank returns as it is because a threadcomm
 * handle has no remote_world_ranks), MPI_Cancel leaves it alone (it completes normally) and
 * MPI_Request_free detaches it (the completer then releases it). It names the communicator and
 * the datatype (wm_request_use) until it is released, so a derived datatype freed meanwhile
 * stays readable by whichever thread copies. The tc_req_t lives in the core's cold part (the
 * queued-send and rendezvous fields from `op` on), which only the core's own code uses.
 * NULL: no memory. */
_Static_assert(offsetof(wc_request_t, op) + sizeof(tc_req_t) <= sizeof(wc_request_t),
               "a tc_req_t fits in the unused part of a core request");
_Static_assert(offsetof(wc_request_t, op) % _Alignof(tc_req_t) == 0, "aligned");

static tc_req_t *tc_user_req(wm_comm_t *c, const wm_datatype_t *ti, int peer, int tag,
                             MPI_Request *request)
{
    wm_request_t *wr = wm_request_alloc_pt2pt();
    if (WU_UNLIKELY(!wr))
        return NULL;
    wr->kind = WM_REQ_SENDRECV;
    wr->comm = c;
    wr->ti = ti;
    wr->peer = peer;
    wr->tag = tag;
    wr->active = true;
    wm_request_use(wr, WM_REQ_OBJ_COMM, &c->obj);
    wm_request_use(wr, WM_REQ_OBJ_TYPE, (wm_obj_t *)&ti->obj);
    wc_request_t *core = &wr->core;
    core->cancelled = WC_CANCEL_NONE;
    core->error = WU_OK;
    atomic_store_explicit(&core->state, WC_REQ_PENDING, memory_order_relaxed);
    tc_req_t *r = (tc_req_t *)(void *)&core->op;
    *r = (tc_req_t){ .core = core, .greq = MPI_REQUEST_NULL, .st_src = MPI_ANY_SOURCE,
                     .st_tag = MPI_ANY_TAG };
    *request = wm_request_handle(wr);
    return r;
}

/* ---- copies ---- */

static void tc_unpack_into(const tc_req_t *r, const void *src, size_t n)
{
    if (r->layout->contig) {
        memcpy((char *)r->buf + r->layout->contig_off, src, n);
    } else {
        wc_dtype_cursor_t cur;
        wc_dtype_cursor_init(&cur, r->layout, r->buf, r->count);
        wc_dtype_unpack(&cur, src, n);
    }
}

static void tc_pack(void *dst, const void *buf, uint64_t count, const wc_dtype_t *l, size_t n)
{
    if (l->contig) {
        memcpy(dst, (const char *)buf + l->contig_off, n);
    } else {
        wc_dtype_cursor_t cur;
        wc_dtype_cursor_init(&cur, l, buf, count);
        wc_dtype_pack(&cur, dst, n);
    }
}

/* Copy a message into receive r and fill r's result; the data is packed (data) or a pinned
 * sender buffer (sbuf, scount, sl). One copy unless both layouts are non-contiguous. */
static void tc_fill(tc_req_t *r, int src, int tag, size_t bytes, const char *data,
                    const void *sbuf, uint64_t scount, const wc_dtype_t *sl)
{
    size_t cap = (size_t)(r->count * r->layout->size), n = bytes;
    r->err = MPI_SUCCESS;
    r->st_msg = bytes;
    if (n > cap) {
        n = cap;
        r->err = MPI_ERR_TRUNCATE;
    }
    r->st_src = src;
    r->st_tag = tag;
    r->st_bytes = n;
    if (!n)
        return;
    if (data) {
        tc_unpack_into(r, data, n);
    } else if (sl->contig) {
        tc_unpack_into(r, (const char *)sbuf + sl->contig_off, n);
    } else if (r->layout->contig && n == bytes) {
        tc_pack((char *)r->buf + r->layout->contig_off, sbuf, scount, sl, n);
    } else {
        /* both non-contiguous (or truncated): through a small buffer that stays in the cache,
         * TC_CHUNK bytes at a time */
        char tmp[TC_CHUNK];
        wc_dtype_cursor_t sc, rc;
        wc_dtype_cursor_init(&sc, sl, sbuf, scount);
        wc_dtype_cursor_init(&rc, r->layout, r->buf, r->count);
        for (size_t done = 0; done < n;) {
            size_t k = n - done < TC_CHUNK ? n - done : TC_CHUNK;
            wc_dtype_pack(&sc, tmp, k);
            wc_dtype_unpack(&rc, tmp, k);
            done += k;
        }
    }
}

static inline bool tc_match(const tc_req_t *r, uint32_t ctx, int src, int tag)
{
    return r->ctx == ctx && (r->src == MPI_ANY_SOURCE || r->src == src) &&
           (r->tag == MPI_ANY_TAG || r->tag == tag);
}

static tc_req_t *tc_posted_take(tc_rank_t *q, uint32_t ctx, int src, int tag)
{
    tc_req_t *prev = NULL;
    for (tc_req_t *r = q->posted; r; prev = r, r = r->next) {
        if (!tc_match(r, ctx, src, tag))
            continue;
        if (prev)
            prev->next = r->next;
        else
            q->posted = r->next;
        if (q->posted_tail == r)
            q->posted_tail = prev;
        if (r->remote)
            atomic_fetch_sub_explicit(&q->wild, 1, memory_order_relaxed);
        if (r->prog)
            atomic_fetch_sub_explicit(&q->root->nwild, 1, memory_order_relaxed);
        return r;
    }
    return NULL;
}

static tc_msg_t *tc_unexp_find(tc_rank_t *q, uint32_t ctx, int src, int tag, bool take)
{
    tc_msg_t *prev = NULL;
    for (tc_msg_t *m = q->unexp; m; prev = m, m = m->next) {
        if (m->ctx != ctx || (src != MPI_ANY_SOURCE && m->src != src) ||
            (tag != MPI_ANY_TAG && m->tag != tag))
            continue;
        if (take) {
            if (prev)
                prev->next = m->next;
            else
                q->unexp = m->next;
            if (q->unexp_tail == m)
                q->unexp_tail = prev;
            if (m->mq)
                q->rstash--;
        }
        return m;
    }
    return NULL;
}

static void tc_unexp_append(tc_rank_t *q, tc_msg_t *m)
{
    m->next = NULL;
    if (q->unexp_tail)
        q->unexp_tail->next = m;
    else
        q->unexp = m;
    q->unexp_tail = m;
}

/* A message for sending from thread-rank me with `data` bytes of data inside (0: pinned): from
 * me's pool when the caller owns it (pool) and the data fits a slot, else malloc'd. NULL: no
 * memory. */
static tc_msg_t *tc_msg_get(tc_rank_t *me, bool pool, size_t data)
{
    tc_msg_t *m;
    if (WU_LIKELY(pool && data <= TC_EAGER)) {
        if (WU_UNLIKELY(!(m = me->mfree)))
            m = atomic_exchange_explicit(&me->mret, NULL, memory_order_acquire);
        if (WU_LIKELY(m != NULL)) {
            me->mfree = m->next;
            return m;
        }
        if ((m = malloc(sizeof(*m) + TC_EAGER))) {
            m->pool = me;
            m->owned = NULL;
        }
        return m;
    }
    if ((m = malloc(sizeof(*m) + data))) {
        m->pool = NULL;
        m->owned = NULL;
    }
    return m;
}

/* m, from tc_msg_get by me's owner, was not used. */
static void tc_msg_unget(tc_rank_t *me, tc_msg_t *m)
{
    if (m->pool) {
        m->next = me->mfree;
        me->mfree = m;
    } else {
        free(m);
    }
}

/* m has been consumed (any thread): back to its pool, or freed. */
static void tc_msg_put(tc_msg_t *m)
{
    tc_rank_t *p = m->pool;
    if (!p) {
        free(m->owned);
        free(m);
        return;
    }
    tc_msg_t *head = atomic_load_explicit(&p->mret, memory_order_relaxed);
    do
        m->next = head;
    while (!atomic_compare_exchange_weak_explicit(&p->mret, &head, m, memory_order_release,
                                                  memory_order_relaxed));
}

static void tc_send_ack(tc_root_t *root, int proc, uint64_t req, int idx)
{
    tc_ack_t a = { .req = req, .idx = idx };
    PMPI_Send(&a, (int)sizeof(a), MPI_BYTE, proc, TC_TAG_ACK, root->net);
}

/* ---- point-to-point core ---- */

/* A packet on net (header and data follow): sent without waiting, kept until its send completes
 * (tc_nsend_reap), so that a sender never blocks on a receiving process that does not poll net
 * at the moment (its thread-ranks may wait in the library on pair communicators only). */
struct tc_nsend {
    struct tc_nsend *next;
    MPI_Request req;
};

/* Free the packets whose sends completed (any thread; skips if another thread does it). */
static void tc_nsend_reap(tc_root_t *root)
{
    if (!atomic_load_explicit(&root->nsends, memory_order_relaxed) ||
        !wt_spin_trylock_always(&root->slock))
        return;
    tc_nsend_t *list = atomic_exchange_explicit(&root->nsends, NULL, memory_order_acquire);
    tc_nsend_t *keep = NULL, **tail = &keep;
    for (tc_nsend_t *ns = list, *nx; ns; ns = nx) {
        int flag = 0;
        nx = ns->next;
        PMPI_Test(&ns->req, &flag, MPI_STATUS_IGNORE);
        if (flag) {
            free(ns);
        } else {
            *tail = ns;
            tail = &ns->next;
        }
    }
    wt_spin_unlock_always(&root->slock);
    if (keep) {   /* back on the stack, in front of what was pushed meanwhile */
        tc_nsend_t *head = atomic_load_explicit(&root->nsends, memory_order_relaxed);
        do
            *tail = head;
        while (!atomic_compare_exchange_weak_explicit(&root->nsends, &head, keep,
                                                      memory_order_release,
                                                      memory_order_relaxed));
    }
}

/* Send ns's packet of n bytes to process proc on net; ns is freed when the send completes. */
static int tc_net_isend(tc_root_t *root, tc_nsend_t *ns, MPI_Count n, int proc)
{
    int flag = 0, rc = PMPI_Isend_c(ns + 1, n, MPI_BYTE, proc, TC_TAG_MSG, root->net, &ns->req);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Test(&ns->req, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || flag) {   /* an eager send is complete at once */
        free(ns);
        return rc;
    }
    tc_nsend_t *head = atomic_load_explicit(&root->nsends, memory_order_relaxed);
    do
        ns->next = head;
    while (!atomic_compare_exchange_weak_explicit(&root->nsends, &head, ns, memory_order_release,
                                                  memory_order_relaxed));
    return MPI_SUCCESS;
}

/* Start a send of count elements of layout l at buf from v's rank to comm rank dest on context
 * ctx; s completes when buf may be reused (sync: when matched). */
static int tc_isend(tc_view_t *v, const void *buf, uint64_t count, const wc_dtype_t *l, int dest,
                    int tag, uint32_t ctx, bool sync, bool buffered, tc_req_t *s)
{
    tc_root_t *root = v->root;
    int dtr = tc_trank(v, dest);
    int proc = root->proc_of[dtr];
    size_t bytes = (size_t)(count * l->size);
    if (proc != root->myproc) {
        tc_nsend_t *ns = malloc(sizeof(tc_nsend_t) + sizeof(tc_hdr_t) + bytes);
        if (!ns)
            return MPI_ERR_NO_MEM;
        char *pkt = (char *)(ns + 1);
        tc_hdr_t h = { .ctx = ctx, .src = v->rank, .tag = tag,
                       .dst = dtr - root->tbase[proc], .ack = sync ? (uint64_t)(uintptr_t)s : 0,
                       .bytes = bytes, .ack_idx = (int32_t)(v->me - root->ranks) };
        memcpy(pkt, &h, sizeof(h));
        if (sync && s->core) {   /* MPI_Wait & co do not poll net for its ACK */
            s->prog = true;
            tc_nwild_inc(root);
        }
        if (sync) {   /* release s's set-up to the thread that completes it (tc_ack_t) */
            wt_spin_lock_always(&v->me->lock);
            wt_spin_unlock_always(&v->me->lock);
        }
        if (bytes)
            tc_pack(pkt + sizeof(h), buf, count, l, bytes);
        int rc = tc_net_isend(root, ns, (MPI_Count)(sizeof(h) + bytes), proc);
        if (rc != MPI_SUCCESS) {
            if (s->prog)
                atomic_fetch_sub_explicit(&root->nwild, 1, memory_order_relaxed);
            return rc;
        }
        if (!sync)
            tc_complete(s);
        return MPI_SUCCESS;
    }
    tc_rank_t *q = &root->ranks[dtr - root->base];
    bool copy = !sync && (buffered || bytes <= TC_EAGER);
    /* the message before the lock (most sends of a stream find no receive posted yet): a pool
     * slot, given back at once if a receive is found */
    tc_msg_t *m = tc_msg_get(v->me, !v->helper, copy ? bytes : 0);
    if (WU_UNLIKELY(!m))
        return MPI_ERR_NO_MEM;
    tc_rank_t *pool = m->pool;
    wt_spin_lock_always(&q->lock);
    tc_req_t *r = tc_posted_take(q, ctx, v->rank, tag);
    if (r) {
        wt_spin_unlock_always(&q->lock);
        tc_msg_unget(v->me, m);
        tc_fill(r, v->rank, tag, bytes, NULL, buf, count, l);
        tc_complete(r);
        tc_complete(s);
        return MPI_SUCCESS;
    }
    *m = (tc_msg_t){ .pool = pool, .ctx = ctx, .src = v->rank, .tag = tag, .bytes = bytes };
    if (copy) {
        m->data = (const char *)(m + 1);
        if (bytes)
            tc_pack(m + 1, buf, count, l, bytes);
    } else {
        m->sbuf = buf;
        m->scount = count;
        m->slayout = l;
        m->sreq = s;
    }
    tc_unexp_append(q, m);
    wt_spin_unlock_always(&q->lock);
    if (copy)
        tc_complete(s);
    return MPI_SUCCESS;
}

/* Receive matched-probed message m (a pair communicator's) into r: as bytes, straight into a
 * contiguous buffer, else through a temporary (also for a truncated one: the library's own
 * truncation error would go to the pair communicator's handler). */
static void tc_mrecv(tc_msg_t *m, tc_req_t *r)
{
    size_t cap = (size_t)(r->count * r->layout->size);
    MPI_Message mm = m->mmsg;
    r->st_src = m->src;
    r->st_tag = m->tag;
    r->st_msg = m->bytes;
    r->st_bytes = m->bytes <= cap ? m->bytes : cap;
    r->err = m->bytes <= cap ? MPI_SUCCESS : MPI_ERR_TRUNCATE;
    if (m->bytes <= cap && r->layout->contig) {
        if (PMPI_Mrecv_c((char *)r->buf + r->layout->contig_off, (MPI_Count)m->bytes, MPI_BYTE,
                         &mm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            r->err = MPI_ERR_OTHER;
        return;
    }
    char *tmp = malloc(m->bytes ? m->bytes : 1);
    if (!tmp)
        wc_fatal(WU_ERR_NO_MEMORY, "threadcomm: no memory for an incoming message");
    if (PMPI_Mrecv_c(tmp, (MPI_Count)m->bytes, MPI_BYTE, &mm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        r->err = MPI_ERR_OTHER;
    else if (r->st_bytes)
        tc_unpack_into(r, tmp, r->st_bytes);
    free(tmp);
}

/* Take message m (out of its queue) into receive r, complete r and m's sender, free m. */
static void tc_consume(tc_root_t *root, tc_msg_t *m, tc_req_t *r)
{
    if (m->mq)
        tc_mrecv(m, r);
    else
        tc_fill(r, m->src, m->tag, m->bytes, m->data, m->sbuf, m->scount, m->slayout);
    if (m->sreq)
        tc_complete(m->sreq);
    if (m->ack)
        tc_send_ack(root, m->ack_proc, m->ack, m->ack_idx);
    tc_msg_put(m);
    tc_complete(r);
}

/* remote: r may match a message of a pair communicator (tc_pull); prog: r is a user's request
 * that may match a message of another process (the progress thread polls while it is posted). */
static void tc_irecv_x(tc_view_t *v, void *buf, uint64_t count, const wc_dtype_t *l, int src,
                       int tag, uint32_t ctx, tc_req_t *r, bool remote, bool prog)
{
    tc_rank_t *q = v->me;
    bool wake = false;
    r->remote = false;
    r->prog = false;
    r->ctx = ctx;
    r->src = src;
    r->tag = tag;
    r->buf = buf;
    r->count = count;
    r->layout = l;
    wt_spin_lock_always(&q->lock);
    tc_msg_t *m = tc_unexp_find(q, ctx, src, tag, true);
    if (!m) {
        r->next = NULL;
        if (q->posted_tail)
            q->posted_tail->next = r;
        else
            q->posted = r;
        q->posted_tail = r;
        if (remote) {
            r->remote = true;
            atomic_fetch_add_explicit(&q->wild, 1, memory_order_relaxed);
        }
        if (prog)
            r->prog = wake = true;
    }
    wt_spin_unlock_always(&q->lock);
    if (m)
        tc_consume(v->root, m, r);
    if (wake)
        tc_nwild_inc(v->root);
}

static void tc_irecv(tc_view_t *v, void *buf, uint64_t count, const wc_dtype_t *l, int src,
                     int tag, uint32_t ctx, tc_req_t *r)
{
    tc_irecv_x(v, buf, count, l, src, tag, ctx, r, false, false);
}

/* Take the messages waiting in local thread-rank d's pair communicators into its lists, in each
 * pair's order, while d has receives that may match them (wild): matched ones are received at
 * once, the others kept as unexpected (rstash). Any thread; skips if another thread pulls for d. */
static void tc_pull(tc_root_t *root, int d)
{
    tc_rank_t *q = &root->ranks[d];
    if (!root->direct || !atomic_load_explicit(&q->wild, memory_order_relaxed) ||
        !wt_spin_trylock_always(&q->plock))
        return;
    for (int s = 0; s < root->kmax && atomic_load_explicit(&q->wild, memory_order_relaxed); s++) {
        MPI_Comm pc = root->pair[s * root->kmax + d];
        for (;;) {
            int flag = 0;
            MPI_Message mm;
            MPI_Status st;
            MPI_Count n = 0;
            if (PMPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, pc, &flag, &mm, &st) != MPI_SUCCESS)
                wc_fatal(WU_ERR_INTERNAL, "threadcomm: probe of a pair communicator failed");
            if (!flag)
                break;
            PMPI_Get_count_c(&st, MPI_BYTE, &n);
            tc_msg_t *m = malloc(sizeof(*m));
            if (!m)
                wc_fatal(WU_ERR_NO_MEMORY, "threadcomm: no memory for an incoming message");
            *m = (tc_msg_t){ .ctx = 0, .src = st.MPI_SOURCE, .tag = st.MPI_TAG,
                             .bytes = (size_t)n, .mq = true, .mmsg = mm };
            wt_spin_lock_always(&q->lock);
            tc_req_t *r = tc_posted_take(q, 0, m->src, m->tag);
            if (!r) {
                tc_unexp_append(q, m);
                q->rstash++;
            }
            wt_spin_unlock_always(&q->lock);
            if (r)
                tc_consume(root, m, r);
            if (!atomic_load_explicit(&q->wild, memory_order_relaxed))
                break;
        }
    }
    wt_spin_unlock_always(&q->plock);
}

/* Does a receive of v's thread-rank from `src` (a rank of the threadcomm or MPI_ANY_SOURCE) take
 * the direct remote path, i.e. straight from a pair communicator (true), or the lists? */
static bool tc_recv_direct(tc_view_t *v, int src)
{
    tc_root_t *root = v->root;
    if (src == MPI_ANY_SOURCE || root->proc_of[src] == root->myproc)
        return false;
    tc_rank_t *q = v->me;
    /* under plock: no pull is between its probe and its append, so with wild and rstash zero
     * every message of the pair communicators is still there, and none is pulled before the
     * caller posts its receive (only this thread makes wild non-zero) */
    if (!wt_spin_trylock_always(&q->plock))
        return false;
    wt_spin_lock_always(&q->lock);
    bool direct = !atomic_load_explicit(&q->wild, memory_order_relaxed) && !q->rstash;
    wt_spin_unlock_always(&q->lock);
    wt_spin_unlock_always(&q->plock);
    return direct;
}

static inline MPI_Comm tc_pair_of(const tc_root_t *root, int s, int d)
{
    return root->pair[s * root->kmax + d];
}

/* A message from the network for local thread-rank h->dst (pkt: header then data, malloc'd). */
static void tc_deliver_remote(tc_root_t *root, int proc, char *pkt)
{
    tc_hdr_t h;
    memcpy(&h, pkt, sizeof(h));
    tc_rank_t *q = &root->ranks[h.dst];
    tc_msg_t *m = malloc(sizeof(*m));
    if (!m)
        wc_fatal(WU_ERR_NO_MEMORY, "threadcomm: no memory for an incoming message");
    *m = (tc_msg_t){ .ctx = h.ctx, .src = h.src, .tag = h.tag, .bytes = (size_t)h.bytes,
                     .owned = pkt, .data = pkt + sizeof(h), .ack = h.ack, .ack_proc = proc,
                     .ack_idx = h.ack_idx };
    wt_spin_lock_always(&q->lock);
    tc_req_t *r = tc_posted_take(q, h.ctx, h.src, h.tag);
    if (!r)
        tc_unexp_append(q, m);
    wt_spin_unlock_always(&q->lock);
    if (r)
        tc_consume(root, m, r);
}

/* One message of net, matched-probed: ACK of a synchronous send, or a message to deliver. */
static void tc_net_take(tc_root_t *root, MPI_Message *msg, const MPI_Status *st)
{
    MPI_Count n;
    PMPI_Get_count_c(st, MPI_BYTE, &n);
    char *pkt = malloc(n ? (size_t)n : 1);
    if (!pkt)
        wc_fatal(WU_ERR_NO_MEMORY, "threadcomm: no memory for an incoming message");
    PMPI_Mrecv_c(pkt, n, MPI_BYTE, msg, MPI_STATUS_IGNORE);
    if (st->MPI_TAG != TC_TAG_ACK) {
        tc_deliver_remote(root, st->MPI_SOURCE, pkt);
        return;
    }
    tc_ack_t a;
    memcpy(&a, pkt, sizeof(a));
    free(pkt);
    if (a.idx < 0 || a.idx >= root->nlocal)
        wc_fatal(WU_ERR_INTERNAL, "threadcomm: ACK names no local thread-rank");
    tc_rank_t *q = &root->ranks[a.idx];
    tc_req_t *r = (tc_req_t *)(uintptr_t)a.req;
    wt_spin_lock_always(&q->lock);
    bool counted = r->prog;   /* a user's request: counted in nwild (tc_isend) */
    tc_complete(r);
    wt_spin_unlock_always(&q->lock);
    if (counted)
        atomic_fetch_sub_explicit(&root->nwild, 1, memory_order_relaxed);
}

/* Take every message waiting on net (any thread; one at a time, under netlock, so each pair of
 * processes' messages are delivered in order). No-op in a one-process threadcomm. */
static void tc_net_poll(tc_root_t *root)
{
    if (root->nprocs == 1)
        return;
    tc_nsend_reap(root);
    if (!wt_spin_trylock_always(&root->netlock))
        return;
    for (;;) {
        int flag = 0;
        MPI_Message msg;
        MPI_Status st;
        if (PMPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, root->net, &flag, &msg, &st) != MPI_SUCCESS)
            wc_fatal(WU_ERR_INTERNAL, "threadcomm: probe of net failed");
        if (!flag)
            break;
        tc_net_take(root, &msg, &st);
    }
    wt_spin_unlock_always(&root->netlock);
}

/* nwild went up (a user's request may need net or the pair communicators while its owner waits
 * in MPI_Wait & co, which do not poll them): wake the progress thread if it sleeps. */
static void tc_nwild_inc(tc_root_t *root)
{
    atomic_fetch_add_explicit(&root->nwild, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&root->psleep, memory_order_seq_cst)) {
        __atomic_fetch_add(&root->pgen, 1, __ATOMIC_RELEASE);
        wt_word_wake_all(&root->pgen);
    }
}

/* The progress thread (threadcomms over several processes): sleeps while no user request needs
 * it (nwild zero); else polls net and the pair communicators of every local thread-rank. The
 * thread-ranks' own blocking calls poll for themselves (tc_wait). Dekker on nwild / psleep: a
 * waker that saw psleep clear raised nwild before this thread looks at it. */
static void *tc_progress_main(void *arg)
{
    tc_root_t *root = arg;
    unsigned spins = 0;
    for (;;) {
        uint32_t gen = __atomic_load_n(&root->pgen, __ATOMIC_ACQUIRE);
        if (atomic_load_explicit(&root->pstop, memory_order_acquire))
            break;
        atomic_store_explicit(&root->psleep, 1, memory_order_seq_cst);
        if (!atomic_load_explicit(&root->nwild, memory_order_seq_cst)) {
            /* woken by tc_nwild_inc or the stop; the time-out only bounds the cost of a
             * wake-up missed by a bug (a user's request would otherwise never progress) */
            wt_word_wait(&root->pgen, gen, 10000000u);
            atomic_store_explicit(&root->psleep, 0, memory_order_relaxed);
            spins = 0;
            continue;
        }
        atomic_store_explicit(&root->psleep, 0, memory_order_relaxed);
        tc_net_poll(root);
        for (int i = 0; i < root->nlocal; i++)
            tc_pull(root, i);
        tc_pause(&spins);
    }
    return NULL;
}

/* Blocking internal forms for the collectives: return an MPI error code. */
static int tc_send_b(tc_view_t *v, const void *buf, MPI_Count count, MPI_Datatype type, int dest,
                     int tag, uint32_t ctx)
{
    tc_req_t s = { .greq = MPI_REQUEST_NULL };
    int rc = tc_isend(v, buf, (uint64_t)count, &wm_type_get(type)->layout, dest, tag, ctx, false,
                      false, &s);
    if (rc == MPI_SUCCESS)
        tc_wait(v->root, &s);
    return rc;
}

static int tc_recv_b(tc_view_t *v, void *buf, MPI_Count count, MPI_Datatype type, int src,
                     int tag, uint32_t ctx)
{
    tc_req_t r = { .greq = MPI_REQUEST_NULL };
    tc_irecv(v, buf, (uint64_t)count, &wm_type_get(type)->layout, src, tag, ctx, &r);
    tc_wait(v->root, &r);
    return r.err;
}

/* ---- MPI entry points of point-to-point ---- */

static int tc_check_peer(wm_comm_t *c, const char *fn, const tc_view_t *v, int peer, int tag,
                         bool recv)
{
    if ((peer < 0 || peer >= v->size) && peer != MPI_PROC_NULL &&
        !(recv && peer == MPI_ANY_SOURCE))
        return wm_error(c, MPI_ERR_RANK, fn, "invalid %s rank %d (the threadcomm has %d ranks)",
                        recv ? "source" : "destination", peer, v->size);
    if ((tag < 0 || tag > WM_TAG_UB) && !(recv && tag == MPI_ANY_TAG))
        return wm_error(c, MPI_ERR_TAG, fn, "invalid tag %d (valid: 0 to %d)", tag, WM_TAG_UB);
    return MPI_SUCCESS;
}

/* Is a message of v's thread-rank to comm rank dest sent on a pair communicator? (The
 * threadcomm itself only: its ranks are thread-ranks.) */
static inline bool tc_send_direct(const tc_view_t *v, int dest)
{
    const tc_root_t *root = v->root;
    return root->direct && v->ctx == 0 && root->proc_of[dest] != root->myproc;
}

/* A send on the direct remote path: the library's own send of the user's buffer and datatype on
 * the pair communicator (Rsend as a standard send: the receive may sit in the lists). request
 * NULL: blocking. */
static int tc_send_pair(const tc_view_t *v, const void *buf, MPI_Count count, MPI_Datatype type,
                        int dest, int tag, int mode, bool buffered, MPI_Request *request)
{
    const tc_root_t *root = v->root;
    int proc = root->proc_of[dest], s = (int)(v->me - root->ranks);
    MPI_Comm pc = tc_pair_of(root, s, dest - root->tbase[proc]);
    int to = root->tbase[proc] + s;   /* process proc in pc */
    if (request) {
        if (buffered)
            return PMPI_Ibsend_c(buf, count, type, to, tag, pc, request);
        if (mode == WC_SEND_SYNC)
            return PMPI_Issend_c(buf, count, type, to, tag, pc, request);
        return PMPI_Isend_c(buf, count, type, to, tag, pc, request);
    }
    if (buffered)
        return PMPI_Bsend_c(buf, count, type, to, tag, pc);
    if (mode == WC_SEND_SYNC)
        return PMPI_Ssend_c(buf, count, type, to, tag, pc);
    return PMPI_Send_c(buf, count, type, to, tag, pc);
}

int wm_tc_send(const char *fn, wm_comm_t *c, const void *buf, MPI_Count count, MPI_Datatype type,
               int dest, int tag, int mode, bool buffered, MPI_Request *request)
{
    TC_VIEW(fn, c, v);
    const wm_datatype_t *ti;
    int rc = wm_check_buffer_args(c, fn, buf, count, type, &ti);
    if (rc || (rc = tc_check_peer(c, fn, v, dest, tag, false)))
        return rc;
    if (dest == MPI_PROC_NULL) {
        if (request)
            return PMPI_Isend(buf, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, request);
        return MPI_SUCCESS;
    }
    if (tc_send_direct(v, dest))
        return tc_send_pair(v, buf, count, type, dest, tag, mode, buffered, request);
    tc_req_t stack, *s = &stack;
    if (request) {
        if (WU_UNLIKELY(!(s = tc_user_req(c, ti, dest, tag, request))))
            return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a request");
    } else {
        stack = (tc_req_t){ .greq = MPI_REQUEST_NULL };
    }
    rc = tc_isend(v, buf, (uint64_t)count, &ti->layout, dest, tag, v->ctx,
                  mode == WC_SEND_SYNC, buffered, s);
    if (rc != MPI_SUCCESS) {
        if (request) {   /* nobody else knows the request */
            wm_request_release(WU_CONTAINER_OF(s->core, wm_request_t, core));
            *request = MPI_REQUEST_NULL;
        }
        return wm_error(c, rc, fn, "the send to rank %d failed", dest);
    }
    if (!request)
        tc_wait(v->root, s);
    return MPI_SUCCESS;
}

int wm_tc_recv(const char *fn, wm_comm_t *c, void *buf, MPI_Count count, MPI_Datatype type,
               int source, int tag, MPI_Status *status, MPI_Request *request)
{
    TC_VIEW(fn, c, v);
    const wm_datatype_t *ti;
    int rc = wm_check_buffer_args(c, fn, buf, count, type, &ti);
    if (rc || (rc = tc_check_peer(c, fn, v, source, tag, true)))
        return rc;
    if (source == MPI_PROC_NULL) {
        if (request)
            return PMPI_Irecv(buf, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, request);
        if (status != MPI_STATUS_IGNORE)
            wm_status_fill(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, 0);
        return MPI_SUCCESS;
    }
    tc_root_t *root = v->root;
    bool pairs = root->direct && v->ctx == 0;   /* may match a pair communicator's message */
    if (pairs && tc_recv_direct(v, source)) {
        int proc = root->proc_of[source];
        MPI_Comm pc = tc_pair_of(root, source - root->tbase[proc], (int)(v->me - root->ranks));
        if (request)
            return PMPI_Irecv_c(buf, count, type, source, tag, pc, request);
        return PMPI_Recv_c(buf, count, type, source, tag, pc, status);
    }
    bool from_remote = root->nprocs > 1 &&
                       (source == MPI_ANY_SOURCE ||
                        root->proc_of[tc_trank(v, source)] != root->myproc);
    pairs = pairs && from_remote;
    tc_req_t stack, *r = &stack;
    if (request) {
        if (WU_UNLIKELY(!(r = tc_user_req(c, ti, source, tag, request))))
            return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a request");
    } else {
        stack = (tc_req_t){ .greq = MPI_REQUEST_NULL };
    }
    tc_irecv_x(v, buf, (uint64_t)count, &ti->layout, source, tag, v->ctx, r, pairs,
               request && from_remote);
    if (request)
        return MPI_SUCCESS;
    tc_wait_x(root, r, pairs ? (int)(v->me - root->ranks) : -1);
    if (status != MPI_STATUS_IGNORE)
        wm_status_fill(status, r->st_src, r->st_tag, (MPI_Count)r->st_bytes, 0);
    if (r->err == MPI_ERR_TRUNCATE)
        return wm_error(c, MPI_ERR_TRUNCATE, fn, "message of more than %zu bytes from rank %d, "
                        "tag %d, truncated", r->st_bytes, r->st_src, r->st_tag);
    return r->err ? wm_error(c, r->err, fn, "receive failed") : MPI_SUCCESS;
}

int wm_tc_sendrecv(const char *fn, wm_comm_t *c, const void *sbuf, MPI_Count scount,
                   MPI_Datatype stype, int dest, int stag, void *rbuf, MPI_Count rcount,
                   MPI_Datatype rtype, int source, int rtag, MPI_Status *status)
{
    TC_VIEW(fn, c, v);
    const wm_datatype_t *sti, *rti;
    int rc;
    if ((rc = wm_check_buffer_args(c, fn, sbuf, scount, stype, &sti)) ||
        (rc = wm_check_buffer_args(c, fn, rbuf, rcount, rtype, &rti)) ||
        (rc = tc_check_peer(c, fn, v, dest, stag, false)) ||
        (rc = tc_check_peer(c, fn, v, source, rtag, true)))
        return rc;
    tc_req_t s = { .greq = MPI_REQUEST_NULL };
    MPI_Request ps = MPI_REQUEST_NULL;
    if (dest != MPI_PROC_NULL && tc_send_direct(v, dest)) {
        if ((rc = tc_send_pair(v, sbuf, scount, stype, dest, stag, WC_SEND_STANDARD, false, &ps)))
            return rc;
    } else if (dest != MPI_PROC_NULL) {
        rc = tc_isend(v, sbuf, (uint64_t)scount, &sti->layout, dest, stag, v->ctx, false, false,
                      &s);
        if (rc != MPI_SUCCESS)
            return wm_error(c, rc, fn, "the send to rank %d failed", dest);
    }
    rc = wm_tc_recv(fn, c, rbuf, rcount, rtype, source, rtag, status, NULL);
    if (ps != MPI_REQUEST_NULL) {
        int rc2 = PMPI_Wait(&ps, MPI_STATUS_IGNORE);
        if (!rc)
            rc = rc2;
    } else if (dest != MPI_PROC_NULL) {
        tc_wait(v->root, &s);
    }
    return rc;
}

int wm_tc_sendrecv_replace(const char *fn, wm_comm_t *c, void *buf, MPI_Count count,
                           MPI_Datatype type, int dest, int stag, int source, int rtag,
                           MPI_Status *status)
{
    const wm_datatype_t *ti;
    int rc = wm_check_buffer_args(c, fn, buf, count, type, &ti);
    if (rc)
        return rc;
    size_t bytes = (size_t)((uint64_t)count * ti->layout.size);
    void *tmp = malloc(bytes ? bytes : 1);
    if (!tmp)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a %zu-byte staging buffer", bytes);
    if (bytes)
        tc_pack(tmp, buf, (uint64_t)count, &ti->layout, bytes);
    rc = wm_tc_sendrecv(fn, c, tmp, (MPI_Count)bytes, MPI_BYTE, dest, stag, buf, count, type,
                        source, rtag, status);
    free(tmp);
    return rc;
}

int wm_tc_probe(const char *fn, wm_comm_t *c, int source, int tag, int *flag,
                MPI_Status *status, bool block)
{
    TC_VIEW(fn, c, v);
    int rc = tc_check_peer(c, fn, v, source, tag, true);
    if (rc)
        return rc;
    if (source == MPI_PROC_NULL) {
        if (flag)
            *flag = 1;
        if (status != MPI_STATUS_IGNORE)
            wm_status_fill(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, 0);
        return MPI_SUCCESS;
    }
    tc_rank_t *q = v->me;
    tc_root_t *root = v->root;
    /* the pair communicators too, under plock: no message is between a pair communicator and
     * the lists meanwhile, and the lists (older messages of each pair) are looked at first */
    bool pairs = root->direct && v->ctx == 0 &&
                 (source == MPI_ANY_SOURCE || root->proc_of[source] != root->myproc);
    int d = (int)(q - root->ranks);
    unsigned spins = 0;
    for (;;) {
        tc_net_poll(root);
        if (pairs)
            wt_spin_lock_always(&q->plock);
        wt_spin_lock_always(&q->lock);
        tc_msg_t *m = tc_unexp_find(q, v->ctx, source, tag, false);
        if (m && status != MPI_STATUS_IGNORE)
            wm_status_fill(status, m->src, m->tag, (MPI_Count)m->bytes, 0);
        wt_spin_unlock_always(&q->lock);
        int found = m != NULL;
        if (!found && pairs) {
            int s0 = 0, s1 = root->kmax;
            if (source != MPI_ANY_SOURCE)
                s0 = source - root->tbase[root->proc_of[source]], s1 = s0 + 1;
            for (int s = s0; s < s1 && !found && rc == MPI_SUCCESS; s++)
                rc = PMPI_Iprobe(source, tag, tc_pair_of(root, s, d), &found, status);
        }
        if (pairs)
            wt_spin_unlock_always(&q->plock);
        if (rc)
            return rc;
        if (found || !block) {
            if (flag)
                *flag = found;
            return MPI_SUCCESS;
        }
        tc_pause(&spins);
    }
}

int wm_tc_unsupported(const char *fn, wm_comm_t *c)
{
    return wm_error(c, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                    "not implemented on a thread communicator (docs/threadcomm.md)");
}

/* ---- queries ---- */

int wm_tc_rank(wm_comm_t *c)
{
    tc_view_t *v = tc_view_of(c);
    return v ? v->rank : MPI_UNDEFINED;
}

int wm_tc_size(wm_comm_t *c)
{
    tc_view_t *v = tc_view_of(c);
    if (v)
        return v->size;
    return c->tc->root ? c->tc->root->total : MPI_UNDEFINED;
}

/* ---- collectives (over the point-to-point above, on the context's collective side) ---- */

/* A temporary for count elements of type (NULL: no memory); *base_p is where element 0 goes. */
static void *tc_tmp(MPI_Count count, MPI_Datatype type, char **base_p)
{
    const wm_datatype_t *t = wm_type_get(type);
    size_t span = count ? (size_t)(t->true_extent + (count - 1) * t->extent) : 0;
    char *m = malloc(span ? span : 1);
    *base_p = m ? m - t->true_lb : NULL;
    return m;
}

static int tc_bcast_impl(tc_view_t *v, void *buf, MPI_Count count, MPI_Datatype type, int root,
                         int tag, uint32_t ctx)
{
    int n = v->size, vr = (v->rank - root + n) % n, rc = MPI_SUCCESS;
    int mask = 1;
    while (mask < n) {
        if (vr & mask) {
            rc = tc_recv_b(v, buf, count, type, (vr - mask + root) % n, tag, ctx);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0 && rc == MPI_SUCCESS; mask >>= 1)
        if (vr + mask < n)
            rc = tc_send_b(v, buf, count, type, (vr + mask + root) % n, tag, ctx);
    return rc;
}

static int64_t tc_vec_at(const wm_tc_vec_t *v, int k)
{
    return v->i ? v->i[k] : v->c ? (int64_t)v->c[k] : (int64_t)v->a[k];
}

/* count elements of type from src to dst (any layouts) through a message to self. */
static int tc_self_copy(tc_view_t *v, const void *src, void *dst, MPI_Count count,
                        MPI_Datatype type, int tag, uint32_t ctx)
{
    const wc_dtype_t *l = &wm_type_get(type)->layout;
    tc_req_t r = { .greq = MPI_REQUEST_NULL }, s = { .greq = MPI_REQUEST_NULL };
    tc_irecv(v, dst, (uint64_t)count, l, v->rank, tag, ctx | TC_SELF_BIT, &r);
    int rc = tc_isend(v, src, (uint64_t)count, l, v->rank, tag, ctx | TC_SELF_BIT, false, false,
                      &s);
    tc_wait(v->root, &r);
    if (rc == MPI_SUCCESS)
        tc_wait(v->root, &s);
    return rc ? rc : r.err;
}

static int tc_coll_run(tc_view_t *v, const wm_tc_coll_args_t *a, uint32_t seq)
{
    uint32_t ctx = v->ctx | TC_COLL_BIT;
    int tag = (int)(seq & 0x3fffffffu);
    int n = v->size, me = v->rank, rc = MPI_SUCCESS;
    const wm_datatype_t *st = a->stype ? wm_type_get(a->stype) : NULL;
    const wm_datatype_t *rt = a->rtype ? wm_type_get(a->rtype) : NULL;
    switch (a->kind) {
    case WM_TC_BARRIER: {
        char z = 0;
        if (me == 0) {
            for (int i = 1; i < n && !rc; i++)
                rc = tc_recv_b(v, &z, 0, MPI_BYTE, i, tag, ctx);
        } else {
            rc = tc_send_b(v, &z, 0, MPI_BYTE, 0, tag, ctx);
        }
        return rc ? rc : tc_bcast_impl(v, &z, 0, MPI_BYTE, 0, tag, ctx);
    }
    case WM_TC_BCAST:
        return tc_bcast_impl(v, a->rbuf, a->rcount, a->rtype, a->root, tag, ctx);
    case WM_TC_REDUCE:
    case WM_TC_ALLREDUCE: {
        int root = a->kind == WM_TC_REDUCE ? a->root : 0;
        MPI_Count cnt = a->rcount;
        const void *mine = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
        if (me != root) {
            rc = tc_send_b(v, mine, cnt, a->rtype, root, tag, ctx);
        } else {
            /* rank order: acc = x[n-1]; acc = x[i] op acc for i = n-2 .. 0 */
            char *acc, *in;
            void *macc = tc_tmp(cnt, a->rtype, &acc), *min = tc_tmp(cnt, a->rtype, &in);
            if (!macc || !min) {
                free(macc);
                free(min);
                return MPI_ERR_NO_MEM;
            }
            if (n - 1 == me)
                rc = tc_self_copy(v, mine, acc, cnt, a->rtype, tag, ctx);
            else
                rc = tc_recv_b(v, acc, cnt, a->rtype, n - 1, tag, ctx);
            for (int i = n - 2; i >= 0 && !rc; i--) {
                if (i == me) {
                    rc = PMPI_Reduce_local(mine, acc, (int)cnt, a->rtype, a->op);
                } else {
                    rc = tc_recv_b(v, in, cnt, a->rtype, i, tag, ctx);
                    if (!rc)
                        rc = PMPI_Reduce_local(in, acc, (int)cnt, a->rtype, a->op);
                }
            }
            if (!rc)
                rc = tc_self_copy(v, acc, a->rbuf, cnt, a->rtype, tag, ctx);
            free(macc);
            free(min);
        }
        if (!rc && a->kind == WM_TC_ALLREDUCE)
            rc = tc_bcast_impl(v, a->rbuf, cnt, a->rtype, 0, tag, ctx);
        return rc;
    }
    case WM_TC_GATHERV:
    case WM_TC_SCATTERV:
    case WM_TC_ALLGATHERV:
    case WM_TC_ALLTOALLV:
    case WM_TC_ALLTOALLW: {
        /* every transfer posted at once: receives first, then sends in a rotated order */
        bool gv = a->kind == WM_TC_GATHERV, sv = a->kind == WM_TC_SCATTERV;
        bool agv = a->kind == WM_TC_ALLGATHERV, aw = a->kind == WM_TC_ALLTOALLW;
        bool recv_all = agv || a->kind == WM_TC_ALLTOALLV || aw || (gv && me == a->root);
        bool send_all = a->kind == WM_TC_ALLTOALLV || aw || agv || (sv && me == a->root);
        tc_req_t *rs = calloc((size_t)(2 * n), sizeof(*rs));
        if (!rs)
            return MPI_ERR_NO_MEM;
        for (int i = 0; i < 2 * n; i++) {
            rs[i].greq = MPI_REQUEST_NULL;
            rs[i].done = 1;
        }
        /* this rank's own block when sending to all from an in-place receive buffer */
        bool in_place = a->sbuf == MPI_IN_PLACE;
        for (int i = 0; i < n && recv_all; i++) {
            if (in_place && i == me)
                continue;
            rs[i].done = 0;
            if (aw)   /* Alltoallw: the peer's type, displacements in bytes */
                tc_irecv(v, (char *)a->rbuf + tc_vec_at(&a->rdispls, i),
                         (uint64_t)tc_vec_at(&a->rcounts, i), &wm_type_get(a->rtypes[i])->layout,
                         i, tag, ctx, &rs[i]);
            else
                tc_irecv(v, (char *)a->rbuf + tc_vec_at(&a->rdispls, i) * rt->extent,
                         (uint64_t)tc_vec_at(&a->rcounts, i), &rt->layout, i, tag, ctx, &rs[i]);
        }
        if (sv && !(me == a->root && a->rbuf == MPI_IN_PLACE)) {
            rs[me].done = 0;
            tc_irecv(v, a->rbuf, (uint64_t)a->rcount, &rt->layout, a->root, tag, ctx, &rs[me]);
        }
        if (send_all) {
            for (int k = 0; k < n && !rc; k++) {
                int i = (me + k) % n;
                if (in_place && i == me)
                    continue;
                if (sv && a->rbuf == MPI_IN_PLACE && i == me)
                    continue;
                const void *sb;
                uint64_t cnt;
                const wc_dtype_t *l;
                if (agv) {   /* my one block to everyone */
                    if (in_place) {
                        sb = (char *)a->rbuf + tc_vec_at(&a->rdispls, me) * rt->extent;
                        cnt = (uint64_t)tc_vec_at(&a->rcounts, me);
                        l = &rt->layout;
                    } else {
                        sb = a->sbuf;
                        cnt = (uint64_t)a->scount;
                        l = &st->layout;
                    }
                } else if (aw) {
                    sb = (const char *)a->sbuf + tc_vec_at(&a->sdispls, i);
                    cnt = (uint64_t)tc_vec_at(&a->scounts, i);
                    l = &wm_type_get(a->stypes[i])->layout;
                } else {
                    sb = (const char *)a->sbuf + tc_vec_at(&a->sdispls, i) * st->extent;
                    cnt = (uint64_t)tc_vec_at(&a->scounts, i);
                    l = &st->layout;
                }
                rs[n + i].done = 0;
                rc = tc_isend(v, sb, cnt, l, i, tag, ctx, false, false, &rs[n + i]);
                if (rc)
                    rs[n + i].done = 1;
            }
        } else if (gv && !(me == a->root && in_place)) {
            rs[n].done = 0;
            rc = tc_isend(v, a->sbuf, (uint64_t)a->scount, &st->layout, a->root, tag, ctx, false,
                          false, &rs[n]);
            if (rc)
                rs[n].done = 1;
        }
        for (int i = 0; i < 2 * n; i++) {
            tc_wait(v->root, &rs[i]);
            if (!rc && i < n && rs[i].err)
                rc = rs[i].err;
        }
        free(rs);
        return rc;
    }
    case WM_TC_SCAN:
    case WM_TC_EXSCAN: {
        /* a chain in rank order: rank r gets x0 op .. op x(r-1) from r-1 and passes on
         * x0 op .. op xr (Reduce_local(in, inout) computes in op inout) */
        MPI_Count cnt = a->rcount;
        const void *mine = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
        char *part, *prev;
        void *mpart = tc_tmp(cnt, a->rtype, &part), *mprev = tc_tmp(cnt, a->rtype, &prev);
        if (!mpart || !mprev) {
            free(mpart);
            free(mprev);
            return MPI_ERR_NO_MEM;
        }
        rc = tc_self_copy(v, mine, part, cnt, a->rtype, tag, ctx);
        if (!rc && me > 0) {
            rc = tc_recv_b(v, prev, cnt, a->rtype, me - 1, tag, ctx);
            if (!rc)
                rc = PMPI_Reduce_local(prev, part, (int)cnt, a->rtype, a->op);
        }
        if (!rc && me + 1 < n)
            rc = tc_send_b(v, part, cnt, a->rtype, me + 1, tag, ctx);
        if (!rc && a->kind == WM_TC_SCAN)
            rc = tc_self_copy(v, part, a->rbuf, cnt, a->rtype, tag, ctx);
        else if (!rc && me > 0)
            rc = tc_self_copy(v, prev, a->rbuf, cnt, a->rtype, tag, ctx);
        free(mpart);
        free(mprev);
        return rc;
    }
    case WM_TC_RSB: {
        /* Reduce of n blocks to rank 0, then Scatter of the blocks */
        MPI_Count cnt = a->rcount;
        char *all = NULL;
        void *mall = tc_tmp(cnt * n, a->rtype, &all);
        if (!mall)
            return MPI_ERR_NO_MEM;
        wm_tc_coll_args_t ra = { .kind = WM_TC_REDUCE, .sbuf = a->sbuf == MPI_IN_PLACE ? a->rbuf
                                                                                       : a->sbuf,
                                 .rbuf = all, .rcount = cnt * n, .rtype = a->rtype, .op = a->op };
        rc = tc_coll_run(v, &ra, seq);
        wm_tc_coll_args_t sa = { .kind = WM_TC_SCATTER, .sbuf = all, .scount = cnt,
                                 .stype = a->rtype, .rbuf = a->rbuf, .rcount = cnt,
                                 .rtype = a->rtype };
        if (!rc)
            rc = tc_coll_run(v, &sa, seq ^ 0x20000000u);
        free(mall);
        return rc;
    }
    case WM_TC_RS: {
        /* Reduce of every block to rank 0, then Scatterv of block i to rank i */
        MPI_Count *cnt = malloc(sizeof(MPI_Count) * 2 * (size_t)n), *dsp = cnt + n, total = 0;
        if (!cnt)
            return MPI_ERR_NO_MEM;
        for (int i = 0; i < n; i++) {
            cnt[i] = (MPI_Count)tc_vec_at(&a->rcounts, i);
            dsp[i] = total;
            total += cnt[i];
        }
        char *all = NULL;
        void *mall = tc_tmp(total, a->rtype, &all);
        if (!mall) {
            free(cnt);
            return MPI_ERR_NO_MEM;
        }
        wm_tc_coll_args_t ra = { .kind = WM_TC_REDUCE, .sbuf = a->sbuf == MPI_IN_PLACE ? a->rbuf
                                                                                       : a->sbuf,
                                 .rbuf = all, .rcount = total, .rtype = a->rtype, .op = a->op };
        rc = tc_coll_run(v, &ra, seq);
        wm_tc_coll_args_t sa = { .kind = WM_TC_SCATTERV, .sbuf = all, .stype = a->rtype,
                                 .scounts = { .c = cnt }, .sdispls = { .c = dsp },
                                 .rbuf = a->rbuf, .rcount = cnt[me], .rtype = a->rtype };
        if (!rc)
            rc = tc_coll_run(v, &sa, seq ^ 0x20000000u);
        free(mall);
        free(cnt);
        return rc;
    }
    case WM_TC_GATHER:
    case WM_TC_ALLGATHER: {
        int root = a->kind == WM_TC_GATHER ? a->root : 0;
        if (me == root) {
            int64_t bext = rt->extent * (int64_t)a->rcount;
            tc_req_t *rs = calloc((size_t)n, sizeof(*rs));
            if (!rs)
                return MPI_ERR_NO_MEM;
            for (int i = 0; i < n; i++) {
                rs[i].greq = MPI_REQUEST_NULL;
                if (i == me && a->sbuf == MPI_IN_PLACE) {
                    rs[i].done = 1;
                    continue;
                }
                tc_irecv(v, (char *)a->rbuf + i * bext, (uint64_t)a->rcount, &rt->layout, i, tag,
                         ctx, &rs[i]);
            }
            if (a->sbuf != MPI_IN_PLACE)
                rc = tc_send_b(v, a->sbuf, a->scount, a->stype, me, tag, ctx);
            for (int i = 0; i < n; i++) {
                tc_wait(v->root, &rs[i]);
                if (!rc && rs[i].err)
                    rc = rs[i].err;
            }
            free(rs);
        } else {
            const void *sb = a->sbuf;
            MPI_Count sc = a->scount;
            MPI_Datatype sty = a->stype;
            if (sb == MPI_IN_PLACE) {   /* allgather in place: my block of rbuf */
                sb = (char *)a->rbuf + me * rt->extent * (int64_t)a->rcount;
                sc = a->rcount;
                sty = a->rtype;
            }
            rc = tc_send_b(v, sb, sc, sty, root, tag, ctx);
        }
        if (!rc && a->kind == WM_TC_ALLGATHER)
            rc = tc_bcast_impl(v, a->rbuf, a->rcount * n, a->rtype, 0, tag, ctx);
        return rc;
    }
    case WM_TC_SCATTER:
        if (me == a->root) {
            int64_t bext = st->extent * (int64_t)a->scount;
            tc_req_t self = { .greq = MPI_REQUEST_NULL };
            if (a->rbuf != MPI_IN_PLACE)
                tc_irecv(v, a->rbuf, (uint64_t)a->rcount, &rt->layout, me, tag, ctx, &self);
            for (int i = 0; i < n && !rc; i++)
                if (i != me || a->rbuf != MPI_IN_PLACE)
                    rc = tc_send_b(v, (const char *)a->sbuf + i * bext, a->scount, a->stype, i,
                                   tag, ctx);
            if (a->rbuf != MPI_IN_PLACE) {
                tc_wait(v->root, &self);
                if (!rc)
                    rc = self.err;
            }
            return rc;
        }
        return tc_recv_b(v, a->rbuf, a->rcount, a->rtype, a->root, tag, ctx);
    case WM_TC_ALLTOALL: {
        int64_t sext = st->extent * (int64_t)a->scount, rext = rt->extent * (int64_t)a->rcount;
        tc_req_t *rs = calloc((size_t)(2 * n), sizeof(*rs));
        if (!rs)
            return MPI_ERR_NO_MEM;
        for (int i = 0; i < n; i++) {
            rs[i].greq = rs[n + i].greq = MPI_REQUEST_NULL;
            tc_irecv(v, (char *)a->rbuf + i * rext, (uint64_t)a->rcount, &rt->layout, i, tag, ctx,
                     &rs[i]);
        }
        for (int k = 0; k < n && !rc; k++) {
            int i = (me + k) % n;
            rc = tc_isend(v, (const char *)a->sbuf + i * sext, (uint64_t)a->scount, &st->layout,
                          i, tag, ctx, false, false, &rs[n + i]);
        }
        for (int i = 0; i < 2 * n; i++) {
            tc_wait(v->root, &rs[i]);
            if (!rc && i < n && rs[i].err)
                rc = rs[i].err;
        }
        free(rs);
        return rc;
    }
    }
    return MPI_ERR_INTERN;
}

typedef struct tc_zombie {
    struct tc_zombie *next;
    wt_thread_t       th;
} tc_zombie_t;

/* Join the nonblocking-collective threads that have finished (they are exiting or gone). */
static void tc_zombies_join(tc_root_t *root)
{
    wt_mutex_lock_always(&root->zlock);
    tc_zombie_t *z = root->zombies;
    root->zombies = NULL;
    wt_mutex_unlock_always(&root->zlock);
    while (z) {
        tc_zombie_t *nx = z->next;
        wt_thread_join(z->th);
        free(z);
        z = nx;
    }
}

typedef struct tc_nbc {
    tc_view_t        *v;
    wm_tc_coll_args_t a;
    uint32_t          seq;
    tc_req_t         *r;
    tc_zombie_t      *z;              /* NULL: run by the caller */
} tc_nbc_t;

static void *tc_nbc_main(void *arg)
{
    tc_nbc_t *nb = arg;
    /* a copy of the view's constant fields: this thread may not take from the thread-rank's
     * message pool (the owner's), and the owner goes on counting its collectives meanwhile */
    const tc_view_t *ov = nb->v;
    tc_view_t hv = { .root = ov->root, .me = ov->me, .ctx = ov->ctx, .rank = ov->rank,
                     .size = ov->size, .members = ov->members, .helper = true };
    nb->r->err = tc_coll_run(&hv, &nb->a, nb->seq);
    nb->r->st_src = MPI_ANY_SOURCE;
    nb->r->st_tag = MPI_ANY_TAG;
    tc_view_t *v = nb->v;
    tc_req_t *r = nb->r;
    tc_root_t *root = v->root;
    tc_zombie_t *z = nb->z;
    free(nb);
    tc_view_unref(v);
    if (z) {   /* a thread of its own: to be joined (before the request completes, so that free
                  finds it once every request of the threadcomm is done) */
        z->th = wt_thread_self();
        wt_mutex_lock_always(&root->zlock);
        z->next = root->zombies;
        root->zombies = z;
        wt_mutex_unlock_always(&root->zlock);
    }
    tc_complete(r);
    return NULL;
}

int wm_tc_coll(const char *fn, wm_comm_t *c, const wm_tc_coll_args_t *a, MPI_Request *request)
{
    TC_VIEW(fn, c, v);
    int rc;
    if ((a->kind == WM_TC_BCAST || a->kind == WM_TC_REDUCE || a->kind == WM_TC_GATHER ||
         a->kind == WM_TC_SCATTER) && (a->root < 0 || a->root >= v->size))
        return wm_error(c, MPI_ERR_ROOT, fn, "invalid root %d (the threadcomm has %d ranks)",
                        a->root, v->size);
    if ((a->stype && a->sbuf != MPI_IN_PLACE && !wm_type_get(a->stype)) ||
        (a->rtype && !wm_type_get(a->rtype)))
        return wm_error(c, MPI_ERR_TYPE, fn, "invalid datatype");
    if (a->kind == WM_TC_ALLTOALLW) {
        if (!a->stypes || !a->rtypes)
            return wm_error(c, MPI_ERR_ARG, fn, "%s is NULL", a->stypes ? "recvtypes" : "sendtypes");
        for (int i = 0; i < v->size; i++)
            if ((a->sbuf != MPI_IN_PLACE && !wm_type_get(a->stypes[i])) ||
                !wm_type_get(a->rtypes[i]))
                return wm_error(c, MPI_ERR_TYPE, fn, "invalid datatype for rank %d", i);
    }
    if ((a->kind == WM_TC_ALLTOALL || a->kind == WM_TC_ALLTOALLV ||
         a->kind == WM_TC_ALLTOALLW) && a->sbuf == MPI_IN_PLACE)
        return wm_error(c, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                        "MPI_IN_PLACE is not implemented for Alltoall on a threadcomm");
    uint32_t seq = v->coll_seq++;
    if (!request) {
        rc = tc_coll_run(v, a, seq);
        return rc ? wm_error(c, rc, fn, "collective failed") : MPI_SUCCESS;
    }
    tc_nbc_t *nb = malloc(sizeof(*nb));
    if (!nb)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory");
    if (!(nb->r = tc_req_new(request, &rc))) {
        free(nb);
        return wm_error(c, rc, fn, "no request");
    }
    nb->v = v;
    nb->a = *a;
    nb->seq = seq;
    atomic_fetch_add_explicit(&v->refs, 1, memory_order_relaxed);
    tc_zombies_join(v->root);
    wt_thread_t th;
    nb->z = malloc(sizeof(tc_zombie_t));
    if (!nb->z || wt_thread_create(&th, tc_nbc_main, nb) != WU_OK) {
        /* no thread: run it now (completes at once) */
        free(nb->z);
        nb->z = NULL;
        tc_nbc_main(nb);
    }
    return MPI_SUCCESS;
}

int wm_tc_coll_entry(const char *fn, wm_comm_t *c, const wm_tc_coll_args_t *a,
                     MPI_Request *request, int nb)
{
    if (nb == 2)
        return wm_tc_unsupported(fn, c);
    if (nb == 1 && !request)
        return wm_error(c, MPI_ERR_ARG, fn, "request is NULL");
    return wm_tc_coll(fn, c, a, nb ? request : NULL);
}

/* ---- derived communicators ---- */

static int tc_handle_new(wm_comm_t *c, tc_view_t *nv, MPI_Comm *newcomm)
{
    wm_comm_t *d = wm_comm_new(c, TC_HANDLE_CTX, NULL, 0, NULL, 0, false);
    struct wm_tc *t = calloc(1, sizeof(*t));
    if (!d || !t) {
        free(t);
        if (d)
            wm_obj_user_free(&d->obj);
        return MPI_ERR_NO_MEM;
    }
    t->view = nv;
    d->tc = t;
    d->tcomm = true;   /* rank and size stay those of an empty group: see MPIX_Threadcomm_init */
    d->remote_world_ranks = NULL;   /* statuses of its requests: ranks as they are (tc_user_req) */
    *newcomm = wm_comm_handle(d);
    return MPI_SUCCESS;
}

/* A new context id made by v's thread-rank: unique in the threadcomm. */
static uint32_t tc_ctx_new(tc_view_t *v, uint32_t n)
{
    /* thread-rank + 1 above 14 bits of counter: below TC_SELF_BIT for up to 65534 thread-ranks */
    uint32_t id = ((uint32_t)(v->me->trank + 1) << 14) | (v->me->next_ctx & 0x3fffu);
    v->me->next_ctx += n;
    return id;
}

int wm_tc_dup(const char *fn, wm_comm_t *c, MPI_Comm *newcomm)
{
    return wm_tc_split(fn, c, 0, 0, newcomm);
}

int wm_tc_split(const char *fn, wm_comm_t *c, int color, int key, MPI_Comm *newcomm)
{
    TC_VIEW(fn, c, v);
    if (!newcomm)
        return wm_error(c, MPI_ERR_ARG, fn, "newcomm is NULL");
    if (color < 0 && color != MPI_UNDEFINED)
        return wm_error(c, MPI_ERR_ARG, fn, "invalid color %d", color);
    int n = v->size;
    int mine[3] = { color, key, 0 };
    if (v->rank == 0)
        mine[2] = (int)tc_ctx_new(v, (uint32_t)n);
    int *all = malloc(sizeof(int) * 3 * (size_t)n);
    if (!all)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory");
    wm_tc_coll_args_t a = { .kind = WM_TC_ALLGATHER, .sbuf = mine, .scount = 3, .stype = MPI_INT,
                            .rbuf = all, .rcount = 3, .rtype = MPI_INT };
    int rc = tc_coll_run(v, &a, v->coll_seq++);
    if (rc) {
        free(all);
        return wm_error(c, rc, fn, "exchange of colors failed");
    }
    if (color == MPI_UNDEFINED) {
        free(all);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    /* members: same color, by (key, parent rank); the context: base + first member's parent rank */
    int *mem = malloc(sizeof(int) * (size_t)n), cnt = 0, first = -1;
    tc_view_t *nv = calloc(1, sizeof(*nv));
    if (!mem || !nv) {
        free(mem);
        free(nv);
        free(all);
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory");
    }
    for (int i = 0; i < n; i++)
        if (all[3 * i] == color) {
            if (first < 0)
                first = i;
            int j = cnt++;
            while (j > 0 && (all[3 * mem[j - 1] + 1] > all[3 * i + 1]))
                mem[j] = mem[j - 1], j--;
            mem[j] = i;
        }
    nv->root = v->root;
    nv->me = v->me;
    nv->ctx = (uint32_t)all[2] + (uint32_t)first;
    nv->size = cnt;
    nv->refs = 1;
    for (int j = 0; j < cnt; j++) {
        if (mem[j] == v->rank)
            nv->rank = j;
        mem[j] = tc_trank(v, mem[j]);
    }
    nv->members = mem;
    free(all);
    if ((rc = tc_handle_new(c, nv, newcomm)) != MPI_SUCCESS) {
        tc_view_unref(nv);
        return wm_error(c, rc, fn, "no memory for the communicator");
    }
    return MPI_SUCCESS;
}

int wm_tc_comm_free(const char *fn, wm_comm_t *c, MPI_Comm *comm)
{
    struct wm_tc *t = c->tc;
    if (t->root)
        return wm_error(c, MPI_ERR_COMM, fn, "a threadcomm is freed by MPIX_Threadcomm_free");
    int rc = wm_attr_delete_all(&c->obj);
    if (rc != MPI_SUCCESS)
        return wm_error_raise(c, rc);
    tc_view_unref(t->view);
    free(t);
    c->tc = NULL;
    c->tcomm = false;
    wm_obj_user_free(&c->obj);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* ---- MPIX_Threadcomm_* ---- */

static int tc_pairs_new(tc_root_t *root);

WM_API int MPIX_Threadcomm_init(MPI_Comm comm, int num_threads, MPI_Comm *threadcomm)
{
    static const char fn[] = "MPIX_Threadcomm_init";
    WM_COMM_CHECK(fn, comm, c);
    if (c->tcomm || c->inter)
        return wm_error(c, MPI_ERR_COMM, fn, "comm must be a process intracommunicator");
    if (num_threads < 1)
        return wm_error(c, MPI_ERR_ARG, fn, "invalid num_threads %d (must be at least 1)",
                        num_threads);
    if (!threadcomm)
        return wm_error(c, MPI_ERR_ARG, fn, "threadcomm is NULL");
    /* Thread-ranks call into the library concurrently whatever level was provided: turn the lock
     * gate on (from the only thread in the library, holding no lock: wt_thread.h). */
    if (!wt_thread_multi)
        wt_thread_set_multi(true);
    tc_root_t *root = calloc(1, sizeof(*root));
    if (!root)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory");
    int rc = PMPI_Comm_dup(comm, &root->net);
    if (rc != MPI_SUCCESS) {
        free(root);
        return rc;
    }
    PMPI_Comm_size(root->net, &root->nprocs);
    PMPI_Comm_rank(root->net, &root->myproc);
    int np = root->nprocs;
    int *counts = malloc(sizeof(int) * (size_t)np);
    root->tbase = malloc(sizeof(int) * (size_t)(np + 1));
    if (!counts || !root->tbase ||
        (rc = PMPI_Allgather(&num_threads, 1, MPI_INT, counts, 1, MPI_INT, root->net))) {
        free(counts);
        free(root->tbase);
        PMPI_Comm_free(&root->net);
        free(root);
        return rc ? rc : wm_error(c, MPI_ERR_NO_MEM, fn, "no memory");
    }
    root->tbase[0] = 0;
    long extra = 0;   /* thread-ranks of this machine's processes beyond one per process */
    int node = wc_node_of(wc_world.rank);
    for (int p = 0; p < np; p++) {
        if (counts[p] > root->kmax)
            root->kmax = counts[p];
        root->tbase[p + 1] = root->tbase[p] + counts[p];
        if (wc_node_of(wm_comm_world_rank(c, p)) == node)
            extra += counts[p] - 1;
    }
    free(counts);
    root->total = root->tbase[np];
    root->base = root->tbase[root->myproc];
    root->nlocal = num_threads;
    root->proc_of = malloc(sizeof(int) * (size_t)root->total);
    root->ranks = aligned_alloc(WU_CACHELINE, sizeof(tc_rank_t) * (size_t)num_threads);
    wm_comm_t *d = wm_comm_new(c, TC_HANDLE_CTX, NULL, 0, NULL, 0, false);
    struct wm_tc *t = calloc(1, sizeof(*t));
    if (!root->proc_of || !root->ranks || !d || !t) {
        if (d)
            wm_obj_user_free(&d->obj);
        free(t);
        free(root->proc_of);
        free(root->ranks);
        free(root->tbase);
        PMPI_Comm_free(&root->net);
        free(root);
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory");
    }
    for (int p = 0; p < np; p++)
        for (int i = root->tbase[p]; i < root->tbase[p + 1]; i++)
            root->proc_of[i] = p;
    wt_mutex_init(&root->zlock);
    wt_spin_init(&root->netlock);
    wt_spin_init(&root->slock);
    for (int i = 0; i < num_threads; i++) {
        memset(&root->ranks[i], 0, sizeof(tc_rank_t));
        wt_spin_init(&root->ranks[i].lock);
        wt_spin_init(&root->ranks[i].plock);
        root->ranks[i].root = root;
        root->ranks[i].trank = root->base + i;
        root->ranks[i].next_ctx = 1;
    }
    if (np > 1 && root->kmax <= TC_DIRECT_MAX && (rc = tc_pairs_new(root)) != MPI_SUCCESS)
        return wm_error(c, rc, fn, "no memory for the pair communicators");
    if (np > 1) {
        if (wt_thread_create(&root->prog, tc_progress_main, root) != WU_OK)
            return wm_error(c, MPI_ERR_OTHER, fn, "cannot start the progress thread");
        root->prog_on = true;
    }
    root->extra_ranks = extra;
    tc_yield_update(extra);
    t->root = root;
    d->tc = t;
    d->tcomm = true;
    d->remote_world_ranks = NULL;   /* statuses of its requests: ranks as they are (tc_user_req) */
    /* d->rank, size and the rank arrays stay those of an empty group (wm_comm_new with none): a
     * call that is not dispatched to this file sees no peers rather than reading past them */
    snprintf(d->name, sizeof(d->name), "threadcomm");
    *threadcomm = wm_comm_handle(d);
    return MPI_SUCCESS;
}

static void tc_pairs_free(tc_root_t *root)
{
    for (int i = 0; root->pair && i < root->kmax * root->kmax; i++)
        if (root->pair[i] != MPI_COMM_NULL)
            PMPI_Comm_free(&root->pair[i]);
    free(root->pair);
    root->pair = NULL;
    root->direct = false;
}
/* The pair communicators of the direct remote path (collective over net; init). Each takes a
 * context id agreed over net; its local group is net's, its peers (as an intercommunicator's
 * remote group: what point-to-point addresses and statuses report) are the thread-ranks, of which
 * only sender index s of each process is someone. */
static int tc_pairs_new(tc_root_t *root)
{
    wm_comm_t *netc = wm_comm_get(root->net);
    int k = root->kmax, rc = MPI_SUCCESS;
    int *local = wm_comm_local_ranks(netc), *peers = malloc(sizeof(int) * (size_t)root->total);
    root->pair = malloc(sizeof(MPI_Comm) * (size_t)(k * k));
    if (!local || !peers || !root->pair) {
        free(local);
        free(peers);
        free(root->pair);
        root->pair = NULL;
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < k * k; i++)
        root->pair[i] = MPI_COMM_NULL;
    for (int s = 0; s < k; s++) {
        for (int t = 0; t < root->total; t++) {
            int p = root->proc_of[t];
            peers[t] = t - root->tbase[p] == s ? local[p] : TC_NO_PEER;
        }
        for (int d = 0; d < k; d++) {
            /* every process takes part in every agreement, even after a failure of its own */
            uint32_t ctx = wm_ctx_agree(netc);
            wm_comm_t *pc = rc ? NULL
                               : wm_comm_new(netc, ctx, local, root->nprocs, peers, root->total,
                                             true);
            if (!pc) {
                rc = MPI_ERR_NO_MEM;
                continue;
            }
            snprintf(pc->name, sizeof(pc->name), "threadcomm pair %d to %d", s, d);
            root->pair[s * k + d] = wm_comm_handle(pc);
        }
    }
    free(local);
    free(peers);
    if (rc)
        tc_pairs_free(root);
    else
        root->direct = true;
    return rc;
}

static int tc_root_arg(const char *fn, MPI_Comm h, wm_comm_t **c_p, tc_root_t **root_p)
{
    WM_COMM_CHECK(fn, h, c);
    if (!c->tcomm || !c->tc->root)
        return wm_error(c, MPI_ERR_COMM, fn, "not a threadcomm of MPIX_Threadcomm_init");
    *c_p = c;
    *root_p = c->tc->root;
    return MPI_SUCCESS;
}

WM_API int MPIX_Threadcomm_start(MPI_Comm threadcomm)
{
    static const char fn[] = "MPIX_Threadcomm_start";
    wm_comm_t *c;
    tc_root_t *root;
    int rc = tc_root_arg(fn, threadcomm, &c, &root);
    if (rc)
        return rc;
    tc_binds_t *binds = tc_binds_get();
    if (!binds)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory");
    for (int i = 0; i < binds->n; i++)
        if (binds->b[i].root == root)
            return wm_error(c, MPI_ERR_OTHER, fn, "this thread has already started the threadcomm");
    if (binds->n == TC_BIND_MAX)
        return wm_error(c, MPI_ERR_OTHER, fn, "a thread may be in at most %d threadcomms at once",
                        TC_BIND_MAX);
    int idx = atomic_fetch_add_explicit(&root->arrived, 1, memory_order_acq_rel);
    if (idx >= root->nlocal) {
        atomic_fetch_sub_explicit(&root->arrived, 1, memory_order_acq_rel);
        return wm_error(c, MPI_ERR_OTHER, fn, "more threads than num_threads (%d) started it",
                        root->nlocal);
    }
    tc_view_t *v = calloc(1, sizeof(*v));
    if (!v)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory");
    v->root = root;
    v->me = &root->ranks[idx];
    v->ctx = 0;
    v->rank = root->base + idx;
    v->size = root->total;
    v->refs = 1;
    binds->b[binds->n++] = (tc_bind_t){ root, v };
    return MPI_SUCCESS;
}

WM_API int MPIX_Threadcomm_finish(MPI_Comm threadcomm)
{
    static const char fn[] = "MPIX_Threadcomm_finish";
    wm_comm_t *c;
    tc_root_t *root;
    int rc = tc_root_arg(fn, threadcomm, &c, &root);
    if (rc)
        return rc;
    int b = -1;
    tc_binds_t *binds = tc_binds_get();
    for (int i = 0; binds && i < binds->n; i++)
        if (binds->b[i].root == root)
            b = i;
    if (b < 0)
        return wm_error(c, MPI_ERR_OTHER, fn, "this thread has not started the threadcomm");
    tc_view_t *v = binds->b[b].view;
    /* every thread-rank of every process arrives before any leaves */
    wm_tc_coll_args_t a = { .kind = WM_TC_BARRIER };
    rc = tc_coll_run(v, &a, v->coll_seq++);
    binds->b[b] = binds->b[--binds->n];
    tc_view_unref(v);
    /* local barrier, so that the arrival counter is reset before any thread starts it again */
    int gen = atomic_load_explicit(&root->bar_gen, memory_order_acquire);
    if (atomic_fetch_add_explicit(&root->bar_count, 1, memory_order_acq_rel) == root->nlocal - 1) {
        atomic_store_explicit(&root->bar_count, 0, memory_order_relaxed);
        atomic_store_explicit(&root->arrived, 0, memory_order_relaxed);
        atomic_store_explicit(&root->bar_gen, gen + 1, memory_order_release);
    } else {
        unsigned spins = 0;
        while (atomic_load_explicit(&root->bar_gen, memory_order_acquire) == gen)
            tc_pause(&spins);
    }
    return rc ? wm_error(c, rc, fn, "the closing barrier failed") : MPI_SUCCESS;
}

WM_API int MPIX_Threadcomm_free(MPI_Comm *threadcomm)
{
    static const char fn[] = "MPIX_Threadcomm_free";
    if (!threadcomm)
        return wm_error(NULL, MPI_ERR_ARG, fn, "threadcomm is NULL");
    wm_comm_t *c;
    tc_root_t *root;
    int rc = tc_root_arg(fn, *threadcomm, &c, &root);
    if (rc)
        return rc;
    if (atomic_load(&root->arrived) != 0)
        return wm_error(c, MPI_ERR_OTHER, fn, "the threadcomm is still started");
    if (root->prog_on) {
        /* no user request is pending (the regions are over): the thread sleeps or is about to */
        atomic_store_explicit(&root->pstop, 1, memory_order_release);
        __atomic_fetch_add(&root->pgen, 1, __ATOMIC_RELEASE);
        wt_word_wake_all(&root->pgen);
        wt_thread_join(root->prog);
    }
    tc_zombies_join(root);
    wt_mutex_destroy(&root->zlock);
    tc_yield_update(-root->extra_ranks);
    /* every packet was received (the closing barrier of the last region came after): their sends
     * complete with the library's progress */
    for (tc_nsend_t *ns = atomic_exchange(&root->nsends, NULL), *nx; ns; ns = nx) {
        nx = ns->next;
        PMPI_Wait(&ns->req, MPI_STATUS_IGNORE);
        free(ns);
    }
    /* the processes agree that nobody sends on net any more before it goes */
    PMPI_Barrier(root->net);
    tc_pairs_free(root);
    for (int i = 0; i < root->nlocal; i++) {
        tc_rank_t *q = &root->ranks[i];
        tc_msg_t *lists[3] = { q->unexp, q->mfree, atomic_load(&q->mret) };
        for (int k = 0; k < 3; k++)
            for (tc_msg_t *m = lists[k], *nx; m; m = nx) {
                nx = m->next;
                free(m->owned);
                free(m);
            }
    }
    PMPI_Comm_free(&root->net);
    free(root->ranks);
    free(root->proc_of);
    free(root->tbase);
    free(root);
    free(c->tc);
    c->tc = NULL;
    c->tcomm = false;
    wm_attr_delete_all(&c->obj);
    wm_obj_user_free(&c->obj);
    *threadcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
