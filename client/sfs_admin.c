#define SFS_LOG_FAC "admin"
#include "sfs_admin.h"
#include "sfs_client_internal.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int sfs_admin_map(sfs_client_t *client, sfs_map_t **map_p)
{
    int rc = sfs_cluster_refresh_map(client->cluster);

    return rc ? rc : sfs_map_dup(sfs_cluster_map(client->cluster), map_p);
}

int sfs_admin_ping(sfs_client_t *client, uint32_t node_id, double *rtt_us_p)
{
    sfs_tp_rpc_params_t params = {.opcode = SFS_OP_PING};
    sfs_tp_rpc_t       *rpc;
    sfs_tp_conn_t      *conn;
    uint64_t            start;
    int                 rc;

    rc = sfs_cluster_node_conn(client->cluster, node_id, &conn);
    if (rc) {
        return rc;
    }
    start     = sfs_time_ns();
    rc        = sfs_tp_call(conn, &params, &rpc);
    *rtt_us_p = (double)(sfs_time_ns() - start) / 1000.0;
    sfs_tp_rpc_release(rpc);
    return rc;
}

int sfs_admin_transports(sfs_client_t *client, uint32_t node_id, char *buf, size_t buflen)
{
    sfs_tp_conn_t *conn;
    int            rc = sfs_cluster_node_conn(client->cluster, node_id, &conn);

    if (rc == 0) {
        snprintf(buf, buflen, "%s", sfs_tp_conn_transports(conn));
    }
    return rc;
}

int sfs_admin_sessions(sfs_client_t *client, uint32_t node_id, sfs_admin_session_t **sessions_p,
                       uint32_t *count_p)
{
    sfs_tp_rpc_params_t  params = {.opcode = SFS_OP_NET_INFO, .alloc_reply = 1};
    sfs_net_info_reply_t info;
    sfs_admin_session_t *sessions;
    sfs_tp_rpc_t        *rpc;
    const void          *reply;
    size_t               length;
    sfs_rbuf_t           rb;
    uint32_t             count;
    int                  rc;

    rc = sfs_cluster_call_node(client->cluster, node_id, &params, &rpc);
    if (rc) {
        sfs_tp_rpc_release(rpc);
        return rc;
    }
    reply = sfs_tp_rpc_reply_args(rpc, &length);
    rc    = sfs_proto_decode(SFS_OP_NET_INFO, 1, reply, length, &info, sizeof(info));
    count = info.count;
    if (rc || count > 1000000 || !SFS_ALLOC_ARRAY(sessions, count)) {
        sfs_tp_rpc_release(rpc);
        return rc ? sfs_error_set(-EPROTO, "malformed NET_INFO reply") : -ENOMEM;
    }
    sfs_rbuf_init(&rb, sfs_tp_rpc_reply_payload(rpc), sfs_tp_rpc_reply_payload_length(rpc));
    for (uint32_t i = 0; i < count; i++) {
        sfs_net_session_t one;

        sfs_proto_net_session_unpack(&rb, &one);
        sessions[i].peer_kind = one.peer_kind;
        sessions[i].peer_uuid = one.peer_uuid;
        sessions[i].pid       = one.pid;
        snprintf(sessions[i].host, sizeof(sessions[i].host), "%s", one.host);
        snprintf(sessions[i].program, sizeof(sessions[i].program), "%s", one.program);
        snprintf(sessions[i].transports, sizeof(sessions[i].transports), "%s", one.transports);
        sessions[i].age_ms = one.age_ms;
    }
    sfs_tp_rpc_release(rpc);
    if (rb.error) {
        free(sessions);
        return sfs_error_set(-EPROTO, "malformed NET_INFO sessions");
    }
    *sessions_p = sessions;
    *count_p    = count;
    return 0;
}

int sfs_admin_shutdown(sfs_client_t *client)
{
    sfs_tp_rpc_params_t params = {.opcode = SFS_OP_SHUTDOWN};
    sfs_tp_rpc_t       *rpc;
    int                 rc = sfs_cluster_call_mgmt(client->cluster, &params, &rpc);

    sfs_tp_rpc_release(rpc);
    return rc;
}

int sfs_admin_mgmt_list(sfs_client_t *client, uint32_t opcode, void *reply, size_t reply_size)
{
    sfs_tp_rpc_params_t params = {.opcode = opcode};
    sfs_tp_rpc_t       *rpc;
    const void         *args;
    size_t              length;
    int                 rc = sfs_cluster_call_mgmt(client->cluster, &params, &rpc);

    if (rc == 0) {
        args = sfs_tp_rpc_reply_args(rpc, &length);
        rc   = sfs_proto_decode(opcode, 1, args, length, reply, reply_size);
        if (rc) {
            sfs_error_set(rc, "management: %s: a reply that does not decode", sfs_op_name(opcode));
        }
    }
    sfs_tp_rpc_release(rpc);
    return rc;
}

int sfs_admin_mirror_list(sfs_client_t *client, sfs_mirror_list_reply_t *reply)
{
    return sfs_admin_mgmt_list(client, SFS_OP_MIRROR_LIST, reply, sizeof(*reply));
}

int sfs_admin_chunk_list(sfs_client_t *client, uint32_t target_id, uint64_t after, uint32_t max,
                         uint64_t *ids, uint64_t *lengths, uint32_t *count_p)
{
    sfs_chunk_req_t     chunk;
    uint8_t             args[96];
    sfs_wbuf_t          wb;
    sfs_tp_rpc_params_t params;
    sfs_tp_conn_t      *conn;
    sfs_tp_rpc_t       *rpc = NULL;
    sfs_rbuf_t          rb;
    const void         *reply;
    size_t              length;
    uint32_t            count;
    int                 rc;

    memset(&chunk, 0, offsetof(sfs_chunk_req_t, extents));
    chunk.target_id = target_id;
    chunk.entry_id  = after;
    chunk.length    = max;
    memset(&chunk.cap, 0, sizeof(chunk.cap)); /* for administrators: no capability */
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_chunk_req_pack(&wb, SFS_OP_CHUNK_LIST, &chunk);
    memset(&params, 0, sizeof(params));
    params.opcode      = SFS_OP_CHUNK_LIST;
    params.args        = args;
    params.args_length = wb.length;
    params.alloc_reply = 1;
    rc                 = sfs_cluster_target_conn(client->cluster, target_id, &conn);
    if (rc == 0) {
        rc = sfs_tp_call(conn, &params, &rpc);
    }
    if (rc) {
        sfs_tp_rpc_release(rpc);
        return rc;
    }
    reply = sfs_tp_rpc_reply_args(rpc, &length);
    sfs_rbuf_init(&rb, reply, length);
    count = sfs_rbuf_u32(&rb);
    if (rb.error || count > max) {
        sfs_tp_rpc_release(rpc);
        return sfs_error_set(-EPROTO, "malformed CHUNK_LIST reply from target %u", target_id);
    }
    sfs_rbuf_init(&rb, sfs_tp_rpc_reply_payload(rpc), sfs_tp_rpc_reply_payload_length(rpc));
    for (uint32_t i = 0; i < count; i++) {
        ids[i]     = sfs_rbuf_u64(&rb);
        lengths[i] = sfs_rbuf_u64(&rb);
    }
    sfs_tp_rpc_release(rpc);
    *count_p = count;
    return rb.error ? sfs_error_set(-EPROTO, "malformed chunk list from target %u", target_id) : 0;
}

int sfs_admin_chunk_unlink(sfs_client_t *client, uint32_t target_id, const uint64_t *ids,
                           uint32_t count)
{
    uint8_t                 args[16 + 8 * SFS_CHUNK_UNLINK_MAX];
    sfs_chunk_unlink_req_t *req;
    sfs_wbuf_t              wb;
    sfs_tp_rpc_params_t     params;
    sfs_tp_conn_t          *conn;
    sfs_tp_rpc_t           *rpc = NULL;
    int                     rc;

    if (count > SFS_CHUNK_UNLINK_MAX) {
        return sfs_error_set(-EINVAL, "at most %d chunk files per call", SFS_CHUNK_UNLINK_MAX);
    }
    if (!SFS_ALLOC_PTR(req)) {
        return -ENOMEM;
    }
    req->target_id = target_id;
    req->count     = count;
    memcpy(req->entry_ids, ids, count * sizeof(*ids));
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_chunk_unlink_req_pack(&wb, req);
    free(req);
    memset(&params, 0, sizeof(params));
    params.opcode      = SFS_OP_CHUNK_UNLINK;
    params.args        = args;
    params.args_length = wb.length;
    rc                 = sfs_cluster_target_conn(client->cluster, target_id, &conn);
    if (rc == 0) {
        rc = sfs_tp_call(conn, &params, &rpc);
    }
    sfs_tp_rpc_release(rpc);
    return rc;
}

int sfs_admin_inodes(sfs_client_t *client, uint64_t after, uint32_t max, sfs_attr_t *attrs,
                     uint32_t *count_p, int *eof_p)
{
    sfs_tp_rpc_t *rpc;
    sfs_rbuf_t    rb;
    uint32_t      count;
    int           rc;

    rc = sfs_client_meta_page(client, SFS_OP_META_LIST, "/", NULL, after, max, &rpc, &count, eof_p,
                              &rb);
    if (rc) {
        return rc;
    }
    for (uint32_t i = 0; i < count; i++) {
        sfs_proto_attr_unpack(&rb, &attrs[i]);
    }
    sfs_tp_rpc_release(rpc);
    *count_p = count;
    return rb.error ? sfs_error_set(-EPROTO, "malformed inode list") : 0;
}

int sfs_admin_meta_statfs(sfs_client_t *client, sfs_meta_statfs_t *stats)
{
    sfs_meta_req_t *req = calloc(1, sizeof(*req));
    sfs_tp_rpc_t   *rpc;
    int             rc;

    if (!req) {
        return -ENOMEM;
    }
    snprintf(req->path, sizeof(req->path), "/");
    rc = sfs_client_meta_call(client, SFS_OP_META_STATFS, req, &rpc);
    free(req);
    if (rc == 0) {
        size_t      length;
        const void *reply = sfs_tp_rpc_reply_args(rpc, &length);
        sfs_rbuf_t  rb;

        sfs_rbuf_init(&rb, reply, length);
        stats->files                 = sfs_rbuf_u64(&rb);
        stats->dirs                  = sfs_rbuf_u64(&rb);
        stats->pending_chunk_deletes = sfs_rbuf_u64(&rb);
        rc = rb.error ? sfs_error_set(-EPROTO, "malformed statfs reply") : 0;
    }
    sfs_tp_rpc_release(rpc);
    return rc;
}

int sfs_admin_meta_check(sfs_client_t *client, int repair, void (*line)(void *, const char *),
                         void *arg, sfs_admin_check_t *result)
{
    sfs_meta_req_t *req = calloc(1, sizeof(*req));
    sfs_tp_rpc_t   *rpc;
    const void     *reply;
    size_t          length;
    sfs_rbuf_t      rb;
    uint32_t        lines;
    int             rc;

    if (!req) {
        return -ENOMEM;
    }
    snprintf(req->path, sizeof(req->path), "/");
    req->flags = repair ? SFS_CHECK_REPAIR : 0;
    rc         = sfs_client_meta_call(client, SFS_OP_META_CHECK, req, &rpc);
    free(req);
    if (rc) {
        sfs_tp_rpc_release(rpc);
        return rc;
    }
    reply = sfs_tp_rpc_reply_args(rpc, &length);
    sfs_rbuf_init(&rb, reply, length);
    result->inodes   = sfs_rbuf_u64(&rb);
    result->dentries = sfs_rbuf_u64(&rb);
    result->problems = sfs_rbuf_u64(&rb);
    result->repaired = sfs_rbuf_u64(&rb);
    lines            = sfs_rbuf_u32(&rb);
    if (rb.error) {
        sfs_tp_rpc_release(rpc);
        return sfs_error_set(-EPROTO, "malformed META_CHECK reply");
    }
    sfs_rbuf_init(&rb, sfs_tp_rpc_reply_payload(rpc), sfs_tp_rpc_reply_payload_length(rpc));
    for (uint32_t i = 0; i < lines && !rb.error; i++) {
        char text[700];

        sfs_rbuf_str(&rb, text, sizeof(text));
        if (!rb.error && line) {
            line(arg, text);
        }
    }
    sfs_tp_rpc_release(rpc);
    return 0;
}

int sfs_admin_pending(sfs_client_t *client, uint64_t after, uint32_t max, uint64_t *ids,
                      uint32_t *count_p, int *eof_p)
{
    sfs_tp_rpc_t *rpc;
    sfs_rbuf_t    rb;
    uint32_t      count;
    int           rc;

    rc = sfs_client_meta_page(client, SFS_OP_META_PENDING, "/", NULL, after, max, &rpc, &count,
                              eof_p, &rb);
    if (rc) {
        return rc;
    }
    for (uint32_t i = 0; i < count; i++) {
        ids[i] = sfs_rbuf_u64(&rb);
    }
    sfs_tp_rpc_release(rpc);
    *count_p = count;
    return rb.error ? sfs_error_set(-EPROTO, "malformed pending list") : 0;
}

int sfs_admin_mirror_rebuild(sfs_client_t *client, uint32_t from_target, uint32_t member,
                             uint64_t *total_p)
{
    sfs_chunk_req_t     chunk;
    sfs_length_reply_t  reply;
    uint8_t             args[96];
    sfs_wbuf_t          wb;
    sfs_tp_rpc_params_t params;
    sfs_tp_conn_t      *conn;
    sfs_tp_rpc_t       *rpc = NULL;
    const void         *rargs;
    size_t              length;
    int                 rc;

    memset(&chunk, 0, offsetof(sfs_chunk_req_t, extents));
    memset(&chunk.cap, 0, sizeof(chunk.cap)); /* for administrators: no capability */
    chunk.target_id = from_target;
    chunk.entry_id  = member;
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_chunk_req_pack(&wb, SFS_OP_MIRROR_REBUILD, &chunk);
    memset(&params, 0, sizeof(params));
    params.opcode      = SFS_OP_MIRROR_REBUILD;
    params.args        = args;
    params.args_length = wb.length;
    rc                 = sfs_cluster_target_conn(client->cluster, from_target, &conn);
    if (rc == 0) {
        rc = sfs_tp_call(conn, &params, &rpc);
    }
    if (rc == 0) {
        rargs = sfs_tp_rpc_reply_args(rpc, &length);
        rc    = sfs_proto_decode(SFS_OP_MIRROR_REBUILD, 1, rargs, length, &reply, sizeof(reply));
        if (rc) {
            sfs_error_set(rc, "target %u: a MIRROR_REBUILD reply that does not decode",
                          from_target);
        } else {
            *total_p = reply.length;
        }
    }
    sfs_tp_rpc_release(rpc);
    return rc;
}
