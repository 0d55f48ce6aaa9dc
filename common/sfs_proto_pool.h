/*
 * The wire of storage pools (common/sfs_proto_pool.c, docs/pools.md):
 * POOL_LIST (management: the config's pools and their targets), POOL_GET
 * (metadata: the pool of an entry), POOL_SET (metadata: an
 * administrator's change, kept in the metadata store) and POOL_SHOW
 * (metadata: the pools in force, the config's and the store's combined;
 * its reply is POOL_LIST's). A directory's pool is set by
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
/* HELLO's feature bit 17: POOL_SET and POOL_SHOW (pools changed online) */
#define SFS_FEATURE_POOL_SET (1ull << 17)

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

/* POOL_SET: what changes (docs/pools.md, "Changing pools while the
 * service runs"). */
#define SFS_POOL_SET_CREATE      1u /* a new pool `name` with `targets` (maybe none) */
#define SFS_POOL_SET_ADD         2u /* `targets` join pool `name` */
#define SFS_POOL_SET_REMOVE      3u /* `targets` leave pool `name` */
#define SFS_POOL_SET_DELETE      4u /* pool `name`, empty, goes */
#define SFS_POOL_SET_TARGETS_MAX 256

typedef struct sfs_pool_set_req {
    uint32_t op; /* SFS_POOL_SET_* */
    char     name[SFS_POOL_NAME_MAX];
    uint32_t target_count;
    uint32_t targets[SFS_POOL_SET_TARGETS_MAX];
} sfs_pool_set_req_t;

/* Pack sets wb->error for counts over the maxima (or targets out of
 * targets[]); unpack refuses them. */
void sfs_proto_pool_list_reply_pack(sfs_wbuf_t *wb, const sfs_pool_list_reply_t *reply);
void sfs_proto_pool_list_reply_unpack(sfs_rbuf_t *rb, sfs_pool_list_reply_t *reply);
void sfs_proto_pool_reply_pack(sfs_wbuf_t *wb, const sfs_pool_reply_t *reply);
void sfs_proto_pool_reply_unpack(sfs_rbuf_t *rb, sfs_pool_reply_t *reply);
/* Pack sets wb->error, unpack refuses, an unknown op or too many targets. */
void sfs_proto_pool_set_req_pack(sfs_wbuf_t *wb, const sfs_pool_set_req_t *req);
void sfs_proto_pool_set_req_unpack(sfs_rbuf_t *rb, sfs_pool_set_req_t *req);
/* "create", "add", "remove", "delete" (NULL for another op) */
const char *sfs_pool_set_op_name(uint32_t op);

#endif
