/* The janitor: a watcher process that outlives mpiexec to remove its job's shared-memory names.
 *
 * mpiexec removes /dev/shm/<kvsname>* itself when it ends, however its ranks ended or whichever
 * signal it took (mx_clean_shm). SIGKILL leaves it no chance: its ranks die with it
 * (PR_SET_PDEATHSIG), and a rank killed while the job starts leaves the segment's name behind.
 * So before starting the ranks mpiexec forks this watcher, in a session of its own (a terminal's
 * signals do not reach it) with no descriptor of the job but a pipe. mpiexec writes each rank's
 * pid into the pipe; the pipe's end (mpiexec gone, by exit or by kill) is the watcher's signal to
 * wait for those ranks to be gone (they are being killed), then remove /dev/shm/<kvsname>* and
 * exit. After a normal end there is nothing left to remove and it exits at once.
 *
 * Concurrency: mpiexec is single-threaded; the two functions below run on its one thread. The
 * watcher shares nothing with mpiexec but the pipe. */
#include "cleanup.h"
#include "mpiexec.h"
#include "transport/shm/wx_shm_stale.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MX_JANITOR_WAIT_MS 10000   /* for the ranks to be gone once mpiexec is */
#define MX_JANITOR_POLL_MS 10

static int mx_janitor_fd = -1;     /* write end of the pipe to the watcher; -1: none */

/* True while pid runs; a zombie (killed, not reaped yet) is gone. */
static bool mx_janitor_alive(pid_t pid)
{
    char path[64], buf[512];
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return false;
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno != ENOENT;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')');   /* "pid (comm) S ...": comm may hold anything */
    return !paren || (paren[1] != ' ' || (paren[2] != 'Z' && paren[2] != 'X'));
}

static void mx_janitor_close_others(int keep)
{
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);   /* whoever reads mpiexec's output must not wait for us */
        dup2(null, STDERR_FILENO);
    }
#ifdef SYS_close_range
    if (keep > 3)
        (void)syscall(SYS_close_range, 3u, (unsigned)keep - 1, 0u);
    if (syscall(SYS_close_range, (unsigned)keep + 1, ~0u, 0u) == 0)
        return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    for (int fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
        if (fd != keep)
            close(fd);
}

static void __attribute__((noreturn)) mx_janitor_main(int fd, const char *kvsname)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGTSTP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    (void)setsid();
    mx_janitor_close_others(fd);

    pid_t *pids = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        pid_t pid;
        ssize_t got = read(fd, &pid, sizeof(pid));
        if (got < 0 && errno == EINTR)
            continue;
        if (got != (ssize_t)sizeof(pid))
            break;   /* EOF: mpiexec is gone (a pipe write of a pid is never split) */
        if (n == cap) {
            size_t c = cap ? cap * 2 : 64;
            pid_t *p = realloc(pids, c * sizeof(pid_t));
            if (!p)
                continue;   /* this rank is not waited for: its name may be removed early */
            pids = p;
            cap = c;
        }
        pids[n++] = pid;
    }

    /* The ranks are being killed (PR_SET_PDEATHSIG): once they are gone, whatever bears the job's
     * name is left over. Until then only names no rank holds (wx_shm_stale.h) are removed. */
    int64_t deadline = mx_now_ms() + MX_JANITOR_WAIT_MS;
    size_t i = 0;
    while (i < n && mx_now_ms() < deadline) {
        if (!mx_janitor_alive(pids[i])) {
            i++;
            continue;
        }
        (void)wx_shm_stale_sweep(kvsname, false, NULL);
        usleep(MX_JANITOR_POLL_MS * 1000);
    }
    if (i == n)
        mx_clean_shm(kvsname);
    else
        (void)wx_shm_stale_sweep(kvsname, false, NULL);
    _exit(0);
}

void mx_janitor_start(const char *kvsname)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        fprintf(stderr, "mpiexec: cannot create the cleanup watcher's pipe: %s\n", strerror(errno));
        return;
    }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "mpiexec: cannot start the cleanup watcher: %s\n", strerror(errno));
        close(p[0]);
        close(p[1]);
        return;
    }
    if (pid == 0) {
        close(p[1]);
        mx_janitor_main(p[0], kvsname);
    }
    close(p[0]);
    mx_janitor_fd = p[1];
}

void mx_janitor_watch(pid_t pid)
{
    if (mx_janitor_fd >= 0 && write(mx_janitor_fd, &pid, sizeof(pid)) != (ssize_t)sizeof(pid)) {
        close(mx_janitor_fd);   /* the watcher is gone: nothing to tell any more */
        mx_janitor_fd = -1;
    }
}
