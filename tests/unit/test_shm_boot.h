/* Test harness for the shm transport: forks N processes that share a fake bootstrap (a key-value
 * space in an anonymous shared mapping and a process-shared barrier as the fence), runs a body in
 * each, and fails if any child fails, crashes or hangs (alarm watchdog in every process).
 * Included by the tests/unit/test_shm*.c programs only. */
#ifndef TEST_SHM_BOOT_H
#define TEST_SHM_BOOT_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "transport/shm/wx_shm.h"
#include "util/wu_compiler.h"
#include "util/wu_config.h"

#define TB_MAXPROCS 8
#define TB_MAXKEYS  16
#define TB_SCRATCH  4096

typedef struct {
    pthread_barrier_t barrier;
    struct { char key[64]; char val[256]; } kvs[TB_MAXPROCS][TB_MAXKEYS];
    int nkeys[TB_MAXPROCS];
    /* free for the test bodies (e.g. to pass buffer addresses between ranks) */
    volatile uint64_t scratch[TB_MAXPROCS][TB_SCRATCH / 8 / TB_MAXPROCS];
} tb_shared_t;

static tb_shared_t *tb_sh;
static int tb_rank, tb_size;
static char tb_job[64];

static inline wu_status_t tb_put(const char *key, const char *val)
{
    int k = tb_sh->nkeys[tb_rank];
    if (k == TB_MAXKEYS)
        return WU_ERR_NO_MEMORY;
    snprintf(tb_sh->kvs[tb_rank][k].key, sizeof(tb_sh->kvs[0][0].key), "%s", key);
    snprintf(tb_sh->kvs[tb_rank][k].val, sizeof(tb_sh->kvs[0][0].val), "%s", val);
    tb_sh->nkeys[tb_rank] = k + 1;
    return WU_OK;
}

static inline wu_status_t tb_get(int rank, const char *key, char *val, size_t len)
{
    for (int k = 0; k < tb_sh->nkeys[rank]; k++) {
        if (!strcmp(tb_sh->kvs[rank][k].key, key)) {
            snprintf(val, len, "%s", tb_sh->kvs[rank][k].val);
            return WU_OK;
        }
    }
    return WU_ERR_NOT_FOUND;
}

static inline wu_status_t tb_fence(void)
{
    __sync_synchronize();
    pthread_barrier_wait(&tb_sh->barrier);
    __sync_synchronize();
    return WU_OK;
}

static inline void tb_bootstrap(wx_bootstrap_t *bs)
{
    bs->rank = tb_rank;
    bs->size = tb_size;
    bs->job_id = tb_job;
    bs->put = tb_put;
    bs->get = tb_get;
    bs->fence = tb_fence;
}

static inline void tb_fail(const char *what, long expected, long got)
{
    fprintf(stderr, "rank %d: %s: expected %ld, got %ld\n", tb_rank, what, expected, got);
}

#define TB_CHECK(what, expected, got)                                    \
    do {                                                                 \
        long e_ = (long)(expected), g_ = (long)(got);                    \
        if (e_ != g_) {                                                  \
            tb_fail(what, e_, g_);                                       \
            return 1;                                                    \
        }                                                                \
    } while (0)

static inline double tb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Segment file of the current job, to check it is gone. */
static inline int tb_segment_exists(void)
{
    char path[128];
    struct stat st;
    snprintf(path, sizeof(path), "/dev/shm/%s-shm", tb_job);
    return stat(path, &st) == 0;
}

typedef int (*tb_body_fn_t)(const wx_bootstrap_t *bs, void *arg);

/* Run body in nprocs fresh processes with env ("NAME=VALUE", or "R:NAME=VALUE" for rank R only;
 * NULL-terminated) set before wu_config_init. Returns 0 if every process returned 0 within
 * timeout_s seconds. */
static inline int tb_run(const char *name, int nprocs, const char *const *env, tb_body_fn_t body, void *arg,
                  unsigned timeout_s)
{
    static int run_no;
    tb_sh = mmap(NULL, sizeof(*tb_sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (tb_sh == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    pthread_barrierattr_t ba;
    pthread_barrierattr_init(&ba);
    pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
    pthread_barrier_init(&tb_sh->barrier, &ba, (unsigned)nprocs);
    snprintf(tb_job, sizeof(tb_job), "weft-test-%d-%d", (int)getpid(), run_no++);
    tb_size = nprocs;
    fflush(stdout);
    fflush(stderr);

    pid_t pids[TB_MAXPROCS];
    for (int r = 0; r < nprocs; r++) {
        pids[r] = fork();
        if (pids[r] == 0) {
            alarm(timeout_s);
            for (const char *const *e = env; e && *e; e++) {
                const char *v = *e;
                if (v[0] >= '0' && v[0] <= '9' && v[1] == ':') {     /* "R:NAME=VALUE": rank R only */
                    if (v[0] - '0' != r)
                        continue;
                    v += 2;
                }
                putenv((char *)v);
            }
            wu_config_init();
            tb_rank = r;
            wx_bootstrap_t bs;
            tb_bootstrap(&bs);
            int rc = body(&bs, arg);
            fflush(stdout);
            _exit(rc);
        }
    }
    int failed = 0;
    for (int left = nprocs; left > 0; left--) {
        int st, r;
        pid_t pid = waitpid(-1, &st, 0);
        for (r = 0; r < nprocs && pids[r] != pid; r++)
            ;
        if (pid < 0 || r == nprocs) {
            perror("waitpid");
            return 1;
        }
        pids[r] = 0;
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
            continue;
        if (WIFSIGNALED(st))
            fprintf(stderr, "%s: rank %d killed by signal %d%s\n", name, r, WTERMSIG(st),
                    WTERMSIG(st) == SIGALRM ? " (timeout)" : "");
        else
            fprintf(stderr, "%s: rank %d exited with %d\n", name, r, WEXITSTATUS(st));
        /* the others may wait in the barrier for the failed one: end them now */
        for (int o = 0; o < nprocs; o++)
            if (pids[o] > 0)
                kill(pids[o], SIGKILL);
        failed = 1;
    }
    char path[128];
    snprintf(path, sizeof(path), "/%s-shm", tb_job);
    shm_unlink(path);            /* in case a failure left it behind */
    if (!failed)                 /* a killed process may still count as inside the barrier */
        pthread_barrier_destroy(&tb_sh->barrier);
    munmap(tb_sh, sizeof(*tb_sh));
    printf("%-40s %s\n", name, failed ? "FAILED" : "ok");
    fflush(stdout);
    return failed;
}

/* Wait for a condition while delivering packets; fail the test after a deadline. */
#define TB_PROGRESS_UNTIL(cond, seconds)                                              \
    do {                                                                              \
        double dl_ = tb_now() + (seconds);                                            \
        while (!(cond)) {                                                             \
            if (wx_shm_progress() == 0)                                               \
                sched_yield();                                                        \
            if (tb_now() > dl_) {                                                     \
                fprintf(stderr, "rank %d: timed out waiting for %s\n", tb_rank, #cond); \
                return 1;                                                             \
            }                                                                         \
        }                                                                             \
    } while (0)

#endif
