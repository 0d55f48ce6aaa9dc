/*
 * POOL_SET and POOL_SHOW (docs/pools.md, "Changing pools while the
 * service runs"): decoding and the caller's right on the progress thread,
 * the change written in the batch's transaction on the metadata thread
 * (sfs_meta_pool_set.c), the pools in force rebuilt from the committed
 * store before the replies go, and the replies. Changing pools is for
 * administrators; anyone may see them (pools are no secret, as POOL_LIST).
 */
#define SFS_LOG_FAC "meta"
#include "sfs_handlers.h"

#include "sfs_meta_internal.h"
#include "sfs_meta_pool.h"

#include "sfs_alloc.h"
#include "sfs_log.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void sfs_handle_meta_pool(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_tp_session_t   *session = sfs_tp_request_session(req);
    const sfs_cred_t   *cred    = sfs_tp_session_cred(session);
    uint32_t            opcode  = sfs_tp_request_opcode(req);
    sfs_pool_set_req_t *set     = NULL;
    sfs_meta_op_t      *op;

    if (!SFS_ALLOC_PTR(op) || (opcode == SFS_OP_POOL_SET && !SFS_ALLOC_PTR(set))) {
        free(op);
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    if (opcode == SFS_OP_POOL_SET) {
        if (sfs_handler_decode(req, set, sizeof(*set), 0) != 0) {
            free(set);
            free(op);
            return;
        }
        if (!sfs_cred_admin(cred)) {
            sfs_warn("refused POOL_SET (%s of pool '%s') from uid %u (%s): not an administrator",
                     sfs_pool_set_op_name(set->op), set->name, cred->uid,
                     sfs_tp_session_peer_host(session));
            sfs_tp_request_reply_error(req, -EPERM,
                                       "storage pool '%s': changing storage pools is for "
                                       "administrators (root on a trusted host, or the admin "
                                       "group: docs/security.md)",
                                       set->name);
            free(set);
            free(op);
            return;
        }
    } else {
        sfs_none_t none;

        if (sfs_handler_decode(req, &none, sizeof(none), 0) != 0) {
            free(op);
            return;
        }
    }
    op->req       = req;
    op->opcode    = opcode;
    op->cred      = *cred;
    op->list_data = set; /* POOL_SET's request; POOL_SHOW's list once run */
    service->meta->in_flight++;
    sfs_meta_enqueue(service->meta, op);
}

int sfs_meta_pool_start(sfs_meta_t *meta)
{
    sfs_meta_txn_t *txn    = NULL;
    uint32_t        stored = 0;
    int             rc     = sfs_meta_txn_begin(meta->store, 0, &txn);

    if (rc == 0) {
        rc = sfs_meta_pools_load(&meta->pools, meta->service->config, txn, 1);
        sfs_meta_txn_abort(txn);
    }
    if (rc) {
        return rc;
    }
    for (uint32_t i = 0; i < meta->pools.count; i++) {
        stored += meta->pools.pools[i].line < 0;
    }
    if (meta->pools.count) {
        sfs_info("storage pools: %u in force, %u of them as the metadata store keeps them",
                 meta->pools.count, stored);
    }
    return 0;
}

int sfs_meta_pool_run(sfs_meta_t *meta, sfs_meta_txn_t *txn, sfs_meta_op_t *op)
{
    if (op->opcode == SFS_OP_POOL_SET) {
        const sfs_pool_set_req_t *set = op->list_data;
        uint32_t                  id  = 0;
        int                       rc  = sfs_meta_pools_change(txn, meta->service->config, set, &id);

        if (rc == 0) {
            sfs_info("storage pool '%s' (id %" PRIu32 "): %s of %" PRIu32 " target%s by uid %u",
                     set->name, id, sfs_pool_set_op_name(set->op), set->target_count,
                     set->target_count == 1 ? "" : "s", op->cred.uid);
        }
        return rc;
    }
    if (op->opcode == SFS_OP_POOL_SHOW) {
        sfs_pool_list_reply_t *list = calloc(1, sizeof(*list));

        if (!list) {
            return sfs_error_set(-ENOMEM, "out of memory listing storage pools");
        }
        sfs_meta_pools_list(&meta->pools.view, list);
        op->list_data = list;
        return 0;
    }
    return sfs_error_set(-EOPNOTSUPP, "storage pools: operation %u", op->opcode);
}

void sfs_meta_pool_committed(sfs_meta_t *meta, sfs_list_t *ops)
{
    sfs_meta_txn_t *txn = NULL;
    sfs_list_t     *elem, *tmp;
    int             changed = 0, rc;

    sfs_list_for_each_safe(elem, tmp, ops)
    {
        const sfs_meta_op_t *op = sfs_container_of(elem, sfs_meta_op_t, list);

        changed |= op->opcode == SFS_OP_POOL_SET && op->status == 0;
    }
    if (!changed) {
        return;
    }
    /* the chooser's pools from what the commit made durable */
    rc = sfs_meta_txn_begin(meta->store, 0, &txn);
    if (rc == 0) {
        rc = sfs_meta_pools_load(&meta->pools, meta->service->config, txn, 0);
        sfs_meta_txn_abort(txn);
    }
    if (rc == 0) {
        return;
    }
    sfs_error("storage pools changed, but not rebuilt from the store: %s", sfs_error_detail());
    sfs_list_for_each_safe(elem, tmp, ops)
    {
        sfs_meta_op_t *op = sfs_container_of(elem, sfs_meta_op_t, list);

        if (op->opcode == SFS_OP_POOL_SET && op->status == 0) {
            op->status = rc;
            snprintf(op->detail, sizeof(op->detail),
                     "storage pool '%s': the change is stored but not in force until the "
                     "metadata server restarts: %s",
                     ((const sfs_pool_set_req_t *)op->list_data)->name, sfs_strerror(rc));
        }
    }
}

void sfs_meta_pool_reply(sfs_meta_op_t *op, sfs_wbuf_t *wb)
{
    if (op->opcode == SFS_OP_POOL_SHOW) {
        sfs_proto_pool_list_reply_pack(wb, op->list_data);
    }
}
