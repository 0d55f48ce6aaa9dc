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
/* The log was begun while the buddy stayed online (a removal done here
 * after a resync had ended, sfs_storage_mirror_unlinked): start a pass at
 * the next tick without waiting for the map to show the buddy away. */
void sfs_mirror_resync_wanted(sfs_mirror_resync_t *resync);
/* SFS_MIRROR_STATE_* of the buddy, and the progress in chunk files. */
uint32_t sfs_mirror_resync_state(const sfs_mirror_resync_t *resync, uint64_t *done_p,
                                 uint64_t *total_p);

/* Rebuild of a buddy that lost its disk (docs/mirroring.md, "Rebuild";
 * sfs_mirror_rebuild.c): none, the buddy is bad and waits for the
 * command, or the full copy is under way (resumed after a restart). */
enum { SFS_MIRROR_REBUILD_NONE, SFS_MIRROR_REBUILD_WAITING, SFS_MIRROR_REBUILD_STARTED };
/* MIRROR_REBUILD's chunk_req flags: the buddy's probe at its start
 * (`length`: its disk id), else the administrator's command. */
#define SFS_MIRROR_REBUILD_PROBE 1u

/* The buddy's probe: *bad_p is set when it needs a rebuild (this target
 * holds chunk files it lacks); from then on this target serves alone and
 * logs its changes, and the buddy is bad. */
int sfs_mirror_resync_probe_answer(sfs_mirror_resync_t *resync, uint64_t buddy_chunks, int *bad_p);
/* The command: start the full copy to the bad buddy; *total_p gets the
 * chunk files to copy. Refused (detail set) when there is nothing to
 * rebuild or this member is not a good primary in `map`. */
int sfs_mirror_resync_rebuild_start(sfs_mirror_resync_t *resync, const sfs_map_t *map,
                                    uint64_t *total_p);
int sfs_mirror_resync_rebuild_state(const sfs_mirror_resync_t *resync);

#endif
