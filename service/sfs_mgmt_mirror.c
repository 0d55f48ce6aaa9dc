/*
 * Mirror groups on management (docs/mirroring.md): MIRROR_LIST (the
 * groups, which member serves each now, the members' consistency states)
 * and MIRROR_REPORT (a storage rank serving a group alone says its buddy
 * needs a resync, or how a resync goes). The states live here, in memory,
 * made from the config on first use, or read back at start from the
 * mirror state file, written on every change (sfs_mgmt_mirror_store.c).
 * Failover: once a group's primary has
 * been silent for the offline timeout, its secondary is promoted if it is
 * online and good (never one that needs a resync), and the map names it.
 * A primary whose buddy is away
 * re-sends its report every heartbeat while it lasts, so a management
 * that restarted learns them again. Anyone may list: the groups are no
 * secret (the map's targets are not either).
 */
#define SFS_LOG_FAC "mgmt"
#include "sfs_handlers.h"

#include "sfs_mgmt_internal.h"

#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <inttypes.h>
#include <stdlib.h>

sfs_mgmt_mirror_t *sfs_mgmt_mirrors(sfs_mgmt_t *mgmt)
{
    const sfs_config_t *config = mgmt->service->config;

    if (!mgmt->mirrors && config->mirror_group_count) {
        mgmt->mirrors = calloc(config->mirror_group_count, sizeof(*mgmt->mirrors));
        if (mgmt->mirrors) {
            sfs_mgmt_mirror_from_config(config, mgmt->mirrors);
        }
    }
    return mgmt->mirrors;
}

/* The group of `target` and the member's index in it (0 or 1). */
static sfs_mgmt_mirror_t *sfs_mgmt_mirror_of(sfs_mgmt_t *mgmt, uint32_t target, int *which_p)
{
    sfs_mgmt_mirror_t *groups = sfs_mgmt_mirrors(mgmt);

    for (uint32_t i = 0; groups && i < mgmt->service->config->mirror_group_count; i++) {
        for (int m = 0; m < 2; m++) {
            if (groups[i].member[m] == target) {
                *which_p = m;
                return &groups[i];
            }
        }
    }
    return NULL;
}

void sfs_mgmt_mirror_map(sfs_mgmt_t *mgmt, sfs_map_t *map)
{
    for (uint32_t i = 0; i < map->target_count; i++) {
        sfs_map_target_t  *t = &map->targets[i];
        int                m;
        sfs_mgmt_mirror_t *g = sfs_mgmt_mirror_of(mgmt, t->target_id, &m);

        if (g) {
            t->mirror_primary = g->primary;
            t->mirror_state   = g->state[m];
            t->resync_done    = g->done[m];
            t->resync_total   = g->total[m];
        }
    }
}

/* The state of the rank serving `target` now (offline if unknown). */
static uint32_t sfs_mgmt_mirror_node_state(sfs_mgmt_t *mgmt, uint32_t target, uint64_t now)
{
    sfs_mgmt_target_t *t    = sfs_mgmt_find_target(mgmt, target);
    sfs_mgmt_node_t   *node = t ? sfs_mgmt_find_node(mgmt, t->node_id) : NULL;

    return node ? sfs_mgmt_state_after(mgmt->service->config, now - node->last_contact_ms)
                : SFS_STATE_OFFLINE;
}

int sfs_mgmt_mirror_failover(sfs_mgmt_t *mgmt, uint32_t node_id)
{
    const sfs_config_t *config  = mgmt->service->config;
    sfs_mgmt_mirror_t  *groups  = sfs_mgmt_mirrors(mgmt);
    uint64_t            now     = sfs_time_ms();
    int                 changed = 0;

    if (mgmt->shutdown_requested) {
        /* the ranks stop on purpose, some before others: a promotion now
         * would be saved and name a member the next start should not */
        return 0;
    }
    for (uint32_t i = 0; groups && i < config->mirror_group_count; i++) {
        sfs_mgmt_mirror_t *g   = &groups[i];
        int                p   = g->primary == g->member[1];
        sfs_mgmt_target_t *old = sfs_mgmt_find_target(mgmt, g->primary);

        if (!old || old->node_id != node_id) {
            continue;
        }
        if (g->state[!p] != SFS_MIRROR_STATE_GOOD ||
            sfs_mgmt_mirror_node_state(mgmt, g->member[!p], now) != SFS_STATE_ONLINE) {
            sfs_error("mirror group %u: primary %u lost (offline timeout %.1f s), and its "
                      "secondary %u cannot take over (%s, %s): the group is down",
                      config->mirror_groups[i].id, g->primary,
                      (double)config->offline_timeout_ms / 1000.0, g->member[!p],
                      sfs_mirror_state_name(g->state[!p]),
                      sfs_state_name(sfs_mgmt_mirror_node_state(mgmt, g->member[!p], now)));
            continue;
        }
        sfs_warn("mirror group %u: primary %u offline (silent %.1f s; offline timeout %.1f s): "
                 "target %u is its primary now, %u needs a resync",
                 config->mirror_groups[i].id, g->primary,
                 (double)sfs_mgmt_offline_after_ms(config) / 1000.0,
                 (double)config->offline_timeout_ms / 1000.0, g->member[!p], g->primary);
        g->state[p] = SFS_MIRROR_STATE_NEEDS_RESYNC;
        g->primary  = g->member[!p];
        changed     = 1;
    }
    if (changed) {
        sfs_mgmt_mirror_save(mgmt); /* a restarted management must not name the old one */
    }
    return changed;
}

void sfs_handle_mirror_list(sfs_service_t *service, sfs_tp_request_t *req)
{
    const sfs_config_t      *config = service->config;
    sfs_mgmt_mirror_t       *groups = sfs_mgmt_mirrors(service->mgmt);
    sfs_mirror_list_reply_t *reply;
    sfs_none_t               none;
    uint8_t                 *args;
    sfs_wbuf_t               wb;

    if (sfs_handler_decode(req, &none, sizeof(none), 0) != 0) {
        return;
    }
    reply = calloc(1, sizeof(*reply));
    args  = malloc(SFS_PROTO_ARGS_MAX);
    if (!reply || !args || (config->mirror_group_count && !groups)) {
        free(reply);
        free(args);
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    for (uint32_t i = 0; i < config->mirror_group_count && i < SFS_MIRROR_LIST_MAX; i++) {
        sfs_mirror_group_info_t *g = &reply->groups[reply->count++];
        int                      p = groups[i].primary == groups[i].member[1];

        /* the member serving now first: after a failover, the old secondary */
        g->group_id        = config->mirror_groups[i].id;
        g->primary         = groups[i].member[p];
        g->secondary       = groups[i].member[!p];
        g->primary_state   = groups[i].state[p];
        g->secondary_state = groups[i].state[!p];
    }
    sfs_mgmt_meta_mirror_list(service->mgmt, &reply->meta);
    sfs_wbuf_init(&wb, args, SFS_PROTO_ARGS_MAX);
    sfs_proto_mirror_list_reply_pack(&wb, reply);
    if (wb.error) {
        sfs_tp_request_reply_error(req, wb.error, "%u mirror groups do not fit in a reply",
                                   config->mirror_group_count);
    } else {
        sfs_tp_request_reply(req, 0, args, wb.length, NULL, 0, NULL, NULL);
    }
    free(reply);
    free(args);
}

void sfs_handle_mirror_report(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_mgmt_t              *mgmt = service->mgmt;
    sfs_mirror_report_req_t *report;
    int                      changed = 0, states = 0;

    if (!(sfs_tp_session_cred(sfs_tp_request_session(req))->flags & SFS_CRED_SERVER)) {
        sfs_tp_request_reply_error(req, -EPERM, "only server ranks may report mirror states");
        return;
    }
    report = malloc(sizeof(*report));
    if (!report) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    if (sfs_handler_decode(req, report, sizeof(*report), 0) != 0) {
        free(report);
        return;
    }
    for (uint32_t i = 0; i < report->count; i++) {
        const sfs_mirror_report_entry_t *e = &report->entries[i];
        int                              m, r;
        sfs_mgmt_mirror_t               *g = sfs_mgmt_mirror_of(mgmt, e->target, &m);

        if (!g || sfs_mgmt_mirror_of(mgmt, e->reporter, &r) != g || r == m) {
            sfs_tp_request_reply_error(req, -EINVAL,
                                       "mirror report: targets %" PRIu32 " and %" PRIu32
                                       " are not the two members of one mirror group",
                                       e->reporter, e->target);
            free(report);
            return;
        }
        if (e->reporter != g->primary &&
            !(e->state == SFS_MIRROR_STATE_BAD && g->state[r] == SFS_MIRROR_STATE_GOOD)) {
            /* a member that is not the primary (any more: a report from
             * before its buddy's promotion, sent once a cut healed) does not
             * know what its buddy holds; only a good one may call it bad (a
             * primary back on an empty disk) */
            if (g->state[m] != e->state) {
                sfs_info("mirror: target %" PRIu32 "'s report that its buddy %" PRIu32
                         " is %s is ignored: %" PRIu32 " is the group's primary",
                         e->reporter, e->target, sfs_mirror_state_name(e->state), g->primary);
            }
            continue;
        }
        if (g->state[m] != e->state) {
            sfs_warn("mirror: target %" PRIu32 " (buddy of %" PRIu32 "): %s -> %s", e->target,
                     e->reporter, sfs_mirror_state_name(g->state[m]),
                     sfs_mirror_state_name(e->state));
            changed = states = 1;
        }
        changed |= g->done[m] != e->done || g->total[m] != e->total;
        g->state[m] = e->state;
        g->done[m]  = e->done;
        g->total[m] = e->total;
        if (sfs_mgmt_mirror_bad_primary(mgmt, g, m)) {
            changed = states = 1; /* a promotion: saved too */
        }
    }
    if (changed) {
        mgmt->version++; /* the map shows the states */
    }
    if (states) {
        sfs_mgmt_mirror_save(mgmt);
    }
    free(report);
    sfs_tp_request_reply(req, 0, NULL, 0, NULL, 0, NULL, NULL);
}

int sfs_mgmt_mirror_bad_primary(sfs_mgmt_t *mgmt, sfs_mgmt_mirror_t *g, int bad)
{
    uint64_t now = sfs_time_ms();

    /* a primary that came back on a new disk (its buddy, which holds the
     * data, says it is bad) serves nothing: the good buddy takes over */
    if (g->state[bad] != SFS_MIRROR_STATE_BAD || g->primary != g->member[bad] ||
        g->state[!bad] != SFS_MIRROR_STATE_GOOD ||
        sfs_mgmt_mirror_node_state(mgmt, g->member[!bad], now) != SFS_STATE_ONLINE) {
        return 0;
    }
    sfs_warn("mirror: primary %u is bad (it lost its disk): target %u is its group's primary now",
             g->member[bad], g->member[!bad]);
    g->primary = g->member[!bad];
    return 1;
}
