/*
 * The calls of sfs_admin_migrate.h: one RPC each, to the metadata server
 * or to the storage target's rank.
 */
#define SFS_LOG_FAC "client"
#include "sfs_admin_migrate.h"

#include "sfs_client_internal.h"

#include "sfs_errno.h"
#include "sfs_time.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One RPC to target `target`'s rank; *rpc_p to release on success. */
static int sfs_admin_target_call(sfs_client_t *client, uint32_t target,
                                 const sfs_tp_rpc_params_t *params, sfs_tp_rpc_t **rpc_p)
{
    sfs_tp_conn_t *conn;
    sfs_tp_rpc_t  *rpc = NULL;
    int            rc  = sfs_cluster_target_conn(client->cluster, target, &conn);

    if (rc == 0) {
        rc = sfs_tp_call(conn, params, &rpc);
    }
    if (rc) {
        const char *detail = rpc ? sfs_tp_rpc_error_detail(rpc) : "";

        sfs_error_set(rc, "%s on storage target %u: %s", sfs_op_name(params->opcode), target,
                      detail[0] ? detail : sfs_strerror(rc));
        sfs_tp_rpc_release(rpc);
        return rc;
    }
    *rpc_p = rpc;
    return 0;
}

static int sfs_admin_reply_u64(sfs_tp_rpc_t *rpc, uint64_t *value_p)
{
    size_t      length;
    const void *reply = sfs_tp_rpc_reply_args(rpc, &length);
    sfs_rbuf_t  rb;
    uint64_t    value;

    sfs_rbuf_init(&rb, reply, length);
    value = sfs_rbuf_u64(&rb);
    if (rb.error) {
        return sfs_error_set(-EPROTO, "malformed %s reply", "chunk");
    }
    if (value_p) {
        *value_p = value;
    }
    return 0;
}

/* Send `req` as a metadata `opcode`; the reply's arguments stay in *rpc_p
 * (released by the caller, also on failure). */
static int sfs_admin_migrate_call(sfs_client_t *client, uint32_t opcode,
                                  const sfs_migrate_req_t *req, sfs_tp_rpc_t **rpc_p)
{
    uint8_t    args[128];
    sfs_wbuf_t wb;

    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_migrate_req_pack(&wb, req);
    return sfs_client_meta_call_args(client, opcode, args, wb.length, rpc_p);
}

int sfs_admin_drain(sfs_client_t *client, uint32_t op, uint32_t target, sfs_migrate_reply_t *reply)
{
    sfs_migrate_req_t req = {.op = op, .from = target};
    sfs_tp_rpc_t     *rpc = NULL;
    const void       *data;
    size_t            length;
    sfs_rbuf_t        rb;
    int               rc = sfs_admin_migrate_call(client, SFS_OP_MIGRATE_DRAIN, &req, &rpc);

    if (rc) {
        sfs_tp_rpc_release(rpc);
        return rc;
    }
    data = sfs_tp_rpc_reply_args(rpc, &length);
    sfs_rbuf_init(&rb, data, length);
    sfs_proto_migrate_reply_unpack(&rb, reply);
    sfs_tp_rpc_release(rpc);
    return rb.error ? sfs_error_set(-EPROTO, "malformed MIGRATE_DRAIN reply") : 0;
}

int sfs_admin_migrate_lease(sfs_client_t *client, uint32_t op, const uint32_t *targets,
                            uint32_t count, uint32_t lease_s, uint64_t token)
{
    sfs_migrate_lease_req_t *req;
    uint8_t                 *args;
    size_t                   size = 32 + 4 * (size_t)SFS_LEASE_TARGETS_MAX;
    sfs_wbuf_t               wb;
    sfs_tp_rpc_t            *rpc = NULL;
    int                      rc;

    if (count == 0 || count > SFS_LEASE_TARGETS_MAX || token == 0 || lease_s == 0 ||
        lease_s > SFS_LEASE_S_MAX) {
        return sfs_error_set(-EINVAL,
                             "migrate lease: %u targets (1 to %u), %u s (1 to %u), token %s", count,
                             SFS_LEASE_TARGETS_MAX, lease_s, SFS_LEASE_S_MAX, token ? "set" : "0");
    }
    req  = calloc(1, sizeof(*req));
    args = malloc(size);
    if (!req || !args) {
        free(req);
        free(args);
        return -ENOMEM;
    }
    req->op      = op;
    req->lease_s = lease_s;
    req->pid     = (uint32_t)getpid();
    req->count   = count;
    req->token   = token;
    memcpy(req->targets, targets, count * sizeof(*targets));
    sfs_wbuf_init(&wb, args, size);
    sfs_proto_migrate_lease_req_pack(&wb, req);
    rc = wb.error ? sfs_error_set(-EINVAL, "migrate lease: op %u is not a lease op", op)
                  : sfs_client_meta_call_args(client, SFS_OP_MIGRATE_LEASE, args, wb.length, &rpc);
    sfs_tp_rpc_release(rpc);
    free(req);
    free(args);
    return rc;
}

uint64_t sfs_admin_migrate_lease_token(void)
{
    uint64_t token = ((uint64_t)getpid() << 40) ^ sfs_wall_ns();

    return token ? token : 1;
}

int sfs_admin_migrate_begin(sfs_client_t *client, uint64_t entry_id, uint64_t *write_gen_p,
                            sfs_cap_t *cap_p)
{
    sfs_migrate_req_t req = {.entry_id = entry_id};
    sfs_tp_rpc_t     *rpc = NULL;
    const void       *data;
    size_t            length;
    sfs_rbuf_t        rb;
    int               rc = sfs_admin_migrate_call(client, SFS_OP_MIGRATE_BEGIN, &req, &rpc);

    if (rc) {
        sfs_tp_rpc_release(rpc);
        return rc;
    }
    data = sfs_tp_rpc_reply_args(rpc, &length);
    sfs_rbuf_init(&rb, data, length);
    sfs_proto_migrate_req_unpack(&rb, &req);
    sfs_tp_rpc_release(rpc);
    if (rb.error) {
        return sfs_error_set(-EPROTO, "malformed MIGRATE_BEGIN reply");
    }
    *write_gen_p = req.write_gen;
    *cap_p       = req.cap;
    return 0;
}

int sfs_admin_migrate_commit(sfs_client_t *client, const sfs_migrate_req_t *req)
{
    sfs_tp_rpc_t *rpc = NULL;
    int           rc  = sfs_admin_migrate_call(client, SFS_OP_MIGRATE_COMMIT, req, &rpc);

    sfs_tp_rpc_release(rpc);
    return rc;
}

int sfs_admin_chunk_moved(sfs_client_t *client, uint32_t target, uint64_t entry_id, uint32_t flags,
                          uint64_t *until_s_p)
{
    sfs_chunk_req_t     chunk;
    uint8_t             args[96];
    sfs_wbuf_t          wb;
    sfs_tp_rpc_params_t params;
    sfs_tp_rpc_t       *rpc;
    int                 rc;

    memset(&chunk, 0, offsetof(sfs_chunk_req_t, extents));
    memset(&chunk.cap, 0, sizeof(chunk.cap));
    chunk.target_id = target;
    chunk.entry_id  = entry_id;
    chunk.flags     = flags;
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_chunk_req_pack(&wb, SFS_OP_CHUNK_MOVED, &chunk);
    memset(&params, 0, sizeof(params));
    params.opcode      = SFS_OP_CHUNK_MOVED;
    params.args        = args;
    params.args_length = wb.length;
    rc                 = sfs_admin_target_call(client, target, &params, &rpc);
    if (rc) {
        return rc;
    }
    rc = sfs_admin_reply_u64(rpc, until_s_p);
    sfs_tp_rpc_release(rpc);
    return rc;
}

int sfs_admin_chunk_io(sfs_client_t *client, uint32_t opcode, uint32_t target, uint64_t entry_id,
                       const sfs_cap_t *cap, uint64_t offset, void *buf, uint64_t length,
                       uint64_t *chunk_length_p)
{
    sfs_chunk_req_t    *chunk;
    uint8_t             args[128];
    sfs_wbuf_t          wb;
    sfs_tp_rpc_params_t params;
    sfs_tp_rpc_t       *rpc;
    struct iovec        iov = {.iov_base = buf, .iov_len = length};
    int                 rc;

    chunk = calloc(1, sizeof(*chunk));
    if (!chunk) {
        return -ENOMEM;
    }
    chunk->target_id = target;
    chunk->entry_id  = entry_id;
    if (cap) {
        chunk->cap = *cap;
    }
    if (opcode == SFS_OP_READ || opcode == SFS_OP_WRITE) {
        chunk->extent_count            = 1;
        chunk->extents[0].chunk_offset = offset;
        chunk->extents[0].length       = length;
        chunk->flags                   = opcode == SFS_OP_WRITE ? SFS_WRITE_SYNC : 0;
    } else if (opcode == SFS_OP_TRUNCATE) {
        chunk->length = length;
        chunk->flags  = SFS_TRUNCATE_EXACT;
    }
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_chunk_req_pack(&wb, opcode, chunk);
    free(chunk);
    memset(&params, 0, sizeof(params));
    params.opcode      = opcode;
    params.args        = args;
    params.args_length = wb.length;
    if (opcode == SFS_OP_WRITE) {
        params.payload       = &iov;
        params.payload_count = 1;
    } else if (opcode == SFS_OP_READ) {
        params.reply_iov       = &iov;
        params.reply_iov_count = 1;
    }
    rc = sfs_admin_target_call(client, target, &params, &rpc);
    if (rc) {
        return rc;
    }
    rc = sfs_admin_reply_u64(rpc, chunk_length_p);
    sfs_tp_rpc_release(rpc);
    return rc;
}
