/*
 * Free space of the whole file system. Targets are directories, and several
 * may sit on one disk (a one-host service puts them all in its state
 * directory): summing them would count that disk once per target. Each
 * underlying file system is counted once where this host can tell that
 * targets share one: the target's server runs on this host and stat() of its
 * directory gives the device. Elsewhere every target counts (nothing in the
 * cluster map says which disk a target is on).
 */
#define SFS_LOG_FAC "client"
#include "sfs_admin.h"
#include "sfs_client_internal.h"

#include "sfs_errno.h"
#include "sfs_map.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether the map's host name is this host. */
static int sfs_statfs_is_local(const char *host, const char *here)
{
    size_t n = strlen(here);

    if (strcmp(host, here) == 0 || strcmp(host, "localhost") == 0 ||
        strcmp(host, "127.0.0.1") == 0) {
        return 1;
    }
    /* "vm" and "vm.example.org" are the same host */
    return strncmp(host, here, n) == 0 && host[n] == '.';
}

int sfs_admin_fs_groups(const sfs_map_t *map, uint32_t *group_of)
{
    char   here[HOST_NAME_MAX + 1] = "";
    dev_t *devs;

    SFS_ARG_CHECK(map && group_of, "the map or group_of is NULL");
    devs = calloc(map->target_count ? map->target_count : 1, sizeof(*devs));
    if (!devs) {
        return -ENOMEM;
    }
    if (gethostname(here, sizeof(here) - 1) != 0) {
        here[0] = '\0';
    }
    for (uint32_t i = 0; i < map->target_count; i++) {
        const sfs_map_target_t *t    = &map->targets[i];
        const sfs_map_node_t   *node = sfs_map_find_node(map, t->node_id);
        struct stat             st;

        group_of[i] = i;
        if (t->state != SFS_STATE_ONLINE || !node || !here[0] ||
            !sfs_statfs_is_local(node->host, here) || stat(t->dir, &st) != 0) {
            continue;
        }
        devs[i] = st.st_dev;
        for (uint32_t j = 0; j < i; j++) {
            /* a capacity limit makes a target its own pool: not shared */
            if (group_of[j] == j && devs[j] == st.st_dev &&
                map->targets[j].capacity == t->capacity) {
                group_of[i] = j;
                break;
            }
        }
    }
    free(devs);
    return 0;
}

int sfs_statfs(sfs_client_t *client, sfs_statfs_t *statfs)
{
    const sfs_map_t *map;
    sfs_meta_req_t  *req;
    sfs_tp_rpc_t    *rpc;
    uint32_t        *group_of;
    int              rc;

    SFS_ARG_CHECK(client && statfs, "the client or statfs is NULL");
    memset(statfs, 0, sizeof(*statfs));
    rc = sfs_cluster_refresh_map(client->cluster);
    if (rc) {
        return rc;
    }
    map      = sfs_cluster_map(client->cluster);
    group_of = calloc(map->target_count ? map->target_count : 1, sizeof(*group_of));
    if (!group_of) {
        return -ENOMEM;
    }
    rc = sfs_admin_fs_groups(map, group_of);
    for (uint32_t i = 0; rc == 0 && i < map->target_count; i++) {
        statfs->targets++;
        if (map->targets[i].state != SFS_STATE_ONLINE) {
            continue;
        }
        statfs->targets_online++;
        if (group_of[i] != i) {
            continue; /* its file system is counted already */
        }
        statfs->filesystems++;
        statfs->capacity += map->targets[i].capacity;
        statfs->free += map->targets[i].free;
    }
    free(group_of);
    if (rc) {
        return rc;
    }
    req = calloc(1, sizeof(*req));
    if (!req) {
        return -ENOMEM;
    }
    snprintf(req->path, sizeof(req->path), "/");
    req->uid = client->uid;
    req->gid = client->gid;
    rc       = sfs_client_meta_call(client, SFS_OP_META_STATFS, req, &rpc);
    free(req);
    if (rc == 0) {
        size_t      length;
        const void *reply = sfs_tp_rpc_reply_args(rpc, &length);
        sfs_rbuf_t  rb;

        sfs_rbuf_init(&rb, reply, length);
        statfs->files = sfs_rbuf_u64(&rb);
        statfs->dirs  = sfs_rbuf_u64(&rb);
        if (rb.error) {
            rc = sfs_error_set(-EPROTO, "metadata server sent a malformed statfs reply");
        }
    }
    sfs_tp_rpc_release(rpc);
    return rc;
}
