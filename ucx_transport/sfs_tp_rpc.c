/*
 * Outgoing RPCs: send a request, receive its reply (rendezvous replies land
 * straight in the caller's buffers), deadlines.
 *
 * An RPC is complete for its owner when its reply (or failure) is final AND
 * UCX no longer holds any of its buffers; only then may the caller reuse the
 * payload memory, so a failure never races with a transfer still running.
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

/* A failed RPC whose buffers UCX has not let go of after this long is
 * given back to its owner anyway (see sfs_tp_rpcs_check_deadlines). */
#define SFS_TP_RPC_ABANDON_MS 3000

static void sfs_tp_rpc_unhold(sfs_tp_rpc_t *rpc)
{
    if (rpc->held) {
        sfs_list_del(&rpc->conn_list);
        rpc->held = 0;
    }
}

static void sfs_tp_rpc_free(sfs_tp_rpc_t *rpc)
{
    sfs_tp_rpc_unhold(rpc);
    if (rpc->send_iov != rpc->send_iov_inline) {
        free(rpc->send_iov);
    }
    free(rpc->head);
    free(rpc->reply_args);
    free(rpc->reply_payload);
    free(rpc->recv_iov);
    free(rpc);
}

/* UCX no longer holds any of the RPC's buffers (nor its own memory). */
static int sfs_tp_rpc_ucx_done(const sfs_tp_rpc_t *rpc)
{
    return !rpc->send_pending && !rpc->recv_pending;
}

/* Final for its owner: normally when UCX lets go too; a failed RPC that
 * UCX holds past SFS_TP_RPC_ABANDON_MS also counts (then its memory is
 * kept until UCX lets go, or the worker is destroyed). */
static int sfs_tp_rpc_settled(const sfs_tp_rpc_t *rpc)
{
    return rpc->done && (rpc->abandoned || sfs_tp_rpc_ucx_done(rpc));
}

/* Called whenever one of done/send_pending/recv_pending/abandoned changes. */
static void sfs_tp_rpc_check(sfs_tp_rpc_t *rpc)
{
    if (!sfs_tp_rpc_settled(rpc)) {
        return;
    }
    if (sfs_tp_rpc_ucx_done(rpc)) {
        sfs_tp_rpc_unhold(rpc);
    }
    if (rpc->released) {
        if (sfs_tp_rpc_ucx_done(rpc)) {
            sfs_tp_rpc_free(rpc);
        }
        return;
    }
    if (rpc->cb) {
        sfs_tp_rpc_cb_t cb = rpc->cb;

        rpc->cb = NULL; /* once */
        cb(rpc, rpc->cb_arg);
    }
}

/* The outcome is final: unhook from the tables. A failure may come while
 * UCX still holds buffers (the connection closes them): such an RPC waits
 * in worker->held_rpcs for UCX to let go. */
static void sfs_tp_rpc_finish(sfs_tp_rpc_t *rpc, int status)
{
    if (rpc->done) {
        return;
    }
    rpc->done   = 1;
    rpc->status = status;
    if (rpc->hashed) {
        sfs_hash_del(&rpc->worker->rpcs, &rpc->link);
        rpc->hashed = 0;
    }
    sfs_list_del(&rpc->conn_list);
    if (status != 0 && !sfs_tp_rpc_ucx_done(rpc)) {
        rpc->held      = 1;
        rpc->failed_ms = sfs_tp_now_ms();
        sfs_list_add_tail(&rpc->worker->held_rpcs, &rpc->conn_list);
    }
}

void sfs_tp_rpc_fail(sfs_tp_rpc_t *rpc, int status, const char *fmt, ...)
{
    va_list ap;

    if (rpc->done) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(rpc->error_detail, sizeof(rpc->error_detail), fmt, ap);
    va_end(ap);
    sfs_tp_rpc_finish(rpc, status);
    sfs_tp_rpc_check(rpc);
}

static void sfs_tp_rpc_send_cb(void *request, ucs_status_t status, void *user_data)
{
    sfs_tp_rpc_t *rpc = user_data;

    rpc->send_pending--;
    rpc->worker->ucx_inflight--;
    ucp_request_free(request);
    if (status != UCS_OK && !rpc->done) {
        sfs_tp_rpc_fail(rpc, status == UCS_ERR_CANCELED ? -ECANCELED : -ECONNRESET,
                        "sending %s to %s failed: %s", sfs_op_name(rpc->opcode), rpc->conn->name,
                        ucs_status_string(status));
        return;
    }
    sfs_tp_rpc_check(rpc);
}

/* Pack the header (and a descriptor) and hand the request to UCX: at the
 * start, and again without the pull when the server refused it. */
static int sfs_tp_rpc_send(sfs_tp_rpc_t *rpc)
{
    sfs_tp_conn_t   *conn   = rpc->conn;
    sfs_tp_worker_t *worker = rpc->worker;
    sfs_proto_hdr_t  hdr;
    ucs_status_ptr_t sreq;
    ucp_dt_iov_t    *iov;
    size_t           iov_count;

    rpc->args_length = rpc->call_args_length;
    if (rpc->direct_sent) {
        sfs_tp_direct_descriptor_pack(rpc->args + rpc->args_length, rpc->reply_iov,
                                      rpc->reply_iov_count, rpc->deadline_ms);
        rpc->args_length += sfs_tp_direct_descriptor_size(rpc->reply_iov_count);
    } else if (rpc->pulled) {
        sfs_tp_direct_descriptor_pack(rpc->args + rpc->args_length, rpc->payload,
                                      rpc->payload_count, rpc->deadline_ms);
        rpc->args_length += sfs_tp_direct_descriptor_size(rpc->payload_count);
    }
    rpc->head_length = SFS_PROTO_HDR_SIZE;
    if (sfs_tp_args_in_header(worker, rpc->args_length)) {
        rpc->head_length += rpc->args_length;
    }
    /* send_iov: [0] the arguments, when not in the header; then the payload */
    iov       = rpc->send_iov + 1;
    iov_count = rpc->pulled ? 0 : rpc->send_iov_count - 1;
    if (rpc->args_length && rpc->head_length == SFS_PROTO_HDR_SIZE) {
        rpc->send_iov[0].buffer = rpc->args;
        rpc->send_iov[0].length = rpc->args_length;
        iov--;
        iov_count++;
    }

    memset(&hdr, 0, sizeof(hdr));
    hdr.magic   = SFS_PROTO_MAGIC;
    hdr.version = SFS_PROTO_VERSION;
    hdr.opcode  = (uint16_t)rpc->opcode;
    hdr.flags   = rpc->direct_sent ? SFS_PROTO_FLAG_DIRECT : rpc->pulled ? SFS_PROTO_FLAG_PULL : 0;
    hdr.args_length    = (uint32_t)rpc->args_length;
    hdr.request_id     = rpc->request_id;
    hdr.session_id     = conn->session_id;
    hdr.sender         = worker->node_id;
    hdr.payload_length = rpc->pulled ? 0 : rpc->payload_length;
    sfs_tp_hdr_seal(&hdr, conn->session_id ? &conn->session_key : NULL, rpc->args, rpc->args_length,
                    rpc->head);

    /* a HELLO tells the server the endpoint it came on: one its listener
     * accepted becomes the session's (sfs_tp_listener.c); no other request
     * needs UCX to carry that */
    sreq = sfs_tp_am_send(conn->ep, SFS_AM_ID_REQUEST,
                          rpc->opcode == SFS_OP_HELLO ? UCP_AM_SEND_FLAG_REPLY : 0, rpc->head,
                          rpc->head_length, iov, iov_count, sfs_tp_rpc_send_cb, rpc);
    if (UCS_PTR_IS_ERR(sreq)) {
        return sfs_error_set(-ECONNRESET, "%s: cannot send %s: %s", conn->name,
                             sfs_op_name(rpc->opcode), ucs_status_string(UCS_PTR_STATUS(sreq)));
    }
    sfs_hash_add(&worker->rpcs, &rpc->link, rpc->request_id);
    rpc->hashed = 1;
    if (sreq != NULL) {
        rpc->send_pending++;
        worker->ucx_inflight++;
    }
    sfs_trace("rpc %lu: %s to %s, %zu+%lu bytes%s", (unsigned long)rpc->request_id,
              sfs_op_name(rpc->opcode), conn->name, rpc->args_length,
              (unsigned long)rpc->payload_length, rpc->pulled ? " (pulled)" : "");
    return 0;
}

int sfs_tp_rpc_start(sfs_tp_conn_t *conn, const sfs_tp_rpc_params_t *params, sfs_tp_rpc_t **rpc_p)
{
    sfs_tp_worker_t *worker = conn->worker;
    sfs_tp_rpc_t    *rpc;
    uint64_t         payload_length = 0;
    size_t           iov_count = 1, desc_size = 0;
    uint32_t         timeout_ms;
    int              rc;

    if (conn->status) {
        return sfs_error_set(conn->status, "%s: connection lost earlier: %s", conn->name,
                             sfs_strerror(conn->status));
    }
    if (params->args_length > SFS_PROTO_ARGS_MAX) {
        return sfs_error_set(-EMSGSIZE, "%s: %s arguments too large (%zu bytes)", conn->name,
                             sfs_op_name(params->opcode), params->args_length);
    }
    payload_length = sfs_tp_iov_bytes(params->payload, params->payload_count);
    if (payload_length > worker->max_payload) {
        return sfs_error_set(-EMSGSIZE, "%s: %s payload of %lu bytes exceeds the limit of %lu",
                             conn->name, sfs_op_name(params->opcode), (unsigned long)payload_length,
                             (unsigned long)worker->max_payload);
    }
    if (!SFS_ALLOC_PTR(rpc)) {
        return -ENOMEM;
    }
    rpc->conn             = conn;
    rpc->worker           = worker;
    rpc->opcode           = params->opcode;
    rpc->request_id       = worker->next_request_id++;
    rpc->reply_iov        = params->reply_iov;
    rpc->reply_iov_count  = params->reply_iov_count;
    rpc->alloc_reply      = params->alloc_reply;
    rpc->payload          = params->payload;
    rpc->payload_count    = params->payload_count;
    rpc->payload_length   = payload_length;
    rpc->cb               = params->cb;
    rpc->cb_arg           = params->cb_arg;
    rpc->call_args_length = params->args_length;
    sfs_list_init(&rpc->conn_list);
    timeout_ms       = params->timeout_ms ? params->timeout_ms : worker->rpc_timeout_ms;
    rpc->deadline_ms = sfs_tp_now_ms() + timeout_ms;
    /* a large reply from a server on this host may be copied straight into
     * the caller's buffers: name them, after the arguments; a large payload
     * may be copied straight out of them likewise */
    rpc->direct_sent =
        !params->alloc_reply &&
        sfs_tp_direct_fits(conn, params->args_length, params->reply_iov, params->reply_iov_count);
    rpc->pulled =
        !rpc->direct_sent && params->allow_pull && worker->pulls && !conn->pull_off &&
        sfs_tp_direct_fits(conn, params->args_length, params->payload, params->payload_count);
    if (rpc->direct_sent) {
        desc_size = sfs_tp_direct_descriptor_size(params->reply_iov_count);
    } else if (rpc->pulled) {
        desc_size = sfs_tp_direct_descriptor_size(params->payload_count);
    }
    rpc->head = malloc(SFS_PROTO_HDR_SIZE + params->args_length + desc_size);
    if (!rpc->head) {
        free(rpc);
        return -ENOMEM;
    }
    rpc->args = rpc->head + SFS_PROTO_HDR_SIZE;
    if (params->args_length) {
        memcpy(rpc->args, params->args, params->args_length);
    }
    rpc->send_iov = rpc->send_iov_inline;
    if (params->payload_count + 1 > SFS_TP_INLINE_IOV) {
        rpc->send_iov = calloc(params->payload_count + 1, sizeof(*rpc->send_iov));
        if (!rpc->send_iov) {
            rpc->send_iov = rpc->send_iov_inline;
            sfs_tp_rpc_free(rpc);
            return -ENOMEM;
        }
    }
    iov_count = sfs_tp_iov_coalesce(params->payload, params->payload_count, rpc->send_iov + 1) + 1;
    rpc->send_iov_count = iov_count;

    rc = sfs_tp_rpc_send(rpc);
    if (rc) {
        sfs_tp_rpc_free(rpc);
        return rc;
    }
    sfs_list_add_tail(&conn->rpcs, &rpc->conn_list);
    *rpc_p = rpc;
    return 0;
}

/* The server could not copy a pulled payload (not allowed, its proof of
 * our pid not seen yet, too late): send the request again with it. After a
 * few refusals the connection stops asking. */
static int sfs_tp_rpc_resend_unpulled(sfs_tp_rpc_t *rpc)
{
    sfs_tp_conn_t *conn = rpc->conn;
    int            rc;

    if (++conn->pull_refusals >= SFS_TP_PULL_REFUSALS_MAX && !conn->pull_off) {
        conn->pull_off = 1;
        sfs_info("%s refused %u direct copies of request data: sending it from now on", conn->name,
                 conn->pull_refusals);
    }
    free(rpc->reply_args);
    rpc->reply_args        = NULL;
    rpc->reply_args_length = 0;
    free(rpc->recv_iov);
    rpc->recv_iov = NULL;
    rpc->pulled   = 0;
    /* a new id: the server's replay window has seen the old one */
    rpc->request_id = rpc->worker->next_request_id++;
    rc              = sfs_tp_rpc_send(rpc);
    if (rc) {
        sfs_tp_rpc_fail(rpc, rc, "%s", sfs_error_detail());
    }
    return rc;
}

int sfs_tp_rpc_is_done(const sfs_tp_rpc_t *rpc)
{
    return sfs_tp_rpc_settled(rpc);
}

int sfs_tp_rpc_wait(sfs_tp_rpc_t *rpc)
{
    sfs_tp_worker_t *worker = rpc->worker;

    while (!sfs_tp_rpc_settled(rpc)) {
        int rc = sfs_tp_worker_progress(worker, -1);

        if (rc) {
            return rc;
        }
    }
    return rpc->status;
}

int sfs_tp_rpc_status(const sfs_tp_rpc_t *rpc)
{
    return rpc->status;
}

const void *sfs_tp_rpc_reply_args(const sfs_tp_rpc_t *rpc, size_t *length_p)
{
    *length_p = rpc->status == 0 ? rpc->reply_args_length : 0;
    return rpc->reply_args;
}

uint64_t sfs_tp_rpc_reply_payload_length(const sfs_tp_rpc_t *rpc)
{
    return rpc->reply_payload_length;
}

void *sfs_tp_rpc_reply_payload(const sfs_tp_rpc_t *rpc)
{
    return rpc->reply_payload;
}

int sfs_tp_rpc_refused(const sfs_tp_rpc_t *rpc)
{
    return rpc && rpc->refused;
}

const char *sfs_tp_rpc_error_detail(const sfs_tp_rpc_t *rpc)
{
    return rpc->error_detail;
}

void sfs_tp_rpc_release(sfs_tp_rpc_t *rpc)
{
    if (!rpc) {
        return;
    }
    if (!rpc->done) {
        /* cancelled by its owner: a late reply finds no RPC and is dropped */
        sfs_tp_rpc_finish(rpc, -ECANCELED);
    }
    rpc->released = 1;
    rpc->cb       = NULL;
    if (sfs_tp_rpc_settled(rpc) && sfs_tp_rpc_ucx_done(rpc)) {
        sfs_tp_rpc_free(rpc);
    }
}

int sfs_tp_call(sfs_tp_conn_t *conn, const sfs_tp_rpc_params_t *params, sfs_tp_rpc_t **rpc_p)
{
    sfs_tp_rpc_t *rpc;
    int           rc;

    *rpc_p = NULL;
    rc     = sfs_tp_rpc_start(conn, params, &rpc);
    if (rc) {
        return rc;
    }
    *rpc_p = rpc;
    rc     = sfs_tp_rpc_wait(rpc);
    if (rc) {
        const char *detail = rpc->error_detail[0] ? rpc->error_detail : sfs_strerror(rc);

        sfs_error_set(rc, "%s: %s: %s", conn->name, sfs_op_name(params->opcode), detail);
    }
    return rc;
}

/* ---------------------------------------------------------------------- */
/* Replies                                                                  */

static void sfs_tp_rpc_reply_complete(sfs_tp_rpc_t *rpc)
{
    sfs_tp_conn_t  *conn = rpc->conn;
    sfs_proto_hdr_t hdr;
    int             status;

    sfs_proto_hdr_unpack(rpc->reply_hdr, SFS_PROTO_HDR_SIZE, UINT64_MAX, &hdr);
    status = hdr.status;
    if (conn->session_id && rpc->opcode != SFS_OP_HELLO &&
        sfs_auth_mac_check(&conn->session_key, rpc->reply_hdr, rpc->reply_args,
                           rpc->reply_args_length) != 0) {
        /* a refused AUTH cannot be sealed with a key the server rejected */
        if (!(rpc->opcode == SFS_OP_AUTH && status < 0)) {
            sfs_tp_rpc_fail(rpc, -EACCES, "reply to %s from %s failed its integrity check",
                            sfs_op_name(rpc->opcode), conn->name);
            return;
        }
    }
    if (rpc->pulled && status == SFS_PULL_REFUSED) {
        sfs_debug("%s: %s %lu: pull refused, sending the data", conn->name,
                  sfs_op_name(rpc->opcode), (unsigned long)rpc->request_id);
        sfs_tp_rpc_resend_unpulled(rpc);
        return;
    }
    if (status != 0) {
        sfs_rbuf_t rb;
        char       detail[SFS_TP_DETAIL_MAX];

        sfs_rbuf_init(&rb, rpc->reply_args, rpc->reply_args_length);
        sfs_rbuf_str(&rb, detail, sizeof(detail));
        rpc->refused = 1;
        sfs_tp_rpc_fail(rpc, status, "%s", rb.error ? sfs_strerror(status) : detail);
        return;
    }
    sfs_tp_rpc_finish(rpc, 0);
    sfs_tp_rpc_check(rpc);
}

static void sfs_tp_rpc_recv_cb(void *request, ucs_status_t status, size_t length, void *user_data)
{
    sfs_tp_rpc_t *rpc = user_data;

    (void)length;
    ucp_request_free(request);
    rpc->recv_pending = 0;
    rpc->worker->ucx_inflight--;
    if (rpc->done) { /* failed meanwhile (connection closed): just settle */
        sfs_tp_rpc_check(rpc);
        return;
    }
    if (status != UCS_OK) {
        sfs_tp_rpc_fail(rpc, -ECONNRESET, "receiving the reply to %s from %s failed: %s",
                        sfs_op_name(rpc->opcode), rpc->conn->name, ucs_status_string(status));
        return;
    }
    sfs_tp_rpc_reply_complete(rpc);
}

/* Build the receive iov for a reply payload of `length` bytes: into the
 * caller's reply iov (trimmed) or a fresh buffer. Returns the count (0 for
 * no payload) or a negative errno. */
static int sfs_tp_rpc_payload_iov(sfs_tp_rpc_t *rpc, uint64_t length, ucp_dt_iov_t *iov, size_t max)
{
    uint64_t left  = length;
    size_t   count = 0;

    if (length == 0) {
        return 0;
    }
    if (rpc->alloc_reply) {
        rpc->reply_payload = malloc(length);
        if (!rpc->reply_payload) {
            return -ENOMEM;
        }
        iov[0].buffer = rpc->reply_payload;
        iov[0].length = length;
        return 1;
    }
    for (size_t i = 0; i < rpc->reply_iov_count && left; i++) {
        size_t take = rpc->reply_iov[i].iov_len < left ? rpc->reply_iov[i].iov_len : left;

        if (!take) {
            continue;
        }
        left -= take;
        if (count && sfs_tp_iov_follows(&iov[count - 1], rpc->reply_iov[i].iov_base)) {
            iov[count - 1].length += take; /* one piece for UCX: sfs_tp_iov.h */
            continue;
        }
        if (count == max) {
            return -EMSGSIZE;
        }
        iov[count].buffer   = rpc->reply_iov[i].iov_base;
        iov[count++].length = take;
    }
    return left ? -EMSGSIZE : (int)count;
}

ucs_status_t sfs_tp_am_reply_cb(void *arg, const void *header, size_t header_length, void *data,
                                size_t length, const ucp_am_recv_param_t *param)
{
    sfs_tp_worker_t *worker = arg;
    int              rndv   = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
    sfs_proto_hdr_t  hdr;
    sfs_hash_link_t *link;
    sfs_tp_rpc_t    *rpc;
    ucs_status_ptr_t rreq;
    const uint8_t   *args;
    size_t           max_iov, used = 0;
    int              count;

    if (header_length < SFS_PROTO_HDR_SIZE ||
        sfs_proto_hdr_unpack(header, SFS_PROTO_HDR_SIZE, UINT64_MAX, &hdr) != 0 ||
        !(hdr.flags & SFS_PROTO_FLAG_REPLY)) {
        sfs_tp_note_dropped(worker, "malformed reply header");
        goto drop;
    }
    link = sfs_hash_find(&worker->rpcs, hdr.request_id);
    if (!link) {
        sfs_debug("reply %lu to an RPC that is gone (timed out or cancelled)",
                  (unsigned long)hdr.request_id);
        goto drop;
    }
    rpc = sfs_container_of(link, sfs_tp_rpc_t, link);
    if (hdr.session_id != rpc->conn->session_id || hdr.opcode != rpc->opcode) {
        sfs_tp_note_dropped(worker, "reply does not match its request");
        goto drop;
    }
    if (sfs_tp_message_layout(&hdr, header, header_length, rndv ? NULL : data, length, &args) !=
        0) {
        sfs_tp_rpc_fail(rpc, -EPROTO, "malformed reply to %s from %s (lengths disagree)",
                        sfs_op_name(rpc->opcode), rpc->conn->name);
        goto drop;
    }
    /* the RPC is now claimed: a duplicate reply finds nothing */
    sfs_hash_del(&worker->rpcs, &rpc->link);
    rpc->hashed = 0;
    memcpy(rpc->reply_hdr, header, SFS_PROTO_HDR_SIZE);
    rpc->reply_args_length    = hdr.args_length;
    rpc->reply_payload_length = hdr.status == 0 ? hdr.payload_length : 0;
    rpc->reply_args           = malloc(hdr.args_length ? hdr.args_length : 1);
    max_iov                   = rpc->reply_iov_count + 2;
    rpc->recv_iov             = calloc(max_iov, sizeof(*rpc->recv_iov));
    if (!rpc->reply_args || !rpc->recv_iov) {
        sfs_tp_rpc_fail(rpc, -ENOMEM, "out of memory receiving a reply");
        goto drop;
    }
    if (hdr.flags & SFS_PROTO_FLAG_DELIVERED) {
        /* the payload is already in our buffers (sfs_tp_direct.c) */
        if (!rpc->direct_sent || hdr.status != 0 || rndv ||
            sfs_tp_iov_bytes(rpc->reply_iov, rpc->reply_iov_count) < hdr.payload_length) {
            sfs_tp_rpc_fail(rpc, -EPROTO,
                            "reply to %s from %s claims a direct copy it could not make",
                            sfs_op_name(rpc->opcode), rpc->conn->name);
            goto drop;
        }
        if (hdr.args_length) {
            memcpy(rpc->reply_args, args, hdr.args_length);
        }
        rpc->reply_delivered = 1;
        sfs_tp_rpc_reply_complete(rpc);
        return UCS_OK;
    }
    if (header_length > SFS_PROTO_HDR_SIZE) {
        memcpy(rpc->reply_args, args, hdr.args_length); /* they came in the header */
    } else if (hdr.args_length) {
        rpc->recv_iov[used].buffer   = rpc->reply_args;
        rpc->recv_iov[used++].length = hdr.args_length;
    }
    count = hdr.status == 0 ? sfs_tp_rpc_payload_iov(rpc, hdr.payload_length, rpc->recv_iov + used,
                                                     max_iov - used)
                            : 0;
    if (count < 0) {
        sfs_tp_rpc_fail(rpc, count, "reply to %s from %s: payload of %lu bytes does not fit",
                        sfs_op_name(rpc->opcode), rpc->conn->name,
                        (unsigned long)hdr.payload_length);
        goto drop;
    }
    used += (size_t)count;
    if (!rndv) {
        const uint8_t *src = data;

        for (size_t i = 0; i < used; i++) {
            memcpy(rpc->recv_iov[i].buffer, src, rpc->recv_iov[i].length);
            src += rpc->recv_iov[i].length;
        }
        sfs_tp_rpc_reply_complete(rpc);
        return UCS_OK;
    }
    if (hdr.status != 0 && hdr.payload_length) {
        sfs_tp_rpc_fail(rpc, -EPROTO, "error reply from %s carries a payload", rpc->conn->name);
        goto drop;
    }
    rreq = sfs_tp_am_recv(worker, data, rpc->recv_iov, used, sfs_tp_rpc_recv_cb, rpc);
    if (UCS_PTR_IS_ERR(rreq)) {
        sfs_tp_rpc_fail(rpc, -ECONNRESET, "cannot receive the reply to %s from %s: %s",
                        sfs_op_name(rpc->opcode), rpc->conn->name,
                        ucs_status_string(UCS_PTR_STATUS(rreq)));
        return UCS_OK;
    }
    if (rreq == NULL) {
        sfs_tp_rpc_reply_complete(rpc);
    } else {
        rpc->recv_pending = 1;
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

int sfs_tp_rpcs_check_deadlines(sfs_tp_worker_t *worker, uint64_t now_ms)
{
    sfs_list_t *elem, *tmp;
    int         changed = 0;

    sfs_list_for_each_safe(elem, tmp, &worker->conns)
    {
        sfs_tp_conn_t *conn = sfs_container_of(elem, sfs_tp_conn_t, list);
        sfs_list_t    *relem, *rtmp;

        sfs_list_for_each_safe(relem, rtmp, &conn->rpcs)
        {
            sfs_tp_rpc_t *rpc = sfs_container_of(relem, sfs_tp_rpc_t, conn_list);
            char          why[SFS_TP_DETAIL_MAX];

            /* (a reply still arriving counts too: its sender may have died
             * in the middle) */
            if (rpc->done || now_ms < rpc->deadline_ms) {
                continue;
            }
            /* A server that does not answer in time is treated as failed:
             * closing the endpoint also returns every buffer UCX holds. */
            snprintf(why, sizeof(why), "no reply to %s within the timeout (server down or hung?)",
                     sfs_op_name(rpc->opcode));
            sfs_tp_conn_fail(conn, -ETIMEDOUT, why);
            changed++;
            break;
        }
    }
    /* Closing the endpoint should make UCX complete every request on it;
     * should one stay (a UCX fault), its owner must not wait for ever. (The
     * walk starts again after each: an owner's callback may release others.) */
    for (;;) {
        sfs_tp_rpc_t *found = NULL;

        for (elem = worker->held_rpcs.next; elem != &worker->held_rpcs; elem = elem->next) {
            sfs_tp_rpc_t *rpc = sfs_container_of(elem, sfs_tp_rpc_t, conn_list);

            /* (a released one has no owner waiting: it just waits for UCX) */
            if (!rpc->abandoned && !rpc->released &&
                now_ms >= rpc->failed_ms + SFS_TP_RPC_ABANDON_MS) {
                found = rpc;
                break;
            }
        }
        if (!found) {
            break;
        }
        sfs_warn("%s (request %lu) failed %u ms ago, but UCX still holds its %s buffers: "
                 "given back to its caller",
                 sfs_op_name(found->opcode), (unsigned long)found->request_id,
                 (unsigned)(now_ms - found->failed_ms), found->send_pending ? "send" : "receive");
        found->abandoned = 1;
        changed++;
        sfs_tp_rpc_check(found);
    }
    return changed;
}

void sfs_tp_rpcs_free_held(sfs_tp_worker_t *worker)
{
    sfs_list_t *elem, *tmp;

    sfs_list_for_each_safe(elem, tmp, &worker->held_rpcs)
    {
        sfs_tp_rpc_t *rpc = sfs_container_of(elem, sfs_tp_rpc_t, conn_list);

        if (rpc->released) {
            sfs_tp_rpc_free(rpc);
        } else {
            sfs_tp_rpc_unhold(rpc); /* its owner frees it */
            rpc->send_pending = rpc->recv_pending = 0;
        }
    }
}
