/* PMI-1 wire-protocol client (the text protocol spoken over the socket in PMI_FD, as served by
 * our mpiexec and by MPICH's Hydra). Knows nothing of MPI.
 *
 * Without PMI_FD in the environment the process is a singleton: rank 0 of 1, and put/get/fence
 * work locally.
 *
 * Concurrency contract: the calls are made by one thread at a time (MPI_Init/Finalize/Abort paths
 * and the transports' bootstrap); not synchronized inside.
 */
#ifndef WI_PMI_H
#define WI_PMI_H

#include <stdbool.h>
#include <stddef.h>
#include "util/wu_status.h"

wu_status_t wi_pmi_init(int *rank_p, int *size_p, bool *singleton_p);
const char *wi_pmi_kvsname(void);                 /* valid after init */
wu_status_t wi_pmi_put(const char *key, const char *val);   /* in this rank's namespace */
wu_status_t wi_pmi_get(int rank, const char *key, char *val, size_t len);  /* key put by rank */
wu_status_t wi_pmi_fence(void);                   /* commit + barrier over the job */
void wi_pmi_abort(int code, const char *msg);     /* tell the launcher, then _exit(code) */
wu_status_t wi_pmi_finalize(void);

#endif
