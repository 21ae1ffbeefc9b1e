/* The watcher that removes a job's shared-memory names when mpiexec itself is killed (cleanup.c). */
#ifndef MX_CLEANUP_H
#define MX_CLEANUP_H

#include <sys/types.h>

/* Local and proxy modes, before the first rank is started: forks the watcher for job `kvsname`.
 * Without it (fork failed, said once) the job runs, and a later job sweeps what a kill leaves. */
void mx_janitor_start(const char *kvsname);

/* Tells the watcher of a rank just started (mpiexec's one thread, right after fork). */
void mx_janitor_watch(pid_t pid);

#endif
