/* The tcp transport: Weft's own TCP streams between the ranks of one job, the inter-node transport
 * when the node has no RDMA device (docs/tcp.md). A sibling of the socket transport between jobs
 * (wx_sock.h), sharing its choice of the address to publish (wx_sock_default_ip).
 *
 * Each rank listens on one TCP port and publishes "IP:PORT" through the bootstrap (tcp-addr);
 * rank 0 also publishes the job key (tcp-key, 64 random bits). After the fence every rank reads
 * the key and every peer's address. A connection to a peer is opened on the first send to it
 * (nonblocking connect), and carries that direction only: its first 16 bytes are a hello with the
 * job key and the sender's rank; the receiver checks both before reading anything else, and closes
 * a connection that fails (counted by wx_tcp_dropped). */
#ifndef WX_TCP_H
#define WX_TCP_H

#include "transport/wx_transport.h"

/* wx_create_fn_t, collective over the whole job (every rank calls it, or none): listens, exchanges
 * the addresses and the key through bs (put, fence, get). Attributes from WEFT_TCP_EAGER_MAX and
 * WEFT_TCP_FRAG_SIZE; WEFT_TCP_TX_QUEUE bounds what one destination may have queued. One instance
 * per process. A rank that cannot listen publishes "-", so every rank fails alike. */
wu_status_t wx_tcp_create(const wx_bootstrap_t *bs, wx_recv_fn_t cb, void *cb_arg, wx_tl_t **tl_p);

/* Connections closed because their hello had another job's key, a rank outside the job, or was
 * not a hello at all (0 without an instance). Any thread. */
uint64_t wx_tcp_dropped(void);

/* WEFT_TRANSPORTS=auto's choice between nodes: true (tcp) when this node has no RDMA device
 * (/sys/class/infiniband absent or empty) and FI_PROVIDER is unset, false (ofi) otherwise. why
 * (len bytes) says which applied. Reads the file system and the environment only: no libfabric. */
bool wx_tcp_auto_preferred(char *why, size_t len);

#endif
