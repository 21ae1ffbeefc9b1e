/* The tcp transport (wx_tcp.h; docs/tcp.md).
 *
 * Wire: a connection starts with a 16-byte hello (wx_tcp_hello_t: a magic word, the opener's rank,
 * the job key); then frames, each an 8-byte prefix (the body's length and a kind, host order: both
 * ends run one build on one kind of machine), WX_HDR_SIZE header bytes and the payload, padded to a
 * multiple of 8 so that every header lands 8-byte aligned in the receive buffer. A connection
 * carries both directions of its pair: the accepting rank sends back on it unless it had opened
 * its own (wx_tcp_adopt; if both opened, the higher rank moves to the lower's, ordered by the END
 * and SWITCHED frames). A rank's packets to a peer travel one stream at a time: WX_CAP_ORDERED.
 *
 * Sending: with nothing queued for the destination, one writev of prefix + header, the caller's
 * payload and the padding: no copy when the socket takes it all. What it does not take is copied
 * into the destination's out queue (wx_outq.h; the caller may reuse its buffers at WU_OK) and
 * flushed by later sends and by progress. At MPI_THREAD_MULTIPLE a send within WEFT_TCP_AGG_NS of
 * the previous one to the same peer is queued unwritten (aggregation). Flow control: a destination
 * whose queue holds WEFT_TCP_TX_QUEUE bytes or more answers WU_ERR_AGAIN, and the core queues the
 * packet in order; TCP's own window stops a sender whose receiver does not read, and a receiver
 * always reads everything into the core (its unexpected store, bounded by WEFT_UNEXPECTED_MAX), so
 * no packet is lost and nothing waits on a peer that makes progress.
 *
 * Receiving: progress flushes queued bytes, then asks epoll (level-triggered, timeout 0: one system
 * call whatever the number of connections) which sockets are readable, accepts new connections,
 * and reads each readable one into its buffer (grown to the frame being read), delivering every
 * whole frame through the callback (which copies what it keeps). The doorbell: a sleeper ppolls the
 * epoll set and an eventfd kept outside it.
 *
 * Concurrency contract (wx_transport.h's): each destination (wx_tcp_tx_t) is guarded by its mutex:
 * its sender (one at a time, the core's peer lock) takes it, progress flushes a backlog under a
 * try-lock and takes it to adopt a connection. The list of connections read (rx) is guarded by
 * rx_mu (a first send adds the connection it opens), and so are the epoll set's membership and
 * the lone connection read outside it (solo, read by progress and by a sleeper); each connection's state, epoll's results and
 * the per-source state (peer) are touched by progress only, which the core runs in one thread at a
 * time. The address table and the key are written at create and read-only afterwards. */
#include "transport/sock/wx_tcp.h"
#include "transport/sock/wx_sock.h"
#include "transport/sock/wx_outq.h"
#include "thread/wt_thread.h"
#include "util/wu_compiler.h"
#include "util/wu_config.h"
#include "util/wu_log.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define WX_TCP_MAGIC      0x57465443u       /* "WFTC" */
#define WX_TCP_PRE        8u                /* a frame's prefix: body length, kind */
#define WX_TCP_DATA       0u                /* kinds: the core's packet */
#define WX_TCP_END        1u                /* no more from me on this connection (body 0) */
#define WX_TCP_SWITCHED   2u                /* what follows comes after my END on my own (body 0) */
#define WX_TCP_PAD(n)     (((n) + 7u) & ~(size_t)7u)
#define WX_TCP_RX_CHUNK   ((size_t)64 << 10)   /* a connection's buffer, grown to its largest frame */
#define WX_TCP_RX_READS   8                 /* reads of one connection per progress call */
#define WX_TCP_EVENTS     32
#define WX_TCP_ADDR_MAX   64
#define WX_TCP_FLUSH_NS   (10ull * 1000000000ull)   /* finalize waits this long for its sends */
#define WX_TCP_AGG_FRAME  ((size_t)4096)    /* aggregation: frames up to this size ... */
#define WX_TCP_AGG_BYTES  ((size_t)65536)   /* ... while the queue holds at most this */
#define WX_TCP_SMALL      ((size_t)256)     /* a frame up to this goes by one send of a stack copy */
#define WX_TCP_SOLO_EPOLL 16u               /* one connection: epoll once in this many progress calls */

typedef struct wx_tcp_hello {
    uint32_t magic;
    uint32_t src;
    uint64_t key;
} wx_tcp_hello_t;
_Static_assert(sizeof(wx_tcp_hello_t) == 16, "hello is 16 bytes");

/* A destination. */
typedef struct wx_tcp_tx {
    wt_mutex_t mu;
    int        fd;                      /* mu: -1 until the first send */
    int        switch_fd;               /* mu: the peer's connection to move to (wx_tcp_adopt), or -1 */
    int        old_fd;                  /* mu: this rank's own, left for switch_fd (closed at the end) */
    bool       ending;                  /* mu: END is queued on fd: sends wait (WU_ERR_AGAIN) */
    _Atomic int sleep_fd;               /* fd, for a sleeper's poll without mu */
    _Atomic bool queued;                /* out not empty: a sleeper's hint, read without mu */
    bool       dead;                    /* mu: a send failed; later ones fail at once */
    wx_outq_t  out;                     /* mu: bytes the socket did not take yet */
    uint64_t   last_ns;                 /* mu: when the last send to it began (aggregation) */
} wx_tcp_tx_t;

/* A connection read by progress: an accepted one, or one this rank opened (its peer may send back
 * on it). Made by any thread (wx_tcp_rx_add), then touched by progress only. */
typedef struct wx_tcp_rx {
    int    fd;
    int    src;                         /* -1 until its hello was checked */
    int    slot;                        /* index in wx_tcp_t.rx (rx_mu) */
    bool   shared;                      /* fd is also a destination's (wx_tcp_tx_t.fd): closed by it */
    bool   held;                        /* after src's SWITCHED: not read until its END (wx_tcp_peer_t) */
    char  *buf;
    size_t len, cap;
} wx_tcp_rx_t;

/* What progress knows of a source's two connections when both ranks opened one (wx_tcp_adopt). */
typedef struct wx_tcp_peer {
    bool         ended;                 /* END read on the connection it opened */
    wx_tcp_rx_t *held;                  /* this rank's connection, SWITCHED read before that END */
} wx_tcp_peer_t;

typedef struct wx_tcp {
    wx_tl_t       tl;
    int           rank, size;
    uint64_t      key;
    wx_bootstrap_t bs;                  /* for the fence of finalize */
    wx_recv_fn_t  cb;
    void         *cb_arg;
    int           lfd, epfd;
    int           bellfd;               /* eventfd in epoll: db_ring's, drained by db_arm */
    _Atomic uint32_t rings;             /* db_ring's count: db_arm's sequence */
    struct sockaddr_in *addr;           /* [size]: written at create */
    wx_tcp_tx_t  *tx;                   /* [size] */
    _Atomic int   nbacklog;             /* destinations with queued bytes (changed under their mu) */
    size_t        tx_queue;             /* WEFT_TCP_TX_QUEUE */
    uint64_t      agg_ns;               /* aggregation window (0: off) */
    size_t        max_frame;            /* header + largest payload */
    wt_mutex_t    rx_mu;                /* guards rx, nrx, rx_cap: progress and a first send add */
    wx_tcp_rx_t **rx;                   /* the connections read (for closing them) */
    wx_tcp_peer_t *peer;                /* [size]: progress only */
    int           nrx, rx_cap;
    /* The only connection read, when there is one (changed under rx_mu by wx_tcp_solo_update, read
     * by progress): it is then taken OUT of the epoll set, progress recv()s it directly at every call
     * and asks epoll (the listening socket) once in WX_TCP_SOLO_EPOLL calls. A small message then
     * costs its reader one recv after it arrived instead of epoll_wait + recv, and its sender's
     * softirq no epoll callback (docs/tcp.md, "One connection"). Only progress frees a connection,
     * so the pointer progress reads stays valid while it uses it; a sleeper reads solo_fd instead
     * (a stale fd costs it a spurious wake-up at worst: every change rings the doorbell). */
    _Atomic(wx_tcp_rx_t *) solo;
    _Atomic int   solo_fd;              /* solo's fd, or -1 */
    unsigned      solo_polls;           /* progress only */
    _Atomic uint64_t dropped;
    _Atomic bool  closing;              /* finalize runs: a failed send is no longer fatal */
} wx_tcp_t;

static wx_tcp_t *wx_tcp_instance;      /* for wx_tcp_dropped; set at create, cleared at finalize */

uint64_t wx_tcp_dropped(void)
{
    wx_tcp_t *s = wx_tcp_instance;
    return s ? atomic_load_explicit(&s->dropped, memory_order_relaxed) : 0;
}

static bool wx_tcp_rx_add(wx_tcp_t *s, int fd, int src, bool shared);

/* ---- sending ----------------------------------------------------------------------------------- */

static inline bool wx_tcp_queued(const wx_tcp_tx_t *t)
{
    return !wx_outq_empty(&t->out);
}

/* A send to dst failed: the peer is gone (its process died, or its host). Before finalize that ends
 * the job, as ofi's failed sends do (the core would otherwise retry the packet for ever); in
 * finalize's flush it is only logged. */
static void wx_tcp_db_ring(wx_tl_t *tl);

/* t's queue became non-empty (+1) or empty (-1) (t->mu held). A new backlog rings the doorbell: a
 * thread already asleep there watches no socket for room, and only progress flushes the queue. */
static inline void wx_tcp_backlog(wx_tcp_t *s, wx_tcp_tx_t *t, int d)
{
    atomic_store_explicit(&t->queued, d > 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->nbacklog, d, memory_order_release);
    if (d > 0)
        wx_tcp_db_ring(&s->tl);
}

static WU_NOINLINE wu_status_t wx_tcp_fail(wx_tcp_t *s, wx_tcp_tx_t *t, int dst, int err)
{
    if (!atomic_load_explicit(&s->closing, memory_order_relaxed))
        wu_log_fatal("tcp: send to rank %d failed: %s (the rank or its host is gone)", dst,
                     err ? strerror(err) : "connection closed");
    if (!t->dead)
        wu_log_warn("tcp: send to rank %d failed at finalize: %s", dst,
                    err ? strerror(err) : "closed");
    t->dead = true;
    if (wx_tcp_queued(t))
        wx_tcp_backlog(s, t, -1);
    wx_outq_clear(&t->out);
    return WU_ERR_IO;
}

/* Write what the socket takes of t's queue (t->mu held; had: whether it was queued before). */
/* One step of moving t from this rank's own connection to the peer's (t->mu held, t's queue empty):
 * queue END on the own one; once that has left, send on the peer's, SWITCHED first. */
static void wx_tcp_switch_step(wx_tcp_t *s, wx_tcp_tx_t *t)
{
    (void)s;
    uint32_t pre[2] = { 0, WX_TCP_END };
    if (t->ending) {
        t->old_fd = t->fd;
        t->fd = t->switch_fd;
        t->switch_fd = -1;
        t->ending = false;
        atomic_store_explicit(&t->sleep_fd, t->fd, memory_order_relaxed);
        pre[1] = WX_TCP_SWITCHED;
        wu_debug("tcp: both ranks opened a connection: sending on the lower rank's from now on");
    } else {
        t->ending = true;
    }
    char *p = wx_outq_reserve(&t->out, WX_TCP_PRE);
    if (!p)
        wu_log_fatal("tcp: no memory for 8 bytes of a send queue");
    memcpy(p, pre, WX_TCP_PRE);
}

/* Write what the socket takes of t's queue (t->mu held; had: whether it was queued before). */
static wu_status_t wx_tcp_flush(wx_tcp_t *s, wx_tcp_tx_t *t, int dst, bool had)
{
    for (;;) {
        int err = wx_outq_send(&t->out, t->fd);
        if (err) {
            if (!had)
                wx_tcp_backlog(s, t, 1);
            return wx_tcp_fail(s, t, dst, err);
        }
        if (WU_LIKELY(t->switch_fd < 0) || wx_tcp_queued(t))
            break;
        wx_tcp_switch_step(s, t);
    }
    bool has = wx_tcp_queued(t);
    if (has != had)
        wx_tcp_backlog(s, t, has ? 1 : -1);
    return WU_OK;
}

/* The first send to dst: a nonblocking connect (a send before it completes takes nothing and the
 * bytes wait in the queue), and the hello queued (t->mu held). */
static WU_NOINLINE wu_status_t wx_tcp_open(wx_tcp_t *s, wx_tcp_tx_t *t, int dst)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        wu_log_error("tcp: no socket for rank %d: %s", dst, strerror(errno));
        return WU_ERR_IO;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    int r;
    while ((r = connect(fd, (struct sockaddr *)&s->addr[dst], sizeof(s->addr[dst]))) < 0 &&
           errno == EINTR)
        ;
    if (r < 0 && errno != EINPROGRESS) {
        char a[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &s->addr[dst].sin_addr, a, sizeof(a));
        if (!atomic_load_explicit(&s->closing, memory_order_relaxed))
            wu_log_fatal("tcp: cannot connect to rank %d at %s:%u: %s", dst, a,
                         (unsigned)ntohs(s->addr[dst].sin_port), strerror(errno));
        close(fd);
        t->dead = true;
        return WU_ERR_IO;
    }
    if (!wx_tcp_rx_add(s, fd, dst, true)) {   /* dst may answer on it */
        wu_log_error("tcp: cannot watch the connection to rank %d", dst);
        close(fd);
        return WU_ERR_NO_MEMORY;
    }
    t->fd = fd;
    atomic_store_explicit(&t->sleep_fd, fd, memory_order_relaxed);
    char *p = wx_outq_reserve(&t->out, sizeof(wx_tcp_hello_t));
    if (!p)
        return WU_ERR_NO_MEMORY;
    wx_tcp_hello_t h = { .magic = WX_TCP_MAGIC, .src = (uint32_t)s->rank, .key = s->key };
    memcpy(p, &h, sizeof(h));
    wx_tcp_backlog(s, t, 1);
    return WU_OK;
}

static const char wx_tcp_zeros[8];

static uint64_t wx_tcp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}


static wu_status_t wx_tcp_send_common(wx_tl_t *tl, int dst, const void *hdr, const void *payload,
                                      size_t len, wx_fill_fn_t fill, void *arg)
{
    wx_tcp_t *s = tl->priv;
    wx_tcp_tx_t *t = &s->tx[dst];
    size_t body = WX_HDR_SIZE + len, total = WX_TCP_PRE + WX_TCP_PAD(body);
    wu_status_t st = WU_OK;
    bool agg = s->agg_ns && wt_thread_is_multi();
    wt_mutex_lock_always(&t->mu);
    if (WU_UNLIKELY(t->fd < 0)) {
        if (t->dead || (st = wx_tcp_open(s, t, dst)) != WU_OK) {
            st = t->dead ? WU_ERR_IO : st;
            goto out;
        }
    }
    bool had = wx_tcp_queued(t);
    if (agg && total <= WX_TCP_AGG_FRAME && wx_outq_bytes(&t->out) + total <= WX_TCP_AGG_BYTES &&
        !t->ending && wx_tcp_now_ns() - t->last_ns < s->agg_ns) {
        /* a burst: into the queue, not flushed; the next send behind the window or progress (any
         * thread's) carries it with the rest in one send */
        st = wx_outq_frame(&t->out, WX_TCP_DATA, hdr, payload, len, fill, arg);
        if (st == WU_OK && !had)
            wx_tcp_backlog(s, t, 1);
        goto out;
    }
    if (had) {
        if ((st = wx_tcp_flush(s, t, dst, true)) != WU_OK)
            goto out;
        had = wx_tcp_queued(t);
        if (had && (wx_outq_bytes(&t->out) >= s->tx_queue || WU_UNLIKELY(t->ending))) {
            st = WU_ERR_AGAIN;   /* flow control: the core queues it in order */
            goto out;
        }
    }
    char head[WX_TCP_PRE + WX_HDR_SIZE] WU_ALIGNED(8);
    uint32_t pre[2] = { (uint32_t)body, 0 };
    memcpy(head, pre, WX_TCP_PRE);
    memcpy(head + WX_TCP_PRE, hdr, WX_HDR_SIZE);
    if (!had && !fill) {
        /* the fast path: one writev, no copy of what the socket takes; a small frame is copied
         * into one buffer on the stack and sent with send(), which the kernel serves on a shorter
         * path than writev's three pieces (no iovec import, no VFS write) */
        struct iovec iov[3] = { { head, sizeof(head) }, { (void *)payload, len },
                                { (void *)wx_tcp_zeros, WX_TCP_PAD(body) - body } };
        ssize_t r;
        if (total <= WX_TCP_SMALL) {
            char one[WX_TCP_SMALL] WU_ALIGNED(8);
            memcpy(one, head, sizeof(head));
            if (len)
                memcpy(one + sizeof(head), payload, len);
            memset(one + sizeof(head) + len, 0, total - sizeof(head) - len);
            while ((r = send(t->fd, one, total, MSG_NOSIGNAL | MSG_DONTWAIT)) < 0 &&
                   errno == EINTR)
                ;
        } else {
            while ((r = writev(t->fd, iov, 3)) < 0 && errno == EINTR)
                ;
        }
        if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            st = wx_tcp_fail(s, t, dst, errno);
            goto out;
        }
        size_t done = r > 0 ? (size_t)r : 0;
        if (done == total)
            goto out;
        char *p = wx_outq_reserve(&t->out, total - done);
        if (!p) {
            st = WU_ERR_NO_MEMORY;
            goto out;
        }
        for (int i = 0; i < 3; i++) {
            size_t n = iov[i].iov_len;
            if (done >= n) {
                done -= n;
                continue;
            }
            memcpy(p, (char *)iov[i].iov_base + done, n - done);
            p += n - done;
            done = 0;
        }
        wx_tcp_backlog(s, t, 1);
        goto out;
    }
    /* behind queued bytes, or a payload written by fill: into the queue, then flush */
    if ((st = wx_outq_frame(&t->out, WX_TCP_DATA, hdr, payload, len, fill, arg)) == WU_OK)
        st = wx_tcp_flush(s, t, dst, had);
out:
    if (agg)
        t->last_ns = wx_tcp_now_ns();   /* the window counts from the end of this send */
    wt_mutex_unlock_always(&t->mu);
    return st;
}

static wu_status_t wx_tcp_send(wx_tl_t *tl, int dst, const void *hdr, const void *payload,
                               size_t len)
{
    return wx_tcp_send_common(tl, dst, hdr, payload, len, NULL, NULL);
}

static wu_status_t wx_tcp_send_fill(wx_tl_t *tl, int dst, const void *hdr, size_t len,
                                    wx_fill_fn_t fill, void *arg)
{
    return wx_tcp_send_common(tl, dst, hdr, NULL, len, fill, arg);
}

/* ---- receiving --------------------------------------------------------------------------------- */

/* After the list of connections changed (rx_mu held): the only one, if there is one, leaves the
 * epoll set and becomes solo (wx_tcp_t.solo); a former solo that has company goes back into the
 * set. A sleeper watching the old state is woken by the doorbell. */
static void wx_tcp_solo_update(wx_tcp_t *s)
{
    wx_tcp_rx_t *old = atomic_load_explicit(&s->solo, memory_order_relaxed);
    wx_tcp_rx_t *now = s->nrx == 1 ? s->rx[0] : NULL;
    if (old == now)
        return;
    if (old) {   /* still in the list (rx_close clears solo before it removes it) */
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = old };
        if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, old->fd, &ev) < 0)
            wu_log_fatal("tcp: epoll refused a connection to rank %d: %s", old->src,
                         strerror(errno));
    }
    if (now)
        epoll_ctl(s->epfd, EPOLL_CTL_DEL, now->fd, NULL);
    atomic_store_explicit(&s->solo_fd, now ? now->fd : -1, memory_order_relaxed);
    atomic_store_explicit(&s->solo, now, memory_order_release);
    wx_tcp_db_ring(&s->tl);
}

/* Watch fd for what src sends (src -1: an accepted connection, its hello not read yet); shared: fd
 * is a destination's too (wx_tcp_tx_t.fd) and closed with it. Any thread; false when out of memory
 * or refused by epoll (fd left open). */
static bool wx_tcp_rx_add(wx_tcp_t *s, int fd, int src, bool shared)
{
    wx_tcp_rx_t *r = calloc(1, sizeof(*r));   /* its buffer comes with the first read */
    if (!r)
        return false;
    *r = (wx_tcp_rx_t){ .fd = fd, .src = src, .shared = shared };
    bool ok = false;
    wt_mutex_lock_always(&s->rx_mu);
    if (s->nrx == s->rx_cap) {
        int cap = s->rx_cap ? 2 * s->rx_cap : 16;
        wx_tcp_rx_t **rx = realloc(s->rx, sizeof(*rx) * (size_t)cap);
        if (!rx)
            goto out;
        s->rx = rx;
        s->rx_cap = cap;
    }
    r->slot = s->nrx;
    s->rx[s->nrx++] = r;
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = r };
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
        s->nrx--;
    else
        ok = true;
    wx_tcp_solo_update(s);
out:
    wt_mutex_unlock_always(&s->rx_mu);
    if (!ok)
        free(r);
    return ok;
}

static void wx_tcp_accept(wx_tcp_t *s)
{
    for (;;) {
        int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (!wx_tcp_rx_add(s, fd, -1, false)) {
            close(fd);
            return;
        }
    }
}

static void wx_tcp_rx_close(wx_tcp_t *s, wx_tcp_rx_t *r)
{
    if (r->src >= 0 && s->peer[r->src].held == r)
        s->peer[r->src].held = NULL;
    /* epoll and close under rx_mu: a first send in another thread (wx_tcp_rx_add) would put a solo
     * r back into the epoll set (wx_tcp_solo_update), after our EPOLL_CTL_DEL or our close */
    wt_mutex_lock_always(&s->rx_mu);
    if (atomic_load_explicit(&s->solo, memory_order_relaxed) == r) {
        atomic_store_explicit(&s->solo_fd, -1, memory_order_relaxed);
        atomic_store_explicit(&s->solo, NULL, memory_order_relaxed);
    }
    epoll_ctl(s->epfd, EPOLL_CTL_DEL, r->fd, NULL);   /* ENOENT for a solo one: not in the set */
    if (!r->shared)
        close(r->fd);
    int k = r->slot;
    s->rx[k] = s->rx[--s->nrx];
    s->rx[k]->slot = k;
    wx_tcp_solo_update(s);
    wt_mutex_unlock_always(&s->rx_mu);
    free(r->buf);
    free(r);
}

/* r's peer opened it and its hello was good. If this rank has not sent to that peer yet, its packets
 * to it go back on r: one connection for the pair, so that an answer carries the TCP ACK of what it
 * answers. On a connection that carries one direction the receiver's recv sends a pure ACK for every
 * small message (Linux acknowledges pushed data at once outside ping-pong mode), a packet through
 * the whole network stack on the receiver's critical path.
 *
 * When both ranks opened a connection before either read the other's hello, the lower rank's wins:
 * the higher one moves to it (wx_tcp_switch_step). Its own connection ends with an END frame and the
 * first frame on the lower's is SWITCHED; the lower rank reads nothing after SWITCHED until it has
 * read that END, so the pair's order holds across the move. Progress only. */
static void wx_tcp_adopt(wx_tcp_t *s, wx_tcp_rx_t *r)
{
    wx_tcp_tx_t *t = &s->tx[r->src];
    wt_mutex_lock_always(&t->mu);
    if (t->fd < 0 && !t->dead) {
        t->fd = r->fd;
        atomic_store_explicit(&t->sleep_fd, r->fd, memory_order_relaxed);
        r->shared = true;
    } else if (t->fd >= 0 && !t->dead && r->src < s->rank && t->switch_fd < 0 && t->old_fd < 0) {
        t->switch_fd = r->fd;
        r->shared = true;
        bool had = wx_tcp_queued(t);
        if (!had)
            wx_tcp_flush(s, t, r->src, false);   /* an empty queue: the first step at once */
    }
    wt_mutex_unlock_always(&t->mu);
}

static WU_NOINLINE void wx_tcp_drop(wx_tcp_t *s, const char *why)
{
    uint64_t n = atomic_fetch_add_explicit(&s->dropped, 1, memory_order_relaxed) + 1;
    if (n <= 4)
        wu_debug("tcp: dropped a connection (%s)", why);
}

static int wx_tcp_parse(wx_tcp_t *s, wx_tcp_rx_t *r, bool deliver, size_t *want_p);

/* A control frame of kind from r's source (wx_tcp_adopt); true when r is now held. */
static WU_NOINLINE bool wx_tcp_control(wx_tcp_t *s, wx_tcp_rx_t *r, uint32_t kind)
{
    wx_tcp_peer_t *p = &s->peer[r->src];
    if (kind == WX_TCP_SWITCHED && !r->shared)
        wx_protocol_error(r->src, "tcp: SWITCHED on a connection that rank opened");
    if (kind == WX_TCP_SWITCHED) {
        if (p->ended)
            return false;
        r->held = true;
        p->held = r;
        wu_debug("tcp: rank %d moved to this rank's connection: holding it until its own ends",
                 r->src);
        return true;
    }
    if (kind != WX_TCP_END)
        wx_protocol_error(r->src, "tcp: a frame of kind %u", kind);
    p->ended = true;
    wx_tcp_rx_t *h = p->held;
    if (h) {   /* what followed SWITCHED may go now: it waits in h's buffer (and socket) */
        p->held = NULL;
        h->held = false;
        size_t want;
        wx_tcp_parse(s, h, true, &want);
    }
    return false;
}

/* Deliver the whole frames of r's buffer (deliver false: check the hello, discard the rest).
 * Returns how many were delivered, or -1 when the connection must be closed (a foreign one);
 * *want_p is the size of the frame being read (0: unknown). */
static int wx_tcp_parse(wx_tcp_t *s, wx_tcp_rx_t *r, bool deliver, size_t *want_p)
{
    size_t off = 0;
    int n = 0;
    *want_p = 0;
    if (r->src < 0) {
        if (r->len < sizeof(wx_tcp_hello_t))
            return 0;
        wx_tcp_hello_t h;
        memcpy(&h, r->buf, sizeof(h));
        if (h.magic != WX_TCP_MAGIC) {
            wx_tcp_drop(s, "no hello");
            return -1;
        }
        if (h.key != s->key) {
            wx_tcp_drop(s, "wrong job key");
            return -1;
        }
        if (h.src >= (uint32_t)s->size || (int)h.src == s->rank) {
            wx_tcp_drop(s, "rank outside the job");
            return -1;
        }
        r->src = (int)h.src;
        off = sizeof(h);
        if (deliver)
            wx_tcp_adopt(s, r);
    }
    if (!deliver) {
        r->len = 0;
        return 0;
    }
    while (r->len - off >= WX_TCP_PRE) {
        uint32_t pre[2];
        memcpy(pre, r->buf + off, WX_TCP_PRE);
        uint32_t body = pre[0];
        if (WU_UNLIKELY(pre[1] != WX_TCP_DATA)) {
            off += WX_TCP_PRE;
            if (wx_tcp_control(s, r, pre[1]))
                break;   /* held */
            continue;
        }
        if (WU_UNLIKELY(body < WX_HDR_SIZE || body > s->max_frame))
            wx_protocol_error(r->src, "tcp: a frame of %u bytes (at most %zu)", body,
                              s->max_frame);
        size_t total = WX_TCP_PRE + WX_TCP_PAD(body);
        if (r->len - off < total) {
            *want_p = total;
            break;
        }
        const char *b = r->buf + off + WX_TCP_PRE;
        s->cb(r->src, b, b + WX_HDR_SIZE, body - WX_HDR_SIZE, s->cb_arg);
        n++;
        off += total;
    }
    if (off > 0) {
        memmove(r->buf, r->buf + off, r->len - off);
        r->len -= off;
    }
    return n;
}

/* Read what r's socket holds and deliver it; false when the connection ended or was foreign. */
static bool wx_tcp_rx_poll(wx_tcp_t *s, wx_tcp_rx_t *r, bool deliver, int *did)
{
    size_t want = 0;
    for (int k = 0; k < WX_TCP_RX_READS && !r->held; k++) {
        size_t need = want > WX_TCP_RX_CHUNK ? want : WX_TCP_RX_CHUNK;
        /* A full buffer holds the start of a frame larger than it (whole frames were delivered),
         * whose size an earlier call learnt: grow, or recv into no room returns 0, which reads as
         * the peer's close and dropped the connection with data in flight (mt_tags across hosts) */
        if (r->len == r->cap && need <= r->cap)
            need = 2 * r->cap;
        if (r->cap < need) {
            char *b = realloc(r->buf, need);
            if (!b)
                wu_log_fatal("tcp: no memory for a receive buffer of %zu bytes", need);
            r->buf = b;
            r->cap = need;
        }
        size_t room = r->cap - r->len;
        ssize_t got = recv(r->fd, r->buf + r->len, room, MSG_DONTWAIT);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        if (got <= 0) {
            if (r->src >= 0 && deliver)
                wu_debug("tcp: rank %d closed its connection%s", r->src,
                         r->len ? " in the middle of a frame" : "");
            return false;
        }
        r->len += (size_t)got;
        int n = wx_tcp_parse(s, r, deliver, &want);
        if (n < 0)
            return false;
        *did += n;
        if ((size_t)got < room)
            return true;   /* the socket is drained */
    }
    return true;
}

static int wx_tcp_poll(wx_tcp_t *s, bool deliver)
{
    int did = 0;
    wx_tcp_rx_t *solo = atomic_load_explicit(&s->solo, memory_order_acquire);
    if (solo) {
        /* one connection, outside the epoll set: read it directly (see wx_tcp_t.solo) */
        if (!wx_tcp_rx_poll(s, solo, deliver, &did))
            wx_tcp_rx_close(s, solo);
        if (++s->solo_polls % WX_TCP_SOLO_EPOLL != 0)
            return did;
    }
    struct epoll_event ev[WX_TCP_EVENTS];
    int n = epoll_wait(s->epfd, ev, WX_TCP_EVENTS, 0);
    for (int i = 0; i < n; i++) {
        wx_tcp_rx_t *r = ev[i].data.ptr;
        if (!r)
            wx_tcp_accept(s);
        else if (!wx_tcp_rx_poll(s, r, deliver, &did))
            wx_tcp_rx_close(s, r);
    }
    return did;
}

static void wx_tcp_flush_all(wx_tcp_t *s, bool wait)
{
    for (int i = 0; i < s->size; i++) {
        wx_tcp_tx_t *t = &s->tx[i];
        if (wait)
            wt_mutex_lock_always(&t->mu);
        else if (!wt_mutex_trylock_always(&t->mu))
            continue;
        if (t->fd >= 0 && wx_tcp_queued(t))
            wx_tcp_flush(s, t, i, true);
        wt_mutex_unlock_always(&t->mu);
    }
}

static int wx_tcp_progress(wx_tl_t *tl)
{
    wx_tcp_t *s = tl->priv;
    int did = 0;
    if (WU_UNLIKELY(atomic_load_explicit(&s->nbacklog, memory_order_relaxed) > 0))
        wx_tcp_flush_all(s, false);   /* first: what was aggregated leaves before we read */
    did += wx_tcp_poll(s, true);
    if (did && WU_UNLIKELY(atomic_load_explicit(&s->nbacklog, memory_order_relaxed) > 0))
        wx_tcp_flush_all(s, false);   /* then what the deliveries answered (a CTS, an ACK) */
    return did;
}

/* ---- the doorbell ------------------------------------------------------------------------------ */

/* A sleeper blocks in ppoll on the epoll set (readable when a connection or the listening socket
 * is) and on the doorbell's eventfd, which is NOT in the epoll set: progress spins on epoll_wait, and
 * a level-triggered eventfd in its set would be reported (and re-polled by the kernel) by every one
 * of those calls from the first ring until a sleeper drained it. The sleeper consumes nothing but
 * the eventfd (progress, in this or another thread, reads the data). A ring between db_arm and
 * db_sleep is seen by the sequence; the eventfd is drained only by db_arm, so a ring after it
 * leaves the eventfd readable until the sleep. */
static uint32_t wx_tcp_db_arm(wx_tl_t *tl)
{
    wx_tcp_t *s = tl->priv;
    uint64_t v;
    while (read(s->bellfd, &v, sizeof(v)) > 0)
        ;
    return atomic_load_explicit(&s->rings, memory_order_acquire);
}

static void wx_tcp_db_disarm(wx_tl_t *tl)
{
    (void)tl;
}

/* Bytes queued for a peer leave only when progress flushes them, and the peer may be waiting for
 * them: while some are queued the sleeper also wakes when such a socket can take more (up to
 * WX_TCP_SLEEP_TX of those sockets; with more, a short sleep). */
#define WX_TCP_SLEEP_TX 62
static void wx_tcp_db_sleep(wx_tl_t *tl, uint32_t seq, uint64_t timeout_ns)
{
    wx_tcp_t *s = tl->priv;
    if (atomic_load_explicit(&s->rings, memory_order_acquire) != seq)
        return;
    struct timespec ts = { .tv_sec = (time_t)(timeout_ns / 1000000000ull),
                           .tv_nsec = (long)(timeout_ns % 1000000000ull) };
    struct pollfd pf[3 + WX_TCP_SLEEP_TX] = { { .fd = s->epfd, .events = POLLIN },
                                             { .fd = s->bellfd, .events = POLLIN } };
    nfds_t n = 2;
    int solo_fd = atomic_load_explicit(&s->solo_fd, memory_order_relaxed);
    if (solo_fd >= 0)   /* outside the epoll set */
        pf[n++] = (struct pollfd){ .fd = solo_fd, .events = POLLIN };
    if (WU_UNLIKELY(atomic_load_explicit(&s->nbacklog, memory_order_acquire) > 0))
        for (int i = 0; i < s->size; i++) {
            wx_tcp_tx_t *t = &s->tx[i];
            if (!atomic_load_explicit(&t->queued, memory_order_relaxed))
                continue;
            if (n == 3 + WX_TCP_SLEEP_TX) {
                ts = (struct timespec){ .tv_nsec = 50000 };   /* too many to watch: poll soon */
                break;
            }
            pf[n++] = (struct pollfd){ .fd = atomic_load_explicit(&t->sleep_fd,
                                                                   memory_order_relaxed),
                                       .events = POLLOUT };
        }
    ppoll(pf, n, &ts, NULL);
}

static void wx_tcp_db_ring(wx_tl_t *tl)
{
    wx_tcp_t *s = tl->priv;
    atomic_fetch_add_explicit(&s->rings, 1, memory_order_release);
    uint64_t one = 1;
    if (write(s->bellfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        wu_log_warn("tcp: doorbell: %s", strerror(errno));
}

/* ---- finalize ---------------------------------------------------------------------------------- */

static void wx_tcp_close(wx_tcp_t *s)
{
    while (s->nrx > 0)
        wx_tcp_rx_close(s, s->rx[0]);   /* before the destinations: a shared fd is theirs */
    wt_mutex_destroy(&s->rx_mu);
    if (s->tx)
        for (int i = 0; i < s->size; i++) {
            if (s->tx[i].fd >= 0)
                close(s->tx[i].fd);
            if (s->tx[i].old_fd >= 0)
                close(s->tx[i].old_fd);
            wx_outq_free(&s->tx[i].out);
            wt_mutex_destroy(&s->tx[i].mu);
        }
    if (s->lfd >= 0)
        close(s->lfd);
    if (s->epfd >= 0)
        close(s->epfd);
    if (s->bellfd >= 0)
        close(s->bellfd);
    free(s->rx);
    free(s->peer);
    free(s->tx);
    free(s->addr);
    free(s);
}

/* The core's barrier of MPI_Finalize has run: what every rank needs has arrived. What is still
 * queued leaves (reading, and discarding, what peers still send meanwhile, so that a peer's flush
 * never waits on us); the fence then keeps every socket open until every rank has flushed. */
static void wx_tcp_finalize(wx_tl_t *tl)
{
    wx_tcp_t *s = tl->priv;
    atomic_store(&s->closing, true);
    uint64_t deadline = wx_tcp_now_ns() + WX_TCP_FLUSH_NS;
    while (atomic_load_explicit(&s->nbacklog, memory_order_relaxed) > 0) {
        wx_tcp_flush_all(s, true);
        wx_tcp_poll(s, false);
        if (atomic_load_explicit(&s->nbacklog, memory_order_relaxed) == 0)
            break;
        if (wx_tcp_now_ns() > deadline) {
            wu_log_warn("tcp: sends still queued after %llu s at finalize",
                        (unsigned long long)(WX_TCP_FLUSH_NS / 1000000000ull));
            break;
        }
        poll(NULL, 0, 1);
    }
    if (s->bs.fence() != WU_OK)
        wu_log_warn("tcp: the fence of finalize failed");
    wu_debug("tcp: %llu foreign or malformed connections dropped",
             (unsigned long long)atomic_load(&s->dropped));
    wx_tcp_instance = NULL;
    wx_tcp_close(s);
}

static const wx_ops_t wx_tcp_ops = {
    .size = sizeof(wx_ops_t),
    .send = wx_tcp_send,
    .send_fill = wx_tcp_send_fill,
    .progress = wx_tcp_progress,
    .get = wx_no_get,
    .getv = wx_no_getv,
    .get_start = wx_no_get_start,
    .put = wx_no_put,
    .mem_reg = wx_no_mem_reg,
    .mem_dereg = wx_no_mem_dereg,
    .db_arm = wx_tcp_db_arm,
    .db_disarm = wx_tcp_db_disarm,
    .db_sleep = wx_tcp_db_sleep,
    .db_ring = wx_tcp_db_ring,
    .set_prefetch = wx_no_set_prefetch,
    .win_reg = wx_no_win_reg,
    .win_dereg = wx_no_win_dereg,
    .win_write = wx_no_win_write,
    .finalize = wx_tcp_finalize,
};

/* ---- start-up ---------------------------------------------------------------------------------- */

/* Listen on every interface (an ephemeral port); the published address is wx_sock_default_ip's
 * (WEFT_SOCK_IF_ADDR, else the launcher's WEFT_HOST_ADDR, else the host name's), and binds the
 * socket to it when WEFT_SOCK_IF_ADDR names it. */
static wu_status_t wx_tcp_listen(wx_tcp_t *s, char *addr, size_t len)
{
    char ipbuf[INET_ADDRSTRLEN];
    const char *ip = wx_sock_default_ip(ipbuf, sizeof(ipbuf));
    const char *bind_ip = getenv("WEFT_SOCK_IF_ADDR");
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
    struct in_addr pub;
    socklen_t sl = sizeof(sa);
    if (inet_pton(AF_INET, ip, &pub) != 1) {
        wu_log_error("tcp: the address to publish, %s, is not an IPv4 address (WEFT_SOCK_IF_ADDR)",
                     ip);
        return WU_ERR_INVALID;
    }
    if (bind_ip && *bind_ip)
        sa.sin_addr = pub;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, SOMAXCONN) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
        wu_log_error("tcp: cannot listen on %s: %s", bind_ip && *bind_ip ? ip : "0.0.0.0",
                     strerror(errno));
        if (fd >= 0)
            close(fd);
        return WU_ERR_IO;
    }
    s->lfd = fd;
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
    if ((s->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
        epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ||
        (s->bellfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
        wu_log_error("tcp: epoll: %s", strerror(errno));
        return WU_ERR_IO;
    }
    snprintf(addr, len, "%s:%u", ip, (unsigned)ntohs(sa.sin_port));
    return WU_OK;
}

static bool wx_tcp_parse_addr(const char *v, struct sockaddr_in *sa)
{
    char host[WX_TCP_ADDR_MAX];
    snprintf(host, sizeof(host), "%s", v);
    char *colon = strrchr(host, ':');
    if (!colon)
        return false;
    *colon = '\0';
    char *end;
    unsigned long port = strtoul(colon + 1, &end, 10);
    *sa = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    return *end == '\0' && port > 0 && port < 65536 && inet_pton(AF_INET, host, &sa->sin_addr) == 1;
}

/* WEFT_TCP_ADDR_FILE (a test hook): the address where a program outside the job can read it. */
static void wx_tcp_addr_file(const wx_tcp_t *s, const char *addr)
{
    const char *base = wu_config_str(WU_CONFIG_TCP_ADDR_FILE);
    if (!*base)
        return;
    char path[512];
    snprintf(path, sizeof(path), "%s.%d", base, s->rank);
    FILE *f = fopen(path, "w");
    if (!f || fprintf(f, "%s\n", addr) < 0)
        wu_log_warn("tcp: cannot write the address to %s", path);
    if (f)
        fclose(f);
}

/* Publish this rank's address (or "-": ok false) and the job key (rank 0), fence, read the key and
 * every peer's address. Every rank calls it, so nobody waits forever. */
static wu_status_t wx_tcp_exchange(wx_tcp_t *s, const char *mine, bool ok)
{
    wu_status_t st;
    if ((st = s->bs.put("tcp-addr", ok ? mine : "-")) != WU_OK)
        return st;
    if (s->rank == 0) {
        uint64_t key = 0;
        while (key == 0)
            if (getrandom(&key, sizeof(key), 0) != sizeof(key))
                key = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
        char kv[17];
        snprintf(kv, sizeof(kv), "%016llx", (unsigned long long)key);
        if ((st = s->bs.put("tcp-key", kv)) != WU_OK)
            return st;
    }
    if ((st = s->bs.fence()) != WU_OK)
        return st;
    if (!ok)
        return WU_ERR_IO;
    char v[WX_TCP_ADDR_MAX];
    if ((st = s->bs.get(0, "tcp-key", v, sizeof(v))) != WU_OK) {
        wu_log_error("tcp: no job key from rank 0");
        return st;
    }
    s->key = strtoull(v, NULL, 16);
    for (int r = 0; r < s->size; r++) {
        if (r == s->rank)
            continue;
        if ((st = s->bs.get(r, "tcp-addr", v, sizeof(v))) != WU_OK) {
            wu_log_error("tcp: no address from rank %d", r);
            return st;
        }
        if (!strcmp(v, "-")) {
            wu_log_error("tcp: rank %d could not listen", r);
            return WU_ERR_IO;
        }
        if (!wx_tcp_parse_addr(v, &s->addr[r])) {
            wu_log_error("tcp: rank %d published a malformed address \"%s\"", r, v);
            return WU_ERR_INVALID;
        }
    }
    return WU_OK;
}

wu_status_t wx_tcp_create(const wx_bootstrap_t *bs, wx_recv_fn_t cb, void *cb_arg, wx_tl_t **tl_p)
{
    wx_tcp_t *s = calloc(1, sizeof(*s));
    if (!s) {
        wu_log_error("tcp: no memory for the transport");
        return WU_ERR_NO_MEMORY;
    }
    s->rank = bs->rank;
    s->size = bs->size;
    s->bs = *bs;
    s->cb = cb;
    s->cb_arg = cb_arg;
    s->lfd = s->epfd = s->bellfd = -1;
    atomic_init(&s->rings, 0);
    atomic_init(&s->closing, false);
    atomic_init(&s->nbacklog, 0);
    atomic_init(&s->dropped, 0);
    atomic_init(&s->solo, NULL);
    atomic_init(&s->solo_fd, -1);
    wt_mutex_init(&s->rx_mu);
    s->addr = calloc((size_t)s->size, sizeof(*s->addr));
    s->tx = calloc((size_t)s->size, sizeof(*s->tx));
    s->peer = calloc((size_t)s->size, sizeof(*s->peer));
    wu_status_t st = WU_ERR_NO_MEMORY;
    char mine[WX_TCP_ADDR_MAX] = "";
    if (s->addr && s->tx && s->peer) {
        for (int i = 0; i < s->size; i++) {
            wt_mutex_init(&s->tx[i].mu);
            s->tx[i].fd = s->tx[i].switch_fd = s->tx[i].old_fd = -1;
            atomic_init(&s->tx[i].sleep_fd, -1);
            atomic_init(&s->tx[i].queued, false);
        }
        st = wx_tcp_listen(s, mine, sizeof(mine));
    } else {
        free(s->tx);
        s->tx = NULL;
        wu_log_error("tcp: no memory for %d peers", s->size);
    }
    wu_status_t xst = wx_tcp_exchange(s, mine, st == WU_OK);
    if (st == WU_OK)
        st = xst;
    if (st != WU_OK) {
        wx_tcp_close(s);
        return st;
    }
    wx_tcp_addr_file(s, mine);
    size_t eager = (size_t)wu_config_int(WU_CONFIG_TCP_EAGER_MAX);
    size_t frag = (size_t)wu_config_int(WU_CONFIG_TCP_FRAG_SIZE);
    size_t maxp = eager > frag ? eager : frag;
    if (maxp < 64)
        maxp = 64;
    s->max_frame = WX_HDR_SIZE + maxp;
    s->tx_queue = (size_t)wu_config_int(WU_CONFIG_TCP_TX_QUEUE);
    s->agg_ns = (uint64_t)wu_config_int(WU_CONFIG_TCP_AGG_NS);
    wx_attr_t a = {
        .name = "tcp",
        .caps = WX_CAP_ORDERED | WX_CAP_DOORBELL,
        .max_payload = maxp,
        .eager_max = eager,
        .bulk_eager_max = eager,
        .inline_max = 0,
        .frag_size = frag,
    };
    s->tl = (wx_tl_t){ .ops = &wx_tcp_ops, .attr = a, .priv = s };
    wx_tcp_instance = s;
    wu_debug("tcp: listening at %s, eager %zu, fragment %zu, send queue %zu bytes per peer", mine,
             eager, frag, s->tx_queue);
    *tl_p = &s->tl;
    return WU_OK;
}

bool wx_tcp_auto_preferred(char *why, size_t len)
{
    const char *fp = getenv("FI_PROVIDER");
    if (fp && *fp) {
        snprintf(why, len, "FI_PROVIDER=%s is set: ofi", fp);
        return false;
    }
    int devs = 0;
    char first[64] = "";
    DIR *d = opendir("/sys/class/infiniband");
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (e->d_name[0] != '.' && devs++ == 0)
                snprintf(first, sizeof(first), "%.60s", e->d_name);
        closedir(d);
    }
    if (devs > 0) {
        snprintf(why, len, "%d RDMA device%s in /sys/class/infiniband (%s%s): ofi", devs,
                 devs > 1 ? "s" : "", first, devs > 1 ? ", ..." : "");
        return false;
    }
    snprintf(why, len, "no RDMA device (/sys/class/infiniband %s) and FI_PROVIDER unset: tcp",
             d ? "empty" : "absent");
    return true;
}
