/*
 * The codecs of POOL_LIST (and POOL_SHOW), POOL_GET and POOL_SET
 * (sfs_proto_pool.h).
 */
#include "sfs_proto.h"

#include <errno.h>
#include <string.h>

void sfs_proto_pool_list_reply_pack(sfs_wbuf_t *wb, const sfs_pool_list_reply_t *reply)
{
    if (reply->count > SFS_POOL_LIST_MAX || reply->target_total > SFS_POOL_LIST_TARGETS) {
        wb->error = -EINVAL;
        return;
    }
    sfs_wbuf_u32(wb, reply->count);
    for (uint32_t i = 0; i < reply->count; i++) {
        const sfs_pool_info_t *pool = &reply->pools[i];

        if (pool->first > reply->target_total ||
            pool->target_count > reply->target_total - pool->first) {
            wb->error = -EINVAL;
            return;
        }
        sfs_wbuf_u32(wb, pool->id);
        sfs_wbuf_str(wb, pool->name);
        sfs_wbuf_u32(wb, pool->target_count);
        for (uint32_t t = 0; t < pool->target_count; t++) {
            sfs_wbuf_u32(wb, reply->targets[pool->first + t]);
        }
    }
}

void sfs_proto_pool_list_reply_unpack(sfs_rbuf_t *rb, sfs_pool_list_reply_t *reply)
{
    reply->target_total = 0;
    reply->count        = sfs_rbuf_u32(rb);
    if (reply->count > SFS_POOL_LIST_MAX) {
        reply->count = 0;
        rb->error    = -EBADMSG;
        return;
    }
    for (uint32_t i = 0; i < reply->count && !rb->error; i++) {
        sfs_pool_info_t *pool = &reply->pools[i];

        pool->id = sfs_rbuf_u32(rb);
        sfs_rbuf_str(rb, pool->name, sizeof(pool->name));
        pool->first        = reply->target_total;
        pool->target_count = sfs_rbuf_u32(rb);
        if (rb->error || pool->target_count > SFS_POOL_LIST_TARGETS - reply->target_total) {
            reply->count = i;
            rb->error    = rb->error ? rb->error : -EBADMSG;
            return;
        }
        for (uint32_t t = 0; t < pool->target_count; t++) {
            reply->targets[reply->target_total++] = sfs_rbuf_u32(rb);
        }
    }
}

void sfs_proto_pool_reply_pack(sfs_wbuf_t *wb, const sfs_pool_reply_t *reply)
{
    sfs_wbuf_u32(wb, reply->pool);
    sfs_wbuf_str(wb, reply->name);
}

void sfs_proto_pool_reply_unpack(sfs_rbuf_t *rb, sfs_pool_reply_t *reply)
{
    reply->pool = sfs_rbuf_u32(rb);
    sfs_rbuf_str(rb, reply->name, sizeof(reply->name));
}

const char *sfs_pool_set_op_name(uint32_t op)
{
    switch (op) {
    case SFS_POOL_SET_CREATE:
        return "create";
    case SFS_POOL_SET_ADD:
        return "add";
    case SFS_POOL_SET_REMOVE:
        return "remove";
    case SFS_POOL_SET_DELETE:
        return "delete";
    default:
        return NULL;
    }
}

void sfs_proto_pool_set_req_pack(sfs_wbuf_t *wb, const sfs_pool_set_req_t *req)
{
    if (!sfs_pool_set_op_name(req->op) || req->target_count > SFS_POOL_SET_TARGETS_MAX) {
        wb->error = -EINVAL;
        return;
    }
    sfs_wbuf_u32(wb, req->op);
    sfs_wbuf_str(wb, req->name);
    sfs_wbuf_u32(wb, req->target_count);
    for (uint32_t t = 0; t < req->target_count; t++) {
        sfs_wbuf_u32(wb, req->targets[t]);
    }
}

void sfs_proto_pool_set_req_unpack(sfs_rbuf_t *rb, sfs_pool_set_req_t *req)
{
    req->op = sfs_rbuf_u32(rb);
    sfs_rbuf_str(rb, req->name, sizeof(req->name));
    if (rb->error) {
        req->target_count = 0;
        return; /* -ENAMETOOLONG kept: a name over SFS_POOL_NAME_MAX */
    }
    req->target_count = sfs_rbuf_u32(rb);
    if (!rb->error &&
        (!sfs_pool_set_op_name(req->op) || req->target_count > SFS_POOL_SET_TARGETS_MAX)) {
        req->target_count = 0;
        rb->error         = -EBADMSG;
        return;
    }
    for (uint32_t t = 0; t < req->target_count && !rb->error; t++) {
        req->targets[t] = sfs_rbuf_u32(rb);
    }
}
