/*
 * QUOTA_SET, QUOTA_GET and QUOTA_GROW (docs/quotas.md): decoding and the
 * callers' rights on the progress thread, the work in the metadata
 * thread's transaction (sfs_meta_quota.h), the reply after the commit.
 * Setting is for administrators; anyone may read the records of their own
 * uid and groups; QUOTA_GROW needs the open's write capability.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_handlers.h"

#include "sfs_meta_internal.h"
#include "sfs_meta_quota.h"
#include "sfs_meta_store_internal.h"

#include "sfs_alloc.h"
#include "sfs_cap.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <stdlib.h>
#include <string.h>

static const char *sfs_quota_kind_name(uint32_t kind)
{
    return kind == SFS_QUOTA_USER ? "user" : "group";
}

/* QUOTA_GET of one record: its own uid or one of its groups, or an
 * administrator. */
static int sfs_quota_may_read(const sfs_cred_t *cred, const sfs_quota_req_t *q)
{
    if (sfs_cred_admin(cred)) {
        return 1;
    }
    if (q->flags & SFS_QUOTA_LIST) {
        return 0;
    }
    return q->kind == SFS_QUOTA_USER ? q->id == cred->uid : sfs_cred_in_group(cred, q->id);
}

void sfs_handle_meta_quota(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_tp_session_t *session = sfs_tp_request_session(req);
    const sfs_cred_t *cred    = sfs_tp_session_cred(session);
    uint32_t          opcode  = sfs_tp_request_opcode(req);
    sfs_meta_op_t    *op;
    int               rc;

    if (!SFS_ALLOC_PTR(op)) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    op->req    = req;
    op->opcode = opcode;
    op->cred   = *cred;
    if (opcode == SFS_OP_QUOTA_GROW) {
        sfs_quota_grow_req_t grow;

        if (sfs_handler_decode(req, &grow, sizeof(grow), 0) != 0) {
            free(op);
            return;
        }
        rc = sfs_cap_check(&service->cap_key, &grow.cap, grow.entry_id, SFS_CAP_WRITE, cred->uid,
                           sfs_wall_ns() / 1000000000u);
        if (rc) {
            sfs_tp_request_reply_error(req, rc, "QUOTA_GROW of entry %016lx: %s",
                                       (unsigned long)grow.entry_id, sfs_error_detail());
            free(op);
            return;
        }
        /* carried in the SIZE fields: an entry, an end, a capability */
        op->size.entry_id = grow.entry_id;
        op->size.size     = grow.end;
        op->size.cap      = grow.cap;
    } else {
        if (sfs_handler_decode(req, &op->quota, sizeof(op->quota), 0) != 0) {
            free(op);
            return;
        }
        if (opcode == SFS_OP_QUOTA_SET ? !sfs_cred_admin(cred)
                                       : !sfs_quota_may_read(cred, &op->quota)) {
            char who[300];

            sfs_warn("refused %s of %s %u from uid %u (%s): not an administrator",
                     sfs_op_name(opcode), sfs_quota_kind_name(op->quota.kind), op->quota.id,
                     cred->uid, sfs_tp_session_peer_host(session));
            sfs_tp_request_reply_error(
                req, -EPERM, "quota: %s of %s: for administrators only%s",
                opcode == SFS_OP_QUOTA_SET ? "setting the quota" : "reading the quota",
                (op->quota.flags & SFS_QUOTA_LIST)
                    ? "every user and group"
                    : sfs_meta_quota_who(op->quota.kind, op->quota.id, who, sizeof(who)),
                opcode == SFS_OP_QUOTA_SET ? "" : " (anyone may read their own)");
            free(op);
            return;
        }
    }
    service->meta->in_flight++;
    sfs_meta_enqueue(service->meta, op);
}

int sfs_meta_quota_run(sfs_meta_txn_t *txn, sfs_meta_op_t *op)
{
    switch (op->opcode) {
    case SFS_OP_QUOTA_SET:
        return sfs_meta_quota_set(txn, &op->quota);
    case SFS_OP_QUOTA_GET: {
        uint32_t max = (op->quota.flags & SFS_QUOTA_LIST) ? op->quota.max : 1;
        int      rc;

        if (max == 0 || max > SFS_QUOTA_PAGE_MAX) {
            max = SFS_QUOTA_PAGE_MAX;
        }
        op->list_data = calloc(max, sizeof(sfs_quota_entry_t));
        if (!op->list_data) {
            return sfs_error_set(-ENOMEM, "out of memory listing quotas");
        }
        if (op->quota.flags & SFS_QUOTA_LIST) {
            return sfs_meta_quota_list(txn, op->quota.kind, op->quota.id, max, op->list_data,
                                       &op->count, &op->eof);
        }
        rc        = sfs_meta_quota_get(txn, op->quota.kind, op->quota.id, op->list_data);
        op->count = rc == 0;
        op->eof   = 1;
        return rc;
    }
    case SFS_OP_QUOTA_GROW: {
        int limited;
        int rc = sfs_meta_quota_grow(txn, op->size.entry_id, op->size.size, &op->size_reply.size,
                                     &limited);

        op->size_reply.stored = (uint8_t)(limited != 0);
        if (rc == 0 && (op->size.cap.access & SFS_CAP_BOUNDED)) {
            rc = sfs_meta_get_inode(txn, op->size.entry_id, &op->attr); /* the bound's pattern */
        }
        return rc;
    }
    default:
        return sfs_error_set(-EOPNOTSUPP, "quota: operation %u", op->opcode);
    }
}

int sfs_meta_quota_open_bound(sfs_meta_txn_t *txn, sfs_meta_op_t *op)
{
    int limited;

    op->bounded = 0;
    if (op->attr.type != SFS_TYPE_FILE || !(op->args.flags & SFS_OPEN_WRITE)) {
        return 0; /* unlimited owners and readers pay this test only */
    }
    limited = op->created == SFS_CREATED_WRITER_QUOTA ? 1
              : op->created == SFS_CREATED_WRITER     ? 0
                                                      : sfs_meta_quota_limited(txn, &op->attr);
    if (limited < 0) {
        return limited;
    }
    op->bounded = limited;
    return 0;
}

void sfs_meta_quota_bound(sfs_meta_t *meta, const sfs_meta_op_t *op, const sfs_cap_t *cap,
                          uint64_t end, sfs_bound_t *bound)
{
    memset(bound, 0, sizeof(*bound));
    bound->entry_id  = cap->entry_id;
    bound->uid       = op->cred.uid;
    bound->end       = end;
    bound->expires_s = cap->expires_s; /* a bound lasts as long as its capability */
    bound->pattern   = op->attr.pattern;
    sfs_bound_seal(&meta->service->cap_key, bound);
}

int sfs_meta_quota_reply(sfs_meta_t *meta, sfs_meta_op_t *op, sfs_wbuf_t *wb, struct iovec *payload)
{
    payload->iov_base = NULL;
    payload->iov_len  = 0;
    if (op->opcode == SFS_OP_QUOTA_GROW) {
        sfs_quota_grow_reply_t reply = {.granted = op->size_reply.size,
                                        .limited = op->size_reply.stored};

        if (op->size.cap.access & SFS_CAP_BOUNDED) {
            /* the targets' write bound (sfs_proto_bound.h): up to the
             * grant; anywhere where no limit applies any more */
            reply.has_bound = 1;
            sfs_meta_quota_bound(meta, op, &op->size.cap,
                                 reply.limited ? reply.granted : SFS_BOUND_UNLIMITED, &reply.bound);
        }
        sfs_proto_quota_grow_reply_pack(wb, &reply);
        return 0;
    }
    if (op->opcode == SFS_OP_QUOTA_GET) {
        sfs_page_reply_t page = {.count = op->count, .eof = (uint8_t)(op->eof != 0)};
        size_t           cap  = (size_t)op->count * 40 + 1;
        uint8_t         *buf  = malloc(cap);
        sfs_wbuf_t       pb;

        if (!buf) {
            return -ENOMEM;
        }
        sfs_wbuf_init(&pb, buf, cap);
        for (uint32_t i = 0; i < op->count; i++) {
            sfs_proto_quota_entry_pack(&pb, &((sfs_quota_entry_t *)op->list_data)[i]);
        }
        free(op->list_data);
        op->list_data = buf;
        sfs_proto_page_reply_pack(wb, &page);
        payload->iov_base = buf;
        payload->iov_len  = pb.length;
    }
    return 0;
}
