#include "sfs_errno.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static __thread char sfs_error_detail_buf[SFS_ERROR_DETAIL_MAX];

/* clang-format does not settle on one layout for this list */
// clang-format off
#define SFS_ERRNO_NAMES(_)                                                                         \
    _(EPERM) _(ENOENT) _(ESRCH) _(EINTR) _(EIO) _(ENXIO) _(E2BIG) _(EBADF) _(EAGAIN) _(ENOMEM)    \
    _(EACCES) _(EFAULT) _(EBUSY) _(EEXIST) _(EXDEV) _(ENODEV) _(ENOTDIR) _(EISDIR) _(EINVAL)       \
    _(ENFILE) _(EMFILE) _(EFBIG) _(ENOSPC) _(ESPIPE) _(EROFS) _(EMLINK) _(EPIPE) _(ERANGE)         \
    _(ENAMETOOLONG) _(ENOSYS) _(ENOTEMPTY) _(ELOOP) _(ENODATA) _(ETIME) _(EPROTO) _(EBADMSG)      \
    _(EOVERFLOW) _(EMSGSIZE) _(EPROTONOSUPPORT) _(EOPNOTSUPP) _(EADDRINUSE) _(EADDRNOTAVAIL)      \
    _(ENETDOWN) _(ENETUNREACH) _(ECONNABORTED) _(ECONNRESET) _(ENOBUFS) _(ENOTCONN)              \
    _(ESHUTDOWN) _(ETIMEDOUT) _(ECONNREFUSED) _(EHOSTDOWN) _(EHOSTUNREACH) _(EALREADY)           \
    _(EINPROGRESS) _(ESTALE) _(EDQUOT) _(ECANCELED) _(EKEYREJECTED)
// clang-format on

const char *sfs_errno_name(int rc)
{
    int err = rc < 0 ? -rc : rc;

    switch (err) {
#define SFS_ERRNO_CASE(_e)                                                                         \
    case _e:                                                                                       \
        return #_e;
        SFS_ERRNO_NAMES(SFS_ERRNO_CASE)
#undef SFS_ERRNO_CASE
    case 0:
        return "OK";
    default:
        return "E?";
    }
}

const char *sfs_strerror(int rc)
{
    static __thread char text[128];
    int                  err = rc < 0 ? -rc : rc;

    if (err == 0) {
        return "OK (success)";
    }
    snprintf(text, sizeof(text), "%s (%s)", sfs_errno_name(err), strerror(err));
    return text;
}

int sfs_error_set(int rc, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(sfs_error_detail_buf, sizeof(sfs_error_detail_buf), fmt, ap);
    va_end(ap);
    return rc;
}

const char *sfs_error_detail(void)
{
    return sfs_error_detail_buf;
}

void sfs_error_clear(void)
{
    sfs_error_detail_buf[0] = '\0';
}
