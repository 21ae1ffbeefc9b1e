/* A stream's out queue: the bytes a nonblocking socket did not take yet, in order (the socket
 * transports' destinations, wx_sock.c and wx_tcp.c).
 *
 * Concurrency: none of its own. The owner guards a queue with the lock that orders the stream's
 * writes (a destination's mutex), and holds it for every call.
 */
#ifndef WX_OUTQ_H
#define WX_OUTQ_H

#include "transport/wx_transport.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wx_outq {
    char  *buf;
    size_t off, len, cap;               /* bytes [off, len) of buf wait; zero-initialized: empty */
} wx_outq_t;

static inline bool wx_outq_empty(const wx_outq_t *q)
{
    return q->off == q->len;
}

static inline size_t wx_outq_bytes(const wx_outq_t *q)
{
    return q->len - q->off;
}

/* Room for n more bytes at the end (the caller writes them); NULL without memory. */
char *wx_outq_reserve(wx_outq_t *q, size_t n);
/* A frame at the end, as both socket transports frame the core's packets: an 8-byte prefix (the
 * body's length WX_HDR_SIZE + len, then kind), the header, the payload (copied, or written by fill
 * when fill is not NULL), zeros up to a multiple of 8. WU_ERR_NO_MEMORY, or WU_OK. */
wu_status_t wx_outq_frame(wx_outq_t *q, uint32_t kind, const void *hdr, const void *payload,
                          size_t len, wx_fill_fn_t fill, void *arg);
/* Write to fd (nonblocking) what it takes. 0: all sent, or fd would block; else the errno of the
 * failure (ECONNRESET when the socket took nothing and reported no error). */
int wx_outq_send(wx_outq_t *q, int fd);
/* Drop what waits (the peer is gone). */
void wx_outq_clear(wx_outq_t *q);
void wx_outq_free(wx_outq_t *q);

#endif
