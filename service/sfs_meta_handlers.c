/*
 * Handlers of the metadata role's requests (sfs_handlers.h), on the
 * progress thread: decode and check them, then queue them for the metadata
 * thread (sfs_meta_commit.c), or answer a read at once while that thread
 * is idle (sfs_meta_read_now.c); COUNTER is answered at once
 * (sfs_meta_counter.c). SIZE's capability is checked here.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_handlers.h"

#include "sfs_meta_internal.h"

#include "sfs_alloc.h"
#include "sfs_cap.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <stddef.h>
#include <stdlib.h>

/* An op for `req`, its arguments decoded into the op's field at
 * `args_offset`; NULL when refused (answered already). */
static sfs_meta_op_t *sfs_meta_op_new(sfs_tp_request_t *req, size_t args_offset, size_t args_size)
{
    sfs_meta_op_t *op;

    if (!SFS_ALLOC_PTR(op)) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return NULL;
    }
    op->req    = req;
    op->opcode = sfs_tp_request_opcode(req);
    op->cred   = *sfs_tp_session_cred(sfs_tp_request_session(req));
    op->client = sfs_tp_session_peer_uuid(sfs_tp_request_session(req));
    /* its arrival: the transport hands a small request over as it comes */
    op->times.arrive_ns = sfs_meta_stats_now();
    if (sfs_handler_decode(req, (char *)op + args_offset, args_size, 0) != 0) {
        free(op);
        return NULL;
    }
    return op;
}

/* sfs_meta_op_new decoding into the op's field `field` */
#define SFS_META_OP_NEW(req, field)                                                                \
    sfs_meta_op_new((req), offsetof(sfs_meta_op_t, field), sizeof(((sfs_meta_op_t *)0)->field))

static void sfs_meta_op_queue(sfs_meta_t *meta, sfs_meta_op_t *op)
{
    if (sfs_meta_read_now(meta, op)) {
        return;
    }
    meta->in_flight++;
    sfs_meta_enqueue(meta, op);
}

void sfs_handle_meta(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_meta_op_t *op = SFS_META_OP_NEW(req, args);

    if (op) {
        sfs_meta_op_queue(service->meta, op);
    }
}

/* The namespace as a whole (fsck): for administrators only. */
void sfs_handle_meta_admin(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_tp_session_t *session = sfs_tp_request_session(req);
    const sfs_cred_t *cred    = sfs_tp_session_cred(session);
    uint32_t          opcode  = sfs_tp_request_opcode(req);

    if (!sfs_cred_admin(cred)) {
        sfs_warn("refused %s from uid %u (%s): not an administrator", sfs_op_name(opcode),
                 cred->uid, sfs_tp_session_peer_host(session));
        sfs_tp_request_reply_error(req, -EPERM,
                                   "%s is for administrators (root on a trusted host, or the "
                                   "admin group)",
                                   sfs_op_name(opcode));
        return;
    }
    sfs_handle_meta(service, req);
}

void sfs_handle_counter(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_counter_req_t   creq;
    sfs_counter_reply_t reply;
    uint8_t             out[8];
    sfs_wbuf_t          wb;
    int                 rc;

    if (sfs_handler_decode(req, &creq, sizeof(creq), 0) != 0) {
        return;
    }
    if (creq.server_uuid != 0 && creq.server_uuid != sfs_tp_worker_uuid(service->worker)) {
        /* the counter lived in the memory of the server the file was opened
         * with: a reset would silently hand out offsets twice */
        sfs_tp_request_reply_error(req, -ESTALE,
                                   "shared file pointer of open file %llu: lost, the metadata "
                                   "server restarted or was replaced (a failover) since the file "
                                   "was opened (open it again)",
                                   (unsigned long long)creq.key);
        return;
    }
    rc = sfs_meta_counter(service->meta, &creq,
                          sfs_tp_session_peer_uuid(sfs_tp_request_session(req)),
                          sfs_tp_session_cred(sfs_tp_request_session(req))->uid, &reply.before);
    if (rc) {
        sfs_tp_request_reply_error(req, rc, "shared file pointer of open file %llu: %s",
                                   (unsigned long long)creq.key,
                                   rc == -ENFILE ? sfs_error_detail() : sfs_strerror(rc));
        return;
    }
    sfs_wbuf_init(&wb, out, sizeof(out));
    sfs_proto_counter_reply_pack(&wb, &reply);
    sfs_tp_request_reply(req, 0, out, wb.length, NULL, 0, NULL, NULL);
}

/* SIZE: BEGIN, END and RENEW come from an open that may write (its write
 * capability); STORE from a stat (its capability, any access). */
void sfs_handle_meta_size(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_meta_op_t *op = SFS_META_OP_NEW(req, size);
    uint32_t       access;
    int            rc;

    if (!op) {
        return;
    }
    access = op->size.op == SFS_SIZE_OP_STORE ? 0 : SFS_CAP_WRITE;
    rc = sfs_cap_check(&service->cap_key, &op->size.cap, op->size.entry_id, access, op->cred.uid,
                       sfs_wall_ns() / 1000000000u);
    if (rc) {
        sfs_tp_request_reply_error(req, rc, "SIZE of entry %016lx: %s",
                                   (unsigned long)op->size.entry_id, sfs_error_detail());
        free(op);
        return;
    }
    sfs_meta_op_queue(service->meta, op);
}
