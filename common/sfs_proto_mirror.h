/*
 * The wire of MIRROR_LIST: mirror groups and their members' consistency
 * states (docs/mirroring.md).
 * Included by sfs_proto.h (which SFS_PROTO_OPS' codecs come from); an
 * includer needs only that one.
 */
#ifndef SFS_PROTO_MIRROR_H
#define SFS_PROTO_MIRROR_H

#include "sfs_proto.h"

#include <stdint.h>

/* MIRROR_LIST: the mirror groups and their members' consistency states.
 * Today every member is GOOD (failover and resync, which move the states,
 * are later work: docs/mirroring.md). */
#define SFS_MIRROR_STATE_GOOD         0u
#define SFS_MIRROR_STATE_NEEDS_RESYNC 1u
#define SFS_MIRROR_STATE_RESYNCING    2u
#define SFS_MIRROR_STATE_BAD          3u
#define SFS_MIRROR_LIST_MAX           256

typedef struct sfs_mirror_group_info {
    uint32_t group_id;
    uint32_t primary; /* target ids: the primary serves the group */
    uint32_t secondary;
    uint32_t primary_state; /* SFS_MIRROR_STATE_* */
    uint32_t secondary_state;
} sfs_mirror_group_info_t;

typedef struct sfs_mirror_list_reply {
    uint32_t                count;
    sfs_mirror_group_info_t groups[SFS_MIRROR_LIST_MAX];
} sfs_mirror_list_reply_t;

/* Pack sets wb->error for a count over SFS_MIRROR_LIST_MAX; unpack refuses
 * it and unknown states. */
void sfs_proto_mirror_list_reply_pack(sfs_wbuf_t *wb, const sfs_mirror_list_reply_t *reply);
void sfs_proto_mirror_list_reply_unpack(sfs_rbuf_t *rb, sfs_mirror_list_reply_t *reply);
/* "good", "needs-resync", "resyncing", "bad" ("?" for others). */
const char *sfs_mirror_state_name(uint32_t state);

#endif
