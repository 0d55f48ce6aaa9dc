/*
 * The primary's side of the metadata mirror (sfs_meta_mirror.h). The
 * metadata thread decides what to send and waits for the answers; the
 * sending itself is handed to the progress thread, which owns the
 * transport. One exchange is out at a time.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_mirror.h"

#include "sfs_alloc.h"
#include "sfs_meta_fence.h"
#include "sfs_errno.h"
#include "sfs_meta_backlog.h"
#include "sfs_log.h"
#include "sfs_meta_writes.h"
#include "sfs_time.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* How often a dropped mirror is probed; and the most a piece of a full
 * copy holds (several pieces follow each other, one at a time). */
#define SFS_META_MIRROR_PROBE_MS  1000
#define SFS_META_MIRROR_PIECE_MAX (4u << 20)
/* After a full copy failed (the mirror answers, but cannot take it: its
 * disk full, say), the next try waits this long: a copy costs the whole
 * store each time. */
#define SFS_META_MIRROR_COPY_RETRY_MS 30000
/* The most the batches a mirror missed may hold before a full copy is
 * cheaper to keep than them (sfs_meta_backlog.h). */
#define SFS_META_MIRROR_BACKLOG_MAX (64u << 20)

struct sfs_meta_mirror_link {
    sfs_service_t            *service;
    sfs_meta_store_t         *store;
    sfs_meta_mirror_report_t *report;        /* not owned */
    sfs_meta_backlog_t       *backlog;       /* the batches since the mirror's last known one */
    int                       active;        /* metadata thread */
    uint64_t                  next_probe_ms; /* metadata thread */
    int                       dropped_said;  /* "going on alone" logged since the last resync */
    int                       ever_active;   /* in step once since the start */

    pthread_mutex_t lock;
    pthread_cond_t  cond;
    int             out;    /* an exchange is out (posted or sent) */
    int             done;   /* and answered (or failed) */
    int             status; /* its result */
    uint64_t        seq;    /* the mirror's batch after it */
    uint64_t        alone;  /* and its count of batches committed alone */
    char            detail[512];
    int             posted;   /* a post not run yet (destroy waits for it) */
    int             stopping; /* the metadata thread is ending: waits end */

    /* the exchange: filled by the metadata thread before posting */
    uint8_t      args[32];
    size_t       args_length;
    uint32_t     timeout_ms; /* 0: the transport's */
    int          in_step;    /* a batch to a mirror in step (not a probe, copy or replay) */
    void        *payload;
    size_t       payload_length;
    uint64_t     payload_seq; /* the batch the payload holds (0: none, a probe or a copy) */
    struct iovec iov;
    /* progress thread */
    sfs_tp_rpc_t *rpc;
    uint64_t      sent_ms; /* the exchange's: an answer renews the mirror's word from then */
};

static void sfs_meta_mirror_link_finish(sfs_meta_mirror_link_t *link, int status,
                                        const sfs_meta_mirror_reply_t *reply, const char *detail)
{
    pthread_mutex_lock(&link->lock);
    link->status = status;
    link->seq    = reply ? reply->seq : 0;
    link->alone  = reply ? reply->alone : 0;
    snprintf(link->detail, sizeof(link->detail), "%s", detail ? detail : "");
    link->done = 1;
    pthread_cond_broadcast(&link->cond);
    pthread_mutex_unlock(&link->lock);
}

/* Progress thread: the mirror's answer. */
static void sfs_meta_mirror_link_answered(sfs_tp_rpc_t *rpc, void *arg)
{
    sfs_meta_mirror_link_t *link   = arg;
    int                     status = sfs_tp_rpc_status(rpc);
    sfs_meta_mirror_reply_t reply  = {0};

    if (status == 0) {
        size_t      length;
        const void *args = sfs_tp_rpc_reply_args(rpc, &length);

        if (sfs_proto_decode(SFS_OP_META_MIRROR, 1, args, length, &reply, sizeof(reply)) != 0) {
            status = -EPROTO;
        }
    }
    sfs_meta_fence_mirror_answered(link->service, link->sent_ms, status);
    sfs_meta_mirror_link_finish(
        link, status, &reply, status == -EPROTO ? "malformed reply" : sfs_tp_rpc_error_detail(rpc));
}

const sfs_map_node_t *sfs_meta_mirror_node(sfs_service_t *service)
{
    /* (no cluster before this rank has registered with management) */
    const sfs_map_t *map = service->cluster ? sfs_cluster_map(service->cluster) : NULL;

    for (uint32_t i = 0; map && i < map->node_count; i++) {
        if (map->nodes[i].roles & SFS_ROLE_META_MIRROR) {
            return &map->nodes[i];
        }
    }
    return NULL;
}

/* Progress thread: send the exchange the metadata thread prepared. */
static void sfs_meta_mirror_link_post(void *arg)
{
    sfs_meta_mirror_link_t *link = arg;
    const sfs_map_node_t   *node;
    sfs_tp_rpc_params_t     params;
    sfs_tp_conn_t          *conn;
    int                     rc;

    pthread_mutex_lock(&link->lock);
    link->posted = 0;
    pthread_mutex_unlock(&link->lock);
    sfs_tp_rpc_release(link->rpc); /* the last exchange's, answered */
    link->rpc = NULL;
    node      = sfs_meta_mirror_node(link->service);
    if (!node) {
        sfs_meta_mirror_link_finish(link, -EHOSTUNREACH, NULL,
                                    "no metadata mirror in the cluster map (not registered)");
        return;
    }
    /* A mirror in step gets its batch while management only suspects it
     * (probably-offline): a management back from a cut of its own names
     * every rank it has not heard again so for a moment, and dropping the
     * mirror then left none to promote a second later (the cut tests). A
     * mirror really gone costs that batch its timeout, once. Probes, copies
     * and replays still wait for online: their connect would block this
     * thread once a second for as long as the host hangs. */
    if (node->state != SFS_STATE_ONLINE &&
        !(link->in_step && node->state == SFS_STATE_PROBABLY_OFFLINE)) {
        char detail[SFS_HOST_MAX + 96];

        snprintf(detail, sizeof(detail), "the metadata mirror (rank %u on %s) is %s%s",
                 node->node_id, node->host, sfs_state_name(node->state),
                 node->state == SFS_STATE_PROBABLY_OFFLINE
                     ? " (probes, copies and replays wait for online)"
                     : "");
        sfs_meta_mirror_link_finish(link, -EHOSTUNREACH, NULL, detail);
        return;
    }
    /* on the progress thread: a connect to a hung host must not stall the
     * rank (the plain call tries twice, with the connect timeout, 10 s, and
     * asks management for the map in between) */
    rc = sfs_cluster_node_conn_quick(link->service->cluster, node->node_id,
                                     SFS_META_MIRROR_PROBE_MS, &conn);
    if (rc == 0) {
        memset(&params, 0, sizeof(params));
        params.opcode        = SFS_OP_META_MIRROR;
        params.args          = link->args;
        params.args_length   = link->args_length;
        params.payload       = link->payload_length ? &link->iov : NULL;
        params.payload_count = link->payload_length ? 1 : 0;
        params.timeout_ms    = link->timeout_ms;
        params.cb            = sfs_meta_mirror_link_answered;
        params.cb_arg        = link;
        link->sent_ms        = sfs_time_ms();
        rc                   = sfs_tp_rpc_start(conn, &params, &link->rpc);
        if (rc) {
            link->rpc = NULL;
        }
    }
    if (rc) {
        sfs_meta_mirror_link_finish(link, rc, NULL, sfs_error_detail());
    }
}

static uint32_t sfs_meta_mirror_batch_timeout(const sfs_meta_mirror_link_t *link)
{
    const sfs_config_t *config = link->service->config;
    uint64_t            ms     = 3ull * config->heartbeat_interval_ms;

    if (config->rpc_timeout_ms && ms > config->rpc_timeout_ms) {
        ms = config->rpc_timeout_ms;
    }
    return ms ? (uint32_t)ms : SFS_META_MIRROR_PROBE_MS;
}

/* Metadata thread: hand an exchange to the progress thread. */
static void sfs_meta_mirror_link_start(sfs_meta_mirror_link_t *link, uint64_t seq, uint32_t flags,
                                       const void *data, size_t length)
{
    sfs_meta_mirror_req_t req = {.seq = seq, .flags = flags};
    sfs_wbuf_t            wb;
    int                   busy;

    /* an exchange given up at a stop may still be out, on this payload */
    pthread_mutex_lock(&link->lock);
    busy = link->posted || link->stopping;
    pthread_mutex_unlock(&link->lock);
    if (busy || (link->out && !link->done)) {
        link->out    = 1;
        link->done   = 1;
        link->status = -ESHUTDOWN;
        snprintf(link->detail, sizeof(link->detail), "the metadata server is stopping");
        return;
    }
    free(link->payload);
    link->payload        = NULL;
    link->payload_length = 0;
    link->payload_seq    = 0;
    if (length) {
        link->payload = malloc(length);
        if (!link->payload) {
            link->out    = 1;
            link->done   = 1;
            link->status = -ENOMEM;
            snprintf(link->detail, sizeof(link->detail), "out of memory for a batch of %zu bytes",
                     length);
            return;
        }
        memcpy(link->payload, data, length);
        link->payload_length = length;
        link->payload_seq    = flags ? 0 : seq;
        link->iov.iov_base   = link->payload;
        link->iov.iov_len    = length;
    }
    sfs_wbuf_init(&wb, link->args, sizeof(link->args));
    sfs_proto_meta_mirror_req_pack(&wb, &req);
    link->args_length = wb.length;
    link->in_step     = link->active && flags == 0;
    /* a mirror whose host hangs must not hold metadata long: a probe waits
     * 1 s, anything else three heartbeat intervals (management calls a
     * rank that silent probably-offline already; a mirror dropped when it
     * was only slow costs the replay of the batches it missed) */
    link->timeout_ms = (flags & SFS_META_MIRROR_PROBE) ? SFS_META_MIRROR_PROBE_MS
                                                       : sfs_meta_mirror_batch_timeout(link);
    pthread_mutex_lock(&link->lock);
    link->out    = 1;
    link->done   = 0;
    link->posted = 1;
    pthread_mutex_unlock(&link->lock);
    if (sfs_tp_worker_post(link->service->worker, sfs_meta_mirror_link_post, link) != 0) {
        pthread_mutex_lock(&link->lock);
        link->posted = 0;
        pthread_mutex_unlock(&link->lock);
        sfs_meta_mirror_link_finish(link, -ENOMEM, NULL,
                                    "cannot hand the batch to the progress thread");
    }
}

/* Metadata thread: the exchange's answer; *seq_p gets the mirror's batch
 * (and *alone_p, when not NULL, its count of batches committed alone). */
static int sfs_meta_mirror_link_answer(sfs_meta_mirror_link_t *link, uint64_t *seq_p,
                                       uint64_t *alone_p)
{
    int rc;

    pthread_mutex_lock(&link->lock);
    while (link->out && !link->done && !link->stopping) {
        pthread_cond_wait(&link->cond, &link->lock);
    }
    if (!link->done) {
        rc = -ESHUTDOWN;
        snprintf(link->detail, sizeof(link->detail), "the metadata server is stopping");
    } else {
        rc = link->status;
    }
    if (seq_p) {
        *seq_p = link->seq;
    }
    if (alone_p) {
        *alone_p = link->alone;
    }
    link->out = 0;
    pthread_mutex_unlock(&link->lock);
    if (rc) {
        sfs_error_set(rc, "%s", link->detail[0] ? link->detail : sfs_strerror(rc));
    }
    return rc;
}

void sfs_meta_mirror_link_drop(sfs_meta_mirror_link_t *link, const char *why)
{
    link->active        = 0;
    link->next_probe_ms = sfs_time_ms() + SFS_META_MIRROR_PROBE_MS;
    if (!sfs_meta_backlog_valid(link->backlog)) {
        sfs_meta_store_record_writes(link->store, 0); /* nothing would keep them */
    }
    if (link->dropped_said) {
        return;
    }
    link->dropped_said = 1;
    if (!link->ever_active) { /* at the start: it may not have registered yet */
        sfs_info("metadata mirror not in step yet: %s. Probed every %u ms; until then the "
                 "metadata server runs alone",
                 why, SFS_META_MIRROR_PROBE_MS);
        return;
    }
    sfs_error("metadata mirror dropped: %s. The metadata server goes on alone; it probes the "
              "mirror every %u ms and brings it back with a full copy",
              why, SFS_META_MIRROR_PROBE_MS);
}

int sfs_meta_mirror_link_create(sfs_service_t *service, sfs_meta_store_t *store,
                                sfs_meta_mirror_report_t *report, sfs_meta_mirror_link_t **link_p)
{
    sfs_meta_mirror_link_t *link;

    if (!SFS_ALLOC_PTR(link)) {
        return -ENOMEM;
    }
    if (sfs_meta_backlog_create(SFS_META_MIRROR_BACKLOG_MAX, &link->backlog) != 0) {
        free(link);
        return -ENOMEM;
    }
    link->service = service;
    link->store   = store;
    link->report  = report;
    pthread_mutex_init(&link->lock, NULL);
    pthread_cond_init(&link->cond, NULL);
    link->next_probe_ms = 0; /* probe at once */
    sfs_info("metadata mirror configured on host %s (in %s): batches wait for it once it is in "
             "step",
             service->config->meta_mirror_host, service->config->meta_mirror_dir);
    *link_p = link;
    return 0;
}

void sfs_meta_mirror_link_stop(sfs_meta_mirror_link_t *link)
{
    pthread_mutex_lock(&link->lock);
    link->stopping = 1;
    pthread_cond_broadcast(&link->cond);
    pthread_mutex_unlock(&link->lock);
}

void sfs_meta_mirror_link_destroy(sfs_meta_mirror_link_t *link)
{
    if (!link) {
        return;
    }
    /* the post and the RPC hold the link (and its payload): let them end */
    for (;;) {
        int posted;

        pthread_mutex_lock(&link->lock);
        posted = link->posted;
        pthread_mutex_unlock(&link->lock);
        if (!posted && (!link->rpc || sfs_tp_rpc_is_done(link->rpc))) {
            break;
        }
        sfs_tp_worker_progress(link->service->worker, 10);
    }
    sfs_tp_rpc_release(link->rpc);
    free(link->payload);
    sfs_meta_backlog_destroy(link->backlog);
    pthread_mutex_destroy(&link->lock);
    pthread_cond_destroy(&link->cond);
    free(link);
}

int sfs_meta_mirror_link_active(const sfs_meta_mirror_link_t *link)
{
    return link->active;
}

void sfs_meta_mirror_link_keep(sfs_meta_mirror_link_t *link, uint64_t seq, const void *data,
                               size_t length)
{
    if (!data) {
        sfs_meta_backlog_invalidate(link->backlog); /* not recorded */
        return;
    }
    sfs_meta_backlog_add(link->backlog, seq, 1, data, length);
}

void sfs_meta_mirror_link_alone(sfs_meta_mirror_link_t *link, uint64_t seq, int committed)
{
    if (!committed) {
        /* the batch is not here; the mirror may have it: no history to
         * build on */
        sfs_meta_backlog_invalidate(link->backlog);
    }
    if (!sfs_meta_backlog_valid(link->backlog)) {
        sfs_meta_store_record_writes(link->store, 0);
    }
    sfs_meta_mirror_report_set(link->report, SFS_MIRROR_STATE_NEEDS_RESYNC, seq);
}

void sfs_meta_mirror_link_send(sfs_meta_mirror_link_t *link, uint64_t seq, const void *data,
                               size_t length)
{
    sfs_meta_mirror_link_start(link, seq, 0, data, length);
}

int sfs_meta_mirror_link_wait(sfs_meta_mirror_link_t *link)
{
    uint64_t seq = 0, alone = 0;
    int      rc = sfs_meta_mirror_link_answer(link, &seq, &alone);

    if (rc == 0) {
        sfs_meta_backlog_reset(link->backlog, seq, alone); /* it has them all */
    } else {
        char why[600];

        /* kept for the mirror's return (the payload still holds it, unless
         * the batch never got that far): it may not have it */
        if (link->payload && link->payload_seq) {
            sfs_meta_backlog_add(link->backlog, link->payload_seq, 0, link->payload,
                                 link->payload_length);
        } else {
            sfs_meta_backlog_invalidate(link->backlog);
        }
        snprintf(why, sizeof(why), "a batch failed there: %s", sfs_error_detail());
        sfs_meta_mirror_link_drop(link, why);
    }
    return rc;
}

/* Bring the mirror in step: a full copy of the store, piece by piece. */
static int sfs_meta_mirror_link_copy(sfs_meta_mirror_link_t *link, uint64_t *seq_p)
{
    sfs_meta_writes_t *pieces = NULL;
    uint32_t           count  = 0;
    uint64_t           bytes = 0, start = sfs_time_ms();
    int rc = sfs_meta_store_copy(link->store, SFS_META_MIRROR_PIECE_MAX, &pieces, &count);

    for (uint32_t i = 0; rc == 0 && i < count; i++) {
        size_t      length;
        const void *data = sfs_meta_writes_encoded(&pieces[i], &length);

        sfs_meta_mirror_link_start(link, 0,
                                   SFS_META_MIRROR_COPY | (i == 0 ? SFS_META_MIRROR_COPY_FIRST : 0),
                                   data, length);
        rc = sfs_meta_mirror_link_answer(link, seq_p, NULL);
        bytes += length;
    }
    for (uint32_t i = 0; i < count; i++) {
        sfs_meta_writes_free(&pieces[i]);
    }
    free(pieces);
    if (rc == 0) {
        sfs_info("metadata mirror in step: a full copy of the store (%" PRIu64
                 " bytes in %u pieces, %" PRIu64 " ms), at batch %" PRIu64,
                 bytes, count, sfs_time_ms() - start, *seq_p);
    }
    return rc;
}

/* Bring a mirror at (seq, alone) in step with the batches it missed, if
 * the backlog has them: 0, or -ESTALE (a full copy is needed) or the
 * error of a batch that failed there. */
static int sfs_meta_mirror_link_replay(sfs_meta_mirror_link_t *link, uint64_t seq, uint64_t alone)
{
    uint32_t first, count = sfs_meta_backlog_count(link->backlog);
    uint64_t start = sfs_time_ms(), bytes = 0, at = seq;
    int      rc = sfs_meta_backlog_from(link->backlog, seq, alone, &first);

    if (rc) {
        return rc;
    }
    sfs_meta_mirror_report_set(link->report, SFS_MIRROR_STATE_RESYNCING, seq);
    for (uint32_t i = first; rc == 0 && i < count; i++) {
        size_t      length;
        const void *data = sfs_meta_backlog_get(link->backlog, i, &at, &length);

        sfs_meta_mirror_link_start(link, at, 0, data, length);
        rc = sfs_meta_mirror_link_answer(link, NULL, NULL);
        bytes += length;
    }
    if (rc == 0) {
        sfs_info("metadata mirror in step: the %u batch%s it missed (%" PRIu64 " bytes, %" PRIu64
                 " ms, no full copy), from batch %" PRIu64 " to %" PRIu64,
                 count - first, count - first == 1 ? "" : "es", bytes, sfs_time_ms() - start, seq,
                 at);
    }
    return rc;
}

uint32_t sfs_meta_mirror_link_tick(sfs_meta_mirror_link_t *link)
{
    uint64_t now = sfs_time_ms(), mine = 0, theirs = 0, mine_alone = 0, theirs_alone = 0;
    int      rc, copied = 0;

    if (link->active || link->stopping) {
        return 0;
    }
    if (now < link->next_probe_ms) {
        return (uint32_t)(link->next_probe_ms - now);
    }
    link->next_probe_ms = now + SFS_META_MIRROR_PROBE_MS;
    /* nothing is written meanwhile: the metadata thread is here */
    rc = sfs_meta_store_mirror_mark(link->store, &mine, &mine_alone);
    if (rc == 0) {
        sfs_meta_mirror_link_start(link, mine, SFS_META_MIRROR_PROBE, NULL, 0);
        rc = sfs_meta_mirror_link_answer(link, &theirs, &theirs_alone);
        /* in step: the same batch, no batch committed here alone since its
         * copy, and not a new store (whose root was made outside batches) */
        if (rc == 0 && (theirs != mine || theirs_alone != mine_alone || mine == 0)) {
            /* the batches it missed, if they are kept; a replay cut short
             * (-ESTALE aside) is taken up again at the next probe */
            rc = sfs_meta_mirror_link_replay(link, theirs, theirs_alone);
            if (rc == 0) {
                theirs = mine;
            } else if (rc == -ESTALE) {
                sfs_info("metadata mirror at batch %" PRIu64 " (%" PRIu64
                         " committed alone), this store at %" PRIu64 " (%" PRIu64 "): a full copy",
                         theirs, theirs_alone, mine, mine_alone);
            }
        }
        if (rc == -ESTALE) {
            sfs_meta_mirror_report_set(link->report, SFS_MIRROR_STATE_RESYNCING, mine);
            rc     = sfs_meta_mirror_link_copy(link, &theirs);
            copied = 1;
        }
    }
    if (rc == 0 && theirs != mine) {
        rc = sfs_error_set(
            -ESTALE, "after the copy the mirror is at batch %" PRIu64 ", this store at %" PRIu64,
            theirs, mine);
    }
    if (rc) {
        char why[600];

        snprintf(why, sizeof(why), "%s", sfs_error_detail());
        sfs_meta_mirror_link_drop(link, why);
        if (copied) {
            link->next_probe_ms = sfs_time_ms() + SFS_META_MIRROR_COPY_RETRY_MS;
            sfs_warn("metadata mirror: a full copy failed (%s); the next try in %u s", why,
                     SFS_META_MIRROR_COPY_RETRY_MS / 1000);
        }
        return SFS_META_MIRROR_PROBE_MS;
    }
    sfs_meta_mirror_report_set(link->report, SFS_MIRROR_STATE_GOOD, mine);
    sfs_meta_backlog_reset(link->backlog, mine, mine_alone);
    link->active       = 1;
    link->ever_active  = 1;
    link->dropped_said = 0;
    sfs_meta_store_record_writes(link->store, 1);
    sfs_info("metadata mirror active at batch %" PRIu64 ": every batch is committed on both "
             "before its replies",
             mine);
    return 0;
}
