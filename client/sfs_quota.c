/*
 * Quotas on the client side (docs/quotas.md): the administration calls of
 * sfs_quota.h, and the grant a writing open asks for before a write takes
 * its file past the end it was granted (sfs_file_quota_grow), when SIZE
 * BEGIN said a space quota limits the file's owner or group.
 */
#define SFS_LOG_FAC "client"
#include "sfs_quota.h"

#include "sfs_client_internal.h"

#include "sfs_errno.h"
#include "sfs_log.h"

#include <string.h>

static int sfs_quota_call(sfs_client_t *client, uint32_t opcode, const sfs_quota_req_t *req,
                          sfs_tp_rpc_t **rpc_p)
{
    uint8_t    args[64];
    sfs_wbuf_t wb;

    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_quota_req_pack(&wb, req);
    return sfs_client_meta_call_args(client, opcode, args, wb.length, rpc_p);
}

int sfs_quota_set(sfs_client_t *client, uint32_t kind, uint32_t id, uint32_t flags,
                  uint64_t files_limit, uint64_t space_limit)
{
    sfs_quota_req_t req = {.kind        = kind,
                           .id          = id,
                           .flags       = flags & (SFS_QUOTA_SET_FILES | SFS_QUOTA_SET_SPACE),
                           .files_limit = files_limit,
                           .space_limit = space_limit};
    sfs_tp_rpc_t   *rpc = NULL;
    int             rc;

    SFS_ARG_CHECK(client, "the client is NULL");
    rc = sfs_quota_call(client, SFS_OP_QUOTA_SET, &req, &rpc);
    sfs_tp_rpc_release(rpc);
    return rc;
}

int sfs_quota_list(sfs_client_t *client, uint32_t kind, uint32_t id, uint32_t max,
                   sfs_quota_entry_t *entries, uint32_t *count_p, int *eof_p)
{
    sfs_quota_req_t req = {.kind  = kind,
                           .id    = id,
                           .flags = SFS_QUOTA_LIST,
                           .max   = max < SFS_QUOTA_PAGE_MAX ? max : SFS_QUOTA_PAGE_MAX};
    sfs_tp_rpc_t   *rpc = NULL;
    int             rc;

    SFS_ARG_CHECK(client && entries && count_p && eof_p, "an argument is NULL");
    rc = sfs_quota_call(client, SFS_OP_QUOTA_GET, &req, &rpc);
    if (rc == 0) {
        size_t           length;
        const void      *data = sfs_tp_rpc_reply_args(rpc, &length);
        sfs_page_reply_t page;
        sfs_rbuf_t       rb, pb;

        sfs_rbuf_init(&rb, data, length);
        sfs_proto_page_reply_unpack(&rb, &page);
        sfs_rbuf_init(&pb, sfs_tp_rpc_reply_payload(rpc), sfs_tp_rpc_reply_payload_length(rpc));
        if (rb.error || page.count > req.max || (page.count > 0 && req.max == 0)) {
            rb.error = -EBADMSG;
        }
        for (uint32_t i = 0; !rb.error && !pb.error && i < page.count; i++) {
            sfs_proto_quota_entry_unpack(&pb, &entries[i]);
        }
        if (rb.error || pb.error || sfs_rbuf_remaining(&pb) != 0) {
            rc = sfs_error_set(-EPROTO, "metadata server sent a malformed QUOTA_GET reply");
        } else {
            *count_p = page.count;
            *eof_p   = page.eof;
        }
    }
    sfs_tp_rpc_release(rpc);
    return rc;
}

int sfs_quota_get(sfs_client_t *client, uint32_t kind, uint32_t id, sfs_quota_entry_t *entry)
{
    sfs_quota_req_t req = {.kind = kind, .id = id};
    sfs_tp_rpc_t   *rpc = NULL;
    int             rc;

    SFS_ARG_CHECK(client && entry, "an argument is NULL");
    rc = sfs_quota_call(client, SFS_OP_QUOTA_GET, &req, &rpc);
    if (rc == 0) {
        size_t           length;
        const void      *data = sfs_tp_rpc_reply_args(rpc, &length);
        sfs_page_reply_t page;
        sfs_rbuf_t       rb, pb;

        sfs_rbuf_init(&rb, data, length);
        sfs_proto_page_reply_unpack(&rb, &page);
        sfs_rbuf_init(&pb, sfs_tp_rpc_reply_payload(rpc), sfs_tp_rpc_reply_payload_length(rpc));
        if (!rb.error && page.count == 1) {
            sfs_proto_quota_entry_unpack(&pb, entry);
        }
        if (rb.error || page.count != 1 || pb.error || sfs_rbuf_remaining(&pb) != 0) {
            rc = sfs_error_set(-EPROTO, "metadata server sent a malformed QUOTA_GET reply");
        }
    }
    sfs_tp_rpc_release(rpc);
    return rc;
}

int sfs_file_quota_grow(sfs_file_t *file, const sfs_file_extent_t *extents, size_t count)
{
    sfs_quota_grow_req_t   req;
    sfs_quota_grow_reply_t reply;
    sfs_tp_rpc_t          *rpc = NULL;
    uint8_t                args[128];
    sfs_wbuf_t             wb;
    uint64_t               end     = 0;
    int                    bounded = (file->cap.access & SFS_CAP_BOUNDED) != 0;
    int                    rc;

    if (!file->quota_limited && !bounded) {
        return 0; /* owners without a space limit pay this test only */
    }
    for (size_t i = 0; i < count; i++) {
        if (extents[i].length && extents[i].offset + extents[i].length > end) {
            end = extents[i].offset + extents[i].length;
        }
    }
    if (bounded) {
        /* the targets want a bound of this capability's that covers the
         * write: a renewed capability asks a new one */
        if (file->bound.expires_s == file->cap.expires_s &&
            file->bound.entry_id == file->cap.entry_id && end <= file->bound.end) {
            return 0;
        }
    } else if (end <= file->quota_granted) {
        return 0;
    }
    memset(&req, 0, sizeof(req));
    req.entry_id = file->attr.entry_id;
    req.end      = end;
    req.cap      = file->cap;
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_quota_grow_req_pack(&wb, &req);
    rc = sfs_client_meta_call_args(file->client, SFS_OP_QUOTA_GROW, args, wb.length, &rpc);
    if (rc == 0) {
        size_t      length;
        const void *data = sfs_tp_rpc_reply_args(rpc, &length);
        sfs_rbuf_t  rb;

        sfs_rbuf_init(&rb, data, length);
        sfs_proto_quota_grow_reply_unpack(&rb, &reply);
        if (rb.error || sfs_rbuf_remaining(&rb) != 0 || (bounded && !reply.has_bound)) {
            rc = sfs_error_set(-EPROTO, "metadata server sent a malformed QUOTA_GROW reply");
        } else {
            file->quota_granted = reply.granted > end ? reply.granted : end;
            file->quota_limited = reply.limited;
            if (reply.has_bound) {
                file->bound = reply.bound;
            }
        }
    } else {
        char detail[SFS_ERROR_DETAIL_MAX];

        snprintf(detail, sizeof(detail), "%s", sfs_error_detail());
        rc = sfs_error_set(rc, "%s: %s", file->path, detail);
    }
    sfs_tp_rpc_release(rpc);
    return rc;
}
