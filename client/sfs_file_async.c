/*
 * The asynchronous calls of the data path (sfs_client.h: sfs_file_iwrite,
 * sfs_file_iread, sfs_request_test, sfs_request_wait): a request made and
 * started by sfs_file_io.c, advanced without blocking, finished on wait.
 */
#define SFS_LOG_FAC "client"
#include "sfs_client_internal.h"

#include "sfs_errno.h"

#include <limits.h>

static int sfs_io_start_async(sfs_file_t *file, int write, void *buf, size_t length,
                              uint64_t offset, sfs_request_t **request_p)
{
    sfs_file_extent_t extent = {offset, length};
    struct iovec      iov    = {buf, length};
    int               rc;

    SFS_ARG_CHECK(request_p, "request_p is NULL");
    SFS_ARG_CHECK(buf || length == 0, "buf is NULL");
    SFS_ARG_CHECK(length <= SSIZE_MAX, "length is over SSIZE_MAX");
    rc = sfs_io_create(file, write, &extent, length ? 1 : 0, &iov, length ? 1 : 0, request_p);
    if (rc == 0) {
        sfs_io_advance(*request_p, 0);
    }
    return rc;
}

int sfs_file_iwrite(sfs_file_t *file, const void *buf, size_t length, uint64_t offset,
                    sfs_request_t **request_p)
{
    return sfs_io_start_async(file, 1, (void *)buf, length, offset, request_p);
}

int sfs_file_iread(sfs_file_t *file, void *buf, size_t length, uint64_t offset,
                   sfs_request_t **request_p)
{
    return sfs_io_start_async(file, 0, buf, length, offset, request_p);
}

int sfs_request_test(sfs_request_t *request)
{
    SFS_ARG_CHECK(request, "the request is NULL");
    if (!sfs_io_finished(request)) {
        sfs_io_advance(request, 0);
    }
    return sfs_io_finished(request);
}

ssize_t sfs_request_wait(sfs_request_t *request)
{
    SFS_ARG_CHECK(request, "the request is NULL");
    return sfs_io_finish(request);
}
