/*
 * The client's side of the metadata server's failover (docs/metadata-mirror.md,
 * "Failover"): a metadata call that gets no answer, or that the server refuses
 * because management replaced it (ESTALE from a deposed server), is sent
 * again once the map names another metadata server, which it does when
 * management has promoted the metadata mirror. Only where the map has a
 * metadata mirror (or a promotion already happened) is there anything to
 * wait for; elsewhere the error comes at once, as before.
 *
 * Not yet: a reply cache. A call whose first try was committed (its reply
 * lost with the server) is done twice: a retried mkdir then says EEXIST.
 */
#define SFS_LOG_FAC "client"
#include "sfs_client_internal.h"

#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_map.h"
#include "sfs_time.h"

#include <errno.h>
#include <stdio.h>

/* Whether the map promises a failover: a rank keeps the metadata mirror,
 * and management is not the metadata server's rank (lost with it, it
 * promotes nothing: the one-host service). */
static int sfs_client_meta_has_mirror(const sfs_map_t *map)
{
    if (!map || map->mgmt_node == map->meta_node) {
        return 0;
    }
    for (uint32_t i = 0; i < map->node_count; i++) {
        if (map->nodes[i].roles & SFS_ROLE_META_MIRROR) {
            return 1;
        }
    }
    return 0;
}

int sfs_client_meta_failover_wanted(sfs_client_t *client, uint32_t called, int rc,
                                    const sfs_tp_rpc_t *rpc)
{
    const sfs_map_t *map = sfs_cluster_map(client->cluster);

    if (rc == -ECANCELED || !(sfs_client_no_answer(rc) || rc == -ESTALE)) {
        return 0;
    }
    if (rc != -ESTALE && sfs_tp_rpc_refused(rpc)) {
        /* the server answered (its fence's ETIMEDOUT, say): it is there */
        return 0;
    }
    if (map && map->meta_node != called) {
        return 1; /* another server already */
    }
    if (rc == -ESTALE) {
        /* from a server that is not replaced, ESTALE is the request's own
         * (a stale entry): only a map naming another server retries it */
        (void)sfs_cluster_refresh_map(client->cluster);
        sfs_error_clear();
        map = sfs_cluster_map(client->cluster);
        return map && map->meta_node != called;
    }
    return sfs_client_meta_has_mirror(map);
}

int sfs_client_meta_failover_wait(sfs_client_t *client, uint32_t called, uint64_t *deadline_ms)
{
    const sfs_map_t *map = sfs_cluster_map(client->cluster);
    uint64_t         now = sfs_time_ms();

    if (*deadline_ms == 0) {
        /* the offline timeout (<= 20 s by default), then the promotion:
         * two RPC timeouts leave room for both */
        *deadline_ms = now + 2ull * (map && map->rpc_timeout_ms ? map->rpc_timeout_ms : 30000);
    }
    for (;;) {
        map = sfs_cluster_map(client->cluster);
        if (map && map->meta_node != called) {
            sfs_error_clear();
            return 0;
        }
        if (sfs_time_ms() >= *deadline_ms) {
            return -ETIMEDOUT;
        }
        for (uint64_t until = sfs_time_ms() + 250; sfs_time_ms() < until;) {
            sfs_tp_worker_progress(client->worker, 50);
        }
        (void)sfs_cluster_refresh_map(client->cluster); /* the last map serves if it fails */
    }
}
