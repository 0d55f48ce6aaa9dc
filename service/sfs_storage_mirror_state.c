/*
 * The mirror states of this rank's group members (docs/mirroring.md,
 * "Failover"): a change log per member target (sfs_mirror_log.h), kept
 * while its buddy is away, and MIRROR_REPORT to management whenever a
 * state changes (and every heartbeat while a buddy needs a resync, so a
 * management that restarted learns it again), and the resync of a buddy
 * that came back (sfs_mirror_resync.h). Which member is a group's
 * primary now comes from the cluster map, asked for every heartbeat
 * without waiting (a rank with the metadata role has its map kept fresh by
 * that role). The fencing lease (sfs_lease.h, docs/mirroring.md
 * "Fencing") lives here too: renewed by management's answers to the
 * heartbeats, checked before a mirrored change is acknowledged as primary.
 */
#define SFS_LOG_FAC "storage"
#include "sfs_service.h"

#include "sfs_storage_internal.h"

#include "sfs_errno.h"
#include "sfs_buddy_word.h"
#include "sfs_lease.h"
#include "sfs_log.h"
#include "sfs_mirror_log.h"
#include "sfs_mirror_resync.h"
#include "sfs_storage_tunables.h"
#include "sfs_time.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* the soonest a map is asked again after a client named a promotion */
#define SFS_STORAGE_MIRROR_MAP_SOON_MS 200

struct sfs_storage_mirrors {
    sfs_mirror_log_t    **logs; /* one per local target that is a group member */
    sfs_mirror_resync_t **resyncs;
    /* per log: management answered a report that said the buddy needs a
     * resync (in this episode of serving alone), and what the report out
     * said (sfs_storage_mirror_recorded) */
    uint8_t          *recorded;
    uint8_t          *sent_degraded;
    uint32_t          count;
    int               dirty; /* a state changed since management last heard it */
    uint64_t          next_report_ms;
    sfs_tp_rpc_t     *report;
    uint8_t          *args;
    uint64_t          next_map_ms;
    uint64_t          map_asked_ms; /* when the last map request went out */
    sfs_lease_t       lease;
    sfs_buddy_word_t *words; /* per log: the buddy's word (sfs_buddy_word.h) */
    sfs_tp_rpc_t    **pings; /* per log: a word asked for without a change */
    uint64_t         *ping_sent_ms;
    uint8_t (*ping_args)[256];
    uint64_t started_ms;
    /* the lease came back after it had lapsed (a cut, a stall): not good
     * until a map asked for since that heartbeat was sent is in (0: none
     * needed) */
    uint64_t map_after_ms;
    /* STRIPEFS_TEST_DROP_HEARTBEATS: while this file exists, say nothing
     * to management (checked every 100 ms) */
    char    *drop_path;
    int      dropping;
    uint64_t next_drop_check_ms;
    /* and while drop_path.map exists, install no new cluster map (an old
     * map kept through a cut, as a slow map refresh would) */
    char *freeze_path;
    int   map_frozen;
};

int sfs_storage_mirror_init(sfs_storage_t *storage)
{
    const sfs_config_t         *config = storage->service->config;
    struct sfs_storage_mirrors *m;
    int                         rc;

    if (!config->mirror_group_count) {
        return 0;
    }
    m = calloc(1, sizeof(*m));
    if (!m || !(m->logs = calloc(storage->target_count, sizeof(*m->logs))) ||
        !(m->resyncs = calloc(storage->target_count, sizeof(*m->resyncs))) ||
        !(m->recorded = calloc(storage->target_count, 1)) ||
        !(m->sent_degraded = calloc(storage->target_count, 1)) ||
        !(m->words = calloc(storage->target_count, sizeof(*m->words))) ||
        !(m->pings = calloc(storage->target_count, sizeof(*m->pings))) ||
        !(m->ping_sent_ms = calloc(storage->target_count, sizeof(*m->ping_sent_ms))) ||
        !(m->ping_args = calloc(storage->target_count, sizeof(*m->ping_args))) ||
        !(m->args = malloc(SFS_PROTO_ARGS_MAX))) {
        if (m) {
            free(m->words);
            free(m->pings);
            free(m->ping_sent_ms);
            free(m->ping_args);
            free(m->logs);
            free(m->resyncs);
            free(m->recorded);
            free(m->sent_degraded);
        }
        free(m);
        return -ENOMEM;
    }
    storage->mirrors = m;
    sfs_lease_init(&m->lease, config->offline_timeout_ms);
    m->started_ms = sfs_time_ms();
    for (uint32_t i = 0; i < storage->target_count; i++) {
        sfs_buddy_word_init(&m->words[i], config->offline_timeout_ms, 0);
    }
    if (2 * (uint64_t)config->heartbeat_interval_ms >= m->lease.length_ms) {
        sfs_warn("fencing lease %.1f s (half the offline timeout) is less than two heartbeat "
                 "intervals (%.1f s): a late heartbeat stops mirrored writes for a while",
                 (double)m->lease.length_ms / 1000.0,
                 (double)config->heartbeat_interval_ms / 1000.0);
    }
    {
        const char *drop;

        rc = sfs_tunable_string(&sfs_storage_tunables, "STRIPEFS_TEST_DROP_HEARTBEATS", &drop);
        if (rc) {
            return rc;
        }
        if (drop && drop[0]) {
            size_t n = strlen(drop) + 16;

            m->drop_path = malloc(n);
            if (!m->drop_path) {
                return -ENOMEM;
            }
            snprintf(m->drop_path, n, "%s.%u", drop, (unsigned)storage->service->rank);
            m->freeze_path = malloc(n + 4);
            if (!m->freeze_path) {
                return -ENOMEM;
            }
            snprintf(m->freeze_path, n + 4, "%s.map", m->drop_path);
            sfs_warn("STRIPEFS_TEST_DROP_HEARTBEATS: this rank says nothing to management "
                     "while %s exists, and installs no new cluster map while %s exists (testing "
                     "only)",
                     m->drop_path, m->freeze_path);
        }
    }
    for (uint32_t i = 0; i < storage->target_count; i++) {
        uint32_t                         id = sfs_chunk_target_id(storage->targets[i]);
        const sfs_config_mirror_group_t *g  = sfs_config_mirror_group_of(config, id);

        if (!g) {
            continue;
        }
        rc = sfs_mirror_log_open(sfs_chunk_target_dir(storage->targets[i]), id,
                                 g->primary == id ? g->secondary : g->primary, &m->logs[m->count]);
        if (rc) {
            return rc; /* the caller's destroy frees what was made */
        }
        rc =
            sfs_mirror_resync_create(storage->targets[i], m->logs[m->count], &m->resyncs[m->count]);
        if (rc) {
            sfs_mirror_log_close(m->logs[m->count]);
            return rc;
        }
        if (sfs_mirror_log_degraded(m->logs[m->count])) {
            m->dirty = 1;
        }
        m->count++;
    }
    return 0;
}

void sfs_storage_mirror_fini(sfs_storage_t *storage)
{
    struct sfs_storage_mirrors *m = storage->mirrors;

    if (!m) {
        return;
    }
    if (m->report) {
        sfs_tp_rpc_release(m->report);
    }
    for (uint32_t i = 0; i < m->count; i++) {
        if (m->pings[i]) {
            sfs_tp_rpc_release(m->pings[i]);
        }
        sfs_mirror_resync_destroy(m->resyncs[i]);
        sfs_mirror_log_close(m->logs[i]);
    }
    free(m->logs);
    free(m->resyncs);
    free(m->args);
    free(m->drop_path);
    free(m->freeze_path);
    free(m->recorded);
    free(m->sent_degraded);
    free(m->words);
    free(m->pings);
    free(m->ping_sent_ms);
    free(m->ping_args);
    free(m);
    storage->mirrors = NULL;
}

/* The index of local member `target_id` in the per-member arrays (-1: not
 * a member here). */
static int sfs_storage_mirror_index(const struct sfs_storage_mirrors *m, uint32_t target_id)
{
    for (uint32_t i = 0; m && i < m->count; i++) {
        if (sfs_mirror_log_target(m->logs[i]) == target_id) {
            return (int)i;
        }
    }
    return -1;
}

sfs_mirror_log_t *sfs_storage_mirror_log(sfs_storage_t *storage, uint32_t target_id)
{
    int i = sfs_storage_mirror_index(storage->mirrors, target_id);

    return i < 0 ? NULL : storage->mirrors->logs[i];
}

int sfs_storage_mirror_recorded(sfs_storage_t *storage, uint32_t target_id)
{
    struct sfs_storage_mirrors *m = storage->mirrors;
    int                         i = sfs_storage_mirror_index(m, target_id);

    if (!m || !storage->service->cluster || i < 0) {
        return 1; /* no management to promote anything; or no member here */
    }
    return !sfs_mirror_log_degraded(m->logs[i]) || m->recorded[i];
}

uint32_t sfs_storage_mirror_primary(sfs_storage_t *storage, const sfs_config_mirror_group_t *group)
{
    const sfs_map_t *map =
        storage->service->cluster ? sfs_cluster_map(storage->service->cluster) : NULL;
    const sfs_map_target_t *t = map ? sfs_map_find_target(map, group->primary) : NULL;

    return t && t->mirror_primary ? t->mirror_primary : group->primary;
}

/* Ask for the map (never waiting), for the groups' current primaries. */
static void sfs_storage_mirror_map(sfs_storage_t *storage, uint64_t now)
{
    struct sfs_storage_mirrors *m       = storage->mirrors;
    sfs_cluster_t              *cluster = storage->service->cluster;
    int                         rc;

    if (storage->service->meta) {
        return; /* the metadata role's timer keeps this process's map fresh */
    }
    sfs_storage_mirror_cut_off(storage); /* (reads the test switches below) */
    if (m->map_frozen) {
        return; /* STRIPEFS_TEST_DROP_HEARTBEATS's map switch (testing only) */
    }
    rc = sfs_cluster_refresh_map_poll(cluster);
    if (rc < 0) {
        sfs_debug("cluster map not refreshed (the last one serves): %s", sfs_error_detail());
    }
    if (now < m->next_map_ms) {
        return;
    }
    m->next_map_ms  = now + storage->service->config->heartbeat_interval_ms;
    m->map_asked_ms = now;
    rc              = sfs_cluster_refresh_map_start(cluster, 0);
    if (rc && rc != -EALREADY) {
        sfs_debug("cannot ask management for the cluster map: %s", sfs_error_detail());
    }
}

/* A primary whose buddy the map has offline serves alone from now on,
 * without a forward failing first: a secondary just promoted, whose old
 * primary is gone, logs every change from its first request on. */
static void sfs_storage_mirror_map_says(sfs_storage_t *storage, sfs_mirror_log_t *log)
{
    const sfs_map_t        *map  = sfs_cluster_map(storage->service->cluster);
    uint32_t                self = sfs_mirror_log_target(log);
    const sfs_map_target_t *me   = map ? sfs_map_find_target(map, self) : NULL;
    const sfs_map_target_t *buddy =
        map ? sfs_map_find_target(map, sfs_mirror_log_buddy(log)) : NULL;

    if (sfs_mirror_log_degraded(log) || !me || me->mirror_primary != self || !buddy ||
        buddy->state != SFS_STATE_OFFLINE) {
        return;
    }
    if (sfs_mirror_log_begin(log) != 0) {
        sfs_warn("target %" PRIu32 ": %s", self, sfs_error_detail());
        return;
    }
    sfs_storage_mirror_changed(storage);
}

void sfs_storage_mirror_map_soon(sfs_storage_t *storage)
{
    struct sfs_storage_mirrors *m = storage->mirrors;

    /* (a promotion makes the promoted member refuse as "not the primary"
     * until its map says so: a client's pause would pass the offline
     * timeout by up to a heartbeat) */
    if (m && m->map_asked_ms + SFS_STORAGE_MIRROR_MAP_SOON_MS < m->next_map_ms) {
        m->next_map_ms = m->map_asked_ms + SFS_STORAGE_MIRROR_MAP_SOON_MS;
    }
}

void sfs_storage_mirror_changed(sfs_storage_t *storage)
{
    if (storage->mirrors) {
        storage->mirrors->dirty = 1;
    }
}

static void sfs_storage_mirror_report_send(sfs_storage_t *storage)
{
    struct sfs_storage_mirrors *m       = storage->mirrors;
    sfs_service_t              *service = storage->service;
    sfs_mirror_report_req_t    *req     = calloc(1, sizeof(*req));
    sfs_tp_rpc_params_t         params;
    sfs_tp_conn_t              *conn;
    sfs_wbuf_t                  wb;

    if (!req) {
        return; /* tried again at the next tick */
    }
    for (uint32_t i = 0; i < m->count && req->count < SFS_MIRROR_REPORT_MAX; i++) {
        sfs_mirror_report_entry_t *e = &req->entries[req->count++];

        e->reporter         = sfs_mirror_log_target(m->logs[i]);
        e->target           = sfs_mirror_log_buddy(m->logs[i]);
        e->state            = sfs_mirror_resync_state(m->resyncs[i], &e->done, &e->total);
        m->sent_degraded[i] = e->state != SFS_MIRROR_STATE_GOOD;
    }
    sfs_wbuf_init(&wb, m->args, SFS_PROTO_ARGS_MAX);
    sfs_proto_mirror_report_req_pack(&wb, req);
    free(req);
    if (wb.error || sfs_cluster_mgmt_conn(service->cluster, &conn) != 0) {
        return;
    }
    memset(&params, 0, sizeof(params));
    params.opcode      = SFS_OP_MIRROR_REPORT;
    params.args        = m->args;
    params.args_length = wb.length;
    if (sfs_tp_rpc_start(conn, &params, &m->report) != 0) {
        m->report = NULL;
        return;
    }
    m->dirty = 0;
}

/* A primary without management's lease asks its buddy's word without a
 * change to forward (a CHUNK_STAT flagged SFS_CHUNK_BUDDY, which a member
 * that is the primary refuses), so that reads go on while management is
 * away; only while the lease is more than half run out, so never while
 * management answers. */
static void sfs_storage_mirror_ping(sfs_storage_t *storage, uint32_t i, uint64_t now)
{
    struct sfs_storage_mirrors      *m       = storage->mirrors;
    sfs_service_t                   *service = storage->service;
    uint32_t                         self    = sfs_mirror_log_target(m->logs[i]);
    const sfs_config_mirror_group_t *group   = sfs_config_mirror_group_of(service->config, self);
    uint64_t                         half    = m->lease.length_ms / 2;
    sfs_tp_rpc_params_t              params;
    sfs_chunk_req_t                  chunk;
    const sfs_map_t                 *map;
    const sfs_map_target_t          *buddy;
    sfs_tp_conn_t                   *conn;
    sfs_wbuf_t                       wb;
    int                              rc;

    if (m->pings[i]) {
        if (!sfs_tp_rpc_is_done(m->pings[i])) {
            return;
        }
        rc = sfs_tp_rpc_status(m->pings[i]);
        sfs_storage_mirror_word_taken(storage, self, m->ping_sent_ms[i],
                                      rc == 0         ? 1
                                      : rc == -ESTALE ? -1
                                                      : 0);
        sfs_tp_rpc_release(m->pings[i]);
        m->pings[i] = NULL;
    }
    if (service->mgmt || !group || sfs_storage_mirror_primary(storage, group) != self ||
        sfs_mirror_log_degraded(m->logs[i]) ||
        sfs_storage_find(storage, sfs_mirror_log_buddy(m->logs[i])) ||
        sfs_lease_valid(&m->lease, now + half) || sfs_buddy_word_holds(&m->words[i], now + half) ||
        now < m->ping_sent_ms[i] + half / 2) {
        return;
    }
    memset(&chunk, 0, offsetof(sfs_chunk_req_t, extents));
    chunk.target_id = sfs_mirror_log_buddy(m->logs[i]);
    chunk.flags     = SFS_CHUNK_BUDDY; /* entry 0: no file's */
    sfs_wbuf_init(&wb, m->ping_args[i], sizeof(m->ping_args[i]));
    sfs_proto_chunk_req_pack(&wb, SFS_OP_CHUNK_STAT, &chunk);
    map                = sfs_cluster_map(service->cluster);
    buddy              = map ? sfs_map_find_target(map, chunk.target_id) : NULL;
    m->ping_sent_ms[i] = now;
    /* (on the progress thread: one try at connecting, 1 s at most, and after
     * a failed one none for a whole lease) */
    if (wb.error || !buddy ||
        sfs_cluster_node_conn_quick(service->cluster, buddy->node_id, 1000, &conn) != 0) {
        m->ping_sent_ms[i] = now + m->lease.length_ms;
        return;
    }
    memset(&params, 0, sizeof(params));
    params.opcode      = SFS_OP_CHUNK_STAT;
    params.args        = m->ping_args[i];
    params.args_length = wb.length;
    params.timeout_ms  = half ? half : 1;
    if (sfs_tp_rpc_start(conn, &params, &m->pings[i]) != 0) {
        m->pings[i] = NULL;
    }
}

void sfs_storage_mirror_tick(sfs_storage_t *storage)
{
    struct sfs_storage_mirrors *m        = storage->mirrors;
    uint64_t                    now      = sfs_time_ms();
    int                         degraded = 0;

    if (!m || !storage->service->cluster || !storage->service->registered) {
        return;
    }
    for (uint32_t i = 0; i < m->count; i++) {
        sfs_storage_mirror_ping(storage, i, now);
    }
    if (sfs_storage_mirror_cut_off(storage)) {
        return; /* testing: no map request, no report (management cannot be reached) */
    }
    sfs_storage_mirror_map(storage, now);
    for (uint32_t i = 0; i < m->count; i++) {
        sfs_storage_mirror_map_says(storage, m->logs[i]);
        if (sfs_mirror_resync_tick(m->resyncs[i], storage->service->cluster,
                                   sfs_cluster_map(storage->service->cluster), now)) {
            m->dirty = 1;
        }
    }
    for (uint32_t i = 0; i < m->count; i++) {
        if (!sfs_mirror_log_degraded(m->logs[i])) {
            m->recorded[i] = 0; /* a new episode must be recorded again */
        }
    }
    if (m->report) {
        if (!sfs_tp_rpc_is_done(m->report)) {
            return;
        }
        if (sfs_tp_rpc_status(m->report) != 0) {
            sfs_warn("mirror report to management failed: %s", sfs_tp_rpc_error_detail(m->report));
            m->dirty = 1;
        } else {
            for (uint32_t i = 0; i < m->count; i++) {
                if (m->sent_degraded[i] && sfs_mirror_log_degraded(m->logs[i])) {
                    m->recorded[i] = 1;
                }
            }
        }
        sfs_tp_rpc_release(m->report);
        m->report = NULL;
    }
    for (uint32_t i = 0; i < m->count; i++) {
        degraded |= sfs_mirror_log_degraded(m->logs[i]);
    }
    if (!m->dirty && !(degraded && now >= m->next_report_ms)) {
        return;
    }
    m->next_report_ms = now + storage->service->config->heartbeat_interval_ms;
    sfs_storage_mirror_report_send(storage);
}

int sfs_storage_mirror_cut_off(sfs_storage_t *storage)
{
    struct sfs_storage_mirrors *m = storage->mirrors;
    uint64_t                    now;
    struct stat                 st;
    int                         was;

    if (!m || !m->drop_path) {
        return 0;
    }
    now = sfs_time_ms();
    if (now < m->next_drop_check_ms) {
        return m->dropping;
    }
    m->next_drop_check_ms = now + 100;
    was                   = m->dropping;
    m->dropping           = stat(m->drop_path, &st) == 0;
    if ((stat(m->freeze_path, &st) == 0) != m->map_frozen) {
        m->map_frozen = !m->map_frozen;
        sfs_warn("STRIPEFS_TEST_DROP_HEARTBEATS: %s %s", m->freeze_path,
                 m->map_frozen ? "exists: no new cluster map is installed from now on"
                               : "is gone: cluster maps are installed again");
    }
    if (m->dropping != was) {
        sfs_warn("STRIPEFS_TEST_DROP_HEARTBEATS: %s %s: %s", m->drop_path,
                 m->dropping ? "exists" : "is gone",
                 m->dropping ? "saying nothing to management from now on"
                             : "talking to management again");
    }
    return m->dropping;
}

void sfs_storage_mirror_lease_renew(sfs_storage_t *storage, uint64_t sent_ms)
{
    struct sfs_storage_mirrors *m = storage->mirrors;
    uint64_t                    now;
    int                         rc;

    if (!m) {
        return;
    }
    now = sfs_time_ms();
    if (!sfs_lease_valid(&m->lease, now) && sfs_lease_age_ms(&m->lease, now) != UINT64_MAX &&
        sent_ms > m->map_after_ms) {
        /* back from a lapse: while it was cut off its buddy may have been
         * promoted, and its map would still name it the primary. Its lease
         * counts again only once a map asked for from now on is in (a late
         * write admitted in between re-created a removed file's chunk file
         * on this member only, and could be acknowledged) */
        m->map_after_ms = sent_ms;
        m->next_map_ms  = now;
        rc              = sfs_cluster_refresh_map_start(storage->service->cluster, 0);
        sfs_info("fencing: management answers this rank again after its lease had lapsed; its "
                 "targets acknowledge no mirrored change until a new cluster map is in%s",
                 rc == 0 ? " (asked for)" : "");
    }
    sfs_lease_renew(&m->lease, sent_ms);
}

/* The buddy's word of local member `target_id` (NULL: not a member). */
static sfs_buddy_word_t *sfs_storage_mirror_word(sfs_storage_t *storage, uint32_t target_id)
{
    int i = sfs_storage_mirror_index(storage->mirrors, target_id);

    return i < 0 ? NULL : &storage->mirrors->words[i];
}

/* Management's lease: 0 while it holds (and the map after a lapse is in),
 * else -ESTALE with the detail set; `told` says whether the lapse was
 * logged. */
static int sfs_storage_mirror_leased(sfs_storage_t *storage, uint32_t target_id, const char *what,
                                     uint64_t now)
{
    struct sfs_storage_mirrors *m = storage->mirrors;
    uint64_t                    age;

    if (sfs_lease_valid(&m->lease, now)) {
        if (!m->map_after_ms) {
            return 0;
        }
        if (sfs_cluster_map_asked_ms(storage->service->cluster) >= m->map_after_ms) {
            m->map_after_ms = 0; /* the map shows what management knew by the renewal */
            return 0;
        }
        return sfs_error_set(-ESTALE,
                             "%s on target %" PRIu32 ": its rank's lease came back after it "
                             "had lapsed and no cluster map asked for since is in yet: its map "
                             "may still name it a primary whose buddy was promoted meanwhile "
                             "(fencing)",
                             what, target_id);
    }
    age = sfs_lease_age_ms(&m->lease, now);
    if (age == UINT64_MAX) {
        return sfs_error_set(-ESTALE,
                             "%s on target %" PRIu32 ": its rank holds no lease from "
                             "management yet (fencing)",
                             what, target_id);
    }
    return sfs_error_set(-ESTALE,
                         "%s on target %" PRIu32 ": its rank's lease from management "
                         "expired (heartbeat sent %.1f s ago, lease %.1f s): not the "
                         "primary it may claim to be (fencing)",
                         what, target_id, (double)age / 1000.0,
                         (double)m->lease.length_ms / 1000.0);
}

int sfs_storage_mirror_fenced(sfs_storage_t *storage, uint32_t target_id, uint32_t buddy_id,
                              const char *what, sfs_storage_word_use_t use)
{
    struct sfs_storage_mirrors *m = storage->mirrors;
    sfs_buddy_word_t           *word;
    uint64_t                    now, age;
    int                         rc;

    if (!m || storage->service->mgmt) {
        return 0; /* management in this process: it cannot be cut off from it */
    }
    now  = sfs_time_ms();
    rc   = sfs_storage_mirror_leased(storage, target_id, what, now);
    word = sfs_storage_mirror_word(storage, target_id);
    if (rc == 0) {
        if (word) {
            sfs_buddy_word_forgive(word); /* its map is fresh: it says who is primary */
        }
        return 0;
    }
    age = sfs_lease_age_ms(&m->lease, now);
    if (use == SFS_WORD_NONE) {
        word = NULL;
    }
    if (word && ((use == SFS_WORD_ASKED && !word->refused) || sfs_buddy_word_holds(word, now))) {
        if (!word->told) {
            word->told = 1;
            sfs_warn("fencing: target %" PRIu32 " goes on as its mirror group's primary on its "
                     "buddy %" PRIu32 "'s word, without a lease from management (%s): every "
                     "change it acknowledges is taken by %" PRIu32 " as secondary first, and "
                     "%" PRIu32 " would serve as primary only once that word ran out",
                     target_id, buddy_id, sfs_error_detail(), buddy_id, buddy_id);
        }
        sfs_error_clear();
        return 0;
    }
    if (!m->lease.told && !sfs_lease_valid(&m->lease, now)) {
        m->lease.told = 1;
        if (age == UINT64_MAX) {
            sfs_warn("fencing: target %" PRIu32 " acknowledges no mirrored change and serves "
                     "no mirrored read: management has not answered a heartbeat of this rank "
                     "yet",
                     target_id);
        } else {
            sfs_warn("fencing: target %" PRIu32 " acknowledges no mirrored change from now on "
                     "and serves no mirrored read: its lease from management expired (renewed by a "
                     "heartbeat sent %.1f s "
                     "ago; lease %.1f s, half the offline timeout), and no word of its buddy "
                     "%" PRIu32 " holds, so its buddy may be promoted",
                     target_id, (double)age / 1000.0, (double)m->lease.length_ms / 1000.0,
                     buddy_id);
        }
    }
    return rc;
}

void sfs_storage_mirror_word_taken(sfs_storage_t *storage, uint32_t target_id, uint64_t sent_ms,
                                   int taken)
{
    sfs_buddy_word_t *word = sfs_storage_mirror_word(storage, target_id);

    if (!word) {
        return;
    }
    if (taken > 0) {
        sfs_buddy_word_renew(word, sent_ms);
        return;
    }
    if (taken < 0 && !word->refused && sfs_buddy_word_holds(word, sfs_time_ms())) {
        sfs_warn("fencing: target %" PRIu32 "'s buddy refused its copy as the group's primary "
                 "now: its word no longer holds, and it takes no mirrored change on its own word "
                 "until management answers again",
                 target_id);
    }
    sfs_buddy_word_drop(word, sfs_time_ms(), taken < 0);
}

void sfs_storage_mirror_word_given(sfs_storage_t *storage, uint32_t target_id)
{
    sfs_buddy_word_t *word = sfs_storage_mirror_word(storage, target_id);

    if (word) {
        sfs_buddy_word_give(word, sfs_time_ms());
    }
}

int sfs_storage_mirror_word_wait(sfs_storage_t *storage, uint32_t target_id, uint32_t buddy_id,
                                 const char *what)
{
    struct sfs_storage_mirrors *m    = storage->mirrors;
    sfs_buddy_word_t           *word = sfs_storage_mirror_word(storage, target_id);
    uint64_t                    now  = sfs_time_ms(), wait;

    if (!word) {
        return 0;
    }
    if (storage->service->rejoined) {
        /* it may have given its word before its restart, and forgotten */
        sfs_buddy_word_give(word, m->started_ms);
    }
    wait = sfs_buddy_word_wait_ms(word, now);
    if (!wait) {
        return 0;
    }
    return sfs_error_set(-ESTALE,
                         "%s on target %" PRIu32 ": it is its mirror group's primary now, but "
                         "it gave its buddy %" PRIu32 " its word as secondary (a copy taken%s): "
                         "%" PRIu32 " may still act on it for %.1f s, so %" PRIu32
                         " serves as primary only after that (fencing)",
                         what, target_id, buddy_id,
                         storage->service->rejoined ? ", or this rank's restart" : "", buddy_id,
                         (double)wait / 1000.0, target_id);
}

sfs_mirror_resync_t *sfs_storage_mirror_resync_of(sfs_storage_t *storage, uint32_t target_id)
{
    int i = sfs_storage_mirror_index(storage->mirrors, target_id);

    return i < 0 ? NULL : storage->mirrors->resyncs[i];
}
