/*
 * Codecs of the byte-range lock requests LOCK and UNLOCK (sfs_proto.h).
 */
#include "sfs_proto.h"

#include <errno.h>

void sfs_proto_lock_req_pack(sfs_wbuf_t *wb, const sfs_lock_req_t *req)
{
    sfs_wbuf_u64(wb, req->entry_id);
    sfs_wbuf_u64(wb, req->lock_id);
    sfs_wbuf_u64(wb, req->offset);
    sfs_wbuf_u64(wb, req->length);
    sfs_wbuf_u32(wb, req->mode);
    sfs_cap_pack(wb, &req->cap);
}

void sfs_proto_lock_req_unpack(sfs_rbuf_t *rb, sfs_lock_req_t *req)
{
    req->entry_id = sfs_rbuf_u64(rb);
    req->lock_id  = sfs_rbuf_u64(rb);
    req->offset   = sfs_rbuf_u64(rb);
    req->length   = sfs_rbuf_u64(rb);
    req->mode     = sfs_rbuf_u32(rb);
    sfs_cap_unpack(rb, &req->cap);
    if (!rb->error && req->mode > SFS_LOCK_EXCLUSIVE) {
        rb->error = -EBADMSG;
    }
}

void sfs_proto_unlock_req_pack(sfs_wbuf_t *wb, const sfs_unlock_req_t *req)
{
    sfs_wbuf_u64(wb, req->entry_id);
    sfs_wbuf_u64(wb, req->lock_id);
}

void sfs_proto_unlock_req_unpack(sfs_rbuf_t *rb, sfs_unlock_req_t *req)
{
    req->entry_id = sfs_rbuf_u64(rb);
    req->lock_id  = sfs_rbuf_u64(rb);
}
