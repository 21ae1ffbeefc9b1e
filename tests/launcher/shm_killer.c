/* test_stale.sh's helper: kills a process the moment a shared-memory name appears, so that the
 * kill lands while a starting job holds the name (a window of about a millisecond, which a shell
 * polling /dev/shm misses on a loaded machine).
 *
 *   shm_killer DIR SUFFIX TARGET TIMEOUT_MS
 *
 * Waits (inotify) until a file whose name ends in SUFFIX is created or linked in DIR, then sends
 * SIGKILL to TARGET: a pid, or @FILE to read the pid from FILE at that moment. Prints
 * "hit NAME" and exits 0; exits 1 if no such name appeared within TIMEOUT_MS, 2 on an error. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static pid_t target_pid(const char *target)
{
    if (target[0] != '@')
        return (pid_t)atol(target);
    FILE *f = fopen(target + 1, "r");
    long pid = 0;
    if (!f || fscanf(f, "%ld", &pid) != 1)
        pid = 0;
    if (f)
        fclose(f);
    return (pid_t)pid;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: shm_killer DIR SUFFIX PID|@PIDFILE TIMEOUT_MS\n");
        return 2;
    }
    int in = inotify_init1(IN_CLOEXEC);
    if (in < 0 || inotify_add_watch(in, argv[1], IN_CREATE | IN_MOVED_TO) < 0) {
        fprintf(stderr, "shm_killer: inotify on %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    printf("ready\n");
    fflush(stdout);
    long end = now_ms() + atol(argv[4]);
    char buf[sizeof(struct inotify_event) + NAME_MAX + 1] __attribute__((aligned(8)));
    for (long left; (left = end - now_ms()) > 0;) {
        struct pollfd p = { .fd = in, .events = POLLIN };
        if (poll(&p, 1, (int)left) <= 0)
            continue;
        ssize_t n = read(in, buf, sizeof(buf));
        for (char *at = buf; n > 0 && at < buf + n;) {
            struct inotify_event *e = (struct inotify_event *)at;
            if (e->len && ends_with(e->name, argv[2])) {
                pid_t pid = target_pid(argv[3]);
                if (pid > 0)
                    kill(pid, SIGKILL);
                printf("hit %s\n", e->name);
                return 0;
            }
            at += sizeof(*e) + e->len;
        }
    }
    return 1;
}
