/*
 * Draining flags in the metadata store and migrate leases
 * (sfs_meta_drain.h): the handlers meta_drain and meta_lease, the store's
 * records, the lease table.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_drain.h"

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
        rc = mdb_del(txn->txn, txn->store->counters, &key, NULL);
        return rc && rc != MDB_NOTFOUND
                   ? sfs_meta_mdb_error(rc, "storage target: removing its draining flag")
                   : 0;
    }
    sfs_meta_put_be64(vbuf, sfs_wall_ns() / 1000000000u); /* since when (for the curious) */
    rc = mdb_put(txn->txn, txn->store->counters, &key, &val, 0);
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

/* One lease: a target and its holder. */
typedef struct sfs_meta_lease {
    uint32_t target;
    uint32_t uid;
    uint32_t pid;
    uint64_t token;
    uint64_t until_ms; /* sfs_time_ms() */
    char     host[64];
} sfs_meta_lease_t;

struct sfs_meta_leases {
    pthread_mutex_t   lock;
    sfs_meta_lease_t *leases;
    uint32_t          count;
    uint32_t          capacity;
};

int sfs_meta_leases_create(sfs_meta_leases_t **leases_p)
{
    sfs_meta_leases_t *leases;

    if (!SFS_ALLOC_PTR(leases)) {
        return -ENOMEM;
    }
    pthread_mutex_init(&leases->lock, NULL);
    *leases_p = leases;
    return 0;
}

void sfs_meta_leases_destroy(sfs_meta_leases_t *leases)
{
    if (!leases) {
        return;
    }
    pthread_mutex_destroy(&leases->lock);
    free(leases->leases);
    free(leases);
}

/* Drop leases that ran out, and with `release`, the holder's of `req`'s
 * targets (under the lock). */
static void sfs_meta_leases_prune(sfs_meta_leases_t *leases, const sfs_migrate_lease_req_t *req,
                                  int release, uint64_t now_ms)
{
    uint32_t kept = 0;

    for (uint32_t i = 0; i < leases->count; i++) {
        sfs_meta_lease_t *l    = &leases->leases[i];
        int               drop = l->until_ms <= now_ms;

        for (uint32_t t = 0; release && !drop && t < req->count; t++) {
            drop = l->token == req->token && l->target == req->targets[t];
        }
        if (!drop) {
            leases->leases[kept++] = *l;
        }
    }
    leases->count = kept;
}

static sfs_meta_lease_t *sfs_meta_lease_find(sfs_meta_leases_t *leases, uint32_t target)
{
    for (uint32_t i = 0; i < leases->count; i++) {
        if (leases->leases[i].target == target) {
            return &leases->leases[i];
        }
    }
    return NULL;
}

static int sfs_meta_leases_take(sfs_meta_leases_t *leases, const sfs_migrate_lease_req_t *req,
                                uint32_t uid, const char *host, uint64_t now_ms)
{
    for (uint32_t t = 0; t < req->count; t++) {
        const sfs_meta_lease_t *l = sfs_meta_lease_find(leases, req->targets[t]);

        if (l && l->token != req->token) {
            return sfs_error_set(-EBUSY,
                                 "storage target %u: another migrate runs on it (uid %u, pid %u "
                                 "on %s; its lease runs out in %" PRIu64 " s if it died)",
                                 l->target, l->uid, l->pid, l->host,
                                 (l->until_ms - now_ms + 999) / 1000);
        }
    }
    for (uint32_t t = 0; t < req->count; t++) {
        sfs_meta_lease_t *l = sfs_meta_lease_find(leases, req->targets[t]);

        if (!l) {
            if (leases->count == leases->capacity) {
                uint32_t          capacity = leases->capacity ? 2 * leases->capacity : 16;
                sfs_meta_lease_t *grown    = realloc(leases->leases, capacity * sizeof(*grown));

                if (!grown) {
                    return sfs_error_set(-ENOMEM, "storage target %u: out of memory",
                                         req->targets[t]);
                }
                leases->leases   = grown;
                leases->capacity = capacity;
            }
            l         = &leases->leases[leases->count++];
            l->target = req->targets[t];
            l->token  = req->token;
        }
        l->uid      = uid;
        l->pid      = req->pid;
        l->until_ms = now_ms + (uint64_t)req->lease_s * 1000u;
        snprintf(l->host, sizeof(l->host), "%s", host && host[0] ? host : "?");
    }
    return 0;
}

int sfs_meta_leases_apply(sfs_meta_leases_t *leases, const sfs_migrate_lease_req_t *req,
                          uint32_t uid, const char *host, uint64_t now_ms)
{
    int rc = 0;

    pthread_mutex_lock(&leases->lock);
    sfs_meta_leases_prune(leases, req, req->op == SFS_LEASE_RELEASE, now_ms);
    if (req->op == SFS_LEASE_TAKE) {
        rc = sfs_meta_leases_take(leases, req, uid, host, now_ms);
    }
    pthread_mutex_unlock(&leases->lock);
    return rc;
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
