/*
 * The config's storage pools (`pools:`): named sets of targets that the
 * files of a directory set to a pool use, and only they (docs/pools.md).
 * Targets in no named pool are in the pool `default` (id 1). A named pool's
 * id is what directories keep (in the metadata store): `id:` fixes it; without
 * one, pools get 2, 3, ... in the order of the config, which reordering the
 * list would change.
 *
 *   pools:
 *     - {id: 2, name: hdd, targets: [101, 201]}
 *     - {id: 3, name: nvme, targets: [301, 401]}
 */
#define SFS_LOG_FAC "config"
#include "sfs_config_internal.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A list of target ids: read into the pool whose mapping is being read. */
static int sfs_config_parse_pool_targets(sfs_config_ctx_t *ctx, const char *path, void *object)
{
    sfs_config_pool_t *pool = object;
    char               item[SFS_CONFIG_PATH_KEY_MAX];
    int                list_line = sfs_config_event_line(ctx);
    int                rc;

    rc = sfs_config_expect(ctx, path, YAML_SEQUENCE_START_EVENT, "a list of target ids");
    if (rc != 0) {
        return rc;
    }
    pool->target_count = 0;
    for (;;) {
        const char   *value;
        char         *end;
        unsigned long id;
        int           line;

        rc = sfs_config_next(ctx);
        if (rc != 0) {
            return rc;
        }
        if (ctx->event.type == YAML_SEQUENCE_END_EVENT) {
            break;
        }
        line = sfs_config_event_line(ctx);
        snprintf(item, sizeof(item), "%s[%" PRIu32 "]", path, pool->target_count);
        if (ctx->event.type != YAML_SCALAR_EVENT) {
            return sfs_config_fail(ctx, line, item, "expected a target id like 101");
        }
        value = (const char *)ctx->event.data.scalar.value;
        id    = strtoul(value, &end, 10);
        if (value[0] < '0' || value[0] > '9' || *end != '\0' || id < 1 ||
            id > SFS_CONFIG_MAX_TARGET_ID) {
            char shown[SFS_CONFIG_SHOW_BUF];

            return sfs_config_fail(
                ctx, line, item, "'%s' is not a target id (1..%d)",
                sfs_config_show(value, ctx->event.data.scalar.length, shown, sizeof(shown)),
                SFS_CONFIG_MAX_TARGET_ID);
        }
        if (pool->target_count == SFS_CONFIG_MAX_TARGETS) {
            return sfs_config_fail(ctx, line, item, "too many targets (at most %d)",
                                   SFS_CONFIG_MAX_TARGETS);
        }
        rc = sfs_config_grow((void **)&pool->targets, &pool->target_alloc, pool->target_count + 1,
                             sizeof(*pool->targets));
        if (rc != 0) {
            return rc;
        }
        pool->targets[pool->target_count++] = (uint32_t)id;
    }
    if (pool->target_count == 0) {
        return sfs_config_fail(ctx, list_line, path,
                               "pool '%s' has no targets (name at least one, or leave the "
                               "pool out)",
                               pool->name[0] ? pool->name : "?");
    }
    return 0;
}

static const sfs_config_key_t sfs_config_pool_keys[] = {
    {.name = "id",
     .type = SFS_CONFIG_TYPE_UINT,
     SFS_CONFIG_FIELD(sfs_config_pool_t, id),
     .min = SFS_CONFIG_POOL_DEFAULT + 1,
     .max = SFS_CONFIG_MAX_POOL_ID},
    /* any printable text here; sfs_config_pool_validate says what a pool
     * name may hold, naming it a pool name */
    {.name     = "name",
     .type     = SFS_CONFIG_TYPE_ADDRESS,
     .required = 1,
     SFS_CONFIG_FIELD(sfs_config_pool_t, name)},
    {.name     = "targets",
     .type     = SFS_CONFIG_TYPE_LIST,
     .required = 1,
     .parse    = sfs_config_parse_pool_targets},
};

static int sfs_config_pool_add(sfs_config_ctx_t *ctx, uint32_t index, int line, void **item_p)
{
    sfs_config_t *config = ctx->config;
    int           rc;

    rc = sfs_config_grow((void **)&config->pools, &ctx->pool_alloc, index + 1,
                         sizeof(*config->pools));
    if (rc != 0) {
        return rc;
    }
    /* counted at once, so that a failure later in the item frees its list */
    config->pool_count        = index + 1;
    config->pools[index].line = line;
    config->pools[index].id   = SFS_CONFIG_POOL_DEFAULT + 1 + index;
    *item_p                   = &config->pools[index];
    return 0;
}

int sfs_config_parse_pools(sfs_config_ctx_t *ctx, const char *path, void *object)
{
    static const sfs_config_list_t pools = {
        .expected  = "a list of storage pools",
        .item      = "{name: hdd, targets: [101, 201]}",
        .noun      = "storage pools",
        .max       = SFS_CONFIG_MAX_POOLS,
        .empty     = "name at least one pool, or leave `pools:` out",
        .keys      = sfs_config_pool_keys,
        .key_count = SFS_ARRAY_SIZE(sfs_config_pool_keys),
        .add       = sfs_config_pool_add,
    };

    (void)object;
    return sfs_config_parse_list(ctx, path, &pools);
}

void sfs_config_pool_free(sfs_config_t *config)
{
    for (uint32_t i = 0; i < config->pool_count; i++) {
        free(config->pools[i].targets);
    }
    free(config->pools);
    config->pools      = NULL;
    config->pool_count = 0;
}

uint32_t sfs_config_pool_of(const sfs_config_t *config, uint32_t target_id)
{
    for (uint32_t p = 0; p < config->pool_count; p++) {
        for (uint32_t t = 0; t < config->pools[p].target_count; t++) {
            if (config->pools[p].targets[t] == target_id) {
                return config->pools[p].id;
            }
        }
    }
    return SFS_CONFIG_POOL_DEFAULT;
}

int sfs_config_pool_find(const sfs_config_t *config, const char *name, uint32_t *id_p)
{
    if (strcmp(name, "default") == 0) {
        *id_p = SFS_CONFIG_POOL_DEFAULT;
        return 0;
    }
    for (uint32_t p = 0; p < config->pool_count; p++) {
        if (strcmp(config->pools[p].name, name) == 0) {
            *id_p = config->pools[p].id;
            return 0;
        }
    }
    return sfs_error_set(-ENOENT, "no storage pool '%.64s' in the config (%s): its pools are %s%s",
                         name, config->path[0] ? config->path : SFS_CONFIG_GENERATED_NAME,
                         "default", config->pool_count ? " and those under pools:" : " only");
}

const char *sfs_config_pool_name(const sfs_config_t *config, uint32_t id)
{
    if (id == SFS_CONFIG_POOL_NONE) {
        return "none";
    }
    if (id == SFS_CONFIG_POOL_DEFAULT) {
        return "default";
    }
    for (uint32_t p = 0; p < config->pool_count; p++) {
        if (config->pools[p].id == id) {
            return config->pools[p].name;
        }
    }
    return NULL;
}

static int sfs_config_has_target(const sfs_config_t *config, uint32_t id)
{
    for (uint32_t i = 0; i < config->target_count; i++) {
        if (config->targets[i].id == id) {
            return 1;
        }
    }
    return 0;
}

/* Name rules of one pool, and no earlier pool of the same name. */
static int sfs_config_pool_check_name(sfs_config_ctx_t *ctx, uint32_t p, const char *path)
{
    const sfs_config_t      *config  = ctx->config;
    const sfs_config_pool_t *pool    = &config->pools[p];
    const char              *problem = sfs_config_check_name(pool->name, SFS_CONFIG_TYPE_CLUSTER);

    if (problem != NULL) {
        char shown[SFS_CONFIG_SHOW_BUF];

        return sfs_config_fail(
            ctx, pool->line, path, "'%s' is not a valid pool name: %s",
            sfs_config_show(pool->name, strlen(pool->name), shown, sizeof(shown)), problem);
    }
    if (strcmp(pool->name, "default") == 0 || strcmp(pool->name, "none") == 0) {
        return sfs_config_fail(ctx, pool->line, path,
                               "'%s' is a reserved pool name (targets in no pool are in "
                               "`default`; `none` is a directory without a pool)",
                               pool->name);
    }
    for (uint32_t o = 0; o < p; o++) {
        if (strcmp(config->pools[o].name, pool->name) == 0) {
            return sfs_config_fail(ctx, pool->line, path,
                                   "pool '%s' is named twice (first at line %d)", pool->name,
                                   config->pools[o].line);
        }
        if (config->pools[o].id == pool->id) {
            return sfs_config_fail(ctx, pool->line, path,
                                   "pool '%s' has id %" PRIu32 ", as pool '%s' (line %d) has: give "
                                   "every pool an id: of its own",
                                   pool->name, pool->id, config->pools[o].name,
                                   config->pools[o].line);
        }
    }
    return 0;
}

int sfs_config_pool_validate(sfs_config_ctx_t *ctx)
{
    const sfs_config_t *config = ctx->config;
    char                path[SFS_CONFIG_PATH_KEY_MAX];
    int                 rc;

    for (uint32_t p = 0; p < config->pool_count; p++) {
        const sfs_config_pool_t *pool = &config->pools[p];

        snprintf(path, sizeof(path), "pools[%" PRIu32 "]", p);
        rc = sfs_config_pool_check_name(ctx, p, path);
        if (rc != 0) {
            return rc;
        }
        for (uint32_t t = 0; t < pool->target_count; t++) {
            uint32_t id = pool->targets[t];

            snprintf(path, sizeof(path), "pools[%" PRIu32 "].targets[%" PRIu32 "]", p, t);
            if (!sfs_config_has_target(config, id)) {
                return sfs_config_fail(
                    ctx, pool->line, path,
                    "pool '%s': target %" PRIu32 " is not in storage:", pool->name, id);
            }
            /* an earlier pool, or earlier in this one */
            for (uint32_t o = 0; o <= p; o++) {
                const sfs_config_pool_t *other = &config->pools[o];
                uint32_t                 end   = o == p ? t : other->target_count;

                for (uint32_t k = 0; k < end; k++) {
                    if (other->targets[k] != id) {
                        continue;
                    }
                    if (o == p) {
                        return sfs_config_fail(ctx, pool->line, path,
                                               "pool '%s' names target %" PRIu32 " twice",
                                               pool->name, id);
                    }
                    return sfs_config_fail(ctx, pool->line, path,
                                           "target %" PRIu32 " is already in pool '%s' (line %d): "
                                           "a target is in one pool",
                                           id, other->name, other->line);
                }
            }
        }
    }
    /* a mirrored file's chunks live on both members: both in its pool */
    for (uint32_t g = 0; g < config->mirror_group_count; g++) {
        const sfs_config_mirror_group_t *group = &config->mirror_groups[g];
        uint32_t                         a     = sfs_config_pool_of(config, group->primary);
        uint32_t                         b     = sfs_config_pool_of(config, group->secondary);

        if (a != b) {
            snprintf(path, sizeof(path), "mirror.groups[%" PRIu32 "]", g);
            return sfs_config_fail(ctx, group->line, path,
                                   "targets %" PRIu32 " (pool %s) and %" PRIu32
                                   " (pool %s) are in different pools: both members of a mirror "
                                   "group must be in one pool",
                                   group->primary, sfs_config_pool_name(config, a),
                                   group->secondary, sfs_config_pool_name(config, b));
        }
    }
    return 0;
}
