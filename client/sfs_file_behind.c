/*
 * Write-behind. A small write (up to SFS_BEHIND_MAX_WRITE bytes) is copied
 * into a buffer of the open file's own, its requests are started, and the
 * call returns: the next writes overlap with it instead of each waiting
 * for a round trip to the storage servers, as a local file system's page
 * cache lets them. A few of them (STRIPEFS_WRITE_BEHIND bytes in all, per
 * open file) are in flight at once.
 *
 * What keeps this safe:
 *  - a write that overlaps one still in flight waits for it first, so two
 *    writes of the same bytes are never in flight together (their order
 *    at a server would not be known);
 *  - reads, size queries, truncation, sync and close of the file wait for
 *    all of them (a process reads what it wrote), and so does the end of a
 *    collective write (the ADIO driver), so that the ranks that read next
 *    see it;
 *  - a failure is kept and reported by the file's next write, its sync or
 *    its close (like a buffered write's error on fsync or close), with the
 *    offset and size of the write that failed; that next write is not done.
 * Other processes see a write once it is on the server: after MPI_File_sync
 * or the close, as MPI's consistency rules ask, and after every collective
 * write. STRIPEFS_WRITE_BEHIND=0 turns it off (every write waits).
 */
#define SFS_LOG_FAC "client"
#include "sfs_client_internal.h"

#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sfs_behind_write {
    sfs_request_t *request;
    uint8_t       *copy;       /* SFS_BEHIND_MAX_WRITE bytes (from spare) */
    uint64_t       start, end; /* the file range it covers (bounding) */
    uint64_t       length;     /* bytes it writes */
} sfs_behind_write_t;

struct sfs_behind {
    sfs_behind_write_t writes[SFS_BEHIND_MAX_WRITES];
    size_t             count;
    uint64_t           bytes;
    uint8_t           *spare[SFS_BEHIND_MAX_WRITES]; /* copy buffers to reuse */
    size_t             spare_count;
    int                status; /* the first failure, not reported yet */
    char               detail[SFS_ERROR_DETAIL_MAX];
};

uint64_t sfs_behind_limit_from_env(void)
{
    const char *env = getenv("STRIPEFS_WRITE_BEHIND");
    uint64_t    bytes;

    if (!env || !*env) {
        return SFS_BEHIND_DEFAULT_BYTES;
    }
    if (sfs_parse_size(env, &bytes) != 0) {
        sfs_warn("STRIPEFS_WRITE_BEHIND='%s' is not a size (like 0, 4M, 16MiB): using %u bytes",
                 env, SFS_BEHIND_DEFAULT_BYTES);
        return SFS_BEHIND_DEFAULT_BYTES;
    }
    return bytes;
}

/* Copy buffers are reused: a fresh one per write would be faulted in (and
 * given back to the kernel) again and again. */
static uint8_t *sfs_behind_buffer(sfs_behind_t *behind)
{
    return behind->spare_count ? behind->spare[--behind->spare_count]
                               : malloc(SFS_BEHIND_MAX_WRITE);
}

static void sfs_behind_buffer_put(sfs_behind_t *behind, uint8_t *buf)
{
    if (behind->spare_count < SFS_BEHIND_MAX_WRITES) {
        behind->spare[behind->spare_count++] = buf;
    } else {
        free(buf);
    }
}

/* Collect one finished (or, with `block`, any) write; its failure is kept. */
static void sfs_behind_settle(sfs_file_t *file, size_t i, int block)
{
    sfs_behind_t       *behind = file->behind;
    sfs_behind_write_t *w      = &behind->writes[i];
    ssize_t             result;

    if (!block && !sfs_request_test(w->request)) {
        return;
    }
    result = sfs_request_wait(w->request); /* frees the request */
    if (result < 0 && behind->status == 0) {
        const char *why  = sfs_error_detail();
        size_t      skip = strlen(file->path);

        if (strncmp(why, file->path, skip) == 0 && strncmp(why + skip, ": ", 2) == 0) {
            why += skip + 2; /* the path comes first anyway */
        }
        behind->status = (int)result;
        snprintf(behind->detail, sizeof(behind->detail),
                 "an earlier write of %lu bytes at offset %lu (it returned before it was stored) "
                 "failed: %s",
                 (unsigned long)w->length, (unsigned long)w->start, why);
    }
    sfs_behind_buffer_put(behind, w->copy);
    behind->bytes -= w->length;
    behind->writes[i] = behind->writes[--behind->count];
}

static void sfs_behind_reap(sfs_file_t *file)
{
    for (size_t i = file->behind->count; i-- > 0;) {
        sfs_behind_settle(file, i, 0);
    }
}

void sfs_behind_wait(sfs_file_t *file)
{
    if (!file->behind) {
        return;
    }
    while (file->behind->count) {
        sfs_behind_settle(file, 0, 1);
    }
}

/* Hand over a kept failure (once). */
static int sfs_behind_report(sfs_file_t *file)
{
    sfs_behind_t *behind = file->behind;
    int           rc;

    if (!behind || !behind->status) {
        return 0;
    }
    rc             = sfs_error_set(behind->status, "%s: %s", file->path, behind->detail);
    behind->status = 0;
    return rc;
}

int sfs_behind_flush(sfs_file_t *file)
{
    sfs_behind_wait(file);
    return sfs_behind_report(file);
}

int sfs_behind_write(sfs_file_t *file, const sfs_file_extent_t *extents, size_t extent_count,
                     const struct iovec *memory, size_t memory_count, uint64_t total,
                     ssize_t *result_p)
{
    uint64_t            limit = file->client->write_behind;
    uint64_t            start = UINT64_MAX, end = 0, copied = 0;
    sfs_behind_write_t *w;
    struct iovec        iov;
    int                 rc;

    if (total == 0 || total > SFS_BEHIND_MAX_WRITE || total > limit / 2) {
        return 0; /* large: it waits (and so does everything before it) */
    }
    if (!file->behind && !(file->behind = calloc(1, sizeof(*file->behind)))) {
        return 0;
    }
    sfs_behind_reap(file);
    rc = sfs_behind_report(file);
    if (rc) {
        *result_p = rc;
        return 1;
    }
    for (size_t e = 0; e < extent_count; e++) {
        if (extents[e].length == 0) {
            continue;
        }
        start = extents[e].offset < start ? extents[e].offset : start;
        end   = extents[e].offset + extents[e].length > end ? extents[e].offset + extents[e].length
                                                            : end;
    }
    for (size_t i = file->behind->count; i-- > 0;) {
        w = &file->behind->writes[i];
        if (w->start < end && start < w->end) {
            sfs_behind_settle(file, i, 1); /* same bytes: this one first */
        }
    }
    while (file->behind->count == SFS_BEHIND_MAX_WRITES || file->behind->bytes + total > limit) {
        sfs_behind_settle(file, 0, 1);
    }
    w       = &file->behind->writes[file->behind->count];
    w->copy = sfs_behind_buffer(file->behind);
    if (!w->copy) {
        return 0;
    }
    for (size_t m = 0; m < memory_count; m++) {
        memcpy(w->copy + copied, memory[m].iov_base, memory[m].iov_len);
        copied += memory[m].iov_len;
    }
    iov.iov_base = w->copy;
    iov.iov_len  = total;
    rc           = sfs_io_start_write(file, extents, extent_count, &iov, 1, &w->request);
    if (rc) {
        sfs_behind_buffer_put(file->behind, w->copy);
        *result_p = rc;
        return 1;
    }
    w->start  = start;
    w->end    = end;
    w->length = total;
    file->behind->count++;
    file->behind->bytes += total;
    *result_p = (ssize_t)total;
    return 1;
}

void sfs_behind_free(sfs_file_t *file)
{
    if (!file->behind) {
        return;
    }
    sfs_behind_wait(file);
    while (file->behind->spare_count) {
        free(file->behind->spare[--file->behind->spare_count]);
    }
    free(file->behind);
    file->behind = NULL;
}
