/*
 * --rejoin RANK: a rank of a running service was lost and comes back as a
 * job of its own. It asks management which roles and targets that rank had,
 * takes them, registers again and serves until stopped; clients reconnect.
 * The steps every process that attaches to a running service takes (--rejoin
 * and --join, sfs_server_join.c) are here too: sfs_server_attach_*.
 */
#define SFS_LOG_FAC "server"
#include "sfs_server.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A worker and connections to management, as an admin client would have. */
int sfs_server_attach_connect(const sfs_config_t *config, sfs_tp_worker_t **worker_p,
                              sfs_cluster_t **cluster_p)
{
    const sfs_config_host_t *mgmt_host = sfs_config_find_host(config, config->mgmt_host);
    sfs_tp_worker_params_t   params;
    sfs_cluster_params_t     cparams;
    sfs_tp_worker_t         *worker = NULL;
    sfs_auth_key_t           key;
    int                      rc;

    rc = sfs_auth_load_connauth(config->connauth_file, &key);
    if (rc) {
        return rc;
    }
    memset(&params, 0, sizeof(params));
    params.field_mask =
        SFS_TP_WORKER_PARAM_KEY | SFS_TP_WORKER_PARAM_PEER_KIND | SFS_TP_WORKER_PARAM_NAME;
    params.key       = &key;
    params.peer_kind = SFS_PEER_ADMIN;
    params.name      = "stripefs-server (rejoining)";
    rc               = sfs_tp_worker_create(&params, &worker);
    if (rc) {
        return rc;
    }
    memset(&cparams, 0, sizeof(cparams));
    cparams.field_mask = SFS_CLUSTER_PARAM_MGMT_HOST | SFS_CLUSTER_PARAM_TIMEOUT;
    cparams.worker     = worker;
    cparams.mgmt_host = mgmt_host && mgmt_host->address[0] ? mgmt_host->address : config->mgmt_host;
    cparams.mgmt_port = config->mgmt_port;
    cparams.connect_timeout_ms = config->connect_timeout_ms;
    rc                         = sfs_cluster_connect(&cparams, cluster_p);
    if (rc) {
        sfs_tp_worker_destroy(worker);
        return rc;
    }
    *worker_p = worker;
    return 0;
}

/* The config's index of every target that management places on `rank`. */
static int sfs_server_rejoin_targets(const sfs_config_t *config, const sfs_map_t *map,
                                     uint32_t rank, sfs_rank_roles_t *planned)
{
    for (uint32_t t = 0; t < map->target_count; t++) {
        if (map->targets[t].node_id != rank) {
            continue;
        }
        for (uint32_t c = 0; c < config->target_count; c++) {
            uint32_t *grown;

            if (config->targets[c].id != map->targets[t].target_id) {
                continue;
            }
            grown = realloc(planned->targets, (planned->target_count + 1) * sizeof(*grown));
            if (!grown) {
                return -ENOMEM;
            }
            planned->targets                          = grown;
            planned->targets[planned->target_count++] = c;
        }
    }
    return 0;
}

/* What RANK serves, as management's map says. */
static int sfs_server_rejoin_plan_from_map(const sfs_config_t *config, const sfs_map_t *map,
                                           uint32_t rank, const char *host,
                                           sfs_role_plan_t **plan_p)
{
    const sfs_map_node_t *node  = sfs_map_find_node(map, rank);
    sfs_role_plan_t      *plan  = NULL;
    uint32_t              count = rank + 1;
    int                   rc;

    if (!node) {
        return sfs_error_set(-ENOENT, "management knows no rank %u: nothing to rejoin", rank);
    }
    if (!sfs_config_host_matches(node->host, host)) {
        return sfs_error_set(-EINVAL, "rank %u ran on host '%s', this is '%s': rejoin it there",
                             rank, node->host, host);
    }
    for (uint32_t i = 0; i < map->node_count; i++) {
        count = map->nodes[i].node_id + 1 > count ? map->nodes[i].node_id + 1 : count;
    }
    if (!SFS_ALLOC_PTR(plan) || !SFS_ALLOC_ARRAY(plan->ranks, count)) {
        rc = -ENOMEM;
        goto err;
    }
    plan->rank_count        = count;
    plan->mgmt_rank         = map->mgmt_node;
    plan->meta_rank         = map->meta_node;
    plan->ranks[rank].roles = node->roles & ~SFS_ROLE_MGMT;
    if (node->roles & SFS_ROLE_MGMT) {
        rc = sfs_error_set(-EOPNOTSUPP,
                           "rank %u runs management: restart the whole service "
                           "instead",
                           rank);
        goto err;
    }
    for (uint32_t h = 0; h < config->host_count; h++) {
        if (sfs_config_host_matches(config->hosts[h].name, host)) {
            plan->ranks[rank].host_index = h;
        }
    }
    rc = sfs_server_rejoin_targets(config, map, rank, &plan->ranks[rank]);
    if (rc) {
        goto err;
    }
    *plan_p = plan;
    return 0;

err:
    sfs_role_plan_destroy(plan);
    return rc;
}

static int sfs_server_rejoin_plan(const sfs_config_t *config, uint32_t rank, const char *host,
                                  sfs_role_plan_t **plan_p)
{
    sfs_tp_worker_t *worker  = NULL;
    sfs_cluster_t   *cluster = NULL;
    int              rc;

    rc = sfs_server_attach_connect(config, &worker, &cluster);
    if (rc) {
        return rc;
    }
    rc = sfs_server_rejoin_plan_from_map(config, sfs_cluster_map(cluster), rank, host, plan_p);
    sfs_cluster_destroy(cluster);
    sfs_tp_worker_destroy(worker);
    return rc;
}

/* Take the planned roles (server->plan) as `rank` and register with management. */
int sfs_server_attach_start(sfs_server_t *server, uint32_t rank)
{
    const sfs_config_t      *config    = server->config;
    const sfs_config_host_t *mgmt_host = sfs_config_find_host(config, config->mgmt_host);
    void                    *address   = NULL;
    size_t                   length;
    int                      rc;

    rc = sfs_service_create(config, server->plan, rank, &server->service);
    if (rc == 0) {
        rc = sfs_tp_bootstrap_fetch(
            mgmt_host && mgmt_host->address[0] ? mgmt_host->address : config->mgmt_host,
            config->mgmt_port, config->connect_timeout_ms, &address, &length);
    }
    if (rc == 0) {
        rc = sfs_service_register(server->service, address, length);
    }
    free(address);
    return rc;
}

/* Serve as `rank` until stopped, then flush (what was said is `what`). */
void sfs_server_attach_serve(sfs_server_t *server, uint32_t rank, const char *what)
{
    int rc;

    sfs_server_catch_signals(server->service);
    if (server->service->meta) {
        sfs_meta_map_changed(server->service->meta);
    }
    sfs_info("rank %u %s on %s", rank, what, server->host);
    if (server->args.ready_file) {
        sfs_server_write_ready(server->args.ready_file, server->config);
    }
    sfs_server_loop(server->service);
    rc = sfs_service_flush(server->service);
    sfs_info("rank %u stopped%s", rank, rc ? " (flush failed)" : " cleanly");
    server->exit_code = rc ? 1 : 0;
}

void sfs_server_rejoin(sfs_server_t *server)
{
    uint32_t rank = (uint32_t)server->args.rejoin_rank;
    int      rc;

    if (server->size != 1) {
        fprintf(stderr, "stripefs-server: --rejoin runs as a job of one rank (-np 1)\n");
        server->exit_code = 2;
        return;
    }
    rc = sfs_server_rejoin_plan(server->config, rank, server->host, &server->plan);
    if (rc == 0) {
        rc = sfs_server_attach_start(server, rank);
    }
    if (rc) {
        fprintf(stderr, "stripefs-server: cannot rejoin as rank %u: %s\n", rank,
                sfs_error_detail());
        server->exit_code = 1;
        return;
    }
    sfs_server_attach_serve(server, rank, "rejoined the service");
}
