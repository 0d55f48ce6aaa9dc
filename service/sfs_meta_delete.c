/*
 * Background deletion of removed files' chunk files: removing a file only
 * records its entry as pending; from the timer, on the progress thread,
 * the pending entries are sent in CHUNK_UNLINK batches to the targets of
 * their patterns, a mirrored file's to both members of each of its groups,
 * and those every target confirmed are forgotten in a metadata
 * transaction. Failed targets are retried later. A file removed while a
 * writer holds it waits until the writer's close (or its registration's
 * lease ends), 30 s at most: its writes would make the chunk files again
 * after their deletion (docs/metadata.md, "Removed while open").
 *
 * Both members of a group, not its primary for it to pass on: after a
 * failover the pattern names a member that is not the primary any more,
 * and a member that is away (or lost) still gets its removal once it is
 * back, from here, whichever member serves meanwhile (no orphan chunk
 * file on either copy).
 */
#define SFS_LOG_FAC "meta"
#include "sfs_service.h"

#include "sfs_meta_internal.h"

#include "sfs_alloc.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* Background chunk deletion (progress thread, from the timer)              */

/* Whether the last map this rank has shows the target online. A target
 * that is not (or not in the map) is left for a later round without a
 * connect: connecting to a rank that is stopped or cut off waits the whole
 * connect timeout on this (the progress) thread, which also answers every
 * management and metadata request. */
static int sfs_meta_delete_target_online(sfs_meta_t *meta, uint32_t target_id)
{
    const sfs_map_t        *map = sfs_cluster_map(meta->service->cluster);
    const sfs_map_target_t *target;
    const sfs_map_node_t   *node;

    if (!map || !(target = sfs_map_find_target(map, target_id))) {
        return 0;
    }
    node = sfs_map_find_node(map, target->node_id);
    return target->state == SFS_STATE_ONLINE && node && node->state == SFS_STATE_ONLINE;
}

/* One CHUNK_UNLINK to one target; a failure to send is retried in a later
 * round. */
static void sfs_meta_delete_send(sfs_meta_t *meta, sfs_meta_delete_rpc_t *slot)
{
    sfs_chunk_unlink_req_t *unlink;
    sfs_tp_rpc_params_t     params;
    sfs_tp_conn_t          *conn;
    sfs_wbuf_t              wb;

    slot->rpc = NULL;
    if (!sfs_meta_delete_target_online(meta, slot->target_id)) {
        slot->target_away = 1;
        return;
    }
    unlink = malloc(sizeof(*unlink));
    if (!unlink) {
        return;
    }
    unlink->target_id = slot->target_id;
    unlink->count     = slot->id_count;
    memcpy(unlink->entry_ids, slot->ids, slot->id_count * sizeof(*slot->ids));
    sfs_wbuf_init(&wb, slot->args, sizeof(slot->args));
    sfs_proto_chunk_unlink_req_pack(&wb, unlink);
    free(unlink);
    memset(&params, 0, sizeof(params));
    params.opcode      = SFS_OP_CHUNK_UNLINK;
    params.args        = slot->args;
    params.args_length = wb.length;
    if (wb.error || sfs_cluster_target_conn(meta->service->cluster, slot->target_id, &conn) != 0 ||
        sfs_tp_rpc_start(conn, &params, &slot->rpc) != 0) {
        slot->rpc = NULL;
    }
}

/* Puts entry ID in a CHUNK_UNLINK batch of TARGET_ID (a new batch once the
 * target's last is full); -ENOSPC when all SLOTS batches are taken. */
static int sfs_meta_delete_add(sfs_meta_t *meta, uint32_t slots, uint32_t target_id, uint64_t id)
{
    sfs_meta_delete_rpc_t *slot = NULL;

    for (uint32_t r = 0; r < meta->delete_rpc_count; r++) {
        if (meta->delete_rpcs[r].target_id == target_id &&
            meta->delete_rpcs[r].id_count < SFS_META_DELETE_BATCH) {
            slot = &meta->delete_rpcs[r];
        }
    }
    if (!slot) {
        if (meta->delete_rpc_count == slots) {
            return -ENOSPC;
        }
        slot            = &meta->delete_rpcs[meta->delete_rpc_count++];
        slot->target_id = target_id;
    }
    slot->ids[slot->id_count++] = id;
    return 0;
}

static void sfs_meta_delete_start(sfs_meta_t *meta)
{
    sfs_meta_txn_t *txn;
    uint64_t        ids[SFS_META_DELETE_BATCH];
    sfs_pattern_t  *patterns;
    uint32_t        count = 0, slots;

    patterns = calloc(SFS_META_DELETE_BATCH, sizeof(*patterns));
    if (!patterns) {
        return;
    }
    if (sfs_meta_txn_begin(meta->store, 0, &txn) == 0) {
        sfs_ns_pending_deletes(txn, 0, SFS_META_DELETE_BATCH, sfs_wall_ns() / 1000000000u, ids,
                               patterns, &count);
        sfs_meta_txn_abort(txn);
    }
    if (count == 0) {
        free(patterns);
        return;
    }
    meta->deletes     = calloc(count, sizeof(*meta->deletes));
    slots             = count * SFS_STRIPE_COUNT_MAX > 4096 ? 4096 : count * SFS_STRIPE_COUNT_MAX;
    meta->delete_rpcs = calloc(slots, sizeof(*meta->delete_rpcs));
    if (!meta->deletes || !meta->delete_rpcs) {
        free(meta->deletes);
        free(meta->delete_rpcs);
        meta->deletes     = NULL;
        meta->delete_rpcs = NULL;
        free(patterns);
        return;
    }
    meta->delete_count     = count;
    meta->delete_rpc_count = 0;
    for (uint32_t i = 0; i < count; i++) {
        meta->deletes[i].entry_id = ids[i];
        meta->deletes[i].pattern  = patterns[i];
        for (uint32_t t = 0; t < patterns[i].stripe_count; t++) {
            uint32_t                         target_id = patterns[i].targets[t];
            const sfs_config_mirror_group_t *group     = NULL;
            int                              rc;

            if (patterns[i].type == SFS_PATTERN_MIRROR) {
                group = sfs_config_mirror_group_of(meta->service->config, target_id);
            }
            rc = sfs_meta_delete_add(meta, slots, target_id, ids[i]);
            if (rc == 0 && group) {
                rc = sfs_meta_delete_add(
                    meta, slots, group->primary == target_id ? group->secondary : group->primary,
                    ids[i]);
            }
            if (rc) {
                meta->deletes[i].failed = 1; /* no slot left: the next round */
            }
        }
    }
    free(patterns);
    for (uint32_t r = 0; r < meta->delete_rpc_count; r++) {
        sfs_meta_delete_send(meta, &meta->delete_rpcs[r]);
    }
}

static void sfs_meta_delete_finish(sfs_meta_t *meta)
{
    sfs_meta_op_t *op;
    uint32_t       done = 0, failed_rpcs = 0, away_rpcs = 0;

    for (uint32_t r = 0; r < meta->delete_rpc_count; r++) {
        sfs_meta_delete_rpc_t *slot = &meta->delete_rpcs[r];
        int                    ok   = slot->rpc && sfs_tp_rpc_status(slot->rpc) == 0;

        if (!ok) {
            if (slot->target_away) {
                away_rpcs++;
                sfs_debug("chunk deletion: storage target %u is not online; its %u removal%s wait",
                          slot->target_id, slot->id_count, slot->id_count == 1 ? "" : "s");
            } else {
                failed_rpcs++;
            }
            for (uint32_t i = 0; i < slot->id_count; i++) {
                for (uint32_t d = 0; d < meta->delete_count; d++) {
                    if (meta->deletes[d].entry_id == slot->ids[i]) {
                        meta->deletes[d].failed = 1;
                    }
                }
            }
        }
        sfs_tp_rpc_release(slot->rpc);
    }
    if (failed_rpcs) {
        sfs_warn("chunk deletion: %u target request%s failed; retrying later", failed_rpcs,
                 failed_rpcs == 1 ? "" : "s");
    }
    /* once per target that goes away, not every round while it stays away */
    if (away_rpcs && !meta->delete_away_said) {
        sfs_info("chunk deletion: %u target request%s wait for targets that are not online "
                 "(not sent; retried every %u s)",
                 away_rpcs, away_rpcs == 1 ? "" : "s", SFS_META_DELETE_RETRY_MS / 1000);
    }
    meta->delete_away_said = away_rpcs != 0;
    if (SFS_ALLOC_PTR(op) && (op->ids = calloc(meta->delete_count, sizeof(uint64_t))) != NULL) {
        for (uint32_t d = 0; d < meta->delete_count; d++) {
            if (!meta->deletes[d].failed) {
                op->ids[done++] = meta->deletes[d].entry_id;
            }
        }
        op->id_count = done;
        op->opcode   = SFS_META_OP_DELETES_DONE;
        if (done) {
            sfs_debug("chunk files of %u removed file%s deleted", done, done == 1 ? "" : "s");
            sfs_meta_enqueue(meta, op);
        } else {
            sfs_meta_free_op(op);
        }
    } else {
        free(op);
    }
    free(meta->deletes);
    free(meta->delete_rpcs);
    meta->deletes          = NULL;
    meta->delete_rpcs      = NULL;
    meta->delete_count     = 0;
    meta->delete_rpc_count = 0;
    meta->next_delete_ms =
        sfs_time_ms() + (failed_rpcs || away_rpcs ? SFS_META_DELETE_RETRY_MS : 200);
}

void sfs_meta_delete_tick(sfs_meta_t *meta, uint64_t now)
{
    if (meta->deletes) {
        for (uint32_t r = 0; r < meta->delete_rpc_count; r++) {
            if (meta->delete_rpcs[r].rpc && !sfs_tp_rpc_is_done(meta->delete_rpcs[r].rpc)) {
                return;
            }
        }
        sfs_meta_delete_finish(meta);
        return;
    }
    /* None started once the service stops: the storage ranks stop answering
     * new connections, and each connect would wait its whole timeout in this
     * thread, holding up the shutdown past the others' MPI_Finalize bound
     * (test_service_namespace: rm -r, then shutdown). The removals stay
     * pending in the store and are done after the next start. */
    if (meta->service->stopping_others || sfs_service_stopping(meta->service)) {
        return;
    }
    if (now >= meta->next_delete_ms && meta->service->registered) {
        meta->next_delete_ms = now + 1000;
        sfs_meta_delete_start(meta);
    }
}

void sfs_meta_delete_cleanup(sfs_meta_t *meta)
{
    if (meta->deletes) {
        for (uint32_t r = 0; r < meta->delete_rpc_count; r++) {
            sfs_tp_rpc_release(meta->delete_rpcs[r].rpc);
        }
        free(meta->deletes);
        free(meta->delete_rpcs);
        meta->deletes = NULL;
    }
}
