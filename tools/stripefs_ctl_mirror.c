/* stripefs-ctl mirror: the mirror groups (docs/mirroring.md). */
#include "stripefs_ctl.h"

#include "sfs_admin.h"
#include "sfs_map.h"

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
        printf("%-6s %-44s %-13s %-44s %s\n", "GROUP", "PRIMARY", "STATE", "SECONDARY", "STATE");
    }
    for (uint32_t i = 0; i < groups->count; i++) {
        const sfs_mirror_group_info_t *g = &groups->groups[i];
        char                           primary[320], secondary[320];

        ctl_mirror_member(map, g->primary, primary, sizeof(primary));
        ctl_mirror_member(map, g->secondary, secondary, sizeof(secondary));
        printf("%-6u %-44s %-13s %-44s %s\n", g->group_id, primary,
               sfs_mirror_state_name(g->primary_state), secondary,
               sfs_mirror_state_name(g->secondary_state));
    }
    sfs_map_destroy(map);
    free(groups);
    return 0;
}

int ctl_mirror(ctl_t *ctl, int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "list") == 0) {
        return ctl_connect(ctl) ? 1 : ctl_mirror_list(ctl);
    }
    fprintf(stderr, "usage: stripefs-ctl mirror list\n");
    return EXIT_USAGE;
}
