/*
 * --rejoin RANK: a rank of a running service was lost and comes back as a
 * job of its own. It asks management which roles and targets that rank had,
 * takes them, registers again and serves until stopped; clients reconnect.
 * The rank that ran management and metadata comes back the same way, its
 * roles taken from the config since no one else knows them: the other ranks
 * find management again through its bootstrap port and register again.
 * The steps every process that attaches to a running service takes (--rejoin
 * and --join, sfs_server_join.c) are here too: sfs_server_attach_*.
 */
#define SFS_LOG_FAC "server"
#include "sfs_server.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_munged.h"
#include "sfs_time.h"

#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
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
    plan->meta_mirror_rank  = UINT32_MAX; /* the primary finds its mirror in the map */
    plan->ranks[rank].roles = node->roles & ~SFS_ROLE_MGMT;
    if (node->roles & SFS_ROLE_MGMT) {
        rc = sfs_error_set(-EEXIST,
                           "rank %u runs management, which answers (pid %u on %s): nothing "
                           "to rejoin",
                           rank, node->pid, node->host);
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

/* Whether the lost management rank also served the targets of its host
 * `h`: the full start gives them to it only when it is the host's one rank
 * (sfs_roles.h), and then no live process holds their directories. 1: all
 * of them are free (take them), 0: all are held by live ranks (take none),
 * else an error: some are free, so another rank of this host is lost too. */
static int sfs_server_rejoin_mgmt_targets(const sfs_config_t *config, uint32_t h)
{
    uint32_t free_count = 0, held_count = 0;
    char     held[256] = "", lost[256] = "";

    for (uint32_t c = 0; c < config->target_count; c++) {
        const sfs_config_target_t *t = &config->targets[c];
        sfs_dirlock_t             *lock;
        char                      *list;

        if (!sfs_config_host_matches(config->hosts[h].name, t->host)) {
            continue;
        }
        if (access(t->dir, F_OK) != 0 || sfs_dirlock_acquire(t->dir, "probe", &lock) == 0) {
            if (access(t->dir, F_OK) == 0) {
                sfs_dirlock_release(lock);
            }
            free_count++;
            list = lost;
        } else {
            held_count++;
            list = held;
        }
        snprintf(list + strlen(list), 256 - strlen(list), "%s%u", list[0] ? " " : "", t->id);
    }
    sfs_error_clear();
    if (free_count && held_count) {
        return sfs_error_set(-EOPNOTSUPP,
                             "targets %s of this host are served by live ranks, but %s are not: "
                             "a storage rank of this host is lost too, and a restarted "
                             "management cannot tell which rank it was; restart the service",
                             held, lost);
    }
    return free_count ? 1 : 0;
}

/* The first rank of the config's host `name`, as the full start numbered
 * them (the config's order of hosts, each with its `ranks`); UINT32_MAX if
 * no host matches. */
static uint32_t sfs_server_first_rank_of(const sfs_config_t *config, const char *name)
{
    uint32_t first = 0;

    for (uint32_t i = 0; i < config->host_count; i++) {
        if (sfs_config_host_matches(config->hosts[i].name, name)) {
            return first;
        }
        first += config->hosts[i].ranks;
    }
    return UINT32_MAX;
}

/* The rank that ran management (and the metadata server, where they share
 * a host) is lost, so no one can say what it served: the config does, as
 * the full start dealt it (sfs_roles.h): the first rank of the management
 * host, in the config's order of hosts, and its targets when it was the
 * host's one rank. Management alone (the metadata server on another host,
 * still running) learns who serves metadata from the ranks' registrations
 * and its file meta-primary. */
static int sfs_server_rejoin_mgmt_plan(const sfs_config_t *config, uint32_t rank, const char *host,
                                       const char *unreachable, sfs_role_plan_t **plan_p)
{
    sfs_role_plan_t *plan     = NULL;
    uint32_t         expected = 0;
    int              h, rc, with_meta;

    h = -1;
    for (uint32_t i = 0; i < config->host_count; i++) {
        if (sfs_config_host_matches(config->hosts[i].name, config->mgmt_host)) {
            h = (int)i;
            break;
        }
        expected += config->hosts[i].ranks;
    }
    if (h < 0 || !sfs_config_host_matches(config->hosts[h].name, host)) {
        return sfs_error_set(-EHOSTUNREACH,
                             "management is unreachable (%s), and this host (%s) is not its "
                             "host (%s): a rank can rejoin only while management runs, and "
                             "management only on its own host",
                             unreachable, host, config->mgmt_host);
    }
    if (rank != expected) {
        return sfs_error_set(-EHOSTUNREACH,
                             "management is unreachable (%s), but rank %u did not run it: "
                             "management is the first rank of host %s, rank %u in %s's order "
                             "of hosts (start management with --rejoin %u first)",
                             unreachable, rank, config->hosts[h].name, expected, config->path,
                             expected);
    }
    with_meta = sfs_config_host_matches(config->meta_host, config->mgmt_host);
    if (!SFS_ALLOC_PTR(plan) || !SFS_ALLOC_ARRAY(plan->ranks, rank + 1)) {
        rc = -ENOMEM;
        goto err;
    }
    plan->rank_count       = rank + 1;
    plan->mgmt_rank        = rank;
    plan->meta_rank        = with_meta ? rank : sfs_server_first_rank_of(config, config->meta_host);
    plan->meta_mirror_rank = UINT32_MAX;
    plan->mgmt_rejoining   = 1;
    plan->ranks[rank].roles      = SFS_ROLE_MGMT | (with_meta ? SFS_ROLE_META : 0);
    plan->ranks[rank].host_index = (uint32_t)h;
    rc                           = sfs_server_rejoin_mgmt_targets(config, (uint32_t)h);
    if (rc < 0) {
        goto err;
    }
    if (rc == 1) {
        for (uint32_t c = 0; c < config->target_count; c++) {
            sfs_rank_roles_t *mine = &plan->ranks[rank];
            uint32_t         *grown;

            if (!sfs_config_host_matches(config->hosts[h].name, config->targets[c].host)) {
                continue;
            }
            grown = realloc(mine->targets, (mine->target_count + 1) * sizeof(*grown));
            if (!grown) {
                rc = -ENOMEM;
                goto err;
            }
            mine->targets                       = grown;
            mine->targets[mine->target_count++] = c;
            mine->roles |= SFS_ROLE_STORAGE;
        }
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
        char why[512];

        snprintf(why, sizeof(why), "%s", sfs_error_detail());
        return sfs_server_rejoin_mgmt_plan(config, rank, host, why, plan_p);
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
        server->service->rejoined = 1;
    }
    if (rc == 0 && server->service->mgmt) {
        /* management is this process: its bootstrap port is answered by
         * the loop that has not started yet, so register at its address */
        const void *own = sfs_tp_worker_address(server->service->worker, &length);

        address = malloc(length);
        if (!address) {
            return -ENOMEM;
        }
        memcpy(address, own, length);
    } else if (rc == 0) {
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

/* A restarted management knows the other ranks again once each has
 * registered again (at its next heartbeat, told by management that it is
 * unknown): wait for every target of the config, at most the offline
 * timeout, before saying the service is whole. */
static void sfs_server_rejoin_wait_ranks(sfs_server_t *server)
{
    const sfs_config_t *config = server->config;
    uint64_t            start  = sfs_time_ms();
    uint64_t deadline          = start + config->offline_timeout_ms + config->heartbeat_interval_ms;
    uint32_t known;

    while ((known = sfs_mgmt_known_targets(server->service->mgmt)) < config->target_count &&
           sfs_time_ms() < deadline && !sfs_service_stopping(server->service)) {
        sfs_service_progress(server->service, 50);
    }
    if (known < config->target_count) {
        sfs_warn("management restarted: %u of the config's %u targets registered again within "
                 "%.1f s (the others are offline until their ranks come back)",
                 known, config->target_count, (double)(sfs_time_ms() - start) / 1000.0);
    } else {
        sfs_info("management restarted: all %u targets registered again in %.1f s", known,
                 (double)(sfs_time_ms() - start) / 1000.0);
    }
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
    if (server->service->mgmt) {
        /* what the lost rank held for the whole service: the one-host
         * state dir's claim, and the service's own munged */
        if (server->args.one_host &&
            sfs_dirlock_acquire(server->args.state_dir, "state dir", &server->state_lock) != 0) {
            sfs_warn("%s", sfs_error_detail());
        }
        sfs_munged_adopt(server->config, &server->munged_pid);
        sfs_server_rejoin_wait_ranks(server);
    }
    sfs_server_attach_serve(server, rank, "rejoined the service");
}
