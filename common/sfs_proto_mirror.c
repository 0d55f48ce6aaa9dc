/* The codecs of MIRROR_REPORT, META_MIRROR, META_MIRROR_STATE and META_PROMOTE
 * (sfs_proto_mirror.h). */
#include "sfs_proto.h"

#include <errno.h>

void sfs_proto_mirror_report_req_pack(sfs_wbuf_t *wb, const sfs_mirror_report_req_t *req)
{
    if (req->count > SFS_MIRROR_REPORT_MAX) {
        wb->error = -EINVAL;
        return;
    }
    sfs_wbuf_u32(wb, req->count);
    for (uint32_t i = 0; i < req->count; i++) {
        const sfs_mirror_report_entry_t *e = &req->entries[i];

        sfs_wbuf_u32(wb, e->reporter);
        sfs_wbuf_u32(wb, e->target);
        sfs_wbuf_u32(wb, e->state);
        sfs_wbuf_u64(wb, e->done);
        sfs_wbuf_u64(wb, e->total);
    }
}

void sfs_proto_mirror_report_req_unpack(sfs_rbuf_t *rb, sfs_mirror_report_req_t *req)
{
    req->count = sfs_rbuf_u32(rb);
    if (req->count > SFS_MIRROR_REPORT_MAX) {
        req->count = 0;
        rb->error  = -EBADMSG;
        return;
    }
    for (uint32_t i = 0; i < req->count && !rb->error; i++) {
        sfs_mirror_report_entry_t *e = &req->entries[i];

        e->reporter = sfs_rbuf_u32(rb);
        e->target   = sfs_rbuf_u32(rb);
        e->state    = sfs_rbuf_u32(rb);
        e->done     = sfs_rbuf_u64(rb);
        e->total    = sfs_rbuf_u64(rb);
        if (e->state > SFS_MIRROR_STATE_BAD) {
            rb->error = -EBADMSG;
        }
    }
}

void sfs_proto_meta_mirror_req_pack(sfs_wbuf_t *wb, const sfs_meta_mirror_req_t *req)
{
    sfs_wbuf_u64(wb, req->seq);
    sfs_wbuf_u32(wb, req->flags);
}

void sfs_proto_meta_mirror_req_unpack(sfs_rbuf_t *rb, sfs_meta_mirror_req_t *req)
{
    req->seq   = sfs_rbuf_u64(rb);
    req->flags = sfs_rbuf_u32(rb);
    if (req->flags & ~SFS_META_MIRROR_FLAGS) {
        rb->error = -EBADMSG;
    }
}

void sfs_proto_meta_mirror_reply_pack(sfs_wbuf_t *wb, const sfs_meta_mirror_reply_t *reply)
{
    sfs_wbuf_u64(wb, reply->seq);
    sfs_wbuf_u64(wb, reply->alone);
}

void sfs_proto_meta_mirror_reply_unpack(sfs_rbuf_t *rb, sfs_meta_mirror_reply_t *reply)
{
    reply->seq   = sfs_rbuf_u64(rb);
    reply->alone = sfs_rbuf_u64(rb);
}

void sfs_proto_meta_mirror_state_req_pack(sfs_wbuf_t *wb, const sfs_meta_mirror_state_req_t *req)
{
    sfs_wbuf_u32(wb, req->node_id);
    sfs_wbuf_u32(wb, req->state);
    sfs_wbuf_u64(wb, req->seq);
}

void sfs_proto_meta_mirror_state_req_unpack(sfs_rbuf_t *rb, sfs_meta_mirror_state_req_t *req)
{
    req->node_id = sfs_rbuf_u32(rb);
    req->state   = sfs_rbuf_u32(rb);
    req->seq     = sfs_rbuf_u64(rb);
    if (req->state > SFS_MIRROR_STATE_RESYNCING) {
        rb->error = -EBADMSG;
    }
}

void sfs_proto_meta_promote_req_pack(sfs_wbuf_t *wb, const sfs_meta_promote_req_t *req)
{
    sfs_wbuf_u32(wb, req->old_node);
    sfs_wbuf_u64(wb, req->seq);
}

void sfs_proto_meta_promote_req_unpack(sfs_rbuf_t *rb, sfs_meta_promote_req_t *req)
{
    req->old_node = sfs_rbuf_u32(rb);
    req->seq      = sfs_rbuf_u64(rb);
}
