/* The PMI client: how a rank learns its rank, the job's size and the other ranks' addresses from
 * its launcher. Knows nothing of MPI. Backends (wi_pmi_int.h), chosen at init from WEFT_PMI
 * (auto|pmix|pmi2|pmi1) and the environment:
 *
 *   PMIx     PMIX_NAMESPACE and PMIX_RANK set (srun --mpi=pmix), through libpmix when the build
 *            found it
 *   PMI-2    PMI_FD with PMI_RANK, PMI_SIZE and PMI_JOBID (srun --mpi=pmi2); forced by
 *            WEFT_PMI=pmi2 under our mpiexec or Hydra, which serve both wire protocols
 *   PMI-1    PMI_FD (with PMI_RANK and PMI_SIZE: our mpiexec, Hydra), or PMI_PORT ("host:port",
 *            with PMI_ID; Hydra's -pmi-port mode)
 *   none     a singleton: rank 0 of 1, and put/get/fence work on a local table
 *
 * Keys and values: a key is 1..WI_PMI_KEY_MAX characters from [A-Za-z0-9_.:-]; a value is any
 * C string. Values are escaped for the wire and split over several PMI keys when longer than the
 * server's vallen_max, so their length is bounded only by memory (a few hundred bytes is the
 * expected use). Rank r's key K is stored as "K-r" (and "K-r.i" for the parts of a long value).
 * A rank puts each key once: what a second put of the same key does depends on the launcher
 * (Hydra's PMI-2 keeps the first value, PMI-1 servers the last).
 *
 * Errors: the failing function logs what failed (wu_log_error) and returns WU_ERR_PMI, or
 * WU_ERR_INVALID for a bad argument. wi_pmi_get returns WU_ERR_NOT_FOUND, without logging, when the
 * key was never put (after a fence that is an error the caller should report), and WU_ERR_TRUNCATE
 * when the value does not fit in len bytes.
 *
 * Concurrency contract: the calls are made by one thread at a time (MPI_Init/Finalize/Abort paths
 * and the transports' bootstrap); not synchronized inside.
 */
#ifndef WI_PMI_H
#define WI_PMI_H

#include <stdbool.h>
#include <stddef.h>
#include "util/wu_status.h"

#define WI_PMI_KEY_MAX 40

wu_status_t wi_pmi_init(int *rank_p, int *size_p, bool *singleton_p);

/* The job's name, safe in a file name ([A-Za-z0-9._-] only, at most WI_PMI_KVSNAME_MAX chars) and
 * unique per job; valid after init. Under our mpiexec it is "weft-<mpiexec pid>-<8 hex digits>",
 * and mpiexec removes /dev/shm/<kvsname>* when the job ends; under Hydra or Slurm it is their kvs
 * name (PMIx: the namespace), with other characters replaced by '_';
 * a singleton makes up "weft-<own pid>-<8 hex digits>". */
#define WI_PMI_KVSNAME_MAX 128
const char *wi_pmi_kvsname(void);

/* The backend in use after init: "pmix", "pmi2", "pmi1" or "singleton". */
const char *wi_pmi_method(void);

/* The MPMD section this process belongs to (PMI get_appnum; 0 for a singleton); valid after init. */
int wi_pmi_appnum(void);

wu_status_t wi_pmi_put(const char *key, const char *val);   /* in this rank's namespace */
wu_status_t wi_pmi_get(int rank, const char *key, char *val, size_t len);  /* key put by rank */
wu_status_t wi_pmi_fence(void);                   /* commit + barrier over the job */

/* Tells the launcher the job failed with `code` (it then ends every rank), then _exit(code). msg,
 * unless NULL or empty, is written to stderr first. Safe to call before init or after finalize. */
void wi_pmi_abort(int code, const char *msg) __attribute__((noreturn));
wu_status_t wi_pmi_finalize(void);

#endif
