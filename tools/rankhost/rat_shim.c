/* The shim loaded first into each rank's namespace: see rat_shim.h. */
#define _GNU_SOURCE
#include "rat_shim.h"

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Written once by weft_rat_enter before the program is loaded, read-only afterwards. */
static weft_rat_base_t rat_base;

/* A thread made by the base libc has none of this namespace's libc per-thread state that libc
 * sets up in its own new threads: the locale's ctype tables above all (strcasestr, toupper and
 * the like crash on NULL tables; libnuma's constructor, run by the ofi transport's thread that
 * loads libfabric, was the first to). The thread's first step sets them. */
typedef struct rat_start {
    void *(*fn)(void *);
    void *arg;
} rat_start_t;

static void *rat_thread_start(void *p)
{
    rat_start_t s = *(rat_start_t *)p;
    free(p);
    uselocale(LC_GLOBAL_LOCALE);
    return s.fn(s.arg);
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    rat_start_t *s = malloc(sizeof(*s));
    if (!s)
        return EAGAIN;
    *s = (rat_start_t){ fn, arg };
    int rc = rat_base.create(t, attr, rat_thread_start, s);
    if (rc != 0)
        free(s);
    return rc;
}

int pthread_join(pthread_t t, void **ret)
{
    return rat_base.join(t, ret);
}

int pthread_tryjoin_np(pthread_t t, void **ret)
{
    return rat_base.tryjoin(t, ret);
}

int pthread_timedjoin_np(pthread_t t, void **ret, const struct timespec *abstime)
{
    return rat_base.timedjoin(t, ret, abstime);
}

int pthread_detach(pthread_t t)
{
    return rat_base.detach(t);
}

void pthread_exit(void *ret)
{
    rat_base.exit(ret);
}

/* A stream of the rank on fd, replacing *stream (stdout or stderr of this namespace's libc). */
static int rat_stream(FILE **stream, int fd, int mode)
{
    if (fd < 0)
        return 0;
    FILE *f = fdopen(fd, "w");
    if (!f)
        return -1;
    if (setvbuf(f, NULL, mode, mode == _IONBF ? 0 : BUFSIZ) != 0) {
        fclose(f);
        errno = EINVAL;
        return -1;
    }
    *stream = f;
    return 0;
}

int weft_rat_enter(const weft_rat_rank_t *rank)
{
    rat_base = *rank->base;
    /* The namespace's own environment: getenv in the program and in its Weft see the rank's
     * variables (PMI_FD, PMI_RANK, ...), not the host process's. */
    if (clearenv() != 0)
        return -1;
    for (char *const *e = rank->env; *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq)
            continue;
        char name[256];
        size_t n = (size_t)(eq - *e);
        if (n == 0 || n >= sizeof(name))
            continue;
        memcpy(name, *e, n);
        name[n] = '\0';
        if (setenv(name, eq + 1, 1) != 0)
            return -1;
    }
    /* stdout line-buffered when it is a terminal would need isatty; mpiexec gives pipes, so full
     * buffering as any process writing to a pipe has, flushed by weft_rat_leave. */
    if (rat_stream(&stdout, rank->out_fd, _IOFBF) != 0 || rat_stream(&stderr, rank->err_fd, _IONBF) != 0)
        return -1;
    return 0;
}

void weft_rat_leave(void)
{
    fflush(NULL);
}
