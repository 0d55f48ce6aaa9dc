/*
 * The wire of MIRROR_LIST: mirror groups and their members' consistency
 * states (docs/mirroring.md); and of META_MIRROR, the metadata mirror's.
 * Included by sfs_proto.h (which SFS_PROTO_OPS' codecs come from); an
 * includer needs only that one.
 */
#ifndef SFS_PROTO_MIRROR_H
#define SFS_PROTO_MIRROR_H

#include "sfs_proto.h"

#include <stdint.h>

/* MIRROR_LIST: the mirror groups and their members' consistency states
 * (docs/mirroring.md, "Failover"). */
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

/* The metadata mirror as management knows it (docs/metadata-mirror.md):
 * good (every batch is committed on both), needs-resync (the metadata
 * server goes on alone) or resyncing (a full copy on its way); since the
 * metadata server's batch `seq`. */
typedef struct sfs_meta_mirror_info {
    uint32_t configured; /* 0: no meta.mirror (the rest is 0) */
    uint32_t state;      /* SFS_MIRROR_STATE_*, never bad */
    uint64_t seq;
} sfs_meta_mirror_info_t;

typedef struct sfs_mirror_list_reply {
    uint32_t                count;
    sfs_mirror_group_info_t groups[SFS_MIRROR_LIST_MAX];
    sfs_meta_mirror_info_t  meta; /* after the groups on the wire */
} sfs_mirror_list_reply_t;

/* MIRROR_REPORT (storage -> management): a member's consistency state as
 * the rank serving its buddy sees it (`reporter`: that buddy's target),
 * with a resync's progress in chunk files. */
#define SFS_MIRROR_REPORT_MAX 64

typedef struct sfs_mirror_report_entry {
    uint32_t reporter; /* the target that saw it (the member serving alone) */
    uint32_t target;   /* the member whose state this is */
    uint32_t state;    /* SFS_MIRROR_STATE_* */
    uint64_t done;     /* chunk files copied so far by a resync */
    uint64_t total;    /* chunk files to copy (the change log's length) */
} sfs_mirror_report_entry_t;

typedef struct sfs_mirror_report_req {
    uint32_t                  count;
    sfs_mirror_report_entry_t entries[SFS_MIRROR_REPORT_MAX];
} sfs_mirror_report_req_t;

void sfs_proto_mirror_report_req_pack(sfs_wbuf_t *wb, const sfs_mirror_report_req_t *req);
void sfs_proto_mirror_report_req_unpack(sfs_rbuf_t *rb, sfs_mirror_report_req_t *req);

/* Pack sets wb->error for a count over SFS_MIRROR_LIST_MAX; unpack refuses
 * it and unknown states. */
void sfs_proto_mirror_list_reply_pack(sfs_wbuf_t *wb, const sfs_mirror_list_reply_t *reply);
void sfs_proto_mirror_list_reply_unpack(sfs_rbuf_t *rb, sfs_mirror_list_reply_t *reply);
/* "good", "needs-resync", "resyncing", "bad" ("?" for others). */
const char *sfs_mirror_state_name(uint32_t state);

/* META_MIRROR (docs/metadata.md, "Metadata mirror"): the primary metadata
 * server sends its mirror each batch's writes, numbered: the mirror applies
 * batch `seq` only on top of batch seq - 1. A probe carries no writes and
 * asks where the mirror is (the primary compares); a full copy replaces the mirror's
 * store, in pieces, the first emptying it, the last carrying the copy's
 * batch number. */
#define SFS_META_MIRROR_PROBE      0x1u
#define SFS_META_MIRROR_COPY_FIRST 0x2u
#define SFS_META_MIRROR_COPY       0x4u /* a piece of a full copy (the first one too) */
#define SFS_META_MIRROR_FLAGS      0x7u

typedef struct sfs_meta_mirror_req {
    uint64_t seq; /* the batch (a probe: the primary's last one) */
    uint32_t flags;
} sfs_meta_mirror_req_t;

typedef struct sfs_meta_mirror_reply {
    uint64_t seq;   /* the mirror's last batch, after this request */
    uint64_t alone; /* its count of batches the primary committed alone (the
                     * store's mirror_alone: only a full copy or a replay of
                     * those batches brings it) */
} sfs_meta_mirror_reply_t;

/* META_MIRROR_STATE (metadata server -> management): the mirror's state
 * changed (or is still not good: said again every heartbeat, so that a
 * restarted management learns it). `node_id`: the reporting metadata
 * server's rank. Unpack refuses bad (a metadata mirror is never rebuilt)
 * and unknown states. */
typedef struct sfs_meta_mirror_state_req {
    uint32_t node_id;
    uint32_t state;
    uint64_t seq;
} sfs_meta_mirror_state_req_t;

void sfs_proto_meta_mirror_state_req_pack(sfs_wbuf_t *wb, const sfs_meta_mirror_state_req_t *req);
void sfs_proto_meta_mirror_state_req_unpack(sfs_rbuf_t *rb, sfs_meta_mirror_state_req_t *req);

/* META_PROMOTE (management -> the metadata mirror): the metadata server,
 * rank `old_node`, is offline and management's record says the mirror was
 * good (in step) since batch `seq`: open the copy as the metadata store and
 * serve. The reply (sfs_meta_mirror_reply_t) gives the copy's last batch. */
typedef struct sfs_meta_promote_req {
    uint32_t old_node;
    uint64_t seq;
} sfs_meta_promote_req_t;

void sfs_proto_meta_promote_req_pack(sfs_wbuf_t *wb, const sfs_meta_promote_req_t *req);
void sfs_proto_meta_promote_req_unpack(sfs_rbuf_t *rb, sfs_meta_promote_req_t *req);

/* Unpack refuses unknown flags. */
void sfs_proto_meta_mirror_req_pack(sfs_wbuf_t *wb, const sfs_meta_mirror_req_t *req);
void sfs_proto_meta_mirror_req_unpack(sfs_rbuf_t *rb, sfs_meta_mirror_req_t *req);
void sfs_proto_meta_mirror_reply_pack(sfs_wbuf_t *wb, const sfs_meta_mirror_reply_t *reply);
void sfs_proto_meta_mirror_reply_unpack(sfs_rbuf_t *rb, sfs_meta_mirror_reply_t *reply);

#endif
