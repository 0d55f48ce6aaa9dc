/*
 * Handlers of the requests every rank serves (sfs_handlers.h): PING,
 * NET_INFO and STOP, and the catch-all for operations the transport answers
 * itself (HELLO, AUTH, BYE, DIRECT), which never reach a handler.
 */
#define SFS_LOG_FAC "server"
#include "sfs_handlers.h"

#include "sfs_errno.h"
#include "sfs_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sfs_handle_ping(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_ping_reply_t reply = {.rank = service->rank, .roles = service->roles};
    sfs_none_t       none;
    uint8_t          out[16];
    sfs_wbuf_t       wb;

    if (sfs_handler_decode(req, &none, sizeof(none), 0) != 0) {
        return;
    }
    sfs_wbuf_init(&wb, out, sizeof(out));
    sfs_proto_ping_reply_pack(&wb, &reply);
    sfs_tp_request_reply(req, 0, out, wb.length, NULL, 0, NULL, NULL);
}

typedef struct sfs_net_info_ctx {
    sfs_wbuf_t wb;
    uint32_t   count;
} sfs_net_info_ctx_t;

static void sfs_service_net_info_visit(sfs_tp_session_t *session, void *arg)
{
    sfs_net_info_ctx_t *ctx = arg;
    sfs_net_session_t   one;

    memset(&one, 0, sizeof(one));
    one.peer_kind = sfs_tp_session_peer_kind(session);
    one.peer_uuid = sfs_tp_session_peer_uuid(session);
    one.pid       = sfs_tp_session_peer_pid(session);
    snprintf(one.host, sizeof(one.host), "%s", sfs_tp_session_peer_host(session));
    snprintf(one.program, sizeof(one.program), "%s", sfs_tp_session_peer_program(session));
    snprintf(one.transports, sizeof(one.transports), "%s", sfs_tp_session_transports(session));
    one.age_ms = sfs_tp_session_age_ms(session);
    sfs_proto_net_session_pack(&ctx->wb, &one);
    if (!ctx->wb.error) {
        ctx->count++;
    }
}

static void sfs_service_free_cb(void *arg)
{
    free(arg);
}

void sfs_handle_net_info(sfs_service_t *service, sfs_tp_request_t *req)
{
    size_t               capacity = 1 << 20;
    uint8_t             *buf;
    uint8_t              args[16];
    sfs_wbuf_t           wb;
    sfs_net_info_ctx_t   ctx;
    sfs_net_info_reply_t reply;
    sfs_none_t           none;
    struct iovec         iov;

    if (sfs_handler_decode(req, &none, sizeof(none), 0) != 0) {
        return;
    }
    buf = malloc(capacity);
    if (!buf) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    sfs_wbuf_init(&ctx.wb, buf, capacity);
    ctx.count = 0;
    sfs_tp_worker_visit_sessions(service->worker, sfs_service_net_info_visit, &ctx);
    reply.rank  = service->rank;
    reply.count = ctx.count;
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_net_info_reply_pack(&wb, &reply);
    iov.iov_base = buf;
    iov.iov_len  = ctx.wb.error ? 0 : ctx.wb.length;
    sfs_tp_request_reply(req, 0, args, wb.length, &iov, 1, sfs_service_free_cb, buf);
}

void sfs_handle_stop(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_none_t none;

    if (!(sfs_tp_session_cred(sfs_tp_request_session(req))->flags & SFS_CRED_SERVER)) {
        sfs_tp_request_reply_error(req, -EPERM, "STOP: only management may stop a rank");
        return;
    }
    if (sfs_handler_decode(req, &none, sizeof(none), 0) != 0) {
        return;
    }
    if (service->stop_request) {
        sfs_tp_request_reply_error(req, -EALREADY, "rank %u: a stop is under way", service->rank);
        return;
    }
    /* answered by sfs_service_flush, after the loop: a flush here, in the
     * transport's callback, could not progress the worker (UCX forbids it) */
    sfs_info("stop requested by management");
    service->stop_request = req;
    sfs_service_request_stop(service);
}

void sfs_handle_transport(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_tp_request_reply_error(req, -EPROTO, "rank %u: %s is answered by the transport",
                               service->rank, sfs_op_name(sfs_tp_request_opcode(req)));
}
