/*
 * The metadata mirror's state, told to management (sfs_meta_mirror.h,
 * docs/metadata-mirror.md "Management knows the mirror's state"). The
 * metadata thread sets it when the mirror is dropped, copied or in step
 * again; the progress thread sends it (META_MIRROR_STATE) when it changed,
 * again after a failed send, and every heartbeat while it is not good, so
 * that a management that restarted, and loaded an older state from its
 * file, learns it again.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_mirror.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct sfs_meta_mirror_report {
    sfs_service_t  *service;
    pthread_mutex_t lock;
    uint32_t        state; /* the newest, set by the metadata thread */
    uint64_t        seq;
    uint64_t        version; /* bumped at every set (read without the lock too) */
    /* the fence (sfs_meta_mirror_report_fence) waits on these */
    pthread_cond_t told;
    int            stopping;
    uint64_t       told_version; /* the version management acknowledged (set under the lock) */
    /* management answered that another rank is the metadata server now
     * (its mirror was promoted): set once, under the lock */
    int  deposed;
    char deposed_detail[512];
    /* progress thread */
    int           told_good;    /* and it was good: nothing to send until a set */
    uint64_t      sent_version; /* the one out now */
    int           sent_good;
    uint64_t      next_ms;
    int           failed_said;
    sfs_tp_rpc_t *rpc;
    uint8_t       args[32];
};

int sfs_meta_mirror_report_create(sfs_service_t *service, sfs_meta_mirror_report_t **report_p)
{
    sfs_meta_mirror_report_t *report;

    if (!SFS_ALLOC_PTR(report)) {
        return -ENOMEM;
    }
    report->service = service;
    pthread_mutex_init(&report->lock, NULL);
    pthread_cond_init(&report->told, NULL);
    /* nothing to tell before the link knows (version 0): management keeps
     * what its file says until then */
    *report_p = report;
    return 0;
}

void sfs_meta_mirror_report_destroy(sfs_meta_mirror_report_t *report)
{
    if (!report) {
        return;
    }
    /* (one in flight is cancelled: management may be gone) */
    sfs_tp_rpc_release(report->rpc);
    pthread_cond_destroy(&report->told);
    pthread_mutex_destroy(&report->lock);
    free(report);
}

void sfs_meta_mirror_report_set(sfs_meta_mirror_report_t *report, uint32_t state, uint64_t seq)
{
    if (!report) {
        return;
    }
    pthread_mutex_lock(&report->lock);
    if (report->version == 0 || report->state != state) {
        report->state = state;
        report->seq   = seq;
        __atomic_store_n(&report->version, report->version + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&report->lock);
}

/* Management answered, or the send failed (progress thread): a fence
 * waiting for this version ends now, not at the next tick. */
static void sfs_meta_mirror_report_answered(sfs_tp_rpc_t *rpc, void *arg)
{
    sfs_meta_mirror_report_t *report = arg;
    int                       status = sfs_tp_rpc_status(rpc);

    if (status == 0) {
        pthread_mutex_lock(&report->lock);
        report->told_version = report->sent_version;
        pthread_cond_broadcast(&report->told);
        pthread_mutex_unlock(&report->lock);
        report->told_good   = report->sent_good;
        report->failed_said = 0;
    } else if (status == -ESTALE) {
        /* replaced: no reply of this server may go out any more */
        sfs_meta_mirror_report_depose(report, sfs_tp_rpc_error_detail(rpc)[0]
                                                  ? sfs_tp_rpc_error_detail(rpc)
                                                  : "another rank is the metadata server");
    } else if (!report->failed_said) {
        sfs_warn("metadata mirror: its state not told to management (tried again every "
                 "heartbeat; said once): %s",
                 sfs_tp_rpc_error_detail(rpc)[0] ? sfs_tp_rpc_error_detail(rpc)
                                                 : sfs_strerror(status));
        report->failed_said = 1;
    }
}

/* The last send ended (its outcome was taken by the callback above): 0
 * while it is out, 1 when none is. */
static int sfs_meta_mirror_report_collect(sfs_meta_mirror_report_t *report)
{
    if (!report->rpc) {
        return 1;
    }
    if (!sfs_tp_rpc_is_done(report->rpc)) {
        return 0;
    }
    sfs_tp_rpc_release(report->rpc);
    report->rpc = NULL;
    return 1;
}

void sfs_meta_mirror_report_tick(sfs_meta_mirror_report_t *report)
{
    sfs_service_t              *service = report ? report->service : NULL;
    sfs_meta_mirror_state_req_t req;
    sfs_tp_rpc_params_t         params;
    sfs_tp_conn_t              *conn;
    sfs_wbuf_t                  wb;
    uint64_t                    now, version;

    /* every turn of the progress loop: in the steady state (told, good)
     * neither the lock nor the clock */
    if (!report) {
        return;
    }
    version = __atomic_load_n(&report->version, __ATOMIC_ACQUIRE);
    if (!report->rpc && version == report->told_version && (report->told_good || version == 0)) {
        return;
    }
    if (!service->cluster || !service->registered || !sfs_meta_mirror_report_collect(report)) {
        return;
    }
    now = sfs_time_ms();
    pthread_mutex_lock(&report->lock);
    req.node_id = service->rank;
    req.state   = report->state;
    req.seq     = report->seq;
    version     = report->version;
    pthread_mutex_unlock(&report->lock);
    if (version == 0) {
        return;
    }
    if (version == report->told_version &&
        (req.state == SFS_MIRROR_STATE_GOOD || now < report->next_ms)) {
        return;
    }
    if (version != report->told_version && version == report->sent_version &&
        now < report->next_ms) {
        return; /* failed: tried again at the next heartbeat */
    }
    report->next_ms = now + service->config->heartbeat_interval_ms;
    if (sfs_cluster_mgmt_conn(service->cluster, &conn) != 0) {
        return; /* -EINPROGRESS, or management away: the heartbeat says so */
    }
    sfs_wbuf_init(&wb, report->args, sizeof(report->args));
    sfs_proto_meta_mirror_state_req_pack(&wb, &req);
    memset(&params, 0, sizeof(params));
    params.opcode        = SFS_OP_META_MIRROR_STATE;
    params.args          = report->args;
    params.args_length   = wb.length;
    params.cb            = sfs_meta_mirror_report_answered;
    params.cb_arg        = report;
    report->sent_version = version; /* (before the start: the callback reads it) */
    report->sent_good    = req.state == SFS_MIRROR_STATE_GOOD;
    if (wb.error || sfs_tp_rpc_start(conn, &params, &report->rpc) != 0) {
        report->rpc = NULL;
    }
}

void sfs_meta_mirror_report_depose(sfs_meta_mirror_report_t *report, const char *detail)
{
    pthread_mutex_lock(&report->lock);
    if (!report->deposed) {
        snprintf(report->deposed_detail, sizeof(report->deposed_detail), "%s", detail);
        __atomic_store_n(&report->deposed, 1, __ATOMIC_RELEASE);
        sfs_error("management says this rank is no longer the metadata server: %s; every "
                  "metadata request is refused from now on",
                  report->deposed_detail);
    }
    pthread_cond_broadcast(&report->told);
    pthread_mutex_unlock(&report->lock);
}

int sfs_meta_mirror_report_deposed(sfs_meta_mirror_report_t *report, char *detail, size_t size)
{
    int deposed;

    /* every metadata request asks: no lock until it is set (once, for good) */
    if (!report || !__atomic_load_n(&report->deposed, __ATOMIC_ACQUIRE)) {
        return 0;
    }
    pthread_mutex_lock(&report->lock);
    deposed = report->deposed;
    if (deposed && detail) {
        snprintf(detail, size, "%s", report->deposed_detail);
    }
    pthread_mutex_unlock(&report->lock);
    return deposed;
}

void sfs_meta_mirror_report_stop(sfs_meta_mirror_report_t *report)
{
    if (!report) {
        return;
    }
    pthread_mutex_lock(&report->lock);
    report->stopping = 1;
    pthread_cond_broadcast(&report->told);
    pthread_mutex_unlock(&report->lock);
}

int sfs_meta_mirror_report_fence(sfs_meta_mirror_report_t *report, uint64_t seq)
{
    const sfs_config_t *config;
    uint64_t            target, start, now, limit_ms, said_ms;
    int                 rc = 0, said = 0, waited;

    if (!report || !report->service->cluster) {
        return 0; /* no management to tell: nothing can promote the mirror */
    }
    config   = report->service->config;
    limit_ms = config->rpc_timeout_ms ? config->rpc_timeout_ms / 2 : 15000;
    said_ms  = 2ull * config->heartbeat_interval_ms;
    start    = sfs_time_ms();
    pthread_mutex_lock(&report->lock);
    if (report->version == 0 || report->state == SFS_MIRROR_STATE_GOOD) {
        /* the link says so before this call; set here all the same, so
         * that the wait below cannot end on a "good" sent earlier */
        report->state = SFS_MIRROR_STATE_NEEDS_RESYNC;
        report->seq   = seq;
        __atomic_store_n(&report->version, report->version + 1, __ATOMIC_RELEASE);
    }
    target = report->version;
    waited = report->told_version < target;
    if (waited) {
        /* the progress thread sends it at its next turn: now, not at the
         * end of its wait for events */
        sfs_tp_worker_wakeup(report->service->worker);
    }
    while (report->told_version < target && !report->stopping && !report->deposed) {
        uint64_t        due_ns = sfs_wall_ns() + 100000000ull; /* the cond's clock */
        struct timespec until  = {(time_t)(due_ns / 1000000000ull), (long)(due_ns % 1000000000ull)};

        now = sfs_time_ms();
        if (now - start >= limit_ms) {
            rc = sfs_error_set(-ETIMEDOUT,
                               "metadata batch %" PRIu64 " is committed on the metadata server "
                               "but not acknowledged: management has not recorded in %.1f s "
                               "that the metadata mirror lacks it (fencing: the mirror could "
                               "be promoted without it)",
                               seq, (double)(now - start) / 1000.0);
            break;
        }
        if (!said && now - start >= said_ms) {
            sfs_warn("fencing: the replies of metadata batch %" PRIu64 " (committed without the "
                     "mirror) wait until management records that the mirror needs a resync; "
                     "no answer from management for %.1f s (at most %.1f s)",
                     seq, (double)(now - start) / 1000.0, (double)limit_ms / 1000.0);
            said = 1;
        }
        pthread_cond_timedwait(&report->told, &report->lock, &until);
    }
    if (rc == 0 && report->deposed) {
        rc = sfs_error_set(-ESTALE,
                           "metadata batch %" PRIu64 " is committed on rank %u but not "
                           "acknowledged: %s",
                           seq, report->service->rank, report->deposed_detail);
    }
    if (rc == 0 && report->stopping && report->told_version < target) {
        rc = sfs_error_set(-ESHUTDOWN,
                           "metadata batch %" PRIu64 " is committed on the metadata server but "
                           "not acknowledged: the server stops before management recorded that "
                           "the metadata mirror lacks it",
                           seq);
    }
    pthread_mutex_unlock(&report->lock);
    now = sfs_time_ms();
    if (rc == 0 && waited) {
        sfs_log(said ? SFS_LOG_WARN : SFS_LOG_INFO,
                "fencing: management recorded that the metadata mirror needs a resync (batch "
                "%" PRIu64 ") before any reply of a batch committed without it (%" PRIu64 " ms)",
                seq, now - start);
    }
    return rc;
}
