/* sfs_munge_attack: the MUNGE handshake made by hand, and the attacks on
 * credentials (1-4). */
#include "sfs_munge_attack.h"

/* ---------------------------------------------------------------------- */
/* The MUNGE handshake by hand                                             */

void hand_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    (void)ep;
    sfs_tp_conn_fail(arg, -ECONNRESET, ucs_status_string(status));
}

/* HELLO with method MUNGE as `peer_kind`; derives the session key from
 * the key exchange (the server's credential is left alone: a reflection
 * attack sends it back undecoded). */
static const char *hand_host = "attacker"; /* what the HELLO by hand says */

int hello_by_hand(uint32_t peer_kind, hand_t *h)
{
    sfs_peer_address_t  peer;
    ucp_ep_params_t     ep_params;
    sfs_tp_conn_t      *conn = calloc(1, sizeof(*conn));
    uint8_t             args[SFS_PROTO_ARGS_MAX];
    sfs_wbuf_t          wb;
    sfs_rbuf_t          rb;
    sfs_tp_rpc_params_t params;
    sfs_tp_rpc_t       *rpc;
    const void         *reply_args;
    size_t              length;
    int                 rc;

    memset(h, 0, sizeof(*h));
    conn->worker = worker;
    sfs_list_init(&conn->rpcs);
    snprintf(conn->name, sizeof(conn->name), "management (by hand)");
    memset(&ep_params, 0, sizeof(ep_params));
    ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                           UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    if (sfs_peer_address_unpack(mgmt_address, mgmt_address_length, "management", &peer) != 0) {
        free(conn);
        return -EPROTO;
    }
    ep_params.address         = peer.ucx; /* by worker address: management takes those too */
    ep_params.err_mode        = UCP_ERR_HANDLING_MODE_PEER;
    ep_params.err_handler.cb  = hand_err_cb;
    ep_params.err_handler.arg = conn;
    if (ucp_ep_create(worker->ucp_worker, &ep_params, &conn->ep) != UCS_OK) {
        free(conn);
        return -EHOSTUNREACH;
    }
    sfs_list_add_tail(&worker->conns, &conn->list);
    h->conn            = conn;
    h->hello.peer_kind = peer_kind;
    h->hello.peer_uuid = sfs_auth_random_u64();
    h->hello.pid       = (uint32_t)getpid();
    h->hello.method    = SFS_AUTH_METHOD_MUNGE;
    h->hello.features  = SFS_FEATURES_THIS;
    snprintf(h->hello.host, sizeof(h->hello.host), "%s", hand_host);
    snprintf(h->hello.program, sizeof(h->hello.program), "sfs_munge_attack");
    sfs_auth_random(h->hello.nonce, sizeof(h->hello.nonce));
    h->hello.address        = worker->address;
    h->hello.address_length = worker->address_length;
    sfs_auth_kx_keypair(&h->kx);
    memcpy(h->hello.kx_public, h->kx.public_key, SFS_KX_PUBLIC_SIZE);
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_hello_req_pack(&wb, &h->hello);
    memset(&params, 0, sizeof(params));
    params.opcode      = SFS_OP_HELLO;
    params.args        = args;
    params.args_length = wb.length;
    params.timeout_ms  = 5000;
    rc                 = sfs_tp_call(conn, &params, &rpc);
    if (rc == 0) {
        reply_args = sfs_tp_rpc_reply_args(rpc, &length);
        sfs_rbuf_init(&rb, reply_args, length);
        sfs_proto_hello_reply_unpack(&rb, &h->reply);
        rc = rb.error ? -EPROTO : 0;
    }
    sfs_tp_rpc_release(rpc);
    if (rc == 0) {
        conn->session_id = h->reply.session_id;
        rc               = sfs_auth_kx_client_key(&h->kx, h->reply.kx_public, &conn->session_key);
    }
    return rc;
}

/* A credential from munged at `socket` with `payload`; `ttl` 0: munged's
 * default. NULL on failure (said). */
char *munge_cred(const char *socket, const void *payload, size_t length, int ttl)
{
    munge_ctx_t ctx = munge_ctx_create();
    munge_err_t err;
    char       *cred = NULL;

    if (!ctx || munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket) != EMUNGE_SUCCESS ||
        (ttl && munge_ctx_set(ctx, MUNGE_OPT_TTL, ttl) != EMUNGE_SUCCESS)) {
        printf("  (cannot set up a MUNGE context for %s)\n", socket);
        munge_ctx_destroy(ctx);
        return NULL;
    }
    err = munge_encode(&cred, ctx, payload, (int)length);
    if (err != EMUNGE_SUCCESS) {
        printf("  (munged at %s: %s)\n", socket, munge_ctx_strerror(ctx));
        free(cred);
        cred = NULL;
    }
    munge_ctx_destroy(ctx);
    return cred;
}

/* The credential an honest client sends for handshake `h`. */
char *client_cred(const hand_t *h, const char *socket, int ttl)
{
    uint8_t bound[32];

    sfs_auth_transcript("client", h->hello.nonce, h->reply.nonce, h->reply.session_id,
                        h->kx.public_key, h->reply.kx_public, bound);
    return munge_cred(socket, bound, sizeof(bound), ttl);
}

char auth_detail[SFS_TP_DETAIL_MAX];

int auth_by_hand(hand_t *h, const char *cred)
{
    sfs_auth_req_t     *auth = calloc(1, sizeof(*auth));
    uint8_t             args[SFS_PROTO_ARGS_MAX];
    sfs_wbuf_t          wb;
    sfs_tp_rpc_params_t params;
    sfs_tp_rpc_t       *rpc;
    int                 rc;

    snprintf(auth->credential, sizeof(auth->credential), "%s", cred ? cred : "");
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_auth_req_pack(&wb, auth);
    free(auth);
    memset(&params, 0, sizeof(params));
    params.opcode      = SFS_OP_AUTH;
    params.args        = args;
    params.args_length = wb.length;
    params.timeout_ms  = 5000;
    rc                 = sfs_tp_call(h->conn, &params, &rpc);
    snprintf(auth_detail, sizeof(auth_detail), "%s",
             rc == 0 ? "accepted" : (rpc ? sfs_tp_rpc_error_detail(rpc) : sfs_error_detail()));
    sfs_tp_rpc_release(rpc);
    if (rc == 0) {
        h->conn->authenticated = 1;
    }
    return rc;
}

void hand_close(hand_t *h)
{
    sfs_tp_conn_destroy(h->conn);
    h->conn = NULL;
}

/* A handshake by hand (its HELLO returned `hello_rc`) whose AUTH carries
 * `cred`: refused? */
void expect_refused(hand_t *h, int hello_rc, const char *cred, const char *what)
{
    int rc;

    if (hello_rc || !h->conn) {
        CHECK(0, "%s: the HELLO failed (%s)", what, sfs_strerror(hello_rc));
        hand_close(h);
        return;
    }
    rc = auth_by_hand(h, cred);
    CHECK(rc == -EACCES || rc == -EKEYEXPIRED, "%s is refused: %s (%s)", what, sfs_strerror(rc),
          auth_detail);
    hand_close(h);
}

/* ---------------------------------------------------------------------- */
/* 1-4: credentials                                                        */

hand_t victim; /* an honest session by hand, kept for 7 */

void attack_credentials(const char *other_socket)
{
    hand_t h;
    char  *sent, *spare, *cred;
    int    rc;

    /* 1. nothing */
    rc = hello_by_hand(SFS_PEER_CLIENT, &h);
    CHECK(rc == 0, "a MUNGE HELLO is answered (%s)", rc ? sfs_error_detail() : "");
    expect_refused(&h, rc, "", "1. an AUTH with an empty credential");
    CHECK(honest_ping() == 0, "the service still serves honest MUNGE clients");

    /* 2. an honest handshake, then its credentials in other handshakes */
    hand_host = "victim";
    rc        = hello_by_hand(SFS_PEER_CLIENT, &victim);
    hand_host = "attacker";
    sent      = rc ? NULL : client_cred(&victim, munge_socket, 0);
    spare     = rc ? NULL : client_cred(&victim, munge_socket, 0);
    rc        = rc ? rc : auth_by_hand(&victim, sent);
    CHECK(rc == 0 && sent && spare, "an honest handshake by hand is accepted (%s)", auth_detail);
    rc = hello_by_hand(SFS_PEER_CLIENT, &h);
    expect_refused(&h, rc, sent,
                   "2a. the credential of an accepted handshake sent again (a replay)");
    rc = hello_by_hand(SFS_PEER_CLIENT, &h);
    expect_refused(&h, rc, spare, "2b. a credential made for another handshake, never used");
    rc = hello_by_hand(SFS_PEER_CLIENT, &h);
    expect_refused(&h, rc, h.reply.credential,
                   "2c. the server's own credential (uid 0) sent back to it (a reflection)");
    free(sent);
    free(spare);
    CHECK(conn_answers(victim.conn) == 0, "the honest session by hand is served");
    CHECK(honest_ping() == 0, "the service still serves honest MUNGE clients");

    /* 3. expired */
    rc   = hello_by_hand(SFS_PEER_CLIENT, &h);
    cred = rc ? NULL : client_cred(&h, munge_socket, 1);
    CHECK(cred != NULL, "a credential with a time to live of 1 s is made");
    sleep(3);
    expect_refused(&h, rc, cred, "3. that credential 3 s later (expired)");
    free(cred);
    CHECK(honest_ping() == 0, "the service still serves honest MUNGE clients");

    /* 4. another munged, another key */
    if (!other_socket) {
        printf("skipped: 4. (no second munged given)\n");
        return;
    }
    rc   = hello_by_hand(SFS_PEER_CLIENT, &h);
    cred = rc ? NULL : client_cred(&h, other_socket, 0);
    CHECK(cred != NULL, "a munged with another key makes a credential for the handshake");
    expect_refused(&h, rc, cred,
                   "4. a credential from a munged with another key (forged identity)");
    free(cred);
    CHECK(honest_ping() == 0, "the service still serves honest MUNGE clients");
}
