/* Exclusive claims on state directories (sfs_dirlock.h). */
#include "sfs_dirlock.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct sfs_dirlock {
    int fd;
};

/* What the holder wrote: "pid 123 on host (what, since ...)". */
static void sfs_dirlock_read_holder(int fd, char *buf, size_t size)
{
    ssize_t got = pread(fd, buf, size - 1, 0);

    if (got <= 0) {
        snprintf(buf, size, "another process (it wrote no name)");
        return;
    }
    buf[got]                = '\0';
    buf[strcspn(buf, "\n")] = '\0';
}

static int sfs_dirlock_write_holder(int fd, const char *path, const char *what)
{
    char      text[512];
    char      host[256] = "unknown";
    char      when[64]  = "?";
    time_t    now       = time(NULL);
    struct tm tm;
    int       length;

    gethostname(host, sizeof(host) - 1);
    if (gmtime_r(&now, &tm)) {
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
    }
    length = snprintf(text, sizeof(text), "pid %d on %s (%s, since %s)\n", (int)getpid(), host,
                      what, when);
    if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)length, 0) != length) {
        return sfs_error_set(-errno, "cannot write %s: %s", path, strerror(errno));
    }
    return 0;
}

int sfs_dirlock_acquire(const char *dir, const char *what, sfs_dirlock_t **lock_p)
{
    char           path[PATH_MAX];
    char           holder[512];
    sfs_dirlock_t *lock;
    int            fd, rc;

    if (!dir || !what || !lock_p) {
        return sfs_error_set(-EINVAL, "sfs_dirlock_acquire: no directory, name or result");
    }
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, SFS_DIRLOCK_FILE) >= sizeof(path)) {
        return sfs_error_set(-ENAMETOOLONG, "%s: directory name too long", what);
    }
    /* the service's own, like the rest of its state (a state dir is 0755 for
     * the config and munge socket users need; this is not for them) */
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        return sfs_error_set(-errno, "%s: cannot open its lock file %s: %s", what, path,
                             strerror(errno));
    }
    if (fchmod(fd, 0600) != 0) {
        rc = -errno;
        close(fd);
        return sfs_error_set(rc, "%s: cannot chmod its lock file %s: %s", what, path,
                             strerror(-rc));
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        rc = -errno;
        if (rc == -EWOULDBLOCK) {
            sfs_dirlock_read_holder(fd, holder, sizeof(holder));
            close(fd);
            return sfs_error_set(-EBUSY,
                                 "%s %s is in use by %s: a directory serves one server "
                                 "process; stop that one first (stripefs-ctl shutdown), "
                                 "or choose another directory",
                                 what, dir, holder);
        }
        close(fd);
        return sfs_error_set(rc, "%s: cannot lock %s: %s", what, path, strerror(-rc));
    }
    rc = sfs_dirlock_write_holder(fd, path, what);
    if (rc) {
        close(fd);
        return rc;
    }
    if (!SFS_ALLOC_PTR(lock)) {
        close(fd);
        return -ENOMEM;
    }
    lock->fd = fd;
    *lock_p  = lock;
    return 0;
}

void sfs_dirlock_release(sfs_dirlock_t *lock)
{
    if (!lock) {
        return;
    }
    close(lock->fd); /* drops the flock; the file stays (see the header) */
    free(lock);
}
