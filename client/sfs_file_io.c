/*
 * The data path. A read or write of any list of file extents becomes
 * requests to the targets: the extents are cut at chunk boundaries, sorted
 * by target and chunk file offset, merged where they touch, and packed into
 * as few requests per target as the size limit allows. Requests to all
 * targets are in flight together (a window of them), and payloads move
 * zero-copy between the caller's memory and the wire, except many tiny
 * pieces, which are packed into one buffer first.
 */
#define SFS_LOG_FAC "client"
#include "sfs_client_internal.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_layout.h"
#include "sfs_log.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct sfs_io_segment {
    uint32_t target_index;
    uint64_t chunk_offset;
    uint64_t length;
    uint8_t *memory;
    uint64_t order;
} sfs_io_segment_t;

typedef struct sfs_io_rpc {
    sfs_tp_rpc_t *rpc;
    uint32_t      target_index;
    size_t        first;
    size_t        count;
    uint64_t      bytes;
    uint64_t      chunk_end;
    struct iovec *iov;
    size_t        iov_count;
    void         *bounce;
    uint64_t      chunk_length;
    int           done;
    int           retry; /* a mirrored file's: to be sent again (failover) */
} sfs_io_rpc_t;

struct sfs_request {
    sfs_file_t        *file;
    int                write;
    sfs_io_segment_t  *segments;
    size_t             segment_count;
    sfs_io_rpc_t      *rpcs;
    size_t             rpc_count;
    size_t            *order; /* issue order: round-robin over targets */
    size_t             next;
    size_t             in_flight;
    size_t             finished;
    int                status;
    char               detail[SFS_ERROR_DETAIL_MAX];
    uint64_t           total;
    sfs_file_extent_t *extents;
    size_t             extent_count;
    size_t             retries;     /* RPCs waiting for a mirror failover */
    uint64_t           deadline_ms; /* ... until then (sfs_client_mirror_wait) */
};

static int sfs_io_segment_cmp(const void *a, const void *b)
{
    const sfs_io_segment_t *x = a, *y = b;

    if (x->target_index != y->target_index) {
        return x->target_index < y->target_index ? -1 : 1;
    }
    if (x->chunk_offset != y->chunk_offset) {
        return x->chunk_offset < y->chunk_offset ? -1 : 1;
    }
    return x->order < y->order ? -1 : x->order > y->order;
}

static void sfs_io_free(sfs_request_t *req)
{
    if (!req) {
        return;
    }
    for (size_t i = 0; i < req->rpc_count; i++) {
        sfs_tp_rpc_release(req->rpcs[i].rpc);
        free(req->rpcs[i].iov);
        free(req->rpcs[i].bounce);
    }
    free(req->rpcs);
    free(req->order);
    free(req->segments);
    free(req->extents);
    free(req);
}

/* Cut the file extents into per-chunk segments paired with memory. */
static int sfs_io_segments(sfs_request_t *req, const sfs_file_extent_t *extents,
                           size_t extent_count, const struct iovec *memory, size_t memory_count)
{
    const sfs_pattern_t *pattern   = &req->file->attr.pattern;
    uint64_t             max_piece = req->file->client->max_request;
    size_t               capacity = 0, mem = 0;
    uint64_t             mem_used = 0, file_total = 0, mem_total = 0;

    for (size_t i = 0; i < extent_count; i++) {
        file_total += extents[i].length;
        if (extents[i].offset + extents[i].length < extents[i].offset) {
            return sfs_error_set(-EINVAL, "%s: extent at %lu overflows", req->file->path,
                                 (unsigned long)extents[i].offset);
        }
    }
    for (size_t i = 0; i < memory_count; i++) {
        mem_total += memory[i].iov_len;
    }
    if (file_total != mem_total) {
        return sfs_error_set(-EINVAL, "%s: list I/O of %lu file bytes into %lu memory bytes",
                             req->file->path, (unsigned long)file_total, (unsigned long)mem_total);
    }
    req->total = file_total;
    for (size_t e = 0; e < extent_count; e++) {
        uint64_t offset = extents[e].offset;
        uint64_t left   = extents[e].length;

        while (left) {
            uint64_t          in_chunk = pattern->chunk_size - offset % pattern->chunk_size;
            uint64_t          take     = left < in_chunk ? left : in_chunk;
            sfs_io_segment_t *seg;

            while (memory[mem].iov_len == mem_used) {
                mem++;
                mem_used = 0;
            }
            if (take > memory[mem].iov_len - mem_used) {
                take = memory[mem].iov_len - mem_used;
            }
            if (take > max_piece) {
                take = max_piece;
            }
            if (req->segment_count == capacity) {
                sfs_io_segment_t *grown;

                capacity = capacity ? capacity * 2 : 16;
                grown    = realloc(req->segments, capacity * sizeof(*grown));
                if (!grown) {
                    return -ENOMEM;
                }
                req->segments = grown;
            }
            seg               = &req->segments[req->segment_count];
            seg->target_index = sfs_layout_target_index(pattern, offset);
            seg->chunk_offset = sfs_layout_chunk_file_offset(pattern, offset);
            seg->length       = take;
            seg->memory       = (uint8_t *)memory[mem].iov_base + mem_used;
            seg->order        = req->segment_count++;
            offset += take;
            left -= take;
            mem_used += take;
        }
    }
    return 0;
}

/* Group sorted segments into requests: one target each, at most
 * max_request bytes and SFS_PROTO_MAX_EXTENTS merged extents. */
static int sfs_io_plan(sfs_request_t *req)
{
    uint64_t max_bytes = req->file->client->max_request;
    size_t   capacity  = 0;
    size_t   i         = 0;
    uint32_t targets   = req->file->attr.pattern.stripe_count;
    size_t  *per_target_next, k = 0;

    qsort(req->segments, req->segment_count, sizeof(*req->segments), sfs_io_segment_cmp);
    while (i < req->segment_count) {
        sfs_io_rpc_t *rpc;
        uint32_t      extents = 0;
        uint64_t      end     = UINT64_MAX;

        if (req->rpc_count == capacity) {
            sfs_io_rpc_t *grown;

            capacity = capacity ? capacity * 2 : 8;
            grown    = realloc(req->rpcs, capacity * sizeof(*grown));
            if (!grown) {
                return -ENOMEM;
            }
            req->rpcs = grown;
        }
        rpc = &req->rpcs[req->rpc_count++];
        memset(rpc, 0, sizeof(*rpc));
        rpc->target_index = req->segments[i].target_index;
        rpc->first        = i;
        while (i < req->segment_count && req->segments[i].target_index == rpc->target_index &&
               (rpc->count == 0 || rpc->bytes + req->segments[i].length <= max_bytes)) {
            const sfs_io_segment_t *seg    = &req->segments[i];
            int                     merges = seg->chunk_offset == end;

            if (!merges && extents == SFS_PROTO_MAX_EXTENTS) {
                break;
            }
            extents += !merges;
            end = seg->chunk_offset + seg->length;
            rpc->count++;
            rpc->bytes += seg->length;
            if (end > rpc->chunk_end) {
                rpc->chunk_end = end;
            }
            i++;
        }
    }
    /* issue order: the first request of every target, then the second... */
    req->order      = calloc(req->rpc_count ? req->rpc_count : 1, sizeof(*req->order));
    per_target_next = calloc(targets, sizeof(*per_target_next));
    if (!req->order || !per_target_next) {
        free(per_target_next);
        return -ENOMEM;
    }
    for (uint32_t t = 0; t < targets; t++) {
        per_target_next[t] = SIZE_MAX;
    }
    for (size_t r = req->rpc_count; r-- > 0;) {
        per_target_next[req->rpcs[r].target_index] = r; /* first request of each target */
    }
    while (k < req->rpc_count) {
        for (uint32_t t = 0; t < targets && k < req->rpc_count; t++) {
            size_t r = per_target_next[t];

            if (r == SIZE_MAX) {
                continue;
            }
            req->order[k++] = r;
            per_target_next[t] =
                (r + 1 < req->rpc_count && req->rpcs[r + 1].target_index == t) ? r + 1 : SIZE_MAX;
        }
    }
    free(per_target_next);
    return 0;
}

static void sfs_io_fail(sfs_request_t *req, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void sfs_io_fail(sfs_request_t *req, int status, const char *fmt, ...)
{
    va_list ap;

    if (req->write) {
        sfs_file_writer_failed(req->file); /* the size is the targets' now */
    }
    if (req->status) {
        return; /* the first error is the one reported */
    }
    req->status = status;
    va_start(ap, fmt);
    vsnprintf(req->detail, sizeof(req->detail), fmt, ap);
    va_end(ap);
}

/* A read of a chunk file on this host, straight from the page cache
 * (sfs_file_local.c). Past the chunk file's end the memory gets zeros, and
 * its length tells sfs_io_read_result where the file may end, as a READ
 * reply's would. Returns 1 (finished here) or a negative errno. */
static int sfs_io_read_local(sfs_request_t *req, sfs_io_rpc_t *rpc, int fd)
{
    uint32_t target     = req->file->attr.pattern.targets[rpc->target_index];
    int      short_read = 0;

    for (size_t s = rpc->first; s < rpc->first + rpc->count; s++) {
        const sfs_io_segment_t *seg    = &req->segments[s];
        uint8_t                *memory = seg->memory;
        uint64_t                offset = seg->chunk_offset;
        uint64_t                left   = seg->length;

        while (left) {
            ssize_t got = pread(fd, memory, left, (off_t)offset);

            if (got < 0 && errno == EINTR) {
                continue;
            }
            if (got < 0) {
                int rc = -errno;

                sfs_io_fail(req, rc, "%s: read of storage target %u's chunk file: %s",
                            req->file->path, target, strerror(-rc));
                return rc;
            }
            if (got == 0) { /* past the chunk file's end */
                memset(memory, 0, left);
                short_read = 1;
                break;
            }
            memory += got;
            offset += (uint64_t)got;
            left -= (uint64_t)got;
        }
    }
    {
        struct stat st; /* the whole length, as a READ's reply says it */

        rpc->chunk_length = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
        if (!short_read && rpc->chunk_length < rpc->chunk_end) {
            rpc->chunk_length = rpc->chunk_end; /* truncated since: not a short read */
        }
    }
    rpc->done = 1;
    return 1;
}

/* Start one request to a target: 0 when it is in flight, 1 when it was
 * served here (a same-host read), 2 when a mirrored file's is to be sent
 * again after a failover, or a negative errno. */
static int sfs_io_start(sfs_request_t *req, sfs_io_rpc_t *rpc)
{
    sfs_file_t *file = req->file;
    uint32_t    target =
        sfs_client_mirror_target(file->client, &file->attr.pattern, rpc->target_index);
    uint32_t            opcode = req->write ? SFS_OP_WRITE : SFS_OP_READ;
    sfs_chunk_req_t    *chunk;
    uint8_t            *args;
    sfs_tp_rpc_params_t params;
    sfs_tp_conn_t      *conn;
    sfs_wbuf_t          wb;
    uint64_t            end = UINT64_MAX;
    int                 rc;

    if (!req->write && target == file->attr.pattern.targets[rpc->target_index]) {
        int fd = sfs_file_local_fd(file, rpc->target_index, rpc->bytes);

        if (fd >= 0) {
            return sfs_io_read_local(req, rpc, fd);
        }
    }
    chunk = malloc(sizeof(*chunk));
    args  = malloc(SFS_PROTO_ARGS_MAX);
    if (!chunk || !args) {
        free(chunk);
        free(args);
        return -ENOMEM;
    }
    memset(chunk, 0, offsetof(sfs_chunk_req_t, extents));
    chunk->target_id = target;
    chunk->entry_id  = file->attr.entry_id;
    chunk->cap       = file->cap;
    /* O_SYNC/O_DSYNC: the target makes the data durable before it replies */
    chunk->flags = (req->write && (file->flags & SFS_O_DSYNC)) ? SFS_WRITE_SYNC : 0;
    /* a mirrored file's writes go to the group's primary (targets[]),
     * which answers once its buddy holds them too; its reads come from the
     * primary, and so may take the same-host shortcuts. Both are flagged:
     * a member that is not the primary as its own map says refuses them
     * (ESTALE), so a client with an older map reads no stale copy */
    if (file->attr.pattern.type == SFS_PATTERN_MIRROR) {
        chunk->flags |= SFS_CHUNK_MIRRORED;
    }
    /* a file of an owner under a space quota: the targets check the
     * write bound of the last grant (sfs_quota.c, sfs_proto_bound.h) */
    if (req->write && (file->cap.access & SFS_CAP_BOUNDED)) {
        chunk->flags |= SFS_CHUNK_BOUND;
        chunk->bound = file->bound;
    }
    for (size_t s = rpc->first; s < rpc->first + rpc->count; s++) {
        const sfs_io_segment_t *seg = &req->segments[s];

        if (seg->chunk_offset == end) {
            chunk->extents[chunk->extent_count - 1].length += seg->length;
        } else {
            chunk->extents[chunk->extent_count].chunk_offset = seg->chunk_offset;
            chunk->extents[chunk->extent_count++].length     = seg->length;
        }
        end = seg->chunk_offset + seg->length;
    }
    sfs_wbuf_init(&wb, args, SFS_PROTO_ARGS_MAX);
    sfs_proto_chunk_req_pack(&wb, opcode, chunk);
    free(chunk);

    if (rpc->count > SFS_CLIENT_BOUNCE_PIECES && rpc->bytes <= SFS_CLIENT_BOUNCE_MAX) {
        /* many tiny pieces: one packed buffer moves faster than a long iov */
        rpc->bounce = malloc(rpc->bytes ? rpc->bytes : 1);
        rpc->iov    = calloc(1, sizeof(*rpc->iov));
        if (!rpc->bounce || !rpc->iov) {
            free(args);
            return -ENOMEM;
        }
        if (req->write) {
            uint8_t *p = rpc->bounce;

            for (size_t s = rpc->first; s < rpc->first + rpc->count; s++) {
                memcpy(p, req->segments[s].memory, req->segments[s].length);
                p += req->segments[s].length;
            }
        }
        rpc->iov[0].iov_base = rpc->bounce;
        rpc->iov[0].iov_len  = rpc->bytes;
        rpc->iov_count       = 1;
    } else {
        rpc->iov = calloc(rpc->count ? rpc->count : 1, sizeof(*rpc->iov));
        if (!rpc->iov) {
            free(args);
            return -ENOMEM;
        }
        for (size_t s = 0; s < rpc->count; s++) {
            rpc->iov[s].iov_base = req->segments[rpc->first + s].memory;
            rpc->iov[s].iov_len  = req->segments[rpc->first + s].length;
        }
        rpc->iov_count = rpc->count;
    }
    memset(&params, 0, sizeof(params));
    params.opcode      = opcode;
    params.args        = args;
    params.args_length = wb.length;
    if (req->write) {
        params.payload       = rpc->iov;
        params.payload_count = rpc->iov_count;
        /* a storage server on this host copies it out of our memory */
        params.allow_pull = 1;
    } else {
        params.reply_iov       = rpc->iov;
        params.reply_iov_count = rpc->iov_count;
    }
    rc = wb.error ? -EMSGSIZE : sfs_cluster_target_conn(file->client->cluster, target, &conn);
    if (rc == 0) {
        rc = sfs_tp_rpc_start(conn, &params, &rpc->rpc);
    }
    free(args);
    if (rc && sfs_client_mirror_retryable(&file->attr.pattern, rc)) {
        return 2;
    }
    if (rc) {
        char name[SFS_CLIENT_NAME_MAX];

        sfs_io_fail(req, rc, "%s: %s on %s: %s", file->path, sfs_op_name(opcode),
                    sfs_client_target_name(file->client, target, name, sizeof(name)),
                    sfs_error_detail());
    }
    return rc;
}

static void sfs_io_complete_rpc(sfs_request_t *req, sfs_io_rpc_t *rpc)
{
    int    status = sfs_tp_rpc_status(rpc->rpc);
    size_t length;

    rpc->done = 1;
    if (status && !req->status && !req->file->client->mirror_old_map &&
        sfs_client_mirror_retryable(&req->file->attr.pattern, status)) {
        rpc->done  = 0;
        rpc->retry = 1; /* sent again once the group has a primary that answers */
    } else if (status) {
        const char *detail = sfs_tp_rpc_error_detail(rpc->rpc);
        char        name[SFS_CLIENT_NAME_MAX];

        sfs_io_fail(req, status, "%s: %s on %s: %s", req->file->path, req->write ? "write" : "read",
                    sfs_client_target_name(req->file->client,
                                           req->file->attr.pattern.targets[rpc->target_index], name,
                                           sizeof(name)),
                    detail[0] ? detail : sfs_strerror(status));
    } else {
        const void *reply = sfs_tp_rpc_reply_args(rpc->rpc, &length);
        sfs_rbuf_t  rb;

        sfs_rbuf_init(&rb, reply, length);
        rpc->chunk_length = sfs_rbuf_u64(&rb);
        if (!req->write && rpc->bounce) {
            const uint8_t *p = rpc->bounce;

            for (size_t s = rpc->first; s < rpc->first + rpc->count; s++) {
                memcpy(req->segments[s].memory, p, req->segments[s].length);
                p += req->segments[s].length;
            }
        }
    }
    sfs_tp_rpc_release(rpc->rpc);
    rpc->rpc = NULL;
    free(rpc->bounce);
    rpc->bounce = NULL;
}

/* Collect the RPCs that have finished; returns how many. */
static size_t sfs_io_reap(sfs_request_t *req)
{
    size_t reaped = 0;

    for (size_t i = 0; i < req->next; i++) {
        sfs_io_rpc_t *rpc = &req->rpcs[req->order[i]];

        if (!rpc->done && rpc->rpc && sfs_tp_rpc_is_done(rpc->rpc)) {
            sfs_io_complete_rpc(req, rpc);
            req->in_flight--;
            if (rpc->retry) {
                req->retries++;
            } else {
                req->finished++;
            }
            reaped++;
        }
    }
    return reaped;
}

/* A mirrored file's requests that found no primary: once the others in
 * flight are done, wait (a pause, a map refresh) and send them again, to
 * the group's primary of the new map; past the failover deadline they
 * fail. The wait blocks, also in a non-blocking request's advance. */
static void sfs_io_retry(sfs_request_t *req)
{
    int rc =
        req->status ? req->status : sfs_client_mirror_wait(req->file->client, &req->deadline_ms);

    for (size_t i = 0; i < req->rpc_count && req->retries; i++) {
        sfs_io_rpc_t *rpc = &req->rpcs[i];
        int           started;

        if (!rpc->retry) {
            continue;
        }
        /* not to a member the map shows away: its return or the
         * promotion of its buddy, seen at the next map refresh */
        while (rc == 0 && !sfs_client_mirror_serving(req->file->client, &req->file->attr.pattern,
                                                     rpc->target_index)) {
            rc = sfs_client_mirror_wait(req->file->client, &req->deadline_ms);
        }
        rpc->retry = 0;
        req->retries--;
        free(rpc->iov);
        free(rpc->bounce);
        rpc->iov    = NULL;
        rpc->bounce = NULL;
        if (rc) {
            char name[SFS_CLIENT_NAME_MAX];

            rpc->done = 1;
            req->finished++;
            sfs_io_fail(req, rc, "%s: %s on %s: no member of its mirror group answered",
                        req->file->path, req->write ? "write" : "read",
                        sfs_client_target_name(req->file->client,
                                               req->file->attr.pattern.targets[rpc->target_index],
                                               name, sizeof(name)));
            continue;
        }
        started = sfs_io_start(req, rpc);
        if (started == 0) {
            req->in_flight++;
        } else if (started == 2) {
            rpc->retry = 1;
            req->retries++;
        } else {
            rpc->done = 1;
            req->finished++;
        }
    }
}

/* Move the request along; with `block`, until it is finished. Completed
 * RPCs are collected before blocking: they may have finished while the
 * caller waited on another request, and then nothing more will come to
 * wake a blocking progress call. */
void sfs_io_advance(sfs_request_t *req, int block)
{
    sfs_tp_worker_t *worker = req->file->client->worker;
    uint32_t         window = req->file->client->window;
    int              polled = 0;

    for (;;) {
        if (req->retries && req->in_flight == 0) {
            sfs_io_retry(req);
        }
        while (!req->status && req->next < req->rpc_count && req->in_flight < window) {
            sfs_io_rpc_t *rpc = &req->rpcs[req->order[req->next++]];
            int           rc  = sfs_io_start(req, rpc);

            if (rc == 2) {
                rpc->retry = 1;
                req->retries++;
                continue;
            }
            if (rc != 0) {
                rpc->done = 1;
                req->finished++;
                if (rc < 0) {
                    break;
                }
                continue; /* read here: nothing in flight */
            }
            req->in_flight++;
        }
        if (sfs_io_reap(req)) {
            continue;
        }
        if (req->in_flight == 0 && req->retries == 0 &&
            (req->status || req->next == req->rpc_count)) {
            return;
        }
        if (!block && polled) {
            return;
        }
        if (req->retries && req->in_flight == 0) {
            /* a retry that failed at once (no connection to the member):
             * nothing in flight would wake a blocking progress call;
             * sfs_io_retry waits, and gives up at the failover deadline */
            polled = 1;
            continue;
        }
        sfs_tp_worker_progress(worker, block ? -1 : 0);
        polled = 1;
    }
}

int sfs_io_finished(const sfs_request_t *req)
{
    return req->in_flight == 0 && req->retries == 0 && (req->status || req->next == req->rpc_count);
}

/* Bytes a read returns: a short chunk means the end of the file may be
 * inside the range, so the size decides. */
static ssize_t sfs_io_read_result(sfs_request_t *req)
{
    sfs_file_t *file                          = req->file;
    int         short_read                    = 0;
    uint64_t    lengths[SFS_STRIPE_COUNT_MAX] = {0};
    uint8_t     known[SFS_STRIPE_COUNT_MAX]   = {0};
    uint64_t    size, result = 0;
    int         rc;

    for (size_t i = 0; i < req->rpc_count; i++) {
        const sfs_io_rpc_t *rpc = &req->rpcs[i];

        short_read |= rpc->chunk_end > rpc->chunk_length;
        /* each reply said its chunk file's whole length: only the targets
         * this read did not reach are asked */
        if (rpc->chunk_length > lengths[rpc->target_index]) {
            lengths[rpc->target_index] = rpc->chunk_length;
        }
        known[rpc->target_index] = 1;
    }
    if (!short_read) {
        return (ssize_t)req->total;
    }
    rc = sfs_client_chunk_lengths_some(file->client, &file->attr, &file->cap, lengths, NULL, known);
    if (rc) {
        return rc;
    }
    size = sfs_layout_file_size(&file->attr.pattern, lengths);
    for (size_t e = 0; e < req->extent_count; e++) {
        const sfs_file_extent_t *x = &req->extents[e];

        if (x->offset < size) {
            result += size - x->offset < x->length ? size - x->offset : x->length;
        }
    }
    return (ssize_t)result;
}

int sfs_io_create(sfs_file_t *file, int write, const sfs_file_extent_t *extents,
                  size_t extent_count, const struct iovec *memory, size_t memory_count,
                  sfs_request_t **req_p)
{
    sfs_request_t *req;
    int            rc;

    SFS_ARG_CHECK(file, "the file is NULL");
    SFS_ARG_CHECK(extents || extent_count == 0, "extents is NULL");
    SFS_ARG_CHECK(memory || memory_count == 0, "memory is NULL");
    for (size_t i = 0; i < memory_count; i++) {
        SFS_ARG_CHECK(memory[i].iov_base || memory[i].iov_len == 0,
                      "a memory piece has no address but a length");
    }
    if (write && (file->flags & 0x3) == SFS_O_RDONLY) {
        return sfs_error_set(-EBADF, "%s is open read-only", file->path);
    }
    if (write && !file->privs_checked) {
        sfs_file_kill_privs(file);
    }
    sfs_file_cap_refresh(file);
    if (write && ((rc = sfs_file_writer_begin(file)) != 0 ||
                  (rc = sfs_file_quota_grow(file, extents, extent_count)) != 0)) {
        return rc;
    }
    if (!write && (file->flags & 0x3) == SFS_O_WRONLY) {
        return sfs_error_set(-EBADF, "%s is open write-only", file->path);
    }
    if (!SFS_ALLOC_PTR(req)) {
        return -ENOMEM;
    }
    req->file  = file;
    req->write = write;
    if (!write) {
        req->extents = malloc((extent_count ? extent_count : 1) * sizeof(*extents));
        if (!req->extents) {
            free(req);
            return -ENOMEM;
        }
        memcpy(req->extents, extents, extent_count * sizeof(*extents));
        req->extent_count = extent_count;
    }
    rc = sfs_io_segments(req, extents, extent_count, memory, memory_count);
    if (rc == 0) {
        rc = sfs_io_plan(req);
    }
    if (rc) {
        sfs_io_free(req);
        return rc;
    }
    if (write) {
        sfs_file_writer_extends(file, extents, extent_count);
    }
    *req_p = req;
    return 0;
}

ssize_t sfs_io_finish(sfs_request_t *req)
{
    ssize_t result;

    sfs_io_advance(req, 1);
    if (req->status) {
        result = sfs_error_set(req->status, "%s", req->detail);
    } else {
        result = req->write ? (ssize_t)req->total : sfs_io_read_result(req);
    }
    sfs_io_free(req);
    return result;
}

static ssize_t sfs_io_run(sfs_file_t *file, int write, const sfs_file_extent_t *extents,
                          size_t extent_count, const struct iovec *memory, size_t memory_count)
{
    for (int moved = 0;; moved++) {
        sfs_request_t *req = NULL;
        ssize_t        result;
        int rc = sfs_io_create(file, write, extents, extent_count, memory, memory_count, &req);

        if (rc) {
            return rc;
        }
        result = sfs_io_finish(req);
        /* once per move: the new pattern's targets answer */
        if (result != -ESTALE || moved >= (int)SFS_STRIPE_COUNT_MAX ||
            sfs_file_refetch_pattern(file) != 0) {
            return result;
        }
        sfs_debug("%s: its pattern changed (a chunk moved): %s again", file->path,
                  write ? "writing" : "reading");
    }
}

ssize_t sfs_file_writev(sfs_file_t *file, const sfs_file_extent_t *extents, size_t extent_count,
                        const struct iovec *memory, size_t memory_count)
{
    return sfs_io_run(file, 1, extents, extent_count, memory, memory_count);
}

ssize_t sfs_file_readv(sfs_file_t *file, const sfs_file_extent_t *extents, size_t extent_count,
                       const struct iovec *memory, size_t memory_count)
{
    return sfs_io_run(file, 0, extents, extent_count, memory, memory_count);
}

ssize_t sfs_file_pwrite(sfs_file_t *file, const void *buf, size_t length, uint64_t offset)
{
    sfs_file_extent_t extent = {offset, length};
    struct iovec      iov    = {(void *)buf, length};

    SFS_ARG_CHECK(file, "the file is NULL");
    SFS_ARG_CHECK(buf || length == 0, "buf is NULL");
    SFS_ARG_CHECK(length <= SSIZE_MAX, "length is over SSIZE_MAX");
    return length ? sfs_io_run(file, 1, &extent, 1, &iov, 1) : 0;
}

ssize_t sfs_file_pread(sfs_file_t *file, void *buf, size_t length, uint64_t offset)
{
    sfs_file_extent_t extent = {offset, length};
    struct iovec      iov    = {buf, length};

    SFS_ARG_CHECK(file, "the file is NULL");
    SFS_ARG_CHECK(buf || length == 0, "buf is NULL");
    SFS_ARG_CHECK(length <= SSIZE_MAX, "length is over SSIZE_MAX");
    return length ? sfs_io_run(file, 0, &extent, 1, &iov, 1) : 0;
}
