/*
 * A process's view of a stripefs cluster: the connection to management, the
 * cluster map, and connections to server nodes made on first use and remade
 * after a failure. Shared by the client library and by servers that talk to
 * other servers (heartbeats, metadata -> storage). No MPI here.
 */
#ifndef SFS_CLUSTER_H
#define SFS_CLUSTER_H

#include "sfs_map.h"
#include "sfs_tp.h"

typedef struct sfs_cluster sfs_cluster_t;

enum {
    SFS_CLUSTER_PARAM_MGMT_HOST = 1u << 0, /* with mgmt_port: bootstrap over TCP */
    /* a known UCX worker address; with MGMT_HOST too, it is used first and
     * the bootstrap asked again once it fails (management restarted) */
    SFS_CLUSTER_PARAM_MGMT_ADDRESS = 1u << 1,
    SFS_CLUSTER_PARAM_TIMEOUT      = 1u << 2,
    SFS_CLUSTER_PARAM_NO_MAP       = 1u << 3, /* do not fetch the map at connect */
    /* for a server's progress thread: once management was reached, asking
     * its bootstrap port again (it restarted) runs in the background, and
     * the management connection is -EINPROGRESS until the answer is in,
     * instead of holding the caller for up to the connect timeout */
    SFS_CLUSTER_PARAM_BACKGROUND_RECONNECT = 1u << 4,
    /* testing (STRIPEFS_TEST_MIRROR_OLD_MAP): connect to a rank that the
     * map says is offline, as a client cut off from management together
     * with that rank would (it never hears of the rank's loss) */
    SFS_CLUSTER_PARAM_TEST_IGNORE_OFFLINE = 1u << 5,
};

typedef struct sfs_cluster_params {
    uint64_t         field_mask;
    sfs_tp_worker_t *worker; /* required; the caller keeps owning it */
    const char      *mgmt_host;
    uint16_t         mgmt_port;
    const void      *mgmt_address;
    size_t           mgmt_address_length;
    uint32_t         connect_timeout_ms; /* default 10000 */
} sfs_cluster_params_t;

int  sfs_cluster_connect(const sfs_cluster_params_t *params, sfs_cluster_t **cluster_p);
void sfs_cluster_destroy(sfs_cluster_t *cluster);

/* The current map (owned by the cluster; replaced by a refresh). */
const sfs_map_t *sfs_cluster_map(const sfs_cluster_t *cluster);
int              sfs_cluster_refresh_map(sfs_cluster_t *cluster);
/* The same without waiting, for a server's progress thread, which must
 * keep answering while management is slow: send GET_MAP on the existing
 * management connection (never reconnecting, which blocks) with a
 * deadline of `timeout_ms`. 0 once sent, -EALREADY while one is out, or
 * why it could not be sent. */
int sfs_cluster_refresh_map_start(sfs_cluster_t *cluster, uint32_t timeout_ms);
/* Never blocks: 1 when the request sent above was answered and its map is
 * installed, 0 while it is out (or none is), a negative errno with the
 * detail set when it failed or passed its deadline (the last map is kept). */
int sfs_cluster_refresh_map_poll(sfs_cluster_t *cluster);
/* When the map installed now was asked for (sfs_time_ms; 0: no map): a
 * map asked for after an event shows what management knew by then. */
uint64_t sfs_cluster_map_asked_ms(const sfs_cluster_t *cluster);

sfs_tp_worker_t *sfs_cluster_worker(const sfs_cluster_t *cluster);
/* The management connection (remade if broken; see
 * SFS_CLUSTER_PARAM_BACKGROUND_RECONNECT). */
int sfs_cluster_mgmt_conn(sfs_cluster_t *cluster, sfs_tp_conn_t **conn_p);
/* A connection to server node `node_id` (its rank). */
int sfs_cluster_node_conn(sfs_cluster_t *cluster, uint32_t node_id, sfs_tp_conn_t **conn_p);
/* The same for a server's progress thread, which must not stall: one try
 * at connecting, of at most `connect_timeout_ms`, to the address in the
 * map held now, and never a blocking call to management (the caller keeps
 * the map current; sfs_cluster_refresh_map_start). */
int sfs_cluster_node_conn_quick(sfs_cluster_t *cluster, uint32_t node_id,
                                uint32_t connect_timeout_ms, sfs_tp_conn_t **conn_p);
/* The metadata server's connection. */
int sfs_cluster_meta_conn(sfs_cluster_t *cluster, sfs_tp_conn_t **conn_p);
/* What the metadata server announced (SFS_FEATURE_*) on the connection
 * that works now, else on the last one made to it; connects only when no
 * connection to it was ever made (0 if that fails, the error cleared): a
 * caller deciding how to send a call does not wait for a connect that the
 * call itself would then wait for again. */
uint64_t sfs_cluster_meta_features(sfs_cluster_t *cluster);
/* The connection to the node serving storage target `target_id`. */
int sfs_cluster_target_conn(sfs_cluster_t *cluster, uint32_t target_id, sfs_tp_conn_t **conn_p);

/* A blocking RPC to management, metadata or a target's node, with the
 * error detail naming the server. The caller releases *rpc_p (if set). */
int sfs_cluster_call_mgmt(sfs_cluster_t *cluster, const sfs_tp_rpc_params_t *params,
                          sfs_tp_rpc_t **rpc_p);
int sfs_cluster_call_meta(sfs_cluster_t *cluster, const sfs_tp_rpc_params_t *params,
                          sfs_tp_rpc_t **rpc_p);
int sfs_cluster_call_node(sfs_cluster_t *cluster, uint32_t node_id,
                          const sfs_tp_rpc_params_t *params, sfs_tp_rpc_t **rpc_p);

#endif
