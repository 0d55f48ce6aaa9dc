/*
 * The serving side of the handshake, and sessions: one per authenticated
 * peer, with the endpoint replies go out on. A session that does not finish
 * the handshake in time is dropped; so is one whose endpoint fails.
 */
#define SFS_LOG_FAC "auth"
#include "sfs_tp_internal.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_munge.h"

#include <sodium.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

sfs_tp_session_t *sfs_tp_session_find(sfs_tp_worker_t *worker, uint64_t session_id)
{
    sfs_hash_link_t *link = sfs_hash_find(&worker->sessions, session_id);

    return link ? sfs_container_of(link, sfs_tp_session_t, link) : NULL;
}

void sfs_tp_session_get(sfs_tp_session_t *session)
{
    session->refcount++;
}

void sfs_tp_session_put(sfs_tp_session_t *session)
{
    if (--session->refcount == 0) {
        free(session->accepted);
        free(session);
    }
}

static void sfs_tp_session_close_ep_cb(void *arg)
{
    sfs_tp_session_t *session = arg;

    if (session->ep) {
        /* a live peer gets what was already queued (e.g. a refusal) first */
        char peer[SFS_TP_PEER_NAME_MAX];

        snprintf(peer, sizeof(peer), "%s pid %u (%s, session %016lx)", session->peer_host,
                 session->peer_pid, session->peer_program, (unsigned long)session->id);
        sfs_tp_ep_close(session->worker, session->ep, session->peer_failed, peer);
        session->ep = NULL;
    }
    sfs_tp_session_put(session);
}

void sfs_tp_session_close(sfs_tp_session_t *session, const char *why)
{
    sfs_tp_worker_t *worker = session->worker;

    if (session->closed) {
        return;
    }
    session->closed = 1;
    if (!session->authenticated) {
        worker->pending_sessions--;
    }
    sfs_hash_del(&worker->sessions, &session->link);
    sfs_list_del(&session->list);
    if (session->authenticated) {
        sfs_debug("session %016lx (%s pid %u) ended: %s", (unsigned long)session->id,
                  session->peer_host, session->peer_pid, why);
        if (worker->on_session_end) {
            worker->on_session_end(session, worker->handler_arg);
        }
    }
    /* the endpoint is closed outside any UCX callback; the table's
     * reference is dropped there */
    if (sfs_tp_worker_post(worker, sfs_tp_session_close_ep_cb, session) != 0) {
        sfs_tp_session_close_ep_cb(session);
    }
}

void sfs_tp_session_peer_failed(sfs_tp_session_t *session, ucp_ep_h ep, ucs_status_t status)
{
    char why[128];

    (void)ep;
    snprintf(why, sizeof(why), "peer gone (%s)", ucs_status_string(status));
    session->peer_failed = 1;
    sfs_tp_session_close(session, why);
}

static void sfs_tp_session_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    sfs_tp_session_peer_failed(arg, ep, status);
}

void sfs_tp_sessions_expire(sfs_tp_worker_t *worker, uint64_t now_ms)
{
    sfs_list_t *elem, *tmp;

    if (worker->pending_sessions == 0) {
        return;
    }
    sfs_list_for_each_safe(elem, tmp, &worker->session_list)
    {
        sfs_tp_session_t *session = sfs_container_of(elem, sfs_tp_session_t, list);

        if (!session->authenticated && now_ms - session->created_ms > SFS_TP_HANDSHAKE_TIMEOUT_MS) {
            sfs_warn("authentication refused: %s pid %u (%s) did not finish the handshake",
                     session->peer_host, session->peer_pid, session->peer_program);
            sfs_tp_session_close(session, "handshake timed out");
        }
    }
}

/* The small-reply block: header and arguments, then the iov descriptor,
 * then the worker (to count the send done). */
typedef struct {
    ucp_dt_iov_t     iov;
    sfs_tp_worker_t *worker;
    uint8_t         *block;
} sfs_tp_small_tail_t;

static void sfs_tp_session_send_cb(void *request, ucs_status_t status, void *user_data)
{
    sfs_tp_small_tail_t *tail = user_data;

    (void)status;
    tail->worker->ucx_inflight--;
    free(tail->block);
    ucp_request_free(request);
}

int sfs_tp_session_send(sfs_tp_session_t *session, const uint8_t *head, size_t head_length,
                        const ucp_dt_iov_t *iov, size_t iov_count, ucp_send_nbx_callback_t cb,
                        void *cb_arg, void **ucx_req_p)
{
    ucs_status_ptr_t sreq;

    *ucx_req_p = NULL;
    if (session->closed || !session->ep) {
        return -ECONNRESET;
    }
    sreq = sfs_tp_am_send(session->ep, SFS_AM_ID_REPLY, 0, head, head_length, iov, iov_count, cb,
                          cb_arg);
    if (UCS_PTR_IS_ERR(sreq)) {
        return -ECONNRESET;
    }
    if (sreq != NULL) {
        session->worker->ucx_inflight++;
    }
    *ucx_req_p = sreq;
    return 0;
}

/* A small reply that needs no payload (handshake). The header and the
 * arguments travel in one heap block freed when the send completes. */
static void sfs_tp_session_reply_small(sfs_tp_session_t *session, const sfs_proto_hdr_t *req_hdr,
                                       int status, const void *args, size_t args_length,
                                       const sfs_auth_key_t *key)
{
    sfs_proto_hdr_t hdr;
    /* the iov descriptor must outlive the call too (UCX reads it when a
     * deferred send goes out): it lives at the end of the block */
    size_t               tail_at = (SFS_PROTO_HDR_SIZE + args_length + 15) & ~(size_t)15;
    uint8_t             *block   = malloc(tail_at + sizeof(sfs_tp_small_tail_t));
    sfs_tp_small_tail_t *tail;
    void                *sreq;
    int                  rc;

    if (!block) {
        return;
    }
    memset(&hdr, 0, sizeof(hdr));
    hdr.magic       = SFS_PROTO_MAGIC;
    hdr.version     = SFS_PROTO_VERSION;
    hdr.opcode      = req_hdr->opcode;
    hdr.flags       = SFS_PROTO_FLAG_REPLY;
    hdr.args_length = (uint32_t)args_length;
    hdr.request_id  = req_hdr->request_id;
    hdr.session_id  = req_hdr->session_id;
    hdr.status      = status;
    hdr.sender      = session->worker->node_id;
    if (args_length) {
        memcpy(block + SFS_PROTO_HDR_SIZE, args, args_length);
    }
    sfs_tp_hdr_seal(&hdr, key, block + SFS_PROTO_HDR_SIZE, args_length, block);
    tail             = (sfs_tp_small_tail_t *)(block + tail_at);
    tail->iov.buffer = block + SFS_PROTO_HDR_SIZE;
    tail->iov.length = args_length;
    tail->worker     = session->worker;
    tail->block      = block;
    if (sfs_tp_args_in_header(session->worker, args_length)) {
        rc = sfs_tp_session_send(session, block, SFS_PROTO_HDR_SIZE + args_length, NULL, 0,
                                 sfs_tp_session_send_cb, tail, &sreq);
    } else {
        rc = sfs_tp_session_send(session, block, SFS_PROTO_HDR_SIZE, &tail->iov,
                                 args_length ? 1 : 0, sfs_tp_session_send_cb, tail, &sreq);
    }
    if (rc != 0) {
        free(block);
        return;
    }
    if (sreq == NULL) {
        free(block);
    }
}

static void sfs_tp_error_args(int status, const char *text, uint8_t *buf, size_t cap,
                              size_t *length_p)
{
    sfs_wbuf_t wb;

    (void)status;
    sfs_wbuf_init(&wb, buf, cap);
    sfs_wbuf_str(&wb, text);
    *length_p = wb.error ? 0 : wb.length;
}

/* MUNGE: refuse when this service does not take them; else a key exchange
 * and our credential, bound to this handshake. */
static int sfs_tp_session_munge_hello(sfs_tp_session_t  *session,
                                      const uint8_t      client_public[SFS_KX_PUBLIC_SIZE],
                                      sfs_hello_reply_t *reply)
{
    sfs_tp_worker_t *worker = session->worker;
    sfs_auth_kx_t    kx;
    uint8_t          bound[32];
    char            *cred = NULL;
    int              rc;

    if (!worker->on_identity) {
        return sfs_error_set(-EPROTONOSUPPORT,
                             "this server takes no MUNGE credentials (the service runs in the "
                             "shared-secret mode: clients need the connauth file)");
    }
    sfs_auth_kx_keypair(&kx);
    memcpy(session->client_public, client_public, SFS_KX_PUBLIC_SIZE);
    memcpy(session->server_public, kx.public_key, SFS_KX_PUBLIC_SIZE);
    memcpy(reply->kx_public, kx.public_key, SFS_KX_PUBLIC_SIZE);
    rc = sfs_auth_kx_server_key(&kx, client_public, &session->session_key);
    sodium_memzero(&kx, sizeof(kx));
    if (rc) {
        return rc;
    }
    sfs_auth_transcript("server", session->client_nonce, session->server_nonce, session->id,
                        session->client_public, session->server_public, bound);
    rc = sfs_munge_encode(worker->munge_socket, bound, sizeof(bound), &cred);
    if (rc) {
        return rc;
    }
    snprintf(reply->credential, sizeof(reply->credential), "%s", cred);
    rc = strlen(cred) < sizeof(reply->credential) ? 0 : -EOVERFLOW;
    free(cred);
    return rc ? sfs_error_set(rc, "MUNGE credential too long") : 0;
}

/* MUNGE: the client's credential, made for this handshake, and who that
 * makes it (the service's policy). */
static int sfs_tp_session_munge_auth(sfs_tp_session_t *session, const sfs_auth_req_t *auth)
{
    sfs_tp_worker_t *worker = session->worker;
    sfs_munge_info_t info;
    sfs_tp_proof_t   proof;
    uint8_t          bound[32];
    int              rc;

    sfs_auth_transcript("client", session->client_nonce, session->server_nonce, session->id,
                        session->client_public, session->server_public, bound);
    rc = sfs_munge_decode(worker->munge_socket, auth->credential, bound, sizeof(bound), &info);
    if (rc) {
        return rc;
    }
    memset(&proof, 0, sizeof(proof));
    proof.method       = SFS_AUTH_METHOD_MUNGE;
    proof.uid          = info.uid;
    proof.gid          = info.gid;
    proof.origin_ipv4  = info.origin_ipv4;
    proof.peer_host    = session->peer_host;
    proof.peer_pid     = session->peer_pid;
    proof.peer_program = session->peer_program;
    memset(&session->cred, 0, sizeof(session->cred));
    return worker->on_identity(worker->handler_arg, &proof, &session->cred);
}

/* A peer must have what this version needs of it (sfs_proto.h); bits it
 * has that we do not know are ignored. */
static int sfs_tp_session_check_features(const sfs_tp_session_t *session,
                                         const sfs_hello_req_t  *hello)
{
    uint64_t need    = hello->peer_kind == SFS_PEER_SERVER ? SFS_FEATURES_REQUIRED_OF_SERVER
                                                           : SFS_FEATURES_REQUIRED_OF_CLIENT;
    uint64_t missing = need & ~hello->features;
    char     names[256];

    if (!missing) {
        return 0;
    }
    return sfs_error_set(-EPROTONOSUPPORT,
                         "refused %s pid %u (%s): it is of an older stripefs version that lacks "
                         "%s, which this server requires; upgrade it",
                         session->peer_host, session->peer_pid, session->peer_program,
                         sfs_features_string(missing, names, sizeof(names)));
}

/* The session's endpoint: the one our listener accepted and the HELLO came
 * on, or else one to the worker address the peer sent (a peer told to
 * connect by worker address, STRIPEFS_UCX_LISTENER=0). */
static int sfs_tp_session_open_ep(sfs_tp_session_t *session, ucp_ep_h reply_ep,
                                  const sfs_hello_req_t *hello)
{
    sfs_tp_worker_t   *worker = session->worker;
    sfs_peer_address_t address;
    ucp_ep_params_t    ep_params;
    ucs_status_t       status;
    char               peer[SFS_TP_PEER_NAME_MAX];

    session->accepted = sfs_tp_accepted_claim(worker, reply_ep, session);
    if (session->accepted) {
        session->ep = reply_ep;
        return 0;
    }
    snprintf(peer, sizeof(peer), "%s pid %u", hello->host, hello->pid);
    if (sfs_peer_address_unpack(hello->address, hello->address_length, peer, &address) != 0) {
        sfs_tp_note_dropped(worker, sfs_error_detail());
        return -EPROTO;
    }
    memset(&ep_params, 0, sizeof(ep_params));
    ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                           UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    ep_params.address         = address.ucx;
    ep_params.err_mode        = UCP_ERR_HANDLING_MODE_PEER;
    ep_params.err_handler.cb  = sfs_tp_session_err_cb;
    ep_params.err_handler.arg = session;
    status                    = ucp_ep_create(worker->ucp_worker, &ep_params, &session->ep);
    if (status != UCS_OK) {
        sfs_warn("cannot reach back to %s: %s", peer, ucs_status_string(status));
        return -EHOSTUNREACH;
    }
    return 0;
}

/* A HELLO refused: the reply says why (sfs_error_detail()), then the
 * session is closed (`closed_why`, for the log). */
static void sfs_tp_session_refuse(sfs_tp_session_t *session, const sfs_proto_hdr_t *hdr, int rc,
                                  const char *closed_why)
{
    uint8_t out[SFS_ERROR_DETAIL_MAX + 128];
    size_t  out_length;

    sfs_tp_error_args(rc, sfs_error_detail(), out, sizeof(out), &out_length);
    sfs_tp_session_reply_small(session, hdr, rc, out, out_length, NULL);
    sfs_tp_session_close(session, closed_why);
}

void sfs_tp_session_handle_hello(sfs_tp_worker_t *worker, const sfs_proto_hdr_t *hdr,
                                 const void *args, size_t args_length, ucp_ep_h reply_ep)
{
    sfs_hello_req_t    hello;
    sfs_hello_reply_t *reply;
    sfs_tp_session_t  *session;
    uint8_t            out[SFS_CRED_TEXT_MAX + 1024];
    sfs_wbuf_t         wb;
    sfs_rbuf_t         rb;
    int                rc;

    sfs_rbuf_init(&rb, args, args_length);
    sfs_proto_hello_req_unpack(&rb, &hello);
    if (rb.error || sfs_rbuf_remaining(&rb) != 0 || hdr->session_id != 0) {
        sfs_tp_note_dropped(worker, "malformed HELLO");
        return;
    }
    if (worker->pending_sessions >= SFS_TP_MAX_PENDING_SESSIONS) {
        sfs_tp_note_dropped(worker, "too many unauthenticated sessions");
        return;
    }
    if (!SFS_ALLOC_PTR(session)) {
        return;
    }
    session->worker    = worker;
    session->refcount  = 1; /* the table's reference */
    session->peer_kind = hello.peer_kind;
    session->peer_uuid = hello.peer_uuid;
    session->peer_pid  = hello.pid;
    snprintf(session->peer_host, sizeof(session->peer_host), "%s", hello.host);
    snprintf(session->peer_program, sizeof(session->peer_program), "%s", hello.program);
    memcpy(session->client_nonce, hello.nonce, SFS_NONCE_SIZE);
    sfs_auth_random(session->server_nonce, SFS_NONCE_SIZE);
    session->created_ms = sfs_tp_now_ms();
    do {
        session->id = sfs_auth_random_u64();
    } while (session->id == 0 || sfs_tp_session_find(worker, session->id));

    if (sfs_tp_session_open_ep(session, reply_ep, &hello) != 0) {
        free(session);
        return;
    }
    sfs_hash_add(&worker->sessions, &session->link, session->id);
    sfs_list_add_tail(&worker->session_list, &session->list);
    worker->pending_sessions++;

    session->method = hello.method;
    rc              = sfs_tp_session_check_features(session, &hello);
    if (rc) {
        sfs_warn("%s", sfs_error_detail());
        sfs_tp_session_refuse(session, hdr, rc, "peer too old");
        return;
    }
    if (worker->peer_kind != SFS_PEER_SERVER && hello.peer_uuid == worker->uuid &&
        hello.pid == (uint32_t)getpid()) {
        /* a client's own HELLO: its connection to a peer that has gone away
         * came back to it (TCP connects a socket to itself when the port it
         * picks for this end is the dead peer's port). Refused as a
         * connection, so that the caller tries again or fails over. (A
         * server rank connects to itself on purpose, to its own roles:
         * sfs_tp_conn_hello tells those apart.) */
        rc = sfs_error_set(-ECONNREFUSED,
                           "the connection came back to this process (pid %u): nothing listens "
                           "at that address any more",
                           hello.pid);
        sfs_debug("%s", sfs_error_detail());
        sfs_tp_session_refuse(session, hdr, rc, "connected to itself");
        return;
    }
    if (!SFS_ALLOC_PTR(reply)) {
        sfs_tp_session_close(session, "out of memory");
        return;
    }
    reply->features    = SFS_FEATURES_THIS;
    reply->session_id  = session->id;
    reply->server_node = worker->node_id;
    reply->server_uuid = worker->uuid;
    snprintf(reply->server_host, sizeof(reply->server_host), "%s", worker->host);
    memcpy(reply->nonce, session->server_nonce, SFS_NONCE_SIZE);
    if (hello.method == SFS_AUTH_METHOD_MUNGE) {
        rc = sfs_tp_session_munge_hello(session, hello.kx_public, reply);
        if (rc) {
            sfs_warn("authentication refused: %s pid %u (%s): %s", session->peer_host,
                     session->peer_pid, session->peer_program, sfs_error_detail());
            sfs_tp_session_refuse(session, hdr, rc, "authentication refused");
            free(reply);
            return;
        }
    } else {
        if (!worker->has_key) {
            free(reply);
            sfs_tp_session_close(session, "no secret to authenticate with");
            return;
        }
        sfs_auth_server_proof(&worker->key, session->client_nonce, session->server_nonce,
                              session->id, reply->proof);
        sfs_auth_session_key(&worker->key, session->client_nonce, session->server_nonce,
                             session->id, &session->session_key);
    }
    sfs_wbuf_init(&wb, out, sizeof(out));
    sfs_proto_hello_reply_pack(&wb, reply);
    free(reply);
    sfs_tp_session_reply_small(session, hdr, 0, out, wb.length, NULL);
}

void sfs_tp_session_handle_auth(sfs_tp_worker_t *worker, const sfs_proto_hdr_t *hdr,
                                const uint8_t *packed_hdr, const void *args, size_t args_length)
{
    sfs_tp_session_t *session = sfs_tp_session_find(worker, hdr->session_id);
    sfs_auth_req_t   *auth;
    uint8_t           expected[SFS_PROOF_SIZE];
    uint8_t           out[SFS_ERROR_DETAIL_MAX + 128];
    char              why[SFS_ERROR_DETAIL_MAX + 64];
    size_t            out_length;
    sfs_wbuf_t        wb;
    sfs_rbuf_t        rb;
    int               rc = 0;

    if (!session || session->authenticated) {
        sfs_tp_note_dropped(worker, "AUTH for an unknown or finished handshake (replay?)");
        return;
    }
    if (!SFS_ALLOC_PTR(auth)) {
        return;
    }
    sfs_rbuf_init(&rb, args, args_length);
    sfs_proto_auth_req_unpack(&rb, auth);
    if (rb.error || sfs_rbuf_remaining(&rb) != 0 ||
        sfs_auth_mac_check(&session->session_key, packed_hdr, args, args_length) != 0) {
        rc = -EACCES;
        snprintf(why, sizeof(why), "%s",
                 session->method == SFS_AUTH_METHOD_MUNGE
                     ? "malformed or forged AUTH"
                     : "does not hold this cluster's connauth secret");
    } else if (session->method == SFS_AUTH_METHOD_MUNGE) {
        sfs_error_clear();
        rc = sfs_tp_session_munge_auth(session, auth);
        if (rc) {
            snprintf(why, sizeof(why), "%s", sfs_error_detail());
        }
    } else {
        sfs_auth_client_proof(&worker->key, session->client_nonce, session->server_nonce,
                              session->id, expected);
        if (sfs_auth_proof_check(expected, auth->proof) != 0) {
            rc = -EACCES;
            snprintf(why, sizeof(why), "does not hold this cluster's connauth secret");
        } else {
            memset(&session->cred, 0, sizeof(session->cred));
            session->cred.flags = SFS_CRED_SERVER;
        }
    }
    free(auth);
    if (rc) {
        sfs_warn("authentication refused: %s pid %u (%s) %s", session->peer_host, session->peer_pid,
                 session->peer_program, why);
        {
            char text[sizeof(why) + 32];

            snprintf(text, sizeof(text), "authentication refused: %s",
                     session->method == SFS_AUTH_METHOD_MUNGE ? why : "wrong connauth secret");
            sfs_tp_error_args(rc, text, out, sizeof(out), &out_length);
        }
        sfs_tp_session_reply_small(session, hdr, rc, out, out_length, NULL);
        sfs_tp_session_close(session, "authentication refused");
        return;
    }
    session->authenticated = 1;
    worker->pending_sessions--;
    sfs_tp_describe_transports(session->ep, session->transports, sizeof(session->transports));
    sfs_debug("session %016lx: %s pid %u (%s) authenticated over %s as %s%u",
              (unsigned long)session->id, session->peer_host, session->peer_pid,
              session->peer_program, session->transports,
              (session->cred.flags & SFS_CRED_SERVER) ? "server " : "uid ", session->cred.uid);
    /* the reply names our direct-copy socket (0: none), see sfs_tp_direct.c */
    sfs_wbuf_init(&wb, out, sizeof(out));
    sfs_wbuf_u64(&wb, sfs_tp_direct_id(worker));
    sfs_tp_session_reply_small(session, hdr, 0, out, wb.length, &session->session_key);
}

const sfs_cred_t *sfs_tp_session_cred(const sfs_tp_session_t *session)
{
    return &session->cred;
}

uint32_t sfs_tp_session_method(const sfs_tp_session_t *session)
{
    return session->method;
}

uint32_t sfs_tp_session_peer_kind(const sfs_tp_session_t *session)
{
    return session->peer_kind;
}

uint64_t sfs_tp_session_peer_uuid(const sfs_tp_session_t *session)
{
    return session->peer_uuid;
}

uint32_t sfs_tp_session_peer_pid(const sfs_tp_session_t *session)
{
    return session->peer_pid;
}

const char *sfs_tp_session_peer_host(const sfs_tp_session_t *session)
{
    return session->peer_host;
}

const char *sfs_tp_session_peer_program(const sfs_tp_session_t *session)
{
    return session->peer_program;
}

uint64_t sfs_tp_session_id(const sfs_tp_session_t *session)
{
    return session->id;
}

uint64_t sfs_tp_session_age_ms(const sfs_tp_session_t *session)
{
    return sfs_tp_now_ms() - session->created_ms;
}

int sfs_tp_session_peer_lost(const sfs_tp_session_t *session)
{
    return session->peer_failed;
}

const char *sfs_tp_session_transports(sfs_tp_session_t *session)
{
    /* files are handed over on disk threads: they only set a flag */
    snprintf(session->transports_shown, sizeof(session->transports_shown), "%s%s%s",
             session->transports[0] ? session->transports : "unknown",
             session->accepted ? " +listener" : "",
             __atomic_load_n(&session->files_handed, __ATOMIC_RELAXED) ? " +files" : "");
    return session->transports_shown;
}

void sfs_tp_worker_visit_sessions(sfs_tp_worker_t *worker, sfs_tp_session_visit_t visit, void *arg)
{
    sfs_list_t *elem, *tmp;

    sfs_list_for_each_safe(elem, tmp, &worker->session_list)
    {
        sfs_tp_session_t *session = sfs_container_of(elem, sfs_tp_session_t, list);

        if (session->authenticated) {
            visit(session, arg);
        }
    }
}
