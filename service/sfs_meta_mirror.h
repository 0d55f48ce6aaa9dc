/*
 * The metadata mirror (docs/metadata.md, "Metadata mirror"): a second rank,
 * on another host (meta.mirror), keeps a synchronous copy of the metadata
 * store.
 *
 * The primary (the metadata server) sends each group-commit batch's writes
 * (sfs_meta_writes.h), numbered, to the mirror while it commits them
 * itself, and answers none of the batch's requests before the mirror has
 * committed them too. A mirror that fails, or answers that it is not at the
 * batch before, is dropped: the primary goes on alone (it says so), probes
 * it once a second, and brings it back with the batches it missed, kept in
 * memory since (sfs_meta_backlog.h), or else with a full copy of the store,
 * after which batches go to it again.
 *
 * The mirror applies what it gets on a work queue of one thread, a batch only on
 * top of the one before (-ESTALE otherwise), and only from a server.
 *
 * When the primary is offline and management's record says the mirror
 * was good, management promotes it (META_PROMOTE, sfs_meta_promote.c): the
 * mirror's rank opens its copy as the metadata store and serves. The
 * promoted rank takes no META_MIRROR any more, so a cut-off old primary
 * cannot change it, and management refuses the old primary's reports, so
 * its fence fails and its replies do not go out.
 */
#ifndef SFS_META_MIRROR_H
#define SFS_META_MIRROR_H

#include "sfs_meta_store.h"
#include "sfs_service.h"

/* The mirror's side: the rank with SFS_ROLE_META_MIRROR. */
typedef struct sfs_meta_mirror sfs_meta_mirror_t;

/* Where this rank keeps the copy: meta.mirror_dir, or meta.dir on the
 * metadata host (the old metadata server, a mirror after a failover). */
const char *sfs_meta_mirror_store_dir(const sfs_service_t *service);
/* Open the mirror's store (sfs_meta_mirror_store_dir) and start its thread. */
int  sfs_meta_mirror_create(sfs_service_t *service, sfs_meta_mirror_t **mirror_p);
void sfs_meta_mirror_destroy(sfs_meta_mirror_t *mirror);
/* The mirror's rank, asked by management (META_PROMOTE): a request kept
 * by the handler and run here, from the service's loop, outside the
 * transport's callbacks (the mirror's queue is drained, which progresses
 * the worker). Ends the mirror role, opens the copy as the metadata store
 * (its mirror: the old server's rank, which management now names the
 * mirror) and answers management. */
void sfs_meta_promote_run(sfs_service_t *service);
/* The reverse, for a metadata server that management deposed (its mirror
 * was promoted while it was cut off; sfs_meta_deposed): the service's loop
 * ends its metadata server and keeps the mirror in its store's directory,
 * as the map names its rank now; the promoted server then sends it a full
 * copy. Its metadata requests are refused with ESTALE and management's
 * words (service->deposed) from then on. */
void sfs_meta_demote_run(sfs_service_t *service);

/* The mirror's state for management (sfs_meta_mirror_report.c), owned by
 * the metadata server: set by the link (any thread), sent to management by
 * the progress thread's tick (META_MIRROR_STATE) when it changed, and again
 * every heartbeat while it is not good or the last send failed. It starts
 * as needs-resync (not in step before the first probe). Create and destroy
 * on the progress thread. */
typedef struct sfs_meta_mirror_report sfs_meta_mirror_report_t;

int  sfs_meta_mirror_report_create(sfs_service_t *service, sfs_meta_mirror_report_t **report_p);
void sfs_meta_mirror_report_destroy(sfs_meta_mirror_report_t *report);
/* state: SFS_MIRROR_STATE_GOOD, _NEEDS_RESYNC or _RESYNCING, since the
 * primary's batch `seq`; the same state again changes nothing. */
void sfs_meta_mirror_report_set(sfs_meta_mirror_report_t *report, uint32_t state, uint64_t seq);
void sfs_meta_mirror_report_tick(sfs_meta_mirror_report_t *report);
/* Fencing (metadata thread): a batch was committed without the mirror;
 * return once management has recorded that the mirror needs a resync (so
 * that it cannot promote a mirror lacking the batch), before any reply of
 * the batch goes. Only the first such batch after the mirror was dropped
 * waits (one RPC to management and its fsync); the next ones find the
 * state recorded. 0, or -ETIMEDOUT after half the RPC timeout without
 * management's answer, or -ESHUTDOWN once stopped (detail set: the batch
 * is committed here, but not acknowledged). No management (no cluster): 0. */
int sfs_meta_mirror_report_fence(sfs_meta_mirror_report_t *report, uint64_t seq);
/* Whether management refused a report because another rank is the
 * metadata server now (this one's mirror was promoted while it was cut
 * off): then fences fail at once with -ESTALE, and the service refuses
 * every metadata request (sfs_meta_deposed). `detail` gets management's
 * words. Any thread. */
int sfs_meta_mirror_report_deposed(sfs_meta_mirror_report_t *report, char *detail, size_t size);
/* Management said so (a refused report, or a heartbeat's answer): from
 * now on sfs_meta_mirror_report_deposed says yes, with `detail`; the first
 * call logs it, later ones change nothing. Any thread. */
void sfs_meta_mirror_report_depose(sfs_meta_mirror_report_t *report, const char *detail);
/* Before the metadata thread is joined: a fence's wait ends. Any thread. */
void sfs_meta_mirror_report_stop(sfs_meta_mirror_report_t *report);

/* The primary's side, owned by the metadata server (sfs_meta_t); it sets
 * `report` (which it does not own) at each change. */
typedef struct sfs_meta_mirror_link sfs_meta_mirror_link_t;
/* The mirror's rank in the cluster map: the node with the role (NULL: none,
 * or no map yet). */
const sfs_map_node_t *sfs_meta_mirror_node(sfs_service_t *service);

int sfs_meta_mirror_link_create(sfs_service_t *service, sfs_meta_store_t *store,
                                sfs_meta_mirror_report_t *report, sfs_meta_mirror_link_t **link_p);
/* Before the metadata thread is joined: a wait for the mirror there ends
 * (-ESHUTDOWN). Any thread. */
void sfs_meta_mirror_link_stop(sfs_meta_mirror_link_t *link);
/* Progress thread, after the metadata thread has ended. */
void sfs_meta_mirror_link_destroy(sfs_meta_mirror_link_t *link);

/* The rest: the metadata thread only. */

/* Whether batches go to the mirror now (it is in step). */
int sfs_meta_mirror_link_active(const sfs_meta_mirror_link_t *link);
/* Send batch `seq`'s encoded writes; returns at once (the data is copied). */
void sfs_meta_mirror_link_send(sfs_meta_mirror_link_t *link, uint64_t seq, const void *data,
                               size_t length);
/* Wait for the mirror's answer to the batch sent: 0, or the mirror is
 * dropped (said in the log) and the error returned. */
int sfs_meta_mirror_link_wait(sfs_meta_mirror_link_t *link);
/* A batch with writes, numbered `seq`, went without the mirror (it was
 * dropped, or not in step yet), and was committed here (`committed`) or
 * not: the mirror needs a resync (told to management). */
void sfs_meta_mirror_link_alone(sfs_meta_mirror_link_t *link, uint64_t seq, int committed);
/* Before such a batch's commit: keep its encoded writes (NULL: not
 * recorded) for the mirror's return (sfs_meta_backlog.h). */
void sfs_meta_mirror_link_keep(sfs_meta_mirror_link_t *link, uint64_t seq, const void *data,
                               size_t length);
/* Drop the mirror (a batch went without it): said in the log. */
void sfs_meta_mirror_link_drop(sfs_meta_mirror_link_t *link, const char *why);
/* Between batches: a dropped mirror is probed (once a second) and, when it
 * answers, brought back in step with a full copy. Returns the most the
 * metadata thread should sleep before calling again (ms; 0: no need). */
uint32_t sfs_meta_mirror_link_tick(sfs_meta_mirror_link_t *link);

#endif
