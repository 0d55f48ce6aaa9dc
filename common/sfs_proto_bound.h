/*
 * Write bounds (docs/quotas.md, "Enforced by the storage targets"): what a
 * storage target checks before it lets a write open of a file under a
 * space quota make one of its chunk files longer. The metadata server's
 * grants (SIZE BEGIN, QUOTA_GROW) carry one, sealed with the capabilities'
 * key (common/sfs_cap.h): "open of entry E by uid U may write below file
 * offset END until EXPIRES", with the file's stripe pattern, so that each
 * target turns END into the length its own chunk file may reach. A
 * capability with SFS_CAP_BOUNDED is served WRITE and TRUNCATE only with a
 * bound (SFS_CHUNK_BOUND, the bound after the capability on the wire).
 * Included by sfs_proto.h; an includer needs only that one.
 */
#ifndef SFS_PROTO_BOUND_H
#define SFS_PROTO_BOUND_H

#include "sfs_buf.h"
#include "sfs_layout.h"

#include <stdint.h>

/* HELLO feature bit: SFS_CAP_BOUNDED, SFS_CHUNK_BOUND and the bounds of
 * SIZE (SFS_SIZE_BOUND) and QUOTA_GROW replies */
#define SFS_FEATURE_BOUNDS (1ull << 16)

/* capability access bit (with SFS_CAP_READ, SFS_CAP_WRITE): the targets
 * serve this open's WRITE and TRUNCATE only within a write bound */
#define SFS_CAP_BOUNDED 0x4u
/* chunk_req flag of WRITE and TRUNCATE: a bound follows the capability */
#define SFS_CHUNK_BOUND 0x200u
/* SIZE reply's `base` (BEGIN to an open with SFS_CAP_BOUNDED): a bound
 * follows `granted` on the wire */
#define SFS_SIZE_BOUND 0x4u

#define SFS_BOUND_UNLIMITED UINT64_MAX /* end of a bound where no limit applies */
#define SFS_BOUND_MAC_SIZE  16
/* the most bytes a bound takes on the wire */
#define SFS_BOUND_WIRE_MAX (44 + 4 * SFS_STRIPE_COUNT_MAX + SFS_BOUND_MAC_SIZE)

typedef struct sfs_bound {
    uint64_t      entry_id;
    uint32_t      uid;
    uint64_t      end;       /* writes below this file offset; SFS_BOUND_UNLIMITED: any */
    uint64_t      expires_s; /* the capability's it was granted with */
    sfs_pattern_t pattern;   /* type, chunk size, stripe_count targets */
    uint8_t       mac[SFS_BOUND_MAC_SIZE];
} sfs_bound_t;

/* Encode/decode a bound; unpack sets rb->error for a pattern that is not
 * valid (no targets, a chunk size out of range or not a power of two). */
void sfs_bound_pack(sfs_wbuf_t *wb, const sfs_bound_t *bound);
void sfs_bound_unpack(sfs_rbuf_t *rb, sfs_bound_t *bound);

#endif
