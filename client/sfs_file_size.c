/* The size the metadata server keeps (docs/metadata.md): a stat in one
 * round trip where it is exact, the targets asked (once, then kept) where
 * it is not; a writing open registered before its first write or truncate
 * (or by the CREATE that made the file) and ended at its close. */
#define SFS_LOG_FAC "client"
#include "sfs_client_internal.h"

#include "sfs_errno.h"
#include "sfs_layout.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A server without SIZE and STAT (an older version) answers this. */
static int sfs_client_size_unsupported(int rc)
{
    return rc == -EOPNOTSUPP || rc == -ENOSYS;
}

static int sfs_client_size_call(sfs_client_t *client, const sfs_size_req_t *req,
                                sfs_size_reply_t *reply)
{
    uint8_t       args[128];
    sfs_wbuf_t    wb;
    sfs_tp_rpc_t *rpc;
    int           rc;

    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_size_req_pack(&wb, req);
    rc = sfs_client_meta_call_args(client, SFS_OP_SIZE, args, wb.length, &rpc);
    if (rc == 0) {
        size_t      length;
        const void *data = sfs_tp_rpc_reply_args(rpc, &length);
        sfs_rbuf_t  rb;

        sfs_rbuf_init(&rb, data, length);
        sfs_proto_size_reply_unpack(&rb, reply);
        if (rb.error) {
            rc = sfs_error_set(-EPROTO, "metadata server sent a malformed SIZE reply");
        }
    }
    sfs_tp_rpc_release(rpc);
    return rc;
}

static int sfs_file_size_op(sfs_file_t *file, uint32_t op, uint32_t flags, uint64_t size,
                            sfs_size_reply_t *reply)
{
    sfs_size_req_t req;

    memset(&req, 0, sizeof(req));
    req.entry_id = file->attr.entry_id;
    req.op       = op;
    req.flags    = flags;
    req.size     = size;
    req.cap      = file->cap;
    return sfs_client_size_call(file->client, &req, reply);
}

int sfs_file_writer_begin(sfs_file_t *file)
{
    sfs_size_reply_t reply = {0};
    int              rc;

    file->writer_modified = 1; /* called before every write and truncate */
    if (file->writer_registered) {
        return 0;
    }
    sfs_file_cap_refresh(file);
    rc = sfs_file_size_op(file, SFS_SIZE_OP_BEGIN, 0, 0, &reply);
    if (sfs_client_size_unsupported(rc)) {
        sfs_error_clear();
        rc = 0; /* an older server keeps no size: nothing to tell it */
    } else if (rc) {
        char detail[SFS_ERROR_DETAIL_MAX];

        /* writing unregistered would let stats answer a stale size */
        snprintf(detail, sizeof(detail), "%s", sfs_error_detail());
        return sfs_error_set(rc, "%s: registering the write: %s", file->path, detail);
    }
    file->writer_registered = 1;
    file->writer_pid        = getpid();
    file->size_view_ok      = reply.base & 1u;
    file->size_view         = reply.size;
    file->quota_limited     = (reply.base & SFS_SIZE_QUOTA) != 0;
    file->quota_granted     = reply.granted; /* writes up to here are charged already */
    if (reply.base & SFS_SIZE_BOUND) {
        file->bound = reply.bound; /* the targets' write bound of that grant (sfs_quota.c) */
    }
    return rc;
}

void sfs_file_writer_renew(sfs_file_t *file)
{
    sfs_size_reply_t reply;

    if (file->writer_registered && file->writer_pid == getpid() &&
        sfs_file_size_op(file, SFS_SIZE_OP_RENEW, 0, 0, &reply) != 0) {
        /* the next write registers again before it goes out */
        sfs_debug("%s: write registration not renewed: %s", file->path, sfs_error_detail());
        sfs_error_clear();
        file->writer_registered = 0;
    } else if (file->writer_registered && file->writer_pid == getpid()) {
        /* a quota set since BEGIN applies from here on */
        file->quota_limited = (reply.base & SFS_SIZE_QUOTA) != 0;
    }
}

void sfs_file_writer_end(sfs_file_t *file)
{
    sfs_size_req_t req;
    uint8_t        args[128];
    sfs_wbuf_t     wb;
    uint32_t       flags =
        (file->writer_modified ? SFS_SIZE_MODIFIED : 0) | (file->size_view_ok ? SFS_SIZE_VIEW : 0);

    if (!file->writer_registered || file->writer_pid != getpid()) {
        /* a forked child freeing its copy of the parent's handle: the
         * registration is the parent's, and so is the connection */
        return;
    }

    file->writer_registered = 0;
    sfs_file_cap_refresh(file);
    memset(&req, 0, sizeof(req));
    req.entry_id = file->attr.entry_id;
    req.op       = SFS_SIZE_OP_END;
    req.flags    = flags;
    req.size     = file->size_view;
    req.cap      = file->cap;
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_size_req_pack(&wb, &req);
    /* not waited for: a close costs no round trip for it. Lost, or not yet
     * there, it leaves the registration, which only makes stats ask the
     * targets (exact) until it arrives or the lease ends */
    if (sfs_client_meta_post(file->client, SFS_OP_SIZE, args, wb.length) != 0) {
        sfs_debug("%s: write registration not ended: %s", file->path, sfs_error_detail());
        sfs_error_clear();
    }
}

void sfs_file_writer_extends(sfs_file_t *file, const sfs_file_extent_t *extents, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (extents[i].length && extents[i].offset + extents[i].length > file->size_view) {
            file->size_view = extents[i].offset + extents[i].length;
        }
    }
}

void sfs_file_writer_failed(sfs_file_t *file)
{
    file->size_view_ok = 0;
}

void sfs_file_writer_truncated(sfs_file_t *file, uint64_t size)
{
    file->size_view = size;
}

/* Whether this client may write the file as far as it can tell (the server
 * decides): only those keep a size a stat read. */
static int sfs_client_may_store(const sfs_client_t *client, const sfs_attr_t *attr)
{
    return client->uid == 0 || (client->uid == attr->uid && (attr->mode & S_IWUSR));
}

int sfs_client_stat_kept(sfs_client_t *client, const sfs_meta_req_t *req, sfs_stat_t *stat)
{
    sfs_tp_rpc_t    *rpc;
    sfs_stat_reply_t reply;
    const void      *data;
    size_t           length;
    sfs_rbuf_t       rb;
    uint64_t         lengths[SFS_STRIPE_COUNT_MAX];
    uint8_t          down[SFS_STRIPE_COUNT_MAX] = {0};
    int              rc, any_down = 0;

    rc = sfs_client_meta_call(client, SFS_OP_STAT, req, &rpc);
    if (rc) {
        sfs_tp_rpc_release(rpc);
        return rc;
    }
    data = sfs_tp_rpc_reply_args(rpc, &length);
    sfs_rbuf_init(&rb, data, length);
    sfs_proto_stat_reply_unpack(&rb, &reply);
    sfs_tp_rpc_release(rpc);
    if (rb.error) {
        return sfs_error_set(-EPROTO, "metadata server sent a malformed STAT reply");
    }
    sfs_client_attr_to_stat(&reply.attr, stat);
    if (reply.attr.type != SFS_TYPE_FILE || !reply.attr.pattern_targets) {
        return 0;
    }
    if (reply.size_valid) {
        stat->size = reply.attr.size;
        return 0;
    }
    /* a writer is registered, or the size is not known yet: the targets */
    rc = sfs_client_chunk_lengths_down(client, &reply.attr, &reply.cap, lengths, down);
    if (rc) {
        return rc;
    }
    reply.attr.pattern.stripe_count = reply.attr.pattern_targets;
    stat->size                      = sfs_layout_file_size(&reply.attr.pattern, lengths);
    for (uint32_t t = 0; t < reply.attr.pattern_targets && t < SFS_CLIENT_MAX_TARGETS; t++) {
        stat->target_down[t] = down[t];
        if (down[t]) {
            stat->flags |= SFS_STAT_SIZE_UNKNOWN;
            any_down = 1;
        }
    }
    if (!any_down && reply.attr.size != SFS_STAT_SIZE_WRITING &&
        sfs_client_may_store(client, &reply.attr)) {
        sfs_size_req_t   store;
        sfs_size_reply_t stored;

        memset(&store, 0, sizeof(store));
        store.entry_id  = reply.attr.entry_id;
        store.op        = SFS_SIZE_OP_STORE;
        store.write_gen = reply.attr.write_gen;
        store.size      = stat->size;
        store.cap       = reply.cap;
        if (sfs_client_size_call(client, &store, &stored) != 0) {
            sfs_debug("%s: size not kept: %s", req->path, sfs_error_detail());
            sfs_error_clear();
        }
    }
    return 0;
}
