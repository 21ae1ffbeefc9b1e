/* The core's packet header, carried opaquely by transports (WX_HDR_SIZE bytes), and the packet
 * types. Each type has a handler (wc_handler_register, wc_pt2pt.h) that delivery calls through a
 * table indexed by the type byte; a type without one is a fatal error.
 *
 * Protocols:
 *   eager       EAGER(tag, ctx, len [, SYNC: sreq]) + payload          -> [SYNC: ACK(sreq)]
 *   rendezvous  RTS(tag, ctx, len, sreq) + wx_rkey_t of the sender's buffer (its payload: a key in
 *               the header would grow it past 40 bytes, and an 8-byte eager packet past one cache
 *               line of the shm ring); receiver matches, then
 *                 single copy: get(rkey, len) from the sender's memory  -> FIN(sreq)
 *                              (contiguous senders only; the receiver may scatter)
 *                 pipelined:   CTS(sreq, rreq)  -> FRAG(rreq, offset)+payload ... (sender completes
 *                              when the last fragment is in the ring)
 *                 cooperative: RTS(COOP; addr: the sender's slot token) -> COOP_MATCH(sreq;
 *                              addr: rreq; len: bytes accepted; ctx, tag: the low and high halves
 *                              of the receive buffer's address); then chunks claimed through the
 *                              slot by whichever side is inside MPI: FRAG(COOP, rreq, offset)
 *                              through the ring while both are, else read by the receiver (get)
 *                              or written by the sender (put); whoever finishes the last chunk
 *                              tells the other: FIN(sreq) from the receiver, COOP_FIN(addr: the
 *                              slot token) from the sender [ERR: a chunk failed] (shm with CMA;
 *                              docs/shm.md)
 *   dynamic     DYN packets carrying their own routing, forwarded by receivers (wc_dynbcast.h)
 *   cancel      CANCEL_REQ(tag, ctx, sreq, addr [, WAIT]) -> CANCEL_REP(sreq [, CANCELLED] [, WAIT]):
 *               the receiver withdraws the newest unexpected EAGER or RTS of that sender with
 *               (ctx, tag) and the send's token sreq (RTS, SYNC EAGER) or, for a standard EAGER
 *               (which carries the bare address, never echoed), its address addr, if any
 *               (MPI_Cancel of a send, wc_cancel_send)
 *   one-sided   RMA + wc_rma_msg_t [+ layout] [+ data]  -> [RMA_REP + wc_rma_rep_t [+ data]]
 *               (windows across nodes: the payload says which operation, wc_rma_msg.h)
 */
#ifndef WC_PROTO_H
#define WC_PROTO_H

#include <stdint.h>
#include "transport/wx_transport.h"

typedef enum {
    WC_PKT_EAGER = 1,
    WC_PKT_RTS,
    WC_PKT_FIN,
    WC_PKT_ACK,
    WC_PKT_CTS,
    WC_PKT_FRAG,
    WC_PKT_DYN,      /* dynamic broadcast: routing and data (wc_dynbcast.h) */
    WC_PKT_CTX_REQ,  /* to world rank 0: len context ids for request sreq (wc_ctx.c) */
    WC_PKT_CTX_REP,  /* its answer: addr the first id, sreq the asker's request */
    WC_PKT_CANCEL_REQ, /* sender to receiver: withdraw the unmatched EAGER or RTS (tag, ctx, sreq) */
    WC_PKT_CANCEL_REP, /* the answer: sreq, flags CANCELLED if it was withdrawn, WAIT echoed */
    WC_PKT_CTX_NAMED_REQ, /* to world rank 0: the context ids of a key (wc_ctx_named.c) */
    WC_PKT_RMA,      /* one-sided request to a target on another node (wc_rma_msg.c) */
    WC_PKT_RMA_REP,  /* its answer to the origin: data, lock grant, acknowledgement, error */
    WC_PKT_COOP_MATCH, /* receiver to sender: a cooperative RTS matched (sreq, addr, len) */
    WC_PKT_COOP_FIN,   /* sender to receiver: it finished the last chunk (addr: slot token) */
} wc_pkt_type_t;

#define WC_PKT_FLAG_SYNC   0x1
#define WC_PKT_FLAG_PACKED 0x2   /* RTS: the sender's data is not contiguous: no single copy */
#define WC_PKT_FLAG_BULK   0x4   /* RTS: a collective's, single copy from the get_bulk_min attribute */
#define WC_PKT_FLAG_NOKEY  0x8   /* RTS: the transport could not register the buffer: no get */
#define WC_PKT_FLAG_CANCELLED 0x10 /* CANCEL_REP: the message was withdrawn, never to be received */
#define WC_PKT_FLAG_WAIT   0x20  /* CANCEL_REQ/REP: the answer completes the send either way */
#define WC_PKT_FLAG_COOP   0x40  /* RTS: cooperative rendezvous offered, addr is the slot token;
                                    FRAG: one chunk of a cooperative rendezvous */
#define WC_PKT_FLAG_ERR    0x80  /* FIN, COOP_FIN of a cooperative rendezvous: a chunk failed */

typedef struct wc_hdr {
    uint8_t  type;
    uint8_t  flags;
    uint16_t reserved;
    int32_t  tag;
    uint32_t ctx;
    uint32_t reserved2;
    uint64_t len;    /* whole message length in bytes */
    uint64_t sreq;   /* sender's request (SYNC eager, RTS, FIN, ACK, CTS) */
    uint64_t addr;   /* CTS, FRAG: receiver's request */
} wc_hdr_t;

_Static_assert(sizeof(wc_hdr_t) == WX_HDR_SIZE, "the core header must fill the transport header");

#endif
