/*
 * The wire of QUOTA_SET, QUOTA_GET and QUOTA_GROW (common/sfs_proto_quota.c):
 * per-user and per-group quotas of files and space kept by the metadata
 * server (docs/quotas.md). Included by sfs_proto.h (which SFS_PROTO_OPS'
 * codecs come from); an includer needs only that one.
 */
#ifndef SFS_PROTO_QUOTA_H
#define SFS_PROTO_QUOTA_H

#include "sfs_proto.h"

#include <stdint.h>

/* HELLO feature bit: QUOTA_*; SIZE BEGIN and RENEW answer SFS_SIZE_QUOTA */
#define SFS_FEATURE_QUOTAS (1ull << 11)

/* SIZE reply to BEGIN and RENEW, in `base`: a space quota limits the
 * file's owner or group: ask QUOTA_GROW before writing past the granted
 * end, `granted` (BEGIN's; 0 from RENEW), which follows `size` on the wire
 * only with this bit. */
#define SFS_SIZE_QUOTA 0x2u
/* CREATE reply's `created`: SFS_CREATED_WRITER, and a space quota applies:
 * the open asks QUOTA_GROW before its first write. */
#define SFS_CREATED_WRITER_QUOTA 3u

#define SFS_QUOTA_USER  0u
#define SFS_QUOTA_GROUP 1u

/* QUOTA_SET: which limits the request sets (a limit of 0: none). */
#define SFS_QUOTA_SET_FILES 0x1u
#define SFS_QUOTA_SET_SPACE 0x2u
/* QUOTA_GET: the records from (kind, id) on instead of that one */
#define SFS_QUOTA_LIST  0x4u
#define SFS_QUOTA_FLAGS (SFS_QUOTA_SET_FILES | SFS_QUOTA_SET_SPACE | SFS_QUOTA_LIST)

#define SFS_QUOTA_PAGE_MAX 512 /* records in one QUOTA_GET reply */

/* QUOTA_SET (administrators) and QUOTA_GET (an administrator any record,
 * anyone else their own uid and groups). */
typedef struct sfs_quota_req {
    uint32_t kind; /* SFS_QUOTA_USER, SFS_QUOTA_GROUP */
    uint32_t id;   /* uid or gid; LIST: the first one wanted */
    uint32_t flags;
    uint32_t max; /* LIST: records wanted (0: a page) */
    uint64_t files_limit;
    uint64_t space_limit; /* bytes */
} sfs_quota_req_t;

/* Sets rb->error also for an unknown kind or flag. */
void sfs_proto_quota_req_pack(sfs_wbuf_t *wb, const sfs_quota_req_t *req);
void sfs_proto_quota_req_unpack(sfs_rbuf_t *rb, sfs_quota_req_t *req);

/* One record of QUOTA_GET's reply payload (`count` of them after the
 * page_reply arguments): usage and limits of a user or group. */
typedef struct sfs_quota_entry {
    uint32_t kind;
    uint32_t id;
    uint64_t files;       /* regular files owned */
    uint64_t space;       /* the sum of their sizes (apparent, as du -b) */
    uint64_t files_limit; /* 0: none */
    uint64_t space_limit;
} sfs_quota_entry_t;

void sfs_proto_quota_entry_pack(sfs_wbuf_t *wb, const sfs_quota_entry_t *entry);
void sfs_proto_quota_entry_unpack(sfs_rbuf_t *rb, sfs_quota_entry_t *entry);

/* QUOTA_GROW: a registered writer (SIZE BEGIN answered SFS_SIZE_QUOTA) is
 * about to write up to `end`; the metadata server charges the file's owner
 * and group for the growth past the size it keeps, and grants up to
 * `granted` (>= end), or answers -EDQUOT naming the quota. The open's
 * capability must grant write. */
typedef struct sfs_quota_grow_req {
    uint64_t  entry_id;
    uint64_t  end;
    sfs_cap_t cap;
} sfs_quota_grow_req_t;

void sfs_proto_quota_grow_req_pack(sfs_wbuf_t *wb, const sfs_quota_grow_req_t *req);
void sfs_proto_quota_grow_req_unpack(sfs_rbuf_t *rb, sfs_quota_grow_req_t *req);

typedef struct sfs_quota_grow_reply {
    uint64_t    granted;   /* writes up to here need no other QUOTA_GROW */
    uint8_t     limited;   /* 0: no space limit applies (any more): ask no more */
    uint8_t     has_bound; /* the open's capability has SFS_CAP_BOUNDED: */
    sfs_bound_t bound;     /* ... the targets' write bound (sfs_proto_bound.h) */
} sfs_quota_grow_reply_t;
/* on the wire, `limited` and this bit share a byte; the bound follows */
#define SFS_QUOTA_GROW_BOUND 0x2u

void sfs_proto_quota_grow_reply_pack(sfs_wbuf_t *wb, const sfs_quota_grow_reply_t *reply);
void sfs_proto_quota_grow_reply_unpack(sfs_rbuf_t *rb, sfs_quota_grow_reply_t *reply);

#endif
