/* A stream's out queue (wx_outq.h). */
#include "transport/sock/wx_outq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define WX_OUTQ_FIRST ((size_t)64 << 10)

char *wx_outq_reserve(wx_outq_t *q, size_t n)
{
    if (q->off == q->len)
        q->off = q->len = 0;
    if (q->len + n > q->cap && q->off > 0) {   /* slide the waiting bytes to the front first */
        memmove(q->buf, q->buf + q->off, q->len - q->off);
        q->len -= q->off;
        q->off = 0;
    }
    if (q->len + n > q->cap) {
        size_t cap = q->cap ? q->cap : WX_OUTQ_FIRST;
        while (cap < q->len + n)
            cap *= 2;
        char *p = realloc(q->buf, cap);
        if (!p)
            return NULL;
        q->buf = p;
        q->cap = cap;
    }
    char *p = q->buf + q->len;
    q->len += n;
    return p;
}

wu_status_t wx_outq_frame(wx_outq_t *q, uint32_t kind, const void *hdr, const void *payload,
                          size_t len, wx_fill_fn_t fill, void *arg)
{
    size_t body = WX_HDR_SIZE + len, padded = (body + 7u) & ~(size_t)7u;
    char *p = wx_outq_reserve(q, 8 + padded);
    if (!p)
        return WU_ERR_NO_MEMORY;
    uint32_t pre[2] = { (uint32_t)body, kind };
    memcpy(p, pre, 8);
    memcpy(p + 8, hdr, WX_HDR_SIZE);
    if (fill)
        fill(arg, p + 8 + WX_HDR_SIZE, len);
    else if (len)
        memcpy(p + 8 + WX_HDR_SIZE, payload, len);
    memset(p + 8 + body, 0, padded - body);
    return WU_OK;
}

int wx_outq_send(wx_outq_t *q, int fd)
{
    while (q->off < q->len) {
        ssize_t r = send(fd, q->buf + q->off, q->len - q->off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (r > 0) {
            q->off += (size_t)r;
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        return r < 0 ? errno : ECONNRESET;
    }
    return 0;
}

void wx_outq_clear(wx_outq_t *q)
{
    q->off = q->len = 0;
}

void wx_outq_free(wx_outq_t *q)
{
    free(q->buf);
    *q = (wx_outq_t){ 0 };
}
