/* A directory listing with attributes in one round trip per page: STAT
 * with SFS_STAT_ENTRIES (docs/metadata.md); sfs_readdir_stat then asks the
 * targets of the files someone writes, sfs_readdir_attrs leaves that to
 * its caller (the preload, whose stat asks when it wants the size). */
#define SFS_LOG_FAC "client"
#include "sfs_client_internal.h"

#include "sfs_errno.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sfs_readdir_attrs(sfs_client_t *client, const char *path, const char *after,
                      sfs_dir_entry_t *entries, sfs_stat_t *stats, uint32_t max, uint32_t *count_p,
                      int *eof_p)
{
    sfs_meta_req_t    *req;
    sfs_tp_rpc_t      *rpc;
    sfs_stat_reply_t   reply;
    sfs_dirent_plus_t *plus;
    const void        *data;
    size_t             length;
    sfs_rbuf_t         rb, pb;
    int                rc;

    SFS_ARG_CHECK(client && path, "the client or the path is NULL");
    SFS_ARG_CHECK(entries && stats && count_p && eof_p, "entries, stats, count_p or eof_p is NULL");
    SFS_ARG_CHECK(max > 0, "max is 0: no room for an entry");
    if (after && strlen(after) > SFS_NAME_MAX) {
        return sfs_error_set(-ENAMETOOLONG, "listing of '%s': resume name too long", path);
    }
    *count_p = 0;
    req      = calloc(1, sizeof(*req));
    plus     = malloc(sizeof(*plus));
    if (!req || !plus) {
        free(req);
        free(plus);
        return -ENOMEM;
    }
    rc = sfs_client_path(path, req->path);
    if (rc) {
        goto out;
    }
    req->uid   = client->uid;
    req->gid   = client->gid;
    req->flags = SFS_STAT_ENTRIES;
    snprintf(req->after_name, sizeof(req->after_name), "%s", after ? after : "");
    req->max_entries = max;
    rc               = sfs_client_meta_call(client, SFS_OP_STAT, req, &rpc);
    if (rc) {
        sfs_tp_rpc_release(rpc);
        goto out;
    }
    data = sfs_tp_rpc_reply_args(rpc, &length);
    sfs_rbuf_init(&rb, data, length);
    sfs_proto_stat_reply_unpack(&rb, &reply);
    if (rb.error || sfs_rbuf_remaining(&rb) || reply.count > max) {
        sfs_tp_rpc_release(rpc);
        rc = sfs_error_set(-EPROTO, "metadata server sent a malformed STAT reply");
        goto out;
    }
    if (reply.attr.type != SFS_TYPE_DIR) {
        sfs_tp_rpc_release(rpc);
        rc = sfs_error_set(-ENOTDIR, "'%s' is not a directory", req->path);
        goto out;
    }
    sfs_rbuf_init(&pb, sfs_tp_rpc_reply_payload(rpc), sfs_tp_rpc_reply_payload_length(rpc));
    for (uint32_t i = 0; i < reply.count && !pb.error; i++) {
        sfs_proto_dirent_plus_unpack(&pb, plus);
        sfs_client_dirent_to_entry(&plus->dirent, &entries[i]);
        sfs_client_attr_to_stat(&plus->attr, &stats[i]);
        stats[i].size = plus->attr.size;
        if (!plus->size_valid) {
            stats[i].flags |= SFS_STAT_SIZE_UNKNOWN; /* only its targets know */
        }
    }
    sfs_tp_rpc_release(rpc);
    if (pb.error) {
        rc = sfs_error_set(-EPROTO, "metadata server sent malformed directory entries");
        goto out;
    }
    for (uint32_t i = 0; i < reply.count; i++) {
        if (stats[i].type != SFS_FILE_TYPE_REGULAR) {
            stats[i].flags &= ~SFS_STAT_SIZE_UNKNOWN;
        }
    }
    *count_p = reply.count;
    *eof_p   = reply.eof;
out:
    free(req);
    free(plus);
    return rc;
}

int sfs_readdir_stat(sfs_client_t *client, const char *path, const char *after,
                     sfs_dir_entry_t *entries, sfs_stat_t *stats, uint32_t max, uint32_t *count_p,
                     int *eof_p)
{
    char canonical[SFS_PATH_MAX];
    int  rc = sfs_readdir_attrs(client, path, after, entries, stats, max, count_p, eof_p);

    if (rc || (rc = sfs_client_path(path, canonical)) != 0) {
        return rc;
    }
    /* the ones someone writes: their targets know the size */
    for (uint32_t i = 0; i < *count_p; i++) {
        char       child[SFS_PATH_MAX + SFS_NAME_MAX + 2];
        sfs_stat_t keep;

        if (!(stats[i].flags & SFS_STAT_SIZE_UNKNOWN)) {
            continue;
        }
        snprintf(child, sizeof(child), "%s/%s", strcmp(canonical, "/") ? canonical : "",
                 entries[i].name);
        keep = stats[i];
        if (sfs_stat(client, child, &stats[i]) != 0) {
            sfs_error_clear(); /* gone since: the listing's attributes, size unknown */
            stats[i] = keep;
        }
    }
    return 0;
}
