/*
 * --join: a drive or a host is added to a running service. The administrator
 * adds its targets to the config first (the config stays the truth: the
 * next full start plans them like any other); this process, started on the
 * targets' host as a job of one rank, takes every target of this host that
 * the running service does not serve, as a new storage rank (one above every
 * rank management knows), registers and serves until stopped. The metadata
 * server's chooser takes targets from the map, so new files can go there at
 * once. What the running service cannot take without a restart is refused
 * before anything is opened: a new target in a mirror group (docs/capacity.md,
 * "Adding a drive or a host"), and a target that holds chunk files already
 * (of another file system, or of this one before it was lost: docs/faults.md,
 * "A lost metadata store").
 */
#define SFS_LOG_FAC "server"
#include "sfs_server.h"

#include "sfs_alloc.h"
#include "sfs_chunk_store.h"
#include "sfs_errno.h"
#include "sfs_log.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The config's targets of `host` that the map does not have, into the
 * plan's rank; those the running service could not take are refused. */
static int sfs_server_join_targets(const sfs_config_t *config, const sfs_map_t *map,
                                   const char *host, sfs_rank_roles_t *planned)
{
    for (uint32_t c = 0; c < config->target_count; c++) {
        const sfs_config_target_t       *target = &config->targets[c];
        const sfs_config_mirror_group_t *group;
        uint32_t                        *grown;

        if (!sfs_config_host_matches(target->host, host) || sfs_map_find_target(map, target->id)) {
            continue;
        }
        group = sfs_config_mirror_group_of(config, target->id);
        if (group) {
            return sfs_error_set(-EOPNOTSUPP,
                                 "target %" PRIu32 " (%s:%d) is in mirror group %" PRIu32
                                 " (%" PRIu32 "+%" PRIu32 "): a running service takes new "
                                 "mirror groups only when it is restarted with the new config",
                                 target->id, config->path, target->line, group->id, group->primary,
                                 group->secondary);
        }
        {
            uint64_t fs_id, chunks;
            int      rc = sfs_chunk_target_survey(target, &fs_id, &chunks);

            if (rc) {
                return rc;
            }
            /* its chunks would be taken for the running file system's */
            if (chunks) {
                return sfs_error_set(-EEXIST,
                                     "target %" PRIu32 " (%s) holds chunk files (of file "
                                     "system %016" PRIx64 ", 0: not recorded): --join takes "
                                     "new, empty targets only; give it an empty directory in "
                                     "%s:%d",
                                     target->id, target->dir, fs_id, config->path, target->line);
            }
        }
        grown = realloc(planned->targets, (planned->target_count + 1) * sizeof(*grown));
        if (!grown) {
            return -ENOMEM;
        }
        planned->targets                          = grown;
        planned->targets[planned->target_count++] = c;
    }
    return 0;
}

/* A new storage rank for this host's new targets: the plan and its rank. */
static int sfs_server_join_plan_from_map(const sfs_config_t *config, const sfs_map_t *map,
                                         const char *host, sfs_role_plan_t **plan_p,
                                         uint32_t *rank_p)
{
    const sfs_config_host_t *mine = sfs_config_find_host(config, host);
    sfs_role_plan_t         *plan = NULL;
    uint32_t                 rank = 0;
    int                      rc;

    if (!mine) {
        return sfs_error_set(-ENOENT, "host '%s' is not in %s: add it (and its targets) first",
                             host, config->path);
    }
    for (uint32_t i = 0; i < map->node_count; i++) {
        rank = map->nodes[i].node_id + 1 > rank ? map->nodes[i].node_id + 1 : rank;
    }
    if (!SFS_ALLOC_PTR(plan) || !SFS_ALLOC_ARRAY(plan->ranks, rank + 1)) {
        rc = -ENOMEM;
        goto err;
    }
    plan->rank_count               = rank + 1;
    plan->mgmt_rank                = map->mgmt_node;
    plan->meta_rank                = map->meta_node;
    plan->ranks[rank].roles        = SFS_ROLE_STORAGE;
    plan->ranks[rank].host_index   = (uint32_t)(mine - config->hosts);
    plan->ranks[rank].target_count = 0;
    rc                             = sfs_server_join_targets(config, map, host, &plan->ranks[rank]);
    if (rc) {
        goto err;
    }
    if (plan->ranks[rank].target_count == 0) {
        rc = sfs_error_set(-ENOENT,
                           "%s names no target on host '%s' that the running service does not "
                           "serve already: add the new target to the config first (to bring "
                           "back a lost rank, use --rejoin RANK)",
                           config->path, host);
        goto err;
    }
    *plan_p = plan;
    *rank_p = rank;
    return 0;

err:
    sfs_role_plan_destroy(plan);
    return rc;
}

static int sfs_server_join_plan(sfs_server_t *server, uint32_t *rank_p)
{
    sfs_tp_worker_t *worker  = NULL;
    sfs_cluster_t   *cluster = NULL;
    int              rc;

    rc = sfs_server_attach_connect(server->config, &worker, &cluster);
    if (rc) {
        return rc;
    }
    rc = sfs_server_join_plan_from_map(server->config, sfs_cluster_map(cluster), server->host,
                                       &server->plan, rank_p);
    sfs_cluster_destroy(cluster);
    sfs_tp_worker_destroy(worker);
    return rc;
}

void sfs_server_join(sfs_server_t *server)
{
    const sfs_rank_roles_t *mine;
    uint32_t                rank = 0;
    char                    list[256];
    size_t                  used = 0;
    int                     rc;

    if (server->size != 1) {
        fprintf(stderr, "stripefs-server: --join runs as a job of one rank (-np 1)\n");
        server->exit_code = 2;
        return;
    }
    rc = sfs_server_join_plan(server, &rank);
    if (rc == 0) {
        rc = sfs_server_attach_start(server, rank);
    }
    if (rc) {
        fprintf(stderr, "stripefs-server: cannot join the service: %s\n", sfs_error_detail());
        server->exit_code = 1;
        return;
    }
    mine    = &server->plan->ranks[rank];
    list[0] = '\0';
    for (uint32_t i = 0; i < mine->target_count && used + 16 < sizeof(list); i++) {
        used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%" PRIu32, i ? ", " : "",
                                 server->config->targets[mine->targets[i]].id);
    }
    sfs_info("new target%s %s joined as rank %u", mine->target_count == 1 ? "" : "s", list, rank);
    sfs_server_attach_serve(server, rank, "joined the service");
}
