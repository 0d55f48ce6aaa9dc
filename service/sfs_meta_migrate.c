/*
 * MIGRATE_BEGIN and MIGRATE_COMMIT (sfs_meta_migrate.h, docs/migration.md),
 * for administrators: queued for the metadata thread like any write and
 * answered after its batch's commit. MIGRATE_DRAIN and MIGRATE_LEASE are
 * sfs_meta_drain.c's.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_migrate.h"

#include "sfs_handlers.h"
#include "sfs_meta_internal.h"
#include "sfs_meta_store_internal.h"

#include "sfs_alloc.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <inttypes.h>
#include <stdlib.h>

int sfs_meta_migrate_admin(sfs_tp_request_t *req)
{
    sfs_tp_session_t *session = sfs_tp_request_session(req);
    const sfs_cred_t *cred    = sfs_tp_session_cred(session);
    uint32_t          opcode  = sfs_tp_request_opcode(req);

    if (sfs_cred_admin(cred)) {
        return 1;
    }
    sfs_warn("refused %s from uid %u (%s): not an administrator", sfs_op_name(opcode), cred->uid,
             sfs_tp_session_peer_host(session));
    sfs_tp_request_reply_error(req, -EPERM,
                               "%s is for administrators (root on a trusted host, or the "
                               "admin group)",
                               sfs_op_name(opcode));
    return 0;
}

void sfs_handle_meta_migrate(sfs_service_t *service, sfs_tp_request_t *req)
{
    const sfs_cred_t *cred = sfs_tp_session_cred(sfs_tp_request_session(req));
    sfs_meta_op_t    *op;

    if (!sfs_meta_migrate_admin(req)) {
        return;
    }
    /* BEGIN's reply carries a capability to read and write the file: for
     * those who bypass permission bits anyway (trusted root, servers), not
     * for every member of the admin group */
    if (!sfs_cred_privileged(cred)) {
        sfs_tp_request_reply_error(req, -EPERM,
                                   "%s reads and writes any file's chunks: for root on a "
                                   "trusted host (uid %u is in the admin group only)",
                                   sfs_op_name(sfs_tp_request_opcode(req)), cred->uid);
        return;
    }
    if (!SFS_ALLOC_PTR(op)) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    op->req    = req;
    op->opcode = sfs_tp_request_opcode(req);
    op->cred   = *sfs_tp_session_cred(sfs_tp_request_session(req));
    if (sfs_handler_decode(req, &op->migrate, sizeof(op->migrate), 0) != 0) {
        free(op);
        return;
    }
    service->meta->in_flight++;
    sfs_meta_enqueue(service->meta, op);
}

/* COMMIT: the new pattern, if nothing wrote the file since BEGIN */
static int sfs_meta_migrate_commit(sfs_meta_txn_t *txn, sfs_meta_op_t *op, uint64_t now_ns)
{
    const sfs_migrate_req_t *m     = &op->migrate;
    sfs_attr_t              *attr  = &op->attr;
    uint64_t                 now_s = now_ns / 1000000000u;
    uint32_t                 index = SFS_STRIPE_COUNT_MAX;
    int                      rc;

    rc = sfs_meta_get_inode(txn, m->entry_id, attr);
    if (rc) {
        return rc == -ENOENT ? sfs_error_set(rc, "file %016" PRIx64 " is gone", m->entry_id) : rc;
    }
    if (attr->type != SFS_TYPE_FILE) {
        return sfs_error_set(-EINVAL, "entry %016" PRIx64 " is not a file", m->entry_id);
    }
    if (attr->pattern.type == SFS_PATTERN_MIRROR) {
        return sfs_error_set(-EOPNOTSUPP,
                             "file %016" PRIx64 " is mirrored: mirrored targets cannot be "
                             "drained yet",
                             m->entry_id);
    }
    for (uint32_t i = 0; i < attr->pattern.stripe_count; i++) {
        if (attr->pattern.targets[i] == m->to) {
            return sfs_error_set(-EEXIST, "file %016" PRIx64 " already uses target %u", m->entry_id,
                                 m->to);
        }
        if (attr->pattern.targets[i] == m->from) {
            index = i;
        }
    }
    if (index == SFS_STRIPE_COUNT_MAX) {
        return sfs_error_set(-ESTALE, "file %016" PRIx64 " is not on target %u (any more)",
                             m->entry_id, m->from);
    }
    if (attr->writers > 0 && now_s < attr->write_until_s) {
        return sfs_error_set(-EBUSY, "file %016" PRIx64 " is open for writing (%u writers)",
                             m->entry_id, attr->writers);
    }
    if (attr->write_gen != m->write_gen) {
        return sfs_error_set(-EBUSY,
                             "file %016" PRIx64 " was written while its chunk was copied "
                             "(write_gen %" PRIu64 ", was %" PRIu64 ")",
                             m->entry_id, attr->write_gen, m->write_gen);
    }
    /* the old chunk refuses writes until then: a client holding the old
     * pattern that began writing after this commit must find it fenced */
    if (now_s + 5 > m->fence_until_s) {
        return sfs_error_set(-ETIMEDOUT,
                             "file %016" PRIx64 ": the fence on target %u ran out before the "
                             "commit",
                             m->entry_id, m->from);
    }
    attr->pattern.targets[index] = m->to;
    attr->write_gen++; /* a stat's SIZE STORE read the old targets */
    return sfs_meta_put_inode(txn, attr);
}

/* BEGIN: the file's write_gen now, refused while a writer is registered
 * (its writes may be on the old chunk while it is copied) */
static int sfs_meta_migrate_begin(sfs_meta_txn_t *txn, sfs_meta_op_t *op, uint64_t now_ns)
{
    sfs_attr_t *attr = &op->attr;
    int         rc   = sfs_meta_get_inode(txn, op->migrate.entry_id, attr);

    if (rc) {
        return rc == -ENOENT
                   ? sfs_error_set(rc, "file %016" PRIx64 " is gone", op->migrate.entry_id)
                   : rc;
    }
    if (attr->writers > 0 && now_ns / 1000000000u < attr->write_until_s) {
        return sfs_error_set(-EBUSY, "file %016" PRIx64 " is open for writing (%u writers)",
                             op->migrate.entry_id, attr->writers);
    }
    op->migrate.write_gen = attr->write_gen;
    return 0;
}

int sfs_meta_migrate_run(sfs_meta_txn_t *txn, sfs_meta_op_t *op, uint64_t now_ns)
{
    return op->opcode == SFS_OP_MIGRATE_BEGIN ? sfs_meta_migrate_begin(txn, op, now_ns)
                                              : sfs_meta_migrate_commit(txn, op, now_ns);
}
