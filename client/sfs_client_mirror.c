/*
 * Mirrored files on the client side of failover (docs/mirroring.md,
 * "Failover: a primary lost"): a mirrored file's requests go to its group's
 * current primary, as the map says (the pattern names the config's
 * primaries), and a request that finds no answer there, or a member that
 * is no longer primary (ESTALE), or that the map does not have yet (a
 * restarted management), is sent again after a map refresh, until
 * management has promoted the survivor or the failover deadline passes:
 * the job sees a pause, not an error.
 */
#define SFS_LOG_FAC "client"
#include "sfs_client_internal.h"

#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <errno.h>

uint32_t sfs_client_mirror_target(sfs_client_t *client, const sfs_pattern_t *pattern,
                                  uint32_t index)
{
    uint32_t                target = pattern->targets[index];
    const sfs_map_t        *map;
    const sfs_map_target_t *t;

    if (pattern->type != SFS_PATTERN_MIRROR || client->mirror_old_map) {
        return target; /* no map look-up on an unmirrored file's path */
    }
    map = sfs_cluster_map(client->cluster);
    t   = map ? sfs_map_find_target(map, target) : NULL;
    return t && t->mirror_primary ? t->mirror_primary : target;
}

int sfs_client_mirror_lost(sfs_client_t *client, const sfs_pattern_t *pattern, uint32_t index)
{
    const sfs_map_t        *map = sfs_cluster_map(client->cluster);
    const sfs_map_target_t *t;
    const sfs_map_node_t   *node;

    if (!map || pattern->type != SFS_PATTERN_MIRROR) {
        return 0;
    }
    /* management promotes the buddy when it marks the primary's rank
     * offline; a primary still named while offline has no buddy to take over */
    t    = sfs_map_find_target(map, sfs_client_mirror_target(client, pattern, index));
    node = t ? sfs_map_find_node(map, t->node_id) : NULL;
    return node && node->state == SFS_STATE_OFFLINE;
}

int sfs_client_mirror_serving(sfs_client_t *client, const sfs_pattern_t *pattern, uint32_t index)
{
    const sfs_map_t        *map = sfs_cluster_map(client->cluster);
    const sfs_map_target_t *t;
    const sfs_map_node_t   *node;

    if (!map || pattern->type != SFS_PATTERN_MIRROR || client->mirror_old_map) {
        return 1;
    }
    /* a request to a dead rank fails only after UCX's keepalive (2 s), and
     * the promotion that comes meanwhile would be seen that much late: the
     * pause would pass the offline timeout */
    t    = sfs_map_find_target(map, sfs_client_mirror_target(client, pattern, index));
    node = t ? sfs_map_find_node(map, t->node_id) : NULL;
    return node && node->state == SFS_STATE_ONLINE;
}

int sfs_client_mirror_retryable(const sfs_pattern_t *pattern, int rc)
{
    /* -ENODEV: the member is not in the map, which a management that has
     * just restarted (--rejoin) sends until the member's rank has
     * registered again, within a heartbeat */
    return pattern->type == SFS_PATTERN_MIRROR &&
           (rc == -ESTALE || rc == -ENODEV || sfs_client_no_answer(rc)) && rc != -ECANCELED;
}

int sfs_client_mirror_wait(sfs_client_t *client, uint64_t *deadline_ms)
{
    const sfs_map_t *map = sfs_cluster_map(client->cluster);
    uint64_t         now = sfs_time_ms();
    uint64_t         until;

    if (*deadline_ms == 0) {
        /* the offline timeout (<= 20 s by default) and a promotion, with
         * room: three RPC timeouts */
        *deadline_ms = now + 3ull * (map && map->rpc_timeout_ms ? map->rpc_timeout_ms : 30000);
        sfs_info("a mirror group's member does not answer: waiting for its failover");
    }
    if (now >= *deadline_ms) {
        return -ETIMEDOUT;
    }
    until = now + 250;
    while (sfs_time_ms() < until) {
        sfs_tp_worker_progress(client->worker, 50);
    }
    (void)sfs_cluster_refresh_map(client->cluster); /* the last map serves if it fails */
    sfs_error_clear();
    return 0;
}

int sfs_client_mirror_wait_serving(sfs_client_t *client, const sfs_pattern_t *pattern,
                                   uint32_t count, const uint8_t *only, uint64_t *deadline_ms)
{
    int rc = 0;

    for (uint32_t t = 0; rc == 0 && t < count; t++) {
        if (only && !only[t]) {
            continue;
        }
        while (rc == 0 && !sfs_client_mirror_serving(client, pattern, t) &&
               !sfs_client_mirror_lost(client, pattern, t)) {
            rc = sfs_client_mirror_wait(client, deadline_ms);
        }
    }
    return rc;
}
