/*
 * The metadata role: its life cycle and its timer. How it works is told in
 * sfs_meta_internal.h (which file does what); in short, requests are
 * queued for one metadata thread that commits them in batches (group
 * commit), new files' targets come from sfs_meta_chooser.h, and removed
 * files' chunk files are deleted in the background.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_service.h"

#include "sfs_meta_drain.h"
#include "sfs_meta_lease.h"
#include "sfs_meta_internal.h"
#include "sfs_meta_mirror.h"
#include "sfs_meta_quota.h"

#include "sfs_alloc.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The map is asked for without waiting (a slow management must not stall
 * metadata replies): a reply is installed when the timer finds it, and
 * until then the last map serves. At most one request is out; one that
 * passes its deadline is logged and sent again at the next heartbeat. */
static void sfs_meta_refresh_targets(sfs_meta_t *meta, uint64_t now)
{
    sfs_cluster_t *cluster  = meta->service->cluster;
    uint32_t       interval = meta->service->config->heartbeat_interval_ms;
    int            rc, wanted;

    if (!cluster) {
        return;
    }
    rc = sfs_cluster_refresh_map_poll(cluster);
    if (rc == 1 && sfs_meta_chooser_update(&meta->chooser, sfs_cluster_map(cluster)) != 0) {
        sfs_warn("out of memory refreshing the target list: the old one is kept");
    } else if (rc < 0) {
        sfs_warn("cluster map not refreshed (the last one serves; asking again): %s",
                 sfs_error_detail());
    }
    if (now < meta->next_refresh_ms || !meta->service->registered) {
        return;
    }
    wanted                = meta->next_refresh_ms == 0; /* sfs_meta_map_changed */
    meta->next_refresh_ms = now + interval;
    /* the transport's RPC deadline, as the heartbeat's: a shorter one would
     * declare a slow management's connection broken */
    rc = sfs_cluster_refresh_map_start(cluster, 0);
    if (rc == -EALREADY && wanted) {
        meta->next_refresh_ms = 0; /* the change came after that request: ask again */
    }
    if (rc && rc != -EALREADY) {
        sfs_warn("cannot ask management for the cluster map: %s", sfs_error_detail());
    }
}

void sfs_meta_timer(sfs_meta_t *meta)
{
    uint64_t now = sfs_time_ms();

    sfs_meta_refresh_targets(meta, now);
    sfs_meta_delete_tick(meta, now);
    sfs_meta_locks_tick(meta, now);
    sfs_meta_mirror_report_tick(meta->mirror_report);
}

uint64_t sfs_meta_last_batch(sfs_meta_t *meta)
{
    uint64_t seq = 0;

    if (sfs_meta_store_mirror_seq(meta->store, &seq) != 0) {
        sfs_error_clear();
        return 0;
    }
    return seq;
}

int sfs_meta_deposed(sfs_meta_t *meta, char *detail, size_t size)
{
    return meta ? sfs_meta_mirror_report_deposed(meta->mirror_report, detail, size) : 0;
}

int sfs_meta_depose(sfs_meta_t *meta, const char *detail)
{
    if (!meta || !meta->mirror_report) {
        return 0;
    }
    sfs_meta_mirror_report_depose(meta->mirror_report, detail);
    return 1;
}

int sfs_meta_mirrored(const sfs_meta_t *meta)
{
    return meta && meta->mirror_report;
}

void sfs_meta_map_changed(sfs_meta_t *meta)
{
    meta->next_refresh_ms = 0;
}

int sfs_meta_create(sfs_service_t *service, const char *dir, int mirrored, sfs_meta_t **meta_p)
{
    sfs_meta_store_params_t params;
    sfs_meta_t             *meta;
    int                     rc;

    if (!SFS_ALLOC_PTR(meta)) {
        return -ENOMEM;
    }
    meta->service = service;
    pthread_mutex_init(&meta->lock, NULL);
    pthread_cond_init(&meta->cond, NULL);
    pthread_cond_init(&meta->flushed, NULL);
    sfs_meta_chooser_init(&meta->chooser);
    sfs_list_init(&meta->queue);
    if (sfs_meta_counters_init(meta) != 0 || sfs_meta_locks_init(meta) != 0 ||
        sfs_meta_leases_create(&meta->leases) != 0) {
        sfs_meta_leases_destroy(meta->leases);
        sfs_meta_counters_cleanup(meta);
        sfs_meta_chooser_cleanup(&meta->chooser);
        free(meta);
        return -ENOMEM;
    }
    memset(&params, 0, sizeof(params));
    params.dir          = dir;
    params.sync         = service->config->meta_sync;
    params.map_size     = service->config->meta_map_size;
    params.chunk_size   = service->config->default_chunk_size;
    params.stripe_count = service->config->default_stripe_count;
    params.mirror = service->config->mirror_default && service->config->mirror_group_count > 0;
    rc            = sfs_meta_store_open(&params, &meta->store);
    if (rc == 0) {
        rc = sfs_meta_quota_upgrade(meta->store); /* docs/quotas.md */
    }
    if (rc == 0) { /* before any request: new files avoid them from the first */
        rc = sfs_meta_drain_load(meta->store, &meta->chooser);
    }
    if (rc == 0) {
        rc = sfs_meta_pool_start(meta); /* docs/pools.md */
    }
    if (rc == 0) {
        rc = sfs_meta_replies_test_start(meta);
    }
    if (rc == 0) {
        rc = sfs_meta_read_now_init(meta);
    }
    if (rc == 0 && mirrored) {
        rc = sfs_meta_mirror_report_create(service, &meta->mirror_report);
        if (rc == 0) {
            rc = sfs_meta_mirror_link_create(service, meta->store, meta->mirror_report,
                                             &meta->mirror);
        }
    }
    if (rc) {
        goto err;
    }
    rc = pthread_create(&meta->thread, NULL, sfs_meta_thread, meta);
    if (rc) {
        rc = sfs_error_set(-rc, "cannot start the metadata thread: %s", strerror(rc));
        goto err;
    }
    meta->thread_started = 1;
    sfs_info("metadata server, store in %s (%s commits)", dir,
             service->config->meta_sync ? "durable" : "unsynced");
    *meta_p = meta;
    return 0;

err:
    sfs_meta_destroy(meta);
    return rc;
}

int sfs_meta_identity(sfs_meta_t *meta, uint64_t *fs_id_p, int *empty_p)
{
    return sfs_meta_store_identity(meta->store, fs_id_p, empty_p);
}

int sfs_meta_set_identity(sfs_meta_t *meta, uint64_t fs_id)
{
    return sfs_meta_store_set_identity(meta->store, fs_id);
}

void sfs_meta_destroy(sfs_meta_t *meta)
{
    if (!meta) {
        return;
    }
    if (meta->thread_started) {
        pthread_mutex_lock(&meta->lock);
        meta->stopping = 1;
        pthread_cond_broadcast(&meta->cond);
        pthread_mutex_unlock(&meta->lock);
        if (meta->mirror) {
            sfs_meta_mirror_link_stop(meta->mirror); /* a wait for the mirror ends */
        }
        sfs_meta_mirror_report_stop(meta->mirror_report); /* and one for management */
        pthread_join(meta->thread, NULL);
        while (meta->in_flight) {
            sfs_tp_worker_progress(meta->service->worker, 10);
        }
    }
    sfs_meta_mirror_link_destroy(meta->mirror);
    sfs_meta_mirror_report_destroy(meta->mirror_report);
    sfs_meta_locks_cleanup(meta); /* queued LOCKs answered ESHUTDOWN */
    sfs_meta_delete_cleanup(meta);
    sfs_meta_store_close(meta->store);
    sfs_meta_chooser_cleanup(&meta->chooser);
    sfs_meta_leases_destroy(meta->leases);
    sfs_meta_pools_cleanup(&meta->pools);
    sfs_meta_counters_cleanup(meta);
    free(meta->test_die_file);
    pthread_mutex_destroy(&meta->lock);
    pthread_cond_destroy(&meta->cond);
    pthread_cond_destroy(&meta->flushed);
    free(meta);
}
