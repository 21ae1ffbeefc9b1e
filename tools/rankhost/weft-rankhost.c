/* weft-rankhost: one process holding several MPI ranks as threads (issue 15 §2,
 * docs/ranks-as-threads.md). Started by `mpiexec --ranks-per-process K`, never by hand:
 *
 *   weft-rankhost PROGRAM [ARGS...]
 *     WEFT_RAT_RANKS=K, and for i in 0..K-1: WEFT_RAT_<i>=PMI_FD,RANK,LOCALRANK,OUT_FD,ERR_FD
 *
 * Each rank runs PROGRAM's main in a thread of its own, in a link-map namespace of its own
 * (dlmopen), so the program's globals, its libraries' and libc's are private to the rank. The
 * namespace is opened with the shim first (libweft-ratshim.so, rat_shim.h), which gives the rank
 * its environment (PMI_FD, PMI_RANK, MPI_LOCALRANKID) and stdio streams and forwards thread calls
 * to this process's libc. PROGRAM must be linked by `mpicc -ranks-as-threads` (a shared object
 * that is also executable): glibc refuses to load an ordinary position-independent executable into
 * a namespace, and such an executable's copy relocations and relaxed thread-local accesses would
 * be wrong there.
 *
 * Ends: when every rank's main has returned 0, with status 0; when one returns non-zero, at once,
 * with that status (as the rank's process would, taking the other ranks of this process with it:
 * mpiexec then ends the job as for any rank that failed). exit() from a rank ends the process too.
 */
#include "rat_shim.h"

#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RAT_MAX 15   /* glibc's DL_NNS (16 namespaces) minus the base one */

typedef struct rat_rank {
    int pmi_fd, rank, local, out_fd, err_fd;
    char **env;
    pthread_t thread;
    int status;
} rat_rank_t;

/* Written by main before the rank threads start, read-only afterwards. */
static struct {
    const char *program;
    char shim[PATH_MAX];
    int argc;
    char **argv;
    weft_rat_base_t base;
} rat;

static void rat_die(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "weft-rankhost: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    exit(127);
}

/* A message on the rank's own stderr (the pipe mpiexec tags with its rank). */
static void rat_say(const rat_rank_t *r, const char *what, const char *detail)
{
    dprintf(r->err_fd >= 0 ? r->err_fd : STDERR_FILENO, "weft-rankhost: rank %d: %s: %s\n", r->rank,
            what, detail);
}

/* The rank's environment: this process's, without the WEFT_RAT_* variables, plus its PMI ones. */
static char **rat_env(const rat_rank_t *r)
{
    extern char **environ;
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 4, sizeof(*env));
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (strncmp(environ[i], "WEFT_RAT_", 9) == 0 || strncmp(environ[i], "PMI_FD=", 7) == 0 ||
            strncmp(environ[i], "PMI_RANK=", 9) == 0 || strncmp(environ[i], "MPI_LOCALRANKID=", 16) == 0)
            continue;
        env[k++] = environ[i];
    }
    if (asprintf(&env[k++], "PMI_FD=%d", r->pmi_fd) < 0 || asprintf(&env[k++], "PMI_RANK=%d", r->rank) < 0 ||
        asprintf(&env[k++], "MPI_LOCALRANKID=%d", r->local) < 0)
        return NULL;
    env[k] = NULL;
    return env;
}

/* A rank that cannot start would leave the others waiting for it in MPI_Init: end the process. */
static void __attribute__((noreturn)) rat_fail(void)
{
    fflush(NULL);
    _exit(127);
}

static void *rat_run(void *arg)
{
    rat_rank_t *r = arg;
    r->status = 127;
    void *shim = dlmopen(LM_ID_NEWLM, rat.shim, RTLD_NOW | RTLD_LOCAL);
    if (!shim) {
        rat_say(r, "cannot open a namespace for the rank", dlerror());
        rat_fail();
    }
    weft_rat_enter_fn enter = (weft_rat_enter_fn)dlsym(shim, "weft_rat_enter");
    weft_rat_leave_fn leave = (weft_rat_leave_fn)dlsym(shim, "weft_rat_leave");
    if (!enter || !leave) {
        rat_say(r, "not a Weft ranks-as-threads shim", rat.shim);
        rat_fail();
    }
    weft_rat_rank_t info = { .base = &rat.base, .env = r->env, .out_fd = r->out_fd, .err_fd = r->err_fd };
    if (enter(&info) != 0) {
        rat_say(r, "cannot set up the rank's environment and streams", strerror(errno));
        rat_fail();
    }
    Lmid_t ns;
    if (dlinfo(shim, RTLD_DI_LMID, &ns) != 0) {
        rat_say(r, "cannot name the rank's namespace", dlerror());
        rat_fail();
    }
    void *prog = dlmopen(ns, rat.program, RTLD_NOW | RTLD_LOCAL);
    if (!prog) {
        char why[1024];
        snprintf(why, sizeof(why), "%s (link it with `mpicc -ranks-as-threads` to run it with ranks as threads)",
                 dlerror());
        rat_say(r, "cannot load the program", why);
        rat_fail();
    }
    int (*main_fn)(int, char **, char **) = (int (*)(int, char **, char **))dlsym(prog, "main");
    if (!main_fn) {
        rat_say(r, "the program exports no main", rat.program);
        rat_fail();
    }
    char **argv = calloc((size_t)rat.argc + 1, sizeof(*argv));
    if (!argv) {
        rat_say(r, "out of memory", "argv");
        rat_fail();
    }
    memcpy(argv, rat.argv, (size_t)rat.argc * sizeof(*argv));
    r->status = main_fn(rat.argc, argv, r->env);
    leave();
    if (r->status != 0) {
        /* A rank that fails ends its process, as it would on its own. */
        fflush(NULL);
        _exit(r->status & 0xff ? r->status & 0xff : 1);
    }
    return NULL;
}

/* The shim: next to this program (build tree), or in ../lib (installed). */
static void rat_find_shim(void)
{
    const char *env = getenv("WEFT_RAT_SHIM");
    if (env && *env) {
        snprintf(rat.shim, sizeof(rat.shim), "%s", env);
        return;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        rat_die("cannot read /proc/self/exe: %s%s", strerror(errno), "");
    self[n] = '\0';
    char *dir = dirname(self);
    snprintf(rat.shim, sizeof(rat.shim), "%s/libweft-ratshim.so", dir);
    if (access(rat.shim, R_OK) == 0)
        return;
    snprintf(rat.shim, sizeof(rat.shim), "%s/../lib/libweft-ratshim.so", dir);
    if (access(rat.shim, R_OK) != 0)
        rat_die("cannot find libweft-ratshim.so next to weft-rankhost or in %s/../lib%s", dir, "");
}

/* PROGRAM as execvp would find it. */
static const char *rat_find_program(const char *name)
{
    if (strchr(name, '/'))
        return name;
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/usr/bin:/bin";; p++) {
        const char *e = strchrnul(p, ':');
        static char file[PATH_MAX];
        snprintf(file, sizeof(file), "%.*s/%s", (int)(e - p), e == p ? "." : p, name);
        if (access(file, X_OK) == 0)
            return file;
        if (!*e)
            break;
        p = e;
    }
    rat_die("cannot find '%s' in PATH%s", name, "");
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        rat_die("usage: weft-rankhost PROGRAM [ARGS...] (started by mpiexec --ranks-per-process)%s%s", "", "");
    const char *ks = getenv("WEFT_RAT_RANKS");
    int k = ks ? atoi(ks) : 0;
    if (k < 1 || k > RAT_MAX)
        rat_die("WEFT_RAT_RANKS '%s' is not a count of ranks from 1 to 15%s", ks ? ks : "(unset)", "");
    rat.program = rat_find_program(argv[1]);
    rat.argc = argc - 1;
    rat.argv = argv + 1;
    rat.base = (weft_rat_base_t){ pthread_create, pthread_join, pthread_tryjoin_np, pthread_timedjoin_np,
                                  pthread_detach, pthread_exit };
    rat_find_shim();

    rat_rank_t ranks[RAT_MAX];
    for (int i = 0; i < k; i++) {
        char name[32];
        snprintf(name, sizeof(name), "WEFT_RAT_%d", i);
        const char *v = getenv(name);
        rat_rank_t *r = &ranks[i];
        if (!v || sscanf(v, "%d,%d,%d,%d,%d", &r->pmi_fd, &r->rank, &r->local, &r->out_fd, &r->err_fd) != 5)
            rat_die("%s is missing or malformed ('%s')", name, v ? v : "");
    }
    for (int i = 0; i < k; i++)
        if (!(ranks[i].env = rat_env(&ranks[i])))
            rat_die("out of memory%s%s", "", "");

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 8u << 20);   /* a process's main thread has 8 MiB by default */
    for (int i = 0; i < k; i++) {
        int rc = pthread_create(&ranks[i].thread, &attr, rat_run, &ranks[i]);
        if (rc != 0) {
            fprintf(stderr, "weft-rankhost: cannot start rank %d: %s\n", ranks[i].rank, strerror(rc));
            _exit(127);
        }
    }
    int status = 0;
    for (int i = 0; i < k; i++) {
        pthread_join(ranks[i].thread, NULL);
        if (ranks[i].status != 0 && status == 0)
            status = ranks[i].status;
    }
    fflush(NULL);
    _exit(status);
}
