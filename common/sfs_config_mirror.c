/*
 * The config's mirror groups (`mirror:`): which pairs of targets hold the
 * same chunk files of mirrored files, whether new files are mirrored by
 * default, and the checks across them (known targets, two hosts, no target
 * in two groups). docs/mirroring.md says what mirroring does.
 *
 *   mirror:
 *     groups:
 *       - {primary: 101, secondary: 201}
 *     default: false     # the root directory (made with a new store) mirrors new files
 *     same_host: false   # allow a group on one host: one-host trials only
 *     stale_reads: false # true: reads need no lease (docs/mirroring.md, "Fencing")
 */
#define SFS_LOG_FAC "config"
#include "sfs_config_internal.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static const sfs_config_key_t sfs_config_group_keys[] = {
    {.name     = "primary",
     .type     = SFS_CONFIG_TYPE_UINT,
     .required = 1,
     SFS_CONFIG_FIELD(sfs_config_mirror_group_t, primary),
     .min = 1,
     .max = SFS_CONFIG_MAX_TARGET_ID},
    {.name     = "secondary",
     .type     = SFS_CONFIG_TYPE_UINT,
     .required = 1,
     SFS_CONFIG_FIELD(sfs_config_mirror_group_t, secondary),
     .min = 1,
     .max = SFS_CONFIG_MAX_TARGET_ID},
};

static int sfs_config_group_add(sfs_config_ctx_t *ctx, uint32_t index, int line, void **item_p)
{
    sfs_config_t *config = ctx->config;
    int           rc;

    rc = sfs_config_grow((void **)&config->mirror_groups, &ctx->mirror_alloc, index + 1,
                         sizeof(*config->mirror_groups));
    if (rc != 0) {
        return rc;
    }
    config->mirror_groups[index].line = line;
    config->mirror_groups[index].id   = index + 1;
    *item_p                           = &config->mirror_groups[index];
    return 0;
}

static int sfs_config_group_done(sfs_config_ctx_t *ctx, uint32_t index)
{
    ctx->config->mirror_group_count = index + 1;
    return 0;
}

static int sfs_config_parse_groups(sfs_config_ctx_t *ctx, const char *path, void *object)
{
    static const sfs_config_list_t groups = {
        .expected  = "a list of mirror groups",
        .item      = "{primary: 101, secondary: 201}",
        .noun      = "mirror groups",
        .max       = SFS_CONFIG_MAX_TARGETS / 2,
        .empty     = "name at least one group, or leave mirror.groups out",
        .keys      = sfs_config_group_keys,
        .key_count = SFS_ARRAY_SIZE(sfs_config_group_keys),
        .add       = sfs_config_group_add,
        .done      = sfs_config_group_done,
    };

    (void)object;
    return sfs_config_parse_list(ctx, path, &groups);
}

const sfs_config_key_t sfs_config_mirror_keys[SFS_CONFIG_MIRROR_KEY_COUNT] = {
    {.name = "groups", .type = SFS_CONFIG_TYPE_LIST, .parse = sfs_config_parse_groups},
    {.name = "default",
     .type = SFS_CONFIG_TYPE_BOOL,
     SFS_CONFIG_FIELD(sfs_config_t, mirror_default)},
    {.name = "same_host",
     .type = SFS_CONFIG_TYPE_BOOL,
     SFS_CONFIG_FIELD(sfs_config_t, mirror_same_host)},
    {.name = "stale_reads",
     .type = SFS_CONFIG_TYPE_BOOL,
     SFS_CONFIG_FIELD(sfs_config_t, mirror_stale_reads)},
};

static const sfs_config_target_t *sfs_config_target_by_id(const sfs_config_t *config, uint32_t id)
{
    for (uint32_t i = 0; i < config->target_count; i++) {
        if (config->targets[i].id == id) {
            return &config->targets[i];
        }
    }
    return NULL;
}

const sfs_config_mirror_group_t *sfs_config_mirror_group_of(const sfs_config_t *config,
                                                            uint32_t            target_id)
{
    for (uint32_t i = 0; i < config->mirror_group_count; i++) {
        const sfs_config_mirror_group_t *group = &config->mirror_groups[i];

        if (group->primary == target_id || group->secondary == target_id) {
            return group;
        }
    }
    return NULL;
}

int sfs_config_mirror_validate(sfs_config_ctx_t *ctx)
{
    const sfs_config_t *config = ctx->config;
    char                path[SFS_CONFIG_PATH_KEY_MAX];

    for (uint32_t g = 0; g < config->mirror_group_count; g++) {
        const sfs_config_mirror_group_t *group = &config->mirror_groups[g];
        const sfs_config_target_t       *primary, *secondary;
        const uint32_t                   members[2] = {group->primary, group->secondary};

        snprintf(path, sizeof(path), "mirror.groups[%" PRIu32 "]", g);
        primary   = sfs_config_target_by_id(config, group->primary);
        secondary = sfs_config_target_by_id(config, group->secondary);
        if (!primary || !secondary) {
            return sfs_config_fail(ctx, group->line, path, "target %" PRIu32 " is not in storage:",
                                   primary ? group->secondary : group->primary);
        }
        if (group->primary == group->secondary) {
            return sfs_config_fail(ctx, group->line, path,
                                   "target %" PRIu32 " cannot mirror itself", group->primary);
        }
        if (!config->mirror_same_host && sfs_config_host_matches(primary->host, secondary->host)) {
            return sfs_config_fail(ctx, group->line, path,
                                   "targets %" PRIu32 " and %" PRIu32
                                   " are both on host %s: the two copies must be on different "
                                   "hosts (mirror.same_host: true allows it for one-host trials)",
                                   group->primary, group->secondary, primary->host);
        }
        for (uint32_t o = 0; o < g; o++) {
            const sfs_config_mirror_group_t *other = &config->mirror_groups[o];

            for (int m = 0; m < 2; m++) {
                if (other->primary == members[m] || other->secondary == members[m]) {
                    return sfs_config_fail(
                        ctx, group->line, path,
                        "target %" PRIu32 " is already in mirror group %" PRIu32 " (%" PRIu32
                        "+%" PRIu32 ", line %d): a target is in one group",
                        members[m], other->id, other->primary, other->secondary, other->line);
                }
            }
        }
    }
    return 0;
}
