/*
 * The client's side of the metadata server's failover (docs/metadata-mirror.md,
 * "Failover"): a metadata call that gets no answer, or that the server refuses
 * because management replaced it (ESTALE from a deposed server), is sent
 * again once the map names another metadata server, which it does when
 * management has promoted the metadata mirror. Only where the map has a
 * metadata mirror (or a promotion already happened) is there anything to
 * wait for; elsewhere the error comes at once, as before. A server that
 * refuses with EAGAIN has no lease from management (sfs_meta_fence.h): it
 * is asked again every 250 ms, or its successor once the map names one.
 * A call that got no answer while a fresh map still names the same server
 * as online (management hears it: what was lost was the way between this
 * client and it, a cut of the client's own link, or a reply) is sent again
 * to that server, where that is safe: a read, or a change its kept replies
 * answer (a tagged one).
 *
 * A tagged change whose first try was committed (its reply lost) is
 * answered from the reply the server kept (sfs_meta_replies.c), on the
 * promoted mirror as on the same server; an untagged one would run twice.
 */
#define SFS_LOG_FAC "client"
#include "sfs_client_internal.h"

#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_map.h"
#include "sfs_time.h"

#include <errno.h>
#include <stdio.h>

/* Whether the map promises a failover: a rank keeps the metadata mirror,
 * and management is not the metadata server's rank (lost with it, it
 * promotes nothing: the one-host service). */
static int sfs_client_meta_has_mirror(const sfs_map_t *map)
{
    if (!map || map->mgmt_node == map->meta_node) {
        return 0;
    }
    for (uint32_t i = 0; i < map->node_count; i++) {
        if (map->nodes[i].roles & SFS_ROLE_META_MIRROR) {
            return 1;
        }
    }
    return 0;
}

/* A map refresh that waits at most `timeout_ms` on the management
 * connection the client has (management may be away: a refusal must not
 * wait the whole RPC timeout more); without one, the ordinary refresh. */
static void sfs_client_meta_map_quick(sfs_client_t *client, uint32_t timeout_ms)
{
    int rc = sfs_cluster_refresh_map_start(client->cluster, timeout_ms);

    if (rc == 0 || rc == -EALREADY) {
        /* (the request out has a deadline: poll ends) */
        while (sfs_cluster_refresh_map_poll(client->cluster) == 0) {
            sfs_tp_worker_progress(client->worker, 50);
        }
    } else {
        (void)sfs_cluster_refresh_map(client->cluster);
    }
    sfs_error_clear();
}

/* Whether the failure asks for a pause and the same call again, to
 * whichever server the map then names: a server without its lease
 * (fencing), or one the map does not list (yet): a management that
 * restarted hands out maps while the ranks register again. */
static int sfs_client_meta_pause_only(sfs_client_t *client, uint32_t called, int rc,
                                      const sfs_tp_rpc_t *rpc)
{
    const sfs_map_t      *map = sfs_cluster_map(client->cluster);
    const sfs_map_node_t *node;

    if (rc == -EAGAIN && sfs_tp_rpc_refused(rpc)) {
        return 1;
    }
    if (rc != -EHOSTDOWN || rpc || !map || map->meta_node != called) {
        return 0;
    }
    node = sfs_map_find_node(map, called);
    return !node || !node->address_length;
}

int sfs_client_meta_failover_wanted(sfs_client_t *client, uint32_t called, int rc,
                                    const sfs_tp_rpc_t *rpc)
{
    const sfs_map_t *map = sfs_cluster_map(client->cluster);

    if (sfs_client_meta_pause_only(client, called, rc, rpc)) {
        return 1; /* it, or its successor, answers soon */
    }
    if (rc == -ECANCELED || !(sfs_client_no_answer(rc) || rc == -ESTALE)) {
        return 0;
    }
    if (map && map->meta_node != called) {
        return 1; /* another server already */
    }
    if (rc == -ESTALE || (rc == -ETIMEDOUT && sfs_tp_rpc_refused(rpc))) {
        /* ESTALE: a deposed server, or the request's own (a stale entry);
         * the server's own ETIMEDOUT: its fence, which a server cut off
         * from management gives once its mirror was promoted. Only a map
         * that names another server retries them */
        sfs_client_meta_map_quick(client, 2000);
        map = sfs_cluster_map(client->cluster);
        return map && map->meta_node != called;
    }
    if (sfs_tp_rpc_refused(rpc)) {
        return 0; /* the server answered: it is there */
    }
    if (sfs_client_meta_has_mirror(map)) {
        return 1;
    }
    /* a map handed out by a management that restarted lacks the ranks
     * that had not registered again yet, the mirror's among them */
    sfs_client_meta_map_quick(client, 2000);
    return sfs_client_meta_has_mirror(sfs_cluster_map(client->cluster));
}

/* Whether a SIZE call may run twice: a writing open's registration
 * (BEGIN) run twice counts the writer twice until its lease ends, as a
 * writer that crashed does: stats ask the targets until then (exact), the
 * close's size is not kept, and a quota's step may be charged ahead once
 * more until the size is known again; a RENEW only renews, a STORE is
 * kept once (write_gen). An END run twice would end another open's
 * registration: it is posted, never waited on, and never sent again. */
static int sfs_client_meta_size_resend_safe(const sfs_tp_rpc_params_t *params)
{
    sfs_size_req_t req;
    sfs_rbuf_t     rb;

    sfs_rbuf_init(&rb, params->args, params->args_length);
    sfs_proto_size_req_unpack(&rb, &req);
    return !rb.error && req.op != SFS_SIZE_OP_END;
}

/* Whether a COUNTER call carries a tag (the server answers its resend from
 * the answer it kept). */
static int sfs_client_meta_counter_tagged(const sfs_tp_rpc_params_t *params)
{
    sfs_counter_req_t req;
    sfs_rbuf_t        rb;

    sfs_rbuf_init(&rb, params->args, params->args_length);
    sfs_proto_counter_req_unpack(&rb, &req);
    return !rb.error && req.op_tag != 0;
}

/* Whether the same call may go to the same server twice: a read, or a
 * change that carries an op_tag (the server answers a resend from the
 * reply it kept), or one whose second run costs nothing a job can see
 * (SIZE but END; QUOTA_GROW grants from the end asked for, at worst a step
 * more charged ahead; QUOTA_SET sets limits, not steps: a second run sets
 * the same, unless another set came in between), or a tagged COUNTER, or
 * a LOCK or UNLOCK to a server whose locks belong to the client process
 * (the same lock id asked again is answered as the first).
 * Untagged counters, older servers' locks, POOL_SET (a second create or remove is
 * refused), the migration's calls and META_CHECK (it repairs with
 * --repair) are none of these. */
static int sfs_client_meta_resend_safe(const sfs_client_t        *client,
                                       const sfs_tp_rpc_params_t *params)
{
    switch (params->opcode) {
    case SFS_OP_SIZE:
        return sfs_client_meta_size_resend_safe(params);
    case SFS_OP_COUNTER:
        return sfs_client_meta_counter_tagged(params);
    case SFS_OP_LOCK:
    case SFS_OP_UNLOCK:
        return __atomic_load_n(&client->lock_owners, __ATOMIC_RELAXED);
    case SFS_OP_QUOTA_GROW:
    case SFS_OP_QUOTA_SET:
    case SFS_OP_LOOKUP:
    case SFS_OP_READDIR:
    case SFS_OP_STAT:
    case SFS_OP_META_STATFS:
    case SFS_OP_POOL_GET:
    case SFS_OP_POOL_SHOW:
    case SFS_OP_QUOTA_GET:
    case SFS_OP_META_LIST:
    case SFS_OP_META_PENDING:
    case SFS_OP_META_STATS:
        return 1;
    default:
        return client->reply_cache && sfs_proto_meta_tagged(params->opcode);
    }
}

/* Whether `map` names `called` the metadata server, online. */
static int sfs_client_meta_still_online(const sfs_map_t *map, uint32_t called)
{
    const sfs_map_node_t *node = map ? sfs_map_find_node(map, called) : NULL;

    return map && map->meta_node == called && node && node->state == SFS_STATE_ONLINE;
}

int sfs_client_meta_failover_wait(sfs_client_t *client, uint32_t called, int how,
                                  uint64_t *deadline_ms)
{
    const sfs_map_t *map = sfs_cluster_map(client->cluster);
    uint64_t         now = sfs_time_ms();
    int              refreshed;

    if (*deadline_ms == 0) {
        /* the offline timeout (<= 20 s by default), then the promotion:
         * two RPC timeouts leave room for both */
        *deadline_ms = now + 2ull * (map && map->rpc_timeout_ms ? map->rpc_timeout_ms : 30000);
    }
    for (;;) {
        map = sfs_cluster_map(client->cluster);
        if (map && map->meta_node != called) {
            sfs_error_clear();
            return 0;
        }
        if (sfs_time_ms() >= *deadline_ms) {
            return -ETIMEDOUT;
        }
        for (uint64_t until = sfs_time_ms() + 250; sfs_time_ms() < until;) {
            sfs_tp_worker_progress(client->worker, 50);
        }
        /* the last map serves if the refresh fails */
        refreshed = sfs_cluster_refresh_map(client->cluster) == 0;
        if (how & SFS_META_WAIT_FENCED) {
            sfs_error_clear();
            return 0; /* to whichever server the map names, the same one included */
        }
        if ((how & SFS_META_WAIT_SAME_OK) && refreshed &&
            sfs_client_meta_still_online(sfs_cluster_map(client->cluster), called)) {
            /* a dead server is probably-offline 1.25 heartbeats after its
             * last one, long before a call to it times out */
            sfs_error_clear();
            return 0;
        }
    }
}

/* How a failed call waits (SFS_META_WAIT_*): a refusal for the lease pauses
 * and goes to whichever server the map names; a call that got no answer
 * and may be sent twice also goes back to the same server once a fresh map
 * names it online. */
static int sfs_client_meta_wait_how(sfs_client_t *client, const sfs_tp_rpc_params_t *params,
                                    uint32_t called, int rc, const sfs_tp_rpc_t *rpc)
{
    int how = 0;

    if (sfs_client_meta_pause_only(client, called, rc, rpc)) {
        how |= SFS_META_WAIT_FENCED;
    }
    if (sfs_client_no_answer(rc) && !sfs_tp_rpc_refused(rpc) &&
        sfs_client_meta_resend_safe(client, params)) {
        how |= SFS_META_WAIT_SAME_OK;
    }
    return how;
}

int sfs_client_meta_failover(sfs_client_t *client, const sfs_tp_rpc_params_t *params,
                             uint32_t called, uint64_t start, int rc, sfs_tp_rpc_t **rpc_p)
{
    const sfs_map_t *map;
    uint64_t         deadline = 0;
    char             first[SFS_ERROR_DETAIL_MAX];
    int              retried = 0, fenced_said = 0;

    /* (the checks below may refresh the map, which sets the detail) */
    snprintf(first, sizeof(first), "%s", sfs_error_detail());
    if (!sfs_client_meta_failover_wanted(client, called, rc, *rpc_p)) {
        sfs_error_set(rc, "%s", first);
        return rc;
    }
    while (rc && sfs_client_meta_failover_wait(
                     client, called, sfs_client_meta_wait_how(client, params, called, rc, *rpc_p),
                     &deadline) == 0) {
        retried = 1;
        map     = sfs_cluster_map(client->cluster);
        if (map->meta_node != called) {
            sfs_warn("%s: the metadata server, rank %u, is lost or replaced (%s); rank %u took "
                     "over: sent again there, %.1f s after the first try",
                     sfs_op_name(params->opcode), called, first, map->meta_node,
                     (double)(sfs_time_ms() - start) / 1000.0);
        } else if (!fenced_said) {
            /* (said once: it is asked again every 250 ms) */
            fenced_said = 1;
            sfs_warn(
                "%s: the metadata server, rank %u, cannot answer for now (%s): sent again until "
                "it or a successor answers",
                sfs_op_name(params->opcode), called,
                *rpc_p && sfs_tp_rpc_error_detail(*rpc_p)[0] ? sfs_tp_rpc_error_detail(*rpc_p)
                                                             : first);
        }
        called = map->meta_node;
        sfs_tp_rpc_release(*rpc_p);
        *rpc_p = NULL;
        rc     = sfs_cluster_call_meta(client->cluster, params, rpc_p);
        if (!rc || !sfs_client_meta_failover_wanted(client, called, rc, *rpc_p)) {
            break;
        }
    }
    if (rc && !retried) {
        sfs_error_set(rc, "%s (no other metadata server named within %.1f s)", first,
                      (double)(sfs_time_ms() - start) / 1000.0);
    }
    return rc;
}
