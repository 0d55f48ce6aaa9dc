/*
 * LOCK and UNLOCK on the metadata role (the `lock` handler of
 * SFS_PROTO_OPS), on the progress thread: check the open's capability,
 * then ask the lock table (sfs_meta_lock.h). A lock that must wait keeps
 * its request, answered when the lock is granted (a deferred reply, as
 * group commit answers later); the owner of a lock is the client's
 * session, and a session that ends loses its locks.
 */
#define SFS_LOG_FAC "lock"
#include "sfs_handlers.h"

#include "sfs_meta_internal.h"
#include "sfs_meta_lock.h"

#include "sfs_cap.h"
#include "sfs_log.h"
#include "sfs_time.h"

/* A queued LOCK ends: granted (0) or not. */
static void sfs_meta_lock_done(void *waiter, int status, void *arg)
{
    sfs_tp_request_t *req = waiter;

    (void)arg;
    if (status == 0) {
        sfs_tp_request_reply(req, 0, NULL, 0, NULL, 0, NULL, NULL);
        return;
    }
    sfs_tp_request_reply_error(req, status, "byte-range lock not granted: %s",
                               status == -ECANCELED ? "cancelled by its owner"
                                                    : sfs_strerror(status));
}

int sfs_meta_locks_init(sfs_meta_t *meta)
{
    return sfs_lock_table_create(sfs_meta_lock_done, meta, &meta->locks);
}

void sfs_meta_locks_cleanup(sfs_meta_t *meta)
{
    sfs_lock_table_destroy(meta->locks, -ESHUTDOWN);
    meta->locks = NULL;
}

void sfs_meta_locks_session_end(sfs_meta_t *meta, sfs_tp_session_t *session)
{
    size_t gone;

    if (!meta || !meta->locks) {
        return;
    }
    gone = sfs_lock_release_owner(meta->locks, (const void *)(uintptr_t)sfs_tp_session_id(session),
                                  -ECONNRESET);
    if (gone) {
        sfs_info("session %016llx (%s pid %u) ended: %zu byte-range lock(s) released",
                 (unsigned long long)sfs_tp_session_id(session), sfs_tp_session_peer_host(session),
                 sfs_tp_session_peer_pid(session), gone);
    }
}

static void sfs_meta_lock(sfs_meta_t *meta, sfs_tp_request_t *req)
{
    sfs_tp_session_t *session = sfs_tp_request_session(req);
    const sfs_cred_t *cred    = sfs_tp_session_cred(session);
    sfs_lock_req_t    lreq;
    sfs_lock_spec_t   spec;
    uint32_t          access;
    int               rc;

    if (sfs_handler_decode(req, &lreq, sizeof(lreq), 0) != 0) {
        return;
    }
    /* an exclusive lock is for writers: it needs what WRITE needs */
    access = lreq.mode == SFS_LOCK_EXCLUSIVE ? SFS_CAP_WRITE : SFS_CAP_READ;
    rc     = sfs_cap_check(&meta->service->cap_key, &lreq.cap, lreq.entry_id, access, cred->uid,
                           sfs_wall_ns() / 1000000000u);
    if (rc) {
        sfs_warn("refused LOCK of file %llu from uid %u (%s pid %u): %s",
                 (unsigned long long)lreq.entry_id, cred->uid, sfs_tp_session_peer_host(session),
                 sfs_tp_session_peer_pid(session), sfs_error_detail());
        sfs_tp_request_reply_error(req, rc, "%s lock of file %llu: %s",
                                   lreq.mode == SFS_LOCK_EXCLUSIVE ? "exclusive" : "shared",
                                   (unsigned long long)lreq.entry_id, sfs_error_detail());
        return;
    }
    spec = (sfs_lock_spec_t){.owner    = (const void *)(uintptr_t)sfs_tp_session_id(session),
                             .entry_id = lreq.entry_id,
                             .lock_id  = lreq.lock_id,
                             .offset   = lreq.offset,
                             .length   = lreq.length,
                             .mode     = lreq.mode};
    rc   = sfs_lock_acquire(meta->locks, &spec, req);
    if (rc == SFS_LOCK_QUEUED) {
        return; /* answered by sfs_meta_lock_done */
    }
    if (rc) {
        sfs_tp_request_reply_error(req, rc, "lock %llu of file %llu: %s",
                                   (unsigned long long)lreq.lock_id,
                                   (unsigned long long)lreq.entry_id,
                                   rc == -EEXIST   ? "this session uses that lock id already"
                                   : rc == -ENOLCK ? "too many locks held or queued by this session"
                                                   : sfs_strerror(rc));
        return;
    }
    sfs_tp_request_reply(req, 0, NULL, 0, NULL, 0, NULL, NULL);
}

static void sfs_meta_unlock(sfs_meta_t *meta, sfs_tp_request_t *req)
{
    sfs_tp_session_t *session = sfs_tp_request_session(req);
    sfs_unlock_req_t  ureq;
    int               rc;

    if (sfs_handler_decode(req, &ureq, sizeof(ureq), 0) != 0) {
        return;
    }
    /* only this session's own locks can be named: no capability needed */
    rc = sfs_lock_release(meta->locks, (const void *)(uintptr_t)sfs_tp_session_id(session),
                          ureq.entry_id, ureq.lock_id);
    if (rc) {
        sfs_tp_request_reply_error(
            req, rc, "lock %llu of file %llu: this session holds no such lock",
            (unsigned long long)ureq.lock_id, (unsigned long long)ureq.entry_id);
        return;
    }
    sfs_tp_request_reply(req, 0, NULL, 0, NULL, 0, NULL, NULL);
}

void sfs_handle_lock(sfs_service_t *service, sfs_tp_request_t *req)
{
    if (sfs_tp_request_opcode(req) == SFS_OP_LOCK) {
        sfs_meta_lock(service->meta, req);
    } else {
        sfs_meta_unlock(service->meta, req);
    }
}
