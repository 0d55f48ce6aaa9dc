/*
 * One server rank of the stripefs service: its transport worker, the roles
 * the config gave it (management, metadata, storage), the dispatch of
 * requests to them, heartbeats to management, and a clean stop.
 */
#ifndef SFS_SERVICE_H
#define SFS_SERVICE_H

#include "sfs_cluster.h"
#include "sfs_config.h"
#include "sfs_buddy_word.h"
#include "sfs_lease.h"
#include "sfs_roles.h"
#include "sfs_tp.h"

#include <signal.h>

typedef struct sfs_mgmt    sfs_mgmt_t;
typedef struct sfs_meta    sfs_meta_t;
typedef struct sfs_storage sfs_storage_t;

typedef struct sfs_service {
    const sfs_config_t     *config;
    const sfs_role_plan_t  *plan;
    uint32_t                rank;
    uint32_t                roles;
    char                    host[SFS_HOST_MAX];
    sfs_auth_key_t          key;
    sfs_auth_key_t          cap_key;  /* seals capabilities (sfs_cap.h) */
    struct sfs_identity    *identity; /* munge mode: who a MUNGE uid is here */
    sfs_tp_worker_t        *worker;
    sfs_cluster_t          *cluster; /* this rank's connections to the others */
    sfs_mgmt_t             *mgmt;
    sfs_meta_t             *meta;
    sfs_storage_t          *storage;
    struct sfs_meta_mirror *meta_mirror; /* SFS_ROLE_META_MIRROR (sfs_meta_mirror.h) */
    volatile sig_atomic_t   stop_requested;
    sfs_tp_request_t       *stop_request;    /* management's STOP: answered after the flush */
    sfs_tp_request_t       *promote_request; /* META_PROMOTE: run and answered by the loop */
    char deposed[512]; /* a deposed metadata server's reason, once it keeps the mirror instead */
    /* the replies of the metadata server's changes a mirror keeps, for its
     * promotion (sfs_meta_reply_table.h); the service's, so that they
     * outlive the mirror role */
    struct sfs_meta_reply_table *kept_replies;
    int                          tearing_down;    /* sfs_service_destroy: refuse every request */
    int                          stopping_others; /* management told the other ranks to stop */
    uint64_t                     next_heartbeat_ms;
    sfs_tp_rpc_t                *heartbeat_rpc;
    uint64_t                     heartbeat_sent_ms; /* renews the fencing lease once answered */
    sfs_lease_t meta_lease; /* a mirrored metadata server's, from management (sfs_meta_fence.h) */
    uint64_t    meta_since_ms; /* its promotion: older heartbeats' answers do not depose it */
    /* the metadata mirror's word (sfs_meta_fence.h, sfs_buddy_word.h): held by
     * the metadata server, given by the mirror; and the server's question */
    sfs_buddy_word_t meta_word;
    sfs_tp_rpc_t    *meta_word_ask;
    uint64_t         meta_word_asked_ms;
    uint64_t         meta_word_started_ms;
    uint8_t          meta_word_ask_args[32];
    int              registered;
    int              rejoined;       /* started into a running service (--rejoin, --join) */
    int              mgmt_away_said; /* "management unreachable" logged once */
} sfs_service_t;

/* Open this rank's roles (target directories, metadata store) and its
 * transport; management also starts listening on its bootstrap port. */
int sfs_service_create(const sfs_config_t *config, const sfs_role_plan_t *plan, uint32_t rank,
                       sfs_service_t **service_p);
/* Register with management (whose worker address the caller learnt from the
 * MPI job): returns once management has acknowledged. */
int sfs_service_register(sfs_service_t *service, const void *mgmt_address, size_t length);
/* Serve one round of events: progress, timers, heartbeats. */
int sfs_service_progress(sfs_service_t *service, int timeout_ms);
/* Ask this rank to stop (async-signal-safe). */
void sfs_service_request_stop(sfs_service_t *service);
int  sfs_service_stopping(const sfs_service_t *service);
/* Flush everything durable (metadata commits, chunk files); then answer
 * management's STOP, if one came, with the outcome. Not from a request
 * handler: the flush may progress the worker (a metadata batch waiting for
 * its mirror), which UCX does not allow inside its own callbacks. */
int  sfs_service_flush(sfs_service_t *service);
void sfs_service_destroy(sfs_service_t *service);

/* Roles: life cycle and timers (their requests: sfs_handlers.h). */
int  sfs_mgmt_create(sfs_service_t *service, sfs_mgmt_t **mgmt_p);
void sfs_mgmt_timer(sfs_mgmt_t *mgmt);
void sfs_mgmt_destroy(sfs_mgmt_t *mgmt);
/* How many storage targets have registered with this management. */
uint32_t sfs_mgmt_known_targets(const sfs_mgmt_t *mgmt);

/* The metadata server on the store in `dir`; `mirrored`: it keeps a
 * metadata mirror (meta.mirror). */
int  sfs_meta_create(sfs_service_t *service, const char *dir, int mirrored, sfs_meta_t **meta_p);
void sfs_meta_timer(sfs_meta_t *meta);
/* The store's last batch number (0 if it cannot be read). */
uint64_t sfs_meta_last_batch(sfs_meta_t *meta);
/* Whether management has put another rank in its place (its mirror was
 * promoted): then it serves no request, and `detail` says why. */
int sfs_meta_deposed(sfs_meta_t *meta, char *detail, size_t size);
/* Management's heartbeat answer says another rank is the metadata server:
 * a mirrored metadata server is deposed (as sfs_meta_deposed then says,
 * with `detail`); returns 1, or 0 where no mirror is configured (nothing
 * could have been promoted). Progress thread. */
int sfs_meta_depose(sfs_meta_t *meta, const char *detail);
/* Whether this metadata server has a mirror (so a promotion may replace it). */
int sfs_meta_mirrored(const sfs_meta_t *meta);
/* Re-read the target list from management at the next timer tick. */
void sfs_meta_map_changed(sfs_meta_t *meta);
int  sfs_meta_flush(sfs_meta_t *meta);
void sfs_meta_destroy(sfs_meta_t *meta);
/* The file system's id and whether its namespace is empty, and keeping an
 * id (sfs_meta_store_identity, sfs_meta_store_set_identity). */
int sfs_meta_identity(sfs_meta_t *meta, uint64_t *fs_id_p, int *empty_p);
int sfs_meta_set_identity(sfs_meta_t *meta, uint64_t fs_id);

int sfs_storage_create(sfs_service_t *service, sfs_storage_t **storage_p);
/* Fill in this rank's targets for REGISTER/HEARTBEAT. */
typedef struct sfs_target_report {
    uint32_t target_id;
    char     dir[PATH_MAX];
    uint64_t capacity;
    uint64_t free;
    uint64_t bandwidth;
} sfs_target_report_t;
uint32_t sfs_storage_report(sfs_storage_t *storage, sfs_target_report_t *reports, uint32_t max);
/* Which file system each target's chunks belong to (sfs_chunk_target_fs_id):
 * at most `max`, their number in *count_p; and recording `fs_id` on every
 * target that records another (the caller checked that those hold no chunk
 * file: sfs_server_identity.c). */
typedef struct sfs_target_identity {
    uint32_t target_id;
    uint32_t reserved;
    uint64_t fs_id;  /* 0: none recorded */
    uint64_t chunks; /* chunk files when the target was opened */
} sfs_target_identity_t;
int sfs_storage_identities(sfs_storage_t *storage, sfs_target_identity_t *ids, uint32_t max,
                           uint32_t *count_p);
int sfs_storage_set_identity(sfs_storage_t *storage, uint64_t fs_id);
/* Whether a target of this rank has news for management now
 * (sfs_chunk_target_has_news). */
int sfs_storage_has_news(sfs_storage_t *storage);
int sfs_storage_flush(sfs_storage_t *storage);
/* From the progress loop: mirror states to management (sfs_storage_mirror.c). */
void sfs_storage_mirror_tick(sfs_storage_t *storage);
/* The fencing lease (docs/mirroring.md, "Fencing"): management answered a
 * heartbeat or registration sent at `sent_ms` (sfs_time_ms). */
void sfs_storage_mirror_lease_renew(sfs_storage_t *storage, uint64_t sent_ms);
/* Whether management has recorded what a primary serving alone must have
 * it know before it acknowledges a change: that target_id's buddy needs a
 * resync (1 also when it serves with its buddy, or with no management). */
int sfs_storage_mirror_recorded(sfs_storage_t *storage, uint32_t target_id);
/* Testing (STRIPEFS_TEST_DROP_HEARTBEATS): non-zero while this rank is to
 * send management nothing. */
int  sfs_storage_mirror_cut_off(sfs_storage_t *storage);
void sfs_storage_destroy(sfs_storage_t *storage);

#endif
