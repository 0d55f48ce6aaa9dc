/* stripefs-ctl pool: the storage pools (docs/pools.md): list them with
 * their targets and space, the per-pool lines of df, and (administrators)
 * create, add, remove and delete while the service runs (POOL_SET, kept
 * in the metadata store). */
#include "stripefs_ctl.h"

#include "sfs_admin.h"
#include "sfs_map.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A pool's space: the sums over its online targets (each target counts,
 * even where several share one file system). */
typedef struct ctl_pool_space {
    uint64_t capacity, free;
    uint32_t online;
} ctl_pool_space_t;

static ctl_pool_space_t ctl_pool_space(const sfs_pool_list_reply_t *pools,
                                       const sfs_pool_info_t *pool, const sfs_map_t *map)
{
    ctl_pool_space_t space = {0, 0, 0};

    for (uint32_t t = 0; t < pool->target_count && map; t++) {
        const sfs_map_target_t *target = sfs_map_find_target(map, pools->targets[pool->first + t]);

        if (target && target->state == SFS_STATE_ONLINE) {
            space.capacity += target->capacity;
            space.free += target->free;
            space.online++;
        }
    }
    return space;
}

/* Pools and the map, or an exit status (the error said). */
static int ctl_pool_fetch(ctl_t *ctl, const char *verb, sfs_pool_list_reply_t **pools_p,
                          sfs_map_t **map_p)
{
    sfs_pool_list_reply_t *pools = calloc(1, sizeof(*pools));
    int                    rc;

    if (!pools) {
        return ctl_fail(verb, -ENOMEM);
    }
    rc = sfs_admin_pool_list(ctl->client, pools);
    if (rc == 0) {
        rc = sfs_admin_map(ctl->client, map_p);
    }
    if (rc) {
        free(pools);
        return ctl_fail(verb, rc);
    }
    *pools_p = pools;
    return 0;
}

static int ctl_pool_list(ctl_t *ctl)
{
    sfs_pool_list_reply_t *pools = NULL;
    sfs_map_t             *map   = NULL;
    int                    rc    = ctl_pool_fetch(ctl, "pool list", &pools, &map);

    if (rc || !pools) {
        return rc;
    }
    printf("%-4s %-16s %10s %10s %5s  %s\n", "ID", "POOL", "CAPACITY", "FREE", "FREE%", "TARGETS");
    for (uint32_t i = 0; i < pools->count; i++) {
        const sfs_pool_info_t *pool  = &pools->pools[i];
        ctl_pool_space_t       space = ctl_pool_space(pools, pool, map);
        char                   cap[32], free_text[32];

        printf("%-4u %-16s %10s %10s %4.0f%% ", pool->id, pool->name,
               ctl_size(space.capacity, cap, sizeof(cap)),
               ctl_size(space.free, free_text, sizeof(free_text)),
               space.capacity ? 100.0 * (double)space.free / (double)space.capacity : 0.0);
        if (pool->target_count == 0) {
            printf(" (none%s)",
                   pool->id == SFS_POOL_DEFAULT ? ": every target is in a named pool" : "");
        }
        for (uint32_t t = 0; t < pool->target_count; t++) {
            uint32_t                id     = pools->targets[pool->first + t];
            const sfs_map_target_t *target = sfs_map_find_target(map, id);

            printf(" %u", id);
            if (!target || target->state != SFS_STATE_ONLINE) {
                printf("[%s]", target ? sfs_state_name(target->state) : "not registered");
            }
        }
        printf("\n");
    }
    sfs_map_destroy(map);
    free(pools);
    return 0;
}

void ctl_pool_df(ctl_t *ctl)
{
    sfs_pool_list_reply_t *pools = calloc(1, sizeof(*pools));
    sfs_map_t             *map   = NULL;

    /* a server without pools has none to show: df stays as it was */
    if (!pools || sfs_admin_pool_list(ctl->client, pools) != 0 ||
        sfs_admin_map(ctl->client, &map) != 0) {
        free(pools);
        return;
    }
    for (uint32_t i = 0; i < pools->count; i++) {
        const sfs_pool_info_t *pool  = &pools->pools[i];
        ctl_pool_space_t       space = ctl_pool_space(pools, pool, map);
        char                   a[32], b[32], c[32];

        if (pool->target_count == 0) {
            continue;
        }
        printf("POOL %s: %s capacity, %s used, %s free (%u of %u targets online)\n", pool->name,
               ctl_size(space.capacity, a, sizeof(a)),
               ctl_size(space.capacity - space.free, b, sizeof(b)),
               ctl_size(space.free, c, sizeof(c)), space.online, pool->target_count);
    }
    sfs_map_destroy(map);
    free(pools);
}

/* "101" into *id_p; 0, or -EINVAL (said). */
static int ctl_pool_target(const char *verb, const char *text, uint32_t *id_p)
{
    char         *end;
    unsigned long id = strtoul(text, &end, 10);

    if (text[0] < '0' || text[0] > '9' || *end != '\0' || id < 1 || id > 65535) {
        fprintf(stderr, "stripefs-ctl pool %s: '%s' is not a target id (1..65535)\n", verb, text);
        return -EINVAL;
    }
    *id_p = (uint32_t)id;
    return 0;
}

/* pool create|add|remove|delete NAME [TARGET...] */
static int ctl_pool_set(ctl_t *ctl, uint32_t op, int argc, char **argv)
{
    const char *verb = argv[1];
    uint32_t    targets[SFS_POOL_SET_TARGETS_MAX];
    uint32_t    count = 0;
    char        verb_name[96];
    int         rc;

    if (argc < 3 || (op == SFS_POOL_SET_DELETE && argc != 3) ||
        ((op == SFS_POOL_SET_ADD || op == SFS_POOL_SET_REMOVE) && argc < 4) ||
        argc - 3 > SFS_POOL_SET_TARGETS_MAX) {
        fprintf(stderr, "usage: stripefs-ctl pool %s NAME%s\n", verb,
                op == SFS_POOL_SET_DELETE   ? ""
                : op == SFS_POOL_SET_CREATE ? " [TARGET...]"
                                            : " TARGET...");
        return EXIT_USAGE;
    }
    for (int i = 3; i < argc; i++) {
        if (ctl_pool_target(verb, argv[i], &targets[count++]) != 0) {
            return EXIT_USAGE;
        }
    }
    if (ctl_connect(ctl)) {
        return 1;
    }
    snprintf(verb_name, sizeof(verb_name), "pool %s", verb);
    rc = sfs_admin_pool_set(ctl->client, op, argv[2], targets, count);
    if (rc) {
        return ctl_fail(verb_name, rc);
    }
    printf("storage pool '%s': %s%s", argv[2],
           op == SFS_POOL_SET_CREATE   ? "created"
           : op == SFS_POOL_SET_ADD    ? "added"
           : op == SFS_POOL_SET_REMOVE ? "removed"
                                       : "deleted",
           count ? " target" : "");
    for (uint32_t i = 0; i < count; i++) {
        printf(" %u", targets[i]);
    }
    printf("\n");
    return 0;
}

int ctl_pool(ctl_t *ctl, int argc, char **argv)
{
    static const struct {
        const char *verb;
        uint32_t    op;
    } sets[] = {{"create", SFS_POOL_SET_CREATE},
                {"add", SFS_POOL_SET_ADD},
                {"remove", SFS_POOL_SET_REMOVE},
                {"delete", SFS_POOL_SET_DELETE}};

    if (argc == 2 && strcmp(argv[1], "list") == 0) {
        return ctl_connect(ctl) ? 1 : ctl_pool_list(ctl);
    }
    for (size_t i = 0; argc >= 2 && i < sizeof(sets) / sizeof(sets[0]); i++) {
        if (strcmp(argv[1], sets[i].verb) == 0) {
            return ctl_pool_set(ctl, sets[i].op, argc, argv);
        }
    }
    fprintf(stderr, "usage: stripefs-ctl pool list\n"
                    "       stripefs-ctl pool create NAME [TARGET...]   (administrators)\n"
                    "       stripefs-ctl pool add|remove NAME TARGET...\n"
                    "       stripefs-ctl pool delete NAME               (an empty pool)\n");
    return EXIT_USAGE;
}
