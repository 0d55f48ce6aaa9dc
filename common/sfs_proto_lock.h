/*
 * The wire of LOCK and UNLOCK (common/sfs_proto_lock.c): byte-range locks
 * of the metadata server, for MPI atomic mode (docs/atomic-mode.md).
 * Included by sfs_proto.h (which SFS_PROTO_OPS' codecs come from); an
 * includer needs only that one.
 */
#ifndef SFS_PROTO_LOCK_H
#define SFS_PROTO_LOCK_H

#include "sfs_proto.h"

#include <stdint.h>

/* LOCK (sfs_proto_lock.c): a byte-range lock on an open file, granted by
 * the metadata server (service/sfs_meta_lock.h). The client names the lock
 * (`lock_id`, unique within its session) so that it can release or cancel
 * it even when the reply never came. The capability of the open must grant
 * write for an exclusive lock and read for a shared one. The reply (no
 * arguments) comes when the lock is granted. */
#define SFS_LOCK_SHARED    0u
#define SFS_LOCK_EXCLUSIVE 1u

typedef struct sfs_lock_req {
    uint64_t  entry_id;
    uint64_t  lock_id;
    uint64_t  offset;
    uint64_t  length; /* 0: to the end of any file */
    uint32_t  mode;   /* SFS_LOCK_* */
    sfs_cap_t cap;
} sfs_lock_req_t;

void sfs_proto_lock_req_pack(sfs_wbuf_t *wb, const sfs_lock_req_t *req);
/* Sets rb->error also for an unknown mode. */
void sfs_proto_lock_req_unpack(sfs_rbuf_t *rb, sfs_lock_req_t *req);

/* UNLOCK: the lock `lock_id` of this session on `entry_id`. */
typedef struct sfs_unlock_req {
    uint64_t entry_id;
    uint64_t lock_id;
} sfs_unlock_req_t;

void sfs_proto_unlock_req_pack(sfs_wbuf_t *wb, const sfs_unlock_req_t *req);
void sfs_proto_unlock_req_unpack(sfs_rbuf_t *rb, sfs_unlock_req_t *req);

#endif
