/*
 * The codecs of MIGRATE_COMMIT, MIGRATE_DRAIN and MIGRATE_LEASE
 * (sfs_proto_migrate.h).
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

static int sfs_proto_migrate_lease_ok(const sfs_migrate_lease_req_t *req)
{
    return (req->op == SFS_LEASE_TAKE || req->op == SFS_LEASE_RELEASE) && req->lease_s >= 1 &&
           req->lease_s <= SFS_LEASE_S_MAX && req->count >= 1 &&
           req->count <= SFS_LEASE_TARGETS_MAX && req->token != 0;
}

void sfs_proto_migrate_lease_req_pack(sfs_wbuf_t *wb, const sfs_migrate_lease_req_t *req)
{
    if (!sfs_proto_migrate_lease_ok(req)) {
        wb->error = -EINVAL;
        return;
    }
    sfs_wbuf_u32(wb, req->op);
    sfs_wbuf_u32(wb, req->lease_s);
    sfs_wbuf_u32(wb, req->pid);
    sfs_wbuf_u32(wb, req->count);
    sfs_wbuf_u64(wb, req->token);
    for (uint32_t i = 0; i < req->count; i++) {
        sfs_wbuf_u32(wb, req->targets[i]);
    }
}

void sfs_proto_migrate_lease_req_unpack(sfs_rbuf_t *rb, sfs_migrate_lease_req_t *req)
{
    req->op      = sfs_rbuf_u32(rb);
    req->lease_s = sfs_rbuf_u32(rb);
    req->pid     = sfs_rbuf_u32(rb);
    req->count   = sfs_rbuf_u32(rb);
    req->token   = sfs_rbuf_u64(rb);
    if (!sfs_proto_migrate_lease_ok(req)) {
        req->count = 0;
        rb->error  = -EBADMSG;
        return;
    }
    for (uint32_t i = 0; i < req->count; i++) {
        req->targets[i] = sfs_rbuf_u32(rb);
    }
}
