/*
 * The metadata mirror's server-only operations sent from an ordinary
 * client session (the caller's own uid, through the client library's
 * connections): each must be refused with EPERM before it changes
 * anything (docs/metadata-mirror.md).
 *   - META_MIRROR to the rank with the metamirror role: a probe, and a
 *     full copy's first piece with an empty write set (which, taken, would
 *     empty the copy);
 *   - META_PROMOTE to the same rank (it would make a second metadata server);
 *   - META_MIRROR_STATE to management: "good" for the metadata server.
 *
 *   sfs_server_ops_refused          (STRIPEFS_CONFIG names the service)
 *
 * Prints "ok: ..." per check and exits 0, or FAILED lines and exits 1.
 */
#include "sfs_client_internal.h"

#include "sfs_cluster.h"
#include "sfs_errno.h"
#include "sfs_map.h"
#include "sfs_tp.h"

#include <stdio.h>
#include <string.h>

static int failures;

/* Send `opcode` with `args` (and no payload) on `conn`; its status, and the
 * server's words in `detail`. */
static int call(sfs_tp_conn_t *conn, uint32_t opcode, const void *args, size_t length, char *detail,
                size_t size)
{
    sfs_tp_rpc_params_t params;
    sfs_tp_rpc_t       *rpc = NULL;
    int                 rc;

    memset(&params, 0, sizeof(params));
    params.opcode      = opcode;
    params.args        = args;
    params.args_length = length;
    params.timeout_ms  = 5000;
    rc                 = sfs_tp_call(conn, &params, &rpc);
    snprintf(detail, size, "%s", rpc ? sfs_tp_rpc_error_detail(rpc) : sfs_error_detail());
    sfs_tp_rpc_release(rpc);
    return rc;
}

static void expect_eperm(const char *what, int rc, const char *detail)
{
    printf("%s: %s is refused: %s (%s)\n", rc == -EPERM ? "ok" : "FAILED", what, sfs_strerror(rc),
           detail);
    failures += rc != -EPERM;
}

int main(void)
{
    sfs_client_t         *client = NULL;
    const sfs_map_t      *map;
    const sfs_map_node_t *mirror = NULL;
    sfs_tp_conn_t        *conn;
    uint8_t               args[64];
    char                  detail[SFS_ERROR_DETAIL_MAX];
    sfs_wbuf_t            wb;
    int                   rc = sfs_client_connect(NULL, &client);

    if (rc) {
        printf("FAILED: connect: %s\n", sfs_error_detail());
        return 1;
    }
    map = sfs_cluster_map(client->cluster);
    for (uint32_t i = 0; map && i < map->node_count; i++) {
        if (map->nodes[i].roles & SFS_ROLE_META_MIRROR) {
            mirror = &map->nodes[i];
        }
    }
    if (!mirror || sfs_cluster_node_conn(client->cluster, mirror->node_id, &conn) != 0) {
        printf("FAILED: no connection to a metadata mirror rank: %s\n",
               mirror ? sfs_error_detail() : "none in the map");
        sfs_client_disconnect(client);
        return 1;
    }
    for (int copy = 0; copy < 2; copy++) {
        sfs_meta_mirror_req_t req = {.seq = 1,
                                     .flags =
                                         copy ? SFS_META_MIRROR_COPY | SFS_META_MIRROR_COPY_FIRST
                                              : SFS_META_MIRROR_PROBE};

        sfs_wbuf_init(&wb, args, sizeof(args));
        sfs_proto_meta_mirror_req_pack(&wb, &req);
        rc = call(conn, SFS_OP_META_MIRROR, args, wb.length, detail, sizeof(detail));
        expect_eperm(copy ? "META_MIRROR (a full copy's first piece) to the mirror"
                          : "META_MIRROR (a probe) to the mirror",
                     rc, detail);
    }
    {
        /* a user who could promote the mirror could make two metadata servers */
        sfs_meta_promote_req_t promote = {.old_node = map->meta_node, .seq = 1};

        sfs_wbuf_init(&wb, args, sizeof(args));
        sfs_proto_meta_promote_req_pack(&wb, &promote);
        rc = call(conn, SFS_OP_META_PROMOTE, args, wb.length, detail, sizeof(detail));
        expect_eperm("META_PROMOTE to the mirror", rc, detail);
    }
    if (sfs_cluster_mgmt_conn(client->cluster, &conn) == 0) {
        sfs_meta_mirror_state_req_t state = {.node_id = map->meta_node,
                                             .state   = SFS_MIRROR_STATE_GOOD};

        sfs_wbuf_init(&wb, args, sizeof(args));
        sfs_proto_meta_mirror_state_req_pack(&wb, &state);
        rc = call(conn, SFS_OP_META_MIRROR_STATE, args, wb.length, detail, sizeof(detail));
        expect_eperm("META_MIRROR_STATE (\"good\") to management", rc, detail);
    } else {
        printf("FAILED: no connection to management: %s\n", sfs_error_detail());
        failures++;
    }
    sfs_client_disconnect(client);
    printf("%s\n", failures ? "FAILED" : "PASSED");
    return failures ? 1 : 0;
}
