/* The messages between the front end and its proxies: a 16-byte header (type, rank, value, length,
 * each 32 bits in network order) and `length` bytes of data, over one TCP connection per proxy.
 * Both sides are single-threaded poll loops: sending only queues and writes what the socket takes
 * at once, so that neither side ever blocks on the other (a front end blocked writing to a proxy
 * that is blocked writing output to it would be a deadlock). */
#include "mpiexec.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MX_HDR_LEN 16

static void mx_link_reserve(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap : 4096;
    while (c < need)
        c *= 2;
    char *b = realloc(*buf, c);
    if (!b) {
        fprintf(stderr, "mpiexec: out of memory\n");
        exit(1);
    }
    *buf = b;
    *cap = c;
}

void mx_link_init(mx_link_t *l, int fd)
{
    memset(l, 0, sizeof(*l));
    l->fd = fd;
}

void mx_link_send(mx_link_t *l, uint32_t type, int32_t rank, int32_t value, const void *data,
                  size_t len)
{
    if (l->fd < 0)
        return;
    uint32_t h[4] = { htonl(type), htonl((uint32_t)rank), htonl((uint32_t)value), htonl((uint32_t)len) };
    mx_link_reserve(&l->out, &l->out_cap, l->out_len + MX_HDR_LEN + len);
    memcpy(l->out + l->out_len, h, MX_HDR_LEN);
    if (len)
        memcpy(l->out + l->out_len + MX_HDR_LEN, data, len);
    l->out_len += MX_HDR_LEN + len;
    (void)mx_link_flush(l);
}

bool mx_link_flush(mx_link_t *l)
{
    size_t off = 0;
    while (l->fd >= 0 && off < l->out_len) {
        ssize_t n = send(l->fd, l->out + off, l->out_len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0)
            off += (size_t)n;
        else if (n < 0 && errno == EINTR)
            continue;
        else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        else
            return false;
    }
    memmove(l->out, l->out + off, l->out_len - off);
    l->out_len -= off;
    return true;
}

bool mx_link_read(mx_link_t *l)
{
    for (;;) {
        mx_link_reserve(&l->in, &l->in_cap, l->in_len + 65536);
        ssize_t n = recv(l->fd, l->in + l->in_len, 65536, MSG_DONTWAIT);
        if (n > 0) {
            l->in_len += (size_t)n;
            if (n < 65536)
                return true;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return true;
        } else {
            return false;
        }
    }
}

bool mx_link_next(mx_link_t *l, mx_msg_t *m, char **data_p, size_t *consumed_p)
{
    uint32_t h[4];
    if (l->in_len < MX_HDR_LEN)
        return false;
    memcpy(h, l->in, MX_HDR_LEN);
    m->type = ntohl(h[0]);
    m->rank = (int32_t)ntohl(h[1]);
    m->value = (int32_t)ntohl(h[2]);
    m->len = ntohl(h[3]);
    if (m->len > MX_MSG_MAX) {   /* not one of ours: the caller drops the connection */
        m->type = 0;
        *data_p = NULL;
        *consumed_p = l->in_len;
        return true;
    }
    if (l->in_len < MX_HDR_LEN + m->len)
        return false;
    *data_p = l->in + MX_HDR_LEN;
    *consumed_p = MX_HDR_LEN + m->len;
    return true;
}

void mx_link_consume(mx_link_t *l, size_t n)
{
    memmove(l->in, l->in + n, l->in_len - n);
    l->in_len -= n;
}

void mx_link_drain(mx_link_t *l, int ms)
{
    int64_t end = mx_now_ms() + ms;
    while (l->fd >= 0 && l->out_len > 0) {
        int64_t left = end - mx_now_ms();
        struct pollfd p = { .fd = l->fd, .events = POLLOUT };
        if (left <= 0 || poll(&p, 1, (int)left) <= 0 || !mx_link_flush(l))
            break;
    }
}

void mx_link_close(mx_link_t *l)
{
    if (l->fd >= 0)
        close(l->fd);
    free(l->in);
    free(l->out);
    mx_link_init(l, -1);
}
