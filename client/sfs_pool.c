/*
 * Storage pools from the client (docs/pools.md): a directory's pool set
 * (sfs_setpattern_pool), an entry's pool read (sfs_admin_pool_get) and
 * the pools listed (sfs_admin_pool_list). A create's pool travels with its
 * open parameters (sfs_file.c).
 */
#define SFS_LOG_FAC "client"
#include "sfs_admin.h"
#include "sfs_client_internal.h"
#include "sfs_errno.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A request for `path` naming pool `pool` (when not NULL); NULL with *rc_p
 * when the path or the name is bad. */
static sfs_meta_req_t *sfs_pool_req(const char *call, sfs_client_t *client, const char *path,
                                    const char *pool, int *rc_p)
{
    sfs_meta_req_t *req;

    if (!client || !path) {
        *rc_p = sfs_error_set(-EINVAL, "%s: %s is NULL", call, client ? "the path" : "the client");
        return NULL;
    }
    if (pool && (pool[0] == '\0' || strlen(pool) >= SFS_POOL_NAME_MAX)) {
        *rc_p = sfs_error_set(-EINVAL, "%s: '%.80s' is not a storage pool name (1..%d bytes)", call,
                              pool, SFS_POOL_NAME_MAX - 1);
        return NULL;
    }
    req = calloc(1, sizeof(*req));
    if (!req) {
        *rc_p = -ENOMEM;
        return NULL;
    }
    *rc_p = sfs_client_path(path, req->path);
    if (*rc_p) {
        free(req);
        return NULL;
    }
    req->uid = client->uid;
    req->gid = client->gid;
    if (pool) {
        req->flags = SFS_PATTERN_REQ_POOL;
        snprintf(req->pool, sizeof(req->pool), "%s", pool);
    }
    return req;
}

int sfs_setpattern_pool(sfs_client_t *client, const char *path, const char *pool)
{
    int             rc;
    sfs_meta_req_t *req = sfs_pool_req(__func__, client, path, pool ? pool : "", &rc);

    if (!req) {
        return rc;
    }
    rc = sfs_client_meta_attr(client, SFS_OP_SETPATTERN, req, NULL, NULL, NULL);
    free(req);
    return rc;
}

int sfs_admin_pool_get(sfs_client_t *client, const char *path, sfs_pool_reply_t *reply)
{
    sfs_tp_rpc_t   *rpc = NULL;
    const void     *args;
    size_t          length;
    int             rc;
    sfs_meta_req_t *req = sfs_pool_req(__func__, client, path, NULL, &rc);

    if (!req) {
        return rc;
    }
    rc = sfs_client_meta_call(client, SFS_OP_POOL_GET, req, &rpc);
    free(req);
    if (rc == 0) {
        args = sfs_tp_rpc_reply_args(rpc, &length);
        rc   = sfs_proto_decode(SFS_OP_POOL_GET, 1, args, length, reply, sizeof(*reply));
        if (rc) {
            sfs_error_set(rc, "metadata: POOL_GET of '%s': a reply that does not decode", path);
        }
    }
    sfs_tp_rpc_release(rpc);
    return rc;
}

int sfs_admin_pool_list(sfs_client_t *client, sfs_pool_list_reply_t *reply)
{
    return sfs_admin_mgmt_list(client, SFS_OP_POOL_LIST, reply, sizeof(*reply));
}
