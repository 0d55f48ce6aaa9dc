/*
 * The metadata server's lease from management and what it refuses
 * (sfs_meta_fence.h).
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_fence.h"

#include "sfs_errno.h"
#include "sfs_meta_mirror.h"
#include "sfs_lease.h"
#include "sfs_log.h"
#include "sfs_proto.h"
#include "sfs_proto_mirror.h"
#include "sfs_time.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void sfs_meta_fence_init(sfs_service_t *service)
{
    sfs_lease_init(&service->meta_lease, service->config->offline_timeout_ms);
    sfs_buddy_word_init(&service->meta_word, service->config->offline_timeout_ms, 0);
    service->meta_word_started_ms = sfs_time_ms();
}

void sfs_meta_fence_fini(sfs_service_t *service)
{
    if (service->meta_word_ask) {
        sfs_tp_rpc_release(service->meta_word_ask);
        service->meta_word_ask = NULL;
    }
}

/* Whether this rank's metadata answers need the lease: a mirror that
 * management could promote, management elsewhere (in this process it
 * cannot be cut off from it), and no `mirror: {stale_reads: true}`. */
static int sfs_meta_fence_applies(const sfs_service_t *service)
{
    return service->meta && sfs_meta_mirrored(service->meta) && !service->mgmt &&
           service->cluster && !service->config->mirror_stale_reads;
}

void sfs_meta_fence_answered(sfs_service_t *service, uint64_t sent_ms, uint32_t flags)
{
    int was_told = service->meta_lease.told;

    sfs_lease_renew(&service->meta_lease, sent_ms);
    service->meta_word.told = 0; /* a new lapse may go on on the word again, and says so */
    if (was_told && !sfs_lease_valid(&service->meta_lease, sfs_time_ms())) {
        service->meta_lease.told = 1; /* (an old heartbeat's answer: still expired) */
    } else if (was_told && sfs_meta_fence_applies(service)) {
        sfs_warn("fencing: management answered a heartbeat again: this metadata server answers "
                 "requests again");
    }
    /* (a heartbeat sent before this rank's promotion was answered before
     * management knew of it) */
    if ((flags & SFS_HEARTBEAT_NOT_META) && service->meta && !service->mgmt &&
        sent_ms >= service->meta_since_ms) {
        sfs_meta_depose(service->meta,
                        "management promoted the metadata mirror: its answer to this rank's "
                        "heartbeat names another rank as the metadata server");
    }
}

/* Whether the lease expired at `now` (where it applies) and the mirror's
 * word does not hold; `ago` says when it was renewed last. */
static int sfs_meta_fence_expired(sfs_service_t *service, uint64_t now, char *ago, size_t size)
{
    uint64_t age;

    if (!sfs_meta_fence_applies(service) || sfs_lease_valid(&service->meta_lease, now)) {
        return 0;
    }
    age = sfs_lease_age_ms(&service->meta_lease, now);
    if (sfs_buddy_word_holds(&service->meta_word, now)) {
        if (!service->meta_word.told) {
            service->meta_word.told = 1;
            sfs_warn("fencing: this metadata server's lease from management expired (%s%.1f s "
                     "ago; lease %.1f s): it goes on on its mirror's word (every exchange "
                     "answered by the mirror as the mirror renews it; a promoted mirror serves "
                     "only once that word ran out)",
                     age == UINT64_MAX ? "never renewed, " : "renewed by a heartbeat sent ",
                     age == UINT64_MAX ? 0.0 : (double)age / 1000.0,
                     (double)service->meta_lease.length_ms / 1000.0);
        }
        return 0;
    }
    if (age == UINT64_MAX) {
        snprintf(ago, size, "no heartbeat answered yet");
    } else {
        snprintf(ago, size, "renewed by a heartbeat sent %.1f s ago", (double)age / 1000.0);
    }
    return 1;
}

/* With nothing sent to the mirror, ask for its word: a probe (answered
 * by a mirror from its thread, changing nothing), once the lease and the
 * word are both more than half run out, at most every quarter lease. */
static void sfs_meta_fence_ask_word(sfs_service_t *service, uint64_t now)
{
    uint64_t              half = service->meta_lease.length_ms / 2;
    const sfs_map_node_t *node;
    sfs_meta_mirror_req_t req = {.seq = 0, .flags = SFS_META_MIRROR_PROBE};
    sfs_tp_rpc_params_t   params;
    sfs_tp_conn_t        *conn;
    sfs_wbuf_t            wb;

    if (service->meta_word_ask) {
        if (!sfs_tp_rpc_is_done(service->meta_word_ask)) {
            return;
        }
        sfs_meta_fence_mirror_answered(service, service->meta_word_asked_ms,
                                       sfs_tp_rpc_status(service->meta_word_ask));
        sfs_tp_rpc_release(service->meta_word_ask);
        service->meta_word_ask = NULL;
    }
    if (!sfs_meta_fence_applies(service) || sfs_lease_valid(&service->meta_lease, now + half) ||
        sfs_buddy_word_holds(&service->meta_word, now + half) ||
        now < service->meta_word_asked_ms + half / 2 || !(node = sfs_meta_mirror_node(service)) ||
        node->node_id == service->rank || node->state == SFS_STATE_OFFLINE) {
        return;
    }
    /* (a connect on the progress thread: one try, 1 s at most, as the
     * link's probes; after a failed one none for a whole lease) */
    if (sfs_cluster_node_conn_quick(service->cluster, node->node_id, 1000, &conn) != 0) {
        service->meta_word_asked_ms = now + service->meta_lease.length_ms;
        return;
    }
    sfs_wbuf_init(&wb, service->meta_word_ask_args, sizeof(service->meta_word_ask_args));
    sfs_proto_meta_mirror_req_pack(&wb, &req);
    if (wb.error) {
        return;
    }
    memset(&params, 0, sizeof(params));
    params.opcode               = SFS_OP_META_MIRROR;
    params.args                 = service->meta_word_ask_args;
    params.args_length          = wb.length;
    params.timeout_ms           = half ? (uint32_t)half : 1;
    service->meta_word_asked_ms = now;
    if (sfs_tp_rpc_start(conn, &params, &service->meta_word_ask) != 0) {
        service->meta_word_ask = NULL;
    }
}

void sfs_meta_fence_mirror_answered(sfs_service_t *service, uint64_t sent_ms, int status)
{
    if (status == 0) {
        sfs_buddy_word_renew(&service->meta_word, sent_ms);
    } else {
        sfs_buddy_word_drop(&service->meta_word, sfs_time_ms(), 0);
    }
}

void sfs_meta_fence_word_given(sfs_service_t *service)
{
    sfs_buddy_word_give(&service->meta_word, sfs_time_ms());
}

void sfs_meta_fence_tick(sfs_service_t *service)
{
    sfs_lease_t *lease = &service->meta_lease;
    char         ago[64];

    if (service->meta) {
        sfs_meta_fence_ask_word(service, sfs_time_ms());
    }
    if (lease->told || !lease->held ||
        !sfs_meta_fence_expired(service, sfs_time_ms(), ago, sizeof(ago))) {
        return; /* (before the first answer: the start, not a cut) */
    }
    lease->told = 1;
    sfs_warn("fencing: this metadata server answers no request from now on: its lease from "
             "management expired (%s; lease %.1f s, half the offline timeout) and its mirror's "
             "word does not hold, so its mirror may be promoted",
             ago, (double)lease->length_ms / 1000.0);
}

int sfs_meta_fence_refused(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_lease_t *lease = &service->meta_lease;
    uint64_t     now   = sfs_time_ms(), wait;
    char         ago[64];

    if (sfs_meta_fence_applies(service)) {
        if (service->rejoined) {
            /* it may have given its word as the mirror before its restart */
            sfs_buddy_word_give(&service->meta_word, service->meta_word_started_ms);
        }
        wait = sfs_buddy_word_wait_ms(&service->meta_word, now);
        if (wait) {
            sfs_tp_request_reply_error(
                req, -EAGAIN,
                "rank %u on %s: the metadata server now, but as the mirror it gave the old "
                "server its word (an exchange taken%s): the old server may still answer on it "
                "for %.1f s, so this one answers only after that (fencing)",
                service->rank, service->host, service->rejoined ? ", or this rank's restart" : "",
                (double)wait / 1000.0);
            return 1;
        }
    }
    if (!sfs_meta_fence_expired(service, now, ago, sizeof(ago))) {
        return 0;
    }
    sfs_tp_request_reply_error(req, -EAGAIN,
                               "rank %u on %s: its lease from management expired (%s; lease %.1f "
                               "s): the metadata mirror may have been promoted, so it answers "
                               "nothing until management answers it again (fencing)",
                               service->rank, service->host, ago,
                               (double)lease->length_ms / 1000.0);
    return 1;
}
