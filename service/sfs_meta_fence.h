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
 *
 * Or while its mirror's word holds (sfs_buddy_word.h, docs/metadata-mirror.md
 * "The mirror's word"): every exchange the mirror answers as the mirror
 * renews it for T/2 from the exchange's sending; a promoted mirror answers
 * nothing (its role ended at the promotion) and serves only once the word
 * it gave ran out (T/2 from its last exchange, its own clock). So a server
 * cut off from management but not from its mirror goes on, and one whose
 * mirror was promoted stops before the mirror serves. With nothing to send
 * (reads only), the server asks the word with a probe, only once its lease
 * and word are both more than half run out.
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
 * lease expired and the mirror's word does not hold: the mirror may have
 * been promoted; or this server, a promoted mirror, still waits out the word
 * it gave; the client asks again, of whichever server the map then names)
 * and non-zero is returned. */
int sfs_meta_fence_refused(sfs_service_t *service, sfs_tp_request_t *req);
/* The server's exchange with its mirror, sent at `sent_ms`, was answered
 * (status 0: the word renewed) or failed (the word dropped). */
void sfs_meta_fence_mirror_answered(sfs_service_t *service, uint64_t sent_ms, int status);
/* The mirror took an exchange from the server: its word given. */
void sfs_meta_fence_word_given(sfs_service_t *service);
/* The question in flight, if any, released (the service's teardown). */
void sfs_meta_fence_fini(sfs_service_t *service);

#endif
