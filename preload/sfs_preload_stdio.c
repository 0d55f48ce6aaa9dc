/*
 * stdio streams on stripefs files: fopen, fopen64 and fdopen give a
 * fopencookie stream whose reads, writes, seeks and close go through our
 * descriptor calls (glibc's own FILE would call the kernel directly on the
 * placeholder descriptor); freopen onto a stripefs name is refused.
 * tmpfile(3) is not served: glibc makes it in P_tmpdir (/tmp), whatever the
 * working directory or TMPDIR (docs/posix-preload.md).
 */
#include "sfs_preload.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

SFS_REAL_DECL(fopen);
SFS_REAL_DECL(fopen64);
SFS_REAL_DECL(fdopen);
SFS_REAL_DECL(freopen);
SFS_REAL_DECL(freopen64);

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

/* freopen onto a stripefs name cannot keep its promise: the stream must stay
 * the same FILE, and glibc's FILE (stdout, say) writes with its internal
 * system calls, which would reach the placeholder descriptor, never stripefs;
 * only a new fopencookie stream could. So it fails with EOPNOTSUPP before
 * touching the stream (flushed, still open and usable), rather than closing
 * it and failing with ENOENT as libc alone does. A stream of ours is no
 * file-backed FILE: glibc's freopen answers it (NULL) whatever the name. */
static FILE *sfs_pl_freopen_ours(int rc, const char *sfs_path, FILE *stream)
{
    if (stream) {
        fflush(stream);
    }
    sfs_pl_fail(rc < 0 ? rc : -EOPNOTSUPP, "freopen", sfs_path);
    return NULL;
}

SFS_PL_EXPORT FILE *freopen(const char *path, const char *mode, FILE *stream)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = path ? sfs_pl_path(path, sfs_path) : 0;

    return rc ? sfs_pl_freopen_ours(rc, sfs_path, stream) : SFS_REAL(freopen)(path, mode, stream);
}

SFS_PL_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = path ? sfs_pl_path(path, sfs_path) : 0;

    return rc ? sfs_pl_freopen_ours(rc, sfs_path, stream) : SFS_REAL(freopen64)(path, mode, stream);
}
