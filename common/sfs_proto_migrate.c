/*
 * The codecs of MIGRATE_COMMIT and MIGRATE_DRAIN (sfs_proto_migrate.h).
 */
#include "sfs_proto.h"

#include <errno.h>

void sfs_proto_migrate_req_pack(sfs_wbuf_t *wb, const sfs_migrate_req_t *req)
{
    sfs_wbuf_u32(wb, req->op);
    sfs_wbuf_u32(wb, req->from);
    sfs_wbuf_u32(wb, req->to);
    sfs_wbuf_u64(wb, req->entry_id);
    sfs_wbuf_u64(wb, req->write_gen);
    sfs_wbuf_u64(wb, req->fence_until_s);
    sfs_cap_pack(wb, &req->cap);
}

void sfs_proto_migrate_req_unpack(sfs_rbuf_t *rb, sfs_migrate_req_t *req)
{
    req->op            = sfs_rbuf_u32(rb);
    req->from          = sfs_rbuf_u32(rb);
    req->to            = sfs_rbuf_u32(rb);
    req->entry_id      = sfs_rbuf_u64(rb);
    req->write_gen     = sfs_rbuf_u64(rb);
    req->fence_until_s = sfs_rbuf_u64(rb);
    sfs_cap_unpack(rb, &req->cap);
    if (req->op > SFS_DRAIN_LIST) {
        rb->error = -EBADMSG;
    }
}

void sfs_proto_migrate_reply_pack(sfs_wbuf_t *wb, const sfs_migrate_reply_t *reply)
{
    if (reply->count > SFS_DRAIN_LIST_MAX) {
        wb->error = -EINVAL;
        return;
    }
    sfs_wbuf_u32(wb, reply->count);
    for (uint32_t i = 0; i < reply->count; i++) {
        sfs_wbuf_u32(wb, reply->targets[i]);
    }
}

void sfs_proto_migrate_reply_unpack(sfs_rbuf_t *rb, sfs_migrate_reply_t *reply)
{
    reply->count = sfs_rbuf_u32(rb);
    if (reply->count > SFS_DRAIN_LIST_MAX) {
        reply->count = 0;
        rb->error    = -EBADMSG;
        return;
    }
    for (uint32_t i = 0; i < reply->count; i++) {
        reply->targets[i] = sfs_rbuf_u32(rb);
    }
}
