/*
 * The storage role: its targets, the disk I/O of a chunk request (on an I/O
 * thread, or inline on the progress thread when it cannot wait) and its
 * reply (on the progress thread). Requests are decoded and checked in
 * sfs_storage_handlers.c.
 */
#define SFS_LOG_FAC "storage"
#include "sfs_service.h"

#include "sfs_storage_internal.h"

#include "sfs_alloc.h"
#include "sfs_cap.h"
#include "sfs_chunk_removed.h"
#include "sfs_chunk_store.h"
#include "sfs_chunk_tombstone.h"
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
    {
        int64_t early;

        rc = sfs_tunable_int(&sfs_storage_tunables, "STRIPEFS_EARLY_WRITEBACK", &early);
        if (rc) {
            goto err;
        }
        for (uint32_t i = 0; i < storage->target_count; i++) {
            sfs_chunk_target_set_early_writeback(storage->targets[i], (uint64_t)early);
        }
    }
    {
        int64_t jitter;

        rc = sfs_tunable_int(&sfs_storage_tunables, "STRIPEFS_TEST_WRITE_JITTER_US", &jitter);
        if (rc) {
            goto err;
        }
        storage->write_jitter_us = (uint32_t)jitter;
        if (jitter) {
            sfs_warn("STRIPEFS_TEST_WRITE_JITTER_US=%" PRId64 ": writes are delayed at random "
                     "(testing only)",
                     jitter);
        }
    }
    rc = sfs_workq_create(service->config->io_threads, "storage-io", service->worker,
                          &storage->workq);
    if (rc) {
        goto err;
    }
    rc = sfs_storage_mirror_init(storage);
    if (rc) {
        goto err;
    }
    rc = sfs_tombstones_create(storage);
    if (rc) {
        goto err;
    }
    rc = sfs_chunk_removed_create(SFS_CHUNK_REMOVED_MAX, SFS_CHUNK_REMOVED_KEEP_MS,
                                  &storage->removed);
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
        /* mirrored requests first: one waiting for an overlapping one is
         * started when that one is done on both copies, on the disk
         * threads (the forwards end within the RPC timeout) */
        while (storage->mirror_head) {
            sfs_tp_worker_progress(storage->service->worker, 10);
        }
        sfs_workq_destroy(storage->workq);
        /* replies of finished items are posted to the progress thread */
        while (storage->in_flight) {
            sfs_tp_worker_progress(storage->service->worker, 10);
        }
    }
    sfs_storage_mirror_fini(storage);
    sfs_tombstones_destroy(storage);
    sfs_chunk_removed_destroy(storage->removed);
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

int sfs_storage_identities(sfs_storage_t *storage, sfs_target_identity_t *ids, uint32_t max,
                           uint32_t *count_p)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < storage->target_count && n < max; i++, n++) {
        int rc;

        memset(&ids[n], 0, sizeof(ids[n]));
        ids[n].target_id = sfs_chunk_target_id(storage->targets[i]);
        rc = sfs_chunk_target_fs_id(storage->targets[i], &ids[n].fs_id, &ids[n].chunks);
        if (rc) {
            return rc;
        }
    }
    *count_p = n;
    return 0;
}

int sfs_storage_set_identity(sfs_storage_t *storage, uint64_t fs_id)
{
    for (uint32_t i = 0; i < storage->target_count; i++) {
        uint64_t had, chunks;
        int      rc = sfs_chunk_target_fs_id(storage->targets[i], &had, &chunks);

        if (rc == 0 && had != fs_id) { /* none, or a new file system's over no chunk */
            rc = sfs_chunk_target_set_fs_id(storage->targets[i], fs_id);
        }
        if (rc) {
            return rc;
        }
    }
    return 0;
}

int sfs_storage_has_news(sfs_storage_t *storage)
{
    for (uint32_t i = 0; i < storage->target_count; i++) {
        if (sfs_chunk_target_has_news(storage->targets[i])) {
            return 1;
        }
    }
    return 0;
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

sfs_chunk_target_t *sfs_storage_find(sfs_storage_t *storage, uint32_t target_id)
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

void sfs_storage_run(sfs_work_t *work)
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
        if (op->storage->write_jitter_us && !(op->io_flags & SFS_CHUNK_IO_NOWAIT)) {
            usleep((useconds_t)(sfs_time_ns() % op->storage->write_jitter_us));
        }
        op->status = sfs_chunk_write(
            target, chunk->entry_id, chunk->extents, chunk->extent_count, op->data,
            ((chunk->flags & SFS_WRITE_SYNC) ? SFS_CHUNK_IO_SYNC : 0) | op->io_flags, &op->length);
        break;
    case SFS_OP_READ:
        if (!op->data) { /* a candidate for a mapped read */
            op->status = sfs_chunk_read_map(target, chunk->entry_id, &chunk->extents[0],
                                            op->io_flags, &op->map, &op->length);
            if (op->status == 0) {
                op->data = op->map.data;
                break;
            }
            if (op->status != -EAGAIN || (op->io_flags & SFS_CHUNK_IO_NOWAIT)) {
                break; /* (inline: a disk thread maps it, or reads it) */
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
        for (uint32_t i = 0; i < op->unlink->count; i++) {
            int rc = sfs_chunk_unlink(target, op->unlink->entry_ids[i]);

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

void sfs_storage_op_free(sfs_storage_op_t *op)
{
    free(op->forward_args);
    free(op->ids);
    free(op->lengths);
    free(op->unlink);
    free(op);
}

void sfs_storage_release_buf(void *arg)
{
    sfs_storage_op_t *op = arg;

    if (op->owns_data) {
        sfs_tp_buf_put(op->storage->service->worker, op->data);
    }
    if (op->map.addr) {
        sfs_chunk_unmap(op->target, &op->map);
    }
    sfs_storage_op_free(op);
}

void sfs_storage_reply_length(sfs_tp_request_t *req, uint64_t length)
{
    sfs_length_reply_t reply = {.length = length};
    uint8_t            args[32];
    sfs_wbuf_t         wb;

    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_length_reply_pack(&wb, &reply);
    sfs_tp_request_reply(req, 0, args, wb.length, NULL, 0, NULL, NULL);
}

/* A server's CHUNK_UNLINK (a removed file's deletion, a resync's) is
 * remembered a while, so that a stale copy from the buddy does not make
 * the chunk file again (sfs_chunk_removed.h). An administrator's is not:
 * stripefs-ctl migrate removes a failed move's copy of a live file. */
static void sfs_storage_note_removed(sfs_storage_op_t *op)
{
    const sfs_cred_t *cred = sfs_tp_session_cred(sfs_tp_request_session(op->req));
    uint64_t          now  = sfs_time_ms();

    if (op->status || !(cred->flags & SFS_CRED_SERVER)) {
        return;
    }
    for (uint32_t i = 0; i < op->count; i++) {
        if (sfs_chunk_removed_note(op->storage->removed, op->unlink->target_id,
                                   op->unlink->entry_ids[i], now) != 0) {
            sfs_warn("target %u: out of memory remembering removed chunk files",
                     op->unlink->target_id);
            return; /* a late copy could make one again: fsck lists it */
        }
    }
}

void sfs_storage_done(sfs_work_t *work)
{
    sfs_storage_op_t  *op     = sfs_container_of(work, sfs_storage_op_t, work);
    sfs_length_reply_t length = {.length = op->length};
    uint8_t            args[32];
    sfs_wbuf_t         wb;
    struct iovec       iov;

    op->storage->in_flight--;
    if (op->mirror && sfs_storage_mirror_step(op)) {
        return; /* on to the buddy */
    }
    if (op->opcode == SFS_OP_CHUNK_UNLINK && op->status == 0) {
        op->status = sfs_storage_mirror_unlinked(op);
        sfs_storage_note_removed(op);
    }
    if (op->mirror_read) {
        sfs_storage_mirror_answer(op);
    }
    sfs_tombstones_recheck(op->storage, op);
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
        sfs_proto_length_reply_pack(&wb, &length);
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
        sfs_proto_chunk_list_reply_pack(&wb, &(sfs_chunk_list_reply_t){.count = op->count});
        iov.iov_base = list;
        iov.iov_len  = lb.length;
        sfs_tp_request_reply(op->req, 0, args, wb.length, &iov, 1, sfs_storage_release_buf, op);
        return;
    }
    case SFS_OP_CHUNK_UNLINK:
        sfs_proto_chunk_unlink_reply_pack(&wb, &(sfs_chunk_unlink_reply_t){.removed = op->count});
        break;
    default:
        sfs_proto_length_reply_pack(&wb, &length);
        break;
    }
    sfs_tp_request_reply(op->req, 0, args, wb.length, NULL, 0, NULL, NULL);
    sfs_storage_release_buf(op);
}
