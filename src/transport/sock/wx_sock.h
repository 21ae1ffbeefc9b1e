/* The socket transport: TCP streams between processes of different jobs (dynamic processes,
 * docs/dynamic.md). Not chosen at start-up: the core creates it on the first MPI_Comm_connect,
 * accept, spawn or join, and adds peers to it one at a time as other jobs' processes become known,
 * each under a peer id of the endpoint beyond the job's own ranks.
 *
 * Each process listens on one TCP port (its address "IP:PORT", wx_sock_addr). Traffic to a peer
 * goes over a connection this process opens on the first send (one direction per connection:
 * sends on the connections it opened, receives on those it accepted). A new connection starts with
 * a hello frame holding the sender's address; the receiver maps it to a peer id through the
 * resolve callback, which may create the peer then (its first packet can arrive before the
 * receiver's own MPI_Comm_accept has returned).
 *
 * Concurrency: send/send_fill follow the transport contract (one thread per destination); a
 * destination's stream is also guarded by its own mutex, which progress only try-locks to flush
 * what a full socket left queued. progress: one thread at a time; it alone owns the accepted
 * connections. wx_sock_peer_add: any thread, before the first send to that id.
 */
#ifndef WX_SOCK_H
#define WX_SOCK_H

#include "transport/wx_transport.h"

/* Map a hello's address to a peer id (>= 0), or -1 to refuse the connection. Called inside
 * progress. */
typedef int (*wx_sock_resolve_fn_t)(const char *addr, void *arg);

/* The IPv4 address this process listens on for other jobs: WEFT_SOCK_IF_ADDR; else WEFT_HOST_ADDR
 * (set by mpiexec's proxies: the host's address towards the front end); else the address of the
 * host name unless it is a loopback one; else 127.0.0.1. Into buf, or an environment string. */
const char *wx_sock_default_ip(char *buf, size_t len);
/* Listen on an ephemeral TCP port of wx_sock_default_ip; peers are ids 0..npeers-1. */
wu_status_t wx_sock_create(int npeers, wx_recv_fn_t cb, void *cb_arg, wx_sock_resolve_fn_t resolve,
                           void *resolve_arg, wx_tl_t **tl_p);
/* "IP:PORT" of this process's listening socket (valid while tl lives). */
const char *wx_sock_addr(wx_tl_t *tl);
/* Packets to id go to the process listening at addr. */
wu_status_t wx_sock_peer_add(wx_tl_t *tl, int id, const char *addr);

#endif
