/*
 * The transport worker: UCX context and worker, the progress loop that
 * sleeps in epoll when idle, the queue other threads post to, timers, and
 * the payload buffer pool.
 */
#define SFS_LOG_FAC "ucx"
#include "sfs_tp_internal.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_munge.h"
#include "sfs_time.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define SFS_TP_TIMER_INTERVAL_MS 20

typedef struct sfs_tp_posted {
    sfs_list_t       list;
    sfs_tp_post_cb_t cb;
    void            *arg;
} sfs_tp_posted_t;

/* Pool buffers carry a small header so a put knows their class. */
typedef struct sfs_tp_buf_hdr {
    void    *next_free;
    uint32_t size_class;
    uint32_t magic;
    uint64_t pad[6]; /* keep the data 64-byte aligned */
} sfs_tp_buf_hdr_t;

#define SFS_TP_BUF_MAGIC 0x53464250u

uint64_t sfs_tp_now_ms(void)
{
    return sfs_time_ms();
}

static int sfs_tp_ucs_errno(ucs_status_t status)
{
    switch (status) {
    case UCS_OK:
        return 0;
    case UCS_ERR_NO_MEMORY:
        return -ENOMEM;
    case UCS_ERR_TIMED_OUT:
        return -ETIMEDOUT;
    case UCS_ERR_UNREACHABLE:
        return -EHOSTUNREACH;
    case UCS_ERR_CANCELED:
        return -ECANCELED;
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_ENDPOINT_TIMEOUT:
        return -ECONNRESET;
    case UCS_ERR_INVALID_PARAM:
        return -EINVAL;
    case UCS_ERR_UNSUPPORTED:
        return -EOPNOTSUPP;
    case UCS_ERR_BUSY:
        return -EBUSY;
    default:
        return -EIO;
    }
}

void sfs_tp_note_dropped(sfs_tp_worker_t *worker, const char *why)
{
    uint64_t now = sfs_tp_now_ms();

    worker->dropped_messages++;
    /* one line per second at most: a flood must not flood the log too */
    if (now - worker->last_drop_log_ms >= 1000) {
        worker->last_drop_log_ms = now;
        sfs_warn("dropped a message: %s (%lu dropped so far)", why,
                 (unsigned long)worker->dropped_messages);
    }
}

void sfs_tp_hdr_seal(const sfs_proto_hdr_t *hdr, const sfs_auth_key_t *key, const void *args,
                     size_t args_length, uint8_t packed[SFS_PROTO_HDR_SIZE])
{
    sfs_proto_hdr_pack(hdr, packed);
    if (key) {
        sfs_auth_mac(key, packed, args, args_length, packed + SFS_PROTO_MAC_COVERS);
    } else {
        memset(packed + SFS_PROTO_MAC_COVERS, 0, SFS_PROTO_MAC_SIZE);
    }
}

int sfs_tp_args_in_header(const sfs_tp_worker_t *worker, size_t args_length)
{
    return args_length && SFS_PROTO_HDR_SIZE + args_length <= worker->max_am_header;
}

ucs_status_ptr_t sfs_tp_am_send(ucp_ep_h ep, unsigned am_id, const void *head, size_t head_length,
                                const ucp_dt_iov_t *iov, size_t iov_count,
                                ucp_send_nbx_callback_t cb, void *user_data)
{
    ucp_request_param_t param = {
        .op_attr_mask =
            UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE,
        .cb.send   = cb,
        .user_data = user_data,
    };

    if (iov_count == 1) {
        param.datatype = ucp_dt_make_contig(1);
        return ucp_am_send_nbx(ep, am_id, head, head_length, iov[0].buffer, iov[0].length, &param);
    }
    param.datatype = iov_count ? ucp_dt_make_iov() : ucp_dt_make_contig(1);
    return ucp_am_send_nbx(ep, am_id, head, head_length, iov_count ? (void *)iov : NULL, iov_count,
                           &param);
}

ucs_status_ptr_t sfs_tp_am_recv(sfs_tp_worker_t *worker, void *data, const ucp_dt_iov_t *iov,
                                size_t iov_count, ucp_am_recv_data_nbx_callback_t cb,
                                void *user_data)
{
    ucp_request_param_t param = {
        .op_attr_mask =
            UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE,
        .cb.recv_am = cb,
        .user_data  = user_data,
    };

    if (iov_count == 1) {
        param.datatype = ucp_dt_make_contig(1);
        return ucp_am_recv_data_nbx(worker->ucp_worker, data, iov[0].buffer, iov[0].length, &param);
    }
    param.datatype = ucp_dt_make_iov();
    return ucp_am_recv_data_nbx(worker->ucp_worker, data, (void *)iov, iov_count, &param);
}

int sfs_tp_message_layout(const sfs_proto_hdr_t *hdr, const void *header, size_t header_length,
                          const void *data, size_t length, const uint8_t **args_p)
{
    /* a directly delivered payload is not in the message */
    uint64_t carried = (hdr->flags & SFS_PROTO_FLAG_DELIVERED) ? 0 : hdr->payload_length;

    if (header_length == SFS_PROTO_HDR_SIZE + (size_t)hdr->args_length && hdr->args_length) {
        *args_p = (const uint8_t *)header + SFS_PROTO_HDR_SIZE;
        return length == carried ? 0 : -EPROTO;
    }
    *args_p = data;
    if (header_length != SFS_PROTO_HDR_SIZE) {
        return -EPROTO;
    }
    return (uint64_t)hdr->args_length + carried == length ? 0 : -EPROTO;
}

void sfs_tp_describe_transports(ucp_ep_h ep, char *buf, size_t buflen)
{
    char  *text = NULL;
    size_t size = 0;
    FILE  *stream;
    size_t used = 0;

    buf[0] = '\0';
    stream = open_memstream(&text, &size);
    if (!stream) {
        return;
    }
    ucp_ep_print_info(ep, stream);
    fclose(stream);
    /* lines look like "#   lane[0]:  8:posix/memory.0 md[4] ..." */
    for (char *line = text; line && *line;) {
        char *end   = strchr(line, '\n');
        char *lane  = strstr(line, "lane[");
        char *colon = lane ? strchr(lane, ':') : NULL;

        if (end) {
            *end = '\0';
        }
        if (colon) {
            char *tl = strchr(colon + 1, ':');
            char  name[64];

            if (tl && sscanf(tl + 1, "%63s", name) == 1) {
                char *dot = strrchr(name, '.');

                if (dot) {
                    *dot = '\0';
                }
                if (!strstr(buf, name) && used + strlen(name) + 3 < buflen) {
                    used +=
                        (size_t)snprintf(buf + used, buflen - used, "%s%s", used ? ", " : "", name);
                }
            }
        }
        line = end ? end + 1 : NULL;
    }
    free(text);
}

/* ---------------------------------------------------------------------- */
/* Endpoint close without blocking: the request is freed by its callback. */

static void sfs_tp_ep_close_cb(void *request, ucs_status_t status, void *user_data)
{
    sfs_tp_worker_t *worker = user_data;

    (void)status;
    worker->closes_out--;
    ucp_request_free(request);
}

int sfs_tp_ep_close(sfs_tp_worker_t *worker, ucp_ep_h ep, int force)
{
    ucp_request_param_t param = {
        .op_attr_mask =
            UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .flags     = force ? UCP_EP_CLOSE_FLAG_FORCE : 0,
        .cb.send   = sfs_tp_ep_close_cb,
        .user_data = worker,
    };
    ucs_status_ptr_t req;

    if (!ep) {
        return 0;
    }
    req = ucp_ep_close_nbx(ep, &param);
    if (UCS_PTR_IS_ERR(req)) {
        return sfs_tp_ucs_errno(UCS_PTR_STATUS(req));
    }
    if (req != NULL) {
        worker->closes_out++;
    }
    return 0;
}

/* ---------------------------------------------------------------------- */

static void sfs_tp_set_defaults(sfs_tp_worker_t *worker, const sfs_tp_worker_params_t *params)
{
    const char *host     = SFS_PARAM_VALUE(params, host, SFS_TP_WORKER_PARAM_HOST, NULL);
    const char *name     = SFS_PARAM_VALUE(params, name, SFS_TP_WORKER_PARAM_NAME, "stripefs");
    const char *pull_env = getenv("STRIPEFS_DIRECT_PULL");

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
    worker->spin_us = SFS_PARAM_VALUE(params, spin_us, SFS_TP_WORKER_PARAM_SPIN_US, 50);
    /* STRIPEFS_DIRECT_PULL=0: no write pulls, asked for or served */
    worker->pulls = !pull_env || strcmp(pull_env, "0") != 0;
    if (getenv("SFS_SPIN_US")) { /* tuning knob: busy-poll time before sleeping */
        worker->spin_us = (uint32_t)strtoul(getenv("SFS_SPIN_US"), NULL, 10);
    }
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

static int sfs_tp_epoll_add(sfs_tp_worker_t *worker, int fd)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

    if (epoll_ctl(worker->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        int rc = -errno;

        sfs_error("epoll_ctl(add fd %d) failed: %m", fd);
        return rc;
    }
    return 0;
}

/* Whether UCX_TLS lets UCX use the transport `name` (a shared-memory
 * one): unset, "all", an exclusion list ("^tcp"), or a list naming it or
 * one of its aliases ("sm", "shm"). */
static int sfs_tp_tls_may_use(const char *name)
{
    const char *tls = getenv("UCX_TLS");
    char        list[256], *save = NULL;

    if (!tls || !*tls || tls[0] == '^') {
        return 1;
    }
    snprintf(list, sizeof(list), "%s", tls);
    for (char *tl = strtok_r(list, ",", &save); tl; tl = strtok_r(NULL, ",", &save)) {
        if (strcmp(tl, "all") == 0 || strcmp(tl, "sm") == 0 || strcmp(tl, "shm") == 0 ||
            strcmp(tl, name) == 0) {
            return 1;
        }
    }
    return 0;
}

int sfs_tp_worker_create(const sfs_tp_worker_params_t *params, sfs_tp_worker_t **worker_p)
{
    ucp_params_t           ucp_params;
    ucp_worker_params_t    worker_params;
    ucp_worker_attr_t      attr;
    ucp_am_handler_param_t am_param;
    ucp_config_t          *config;
    sfs_tp_worker_t       *worker;
    ucs_status_t           status;
    uint16_t               port;
    int                    rc, restricted;

    int munge_client =
        params && (params->field_mask & SFS_TP_WORKER_PARAM_MUNGE) && params->munge_client;

    if (!params ||
        (!munge_client && (!(params->field_mask & SFS_TP_WORKER_PARAM_KEY) || !params->key))) {
        return sfs_error_set(-EINVAL, "transport: no cluster key given");
    }
    rc = sfs_auth_init();
    if (rc) {
        return rc;
    }
    if (!SFS_ALLOC_PTR(worker)) {
        return -ENOMEM;
    }
    sfs_tp_set_defaults(worker, params);
    if ((params->field_mask & SFS_TP_WORKER_PARAM_KEY) && params->key) {
        worker->key     = *params->key;
        worker->has_key = 1;
    }
    if (params->field_mask & SFS_TP_WORKER_PARAM_MUNGE) {
        worker->munge_client = munge_client;
        worker->service_uid  = params->service_uid;
        snprintf(worker->munge_socket, sizeof(worker->munge_socket), "%s",
                 params->munge_socket ? params->munge_socket : SFS_MUNGE_SOCKET_DEFAULT);
    }
    if (params->field_mask & SFS_TP_WORKER_PARAM_IDENTITY) {
        worker->on_identity = params->on_identity;
    }
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
    pthread_mutex_init(&worker->post_lock, NULL);
    pthread_mutex_init(&worker->pool_lock, NULL);
    if (sfs_hash_init(&worker->rpcs) || sfs_hash_init(&worker->sessions)) {
        rc = -ENOMEM;
        goto err_free;
    }

    /* Shared-memory transports support peer-failure detection only when
     * asked to; without it UCX drops them for error-handling endpoints and
     * same-host traffic falls back to TCP. A user's own setting wins; with
     * UCX_TLS leaving them out, setting it would only earn a warning. */
    restricted =
        (params->field_mask & SFS_TP_WORKER_PARAM_UCX_TLS) && params->ucx_tls && !getenv("UCX_TLS");
    if (!restricted && sfs_tp_tls_may_use("posix")) {
        setenv("UCX_POSIX_ERROR_HANDLING", "y", 0);
    }
    if (!restricted && sfs_tp_tls_may_use("sysv")) {
        setenv("UCX_SYSV_ERROR_HANDLING", "y", 0);
    }
    /* notice a dead peer in seconds rather than UCX's default 20 s */
    setenv("UCX_KEEPALIVE_INTERVAL", "2s", 0);
    status = ucp_config_read(NULL, NULL, &config);
    if (status != UCS_OK) {
        rc = sfs_error_set(-EIO, "ucp_config_read failed: %s", ucs_status_string(status));
        goto err_free;
    }
    if (restricted) {
        status = ucp_config_modify(config, "TLS", params->ucx_tls);
        if (status != UCS_OK) {
            ucp_config_release(config);
            rc = sfs_error_set(-EINVAL, "UCX refused transports '%s': %s", params->ucx_tls,
                               ucs_status_string(status));
            goto err_free;
        }
    }
    memset(&ucp_params, 0, sizeof(ucp_params));
    ucp_params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME;
    ucp_params.features   = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    ucp_params.name       = "stripefs";
    status                = ucp_init(&ucp_params, config, &worker->context);
    ucp_config_release(config);
    if (status != UCS_OK) {
        rc = sfs_error_set(-EIO, "ucp_init failed: %s", ucs_status_string(status));
        goto err_free;
    }

    memset(&worker_params, 0, sizeof(worker_params));
    worker_params.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
    status = ucp_worker_create(worker->context, &worker_params, &worker->ucp_worker);
    if (status != UCS_OK) {
        rc = sfs_error_set(-EIO, "ucp_worker_create failed: %s", ucs_status_string(status));
        goto err_cleanup_context;
    }

    attr.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS | UCP_WORKER_ATTR_FIELD_MAX_AM_HEADER;
    status          = ucp_worker_query(worker->ucp_worker, &attr);
    if (status != UCS_OK) {
        rc = sfs_error_set(-EIO, "ucp_worker_query failed: %s", ucs_status_string(status));
        goto err_destroy_worker;
    }
    worker->address        = attr.address;
    worker->address_length = attr.address_length;
    worker->max_am_header  = attr.max_am_header;
    if (attr.max_am_header < SFS_PROTO_HDR_SIZE) {
        rc = sfs_error_set(-EOPNOTSUPP, "UCX allows only %zu bytes of AM header, need %d",
                           attr.max_am_header, SFS_PROTO_HDR_SIZE);
        goto err_release_address;
    }

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
        rc = sfs_error_set(-EIO, "cannot register AM handlers: %s", ucs_status_string(status));
        goto err_release_address;
    }

    status = ucp_worker_get_efd(worker->ucp_worker, &worker->ucx_fd);
    if (status != UCS_OK) {
        rc = sfs_error_set(-EIO, "ucp_worker_get_efd failed: %s", ucs_status_string(status));
        goto err_release_address;
    }
    worker->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    worker->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (worker->event_fd < 0 || worker->epoll_fd < 0) {
        rc = -errno;
        sfs_error_set(rc, "cannot create eventfd/epoll: %s", strerror(-rc));
        goto err_close_fds;
    }
    rc = sfs_tp_epoll_add(worker, worker->ucx_fd);
    if (rc == 0) {
        rc = sfs_tp_epoll_add(worker, worker->event_fd);
    }
    if (rc) {
        goto err_close_fds;
    }

    port = SFS_PARAM_VALUE(params, bootstrap_port, SFS_TP_WORKER_PARAM_BOOTSTRAP_PORT, 0);
    if (port) {
        rc = sfs_tp_bootstrap_listen(worker, port);
        if (rc) {
            goto err_close_fds;
        }
        rc = sfs_tp_epoll_add(worker, worker->bootstrap_fd);
        if (rc) {
            goto err_close_bootstrap;
        }
    }
    if (worker->on_request) { /* servers take same-host direct-copy proofs */
        sfs_tp_direct_listen(worker);
        if (worker->direct_fd >= 0 && sfs_tp_epoll_add(worker, worker->direct_fd) != 0) {
            sfs_tp_direct_close(worker);
        }
    }
    sfs_debug("worker %p: node %u on %s, address %zu bytes", (void *)worker, worker->node_id,
              worker->host, worker->address_length);
    *worker_p = worker;
    return 0;

err_close_bootstrap:
    sfs_tp_bootstrap_close(worker);
    sfs_tp_direct_close(worker);
err_close_fds:
    if (worker->epoll_fd >= 0) {
        close(worker->epoll_fd);
    }
    if (worker->event_fd >= 0) {
        close(worker->event_fd);
    }
err_release_address:
    ucp_worker_release_address(worker->ucp_worker, worker->address);
err_destroy_worker:
    ucp_worker_destroy(worker->ucp_worker);
err_cleanup_context:
    ucp_cleanup(worker->context);
err_free:
    sfs_hash_cleanup(&worker->rpcs);
    sfs_hash_cleanup(&worker->sessions);
    pthread_mutex_destroy(&worker->post_lock);
    pthread_mutex_destroy(&worker->pool_lock);
    free(worker);
    return rc;
}

static int sfs_tp_run_posted(sfs_tp_worker_t *worker)
{
    sfs_list_t  ready;
    sfs_list_t *elem;
    int         count = 0;

    sfs_list_init(&ready);
    pthread_mutex_lock(&worker->post_lock);
    sfs_list_splice_tail(&ready, &worker->posted);
    pthread_mutex_unlock(&worker->post_lock);
    while ((elem = sfs_list_pop_head(&ready)) != NULL) {
        sfs_tp_posted_t *posted = sfs_container_of(elem, sfs_tp_posted_t, list);

        posted->cb(posted->arg);
        free(posted);
        count++;
    }
    return count;
}

/* Returns how many RPCs changed state (so that a blocking progress call
 * returns to a caller waiting for one). */
static int sfs_tp_run_timers(sfs_tp_worker_t *worker)
{
    uint64_t now = sfs_tp_now_ms();

    if (now < worker->next_timer_ms) {
        return 0;
    }
    worker->next_timer_ms = now + SFS_TP_TIMER_INTERVAL_MS;
    /* a busy worker may not sleep in epoll for a long time: serve the
     * bootstrap port here too, so joining never starves */
    if (worker->bootstrap_fd >= 0) {
        sfs_tp_bootstrap_accept(worker);
    }
    sfs_tp_direct_recv(worker);
    sfs_tp_sessions_expire(worker, now);
    return sfs_tp_rpcs_check_deadlines(worker, now);
}

static void sfs_tp_drain_eventfd(sfs_tp_worker_t *worker)
{
    uint64_t value;

    while (read(worker->event_fd, &value, sizeof(value)) == sizeof(value)) {
    }
}

int sfs_tp_worker_progress(sfs_tp_worker_t *worker, int timeout_ms)
{
    uint64_t start_ns   = sfs_time_ns();
    uint64_t spin_until = start_ns + (uint64_t)worker->spin_us * 1000;
    uint64_t end_ns     = timeout_ms < 0 ? UINT64_MAX : start_ns + (uint64_t)timeout_ms * 1000000;

    for (;;) {
        struct epoll_event events[4];
        int                count = 0, wait_ms, n;
        uint64_t           now;
        ucs_status_t       status;

        while (ucp_worker_progress(worker->ucp_worker)) {
            count++;
        }
        count += sfs_tp_run_posted(worker);
        count += sfs_tp_run_timers(worker);
        if (count || timeout_ms == 0) {
            return 0;
        }
        now = sfs_time_ns();
        if (now >= end_ns) {
            return 0;
        }
        if (now < spin_until || worker->ucx_inflight) {
            /* spin a little (a reply is likely on its way), and while a
             * transfer is under way keep driving it; but yield the core,
             * which the peer may need to make that progress */
            sched_yield();
            continue;
        }
        status = ucp_worker_arm(worker->ucp_worker);
        if (status == UCS_ERR_BUSY) {
            continue;
        }
        if (status != UCS_OK) {
            return sfs_error_set(sfs_tp_ucs_errno(status), "ucp_worker_arm failed: %s",
                                 ucs_status_string(status));
        }
        /* wake up for the timers too */
        wait_ms = SFS_TP_TIMER_INTERVAL_MS;
        if (end_ns != UINT64_MAX && (end_ns - now) / 1000000 < (uint64_t)wait_ms) {
            wait_ms = (int)((end_ns - now) / 1000000) + 1;
        }
        n = epoll_wait(worker->epoll_fd, events, 4, wait_ms);
        for (int i = 0; i < n; i++) {
            if (events[i].data.fd == worker->event_fd) {
                sfs_tp_drain_eventfd(worker);
            } else if (events[i].data.fd == worker->bootstrap_fd) {
                sfs_tp_bootstrap_accept(worker);
            } else if (events[i].data.fd == worker->direct_fd) {
                sfs_tp_direct_recv(worker);
            }
        }
        /* after a wakeup, spin again briefly: more is likely on its way */
        spin_until = sfs_time_ns() + (uint64_t)worker->spin_us * 1000;
    }
}

int sfs_tp_worker_post(sfs_tp_worker_t *worker, sfs_tp_post_cb_t cb, void *arg)
{
    sfs_tp_posted_t *posted;

    if (!SFS_ALLOC_PTR(posted)) {
        return -ENOMEM;
    }
    posted->cb  = cb;
    posted->arg = arg;
    pthread_mutex_lock(&worker->post_lock);
    sfs_list_add_tail(&worker->posted, &posted->list);
    pthread_mutex_unlock(&worker->post_lock);
    sfs_tp_worker_wakeup(worker);
    return 0;
}

void sfs_tp_worker_wakeup(sfs_tp_worker_t *worker)
{
    uint64_t one = 1;

    if (write(worker->event_fd, &one, sizeof(one)) < 0 && errno != EAGAIN) {
        sfs_error("cannot signal the progress thread: %m");
    }
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

void sfs_tp_worker_destroy(sfs_tp_worker_t *worker)
{
    sfs_list_t *elem, *tmp;
    uint64_t    deadline;

    if (!worker) {
        return;
    }
    sfs_tp_bootstrap_close(worker);
    sfs_tp_direct_close(worker);
    sfs_tp_files_close(worker);
    sfs_list_for_each_safe(elem, tmp, &worker->conns)
    {
        sfs_tp_conn_destroy(sfs_container_of(elem, sfs_tp_conn_t, list));
    }
    sfs_list_for_each_safe(elem, tmp, &worker->session_list)
    {
        sfs_tp_session_close(sfs_container_of(elem, sfs_tp_session_t, list), "shutting down");
    }
    /* let the closes and the releases of in-flight replies finish */
    deadline = sfs_tp_now_ms() + 2000;
    for (;;) {
        while (ucp_worker_progress(worker->ucp_worker)) {
        }
        sfs_tp_run_posted(worker);
        if ((sfs_list_is_empty(&worker->session_list) && worker->buffers_out == 0 &&
             worker->closes_out == 0) ||
            sfs_tp_now_ms() >= deadline) {
            break;
        }
        usleep(1000);
    }
    if (worker->rpcs.count) {
        sfs_warn("worker %p: %zu RPCs still registered at destroy", (void *)worker,
                 worker->rpcs.count);
    }
    if (worker->buffers_out) {
        sfs_warn("worker %p: %lu payload buffers not returned at destroy", (void *)worker,
                 (unsigned long)worker->buffers_out);
    }
    ucp_worker_release_address(worker->ucp_worker, worker->address);
    ucp_worker_destroy(worker->ucp_worker);
    sfs_tp_rpcs_free_held(worker); /* UCX will call back no more */
    ucp_cleanup(worker->context);
    close(worker->epoll_fd);
    close(worker->event_fd);
    for (int c = 0; c < SFS_TP_POOL_CLASSES; c++) {
        while (worker->pool[c]) {
            sfs_tp_buf_hdr_t *hdr = worker->pool[c];

            worker->pool[c] = hdr->next_free;
            free(hdr);
        }
    }
    sfs_hash_cleanup(&worker->rpcs);
    sfs_hash_cleanup(&worker->sessions);
    pthread_mutex_destroy(&worker->post_lock);
    pthread_mutex_destroy(&worker->pool_lock);
    free(worker);
}

/* ---------------------------------------------------------------------- */
/* Buffer pool                                                             */

static int sfs_tp_size_class(size_t size)
{
    int cls = 0;

    while (cls < SFS_TP_POOL_CLASSES && (1ull << (cls + SFS_TP_POOL_MIN_SHIFT)) < size) {
        cls++;
    }
    return cls; /* SFS_TP_POOL_CLASSES: too big to pool */
}

void *sfs_tp_buf_get(sfs_tp_worker_t *worker, size_t size)
{
    int               cls = sfs_tp_size_class(size);
    size_t            bytes;
    sfs_tp_buf_hdr_t *hdr = NULL;

    pthread_mutex_lock(&worker->pool_lock);
    if (cls < SFS_TP_POOL_CLASSES && worker->pool[cls]) {
        hdr               = worker->pool[cls];
        worker->pool[cls] = hdr->next_free;
        worker->pool_free_bytes -= 1ull << (cls + SFS_TP_POOL_MIN_SHIFT);
    }
    worker->buffers_out++;
    pthread_mutex_unlock(&worker->pool_lock);
    if (!hdr) {
        bytes = cls < SFS_TP_POOL_CLASSES ? (1ull << (cls + SFS_TP_POOL_MIN_SHIFT)) : size;
        if (posix_memalign((void **)&hdr, 64, sizeof(*hdr) + bytes) != 0) {
            pthread_mutex_lock(&worker->pool_lock);
            worker->buffers_out--;
            pthread_mutex_unlock(&worker->pool_lock);
            return NULL;
        }
        hdr->size_class = (uint32_t)cls;
        hdr->magic      = SFS_TP_BUF_MAGIC;
    }
    hdr->next_free = NULL;
    return hdr + 1;
}

void sfs_tp_buf_put(sfs_tp_worker_t *worker, void *buf)
{
    sfs_tp_buf_hdr_t *hdr;
    uint64_t          bytes;

    if (!buf) {
        return;
    }
    hdr = (sfs_tp_buf_hdr_t *)buf - 1;
    if (hdr->magic != SFS_TP_BUF_MAGIC) {
        sfs_error("buffer %p returned to the pool was not from it", buf);
        return;
    }
    pthread_mutex_lock(&worker->pool_lock);
    worker->buffers_out--;
    if (hdr->size_class < SFS_TP_POOL_CLASSES) {
        bytes = 1ull << (hdr->size_class + SFS_TP_POOL_MIN_SHIFT);
        if (worker->pool_free_bytes + bytes <= SFS_TP_POOL_KEEP_BYTES) {
            hdr->next_free                = worker->pool[hdr->size_class];
            worker->pool[hdr->size_class] = hdr;
            worker->pool_free_bytes += bytes;
            hdr = NULL;
        }
    }
    pthread_mutex_unlock(&worker->pool_lock);
    free(hdr);
}
