/*
 * The batches a metadata mirror missed (docs/metadata-mirror.md,
 * "Resync"), kept in memory by the metadata server from the last batch the
 * mirror is known to hold, so that a mirror that comes back gets only them
 * instead of a full copy of the store.
 *
 * The base is a state the mirror acknowledged: its batch number and its
 * count of batches committed alone (sfs_meta_store_mirror_mark). Each batch
 * kept after it is one this server committed, in order, with its encoded
 * writes. A mirror that answers a probe with the base's two numbers, or
 * with a kept batch's, holds this server's history up to there (the
 * backlog lives only as long as the process: a restarted server starts
 * without one), so the kept batches after it bring it in step.
 *
 * Invalid (a full copy is needed) before the first reset, after a batch
 * that does not follow, past `max_bytes`, or when invalidated. Not thread
 * safe: the metadata thread's.
 */
#ifndef SFS_META_BACKLOG_H
#define SFS_META_BACKLOG_H

#include <stddef.h>
#include <stdint.h>

typedef struct sfs_meta_backlog sfs_meta_backlog_t;

int  sfs_meta_backlog_create(size_t max_bytes, sfs_meta_backlog_t **backlog_p);
void sfs_meta_backlog_destroy(sfs_meta_backlog_t *backlog);
/* The mirror holds everything up to batch `seq` with `alone` batches
 * committed alone: forget what is kept, start after it (valid). */
void sfs_meta_backlog_reset(sfs_meta_backlog_t *backlog, uint64_t seq, uint64_t alone);
void sfs_meta_backlog_invalidate(sfs_meta_backlog_t *backlog);
int  sfs_meta_backlog_valid(const sfs_meta_backlog_t *backlog);
/* Keep batch `seq` (committed alone: `alone`), its encoded writes copied.
 * A batch that does not follow the last one, or one past max_bytes,
 * invalidates the backlog. */
void sfs_meta_backlog_add(sfs_meta_backlog_t *backlog, uint64_t seq, int alone, const void *data,
                          size_t length);
/* For a mirror at (seq, alone): 0 and the index of the first kept batch it
 * lacks (== the count when it has them all), or -ESTALE when the backlog
 * cannot bring it in step. */
int      sfs_meta_backlog_from(const sfs_meta_backlog_t *backlog, uint64_t seq, uint64_t alone,
                               uint32_t *first_p);
uint32_t sfs_meta_backlog_count(const sfs_meta_backlog_t *backlog);
size_t   sfs_meta_backlog_bytes(const sfs_meta_backlog_t *backlog);
/* Kept batch `i`: its number, writes and length. */
const void *sfs_meta_backlog_get(const sfs_meta_backlog_t *backlog, uint32_t i, uint64_t *seq_p,
                                 size_t *length_p);

#endif
