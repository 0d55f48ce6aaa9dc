/*
 * Incoming requests: checked, fully received (rendezvous payloads into a
 * pooled buffer), authenticated, handed to the server's handler, and
 * answered with sfs_tp_request_reply().
 */
#define SFS_LOG_FAC "ucx"
#include "sfs_tp_internal.h"
#include "sfs_tp_iov.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void sfs_tp_request_free(sfs_tp_request_t *req)
{
    if (req->reply_iov != req->reply_iov_inline) {
        free(req->reply_iov);
    }
    free(req->reply_head);
    free(req->direct_iov);
    sfs_tp_buf_put(req->worker, req->data);
    sfs_tp_session_put(req->session);
    free(req);
}

/* A request id this session has served before, or one too old to tell:
 * dropped without a reply (a reply would reach the honest sender, whose
 * original request may still be waiting for its own). */
static int sfs_tp_request_replayed(sfs_tp_request_t *req)
{
    sfs_tp_session_t       *session = req->session;
    sfs_tp_replay_verdict_t verdict = sfs_tp_replay_check(&session->replay, req->hdr.request_id);

    if (verdict == SFS_TP_REPLAY_FRESH) {
        return 0;
    }
    /* a flood of replays must not flood the log */
    if (session->replays++ < 10) {
        sfs_warn("request %s %lu from %s pid %u (%s) dropped: %s", sfs_op_name(req->hdr.opcode),
                 (unsigned long)req->hdr.request_id, session->peer_host, session->peer_pid,
                 session->peer_program,
                 verdict == SFS_TP_REPLAY_SEEN
                     ? "its id was served before (a replay)"
                     : "its id is older than the replay window (a replay, or a request held back "
                       "too long)");
    }
    sfs_tp_note_dropped(req->worker, "replayed request");
    return 1;
}

static int sfs_tp_request_over_rate(sfs_tp_worker_t *worker, sfs_tp_session_t *session);

static void sfs_tp_request_dispatch(sfs_tp_request_t *req)
{
    sfs_tp_worker_t  *worker  = req->worker;
    sfs_tp_session_t *session = req->session;

    if (sfs_auth_mac_check(&session->session_key, req->packed_hdr, req->data,
                           req->hdr.args_length) != 0) {
        /* dropped without a reply: whoever forged it names someone else's
         * session, and a refusal would reach that peer as the answer to
         * its own request of that id */
        if (session->forgeries++ < 10) {
            sfs_warn("request %s %lu naming the session of %s pid %u failed its integrity "
                     "check: dropped",
                     sfs_op_name(req->hdr.opcode), (unsigned long)req->hdr.request_id,
                     session->peer_host, session->peer_pid);
        }
        sfs_tp_note_dropped(worker, "request that failed its integrity check");
        sfs_tp_request_free(req);
        return;
    }
    if (sfs_tp_request_over_rate(worker, session)) {
        sfs_tp_request_free(req);
        return;
    }
    if (sfs_tp_request_replayed(req)) {
        sfs_tp_request_free(req);
        return;
    }
    if ((req->hdr.flags & (SFS_PROTO_FLAG_DIRECT | SFS_PROTO_FLAG_PULL)) &&
        sfs_tp_direct_descriptor_take(req) != 0) {
        sfs_tp_request_reply_error(req, -EBADMSG, "malformed direct-copy descriptor");
        return;
    }
    req->pull = (req->hdr.flags & SFS_PROTO_FLAG_PULL) != 0;
    if (!worker->on_request) {
        sfs_tp_request_reply_error(req, -EOPNOTSUPP, "this process serves no requests");
        return;
    }
    worker->on_request(req, worker->handler_arg);
}

static void sfs_tp_request_recv_cb(void *request, ucs_status_t status, size_t length,
                                   void *user_data)
{
    sfs_tp_request_t *req = user_data;

    (void)length;
    ucp_request_free(request);
    req->worker->ucx_inflight--;
    if (status != UCS_OK) {
        sfs_debug("receiving a %s request failed: %s", sfs_op_name(req->hdr.opcode),
                  ucs_status_string(status));
        sfs_tp_request_free(req);
        return;
    }
    sfs_tp_request_dispatch(req);
}

/* More requests in one second than the limit: the session is closed.
 * Counted after the MAC check, so that nobody else's flood can close it. */
static int sfs_tp_request_over_rate(sfs_tp_worker_t *worker, sfs_tp_session_t *session)
{
    uint64_t now;

    if (!worker->max_request_rate) {
        return 0;
    }
    now = sfs_tp_now_ms();
    if (now - session->rate_window_ms >= 1000) {
        session->rate_window_ms = now;
        session->rate_count     = 0;
    }
    if (++session->rate_count <= worker->max_request_rate) {
        return 0;
    }
    sfs_warn("closing the session of %s pid %u (%s): more than %u requests in one second",
             session->peer_host, session->peer_pid, session->peer_program,
             worker->max_request_rate);
    sfs_tp_session_close(session, "request rate limit exceeded");
    return 1;
}

ucs_status_t sfs_tp_am_request_cb(void *arg, const void *header, size_t header_length, void *data,
                                  size_t length, const ucp_am_recv_param_t *param)
{
    sfs_tp_worker_t  *worker = arg;
    int               rndv   = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
    sfs_proto_hdr_t   hdr;
    sfs_tp_session_t *session;
    sfs_tp_request_t *req;
    ucp_dt_iov_t      into;
    ucs_status_ptr_t  rreq;
    const uint8_t    *args;
    int               args_in_header;
    int               rc;

    rc = header_length < SFS_PROTO_HDR_SIZE
             ? -EINVAL
             : sfs_proto_hdr_unpack(header, SFS_PROTO_HDR_SIZE, worker->max_payload, &hdr);
    if (rc || (hdr.flags & (SFS_PROTO_FLAG_REPLY | SFS_PROTO_FLAG_DELIVERED))) {
        /* dropped, and nothing else: a header that fails its checks cannot
         * prove which session sent it (it may name someone else's) */
        sfs_tp_note_dropped(worker, rc == -EPROTO ? "wrong protocol magic or version"
                                                  : "malformed or oversized request header");
        goto drop;
    }
    if (sfs_tp_message_layout(&hdr, header, header_length, rndv ? NULL : data, length, &args) !=
        0) {
        sfs_tp_note_dropped(worker, "request lengths disagree with the message");
        goto drop;
    }
    args_in_header = header_length > SFS_PROTO_HDR_SIZE;
    if (hdr.opcode == SFS_OP_HELLO || hdr.opcode == SFS_OP_AUTH) {
        if (rndv || hdr.payload_length) {
            sfs_tp_note_dropped(worker, "handshake message with a payload");
            goto drop;
        }
        if (hdr.opcode == SFS_OP_HELLO) {
            sfs_tp_session_handle_hello(
                worker, &hdr, args, hdr.args_length,
                (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ? param->reply_ep : NULL);
        } else {
            sfs_tp_session_handle_auth(worker, &hdr, header, args, hdr.args_length);
        }
        return UCS_OK;
    }
    session = sfs_tp_session_find(worker, hdr.session_id);
    if (!session || !session->authenticated) {
        sfs_tp_note_dropped(worker, "request without an authenticated session");
        goto drop;
    }
    if (hdr.opcode == SFS_OP_BYE) {
        if (!rndv &&
            sfs_auth_mac_check(&session->session_key, header, args, hdr.args_length) == 0) {
            /* The peer sent its direct-copy proof (a datagram, queued on
             * our socket when its sendto returned) before anything on
             * this session, so it is here; but a worker that stayed busy
             * since reads it only at its next timer tick. Read it while
             * the session exists, or it would be refused as "for no
             * session of ours", a warning that only foreign proofs earn. */
            sfs_tp_direct_recv(worker);
            sfs_tp_session_close(session, "closed by the peer");
        }
        goto drop;
    }
    if (!SFS_ALLOC_PTR(req)) {
        goto drop;
    }
    req->worker  = worker;
    req->session = session;
    sfs_tp_session_get(session);
    req->hdr         = hdr;
    req->args_length = hdr.args_length;
    memcpy(req->packed_hdr, header, SFS_PROTO_HDR_SIZE);
    /* the handler sees the arguments followed by the payload, in one buffer */
    req->data_length = (size_t)hdr.args_length + hdr.payload_length;
    req->data        = sfs_tp_buf_get(worker, req->data_length ? req->data_length : 1);
    if (!req->data) {
        sfs_error("out of memory for a %zu-byte %s request", req->data_length,
                  sfs_op_name(hdr.opcode));
        sfs_tp_session_put(session);
        free(req);
        goto drop;
    }
    if (args_in_header) {
        memcpy(req->data, args, hdr.args_length);
    }
    if (!rndv) {
        if (length) {
            memcpy(req->data + (args_in_header ? hdr.args_length : 0), data, length);
        }
        sfs_tp_request_dispatch(req);
        return UCS_OK;
    }
    into.buffer = req->data + (args_in_header ? hdr.args_length : 0);
    into.length = length;
    rreq        = sfs_tp_am_recv(worker, data, &into, 1, sfs_tp_request_recv_cb, req);
    if (UCS_PTR_IS_ERR(rreq)) {
        sfs_debug("cannot receive a %s request: %s", sfs_op_name(hdr.opcode),
                  ucs_status_string(UCS_PTR_STATUS(rreq)));
        sfs_tp_request_free(req);
        return UCS_OK;
    }
    if (rreq == NULL) {
        sfs_tp_request_dispatch(req);
    } else {
        worker->ucx_inflight++;
    }
    return UCS_OK;

drop:
    /* a rendezvous message left unreceived is dropped by UCX itself once
     * the callback returns UCS_OK (ucp_def.h); ucp_am_data_release is only
     * for data kept by returning UCS_INPROGRESS, and here it released the
     * descriptor twice (a SEGV in ucp_am_data_release, seen once) */
    return UCS_OK;
}

uint32_t sfs_tp_request_opcode(const sfs_tp_request_t *req)
{
    return req->hdr.opcode;
}

const void *sfs_tp_request_args(const sfs_tp_request_t *req, size_t *length_p)
{
    *length_p = req->args_length;
    return req->data;
}

void *sfs_tp_request_payload(const sfs_tp_request_t *req, size_t *length_p)
{
    *length_p = req->hdr.payload_length;
    return req->data + req->hdr.args_length;
}

sfs_tp_session_t *sfs_tp_request_session(const sfs_tp_request_t *req)
{
    return req->session;
}

sfs_tp_worker_t *sfs_tp_request_worker(const sfs_tp_request_t *req)
{
    return req->worker;
}

static void sfs_tp_request_reply_cb(void *request, ucs_status_t status, void *user_data)
{
    sfs_tp_request_t *req = user_data;

    if (status != UCS_OK) {
        sfs_debug("reply to %s for %s failed: %s", sfs_op_name(req->hdr.opcode),
                  req->session->peer_host, ucs_status_string(status));
    }
    ucp_request_free(request);
    req->worker->ucx_inflight--;
    if (req->release) {
        req->release(req->release_arg);
    }
    sfs_tp_request_free(req);
}

void sfs_tp_request_reply(sfs_tp_request_t *req, int status, const void *args, size_t args_length,
                          const struct iovec *payload, size_t payload_count,
                          sfs_tp_post_cb_t release, void *release_arg)
{
    sfs_proto_hdr_t hdr;
    uint64_t        payload_length = 0;
    size_t          iov_count      = 0;
    int             args_in_header;
    void           *sreq;
    int             rc;

    if (req->replied) {
        sfs_error("%s request answered twice", sfs_op_name(req->hdr.opcode));
        return;
    }
    req->replied     = 1;
    req->release     = release;
    req->release_arg = release_arg;
    if (args_length > SFS_PROTO_ARGS_MAX) {
        sfs_error("%s reply arguments too large (%zu bytes)", sfs_op_name(req->hdr.opcode),
                  args_length);
        args_length   = 0;
        status        = -EMSGSIZE;
        payload_count = 0;
    }
    if (status != 0 || req->delivered_marked) {
        payload_count = 0; /* error replies carry their explanation only */
    }
    req->reply_iov = req->reply_iov_inline;
    if (payload_count + 1 > SFS_TP_INLINE_IOV) {
        req->reply_iov = calloc(payload_count + 1, sizeof(*req->reply_iov));
        if (!req->reply_iov) {
            req->reply_iov = req->reply_iov_inline;
            payload_count  = 0;
            status         = -ENOMEM;
            args_length    = 0;
        }
    }
    req->reply_head = malloc(SFS_PROTO_HDR_SIZE + args_length);
    if (!req->reply_head) {
        sfs_error("out of memory replying to %s", sfs_op_name(req->hdr.opcode));
        if (release) {
            release(release_arg);
        }
        sfs_tp_request_free(req);
        return;
    }
    args_in_header = sfs_tp_args_in_header(req->worker, args_length);
    if (args_length) {
        memcpy(req->reply_head + SFS_PROTO_HDR_SIZE, args, args_length);
        if (!args_in_header) {
            req->reply_iov[iov_count].buffer   = req->reply_head + SFS_PROTO_HDR_SIZE;
            req->reply_iov[iov_count++].length = args_length;
        }
    }
    payload_length = sfs_tp_iov_bytes(payload, payload_count);
    iov_count += sfs_tp_iov_coalesce(payload, payload_count, req->reply_iov + iov_count);

    memset(&hdr, 0, sizeof(hdr));
    hdr.magic          = SFS_PROTO_MAGIC;
    hdr.version        = SFS_PROTO_VERSION;
    hdr.opcode         = req->hdr.opcode;
    hdr.flags          = SFS_PROTO_FLAG_REPLY;
    hdr.args_length    = (uint32_t)args_length;
    hdr.request_id     = req->hdr.request_id;
    hdr.session_id     = req->hdr.session_id;
    hdr.status         = status;
    hdr.sender         = req->worker->node_id;
    hdr.payload_length = payload_length;
    if (status == 0 && req->delivered_marked) {
        hdr.flags |= SFS_PROTO_FLAG_DELIVERED;
        hdr.payload_length = req->delivered;
    }
    sfs_tp_hdr_seal(&hdr, &req->session->session_key, req->reply_head + SFS_PROTO_HDR_SIZE,
                    args_length, req->reply_head);

    rc = sfs_tp_session_send(req->session, req->reply_head,
                             SFS_PROTO_HDR_SIZE + (args_in_header ? args_length : 0),
                             req->reply_iov, iov_count, sfs_tp_request_reply_cb, req, &sreq);
    if (rc != 0 || sreq == NULL) {
        if (rc) {
            sfs_debug("cannot reply to %s from %s: peer gone", sfs_op_name(req->hdr.opcode),
                      req->session->peer_host);
        }
        if (req->release) {
            req->release(req->release_arg);
        }
        sfs_tp_request_free(req);
    }
}

void sfs_tp_request_reply_error(sfs_tp_request_t *req, int status, const char *fmt, ...)
{
    char       text[SFS_TP_DETAIL_MAX];
    uint8_t    args[SFS_TP_DETAIL_MAX + 8];
    sfs_wbuf_t wb;
    va_list    ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_wbuf_str(&wb, text);
    sfs_tp_request_reply(req, status ? status : -EIO, args, wb.length, NULL, 0, NULL, NULL);
}
