/*
 * Data on stripefs descriptors: read and write with their vector,
 * positional and _FORTIFY_SOURCE forms, lseek, ftruncate, fsync and
 * fdatasync, and the allocation calls (posix_fadvise, posix_fallocate,
 * fallocate).
 */
#include "sfs_preload.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* Linux moves at most this much in one read or write (MAX_RW_COUNT). */
#define SFS_PL_RW_MAX 0x7ffff000L

/* Not declared without _FORTIFY_SOURCE. */
ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t count, off_t offset, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t count, off64_t offset, size_t buflen);
void    __chk_fail(void) __attribute__((noreturn));

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
SFS_REAL_DECL(ftruncate);
SFS_REAL_DECL(ftruncate64);
SFS_REAL_DECL(fsync);
SFS_REAL_DECL(fdatasync);
SFS_REAL_DECL(posix_fadvise);
SFS_REAL_DECL(posix_fadvise64);
SFS_REAL_DECL(posix_fallocate);
SFS_REAL_DECL(posix_fallocate64);
SFS_REAL_DECL(fallocate);

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
#if !defined(SFS_O_SYNC) || !defined(SFS_O_DSYNC)
    /* a client library without synchronous opens: make the write durable
     * on every target before it returns, as O_SYNC/O_DSYNC promise */
    if (n > 0 && is_write && (ofd->flags & O_DSYNC)) {
        int rc_sync = sfs_file_sync(file);

        if (rc_sync) {
            n = rc_sync;
            goto out;
        }
    }
#endif
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
