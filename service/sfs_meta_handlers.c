/*
 * Requests to the metadata role, on the progress thread: decode and check
 * them, then queue them for the metadata thread (sfs_meta_commit.c);
 * COUNTER is answered at once (sfs_meta_counter.c).
 */
#define SFS_LOG_FAC "meta"
#include "sfs_service.h"

#include "sfs_meta_internal.h"

#include "sfs_alloc.h"
#include "sfs_log.h"

#include <stdlib.h>

void sfs_meta_handle(sfs_meta_t *meta, sfs_tp_request_t *req)
{
    sfs_meta_op_t *op;
    const void    *args;
    size_t         length, payload_length;
    sfs_rbuf_t     rb;

    if (!SFS_ALLOC_PTR(op)) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    op->req    = req;
    op->opcode = sfs_tp_request_opcode(req);
    if (op->opcode == SFS_OP_COUNTER) {
        free(op);
        sfs_meta_counter(meta, req);
        return;
    }
    op->cred = *sfs_tp_session_cred(sfs_tp_request_session(req));
    if ((op->opcode == SFS_OP_META_LIST || op->opcode == SFS_OP_META_CHECK ||
         op->opcode == SFS_OP_META_PENDING) &&
        !sfs_cred_admin(&op->cred)) {
        sfs_warn("refused %s from uid %u (%s): not an administrator", sfs_op_name(op->opcode),
                 op->cred.uid, sfs_tp_session_peer_host(sfs_tp_request_session(req)));
        sfs_tp_request_reply_error(req, -EPERM,
                                   "%s is for administrators (root on a trusted host, or the "
                                   "admin group)",
                                   sfs_op_name(op->opcode));
        free(op);
        return;
    }
    args = sfs_tp_request_args(req, &length);
    sfs_rbuf_init(&rb, args, length);
    sfs_proto_meta_req_unpack(&rb, op->opcode, &op->args);
    sfs_tp_request_payload(req, &payload_length);
    if (rb.error || sfs_rbuf_remaining(&rb) != 0 || payload_length != 0) {
        sfs_tp_request_reply_error(req, rb.error == -ENAMETOOLONG ? -ENAMETOOLONG : -EBADMSG,
                                   "malformed %s request%s", sfs_op_name(op->opcode),
                                   rb.error == -ENAMETOOLONG ? " (path too long)" : "");
        free(op);
        return;
    }
    meta->in_flight++;
    sfs_meta_enqueue(meta, op);
}
