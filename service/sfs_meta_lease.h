/*
 * The migrate leases of the metadata server (docs/migration.md, "One run
 * per target"): which run holds which storage target, in memory only, for
 * MIGRATE_LEASE (sfs_meta_drain.c). A lease not renewed runs out after
 * its holder's lease_s. Thread-safe (its own lock). Pure logic: no
 * transport, unit-tested in tests/unit/service/test_meta_lease.c.
 */
#ifndef SFS_META_LEASE_H
#define SFS_META_LEASE_H

#include "sfs_proto.h"

#include <stdint.h>

typedef struct sfs_meta_leases sfs_meta_leases_t;

/* The lease table; 0 or -ENOMEM. */
int  sfs_meta_leases_create(sfs_meta_leases_t **leases_p);
void sfs_meta_leases_destroy(sfs_meta_leases_t *leases);
/* Apply `req` for holder `uid` on `host` at `now_ms` (monotonic). TAKE:
 * 0, or -EBUSY naming the first target another holder's lease covers (and
 * nothing changes), or -ENOMEM; RELEASE: 0. With sfs_error_set. */
int sfs_meta_leases_apply(sfs_meta_leases_t *leases, const sfs_migrate_lease_req_t *req,
                          uint32_t uid, const char *host, uint64_t now_ms);

#endif
