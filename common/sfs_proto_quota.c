/* Codecs of QUOTA_SET, QUOTA_GET and QUOTA_GROW (sfs_proto_quota.h). */
#include "sfs_proto_quota.h"

#include <string.h>

void sfs_proto_quota_req_pack(sfs_wbuf_t *wb, const sfs_quota_req_t *req)
{
    sfs_wbuf_u32(wb, req->kind);
    sfs_wbuf_u32(wb, req->id);
    sfs_wbuf_u32(wb, req->flags);
    sfs_wbuf_u32(wb, req->max);
    sfs_wbuf_u64(wb, req->files_limit);
    sfs_wbuf_u64(wb, req->space_limit);
}

void sfs_proto_quota_req_unpack(sfs_rbuf_t *rb, sfs_quota_req_t *req)
{
    memset(req, 0, sizeof(*req));
    req->kind        = sfs_rbuf_u32(rb);
    req->id          = sfs_rbuf_u32(rb);
    req->flags       = sfs_rbuf_u32(rb);
    req->max         = sfs_rbuf_u32(rb);
    req->files_limit = sfs_rbuf_u64(rb);
    req->space_limit = sfs_rbuf_u64(rb);
    if (req->kind > SFS_QUOTA_GROUP || (req->flags & ~SFS_QUOTA_FLAGS)) {
        rb->error = -EBADMSG;
    }
}

void sfs_proto_quota_entry_pack(sfs_wbuf_t *wb, const sfs_quota_entry_t *entry)
{
    sfs_wbuf_u32(wb, entry->kind);
    sfs_wbuf_u32(wb, entry->id);
    sfs_wbuf_u64(wb, entry->files);
    sfs_wbuf_u64(wb, entry->space);
    sfs_wbuf_u64(wb, entry->files_limit);
    sfs_wbuf_u64(wb, entry->space_limit);
}

void sfs_proto_quota_entry_unpack(sfs_rbuf_t *rb, sfs_quota_entry_t *entry)
{
    entry->kind        = sfs_rbuf_u32(rb);
    entry->id          = sfs_rbuf_u32(rb);
    entry->files       = sfs_rbuf_u64(rb);
    entry->space       = sfs_rbuf_u64(rb);
    entry->files_limit = sfs_rbuf_u64(rb);
    entry->space_limit = sfs_rbuf_u64(rb);
    if (entry->kind > SFS_QUOTA_GROUP) {
        rb->error = -EBADMSG;
    }
}

void sfs_proto_quota_grow_req_pack(sfs_wbuf_t *wb, const sfs_quota_grow_req_t *req)
{
    sfs_wbuf_u64(wb, req->entry_id);
    sfs_wbuf_u64(wb, req->end);
    sfs_cap_pack(wb, &req->cap);
}

void sfs_proto_quota_grow_req_unpack(sfs_rbuf_t *rb, sfs_quota_grow_req_t *req)
{
    memset(req, 0, sizeof(*req));
    req->entry_id = sfs_rbuf_u64(rb);
    req->end      = sfs_rbuf_u64(rb);
    sfs_cap_unpack(rb, &req->cap);
}

void sfs_proto_quota_grow_reply_pack(sfs_wbuf_t *wb, const sfs_quota_grow_reply_t *reply)
{
    sfs_wbuf_u64(wb, reply->granted);
    sfs_wbuf_u8(wb, (uint8_t)(reply->limited | (reply->has_bound ? SFS_QUOTA_GROW_BOUND : 0)));
    if (reply->has_bound) {
        sfs_bound_pack(wb, &reply->bound);
    }
}

void sfs_proto_quota_grow_reply_unpack(sfs_rbuf_t *rb, sfs_quota_grow_reply_t *reply)
{
    uint8_t byte;

    memset(reply, 0, sizeof(*reply));
    reply->granted   = sfs_rbuf_u64(rb);
    byte             = sfs_rbuf_u8(rb);
    reply->limited   = byte & 1u;
    reply->has_bound = (byte & SFS_QUOTA_GROW_BOUND) != 0;
    if (byte & ~(1u | SFS_QUOTA_GROW_BOUND)) {
        rb->error = -EBADMSG;
        return;
    }
    if (reply->has_bound) {
        sfs_bound_unpack(rb, &reply->bound);
    }
}
