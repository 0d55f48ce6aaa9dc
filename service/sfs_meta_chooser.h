/*
 * The target chooser of the metadata role: which storage targets a new
 * file's chunks go to. Weighted by free space and spread by smooth
 * weighted round-robin, so that over many files each target gets a share
 * in proportion to its free space and consecutive files start on
 * different targets.
 *
 * It knows every target of the cluster map, online or not: a create that
 * names a target (its start target) which does not exist is refused with
 * -EINVAL; one that names an offline or full target gets others instead.
 * Only online targets are chosen: a probably-offline one (it missed a
 * heartbeat) gets no new file, unless no online target is usable at all
 * (a late heartbeat under load must not fail every create; a dead target
 * then fails the first write, as it would have anyway).
 * Thread-safe (the map is refreshed on the progress thread, files are
 * created on the metadata thread). Pure logic: no transport, unit-tested
 * in tests/unit/service/test_meta_chooser.c.
 */
#ifndef SFS_META_CHOOSER_H
#define SFS_META_CHOOSER_H

#include "sfs_map.h"

#include <pthread.h>
#include <stdint.h>

typedef struct sfs_meta_target {
    uint32_t id;
    int      online;
    uint64_t weight;  /* free MiB; 0: not usable (not online, or full) */
    uint64_t suspect; /* probably-offline: its free MiB, for the last resort */
    int64_t  current;
} sfs_meta_target_t;

typedef struct sfs_meta_chooser {
    pthread_mutex_t    lock;
    sfs_meta_target_t *targets;
    uint32_t           target_count;
    uint64_t           files_chosen; /* for rotating the first target */
} sfs_meta_chooser_t;

void sfs_meta_chooser_init(sfs_meta_chooser_t *chooser);
void sfs_meta_chooser_cleanup(sfs_meta_chooser_t *chooser);
/* Take the targets of `map` (keeping each known target's round-robin
 * state). Returns 0 or -ENOMEM (the old list is then kept). */
int sfs_meta_chooser_update(sfs_meta_chooser_t *chooser, const sfs_map_t *map);
/* An sfs_meta_choose_fn (sfs_meta_store.h) with `arg` a chooser: picks up
 * to `count` distinct usable targets into `targets`, `start_target` (when
 * not 0 and usable) first. Returns how many (fewer than asked when fewer
 * are usable), or -EINVAL (no such start target), -EHOSTDOWN (none
 * online), -ENOSPC (all full), each with sfs_error_set. */
int sfs_meta_choose(void *arg, uint32_t count, uint32_t start_target, uint32_t *targets);
/* The cluster's targets and how many are online and not full now. */
void sfs_meta_chooser_counts(sfs_meta_chooser_t *chooser, uint32_t *total, uint32_t *usable);

#endif
