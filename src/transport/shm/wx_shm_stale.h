/* Shared-memory names that cannot outlive their job.
 *
 * A segment's name exists only while a job starts (from its creation by the node's first rank until
 * every rank has mapped it). To tell a live name from one left by a job killed in that window, the
 * creator holds a shared flock(2) on the file for as long as the name exists: the file is made
 * without a name (O_TMPFILE), locked, marked (the sticky bit in its mode) and only then linked
 * under its name, so no other process ever sees it unlocked while its creator lives. The lock dies with the creator's last descriptor, so
 * whatever kills it, the name becomes recognisably stale. Anyone may then remove it:
 * wx_shm_stale_create sweeps before creating (the next job on the node cleans what a crash left,
 * under any launcher), and mpiexec sweeps its job's names when it exits and, from a watcher
 * process, when it is killed (tools/mpiexec/cleanup.c).
 *
 * Only names of our own user that look like Weft's ("weft-*-shm", Weft's mpiexec and singletons;
 * "kvs_*-shm", Hydra's job names) are ever considered, and only unlocked ones are removed: at once
 * if marked, else (an older Weft's, or the fallback's between creation and lock) once 10 s old.
 *
 * This file depends on libc alone: mpiexec compiles it too (WX_SHM_STALE_STANDALONE).
 * Concurrency: the functions keep no state and may be called from any thread or process at once;
 * a sweep racing a creator never removes the creator's name (it is locked before it is visible). */
#ifndef WX_SHM_STALE_H
#define WX_SHM_STALE_H

#include <stdbool.h>

#define WX_SHM_STALE_DIR "/dev/shm"

/* Creates the shared-memory object `name` ("/<job id>-shm", as for shm_open) exclusively, sized 0,
 * mode 01600 (the mark), with the creator's lock taken; sweeps stale names first. Returns a descriptor
 * (O_RDWR, close-on-exec) or -1 with errno set (EEXIST: a live job holds that name). Keep the
 * descriptor open until the name is unlinked: closing it is what marks a left-over name stale. */
int wx_shm_stale_create(const char *name);

/* True if `entry` (a file name in /dev/shm, no slash) is one Weft may have created. */
bool wx_shm_stale_is_weft(const char *entry);

/* Removes the stale Weft names in /dev/shm that start with `prefix` ("" or NULL: every Weft name).
 * With `force`, removes them locked or not (mpiexec, once every rank of its job is gone). Returns
 * how many matching names remain (live ones), or -1 if /dev/shm cannot be read. *removed_p (may be
 * NULL) gets how many were removed. */
int wx_shm_stale_sweep(const char *prefix, bool force, int *removed_p);

#endif
