/*
 * Administration calls of stripefs-ctl migrate and stripefs-fsck for
 * draining a storage target (docs/migration.md): the chooser's draining
 * flags, a file's chunk copied between targets with an administrator's
 * session (no capability), its old chunk fenced and tombstoned, and the
 * move committed. Not part of the public API. Each returns 0 or a negative
 * errno with sfs_error_set naming the target or file.
 */
#ifndef SFS_ADMIN_MIGRATE_H
#define SFS_ADMIN_MIGRATE_H

#include "sfs/sfs_client.h"
#include "sfs_proto.h"

/* MIGRATE_DRAIN: SFS_DRAIN_SET, _CLEAR or _LIST of `target`; `reply`
 * gets the draining targets after it. */
int sfs_admin_drain(sfs_client_t *client, uint32_t op, uint32_t target, sfs_migrate_reply_t *reply);
/* MIGRATE_LEASE: take or renew (SFS_LEASE_TAKE) or release
 * (SFS_LEASE_RELEASE) the migrate lease of `count` targets (up to
 * SFS_LEASE_TARGETS_MAX) for `lease_s` seconds, as holder `token` (one per
 * run: sfs_admin_migrate_lease_token()). Take is all or nothing: -EBUSY
 * with the target and its holder named when another run holds one. Renew
 * well before lease_s passes (a third of it); a lease not renewed runs
 * out, so a run that died frees its targets by itself. */
int sfs_admin_migrate_lease(sfs_client_t *client, uint32_t op, const uint32_t *targets,
                            uint32_t count, uint32_t lease_s, uint64_t token);
/* A holder token for sfs_admin_migrate_lease: not 0, unlike any other
 * process's (pid and time). */
uint64_t sfs_admin_migrate_lease_token(void);
/* MIGRATE_BEGIN: the file's write_gen (-EBUSY while a writer is
 * registered) and a capability to read and write its chunk files (for
 * sfs_admin_chunk_io; root on a trusted host only). */
int sfs_admin_migrate_begin(sfs_client_t *client, uint64_t entry_id, uint64_t *write_gen_p,
                            sfs_cap_t *cap_p);
/* MIGRATE_COMMIT of `req` (entry_id, from, to, write_gen, fence_until_s). */
int sfs_admin_migrate_commit(sfs_client_t *client, const sfs_migrate_req_t *req);
/* CHUNK_MOVED with `flags` (SFS_MOVED_*); *until_s_p (may be NULL) gets a
 * fence's end. */
int sfs_admin_chunk_moved(sfs_client_t *client, uint32_t target, uint64_t entry_id, uint32_t flags,
                          uint64_t *until_s_p);
/* A chunk request with `cap` (MIGRATE_BEGIN's; NULL: none, which only
 * server sessions may do): READ (`length` bytes at `offset` into `buf`),
 * WRITE (from `buf`, synchronous), CHUNK_STAT, TRUNCATE (to `length`,
 * exactly) or FSYNC. *chunk_length_p (may be NULL) gets the chunk file's
 * length after it. */
int sfs_admin_chunk_io(sfs_client_t *client, uint32_t opcode, uint32_t target, uint64_t entry_id,
                       const sfs_cap_t *cap, uint64_t offset, void *buf, uint64_t length,
                       uint64_t *chunk_length_p);

#endif
