/*
 * Resync of a returning mirror member (docs/mirroring.md, "Resync"): the
 * member that served alone copies the chunk files of its change log to the
 * buddy, in passes (a file changed during a pass is copied again by the
 * next), each file as TRUNCATE to its length, WRITEs of its bytes and an
 * FSYNC (or CHUNK_UNLINK when it is gone here), over a server session.
 * When a pass leaves nothing, the log is removed: the buddy is good.
 *
 * Driven from the storage progress loop (sfs_storage_mirror_state.c): one
 * request to the buddy at a time, never waiting for it; the pieces are
 * read from the local chunk file on the progress thread (512 KiB each).
 */
#ifndef SFS_MIRROR_RESYNC_H
#define SFS_MIRROR_RESYNC_H

#include "sfs_chunk_store.h"
#include "sfs_cluster.h"
#include "sfs_mirror_log.h"

typedef struct sfs_mirror_resync sfs_mirror_resync_t;

int  sfs_mirror_resync_create(sfs_chunk_target_t *target, sfs_mirror_log_t *log,
                              sfs_mirror_resync_t **resync_p);
void sfs_mirror_resync_destroy(sfs_mirror_resync_t *resync);

/* Start when the buddy is online in `map`, or move along; non-zero when
 * the state changed (management is to be told). */
int sfs_mirror_resync_tick(sfs_mirror_resync_t *resync, sfs_cluster_t *cluster,
                           const sfs_map_t *map, uint64_t now);
/* SFS_MIRROR_STATE_* of the buddy, and the progress in chunk files. */
uint32_t sfs_mirror_resync_state(const sfs_mirror_resync_t *resync, uint64_t *done_p,
                                 uint64_t *total_p);

#endif
