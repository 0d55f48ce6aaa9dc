/*
 * Storage pools on the metadata role (docs/pools.md): a pool's name to its
 * id, and a new file's targets chosen among its pool's targets only. A
 * full pool does not spill into another: the choice fails with -ENOSPC
 * naming the pool. Pools come from the config (sfs_config_pool_*), which
 * every rank parses from the same text, and from the metadata store's
 * pool records, which POOL_SET writes (sfs_meta_pool_set.c): the
 * metadata server works with a view of the config whose pools are the
 * two combined (sfs_meta_pools_t), and passes that view to the functions
 * below.
 */
#ifndef SFS_META_POOL_H
#define SFS_META_POOL_H

#include "sfs_config.h"
#include "sfs_meta_chooser.h"
#include "sfs_meta_store.h"

#include <stdint.h>

/* The id of pool `name` for entry `path` ("none": SFS_POOL_NONE, no pool);
 * -EINVAL naming the pool and the path when the config has no such pool. */
int sfs_meta_pool_resolve(const sfs_config_t *config, const char *path, const char *name,
                          uint32_t *pool_p);

/* Up to `count` distinct targets of pool `pool` (SFS_POOL_NONE: any
 * target), as sfs_meta_choose_in; a start target outside the pool is
 * refused (-EINVAL), and -ENOSPC / -EHOSTDOWN say which pool. *candidates_p
 * (when not NULL) gets how many targets the pool has (all the cluster's
 * for none). */
int sfs_meta_pool_choose(sfs_meta_chooser_t *chooser, const sfs_config_t *config, uint32_t pool,
                         uint32_t count, uint32_t start_target, uint32_t *targets,
                         uint32_t *candidates_p);

/* The pools in force: `view` is the service's config (shared, not owned:
 * its targets, mirror groups, path) with `pools` in place of its pools.
 * Changed on the metadata thread only (after a commit); read there. */
typedef struct sfs_meta_pools {
    sfs_config_t       view;
    sfs_config_pool_t *pools; /* owned; view.pools */
    uint32_t           count;
    uint32_t           max_id; /* the highest pool id used, deleted pools' too */
} sfs_meta_pools_t;

/* Build `pools` from `config` and the pool records in `txn` (replacing
 * what it held; on failure it is unchanged): a record replaces the
 * config's pool of its id (or, when none, of its name), a deleted pool's
 * record removes the pool of its id, other records are added; then each
 * target stays in the first pool that claims it, the store's pools
 * before the config's, and targets not in the config go. With `say`, each
 * conflict is logged (at the server's start). */
int  sfs_meta_pools_load(sfs_meta_pools_t *pools, const sfs_config_t *config, sfs_meta_txn_t *txn,
                         int say);
void sfs_meta_pools_cleanup(sfs_meta_pools_t *pools);

/* POOL_SET: check `req` against the pools in force in `txn` and write the
 * changed pool's record there (nothing else changes). Refusals, each
 * naming the problem: bad or reserved names and `default` (-EINVAL),
 * unknown targets (-EINVAL), a pool that exists (-EEXIST) or does not
 * (-ENOENT), a target in another pool (-EBUSY), a delete of a pool with
 * targets (-ENOTEMPTY), a mirror group split over two pools (-EINVAL).
 * *id_p (may be NULL) gets the pool's id. */
int sfs_meta_pools_change(sfs_meta_txn_t *txn, const sfs_config_t *config,
                          const sfs_pool_set_req_t *req, uint32_t *id_p);

/* POOL_SHOW's reply from a view: `default` first, then the pools. */
void sfs_meta_pools_list(const sfs_config_t *view, sfs_pool_list_reply_t *reply);

#endif
