/*
 * The storage role: decode and check chunk requests on the progress thread,
 * run the disk I/O on the I/O threads, reply on the progress thread.
 */
#define SFS_LOG_FAC "storage"
#include "sfs_service.h"

#include "sfs_alloc.h"
#include "sfs_cap.h"
#include "sfs_chunk_store.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_storage_tunables.h"
#include "sfs_time.h"
#include "sfs_workq.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SFS_STORAGE_LIST_MAX 4096

struct sfs_storage {
    sfs_service_t       *service;
    sfs_chunk_target_t **targets;
    uint32_t             target_count;
    sfs_workq_t         *workq;
    uint64_t             in_flight;
    int                  hand_over_files; /* CHUNK_OPEN allowed (STRIPEFS_LOCAL_READ is not 0) */
    uint64_t             refusals;        /* requests refused for want of a capability */
};

typedef struct sfs_storage_op {
    sfs_work_t          work;
    sfs_storage_t      *storage;
    sfs_tp_request_t   *req;
    sfs_chunk_target_t *target;
    uint32_t            opcode;
    sfs_chunk_req_t     chunk; /* decoded request */
    void               *data;  /* WRITE: the payload; READ: the reply buffer */
    uint64_t            data_length;
    int                 owns_data; /* data is a pool buffer of ours */
    int                 pull;      /* WRITE: copy the payload from the client first */
    sfs_chunk_map_t     map;       /* READ served from the mapped chunk file */
    unsigned            io_flags;  /* SFS_CHUNK_IO_NOWAIT while tried inline */
    uint64_t            length;    /* chunk length after the operation */
    uint32_t            count;     /* CHUNK_UNLINK / CHUNK_LIST results */
    uint64_t           *ids;
    uint64_t           *lengths;
    int                 status;
    char                detail[SFS_ERROR_DETAIL_MAX];
} sfs_storage_op_t;

int sfs_storage_create(sfs_service_t *service, sfs_storage_t **storage_p)
{
    const sfs_rank_roles_t *mine = &service->plan->ranks[service->rank];
    sfs_storage_t          *storage;
    int                     rc;

    if (!SFS_ALLOC_PTR(storage) || !SFS_ALLOC_ARRAY(storage->targets, mine->target_count)) {
        free(storage);
        return -ENOMEM;
    }
    storage->service = service;
    for (uint32_t i = 0; i < mine->target_count; i++) {
        const sfs_config_target_t *config = &service->config->targets[mine->targets[i]];

        rc = sfs_chunk_target_open(config, service->config->cluster_name, &storage->targets[i]);
        if (rc) {
            goto err;
        }
        storage->target_count = i + 1;
        sfs_info("storage target %u in %s%s", config->id, config->dir,
                 config->bandwidth ? " (emulated disk bandwidth cap)" : "");
    }
    {
        bool hand_over;

        rc = sfs_tunable_bool(&sfs_storage_tunables, "STRIPEFS_LOCAL_READ", &hand_over);
        if (rc) {
            goto err;
        }
        storage->hand_over_files = hand_over;
    }
    rc = sfs_workq_create(service->config->io_threads, "storage-io", service->worker,
                          &storage->workq);
    if (rc) {
        goto err;
    }
    *storage_p = storage;
    return 0;

err:
    sfs_storage_destroy(storage);
    return rc;
}

void sfs_storage_destroy(sfs_storage_t *storage)
{
    if (!storage) {
        return;
    }
    if (storage->workq) {
        sfs_workq_destroy(storage->workq);
        /* replies of finished items are posted to the progress thread */
        while (storage->in_flight) {
            sfs_tp_worker_progress(storage->service->worker, 10);
        }
    }
    for (uint32_t i = 0; i < storage->target_count; i++) {
        sfs_chunk_target_close(storage->targets[i]);
    }
    free(storage->targets);
    free(storage);
}

uint32_t sfs_storage_report(sfs_storage_t *storage, sfs_target_report_t *reports, uint32_t max)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < storage->target_count && n < max; i++) {
        sfs_chunk_target_t  *target = storage->targets[i];
        sfs_target_report_t *r      = &reports[n];

        r->target_id = sfs_chunk_target_id(target);
        r->bandwidth = sfs_chunk_target_bandwidth(target);
        snprintf(r->dir, sizeof(r->dir), "%s", sfs_chunk_target_dir(target));
        if (sfs_chunk_target_space(target, &r->capacity, &r->free) != 0) {
            r->capacity = r->free = 0;
        }
        n++;
    }
    return n;
}

int sfs_storage_flush(sfs_storage_t *storage)
{
    int rc = 0;

    for (uint32_t i = 0; i < storage->target_count; i++) {
        int one = sfs_chunk_target_sync(storage->targets[i]);

        if (one) {
            sfs_error("%s", sfs_error_detail());
            rc = one;
        }
    }
    return rc;
}

static sfs_chunk_target_t *sfs_storage_find(sfs_storage_t *storage, uint32_t target_id)
{
    for (uint32_t i = 0; i < storage->target_count; i++) {
        if (sfs_chunk_target_id(storage->targets[i]) == target_id) {
            return storage->targets[i];
        }
    }
    return NULL;
}

/* CHUNK_OPEN: a client on this host reads the chunk file itself (pread from
 * the page cache: one copy, no round trip per read). Its writes still come
 * here. Not for a capped target: its reads must pass the cap. */
static int sfs_storage_hand_over(sfs_storage_op_t *op)
{
    uint32_t target_id = sfs_chunk_target_id(op->target);
    int      fd, rc;

    if (!op->storage->hand_over_files) {
        return sfs_error_set(-EOPNOTSUPP,
                             "target %u: files are not handed over here "
                             "(STRIPEFS_LOCAL_READ=0)",
                             target_id);
    }
    if (sfs_chunk_target_bandwidth(op->target) != 0) {
        return sfs_error_set(-EOPNOTSUPP, "target %u is capped: its reads go through the server",
                             target_id);
    }
    fd = sfs_chunk_open_readonly(op->target, op->chunk.entry_id);
    if (fd < 0) {
        return fd;
    }
    rc = sfs_tp_request_send_fd(op->req, fd);
    close(fd);
    return rc;
}

static void sfs_storage_run(sfs_work_t *work)
{
    sfs_storage_op_t   *op     = sfs_container_of(work, sfs_storage_op_t, work);
    sfs_chunk_target_t *target = op->target;
    sfs_chunk_req_t    *chunk  = &op->chunk;

    sfs_error_clear();
    switch (op->opcode) {
    case SFS_OP_WRITE:
        if (op->pull) {
            /* straight out of the client's memory, here on a disk thread
             * (never inline on the progress thread: sfs_storage_inline) */
            op->status = sfs_tp_request_pull(op->req, op->data, op->data_length);
            if (op->status) {
                break;
            }
            op->pull = 0;
        }
        op->status = sfs_chunk_write(
            target, chunk->entry_id, chunk->extents, chunk->extent_count, op->data,
            ((chunk->flags & SFS_WRITE_SYNC) ? SFS_CHUNK_IO_SYNC : 0) | op->io_flags, &op->length);
        break;
    case SFS_OP_READ:
        if (!op->data) { /* a candidate for a mapped read */
            op->status = sfs_chunk_read_map(target, chunk->entry_id, &chunk->extents[0], &op->map,
                                            &op->length);
            if (op->status == 0) {
                op->data = op->map.data;
                break;
            }
            if (op->status != -EAGAIN) {
                break;
            }
            op->data      = sfs_tp_buf_get(op->storage->service->worker, op->data_length);
            op->owns_data = 1;
            if (!op->data) {
                op->status = sfs_error_set(-ENOMEM, "out of memory for a %" PRIu64 "-byte read",
                                           op->data_length);
                break;
            }
        }
        op->status = sfs_chunk_read(target, chunk->entry_id, chunk->extents, chunk->extent_count,
                                    op->data, op->io_flags, &op->length);
        break;
    case SFS_OP_CHUNK_STAT:
        op->status = sfs_chunk_stat(target, chunk->entry_id, &op->length);
        break;
    case SFS_OP_TRUNCATE:
        op->status = sfs_chunk_truncate(target, chunk->entry_id, chunk->length, chunk->flags);
        op->length = chunk->length;
        break;
    case SFS_OP_FSYNC:
        op->status = sfs_chunk_fsync(target, chunk->entry_id);
        break;
    case SFS_OP_CHUNK_UNLINK:
        op->count = 0;
        for (uint32_t i = 0; i < chunk->extent_count; i++) {
            /* the ids travel in the extents' chunk_offset fields */
            int rc = sfs_chunk_unlink(target, chunk->extents[i].chunk_offset);

            if (rc) {
                op->status = rc;
                break;
            }
            op->count++;
        }
        break;
    case SFS_OP_CHUNK_OPEN:
        op->status = sfs_storage_hand_over(op);
        break;
    case SFS_OP_CHUNK_LIST:
        op->status = sfs_chunk_list(target, chunk->entry_id, (uint32_t)chunk->length, op->ids,
                                    op->lengths, &op->count);
        break;
    default:
        op->status = -EOPNOTSUPP;
        break;
    }
    if (op->status) {
        snprintf(op->detail, sizeof(op->detail), "%s",
                 sfs_error_detail()[0] ? sfs_error_detail() : sfs_strerror(op->status));
    } else if (op->opcode == SFS_OP_READ) {
        /* a client on this host that asked for it: the data goes straight into its buffer from
         * here (the page cache, when mapped), not through UCX; if that
         * cannot be done the reply carries the data as usual */
        struct iovec iov = {.iov_base = op->data, .iov_len = op->data_length};

        (void)sfs_tp_request_deliver(op->req, &iov, 1);
    }
}

static void sfs_storage_release_buf(void *arg)
{
    sfs_storage_op_t *op = arg;

    if (op->owns_data) {
        sfs_tp_buf_put(op->storage->service->worker, op->data);
    }
    if (op->map.addr) {
        sfs_chunk_unmap(op->target, &op->map);
    }
    free(op->ids);
    free(op->lengths);
    free(op);
}

static void sfs_storage_done(sfs_work_t *work)
{
    sfs_storage_op_t *op = sfs_container_of(work, sfs_storage_op_t, work);
    uint8_t           args[32];
    sfs_wbuf_t        wb;
    struct iovec      iov;

    op->storage->in_flight--;
    if (op->status) {
        /* a refused handoff is no error: the client reads through us */
        if (op->status != -ENOENT && !(op->pull && op->status == SFS_PULL_REFUSED) &&
            op->opcode != SFS_OP_CHUNK_OPEN) {
            sfs_warn("%s", op->detail);
        }
        sfs_tp_request_reply_error(op->req, op->status, "%s", op->detail);
        sfs_storage_release_buf(op);
        return;
    }
    sfs_wbuf_init(&wb, args, sizeof(args));
    switch (op->opcode) {
    case SFS_OP_READ:
        sfs_wbuf_u64(&wb, op->length);
        iov.iov_base = op->data;
        iov.iov_len  = op->data_length;
        sfs_tp_request_reply(op->req, 0, args, wb.length, &iov, 1, sfs_storage_release_buf, op);
        return;
    case SFS_OP_CHUNK_LIST: {
        uint8_t   *list = sfs_tp_buf_get(op->storage->service->worker, (size_t)op->count * 16 + 1);
        sfs_wbuf_t lb;

        if (!list) {
            sfs_tp_request_reply_error(op->req, -ENOMEM, "out of memory");
            sfs_storage_release_buf(op);
            return;
        }
        sfs_wbuf_init(&lb, list, (size_t)op->count * 16);
        for (uint32_t i = 0; i < op->count; i++) {
            sfs_wbuf_u64(&lb, op->ids[i]);
            sfs_wbuf_u64(&lb, op->lengths[i]);
        }
        op->data      = list; /* released with the op */
        op->owns_data = 1;
        sfs_wbuf_u32(&wb, op->count);
        iov.iov_base = list;
        iov.iov_len  = lb.length;
        sfs_tp_request_reply(op->req, 0, args, wb.length, &iov, 1, sfs_storage_release_buf, op);
        return;
    }
    case SFS_OP_CHUNK_UNLINK:
        sfs_wbuf_u32(&wb, op->count);
        break;
    default:
        sfs_wbuf_u64(&wb, op->length);
        break;
    }
    sfs_tp_request_reply(op->req, 0, args, wb.length, NULL, 0, NULL, NULL);
    sfs_storage_release_buf(op);
}

/* Large single-extent reads whose pages are in the page cache are served
 * from the chunk file mapped into the server: no copy into a buffer (the
 * transport reads the page cache). The disk thread maps the file, or, when
 * the pages must come from the disk, reads them into a buffer. Safe on
 * every transport (see sfs_chunk_read_map). */
static int sfs_storage_map_candidate(const sfs_storage_t *storage, const sfs_storage_op_t *op,
                                     uint64_t bytes)
{
    return storage->service->config->mapped_read_min != 0 &&
           bytes >= storage->service->config->mapped_read_min && op->chunk.extent_count == 1 &&
           sfs_chunk_target_bandwidth(op->target) == 0;
}

/* Small reads and writes are tried on the progress thread itself: handing
 * them to a disk thread and back costs two thread wakeups, more than the
 * copy into or out of the page cache. They never wait for the disk there
 * (SFS_CHUNK_IO_NOWAIT: an open file, the page cache only); what would
 * goes to a disk thread. Not on a throttled target (it sleeps), and not
 * for a synchronous write. */
static int sfs_storage_inline(const sfs_storage_t *storage, const sfs_storage_op_t *op,
                              uint64_t bytes)
{
    uint64_t limit = storage->service->config->inline_io_max;

    /* (a pulled payload is copied on a disk thread: not on this one) */
    if (bytes > limit || sfs_chunk_target_bandwidth(op->target) != 0 || op->pull) {
        return 0;
    }
    switch (op->opcode) {
    case SFS_OP_WRITE:
        return !(op->chunk.flags & SFS_WRITE_SYNC);
    case SFS_OP_READ:
        return 1;
    default:
        return 0;
    }
}

/* CHUNK_UNLINK carries a list of entry ids; decode it into the extents. */
static int sfs_storage_unpack_unlink(sfs_rbuf_t *rb, sfs_chunk_req_t *chunk)
{
    chunk->target_id    = sfs_rbuf_u32(rb);
    chunk->extent_count = sfs_rbuf_u32(rb);
    if (rb->error || chunk->extent_count > SFS_PROTO_MAX_EXTENTS) {
        return -EBADMSG;
    }
    for (uint32_t i = 0; i < chunk->extent_count; i++) {
        chunk->extents[i].chunk_offset = sfs_rbuf_u64(rb);
        chunk->extents[i].length       = 0;
    }
    return rb->error ? -EBADMSG : 0;
}

/* I/O needs a capability from the metadata server's open (sfs_cap.h);
 * removing and listing chunk files is for servers and administrators. */
static int sfs_storage_authorize(sfs_storage_t *storage, sfs_tp_request_t *req, uint32_t opcode,
                                 const sfs_chunk_req_t *chunk)
{
    sfs_tp_session_t *session = sfs_tp_request_session(req);
    const sfs_cred_t *cred    = sfs_tp_session_cred(session);
    uint32_t          access;
    int               rc;

    if (cred->flags & SFS_CRED_SERVER) {
        return 0;
    }
    switch (opcode) {
    case SFS_OP_READ:
    case SFS_OP_CHUNK_OPEN:
        access = SFS_CAP_READ;
        break;
    case SFS_OP_WRITE:
    case SFS_OP_TRUNCATE:
        access = SFS_CAP_WRITE;
        break;
    case SFS_OP_CHUNK_STAT:
    case SFS_OP_FSYNC:
        access = 0;
        break;
    default:
        if (sfs_cred_admin(cred)) {
            return 0;
        }
        rc = sfs_error_set(-EPERM, "%s is for servers and administrators", sfs_op_name(opcode));
        goto refused;
    }
    rc = sfs_cap_check(&storage->service->cap_key, &chunk->cap, chunk->entry_id, access, cred->uid,
                       sfs_wall_ns() / 1000000000u);
    if (rc == 0) {
        return 0;
    }
refused:
    if (storage->refusals++ < 20) {
        sfs_warn("refused %s on target %u from uid %u (%s pid %u): %s", sfs_op_name(opcode),
                 chunk->target_id, cred->uid, sfs_tp_session_peer_host(session),
                 sfs_tp_session_peer_pid(session), sfs_error_detail());
    }
    return rc;
}

void sfs_storage_handle(sfs_storage_t *storage, sfs_tp_request_t *req)
{
    uint32_t          opcode = sfs_tp_request_opcode(req);
    sfs_storage_op_t *op;
    const void       *args;
    size_t            args_length, payload_length;
    void             *payload;
    sfs_rbuf_t        rb;
    uint64_t          bytes;
    int               rc;

    if (!SFS_ALLOC_PTR(op)) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    op->storage = storage;
    op->req     = req;
    op->opcode  = opcode;
    args        = sfs_tp_request_args(req, &args_length);
    payload     = sfs_tp_request_payload(req, &payload_length);
    sfs_rbuf_init(&rb, args, args_length);
    if (opcode == SFS_OP_CHUNK_UNLINK) {
        sfs_storage_unpack_unlink(&rb, &op->chunk);
    } else {
        sfs_proto_chunk_req_unpack(&rb, opcode, &op->chunk);
    }
    if (rb.error || sfs_rbuf_remaining(&rb) != 0) {
        sfs_tp_request_reply_error(req, -EBADMSG, "malformed %s request", sfs_op_name(opcode));
        goto err;
    }
    rc = sfs_storage_authorize(storage, req, opcode, &op->chunk);
    if (rc) {
        sfs_tp_request_reply_error(req, rc, "%s", sfs_error_detail());
        goto err;
    }
    op->target = sfs_storage_find(storage, op->chunk.target_id);
    if (!op->target) {
        sfs_tp_request_reply_error(req, -ENODEV, "rank %u does not serve storage target %u",
                                   storage->service->rank, op->chunk.target_id);
        goto err;
    }
    bytes = sfs_chunk_req_bytes(&op->chunk);
    switch (opcode) {
    case SFS_OP_WRITE:
        if (sfs_tp_request_pull_length(req) != 0) {
            if (bytes != sfs_tp_request_pull_length(req) ||
                bytes > sfs_tp_worker_max_payload(storage->service->worker)) {
                sfs_tp_request_reply_error(req, -EBADMSG,
                                           "WRITE extents cover %" PRIu64
                                           " bytes, the pulled payload %" PRIu64,
                                           bytes, sfs_tp_request_pull_length(req));
                goto err;
            }
            op->data        = sfs_tp_buf_get(storage->service->worker, bytes);
            op->data_length = bytes;
            op->owns_data   = 1;
            op->pull        = 1;
            if (!op->data) {
                sfs_tp_request_reply_error(req, -ENOMEM,
                                           "out of memory for a %" PRIu64 "-byte write", bytes);
                goto err;
            }
            break;
        }
        if (bytes != payload_length) {
            sfs_tp_request_reply_error(req, -EBADMSG,
                                       "WRITE extents cover %" PRIu64 " bytes, payload has %zu",
                                       bytes, payload_length);
            goto err;
        }
        /* written straight from the request's buffer, which lives until
         * the reply has gone */
        op->data        = payload;
        op->data_length = payload_length;
        break;
    case SFS_OP_READ:
        if (bytes > sfs_tp_worker_max_payload(storage->service->worker)) {
            sfs_tp_request_reply_error(req, -EMSGSIZE, "READ of %" PRIu64 " bytes is too large",
                                       bytes);
            goto err;
        }
        op->data_length = bytes;
        if (sfs_storage_map_candidate(storage, op, bytes)) {
            break; /* the disk thread maps the file or gets a buffer */
        }
        op->data      = sfs_tp_buf_get(storage->service->worker, bytes ? bytes : 1);
        op->owns_data = 1;
        if (!op->data) {
            sfs_tp_request_reply_error(req, -ENOMEM, "out of memory for a %" PRIu64 "-byte read",
                                       bytes);
            goto err;
        }
        break;
    case SFS_OP_CHUNK_LIST:
        if (op->chunk.length == 0 || op->chunk.length > SFS_STORAGE_LIST_MAX) {
            op->chunk.length = SFS_STORAGE_LIST_MAX;
        }
        op->ids     = calloc(op->chunk.length, sizeof(uint64_t));
        op->lengths = calloc(op->chunk.length, sizeof(uint64_t));
        if (!op->ids || !op->lengths) {
            sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
            goto err;
        }
        break;
    default:
        if (payload_length) {
            sfs_tp_request_reply_error(req, -EBADMSG, "%s carries no payload", sfs_op_name(opcode));
            goto err;
        }
        break;
    }
    op->work.run  = sfs_storage_run;
    op->work.done = sfs_storage_done;
    storage->in_flight++;
    if (sfs_storage_inline(storage, op, bytes)) {
        op->io_flags = SFS_CHUNK_IO_NOWAIT;
        sfs_storage_run(&op->work);
        op->io_flags = 0;
        if (op->status != -EAGAIN) {
            sfs_storage_done(&op->work);
            return;
        }
        op->status = 0; /* it would wait for the disk: a disk thread does it */
    }
    sfs_workq_submit(storage->workq, &op->work);
    return;

err:
    if (op->owns_data && op->data) {
        sfs_tp_buf_put(storage->service->worker, op->data);
    }
    free(op->ids);
    free(op->lengths);
    free(op);
}
