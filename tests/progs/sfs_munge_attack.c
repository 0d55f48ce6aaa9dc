/*
 * Attacks on a service in the munge mode (users prove their uid with a
 * MUNGE credential bound to the handshake; storage I/O needs a capability
 * from the metadata server), each followed by a check that an honest MUNGE
 * client is still served:
 *   1. an AUTH with no credential
 *   2. credentials of another handshake: the one an accepted handshake
 *      sent (a replay), one made for that handshake but never sent, and the
 *      server's own credential sent back to it (a reflection)
 *   3. an expired credential (time to live 1 s)
 *   4. a credential from a munged with another key (a forged identity)
 *   5. a MUNGE session that claims to be a server rank: REGISTER,
 *      HEARTBEAT, STOP, MIRROR_REPORT, META_MIRROR_STATE
 *   6. storage I/O without a valid capability: none, a flipped MAC byte,
 *      another file's entry, read-only for WRITE and TRUNCATE, the uid, the
 *      access or the expiry changed; the valid one is served
 *   7. requests on another process's session (its session id, our key):
 *      not served, and the owner of the session is not disturbed
 *
 *   sfs_munge_attack MUNGE_SOCKET HOST PORT [OTHER_MUNGE_SOCKET]
 * Run as root (the service's uid, 0). Exit 0 when every attack was refused
 * and the service kept serving.
 */
#include "sfs_munge_attack.h"

int              failures;
const char      *munge_socket;
sfs_tp_worker_t *worker;   /* honest sessions, and the victim of 7 */
sfs_tp_worker_t *attacker; /* another process's worker, for 7 */
void            *mgmt_address;
size_t           mgmt_address_length;
sfs_map_t       *map;

int make_worker(const char *name, sfs_tp_worker_t **worker_p)
{
    sfs_tp_worker_params_t params;

    memset(&params, 0, sizeof(params));
    params.field_mask   = SFS_TP_WORKER_PARAM_MUNGE | SFS_TP_WORKER_PARAM_NAME;
    params.name         = name;
    params.munge_socket = munge_socket;
    params.munge_client = 1;
    params.service_uid  = 0;
    if (getuid() != 0) {
        /* as the client library does: another user cannot attach the
         * servers' shared memory, so same-host servers are reached over TCP */
        params.field_mask |= SFS_TP_WORKER_PARAM_UCX_TLS;
        params.ucx_tls = "^posix,sysv,cma";
    }
    return sfs_tp_worker_create(&params, worker_p);
}

/* An honest MUNGE connection to a node of the map (NULL: management). */
int honest_conn(sfs_tp_worker_t *w, const sfs_map_node_t *node, sfs_tp_conn_t **conn_p)
{
    return node ? sfs_tp_conn_create(w, node->address, node->address_length, "server rank", 5000,
                                     conn_p)
                : sfs_tp_conn_create(w, mgmt_address, mgmt_address_length, "management", 5000,
                                     conn_p);
}

int conn_answers(sfs_tp_conn_t *conn)
{
    sfs_tp_rpc_params_t params = {.opcode = SFS_OP_PING, .timeout_ms = 3000};
    sfs_tp_rpc_t       *rpc;
    int                 rc = sfs_tp_call(conn, &params, &rpc);

    sfs_tp_rpc_release(rpc);
    return rc;
}

/* An honest MUNGE client still gets a PING answered by every server rank. */
int honest_ping(void)
{
    int rc = 0;

    for (uint32_t i = 0; i < (map ? map->node_count : 1) && rc == 0; i++) {
        sfs_tp_conn_t *conn;

        rc = honest_conn(worker, map ? &map->nodes[i] : NULL, &conn);
        if (rc == 0) {
            rc = conn_answers(conn);
            sfs_tp_conn_destroy(conn);
        }
        if (rc) {
            printf("  (rank %u: %s)\n", map ? map->nodes[i].node_id : 0, sfs_error_detail());
        }
    }
    return rc;
}

void settle(sfs_tp_worker_t *w, int ms)
{
    for (int i = 0; i < ms; i++) {
        sfs_tp_worker_progress(w, 1);
    }
}

/* ---------------------------------------------------------------------- */
/* 7: another process's session                                            */

/* A raw header-only request on an endpoint of the attacker's worker. */
static void raw_send(ucp_ep_h ep, const uint8_t *hdr)
{
    ucp_request_param_t param;
    ucs_status_ptr_t    req;

    memset(&param, 0, sizeof(param));
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags        = UCP_AM_SEND_FLAG_EAGER;
    req = ucp_am_send_nbx(ep, SFS_AM_ID_REQUEST, hdr, SFS_PROTO_HDR_SIZE, NULL, 0, &param);
    if (UCS_PTR_IS_PTR(req)) {
        while (ucp_request_check_status(req) == UCS_INPROGRESS) {
            ucp_worker_progress(attacker->ucp_worker);
        }
        ucp_request_free(req);
    }
}

/* A PING from the attacker's own (fresh) session that names the victim's
 * session, its MAC made with the attacker's key; `request_id` 0: the
 * attacker's next. The server must not serve it: no answer. */
static int forged_ping(uint64_t request_id)
{
    sfs_tp_rpc_params_t params = {.opcode = SFS_OP_PING, .timeout_ms = 2000};
    sfs_tp_conn_t      *conn;
    sfs_tp_rpc_t       *rpc;
    int                 rc = honest_conn(attacker, NULL, &conn);

    if (rc) {
        printf("  (the attacker's own session: %s)\n", sfs_error_detail());
        return 0; /* counts as served: the check fails */
    }
    rc = conn_answers(conn);
    if (rc) {
        printf("  (the attacker's own session does not answer: %s)\n", sfs_strerror(rc));
        sfs_tp_conn_destroy(conn);
        return 0;
    }
    if (request_id) {
        attacker->next_request_id = request_id;
    }
    conn->session_id = victim.conn->session_id;
    rc               = sfs_tp_call(conn, &params, &rpc);
    sfs_tp_rpc_release(rpc);
    conn->authenticated = 0; /* no goodbye in the victim's name */
    sfs_tp_conn_destroy(conn);
    return rc;
}

static void attack_other_session(void)
{
    sfs_tp_conn_t  *conn;
    sfs_proto_hdr_t hdr;
    uint8_t         packed[SFS_PROTO_HDR_SIZE];
    int             rc;

    rc = make_worker("sfs_munge_attack (attacker)", &attacker);
    if (rc || !victim.conn) {
        CHECK(0, "the attacker's worker: %s", rc ? sfs_error_detail() : "no victim session");
        return;
    }
    CHECK(conn_answers(victim.conn) == 0,
          "the victim's session (the honest handshake by hand) is served");

    rc = forged_ping(0);
    CHECK(rc == -ETIMEDOUT, "7. a PING on the victim's session with our key gets no answer (%s)",
          sfs_strerror(rc));
    rc = conn_answers(victim.conn);
    CHECK(rc == 0, "the victim's session goes on (%s)", sfs_strerror(rc));

    /* one that names the victim's next request id: the server's refusal
     * goes to the victim, sealed with the victim's key, and must not be
     * taken for the answer to the victim's own next request */
    rc = forged_ping(worker->next_request_id);
    CHECK(rc == -ETIMEDOUT,
          "7. a PING on the victim's session with the victim's next request id gets no answer (%s)",
          sfs_strerror(rc));
    rc = conn_answers(victim.conn);
    CHECK(rc == 0,
          "7. the victim's next PING (that request id) is answered by the server, not by the "
          "refusal of the attacker's (%s)",
          sfs_strerror(rc));
    settle(worker, 200);
    rc = conn_answers(victim.conn);
    CHECK(rc == 0, "the victim's session goes on (%s)", sfs_strerror(rc));

    /* a malformed message (protocol version 99) that names the victim's
     * session: the server may drop it, but must not end the victim's
     * session for what another process sent */
    rc = honest_conn(attacker, NULL, &conn);
    if (rc) {
        CHECK(0, "the attacker's own session: %s", sfs_error_detail());
        return;
    }
    memset(&hdr, 0, sizeof(hdr));
    hdr.magic      = SFS_PROTO_MAGIC;
    hdr.version    = SFS_PROTO_VERSION;
    hdr.opcode     = SFS_OP_PING;
    hdr.request_id = attacker->next_request_id++;
    hdr.session_id = victim.conn->session_id;
    sfs_tp_hdr_seal(&hdr, &conn->session_key, NULL, 0, packed);
    packed[4] = 99;
    raw_send(conn->ep, packed);
    settle(attacker, 300);
    rc = conn_answers(conn);
    CHECK(rc == 0, "the attacker's own session goes on (%s)", sfs_strerror(rc));
    sfs_tp_conn_destroy(conn);
    rc = conn_answers(victim.conn);
    CHECK(rc == 0,
          "7. after another process's malformed message naming the victim's session, the victim "
          "is still served (%s)",
          sfs_strerror(rc));
    hand_close(&victim);
    CHECK(honest_ping() == 0, "the service still serves honest MUNGE clients");
}

static int fetch_map(void)
{
    sfs_tp_rpc_params_t params = {.opcode = SFS_OP_GET_MAP, .alloc_reply = 1, .timeout_ms = 5000};
    sfs_tp_conn_t      *conn;
    sfs_tp_rpc_t       *rpc;
    int                 rc = honest_conn(worker, NULL, &conn);

    if (rc) {
        return rc;
    }
    rc = sfs_tp_call(conn, &params, &rpc);
    if (rc == 0) {
        rc = sfs_map_unpack(sfs_tp_rpc_reply_payload(rpc), sfs_tp_rpc_reply_payload_length(rpc),
                            &map);
    }
    sfs_tp_rpc_release(rpc);
    sfs_tp_conn_destroy(conn);
    return rc;
}

/* --read-with MUNGE_SOCKET HOST PORT TARGET ENTRY CAP_HEX (run as another
 * user by read_as_nobody): exit 0 when the READ is refused, 1 when served. */
static int read_with(char **argv)
{
    static uint8_t        got[ATTACK_LENGTH];
    uint8_t               wire[SFS_CAP_WIRE_SIZE];
    uint32_t              target = (uint32_t)strtoul(argv[4], NULL, 10);
    uint64_t              entry  = strtoull(argv[5], NULL, 10);
    const sfs_map_node_t *node;
    sfs_tp_conn_t        *conn;
    sfs_rbuf_t            rb;
    sfs_cap_t             cap;
    int                   rc;

    for (size_t i = 0; i < sizeof(wire); i++) {
        unsigned byte = 0;

        if (strlen(argv[6]) != 2 * sizeof(wire) || sscanf(argv[6] + 2 * i, "%2x", &byte) != 1) {
            return 2;
        }
        wire[i] = (uint8_t)byte;
    }
    sfs_rbuf_init(&rb, wire, sizeof(wire));
    sfs_cap_unpack(&rb, &cap);
    munge_socket = argv[1];
    rc           = make_worker("sfs_munge_attack (nobody)", &worker);
    rc           = rc ? rc
                      : sfs_tp_bootstrap_fetch(argv[2], (uint16_t)atoi(argv[3]), 5000, &mgmt_address,
                                               &mgmt_address_length);
    rc           = rc ? rc : fetch_map();
    node         = rc ? NULL : node_of_target(target);
    rc           = node ? honest_conn(worker, node, &conn) : -ENODEV;
    if (rc) {
        fprintf(stderr, "uid %u: %s\n", (unsigned)getuid(), sfs_error_detail());
        return 2;
    }
    rc = chunk_call(conn, SFS_OP_READ, target, entry, &cap, got, NULL);
    printf("  (uid %u: READ of entry %" PRIu64 ": %s, %s)\n", (unsigned)getuid(), entry,
           sfs_strerror(rc), chunk_detail);
    sfs_tp_conn_destroy(conn);
    sfs_tp_worker_destroy(worker);
    return rc == -EACCES ? 0 : rc == 0 ? 1 : 2;
}

int main(int argc, char **argv)
{
    int rc;

    if (argc == 8 && strcmp(argv[1], "--read-with") == 0) {
        return read_with(argv + 1);
    }

    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s MUNGE_SOCKET HOST PORT [OTHER_MUNGE_SOCKET]\n", argv[0]);
        return 2;
    }
    munge_socket = argv[1];
    rc           = make_worker("sfs_munge_attack", &worker);
    if (rc == 0) {
        rc = sfs_tp_bootstrap_fetch(argv[2], (uint16_t)atoi(argv[3]), 5000, &mgmt_address,
                                    &mgmt_address_length);
    }
    if (rc) {
        fprintf(stderr, "setup: %s\n", sfs_error_detail());
        return 2;
    }
    CHECK(honest_ping() == 0, "an honest MUNGE client is served before the attacks");
    rc = fetch_map();
    CHECK(rc == 0 && map->node_count >= 1, "the cluster map: %u ranks, %u targets (%s)",
          map ? map->node_count : 0, map ? map->target_count : 0, sfs_strerror(rc));
    if (rc) {
        return 1;
    }
    CHECK(honest_ping() == 0, "an honest MUNGE client is served by every rank");
    attack_credentials(argc == 5 ? argv[4] : NULL);
    attack_server_claim();
    attack_capabilities(argv);
    attack_other_session();
    sfs_map_destroy(map);
    free(mgmt_address);
    if (attacker) {
        sfs_tp_worker_destroy(attacker);
    }
    sfs_tp_worker_destroy(worker);
    printf("%d check%s failed\n", failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
