#define SFS_LOG_FAC "cluster"
#include "sfs_cluster.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

typedef struct sfs_cluster_node {
    uint32_t       node_id;
    sfs_tp_conn_t *conn;
    uint64_t       features;       /* its last HELLO reply's (SFS_FEATURE_*) */
    int            features_known; /* features is from a connection made */
} sfs_cluster_node_t;

struct sfs_cluster {
    sfs_tp_worker_t          *worker;
    char                      mgmt_host[SFS_HOST_MAX];
    uint16_t                  mgmt_port;
    void                     *mgmt_address;
    size_t                    mgmt_address_length;
    uint32_t                  timeout_ms;
    sfs_tp_conn_t            *mgmt;
    sfs_map_t                *map;
    sfs_cluster_node_t       *nodes;
    uint32_t                  node_count;
    sfs_tp_rpc_t             *map_rpc;         /* a GET_MAP sent by refresh_map_start */
    uint64_t                  map_rpc_sent_ms; /* when map_rpc went out */
    uint64_t                  map_asked_ms;    /* when the installed map was asked for */
    int                       mgmt_given;     /* mgmt_address came with the params, not tried yet */
    int                       background;     /* SFS_CLUSTER_PARAM_BACKGROUND_RECONNECT */
    int                       ignore_offline; /* SFS_CLUSTER_PARAM_TEST_IGNORE_OFFLINE */
    int                       connected;      /* management was reached once */
    sfs_tp_bootstrap_async_t *fetch; /* a reconnect's bootstrap question, in the background */
};

static void sfs_cluster_node_name(const sfs_cluster_t *cluster, uint32_t node_id, char *buf,
                                  size_t buflen)
{
    const sfs_map_node_t *node = cluster->map ? sfs_map_find_node(cluster->map, node_id) : NULL;
    char                  roles[64];

    if (!node) {
        snprintf(buf, buflen, "server rank %u", node_id);
        return;
    }
    snprintf(buf, buflen, "%s server (rank %u on %s)",
             sfs_roles_string(node->roles, roles, sizeof(roles)), node_id, node->host);
}

/* Management's worker address from its bootstrap port. The first
 * connection waits for it (nothing works without management); with
 * SFS_CLUSTER_PARAM_BACKGROUND_RECONNECT, a later one (a heartbeat's,
 * after management restarted) asks in the background and
 * answers -EINPROGRESS until the answer is in, so that the caller's
 * progress thread is not held for the connect timeout by a host that does
 * not answer. */
static int sfs_cluster_fetch_mgmt_address(sfs_cluster_t *cluster)
{
    int rc;

    if (!cluster->background || !cluster->connected) {
        return sfs_tp_bootstrap_fetch(cluster->mgmt_host, cluster->mgmt_port, cluster->timeout_ms,
                                      &cluster->mgmt_address, &cluster->mgmt_address_length);
    }
    if (!cluster->fetch &&
        (rc = sfs_tp_bootstrap_fetch_start(cluster->mgmt_host, cluster->mgmt_port,
                                           cluster->timeout_ms, &cluster->fetch)) != 0) {
        return rc;
    }
    rc = sfs_tp_bootstrap_fetch_poll(cluster->fetch, &cluster->mgmt_address,
                                     &cluster->mgmt_address_length);
    if (rc == -EINPROGRESS) {
        return sfs_error_set(rc,
                             "asking management's bootstrap port %s:%u for its address (in the "
                             "background, for at most %u ms)",
                             cluster->mgmt_host, cluster->mgmt_port, cluster->timeout_ms);
    }
    cluster->fetch = NULL; /* ended by the poll */
    return rc;
}

static int sfs_cluster_connect_mgmt(sfs_cluster_t *cluster)
{
    char name[SFS_HOST_MAX + 64];
    int  rc;

    if (cluster->mgmt) {
        if (sfs_tp_conn_status(cluster->mgmt) == 0) {
            return 0;
        }
        sfs_tp_conn_destroy(cluster->mgmt);
        cluster->mgmt = NULL;
    }
    if (cluster->mgmt_host[0] && !cluster->mgmt_given) {
        /* the address changes when management restarts: ask again */
        free(cluster->mgmt_address);
        cluster->mgmt_address = NULL;
        rc                    = sfs_cluster_fetch_mgmt_address(cluster);
        if (rc) {
            return rc;
        }
        snprintf(name, sizeof(name), "management server %s:%u", cluster->mgmt_host,
                 cluster->mgmt_port);
    } else {
        snprintf(name, sizeof(name), "management server");
    }
    cluster->mgmt_given = 0; /* from now on, a failed connection asks the bootstrap again */
    rc = sfs_tp_conn_create(cluster->worker, cluster->mgmt_address, cluster->mgmt_address_length,
                            name, cluster->timeout_ms, &cluster->mgmt);
    if (rc == 0) {
        cluster->connected = 1;
    }
    return rc;
}

int sfs_cluster_connect(const sfs_cluster_params_t *params, sfs_cluster_t **cluster_p)
{
    sfs_cluster_t *cluster;
    int            rc;

    if (!params->worker) {
        return sfs_error_set(-EINVAL, "cluster: no transport worker given");
    }
    if (!SFS_ALLOC_PTR(cluster)) {
        return -ENOMEM;
    }
    cluster->worker         = params->worker;
    cluster->background     = (params->field_mask & SFS_CLUSTER_PARAM_BACKGROUND_RECONNECT) != 0;
    cluster->ignore_offline = (params->field_mask & SFS_CLUSTER_PARAM_TEST_IGNORE_OFFLINE) != 0;
    cluster->timeout_ms =
        SFS_PARAM_VALUE(params, connect_timeout_ms, SFS_CLUSTER_PARAM_TIMEOUT, 10000);
    if (params->field_mask & SFS_CLUSTER_PARAM_MGMT_HOST) {
        snprintf(cluster->mgmt_host, sizeof(cluster->mgmt_host), "%s", params->mgmt_host);
        cluster->mgmt_port = params->mgmt_port;
    }
    if (params->field_mask & SFS_CLUSTER_PARAM_MGMT_ADDRESS) {
        cluster->mgmt_address = malloc(params->mgmt_address_length);
        if (!cluster->mgmt_address) {
            free(cluster);
            return -ENOMEM;
        }
        memcpy(cluster->mgmt_address, params->mgmt_address, params->mgmt_address_length);
        cluster->mgmt_address_length = params->mgmt_address_length;
        cluster->mgmt_given          = 1;
    } else if (!(params->field_mask & SFS_CLUSTER_PARAM_MGMT_HOST)) {
        free(cluster);
        return sfs_error_set(-EINVAL, "cluster: no management address given");
    }
    rc = sfs_cluster_connect_mgmt(cluster);
    if (rc == 0 && !(params->field_mask & SFS_CLUSTER_PARAM_NO_MAP)) {
        rc = sfs_cluster_refresh_map(cluster);
    }
    if (rc) {
        sfs_cluster_destroy(cluster);
        return rc;
    }
    *cluster_p = cluster;
    return 0;
}

void sfs_cluster_destroy(sfs_cluster_t *cluster)
{
    if (!cluster) {
        return;
    }
    for (uint32_t i = 0; i < cluster->node_count; i++) {
        sfs_tp_conn_destroy(cluster->nodes[i].conn);
    }
    free(cluster->nodes);
    sfs_tp_rpc_release(cluster->map_rpc);
    sfs_tp_bootstrap_fetch_cancel(cluster->fetch);
    sfs_tp_conn_destroy(cluster->mgmt);
    sfs_map_destroy(cluster->map);
    free(cluster->mgmt_address);
    free(cluster);
}

const sfs_map_t *sfs_cluster_map(const sfs_cluster_t *cluster)
{
    return cluster->map;
}

sfs_tp_worker_t *sfs_cluster_worker(const sfs_cluster_t *cluster)
{
    return cluster->worker;
}

int sfs_cluster_mgmt_conn(sfs_cluster_t *cluster, sfs_tp_conn_t **conn_p)
{
    int rc = sfs_cluster_connect_mgmt(cluster);

    if (rc == 0) {
        *conn_p = cluster->mgmt;
    }
    return rc;
}

int sfs_cluster_call_mgmt(sfs_cluster_t *cluster, const sfs_tp_rpc_params_t *params,
                          sfs_tp_rpc_t **rpc_p)
{
    sfs_tp_conn_t *conn;
    int            rc;

    *rpc_p = NULL;
    rc     = sfs_cluster_mgmt_conn(cluster, &conn);
    return rc ? rc : sfs_tp_call(conn, params, rpc_p);
}

/* Install the map a GET_MAP reply carries. */
static int sfs_cluster_install_map(sfs_cluster_t *cluster, const sfs_tp_rpc_t *rpc,
                                   uint64_t asked_ms)
{
    sfs_map_t *map;
    int        rc;

    rc = sfs_map_unpack(sfs_tp_rpc_reply_payload(rpc), sfs_tp_rpc_reply_payload_length(rpc), &map);
    if (rc) {
        return sfs_error_set(rc, "management sent a malformed cluster map");
    }
    /* connections to nodes whose address changed are remade on next use */
    for (uint32_t i = 0; i < cluster->node_count; i++) {
        const sfs_map_node_t *old_node =
            cluster->map ? sfs_map_find_node(cluster->map, cluster->nodes[i].node_id) : NULL;
        const sfs_map_node_t *new_node = sfs_map_find_node(map, cluster->nodes[i].node_id);

        if (!new_node || !old_node || old_node->address_length != new_node->address_length ||
            memcmp(old_node->address, new_node->address, new_node->address_length) != 0) {
            sfs_tp_conn_destroy(cluster->nodes[i].conn);
            cluster->nodes[i].conn = NULL;
        }
    }
    sfs_map_destroy(cluster->map);
    cluster->map          = map;
    cluster->map_asked_ms = asked_ms;
    return 0;
}

uint64_t sfs_cluster_map_asked_ms(const sfs_cluster_t *cluster)
{
    return cluster->map ? cluster->map_asked_ms : 0;
}

int sfs_cluster_refresh_map(sfs_cluster_t *cluster)
{
    sfs_tp_rpc_params_t params = {.opcode = SFS_OP_GET_MAP, .alloc_reply = 1};
    sfs_tp_rpc_t       *rpc;
    uint64_t            asked_ms = sfs_time_ms();
    int                 rc;

    rc = sfs_cluster_call_mgmt(cluster, &params, &rpc);
    if (rc == 0) {
        rc = sfs_cluster_install_map(cluster, rpc, asked_ms);
    }
    sfs_tp_rpc_release(rpc);
    return rc;
}

int sfs_cluster_refresh_map_start(sfs_cluster_t *cluster, uint32_t timeout_ms)
{
    sfs_tp_rpc_params_t params = {
        .opcode = SFS_OP_GET_MAP, .alloc_reply = 1, .timeout_ms = timeout_ms};
    int rc;

    if (cluster->map_rpc) {
        return -EALREADY;
    }
    if (!cluster->mgmt || (rc = sfs_tp_conn_status(cluster->mgmt)) != 0) {
        return sfs_error_set(-ENOTCONN,
                             "no connection to management for the cluster map (the heartbeat "
                             "remakes it)");
    }
    cluster->map_rpc_sent_ms = sfs_time_ms();
    return sfs_tp_rpc_start(cluster->mgmt, &params, &cluster->map_rpc);
}

int sfs_cluster_refresh_map_poll(sfs_cluster_t *cluster)
{
    sfs_tp_rpc_t *rpc = cluster->map_rpc;
    int           rc;

    if (!rpc || !sfs_tp_rpc_is_done(rpc)) {
        return 0;
    }
    cluster->map_rpc = NULL;
    rc               = sfs_tp_rpc_status(rpc);
    if (rc) {
        const char *detail = sfs_tp_rpc_error_detail(rpc);

        /* the connection may be gone already: a failed reconnect
         * (sfs_cluster_connect_mgmt) leaves none */
        sfs_error_set(rc, "%s: GET_MAP: %s",
                      cluster->mgmt ? sfs_tp_conn_name(cluster->mgmt) : "management server",
                      detail && detail[0] ? detail : sfs_strerror(rc));
    } else {
        rc = sfs_cluster_install_map(cluster, rpc, cluster->map_rpc_sent_ms);
    }
    sfs_tp_rpc_release(rpc);
    return rc ? rc : 1;
}

static sfs_cluster_node_t *sfs_cluster_node_slot(sfs_cluster_t *cluster, uint32_t node_id)
{
    sfs_cluster_node_t *grown;

    for (uint32_t i = 0; i < cluster->node_count; i++) {
        if (cluster->nodes[i].node_id == node_id) {
            return &cluster->nodes[i];
        }
    }
    grown = realloc(cluster->nodes, (cluster->node_count + 1) * sizeof(*grown));
    if (!grown) {
        return NULL;
    }
    cluster->nodes                      = grown;
    cluster->nodes[cluster->node_count] = (sfs_cluster_node_t){.node_id = node_id};
    return &cluster->nodes[cluster->node_count++];
}

/* A rank that management has declared offline (no heartbeat for the
 * offline timeout) is not connected to: a connect to a dead or cut-off
 * host waits the whole connect timeout, twice, so a stat or `ls -l` of
 * many files would wait that long per file, and a server's progress thread
 * would stall. The map this process holds may be old (a client fetches it
 * at connect and after errors), so one GET_MAP checks that the rank is
 * still offline before the call fails; a rank that came back is connected
 * to as before. -EHOSTDOWN naming the rank, or 0 to go on and connect. */
static int sfs_cluster_node_given_up(sfs_cluster_t *cluster, uint32_t node_id)
{
    const sfs_map_node_t *node = cluster->map ? sfs_map_find_node(cluster->map, node_id) : NULL;
    char                  name[SFS_HOST_MAX + 64];

    if (!node || node->state != SFS_STATE_OFFLINE || cluster->ignore_offline) {
        return 0;
    }
    if (sfs_cluster_refresh_map(cluster) != 0) {
        return 0; /* management cannot say: try the rank itself */
    }
    node = sfs_map_find_node(cluster->map, node_id);
    if (!node || node->state != SFS_STATE_OFFLINE) {
        return 0;
    }
    sfs_cluster_node_name(cluster, node_id, name, sizeof(name));
    return sfs_error_set(-EHOSTDOWN,
                         "%s is offline: management has not heard from it for %.1f s "
                         "(not connecting to it until management hears from it again)",
                         name, (double)node->last_contact_ms / 1000.0);
}

/* The connection to `node_id` that works now (management's own, when the
 * rank is management's: one connection to a rank is enough): 1 and
 * *conn_p, or 0. */
static int sfs_cluster_node_live(sfs_cluster_t *cluster, sfs_cluster_node_t *slot, uint32_t node_id,
                                 sfs_tp_conn_t **conn_p)
{
    if (cluster->map && node_id == cluster->map->mgmt_node && cluster->mgmt &&
        sfs_tp_conn_status(cluster->mgmt) == 0) {
        *conn_p = cluster->mgmt;
        return 1;
    }
    if (slot->conn && sfs_tp_conn_status(slot->conn) == 0) {
        *conn_p = slot->conn;
        return 1;
    }
    return 0;
}

/* Remember what the server on `slot` announced on `conn`. */
static void sfs_cluster_node_saw(sfs_cluster_node_t *slot, const sfs_tp_conn_t *conn)
{
    slot->features       = sfs_tp_conn_server_features(conn);
    slot->features_known = 1;
}

/* One try at connecting `slot` to the address the map holds for `node_id`,
 * within `timeout_ms`: 0 (slot->conn set) or the error (slot->conn NULL). */
static int sfs_cluster_node_connect(sfs_cluster_t *cluster, sfs_cluster_node_t *slot,
                                    uint32_t node_id, uint32_t timeout_ms)
{
    const sfs_map_node_t *node = cluster->map ? sfs_map_find_node(cluster->map, node_id) : NULL;
    char                  name[SFS_HOST_MAX + 64];
    int                   rc;

    if (!node || !node->address_length) {
        return sfs_error_set(-EHOSTDOWN, "server rank %u is not in the cluster map", node_id);
    }
    sfs_cluster_node_name(cluster, node_id, name, sizeof(name));
    rc = sfs_tp_conn_create(cluster->worker, node->address, node->address_length, name, timeout_ms,
                            &slot->conn);
    if (rc) {
        slot->conn = NULL;
    } else {
        sfs_cluster_node_saw(slot, slot->conn);
    }
    return rc;
}

int sfs_cluster_node_conn(sfs_cluster_t *cluster, uint32_t node_id, sfs_tp_conn_t **conn_p)
{
    sfs_cluster_node_t *slot = sfs_cluster_node_slot(cluster, node_id);
    int                 rc, attempt;

    if (!slot) {
        return -ENOMEM;
    }
    if (sfs_cluster_node_live(cluster, slot, node_id, conn_p)) {
        return 0;
    }
    rc = sfs_cluster_node_given_up(cluster, node_id);
    if (rc) {
        return rc;
    }
    for (attempt = 0; attempt < 2; attempt++) {
        if (slot->conn) {
            sfs_tp_conn_destroy(slot->conn);
            slot->conn = NULL;
            /* it failed: it may have restarted with a new address */
            rc = sfs_cluster_refresh_map(cluster);
            if (rc) {
                return rc;
            }
        }
        rc = sfs_cluster_node_connect(cluster, slot, node_id, cluster->timeout_ms);
        if (rc == 0) {
            *conn_p = slot->conn;
            return 0;
        }
        if (rc == -EACCES || rc == -EHOSTDOWN) {
            /* a different secret will not change on retry; EHOSTDOWN (never
             * the transport's) is a rank missing from the map */
            return rc;
        }
        if (attempt == 0) {
            /* refresh the map and try once more */
            int refresh = sfs_cluster_refresh_map(cluster);

            if (refresh) {
                return rc;
            }
        }
    }
    return rc;
}

int sfs_cluster_node_conn_quick(sfs_cluster_t *cluster, uint32_t node_id,
                                uint32_t connect_timeout_ms, sfs_tp_conn_t **conn_p)
{
    sfs_cluster_node_t *slot = sfs_cluster_node_slot(cluster, node_id);
    int                 rc;

    if (!slot) {
        return -ENOMEM;
    }
    if (sfs_cluster_node_live(cluster, slot, node_id, conn_p)) {
        return 0;
    }
    if (slot->conn) {
        sfs_tp_conn_destroy(slot->conn);
        slot->conn = NULL;
    }
    rc = sfs_cluster_node_connect(cluster, slot, node_id, connect_timeout_ms);
    if (rc == 0) {
        *conn_p = slot->conn;
    }
    return rc;
}

int sfs_cluster_meta_conn(sfs_cluster_t *cluster, sfs_tp_conn_t **conn_p)
{
    if (!cluster->map) {
        int rc = sfs_cluster_refresh_map(cluster);

        if (rc) {
            return rc;
        }
    }
    return sfs_cluster_node_conn(cluster, cluster->map->meta_node, conn_p);
}

uint64_t sfs_cluster_meta_features(sfs_cluster_t *cluster)
{
    sfs_cluster_node_t *slot;
    sfs_tp_conn_t      *conn;

    if (cluster->map) {
        slot = sfs_cluster_node_slot(cluster, cluster->map->meta_node);
        if (!slot) {
            return 0;
        }
        if (sfs_cluster_node_live(cluster, slot, cluster->map->meta_node, &conn)) {
            sfs_cluster_node_saw(slot, conn);
            return slot->features;
        }
        if (slot->features_known) {
            return slot->features;
        }
    }
    if (sfs_cluster_meta_conn(cluster, &conn) != 0) {
        sfs_error_clear(); /* the caller's call fails, saying why */
        return 0;
    }
    return sfs_tp_conn_server_features(conn);
}

int sfs_cluster_target_conn(sfs_cluster_t *cluster, uint32_t target_id, sfs_tp_conn_t **conn_p)
{
    const sfs_map_target_t *target =
        cluster->map ? sfs_map_find_target(cluster->map, target_id) : NULL;
    int rc;

    if (!target) {
        rc = sfs_cluster_refresh_map(cluster);
        if (rc) {
            return rc;
        }
        target = sfs_map_find_target(cluster->map, target_id);
        if (!target) {
            return sfs_error_set(-ENODEV, "storage target %u is not in the cluster map", target_id);
        }
    }
    rc = sfs_cluster_node_conn(cluster, target->node_id, conn_p);
    if (rc) {
        const char *detail = sfs_error_detail();
        char        copy[SFS_ERROR_DETAIL_MAX];

        snprintf(copy, sizeof(copy), "%s", detail);
        sfs_error_set(rc, "storage target %u unreachable: %s", target_id, copy);
    }
    return rc;
}

int sfs_cluster_call_meta(sfs_cluster_t *cluster, const sfs_tp_rpc_params_t *params,
                          sfs_tp_rpc_t **rpc_p)
{
    sfs_tp_conn_t *conn;
    int            rc;

    *rpc_p = NULL;
    rc     = sfs_cluster_meta_conn(cluster, &conn);
    return rc ? rc : sfs_tp_call(conn, params, rpc_p);
}

int sfs_cluster_call_node(sfs_cluster_t *cluster, uint32_t node_id,
                          const sfs_tp_rpc_params_t *params, sfs_tp_rpc_t **rpc_p)
{
    sfs_tp_conn_t *conn;
    int            rc;

    *rpc_p = NULL;
    rc     = sfs_cluster_node_conn(cluster, node_id, &conn);
    return rc ? rc : sfs_tp_call(conn, params, rpc_p);
}
