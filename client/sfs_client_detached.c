/* Metadata RPCs whose answer no one waits for (SIZE END at close): sent at
 * once, completed by whatever progress the client makes next, released
 * when done, and waited for before the connections go. */
#define SFS_LOG_FAC "client"
#include "sfs_client_internal.h"

#include "sfs_errno.h"
#include "sfs_log.h"

#include <string.h>
#include <unistd.h>

/* Release the finished ones; with `wait_all`, wait for the rest first. */
void sfs_client_detached_reap(sfs_client_t *client, int wait_all)
{
    uint32_t kept = 0;

    if (client->pid != getpid()) {
        /* a forked child's copy: these are the parent's RPCs */
        client->detached_count = 0;
        return;
    }
    for (uint32_t i = 0; i < client->detached_count; i++) {
        sfs_tp_rpc_t *rpc    = client->detached[i];
        uint32_t      opcode = client->detached_op[i];

        if (wait_all) {
            (void)sfs_tp_rpc_wait(rpc);
        }
        if (!sfs_tp_rpc_is_done(rpc)) {
            client->detached[kept]    = rpc;
            client->detached_op[kept] = opcode;
            kept++;
            continue;
        }
        if (sfs_tp_rpc_status(rpc) != 0) {
            /* what it said is lost with it: the callers accept that */
            sfs_debug("%s: %s", sfs_op_name(opcode), sfs_tp_rpc_error_detail(rpc));
        }
        sfs_tp_rpc_release(rpc);
    }
    client->detached_count = kept;
}

int sfs_client_meta_post(sfs_client_t *client, uint32_t opcode, const void *args, size_t length)
{
    sfs_tp_rpc_params_t params;
    sfs_tp_conn_t      *conn;
    sfs_tp_rpc_t       *rpc;
    int                 rc;

    sfs_client_detached_reap(client, 0);
    if (client->detached_count == SFS_CLIENT_DETACHED_MAX) {
        /* bounded: wait for the oldest ones rather than grow */
        sfs_client_detached_reap(client, 1);
    }
    rc = sfs_cluster_meta_conn(client->cluster, &conn);
    if (rc) {
        return rc;
    }
    memset(&params, 0, sizeof(params));
    params.opcode      = opcode;
    params.args        = args;
    params.args_length = length;
    rc                 = sfs_tp_rpc_start(conn, &params, &rpc);
    if (rc) {
        return rc;
    }
    client->detached_op[client->detached_count] = opcode;
    client->detached[client->detached_count++]  = rpc;
    return 0;
}
