/*
 * The metadata mirror becomes the metadata server (sfs_meta_mirror.h,
 * docs/metadata-mirror.md "Failover"): management, which saw the metadata
 * server's rank go offline while its record said the mirror was good, sends
 * META_PROMOTE. The handler keeps the request; the service's loop runs it
 * (sfs_meta_promote_run), because ending the mirror drains its queue, which
 * progresses the worker, and UCX forbids that inside its own callback.
 * The old server, if it was only cut off and runs on, is deposed; the loop
 * then turns it into the mirror (sfs_meta_demote_run).
 */
#define SFS_LOG_FAC "metamirror"
#include "sfs_meta_mirror.h"

#include "sfs_errno.h"
#include "sfs_handlers.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void sfs_handle_meta_promote(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_meta_promote_req_t args;

    if (!(sfs_tp_session_cred(sfs_tp_request_session(req))->flags & SFS_CRED_SERVER)) {
        sfs_tp_request_reply_error(req, -EPERM,
                                   "rank %u on %s: only management promotes the metadata mirror",
                                   service->rank, service->host);
        return;
    }
    if (sfs_handler_decode(req, &args, sizeof(args), 0) != 0) {
        return;
    }
    if (service->promote_request) {
        sfs_tp_request_reply_error(req, -EALREADY, "rank %u on %s: a promotion is under way",
                                   service->rank, service->host);
        return;
    }
    service->promote_request = req;
    sfs_tp_worker_wakeup(service->worker);
}

void sfs_meta_promote_run(sfs_service_t *service)
{
    sfs_tp_request_t      *req = service->promote_request;
    sfs_meta_promote_req_t args;
    const char            *dir   = sfs_meta_mirror_store_dir(service);
    uint64_t               start = sfs_time_ms(), seq;
    int                    rc;

    service->promote_request = NULL;
    if (sfs_handler_decode(req, &args, sizeof(args), 0) != 0) {
        return;
    }
    if (!service->meta_mirror || service->meta) {
        sfs_tp_request_reply_error(req, -EINVAL,
                                   "rank %u on %s keeps no metadata mirror to promote",
                                   service->rank, service->host);
        return;
    }
    sfs_warn("promoted by management: the metadata server (rank %" PRIu32 ") is offline and "
             "this copy was in step since batch %" PRIu64 "; the copy in %s becomes the "
             "metadata store",
             args.old_node, args.seq, dir);
    /* from here no META_MIRROR is taken: a cut-off old primary cannot
     * change the store (its batches are refused, so its fence fails) */
    sfs_meta_mirror_destroy(service->meta_mirror);
    service->meta_mirror = NULL;
    service->roles &= ~SFS_ROLE_META_MIRROR;
    sfs_error_clear();
    /* its own mirror: the old server's rank, once it rejoins (the map names
     * it; a full copy brings it in step) */
    rc = sfs_meta_create(service, dir, 1, &service->meta);
    if (rc) {
        char why[512];

        snprintf(why, sizeof(why), "%s", sfs_error_detail());
        service->meta = NULL;
        sfs_error("the promotion failed: the copy in %s does not open as the metadata store: %s",
                  dir, why);
        sfs_tp_request_reply_error(req, rc,
                                   "rank %u on %s: the metadata mirror's copy in %s does not "
                                   "open as the metadata store: %s",
                                   service->rank, service->host, dir, why);
        return;
    }
    service->roles |= SFS_ROLE_META;
    service->meta_since_ms = sfs_time_ms();   /* (sfs_meta_fence.h) */
    seq = sfs_meta_last_batch(service->meta); /* after what was queued was applied */
    sfs_warn("this rank (%u on %s) is the metadata server now, at batch %" PRIu64 " (%" PRIu64
             " ms); its mirror is the old server's rank once that rejoins (--rejoin %" PRIu32 ")",
             service->rank, service->host, seq, sfs_time_ms() - start, args.old_node);
    {
        sfs_meta_mirror_reply_t reply = {.seq = seq};
        uint8_t                 out[16];
        sfs_wbuf_t              wb;

        sfs_wbuf_init(&wb, out, sizeof(out));
        sfs_proto_meta_mirror_reply_pack(&wb, &reply);
        sfs_tp_request_reply(req, 0, out, wb.length, NULL, 0, NULL, NULL);
    }
}

void sfs_meta_demote_run(sfs_service_t *service)
{
    sfs_meta_t *meta  = service->meta;
    const char *dir   = sfs_meta_mirror_store_dir(service);
    uint64_t    start = sfs_time_ms();
    int         rc;

    sfs_meta_deposed(meta, service->deposed, sizeof(service->deposed));
    sfs_warn("deposed (%s): this rank ends its metadata server and keeps the metadata mirror in "
             "%s, as the map names it; the promoted server sends it a full copy",
             service->deposed, dir);
    /* from here its metadata requests are refused with ESTALE and those
     * words (sfs_service.c), also while the role is torn down */
    service->meta = NULL;
    service->roles &= ~SFS_ROLE_META;
    sfs_meta_destroy(meta);
    sfs_error_clear();
    rc = sfs_meta_mirror_create(service, &service->meta_mirror);
    if (rc) {
        service->meta_mirror = NULL;
        sfs_error("deposed, and the metadata mirror in %s does not open: %s; stop this rank and "
                  "rejoin it (--rejoin %u)",
                  dir, sfs_error_detail(), service->rank);
        return;
    }
    service->roles |= SFS_ROLE_META_MIRROR;
    sfs_warn("this rank (%u on %s) keeps the metadata mirror now (%" PRIu64 " ms)", service->rank,
             service->host, sfs_time_ms() - start);
}
