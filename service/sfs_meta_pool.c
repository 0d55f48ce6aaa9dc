/*
 * Storage pools on the metadata role (sfs_meta_pool.h).
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_pool.h"

#include "sfs_errno.h"
#include "sfs_proto.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(SFS_POOL_NONE == SFS_CONFIG_POOL_NONE && SFS_POOL_DEFAULT == SFS_CONFIG_POOL_DEFAULT,
               "the wire's pool ids are the config's");
_Static_assert(SFS_POOL_NAME_MAX == SFS_CONFIG_POOL_NAME_MAX, "pool names fit the wire");

int sfs_meta_pool_resolve(const sfs_config_t *config, const char *path, const char *name,
                          uint32_t *pool_p)
{
    if (strcmp(name, "none") == 0) {
        *pool_p = SFS_POOL_NONE;
        return 0;
    }
    if (sfs_config_pool_find(config, name, pool_p) != 0) {
        char detail[SFS_ERROR_DETAIL_MAX];

        snprintf(detail, sizeof(detail), "%s", sfs_error_detail());
        /* a bad argument, not a missing file (MPI-IO would say NO_SUCH_FILE) */
        return sfs_error_set(-EINVAL, "'%.200s': %s", path, detail);
    }
    return 0;
}

/* The pool's targets into ids (the config's targets that are in it). */
static uint32_t sfs_meta_pool_targets(const sfs_config_t *config, uint32_t pool, uint32_t *ids)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < config->target_count; i++) {
        if (sfs_config_pool_of(config, config->targets[i].id) == pool) {
            ids[n++] = config->targets[i].id;
        }
    }
    return n;
}

/* "101, 201" into buf. */
static const char *sfs_meta_pool_list(const uint32_t *ids, uint32_t n, char *buf, size_t size)
{
    size_t used = 0;

    buf[0] = '\0';
    for (uint32_t i = 0; i < n && used + 16 < size; i++) {
        used += (size_t)snprintf(buf + used, size - used, "%s%" PRIu32, i ? ", " : "", ids[i]);
    }
    return buf;
}

int sfs_meta_pool_choose(sfs_meta_chooser_t *chooser, const sfs_config_t *config, uint32_t pool,
                         uint32_t count, uint32_t start_target, uint32_t *targets,
                         uint32_t *candidates_p)
{
    const char       *name = sfs_config_pool_name(config, pool);
    sfs_meta_filter_t filter;
    uint32_t         *ids;
    char              list[256];
    int               rc;

    if (pool == SFS_POOL_NONE) {
        if (candidates_p) {
            *candidates_p = config->target_count;
        }
        return sfs_meta_choose(chooser, count, start_target, targets);
    }
    if (!name) {
        /* a pool removed from the config since the directory was set */
        return sfs_error_set(-ENOENT,
                             "storage pool %" PRIu32 " is not in the config (%s) any more: set "
                             "the directory's pool again (stripefs-ctl setpattern --pool)",
                             pool, config->path);
    }
    ids = calloc(config->target_count ? config->target_count : 1, sizeof(*ids));
    if (!ids) {
        return sfs_error_set(-ENOMEM, "out of memory choosing targets in pool %s", name);
    }
    filter.ids   = ids;
    filter.count = sfs_meta_pool_targets(config, pool, ids);
    if (candidates_p) {
        *candidates_p = filter.count;
    }
    sfs_meta_pool_list(ids, filter.count, list, sizeof(list));
    if (filter.count == 0) {
        rc = sfs_error_set(-ENOSPC, "storage pool '%s' has no targets (all are in named pools)",
                           name);
    } else if (start_target && sfs_config_pool_of(config, start_target) != pool) {
        rc = sfs_error_set(-EINVAL,
                           "start target %" PRIu32 " is in storage pool '%s', not in '%s' "
                           "(targets %s)",
                           start_target,
                           sfs_config_pool_name(config, sfs_config_pool_of(config, start_target)),
                           name, list);
    } else {
        rc = sfs_meta_choose_in(chooser, &filter, count, start_target, targets);
    }
    /* the chooser's words are about the cluster; these are about the pool
     * (a refused start target keeps its own: the rest of the pool may be fine) */
    if (start_target == 0 && rc == -ENOSPC && filter.count) {
        rc = sfs_error_set(-ENOSPC,
                           "storage pool '%s' is full (targets %s): its files do not spill "
                           "into other pools",
                           name, list);
    } else if (start_target == 0 && rc == -EHOSTDOWN) {
        rc = sfs_error_set(-EHOSTDOWN, "no target of storage pool '%s' is online (targets %s)",
                           name, list);
    }
    free(ids);
    return rc;
}
