/*
 * Management: the registry of server ranks (nodes) and storage targets,
 * heartbeats, states (online / probably-offline / offline by time of last
 * contact), the cluster map clients fetch, and the clean stop of the whole
 * service.
 */
#define SFS_LOG_FAC "mgmt"
#include "sfs_service.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_map.h"
#include "sfs_time.h"

#include <stdio.h>
#include <string.h>

#define SFS_MGMT_STOP_TIMEOUT_MS 30000

typedef struct sfs_mgmt_node {
    uint32_t node_id;
    uint32_t roles;
    uint32_t pid;
    uint32_t state;
    char     host[SFS_HOST_MAX];
    void    *address;
    size_t   address_length;
    uint64_t last_contact_ms;
} sfs_mgmt_node_t;

typedef struct sfs_mgmt_target {
    uint32_t target_id;
    uint32_t node_id;
    uint64_t capacity;
    uint64_t free;
    uint64_t bandwidth;
    char     dir[PATH_MAX];
} sfs_mgmt_target_t;

typedef struct sfs_mgmt_stop {
    sfs_tp_conn_t *conn;
    sfs_tp_rpc_t  *rpc;
    uint32_t       node_id;
} sfs_mgmt_stop_t;

struct sfs_mgmt {
    sfs_service_t     *service;
    sfs_mgmt_node_t   *nodes;
    uint32_t           node_count;
    sfs_mgmt_target_t *targets;
    uint32_t           target_count;
    uint64_t           version;
    uint64_t           next_check_ms;
    int                shutdown_requested;
    int                shutdown_started;
    uint64_t           shutdown_deadline_ms;
    sfs_mgmt_stop_t   *stops;
    uint32_t           stop_count;
};

int sfs_mgmt_create(sfs_service_t *service, sfs_mgmt_t **mgmt_p)
{
    sfs_mgmt_t *mgmt;

    if (!SFS_ALLOC_PTR(mgmt)) {
        return -ENOMEM;
    }
    mgmt->service = service;
    mgmt->version = 1;
    sfs_info("management server listening on port %u", service->config->mgmt_port);
    *mgmt_p = mgmt;
    return 0;
}

void sfs_mgmt_destroy(sfs_mgmt_t *mgmt)
{
    if (!mgmt) {
        return;
    }
    for (uint32_t i = 0; i < mgmt->stop_count; i++) {
        sfs_tp_rpc_release(mgmt->stops[i].rpc);
        sfs_tp_conn_destroy(mgmt->stops[i].conn);
    }
    for (uint32_t i = 0; i < mgmt->node_count; i++) {
        free(mgmt->nodes[i].address);
    }
    free(mgmt->stops);
    free(mgmt->nodes);
    free(mgmt->targets);
    free(mgmt);
}

static sfs_mgmt_node_t *sfs_mgmt_find_node(sfs_mgmt_t *mgmt, uint32_t node_id)
{
    for (uint32_t i = 0; i < mgmt->node_count; i++) {
        if (mgmt->nodes[i].node_id == node_id) {
            return &mgmt->nodes[i];
        }
    }
    return NULL;
}

static sfs_mgmt_target_t *sfs_mgmt_find_target(sfs_mgmt_t *mgmt, uint32_t target_id)
{
    for (uint32_t i = 0; i < mgmt->target_count; i++) {
        if (mgmt->targets[i].target_id == target_id) {
            return &mgmt->targets[i];
        }
    }
    return NULL;
}

static uint32_t sfs_mgmt_state_of(const sfs_mgmt_t *mgmt, const sfs_mgmt_node_t *node,
                                  uint64_t now_ms)
{
    uint64_t silent  = now_ms - node->last_contact_ms;
    uint32_t offline = mgmt->service->config->offline_timeout_ms;

    if (silent <= offline / 2) {
        return SFS_STATE_ONLINE;
    }
    return silent <= offline ? SFS_STATE_PROBABLY_OFFLINE : SFS_STATE_OFFLINE;
}

static int sfs_mgmt_registration_unpack(const void *args, size_t length, sfs_register_req_t *reg)
{
    sfs_rbuf_t rb;

    sfs_rbuf_init(&rb, args, length);
    sfs_proto_register_req_unpack(&rb, reg);
    return rb.error || sfs_rbuf_remaining(&rb) ? -EBADMSG : 0;
}

static void sfs_mgmt_handle_register(sfs_mgmt_t *mgmt, sfs_tp_request_t *req)
{
    sfs_register_req_t *reg;
    sfs_mgmt_node_t    *node;
    const void         *args;
    size_t              length;
    char                roles[64];
    void               *address;

    if (!SFS_ALLOC_PTR(reg)) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    args = sfs_tp_request_args(req, &length);
    if (sfs_mgmt_registration_unpack(args, length, reg) != 0 ||
        sfs_tp_session_peer_kind(sfs_tp_request_session(req)) != SFS_PEER_SERVER) {
        sfs_tp_request_reply_error(req, -EBADMSG, "malformed registration");
        goto out;
    }
    /* a target id may belong to one rank only */
    for (uint32_t i = 0; i < reg->target_count; i++) {
        sfs_mgmt_target_t *t = sfs_mgmt_find_target(mgmt, reg->targets[i].target_id);

        if (t && t->node_id != reg->rank) {
            sfs_error("rank %u on %s claims target %u, which rank %u serves: refused", reg->rank,
                      reg->host, t->target_id, t->node_id);
            sfs_tp_request_reply_error(req, -EEXIST, "target %u is already served by rank %u",
                                       t->target_id, t->node_id);
            goto out;
        }
    }
    address = malloc(reg->address_length);
    if (!address) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        goto out;
    }
    memcpy(address, reg->address, reg->address_length);
    node = sfs_mgmt_find_node(mgmt, reg->rank);
    if (node) {
        sfs_info("rank %u on %s (pid %u) registered again (was pid %u)", reg->rank, reg->host,
                 reg->pid, node->pid);
        free(node->address);
    } else {
        sfs_mgmt_node_t *grown = realloc(mgmt->nodes, (mgmt->node_count + 1) * sizeof(*grown));

        if (!grown) {
            free(address);
            sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
            goto out;
        }
        mgmt->nodes = grown;
        node        = &mgmt->nodes[mgmt->node_count++];
        memset(node, 0, sizeof(*node));
        sfs_info("rank %u on %s (pid %u) registered: %s, %u target%s", reg->rank, reg->host,
                 reg->pid, sfs_roles_string(reg->roles, roles, sizeof(roles)), reg->target_count,
                 reg->target_count == 1 ? "" : "s");
    }
    node->node_id         = reg->rank;
    node->roles           = reg->roles;
    node->pid             = reg->pid;
    node->address         = address;
    node->address_length  = reg->address_length;
    node->last_contact_ms = sfs_time_ms();
    node->state           = SFS_STATE_ONLINE;
    snprintf(node->host, sizeof(node->host), "%s", reg->host);
    for (uint32_t i = 0; i < reg->target_count; i++) {
        sfs_mgmt_target_t *t = sfs_mgmt_find_target(mgmt, reg->targets[i].target_id);

        if (!t) {
            sfs_mgmt_target_t *grown =
                realloc(mgmt->targets, (mgmt->target_count + 1) * sizeof(*grown));

            if (!grown) {
                sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
                goto out;
            }
            mgmt->targets = grown;
            t             = &mgmt->targets[mgmt->target_count++];
            memset(t, 0, sizeof(*t));
        }
        t->target_id = reg->targets[i].target_id;
        t->node_id   = reg->rank;
        t->capacity  = reg->targets[i].capacity;
        t->free      = reg->targets[i].free;
        t->bandwidth = reg->targets[i].bandwidth;
        snprintf(t->dir, sizeof(t->dir), "%s", reg->targets[i].dir);
    }
    mgmt->version++;
    sfs_tp_request_reply(req, 0, NULL, 0, NULL, 0, NULL, NULL);
out:
    free(reg);
}

static void sfs_mgmt_handle_heartbeat(sfs_mgmt_t *mgmt, sfs_tp_request_t *req)
{
    const void      *args;
    size_t           length;
    sfs_rbuf_t       rb;
    uint32_t         rank, count, flags = 0;
    sfs_mgmt_node_t *node;
    uint8_t          out[8];
    sfs_wbuf_t       wb;

    args = sfs_tp_request_args(req, &length);
    sfs_rbuf_init(&rb, args, length);
    rank  = sfs_rbuf_u32(&rb);
    count = sfs_rbuf_u32(&rb);
    node  = sfs_mgmt_find_node(mgmt, rank);
    if (rb.error) {
        sfs_tp_request_reply_error(req, -EBADMSG, "malformed heartbeat");
        return;
    }
    if (!node) {
        flags |= 1; /* unknown: register again */
    } else {
        node->last_contact_ms = sfs_time_ms();
        for (uint32_t i = 0; i < count && !rb.error; i++) {
            uint32_t           id       = sfs_rbuf_u32(&rb);
            uint64_t           capacity = sfs_rbuf_u64(&rb);
            uint64_t           free     = sfs_rbuf_u64(&rb);
            uint64_t           bw       = sfs_rbuf_u64(&rb);
            sfs_mgmt_target_t *t        = sfs_mgmt_find_target(mgmt, id);

            if (!rb.error && t && t->node_id == rank) {
                t->capacity  = capacity;
                t->free      = free;
                t->bandwidth = bw;
            }
        }
    }
    sfs_wbuf_init(&wb, out, sizeof(out));
    sfs_wbuf_u32(&wb, flags);
    sfs_tp_request_reply(req, 0, out, wb.length, NULL, 0, NULL, NULL);
}

static int sfs_mgmt_build_map(sfs_mgmt_t *mgmt, sfs_map_t *map)
{
    const sfs_config_t *config = mgmt->service->config;
    uint64_t            now    = sfs_time_ms();

    memset(map, 0, sizeof(*map));
    map->version = mgmt->version;
    snprintf(map->cluster, sizeof(map->cluster), "%s", config->cluster_name);
    map->mgmt_node            = mgmt->service->plan->mgmt_rank;
    map->meta_node            = mgmt->service->plan->meta_rank;
    map->default_chunk_size   = config->default_chunk_size;
    map->default_stripe_count = config->default_stripe_count;
    map->rpc_timeout_ms       = config->rpc_timeout_ms;
    map->node_count           = mgmt->node_count;
    map->target_count         = mgmt->target_count;
    if (!SFS_ALLOC_ARRAY(map->nodes, mgmt->node_count) ||
        !SFS_ALLOC_ARRAY(map->targets, mgmt->target_count)) {
        free(map->nodes);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < mgmt->node_count; i++) {
        const sfs_mgmt_node_t *src = &mgmt->nodes[i];
        sfs_map_node_t        *dst = &map->nodes[i];

        dst->node_id         = src->node_id;
        dst->roles           = src->roles;
        dst->pid             = src->pid;
        dst->state           = sfs_mgmt_state_of(mgmt, src, now);
        dst->last_contact_ms = now - src->last_contact_ms;
        dst->address         = src->address; /* borrowed: packed, not freed */
        dst->address_length  = src->address_length;
        snprintf(dst->host, sizeof(dst->host), "%s", src->host);
    }
    for (uint32_t i = 0; i < mgmt->target_count; i++) {
        const sfs_mgmt_target_t *src  = &mgmt->targets[i];
        sfs_map_target_t        *dst  = &map->targets[i];
        sfs_mgmt_node_t         *node = sfs_mgmt_find_node(mgmt, src->node_id);

        dst->target_id       = src->target_id;
        dst->node_id         = src->node_id;
        dst->capacity        = src->capacity;
        dst->free            = src->free;
        dst->bandwidth       = src->bandwidth;
        dst->state           = node ? sfs_mgmt_state_of(mgmt, node, now) : SFS_STATE_OFFLINE;
        dst->last_contact_ms = node ? now - node->last_contact_ms : UINT64_MAX;
        snprintf(dst->dir, sizeof(dst->dir), "%s", src->dir);
    }
    return 0;
}

static void sfs_mgmt_free_cb(void *arg)
{
    free(arg);
}

static void sfs_mgmt_handle_get_map(sfs_mgmt_t *mgmt, sfs_tp_request_t *req)
{
    sfs_map_t    map;
    uint8_t     *buf;
    size_t       size;
    sfs_wbuf_t   wb;
    struct iovec iov;

    if (sfs_mgmt_build_map(mgmt, &map) != 0) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    size = sfs_map_packed_size(&map);
    buf  = malloc(size);
    if (!buf) {
        free(map.nodes);
        free(map.targets);
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    sfs_wbuf_init(&wb, buf, size);
    sfs_map_pack(&wb, &map);
    free(map.nodes);
    free(map.targets);
    iov.iov_base = buf;
    iov.iov_len  = wb.length;
    sfs_tp_request_reply(req, 0, NULL, 0, &iov, 1, sfs_mgmt_free_cb, buf);
}

void sfs_mgmt_handle(sfs_mgmt_t *mgmt, sfs_tp_request_t *req)
{
    sfs_tp_session_t *who  = sfs_tp_request_session(req);
    const sfs_cred_t *cred = sfs_tp_session_cred(who);
    uint32_t          op   = sfs_tp_request_opcode(req);

    /* only server ranks (which proved the servers' secret) join and report;
     * only administrators stop the service */
    if (((op == SFS_OP_REGISTER || op == SFS_OP_HEARTBEAT) && !(cred->flags & SFS_CRED_SERVER)) ||
        (op == SFS_OP_SHUTDOWN && !sfs_cred_admin(cred))) {
        sfs_warn("refused %s from uid %u on %s pid %u (%s): %s", sfs_op_name(op), cred->uid,
                 sfs_tp_session_peer_host(who), sfs_tp_session_peer_pid(who),
                 sfs_tp_session_peer_program(who),
                 op == SFS_OP_SHUTDOWN ? "not an administrator" : "not a server");
        sfs_tp_request_reply_error(req, -EPERM, "%s",
                                   op == SFS_OP_SHUTDOWN
                                       ? "only an administrator (root on a trusted host, or the "
                                         "admin group) may stop the service"
                                       : "only server ranks may do that");
        return;
    }
    switch (op) {
    case SFS_OP_REGISTER:
        sfs_mgmt_handle_register(mgmt, req);
        break;
    case SFS_OP_HEARTBEAT:
        sfs_mgmt_handle_heartbeat(mgmt, req);
        break;
    case SFS_OP_GET_MAP:
        sfs_mgmt_handle_get_map(mgmt, req);
        break;
    case SFS_OP_SHUTDOWN: {
        sfs_tp_session_t *session = sfs_tp_request_session(req);

        sfs_info("shutdown requested by %s pid %u (%s, uid %u)", sfs_tp_session_peer_host(session),
                 sfs_tp_session_peer_pid(session), sfs_tp_session_peer_program(session), cred->uid);
        mgmt->shutdown_requested = 1;
        sfs_tp_request_reply(req, 0, NULL, 0, NULL, 0, NULL, NULL);
        break;
    }
    default:
        sfs_tp_request_reply_error(req, -EOPNOTSUPP, "management does not serve %s",
                                   sfs_op_name(sfs_tp_request_opcode(req)));
        break;
    }
}

/* Runs from the main loop (never inside a UCX callback), so it may block. */
static void sfs_mgmt_run_shutdown(sfs_mgmt_t *mgmt)
{
    sfs_service_t *service = mgmt->service;
    uint64_t       now     = sfs_time_ms();
    int            pending = 0;

    if (!mgmt->shutdown_started) {
        mgmt->shutdown_started     = 1;
        mgmt->shutdown_deadline_ms = now + SFS_MGMT_STOP_TIMEOUT_MS;
        mgmt->stops = calloc(mgmt->node_count ? mgmt->node_count : 1, sizeof(*mgmt->stops));
        if (!mgmt->stops) {
            sfs_service_request_stop(service);
            return;
        }
        for (uint32_t i = 0; i < mgmt->node_count; i++) {
            sfs_mgmt_node_t    *node = &mgmt->nodes[i];
            sfs_mgmt_stop_t    *stop = &mgmt->stops[mgmt->stop_count];
            sfs_tp_rpc_params_t params;
            char                name[SFS_HOST_MAX + 32];

            if (node->node_id == service->rank) {
                continue;
            }
            snprintf(name, sizeof(name), "rank %u on %s", node->node_id, node->host);
            stop->node_id = node->node_id;
            if (sfs_tp_conn_create(service->worker, node->address, node->address_length, name,
                                   service->config->connect_timeout_ms, &stop->conn) != 0) {
                sfs_warn("cannot reach %s to stop it: %s", name, sfs_error_detail());
                continue;
            }
            memset(&params, 0, sizeof(params));
            params.opcode = SFS_OP_STOP;
            if (sfs_tp_rpc_start(stop->conn, &params, &stop->rpc) != 0) {
                stop->rpc = NULL;
            }
            mgmt->stop_count++;
        }
        sfs_info("stopping the service: %u other rank%s told to flush and stop", mgmt->stop_count,
                 mgmt->stop_count == 1 ? "" : "s");
    }
    for (uint32_t i = 0; i < mgmt->stop_count; i++) {
        if (mgmt->stops[i].rpc && !sfs_tp_rpc_is_done(mgmt->stops[i].rpc)) {
            pending++;
        }
    }
    if (pending && now < mgmt->shutdown_deadline_ms) {
        return;
    }
    for (uint32_t i = 0; i < mgmt->stop_count; i++) {
        sfs_tp_rpc_t *rpc = mgmt->stops[i].rpc;

        if (rpc && (!sfs_tp_rpc_is_done(rpc) || sfs_tp_rpc_status(rpc) != 0)) {
            sfs_warn("rank %u did not confirm its stop: %s", mgmt->stops[i].node_id,
                     sfs_tp_rpc_is_done(rpc) ? sfs_tp_rpc_error_detail(rpc) : "no answer");
        }
    }
    sfs_service_request_stop(service);
}

void sfs_mgmt_timer(sfs_mgmt_t *mgmt)
{
    uint64_t now = sfs_time_ms();

    if (mgmt->shutdown_requested) {
        sfs_mgmt_run_shutdown(mgmt);
    }
    if (now < mgmt->next_check_ms) {
        return;
    }
    mgmt->next_check_ms = now + 500;
    for (uint32_t i = 0; i < mgmt->node_count; i++) {
        sfs_mgmt_node_t *node  = &mgmt->nodes[i];
        uint32_t         state = sfs_mgmt_state_of(mgmt, node, now);

        if (state == node->state) {
            continue;
        }
        for (uint32_t t = 0; t < mgmt->target_count; t++) {
            if (mgmt->targets[t].node_id == node->node_id) {
                sfs_warn("target %u (rank %u on %s): %s -> %s (last contact %.1f s ago)",
                         mgmt->targets[t].target_id, node->node_id, node->host,
                         sfs_state_name(node->state), sfs_state_name(state),
                         (double)(now - node->last_contact_ms) / 1000.0);
            }
        }
        sfs_warn("rank %u on %s: %s -> %s", node->node_id, node->host, sfs_state_name(node->state),
                 sfs_state_name(state));
        node->state = state;
        mgmt->version++;
    }
}
