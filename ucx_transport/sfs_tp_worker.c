/*
 * The worker's life cycle: create (our state, the UCX context, the UCX
 * worker with our active-message handlers, the progress loop's wakeup fds,
 * the listening sockets) and destroy, which closes every connection and
 * session and waits briefly for UCX to let go of what is in flight. The
 * progress loop is sfs_tp_progress.c; the buffer pool sfs_tp_pool.c.
 */
#define SFS_LOG_FAC "ucx"
#include "sfs_tp_internal.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_munge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SFS_TP_DESTROY_DRAIN_MS 2000 /* how long destroy waits for UCX to finish closes */

/* The environment's knobs (sfs_tp_tunables); a malformed one fails create. */
static int sfs_tp_read_tunables(sfs_tp_worker_t *worker, const sfs_tp_worker_params_t *params)
{
    const sfs_tunable_table_t *table = &sfs_tp_tunables;
    bool                       copies, pulls, listener;
    int64_t                    spin_us;
    int                        rc;

    rc = sfs_tunable_bool(table, "STRIPEFS_DIRECT_COPY", &copies);
    if (rc == 0) {
        rc = sfs_tunable_bool(table, "STRIPEFS_DIRECT_PULL", &pulls);
    }
    if (rc == 0) {
        rc = sfs_tunable_int(table, "STRIPEFS_SPIN_US", &spin_us);
    }
    if (rc == 0) {
        rc = sfs_tunable_bool(table, "STRIPEFS_UCX_LISTENER", &listener);
    }
    if (rc) {
        return rc;
    }
    worker->direct_copies = copies;
    worker->pulls         = pulls; /* 0: no write pulls, asked for or served */
    worker->use_listener  = listener;
    /* the variable, when set, wins over the caller's choice */
    worker->spin_us = (uint32_t)spin_us;
    if ((params->field_mask & SFS_TP_WORKER_PARAM_SPIN_US) &&
        !sfs_tunable_is_set(table, "STRIPEFS_SPIN_US")) {
        worker->spin_us = params->spin_us;
    }
    return 0;
}

static void sfs_tp_set_defaults(sfs_tp_worker_t *worker, const sfs_tp_worker_params_t *params)
{
    const char *host = SFS_PARAM_VALUE(params, host, SFS_TP_WORKER_PARAM_HOST, NULL);
    const char *name = SFS_PARAM_VALUE(params, name, SFS_TP_WORKER_PARAM_NAME, "stripefs");

    worker->node_id = SFS_PARAM_VALUE(params, node_id, SFS_TP_WORKER_PARAM_NODE_ID, 0);
    worker->peer_kind =
        SFS_PARAM_VALUE(params, peer_kind, SFS_TP_WORKER_PARAM_PEER_KIND, SFS_PEER_CLIENT);
    worker->on_request  = SFS_PARAM_VALUE(params, on_request, SFS_TP_WORKER_PARAM_HANDLER, NULL);
    worker->handler_arg = SFS_PARAM_VALUE(params, handler_arg, SFS_TP_WORKER_PARAM_HANDLER, NULL);
    worker->on_session_end =
        SFS_PARAM_VALUE(params, on_session_end, SFS_TP_WORKER_PARAM_SESSION_END, NULL);
    worker->max_payload =
        SFS_PARAM_VALUE(params, max_payload, SFS_TP_WORKER_PARAM_MAX_PAYLOAD, 64ull << 20);
    worker->rpc_timeout_ms =
        SFS_PARAM_VALUE(params, rpc_timeout_ms, SFS_TP_WORKER_PARAM_RPC_TIMEOUT, 30000);
    worker->max_request_rate =
        SFS_PARAM_VALUE(params, max_request_rate, SFS_TP_WORKER_PARAM_MAX_RATE, 0);
    if (host) {
        snprintf(worker->host, sizeof(worker->host), "%s", host);
    } else if (gethostname(worker->host, sizeof(worker->host)) != 0) {
        snprintf(worker->host, sizeof(worker->host), "unknown");
    }
    worker->host[sizeof(worker->host) - 1] = '\0';
    snprintf(worker->name, sizeof(worker->name), "%s", name);
}

/* How this worker proves itself: the cluster key, or MUNGE (requesters). */
static void sfs_tp_set_identity(sfs_tp_worker_t *worker, const sfs_tp_worker_params_t *params)
{
    if ((params->field_mask & SFS_TP_WORKER_PARAM_KEY) && params->key) {
        worker->key     = *params->key;
        worker->has_key = 1;
    }
    if (params->field_mask & SFS_TP_WORKER_PARAM_MUNGE) {
        worker->munge_client = params->munge_client != 0;
        worker->service_uid  = params->service_uid;
        snprintf(worker->munge_socket, sizeof(worker->munge_socket), "%s",
                 params->munge_socket ? params->munge_socket : SFS_MUNGE_SOCKET_DEFAULT);
    }
    if (params->field_mask & SFS_TP_WORKER_PARAM_IDENTITY) {
        worker->on_identity = params->on_identity;
    }
}

/* Our own state, before anything of UCX's. Undone by sfs_tp_worker_fini. */
static int sfs_tp_worker_init(sfs_tp_worker_t *worker, const sfs_tp_worker_params_t *params)
{
    sfs_tp_set_defaults(worker, params);
    sfs_tp_set_identity(worker, params);
    worker->uuid            = sfs_auth_random_u64();
    worker->ucx_fd          = -1;
    worker->event_fd        = -1;
    worker->epoll_fd        = -1;
    worker->bootstrap_fd    = -1;
    worker->direct_fd       = -1;
    worker->files_fd        = -1;
    worker->next_request_id = 1;
    sfs_list_init(&worker->conns);
    sfs_list_init(&worker->held_rpcs);
    sfs_list_init(&worker->session_list);
    sfs_list_init(&worker->posted);
    sfs_list_init(&worker->closing);
    sfs_list_init(&worker->closes_given_up);
    sfs_list_init(&worker->accepted);
    pthread_mutex_init(&worker->post_lock, NULL);
    pthread_mutex_init(&worker->pool_lock, NULL);
    if (sfs_hash_init(&worker->rpcs) || sfs_hash_init(&worker->sessions)) {
        return sfs_error_set(-ENOMEM, "transport: out of memory for the worker's tables");
    }
    return sfs_tp_read_tunables(worker, params);
}

static void sfs_tp_worker_fini(sfs_tp_worker_t *worker)
{
    sfs_hash_cleanup(&worker->rpcs);
    sfs_hash_cleanup(&worker->sessions);
    pthread_mutex_destroy(&worker->post_lock);
    pthread_mutex_destroy(&worker->pool_lock);
}

static int sfs_tp_am_handlers_set(sfs_tp_worker_t *worker)
{
    ucp_am_handler_param_t am_param;
    ucs_status_t           status;

    memset(&am_param, 0, sizeof(am_param));
    am_param.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                          UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    am_param.flags = UCP_AM_FLAG_WHOLE_MSG;
    am_param.arg   = worker;
    am_param.id    = SFS_AM_ID_REQUEST;
    am_param.cb    = sfs_tp_am_request_cb;
    status         = ucp_worker_set_am_recv_handler(worker->ucp_worker, &am_param);
    if (status == UCS_OK) {
        am_param.id = SFS_AM_ID_REPLY;
        am_param.cb = sfs_tp_am_reply_cb;
        status      = ucp_worker_set_am_recv_handler(worker->ucp_worker, &am_param);
    }
    if (status != UCS_OK) {
        return sfs_error_set(-EIO, "cannot register AM handlers: %s", ucs_status_string(status));
    }
    return 0;
}

/* The UCX worker, its address and our active-message handlers. */
static int sfs_tp_ucp_worker_open(sfs_tp_worker_t *worker)
{
    ucp_worker_params_t worker_params;
    ucp_worker_attr_t   attr;
    ucs_status_t        status;
    int                 rc;

    memset(&worker_params, 0, sizeof(worker_params));
    worker_params.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
    status = ucp_worker_create(worker->context, &worker_params, &worker->ucp_worker);
    if (status != UCS_OK) {
        return sfs_error_set(-EIO, "ucp_worker_create failed: %s", ucs_status_string(status));
    }
    attr.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS | UCP_WORKER_ATTR_FIELD_MAX_AM_HEADER;
    status          = ucp_worker_query(worker->ucp_worker, &attr);
    if (status != UCS_OK) {
        rc = sfs_error_set(-EIO, "ucp_worker_query failed: %s", ucs_status_string(status));
        goto err_destroy;
    }
    worker->ucx_address        = attr.address;
    worker->ucx_address_length = attr.address_length;
    worker->max_am_header      = attr.max_am_header;
    if (attr.max_am_header < SFS_PROTO_HDR_SIZE) {
        rc = sfs_error_set(-EOPNOTSUPP, "UCX allows only %zu bytes of AM header, need %d",
                           attr.max_am_header, SFS_PROTO_HDR_SIZE);
        goto err_destroy;
    }
    rc = sfs_tp_am_handlers_set(worker);
    if (rc) {
        goto err_destroy;
    }
    return 0;

err_destroy:
    sfs_tp_ucp_worker_close(worker);
    return rc;
}

void sfs_tp_ucp_worker_close(sfs_tp_worker_t *worker)
{
    free(worker->address);
    worker->address        = NULL;
    worker->address_length = 0;
    if (worker->ucx_address) {
        ucp_worker_release_address(worker->ucp_worker, worker->ucx_address);
        worker->ucx_address = NULL;
    }
    ucp_worker_destroy(worker->ucp_worker);
    worker->ucp_worker = NULL;
}

/* The bootstrap port (when asked for) and, on servers, the socket that
 * same-host direct-copy proofs arrive on (best effort). */
static int sfs_tp_listeners_open(sfs_tp_worker_t *worker, uint16_t port)
{
    int rc;

    if (port) {
        rc = sfs_tp_bootstrap_listen(worker, port);
        if (rc) {
            return rc;
        }
        rc = sfs_tp_epoll_add(worker, worker->bootstrap_fd);
        if (rc) {
            sfs_tp_bootstrap_close(worker);
            return rc;
        }
    }
    if (worker->on_request) { /* servers take same-host direct-copy proofs */
        sfs_tp_direct_listen(worker);
        if (worker->direct_fd >= 0 && sfs_tp_epoll_add(worker, worker->direct_fd) != 0) {
            sfs_tp_direct_close(worker);
        }
    }
    return 0;
}

static void sfs_tp_listeners_close(sfs_tp_worker_t *worker)
{
    sfs_tp_bootstrap_close(worker);
    sfs_tp_direct_close(worker);
    sfs_tp_files_close(worker);
}

static int sfs_tp_worker_params_check(const sfs_tp_worker_params_t *params)
{
    int munge_client =
        params && (params->field_mask & SFS_TP_WORKER_PARAM_MUNGE) && params->munge_client;

    if (!params ||
        (!munge_client && (!(params->field_mask & SFS_TP_WORKER_PARAM_KEY) || !params->key))) {
        return sfs_error_set(-EINVAL, "transport: no cluster key given");
    }
    return 0;
}

int sfs_tp_worker_create(const sfs_tp_worker_params_t *params, sfs_tp_worker_t **worker_p)
{
    sfs_tp_worker_t *worker;
    int              rc;

    rc = sfs_tp_worker_params_check(params);
    if (rc) {
        return rc;
    }
    rc = sfs_auth_init();
    if (rc) {
        return rc;
    }
    if (!SFS_ALLOC_PTR(worker)) {
        return -ENOMEM;
    }
    rc = sfs_tp_worker_init(worker, params);
    if (rc) {
        goto err_fini;
    }
    rc = sfs_tp_context_create(
        worker, SFS_PARAM_VALUE(params, ucx_tls, SFS_TP_WORKER_PARAM_UCX_TLS, NULL),
        SFS_PARAM_VALUE(params, ucx_log_level, SFS_TP_WORKER_PARAM_UCX_LOG_LEVEL, NULL));
    if (rc) {
        goto err_fini;
    }
    rc = sfs_tp_ucp_worker_open(worker);
    if (rc) {
        goto err_cleanup_context;
    }
    rc = sfs_tp_listener_open(worker);
    if (rc) {
        goto err_close_ucp_worker;
    }
    rc = sfs_tp_wakeup_open(worker);
    if (rc) {
        goto err_close_listener;
    }
    rc = sfs_tp_listeners_open(
        worker, SFS_PARAM_VALUE(params, bootstrap_port, SFS_TP_WORKER_PARAM_BOOTSTRAP_PORT, 0));
    if (rc) {
        goto err_close_wakeup;
    }
    sfs_debug("worker %p: node %u on %s, address %zu bytes", (void *)worker, worker->node_id,
              worker->host, worker->address_length);
    *worker_p = worker;
    return 0;

err_close_wakeup:
    sfs_tp_wakeup_close(worker);
err_close_listener:
    sfs_tp_listener_close(worker);
err_close_ucp_worker:
    sfs_tp_ucp_worker_close(worker);
err_cleanup_context:
    ucp_cleanup(worker->context);
err_fini:
    sfs_tp_worker_fini(worker);
    free(worker);
    return rc;
}

/* Fail every connection's RPCs and close every session. */
static void sfs_tp_worker_close_peers(sfs_tp_worker_t *worker)
{
    sfs_list_t *elem, *tmp;

    sfs_list_for_each_safe(elem, tmp, &worker->conns)
    {
        sfs_tp_conn_destroy(sfs_container_of(elem, sfs_tp_conn_t, list));
    }
    sfs_list_for_each_safe(elem, tmp, &worker->session_list)
    {
        sfs_tp_session_close(sfs_container_of(elem, sfs_tp_session_t, list), "shutting down");
    }
}

/* Let the endpoint closes and the releases of in-flight replies finish,
 * for `limit_ms` at most (a dead peer never answers a close); the closes
 * still unfinished then are given back to UCX, which ends them in
 * ucp_worker_destroy. Returns how many were given up. */
static unsigned sfs_tp_worker_drain(sfs_tp_worker_t *worker, uint64_t limit_ms)
{
    uint64_t start    = sfs_tp_now_ms();
    uint64_t deadline = start + limit_ms;

    for (;;) {
        while (ucp_worker_progress(worker->ucp_worker)) {
        }
        sfs_tp_run_posted(worker);
        if (sfs_list_is_empty(&worker->session_list) && worker->buffers_out == 0 &&
            worker->closes_out == 0) {
            return 0;
        }
        if (sfs_tp_now_ms() >= deadline) {
            break;
        }
        usleep(1000);
    }
    return sfs_tp_ep_closes_give_up(worker, sfs_tp_now_ms() - start);
}

void sfs_tp_worker_destroy(sfs_tp_worker_t *worker)
{
    if (!worker) {
        return;
    }
    sfs_tp_listeners_close(worker);
    sfs_tp_listener_close(worker);
    sfs_tp_worker_close_peers(worker);
    sfs_tp_worker_drain(worker, SFS_TP_DESTROY_DRAIN_MS);
    if (worker->rpcs.count) {
        sfs_warn("worker %p: %zu RPCs still registered at destroy", (void *)worker,
                 worker->rpcs.count);
    }
    sfs_tp_ucp_worker_close(worker);
    sfs_tp_rpcs_free_held(worker); /* UCX will call back no more */
    sfs_tp_ep_closes_free(worker);
    ucp_cleanup(worker->context);
    sfs_tp_wakeup_close(worker);
    sfs_tp_pool_cleanup(worker);
    sfs_tp_worker_fini(worker);
    free(worker);
}

const void *sfs_tp_worker_address(const sfs_tp_worker_t *worker, size_t *length_p)
{
    *length_p = worker->address_length;
    return worker->address;
}

uint32_t sfs_tp_worker_node_id(const sfs_tp_worker_t *worker)
{
    return worker->node_id;
}

uint64_t sfs_tp_worker_max_payload(const sfs_tp_worker_t *worker)
{
    return worker->max_payload;
}

uint32_t sfs_tp_worker_rpc_timeout(const sfs_tp_worker_t *worker)
{
    return worker->rpc_timeout_ms;
}

uint16_t sfs_tp_worker_bootstrap_port(const sfs_tp_worker_t *worker)
{
    return worker->bootstrap_port;
}

uint64_t sfs_tp_worker_uuid(const sfs_tp_worker_t *worker)
{
    return worker->uuid;
}
