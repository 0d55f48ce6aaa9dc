/*
 * The metadata side of draining a storage target (docs/migration.md):
 * MIGRATE_DRAIN marks a target draining in the chooser (no new files),
 * MIGRATE_BEGIN reads a file's write_gen before its copy, and
 * MIGRATE_COMMIT moves one file's chunk from one target to another in the
 * inode record, in the batch's transaction, only if nothing wrote the file
 * since its copy began (write_gen unchanged, no writer registered) and the
 * old chunk is still fenced against writes. Handlers in sfs_handlers.h
 * (meta_drain, meta_migrate).
 */
#ifndef SFS_META_MIGRATE_H
#define SFS_META_MIGRATE_H

#include "sfs_meta_store.h"

#include <stdint.h>

struct sfs_meta_op;
struct sfs_tp_request;

/* 1 when `req` comes from an administrator; else 0, answered -EPERM. */
int sfs_meta_migrate_admin(struct sfs_tp_request *req);

/* MIGRATE_BEGIN's work (metadata thread): op->migrate.write_gen gets the
 * file's, or -EBUSY while a writer is registered, -ENOENT. MIGRATE_COMMIT's: 0, or -ENOENT (no such
 * file), -EOPNOTSUPP (mirrored), -ESTALE (not on `from` any more), -EEXIST (it uses `to` already),
 * -EBUSY (a writer registered or came since the copy), -ETIMEDOUT (the fence ran out), each with
 * sfs_error_set. */
int sfs_meta_migrate_run(sfs_meta_txn_t *txn, struct sfs_meta_op *op, uint64_t now_ns);

#endif
