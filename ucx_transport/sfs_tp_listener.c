/*
 * Servers take UCX connections on a listener (UCX's client-server
 * connection establishment) instead of letting peers connect to their worker
 * address. Why: over TCP, an endpoint made from a worker address connects
 * "to the interface", and UCX 1.13.1 then hands the socket of a peer's
 * receive-only endpoint to the new one while its receive loop may still be
 * running on the old one (uct_tcp_ep_replace_ep): after a network heal,
 * when ranks reconnect to each other at once, that loop faulted on the
 * buffer it no longer had (docs/faults.md, "How UCX gets there"). An
 * endpoint made through a listener carries a connection manager lane, and
 * UCX then connects TCP "endpoint to endpoint": each endpoint has a socket
 * of its own and none is ever handed over. A peer on this host is still
 * reached by worker address (sfs_tp_listener_is_local): UCX 1.13 offers no
 * shared memory through a listener.
 *
 * A peer's published address (sfs_proto_address.h) says where the listener
 * is. An endpoint the listener accepted waits here until the HELLO that
 * arrives on it claims it for a session; one that nothing claims within the
 * handshake timeout is closed.
 */
#define SFS_LOG_FAC "ucx"
#include "sfs_tp_internal.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sfs_tp_accepted {
    sfs_list_t        list; /* worker->accepted, until claimed */
    sfs_tp_worker_t  *worker;
    ucp_ep_h          ep;
    sfs_tp_session_t *session; /* the session that claimed it */
    uint64_t          created_ms;
    int               failed;   /* before any HELLO: its drop is posted, nothing else may */
    char              peer[64]; /* the connecting side's socket address */
};

static int sfs_tp_is_loopback(const uint8_t ipv4[4])
{
    return ipv4[0] == 127;
}

/* This host's IPv4 addresses, read once: both the choice of the address
 * to publish and the same-host test below look at them. */
static void sfs_tp_local_addresses(sfs_tp_worker_t *worker)
{
    struct ifaddrs *list, *ifa;

    worker->local_if_count = 0;
    if (getifaddrs(&list) != 0) {
        return;
    }
    for (ifa = list; ifa && worker->local_if_count < SFS_TP_LOCAL_IPV4_MAX; ifa = ifa->ifa_next) {
        const struct sockaddr_in *sin = (const struct sockaddr_in *)ifa->ifa_addr;
        sfs_tp_local_if_t        *one = &worker->local_ifs[worker->local_if_count];

        if (sin && sin->sin_family == AF_INET) {
            snprintf(one->name, sizeof(one->name), "%s", ifa->ifa_name);
            memcpy(one->ipv4, &sin->sin_addr, 4);
            one->up       = (ifa->ifa_flags & IFF_UP) != 0;
            one->loopback = (ifa->ifa_flags & IFF_LOOPBACK) != 0;
            worker->local_if_count++;
        }
    }
    freeifaddrs(list);
}

/* The IPv4 address of interface `name` (up), or of the first interface up
 * that is not a loopback when `name` is NULL. */
static int sfs_tp_interface_ipv4(const sfs_tp_worker_t *worker, const char *name, uint8_t ipv4[4])
{
    for (unsigned i = 0; i < worker->local_if_count; i++) {
        const sfs_tp_local_if_t *one = &worker->local_ifs[i];

        if (one->up && (name ? strcmp(one->name, name) == 0 : !one->loopback)) {
            memcpy(ipv4, one->ipv4, 4);
            return 1;
        }
    }
    return 0;
}

int sfs_tp_listener_is_local(const sfs_tp_worker_t *worker, const uint8_t ipv4[4])
{
    if (sfs_tp_is_loopback(ipv4)) {
        return 1;
    }
    for (unsigned i = 0; i < worker->local_if_count; i++) {
        if (memcmp(worker->local_ifs[i].ipv4, ipv4, 4) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Where peers should connect: the first device of UCX_NET_DEVICES that is
 * an interface with an IPv4 address (the network UCX itself was told to
 * use); else what our host name resolves to, loopback aside (Debian names
 * its own host 127.0.1.1); else the first interface that is up; else
 * loopback (one host). */
static void sfs_tp_listener_pick_ipv4(const sfs_tp_worker_t *worker, uint8_t ipv4[4],
                                      const char **how)
{
    const char      *devices = sfs_tunable_env(&sfs_tp_tunables, "UCX_NET_DEVICES");
    struct addrinfo  hints   = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res, *ai;

    if (devices && strcmp(devices, "all") != 0) {
        char list[256], *save = NULL;

        snprintf(list, sizeof(list), "%s", devices);
        for (char *dev = strtok_r(list, ",", &save); dev; dev = strtok_r(NULL, ",", &save)) {
            if (sfs_tp_interface_ipv4(worker, dev, ipv4)) {
                *how = "UCX_NET_DEVICES";
                return;
            }
        }
    }
    if (getaddrinfo(worker->host, NULL, &hints, &res) == 0) {
        for (ai = res; ai; ai = ai->ai_next) {
            const struct sockaddr_in *sin = (const struct sockaddr_in *)ai->ai_addr;

            memcpy(ipv4, &sin->sin_addr, 4);
            if (!sfs_tp_is_loopback(ipv4)) {
                freeaddrinfo(res);
                *how = "the host name";
                return;
            }
        }
        freeaddrinfo(res);
    }
    if (sfs_tp_interface_ipv4(worker, NULL, ipv4)) {
        *how = "the first interface up";
        return;
    }
    ipv4[0] = 127, ipv4[1] = 0, ipv4[2] = 0, ipv4[3] = 1;
    *how = "loopback";
}

static void sfs_tp_accepted_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status);

static void sfs_tp_accepted_drop(sfs_tp_accepted_t *accepted, int force, const char *why)
{
    sfs_tp_worker_t *worker = accepted->worker;
    char             peer[96];

    sfs_debug("connection from %s closed before any HELLO: %s", accepted->peer, why);
    snprintf(peer, sizeof(peer), "%s (no session)", accepted->peer);
    sfs_list_del(&accepted->list);
    worker->accepted_count--;
    sfs_tp_ep_close(worker, accepted->ep, force, peer);
    free(accepted);
}

typedef struct {
    sfs_tp_worker_t   *worker;
    ucp_conn_request_h request;
} sfs_tp_conn_request_t;

/* On the progress thread, outside UCX's callbacks (posted by the handler):
 * UCX's own examples make the endpoint there too. */
static void sfs_tp_listener_accept(void *arg)
{
    sfs_tp_conn_request_t  *pending = arg;
    sfs_tp_worker_t        *worker  = pending->worker;
    ucp_conn_request_attr_t attr    = {.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR};
    ucp_ep_params_t         params;
    sfs_tp_accepted_t      *accepted;
    ucs_status_t            status;

    if (!worker->listener || worker->accepted_count >= SFS_TP_MAX_PENDING_SESSIONS ||
        !SFS_ALLOC_PTR(accepted)) {
        sfs_tp_note_dropped(worker, worker->listener ? "too many connections without a HELLO"
                                                     : "a connection while closing");
        if (worker->listener) {
            ucp_listener_reject(worker->listener, pending->request);
        }
        free(pending);
        return;
    }
    snprintf(accepted->peer, sizeof(accepted->peer), "an unknown address");
    if (ucp_conn_request_query(pending->request, &attr) == UCS_OK &&
        attr.client_address.ss_family == AF_INET) {
        const struct sockaddr_in *sin = (const struct sockaddr_in *)&attr.client_address;
        char                      ip[INET_ADDRSTRLEN];

        if (inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip))) {
            snprintf(accepted->peer, sizeof(accepted->peer), "%s:%u", ip, ntohs(sin->sin_port));
        }
    }
    memset(&params, 0, sizeof(params));
    params.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                        UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.conn_request    = pending->request;
    params.err_mode        = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb  = sfs_tp_accepted_err_cb;
    params.err_handler.arg = accepted;
    free(pending);
    accepted->worker     = worker;
    accepted->created_ms = sfs_tp_now_ms();
    status               = ucp_ep_create(worker->ucp_worker, &params, &accepted->ep);
    if (status != UCS_OK) {
        sfs_warn("cannot accept a connection from %s: %s", accepted->peer,
                 ucs_status_string(status));
        free(accepted);
        return;
    }
    sfs_list_add_tail(&worker->accepted, &accepted->list);
    worker->accepted_count++;
}

static void sfs_tp_listener_conn_cb(ucp_conn_request_h request, void *arg)
{
    sfs_tp_worker_t       *worker = arg;
    sfs_tp_conn_request_t *pending;

    if (!SFS_ALLOC_PTR(pending)) {
        ucp_listener_reject(worker->listener, request);
        return;
    }
    pending->worker  = worker;
    pending->request = request;
    if (sfs_tp_worker_post(worker, sfs_tp_listener_accept, pending) != 0) {
        ucp_listener_reject(worker->listener, request);
        free(pending);
    }
}

/* A peer gone before its HELLO: its endpoint is closed here; one a session
 * claimed: the session ends as if its own endpoint had failed. */
static void sfs_tp_accepted_drop_cb(void *arg)
{
    sfs_tp_accepted_drop(arg, 1, "peer gone");
}

static void sfs_tp_accepted_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    sfs_tp_accepted_t *accepted = arg;

    if (accepted->session) {
        sfs_tp_session_peer_failed(accepted->session, ep, status);
        return;
    }
    /* dropped on the progress thread; until then no HELLO claims it and
     * neither the expiry nor the listener's close drops it */
    accepted->failed = 1;
    if (sfs_tp_worker_post(accepted->worker, sfs_tp_accepted_drop_cb, accepted) != 0) {
        sfs_tp_accepted_drop(accepted, 1, "peer gone");
    }
}

sfs_tp_accepted_t *sfs_tp_accepted_claim(sfs_tp_worker_t *worker, ucp_ep_h ep,
                                         sfs_tp_session_t *session)
{
    sfs_list_t *elem, *tmp;

    if (!ep) {
        return NULL;
    }
    sfs_list_for_each_safe(elem, tmp, &worker->accepted)
    {
        sfs_tp_accepted_t *accepted = sfs_container_of(elem, sfs_tp_accepted_t, list);

        if (accepted->ep == ep && !accepted->failed) {
            sfs_list_del(&accepted->list);
            worker->accepted_count--;
            accepted->session = session;
            return accepted;
        }
    }
    return NULL;
}

void sfs_tp_accepted_expire(sfs_tp_worker_t *worker, uint64_t now_ms)
{
    sfs_list_t *elem, *tmp;

    sfs_list_for_each_safe(elem, tmp, &worker->accepted)
    {
        sfs_tp_accepted_t *accepted = sfs_container_of(elem, sfs_tp_accepted_t, list);

        if (!accepted->failed && now_ms - accepted->created_ms > SFS_TP_HANDSHAKE_TIMEOUT_MS) {
            sfs_warn("a connection from %s sent no HELLO in %u ms: closed", accepted->peer,
                     (unsigned)SFS_TP_HANDSHAKE_TIMEOUT_MS);
            sfs_tp_accepted_drop(accepted, 1, "no HELLO");
        }
    }
}

/* Builds the address we publish: the listener's, when there is one, and
 * the UCX worker address. */
static int sfs_tp_address_publish(sfs_tp_worker_t *worker)
{
    sfs_peer_address_t address;
    sfs_wbuf_t         wb;
    size_t             capacity = SFS_PEER_ADDRESS_HEAD + worker->ucx_address_length;

    memset(&address, 0, sizeof(address));
    if (worker->listener) {
        address.family = SFS_PEER_ADDRESS_IPV4;
        address.port   = worker->listener_port;
        memcpy(address.ipv4, worker->listener_ipv4, 4);
    }
    address.ucx        = worker->ucx_address;
    address.ucx_length = worker->ucx_address_length;
    worker->address    = malloc(capacity);
    if (!worker->address) {
        return sfs_error_set(-ENOMEM, "transport: out of memory for our address");
    }
    sfs_wbuf_init(&wb, worker->address, capacity);
    sfs_peer_address_pack(&wb, &address);
    if (wb.error || wb.length != capacity) {
        free(worker->address);
        worker->address = NULL;
        return sfs_error_set(-EOVERFLOW, "transport: our address does not fit its encoding");
    }
    worker->address_length = wb.length;
    return 0;
}

int sfs_tp_listener_open(sfs_tp_worker_t *worker)
{
    ucp_listener_params_t params;
    ucp_listener_attr_t   attr = {.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR};
    struct sockaddr_in    any;
    const char           *how = "";
    ucs_status_t          status;
    char                  ip[INET_ADDRSTRLEN];

    sfs_tp_local_addresses(worker);
    if (worker->on_request && worker->use_listener) {
        memset(&any, 0, sizeof(any));
        any.sin_family      = AF_INET;
        any.sin_addr.s_addr = htonl(INADDR_ANY);
        memset(&params, 0, sizeof(params));
        params.field_mask =
            UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
        params.sockaddr.addr    = (const struct sockaddr *)&any;
        params.sockaddr.addrlen = sizeof(any);
        params.conn_handler.cb  = sfs_tp_listener_conn_cb;
        params.conn_handler.arg = worker;
        status = ucp_listener_create(worker->ucp_worker, &params, &worker->listener);
        if (status == UCS_OK) {
            status = ucp_listener_query(worker->listener, &attr);
        }
        if (status != UCS_OK) {
            /* peers then connect by worker address, as before listeners */
            sfs_warn("no UCX listener (%s): peers connect by worker address; "
                     "STRIPEFS_UCX_LISTENER=0 says so without this warning",
                     ucs_status_string(status));
            if (worker->listener) {
                ucp_listener_destroy(worker->listener);
                worker->listener = NULL;
            }
        } else {
            worker->listener_port = ntohs(((struct sockaddr_in *)&attr.sockaddr)->sin_port);
            sfs_tp_listener_pick_ipv4(worker, worker->listener_ipv4, &how);
            inet_ntop(AF_INET, worker->listener_ipv4, ip, sizeof(ip));
            sfs_info("UCX listener on port %u, published as %s (from %s)", worker->listener_port,
                     ip, how);
        }
    }
    return sfs_tp_address_publish(worker);
}

void sfs_tp_listener_close(sfs_tp_worker_t *worker)
{
    sfs_list_t *elem, *tmp;

    if (worker->listener) {
        ucp_listener_destroy(worker->listener);
        worker->listener = NULL;
    }
    sfs_list_for_each_safe(elem, tmp, &worker->accepted)
    {
        sfs_tp_accepted_t *accepted = sfs_container_of(elem, sfs_tp_accepted_t, list);

        if (!accepted->failed) { /* a failed one's drop is posted: the drain runs it */
            sfs_tp_accepted_drop(accepted, 1, "closing");
        }
    }
}
