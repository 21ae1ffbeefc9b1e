/* Shared-memory names that cannot outlive their job (wx_shm_stale.h): a name held by a live
 * creator (another process, or this one) survives every sweep but a forced one; once its creator
 * is killed it is removed by the next sweep, and a new creator may take the same name; names that
 * are not Weft's, and unmarked ones younger than the age limit (an older Weft's), are left alone.
 * Every name here carries this process's pid, so parallel jobs are not disturbed. */
#include "transport/shm/wx_shm_stale.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_check.h"

static char prefix[64];

static bool exists(const char *name)
{
    char path[256];
    struct stat st;
    snprintf(path, sizeof(path), "/dev/shm%s", name);
    return stat(path, &st) == 0;
}

static void sweep_expect(bool force, int want_left, int want_removed)
{
    int removed = -1;
    int left = wx_shm_stale_sweep(prefix, force, &removed);
    CHECK(left == want_left && removed == want_removed,
          "sweep(%s, force %d): expected %d left and %d removed, got %d left and %d removed",
          prefix, force, want_left, want_removed, left, removed);
}

/* A child creates `name` and waits; returns its pid once the name exists. */
static pid_t spawn_creator(const char *name)
{
    int p[2];
    char c = 0;
    CHECK(pipe(p) == 0, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    CHECK(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        close(p[0]);
        int fd = wx_shm_stale_create(name);
        c = fd >= 0 ? 'y' : 'n';
        if (write(p[1], &c, 1) != 1)
            _exit(2);
        for (;;)
            pause();
    }
    close(p[1]);
    CHECK(read(p[0], &c, 1) == 1 && c == 'y', "the child could not create %s", name);
    close(p[0]);
    return pid;
}

static void kill_wait(pid_t pid)
{
    int status;
    kill(pid, SIGKILL);
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
}

int main(void)
{
    struct stat st;
    char a[128], b[128], other[128], old[128];

    if (access("/dev/shm", W_OK) != 0) {
        printf("SKIP: /dev/shm is not writable here\n");
        return 77;
    }
    snprintf(prefix, sizeof(prefix), "weft-stale%ld-", (long)getpid());
    snprintf(a, sizeof(a), "/%sa-shm", prefix);
    snprintf(b, sizeof(b), "/%sb-n0-shm", prefix);
    snprintf(other, sizeof(other), "/notweft-%ld-shm", (long)getpid());
    snprintf(old, sizeof(old), "/%sold-shm", prefix);

    CHECK(wx_shm_stale_is_weft("weft-123-0badf00d-shm") && wx_shm_stale_is_weft("kvs_1_0_2_vm-n1-shm"),
          "Weft's and Hydra's job names not recognised");
    CHECK(!wx_shm_stale_is_weft("weft-123-probe0") && !wx_shm_stale_is_weft("mpich_shm_1") &&
          !wx_shm_stale_is_weft("-shm") && !wx_shm_stale_is_weft("sem.weft-shm"),
          "a name that is not Weft's taken for one");
    CHECK(wx_shm_stale_create("no-slash-shm") < 0 && errno == EINVAL, "a name without '/' accepted");

    /* 1. Another process's name: kept while it lives, removed once it is killed. */
    pid_t creator = spawn_creator(a);
    CHECK(exists(a), "%s missing after its creation", a);
    CHECK(stat("/dev/shm/", &st) == 0, "stat /dev/shm");
    char path[256];
    snprintf(path, sizeof(path), "/dev/shm%s", a);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 01600,
          "%s: expected mode 01600 (the mark), got %o", a, (unsigned)(st.st_mode & 07777));
    sweep_expect(false, 1, 0);
    errno = 0;
    CHECK(wx_shm_stale_create(a) < 0 && errno == EEXIST,
          "creating a live creator's name: expected EEXIST, got %s", strerror(errno));
    kill_wait(creator);
    CHECK(exists(a), "%s vanished with its creator (nothing should remove it but a sweep)", a);
    sweep_expect(false, 0, 1);
    CHECK(!exists(a), "%s still there after the sweep", a);

    /* 2. A killed creator's name is taken over by the next creator of the same name. */
    creator = spawn_creator(a);
    kill_wait(creator);
    int fd = wx_shm_stale_create(a);
    CHECK(fd >= 0, "creating over a killed creator's name: %s", strerror(errno));

    /* 3. This process's own name: kept while the descriptor is open (another open file
     * description's lock conflicts even in one process), but a forced sweep takes it. */
    int fd_b = wx_shm_stale_create(b);
    CHECK(fd_b >= 0, "create %s: %s", b, strerror(errno));
    sweep_expect(false, 2, 0);
    close(fd_b);
    sweep_expect(false, 1, 1);
    CHECK(exists(a) && !exists(b), "the sweep removed the wrong name");
    sweep_expect(true, 0, 1);
    CHECK(!exists(a), "%s survived a forced sweep", a);
    close(fd);

    /* 4. What is not ours to judge: a name that is not Weft's, and an unmarked unlocked one that
     * is younger than the age limit (an older Weft's starting job). */
    int fo = shm_open(other, O_RDWR | O_CREAT | O_EXCL, 0600);
    CHECK(fo >= 0, "shm_open %s: %s", other, strerror(errno));
    close(fo);
    int fold = shm_open(old, O_RDWR | O_CREAT | O_EXCL, 0600);
    CHECK(fold >= 0, "shm_open %s: %s", old, strerror(errno));
    close(fold);
    int removed = -1;
    CHECK(wx_shm_stale_sweep(NULL, false, &removed) >= 0, "sweep of /dev/shm failed");
    CHECK(exists(other), "a name that is not Weft's (%s) was removed", other);
    CHECK(exists(old), "an unmarked name younger than the age limit (%s) was removed", old);
    sweep_expect(true, 0, 1);
    shm_unlink(other);
    printf("shm_stale: ok\n");
    return 0;
}
