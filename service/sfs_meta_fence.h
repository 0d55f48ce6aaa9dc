/*
 * The metadata server's fence against answering after its mirror's
 * promotion (docs/metadata-mirror.md, "Fencing"). Where a metadata mirror
 * is configured and management runs on another rank, management promotes
 * the mirror once this rank was silent for the offline timeout T. A server
 * cut off from management (not from its clients) must stop answering, reads
 * included, before that: it serves only while it holds a lease from
 * management (sfs_lease.h: renewed by each answered heartbeat, T/2 from its
 * sending, so it ends T/2 before any promotion). And a heartbeat answer that
 * names another metadata server deposes it at once, not at its next batch's
 * fence (a server that only answers reads would never get there).
 * Progress thread.
 */
#ifndef SFS_META_FENCE_H
#define SFS_META_FENCE_H

#include "sfs_service.h"

#include <stdint.h>

/* The lease (none held yet), for the config's offline timeout. */
void sfs_meta_fence_init(sfs_service_t *service);
/* Management answered a heartbeat (or a registration: flags 0) sent at
 * `sent_ms`: the lease runs on; SFS_HEARTBEAT_NOT_META deposes a metadata
 * server with a mirror. */
void sfs_meta_fence_answered(sfs_service_t *service, uint64_t sent_ms, uint32_t flags);
/* Each turn of the loop: the lease's end is logged when it comes, with
 * or without a request to refuse (the log's time is when the fence began). */
void sfs_meta_fence_tick(sfs_service_t *service);
/* Before a metadata request is served: 0, or it was answered EAGAIN (the
 * lease expired: the mirror may have been promoted; the client asks again,
 * of whichever server the map then names) and non-zero is returned. */
int sfs_meta_fence_refused(sfs_service_t *service, sfs_tp_request_t *req);

#endif
