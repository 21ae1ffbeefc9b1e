/* Shared-memory names that cannot outlive their job: the creator's lock and the sweep of stale
 * names (contract in wx_shm_stale.h). libc only: mpiexec compiles this file too. */
#include "transport/shm/wx_shm_stale.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef WX_SHM_STALE_STANDALONE
#include "util/wu_log.h"
#define WX_SHM_STALE_DEBUG(...) wu_debug(__VA_ARGS__)
#else
#define WX_SHM_STALE_DEBUG(...) ((void)0)
#endif

#define WX_SHM_STALE_SUFFIX  "-shm"
/* The mark of a name made here: its mode has the sticky bit, set only once the lock is held. An
 * unmarked name may be a creator's between shm_open and flock (fallback path), or a live one of an
 * older Weft that takes no lock: unlocked, it is removed only once this old (in seconds). */
#define WX_SHM_STALE_MARK    S_ISVTX
#define WX_SHM_STALE_MODE    (WX_SHM_STALE_MARK | S_IRUSR | S_IWUSR)
#define WX_SHM_STALE_MIN_AGE 10

bool wx_shm_stale_is_weft(const char *entry)
{
    size_t n = strlen(entry), s = sizeof(WX_SHM_STALE_SUFFIX) - 1;
    if (n <= s || strcmp(entry + n - s, WX_SHM_STALE_SUFFIX) != 0)
        return false;
    return !strncmp(entry, "weft-", 5) || !strncmp(entry, "kvs_", 4);
}

typedef enum {
    WX_SHM_STALE_SWEEP,    /* unlocked, and marked or at least WX_SHM_STALE_MIN_AGE old */
    WX_SHM_STALE_UNLOCKED, /* unlocked (our own job's name: no creator of ours is racing) */
    WX_SHM_STALE_FORCE     /* locked or not */
} wx_shm_stale_mode_t;

/* Removes dir/entry if it is ours and stale as `mode` says. Returns 1 if removed, 0 if it stays
 * (live, or not ours), -1 if it vanished meanwhile. */
static int wx_shm_stale_remove(int dir, const char *entry, wx_shm_stale_mode_t mode)
{
    int fd = openat(dir, entry, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return errno == ENOENT ? -1 : 0;
    struct stat st, now_st;
    int ret = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
        goto out;
    if (mode != WX_SHM_STALE_FORCE && flock(fd, LOCK_EX | LOCK_NB) != 0)
        goto out;   /* its creator lives */
    if (mode == WX_SHM_STALE_SWEEP && !(st.st_mode & WX_SHM_STALE_MARK) &&
        time(NULL) - st.st_ctime < WX_SHM_STALE_MIN_AGE)
        goto out;
    /* the name may have been removed and made again since we opened it */
    if (fstatat(dir, entry, &now_st, AT_SYMLINK_NOFOLLOW) != 0 || now_st.st_ino != st.st_ino ||
        now_st.st_dev != st.st_dev)
        goto out;
    if (unlinkat(dir, entry, 0) == 0)
        ret = 1;
    else if (errno == ENOENT)
        ret = -1;
out:
    close(fd);
    return ret;
}

int wx_shm_stale_sweep(const char *prefix, bool force, int *removed_p)
{
    size_t plen = prefix ? strlen(prefix) : 0;
    int left = 0, removed = 0;
    DIR *d = opendir(WX_SHM_STALE_DIR);
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (plen ? strncmp(e->d_name, prefix, plen) != 0 : !wx_shm_stale_is_weft(e->d_name))
            continue;
        int r = wx_shm_stale_remove(dirfd(d), e->d_name,
                                    force ? WX_SHM_STALE_FORCE : WX_SHM_STALE_SWEEP);
        removed += r == 1;
        left += r == 0;
    }
    closedir(d);
    if (removed_p)
        *removed_p = removed;
    return left;
}

/* If `name` (with its slash) exists and is stale, removes it; true if it is gone. */
static bool wx_shm_stale_clear(const char *name)
{
    int dir = open(WX_SHM_STALE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return false;
    int r = wx_shm_stale_remove(dir, name + 1, WX_SHM_STALE_UNLOCKED);
    close(dir);
    return r != 0;
}

/* The name appears already locked: made nameless in /dev/shm, locked, then linked. Returns the
 * descriptor, -1 with errno EEXIST if the name is taken, or -2 if this way is unavailable. */
static int wx_shm_stale_create_linked(const char *name)
{
    char self[64], path[sizeof(WX_SHM_STALE_DIR) + 256];
    if (snprintf(path, sizeof(path), "%s%s", WX_SHM_STALE_DIR, name) >= (int)sizeof(path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(WX_SHM_STALE_DIR, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0)
        return -2;
    if (flock(fd, LOCK_SH) != 0 || fchmod(fd, WX_SHM_STALE_MODE) != 0)
        goto unavailable;
    snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
    for (int attempt = 0; attempt < 2; attempt++) {
        if (linkat(AT_FDCWD, self, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0)
            return fd;
        if (errno != EEXIST)
            goto unavailable;
        if (!wx_shm_stale_clear(name))
            break;
    }
    close(fd);
    errno = EEXIST;
    return -1;

unavailable:
    close(fd);
    return -2;
}

int wx_shm_stale_create(const char *name)
{
    if (name[0] != '/' || strchr(name + 1, '/')) {
        errno = EINVAL;
        return -1;
    }
    int removed = 0;
    if (wx_shm_stale_sweep(NULL, false, &removed) >= 0 && removed > 0)
        WX_SHM_STALE_DEBUG("shm: removed %d stale shared-memory name(s) of killed jobs", removed);

    int fd = wx_shm_stale_create_linked(name);
    if (fd != -2)
        return fd;
    /* No O_TMPFILE or no /proc: create, lock, then mark (a sweep spares unmarked names younger
     * than WX_SHM_STALE_MIN_AGE, which covers the moment in between). */
    for (int attempt = 0; attempt < 2; attempt++) {
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd >= 0 || errno != EEXIST || !wx_shm_stale_clear(name))
            break;
    }
    if (fd >= 0 && (flock(fd, LOCK_SH) != 0 || fchmod(fd, WX_SHM_STALE_MODE) != 0)) {
        int err = errno;
        shm_unlink(name);
        close(fd);
        errno = err;
        return -1;
    }
    return fd;
}
