/* Processes of other jobs (dynamic processes, docs/dynamic.md): each gets a peer id of the default
 * endpoint beyond the job's ranks (a "global process id": world ranks 0..size-1 are the job's,
 * size.. are other jobs' processes in the order this process met them), reached by the socket
 * transport (transport/sock). A process is known by its socket address ("IP:PORT"), which is
 * unique among live processes; the same address always maps to the same id.
 *
 * Concurrency: any thread; one lock serializes the table (also against the transport's progress,
 * which resolves the hello of a connection from a process not met yet). Ids are never reused.
 */
#ifndef WC_DYN_H
#define WC_DYN_H

#include <stdbool.h>
#include <stddef.h>
#include "util/wu_status.h"

/* This process's address for other jobs; starts the socket transport on the first call (it then
 * joins the default endpoint's polled transports and sleeps become timed polling). */
wu_status_t wc_dyn_addr(const char **addr_p);
/* The peer id of the process at addr, made on first sight (addr of this process: its world rank). */
wu_status_t wc_dyn_peer(const char *addr, int *id_p);
/* Record which job (an identity string, wc_dyn_job) and rank in it the process of id is. */
void wc_dyn_peer_name(int id, const char *job, int rank);
/* This process's job identity: host name and the launcher's job name; unique among live jobs of
 * one file system namespace. */
const char *wc_dyn_job(void);
/* One order of processes that every job agrees on (by job identity, then rank): <0, 0, >0. Ids of
 * this job compare by world rank. An id whose job was never named sorts after the named ones. */
int wc_dyn_cmp(int a, int b);
/* The job identity of id into buf and its rank there (this job's for ids below the world size);
 * false if unnamed. */
bool wc_dyn_job_of(int id, char *buf, size_t len, int *rank_p);
/* Is id a process of another job? */
static inline bool wc_dyn_is_foreign(int id, int world_size)
{
    return id >= world_size;
}
/* wc_finalize: close the socket transport. */
void wc_dyn_fini(void);

#endif
