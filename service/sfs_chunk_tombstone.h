/*
 * Tombstones of chunk files moved off a storage target (docs/migration.md).
 * A client that opened a file before its chunk was moved still holds the old
 * pattern; a read of the old target would find no chunk file and answer
 * zeros. So the old chunk first gets a *fence* (in memory, SFS_MOVED_FENCE_S
 * long: writes refused) while the move is committed, then a *tombstone*
 * (a file <target dir>/tombstones/<entry id>, made durable before the chunk
 * file is removed): every request for that chunk then gets -ESTALE, and the
 * client fetches the file's pattern again. A tombstone found at start
 * finishes its removal (the chunk file goes). fsck --repair clears them.
 *
 * The table is the storage role's (sfs_storage_t.tombstones); lookups are
 * thread-safe and cost nothing while the rank has no fence or tombstone.
 */
#ifndef SFS_CHUNK_TOMBSTONE_H
#define SFS_CHUNK_TOMBSTONE_H

#include <stdint.h>

struct sfs_storage;
struct sfs_storage_op;

/* Load every target's tombstones (and remove their chunk files). */
int  sfs_tombstones_create(struct sfs_storage *storage);
void sfs_tombstones_destroy(struct sfs_storage *storage);
/* -ESTALE (with sfs_error_set) when a request `opcode` for the chunk of
 * `entry_id` on `target_id` may not touch it now, else 0. */
int sfs_tombstones_check(struct sfs_storage *storage, uint32_t opcode, uint32_t target_id,
                         uint64_t entry_id);
/* Before an op runs (progress thread): non-zero, with -ESTALE replied,
 * when it must not touch its chunk: any request to a tombstone, a write
 * or truncate to a fence. */
int sfs_tombstones_admit(struct sfs_storage *storage, struct sfs_storage_op *op);
/* After it ran, before its reply: the same test again (a tombstone made
 * while it ran: a read may have found the chunk file gone), setting
 * op->status to -ESTALE. */
void sfs_tombstones_recheck(struct sfs_storage *storage, struct sfs_storage_op *op);

#endif
