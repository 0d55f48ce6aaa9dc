/*
 * Draining flags in the metadata store and migrate leases
 * (sfs_meta_drain.h): the handlers meta_drain and meta_lease, the store's
 * records (the lease table is sfs_meta_lease.c).
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_drain.h"
#include "sfs_meta_lease.h"

#include "sfs_handlers.h"
#include "sfs_meta_internal.h"
#include "sfs_meta_migrate.h"
#include "sfs_meta_store_internal.h"

#include "sfs_alloc.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SFS_DRAIN_KEY_PREFIX "drain:"
#define SFS_DRAIN_KEY_SIZE   (sizeof(SFS_DRAIN_KEY_PREFIX) - 1 + 4)

static void sfs_drain_key(uint32_t target, uint8_t *buf, MDB_val *key)
{
    size_t n = sizeof(SFS_DRAIN_KEY_PREFIX) - 1;

    memcpy(buf, SFS_DRAIN_KEY_PREFIX, n);
    for (int i = 3; i >= 0; i--) {
        buf[n + (size_t)i] = (uint8_t)target;
        target >>= 8;
    }
    key->mv_size = SFS_DRAIN_KEY_SIZE;
    key->mv_data = buf;
}

/* The target of a drain record; 0 past them. */
static uint32_t sfs_drain_key_target(const MDB_val *key)
{
    const uint8_t *k = key->mv_data;
    size_t         n = sizeof(SFS_DRAIN_KEY_PREFIX) - 1;
    uint32_t       target;

    if (key->mv_size != SFS_DRAIN_KEY_SIZE || memcmp(k, SFS_DRAIN_KEY_PREFIX, n) != 0) {
        return 0;
    }
    target = (uint32_t)k[n] << 24 | (uint32_t)k[n + 1] << 16 | (uint32_t)k[n + 2] << 8 | k[n + 3];
    return target;
}

int sfs_meta_drain_load(sfs_meta_store_t *store, sfs_meta_chooser_t *chooser)
{
    sfs_meta_txn_t *txn;
    MDB_cursor     *cursor;
    MDB_val         key, val;
    uint8_t         kbuf[SFS_DRAIN_KEY_SIZE];
    int             rc = sfs_meta_txn_begin(store, 0, &txn);

    if (rc) {
        return rc;
    }
    rc = mdb_cursor_open(txn->txn, store->counters, &cursor);
    if (rc) {
        sfs_meta_txn_abort(txn);
        return sfs_meta_mdb_error(rc, "reading the draining flags");
    }
    sfs_drain_key(0, kbuf, &key);
    rc = mdb_cursor_get(cursor, &key, &val, MDB_SET_RANGE);
    while (rc == 0) {
        uint32_t target = sfs_drain_key_target(&key);

        if (target == 0) {
            break; /* past the drain records */
        }
        rc = sfs_meta_chooser_set_draining(chooser, target, 1);
        if (rc) {
            break;
        }
        sfs_info("storage target %u draining (kept in the metadata store): no new files", target);
        rc = mdb_cursor_get(cursor, &key, &val, MDB_NEXT);
    }
    mdb_cursor_close(cursor);
    sfs_meta_txn_abort(txn);
    if (rc == MDB_NOTFOUND) {
        return 0;
    }
    return rc > 0 ? sfs_meta_mdb_error(rc, "reading the draining flags") : rc;
}

int sfs_meta_drain_run(sfs_meta_txn_t *txn, sfs_meta_op_t *op)
{
    uint32_t target = op->migrate.from;
    uint8_t  kbuf[SFS_DRAIN_KEY_SIZE], vbuf[8];
    MDB_val  key, val = {sizeof(vbuf), vbuf};
    int      rc;

    sfs_drain_key(target, kbuf, &key);
    if (op->migrate.op == SFS_DRAIN_CLEAR) {
        rc = sfs_meta_txn_del(txn, txn->store->counters, &key);
        return rc && rc != MDB_NOTFOUND
                   ? sfs_meta_mdb_error(rc, "storage target: removing its draining flag")
                   : 0;
    }
    sfs_meta_put_be64(vbuf, sfs_wall_ns() / 1000000000u); /* since when (for the curious) */
    rc = sfs_meta_txn_put(txn, txn->store->counters, &key, &val);
    if (rc) {
        rc = sfs_meta_mdb_error(rc, "writing a draining flag");
        return sfs_error_set(rc, "storage target %u: %s", target, sfs_error_detail());
    }
    return 0;
}

/* The draining list into `wb` (MIGRATE_DRAIN's reply); 0 or -ENOMEM. */
static int sfs_meta_drain_list(sfs_meta_chooser_t *chooser, sfs_wbuf_t *wb)
{
    sfs_migrate_reply_t *reply = calloc(1, sizeof(*reply));

    if (!reply) {
        return -ENOMEM;
    }
    reply->count = sfs_meta_chooser_draining(chooser, reply->targets, SFS_DRAIN_LIST_MAX);
    sfs_proto_migrate_reply_pack(wb, reply);
    free(reply);
    return 0;
}

int sfs_meta_drain_reply(sfs_meta_t *meta, sfs_meta_op_t *op, sfs_wbuf_t *wb)
{
    int set = op->migrate.op == SFS_DRAIN_SET;
    int rc  = sfs_meta_chooser_set_draining(&meta->chooser, op->migrate.from, set);

    if (rc) {
        return rc;
    }
    sfs_info("storage target %u %s", op->migrate.from,
             set ? "draining: no new files (kept in the metadata store)" : "takes new files again");
    return sfs_meta_drain_list(&meta->chooser, wb);
}

void sfs_handle_meta_drain(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_meta_t       *meta = service->meta;
    sfs_migrate_req_t mreq;
    sfs_meta_op_t    *op;
    uint8_t           out[8 + 4 * SFS_DRAIN_LIST_MAX];
    sfs_wbuf_t        wb;

    if (sfs_handler_decode(req, &mreq, sizeof(mreq), 0) != 0) {
        return;
    }
    if (mreq.op == SFS_DRAIN_LIST) {
        sfs_wbuf_init(&wb, out, sizeof(out));
        if (sfs_meta_drain_list(&meta->chooser, &wb) != 0) {
            sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
            return;
        }
        sfs_tp_request_reply(req, 0, out, wb.length, NULL, 0, NULL, NULL);
        return;
    }
    if (!sfs_meta_migrate_admin(req)) {
        return;
    }
    /* a flag for a target the map does not have would be kept for ever;
     * clearing one is always allowed (a target taken out of the config) */
    if (mreq.op == SFS_DRAIN_SET && !sfs_meta_chooser_has_target(&meta->chooser, mreq.from)) {
        sfs_tp_request_reply_error(req, -ENOENT, "storage target %u does not exist", mreq.from);
        return;
    }
    if (!SFS_ALLOC_PTR(op)) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    op->req     = req;
    op->opcode  = SFS_OP_MIGRATE_DRAIN;
    op->cred    = *sfs_tp_session_cred(sfs_tp_request_session(req));
    op->migrate = mreq;
    meta->in_flight++;
    sfs_meta_enqueue(meta, op); /* sfs_meta_drain_run, then sfs_meta_drain_reply */
}

void sfs_handle_meta_lease(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_tp_session_t        *session = sfs_tp_request_session(req);
    sfs_migrate_lease_req_t *lreq    = malloc(sizeof(*lreq));
    int                      rc;

    if (!lreq) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    if (sfs_handler_decode(req, lreq, sizeof(*lreq), 0) != 0 || !sfs_meta_migrate_admin(req)) {
        free(lreq);
        return;
    }
    rc = sfs_meta_leases_apply(service->meta->leases, lreq, sfs_tp_session_cred(session)->uid,
                               sfs_tp_session_peer_host(session), sfs_time_ms());
    free(lreq);
    if (rc) {
        sfs_tp_request_reply_error(req, rc, "%s", sfs_error_detail());
        return;
    }
    sfs_tp_request_reply(req, 0, NULL, 0, NULL, 0, NULL, NULL);
}
