/*
 * The wire of storage pools (common/sfs_proto_pool.c, docs/pools.md):
 * POOL_LIST (management: every pool and its targets) and POOL_GET
 * (metadata: the pool of an entry). A directory's pool is set by
 * SETPATTERN and a create's by CREATE, both with SFS_PATTERN_REQ_POOL and
 * the pool's name in sfs_meta_req_t.pool.
 * Included by sfs_proto.h (which SFS_PROTO_OPS' codecs come from, and whose
 * sfs_meta_req_t holds a pool name); an includer needs only that one. The
 * attribute `sfs_attr_t.pool` is not in sfs_proto_attr_pack: the inode
 * record and POOL_GET carry it.
 */
#ifndef SFS_PROTO_POOL_H
#define SFS_PROTO_POOL_H

#include "sfs_buf.h"

#include <stdint.h>

/* CREATE: the targets come from storage pool `pool` (a name), not the
 * directory's; SETPATTERN: the directory's new entries take it ("none":
 * any target). On the wire (a string after start_target) only with the
 * flag; a server without SFS_FEATURE_POOLS does not know it. */
#define SFS_PATTERN_REQ_POOL 0x8u
/* HELLO's feature bit (with the others in sfs_proto.h's SFS_FEATURES_THIS) */
#define SFS_FEATURE_POOLS (1ull << 10) /* POOL_LIST, POOL_GET, SFS_PATTERN_REQ_POOL */
#define SFS_POOL_NAME_MAX 64           /* a pool's name and its NUL */

#define SFS_POOL_NONE         0u /* an entry without a pool: any target */
#define SFS_POOL_DEFAULT      1u /* the targets in no named pool */
#define SFS_POOL_LIST_MAX     65 /* `default` and 64 named pools */
#define SFS_POOL_LIST_TARGETS 1024

typedef struct sfs_pool_info {
    uint32_t id;
    char     name[SFS_POOL_NAME_MAX];
    uint32_t first;        /* its targets: targets[first .. first + target_count) */
    uint32_t target_count; /* `default` may have none */
} sfs_pool_info_t;

/* POOL_LIST: `default` first, then the config's pools in its order. */
typedef struct sfs_pool_list_reply {
    uint32_t        count;
    sfs_pool_info_t pools[SFS_POOL_LIST_MAX];
    uint32_t        target_total;
    uint32_t        targets[SFS_POOL_LIST_TARGETS];
} sfs_pool_list_reply_t;

/* POOL_GET: the entry's pool (SFS_POOL_NONE: any target) and its name. */
typedef struct sfs_pool_reply {
    uint32_t pool;
    char     name[SFS_POOL_NAME_MAX];
} sfs_pool_reply_t;

/* Pack sets wb->error for counts over the maxima (or targets out of
 * targets[]); unpack refuses them. */
void sfs_proto_pool_list_reply_pack(sfs_wbuf_t *wb, const sfs_pool_list_reply_t *reply);
void sfs_proto_pool_list_reply_unpack(sfs_rbuf_t *rb, sfs_pool_list_reply_t *reply);
void sfs_proto_pool_reply_pack(sfs_wbuf_t *wb, const sfs_pool_reply_t *reply);
void sfs_proto_pool_reply_unpack(sfs_rbuf_t *rb, sfs_pool_reply_t *reply);

#endif
