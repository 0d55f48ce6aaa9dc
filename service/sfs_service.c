/*
 * A server rank: transport, dispatch of requests from the table of
 * operations to their handlers (sfs_handlers.h), registration and
 * heartbeats.
 */
#define SFS_LOG_FAC "server"
#include "sfs_service.h"

#include "sfs_alloc.h"
#include "sfs_cap.h"
#include "sfs_handlers.h"
#include "sfs_meta_reply_table.h"
#include "sfs_identity.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_meta_fence.h"
#include "sfs_meta_lock.h"
#include "sfs_meta_mirror.h"
#include "sfs_time.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SFS_SERVICE_MAX_TARGETS_PER_RANK SFS_REGISTER_MAX_TARGETS

static int sfs_service_identity(void *arg, const sfs_tp_proof_t *proof, sfs_cred_t *cred);

/* A client gone: no byte-range lock outlives it. */
static void sfs_service_session_end(sfs_tp_session_t *session, void *arg)
{
    sfs_service_t *service = arg;

    sfs_meta_locks_session_end(service->meta, session);
}

/* Every operation's handler, from the list of operations. */
static sfs_handler_fn *const sfs_service_handlers[SFS_OP_MAX] = {
#define SFS_SERVICE_HANDLER(_name, _num, _role, _req, _rep, _handler)                              \
    [_num] = sfs_handle_##_handler,
    SFS_PROTO_OPS(SFS_SERVICE_HANDLER)
#undef SFS_SERVICE_HANDLER
};

/* Whether this rank has the role that serves `role`; if not, says so. */
static int sfs_service_has_role(sfs_service_t *service, sfs_tp_request_t *req, uint32_t role)
{
    switch (role) {
    case SFS_ROLE_ANY:
        return 1;
    case SFS_ROLE_MGMT:
        if (service->mgmt) {
            return 1;
        }
        sfs_tp_request_reply_error(req, -EOPNOTSUPP, "rank %u on %s is not the management server",
                                   service->rank, service->host);
        return 0;
    case SFS_ROLE_META: {
        char why[512];

        if (service->meta && sfs_meta_deposed(service->meta, why, sizeof(why))) {
            /* ESTALE: the client asks management where the server is now */
            sfs_tp_request_reply_error(req, -ESTALE, "rank %u on %s: %s", service->rank,
                                       service->host, why);
            return 0;
        }
        if (service->meta) {
            return !sfs_meta_fence_refused(service, req);
        }
        if (service->deposed[0]) { /* it keeps the mirror now (sfs_meta_demote_run) */
            sfs_tp_request_reply_error(req, -ESTALE, "rank %u on %s: %s", service->rank,
                                       service->host, service->deposed);
            return 0;
        }
        sfs_tp_request_reply_error(req, -EOPNOTSUPP, "rank %u on %s is not the metadata server",
                                   service->rank, service->host);
        return 0;
    }
    case SFS_ROLE_META_MIRROR:
        if (service->meta_mirror) {
            return 1;
        }
        sfs_tp_request_reply_error(req, -EOPNOTSUPP, "rank %u on %s keeps no metadata mirror",
                                   service->rank, service->host);
        return 0;
    case SFS_ROLE_STORAGE:
        if (service->storage) {
            return 1;
        }
        sfs_tp_request_reply_error(req, -EOPNOTSUPP, "rank %u on %s serves no storage targets",
                                   service->rank, service->host);
        return 0;
    default:
        sfs_tp_request_reply_error(req, -EOPNOTSUPP, "rank %u: role %u unknown", service->rank,
                                   role);
        return 0;
    }
}

static void sfs_service_dispatch(sfs_tp_request_t *req, void *arg)
{
    sfs_service_t             *service = arg;
    uint32_t                   opcode  = sfs_tp_request_opcode(req);
    const sfs_proto_op_info_t *info    = sfs_proto_op_info(opcode);

    /* while the roles are torn down (sfs_service_destroy) nothing reaches them:
     * destroying the cluster still progresses the worker, and a heartbeat
     * then arrived at a freed management role (found by AddressSanitizer) */
    if (service->tearing_down ||
        (service->stop_requested && opcode != SFS_OP_PING && opcode != SFS_OP_STOP &&
         opcode != SFS_OP_HEARTBEAT && opcode != SFS_OP_SHUTDOWN)) {
        sfs_tp_request_reply_error(req, -ESHUTDOWN, "server rank %u is shutting down",
                                   service->rank);
        return;
    }
    if (!info) {
        sfs_tp_request_reply_error(req, -EOPNOTSUPP, "rank %u: operation %u not supported",
                                   service->rank, opcode);
        return;
    }
    if (sfs_service_has_role(service, req, info->role)) {
        sfs_service_handlers[opcode](service, req);
    }
}

int sfs_handler_decode(sfs_tp_request_t *req, void *out, size_t size, int payload_ok)
{
    uint32_t    opcode = sfs_tp_request_opcode(req);
    size_t      length, payload_length;
    const void *args = sfs_tp_request_args(req, &length);
    int         rc   = sfs_proto_decode(opcode, 0, args, length, out, size);

    sfs_tp_request_payload(req, &payload_length);
    if (rc == 0 && payload_length != 0 && !payload_ok) {
        rc = -EBADMSG;
    }
    if (rc) {
        sfs_tp_request_reply_error(req, rc == -ENAMETOOLONG ? rc : -EBADMSG,
                                   "malformed %s request%s", sfs_op_name(opcode),
                                   rc == -ENAMETOOLONG ? " (path too long)" : "");
    }
    return rc;
}

int sfs_service_create(const sfs_config_t *config, const sfs_role_plan_t *plan, uint32_t rank,
                       sfs_service_t **service_p)
{
    sfs_tp_worker_params_t params;
    sfs_service_t         *service;
    char                   identity[64];
    int                    rc;

    if (!SFS_ALLOC_PTR(service)) {
        return -ENOMEM;
    }
    service->config = config;
    service->plan   = plan;
    service->rank   = rank;
    service->roles  = plan->ranks[rank].roles;
    sfs_meta_fence_init(service);
    snprintf(service->host, sizeof(service->host), "%s",
             config->hosts[plan->ranks[rank].host_index].name);
    snprintf(identity, sizeof(identity), "rank %u", rank);
    sfs_log_set_identity(identity);

    rc = sfs_meta_reply_table_create(&service->kept_replies);
    if (rc == 0) {
        rc = sfs_auth_load_connauth(config->connauth_file, &service->key);
    }
    if (rc) {
        goto err_free;
    }
    sfs_cap_key(&service->key, &service->cap_key);
    if (config->munge) {
        rc = sfs_identity_create(config, service->host, &service->identity);
        if (rc) {
            goto err_free;
        }
    }
    memset(&params, 0, sizeof(params));
    params.field_mask =
        SFS_TP_WORKER_PARAM_NODE_ID | SFS_TP_WORKER_PARAM_PEER_KIND | SFS_TP_WORKER_PARAM_HOST |
        SFS_TP_WORKER_PARAM_KEY | SFS_TP_WORKER_PARAM_HANDLER | SFS_TP_WORKER_PARAM_MAX_PAYLOAD |
        SFS_TP_WORKER_PARAM_RPC_TIMEOUT | SFS_TP_WORKER_PARAM_NAME | SFS_TP_WORKER_PARAM_MAX_RATE;
    params.field_mask |= SFS_TP_WORKER_PARAM_SESSION_END;
    params.node_id          = rank;
    params.peer_kind        = SFS_PEER_SERVER;
    params.host             = service->host;
    params.name             = "stripefs-server";
    params.key              = &service->key;
    params.on_request       = sfs_service_dispatch;
    params.on_session_end   = sfs_service_session_end;
    params.handler_arg      = service;
    params.max_payload      = config->max_message_size;
    params.rpc_timeout_ms   = config->rpc_timeout_ms;
    params.max_request_rate = config->max_request_rate;
    if (config->munge) {
        params.field_mask |= SFS_TP_WORKER_PARAM_MUNGE | SFS_TP_WORKER_PARAM_IDENTITY;
        params.munge_socket = config->munge_socket;
        params.on_identity  = sfs_service_identity;
    }
    if (service->roles & SFS_ROLE_MGMT) {
        params.field_mask |= SFS_TP_WORKER_PARAM_BOOTSTRAP_PORT;
        params.bootstrap_port = config->mgmt_port;
    }
    rc = sfs_tp_worker_create(&params, &service->worker);
    if (rc) {
        goto err_free;
    }
    if (service->roles & SFS_ROLE_STORAGE) {
        rc = sfs_storage_create(service, &service->storage);
        if (rc) {
            goto err_destroy;
        }
    }
    if (service->roles & SFS_ROLE_META) {
        rc = sfs_meta_create(service, config->meta_dir, config->meta_mirror_host[0] != 0,
                             &service->meta);
        if (rc) {
            goto err_destroy;
        }
    }
    if (service->roles & SFS_ROLE_META_MIRROR) {
        rc = sfs_meta_mirror_create(service, &service->meta_mirror);
        if (rc) {
            goto err_destroy;
        }
    }
    if (service->roles & SFS_ROLE_MGMT) {
        rc = sfs_mgmt_create(service, &service->mgmt);
        if (rc) {
            goto err_destroy;
        }
    }
    *service_p = service;
    return 0;

err_destroy:
    sfs_service_destroy(service);
    return rc;
err_free:
    sfs_identity_destroy(service->identity);
    sfs_meta_reply_table_destroy(service->kept_replies);
    free(service);
    return rc;
}

/* MUNGE sessions: the identity policy decides who the proven uid is here. */
static int sfs_service_identity(void *arg, const sfs_tp_proof_t *proof, sfs_cred_t *cred)
{
    sfs_service_t *service = arg;

    return sfs_identity_resolve(service->identity, proof, cred);
}

/* The heartbeat: this rank's targets with their free space. */
static int sfs_service_heartbeat_args(sfs_service_t *service, sfs_wbuf_t *wb)
{
    sfs_target_report_t *reports = calloc(SFS_SERVICE_MAX_TARGETS_PER_RANK, sizeof(*reports));
    sfs_heartbeat_req_t *hb      = calloc(1, sizeof(*hb));

    if (!reports || !hb) {
        free(reports);
        free(hb);
        return -ENOMEM;
    }
    hb->rank = service->rank;
    if (service->storage) {
        hb->target_count =
            sfs_storage_report(service->storage, reports, SFS_SERVICE_MAX_TARGETS_PER_RANK);
    }
    for (uint32_t i = 0; i < hb->target_count; i++) {
        hb->targets[i].target_id = reports[i].target_id;
        hb->targets[i].capacity  = reports[i].capacity;
        hb->targets[i].free      = reports[i].free;
        hb->targets[i].bandwidth = reports[i].bandwidth;
    }
    sfs_proto_heartbeat_req_pack(wb, hb);
    free(reports);
    free(hb);
    return wb->error;
}

static int sfs_service_send_register(sfs_service_t *service)
{
    sfs_register_req_t  *reg  = calloc(1, sizeof(*reg));
    sfs_target_report_t *reps = calloc(SFS_REGISTER_MAX_TARGETS, sizeof(*reps));
    uint8_t             *args = malloc(SFS_PROTO_ARGS_MAX);
    sfs_wbuf_t           wb;
    sfs_tp_rpc_params_t  params;
    sfs_tp_rpc_t        *rpc;
    uint64_t             sent;
    int                  rc;

    if (!reg || !reps || !args) {
        rc = -ENOMEM;
        goto out;
    }
    reg->rank    = service->rank;
    reg->roles   = service->roles;
    reg->pid     = (uint32_t)getpid();
    reg->address = sfs_tp_worker_address(service->worker, &reg->address_length);
    snprintf(reg->host, sizeof(reg->host), "%s", service->host);
    if (service->storage) {
        reg->target_count = sfs_storage_report(service->storage, reps, SFS_REGISTER_MAX_TARGETS);
    }
    for (uint32_t i = 0; i < reg->target_count; i++) {
        reg->targets[i].target_id = reps[i].target_id;
        reg->targets[i].capacity  = reps[i].capacity;
        reg->targets[i].free      = reps[i].free;
        reg->targets[i].bandwidth = reps[i].bandwidth;
        snprintf(reg->targets[i].dir, sizeof(reg->targets[i].dir), "%s", reps[i].dir);
    }
    sfs_wbuf_init(&wb, args, SFS_PROTO_ARGS_MAX);
    sfs_proto_register_req_pack(&wb, reg);
    if (wb.error) {
        rc = sfs_error_set(wb.error, "rank %u: registration does not fit a message", service->rank);
        goto out;
    }
    memset(&params, 0, sizeof(params));
    params.opcode      = SFS_OP_REGISTER;
    params.args        = args;
    params.args_length = wb.length;
    sent               = sfs_time_ms();
    rc                 = sfs_cluster_call_mgmt(service->cluster, &params, &rpc);
    sfs_tp_rpc_release(rpc);
    if (rc == 0) {
        service->registered = 1;
        if (service->storage) {
            sfs_storage_mirror_lease_renew(service->storage, sent);
        }
        sfs_meta_fence_answered(service, sent, 0);
    }
out:
    free(reg);
    free(reps);
    free(args);
    return rc;
}

int sfs_service_register(sfs_service_t *service, const void *mgmt_address, size_t length)
{
    const sfs_config_host_t *mgmt_host =
        sfs_config_find_host(service->config, service->config->mgmt_host);
    sfs_cluster_params_t params;
    int                  rc;

    memset(&params, 0, sizeof(params));
    /* the address the job shared first; management's bootstrap port once
     * that fails, so that a restarted management is found again */
    params.field_mask = SFS_CLUSTER_PARAM_MGMT_ADDRESS | SFS_CLUSTER_PARAM_MGMT_HOST |
                        SFS_CLUSTER_PARAM_NO_MAP | SFS_CLUSTER_PARAM_TIMEOUT |
                        SFS_CLUSTER_PARAM_BACKGROUND_RECONNECT;
    params.worker              = service->worker;
    params.mgmt_address        = mgmt_address;
    params.mgmt_address_length = length;
    params.mgmt_host =
        mgmt_host && mgmt_host->address[0] ? mgmt_host->address : service->config->mgmt_host;
    params.mgmt_port          = service->config->mgmt_port;
    params.connect_timeout_ms = service->config->connect_timeout_ms;
    rc                        = sfs_cluster_connect(&params, &service->cluster);
    if (rc) {
        return rc;
    }
    rc = sfs_service_send_register(service);
    if (rc) {
        return rc;
    }
    service->next_heartbeat_ms = sfs_time_ms() + service->config->heartbeat_interval_ms;
    return 0;
}

static void sfs_service_heartbeat_done(sfs_tp_rpc_t *rpc, void *arg)
{
    sfs_service_t *service = arg;
    int            status  = sfs_tp_rpc_status(rpc);

    if (status == 0) {
        size_t                length;
        const uint8_t        *args = sfs_tp_rpc_reply_args(rpc, &length);
        sfs_heartbeat_reply_t reply;

        if (sfs_proto_decode(SFS_OP_HEARTBEAT, 1, args, length, &reply, sizeof(reply)) != 0) {
            return;
        }
        service->mgmt_away_said = 0;
        if (reply.flags & SFS_HEARTBEAT_REGISTER_AGAIN) {
            /* management does not know us (it restarted): register again */
            service->registered = 0;
        } else {
            /* management took it as a contact: the leases run from its sending */
            if (service->storage) {
                sfs_storage_mirror_lease_renew(service->storage, service->heartbeat_sent_ms);
            }
            sfs_meta_fence_answered(service, service->heartbeat_sent_ms, reply.flags);
        }
    } else if (status != -ECANCELED) {
        sfs_warn("heartbeat to management failed: %s", sfs_tp_rpc_error_detail(rpc));
    }
}

static void sfs_service_heartbeat(sfs_service_t *service)
{
    uint8_t             args[SFS_PROTO_ARGS_MAX];
    sfs_wbuf_t          wb;
    sfs_tp_rpc_params_t params;
    sfs_tp_conn_t      *conn;
    uint64_t            now      = sfs_time_ms();
    uint64_t            interval = service->config->heartbeat_interval_ms;
    int                 rc;

    /* a target that answered ENOSPC, or filled by 1% of its capacity, is
     * reported now, not a heartbeat later: new files are placed by what
     * management last heard (200 ms after the last one at the soonest, so
     * that an unreachable management is not asked every loop) */
    if (service->storage && service->next_heartbeat_ms > interval &&
        sfs_storage_has_news(service->storage)) {
        uint64_t soonest = service->next_heartbeat_ms - interval + 200;

        if (soonest < service->next_heartbeat_ms) {
            service->next_heartbeat_ms = soonest;
        }
    }
    if (!service->cluster || now < service->next_heartbeat_ms) {
        return;
    }
    service->next_heartbeat_ms = now + interval;
    if (service->storage && sfs_storage_mirror_cut_off(service->storage)) {
        return; /* testing: a cut between this rank and management */
    }
    if (service->heartbeat_rpc) {
        if (!sfs_tp_rpc_is_done(service->heartbeat_rpc)) {
            return; /* the last one is still out */
        }
        sfs_tp_rpc_release(service->heartbeat_rpc);
        service->heartbeat_rpc = NULL;
    }
    if (!service->registered) {
        rc = sfs_service_send_register(service);

        if (rc == 0) {
            sfs_info("registered again with management");
            service->mgmt_away_said = 0;
        } else if (rc != -EINPROGRESS && !service->mgmt_away_said) {
            /* (-EINPROGRESS: its address is being asked in the background) */
            sfs_warn("cannot register again with management (tried at every heartbeat; said "
                     "once): %s",
                     sfs_error_detail());
            service->mgmt_away_said = 1;
        }
        return;
    }
    if ((rc = sfs_cluster_mgmt_conn(service->cluster, &conn)) != 0) {
        if (rc != -EINPROGRESS && !service->mgmt_away_said) {
            sfs_warn("management unreachable (tried at every heartbeat; said once): %s",
                     sfs_error_detail());
            service->mgmt_away_said = 1;
        }
        return;
    }
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_service_heartbeat_args(service, &wb);
    memset(&params, 0, sizeof(params));
    params.opcode              = SFS_OP_HEARTBEAT;
    params.args                = args;
    params.args_length         = wb.length;
    params.cb                  = sfs_service_heartbeat_done;
    params.cb_arg              = service;
    service->heartbeat_sent_ms = sfs_time_ms();
    if (wb.error || sfs_tp_rpc_start(conn, &params, &service->heartbeat_rpc) != 0) {
        service->heartbeat_rpc = NULL;
    }
}

int sfs_service_progress(sfs_service_t *service, int timeout_ms)
{
    int rc = sfs_tp_worker_progress(service->worker, timeout_ms);

    sfs_service_heartbeat(service);
    sfs_meta_fence_tick(service);
    if (service->storage) {
        sfs_storage_mirror_tick(service->storage);
    }
    if (service->mgmt) {
        sfs_mgmt_timer(service->mgmt);
    }
    if (service->meta) {
        sfs_meta_timer(service->meta);
    }
    if (service->promote_request) {
        sfs_meta_promote_run(service);
    }
    if (service->meta && !service->stop_requested && sfs_meta_deposed(service->meta, NULL, 0)) {
        sfs_meta_demote_run(service);
    }
    return rc;
}

void sfs_service_request_stop(sfs_service_t *service)
{
    service->stop_requested = 1;
    if (service->worker) {
        sfs_tp_worker_wakeup(service->worker);
    }
}

int sfs_service_stopping(const sfs_service_t *service)
{
    return service->stop_requested;
}

int sfs_service_flush(sfs_service_t *service)
{
    int rc = 0, one;

    if (service->meta && (one = sfs_meta_flush(service->meta)) != 0) {
        rc = one;
    }
    if (service->storage && (one = sfs_storage_flush(service->storage)) != 0) {
        rc = one;
    }
    if (service->stop_request) {
        sfs_tp_request_t *req = service->stop_request;

        service->stop_request = NULL;
        if (rc) {
            sfs_tp_request_reply_error(req, rc, "rank %u: flush failed: %s", service->rank,
                                       sfs_error_detail());
        } else {
            sfs_tp_request_reply(req, 0, NULL, 0, NULL, 0, NULL, NULL);
        }
        /* out before the caller's next steps (a barrier, the teardown) */
        for (int i = 0; i < 10; i++) {
            sfs_tp_worker_progress(service->worker, 10);
        }
    }
    return rc;
}

void sfs_service_destroy(sfs_service_t *service)
{
    if (!service) {
        return;
    }
    if (service->heartbeat_rpc) {
        sfs_tp_rpc_release(service->heartbeat_rpc);
        service->heartbeat_rpc = NULL;
    }
    sfs_meta_fence_fini(service);
    if (service->promote_request) {
        sfs_tp_request_reply_error(service->promote_request, -ESHUTDOWN,
                                   "rank %u: stopped before its promotion", service->rank);
        service->promote_request = NULL;
    }
    if (service->stop_request) { /* (no flush came after it) */
        sfs_tp_request_reply_error(service->stop_request, -ESHUTDOWN,
                                   "rank %u: torn down before its flush", service->rank);
        service->stop_request = NULL;
    }
    service->tearing_down = 1;
    /* roles first: their threads may still post completions to the worker */
    sfs_meta_destroy(service->meta);
    service->meta = NULL;
    sfs_meta_mirror_destroy(service->meta_mirror);
    service->meta_mirror = NULL;
    sfs_storage_destroy(service->storage);
    service->storage = NULL;
    sfs_mgmt_destroy(service->mgmt);
    service->mgmt = NULL;
    sfs_cluster_destroy(service->cluster);
    sfs_tp_worker_destroy(service->worker);
    sfs_identity_destroy(service->identity);
    sfs_meta_reply_table_destroy(service->kept_replies);
    free(service);
}
