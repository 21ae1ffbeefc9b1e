/* Core requests: one per send or receive, decoupled from the packets that carry them
 * (NewMadeleine). The MPI layer embeds a wc_request_t in its own request object.
 *
 * Concurrency contract (this version): created, started and completed under the core's
 * serialization (one thread in the library at a time). `complete` is written with a release store
 * by the thread that completes the request and read with acquire loads by waiters, so the threaded
 * engine can keep this layout.
 */
#ifndef WC_REQUEST_H
#define WC_REQUEST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/wc_match.h"
#include "core/wc_proto.h"

typedef enum { WC_REQ_SEND = 1, WC_REQ_RECV } wc_req_kind_t;

typedef enum {
    WC_SEND_STANDARD = 0,
    WC_SEND_SYNC,
    WC_SEND_READY,
} wc_send_mode_t;

/* A packet waiting for room in a transport ring, queued per destination in send order. */
typedef struct wc_sendop {
    wu_list_t link;
    wc_hdr_t  hdr;
    const void *payload;
    size_t    len;
    struct wc_request *req;   /* request completed or advanced when the packet leaves, or NULL */
    bool      pooled;         /* allocated from the control-packet pool */
} wc_sendop_t;

typedef struct wc_request {
    /* Hot: what matching and completion touch, in the first 64 bytes. */
    _Atomic int       complete;
    uint8_t           kind;
    uint8_t           cancelled;
    uint8_t           sync;          /* send: wait for the receiver's ACK or FIN */
    int               error;         /* wu_status_t of the completed operation */
    int               peer;          /* send: destination (world rank) */
    /* completion status (receives): world rank of the source, tag, bytes delivered */
    int               st_source;
    int               st_tag;
    void             *buf;
    size_t            len;           /* send: bytes to send; recv: capacity */
    size_t            st_bytes;
    void            (*on_complete)(struct wc_request *req);   /* optional, called once */
    wc_match_entry_t  match;         /* receive: the posted pattern */
    /* Cold: rendezvous and queued sends. */
    size_t            msg_len;       /* receive: the whole message's length */
    size_t            arrived;       /* pipelined receive: bytes arrived */
    size_t            frag_off;      /* pipelined send: next offset */
    uint64_t          frag_rreq;     /* pipelined send: the receiver's request */
    wc_sendop_t       op;            /* send: the packet of this request while queued */
} wc_request_t;

static inline bool wc_request_is_complete(const wc_request_t *r)
{
    return atomic_load_explicit(&r->complete, memory_order_acquire) != 0;
}

#endif
