/*
 * Handlers of the storage role's requests (sfs_handlers.h), on the progress
 * thread: decode a chunk request with its codec, check its capability and
 * target, size its buffers, then run it inline or on an I/O thread
 * (sfs_storage.c).
 */
#define SFS_LOG_FAC "storage"
#include "sfs_handlers.h"

#include "sfs_storage_internal.h"

#include "sfs_chunk_tombstone.h"

#include "sfs_alloc.h"
#include "sfs_cap.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <inttypes.h>
#include <stdlib.h>

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
 * copy into or out of the page cache. So are mapped reads of any size
 * (no copy at all: the chunk file's pages are sent). They never wait for
 * the disk there (SFS_CHUNK_IO_NOWAIT: an open file, the page cache only);
 * what would goes to a disk thread. Not on a throttled target (it sleeps),
 * and not for a synchronous write. */
static int sfs_storage_inline(const sfs_storage_t *storage, const sfs_storage_op_t *op,
                              uint64_t bytes)
{
    uint64_t limit  = storage->service->config->inline_io_max;
    int      mapped = op->opcode == SFS_OP_READ && !op->data; /* sfs_storage_map_candidate */

    /* (a pulled payload is copied on a disk thread: not on this one) */
    if ((bytes > limit && !mapped) || sfs_chunk_target_bandwidth(op->target) != 0 || op->pull) {
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

/* A WRITE or TRUNCATE with a capability of SFS_CAP_BOUNDED (its file's
 * owner or group has a space quota) must stay within the write bound of
 * the metadata server's last grant (sfs_proto_bound.h, docs/quotas.md):
 * the bound's end turned into the length this target's chunk file may
 * reach. No bound: -EDQUOT; forged or another's: -EACCES; expired:
 * -EKEYEXPIRED. A shrinking truncate is never past it. */
static int sfs_storage_bound_check(sfs_storage_t *storage, uint32_t opcode,
                                   const sfs_chunk_req_t *chunk, uint32_t uid)
{
    const sfs_config_mirror_group_t *group;
    uint32_t                         ids[2] = {chunk->target_id, 0}, index;
    uint64_t                         limit, end = 0;
    int                              rc;

    if (!(chunk->flags & SFS_CHUNK_BOUND)) {
        return sfs_error_set(-EDQUOT,
                             "entry %" PRIu64 " on target %" PRIu32
                             ": %s without a write bound (the owner's space quota needs one: "
                             "the metadata server grants it)",
                             chunk->entry_id, chunk->target_id, sfs_op_name(opcode));
    }
    /* a mirrored file's chunk file is on either target of its group */
    group = sfs_config_mirror_group_of(storage->service->config, chunk->target_id);
    if (group) {
        ids[1] = group->primary == chunk->target_id ? group->secondary : group->primary;
    }
    rc = sfs_bound_check(&storage->service->cap_key, &chunk->bound, chunk->entry_id, uid, ids,
                         sfs_wall_ns() / 1000000000u, &index);
    if (rc) {
        return rc;
    }
    /* the length this target's chunk file may reach, exact for any pattern */
    limit = chunk->bound.end == SFS_BOUND_UNLIMITED
                ? UINT64_MAX
                : sfs_layout_chunk_length_for_size(&chunk->bound.pattern, index, chunk->bound.end);
    if (opcode == SFS_OP_WRITE) {
        for (uint32_t i = 0; i < chunk->extent_count; i++) {
            uint64_t e = chunk->extents[i].chunk_offset + chunk->extents[i].length;

            if (chunk->extents[i].length && e > end) {
                end = e; /* (the codec refused offsets that wrap) */
            }
        }
    } else if (!(chunk->flags & SFS_TRUNCATE_SHRINK_ONLY)) {
        end = chunk->length;
    }
    if (end > limit) {
        return sfs_error_set(
            -EDQUOT,
            "entry %" PRIu64 ": %s to %" PRIu64 " bytes of its chunk file on target %" PRIu32
            " passes its write bound (file offset %" PRIu64 ": %" PRIu64
            " bytes on this target): the owner's space quota",
            chunk->entry_id, sfs_op_name(opcode), end, chunk->target_id, chunk->bound.end, limit);
    }
    return 0;
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
    if (chunk->flags & SFS_CHUNK_BUDDY) {
        /* a copy between a mirror group's members: from a client it would
         * change one copy only (docs/mirroring.md) */
        rc = sfs_error_set(-EPERM, "%s flagged as a copy from a mirror buddy is for servers only",
                           sfs_op_name(opcode));
        goto refused;
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
    if (rc == 0 && access == SFS_CAP_WRITE && (chunk->cap.access & SFS_CAP_BOUNDED)) {
        rc = sfs_storage_bound_check(storage, opcode, chunk, cred->uid); /* one bit test else */
    }
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

/* The checks every chunk request passes: its capability (or a server's or
 * administrator's session), and a target of ours. */
static int sfs_storage_admit(sfs_storage_t *storage, sfs_storage_op_t *op)
{
    int rc = sfs_storage_authorize(storage, op->req, op->opcode, &op->chunk);

    if (rc) {
        sfs_tp_request_reply_error(op->req, rc, "%s", sfs_error_detail());
        return rc;
    }
    /* checked: a mirrored file's forward to the buddy carries no bound */
    op->chunk.flags &= ~SFS_CHUNK_BOUND;
    op->target = sfs_storage_find(storage, op->chunk.target_id);
    if (!op->target) {
        sfs_tp_request_reply_error(op->req, -ENODEV, "rank %u does not serve storage target %u",
                                   storage->service->rank, op->chunk.target_id);
        return -ENODEV;
    }
    return 0;
}

void sfs_storage_submit(sfs_storage_t *storage, sfs_storage_op_t *op, uint64_t bytes)
{
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
}

static sfs_storage_op_t *sfs_storage_op_new(sfs_storage_t *storage, sfs_tp_request_t *req)
{
    sfs_storage_op_t *op;

    if (!SFS_ALLOC_PTR(op)) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return NULL;
    }
    op->storage = storage;
    op->req     = req;
    op->opcode  = sfs_tp_request_opcode(req);
    return op;
}

void sfs_handle_chunk_unlink(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_storage_t    *storage = service->storage;
    sfs_storage_op_t *op      = sfs_storage_op_new(storage, req);

    if (!op) {
        return;
    }
    if (!SFS_ALLOC_PTR(op->unlink)) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        goto err;
    }
    if (sfs_handler_decode(req, op->unlink, sizeof(*op->unlink), 0) != 0) {
        goto err;
    }
    op->chunk.target_id = op->unlink->target_id;
    if (sfs_storage_admit(storage, op) != 0 || sfs_storage_mirror_admit(storage, op) != 0) {
        goto err;
    }
    sfs_storage_mirror_start(storage, op, 0);
    return;

err:
    sfs_storage_op_free(op);
}

void sfs_handle_chunk(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_storage_t    *storage = service->storage;
    sfs_storage_op_t *op      = sfs_storage_op_new(storage, req);
    uint32_t          opcode  = sfs_tp_request_opcode(req);
    size_t            payload_length;
    void             *payload = sfs_tp_request_payload(req, &payload_length);
    uint64_t          bytes;

    if (!op) {
        return;
    }
    if (sfs_handler_decode(req, &op->chunk, sizeof(op->chunk), opcode == SFS_OP_WRITE) != 0 ||
        sfs_storage_admit(storage, op) != 0 || sfs_tombstones_admit(storage, op) != 0 ||
        sfs_storage_mirror_admit(storage, op) != 0) {
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
        break;
    }
    sfs_storage_mirror_start(storage, op, bytes);
    return;

err:
    if (op->owns_data && op->data) {
        sfs_tp_buf_put(storage->service->worker, op->data);
    }
    sfs_storage_op_free(op);
}
