/* The socket transport (wx_sock.h states the model and the concurrency contract).
 *
 * Wire: a frame is an 8-byte prefix (the body's length, host order: both ends run the same build on
 * one kind of machine, and 4 bytes of padding), then WX_HDR_SIZE header bytes and the payload,
 * padded to a multiple of 8 so that every header lands 8-byte aligned in the receive buffer; a
 * connection's first frame is the hello, whose length has WX_SOCK_HELLO set and whose body is the
 * sender's address. A stream
 * keeps per-pair order, so the transport is WX_CAP_ORDERED. A send never blocks: what the socket
 * does not take is queued in the destination's out buffer and flushed by later sends and by
 * progress. */
#include "transport/sock/wx_sock.h"
#include "transport/sock/wx_outq.h"
#include "thread/wt_thread.h"
#include "util/wu_config.h"
#include "util/wu_log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define WX_SOCK_HELLO     0x80000000u
#define WX_SOCK_ADDR_MAX  64
#define WX_SOCK_RX_CHUNK  (256u << 10)
#define WX_SOCK_PAYLOAD   ((size_t)64 << 20)
#define WX_SOCK_PRE       8u
#define WX_SOCK_PAD(n)    (((n) + 7u) & ~(size_t)7u)

/* A destination: written by its sender under mu; progress flushes under a try-lock. */
typedef struct wx_sock_tx {
    wt_mutex_t   mu;
    int          fd;                         /* mu: -1 until the first send */
    char         addr[WX_SOCK_ADDR_MAX];     /* set by peer_add before the first send */
    wx_outq_t    out;                        /* mu: bytes the socket did not take yet */
    _Atomic bool backlog;                    /* out not empty (read by progress unlocked) */
} wx_sock_tx_t;

/* An accepted connection: progress only. */
typedef struct wx_sock_rx {
    int    fd;
    int    peer;                             /* -1 until the hello */
    char  *buf;
    size_t len, cap;
} wx_sock_rx_t;

typedef struct wx_sock {
    wx_tl_t       tl;
    int           lfd;
    char          addr[WX_SOCK_ADDR_MAX];
    int           npeers;
    wx_sock_tx_t *tx;                        /* [npeers] */
    _Atomic int   ntx_hi;                    /* 1 + the highest id added */
    wx_sock_rx_t *rx;                        /* progress: accepted connections */
    int           nrx, rx_cap;
    wx_recv_fn_t  cb;
    void         *cb_arg;
    wx_sock_resolve_fn_t resolve;
    void         *resolve_arg;
} wx_sock_t;

static int wx_sock_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Write what the socket takes of t's out buffer (t->mu held). WU_ERR_IO: the peer is gone. */
static wu_status_t wx_sock_flush(wx_sock_tx_t *t)
{
    int err = wx_outq_send(&t->out, t->fd);
    if (err) {
        wu_log_error("sock: send to %s failed: %s", t->addr, strerror(err));
        wx_outq_clear(&t->out);
        atomic_store_explicit(&t->backlog, false, memory_order_relaxed);
        return WU_ERR_IO;
    }
    atomic_store_explicit(&t->backlog, !wx_outq_empty(&t->out), memory_order_relaxed);
    return WU_OK;
}

static int wx_sock_connect(const char *addr)
{
    char host[WX_SOCK_ADDR_MAX];
    snprintf(host, sizeof(host), "%s", addr);
    char *colon = strrchr(host, ':');
    if (!colon)
        return -1;
    *colon = '\0';
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1)) };
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        if (errno == EINTR)
            continue;
        close(fd);
        return -1;
    }
    wx_sock_nonblock(fd);
    return fd;
}

/* The first send to t: connect and queue the hello (t->mu held). */
static wu_status_t wx_sock_open(wx_sock_t *s, wx_sock_tx_t *t)
{
    if (!t->addr[0]) {
        wu_log_error("sock: a packet to a peer whose address is unknown");
        return WU_ERR_INVALID;
    }
    int fd = wx_sock_connect(t->addr);
    if (fd < 0) {
        wu_log_error("sock: cannot connect to %s: %s", t->addr, strerror(errno));
        return WU_ERR_IO;
    }
    t->fd = fd;
    uint32_t n = (uint32_t)strlen(s->addr);
    char *p = wx_outq_reserve(&t->out, WX_SOCK_PRE + WX_SOCK_PAD(n));
    if (!p)
        return WU_ERR_NO_MEMORY;
    uint32_t pre[2] = { n | WX_SOCK_HELLO, 0 };
    memcpy(p, pre, WX_SOCK_PRE);
    memcpy(p + WX_SOCK_PRE, s->addr, n);
    return WU_OK;
}

static wu_status_t wx_sock_send_common(wx_tl_t *tl, int dst, const void *hdr, const void *payload,
                                       size_t len, wx_fill_fn_t fill, void *arg)
{
    wx_sock_t *s = tl->priv;
    if (dst < 0 || dst >= s->npeers)
        return WU_ERR_INVALID;
    wx_sock_tx_t *t = &s->tx[dst];
    wu_status_t st = WU_OK;
    wt_mutex_lock_always(&t->mu);
    if (t->fd < 0 && (st = wx_sock_open(s, t)) != WU_OK)
        goto out;
    if ((st = wx_outq_frame(&t->out, 0, hdr, payload, len, fill, arg)) != WU_OK)
        goto out;
    st = wx_sock_flush(t);
out:
    wt_mutex_unlock_always(&t->mu);
    return st;
}

static wu_status_t wx_sock_send(wx_tl_t *tl, int dst, const void *hdr, const void *payload,
                                size_t len)
{
    return wx_sock_send_common(tl, dst, hdr, payload, len, NULL, NULL);
}

static wu_status_t wx_sock_send_fill(wx_tl_t *tl, int dst, const void *hdr, size_t len,
                                     wx_fill_fn_t fill, void *arg)
{
    return wx_sock_send_common(tl, dst, hdr, NULL, len, fill, arg);
}

static void wx_sock_accept(wx_sock_t *s)
{
    for (;;) {
        int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        if (s->nrx == s->rx_cap) {
            int cap = s->rx_cap ? 2 * s->rx_cap : 8;
            wx_sock_rx_t *rx = realloc(s->rx, sizeof(*rx) * (size_t)cap);
            if (!rx) {
                close(fd);
                return;
            }
            s->rx = rx;
            s->rx_cap = cap;
        }
        s->rx[s->nrx++] = (wx_sock_rx_t){ .fd = fd, .peer = -1 };
    }
}

/* Deliver the whole frames of r's buffer; returns how many, -1 if the stream is malformed. */
static int wx_sock_parse(wx_sock_t *s, wx_sock_rx_t *r)
{
    size_t off = 0;
    int n = 0;
    while (r->len - off >= WX_SOCK_PRE) {
        uint32_t flen;
        memcpy(&flen, r->buf + off, 4);
        bool hello = (flen & WX_SOCK_HELLO) != 0;
        flen &= ~WX_SOCK_HELLO;
        if (hello != (r->peer < 0) || (hello && flen >= WX_SOCK_ADDR_MAX) ||
            (!hello && (flen < WX_HDR_SIZE || flen > WX_HDR_SIZE + WX_SOCK_PAYLOAD)))
            return -1;
        if (r->len - off - WX_SOCK_PRE < WX_SOCK_PAD(flen))
            break;
        const char *body = r->buf + off + WX_SOCK_PRE;
        if (hello) {
            char a[WX_SOCK_ADDR_MAX];
            memcpy(a, body, flen);
            a[flen] = '\0';
            r->peer = s->resolve(a, s->resolve_arg);
            if (r->peer < 0)
                return -1;
        } else {
            s->cb(r->peer, body, body + WX_HDR_SIZE, flen - WX_HDR_SIZE, s->cb_arg);
            n++;
        }
        off += WX_SOCK_PRE + WX_SOCK_PAD(flen);
    }
    if (off > 0) {
        memmove(r->buf, r->buf + off, r->len - off);
        r->len -= off;
    }
    return n;
}

/* Read what r's socket holds and deliver it; false when the connection ended. */
static bool wx_sock_rx_poll(wx_sock_t *s, wx_sock_rx_t *r, int *did)
{
    for (;;) {
        if (r->cap - r->len < WX_SOCK_RX_CHUNK / 4) {
            size_t cap = r->cap ? r->cap * 2 : WX_SOCK_RX_CHUNK;
            char *b = realloc(r->buf, cap);
            if (!b)
                wu_log_fatal("sock: no memory for a receive buffer of %zu bytes", cap);
            r->buf = b;
            r->cap = cap;
        }
        ssize_t got = recv(r->fd, r->buf + r->len, r->cap - r->len, MSG_DONTWAIT);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        if (got <= 0)
            return false;
        r->len += (size_t)got;
        int n = wx_sock_parse(s, r);
        if (n < 0) {
            wu_log_error("sock: malformed stream on an accepted connection (peer %d): closed",
                         r->peer);
            return false;
        }
        *did += n;
        if ((size_t)got < WX_SOCK_RX_CHUNK / 4)
            return true;
    }
}

static int wx_sock_progress(wx_tl_t *tl)
{
    wx_sock_t *s = tl->priv;
    int did = 0;
    wx_sock_accept(s);
    for (int i = 0; i < s->nrx;) {
        if (wx_sock_rx_poll(s, &s->rx[i], &did)) {
            i++;
            continue;
        }
        close(s->rx[i].fd);
        free(s->rx[i].buf);
        s->rx[i] = s->rx[--s->nrx];
    }
    int hi = atomic_load_explicit(&s->ntx_hi, memory_order_acquire);
    for (int i = 0; i < hi; i++) {
        wx_sock_tx_t *t = &s->tx[i];
        if (!atomic_load_explicit(&t->backlog, memory_order_relaxed) ||
            !wt_mutex_trylock_always(&t->mu))
            continue;
        if (t->fd >= 0)
            wx_sock_flush(t);
        wt_mutex_unlock_always(&t->mu);
    }
    return did;
}

static void wx_sock_finalize(wx_tl_t *tl)
{
    wx_sock_t *s = tl->priv;
    for (int i = 0; i < s->npeers; i++) {
        wx_sock_tx_t *t = &s->tx[i];
        if (t->fd >= 0) {
            /* what is still queued gets a short chance to leave */
            for (int k = 0; k < 1000 && !wx_outq_empty(&t->out); k++)
                if (wx_sock_flush(t) != WU_OK || !wx_outq_empty(&t->out))
                    usleep(1000);
            close(t->fd);
        }
        wx_outq_free(&t->out);
        wt_mutex_destroy(&t->mu);
    }
    for (int i = 0; i < s->nrx; i++) {
        close(s->rx[i].fd);
        free(s->rx[i].buf);
    }
    close(s->lfd);
    free(s->rx);
    free(s->tx);
    free(s);
}

static const wx_ops_t wx_sock_ops = {
    .size = sizeof(wx_ops_t),
    .send = wx_sock_send,
    .send_fill = wx_sock_send_fill,
    .progress = wx_sock_progress,
    .get = wx_no_get,
    .getv = wx_no_getv,
    .get_start = wx_no_get_start,
    .put = wx_no_put,
    .mem_reg = wx_no_mem_reg,
    .mem_dereg = wx_no_mem_dereg,
    .db_arm = wx_no_db_arm,
    .db_disarm = wx_no_db_disarm,
    .db_sleep = wx_no_db_sleep,
    .db_ring = wx_no_db_ring,
    .set_prefetch = wx_no_set_prefetch,
    .win_reg = wx_no_win_reg,
    .win_dereg = wx_no_win_dereg,
    .win_write = wx_no_win_write,
    .finalize = wx_sock_finalize,
};

const char *wx_sock_default_ip(char *buf, size_t len)
{
    const char *ip = getenv("WEFT_SOCK_IF_ADDR");
    if (ip && *ip)
        return ip;
    ip = getenv("WEFT_HOST_ADDR");
    if (ip && *ip)
        return ip;
    /* the address the host name resolves to, as other hosts would find this one; a loopback one
     * (127.x, as Debian maps the host name) means nothing elsewhere, so 127.0.0.1 then */
    char host[256];
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res = NULL;
    snprintf(buf, len, "127.0.0.1");
    if (gethostname(host, sizeof(host) - 1) == 0) {
        host[sizeof(host) - 1] = '\0';
        if (getaddrinfo(host, NULL, &hints, &res) == 0) {
            for (struct addrinfo *a = res; a; a = a->ai_next) {
                struct in_addr in = ((struct sockaddr_in *)a->ai_addr)->sin_addr;
                if ((ntohl(in.s_addr) >> 24) != 127) {
                    inet_ntop(AF_INET, &in, buf, (socklen_t)len);
                    break;
                }
            }
            freeaddrinfo(res);
        }
    }
    return buf;
}

wu_status_t wx_sock_create(int npeers, wx_recv_fn_t cb, void *cb_arg, wx_sock_resolve_fn_t resolve,
                           void *resolve_arg, wx_tl_t **tl_p)
{
    wx_sock_t *s = calloc(1, sizeof(*s));
    wx_sock_tx_t *tx = calloc((size_t)npeers, sizeof(*tx));
    if (!s || !tx) {
        free(s);
        free(tx);
        wu_log_error("sock: no memory for %d peers", npeers);
        return WU_ERR_NO_MEMORY;
    }
    for (int i = 0; i < npeers; i++) {
        wt_mutex_init(&tx[i].mu);
        tx[i].fd = -1;
        atomic_init(&tx[i].backlog, false);
    }
    char ipbuf[INET_ADDRSTRLEN];
    const char *ip = wx_sock_default_ip(ipbuf, sizeof(ipbuf));
    struct sockaddr_in sa = { .sin_family = AF_INET };
    socklen_t sl = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || inet_pton(AF_INET, ip, &sa.sin_addr) != 1 ||
        bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 128) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
        wu_log_error("sock: cannot listen on %s: %s", ip, strerror(errno));
        if (fd >= 0)
            close(fd);
        free(s);
        free(tx);
        return WU_ERR_IO;
    }
    s->lfd = fd;
    snprintf(s->addr, sizeof(s->addr), "%s:%u", ip, (unsigned)ntohs(sa.sin_port));
    s->npeers = npeers;
    s->tx = tx;
    atomic_init(&s->ntx_hi, 0);
    s->cb = cb;
    s->cb_arg = cb_arg;
    s->resolve = resolve;
    s->resolve_arg = resolve_arg;
    long eager = wu_config_int(WU_CONFIG_SHM_EAGER_MAX);
    long frag = wu_config_int(WU_CONFIG_SHM_FRAG_SIZE);
    wx_attr_t a = {
        .name = "sock",
        .caps = WX_CAP_ORDERED,
        .max_payload = WX_SOCK_PAYLOAD,
        .eager_max = (size_t)eager,
        .bulk_eager_max = (size_t)eager,
        .inline_max = 0,
        .frag_size = frag > 0 ? (size_t)frag : 65536,
    };
    s->tl = (wx_tl_t){ .ops = &wx_sock_ops, .attr = a, .priv = s };
    *tl_p = &s->tl;
    return WU_OK;
}

const char *wx_sock_addr(wx_tl_t *tl)
{
    return ((wx_sock_t *)tl->priv)->addr;
}

wu_status_t wx_sock_peer_add(wx_tl_t *tl, int id, const char *addr)
{
    wx_sock_t *s = tl->priv;
    if (id < 0 || id >= s->npeers || strlen(addr) >= WX_SOCK_ADDR_MAX)
        return WU_ERR_INVALID;
    wx_sock_tx_t *t = &s->tx[id];
    wt_mutex_lock_always(&t->mu);
    snprintf(t->addr, sizeof(t->addr), "%s", addr);
    wt_mutex_unlock_always(&t->mu);
    int hi = atomic_load_explicit(&s->ntx_hi, memory_order_relaxed);
    while (hi < id + 1 &&
           !atomic_compare_exchange_weak_explicit(&s->ntx_hi, &hi, id + 1, memory_order_release,
                                                  memory_order_relaxed))
        ;
    return WU_OK;
}
