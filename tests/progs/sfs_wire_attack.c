/*
 * Attacks on a running server, each followed by a check that the server
 * still serves honest clients:
 *   - a request with no session, and one with a made-up session id
 *   - a wrong protocol version, lengths that disagree with the message
 *   - a request whose arguments are truncated
 *   - a request with a forged MAC
 *   - a replayed AUTH (proof of an earlier handshake), a forged AUTH,
 *     an AUTH for a session that does not exist
 *   - peers of other versions, and a connection that comes back to this
 *     process (sfs_wire_attack_versions.c)
 *   - a captured request (a MKDIR) sent again after the directory was
 *     removed, on the session's endpoint and on another one: not served
 *   - same-host file handoff: another process that holds the name of the
 *     client's file socket gets no file; a forged handoff sent to the
 *     client's socket is not taken for the server's
 *   - a session that claims another process's pid and asks for its reads
 *     to be copied into that process (same-host direct copies): refused,
 *     the other process's memory is untouched; an honest session gets them
 *
 *   sfs_wire_attack HOST PORT CONNAUTH
 * Exit 0 when every attack was refused and the server kept serving.
 */
#define SFS_LOG_FAC "attack"
#include "sfs_wire_attack.h"

#include "sfs_errno.h"
#include "sfs_log.h"

#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

int              failures;
sfs_tp_worker_t *worker;
void            *address;
size_t           address_length;
uint64_t         hand_features = SFS_FEATURES_THIS;

int honest_ping(void)
{
    sfs_tp_rpc_params_t params = {.opcode = SFS_OP_PING, .timeout_ms = 5000};
    sfs_tp_conn_t      *conn;
    sfs_tp_rpc_t       *rpc;
    int                 rc;

    rc = sfs_tp_conn_create(worker, address, address_length, "server", 5000, &conn);
    if (rc) {
        return rc;
    }
    rc = sfs_tp_call(conn, &params, &rpc);
    sfs_tp_rpc_release(rpc);
    sfs_tp_conn_destroy(conn);
    return rc;
}

/* Send a raw active message on an endpoint (header bytes as given). */
static void raw_send(ucp_ep_h ep, const uint8_t *hdr, const void *data, size_t length)
{
    ucp_request_param_t param;
    ucs_status_ptr_t    req;

    memset(&param, 0, sizeof(param));
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags        = UCP_AM_SEND_FLAG_EAGER;
    req = ucp_am_send_nbx(ep, SFS_AM_ID_REQUEST, hdr, SFS_PROTO_HDR_SIZE, data, length, &param);
    if (UCS_PTR_IS_PTR(req)) {
        while (ucp_request_check_status(req) == UCS_INPROGRESS) {
            ucp_worker_progress(worker->ucp_worker);
        }
        ucp_request_free(req);
    }
    for (int i = 0; i < 200; i++) {
        sfs_tp_worker_progress(worker, 1);
    }
}

static void header_for(sfs_tp_conn_t *conn, uint32_t opcode, uint32_t args_length,
                       uint64_t payload_length, const void *args, uint8_t *out, int seal)
{
    sfs_proto_hdr_t hdr;

    memset(&hdr, 0, sizeof(hdr));
    hdr.magic          = SFS_PROTO_MAGIC;
    hdr.version        = SFS_PROTO_VERSION;
    hdr.opcode         = (uint16_t)opcode;
    hdr.args_length    = args_length;
    hdr.request_id     = worker->next_request_id++;
    hdr.session_id     = conn ? conn->session_id : 0;
    hdr.payload_length = payload_length;
    sfs_tp_hdr_seal(&hdr, seal && conn ? &conn->session_key : NULL, args, args_length, out);
}

/* The connection still answers (0) or is gone (error). */
static int conn_answers(sfs_tp_conn_t *conn)
{
    sfs_tp_rpc_params_t params = {.opcode = SFS_OP_PING, .timeout_ms = 3000};
    sfs_tp_rpc_t       *rpc;
    int                 rc = sfs_tp_call(conn, &params, &rpc);

    sfs_tp_rpc_release(rpc);
    return rc;
}

static void attack_no_session(void)
{
    sfs_tp_conn_t      *conn;
    sfs_tp_rpc_params_t params = {.opcode = SFS_OP_PING, .timeout_ms = 2000};
    sfs_tp_rpc_t       *rpc;
    int                 rc;

    /* a real connection whose session id we replace with a made-up one */
    rc = sfs_tp_conn_create(worker, address, address_length, "server", 5000, &conn);
    if (rc) {
        CHECK(0, "connect: %s", sfs_error_detail());
        return;
    }
    conn->session_id ^= 0x5a5a5a5a5a5a5a5aull;
    rc = sfs_tp_call(conn, &params, &rpc);
    sfs_tp_rpc_release(rpc);
    CHECK(rc == -ETIMEDOUT, "a request with a made-up session id is not served (%s)",
          sfs_strerror(rc));
    sfs_tp_conn_destroy(conn);
    CHECK(honest_ping() == 0, "the server still serves honest clients");
}

static void attack_malformed_headers(void)
{
    sfs_tp_conn_t *conn;
    uint8_t        hdr[SFS_PROTO_HDR_SIZE];
    uint8_t        junk[64] = {0};
    int            rc;

    rc = sfs_tp_conn_create(worker, address, address_length, "server", 5000, &conn);
    if (rc) {
        CHECK(0, "connect: %s", sfs_error_detail());
        return;
    }
    CHECK(conn_answers(conn) == 0, "an authenticated session answers before the attack");
    header_for(conn, SFS_OP_PING, 0, 0, NULL, hdr, 1);
    hdr[4] = 99; /* protocol version 99 */
    raw_send(conn->ep, hdr, NULL, 0);
    rc = conn_answers(conn);
    /* dropped, but not held against the session it names: anyone could
     * name it */
    CHECK(rc == 0, "a message of protocol version 99 is dropped; the session goes on (%s)",
          sfs_strerror(rc));
    sfs_tp_conn_destroy(conn);

    rc = sfs_tp_conn_create(worker, address, address_length, "server", 5000, &conn);
    if (rc == 0) {
        /* the header claims a 1 TiB payload; 64 bytes follow */
        header_for(conn, SFS_OP_WRITE, 0, 1ull << 40, NULL, hdr, 1);
        raw_send(conn->ep, hdr, junk, sizeof(junk));
        rc = conn_answers(conn);
        CHECK(rc == 0, "a header claiming 1 TiB of payload is dropped; the session goes on (%s)",
              sfs_strerror(rc));
        sfs_tp_conn_destroy(conn);
    }
    rc = sfs_tp_conn_create(worker, address, address_length, "server", 5000, &conn);
    if (rc == 0) {
        header_for(conn, SFS_OP_PING, 40, 0, junk, hdr, 1); /* 40 bytes said, 64 sent */
        raw_send(conn->ep, hdr, junk, sizeof(junk));
        rc = conn_answers(conn);
        CHECK(rc == 0, "lengths that disagree with the message: dropped, the session goes on (%s)",
              sfs_strerror(rc));
        sfs_tp_conn_destroy(conn);
    }
    CHECK(honest_ping() == 0, "the server still serves honest clients");
}

static void attack_bad_arguments(void)
{
    sfs_tp_conn_t      *conn;
    sfs_tp_rpc_params_t params;
    sfs_tp_rpc_t       *rpc;
    uint8_t             args[16] = {0xa0, 0x0f, '/', 'x'}; /* a 4000-byte path, 2 bytes sent */
    sfs_auth_key_t      real;
    int                 rc;

    rc = sfs_tp_conn_create(worker, address, address_length, "server", 5000, &conn);
    if (rc) {
        CHECK(0, "connect: %s", sfs_error_detail());
        return;
    }
    memset(&params, 0, sizeof(params));
    params.opcode      = SFS_OP_LOOKUP;
    params.args        = args;
    params.args_length = 4;
    params.timeout_ms  = 5000;
    rc                 = sfs_tp_call(conn, &params, &rpc);
    CHECK(rc == -EBADMSG || rc == -EOPNOTSUPP || rc == -ENAMETOOLONG,
          "truncated LOOKUP arguments get an error reply: %s (%s)", sfs_strerror(rc),
          rpc ? sfs_tp_rpc_error_detail(rpc) : "");
    sfs_tp_rpc_release(rpc);

    /* a forged MAC: sign with a wrong session key */
    real = conn->session_key;
    conn->session_key.bytes[0] ^= 0xff;
    memset(&params, 0, sizeof(params));
    params.opcode     = SFS_OP_PING;
    params.timeout_ms = 2000;
    rc                = sfs_tp_call(conn, &params, &rpc);
    CHECK(rc == -ETIMEDOUT, "a request with a forged MAC is dropped unanswered: %s",
          sfs_strerror(rc));
    sfs_tp_rpc_release(rpc);
    conn->session_key = real;
    sfs_tp_conn_destroy(conn); /* our side gave the connection up at the timeout */
    CHECK(honest_ping() == 0, "the server still serves honest clients after the forged request");
}

/* A handshake by hand, to replay and forge its last step. */
static int hello_by_hand_as(sfs_tp_conn_t **conn_p, sfs_hello_req_t *hello,
                            sfs_hello_reply_t *reply, uint32_t pid)
{
    sfs_peer_address_t  peer;
    ucp_ep_params_t     ep_params;
    sfs_tp_conn_t      *conn = calloc(1, sizeof(*conn));
    uint8_t             args[1024];
    sfs_wbuf_t          wb;
    sfs_rbuf_t          rb;
    sfs_tp_rpc_params_t params;
    sfs_tp_rpc_t       *rpc;
    const void         *reply_args;
    size_t              length;
    int                 rc;

    conn->worker = worker;
    sfs_list_init(&conn->rpcs);
    snprintf(conn->name, sizeof(conn->name), "server (by hand)");
    memset(&ep_params, 0, sizeof(ep_params));
    ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    ep_params.err_mode   = UCP_ERR_HANDLING_MODE_PEER;
    /* by worker address: the server takes those too (STRIPEFS_UCX_LISTENER=0) */
    if (sfs_peer_address_unpack(address, address_length, "server", &peer) != 0) {
        free(conn);
        return -EPROTO;
    }
    ep_params.address = peer.ucx;
    if (ucp_ep_create(worker->ucp_worker, &ep_params, &conn->ep) != UCS_OK) {
        free(conn);
        return -EHOSTUNREACH;
    }
    sfs_list_add_tail(&worker->conns, &conn->list);
    memset(hello, 0, sizeof(*hello));
    hello->peer_kind = SFS_PEER_CLIENT;
    hello->method    = SFS_AUTH_METHOD_SECRET;
    hello->features  = hand_features;
    hello->pid       = pid;
    snprintf(hello->host, sizeof(hello->host), "attacker");
    snprintf(hello->program, sizeof(hello->program), "sfs_wire_attack");
    sfs_auth_random(hello->nonce, sizeof(hello->nonce));
    hello->address        = worker->address;
    hello->address_length = worker->address_length;
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_hello_req_pack(&wb, hello);
    memset(&params, 0, sizeof(params));
    params.opcode      = SFS_OP_HELLO;
    params.args        = args;
    params.args_length = wb.length;
    params.timeout_ms  = 5000;
    rc                 = sfs_tp_call(conn, &params, &rpc);
    if (rc == 0) {
        reply_args = sfs_tp_rpc_reply_args(rpc, &length);
        sfs_rbuf_init(&rb, reply_args, length);
        sfs_proto_hello_reply_unpack(&rb, reply);
        conn->session_id = reply->session_id;
        sfs_auth_session_key(&worker->key, hello->nonce, reply->nonce, reply->session_id,
                             &conn->session_key);
    }
    sfs_tp_rpc_release(rpc);
    *conn_p = conn;
    return rc;
}

int hello_by_hand(sfs_tp_conn_t **conn_p, sfs_hello_req_t *hello, sfs_hello_reply_t *reply)
{
    return hello_by_hand_as(conn_p, hello, reply, (uint32_t)getpid());
}

static uint64_t direct_id; /* from the last accepted AUTH reply */

static int auth_by_hand(sfs_tp_conn_t *conn, const uint8_t proof[SFS_PROOF_SIZE])
{
    sfs_auth_req_t      auth;
    uint8_t             args[64];
    sfs_wbuf_t          wb;
    sfs_tp_rpc_params_t params;
    sfs_tp_rpc_t       *rpc;
    int                 rc;

    memcpy(auth.proof, proof, SFS_PROOF_SIZE);
    auth.credential[0] = '\0';
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_auth_req_pack(&wb, &auth);
    memset(&params, 0, sizeof(params));
    params.opcode      = SFS_OP_AUTH;
    params.args        = args;
    params.args_length = wb.length;
    params.timeout_ms  = 3000;
    rc                 = sfs_tp_call(conn, &params, &rpc);
    if (rc == 0) {
        size_t      length;
        const void *reply = sfs_tp_rpc_reply_args(rpc, &length);
        sfs_rbuf_t  rb;

        sfs_rbuf_init(&rb, reply, length);
        direct_id = length >= 8 ? sfs_rbuf_u64(&rb) : 0;
    }
    sfs_tp_rpc_release(rpc);
    return rc;
}

static void attack_handshakes(void)
{
    sfs_hello_req_t   hello1, hello2;
    sfs_hello_reply_t reply1, reply2;
    sfs_tp_conn_t    *first, *second, *third;
    uint8_t           proof1[SFS_PROOF_SIZE], forged[SFS_PROOF_SIZE];
    int               rc;

    rc = hello_by_hand(&first, &hello1, &reply1);
    CHECK(rc == 0, "a first HELLO is answered (%s)", rc ? sfs_error_detail() : "");
    sfs_auth_client_proof(&worker->key, hello1.nonce, reply1.nonce, reply1.session_id, proof1);
    rc = auth_by_hand(first, proof1);
    CHECK(rc == 0, "its AUTH with the right proof is accepted");

    /* the same proof for a new handshake: the server's nonce differs */
    rc = hello_by_hand(&second, &hello2, &reply2);
    CHECK(rc == 0 && reply2.session_id != reply1.session_id, "a second HELLO gets a new session");
    rc = auth_by_hand(second, proof1);
    CHECK(rc == -EACCES, "a replayed AUTH is refused: %s", sfs_strerror(rc));

    rc = hello_by_hand(&third, &hello2, &reply2);
    sfs_auth_random(forged, sizeof(forged));
    rc = rc ? rc : auth_by_hand(third, forged);
    CHECK(rc == -EACCES, "a forged AUTH is refused: %s", sfs_strerror(rc));

    /* an AUTH for a session that was never offered */
    third->session_id = 0x1234567890abcdefull;
    rc                = auth_by_hand(third, proof1);
    CHECK(rc == -ETIMEDOUT, "an AUTH for an unknown session is ignored: %s", sfs_strerror(rc));
    sfs_tp_conn_destroy(first);
    sfs_tp_conn_destroy(second);
    sfs_tp_conn_destroy(third);
    CHECK(honest_ping() == 0, "the server still serves honest clients");
}

/* A chunk request on target 101 for `entry_id`, one extent [0, length) when
 * `length` is not 0, with `params` (payload or reply buffers) filled in by
 * the caller; *rpc_p as sfs_tp_call sets it. */
static int chunk_call(sfs_tp_conn_t *conn, uint32_t opcode, uint64_t entry_id, uint64_t length,
                      sfs_tp_rpc_params_t *params, sfs_tp_rpc_t **rpc_p)
{
    sfs_chunk_req_t *chunk = calloc(1, sizeof(*chunk));
    uint8_t          args[256];
    sfs_wbuf_t       wb;

    chunk->target_id         = 101;
    chunk->entry_id          = entry_id;
    chunk->extent_count      = length ? 1 : 0;
    chunk->extents[0].length = length;
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_chunk_req_pack(&wb, opcode, chunk);
    free(chunk);
    params->opcode      = opcode;
    params->args        = args;
    params->args_length = wb.length;
    params->timeout_ms  = 5000;
    return sfs_tp_call(conn, params, rpc_p);
}

/* A 128 KiB READ of a chunk file that does not exist (zeros) into `buf`;
 * *delivered_p says whether the server copied it straight into our memory. */
#define DIRECT_READ_SIZE (128u << 10)
static int read_into(sfs_tp_conn_t *conn, void *buf, int *delivered_p)
{
    struct iovec        iov    = {.iov_base = buf, .iov_len = DIRECT_READ_SIZE};
    sfs_tp_rpc_params_t params = {.reply_iov = &iov, .reply_iov_count = 1};
    sfs_tp_rpc_t       *rpc;
    int rc = chunk_call(conn, SFS_OP_READ, 0x5eed5eed5eedull, DIRECT_READ_SIZE, &params, &rpc);

    *delivered_p = rpc && rpc->reply_delivered;
    sfs_tp_rpc_release(rpc);
    return rc;
}

static void settle(int ms)
{
    for (int i = 0; i < ms; i++) {
        sfs_tp_worker_progress(worker, 1);
    }
}

/* A metadata request on a path, packed as the client packs it. */
static size_t meta_args(uint32_t opcode, const char *path, uint8_t *args, size_t size)
{
    sfs_meta_req_t req;
    sfs_wbuf_t     wb;

    memset(&req, 0, sizeof(req));
    snprintf(req.path, sizeof(req.path), "%s", path);
    req.mode = 0755;
    sfs_wbuf_init(&wb, args, size);
    sfs_proto_meta_req_pack(&wb, opcode, &req);
    return wb.error ? 0 : wb.length;
}

static int meta_call(sfs_tp_conn_t *conn, uint32_t opcode, const char *path)
{
    uint8_t             args[SFS_PROTO_ARGS_MAX];
    sfs_tp_rpc_params_t params;
    sfs_tp_rpc_t       *rpc;
    int                 rc;

    memset(&params, 0, sizeof(params));
    params.opcode      = opcode;
    params.args        = args;
    params.args_length = meta_args(opcode, path, args, sizeof(args));
    params.alloc_reply = 1;
    params.timeout_ms  = 5000;
    rc                 = sfs_tp_call(conn, &params, &rpc);
    sfs_tp_rpc_release(rpc);
    return rc;
}

/* A request captured on the wire and sent again later must not be served
 * twice: here a MKDIR, replayed after the directory was removed. */
static void attack_replay(void)
{
    sfs_tp_conn_t *victim, *attacker;
    uint8_t        hdr[SFS_PROTO_HDR_SIZE];
    uint8_t        args[SFS_PROTO_ARGS_MAX];
    size_t         args_length = meta_args(SFS_OP_MKDIR, "/replayed", args, sizeof(args));
    int            rc          = -1;

    if (sfs_tp_conn_create(worker, address, address_length, "server", 5000, &victim) != 0 ||
        sfs_tp_conn_create(worker, address, address_length, "server", 5000, &attacker) != 0) {
        CHECK(0, "connect: %s", sfs_error_detail());
        return;
    }
    /* the victim's MKDIR, as it went over the wire */
    header_for(victim, SFS_OP_MKDIR, (uint32_t)args_length, 0, args, hdr, 1);
    raw_send(victim->ep, hdr, args, args_length);
    for (int i = 0; i < 50 && rc != 0; i++) {
        rc = meta_call(victim, SFS_OP_LOOKUP, "/replayed");
        if (rc) {
            settle(100);
        }
    }
    CHECK(rc == 0, "the original MKDIR is served (%s)", sfs_strerror(rc));
    rc = meta_call(victim, SFS_OP_RMDIR, "/replayed");
    CHECK(rc == 0, "the directory is removed (%s)", sfs_strerror(rc));

    /* sent again on the victim's endpoint, and from the attacker's own */
    raw_send(victim->ep, hdr, args, args_length);
    raw_send(attacker->ep, hdr, args, args_length);
    settle(1000);
    rc = meta_call(attacker, SFS_OP_LOOKUP, "/replayed");
    CHECK(rc == -ENOENT, "the replayed MKDIR is not served again: the directory stays gone (%s)",
          sfs_strerror(rc));
    CHECK(conn_answers(victim) == 0, "the victim's session goes on after the replays");
    sfs_tp_conn_destroy(victim);
    sfs_tp_conn_destroy(attacker);
}

#define HANDOFF_ENTRY 0x0ff1ce0ff1ceull

/* WRITE `length` bytes at 0 of chunk file HANDOFF_ENTRY on target 101. */
static int write_chunk(sfs_tp_conn_t *conn, size_t length)
{
    uint8_t            *data   = calloc(1, length);
    struct iovec        iov    = {.iov_base = data, .iov_len = length};
    sfs_tp_rpc_params_t params = {.payload = &iov, .payload_count = 1};
    sfs_tp_rpc_t       *rpc;
    int                 rc = chunk_call(conn, SFS_OP_WRITE, HANDOFF_ENTRY, length, &params, &rpc);

    sfs_tp_rpc_release(rpc);
    free(data);
    return rc;
}

/* CHUNK_OPEN of HANDOFF_ENTRY; with `take`, the descriptor into *fd_p. */
static int open_chunk(sfs_tp_conn_t *conn, int take, int *fd_p)
{
    sfs_tp_rpc_params_t params = {0};
    sfs_tp_rpc_t       *rpc;
    int                 rc = chunk_call(conn, SFS_OP_CHUNK_OPEN, HANDOFF_ENTRY, 0, &params, &rpc);

    if (rc == 0 && take) {
        rc = sfs_tp_rpc_take_fd(rpc, fd_p);
    }
    sfs_tp_rpc_release(rpc);
    return rc;
}

/* The child of attack_handoff_squatter: holds the name of our file socket
 * and reports (exit status 1) whether a file ever reached it. */
static void squatter(int ready_fd)
{
    struct sockaddr_un addr;
    socklen_t          addr_length = sfs_tp_unix_name("files", worker->uuid, &addr);
    int                sock        = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct pollfd      pfd;
    int                got_fd = 0;

    if (sock < 0 || bind(sock, (struct sockaddr *)&addr, addr_length) != 0 ||
        listen(sock, 4) != 0) {
        _exit(2);
    }
    if (write(ready_fd, "r", 1) != 1) {
        _exit(2);
    }
    pfd.fd     = sock;
    pfd.events = POLLIN;
    while (poll(&pfd, 1, 4000) == 1) {
        char            byte[256];
        char            control[CMSG_SPACE(sizeof(int))];
        struct iovec    iov = {.iov_base = byte, .iov_len = sizeof(byte)};
        struct msghdr   mh;
        struct cmsghdr *cmsg;
        int             conn = accept(sock, NULL, NULL);

        memset(&mh, 0, sizeof(mh));
        mh.msg_iov        = &iov;
        mh.msg_iovlen     = 1;
        mh.msg_control    = control;
        mh.msg_controllen = sizeof(control);
        if (conn >= 0 && recvmsg(conn, &mh, 0) > 0) {
            for (cmsg = CMSG_FIRSTHDR(&mh); cmsg; cmsg = CMSG_NXTHDR(&mh, cmsg)) {
                got_fd |= cmsg->cmsg_type == SCM_RIGHTS;
            }
        }
        if (conn >= 0) {
            close(conn);
        }
    }
    _exit(got_fd ? 1 : 0);
}

/* Another process of this host that holds the name of the client's file
 * socket (the name is derived from the client's uuid, which crossed the
 * wire in HELLO) must not be handed the client's files. */
static void attack_handoff_squatter(void)
{
    sfs_tp_conn_t *conn;
    int            pipe_fds[2], status = -1, rc;
    char           ready;
    pid_t          child;

    if (sfs_tp_conn_create(worker, address, address_length, "server", 5000, &conn) != 0) {
        CHECK(0, "connect: %s", sfs_error_detail());
        return;
    }
    settle(200); /* the server checks our pid proof */
    rc = write_chunk(conn, 4096);
    CHECK(rc == 0, "a chunk file to hand over is written (%s)", sfs_strerror(rc));
    if (pipe(pipe_fds) != 0) {
        CHECK(0, "pipe: %s", strerror(errno));
        return;
    }
    child = fork();
    if (child == 0) {
        close(pipe_fds[0]);
        squatter(pipe_fds[1]);
    }
    close(pipe_fds[1]);
    if (child < 0 || read(pipe_fds[0], &ready, 1) != 1) {
        CHECK(0, "the squatting process did not start");
        close(pipe_fds[0]);
        return;
    }
    close(pipe_fds[0]);
    rc = open_chunk(conn, 0, NULL);
    CHECK(rc == -EPERM, "a handoff whose socket is held by another process is refused (%s)",
          sfs_strerror(rc));
    waitpid(child, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the process holding the socket got no file (exit status %d)",
          WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    sfs_tp_conn_destroy(conn);
}

/* A local process that connects to the client's file socket first and
 * sends a file of its own, tagged with the request id the client will use
 * next: the client must skip it and take the server's. */
static void attack_handoff_forged(void)
{
    sfs_tp_conn_t *conn;
    char           bogus_path[] = "/tmp/sfs-attack-bogus.XXXXXX";
    int            bogus        = mkstemp(bogus_path);
    struct stat    bogus_st, st;
    int            status = -1, fd = -1, rc;
    pid_t          child;

    if (bogus < 0 || fstat(bogus, &bogus_st) != 0 ||
        sfs_tp_conn_create(worker, address, address_length, "server", 5000, &conn) != 0) {
        CHECK(0, "setup: %s", sfs_error_detail());
        return;
    }
    unlink(bogus_path);
    settle(200);
    rc = sfs_tp_conn_files_ready(conn);
    CHECK(rc == 0, "the client listens for same-host files (%s)", sfs_strerror(rc));
    child = fork();
    if (child == 0) {
        struct sockaddr_un addr;
        socklen_t          addr_length = sfs_tp_unix_name("files", worker->uuid, &addr);
        uint8_t            msg[SFS_PROTO_HDR_SIZE + 16];
        char               control[CMSG_SPACE(sizeof(int))];
        struct iovec       iov = {.iov_base = msg, .iov_len = sizeof(msg)};
        struct msghdr      mh;
        struct cmsghdr    *cmsg;
        sfs_proto_hdr_t    hdr;
        sfs_auth_key_t     wrong;
        sfs_wbuf_t         wb;
        int                sock = socket(AF_UNIX, SOCK_STREAM, 0);

        memset(&hdr, 0, sizeof(hdr));
        hdr.magic       = SFS_PROTO_MAGIC;
        hdr.version     = SFS_PROTO_VERSION;
        hdr.opcode      = SFS_OP_CHUNK_OPEN;
        hdr.flags       = SFS_PROTO_FLAG_REPLY;
        hdr.args_length = 16;
        hdr.request_id  = worker->next_request_id; /* the parent's next one */
        hdr.session_id  = conn->session_id;
        sfs_wbuf_init(&wb, msg + SFS_PROTO_HDR_SIZE, 16);
        sfs_wbuf_u64(&wb, (uint64_t)bogus_st.st_dev);
        sfs_wbuf_u64(&wb, (uint64_t)bogus_st.st_ino);
        sfs_auth_random(wrong.bytes, sizeof(wrong.bytes));
        sfs_tp_hdr_seal(&hdr, &wrong, msg + SFS_PROTO_HDR_SIZE, 16, msg);
        memset(&mh, 0, sizeof(mh));
        memset(control, 0, sizeof(control));
        mh.msg_iov        = &iov;
        mh.msg_iovlen     = 1;
        mh.msg_control    = control;
        mh.msg_controllen = sizeof(control);
        cmsg              = CMSG_FIRSTHDR(&mh);
        cmsg->cmsg_level  = SOL_SOCKET;
        cmsg->cmsg_type   = SCM_RIGHTS;
        cmsg->cmsg_len    = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cmsg), &bogus, sizeof(int));
        _exit(sock >= 0 && connect(sock, (struct sockaddr *)&addr, addr_length) == 0 &&
                      sendmsg(sock, &mh, 0) == (ssize_t)sizeof(msg)
                  ? 0
                  : 2);
    }
    waitpid(child, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "another process queued a forged file on the client's socket");
    rc = open_chunk(conn, 1, &fd);
    CHECK(rc == 0 && fd >= 0 && fstat(fd, &st) == 0 && st.st_ino != bogus_st.st_ino &&
              st.st_size == 4096,
          "the client skips the forged file and takes the server's chunk file (%s, %ld bytes)",
          sfs_strerror(rc), rc == 0 ? (long)st.st_size : -1L);
    if (fd >= 0) {
        close(fd);
    }
    close(bogus);
    sfs_tp_conn_destroy(conn);
}

static uint8_t victim_buf[DIRECT_READ_SIZE]; /* same address in the forked victim */

static void attack_direct_copies(void)
{
    sfs_hello_req_t   hello;
    sfs_hello_reply_t reply;
    sfs_tp_conn_t    *conn;
    uint8_t           proof[SFS_PROOF_SIZE];
    uint8_t          *own = malloc(DIRECT_READ_SIZE);
    int               to_victim[2], delivered = 0, status = 0, rc;
    pid_t             victim;

    /* honest: a session on this host gets its read copied in directly */
    rc = sfs_tp_conn_create(worker, address, address_length, "server", 5000, &conn);
    if (rc || !own) {
        CHECK(0, "connect: %s", sfs_error_detail());
        free(own);
        return;
    }
    settle(300); /* let the server take our pid proof */
    memset(own, 0xab, DIRECT_READ_SIZE);
    rc = read_into(conn, own, &delivered);
    CHECK(rc == 0 && delivered && own[0] == 0 && own[DIRECT_READ_SIZE - 1] == 0,
          "an honest same-host session gets its 128 KiB read copied in directly (%s, %s)",
          sfs_strerror(rc), delivered ? "delivered" : "not delivered");
    sfs_tp_conn_destroy(conn);

    /* forged: claim a victim's pid; the proof comes from us */
    memset(victim_buf, 0xab, sizeof(victim_buf));
    if (pipe(to_victim) != 0) {
        CHECK(0, "pipe: %s", strerror(errno));
        free(own);
        return;
    }
    victim = fork();
    if (victim == 0) {
        char go;

        close(to_victim[1]);
        if (read(to_victim[0], &go, 1) != 1) {
            _exit(3);
        }
        for (size_t i = 0; i < sizeof(victim_buf); i++) {
            if (victim_buf[i] != 0xab) {
                _exit(1);
            }
        }
        _exit(0);
    }
    close(to_victim[0]);
    rc = hello_by_hand_as(&conn, &hello, &reply, (uint32_t)victim);
    sfs_auth_client_proof(&worker->key, hello.nonce, reply.nonce, reply.session_id, proof);
    rc = rc ? rc : auth_by_hand(conn, proof);
    CHECK(rc == 0 && direct_id != 0,
          "a session claiming pid %d authenticates (the server "
          "offers direct copies)",
          (int)victim);
    sfs_tp_direct_offer(conn, direct_id);
    settle(300);
    rc = read_into(conn, victim_buf, &delivered);
    CHECK(rc == 0 && !delivered, "its read is answered through UCX, not copied into pid %d (%s)",
          (int)victim, sfs_strerror(rc));
    if (write(to_victim[1], "x", 1) != 1 || waitpid(victim, &status, 0) != victim) {
        kill(victim, SIGKILL);
        status = -1;
    }
    close(to_victim[1]);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the victim process's memory is untouched (status %d)", status);
    sfs_tp_conn_destroy(conn);
    free(own);
    CHECK(honest_ping() == 0, "the server still serves honest clients");
}

int main(int argc, char **argv)
{
    sfs_tp_worker_params_t params;
    sfs_auth_key_t         key;
    int                    rc;

    if (argc != 4) {
        fprintf(stderr, "usage: %s HOST PORT CONNAUTH\n", argv[0]);
        return 2;
    }
    if (sfs_auth_load_connauth(argv[3], &key) != 0) {
        fprintf(stderr, "%s\n", sfs_error_detail());
        return 2;
    }
    memset(&params, 0, sizeof(params));
    params.field_mask = SFS_TP_WORKER_PARAM_KEY | SFS_TP_WORKER_PARAM_NAME;
    params.key        = &key;
    params.name       = "sfs_wire_attack";
    rc                = sfs_tp_worker_create(&params, &worker);
    if (rc == 0) {
        rc = sfs_tp_bootstrap_fetch(argv[1], (uint16_t)atoi(argv[2]), 5000, &address,
                                    &address_length);
    }
    if (rc) {
        fprintf(stderr, "setup: %s\n", sfs_error_detail());
        return 2;
    }
    CHECK(honest_ping() == 0, "an honest client is served before the attacks");
    attack_no_session();
    attack_malformed_headers();
    attack_bad_arguments();
    attack_handshakes();
    attack_old_peer();
    attack_self_connect();
    attack_replay();
    attack_handoff_squatter();
    attack_handoff_forged();
    attack_direct_copies();
    free(address);
    sfs_tp_worker_destroy(worker);
    printf("%d check%s failed\n", failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
