/*
 * Management: the registry of server ranks (nodes) and storage targets,
 * their states (online / probably-offline / offline by time of last
 * contact), the cluster map built from them, and the clean stop of the
 * whole service. Its requests are served in sfs_mgmt_handlers.c.
 */
#define SFS_LOG_FAC "mgmt"
#include "sfs_service.h"

#include "sfs_mgmt_internal.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_map.h"
#include "sfs_time.h"

#include <stdio.h>
#include <string.h>

int sfs_mgmt_create(sfs_service_t *service, sfs_mgmt_t **mgmt_p)
{
    sfs_mgmt_t *mgmt;
    int         rc;

    if (!SFS_ALLOC_PTR(mgmt)) {
        return -ENOMEM;
    }
    mgmt->service       = service;
    mgmt->version       = 1;
    mgmt->last_check_ms = sfs_time_ms();
    rc                  = sfs_mgmt_mirror_load(mgmt); /* promotions made before a restart */
    if (rc == 0) {
        rc = sfs_mgmt_meta_mirror_load(mgmt);
    }
    if (rc == 0) {
        rc = sfs_mgmt_meta_primary_load(mgmt);
    }
    if (rc) {
        sfs_mgmt_destroy(mgmt);
        return rc;
    }
    sfs_info("management server listening on port %u", service->config->mgmt_port);
    *mgmt_p = mgmt;
    return 0;
}

void sfs_mgmt_destroy(sfs_mgmt_t *mgmt)
{
    if (!mgmt) {
        return;
    }
    for (uint32_t i = 0; i < mgmt->stop_count; i++) {
        sfs_tp_rpc_release(mgmt->stops[i].rpc);
        sfs_tp_conn_destroy(mgmt->stops[i].conn);
    }
    sfs_mgmt_meta_failover_destroy(mgmt);
    for (uint32_t i = 0; i < mgmt->node_count; i++) {
        free(mgmt->nodes[i].address);
    }
    free(mgmt->mirrors);
    free(mgmt->stops);
    free(mgmt->nodes);
    free(mgmt->targets);
    free(mgmt);
}

uint32_t sfs_mgmt_known_targets(const sfs_mgmt_t *mgmt)
{
    return mgmt->target_count;
}

sfs_mgmt_node_t *sfs_mgmt_find_node(sfs_mgmt_t *mgmt, uint32_t node_id)
{
    for (uint32_t i = 0; i < mgmt->node_count; i++) {
        if (mgmt->nodes[i].node_id == node_id) {
            return &mgmt->nodes[i];
        }
    }
    return NULL;
}

sfs_mgmt_target_t *sfs_mgmt_find_target(sfs_mgmt_t *mgmt, uint32_t target_id)
{
    for (uint32_t i = 0; i < mgmt->target_count; i++) {
        if (mgmt->targets[i].target_id == target_id) {
            return &mgmt->targets[i];
        }
    }
    return NULL;
}

uint64_t sfs_mgmt_suspect_after_ms(const sfs_config_t *config)
{
    uint64_t suspect = (uint64_t)config->heartbeat_interval_ms + config->heartbeat_interval_ms / 4 +
                       SFS_MGMT_SUSPECT_SLACK_MS;

    /* a short offline timeout (tests) still keeps the order of the states */
    return suspect < config->offline_timeout_ms ? suspect : config->offline_timeout_ms / 2;
}

uint64_t sfs_mgmt_offline_after_ms(const sfs_config_t *config)
{
    uint64_t timeout = config->offline_timeout_ms;
    uint64_t slack =
        timeout / 4 < SFS_MGMT_FAILOVER_SLACK_MS ? timeout / 4 : SFS_MGMT_FAILOVER_SLACK_MS;
    uint64_t suspect = sfs_mgmt_suspect_after_ms(config);

    /* The offline timeout bounds the pause a job sees: a client
     * waiting on a lost member looks at the map every 250 ms and resends at
     * once, so management promotes the buddy that much (and a margin)
     * before the timeout. Still well after the lease's end (half the
     * timeout), and never before probably-offline. */
    if (timeout - slack > suspect) {
        return timeout - slack;
    }
    return suspect + (timeout - suspect) / 2;
}

void sfs_mgmt_heard(sfs_mgmt_t *mgmt, sfs_mgmt_node_t *node, uint64_t now)
{
    const sfs_config_t *config  = mgmt->service->config;
    uint64_t            suspect = sfs_mgmt_suspect_after_ms(config);
    uint32_t            self    = mgmt->service->rank;

    node->last_contact_ms = now;
    if (node->node_id == self) {
        return; /* its own heartbeat proves nothing about its host's network */
    }
    /* After a cut of management's own host, the ranks it has not heard
     * again yet were offline in its map for up to a heartbeat: a metadata
     * server that read that map dropped its mirror (which was there) and
     * copied it again, and a loss of its host in that second found no
     * mirror to promote (the cut matrix, 2026-12-06). */
    if (mgmt->heard_ms && now - mgmt->heard_ms > sfs_mgmt_offline_after_ms(config)) {
        sfs_warn("management heard no other rank for %.1f s (its own host cut off, more likely "
                 "than all of them lost): the ranks still silent are probably-offline, not "
                 "offline, until they have had %.1f s to be heard again",
                 (double)(now - mgmt->heard_ms) / 1000.0,
                 (double)(sfs_mgmt_offline_after_ms(config) - suspect) / 1000.0);
        for (uint32_t i = 0; i < mgmt->node_count; i++) {
            sfs_mgmt_node_t *other = &mgmt->nodes[i];

            if (other->node_id != self && now - other->last_contact_ms > suspect) {
                other->last_contact_ms = now - suspect - 1;
            }
        }
    }
    mgmt->heard_ms = now;
}

uint32_t sfs_mgmt_state_after(const sfs_config_t *config, uint64_t silent_ms)
{
    /* probably-offline as soon as one heartbeat is missed (a heartbeat
     * interval and a margin of silence), so that no new file is placed on
     * it; offline (buddies promoted) just before the offline timeout. It
     * used to be half the offline timeout (10 s by default): files created
     * meanwhile were placed on a dead rank's targets. */
    if (silent_ms <= sfs_mgmt_suspect_after_ms(config)) {
        return SFS_STATE_ONLINE;
    }
    return silent_ms <= sfs_mgmt_offline_after_ms(config) ? SFS_STATE_PROBABLY_OFFLINE
                                                          : SFS_STATE_OFFLINE;
}

static uint32_t sfs_mgmt_state_of(const sfs_mgmt_t *mgmt, const sfs_mgmt_node_t *node,
                                  uint64_t now_ms)
{
    return sfs_mgmt_state_after(mgmt->service->config, now_ms - node->last_contact_ms);
}

int sfs_mgmt_build_map(sfs_mgmt_t *mgmt, sfs_map_t *map)
{
    const sfs_config_t *config = mgmt->service->config;
    uint64_t            now    = sfs_time_ms();

    memset(map, 0, sizeof(*map));
    map->version = mgmt->version;
    snprintf(map->cluster, sizeof(map->cluster), "%s", config->cluster_name);
    map->mgmt_node            = mgmt->service->plan->mgmt_rank;
    map->meta_node            = mgmt->meta_node;
    map->default_chunk_size   = config->default_chunk_size;
    map->default_stripe_count = config->default_stripe_count;
    map->rpc_timeout_ms       = config->rpc_timeout_ms;
    map->offline_timeout_ms   = config->offline_timeout_ms;
    map->node_count           = mgmt->node_count;
    map->target_count         = mgmt->target_count;
    if (!SFS_ALLOC_ARRAY(map->nodes, mgmt->node_count) ||
        !SFS_ALLOC_ARRAY(map->targets, mgmt->target_count)) {
        free(map->nodes);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < mgmt->node_count; i++) {
        const sfs_mgmt_node_t *src = &mgmt->nodes[i];
        sfs_map_node_t        *dst = &map->nodes[i];

        dst->node_id         = src->node_id;
        dst->roles           = src->roles;
        dst->pid             = src->pid;
        dst->state           = sfs_mgmt_state_of(mgmt, src, now);
        dst->last_contact_ms = now - src->last_contact_ms;
        dst->address         = src->address; /* borrowed: packed, not freed */
        dst->address_length  = src->address_length;
        snprintf(dst->host, sizeof(dst->host), "%s", src->host);
    }
    for (uint32_t i = 0; i < mgmt->target_count; i++) {
        const sfs_mgmt_target_t *src  = &mgmt->targets[i];
        sfs_map_target_t        *dst  = &map->targets[i];
        sfs_mgmt_node_t         *node = sfs_mgmt_find_node(mgmt, src->node_id);

        dst->target_id       = src->target_id;
        dst->node_id         = src->node_id;
        dst->capacity        = src->capacity;
        dst->free            = src->free;
        dst->bandwidth       = src->bandwidth;
        dst->state           = node ? sfs_mgmt_state_of(mgmt, node, now) : SFS_STATE_OFFLINE;
        dst->last_contact_ms = node ? now - node->last_contact_ms : UINT64_MAX;
        snprintf(dst->dir, sizeof(dst->dir), "%s", src->dir);
    }
    sfs_mgmt_mirror_map(mgmt, map);
    return 0;
}

/* Tell the other ranks to stop: those that keep the metadata mirror
 * (`mirrors`) or the others. */
static void sfs_mgmt_send_stops(sfs_mgmt_t *mgmt, int mirrors)
{
    sfs_service_t *service = mgmt->service;

    for (uint32_t i = 0; i < mgmt->node_count; i++) {
        sfs_mgmt_node_t    *node = &mgmt->nodes[i];
        sfs_mgmt_stop_t    *stop = &mgmt->stops[mgmt->stop_count];
        sfs_tp_rpc_params_t params;
        char                name[SFS_HOST_MAX + 32];

        if (node->node_id == service->rank ||
            ((node->roles & SFS_ROLE_META_MIRROR) != 0) != (mirrors != 0)) {
            continue;
        }
        snprintf(name, sizeof(name), "rank %u on %s", node->node_id, node->host);
        stop->node_id = node->node_id;
        if (sfs_tp_conn_create(service->worker, node->address, node->address_length, name,
                               service->config->connect_timeout_ms, &stop->conn) != 0) {
            sfs_warn("cannot reach %s to stop it: %s", name, sfs_error_detail());
            continue;
        }
        memset(&params, 0, sizeof(params));
        params.opcode = SFS_OP_STOP;
        if (sfs_tp_rpc_start(stop->conn, &params, &stop->rpc) != 0) {
            stop->rpc = NULL;
        }
        mgmt->stop_count++;
    }
}

/* Runs from the main loop (never inside a UCX callback), so it may block.
 * The ranks that keep the metadata mirror stop last, once the metadata
 * server has stopped or flushed: every batch reaches the copy. */
static void sfs_mgmt_run_shutdown(sfs_mgmt_t *mgmt)
{
    sfs_service_t *service = mgmt->service;
    uint64_t       now     = sfs_time_ms();
    int            pending = 0;

    if (!mgmt->shutdown_started) {
        mgmt->shutdown_started     = 1;
        service->stopping_others   = 1; /* no new work for them (sfs_meta_delete_tick) */
        mgmt->shutdown_deadline_ms = now + SFS_MGMT_STOP_TIMEOUT_MS;
        mgmt->stops = calloc(mgmt->node_count ? mgmt->node_count : 1, sizeof(*mgmt->stops));
        if (!mgmt->stops) {
            sfs_service_request_stop(service);
            return;
        }
        sfs_mgmt_send_stops(mgmt, 0);
        sfs_info("stopping the service: %u other rank%s told to flush and stop", mgmt->stop_count,
                 mgmt->stop_count == 1 ? "" : "s");
    }
    for (uint32_t i = 0; i < mgmt->stop_count; i++) {
        if (mgmt->stops[i].rpc && !sfs_tp_rpc_is_done(mgmt->stops[i].rpc)) {
            pending++;
        }
    }
    if (pending && now < mgmt->shutdown_deadline_ms) {
        return;
    }
    if (!mgmt->mirror_stops_sent) {
        uint32_t before = mgmt->stop_count;

        mgmt->mirror_stops_sent = 1;
        if (service->meta && service->config->meta_mirror_host[0] &&
            sfs_meta_flush(service->meta) != 0) {
            sfs_warn("flushing the metadata server before its mirror stops: %s",
                     sfs_error_detail());
        }
        sfs_mgmt_send_stops(mgmt, 1);
        if (mgmt->stop_count > before) {
            sfs_info("the metadata mirror told to stop, after the metadata server's last batch");
            return;
        }
    }
    for (uint32_t i = 0; i < mgmt->stop_count; i++) {
        sfs_tp_rpc_t *rpc = mgmt->stops[i].rpc;

        if (rpc && (!sfs_tp_rpc_is_done(rpc) || sfs_tp_rpc_status(rpc) != 0)) {
            sfs_warn("rank %u did not confirm its stop: %s", mgmt->stops[i].node_id,
                     sfs_tp_rpc_is_done(rpc) ? sfs_tp_rpc_error_detail(rpc) : "no answer");
        }
    }
    sfs_service_request_stop(service);
}

/* Management itself did not run its checks for a while (the service's
 * start, which waits for every rank, or a long handler): silence it could
 * not hear is not the ranks' (they were not answered either, so their
 * fencing leases ran out meanwhile: docs/mirroring.md). Their last
 * contacts move by the gap, so no rank is found offline, nor its buddy
 * promoted, for management's own stall. */
static void sfs_mgmt_forgive_stall(sfs_mgmt_t *mgmt, uint64_t now)
{
    uint64_t gap = now - mgmt->last_check_ms;

    mgmt->last_check_ms = now;
    if (gap <= mgmt->service->config->heartbeat_interval_ms + SFS_MGMT_CHECK_MS) {
        return;
    }
    sfs_warn("management did not look at the ranks for %.1f s: their silence meanwhile does "
             "not count",
             (double)gap / 1000.0);
    for (uint32_t i = 0; i < mgmt->node_count; i++) {
        mgmt->nodes[i].last_contact_ms += gap;
        if (mgmt->nodes[i].last_contact_ms > now) {
            mgmt->nodes[i].last_contact_ms = now;
        }
    }
}

void sfs_mgmt_timer(sfs_mgmt_t *mgmt)
{
    uint64_t now     = sfs_time_ms();
    int      changed = 0;

    if (mgmt->shutdown_requested) {
        sfs_mgmt_run_shutdown(mgmt);
    }
    if (now < mgmt->next_check_ms) {
        return;
    }
    mgmt->next_check_ms = now + SFS_MGMT_CHECK_MS;
    sfs_mgmt_forgive_stall(mgmt, now);
    for (uint32_t i = 0; i < mgmt->node_count; i++) {
        sfs_mgmt_node_t *node  = &mgmt->nodes[i];
        uint32_t         state = sfs_mgmt_state_of(mgmt, node, now);

        if (state == node->state) {
            continue;
        }
        for (uint32_t t = 0; t < mgmt->target_count; t++) {
            if (mgmt->targets[t].node_id == node->node_id) {
                sfs_warn("target %u (rank %u on %s): %s -> %s (last contact %.1f s ago)",
                         mgmt->targets[t].target_id, node->node_id, node->host,
                         sfs_state_name(node->state), sfs_state_name(state),
                         (double)(now - node->last_contact_ms) / 1000.0);
            }
        }
        sfs_warn("rank %u on %s: %s -> %s", node->node_id, node->host, sfs_state_name(node->state),
                 sfs_state_name(state));
        node->state = state;
        mgmt->version++;
        changed = 1;
        if (state == SFS_STATE_OFFLINE) {
            sfs_mgmt_mirror_failover(mgmt, node->node_id);
        }
    }
    sfs_mgmt_meta_failover_tick(mgmt, now);
    /* the metadata role in this process chooses new files' targets: it
     * refreshes its map now rather than at its next heartbeat */
    if (changed && mgmt->service->meta) {
        sfs_meta_map_changed(mgmt->service->meta);
    }
}
