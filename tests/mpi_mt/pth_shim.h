/* The multithreaded test programs on the Pth build (cmake -DWEFT_THREADS=pth): every thread of the
 * program becomes a GNU Pth thread, like the library's own. Force-included (-include) before the
 * program's first line by tests/mpi_mt/CMakeLists.txt, it includes the system headers that declare
 * the POSIX thread calls, then renames the calls and types the programs use to Pth equivalents,
 * so the sources stay plain POSIX and still run under MPICH (validate_mpich.sh).
 *
 * Why a shim and not Pth's own pthread emulation: Debian's libpth-dev does not ship it (no
 * pthread.h, no libpthread of Pth's), and since glibc 2.34 the pthread_* symbols live in libc, so an
 * emulation library would have to interpose them process-wide, the library's own uses included. A
 * rename in the test sources only touches what the tests call.
 *
 * What is covered: what tests/mpi_mt uses (threads, mutexes, conditions with a CLOCK_MONOTONIC
 * timed wait, barriers, sched_yield, sleeps); thread attributes are ignored (NULL everywhere).
 * The sleeps matter as much as the threads: nanosleep would stop the OS thread, and with it every
 * thread of the rank. __thread variables are per OS thread, so shared by the Pth threads: mttest.h
 * keeps the thread number in a Pth key instead (MTT_TID, below).
 *
 * Concurrency contract: Pth threads only (one OS thread, switches only inside Pth calls), so the
 * lazily made key below needs no lock. */
#ifndef WEFT_TESTS_PTH_SHIM_H
#define WEFT_TESTS_PTH_SHIM_H

/* Included first: the programs' own #define _GNU_SOURCE would come after the system headers. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <pth.h>

#define WSHIM_STACK (2u << 20)   /* Pth's default stack is 64 KiB; pages are touched only if used */

static inline void wshim_init(void)
{
    pth_init();   /* done by libmpi_abi's constructor already; FALSE (EPERM) then */
}

static inline int wshim_errno(void)
{
    return errno ? errno : EINVAL;
}

/* threads */
static inline int wshim_create(pth_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    (void)attr;
    wshim_init();
    pth_attr_t a = pth_attr_new();
    if (!a)
        return wshim_errno();
    pth_attr_set(a, PTH_ATTR_JOINABLE, TRUE);
    pth_attr_set(a, PTH_ATTR_STACK_SIZE, WSHIM_STACK);
    pth_t id = pth_spawn(a, fn, arg);
    int err = wshim_errno();
    pth_attr_destroy(a);
    if (!id)
        return err;
    *t = id;
    return 0;
}

static inline int wshim_join(pth_t t, void **ret)
{
    return pth_join(t, ret) ? 0 : wshim_errno();
}

/* mutexes */
static inline int wshim_mutex_init(pth_mutex_t *m, const pthread_mutexattr_t *attr)
{
    (void)attr;
    return pth_mutex_init(m) ? 0 : wshim_errno();
}

static inline int wshim_mutex_lock(pth_mutex_t *m)
{
    return pth_mutex_acquire(m, FALSE, NULL) ? 0 : wshim_errno();
}

static inline int wshim_mutex_trylock(pth_mutex_t *m)
{
    return pth_mutex_acquire(m, TRUE, NULL) ? 0 : EBUSY;
}

static inline int wshim_mutex_unlock(pth_mutex_t *m)
{
    return pth_mutex_release(m) ? 0 : wshim_errno();
}

/* conditions: the clock of a timed wait is kept with the condition (Pth's own deadlines are
 * gettimeofday times, so an absolute time is turned into a relative one) */
typedef struct {
    clockid_t clock;
} wshim_condattr_t;

typedef struct {
    pth_cond_t c;
    clockid_t clock;
} wshim_cond_t;

static inline int wshim_condattr_init(wshim_condattr_t *a)
{
    a->clock = CLOCK_REALTIME;
    return 0;
}

static inline int wshim_condattr_setclock(wshim_condattr_t *a, clockid_t clock)
{
    a->clock = clock;
    return 0;
}

static inline int wshim_cond_init(wshim_cond_t *c, const wshim_condattr_t *a)
{
    c->clock = a ? a->clock : CLOCK_REALTIME;
    return pth_cond_init(&c->c) ? 0 : wshim_errno();
}

static inline int wshim_cond_wait(wshim_cond_t *c, pth_mutex_t *m)
{
    return pth_cond_await(&c->c, m, NULL) ? 0 : wshim_errno();
}

static inline int wshim_cond_timedwait(wshim_cond_t *c, pth_mutex_t *m, const struct timespec *abs)
{
    struct timespec now;
    clock_gettime(c->clock, &now);
    int64_t us = (int64_t)(abs->tv_sec - now.tv_sec) * 1000000 + (abs->tv_nsec - now.tv_nsec) / 1000;
    if (us <= 0)
        return ETIMEDOUT;
    pth_event_t ev = pth_event(PTH_EVENT_TIME, pth_timeout((long)(us / 1000000), (long)(us % 1000000)));
    if (!ev)
        return wshim_errno();
    pth_cond_await(&c->c, m, ev);
    int timed_out = pth_event_status(ev) == PTH_STATUS_OCCURRED;
    pth_event_free(ev, PTH_FREE_THIS);
    return timed_out ? ETIMEDOUT : 0;
}

static inline int wshim_cond_notify(wshim_cond_t *c, int all)
{
    return pth_cond_notify(&c->c, all) ? 0 : wshim_errno();
}

/* barriers */
static inline int wshim_barrier_init(pth_barrier_t *b, const pthread_barrierattr_t *attr, unsigned n)
{
    (void)attr;
    return pth_barrier_init(b, (int)n) ? 0 : wshim_errno();
}

static inline int wshim_barrier_wait(pth_barrier_t *b)
{
    int r = pth_barrier_reach(b);
    if (r == PTH_BARRIER_TAILLIGHT)
        return PTHREAD_BARRIER_SERIAL_THREAD;
    return r == FALSE ? wshim_errno() : 0;
}

static inline int wshim_yield(void)
{
    return pth_yield(NULL) ? 0 : -1;
}

static inline int wshim_noop(const void *p)
{
    (void)p;
    return 0;
}

/* The per-thread number of mttest.h (a Pth key: __thread is per OS thread). */
static pth_key_t wshim_tid_key;
static int wshim_tid_made;

static inline int *wshim_tid(void)
{
    if (!wshim_tid_made) {
        wshim_init();
        if (!pth_key_create(&wshim_tid_key, free)) {
            fprintf(stderr, "pth_shim: pth_key_create failed\n");
            abort();
        }
        wshim_tid_made = 1;
    }
    int *p = pth_key_getdata(wshim_tid_key);
    if (!p) {
        if (!(p = malloc(sizeof(*p)))) {
            fprintf(stderr, "pth_shim: out of memory\n");
            abort();
        }
        *p = -1;   /* mttest.h's initial value: the main thread */
        pth_key_setdata(wshim_tid_key, p);
    }
    return p;
}
#define MTT_TID (*wshim_tid())

#define pthread_t pth_t
#define pthread_create wshim_create
#define pthread_join wshim_join
#define pthread_self pth_self
#define pthread_equal(a, b) ((a) == (b))

#define pthread_mutex_t pth_mutex_t
#undef PTHREAD_MUTEX_INITIALIZER
#define PTHREAD_MUTEX_INITIALIZER PTH_MUTEX_INIT
#define pthread_mutex_init wshim_mutex_init
#define pthread_mutex_destroy wshim_noop
#define pthread_mutex_lock wshim_mutex_lock
#define pthread_mutex_trylock wshim_mutex_trylock
#define pthread_mutex_unlock wshim_mutex_unlock

#define pthread_condattr_t wshim_condattr_t
#define pthread_condattr_init wshim_condattr_init
#define pthread_condattr_setclock wshim_condattr_setclock
#define pthread_condattr_destroy wshim_noop
#define pthread_cond_t wshim_cond_t
#undef PTHREAD_COND_INITIALIZER
#define PTHREAD_COND_INITIALIZER { PTH_COND_INIT, CLOCK_REALTIME }
#define pthread_cond_init wshim_cond_init
#define pthread_cond_destroy wshim_noop
#define pthread_cond_wait wshim_cond_wait
#define pthread_cond_timedwait wshim_cond_timedwait
#define pthread_cond_signal(c) wshim_cond_notify((c), FALSE)
#define pthread_cond_broadcast(c) wshim_cond_notify((c), TRUE)

#define pthread_barrier_t pth_barrier_t
#define pthread_barrier_init wshim_barrier_init
#define pthread_barrier_destroy wshim_noop
#define pthread_barrier_wait wshim_barrier_wait

#define sched_yield wshim_yield
#define nanosleep pth_nanosleep
#define usleep pth_usleep
#define sleep pth_sleep

#endif
