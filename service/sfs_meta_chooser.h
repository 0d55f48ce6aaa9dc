/*
 * The target chooser of the metadata role: which storage targets a new
 * file's chunks go to (docs/capacity.md). Weighted by free space and
 * spread by smooth weighted round-robin, so that over many files each
 * target gets a share in proportion to its free space (targets of unequal
 * size fill alike as long as files are narrower than the cluster), and
 * consecutive files start on different targets. A file's targets are
 * spread over nodes first: another host, then another rank, before a
 * second target of one rank.
 *
 * It knows every target of the cluster map, online or not. A target is
 * usable when it is online, not draining, and not full: its free space is
 * at least the reserve (1% of its capacity, at least 1 MiB), and it has
 * not answered ENOSPC (the storage server then reports it with no free
 * space at once, docs/capacity.md). A probably-offline target (it missed a
 * heartbeat) gets no new file, unless no online target is usable at all (a
 * late heartbeat under load must not fail every create; a dead target then
 * fails the first write, as it would have anyway).
 *
 * When the default pattern spans every target and their capacities differ
 * by more than 10%, it warns once (those files cannot fill them alike).
 *
 * A start target (a create's explicit hint) is honoured or refused, never
 * moved: one that does not exist is refused with -EINVAL, one that is
 * offline with -EHOSTDOWN, full with -ENOSPC, draining with -EBUSY, each
 * message naming it. A file that gets fewer targets than asked (fewer are
 * usable) is the caller's to say (sfs_meta_run.c warns).
 *
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
    uint32_t node_id; /* its server rank */
    uint32_t host;    /* its host: an index, equal for ranks on one host */
    int      online;
    int      draining; /* set by a drain (sfs_meta_chooser_set_draining): no new files */
    int      full;     /* free below the reserve (or 0 after an ENOSPC) */
    uint64_t weight;   /* free MiB; 0: not usable (not online, full or draining) */
    uint64_t suspect;  /* probably-offline: its free MiB, for the last resort */
    int64_t  current;
    int64_t  first_current;  /* round-robin of the first target */
    uint32_t mirror_primary; /* the map's: its mirror group's member serving now (0: none) */
    uint32_t mirror_state;   /* the map's SFS_MIRROR_STATE_* of this member */
} sfs_meta_target_t;

typedef struct sfs_meta_chooser {
    pthread_mutex_t    lock;
    sfs_meta_target_t *targets;
    uint32_t           target_count;
    uint32_t           width_warned; /* the default pattern spans unequal targets: said,
                                      * with this many targets in the map (0: not yet) */
    /* the draining targets' ids, kept apart from `targets`: a flag read
     * from the store at start (sfs_meta_drain.c) holds before the first
     * map names its target */
    uint32_t *drain_ids;
    uint32_t  drain_count;
} sfs_meta_chooser_t;

/* Free space below which a target takes no new file: 1% of its capacity,
 * at least 1 MiB (a 4 MiB test target keeps 1 MiB; a 12 TB drive 120 GB,
 * BeeGFS's "emergency" pool). */
uint64_t sfs_meta_chooser_reserve(uint64_t capacity);

void sfs_meta_chooser_init(sfs_meta_chooser_t *chooser);
void sfs_meta_chooser_cleanup(sfs_meta_chooser_t *chooser);
/* Take the targets of `map` (keeping each known target's round-robin
 * state and draining flag). Returns 0 or -ENOMEM (the old list is then
 * kept). */
int sfs_meta_chooser_update(sfs_meta_chooser_t *chooser, const sfs_map_t *map);
/* Mark target `target_id` draining (no new files) or not; the target need
 * not be in the map yet. Returns 0, or -ENOMEM, or -EINVAL (target 0, or
 * more than SFS_DRAIN_LIST_MAX draining), with sfs_error_set. */
int sfs_meta_chooser_set_draining(sfs_meta_chooser_t *chooser, uint32_t target_id, int draining);
/* Whether the last map has target `target_id`. */
int sfs_meta_chooser_has_target(sfs_meta_chooser_t *chooser, uint32_t target_id);
/* An sfs_meta_choose_fn (sfs_meta_store.h) with `arg` a chooser: picks up
 * to `count` distinct usable targets into `targets`, `start_target` (when
 * not 0) first. Returns how many (fewer than asked when fewer are usable),
 * or -EINVAL (no such start target), -EHOSTDOWN (none online, or the start
 * target offline), -ENOSPC (all full, or the start target), -EBUSY (the
 * start target draining), each with sfs_error_set. */
int sfs_meta_choose(void *arg, uint32_t count, uint32_t start_target, uint32_t *targets);
/* The candidates a choice may take (a storage pool's targets,
 * service/sfs_meta_pool.c): NULL takes every target. Targets not in it
 * count for nothing: not online, not usable, no weight. */
typedef struct sfs_meta_filter {
    const uint32_t *ids;
    uint32_t        count;
} sfs_meta_filter_t;
/* The draining targets' ids (up to `max`); returns how many. */
uint32_t sfs_meta_chooser_draining(sfs_meta_chooser_t *chooser, uint32_t *ids, uint32_t max);
/* sfs_meta_choose among `filter`'s targets only (a start target outside
 * it is refused with -EINVAL). */
int sfs_meta_choose_in(void *arg, const sfs_meta_filter_t *filter, uint32_t count,
                       uint32_t start_target, uint32_t *targets);
/* A mirrored file's group whose config primary is `primary`: the member
 * that serves it now, as the map says (`primary` itself before a map names
 * one), or 0 when that member's copy is not good (the group takes no new
 * mirrored file). Whether it is usable (online, not full) is the choice's. */
uint32_t sfs_meta_chooser_mirror_primary(sfs_meta_chooser_t *chooser, uint32_t primary);
/* The cluster's targets and how many are usable now. */
void sfs_meta_chooser_counts(sfs_meta_chooser_t *chooser, uint32_t *total, uint32_t *usable);

#endif
