/* Names of servers for error messages: a failed or timed-out call says which
 * server it went to (role, rank, host), so that an administrator knows which
 * process to look at. */
#define SFS_LOG_FAC "client"
#include "sfs_client_internal.h"

#include "sfs_errno.h"
#include "sfs_map.h"

#include <stdio.h>
#include <string.h>

const char *sfs_client_node_name(sfs_client_t *client, uint32_t node_id, const char *role,
                                 char *buf, size_t buflen)
{
    const sfs_map_t      *map  = sfs_cluster_map(client->cluster);
    const sfs_map_node_t *node = map ? sfs_map_find_node(map, node_id) : NULL;

    if (node) {
        snprintf(buf, buflen, "%s (rank %u on %s)", role, node_id, node->host);
    } else {
        snprintf(buf, buflen, "%s (rank %u)", role, node_id);
    }
    return buf;
}

const char *sfs_client_target_name(sfs_client_t *client, uint32_t target_id, char *buf,
                                   size_t buflen)
{
    const sfs_map_t        *map    = sfs_cluster_map(client->cluster);
    const sfs_map_target_t *target = map ? sfs_map_find_target(map, target_id) : NULL;
    char                    role[48];

    snprintf(role, sizeof(role), "storage target %u", target_id);
    if (!target) {
        snprintf(buf, buflen, "%s", role);
        return buf;
    }
    return sfs_client_node_name(client, target->node_id, role, buf, buflen);
}

int sfs_client_no_answer(int rc)
{
    switch (-rc) {
    case ETIMEDOUT:
    case ECONNRESET:
    case ECONNREFUSED:
    case ECONNABORTED:
    case ECANCELED:
    case EHOSTUNREACH:
    case EHOSTDOWN:
    case ENETUNREACH:
    case ENOTCONN:
    case EPIPE:
    case EPROTO:
        return 1;
    default:
        return 0;
    }
}

int sfs_client_meta_error(sfs_client_t *client, int rc)
{
    const sfs_map_t *map = sfs_cluster_map(client->cluster);
    char             name[SFS_HOST_MAX + 64], detail[SFS_ERROR_DETAIL_MAX];

    if (!map) {
        return rc;
    }
    sfs_client_node_name(client, map->meta_node, "metadata server", name, sizeof(name));
    snprintf(detail, sizeof(detail), "%s",
             sfs_error_detail()[0] ? sfs_error_detail() : sfs_strerror(rc));
    if (strstr(detail, name) == NULL) {
        sfs_error_set(rc, "%s: %s", name, detail);
    }
    return rc;
}
