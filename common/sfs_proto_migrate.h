/*
 * The wire of draining and migrating a storage target (docs/migration.md):
 * MIGRATE_BEGIN (metadata: a file's write_gen before its chunk is copied;
 * -EBUSY while a writer is registered; the reply is a migrate_req with it),
 * MIGRATE_COMMIT (metadata: a file's chunk moved from one target to
 * another, committed in one transaction), MIGRATE_DRAIN (metadata: mark,
 * clear or list the targets that take no new files), MIGRATE_LEASE
 * (metadata: one migrate run per target, a lease in the metadata server's
 * memory) and CHUNK_MOVED (storage: fence, tombstone or clear the old
 * chunk file of a moved file).
 * Included by sfs_proto.h (after sfs_cap_t); an includer needs only that one.
 */
#ifndef SFS_PROTO_MIGRATE_H
#define SFS_PROTO_MIGRATE_H

#include "sfs_buf.h"

#include <stdint.h>

/* HELLO's feature bit: MIGRATE_*, CHUNK_MOVED, ESTALE for a moved chunk */
#define SFS_FEATURE_MIGRATE (1ull << 14)
/* HELLO's feature bit: MIGRATE_LEASE, and MIGRATE_DRAIN's flag kept in the
 * metadata store */
#define SFS_FEATURE_MIGRATE_LEASE (1ull << 15)

/* MIGRATE_DRAIN's op */
#define SFS_DRAIN_SET   1u /* the target takes no new file */
#define SFS_DRAIN_CLEAR 2u /* it takes new files again */
#define SFS_DRAIN_LIST  3u /* which are draining (from, entry_id unused) */

#define SFS_DRAIN_LIST_MAX 1024

typedef struct sfs_migrate_req {
    uint32_t op;        /* MIGRATE_DRAIN: SFS_DRAIN_*; MIGRATE_BEGIN, _COMMIT: 0 */
    uint32_t from;      /* the target drained / the file's target moved off */
    uint32_t to;        /* MIGRATE_COMMIT: the target its chunk was copied to */
    uint64_t entry_id;  /* MIGRATE_BEGIN, _COMMIT: the file */
    uint64_t write_gen; /* MIGRATE_COMMIT: the file's write_gen before the copy (BEGIN's) */
    /* MIGRATE_COMMIT: wall clock (s) until which the old chunk is fenced
     * against writes (CHUNK_MOVED's reply); refused past it */
    uint64_t fence_until_s;
    /* MIGRATE_BEGIN's reply: a capability to read and write the file's
     * chunk files for the copy, issued to the administrator who asked (the
     * storage servers ask one of everyone but servers); zero elsewhere */
    sfs_cap_t cap;
} sfs_migrate_req_t;

/* MIGRATE_DRAIN's reply: the draining targets (all ops answer the list). */
typedef struct sfs_migrate_reply {
    uint32_t count;
    uint32_t targets[SFS_DRAIN_LIST_MAX];
} sfs_migrate_reply_t;

/* CHUNK_MOVED's flags (sfs_chunk_req_t.flags): what happens to the chunk
 * file of entry_id on target_id. The reply's length is the fence's end
 * (wall clock, s) for FENCE, else 0. */
#define SFS_MOVED_FENCE   1u  /* refuse writes for a while (the copy is being committed) */
#define SFS_MOVED_UNFENCE 2u  /* the commit was refused: writes again */
#define SFS_MOVED_TOMB    3u  /* committed: a tombstone, then the chunk file removed */
#define SFS_MOVED_CLEAR   4u  /* forget the tombstone (fsck --repair) */
#define SFS_MOVED_FENCE_S 60u /* a fence's life */

/* MIGRATE_LEASE's op */
#define SFS_LEASE_TAKE    1u /* take, or renew when this holder has it */
#define SFS_LEASE_RELEASE 2u /* this holder's leases go (others' are left) */

#define SFS_LEASE_TARGETS_MAX 1024 /* targets in one request */
#define SFS_LEASE_S_MAX       3600 /* the longest lease (s) */

/* MIGRATE_LEASE: one migrate run per target. TAKE is all or nothing: when
 * another holder's lease of one of the targets has not run out, it is
 * refused (-EBUSY, naming the target and the holder) and nothing changes.
 * The holder is `token` (one per run); uid and host are the session's. */
typedef struct sfs_migrate_lease_req {
    uint32_t op;      /* SFS_LEASE_* */
    uint32_t lease_s; /* TAKE: how long, 1..SFS_LEASE_S_MAX */
    uint32_t pid;     /* the holder's process (for messages) */
    uint32_t count;   /* targets, 1..SFS_LEASE_TARGETS_MAX */
    uint64_t token;   /* the holder, not 0 */
    uint32_t targets[SFS_LEASE_TARGETS_MAX];
} sfs_migrate_lease_req_t;

void sfs_proto_migrate_req_pack(sfs_wbuf_t *wb, const sfs_migrate_req_t *req);
void sfs_proto_migrate_req_unpack(sfs_rbuf_t *rb, sfs_migrate_req_t *req);
/* Pack sets wb->error, unpack rb->error, for a count over the maximum. */
void sfs_proto_migrate_reply_pack(sfs_wbuf_t *wb, const sfs_migrate_reply_t *reply);
void sfs_proto_migrate_reply_unpack(sfs_rbuf_t *rb, sfs_migrate_reply_t *reply);
/* Pack sets wb->error, unpack rb->error (-EBADMSG), for an op, lease_s,
 * count or token out of range. */
void sfs_proto_migrate_lease_req_pack(sfs_wbuf_t *wb, const sfs_migrate_lease_req_t *req);
void sfs_proto_migrate_lease_req_unpack(sfs_rbuf_t *rb, sfs_migrate_lease_req_t *req);

#endif
