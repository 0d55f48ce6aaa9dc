/*
 * Storage pools on the metadata role (docs/pools.md): a pool's name to its
 * id, and a new file's targets chosen among its pool's targets only. A
 * full pool does not spill into another: the choice fails with -ENOSPC
 * naming the pool. Pools come from the config (sfs_config_pool_*), which
 * every rank parses from the same text.
 */
#ifndef SFS_META_POOL_H
#define SFS_META_POOL_H

#include "sfs_config.h"
#include "sfs_meta_chooser.h"

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

#endif
