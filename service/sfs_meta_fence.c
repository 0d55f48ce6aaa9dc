/*
 * The metadata server's lease from management and what it refuses
 * (sfs_meta_fence.h).
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_fence.h"

#include "sfs_lease.h"
#include "sfs_log.h"
#include "sfs_proto.h"
#include "sfs_time.h"

#include <errno.h>
#include <stdio.h>

void sfs_meta_fence_init(sfs_service_t *service)
{
    sfs_lease_init(&service->meta_lease, service->config->offline_timeout_ms);
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

/* Whether the lease expired at `now` (where it applies); `ago` says when
 * it was renewed last. */
static int sfs_meta_fence_expired(sfs_service_t *service, uint64_t now, char *ago, size_t size)
{
    uint64_t age;

    if (!sfs_meta_fence_applies(service) || sfs_lease_valid(&service->meta_lease, now)) {
        return 0;
    }
    age = sfs_lease_age_ms(&service->meta_lease, now);
    if (age == UINT64_MAX) {
        snprintf(ago, size, "no heartbeat answered yet");
    } else {
        snprintf(ago, size, "renewed by a heartbeat sent %.1f s ago", (double)age / 1000.0);
    }
    return 1;
}

void sfs_meta_fence_tick(sfs_service_t *service)
{
    sfs_lease_t *lease = &service->meta_lease;
    char         ago[64];

    if (lease->told || !lease->held ||
        !sfs_meta_fence_expired(service, sfs_time_ms(), ago, sizeof(ago))) {
        return; /* (before the first answer: the start, not a cut) */
    }
    lease->told = 1;
    sfs_warn("fencing: this metadata server answers no request from now on: its lease from "
             "management expired (%s; lease %.1f s, half the offline timeout), so its mirror "
             "may be promoted",
             ago, (double)lease->length_ms / 1000.0);
}

int sfs_meta_fence_refused(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_lease_t *lease = &service->meta_lease;
    char         ago[64];

    if (!sfs_meta_fence_expired(service, sfs_time_ms(), ago, sizeof(ago))) {
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
