/* Ranks as threads (docs/ranks-as-threads.md): what weft-rankhost hands to the shim that it loads
 * first into each rank's link-map namespace (libweft-ratshim.so).
 *
 * The shim is the first object of its namespace, so its definitions come before libc's for every
 * object loaded there later (the program, its libmpi_abi, libc itself): a secondary namespace's
 * libc cannot create threads, so the thread calls go to the base namespace's libc through the
 * pointers below. Everything else of the namespace stays private to the rank: its libc (heap,
 * stdio, environment), the program's globals, and today a whole Weft runtime per rank.
 *
 * Concurrency: weft_rat_enter runs once per namespace, in the rank's thread, before the program's
 * main; the forwarded calls may come from any thread of the rank afterwards.
 */
#ifndef WEFT_RAT_SHIM_H
#define WEFT_RAT_SHIM_H

#include <pthread.h>
#include <time.h>

typedef struct weft_rat_base {
    int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    int (*join)(pthread_t, void **);
    int (*tryjoin)(pthread_t, void **);
    int (*timedjoin)(pthread_t, void **, const struct timespec *);
    int (*detach)(pthread_t);
    void (*exit)(void *) __attribute__((noreturn));
} weft_rat_base_t;

typedef struct weft_rat_rank {
    const weft_rat_base_t *base;
    char *const *env;    /* the rank's whole environment, NULL-terminated */
    int out_fd, err_fd;  /* the rank's stdout and stderr (pipes to mpiexec), -1: keep 1 and 2 */
} weft_rat_rank_t;

/* Called in the rank's thread once the shim is loaded: installs the forwarding, the rank's
 * environment and its stdio streams. Returns 0, or -1 with errno. */
typedef int (*weft_rat_enter_fn)(const weft_rat_rank_t *rank);
/* Called when the rank's main has returned: flushes the namespace's stdio. */
typedef void (*weft_rat_leave_fn)(void);

#endif
