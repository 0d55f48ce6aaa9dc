/* The wire of write bounds (sfs_proto_bound.h). */
#include "sfs_proto_bound.h"

#include <errno.h>
#include <string.h>

void sfs_bound_pack(sfs_wbuf_t *wb, const sfs_bound_t *bound)
{
    if (bound->pattern.stripe_count > SFS_STRIPE_COUNT_MAX) {
        wb->error = -EMSGSIZE;
        return;
    }
    sfs_wbuf_u64(wb, bound->entry_id);
    sfs_wbuf_u32(wb, bound->uid);
    sfs_wbuf_u64(wb, bound->end);
    sfs_wbuf_u64(wb, bound->expires_s);
    sfs_wbuf_u32(wb, bound->pattern.type);
    sfs_wbuf_u64(wb, bound->pattern.chunk_size);
    sfs_wbuf_u32(wb, bound->pattern.stripe_count);
    for (uint32_t i = 0; i < bound->pattern.stripe_count; i++) {
        sfs_wbuf_u32(wb, bound->pattern.targets[i]);
    }
    sfs_wbuf_bytes(wb, bound->mac, SFS_BOUND_MAC_SIZE);
}

void sfs_bound_unpack(sfs_rbuf_t *rb, sfs_bound_t *bound)
{
    memset(bound, 0, sizeof(*bound));
    bound->entry_id             = sfs_rbuf_u64(rb);
    bound->uid                  = sfs_rbuf_u32(rb);
    bound->end                  = sfs_rbuf_u64(rb);
    bound->expires_s            = sfs_rbuf_u64(rb);
    bound->pattern.type         = sfs_rbuf_u32(rb);
    bound->pattern.chunk_size   = sfs_rbuf_u64(rb);
    bound->pattern.stripe_count = sfs_rbuf_u32(rb);
    if (rb->error || bound->pattern.stripe_count > SFS_STRIPE_COUNT_MAX) {
        rb->error = -EBADMSG;
        return;
    }
    for (uint32_t i = 0; i < bound->pattern.stripe_count; i++) {
        bound->pattern.targets[i] = sfs_rbuf_u32(rb);
    }
    sfs_rbuf_bytes(rb, bound->mac, SFS_BOUND_MAC_SIZE);
    /* (as sfs_pattern_validate, which is a layer up: targets are not
     * checked for repeats; the seal vouches for them) */
    if (bound->pattern.stripe_count == 0 ||
        (bound->pattern.type != SFS_PATTERN_RAID0 && bound->pattern.type != SFS_PATTERN_MIRROR) ||
        bound->pattern.chunk_size < SFS_CHUNK_SIZE_MIN ||
        bound->pattern.chunk_size > SFS_CHUNK_SIZE_MAX ||
        (bound->pattern.chunk_size & (bound->pattern.chunk_size - 1)) != 0) {
        rb->error = -EBADMSG;
    }
}
