/*
 * Calls a stripefs descriptor cannot serve: ioctl, mmap, copy_file_range,
 * sendfile and flock refuse with the errno that makes callers fall back
 * (to read and write, or to going on without a lock), rather than reaching
 * the /dev/null placeholder behind every stripefs descriptor.
 */
#include "sfs_preload.h"

#include <errno.h>
#include <stdarg.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>

SFS_REAL_DECL(ioctl);
SFS_REAL_DECL(mmap);
SFS_REAL_DECL(mmap64);
SFS_REAL_DECL(copy_file_range);
SFS_REAL_DECL(sendfile);
SFS_REAL_DECL(sendfile64);
SFS_REAL_DECL(flock);

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
