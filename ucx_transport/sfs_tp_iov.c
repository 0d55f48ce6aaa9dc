/* Joining payload pieces that follow each other in memory (sfs_tp_iov.h). */
#include "sfs_tp_iov.h"

size_t sfs_tp_iov_coalesce(const struct iovec *iov, size_t count, ucp_dt_iov_t *out)
{
    size_t n = 0;

    for (size_t i = 0; i < count; i++) {
        if (!iov[i].iov_len) {
            continue;
        }
        if (n && sfs_tp_iov_follows(&out[n - 1], iov[i].iov_base)) {
            out[n - 1].length += iov[i].iov_len;
            continue;
        }
        out[n].buffer   = iov[i].iov_base;
        out[n++].length = iov[i].iov_len;
    }
    return n;
}
