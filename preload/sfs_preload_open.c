/*
 * Opening and closing stripefs descriptors: open and its 64-bit, *at and
 * _FORTIFY_SOURCE forms, creat, close, close_range and closefrom, dup,
 * dup2, dup3 and fcntl (descriptor flags, status flags, no locks).
 */
#include "sfs_preload.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Not declared without _FORTIFY_SOURCE. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

SFS_REAL_DECL(open);
SFS_REAL_DECL(open64);
SFS_REAL_DECL(openat);
SFS_REAL_DECL(openat64);
SFS_REAL_DECL(creat);
SFS_REAL_DECL(creat64);
SFS_REAL_DECL(close);
SFS_REAL_DECL(dup);
SFS_REAL_DECL(dup2);
SFS_REAL_DECL(dup3);
SFS_REAL_DECL(fcntl);
SFS_REAL_DECL(fcntl64);
SFS_REAL_DECL(close_range);
SFS_REAL_DECL(closefrom);

/* ------------------------------------------------------------------------ */
/* open                                                                      */

static int sfs_pl_to_sfs_flags(int flags)
{
    int accmode = flags & O_ACCMODE;
    int sflags = accmode == O_WRONLY ? SFS_O_WRONLY : accmode == O_RDWR ? SFS_O_RDWR : SFS_O_RDONLY;

    if (flags & O_CREAT) {
        sflags |= SFS_O_CREAT;
        if (flags & O_EXCL) {
            sflags |= SFS_O_EXCL;
        }
    }
    if (flags & O_TRUNC) {
        sflags |= SFS_O_TRUNC;
    }
#if defined(SFS_O_SYNC) && defined(SFS_O_DSYNC)
    /* O_SYNC is O_DSYNC plus __O_SYNC in Linux */
    if ((flags & O_SYNC) == O_SYNC) {
        sflags |= SFS_O_SYNC;
    } else if (flags & O_DSYNC) {
        sflags |= SFS_O_DSYNC;
    }
#endif
    return sflags;
}

int sfs_pl_open_path(const char *sfs_path, int flags, mode_t mode)
{
    sfs_client_t *client;
    sfs_pl_ofd_t *ofd;
    sfs_stat_t    st;
    mode_t        mask    = sfs_pl_umask();
    int           accmode = flags & O_ACCMODE;
    int           fd, rc;

    if (flags & O_PATH) {
        /* a handle for *at calls and fstat: no access mode, no side effects */
        flags &= O_PATH | O_DIRECTORY | O_CLOEXEC;
        accmode = O_RDONLY;
    }
    if (accmode == O_ACCMODE) {
        return -EINVAL;
    }
    if ((flags & O_TMPFILE) == O_TMPFILE) {
        return -EOPNOTSUPP;
    }
    if ((flags & O_DIRECTORY) && (flags & O_CREAT)) {
        return -EINVAL;
    }
    ofd = calloc(1, sizeof(*ofd));
    if (!ofd) {
        return -ENOMEM;
    }
    snprintf(ofd->path, sizeof(ofd->path), "%s", sfs_path);
    ofd->flags = accmode | (flags & SFS_PL_STATUS_FLAGS);
    /* (opening a directory changes nothing: attributes listed before it
     * stay good, sfs_pl_call_count) */
    rc = (flags & O_DIRECTORY) ? sfs_pl_enter_to_read(&client) : sfs_pl_enter(&client);
    if (rc) {
        goto err_free;
    }
    if (flags & O_DIRECTORY) {
        /* reading a directory needs read permission (O_PATH: none) */
        rc = (flags & O_PATH) ? sfs_lookup(client, sfs_path, &st)
                              : sfs_access(client, sfs_path, R_OK, &st);
        if (rc == 0 && st.type != SFS_FILE_TYPE_DIR) {
            rc = -ENOTDIR;
        } else if (rc == 0 && accmode != O_RDONLY) {
            rc = -EISDIR;
        }
        ofd->is_dir   = 1;
        ofd->entry_id = rc == 0 ? st.entry_id : 0; /* readdir's "." */
    } else {
        rc = sfs_file_open(client, sfs_path, sfs_pl_to_sfs_flags(flags), mode & ~mask & 07777, NULL,
                           &ofd->file);
        /* open(dir, O_RDONLY) is allowed and gives a directory descriptor */
        if (rc == -EISDIR && accmode == O_RDONLY && !(flags & O_CREAT)) {
            rc          = 0;
            ofd->is_dir = 1;
        }
    }
    if (rc) {
        goto err_unlock;
    }
    ofd->generation = sfs_pl_generation();
    rc              = sfs_pl_fd_install(ofd, !!(flags & O_CLOEXEC), &fd);
    if (rc) {
        goto err_close;
    }
    sfs_pl_unlock();
    return fd;

err_close:
    sfs_file_close(ofd->file);
err_unlock:
    sfs_pl_unlock();
err_free:
    free(ofd);
    return rc;
}

static int sfs_pl_open_finish(int rc, const char *sfs_path, int flags, mode_t mode)
{
    int fd;

    if (rc < 0) {
        return sfs_pl_fail(rc, "open", sfs_path);
    }
    fd = sfs_pl_open_path(sfs_path, flags, mode);
    return fd < 0 ? sfs_pl_fail(fd, "open", sfs_path) : fd;
}

#define SFS_PL_OPEN_MODE(_flags, _mode)                                                            \
    do {                                                                                           \
        if (((_flags)&O_CREAT) || ((_flags)&O_TMPFILE) == O_TMPFILE) {                             \
            va_list _ap;                                                                           \
            va_start(_ap, _flags);                                                                 \
            (_mode) = va_arg(_ap, mode_t);                                                         \
            va_end(_ap);                                                                           \
        }                                                                                          \
    } while (0)

SFS_PL_EXPORT int open(const char *path, int flags, ...)
{
    char   sfs_path[SFS_PL_PATH_MAX];
    mode_t mode = 0;
    int    rc;

    SFS_PL_OPEN_MODE(flags, mode);
    rc = sfs_pl_path(path, sfs_path);
    return rc ? sfs_pl_open_finish(rc, sfs_path, flags, mode) : SFS_REAL(open)(path, flags, mode);
}

SFS_PL_EXPORT int open64(const char *path, int flags, ...)
{
    char   sfs_path[SFS_PL_PATH_MAX];
    mode_t mode = 0;
    int    rc;

    SFS_PL_OPEN_MODE(flags, mode);
    rc = sfs_pl_path(path, sfs_path);
    return rc ? sfs_pl_open_finish(rc, sfs_path, flags, mode) : SFS_REAL(open64)(path, flags, mode);
}

SFS_PL_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
    char   sfs_path[SFS_PL_PATH_MAX];
    mode_t mode = 0;
    int    rc;

    SFS_PL_OPEN_MODE(flags, mode);
    rc = sfs_pl_path_at(dirfd, path, sfs_path);
    return rc ? sfs_pl_open_finish(rc, sfs_path, flags, mode)
              : SFS_REAL(openat)(dirfd, path, flags, mode);
}

SFS_PL_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
    char   sfs_path[SFS_PL_PATH_MAX];
    mode_t mode = 0;
    int    rc;

    SFS_PL_OPEN_MODE(flags, mode);
    rc = sfs_pl_path_at(dirfd, path, sfs_path);
    return rc ? sfs_pl_open_finish(rc, sfs_path, flags, mode)
              : SFS_REAL(openat64)(dirfd, path, flags, mode);
}

/* The _FORTIFY_SOURCE entry points (no mode: O_CREAT is not allowed). */
SFS_PL_EXPORT int __open_2(const char *path, int flags)
{
    return open(path, flags);
}

SFS_PL_EXPORT int __open64_2(const char *path, int flags)
{
    return open64(path, flags);
}

SFS_PL_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
    return openat(dirfd, path, flags);
}

SFS_PL_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
    return openat64(dirfd, path, flags);
}

SFS_PL_EXPORT int creat(const char *path, mode_t mode)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_open_finish(rc, sfs_path, O_CREAT | O_WRONLY | O_TRUNC, mode)
              : SFS_REAL(creat)(path, mode);
}

SFS_PL_EXPORT int creat64(const char *path, mode_t mode)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_open_finish(rc, sfs_path, O_CREAT | O_WRONLY | O_TRUNC, mode)
              : SFS_REAL(creat64)(path, mode);
}
/* ------------------------------------------------------------------------ */
/* close                                                                     */

int sfs_pl_close_fd(int fd)
{
    int rc;

    sfs_pl_lock();
    rc = sfs_pl_fd_get(fd) ? sfs_pl_fd_drop(fd, 1) : -EBADF;
    sfs_pl_unlock();
    return rc ? sfs_pl_fail(rc, "close", NULL) : 0;
}

SFS_PL_EXPORT int close(int fd)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_close_fd(fd) : SFS_REAL(close)(fd);
}

/* Forget our descriptors in [first, last] before the real call closes
 * them, so their numbers are not taken for ours once reused. */
static void sfs_pl_forget_range(unsigned first, unsigned last)
{
    int highest = sfs_pl_fd_max();

    if (highest < 0 || first > (unsigned)highest) {
        return;
    }
    if (last > (unsigned)highest) {
        last = (unsigned)highest;
    }
    sfs_pl_lock();
    for (unsigned fd = first; fd <= last; fd++) {
        if (sfs_pl_fd_get((int)fd)) {
            sfs_pl_fd_drop((int)fd, 0);
        }
    }
    sfs_pl_unlock();
}

SFS_PL_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
    /* with CLOSE_RANGE_CLOEXEC nothing closes now: ours are close-on-exec */
    if (!(flags & CLOSE_RANGE_CLOEXEC) && !sfs_pl_busy) {
        sfs_pl_forget_range(first, last);
    }
    return SFS_REAL(close_range)(first, last, flags);
}

SFS_PL_EXPORT void closefrom(int lowfd)
{
    if (lowfd >= 0 && !sfs_pl_busy) {
        sfs_pl_forget_range((unsigned)lowfd, ~0u);
    }
    SFS_REAL(closefrom)(lowfd);
}
/* ------------------------------------------------------------------------ */
/* dup and fcntl                                                             */

/* A new descriptor >= minfd for the same open file (lock held). */
static int sfs_pl_dup_locked(int fd, int minfd, int cloexec)
{
    sfs_pl_fd_t *entry = sfs_pl_fd_get(fd);
    int          newfd, rc;

    if (!entry) {
        return -EBADF;
    }
    newfd = SFS_REAL(fcntl)(fd, F_DUPFD_CLOEXEC, minfd);
    if (newfd < 0) {
        return -errno;
    }
    rc = sfs_pl_fd_install_at(newfd, entry->ofd, cloexec);
    if (rc) {
        SFS_REAL(close)(newfd);
        return rc;
    }
    return newfd;
}

SFS_PL_EXPORT int dup(int fd)
{
    int rc;

    if (!sfs_pl_fd_is_ours(fd)) {
        return SFS_REAL(dup)(fd);
    }
    sfs_pl_lock();
    rc = sfs_pl_dup_locked(fd, 0, 0);
    sfs_pl_unlock();
    return rc < 0 ? sfs_pl_fail(rc, "dup", NULL) : rc;
}

/* dup2/dup3 when either side is ours: newfd is replaced atomically by the
 * real call, then the table follows. */
static int sfs_pl_dup_to(int oldfd, int newfd, int cloexec, int is_dup3)
{
    sfs_pl_fd_t *old_entry;
    int          rc = 0;

    sfs_pl_lock();
    old_entry = sfs_pl_fd_get(oldfd);
    if (oldfd == newfd) {
        rc = is_dup3 ? -EINVAL : old_entry ? newfd : -EBADF;
        goto out;
    }
    if (!old_entry) {
        /* a real descriptor lands on one of ours */
        if (SFS_REAL(dup3)(oldfd, newfd, cloexec ? O_CLOEXEC : 0) < 0) {
            rc = -errno;
            goto out;
        }
        if (sfs_pl_fd_get(newfd)) {
            sfs_pl_fd_drop(newfd, 0);
        }
        rc = newfd;
        goto out;
    }
    if (SFS_REAL(dup3)(oldfd, newfd, O_CLOEXEC) < 0) {
        rc = -errno;
        goto out;
    }
    old_entry->ofd->refs++; /* keep it while newfd's old entry goes */
    if (sfs_pl_fd_get(newfd)) {
        sfs_pl_fd_drop(newfd, 0);
    }
    rc = sfs_pl_fd_install_at(newfd, old_entry->ofd, cloexec);
    sfs_pl_ofd_put(old_entry->ofd);
    if (rc) {
        SFS_REAL(close)(newfd);
        goto out;
    }
    rc = newfd;
out:
    sfs_pl_unlock();
    return rc < 0 ? sfs_pl_fail(rc, is_dup3 ? "dup3" : "dup2", NULL) : rc;
}

SFS_PL_EXPORT int dup2(int oldfd, int newfd)
{
    if (!sfs_pl_fd_is_ours(oldfd) && !sfs_pl_fd_is_ours(newfd)) {
        return SFS_REAL(dup2)(oldfd, newfd);
    }
    return sfs_pl_dup_to(oldfd, newfd, 0, 0);
}

SFS_PL_EXPORT int dup3(int oldfd, int newfd, int flags)
{
    if (!sfs_pl_fd_is_ours(oldfd) && !sfs_pl_fd_is_ours(newfd)) {
        return SFS_REAL(dup3)(oldfd, newfd, flags);
    }
    if (flags & ~O_CLOEXEC) {
        return sfs_pl_fail(-EINVAL, "dup3", NULL);
    }
    return sfs_pl_dup_to(oldfd, newfd, !!(flags & O_CLOEXEC), 1);
}

static int sfs_pl_fcntl_ours(int fd, int cmd, void *arg, int (*real)(int, int, ...))
{
    sfs_pl_fd_t *entry;
    long         value = (long)(intptr_t)arg;
    int          rc    = 0;

    sfs_pl_lock();
    entry = sfs_pl_fd_get(fd);
    if (!entry) {
        rc = -EBADF;
        goto out;
    }
    switch (cmd) {
    case F_DUPFD:
    case F_DUPFD_CLOEXEC:
        rc = value < 0 || value > INT_MAX
                 ? -EINVAL
                 : sfs_pl_dup_locked(fd, (int)value, cmd == F_DUPFD_CLOEXEC);
        break;
    case F_GETFD:
        rc = entry->cloexec ? FD_CLOEXEC : 0;
        break;
    case F_SETFD:
        entry->cloexec = !!(value & FD_CLOEXEC);
        break;
    case F_GETFL:
        rc = entry->ofd->flags;
        break;
    case F_SETFL:
        entry->ofd->flags =
            (entry->ofd->flags & ~SFS_PL_SETFL_FLAGS) | ((int)value & SFS_PL_SETFL_FLAGS);
        break;
    case F_GETLK:
    case F_SETLK:
    case F_SETLKW:
    case F_OFD_GETLK:
    case F_OFD_SETLK:
    case F_OFD_SETLKW:
        rc = -ENOLCK; /* no locks across clients: say so rather than pretend */
        break;
    default:
        /* the placeholder answers (usually EBADF, as O_PATH descriptors do) */
        rc = real(fd, cmd, arg);
        if (rc < 0) {
            rc = -errno;
        }
        break;
    }
out:
    sfs_pl_unlock();
    return rc < 0 ? sfs_pl_fail(rc, "fcntl", NULL) : rc;
}

/* The third argument is an int or a pointer depending on cmd; as in every
 * libc, it is passed on in a pointer-sized slot. */
SFS_PL_EXPORT int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    void   *arg;

    va_start(ap, cmd);
    arg = va_arg(ap, void *);
    va_end(ap);
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_fcntl_ours(fd, cmd, arg, SFS_REAL(fcntl))
                                 : SFS_REAL(fcntl)(fd, cmd, arg);
}

SFS_PL_EXPORT int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    void   *arg;

    va_start(ap, cmd);
    arg = va_arg(ap, void *);
    va_end(ap);
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_fcntl_ours(fd, cmd, arg, SFS_REAL(fcntl64))
                                 : SFS_REAL(fcntl64)(fd, cmd, arg);
}
