/* stripefs-ctl mirror: the mirror groups (docs/mirroring.md). */
#include "stripefs_ctl.h"

#include "sfs_admin.h"
#include "sfs_map.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "101 @ rank 2 on host-a [online]" for one member. */
static void ctl_mirror_member(const sfs_map_t *map, uint32_t target_id, char *buf, size_t size)
{
    const sfs_map_target_t *t    = map ? sfs_map_find_target(map, target_id) : NULL;
    const sfs_map_node_t   *node = t ? sfs_map_find_node(map, t->node_id) : NULL;

    if (t) {
        snprintf(buf, size, "%u @ rank %u on %s [%s]", target_id, t->node_id,
                 node ? node->host : "?", sfs_state_name(t->state));
    } else {
        snprintf(buf, size, "%u [not registered]", target_id);
    }
}

/* The member's state, with a resync's or a rebuild's progress from the
 * map: "resyncing 3/10", "rebuilding 37/120" (a bad member being copied). */
static void ctl_mirror_state(const sfs_map_t *map, uint32_t target_id, uint32_t state, char *buf,
                             size_t size)
{
    const sfs_map_target_t *t = map ? sfs_map_find_target(map, target_id) : NULL;

    if (t && t->mirror_state == state && state == SFS_MIRROR_STATE_RESYNCING) {
        snprintf(buf, size, "resyncing %llu/%llu", (unsigned long long)t->resync_done,
                 (unsigned long long)t->resync_total);
    } else if (t && t->mirror_state == state && state == SFS_MIRROR_STATE_BAD && t->resync_total) {
        snprintf(buf, size, "rebuilding %llu/%llu", (unsigned long long)t->resync_done,
                 (unsigned long long)t->resync_total);
    } else {
        snprintf(buf, size, "%s", sfs_mirror_state_name(state));
    }
}

/* The metadata mirror's line: where the copy is, and whether it is in step. */
static void ctl_mirror_meta(const sfs_map_t *map, const sfs_meta_mirror_info_t *meta)
{
    const sfs_map_node_t *node = NULL;
    char                  where[SFS_HOST_MAX + 64];

    for (uint32_t i = 0; map && i < map->node_count && !node; i++) {
        if (map->nodes[i].roles & SFS_ROLE_META_MIRROR) {
            node = &map->nodes[i];
        }
    }
    if (node) {
        snprintf(where, sizeof(where), "rank %u on %s [%s]", node->node_id, node->host,
                 sfs_state_name(node->state));
    } else {
        /* not registered, or promoted (docs/metadata-mirror.md, "Failover") */
        const sfs_map_node_t *meta_node = map ? sfs_map_find_node(map, map->meta_node) : NULL;

        snprintf(where, sizeof(where), "no rank keeps it (the metadata server is rank %u on %s)",
                 map ? map->meta_node : 0, meta_node ? meta_node->host : "?");
    }
    printf("\nMetadata mirror: %s, %s since batch %llu (%s)\n", where,
           sfs_mirror_state_name(meta->state), (unsigned long long)meta->seq,
           meta->state == SFS_MIRROR_STATE_GOOD
               ? "every metadata batch is committed on both"
               : (meta->state == SFS_MIRROR_STATE_RESYNCING
                      ? "a full copy is on its way; the metadata server runs alone"
                      : "the metadata server runs alone"));
}

static int ctl_mirror_list(ctl_t *ctl)
{
    sfs_mirror_list_reply_t *groups = calloc(1, sizeof(*groups));
    sfs_map_t               *map    = NULL;
    int                      rc;

    if (!groups) {
        return ctl_fail("mirror list", -ENOMEM);
    }
    rc = sfs_admin_mirror_list(ctl->client, groups);
    if (rc) {
        free(groups);
        return ctl_fail("mirror list", rc);
    }
    (void)sfs_admin_map(ctl->client, &map); /* only for the ranks and hosts */
    if (groups->count == 0) {
        printf("No mirror groups (the config's mirror.groups is empty).\n");
    } else {
        printf("%-6s %-44s %-20s %-44s %s\n", "GROUP", "PRIMARY", "STATE", "SECONDARY", "STATE");
    }
    for (uint32_t i = 0; i < groups->count; i++) {
        const sfs_mirror_group_info_t *g = &groups->groups[i];
        char                           primary[320], secondary[320], pstate[64], sstate[64];

        ctl_mirror_member(map, g->primary, primary, sizeof(primary));
        ctl_mirror_member(map, g->secondary, secondary, sizeof(secondary));
        ctl_mirror_state(map, g->primary, g->primary_state, pstate, sizeof(pstate));
        ctl_mirror_state(map, g->secondary, g->secondary_state, sstate, sizeof(sstate));
        printf("%-6u %-44s %-20s %-44s %s\n", g->group_id, primary, pstate, secondary, sstate);
    }
    if (groups->meta.configured) {
        ctl_mirror_meta(map, &groups->meta);
    } else {
        printf("\nNo metadata mirror (the config's meta.mirror is not set).\n");
    }
    sfs_map_destroy(map);
    free(groups);
    return 0;
}

/* mirror rebuild TARGET: the group's good member copies every chunk file to
 * TARGET, a member that lost its disk (docs/mirroring.md, "Rebuild"). The
 * checks here give clear messages; the good member checks again (and that
 * the caller is an administrator). */
static int ctl_mirror_rebuild(ctl_t *ctl, const char *arg)
{
    sfs_mirror_list_reply_t *groups = calloc(1, sizeof(*groups));
    const char              *verb   = "mirror rebuild";
    char                    *end;
    unsigned long            target = strtoul(arg, &end, 10);
    uint32_t                 from = 0, state = 0, from_state = 0;
    uint64_t                 total;
    int                      rc;

    if (!groups) {
        return ctl_fail(verb, -ENOMEM);
    }
    if (end == arg || *end || target == 0 || target > UINT32_MAX) {
        free(groups);
        fprintf(stderr, "stripefs-ctl %s: '%s' is not a target id\n", verb, arg);
        return EXIT_USAGE;
    }
    rc = sfs_admin_mirror_list(ctl->client, groups);
    if (rc) {
        free(groups);
        return ctl_fail(verb, rc);
    }
    for (uint32_t i = 0; i < groups->count && !from; i++) {
        const sfs_mirror_group_info_t *g = &groups->groups[i];

        if (g->primary == target || g->secondary == target) {
            from       = g->primary == target ? g->secondary : g->primary;
            state      = g->primary == target ? g->primary_state : g->secondary_state;
            from_state = g->primary == target ? g->secondary_state : g->primary_state;
        }
    }
    free(groups);
    if (!from) {
        sfs_map_t *map  = NULL;
        int        seen = sfs_admin_map(ctl->client, &map) == 0 && sfs_map_find_target(map, target);

        sfs_map_destroy(map);
        if (seen) {
            fprintf(stderr,
                    "stripefs-ctl %s: target %lu is in no mirror group: no copy to rebuild "
                    "it from\n",
                    verb, target);
        } else {
            fprintf(stderr, "stripefs-ctl %s: no target %lu in the cluster map\n", verb, target);
        }
        return 1;
    }
    if (state == SFS_MIRROR_STATE_GOOD) {
        fprintf(stderr, "stripefs-ctl %s: target %lu is good: nothing to rebuild\n", verb, target);
        return 1;
    }
    if (state != SFS_MIRROR_STATE_BAD) {
        fprintf(stderr,
                "stripefs-ctl %s: target %lu is %s, not bad (its disk is not new): its resync "
                "runs by itself\n",
                verb, target, sfs_mirror_state_name(state));
        return 1;
    }
    if (from_state != SFS_MIRROR_STATE_GOOD) {
        fprintf(stderr, "stripefs-ctl %s: its buddy %u is %s: no good copy to rebuild %lu from\n",
                verb, from, sfs_mirror_state_name(from_state), target);
        return 1;
    }
    rc = sfs_admin_mirror_rebuild(ctl->client, from, (uint32_t)target, &total);
    if (rc) {
        return ctl_fail(verb, rc);
    }
    printf("Rebuilding target %lu from %u: %llu chunk files to copy (progress: stripefs-ctl "
           "mirror list).\n",
           target, from, (unsigned long long)total);
    return 0;
}

int ctl_mirror(ctl_t *ctl, int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "list") == 0) {
        return ctl_connect(ctl) ? 1 : ctl_mirror_list(ctl);
    }
    if (argc == 3 && strcmp(argv[1], "rebuild") == 0) {
        return ctl_connect(ctl) ? 1 : ctl_mirror_rebuild(ctl, argv[2]);
    }
    fprintf(stderr, "usage: stripefs-ctl mirror list | mirror rebuild TARGET\n");
    return EXIT_USAGE;
}
