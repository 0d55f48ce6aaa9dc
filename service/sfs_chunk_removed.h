/*
 * Chunk files a storage rank removed lately (docs/mirroring.md, "Removed
 * files"): a copy from the buddy (a mirror forward or a resync) of a chunk
 * file this member removed within the last SFS_CHUNK_REMOVED_KEEP_MS would
 * make it again, where nothing but stripefs-fsck --repair removes it (a
 * forward that a stalled connection delivered late, after the removal).
 * Entry ids are never reused, so such a copy is stale: it is answered
 * done and not written. Only a removal by a server (the metadata server's
 * deletion of a removed file, a resync's "absent here: remove there") is
 * noted, not an administrator's (fsck, a failed move).
 *
 * In memory only, at most `max` entries (the oldest forgotten first): a
 * restarted rank has no connection left that could deliver a stale copy.
 * Not thread-safe: the storage role uses it on its progress thread.
 */
#ifndef SFS_CHUNK_REMOVED_H
#define SFS_CHUNK_REMOVED_H

#include <stdint.h>

#define SFS_CHUNK_REMOVED_KEEP_MS (10u * 60u * 1000u)
#define SFS_CHUNK_REMOVED_MAX     (256u * 1024u)

typedef struct sfs_chunk_removed sfs_chunk_removed_t;

/* 0 or -ENOMEM. */
int  sfs_chunk_removed_create(uint32_t max, uint64_t keep_ms, sfs_chunk_removed_t **removed_p);
void sfs_chunk_removed_destroy(sfs_chunk_removed_t *removed);
/* The chunk file of `entry_id` on `target_id` was removed at `now_ms`
 * (monotonic clock); 0 or -ENOMEM. */
int sfs_chunk_removed_note(sfs_chunk_removed_t *removed, uint32_t target_id, uint64_t entry_id,
                           uint64_t now_ms);
/* 1 when it was removed within keep_ms before `now_ms`, else 0. */
int sfs_chunk_removed_recent(sfs_chunk_removed_t *removed, uint32_t target_id, uint64_t entry_id,
                             uint64_t now_ms);
/* How many are remembered now; how many were forgotten early (full). */
uint32_t sfs_chunk_removed_count(const sfs_chunk_removed_t *removed);
uint64_t sfs_chunk_removed_dropped(const sfs_chunk_removed_t *removed);

#endif
