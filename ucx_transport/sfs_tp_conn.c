/*
 * Connections from this process to a server: endpoint by worker address,
 * then the mutual authentication handshake (sfs_auth.h).
 */
#define SFS_LOG_FAC "ucx"
#include "sfs_tp_internal.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_munge.h"

#include <arpa/inet.h>
#include <sodium.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    sfs_tp_worker_t *worker;
    ucp_ep_h         ep;
    char             name[SFS_HOST_MAX];
} sfs_tp_conn_closing_t;

static void sfs_tp_conn_close_ep_cb(void *arg)
{
    sfs_tp_conn_closing_t *closing = arg;

    sfs_tp_ep_close(closing->worker, closing->ep, 1, closing->name);
    free(closing);
}

/* Close a failed connection's endpoint outside of UCX callbacks (at once:
 * its peer is not answering). */
static void sfs_tp_conn_close_ep_later(sfs_tp_conn_t *conn)
{
    sfs_tp_conn_closing_t *closing = malloc(sizeof(*closing));

    if (!closing) {
        sfs_tp_ep_close(conn->worker, conn->ep, 1, conn->name); /* best effort */
        return;
    }
    closing->worker = conn->worker;
    closing->ep     = conn->ep;
    snprintf(closing->name, sizeof(closing->name), "%s", conn->name);
    if (sfs_tp_worker_post(conn->worker, sfs_tp_conn_close_ep_cb, closing) != 0) {
        free(closing);
        sfs_tp_ep_close(conn->worker, conn->ep, 1, conn->name);
    }
}

void sfs_tp_conn_fail(sfs_tp_conn_t *conn, int status, const char *why)
{
    sfs_list_t *elem, *tmp;

    if (conn->status) {
        return;
    }
    conn->status = status;
    sfs_warn("connection to %s failed: %s", conn->name, why);
    sfs_list_for_each_safe(elem, tmp, &conn->rpcs)
    {
        sfs_tp_rpc_t *rpc = sfs_container_of(elem, sfs_tp_rpc_t, conn_list);

        sfs_tp_rpc_fail(rpc, status, "%s", why);
    }
    if (conn->ep) {
        sfs_tp_conn_close_ep_later(conn);
        conn->ep = NULL;
    }
}

static void sfs_tp_conn_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    sfs_tp_conn_t *conn = arg;
    char           why[256];

    (void)ep;
    snprintf(why, sizeof(why), "connection lost (%s)", ucs_status_string(status));
    sfs_tp_conn_fail(conn, -ECONNRESET, why);
}

/* MUNGE: check the server's credential (it runs as the service's uid and
 * made it for this handshake), derive the session key, and make ours. */
static int sfs_tp_conn_munge(sfs_tp_conn_t *conn, const sfs_hello_req_t *hello,
                             const sfs_auth_kx_t *kx, const sfs_hello_reply_t *reply,
                             sfs_auth_req_t *auth)
{
    sfs_tp_worker_t *worker = conn->worker;
    sfs_munge_info_t info;
    uint8_t          bound[32];
    char            *cred = NULL;
    int              rc;

    sfs_auth_transcript("server", hello->nonce, reply->nonce, reply->session_id, kx->public_key,
                        reply->kx_public, bound);
    rc = sfs_munge_decode(worker->munge_socket, reply->credential, bound, sizeof(bound), &info);
    if (rc) {
        return sfs_error_set(rc, "%s did not prove it is a stripefs server: %s", conn->name,
                             sfs_error_detail());
    }
    if (info.uid != worker->service_uid) {
        return sfs_error_set(-EACCES,
                             "%s runs as uid %u, not as the service's uid %u (security.service_uid "
                             "in the config): refusing to talk to it",
                             conn->name, info.uid, worker->service_uid);
    }
    rc = sfs_auth_kx_client_key(kx, reply->kx_public, &conn->session_key);
    if (rc) {
        return sfs_error_set(rc, "%s: %s", conn->name, sfs_error_detail());
    }
    sfs_auth_transcript("client", hello->nonce, reply->nonce, reply->session_id, kx->public_key,
                        reply->kx_public, bound);
    rc = sfs_munge_encode(worker->munge_socket, bound, sizeof(bound), &cred);
    if (rc) {
        return rc;
    }
    if (strlen(cred) >= sizeof(auth->credential)) {
        free(cred);
        return sfs_error_set(-EOVERFLOW, "MUNGE credential too long");
    }
    memset(auth->proof, 0, sizeof(auth->proof));
    snprintf(auth->credential, sizeof(auth->credential), "%s", cred);
    free(cred);
    return 0;
}

/* to_self: the address this connection was made to is this worker's own
 * (a server rank reaching its own roles); any other address that answers
 * with this worker's uuid came back to this process by accident. */
static int sfs_tp_conn_hello(sfs_tp_conn_t *conn, int to_self, uint32_t timeout_ms)
{
    sfs_tp_worker_t    *worker = conn->worker;
    sfs_hello_req_t     hello;
    sfs_hello_reply_t  *reply = NULL;
    sfs_auth_req_t     *auth  = NULL;
    sfs_auth_kx_t       kx;
    uint8_t             args[SFS_PROTO_ARGS_MAX];
    uint8_t             expected[SFS_PROOF_SIZE];
    sfs_wbuf_t          wb;
    sfs_rbuf_t          rb;
    sfs_tp_rpc_params_t params;
    sfs_tp_rpc_t       *rpc = NULL;
    const void         *reply_args;
    size_t              reply_length;
    int                 server_ok = 1, rc;

    if (!SFS_ALLOC_PTR(reply) || !SFS_ALLOC_PTR(auth)) {
        rc = -ENOMEM;
        goto out;
    }
    memset(&hello, 0, sizeof(hello));
    hello.peer_kind = worker->peer_kind;
    hello.peer_uuid = worker->uuid;
    hello.pid       = (uint32_t)getpid();
    snprintf(hello.host, sizeof(hello.host), "%s", worker->host);
    snprintf(hello.program, sizeof(hello.program), "%s", worker->name);
    sfs_auth_random(hello.nonce, sizeof(hello.nonce));
    hello.address        = worker->address;
    hello.address_length = worker->address_length;
    hello.method         = worker->munge_client ? SFS_AUTH_METHOD_MUNGE : SFS_AUTH_METHOD_SECRET;
    hello.features       = SFS_FEATURES_THIS;
    if (worker->munge_client) {
        sfs_auth_kx_keypair(&kx);
        memcpy(hello.kx_public, kx.public_key, SFS_KX_PUBLIC_SIZE);
    }
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_hello_req_pack(&wb, &hello);
    if (wb.error) {
        rc = sfs_error_set(wb.error, "%s: HELLO does not fit", conn->name);
        goto out;
    }

    memset(&params, 0, sizeof(params));
    params.opcode      = SFS_OP_HELLO;
    params.args        = args;
    params.args_length = wb.length;
    params.timeout_ms  = timeout_ms;
    rc                 = sfs_tp_call(conn, &params, &rpc);
    if (rc) {
        goto out;
    }
    reply_args = sfs_tp_rpc_reply_args(rpc, &reply_length);
    sfs_rbuf_init(&rb, reply_args, reply_length);
    sfs_proto_hello_reply_unpack(&rb, reply);
    if (rb.error || reply->session_id == 0) {
        rc = sfs_error_set(-EPROTO, "%s: malformed HELLO reply", conn->name);
        goto out;
    }
    if (reply->server_uuid == worker->uuid && !to_self) {
        /* TCP connects a socket to itself when the port it picks for this
         * end is the port of a peer that has gone away: refused as a
         * connection, so that the caller tries again or fails over */
        rc = sfs_error_set(-ECONNREFUSED,
                           "%s: the connection came back to this process (pid %d): nothing "
                           "listens at that address any more",
                           conn->name, (int)getpid());
        goto out;
    }
    if (SFS_FEATURES_REQUIRED_OF_SERVER & ~reply->features) {
        char names[256];

        rc = sfs_error_set(-EPROTONOSUPPORT,
                           "%s is of an older stripefs version that lacks %s, which this "
                           "process requires; upgrade the servers",
                           conn->name,
                           sfs_features_string(SFS_FEATURES_REQUIRED_OF_SERVER & ~reply->features,
                                               names, sizeof(names)));
        goto out;
    }
    sfs_tp_rpc_release(rpc);
    rpc                   = NULL;
    conn->session_id      = reply->session_id;
    conn->server_node     = reply->server_node;
    conn->server_uuid     = reply->server_uuid;
    conn->server_features = reply->features;

    if (worker->munge_client) {
        rc = sfs_tp_conn_munge(conn, &hello, &kx, reply, auth);
        sodium_memzero(&kx, sizeof(kx));
        if (rc) {
            goto out;
        }
    } else {
        sfs_auth_server_proof(&worker->key, hello.nonce, reply->nonce, reply->session_id, expected);
        server_ok = sfs_auth_proof_check(expected, reply->proof) == 0;
        sfs_auth_session_key(&worker->key, hello.nonce, reply->nonce, reply->session_id,
                             &conn->session_key);
        /* Answer even when the server's proof is wrong: the server then logs
         * the failed attempt at once instead of when the pending session
         * expires. */
        sfs_auth_client_proof(&worker->key, hello.nonce, reply->nonce, reply->session_id,
                              auth->proof);
    }
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_auth_req_pack(&wb, auth);
    params.opcode      = SFS_OP_AUTH;
    params.args        = args;
    params.args_length = wb.length;
    rc                 = sfs_tp_call(conn, &params, &rpc);
    if (!server_ok) {
        rc = sfs_error_set(-EACCES,
                           "%s could not prove it holds this cluster's connauth secret: the "
                           "connauth file differs between this host and the server",
                           conn->name);
        goto out;
    }
    if (rc == -EACCES && !worker->munge_client) {
        rc = sfs_error_set(-EACCES,
                           "%s refused authentication: this process's connauth secret does not "
                           "match the cluster's",
                           conn->name);
        goto out;
    }
    if (rc) {
        goto out;
    }
    conn->authenticated = 1;
    reply_args          = sfs_tp_rpc_reply_args(rpc, &reply_length);
    if (reply_length >= 8) { /* the server's direct-copy socket */
        uint64_t direct_id;

        sfs_rbuf_init(&rb, reply_args, reply_length);
        direct_id = sfs_rbuf_u64(&rb);
        sfs_tp_direct_offer(conn, direct_id);
    }
out:
    sfs_tp_rpc_release(rpc);
    free(reply);
    free(auth);
    return rc;
}

int sfs_tp_conn_create(sfs_tp_worker_t *worker, const void *address, size_t address_length,
                       const char *peer_name, uint32_t timeout_ms, sfs_tp_conn_t **conn_p)
{
    sfs_peer_address_t peer;
    struct sockaddr_in listener;
    ucp_ep_params_t    ep_params;
    sfs_tp_conn_t     *conn;
    ucs_status_t       status;
    int                rc;

    rc = sfs_peer_address_unpack(address, address_length, peer_name, &peer);
    if (rc) {
        return rc;
    }
    if (!SFS_ALLOC_PTR(conn)) {
        return -ENOMEM;
    }
    conn->worker = worker;
    sfs_list_init(&conn->rpcs);
    snprintf(conn->name, sizeof(conn->name), "%s", peer_name);

    memset(&ep_params, 0, sizeof(ep_params));
    ep_params.field_mask = UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    ep_params.err_mode   = UCP_ERR_HANDLING_MODE_PEER;
    ep_params.err_handler.cb  = sfs_tp_conn_err_cb;
    ep_params.err_handler.arg = conn;
    if (worker->use_listener && peer.family == SFS_PEER_ADDRESS_IPV4 &&
        !sfs_tp_listener_is_local(worker, peer.ipv4)) {
        /* another host: through the server's listener, TCP endpoint to
         * endpoint (sfs_tp_listener.c says why) */
        memset(&listener, 0, sizeof(listener));
        listener.sin_family = AF_INET;
        listener.sin_port   = htons(peer.port);
        memcpy(&listener.sin_addr, peer.ipv4, 4);
        ep_params.field_mask |= UCP_EP_PARAM_FIELD_SOCK_ADDR | UCP_EP_PARAM_FIELD_FLAGS;
        ep_params.flags            = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
        ep_params.sockaddr.addr    = (const struct sockaddr *)&listener;
        ep_params.sockaddr.addrlen = sizeof(listener);
    } else {
        ep_params.field_mask |= UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        ep_params.address = peer.ucx;
    }
    status = ucp_ep_create(worker->ucp_worker, &ep_params, &conn->ep);
    if (status != UCS_OK) {
        rc = sfs_error_set(-EHOSTUNREACH, "cannot create a UCX endpoint to %s: %s", peer_name,
                           ucs_status_string(status));
        free(conn);
        return rc;
    }
    sfs_list_add_tail(&worker->conns, &conn->list);

    /* (the UCX part: the published address's IPv4 part may be rewritten) */
    rc = sfs_tp_conn_hello(conn,
                           peer.ucx_length == worker->ucx_address_length &&
                               memcmp(peer.ucx, worker->ucx_address, peer.ucx_length) == 0,
                           timeout_ms);
    if (rc) {
        sfs_tp_conn_destroy(conn);
        return rc;
    }
    /* the transports are described when asked (sfs_tp_conn_transports), not
     * at every connect: UCX's description of an endpoint that failed in the
     * handshake's last progress, before its error callback ran, read freed
     * memory (a client's SEGV in ucp_ep_print_info, found under
     * AddressSanitizer while a rank was killed) */
    sfs_debug("connected to %s (node %u) over %s", conn->name, conn->server_node,
              sfs_tp_conn_transports(conn));
    *conn_p = conn;
    return 0;
}

/* Tell the server this session is over, so it does not wait for the
 * transport to notice the process is gone. Best effort, no reply. */
static void sfs_tp_conn_say_bye(sfs_tp_conn_t *conn)
{
    ucp_request_param_t param;
    sfs_proto_hdr_t     hdr;
    uint8_t             packed[SFS_PROTO_HDR_SIZE];
    ucs_status_ptr_t    sreq;

    memset(&hdr, 0, sizeof(hdr));
    hdr.magic      = SFS_PROTO_MAGIC;
    hdr.version    = SFS_PROTO_VERSION;
    hdr.opcode     = SFS_OP_BYE;
    hdr.request_id = conn->worker->next_request_id++;
    hdr.session_id = conn->session_id;
    hdr.sender     = conn->worker->node_id;
    sfs_tp_hdr_seal(&hdr, &conn->session_key, NULL, 0, packed);
    memset(&param, 0, sizeof(param));
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags        = UCP_AM_SEND_FLAG_EAGER;
    sreq = ucp_am_send_nbx(conn->ep, SFS_AM_ID_REQUEST, packed, sizeof(packed), NULL, 0, &param);
    if (UCS_PTR_IS_PTR(sreq)) {
        /* the header buffer is on this stack: finish the send before returning */
        for (int i = 0; i < 10000 && ucp_request_check_status(sreq) == UCS_INPROGRESS; i++) {
            ucp_worker_progress(conn->worker->ucp_worker);
        }
        if (ucp_request_check_status(sreq) == UCS_INPROGRESS) {
            ucp_request_cancel(conn->worker->ucp_worker, sreq);
        }
        ucp_request_free(sreq);
    }
}

void sfs_tp_conn_destroy(sfs_tp_conn_t *conn)
{
    sfs_tp_worker_t *worker;
    sfs_list_t      *elem, *tmp;

    if (!conn) {
        return;
    }
    worker = conn->worker;
    sfs_list_for_each_safe(elem, tmp, &conn->rpcs)
    {
        sfs_tp_rpc_t *rpc = sfs_container_of(elem, sfs_tp_rpc_t, conn_list);

        sfs_tp_rpc_fail(rpc, -ECANCELED, "connection to %s closed", conn->name);
    }
    if (conn->ep) {
        if (conn->authenticated && !conn->status) {
            sfs_tp_conn_say_bye(conn);
        }
        /* a healthy endpoint is flushed first, so the goodbye arrives */
        sfs_tp_ep_close(worker, conn->ep, conn->status != 0, conn->name);
        conn->ep = NULL;
    }
    /* RPCs whose buffers UCX still holds settle during this progress */
    for (int i = 0; i < 100; i++) {
        ucp_worker_progress(worker->ucp_worker);
    }
    sfs_list_del(&conn->list);
    free(conn);
}

int sfs_tp_conn_status(const sfs_tp_conn_t *conn)
{
    return conn->status;
}

const char *sfs_tp_conn_name(const sfs_tp_conn_t *conn)
{
    return conn->name;
}

uint32_t sfs_tp_conn_server_node(const sfs_tp_conn_t *conn)
{
    return conn->server_node;
}

uint64_t sfs_tp_conn_server_uuid(const sfs_tp_conn_t *conn)
{
    return conn->server_uuid;
}

uint64_t sfs_tp_conn_server_features(const sfs_tp_conn_t *conn)
{
    return conn->server_features;
}

const char *sfs_tp_conn_transports(sfs_tp_conn_t *conn)
{
    if (!conn->transports[0] && conn->ep && !conn->status) {
        sfs_tp_describe_transports(conn->ep, conn->transports, sizeof(conn->transports));
    }
    return conn->transports[0] ? conn->transports : "unknown";
}
