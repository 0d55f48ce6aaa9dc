/*
 * Byte-range locks of an open file (sfs_file_lock, sfs_file_unlock): one
 * metadata RPC each, granted by the metadata server's lock table
 * (service/sfs_meta_lock.h). The client names each lock itself, so that a
 * LOCK whose reply never came (timed out while it waited) can still be
 * cancelled, and no lock of ours is left granted to nobody. The locks live
 * in that server's memory: the unlock of one granted by a server that has
 * since restarted or been replaced (a failover) fails with ESTALE.
 */
#define SFS_LOG_FAC "client"
#include "sfs_client_internal.h"

#include "sfs_errno.h"
#include "sfs_log.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* Lock ids, unique in this process (so in each of its sessions). */
static _Atomic uint64_t sfs_client_lock_ids = 1;

static int sfs_client_lock_call(sfs_file_t *file, uint32_t opcode, const void *args, size_t length)
{
    sfs_tp_rpc_t *rpc;
    int           rc;

    /* whether the call may go again if its reply is lost is known now,
     * from the last connection to the server (after a cut none may work) */
    __atomic_store_n(&file->client->lock_owners,
                     (sfs_cluster_meta_features(file->client->cluster) & SFS_FEATURE_LOCK_OWNERS) !=
                         0,
                     __ATOMIC_RELAXED);
    rc = sfs_client_meta_call_args(file->client, opcode, args, length, &rpc);

    sfs_tp_rpc_release(rpc);
    return rc;
}

/* The worker uuid of the metadata server that answers now (0: none). */
static uint64_t sfs_client_lock_server(sfs_file_t *file)
{
    sfs_tp_conn_t *conn;

    if (sfs_cluster_meta_conn(file->client->cluster, &conn) != 0) {
        sfs_error_clear();
        return 0;
    }
    return sfs_tp_conn_server_uuid(conn);
}

static void sfs_client_lock_held(sfs_file_t *file, uint64_t lock_id)
{
    uint64_t uuid = sfs_client_lock_server(file);

    for (int i = 0; uuid && i < SFS_FILE_HELD_LOCKS; i++) {
        if (file->held_lock_id[i] == 0) {
            file->held_lock_id[i]   = lock_id;
            file->held_lock_uuid[i] = uuid;
            return;
        }
    }
}

/* Forget lock_id; 0, or -ESTALE when the server that granted it is no
 * longer the one that answers (it was lost with that server's memory). */
static int sfs_client_lock_released(sfs_file_t *file, uint64_t lock_id)
{
    for (int i = 0; i < SFS_FILE_HELD_LOCKS; i++) {
        if (file->held_lock_id[i] == lock_id) {
            uint64_t granted = file->held_lock_uuid[i];

            file->held_lock_id[i] = 0;
            return granted != sfs_client_lock_server(file) ? -ESTALE : 0;
        }
    }
    return 0;
}

static int sfs_client_unlock_id(sfs_file_t *file, uint64_t lock_id)
{
    sfs_unlock_req_t req = {.entry_id = file->attr.entry_id, .lock_id = lock_id};
    uint8_t          args[32];
    sfs_wbuf_t       wb;

    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_unlock_req_pack(&wb, &req);
    return sfs_client_lock_call(file, SFS_OP_UNLOCK, args, wb.length);
}

int sfs_file_lock(sfs_file_t *file, uint64_t offset, uint64_t length, int exclusive,
                  uint64_t *lock_id_p)
{
    sfs_lock_req_t req;
    uint8_t        args[128];
    sfs_wbuf_t     wb;
    char           detail[SFS_ERROR_DETAIL_MAX];
    int            rc;

    SFS_ARG_CHECK(file && lock_id_p, "the file or lock_id_p is NULL");
    sfs_file_cap_refresh(file);
    memset(&req, 0, sizeof(req));
    req.entry_id = file->attr.entry_id;
    req.lock_id  = atomic_fetch_add(&sfs_client_lock_ids, 1);
    req.offset   = offset;
    req.length   = length;
    req.mode     = exclusive ? SFS_LOCK_EXCLUSIVE : SFS_LOCK_SHARED;
    req.cap      = file->cap;
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_lock_req_pack(&wb, &req);
    if (wb.error) {
        return sfs_error_set(wb.error, "%s: cannot encode a LOCK request", file->path);
    }
    rc = sfs_client_lock_call(file, SFS_OP_LOCK, args, wb.length);
    if (rc == 0) {
        sfs_client_lock_held(file, req.lock_id);
        *lock_id_p = req.lock_id;
        return 0;
    }
    snprintf(detail, sizeof(detail), "%s", sfs_error_detail());
    if (rc == -ETIMEDOUT) {
        /* it may still be queued, or granted after we gave up: cancel it
         * (best effort: the server drops it anyway when we disconnect) */
        sfs_client_unlock_id(file, req.lock_id);
    }
    return sfs_error_set(rc, "%s: %s lock of [%llu, +%llu): %s", file->path,
                         exclusive ? "exclusive" : "shared", (unsigned long long)offset,
                         (unsigned long long)length, detail);
}

int sfs_file_unlock(sfs_file_t *file, uint64_t lock_id)
{
    char detail[SFS_ERROR_DETAIL_MAX];
    int  rc;

    SFS_ARG_CHECK(file, "the file is NULL");
    if (sfs_client_lock_released(file, lock_id) != 0) {
        /* the server that holds our locks now never granted it: another
         * process may have taken the range meanwhile; say so, never a
         * silent success */
        return sfs_error_set(-ESTALE,
                             "%s: unlock of lock %llu: the lock was lost, the metadata server "
                             "that granted it restarted or was replaced (a failover) while it "
                             "was held; another process may have taken the range meanwhile",
                             file->path, (unsigned long long)lock_id);
    }
    rc = sfs_client_unlock_id(file, lock_id);
    if (rc) {
        snprintf(detail, sizeof(detail), "%s", sfs_error_detail());
        return sfs_error_set(rc, "%s: unlock of lock %llu: %s", file->path,
                             (unsigned long long)lock_id, detail);
    }
    return 0;
}
