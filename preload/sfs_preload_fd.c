/*
 * Descriptor calls: open and friends, read/write and their vector and
 * positional forms, lseek, dup, fcntl, truncate, sync, and the calls that
 * must refuse a stripefs descriptor rather than reach its placeholder
 * (mmap, ioctl, copy_file_range, sendfile, flock), plus stdio streams and
 * the mkstemp family (and mkdtemp).
 */
#include "sfs_preload.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* Linux moves at most this much in one read or write (MAX_RW_COUNT). */
#define SFS_PL_RW_MAX 0x7ffff000L

/* Not declared without _FORTIFY_SOURCE. */
ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t count, off_t offset, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t count, off64_t offset, size_t buflen);
int     __open_2(const char *path, int flags);
int     __open64_2(const char *path, int flags);
int     __openat_2(int dirfd, const char *path, int flags);
int     __openat64_2(int dirfd, const char *path, int flags);
void    __chk_fail(void) __attribute__((noreturn));

SFS_REAL_DECL(open);
SFS_REAL_DECL(open64);
SFS_REAL_DECL(openat);
SFS_REAL_DECL(openat64);
SFS_REAL_DECL(creat);
SFS_REAL_DECL(creat64);
SFS_REAL_DECL(close);
SFS_REAL_DECL(read);
SFS_REAL_DECL(write);
SFS_REAL_DECL(pread);
SFS_REAL_DECL(pread64);
SFS_REAL_DECL(pwrite);
SFS_REAL_DECL(pwrite64);
SFS_REAL_DECL(readv);
SFS_REAL_DECL(writev);
SFS_REAL_DECL(preadv);
SFS_REAL_DECL(preadv64);
SFS_REAL_DECL(pwritev);
SFS_REAL_DECL(pwritev64);
SFS_REAL_DECL(preadv2);
SFS_REAL_DECL(pwritev2);
SFS_REAL_DECL(__read_chk);
SFS_REAL_DECL(__pread_chk);
SFS_REAL_DECL(__pread64_chk);
SFS_REAL_DECL(lseek);
SFS_REAL_DECL(lseek64);
SFS_REAL_DECL(dup);
SFS_REAL_DECL(dup2);
SFS_REAL_DECL(dup3);
SFS_REAL_DECL(fcntl);
SFS_REAL_DECL(fcntl64);
SFS_REAL_DECL(ftruncate);
SFS_REAL_DECL(ftruncate64);
SFS_REAL_DECL(fsync);
SFS_REAL_DECL(fdatasync);
SFS_REAL_DECL(posix_fadvise);
SFS_REAL_DECL(posix_fadvise64);
SFS_REAL_DECL(posix_fallocate);
SFS_REAL_DECL(posix_fallocate64);
SFS_REAL_DECL(fallocate);
SFS_REAL_DECL(ioctl);
SFS_REAL_DECL(mmap);
SFS_REAL_DECL(mmap64);
SFS_REAL_DECL(copy_file_range);
SFS_REAL_DECL(sendfile);
SFS_REAL_DECL(sendfile64);
SFS_REAL_DECL(flock);
SFS_REAL_DECL(close_range);
SFS_REAL_DECL(closefrom);
SFS_REAL_DECL(fopen);
SFS_REAL_DECL(fopen64);
SFS_REAL_DECL(fdopen);

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
    ofd->flags = accmode | (flags & (O_APPEND | O_NONBLOCK));
    rc         = sfs_pl_enter(&client);
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
        ofd->is_dir = 1;
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
/* mkstemp, mkostemp, mkstemps, mkostemps (and the *64 names), mkdtemp       */

/* glibc makes the name and creates the file or directory with its internal
 * open and mkdir, which nothing can interpose: a stripefs template is served
 * here, with glibc's rules (six X's before suffixlen bytes of suffix, else
 * EINVAL; the file O_RDWR | O_CREAT | O_EXCL with mode 0600, the directory
 * 0700, both less the umask as the kernel applies it). */
#define SFS_PL_TEMP_TRIES 1000

/* 1 if tmpl is a stripefs template (sfs_path gets its name as it is), 0 if
 * it is not ours, -errno if it cannot be used. */
static int sfs_pl_temp_check(const char *tmpl, int suffixlen, char *sfs_path)
{
    int    rc = sfs_pl_path(tmpl, sfs_path);
    size_t length;

    if (rc <= 0) {
        return rc;
    }
    length = strlen(tmpl);
    if (suffixlen < 0 || length < 6 + (size_t)suffixlen ||
        memcmp(tmpl + length - (size_t)suffixlen - 6, "XXXXXX", 6) != 0) {
        return -EINVAL;
    }
    return 1;
}

/* Six random letters and digits in place of the X's; sfs_path gets the
 * name. */
static int sfs_pl_temp_next(char *tmpl, int suffixlen, char *sfs_path)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    char             *xs        = tmpl + strlen(tmpl) - (size_t)suffixlen - 6;
    uint64_t          r         = 0;

    if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
        struct timespec now;

        clock_gettime(CLOCK_REALTIME, &now);
        r ^= ((uint64_t)now.tv_nsec << 20 ^ (uint64_t)now.tv_sec ^ (uint64_t)getpid() << 40) *
             0x9e3779b97f4a7c15ull;
    }
    for (int i = 0; i < 6; i++) {
        xs[i] = letters[r % 62];
        r /= 62;
    }
    return sfs_pl_path(tmpl, sfs_path);
}

/* Create a file (returns its descriptor) or, with is_dir, a directory
 * (returns 0) under a fresh name from tmpl; -errno on failure. */
static int sfs_pl_temp_create(char *tmpl, int suffixlen, int flags, int is_dir)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = -EEXIST;

    for (int i = 0; i < SFS_PL_TEMP_TRIES && rc == -EEXIST; i++) {
        rc = sfs_pl_temp_next(tmpl, suffixlen, sfs_path);
        if (rc < 0) {
            break;
        }
        if (is_dir) {
            sfs_client_t *client;

            rc = sfs_pl_enter(&client);
            if (rc == 0) {
                rc = sfs_mkdir(client, sfs_path, 0700 & ~sfs_pl_umask());
                sfs_pl_unlock();
            }
        } else {
            rc = sfs_pl_open_path(sfs_path, (flags & ~O_ACCMODE) | O_RDWR | O_CREAT | O_EXCL, 0600);
        }
    }
    return rc;
}

/* The mkstemp family: suffixlen bytes of suffix, open flags (O_APPEND,
 * O_CLOEXEC, O_SYNC). */
static int sfs_pl_mkstemp(int rc, char *tmpl, const char *sfs_path, int suffixlen, int flags)
{
    if (rc > 0) {
        rc = sfs_pl_temp_create(tmpl, suffixlen, flags, 0);
    }
    return rc < 0 ? sfs_pl_fail(rc, "mkstemp", sfs_path) : rc;
}

#define SFS_PL_MKSTEMP(_name, _params, _suffixlen, _flags, _args)                                  \
    SFS_REAL_DECL(_name);                                                                          \
    SFS_PL_EXPORT int _name _params                                                                \
    {                                                                                              \
        char sfs_path[SFS_PL_PATH_MAX];                                                            \
        int  rc = sfs_pl_temp_check(tmpl, _suffixlen, sfs_path);                                   \
                                                                                                   \
        return rc ? sfs_pl_mkstemp(rc, tmpl, sfs_path, _suffixlen, _flags)                         \
                  : SFS_REAL(_name) _args;                                                         \
    }

SFS_PL_MKSTEMP(mkstemp, (char *tmpl), 0, 0, (tmpl))
SFS_PL_MKSTEMP(mkstemp64, (char *tmpl), 0, 0, (tmpl))
SFS_PL_MKSTEMP(mkostemp, (char *tmpl, int flags), 0, flags, (tmpl, flags))
SFS_PL_MKSTEMP(mkostemp64, (char *tmpl, int flags), 0, flags, (tmpl, flags))
SFS_PL_MKSTEMP(mkstemps, (char *tmpl, int suffixlen), suffixlen, 0, (tmpl, suffixlen))
SFS_PL_MKSTEMP(mkstemps64, (char *tmpl, int suffixlen), suffixlen, 0, (tmpl, suffixlen))
SFS_PL_MKSTEMP(mkostemps, (char *tmpl, int suffixlen, int flags), suffixlen, flags,
               (tmpl, suffixlen, flags))
SFS_PL_MKSTEMP(mkostemps64, (char *tmpl, int suffixlen, int flags), suffixlen, flags,
               (tmpl, suffixlen, flags))

SFS_REAL_DECL(mkdtemp);

SFS_PL_EXPORT char *mkdtemp(char *tmpl)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_temp_check(tmpl, 0, sfs_path);

    if (rc == 0) {
        return SFS_REAL(mkdtemp)(tmpl);
    }
    if (rc > 0) {
        rc = sfs_pl_temp_create(tmpl, 0, 0, 1);
    }
    if (rc < 0) {
        sfs_pl_fail(rc, "mkdtemp", sfs_path);
        return NULL;
    }
    return tmpl;
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
/* read and write                                                            */

/* One I/O on a stripefs descriptor: at `offset`, or at (and advancing) the
 * file offset when offset is -1. Returns bytes moved or -errno. */
static ssize_t sfs_pl_io(int fd, int is_write, const struct iovec *iov, int iovcnt, off_t offset)
{
    struct iovec      pieces[IOV_MAX];
    sfs_client_t     *client;
    sfs_pl_fd_t      *entry;
    sfs_pl_ofd_t     *ofd;
    sfs_file_t       *file;
    sfs_file_extent_t extent;
    uint64_t          total = 0, position, size;
    size_t            count = 0;
    ssize_t           n;
    int               rc, accmode;

    if (iovcnt < 0 || iovcnt > IOV_MAX) {
        return -EINVAL;
    }
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len > (size_t)SSIZE_MAX - total) {
            return -EINVAL;
        }
        if (iov[i].iov_len) {
            pieces[count++] = iov[i];
            total += iov[i].iov_len;
        }
    }
    if (count == 1 && total > SFS_PL_RW_MAX) {
        pieces[0].iov_len = SFS_PL_RW_MAX;
        total             = SFS_PL_RW_MAX;
    }
    rc = sfs_pl_enter(&client);
    if (rc) {
        return rc;
    }
    entry = sfs_pl_fd_get(fd);
    if (!entry) {
        n = -EBADF;
        goto out;
    }
    ofd     = entry->ofd;
    accmode = ofd->flags & O_ACCMODE;
    if (ofd->is_dir) {
        n = is_write ? -EBADF : -EISDIR;
        goto out;
    }
    if (is_write ? accmode == O_RDONLY : accmode == O_WRONLY) {
        n = -EBADF;
        goto out;
    }
    n = sfs_pl_ofd_file(ofd, client, &file);
    if (n) {
        goto out;
    }
    position = offset >= 0 ? (uint64_t)offset : ofd->offset;
    if (is_write && (ofd->flags & O_APPEND) && offset < 0) {
        n = sfs_file_size(file, &size);
        if (n) {
            goto out;
        }
        position = size;
    }
    if (position + total > (uint64_t)INT64_MAX) {
        n = is_write ? -EFBIG : 0;
        goto out;
    }
    if (total == 0) {
        n = 0;
    } else if (count == 1) {
        n = is_write ? sfs_file_pwrite(file, pieces[0].iov_base, total, position)
                     : sfs_file_pread(file, pieces[0].iov_base, total, position);
    } else {
        extent.offset = position;
        extent.length = total;
        n             = is_write ? sfs_file_writev(file, &extent, 1, pieces, count)
                                 : sfs_file_readv(file, &extent, 1, pieces, count);
    }
    if (n > 0 && offset < 0) {
        ofd->offset = position + (uint64_t)n;
    }
out:
    sfs_pl_unlock();
    return n;
}

static ssize_t sfs_pl_io_result(ssize_t n, const char *call)
{
    return n < 0 ? sfs_pl_fail((int)n, call, NULL) : n;
}

ssize_t sfs_pl_read_fd(int fd, void *buf, size_t count)
{
    struct iovec iov = {.iov_base = buf, .iov_len = count};

    return sfs_pl_io_result(sfs_pl_io(fd, 0, &iov, 1, -1), "read");
}

ssize_t sfs_pl_write_fd(int fd, const void *buf, size_t count)
{
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = count};

    return sfs_pl_io_result(sfs_pl_io(fd, 1, &iov, 1, -1), "write");
}

static ssize_t sfs_pl_pio(int fd, int is_write, const void *buf, size_t count, off_t offset)
{
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = count};

    if (offset < 0) {
        return sfs_pl_fail(-EINVAL, is_write ? "pwrite" : "pread", NULL);
    }
    return sfs_pl_io_result(sfs_pl_io(fd, is_write, &iov, 1, offset),
                            is_write ? "pwrite" : "pread");
}

static ssize_t sfs_pl_vio(int fd, int is_write, const struct iovec *iov, int iovcnt, off_t offset,
                          int positional)
{
    const char *call = is_write ? "pwritev" : "preadv";

    if (positional && offset < 0) {
        return sfs_pl_fail(-EINVAL, call, NULL);
    }
    return sfs_pl_io_result(sfs_pl_io(fd, is_write, iov, iovcnt, positional ? offset : -1), call);
}

SFS_PL_EXPORT ssize_t read(int fd, void *buf, size_t count)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_read_fd(fd, buf, count) : SFS_REAL(read)(fd, buf, count);
}

SFS_PL_EXPORT ssize_t write(int fd, const void *buf, size_t count)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_write_fd(fd, buf, count)
                                 : SFS_REAL(write)(fd, buf, count);
}

SFS_PL_EXPORT ssize_t pread(int fd, void *buf, size_t count, off_t offset)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_pio(fd, 0, buf, count, offset)
                                 : SFS_REAL(pread)(fd, buf, count, offset);
}

SFS_PL_EXPORT ssize_t pread64(int fd, void *buf, size_t count, off64_t offset)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_pio(fd, 0, buf, count, offset)
                                 : SFS_REAL(pread64)(fd, buf, count, offset);
}

SFS_PL_EXPORT ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_pio(fd, 1, buf, count, offset)
                                 : SFS_REAL(pwrite)(fd, buf, count, offset);
}

SFS_PL_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t count, off64_t offset)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_pio(fd, 1, buf, count, offset)
                                 : SFS_REAL(pwrite64)(fd, buf, count, offset);
}

SFS_PL_EXPORT ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen)
{
    if (!sfs_pl_fd_is_ours(fd)) {
        return SFS_REAL(__read_chk)(fd, buf, count, buflen);
    }
    if (count > buflen) {
        __chk_fail();
    }
    return sfs_pl_read_fd(fd, buf, count);
}

SFS_PL_EXPORT ssize_t __pread_chk(int fd, void *buf, size_t count, off_t offset, size_t buflen)
{
    if (!sfs_pl_fd_is_ours(fd)) {
        return SFS_REAL(__pread_chk)(fd, buf, count, offset, buflen);
    }
    if (count > buflen) {
        __chk_fail();
    }
    return sfs_pl_pio(fd, 0, buf, count, offset);
}

SFS_PL_EXPORT ssize_t __pread64_chk(int fd, void *buf, size_t count, off64_t offset, size_t buflen)
{
    if (!sfs_pl_fd_is_ours(fd)) {
        return SFS_REAL(__pread64_chk)(fd, buf, count, offset, buflen);
    }
    if (count > buflen) {
        __chk_fail();
    }
    return sfs_pl_pio(fd, 0, buf, count, offset);
}

SFS_PL_EXPORT ssize_t readv(int fd, const struct iovec *iov, int iovcnt)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_vio(fd, 0, iov, iovcnt, -1, 0)
                                 : SFS_REAL(readv)(fd, iov, iovcnt);
}

SFS_PL_EXPORT ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_vio(fd, 1, iov, iovcnt, -1, 0)
                                 : SFS_REAL(writev)(fd, iov, iovcnt);
}

SFS_PL_EXPORT ssize_t preadv(int fd, const struct iovec *iov, int iovcnt, off_t offset)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_vio(fd, 0, iov, iovcnt, offset, 1)
                                 : SFS_REAL(preadv)(fd, iov, iovcnt, offset);
}

SFS_PL_EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int iovcnt, off64_t offset)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_vio(fd, 0, iov, iovcnt, offset, 1)
                                 : SFS_REAL(preadv64)(fd, iov, iovcnt, offset);
}

SFS_PL_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int iovcnt, off_t offset)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_vio(fd, 1, iov, iovcnt, offset, 1)
                                 : SFS_REAL(pwritev)(fd, iov, iovcnt, offset);
}

SFS_PL_EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int iovcnt, off64_t offset)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_vio(fd, 1, iov, iovcnt, offset, 1)
                                 : SFS_REAL(pwritev64)(fd, iov, iovcnt, offset);
}

/* preadv2/pwritev2: offset -1 means the file offset; the RWF_* hints have
 * no meaning for stripefs and are ignored. */
SFS_PL_EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int iovcnt, off_t offset, int flags)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_vio(fd, 0, iov, iovcnt, offset, offset != -1)
                                 : SFS_REAL(preadv2)(fd, iov, iovcnt, offset, flags);
}

SFS_PL_EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int iovcnt, off_t offset, int flags)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_vio(fd, 1, iov, iovcnt, offset, offset != -1)
                                 : SFS_REAL(pwritev2)(fd, iov, iovcnt, offset, flags);
}

/* ------------------------------------------------------------------------ */
/* lseek                                                                     */

off_t sfs_pl_lseek_fd(int fd, off_t offset, int whence)
{
    sfs_client_t *client;
    sfs_pl_fd_t  *entry;
    sfs_pl_ofd_t *ofd;
    sfs_file_t   *file;
    uint64_t      size = 0;
    int64_t       base = 0;
    int           rc   = sfs_pl_enter(&client);

    if (rc) {
        return sfs_pl_fail(rc, "lseek", NULL);
    }
    entry = sfs_pl_fd_get(fd);
    if (!entry) {
        rc = -EBADF;
        goto out;
    }
    ofd = entry->ofd;
    if (!ofd->is_dir && (whence == SEEK_END || whence == SEEK_DATA || whence == SEEK_HOLE)) {
        rc = sfs_pl_ofd_file(ofd, client, &file);
        if (rc == 0) {
            rc = sfs_file_size(file, &size);
        }
        if (rc) {
            goto out;
        }
    }
    switch (whence) {
    case SEEK_SET:
        base = 0;
        break;
    case SEEK_CUR:
        base = (int64_t)ofd->offset;
        break;
    case SEEK_END:
        base = (int64_t)size;
        break;
    case SEEK_DATA: /* no holes are known: data runs to the end */
    case SEEK_HOLE:
        if (offset < 0 || (uint64_t)offset >= size) {
            rc = offset < 0 ? -EINVAL : -ENXIO;
            goto out;
        }
        base   = whence == SEEK_DATA ? offset : (int64_t)size;
        offset = 0;
        break;
    default:
        rc = -EINVAL;
        goto out;
    }
    if ((offset > 0 && base > INT64_MAX - offset) || base + offset < 0) {
        rc = offset > 0 ? -EOVERFLOW : -EINVAL;
        goto out;
    }
    ofd->offset = (uint64_t)(base + offset);
out:
    sfs_pl_unlock();
    return rc ? sfs_pl_fail(rc, "lseek", NULL) : (off_t)(base + offset);
}

SFS_PL_EXPORT off_t lseek(int fd, off_t offset, int whence)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_lseek_fd(fd, offset, whence)
                                 : SFS_REAL(lseek)(fd, offset, whence);
}

SFS_PL_EXPORT off64_t lseek64(int fd, off64_t offset, int whence)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_lseek_fd(fd, offset, whence)
                                 : SFS_REAL(lseek64)(fd, offset, whence);
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
            (entry->ofd->flags & ~(O_APPEND | O_NONBLOCK)) | ((int)value & (O_APPEND | O_NONBLOCK));
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

/* ------------------------------------------------------------------------ */
/* truncate, sync, allocation hints                                          */

static int sfs_pl_ftruncate_fd(int fd, off_t length)
{
    sfs_client_t *client;
    sfs_pl_fd_t  *entry;
    sfs_file_t   *file;
    int           rc;

    if (length < 0) {
        return sfs_pl_fail(-EINVAL, "ftruncate", NULL);
    }
    rc = sfs_pl_enter(&client);
    if (rc) {
        return sfs_pl_fail(rc, "ftruncate", NULL);
    }
    entry = sfs_pl_fd_get(fd);
    if (!entry) {
        rc = -EBADF;
    } else if (entry->ofd->is_dir || (entry->ofd->flags & O_ACCMODE) == O_RDONLY) {
        rc = -EINVAL;
    } else {
        rc = sfs_pl_ofd_file(entry->ofd, client, &file);
        if (rc == 0) {
            rc = sfs_file_truncate(file, (uint64_t)length);
        }
    }
    sfs_pl_unlock();
    return rc ? sfs_pl_fail(rc, "ftruncate", NULL) : 0;
}

SFS_PL_EXPORT int ftruncate(int fd, off_t length)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_ftruncate_fd(fd, length)
                                 : SFS_REAL(ftruncate)(fd, length);
}

SFS_PL_EXPORT int ftruncate64(int fd, off64_t length)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_ftruncate_fd(fd, length)
                                 : SFS_REAL(ftruncate64)(fd, length);
}

static int sfs_pl_fsync_fd(int fd)
{
    sfs_client_t *client;
    sfs_pl_fd_t  *entry;
    sfs_file_t   *file;
    int           rc = sfs_pl_enter(&client);

    if (rc) {
        return sfs_pl_fail(rc, "fsync", NULL);
    }
    entry = sfs_pl_fd_get(fd);
    if (!entry) {
        rc = -EBADF;
    } else if (!entry->ofd->is_dir) {
        rc = sfs_pl_ofd_file(entry->ofd, client, &file);
        if (rc == 0) {
            rc = sfs_file_sync(file);
        }
    }
    sfs_pl_unlock();
    return rc ? sfs_pl_fail(rc, "fsync", NULL) : 0;
}

SFS_PL_EXPORT int fsync(int fd)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_fsync_fd(fd) : SFS_REAL(fsync)(fd);
}

SFS_PL_EXPORT int fdatasync(int fd)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_fsync_fd(fd) : SFS_REAL(fdatasync)(fd);
}

SFS_PL_EXPORT int posix_fadvise(int fd, off_t offset, off_t len, int advice)
{
    return sfs_pl_fd_is_ours(fd) ? 0 : SFS_REAL(posix_fadvise)(fd, offset, len, advice);
}

SFS_PL_EXPORT int posix_fadvise64(int fd, off64_t offset, off64_t len, int advice)
{
    return sfs_pl_fd_is_ours(fd) ? 0 : SFS_REAL(posix_fadvise64)(fd, offset, len, advice);
}

/* Reserve space = make the file at least offset + len long (returns an
 * error number, as posix_fallocate does). */
static int sfs_pl_allocate(int fd, off_t offset, off_t len)
{
    sfs_client_t *client;
    sfs_pl_fd_t  *entry;
    sfs_file_t   *file;
    uint64_t      size;
    int           rc;

    if (offset < 0 || len <= 0 || offset > INT64_MAX - len) {
        return offset < 0 || len <= 0 ? EINVAL : EFBIG;
    }
    rc = sfs_pl_enter(&client);
    if (rc) {
        return -rc;
    }
    entry = sfs_pl_fd_get(fd);
    if (!entry) {
        rc = -EBADF;
    } else if (entry->ofd->is_dir || (entry->ofd->flags & O_ACCMODE) == O_RDONLY) {
        rc = entry->ofd->is_dir ? -ENODEV : -EBADF;
    } else {
        rc = sfs_pl_ofd_file(entry->ofd, client, &file);
        if (rc == 0) {
            rc = sfs_file_size(file, &size);
        }
        if (rc == 0 && size < (uint64_t)(offset + len)) {
            rc = sfs_file_truncate(file, (uint64_t)(offset + len));
        }
    }
    sfs_pl_unlock();
    return -rc;
}

SFS_PL_EXPORT int posix_fallocate(int fd, off_t offset, off_t len)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_allocate(fd, offset, len)
                                 : SFS_REAL(posix_fallocate)(fd, offset, len);
}

SFS_PL_EXPORT int posix_fallocate64(int fd, off64_t offset, off64_t len)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_allocate(fd, offset, len)
                                 : SFS_REAL(posix_fallocate64)(fd, offset, len);
}

SFS_PL_EXPORT int fallocate(int fd, int mode, off_t offset, off_t len)
{
    int rc;

    if (!sfs_pl_fd_is_ours(fd)) {
        return SFS_REAL(fallocate)(fd, mode, offset, len);
    }
    if (mode != 0) {
        return sfs_pl_fail(-EOPNOTSUPP, "fallocate", NULL);
    }
    rc = sfs_pl_allocate(fd, offset, len);
    return rc ? sfs_pl_fail(-rc, "fallocate", NULL) : 0;
}

/* ------------------------------------------------------------------------ */
/* Calls a stripefs descriptor cannot serve                                  */

SFS_PL_EXPORT int ioctl(int fd, unsigned long request, ...)
{
    va_list ap;
    void   *arg;

    va_start(ap, request);
    arg = va_arg(ap, void *);
    va_end(ap);
    if (sfs_pl_fd_is_ours(fd)) {
        errno = ENOTTY; /* no terminal, no FICLONE: callers fall back */
        return -1;
    }
    return SFS_REAL(ioctl)(fd, request, arg);
}

SFS_PL_EXPORT void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset)
{
    if (!(flags & MAP_ANONYMOUS) && sfs_pl_fd_is_ours(fd)) {
        errno = ENODEV; /* stripefs files cannot be mapped */
        return MAP_FAILED;
    }
    return SFS_REAL(mmap)(addr, length, prot, flags, fd, offset);
}

SFS_PL_EXPORT void *mmap64(void *addr, size_t length, int prot, int flags, int fd, off64_t offset)
{
    if (!(flags & MAP_ANONYMOUS) && sfs_pl_fd_is_ours(fd)) {
        errno = ENODEV;
        return MAP_FAILED;
    }
    return SFS_REAL(mmap64)(addr, length, prot, flags, fd, offset);
}

SFS_PL_EXPORT ssize_t copy_file_range(int fd_in, off64_t *off_in, int fd_out, off64_t *off_out,
                                      size_t len, unsigned flags)
{
    if (sfs_pl_fd_is_ours(fd_in) || sfs_pl_fd_is_ours(fd_out)) {
        errno = EXDEV; /* callers fall back to read and write */
        return -1;
    }
    return SFS_REAL(copy_file_range)(fd_in, off_in, fd_out, off_out, len, flags);
}

SFS_PL_EXPORT ssize_t sendfile(int out_fd, int in_fd, off_t *offset, size_t count)
{
    if (sfs_pl_fd_is_ours(in_fd) || sfs_pl_fd_is_ours(out_fd)) {
        errno = EINVAL;
        return -1;
    }
    return SFS_REAL(sendfile)(out_fd, in_fd, offset, count);
}

SFS_PL_EXPORT ssize_t sendfile64(int out_fd, int in_fd, off64_t *offset, size_t count)
{
    if (sfs_pl_fd_is_ours(in_fd) || sfs_pl_fd_is_ours(out_fd)) {
        errno = EINVAL;
        return -1;
    }
    return SFS_REAL(sendfile64)(out_fd, in_fd, offset, count);
}

SFS_PL_EXPORT int flock(int fd, int operation)
{
    if (sfs_pl_fd_is_ours(fd)) {
        errno = ENOSYS; /* no locks across clients (HDF5 then goes on without) */
        return -1;
    }
    return SFS_REAL(flock)(fd, operation);
}

/* ------------------------------------------------------------------------ */
/* stdio                                                                     */

static ssize_t sfs_pl_cookie_read(void *cookie, char *buf, size_t size)
{
    return sfs_pl_read_fd((int)(intptr_t)cookie, buf, size);
}

static ssize_t sfs_pl_cookie_write(void *cookie, const char *buf, size_t size)
{
    return sfs_pl_write_fd((int)(intptr_t)cookie, buf, size);
}

static int sfs_pl_cookie_seek(void *cookie, off64_t *position, int whence)
{
    off_t result = sfs_pl_lseek_fd((int)(intptr_t)cookie, *position, whence);

    if (result < 0) {
        return -1;
    }
    *position = result;
    return 0;
}

static int sfs_pl_cookie_close(void *cookie)
{
    return sfs_pl_close_fd((int)(intptr_t)cookie);
}

FILE *sfs_pl_fd_stream(int fd, const char *mode)
{
    static const cookie_io_functions_t functions = {
        .read  = sfs_pl_cookie_read,
        .write = sfs_pl_cookie_write,
        .seek  = sfs_pl_cookie_seek,
        .close = sfs_pl_cookie_close,
    };

    return fopencookie((void *)(intptr_t)fd, mode, functions);
}

/* open(2) flags for an fopen mode, or -1. */
static int sfs_pl_fopen_flags(const char *mode)
{
    int flags;

    switch (mode[0]) {
    case 'r':
        flags = O_RDONLY;
        break;
    case 'w':
        flags = O_WRONLY | O_CREAT | O_TRUNC;
        break;
    case 'a':
        flags = O_WRONLY | O_CREAT | O_APPEND;
        break;
    default:
        return -1;
    }
    for (const char *c = mode + 1; *c && *c != ','; c++) {
        if (*c == '+') {
            flags = (flags & ~O_ACCMODE) | O_RDWR;
        } else if (*c == 'x') {
            flags |= O_EXCL;
        } else if (*c == 'e') {
            flags |= O_CLOEXEC;
        }
    }
    return flags;
}

static FILE *sfs_pl_fopen_path(int rc, const char *sfs_path, const char *mode)
{
    int   flags = sfs_pl_fopen_flags(mode);
    int   fd;
    FILE *stream;

    if (rc < 0 || flags < 0) {
        sfs_pl_fail(rc < 0 ? rc : -EINVAL, "fopen", sfs_path);
        return NULL;
    }
    fd = sfs_pl_open_path(sfs_path, flags, 0666);
    if (fd < 0) {
        sfs_pl_fail(fd, "fopen", sfs_path);
        return NULL;
    }
    stream = sfs_pl_fd_stream(fd, mode);
    if (!stream) {
        int saved = errno;

        sfs_pl_close_fd(fd);
        errno = saved;
    }
    return stream;
}

SFS_PL_EXPORT FILE *fopen(const char *path, const char *mode)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_fopen_path(rc, sfs_path, mode) : SFS_REAL(fopen)(path, mode);
}

SFS_PL_EXPORT FILE *fopen64(const char *path, const char *mode)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_fopen_path(rc, sfs_path, mode) : SFS_REAL(fopen64)(path, mode);
}

SFS_PL_EXPORT FILE *fdopen(int fd, const char *mode)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_fd_stream(fd, mode) : SFS_REAL(fdopen)(fd, mode);
}
