/*
 * The metadata mirror's side (sfs_meta_mirror.h): META_MIRROR requests from
 * the primary are applied to this rank's own store on a work queue of one
 * thread (a commit waits for the disk; one thread keeps them in order), and
 * answered on the progress thread.
 */
#define SFS_LOG_FAC "metamirror"
#include "sfs_meta_mirror.h"
#include "sfs_meta_reply_table.h"
#include "sfs_time.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_meta_fence.h"
#include "sfs_handlers.h"
#include "sfs_log.h"
#include "sfs_workq.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sfs_meta_mirror {
    sfs_service_t    *service;
    const char       *dir; /* the config's (sfs_meta_mirror_store_dir) */
    sfs_meta_store_t *store;
    sfs_workq_t      *workq;
    uint64_t          in_flight; /* progress thread only */
};

typedef struct sfs_meta_mirror_job {
    sfs_work_t            work;
    sfs_meta_mirror_t    *mirror;
    sfs_tp_request_t     *req;
    sfs_meta_mirror_req_t args;
    int                   status;
    uint64_t              seq; /* the store's batch after this request */
    uint64_t              alone;
    char                  detail[512];
} sfs_meta_mirror_job_t;

/* Progress thread: answer a job the mirror's thread has done. */
static void sfs_meta_mirror_reply(sfs_work_t *work)
{
    sfs_meta_mirror_job_t  *job   = sfs_container_of(work, sfs_meta_mirror_job_t, work);
    sfs_meta_mirror_reply_t reply = {.seq = job->seq, .alone = job->alone};
    uint8_t                 out[16];
    sfs_wbuf_t              wb;

    job->mirror->in_flight--;
    if (job->status) {
        sfs_tp_request_reply_error(job->req, job->status, "metadata mirror (rank %u): %s",
                                   job->mirror->service->rank, job->detail);
    } else {
        sfs_wbuf_init(&wb, out, sizeof(out));
        sfs_proto_meta_mirror_reply_pack(&wb, &reply);
        sfs_tp_request_reply(job->req, 0, out, wb.length, NULL, 0, NULL, NULL);
    }
    free(job);
}

static void sfs_meta_mirror_run(sfs_work_t *work)
{
    sfs_meta_mirror_job_t *job    = sfs_container_of(work, sfs_meta_mirror_job_t, work);
    sfs_meta_mirror_t     *mirror = job->mirror;
    size_t                 length = 0;
    const void            *data   = sfs_tp_request_payload(job->req, &length);
    uint64_t               have   = 0;
    int                    rc;

    sfs_error_clear();
    rc = sfs_meta_store_mirror_seq(mirror->store, &have);
    if (rc == 0) {
        if (job->args.flags & SFS_META_MIRROR_PROBE) {
            /* where this copy is: the primary decides */
        } else if (job->args.flags & SFS_META_MIRROR_COPY) {
            rc = sfs_meta_store_apply(mirror->store, data, length,
                                      (job->args.flags & SFS_META_MIRROR_COPY_FIRST) != 0);
        } else if (have + 1 != job->args.seq) {
            rc = sfs_error_set(-ESTALE,
                               "batch %" PRIu64 " does not follow this copy's last, %" PRIu64
                               " (a full copy brings it back in step)",
                               job->args.seq, have);
        } else {
            rc = sfs_meta_store_apply(mirror->store, data, length, 0);
        }
    }
    if (rc == 0 && !(job->args.flags & SFS_META_MIRROR_PROBE)) {
        /* the batch's kept replies, for a promotion (not on the disk) */
        uint32_t skipped =
            sfs_meta_reply_table_apply(mirror->service->kept_replies, data, length, sfs_wall_ns());

        if (skipped) {
            sfs_warn("metadata mirror: %u kept replies of batch %" PRIu64 " do not read: their "
                     "changes would run again if sent again after a promotion",
                     skipped, job->args.seq);
        }
    }
    if (rc == 0) {
        rc = sfs_meta_store_mirror_mark(mirror->store, &job->seq, &job->alone);
    }
    job->status = rc;
    if (rc) {
        snprintf(job->detail, sizeof(job->detail), "%s", sfs_error_detail());
    }
}

void sfs_handle_meta_mirror(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_meta_mirror_t     *mirror = service->meta_mirror;
    sfs_meta_mirror_job_t *job;
    const sfs_cred_t      *cred = sfs_tp_session_cred(sfs_tp_request_session(req));

    if (!(cred->flags & SFS_CRED_SERVER)) {
        sfs_tp_request_reply_error(req, -EPERM,
                                   "rank %u on %s: only the metadata server sends META_MIRROR",
                                   service->rank, service->host);
        return;
    }
    if (!SFS_ALLOC_PTR(job)) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    /* taken as the mirror: the server may answer on this rank's word for
     * half the offline timeout, and this rank, promoted, will not until then */
    sfs_meta_fence_word_given(service);
    if (sfs_handler_decode(req, &job->args, sizeof(job->args), 1) != 0) {
        free(job);
        return;
    }
    job->mirror    = mirror;
    job->req       = req;
    job->work.run  = sfs_meta_mirror_run;
    job->work.done = sfs_meta_mirror_reply;
    mirror->in_flight++;
    sfs_workq_submit(mirror->workq, &job->work);
}

const char *sfs_meta_mirror_store_dir(const sfs_service_t *service)
{
    const sfs_config_t *config = service->config;

    /* after a failover the old metadata server's host keeps the copy, in
     * its own meta.dir (docs/metadata-mirror.md, "Failover"); the
     * same-host trial layout has no failover (management shares the
     * metadata server's rank) */
    if (!sfs_config_host_matches(config->meta_host, config->meta_mirror_host) &&
        sfs_config_host_matches(config->meta_host, service->host)) {
        return config->meta_dir;
    }
    return config->meta_mirror_dir;
}

int sfs_meta_mirror_create(sfs_service_t *service, sfs_meta_mirror_t **mirror_p)
{
    const sfs_config_t     *config = service->config;
    sfs_meta_store_params_t params;
    sfs_meta_mirror_t      *mirror;
    uint64_t                seq = 0;
    int                     rc;

    if (!SFS_ALLOC_PTR(mirror)) {
        return -ENOMEM;
    }
    mirror->service = service;
    mirror->dir     = sfs_meta_mirror_store_dir(service);
    memset(&params, 0, sizeof(params));
    params.dir          = mirror->dir;
    params.sync         = config->meta_sync;
    params.map_size     = config->meta_map_size;
    params.chunk_size   = config->default_chunk_size;
    params.stripe_count = config->default_stripe_count;
    params.mirror       = config->mirror_default && config->mirror_group_count > 0;
    rc                  = sfs_meta_store_open(&params, &mirror->store);
    if (rc == 0) {
        rc = sfs_meta_store_mirror_seq(mirror->store, &seq);
    }
    if (rc == 0) {
        rc = sfs_workq_create(1, "metamirror", service->worker, &mirror->workq);
    }
    if (rc) {
        char        why[512];
        const char *mirror_dir = mirror->dir;

        snprintf(why, sizeof(why), "%s", sfs_error_detail());
        sfs_meta_mirror_destroy(mirror);
        return sfs_error_set(rc, "metadata mirror in %s: %s", mirror_dir, why);
    }
    sfs_info("metadata mirror, copy in %s (at batch %" PRIu64 ")", mirror->dir, seq);
    *mirror_p = mirror;
    return 0;
}

void sfs_meta_mirror_destroy(sfs_meta_mirror_t *mirror)
{
    if (!mirror) {
        return;
    }
    sfs_workq_destroy(mirror->workq); /* finishes what is queued */
    while (mirror->in_flight) {       /* the answers posted back */
        sfs_tp_worker_progress(mirror->service->worker, 10);
    }
    sfs_meta_store_close(mirror->store);
    free(mirror);
}
