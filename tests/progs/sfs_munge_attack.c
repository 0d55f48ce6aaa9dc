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
 *      HEARTBEAT, STOP
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
#define SFS_LOG_FAC "attack"
#include "sfs_tp_internal.h"

#include "sfs_auth.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_map.h"

#include <grp.h>
#include <inttypes.h>
#include <munge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define ATTACK_FILE   "/sfs_munge_attack.dat"
#define OTHER_FILE    "/sfs_munge_attack.other"
#define ATTACK_LENGTH 4096

static int              failures;
static const char      *munge_socket;
static sfs_tp_worker_t *worker;   /* honest sessions, and the victim of 7 */
static sfs_tp_worker_t *attacker; /* another process's worker, for 7 */
static void            *mgmt_address;
static size_t           mgmt_address_length;
static sfs_map_t       *map;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        printf("%s: ", (cond) ? "ok" : "FAILED");                                                  \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
        fflush(stdout);                                                                            \
        failures += !(cond);                                                                       \
    } while (0)

static int make_worker(const char *name, sfs_tp_worker_t **worker_p)
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
static int honest_conn(sfs_tp_worker_t *w, const sfs_map_node_t *node, sfs_tp_conn_t **conn_p)
{
    return node ? sfs_tp_conn_create(w, node->address, node->address_length, "server rank", 5000,
                                     conn_p)
                : sfs_tp_conn_create(w, mgmt_address, mgmt_address_length, "management", 5000,
                                     conn_p);
}

static int conn_answers(sfs_tp_conn_t *conn)
{
    sfs_tp_rpc_params_t params = {.opcode = SFS_OP_PING, .timeout_ms = 3000};
    sfs_tp_rpc_t       *rpc;
    int                 rc = sfs_tp_call(conn, &params, &rpc);

    sfs_tp_rpc_release(rpc);
    return rc;
}

/* An honest MUNGE client still gets a PING answered by every server rank. */
static int honest_ping(void)
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

static void settle(sfs_tp_worker_t *w, int ms)
{
    for (int i = 0; i < ms; i++) {
        sfs_tp_worker_progress(w, 1);
    }
}

/* ---------------------------------------------------------------------- */
/* The MUNGE handshake by hand                                             */

typedef struct {
    sfs_tp_conn_t    *conn;
    sfs_hello_req_t   hello;
    sfs_hello_reply_t reply;
    sfs_auth_kx_t     kx;
} hand_t;

static void hand_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    (void)ep;
    sfs_tp_conn_fail(arg, -ECONNRESET, ucs_status_string(status));
}

/* HELLO with method MUNGE as `peer_kind`; derives the session key from
 * the key exchange (the server's credential is left alone: a reflection
 * attack sends it back undecoded). */
static const char *hand_host = "attacker"; /* what the HELLO by hand says */

static int hello_by_hand(uint32_t peer_kind, hand_t *h)
{
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
    ep_params.address         = mgmt_address;
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
static char *munge_cred(const char *socket, const void *payload, size_t length, int ttl)
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
static char *client_cred(const hand_t *h, const char *socket, int ttl)
{
    uint8_t bound[32];

    sfs_auth_transcript("client", h->hello.nonce, h->reply.nonce, h->reply.session_id,
                        h->kx.public_key, h->reply.kx_public, bound);
    return munge_cred(socket, bound, sizeof(bound), ttl);
}

static char auth_detail[SFS_TP_DETAIL_MAX];

static int auth_by_hand(hand_t *h, const char *cred)
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

static void hand_close(hand_t *h)
{
    sfs_tp_conn_destroy(h->conn);
    h->conn = NULL;
}

/* A handshake by hand (its HELLO returned `hello_rc`) whose AUTH carries
 * `cred`: refused? */
static void expect_refused(hand_t *h, int hello_rc, const char *cred, const char *what)
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

static hand_t victim; /* an honest session by hand, kept for 7 */

static void attack_credentials(const char *other_socket)
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

/* ---------------------------------------------------------------------- */
/* 5: a MUNGE session that says it is a server                             */

static int call_on(sfs_tp_conn_t *conn, uint32_t opcode, const void *args, size_t args_length,
                   char *detail, size_t detail_size)
{
    sfs_tp_rpc_params_t params;
    sfs_tp_rpc_t       *rpc;
    int                 rc;

    memset(&params, 0, sizeof(params));
    params.opcode      = opcode;
    params.args        = args;
    params.args_length = args_length;
    params.alloc_reply = 1;
    params.timeout_ms  = 5000;
    rc                 = sfs_tp_call(conn, &params, &rpc);
    snprintf(detail, detail_size, "%s",
             rc == 0 ? "served" : (rpc ? sfs_tp_rpc_error_detail(rpc) : sfs_error_detail()));
    sfs_tp_rpc_release(rpc);
    return rc;
}

static void attack_server_claim(void)
{
    sfs_register_req_t *reg = calloc(1, sizeof(*reg));
    uint8_t             args[SFS_PROTO_ARGS_MAX];
    char                detail[SFS_TP_DETAIL_MAX];
    sfs_wbuf_t          wb;
    hand_t              h;
    char               *cred;
    int                 rc;

    rc   = hello_by_hand(SFS_PEER_SERVER, &h);
    cred = rc ? NULL : client_cred(&h, munge_socket, 0);
    rc   = rc ? rc : auth_by_hand(&h, cred);
    free(cred);
    CHECK(rc == 0, "a MUNGE session that claims to be a server rank authenticates as root (%s)",
          auth_detail);
    if (rc) {
        hand_close(&h);
        free(reg);
        return;
    }
    /* take over rank 1 and its targets, pointing them at us */
    reg->rank         = map && map->node_count > 1 ? map->nodes[1].node_id : 1;
    reg->roles        = SFS_ROLE_STORAGE;
    reg->pid          = (uint32_t)getpid();
    reg->target_count = 1;
    snprintf(reg->host, sizeof(reg->host), "attacker");
    reg->address              = worker->address;
    reg->address_length       = worker->address_length;
    reg->targets[0].target_id = map && map->target_count ? map->targets[0].target_id : 101;
    reg->targets[0].capacity  = 1ull << 40;
    reg->targets[0].free      = 1ull << 40;
    snprintf(reg->targets[0].dir, sizeof(reg->targets[0].dir), "/tmp");
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_register_req_pack(&wb, reg);
    free(reg);
    rc = call_on(h.conn, SFS_OP_REGISTER, args, wb.length, detail, sizeof(detail));
    CHECK(rc == -EPERM, "5. REGISTER (taking over rank 1's target) on it is refused: %s (%s)",
          sfs_strerror(rc), detail);
    rc = call_on(h.conn, SFS_OP_HEARTBEAT, NULL, 0, detail, sizeof(detail));
    CHECK(rc == -EPERM, "5. HEARTBEAT on it is refused: %s (%s)", sfs_strerror(rc), detail);
    rc = call_on(h.conn, SFS_OP_STOP, NULL, 0, detail, sizeof(detail));
    CHECK(rc == -EPERM, "5. STOP (management's order to a rank) on it is refused: %s (%s)",
          sfs_strerror(rc), detail);
    hand_close(&h);
    CHECK(honest_ping() == 0, "the service still serves honest MUNGE clients");
}

/* ---------------------------------------------------------------------- */
/* 6: capabilities                                                         */

static int meta_open(sfs_tp_conn_t *meta, uint32_t opcode, const char *path, uint32_t flags,
                     sfs_attr_t *attr, sfs_cap_t *cap)
{
    sfs_meta_req_t     *req = calloc(1, sizeof(*req));
    uint8_t             args[SFS_PROTO_ARGS_MAX];
    sfs_wbuf_t          wb;
    sfs_rbuf_t          rb;
    sfs_tp_rpc_params_t params;
    sfs_tp_rpc_t       *rpc;
    const void         *reply;
    size_t              length;
    int                 rc;

    snprintf(req->path, sizeof(req->path), "%s", path);
    req->flags        = flags;
    req->mode         = 0644;
    req->stripe_count = 1;
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_meta_req_pack(&wb, opcode, req);
    free(req);
    memset(&params, 0, sizeof(params));
    params.opcode      = opcode;
    params.args        = args;
    params.args_length = wb.length;
    params.timeout_ms  = 5000;
    rc                 = sfs_tp_call(meta, &params, &rpc);
    if (rc == 0) {
        reply = sfs_tp_rpc_reply_args(rpc, &length);
        sfs_rbuf_init(&rb, reply, length);
        sfs_proto_attr_unpack(&rb, attr);
        if (opcode == SFS_OP_CREATE) {
            (void)sfs_rbuf_u8(&rb);
        }
        memset(cap, 0, sizeof(*cap));
        if (sfs_rbuf_remaining(&rb) >= SFS_CAP_WIRE_SIZE) {
            sfs_cap_unpack(&rb, cap);
        }
        rc = rb.error ? -EPROTO : 0;
    } else {
        printf("  (%s %s: %s)\n", sfs_op_name(opcode), path,
               rpc ? sfs_tp_rpc_error_detail(rpc) : sfs_error_detail());
    }
    sfs_tp_rpc_release(rpc);
    return rc;
}

static char chunk_detail[SFS_TP_DETAIL_MAX];

/* A chunk request for [0, ATTACK_LENGTH) of `entry_id` on `target_id` with
 * `cap`; READ into `in`, WRITE from `out`. */
static int chunk_call(sfs_tp_conn_t *conn, uint32_t opcode, uint32_t target_id, uint64_t entry_id,
                      const sfs_cap_t *cap, void *in, const void *out)
{
    sfs_chunk_req_t    *chunk = calloc(1, sizeof(*chunk));
    uint8_t             args[512];
    struct iovec        iov;
    sfs_wbuf_t          wb;
    sfs_tp_rpc_params_t params;
    sfs_tp_rpc_t       *rpc;
    int                 rc;

    chunk->target_id = target_id;
    chunk->entry_id  = entry_id;
    chunk->cap       = *cap;
    if (opcode == SFS_OP_READ || opcode == SFS_OP_WRITE) {
        chunk->extent_count      = 1;
        chunk->extents[0].length = ATTACK_LENGTH;
    }
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_chunk_req_pack(&wb, opcode, chunk);
    free(chunk);
    memset(&params, 0, sizeof(params));
    params.opcode      = opcode;
    params.args        = args;
    params.args_length = wb.length;
    params.timeout_ms  = 5000;
    if (opcode == SFS_OP_READ) {
        iov.iov_base           = in;
        iov.iov_len            = ATTACK_LENGTH;
        params.reply_iov       = &iov;
        params.reply_iov_count = 1;
    } else if (opcode == SFS_OP_WRITE) {
        iov.iov_base         = (void *)out;
        iov.iov_len          = ATTACK_LENGTH;
        params.payload       = &iov;
        params.payload_count = 1;
    }
    rc = sfs_tp_call(conn, &params, &rpc);
    snprintf(chunk_detail, sizeof(chunk_detail), "%s",
             rc == 0 ? "served" : (rpc ? sfs_tp_rpc_error_detail(rpc) : sfs_error_detail()));
    sfs_tp_rpc_release(rpc);
    return rc;
}

static const sfs_map_node_t *node_of_target(uint32_t target_id)
{
    const sfs_map_target_t *target = map ? sfs_map_find_target(map, target_id) : NULL;

    return target ? sfs_map_find_node(map, target->node_id) : NULL;
}

/* 6g: another user (nobody) with our valid capability. A child process
 * takes uid 65534 and runs this program again with --read-with: its own
 * MUNGE session (munged vouches for uid 65534) reads with the capability
 * granted to uid 0. */
static int read_as_nobody(char **argv, uint32_t target, uint64_t entry_id, const sfs_cap_t *cap)
{
    char  target_s[16], entry_s[32], cap_s[2 * SFS_CAP_WIRE_SIZE + 1];
    char  cap_wire[SFS_CAP_WIRE_SIZE];
    char *args[9];
    int   status = -1;
    pid_t child;

    sfs_wbuf_t wb;

    sfs_wbuf_init(&wb, cap_wire, sizeof(cap_wire));
    sfs_cap_pack(&wb, cap);
    for (size_t i = 0; i < sizeof(cap_wire); i++) {
        snprintf(cap_s + 2 * i, 3, "%02x", (uint8_t)cap_wire[i]);
    }
    snprintf(target_s, sizeof(target_s), "%u", target);
    snprintf(entry_s, sizeof(entry_s), "%" PRIu64, entry_id);
    args[0] = argv[0];
    args[1] = "--read-with";
    args[2] = argv[1];
    args[3] = argv[2];
    args[4] = argv[3];
    args[5] = target_s;
    args[6] = entry_s;
    args[7] = cap_s;
    args[8] = NULL;
    fflush(stdout);
    child = fork();
    if (child == 0) {
        if (setgroups(0, NULL) != 0 || setgid(SFS_GID_NOBODY) != 0 || setuid(SFS_UID_NOBODY) != 0) {
            perror("cannot become nobody");
            _exit(3);
        }
        execv("/proc/self/exe", args);
        perror("execv");
        _exit(3);
    }
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status)) {
        return -1;
    }
    return WEXITSTATUS(status);
}

static void attack_capabilities(char **argv)
{
    static uint8_t        content[ATTACK_LENGTH], junk[ATTACK_LENGTH], got[ATTACK_LENGTH];
    const sfs_map_node_t *meta_node = map ? sfs_map_find_node(map, map->meta_node) : NULL;
    const sfs_map_node_t *storage_node;
    sfs_tp_conn_t        *meta = NULL, *storage = NULL;
    sfs_attr_t            attr, other;
    sfs_cap_t             rw, ro, other_cap, bad;
    uint32_t              target;
    int                   rc;

    for (size_t i = 0; i < sizeof(content); i++) {
        content[i] = (uint8_t)(i * 7 + 1);
        junk[i]    = 0xee;
    }
    rc = meta_node ? honest_conn(worker, meta_node, &meta) : -ENOENT;
    rc = rc ? rc
            : meta_open(meta, SFS_OP_CREATE, ATTACK_FILE, SFS_OPEN_READ | SFS_OPEN_WRITE, &attr,
                        &rw);
    rc = rc ? rc
            : meta_open(meta, SFS_OP_CREATE, OTHER_FILE, SFS_OPEN_READ | SFS_OPEN_WRITE, &other,
                        &other_cap);
    rc = rc ? rc : meta_open(meta, SFS_OP_LOOKUP, ATTACK_FILE, SFS_OPEN_READ, &attr, &ro);
    CHECK(rc == 0 && attr.pattern_targets >= 1 && rw.access == (SFS_CAP_READ | SFS_CAP_WRITE) &&
              ro.access == SFS_CAP_READ && ro.entry_id == attr.entry_id,
          "6. two files are created and one looked up for reading: read-write and read-only "
          "capabilities (%s)",
          sfs_strerror(rc));
    if (rc || attr.pattern_targets < 1) {
        sfs_tp_conn_destroy(meta);
        return;
    }
    target       = attr.pattern.targets[0];
    storage_node = node_of_target(target);
    rc           = storage_node ? honest_conn(worker, storage_node, &storage) : -ENODEV;
    CHECK(rc == 0, "a MUNGE session to the rank of target %u (%s)", target,
          rc ? sfs_error_detail() : "");
    if (rc) {
        sfs_tp_conn_destroy(meta);
        return;
    }
    rc = chunk_call(storage, SFS_OP_WRITE, target, attr.entry_id, &rw, NULL, content);
    CHECK(rc == 0, "a WRITE with the read-write capability is served (%s)", chunk_detail);

    memset(&bad, 0, sizeof(bad));
    rc = chunk_call(storage, SFS_OP_READ, target, attr.entry_id, &bad, got, NULL);
    CHECK(rc == -EACCES, "6a. a READ with an all-zero capability is refused: %s (%s)",
          sfs_strerror(rc), chunk_detail);
    rc = chunk_call(storage, SFS_OP_CHUNK_STAT, target, attr.entry_id, &bad, NULL, NULL);
    CHECK(rc == -EACCES, "6a. a CHUNK_STAT with an all-zero capability is refused: %s (%s)",
          sfs_strerror(rc), chunk_detail);
    bad = ro;
    bad.mac[5] ^= 0x01;
    rc = chunk_call(storage, SFS_OP_READ, target, attr.entry_id, &bad, got, NULL);
    CHECK(rc == -EACCES, "6b. a READ with one MAC byte flipped is refused: %s (%s)",
          sfs_strerror(rc), chunk_detail);
    rc = chunk_call(storage, SFS_OP_READ, target, other.entry_id, &ro, got, NULL);
    CHECK(rc == -EACCES,
          "6c. a READ of another file's entry with this capability is refused: %s (%s)",
          sfs_strerror(rc), chunk_detail);
    rc = chunk_call(storage, SFS_OP_WRITE, target, attr.entry_id, &ro, NULL, junk);
    CHECK(rc == -EACCES, "6d. a WRITE with the read-only capability is refused: %s (%s)",
          sfs_strerror(rc), chunk_detail);
    rc = chunk_call(storage, SFS_OP_TRUNCATE, target, attr.entry_id, &ro, NULL, NULL);
    CHECK(rc == -EACCES, "6d. a TRUNCATE with the read-only capability is refused: %s (%s)",
          sfs_strerror(rc), chunk_detail);
    bad     = ro;
    bad.uid = 1000;
    rc      = chunk_call(storage, SFS_OP_READ, target, attr.entry_id, &bad, got, NULL);
    CHECK(rc == -EACCES, "6e. a READ with the capability's uid changed is refused: %s (%s)",
          sfs_strerror(rc), chunk_detail);
    bad = ro;
    bad.access |= SFS_CAP_WRITE;
    rc = chunk_call(storage, SFS_OP_WRITE, target, attr.entry_id, &bad, NULL, junk);
    CHECK(rc == -EACCES,
          "6e. a WRITE with write added to the read-only capability is refused: "
          "%s (%s)",
          sfs_strerror(rc), chunk_detail);
    bad = ro;
    bad.expires_s += 1000000;
    rc = chunk_call(storage, SFS_OP_READ, target, attr.entry_id, &bad, got, NULL);
    CHECK(rc == -EACCES, "6e. a READ with the capability's expiry moved on is refused: %s (%s)",
          sfs_strerror(rc), chunk_detail);

    memset(got, 0, sizeof(got));
    rc = chunk_call(storage, SFS_OP_READ, target, attr.entry_id, &ro, got, NULL);
    CHECK(rc == 0 && memcmp(got, content, sizeof(got)) == 0,
          "6f. a READ with the valid capability is served, the data as written (%s%s)",
          chunk_detail, rc == 0 && memcmp(got, content, sizeof(got)) ? ", other data" : "");
    rc = read_as_nobody(argv, target, attr.entry_id, &ro);
    CHECK(rc == 0, "6g. user nobody's READ with the capability granted to uid 0 is refused (%s)",
          rc == 0   ? "refused"
          : rc == 1 ? "served"
                    : "the child failed");
    sfs_tp_conn_destroy(storage);
    sfs_tp_conn_destroy(meta);
    printf("skipped: an expired capability (security.capability_lifetime is at least 10 s)\n");
    CHECK(honest_ping() == 0, "the service still serves honest MUNGE clients");
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
