/*
 * Storage pools from the client (docs/pools.md): a directory's pool set
 * (sfs_setpattern_pool), an entry's pool read (sfs_admin_pool_get), the
 * pools listed (sfs_admin_pool_list: the metadata server's POOL_SHOW, or
 * management's POOL_LIST from an older server) and changed
 * (sfs_admin_pool_set, POOL_SET). A create's pool travels with its open
 * parameters (sfs_file.c).
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
    sfs_tp_rpc_t *rpc = NULL;
    const void   *args;
    size_t        length;
    int           rc;

    SFS_ARG_CHECK(client && reply, "the client or the reply is NULL");
    /* the pools in force are the metadata server's (the config's and
     * those changed online); a server before POOL_SHOW knows the config's */
    rc = sfs_client_meta_call_args(client, SFS_OP_POOL_SHOW, NULL, 0, &rpc);
    if (rc == -EOPNOTSUPP) {
        sfs_tp_rpc_release(rpc);
        sfs_error_clear();
        return sfs_admin_mgmt_list(client, SFS_OP_POOL_LIST, reply, sizeof(*reply));
    }
    if (rc == 0) {
        args = sfs_tp_rpc_reply_args(rpc, &length);
        rc   = sfs_proto_decode(SFS_OP_POOL_SHOW, 1, args, length, reply, sizeof(*reply));
        if (rc) {
            sfs_error_set(rc, "metadata: POOL_SHOW: a reply that does not decode");
        }
    }
    sfs_tp_rpc_release(rpc);
    return rc;
}

int sfs_admin_pool_set(sfs_client_t *client, uint32_t op, const char *name, const uint32_t *targets,
                       uint32_t count)
{
    sfs_pool_set_req_t *req;
    sfs_tp_rpc_t       *rpc = NULL;
    uint8_t            *args;
    sfs_wbuf_t          wb;
    int                 rc;

    SFS_ARG_CHECK(client && name && (targets || count == 0),
                  "the client, the name or the targets are NULL");
    if (name[0] == '\0' || strlen(name) >= SFS_POOL_NAME_MAX) {
        return sfs_error_set(-EINVAL, "'%.80s' is not a storage pool name (1..%d bytes)", name,
                             SFS_POOL_NAME_MAX - 1);
    }
    if (count > SFS_POOL_SET_TARGETS_MAX || !sfs_pool_set_op_name(op)) {
        return sfs_error_set(-EINVAL, "storage pool '%s': %s (at most %d targets at once)", name,
                             sfs_pool_set_op_name(op) ? "too many targets" : "unknown change",
                             SFS_POOL_SET_TARGETS_MAX);
    }
    req  = calloc(1, sizeof(*req));
    args = malloc(16 + SFS_POOL_NAME_MAX + 4 * SFS_POOL_SET_TARGETS_MAX);
    if (!req || !args) {
        free(req);
        free(args);
        return sfs_error_set(-ENOMEM, "out of memory");
    }
    req->op           = op;
    req->target_count = count;
    snprintf(req->name, sizeof(req->name), "%s", name);
    if (count) {
        memcpy(req->targets, targets, count * sizeof(*targets));
    }
    sfs_wbuf_init(&wb, args, 16 + SFS_POOL_NAME_MAX + 4 * SFS_POOL_SET_TARGETS_MAX);
    sfs_proto_pool_set_req_pack(&wb, req);
    rc = wb.error ? sfs_error_set(wb.error, "storage pool '%s': the request does not encode", name)
                  : sfs_client_meta_call_args(client, SFS_OP_POOL_SET, args, wb.length, &rpc);
    sfs_tp_rpc_release(rpc);
    free(args);
    free(req);
    return rc;
}
