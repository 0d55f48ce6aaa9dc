/*
 * Failover of the metadata server (docs/metadata-mirror.md, "Failover"):
 * when the metadata server's rank is offline (silent for the offline
 * timeout) and management's record says its mirror was good, management
 * promotes the mirror (META_PROMOTE) and, once the mirror answers that it
 * serves, writes the promotion to its file meta-primary and names the
 * mirror's rank as the metadata server in the map. Clients that lost the
 * old server find the new one there (sfs_cluster_meta_failover_wait).
 *
 * Fencing makes "good" trustworthy: a metadata server answers no batch it
 * committed without the mirror before management recorded needs-resync
 * (sfs_meta_mirror_report_fence). After the promotion management refuses
 * the old server's reports (-ESTALE), so a cut-off old server that comes
 * back acknowledges nothing more.
 *
 * The old server's rank takes the mirror role in the map, so that when it
 * rejoins (--rejoin) it keeps the copy (in its own meta.dir, after a full
 * copy), and a second failover can promote it back.
 *
 * A service started with meta-primary present is refused unless the rank
 * it names is the config's metadata server: else the metadata store in
 * meta.dir is older than the promoted copy (sfs_mgmt_meta_primary_load).
 */
#define SFS_LOG_FAC "mgmt"
#include "sfs_mgmt_internal.h"

#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SFS_MGMT_META_PRIMARY_FILE "meta-primary"

int sfs_mgmt_meta_primary_load(sfs_mgmt_t *mgmt)
{
    const sfs_config_t *config = mgmt->service->config;
    char                path[PATH_MAX], *text;
    uint32_t            rank;
    uint64_t            seq;
    int                 rc;

    mgmt->meta_node = mgmt->service->plan->meta_rank;
    if (!config->meta_mirror_host[0]) {
        return 0;
    }
    rc = sfs_mgmt_state_path(config, SFS_MGMT_META_PRIMARY_FILE, path, sizeof(path));
    if (rc <= 0) {
        return rc;
    }
    rc = sfs_mgmt_state_read(path, &text);
    if (rc == 1) {
        return 0; /* no promotion */
    }
    if (rc) {
        return rc;
    }
    rc = sfs_mgmt_meta_primary_parse(text, path, &rank, &seq);
    free(text);
    if (rc) {
        return rc;
    }
    if (mgmt->service->plan->mgmt_rejoining && !(mgmt->service->roles & SFS_ROLE_META)) {
        /* management alone comes back: the promoted server runs on */
        sfs_info("%s: rank %" PRIu32 " was promoted to metadata server at batch %" PRIu64
                 "; management, rejoining, takes it as the metadata server",
                 path, rank, seq);
        mgmt->meta_node = rank;
        return 0;
    }
    if (rank == mgmt->meta_node) {
        /* promoted back: the config's metadata rank served last, from
         * meta.dir (its copy was made the store) */
        sfs_info("%s: rank %" PRIu32 ", the config's metadata server, was the last promoted (at "
                 "batch %" PRIu64 "): its meta.dir is the store",
                 path, rank, seq);
        return 0;
    }
    /* the config's metadata host would open meta.dir, which lacks every
     * change made after the promotion: refused before anything opens it */
    return sfs_error_set(-EEXIST,
                         "%s: the metadata mirror (rank %" PRIu32 ", %s:%s) was promoted to "
                         "metadata server at batch %" PRIu64 " while the metadata server was "
                         "away, so the store in meta.dir (%s:%s) is older than the copy. Before "
                         "starting again, make the copy the store: copy %s on %s over %s on %s "
                         "(or swap meta.host and meta.mirror, and meta.dir and meta.mirror_dir, "
                         "in the config), then remove %s",
                         path, rank, config->meta_mirror_host, config->meta_mirror_dir, seq,
                         config->meta_host, config->meta_dir, config->meta_mirror_dir,
                         config->meta_mirror_host, config->meta_dir, config->meta_host, path);
}

/* The mirror answered META_PROMOTE (progress thread). */
static void sfs_mgmt_meta_promoted(sfs_tp_rpc_t *rpc, void *arg)
{
    sfs_mgmt_t             *mgmt   = arg;
    int                     status = sfs_tp_rpc_status(rpc);
    sfs_mgmt_node_t        *to     = sfs_mgmt_find_node(mgmt, mgmt->promote_to);
    sfs_mgmt_node_t        *old    = sfs_mgmt_find_node(mgmt, mgmt->meta_node);
    char                    path[PATH_MAX], buf[128];
    int                     len, rc;
    sfs_meta_mirror_reply_t reply = {0};
    const void             *args;
    size_t                  length = 0;
    sfs_rbuf_t              rb;

    if (status == 0) {
        args = sfs_tp_rpc_reply_args(rpc, &length);
        sfs_rbuf_init(&rb, args, length);
        sfs_proto_meta_mirror_reply_unpack(&rb, &reply);
        if (rb.error) {
            reply.seq = mgmt->meta_mirror_seq; /* (an old mirror: what management knew) */
        }
    }
    if (status != 0 || !to) {
        sfs_error("metadata failover: rank %u did not take over as the metadata server (tried "
                  "again at the next check): %s",
                  mgmt->promote_to,
                  sfs_tp_rpc_error_detail(rpc)[0] ? sfs_tp_rpc_error_detail(rpc)
                                                  : sfs_strerror(status));
        return;
    }
    /* on disk before the map changes: a management that restarts must not
     * hand out the old store again */
    rc = sfs_mgmt_state_path(mgmt->service->config, SFS_MGMT_META_PRIMARY_FILE, path, sizeof(path));
    if (rc > 0) {
        len = sfs_mgmt_meta_primary_format(to->node_id, reply.seq, buf, sizeof(buf));
        rc  = len < 0 ? len : sfs_mgmt_state_write(path, buf, (size_t)len);
    } else if (rc == 0) {
        rc = -ENOENT; /* a config from memory (unit tests): no file */
    }
    if (rc) {
        if (rc != -ENOENT) {
            sfs_error("metadata failover: the promotion is not saved (a restart would not know "
                      "it): %s",
                      sfs_error_detail());
        }
        snprintf(path, sizeof(path), "no file");
    }
    sfs_warn("metadata failover: rank %u on %s is the metadata server now, at batch %" PRIu64
             " (rank %u on %s offline; recorded in %s); that rank is its mirror once it "
             "rejoins, after a full copy",
             to->node_id, to->host, reply.seq, mgmt->meta_node, old ? old->host : "?", path);
    /* the roles swap: a rank that rejoins (--rejoin) takes its role from
     * the map, so the old server comes back as the mirror */
    if (old) {
        old->roles = (old->roles & ~SFS_ROLE_META) | SFS_ROLE_META_MIRROR;
    }
    to->roles           = (to->roles & ~SFS_ROLE_META_MIRROR) | SFS_ROLE_META;
    mgmt->meta_node     = to->node_id;
    mgmt->meta_promoted = 1;
    /* the old server lacks what comes now: no promotion back before its
     * full copy has made it good */
    sfs_mgmt_meta_mirror_set(mgmt, SFS_MIRROR_STATE_NEEDS_RESYNC, reply.seq);
    mgmt->version++;
}

/* Say once why no promotion happens, until the reason changes. */
static void sfs_mgmt_meta_not_promoted(sfs_mgmt_t *mgmt, int reason, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void sfs_mgmt_meta_not_promoted(sfs_mgmt_t *mgmt, int reason, const char *fmt, ...)
{
    char    why[512];
    va_list ap;

    if (mgmt->promote_said == reason) {
        return;
    }
    mgmt->promote_said = reason;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    sfs_error("metadata failover: the metadata server (rank %u) is offline and its mirror is not "
              "promoted: %s; metadata calls fail until the rank rejoins (--rejoin %u)",
              mgmt->meta_node, why, mgmt->meta_node);
}

void sfs_mgmt_meta_failover_tick(sfs_mgmt_t *mgmt, uint64_t now)
{
    sfs_service_t         *service = mgmt->service;
    sfs_mgmt_node_t       *old, *mirror = NULL;
    sfs_meta_promote_req_t req;
    sfs_tp_rpc_params_t    params;
    sfs_wbuf_t             wb;
    char                   name[SFS_HOST_MAX + 32];

    if (!service->config->meta_mirror_host[0]) {
        return;
    }
    if (mgmt->promote_rpc) {
        if (!sfs_tp_rpc_is_done(mgmt->promote_rpc)) {
            return;
        }
        sfs_tp_rpc_release(mgmt->promote_rpc); /* (its outcome: the callback) */
        mgmt->promote_rpc = NULL;
        sfs_tp_conn_destroy(mgmt->promote_conn); /* the next one may go elsewhere */
        mgmt->promote_conn = NULL;
    }
    old = sfs_mgmt_find_node(mgmt, mgmt->meta_node);
    if (!old || old->state != SFS_STATE_OFFLINE || old->node_id == service->rank) {
        mgmt->promote_said = 0;
        return;
    }
    if (now < mgmt->next_promote_ms) {
        return;
    }
    mgmt->next_promote_ms = now + service->config->heartbeat_interval_ms;
    for (uint32_t i = 0; i < mgmt->node_count; i++) {
        if (mgmt->nodes[i].roles & SFS_ROLE_META_MIRROR) {
            mirror = &mgmt->nodes[i];
        }
    }
    if (!mirror) {
        sfs_mgmt_meta_not_promoted(mgmt, 1, "no rank keeps the metadata mirror");
        return;
    }
    if (mgmt->meta_mirror_state != SFS_MIRROR_STATE_GOOD) {
        sfs_mgmt_meta_not_promoted(mgmt, 2,
                                   "it is %s since batch %" PRIu64 " (it may lack changes that "
                                   "were acknowledged)",
                                   sfs_mirror_state_name(mgmt->meta_mirror_state),
                                   mgmt->meta_mirror_seq);
        return;
    }
    if (mirror->state != SFS_STATE_ONLINE) {
        sfs_mgmt_meta_not_promoted(mgmt, 3, "its rank %u on %s is %s too", mirror->node_id,
                                   mirror->host, sfs_state_name(mirror->state));
        return;
    }
    if (!mgmt->promote_conn) {
        snprintf(name, sizeof(name), "rank %u on %s", mirror->node_id, mirror->host);
        if (sfs_tp_conn_create(service->worker, mirror->address, mirror->address_length, name,
                               service->config->connect_timeout_ms, &mgmt->promote_conn) != 0) {
            mgmt->promote_conn = NULL;
            sfs_mgmt_meta_not_promoted(mgmt, 4, "cannot reach its mirror: %s", sfs_error_detail());
            return;
        }
    }
    sfs_warn("metadata failover: the metadata server, rank %u on %s, is offline (silent %.1f s); "
             "its mirror, rank %u on %s, good since batch %" PRIu64 ", is promoted",
             old->node_id, old->host, (double)(now - old->last_contact_ms) / 1000.0,
             mirror->node_id, mirror->host, mgmt->meta_mirror_seq);
    req.old_node = old->node_id;
    req.seq      = mgmt->meta_mirror_seq;
    sfs_wbuf_init(&wb, mgmt->promote_args, sizeof(mgmt->promote_args));
    sfs_proto_meta_promote_req_pack(&wb, &req);
    memset(&params, 0, sizeof(params));
    params.opcode      = SFS_OP_META_PROMOTE;
    params.args        = mgmt->promote_args;
    params.args_length = wb.length;
    params.cb          = sfs_mgmt_meta_promoted;
    params.cb_arg      = mgmt;
    mgmt->promote_to   = mirror->node_id;
    if (wb.error || sfs_tp_rpc_start(mgmt->promote_conn, &params, &mgmt->promote_rpc) != 0) {
        mgmt->promote_rpc = NULL;
        sfs_tp_conn_destroy(mgmt->promote_conn); /* remade at the next try */
        mgmt->promote_conn = NULL;
    }
}

void sfs_mgmt_meta_failover_destroy(sfs_mgmt_t *mgmt)
{
    sfs_tp_rpc_release(mgmt->promote_rpc);
    mgmt->promote_rpc = NULL;
    sfs_tp_conn_destroy(mgmt->promote_conn);
    mgmt->promote_conn = NULL;
}
