/*
 * Replies of the metadata role, on the progress thread once a batch has
 * been committed: each operation's results packed for the wire, with a
 * capability for the storage targets where a file was looked up or
 * created.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_service.h"

#include "sfs_meta_drain.h"
#include "sfs_meta_internal.h"

#include "sfs_cap.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sfs_meta_free_op(sfs_meta_op_t *op)
{
    free(op->list_data);
    free(op->ids);
    free(op);
}

static void sfs_meta_release_op(void *arg)
{
    sfs_meta_free_op(arg);
}

/* A file looked up or created gets a capability for its storage targets,
 * granting what was checked: read and/or write for an open (SFS_OPEN_*),
 * only its chunk lengths (its size) otherwise (sfs_cap.h). */
static void sfs_meta_open_reply(sfs_meta_t *meta, const sfs_meta_op_t *op, sfs_wbuf_t *wb)
{
    uint32_t         lifetime_s = meta->service->config->capability_lifetime_ms / 1000;
    sfs_open_reply_t reply;

    memset(&reply, 0, sizeof(reply));
    reply.attr    = op->attr;
    reply.created = (uint8_t)op->created; /* 0, 1, SFS_CREATED_WRITER(_QUOTA) */
    if (op->attr.type == SFS_TYPE_FILE &&
        (op->opcode == SFS_OP_LOOKUP || op->opcode == SFS_OP_CREATE)) {
        sfs_cap_t *cap = &reply.cap;

        reply.has_cap = 1;
        cap->entry_id = op->attr.entry_id;
        cap->access   = ((op->args.flags & SFS_OPEN_READ) ? SFS_CAP_READ : 0) |
                      ((op->args.flags & SFS_OPEN_WRITE) ? SFS_CAP_WRITE : 0) |
                      (op->bounded ? SFS_CAP_BOUNDED : 0); /* sfs_meta_quota_open_bound */
        cap->uid       = op->cred.uid;
        cap->expires_s = sfs_wall_ns() / 1000000000u + (lifetime_s ? lifetime_s : 1);
        sfs_cap_seal(&meta->service->cap_key, cap);
    }
    sfs_proto_open_reply_pack(wb, op->opcode, &reply);
}

/* STAT: the attributes, the kept size where it is exact, and a
 * capability to ask the targets (chunk lengths only) where it is not. */
static void sfs_meta_stat_reply(sfs_meta_t *meta, const sfs_meta_op_t *op, sfs_wbuf_t *wb)
{
    uint32_t         lifetime_s = meta->service->config->capability_lifetime_ms / 1000;
    sfs_stat_reply_t reply;

    memset(&reply, 0, sizeof(reply));
    reply.attr       = op->attr;
    reply.size_valid = (uint8_t)(op->stored == 1);
    if (op->stored == 2) {
        reply.attr.size = SFS_STAT_SIZE_WRITING; /* the client sends no SIZE STORE */
    }
    if (op->attr.type == SFS_TYPE_FILE) {
        reply.has_cap       = 1;
        reply.cap.entry_id  = op->attr.entry_id;
        reply.cap.uid       = op->cred.uid;
        reply.cap.expires_s = sfs_wall_ns() / 1000000000u + (lifetime_s ? lifetime_s : 1);
        sfs_cap_seal(&meta->service->cap_key, &reply.cap);
    }
    reply.count = op->count;
    reply.eof   = (uint8_t)(op->eof != 0);
    sfs_proto_stat_reply_pack(wb, &reply);
}

static void sfs_meta_page_reply(const sfs_meta_op_t *op, sfs_wbuf_t *wb)
{
    sfs_page_reply_t page = {.count = op->count, .eof = (uint8_t)(op->eof != 0)};

    sfs_proto_page_reply_pack(wb, &page);
}

static void sfs_meta_reply(sfs_meta_t *meta, sfs_meta_op_t *op)
{
    uint8_t      args[SFS_PROTO_ARGS_MAX];
    sfs_wbuf_t   wb;
    struct iovec iov;

    if (!op->req) { /* internal */
        if (op->status) {
            sfs_warn("internal metadata operation failed: %s", op->detail);
        }
        sfs_meta_free_op(op);
        return;
    }
    if (op->status) {
        sfs_tp_request_reply_error(op->req, op->status, "%s", op->detail);
        sfs_meta_free_op(op);
        return;
    }
    sfs_wbuf_init(&wb, args, sizeof(args));
    switch (op->opcode) {
    case SFS_OP_LOOKUP:
    case SFS_OP_MKDIR:
    case SFS_OP_UNLINK:
    case SFS_OP_SETPATTERN:
    case SFS_OP_SETATTR:
    case SFS_OP_CREATE:
        sfs_meta_open_reply(meta, op, &wb);
        break;
    case SFS_OP_STAT: {
        /* an entry: name, id, type, attributes, size */
        size_t     per = (2 + SFS_NAME_MAX + 12) + (128 + 4 * SFS_STRIPE_COUNT_MAX) + 9;
        size_t     cap = per * op->count + 1;
        uint8_t   *buf;
        sfs_wbuf_t pb;

        sfs_meta_stat_reply(meta, op, &wb);
        if (op->count == 0) {
            break;
        }
        buf = malloc(cap);
        if (!buf) {
            sfs_tp_request_reply_error(op->req, -ENOMEM, "out of memory");
            sfs_meta_free_op(op);
            return;
        }
        sfs_wbuf_init(&pb, buf, cap);
        for (uint32_t i = 0; i < op->count; i++) {
            sfs_proto_dirent_plus_pack(&pb, &((sfs_dirent_plus_t *)op->list_data)[i]);
        }
        free(op->list_data);
        op->list_data = buf;
        iov.iov_base  = buf;
        iov.iov_len   = pb.length;
        sfs_tp_request_reply(op->req, 0, args, wb.length, &iov, 1, sfs_meta_release_op, op);
        return;
    }
    case SFS_OP_SIZE:
        if (op->size.op == SFS_SIZE_OP_BEGIN && (op->size.cap.access & SFS_CAP_BOUNDED)) {
            /* the targets' write bound of BEGIN's grant (sfs_proto_bound.h) */
            op->size_reply.base |= SFS_SIZE_BOUND;
            sfs_meta_quota_bound(meta, op, &op->size.cap,
                                 (op->size_reply.base & SFS_SIZE_QUOTA) ? op->size_reply.granted
                                                                        : SFS_BOUND_UNLIMITED,
                                 &op->size_reply.bound);
        }
        sfs_proto_size_reply_pack(&wb, &op->size_reply);
        break;
    case SFS_OP_QUOTA_GET:
    case SFS_OP_QUOTA_GROW:
        if (sfs_meta_quota_reply(meta, op, &wb, &iov) != 0) {
            sfs_tp_request_reply_error(op->req, -ENOMEM, "out of memory");
            sfs_meta_free_op(op);
            return;
        }
        if (iov.iov_len == 0) {
            break;
        }
        sfs_tp_request_reply(op->req, 0, args, wb.length, &iov, 1, sfs_meta_release_op, op);
        return;
    case SFS_OP_POOL_GET: {
        sfs_pool_reply_t reply = {.pool = op->attr.pool};

        /* the name as the metadata thread saw it (sfs_meta_run.c) */
        snprintf(reply.name, sizeof(reply.name), "%s", op->args.pool);
        sfs_proto_pool_reply_pack(&wb, &reply);
        break;
    }
    case SFS_OP_META_STATFS:
        sfs_proto_meta_statfs_pack(&wb, &op->stats);
        break;
    case SFS_OP_MIGRATE_DRAIN: /* committed: the chooser takes it (sfs_meta_drain.c) */
        if (sfs_meta_drain_reply(meta, op, &wb) != 0) {
            sfs_tp_request_reply_error(op->req, -ENOMEM, "out of memory");
            sfs_meta_free_op(op);
            return;
        }
        break;
    case SFS_OP_POOL_SET:
    case SFS_OP_POOL_SHOW:
        sfs_meta_pool_reply(op, &wb);
        if (wb.error) {
            sfs_tp_request_reply_error(op->req, wb.error, "storage pools do not fit in a reply");
            sfs_meta_free_op(op);
            return;
        }
        break;
    case SFS_OP_MIGRATE_BEGIN: { /* the file's write_gen (sfs_meta_migrate.c) */
        /* and the copy's capability, to the administrator who asked (only
         * administrators reach here: sfs_meta_migrate.c) */
        uint32_t   life = meta->service->config->capability_lifetime_ms / 1000;
        sfs_cap_t *cap  = &op->migrate.cap;

        memset(cap, 0, sizeof(*cap));
        cap->entry_id  = op->migrate.entry_id;
        cap->access    = SFS_CAP_READ | SFS_CAP_WRITE;
        cap->uid       = op->cred.uid;
        cap->expires_s = sfs_wall_ns() / 1000000000u + (life ? life : 1);
        sfs_cap_seal(&meta->service->cap_key, cap);
        sfs_proto_migrate_req_pack(&wb, &op->migrate);
        break;
    }
    case SFS_OP_META_CHECK: {
        sfs_check_reply_t check = {.inodes   = op->check.inodes,
                                   .dentries = op->check.dentries,
                                   .problems = op->check.problems,
                                   .repaired = op->check.repaired,
                                   .lines    = op->count};

        sfs_proto_check_reply_pack(&wb, &check);
        iov.iov_base = op->list_data;
        iov.iov_len  = op->list_length;
        sfs_tp_request_reply(op->req, 0, args, wb.length, &iov, 1, sfs_meta_release_op, op);
        return;
    }
    case SFS_OP_META_PENDING: {
        uint8_t   *buf = malloc((size_t)op->count * 8 + 1);
        sfs_wbuf_t pb;

        if (!buf) {
            sfs_tp_request_reply_error(op->req, -ENOMEM, "out of memory");
            sfs_meta_free_op(op);
            return;
        }
        sfs_wbuf_init(&pb, buf, (size_t)op->count * 8);
        for (uint32_t i = 0; i < op->count; i++) {
            sfs_wbuf_u64(&pb, ((uint64_t *)op->list_data)[i]);
        }
        free(op->list_data);
        op->list_data = buf;
        sfs_meta_page_reply(op, &wb);
        iov.iov_base = buf;
        iov.iov_len  = pb.length;
        sfs_tp_request_reply(op->req, 0, args, wb.length, &iov, 1, sfs_meta_release_op, op);
        return;
    }
    case SFS_OP_READDIR:
    case SFS_OP_META_LIST: {
        size_t     per = op->opcode == SFS_OP_READDIR ? (2 + SFS_NAME_MAX + 12)
                                                      : (128 + 4 * SFS_STRIPE_COUNT_MAX);
        size_t     cap = per * op->count + 1;
        uint8_t   *buf = malloc(cap);
        sfs_wbuf_t pb;

        if (!buf) {
            sfs_tp_request_reply_error(op->req, -ENOMEM, "out of memory");
            sfs_meta_free_op(op);
            return;
        }
        sfs_wbuf_init(&pb, buf, cap);
        for (uint32_t i = 0; i < op->count; i++) {
            if (op->opcode == SFS_OP_READDIR) {
                sfs_proto_dirent_pack(&pb, &((sfs_dirent_t *)op->list_data)[i]);
            } else {
                sfs_proto_attr_pack(&pb, &((sfs_attr_t *)op->list_data)[i]);
            }
        }
        free(op->list_data);
        op->list_data = buf;
        sfs_meta_page_reply(op, &wb);
        iov.iov_base = buf;
        iov.iov_len  = pb.length;
        sfs_tp_request_reply(op->req, 0, args, wb.length, &iov, 1, sfs_meta_release_op, op);
        return;
    }
    default:
        break;
    }
    (void)meta;
    sfs_tp_request_reply(op->req, 0, args, wb.length, NULL, 0, NULL, NULL);
    sfs_meta_free_op(op);
}

void sfs_meta_reply_now(sfs_meta_t *meta, sfs_meta_op_t *op)
{
    sfs_meta_times_t times  = op->times; /* the reply frees op */
    uint32_t         opcode = op->opcode;

    sfs_meta_reply(meta, op);
    sfs_meta_stats_done(opcode, &times);
}

void sfs_meta_batch_done(void *arg)
{
    sfs_meta_batch_t *batch = arg;
    sfs_list_t       *elem;

    while ((elem = sfs_list_pop_head(&batch->ops)) != NULL) {
        sfs_meta_op_t *op = sfs_container_of(elem, sfs_meta_op_t, list);

        if (op->req) {
            batch->meta->in_flight--;
        }
        sfs_meta_reply_now(batch->meta, op);
    }
    free(batch);
}
