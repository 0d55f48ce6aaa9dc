/* META_STATS: the metadata server's timing (sfs_admin_stats.h). */
#define SFS_LOG_FAC "client"
#include "sfs_admin_stats.h"

#include "sfs_client_internal.h"

#include "sfs_errno.h"

#include <stdlib.h>
#include <string.h>

int sfs_admin_meta_stats(sfs_client_t *client, int reset, sfs_admin_meta_stats_t *stats)
{
    sfs_meta_req_t  *req;
    sfs_tp_rpc_t    *rpc = NULL;
    sfs_page_reply_t page;
    const void      *args;
    size_t           length;
    sfs_rbuf_t       rb;
    int              rc;

    SFS_ARG_CHECK(client, "the client is NULL");
    SFS_ARG_CHECK(stats, "stats is NULL");
    req = calloc(1, sizeof(*req));
    if (!req) {
        return -ENOMEM;
    }
    memcpy(req->path, "/", 2);
    req->flags = reset ? SFS_META_STATS_RESET : 0;
    rc         = sfs_client_meta_call(client, SFS_OP_META_STATS, req, &rpc);
    free(req);
    if (rc) {
        sfs_tp_rpc_release(rpc);
        return rc;
    }
    args = sfs_tp_rpc_reply_args(rpc, &length);
    sfs_rbuf_init(&rb, args, length);
    sfs_proto_page_reply_unpack(&rb, &page);
    if (rb.error || page.count > SFS_OP_MAX) {
        sfs_tp_rpc_release(rpc);
        return sfs_error_set(-EPROTO, "metadata server sent a malformed META_STATS reply");
    }
    memset(stats, 0, sizeof(*stats));
    sfs_rbuf_init(&rb, sfs_tp_rpc_reply_payload(rpc), sfs_tp_rpc_reply_payload_length(rpc));
    stats->enabled  = sfs_rbuf_u32(&rb) != 0;
    stats->since_ns = sfs_rbuf_u64(&rb);
    for (uint32_t i = 0; i < page.count && !rb.error; i++) {
        sfs_proto_meta_stats_entry_unpack(&rb, &stats->entries[i]);
    }
    stats->count = page.count;
    sfs_tp_rpc_release(rpc);
    return rb.error ? sfs_error_set(-EPROTO, "metadata server sent a malformed META_STATS payload")
                    : 0;
}
