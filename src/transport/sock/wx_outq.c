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
