/* mpiexec: spawning the ranks, the event loop, failure handling and the exit status.
 *
 * The ranks form one process group of their own (led by rank 0), so that ending the job reaches
 * whatever they started too, and a terminal's Ctrl-C reaches only mpiexec, which then ends the
 * job. Each rank also gets PR_SET_PDEATHSIG=SIGKILL, so the job dies with mpiexec even if mpiexec
 * is killed outright. Signals are taken through a signalfd and handled in the loop like any event:
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT end the job (a second one kills it at once); SIGUSR1, SIGUSR2
 * and SIGCONT are passed on to the ranks; SIGTSTP (Ctrl-Z) stops the ranks and mpiexec.
 *
 * A rank fails when it sends PMI abort, dies by a signal, exits non-zero, or exits 0 after PMI init
 * without PMI finalize. The first failure decides the exit status and ends the ranks that have not
 * finalized: SIGTERM, then SIGKILL MX_GRACE_MS later. Finalized ranks are left to finish; when the
 * last rank is gone, whatever remains in the group gets SIGKILL. Ranks that never speak PMI (plain
 * programs) may exit 0 at any time. A timeout or a signal to mpiexec ends every process at once.
 *
 * Binding (--bind-to) is decided here from the CPUs mpiexec itself may run on, before any rank is
 * started, and applied by each child between fork and exec, so that the rank and every thread it
 * creates inherit it.
 *
 * The same loop runs the two other modes (mpiexec.h): in a proxy it spawns and binds that host's
 * ranks (binding among them), but reports their ends instead of judging them; in the front end
 * there are no ranks here: job.ranks stand for the remote ones (pid 1 until their proxy says),
 * signals to them become messages (mx_front_signal), and their exits arrive as messages and are
 * judged by mx_rank_ended as local ones are. */
#include "mpiexec.h"
#include "cleanup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MX_GRACE_MS   2000   /* from SIGTERM to SIGKILL when ending the job */
#define MX_LINGER_MS  1000   /* how long output pipes may stay open after every rank is gone */
#define MX_EXIT_TIMEOUT 124  /* as timeout(1) */
#define MX_EXIT_NOTFOUND 127
#define MX_EXIT_ABORT_OTHER 1   /* an MPI_Abort code outside 1..255 (0, negative, 256...) */
#define MX_EXIT_LOST  255    /* a host's proxy was lost with ranks running (as ssh's own failure) */
#define MX_CPUS_MAX   (1 << 22)   /* the largest CPU mask we ask the kernel for */

/* Where one rank runs: built by the parent before fork, applied by the child. */
typedef struct {
    cpu_set_t *set;           /* NULL: not bound */
    size_t setsize;
    char *list;               /* the CPUs as a list, "0-3,8", as in /proc/<pid>/status */
} mx_binding_t;

int64_t mx_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- ending the job ----------------------------------------------------------------------- */

/* Sends sig to the ranks being ended: with `all`, the whole process group and every rank; else
 * each rank that has not finalized (a finalized rank is past MPI and may finish its own work). */
static void mx_signal_job(mx_state_t *s, int sig)
{
    if (s->mode == MX_MODE_FRONT) {
        for (int h = 0; s->term_all && h < s->nhosts; h++)
            mx_front_signal(s, h, -1, sig);
        for (int i = 0; !s->term_all && i < s->job.nranks; i++) {
            mx_rank_t *r = &s->job.ranks[i];
            if (r->pid > 0 && !r->pmi_finalized)
                mx_front_signal(s, r->host, r->rank, sig);
        }
        return;
    }
    if (s->term_all && s->pgid > 0)
        (void)kill(-s->pgid, sig);
    for (int i = 0; i < s->job.nranks; i++) {
        mx_rank_t *r = &s->job.ranks[i];
        if (r->pid > 0 && (s->term_all || !r->pmi_finalized))
            (void)kill(r->pid, sig);
    }
}

/* Passes sig on to every process of the job, ranks and what they started. */
static void mx_signal_ranks(mx_state_t *s, int sig)
{
    bool all = s->term_all;
    s->term_all = true;
    mx_signal_job(s, sig);
    s->term_all = all;
}

/* Starts ending the job with `sig`, or escalates to SIGKILL if already ending. `all` (mpiexec
 * interrupted or timed out) ends every process; otherwise (a rank failed) the unfinalized ranks. */
void mx_terminate(mx_state_t *s, int sig, bool all)
{
    s->term_all |= all;
    if (s->term_stage == 0 && sig != SIGKILL) {
        mx_signal_job(s, sig);
        s->term_stage = 1;
        s->kill_at = mx_now_ms() + MX_GRACE_MS;
    } else if (s->term_stage < 2 || all) {
        mx_signal_job(s, SIGKILL);
        s->term_stage = 2;
    }
}

/* Records the first failure: prints why, sets the exit status and ends the job (mx_terminate).
 * `culprit` is the failing rank, if a rank failed. */
void mx_fail(mx_state_t *s, mx_rank_t *culprit, bool all, int code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    if (s->failed)
        return;
    s->failed = true;
    s->exit_code = code;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    int others = 0;
    for (int i = 0; i < s->job.nranks; i++) {
        mx_rank_t *r = &s->job.ranks[i];
        others += r != culprit && r->pid > 0 && (all || !r->pmi_finalized);
    }
    if (s->mode == MX_MODE_PROXY)
        fprintf(stderr, "mpiexec (proxy on %s): %s%s\n", s->hostname, msg,
                others > 0 ? "; ending the ranks here" : "");
    else
        fprintf(stderr, "mpiexec: %s%s\n", msg, others > 0 ? "; terminating the job" : "");
    mx_terminate(s, SIGTERM, all);
}

/* ---- binding ------------------------------------------------------------------------------ */

/* Reads the CPUs mpiexec may run on into s->cpus. Without them (an error, said once) no rank is
 * bound. */
static void mx_bind_init(mx_state_t *s)
{
    cpu_set_t *set = NULL;
    size_t size = 0;
    int n, err = 0;
    if (s->job.opts->bind == MX_BIND_NONE)
        return;
    for (n = CPU_SETSIZE;; n *= 2) {   /* the kernel refuses a mask shorter than its CPU count */
        if (!(set = CPU_ALLOC((size_t)n))) {
            err = ENOMEM;
            break;
        }
        size = CPU_ALLOC_SIZE((size_t)n);
        if (sched_getaffinity(0, size, set) == 0)
            break;
        err = errno;
        CPU_FREE(set);
        set = NULL;
        if (err != EINVAL || n >= MX_CPUS_MAX)
            break;
    }
    if (set) {
        int count = CPU_COUNT_S(size, set);
        if ((s->cpus = malloc((size_t)(count > 0 ? count : 1) * sizeof(int)))) {
            for (int c = 0; c < n && s->ncpus < count; c++)
                if (CPU_ISSET_S((size_t)c, size, set))
                    s->cpus[s->ncpus++] = c;
        } else {
            err = ENOMEM;
        }
        CPU_FREE(set);
    }
    if (!s->cpus)
        fprintf(stderr, "mpiexec: cannot read the CPUs it may run on (%s); ranks are not bound\n",
                strerror(err));
}

/* The rank's share of s->cpus: n_p CPUs from index first_p. False if the rank is not bound. */
static bool mx_bind_share(const mx_state_t *s, int local, int *first_p, int *n_p)
{
    int c = s->ncpus, n = s->job.nranks;
    if (c == 0)
        return false;
    switch (s->job.opts->bind) {
    case MX_BIND_CORE:
        *first_p = local % c;
        *n_p = 1;
        return true;
    case MX_BIND_AUTO:
        if (n > c)   /* oversubscribed: pinning would only stop the kernel from balancing */
            return false;
        *first_p = (int)((long)local * c / n);
        *n_p = (int)((long)(local + 1) * c / n) - *first_p;   /* >= 1, as n <= c */
        return true;
    case MX_BIND_NONE:
        break;
    }
    return false;
}

/* Fills b for rank (b->set stays NULL when the rank is not bound) and reports it if asked. */
static void mx_bind_prepare(const mx_state_t *s, int rank, int local, mx_binding_t *b)
{
    int first, n;
    *b = (mx_binding_t){ 0 };
    if (mx_bind_share(s, local, &first, &n)) {
        const int *cpu = s->cpus + first;
        size_t max = (size_t)cpu[n - 1] + 1, len = (size_t)n * 12 + 1;
        b->set = CPU_ALLOC(max);
        b->setsize = CPU_ALLOC_SIZE(max);
        b->list = malloc(len);
        if (!b->set || !b->list) {
            fprintf(stderr, "mpiexec: out of memory\n");
            exit(1);
        }
        CPU_ZERO_S(b->setsize, b->set);
        size_t at = 0;
        b->list[0] = '\0';
        for (int i = 0; i < n; i++) {
            int j = i;
            CPU_SET_S((size_t)cpu[i], b->setsize, b->set);
            while (j + 1 < n && cpu[j + 1] == cpu[j] + 1)
                CPU_SET_S((size_t)cpu[++j], b->setsize, b->set);
            at += (size_t)snprintf(b->list + at, len - at, j > i ? "%s%d-%d" : "%s%d", at ? "," : "",
                                   cpu[i], cpu[j]);
            i = j;
        }
    }
    if (s->job.opts->report_bindings) {
        if (b->set)
            fprintf(stderr, "mpiexec: rank %d%s%s bound to CPUs %s\n", rank,
                    s->mode == MX_MODE_PROXY ? " on " : "", s->mode == MX_MODE_PROXY ? s->hostname : "",
                    b->list);
        else
            fprintf(stderr, "mpiexec: rank %d%s%s not bound\n", rank,
                    s->mode == MX_MODE_PROXY ? " on " : "", s->mode == MX_MODE_PROXY ? s->hostname : "");
    }
}

static void mx_bind_free(mx_binding_t *b)
{
    if (b->set)
        CPU_FREE(b->set);
    free(b->list);
    *b = (mx_binding_t){ 0 };
}

/* In the child: binds this process, and says so in WEFT_BOUND_CPUS. */
static void mx_bind_apply(const mx_binding_t *b, int rank)
{
    if (b->set && sched_setaffinity(0, b->setsize, b->set) == 0) {
        setenv("WEFT_BOUND_CPUS", b->list, 1);
        return;
    }
    if (b->set)
        fprintf(stderr, "mpiexec: rank %d cannot be bound to CPUs %s (%s); it runs unbound\n", rank,
                b->list, strerror(errno));
    unsetenv("WEFT_BOUND_CPUS");   /* whatever mpiexec inherited describes another process */
}

/* ---- spawning ----------------------------------------------------------------------------- */

/* True if argv0 names an executable file, directly or through PATH. */
static bool mx_program_exists(const char *argv0)
{
    if (strchr(argv0, '/'))
        return access(argv0, X_OK) == 0;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    for (const char *p = path;; p++) {
        const char *e = strchrnul(p, ':');
        char file[4096];
        int n = snprintf(file, sizeof(file), "%.*s%s%s", (int)(e - p), p, e == p ? "" : "/", argv0);
        struct stat st;
        if (n > 0 && (size_t)n < sizeof(file) && stat(file, &st) == 0 && S_ISREG(st.st_mode) &&
            access(file, X_OK) == 0)
            return true;
        if (!*e)
            return false;
        p = e;
    }
}

static void mx_setenv_int(const char *name, int v)
{
    char buf[16];
    snprintf(buf, sizeof(buf), "%d", v);
    setenv(name, buf, 1);
}

/* The pipes and the PMI socketpair of one rank, both ends, before the fork. */
typedef struct {
    int sv[2], out[2], err[2], in[2];
} mx_rank_fds_t;

/* weft-rankhost, next to this mpiexec (--ranks-per-process). */
static const char *mx_rankhost_path(void)
{
    static char path[4096];
    if (path[0])
        return path;
    char self[4000];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return "weft-rankhost";
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    snprintf(path, sizeof(path), "%s/weft-rankhost", self);
    return path;
}

/* In the child, between fork and exec. mpiexec is single-threaded, so setenv is safe here.
 * r[0..n-1] are the ranks of the process: one, or with --ranks-per-process several run as threads
 * by weft-rankhost, each with its own PMI socket and output pipes (WEFT_RAT_<i>). */
static void __attribute__((noreturn))
mx_child(mx_state_t *s, mx_section_t *sec, mx_rank_t *r, int n, const mx_binding_t *b, int in_fd,
         const mx_rank_fds_t *fds)
{
    sigprocmask(SIG_SETMASK, &s->oldmask, NULL);
    signal(SIGPIPE, SIG_DFL);
    (void)setpgid(0, s->pgid);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != s->self)   /* mpiexec died before the line above */
        _exit(1);

    if (dup2(in_fd, STDIN_FILENO) < 0 || dup2(fds[0].out[1], STDOUT_FILENO) < 0 ||
        dup2(fds[0].err[1], STDERR_FILENO) < 0)
        _exit(MX_EXIT_NOTFOUND);
    for (int i = 0; i < n; i++)
        if (fcntl(fds[i].sv[1], F_SETFD, 0) < 0 ||
            (s->job.opts->rpp > 1 &&
             (fcntl(fds[i].out[1], F_SETFD, 0) < 0 || fcntl(fds[i].err[1], F_SETFD, 0) < 0)))
            _exit(MX_EXIT_NOTFOUND);

    mx_opts_t *o = s->job.opts;
    for (int i = 0; i < o->genv.nvars; i++)
        putenv(o->genv.vars[i]);
    for (int i = 0; i < sec->env.nvars; i++)
        putenv(sec->env.vars[i]);
    mx_setenv_int("PMI_FD", fds[0].sv[1]);
    mx_setenv_int("PMI_RANK", r[0].rank);
    mx_setenv_int("PMI_SIZE", s->job.size);
    mx_setenv_int("MPI_LOCALRANKID", r[0].local);
    mx_setenv_int("MPI_LOCALNRANKS", s->job.nlocal);
    unsetenv("PMI_PORT");
    unsetenv("PMI_ID");
    if (o->rpp > 1) {
        mx_setenv_int("WEFT_RAT_RANKS", n);
        for (int i = 0; i < n; i++) {
            char name[32], val[96];
            snprintf(name, sizeof(name), "WEFT_RAT_%d", i);
            snprintf(val, sizeof(val), "%d,%d,%d,%d,%d", fds[i].sv[1], r[i].rank, r[i].local,
                     fds[i].out[1], fds[i].err[1]);
            setenv(name, val, 1);
        }
        /* Each rank's namespace loads its own libc and Weft, whose thread-local data is static:
         * glibc's default surplus holds about 11 such namespaces, not 15. */
        const char *t = getenv("GLIBC_TUNABLES");
        char tun[1024];
        snprintf(tun, sizeof(tun), "%s%sglibc.rtld.optional_static_tls=1048576", t ? t : "",
                 t && *t ? ":" : "");
        setenv("GLIBC_TUNABLES", tun, 1);
    }
    mx_bind_apply(b, r[0].rank);
    if (sec->wdir && chdir(sec->wdir) != 0) {
        fprintf(stderr, "mpiexec: rank %d cannot enter -wdir '%s': %s\n", r[0].rank, sec->wdir,
                strerror(errno));
        _exit(MX_EXIT_NOTFOUND);
    }

    if (o->rpp > 1) {
        int argc = 0;
        while (sec->argv[argc])
            argc++;
        char **argv = calloc((size_t)argc + 2, sizeof(*argv));
        if (!argv)
            _exit(MX_EXIT_NOTFOUND);
        argv[0] = (char *)mx_rankhost_path();
        memcpy(argv + 1, sec->argv, (size_t)argc * sizeof(*argv));
        execv(argv[0], argv);
        fprintf(stderr, "mpiexec: ranks %d-%d cannot run '%s': %s\n", r[0].rank, r[n - 1].rank, argv[0],
                strerror(errno));
        _exit(MX_EXIT_NOTFOUND);
    }
    execvp(sec->argv[0], sec->argv);
    fprintf(stderr, "mpiexec: rank %d cannot run '%s': %s\n", r->rank, sec->argv[0], strerror(errno));
    _exit(MX_EXIT_NOTFOUND);
}

static void mx_fds_close(mx_rank_fds_t *f)
{
    int *all[] = { &f->sv[0], &f->sv[1], &f->out[0], &f->out[1], &f->err[0], &f->err[1], &f->in[0], &f->in[1] };
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (*all[i] >= 0) {
            close(*all[i]);
            *all[i] = -1;
        }
}

/* Starts the process of ranks r[0..n-1] (n > 1 only with --ranks-per-process). */
static bool mx_spawn(mx_state_t *s, mx_section_t *sec, mx_rank_t *r, int n, int devnull)
{
    mx_rank_fds_t fds[MX_RPP_MAX];
    for (int i = 0; i < n; i++) {
        mx_rank_fds_t *f = &fds[i];
        *f = (mx_rank_fds_t){ { -1, -1 }, { -1, -1 }, { -1, -1 }, { -1, -1 } };
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, f->sv) < 0 || pipe2(f->out, O_CLOEXEC) < 0 ||
            pipe2(f->err, O_CLOEXEC) < 0 || (r[i].rank == 0 && pipe2(f->in, O_CLOEXEC) < 0)) {
            fprintf(stderr, "mpiexec: cannot create the pipes of rank %d: %s\n", r[i].rank, strerror(errno));
            for (int j = 0; j <= i; j++)
                mx_fds_close(&fds[j]);
            return false;
        }
    }
    int in_fd = devnull;
    for (int i = 0; i < n; i++)
        if (r[i].rank == 0)
            in_fd = fds[i].in[0];
    mx_binding_t b;
    if (n > 1)   /* several ranks' shares would have to be merged: not bound (mpiexec --help) */
        b = (mx_binding_t){ 0 };
    else
        mx_bind_prepare(s, r->rank, r->local, &b);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "mpiexec: cannot start rank %d: %s\n", r->rank, strerror(errno));
        mx_bind_free(&b);
        for (int i = 0; i < n; i++)
            mx_fds_close(&fds[i]);
        return false;
    }
    if (pid == 0)
        mx_child(s, sec, r, n, &b, in_fd, fds);
    mx_bind_free(&b);

    if (s->pgid == 0)
        s->pgid = pid;
    (void)setpgid(pid, s->pgid);   /* also done by the child; whichever runs first wins */
    mx_janitor_watch(pid);
    for (int i = 0; i < n; i++) {
        mx_rank_t *ri = &r[i];
        mx_rank_fds_t *f = &fds[i];
        ri->pid = pid;
        s->alive++;
        close(f->sv[1]);
        close(f->out[1]);
        close(f->err[1]);
        ri->pmi_fd = f->sv[0];
        fcntl(f->sv[0], F_SETFL, O_NONBLOCK);
        fcntl(f->out[0], F_SETFL, O_NONBLOCK);
        fcntl(f->err[0], F_SETFL, O_NONBLOCK);
        mx_stream_init(&ri->out, f->out[0], STDOUT_FILENO, ri->rank);
        mx_stream_init(&ri->err, f->err[0], STDERR_FILENO, ri->rank);
        if (ri->rank == 0) {
            close(f->in[0]);
            fcntl(f->in[1], F_SETFL, O_NONBLOCK);
            s->in.to_fd = f->in[1];
        }
        if (s->mode == MX_MODE_PROXY)
            mx_proxy_started(s, ri);
    }
    return true;
}

static void mx_make_kvsname(mx_job_t *job)
{
    uint32_t salt;
    if (getrandom(&salt, sizeof(salt), GRND_NONBLOCK) != sizeof(salt))
        salt = (uint32_t)mx_now_ms() * 2654435761u ^ (uint32_t)getpid();
    snprintf(job->kvsname, sizeof(job->kvsname), "weft-%ld-%08x", (long)getpid(), salt);
}

/* The exit status for an MPI_Abort code: the code itself when it fits in 1..255, else a fixed
 * non-zero status. Never 0: keeping only the low 8 bits would turn 256 or 512 into success. */
static int mx_abort_status(int code)
{
    return code >= 1 && code <= 255 ? code : MX_EXIT_ABORT_OTHER;
}

/* ---- reaping ------------------------------------------------------------------------------ */

static mx_rank_t *mx_rank_of_pid(mx_state_t *s, pid_t pid)
{
    for (int i = 0; i < s->job.nranks; i++)
        if (s->job.ranks[i].pid == pid)
            return &s->job.ranks[i];
    return NULL;
}

/* "pid N", or "pid N on HOST" when the ranks are on several hosts. */
static const char *mx_rank_where(const mx_state_t *s, const mx_rank_t *r, pid_t pid, char *buf,
                                 size_t len)
{
    if (s->mode == MX_MODE_FRONT)
        snprintf(buf, len, "pid %ld on %s", (long)pid, s->hosts[r->host].name);
    else
        snprintf(buf, len, "pid %ld", (long)pid);
    return buf;
}

/* A rank ended: take in what it said last, then judge how it ended (a proxy reports it). */
void mx_rank_ended(mx_state_t *s, mx_rank_t *r, int status)
{
    mx_pmi_read(&s->job, r);   /* an abort sent just before exiting */
    mx_stream_drain(&r->out);
    mx_stream_drain(&r->err);
    mx_pmi_close(&s->job, r);
    pid_t pid = r->pid;
    r->pid = 0;
    r->wait_status = status;
    s->alive--;
    s->job.exited_count++;
    if (s->mode == MX_MODE_PROXY) {   /* the front end judges */
        mx_proxy_ended(s, r, status);
        return;
    }

    char w[300];
    mx_rank_where(s, r, pid, w, sizeof(w));
    if (r->aborted) {
        mx_fail(s, r, false, mx_abort_status(r->abort_code), "rank %d (%s) called MPI_Abort with code %d",
                r->rank, w, r->abort_code);
    } else if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        mx_fail(s, r, false, 128 + sig, "rank %d (%s) killed by signal %d (%s)", r->rank, w, sig,
                strsignal(sig));
    } else if (WEXITSTATUS(status) != 0) {
        mx_fail(s, r, false, WEXITSTATUS(status), "rank %d (%s) exited with code %d", r->rank, w,
                WEXITSTATUS(status));
    } else if (r->pmi_init && !r->pmi_finalized) {
        mx_fail(s, r, false, 1, "rank %d (%s) exited with code 0 without calling MPI_Finalize",
                r->rank, w);
    }
}

/* Front end: rank r's proxy is gone without reporting its end. */
void mx_rank_lost(mx_state_t *s, mx_rank_t *r, const char *why)
{
    if (r->pid == 0)
        return;
    r->pid = 0;
    r->wait_status = -1;
    s->alive--;
    s->job.exited_count++;
    mx_fail(s, r, false, MX_EXIT_LOST, "rank %d on %s: %s", r->rank, s->hosts[r->host].name, why);
}

static void mx_reap(mx_state_t *s)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (s->mode == MX_MODE_FRONT) {
            (void)mx_front_reaped(s, pid, status);
            continue;
        }
        /* Every rank of the process (several with --ranks-per-process). */
        mx_rank_t *r;
        while ((r = mx_rank_of_pid(s, pid)))
            mx_rank_ended(s, r, status);
    }
}

/* Conditions noticed by the PMI server, judged here. */
static void mx_check_job(mx_state_t *s)
{
    mx_job_t *job = &s->job;
    if (job->abort_seen) {
        job->abort_seen = false;
        for (int i = 0; i < job->nranks; i++) {
            mx_rank_t *r = &job->ranks[i];
            char w[300];
            if (r->aborted && r->pid > 0)
                mx_fail(s, r, false, mx_abort_status(r->abort_code),
                        "rank %d (%s) called MPI_Abort with code %d", r->rank,
                        mx_rank_where(s, r, r->pid, w, sizeof(w)), r->abort_code);
        }
    }
    /* A barrier that a rank which has exited never entered cannot complete. */
    if (job->barrier_count > 0 && job->exited_count > 0 && !s->failed) {
        int waiting = -1, gone = -1;
        for (int i = 0; i < job->nranks; i++) {
            if (job->ranks[i].in_barrier && waiting < 0)
                waiting = i;
            if (job->ranks[i].pid == 0 && !job->ranks[i].in_barrier && gone < 0)
                gone = i;
        }
        if (waiting >= 0 && gone >= 0)
            mx_fail(s, NULL, false, 1, "rank %d exited while rank %d waits for it in a PMI barrier "
                    "(MPI collective or MPI_Finalize)", gone, waiting);
    }
}

static void mx_on_signal(mx_state_t *s)
{
    struct signalfd_siginfo si;
    while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGCHLD)
            continue;   /* reaped below in any case */
        if (sig == SIGUSR1 || sig == SIGUSR2) {   /* to the ranks, not to what they started */
            for (int i = 0; i < s->job.nranks; i++) {
                mx_rank_t *r = &s->job.ranks[i];
                if (r->pid > 0 && s->mode == MX_MODE_FRONT)
                    mx_front_signal(s, r->host, r->rank, sig);
                else if (r->pid > 0)
                    (void)kill(r->pid, sig);
            }
            continue;
        }
        if (sig == SIGCONT) {
            mx_signal_ranks(s, sig);
            continue;
        }
        if (sig == SIGTSTP) {   /* Ctrl-Z: stop the ranks, then ourselves; SIGCONT resumes them */
            mx_signal_ranks(s, SIGSTOP);
            raise(SIGSTOP);
            continue;
        }
        if (!s->failed)
            mx_fail(s, NULL, true, 128 + sig, "received signal %d (%s)", sig, strsignal(sig));
        else
            mx_terminate(s, SIGKILL, true);
    }
    mx_reap(s);
}

/* ---- the loop ----------------------------------------------------------------------------- */

enum { MX_EV_SIGNAL, MX_EV_STDIN, MX_EV_STDIN_TO, MX_EV_PMI, MX_EV_OUT, MX_EV_ERR };

static bool mx_streams_open(mx_state_t *s)
{
    for (int i = 0; i < s->job.nranks; i++)
        if (s->job.ranks[i].out.fd >= 0 || s->job.ranks[i].err.fd >= 0)
            return true;
    return false;
}

static void mx_loop(mx_state_t *s)
{
    int n = s->job.nranks, cap = 3 + 3 * n + (s->mode == MX_MODE_FRONT ? mx_front_max_fds(s) : 2);
    struct pollfd *pfd = calloc((size_t)cap, sizeof(*pfd));
    int *kind = calloc((size_t)cap, sizeof(int)), *who = calloc((size_t)cap, sizeof(int));
    if (!pfd || !kind || !who) {
        fprintf(stderr, "mpiexec: out of memory\n");
        exit(1);
    }

    for (;;) {
        int64_t now = mx_now_ms();
        if (s->alive == 0) {
            if (!mx_streams_open(s))
                break;
            if (s->linger_until == 0) {
                /* Every rank is gone; whatever they left running in their group goes too. */
                if (s->pgid > 0)
                    (void)kill(-s->pgid, SIGKILL);
                s->linger_until = now + MX_LINGER_MS;
            } else if (now >= s->linger_until) {
                for (int i = 0; i < n; i++) {
                    mx_stream_close(&s->job.ranks[i].out);
                    mx_stream_close(&s->job.ranks[i].err);
                }
                break;
            }
        }

        int np = 0;
        pfd[np] = (struct pollfd){ .fd = s->sigfd, .events = POLLIN };
        kind[np++] = MX_EV_SIGNAL;
        /* First: a proxy may take in messages read earlier (stdin for rank 0) here. */
        if (s->mode == MX_MODE_FRONT)
            np = mx_front_poll(s, pfd, kind, who, np);
        else if (s->mode == MX_MODE_PROXY)
            np = mx_proxy_poll(s, pfd, kind, who, np);
        if (mx_stdin_wants_input(&s->in)) {
            pfd[np] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
            kind[np++] = MX_EV_STDIN;
        }
        if (s->in.to_fd >= 0 && s->in.len > 0) {
            pfd[np] = (struct pollfd){ .fd = s->in.to_fd, .events = POLLOUT };
            kind[np++] = MX_EV_STDIN_TO;
        }
        for (int i = 0; i < n; i++) {
            mx_rank_t *r = &s->job.ranks[i];
            if (r->pmi_fd >= 0) {
                pfd[np] = (struct pollfd){ .fd = r->pmi_fd, .events = POLLIN };
                kind[np] = MX_EV_PMI, who[np++] = i;
            }
            if (r->out.fd >= 0) {
                pfd[np] = (struct pollfd){ .fd = r->out.fd, .events = POLLIN };
                kind[np] = MX_EV_OUT, who[np++] = i;
            }
            if (r->err.fd >= 0) {
                pfd[np] = (struct pollfd){ .fd = r->err.fd, .events = POLLIN };
                kind[np] = MX_EV_ERR, who[np++] = i;
            }
        }

        int64_t wake = INT64_MAX;
        if (s->timeout_at)
            wake = s->timeout_at;
        if (s->term_stage == 1 && s->kill_at < wake)
            wake = s->kill_at;
        if (s->linger_until && s->linger_until < wake)
            wake = s->linger_until;
        int ms = wake == INT64_MAX ? -1 : wake <= now ? 0 : (int)(wake - now);

        int ready = poll(pfd, (nfds_t)np, ms);
        if (ready < 0 && errno != EINTR) {
            fprintf(stderr, "mpiexec: poll failed: %s\n", strerror(errno));
            mx_terminate(s, SIGKILL, true);
            usleep(10000);
            mx_reap(s);
        }
        /* Sockets and pipes first, the signalfd (child exits) last: what a rank sent before it
         * exited is then read before its exit is judged. */
        for (int k = 1; ready > 0 && k < np; k++) {
            if (!pfd[k].revents)
                continue;
            if (kind[k] >= MX_EV_EXT) {
                if (s->mode == MX_MODE_FRONT)
                    mx_front_event(s, kind[k], who[k], pfd[k].revents);
                else
                    mx_proxy_event(s, kind[k], who[k], pfd[k].revents);
                continue;
            }
            mx_rank_t *r = &s->job.ranks[who[k]];
            switch (kind[k]) {
            case MX_EV_STDIN:    mx_stdin_read(&s->in); break;
            case MX_EV_STDIN_TO: mx_stdin_write(&s->in); break;
            case MX_EV_PMI:      mx_pmi_read(&s->job, r); break;
            case MX_EV_OUT:      mx_stream_read(&r->out); break;
            case MX_EV_ERR:      mx_stream_read(&r->err); break;
            }
        }
        if (ready > 0 && pfd[0].revents)
            mx_on_signal(s);
        mx_check_job(s);
        if (s->in.to_fd >= 0 && s->job.ranks[0].pid == 0)
            mx_stdin_close(&s->in);

        now = mx_now_ms();
        if (s->timeout_at && now >= s->timeout_at && s->alive > 0) {
            s->timeout_at = 0;
            if (!s->failed)
                mx_fail(s, NULL, true, MX_EXIT_TIMEOUT, "the job exceeded its timeout of %ld s",
                        s->job.opts->timeout_s);
            else   /* failed earlier, but finalized ranks still run */
                mx_terminate(s, SIGTERM, true);
        }
        if (s->term_stage == 1 && now >= s->kill_at)
            mx_terminate(s, SIGKILL, s->term_all);
    }
    if (s->pgid > 0)   /* leave nothing behind, even what kept no pipe of ours open */
        (void)kill(-s->pgid, SIGKILL);
    free(pfd);
    free(kind);
    free(who);
}

/* Removes /dev/shm/<kvsname>*: segments a crashed or killed rank could not unlink. */
void mx_clean_shm(const char *kvsname)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    size_t n = strlen(kvsname);
    if (!d)
        return;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, kvsname, n))
            (void)unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

/* Signals, the ranks (local, proxy) or the proxies (front end), the loop, cleanup. s->job is set
 * up and s->job.ranks allocated; returns the exit status. */
int mx_run(mx_state_t *s)
{
    mx_opts_t *o = s->job.opts;
    int ret = 1;

    s->in.to_fd = -1;
    s->self = getpid();
    for (int i = 0; i < s->job.nranks; i++)
        s->job.ranks[i].pmi_fd = s->job.ranks[i].out.fd = s->job.ranks[i].err.fd = -1;
    if (s->mode != MX_MODE_FRONT)
        mx_bind_init(s);

    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGQUIT);
    sigaddset(&mask, SIGTSTP);
    sigaddset(&mask, SIGCONT);
    sigaddset(&mask, SIGUSR1);
    sigaddset(&mask, SIGUSR2);
    /* A signal ignored by whoever started us stays ignored (nohup), except SIGCHLD: ignoring it
     * would make the kernel reap the ranks behind our back. */
    signal(SIGCHLD, SIG_DFL);
    sigprocmask(SIG_BLOCK, &mask, &s->oldmask);
    s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    signal(SIGPIPE, SIG_IGN);
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (s->sigfd < 0 || devnull < 0) {
        fprintf(stderr, "mpiexec: setup failed: %s\n", strerror(errno));
        goto free_cpus;
    }
    if (s->mode != MX_MODE_FRONT)   /* removes the job's names if mpiexec is killed: cleanup.c */
        mx_janitor_start(s->job.kvsname);

    bool spawned = true;
    if (s->mode == MX_MODE_FRONT) {
        s->alive = s->job.nranks;   /* until their proxies report them ended */
        spawned = mx_front_launch(s);
    } else {
        for (int i = 0; i < s->job.nranks && spawned;) {
            mx_rank_t *r = &s->job.ranks[i];
            int n = 1;   /* --ranks-per-process: consecutive ranks of one section */
            while (n < o->rpp && i + n < s->job.nranks && s->job.ranks[i + n].appnum == r->appnum)
                n++;
            spawned = mx_spawn(s, &o->sections[r->appnum], r, n, devnull);
            i += n;
        }
    }
    close(devnull);
    if (!spawned) {
        if (!s->failed) {   /* the front end may have failed the job already, naming the host */
            s->failed = true;
            s->exit_code = 1;
        }
        mx_terminate(s, SIGKILL, true);
    }
    if (o->timeout_s > 0 && s->mode != MX_MODE_PROXY)
        s->timeout_at = mx_now_ms() + o->timeout_s * 1000;

    mx_loop(s);
    if (s->mode == MX_MODE_FRONT)
        mx_front_finish(s);

    mx_stdin_close(&s->in);
    mx_clean_shm(s->job.kvsname);
    ret = s->failed ? s->exit_code : 0;
    for (int i = 0; i < s->job.nranks; i++) {   /* the loop closed them all, unless a spawn failed */
        mx_pmi_close(&s->job, &s->job.ranks[i]);
        mx_stream_close(&s->job.ranks[i].out);
        mx_stream_close(&s->job.ranks[i].err);
    }
free_cpus:
    free(s->cpus);
    return ret;
}

int main(int argc, char **argv)
{
    static mx_state_t st;       /* static: the stdin buffer is large */
    mx_state_t *s = &st;
    mx_opts_t opts;
    int ret = 1;

    /* Keep 0, 1 and 2 taken, so no pipe of ours lands there. */
    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) < 0)
            return 1;
    if (argc > 1 && !strcmp(argv[1], "--weft-proxy"))
        return mx_proxy_main(argc, argv);
    if (!mx_args_parse(argc, argv, &opts))
        return 2;
    /* MPI_Comm_spawn in the ranks starts the children's job with this same program, on this
     * job's hosts and launcher (docs/dynamic.md) */
    mx_args_export(&opts);
    for (int i = 0; i < opts.nsections && !opts.multi; i++) {   /* remote hosts check their own */
        if (!mx_program_exists(opts.sections[i].argv[0])) {
            fprintf(stderr, "mpiexec: cannot run '%s': no such program\n", opts.sections[i].argv[0]);
            ret = MX_EXIT_NOTFOUND;
            goto free_opts;
        }
    }
    mx_io_set_tag(opts.tag_output);

    s->mode = opts.multi ? MX_MODE_FRONT : MX_MODE_LOCAL;
    s->listen_fd = -1;
    s->job.opts = &opts;
    s->job.owner = s;
    s->job.nranks = s->job.size = s->job.nlocal = opts.nranks;
    mx_make_kvsname(&s->job);
    s->job.ranks = calloc((size_t)opts.nranks, sizeof(mx_rank_t));
    if (!s->job.ranks) {
        fprintf(stderr, "mpiexec: out of memory\n");
        goto free_opts;
    }
    int rank = 0;
    for (int i = 0; i < opts.nsections; i++) {
        for (int j = 0; j < opts.sections[i].nprocs; j++, rank++) {
            s->job.ranks[rank].rank = s->job.ranks[rank].local = rank;
            s->job.ranks[rank].appnum = i;
        }
    }
    if (s->mode == MX_MODE_FRONT && !mx_front_setup(s))
        goto free_ranks;
    if (!mx_pmi_init(&s->job)) {
        fprintf(stderr, "mpiexec: out of memory\n");
        goto free_ranks;
    }
    ret = mx_run(s);
    mx_pmi_free(&s->job);
free_ranks:
    free(s->job.ranks);
    free(s->job.process_mapping);
free_opts:
    mx_args_free(&opts);
    return ret;
}
