/*
 * Buddy mirroring on the storage role (docs/mirroring.md): a request for a
 * mirrored file reaches the group's primary, which applies it to its own
 * target, then forwards it to the group's secondary, and answers the
 * client once both copies hold it.
 *
 * Order: requests that change overlapping bytes of one chunk file run one
 * after the other, in the order the primary received them, on both
 * copies: a request waits (mirror_wait) while an earlier one that overlaps
 * it is not done on both. Requests that do not overlap commute and run at
 * once. So both copies see the same sequence of overlapping writes and end
 * byte-identical. A TRUNCATE overlaps everything of its chunk file; FSYNC
 * changes no bytes others depend on and never waits. CHUNK_UNLINK is not
 * forwarded: the metadata server sends it to both members itself
 * (sfs_meta_delete.c), which also reaches a member that is away once it
 * is back, whichever member is primary then; a member serving alone logs
 * it for its buddy's resync all the same.
 *
 * Failover (docs/mirroring.md): when the buddy cannot be reached (the
 * forward fails as unreachable or passes its deadline), the primary serves
 * alone: the request is answered from its own copy, and the chunk file is
 * recorded in the target's change log (sfs_mirror_log.h) before the
 * answer, so that the buddy, now needs-resync, can be resynced with what
 * changed. Later requests skip the forward until a resync is done.
 *
 * Fencing (docs/mirroring.md): a primary acknowledges a mirrored change
 * only while its rank holds a lease from management, or while its buddy's
 * word holds (sfs_buddy_word.h: the buddy took the change as secondary),
 * checked at admission and again at the answer; without either it answers
 * ESTALE. A promoted member waits out the word it gave before it acts.
 *
 * Nothing here blocks the progress thread on the buddy: the forward is an
 * RPC whose reply comes back as an event (two primaries forwarding to each
 * other cannot deadlock); the disk work stays on the disk threads. A buddy
 * served by this same rank gets the request as a second disk run.
 */
#define SFS_LOG_FAC "storage"
#include "sfs_service.h"

#include "sfs_storage_internal.h"

#include "sfs_chunk_removed.h"

#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_mirror_log.h"
#include "sfs_mirror_resync.h"
#include "sfs_time.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A CHUNK_UNLINK is not forwarded: each member gets its own from the
 * metadata server. A member serving alone still records the removed ids
 * in its change log (durably, before the answer), so that its buddy's
 * resync or rebuild, which may copy from a list made before the removal,
 * ends with "absent here: remove there" and no orphan. 0, or the error
 * (answered). */
static int sfs_storage_mirror_unlink_alone(sfs_storage_t *storage, sfs_storage_op_t *op)
{
    sfs_mirror_log_t *log = sfs_storage_mirror_log(storage, op->unlink->target_id);
    int               rc  = 0;

    if (!log || !sfs_mirror_log_degraded(log)) {
        return 0;
    }
    sfs_error_clear();
    for (uint32_t i = 0; rc == 0 && i < op->unlink->count; i++) {
        rc = sfs_mirror_log_note(log, op->unlink->entry_ids[i]);
    }
    if (rc) {
        sfs_tp_request_reply_error(
            op->req, rc,
            "CHUNK_UNLINK on target %" PRIu32 ", which serves alone: its change log: %s",
            op->unlink->target_id, sfs_error_detail()[0] ? sfs_error_detail() : sfs_strerror(rc));
        return rc;
    }
    op->unlink_noted   = 1;
    op->unlink_log_gen = sfs_mirror_log_generation(log);
    return 0;
}

/* The removal is done on disk. Recorded at admission is not enough when a
 * resync pass began (or the log was cleared, or begun) between the two:
 * the pass forgot that record and may have copied the chunk file to the
 * buddy before it went here, after the metadata server's removal there,
 * leaving an orphan on the buddy. Recorded again, the next pass (or a new
 * one) sends the buddy "absent here: remove there". */
int sfs_storage_mirror_unlinked(sfs_storage_op_t *op)
{
    sfs_mirror_log_t    *log = sfs_storage_mirror_log(op->storage, op->unlink->target_id);
    sfs_mirror_resync_t *resync;
    int                  was, rc = 0;

    if (!log || (op->unlink_noted && sfs_mirror_log_generation(log) == op->unlink_log_gen)) {
        return 0;
    }
    was = sfs_mirror_log_degraded(log);
    if (!op->unlink_noted && !was) {
        return 0; /* in sync before and after: the buddy gets its own removal */
    }
    sfs_error_clear();
    for (uint32_t i = 0; rc == 0 && i < op->count; i++) {
        rc = sfs_mirror_log_note(log, op->unlink->entry_ids[i]);
    }
    if (rc) {
        snprintf(op->detail, sizeof(op->detail),
                 "CHUNK_UNLINK on target %" PRIu32 " (a mirror member): its change log: %s",
                 op->unlink->target_id,
                 sfs_error_detail()[0] ? sfs_error_detail() : sfs_strerror(rc));
        return rc;
    }
    if (!was) {
        sfs_warn("mirror: target %" PRIu32 " removed chunk files while its buddy %" PRIu32
                 " was resynced: recorded for one more resync pass",
                 op->unlink->target_id, sfs_mirror_log_buddy(log));
        if ((resync = sfs_storage_mirror_resync_of(op->storage, op->unlink->target_id))) {
            sfs_mirror_resync_wanted(resync);
        }
        sfs_storage_mirror_changed(op->storage);
    }
    return 0;
}

/* A request flagged mirrored: its target's mirror group and the group's
 * primary as this rank's map says; 0, or the request is answered and the
 * error returned: EINVAL (the target is in no group), ESTALE (no map yet:
 * just started or rejoined, so the config's primary may have been replaced
 * by a failover this rank has not heard of, and a client with an older map
 * could reach the wrong member; the client asks the map again and resends,
 * a pause of a heartbeat). */
static int sfs_storage_mirror_lookup(sfs_storage_t *storage, sfs_storage_op_t *op,
                                     const sfs_config_mirror_group_t **group_p, uint32_t *primary_p)
{
    const sfs_config_mirror_group_t *group;
    uint32_t                         target_id = op->chunk.target_id;

    group = sfs_config_mirror_group_of(storage->service->config, target_id);
    if (!group) {
        sfs_tp_request_reply_error(op->req, -EINVAL,
                                   "%s of a mirrored file on target %" PRIu32
                                   ", which is in no mirror group",
                                   sfs_op_name(op->opcode), target_id);
        return -EINVAL;
    }
    if (!storage->service->cluster || !sfs_cluster_map(storage->service->cluster)) {
        sfs_tp_request_reply_error(op->req, -ESTALE,
                                   "%s of a mirrored file on target %" PRIu32
                                   ": its rank has no map from management yet (it has just "
                                   "started), so which member of mirror group %" PRIu32
                                   " is primary is not known there",
                                   sfs_op_name(op->opcode), target_id, group->id);
        return -ESTALE;
    }
    *group_p   = group;
    *primary_p = sfs_storage_mirror_primary(storage, group);
    return 0;
}

/* The group member other than `target_id`. */
static uint32_t sfs_storage_mirror_buddy_of(const sfs_config_mirror_group_t *group,
                                            uint32_t                         target_id)
{
    return group->primary == target_id ? group->secondary : group->primary;
}

/* The checks of a primary's admission (fencing): no word it gave its buddy
 * as secondary may still hold, and management's lease holds, or the
 * buddy's word as `use` allows. 0, or the request is answered ESTALE with
 * the reason and the error returned. */
static int sfs_storage_mirror_admit_leased(sfs_storage_t *storage, sfs_storage_op_t *op,
                                           sfs_storage_word_use_t use)
{
    const char *what = sfs_op_name(op->opcode);
    int         rc = sfs_storage_mirror_word_wait(storage, op->chunk.target_id, op->buddy_id, what);

    if (rc == 0) {
        rc = sfs_storage_mirror_fenced(storage, op->chunk.target_id, op->buddy_id, what, use);
    }
    if (rc) {
        sfs_debug("refused: %s", sfs_error_detail());
        sfs_tp_request_reply_error(op->req, rc, "%s", sfs_error_detail());
    }
    return rc;
}

/* A mirrored file's READ, CHUNK_OPEN or CHUNK_STAT: served by the group's primary as
 * this rank's map says, refused (ESTALE: the client asks its map again)
 * by the other member, whose copy may be behind (needs-resync, resyncing)
 * and by a rank with no map yet. Fenced as a change is: a primary cut off
 * from management (lease expired) may have been replaced by its buddy,
 * whose copy has writes this one never saw; checked here and again at the
 * answer (sfs_storage_mirror_answer), so that a read served is one whose
 * disk work ended while the lease held (docs/mirroring.md, "Fencing").
 * mirror.stale_reads: true turns that off (reads go on while management
 * is away, BeeGFS's way). */
static int sfs_storage_mirror_read_admit(sfs_storage_t *storage, sfs_storage_op_t *op)
{
    const sfs_config_mirror_group_t *group;
    uint32_t                         primary;
    int                              rc = sfs_storage_mirror_lookup(storage, op, &group, &primary);

    if (rc) {
        return rc;
    }
    if (primary != op->chunk.target_id) {
        sfs_storage_mirror_map_soon(storage);
        sfs_tp_request_reply_error(op->req, -ESTALE,
                                   "%s of a mirrored file on target %" PRIu32
                                   ", which is not the primary of mirror group %" PRIu32
                                   " now (target %" PRIu32 " is): its copy may be behind",
                                   sfs_op_name(op->opcode), op->chunk.target_id, group->id,
                                   primary);
        return -ESTALE;
    }
    if (storage->service->config->mirror_stale_reads) {
        return 0; /* unfenced by choice */
    }
    /* a handed-over descriptor is read for a while after the answer: only
     * management's lease covers that (docs/mirroring.md) */
    op->buddy_id = sfs_storage_mirror_buddy_of(group, op->chunk.target_id);
    rc           = sfs_storage_mirror_admit_leased(
                  storage, op, op->opcode == SFS_OP_CHUNK_OPEN ? SFS_WORD_NONE : SFS_WORD_HOLDS);
    op->mirror_read = rc == 0;
    return rc;
}

/* A copy from the buddy (SFS_CHUNK_BUDDY: a forward or a resync): taken
 * only while this rank's map names the buddy, not this target, the
 * group's primary. A member that was cut off while its buddy was promoted
 * may still think itself the primary (its map is stale until management
 * answers it again) and resync its older chunk files over the promoted
 * one's: a TRUNCATE to its length and its bytes, losing writes the
 * promoted member acknowledged (seen once with the cut matrix: zeros read
 * back from a synced collective write). ESTALE: it tries again later, by
 * when its map says who is primary. */
static int sfs_storage_mirror_buddy_admit(sfs_storage_t *storage, sfs_storage_op_t *op)
{
    const sfs_config_mirror_group_t *group =
        sfs_config_mirror_group_of(storage->service->config, op->chunk.target_id);

    if (!group || !storage->service->cluster || !sfs_cluster_map(storage->service->cluster)) {
        if (group) {
            sfs_storage_mirror_word_given(storage, op->chunk.target_id); /* (as below) */
        }
        return 0; /* no map yet (just started): nothing says this one is primary */
    }
    if (sfs_storage_mirror_primary(storage, group) == op->chunk.target_id) {
        sfs_mirror_log_t *log = sfs_storage_mirror_log(storage, op->chunk.target_id);

        if (log && (op->opcode == SFS_OP_WRITE || op->opcode == SFS_OP_TRUNCATE) &&
            sfs_mirror_log_note(log, op->chunk.entry_id) != 0) {
            sfs_warn("target %" PRIu32 ": %s", op->chunk.target_id, sfs_error_detail());
        }
        /* (the sender changed its own copy before it forwarded: noted
         * above, its resync from this member copies the chunk file back,
         * were the sender's client never to send the change here) */
        sfs_storage_mirror_map_soon(storage);
        sfs_tp_request_reply_error(op->req, -ESTALE,
                                   "%s from a member of mirror group %" PRIu32 " to target %" PRIu32
                                   ", which is the group's primary now: a copy comes from the "
                                   "primary only (the sender was replaced while cut off or "
                                   "stopped)",
                                   sfs_op_name(op->opcode), group->id, op->chunk.target_id);
        return -ESTALE;
    }
    /* taken as secondary: its buddy may act as primary on this member's
     * word for a lease length, and this member will not until then */
    sfs_storage_mirror_word_given(storage, op->chunk.target_id);
    if (sfs_chunk_removed_recent(storage->removed, op->chunk.target_id, op->chunk.entry_id,
                                 sfs_time_ms())) {
        /* a forward (or resync copy) that arrived after this member removed
         * the chunk file: stale (entry ids are never reused); writing it
         * would make an orphan. Done, as far as the sender is concerned. */
        if (storage->stale_copies++ < 20) {
            sfs_info("mirror: %s of file %016" PRIx64 " on target %" PRIu32
                     " from its buddy dropped: its chunk file was removed here since",
                     sfs_op_name(op->opcode), op->chunk.entry_id, op->chunk.target_id);
        }
        sfs_storage_reply_length(op->req, op->opcode == SFS_OP_WRITE
                                              ? sfs_chunk_req_bytes(&op->chunk)
                                          : op->opcode == SFS_OP_TRUNCATE ? op->chunk.length
                                                                          : 0);
        return 1;
    }
    return 0;
}

int sfs_storage_mirror_admit(sfs_storage_t *storage, sfs_storage_op_t *op)
{
    const sfs_config_mirror_group_t *group;
    uint32_t                         target_id = op->chunk.target_id;
    uint32_t                         primary;
    int                              flagged = 0, rc;

    switch (op->opcode) {
    case SFS_OP_WRITE:
    case SFS_OP_TRUNCATE:
    case SFS_OP_FSYNC:
        if (op->chunk.flags & SFS_CHUNK_BUDDY) {
            op->chunk.flags &= ~(SFS_CHUNK_BUDDY | SFS_CHUNK_MIRRORED);
            return sfs_storage_mirror_buddy_admit(storage, op);
        }
        flagged = (op->chunk.flags & SFS_CHUNK_MIRRORED) != 0;
        op->chunk.flags &= ~SFS_CHUNK_MIRRORED;
        break;
    case SFS_OP_CHUNK_STAT:
        if (op->chunk.flags & SFS_CHUNK_BUDDY) {
            /* the buddy asks for this member's word (sfs_storage_mirror_ping) */
            op->chunk.flags &= ~(SFS_CHUNK_BUDDY | SFS_CHUNK_MIRRORED);
            return sfs_storage_mirror_buddy_admit(storage, op);
        }
        /* fall through */
    case SFS_OP_READ:
    case SFS_OP_CHUNK_OPEN:
        if (!(op->chunk.flags & SFS_CHUNK_MIRRORED)) {
            return 0;
        }
        op->chunk.flags &= ~SFS_CHUNK_MIRRORED;
        return sfs_storage_mirror_read_admit(storage, op);
    case SFS_OP_CHUNK_UNLINK:
        return sfs_storage_mirror_unlink_alone(storage, op);
    default:
        return 0;
    }
    if (!flagged) {
        return 0; /* an unmirrored file's request: no group to look up */
    }
    rc = sfs_storage_mirror_lookup(storage, op, &group, &primary);
    if (rc) {
        return rc;
    }
    if (primary == target_id) {
        /* the group's primary now: the config's, or its secondary promoted;
         * but not without a lease: management may have promoted the buddy
         * of a rank it cannot hear, and this rank's map would not say so.
         * The buddy's word stands in for it where the forward will ask the
         * buddy (another rank's, not needing a resync) */
        sfs_mirror_log_t *log = sfs_storage_mirror_log(storage, target_id);

        op->buddy_id = sfs_storage_mirror_buddy_of(group, target_id);
        rc           = sfs_storage_mirror_admit_leased(storage, op,
                                             log && !sfs_mirror_log_degraded(log) &&
                                                     !sfs_storage_find(storage, op->buddy_id)
                                                           ? SFS_WORD_ASKED
                                                           : SFS_WORD_NONE);
        if (rc) {
            return rc;
        }
        op->mirror = 1;
        return 0;
    }
    /* a client with an older map (or ours is older): it asks the map again,
     * and so do we */
    sfs_storage_mirror_map_soon(storage);
    sfs_tp_request_reply_error(op->req, -ESTALE,
                               "%s of a mirrored file on target %" PRIu32
                               ", which is not the primary of mirror group %" PRIu32
                               " now (target %" PRIu32 " is)",
                               sfs_op_name(op->opcode), target_id, group->id, primary);
    return -ESTALE;
}

/* The chunk file bytes an op changes: [lo, hi); [0, 0) for none. */
static void sfs_storage_mirror_range(sfs_storage_op_t *op)
{
    op->lo = op->hi = 0;
    if (op->opcode == SFS_OP_TRUNCATE) {
        op->hi = UINT64_MAX;
        return;
    }
    if (op->opcode != SFS_OP_WRITE || op->chunk.extent_count == 0) {
        return;
    }
    op->lo = UINT64_MAX;
    for (uint32_t i = 0; i < op->chunk.extent_count; i++) {
        const sfs_io_extent_t *e = &op->chunk.extents[i];

        if (e->length == 0) {
            continue;
        }
        if (e->chunk_offset < op->lo) {
            op->lo = e->chunk_offset;
        }
        if (e->chunk_offset + e->length > op->hi) {
            op->hi = e->chunk_offset + e->length;
        }
    }
    if (op->hi == 0) {
        op->lo = 0;
    }
}

static int sfs_storage_mirror_overlap(const sfs_storage_op_t *a, const sfs_storage_op_t *b)
{
    /* by target id: a request run on the buddy's target (same rank) points there */
    return a->chunk.target_id == b->chunk.target_id && a->chunk.entry_id == b->chunk.entry_id &&
           a->lo < a->hi && b->lo < b->hi && a->lo < b->hi && b->lo < a->hi;
}

static int sfs_storage_mirror_blocked(const sfs_storage_t *storage, const sfs_storage_op_t *op)
{
    for (const sfs_storage_op_t *e = storage->mirror_head; e && e != op; e = e->mirror_next) {
        if (sfs_storage_mirror_overlap(e, op)) {
            return 1;
        }
    }
    return 0;
}

void sfs_storage_mirror_start(sfs_storage_t *storage, sfs_storage_op_t *op, uint64_t bytes)
{
    op->bytes = bytes;
    if (!op->mirror) {
        sfs_storage_submit(storage, op, bytes);
        return;
    }
    sfs_storage_mirror_range(op);
    op->mirror_prev = storage->mirror_tail;
    op->mirror_next = NULL;
    if (storage->mirror_tail) {
        storage->mirror_tail->mirror_next = op;
    } else {
        storage->mirror_head = op;
    }
    storage->mirror_tail = op;
    op->mirror_wait      = sfs_storage_mirror_blocked(storage, op);
    if (!op->mirror_wait) {
        sfs_storage_submit(storage, op, bytes);
    }
}

/* Both copies are done: leave the order, and start the first waiting
 * request that nothing earlier overlaps any more (again from the head:
 * one started inline may already have finished). */
static void sfs_storage_mirror_leave(sfs_storage_op_t *op)
{
    sfs_storage_t    *storage = op->storage;
    sfs_storage_op_t *w;

    if (op->mirror_prev) {
        op->mirror_prev->mirror_next = op->mirror_next;
    } else {
        storage->mirror_head = op->mirror_next;
    }
    if (op->mirror_next) {
        op->mirror_next->mirror_prev = op->mirror_prev;
    } else {
        storage->mirror_tail = op->mirror_prev;
    }
    op->mirror_next = op->mirror_prev = NULL;
    do {
        for (w = storage->mirror_head; w; w = w->mirror_next) {
            if (w->mirror_wait && !sfs_storage_mirror_blocked(storage, w)) {
                w->mirror_wait = 0;
                sfs_storage_submit(storage, w, w->bytes);
                break;
            }
        }
    } while (w);
}

/* Errors that say the buddy is not there (not that it refused the request). */
static int sfs_storage_mirror_unreachable(int rc)
{
    switch (rc) {
    case -ETIMEDOUT:
    case -ECONNRESET:
    case -ECONNREFUSED:
    case -ECONNABORTED:
    case -EHOSTUNREACH:
    case -ENETUNREACH:
    case -ENOTCONN:
    case -EPIPE:
    case -ECANCELED: /* this rank's connection closed under it */
        return 1;
    default:
        return 0;
    }
}

/* The chunk file an op changes, for the change log (0: changes none). */
static int sfs_storage_mirror_changes(const sfs_storage_op_t *op)
{
    return op->opcode != SFS_OP_FSYNC;
}

/* The buddy is away: record the op's chunk file (durably, before the op is
 * answered) and go on alone. 0, or the error (detail set). */
static int sfs_storage_mirror_alone(sfs_storage_op_t *op, const char *why)
{
    sfs_mirror_log_t *log = sfs_storage_mirror_log(op->storage, op->chunk.target_id);
    int               was, rc;

    if (!log) {
        /* not a group member here (an admitted op cannot be): answering 0
         * would let the copies part without a trace */
        return sfs_error_set(-EIO, "mirror: target %u has no change log (%s)",
                             (unsigned)op->chunk.target_id, why);
    }
    was = sfs_mirror_log_degraded(log);
    sfs_error_clear();
    if (sfs_storage_mirror_changes(op)) {
        rc = sfs_mirror_log_note(log, op->chunk.entry_id);
    } else {
        rc = sfs_mirror_log_begin(log);
    }
    if (rc) {
        snprintf(op->detail, sizeof(op->detail),
                 "mirror: target %" PRIu32 " cannot serve alone (its buddy %" PRIu32
                 " is unreachable): %s",
                 op->chunk.target_id, op->buddy_id,
                 sfs_error_detail()[0] ? sfs_error_detail() : sfs_strerror(rc));
        return rc;
    }
    op->served_alone = 1;
    if (!was) {
        sfs_warn("mirror: target %" PRIu32 " (the secondary of %" PRIu32 ") is lost (%s): "
                 "target %" PRIu32 " serves alone, %" PRIu32 " needs a resync",
                 op->buddy_id, op->chunk.target_id, why, op->chunk.target_id, op->buddy_id);
        sfs_storage_mirror_changed(op->storage);
    }
    return 0;
}

static int sfs_storage_mirror_send(sfs_storage_op_t *op);

static void sfs_storage_mirror_forwarded(void *arg)
{
    sfs_storage_op_t *op = arg;
    int               rc = sfs_tp_rpc_status(op->forward);

    if (rc == -ECANCELED && !op->forward_resent && !op->storage->service->tearing_down &&
        !op->storage->service->stop_requested) {
        /* this rank closed the connection under it (a new map gave the
         * buddy's rank another address): the buddy did not fail; sent again
         * once on a new connection */
        op->forward_resent = 1;
        sfs_tp_rpc_release(op->forward);
        op->forward = NULL;
        sfs_error_clear();
        rc = sfs_storage_mirror_send(op);
        if (rc == 0) {
            return;
        }
        op->forward_taken = 0;
        sfs_storage_mirror_word_taken(op->storage, op->chunk.target_id, 0, 0);
        op->status = sfs_storage_mirror_unreachable(rc)
                         ? sfs_storage_mirror_alone(op, sfs_error_detail())
                         : rc;
        if (op->status && !op->detail[0]) {
            snprintf(op->detail, sizeof(op->detail), "mirror: target %" PRIu32 ": %s", op->buddy_id,
                     sfs_error_detail());
        }
        sfs_storage_done(&op->work); /* stage 1: answer */
        return;
    }
    op->forward_taken = rc == 0;
    sfs_storage_mirror_word_taken(op->storage, op->chunk.target_id, op->forward_sent_ms,
                                  rc == 0                              ? 1
                                  : sfs_storage_mirror_unreachable(rc) ? 0
                                                                       : -1);
    if (rc && sfs_storage_mirror_unreachable(rc)) {
        op->status = sfs_storage_mirror_alone(op, sfs_tp_rpc_error_detail(op->forward));
    } else if (rc) {
        op->status = rc;
        snprintf(op->detail, sizeof(op->detail),
                 "mirror: target %" PRIu32 " (the secondary of %" PRIu32 "): %s", op->buddy_id,
                 op->chunk.target_id, sfs_tp_rpc_error_detail(op->forward));
    }
    sfs_tp_rpc_release(op->forward);
    op->forward = NULL;
    sfs_storage_done(&op->work); /* stage 1: answer */
}

static void sfs_storage_mirror_reply_cb(sfs_tp_rpc_t *rpc, void *arg)
{
    sfs_storage_op_t *op = arg;

    (void)rpc;
    /* out of the transport's completion path before releasing the RPC */
    if (sfs_tp_worker_post(op->storage->service->worker, sfs_storage_mirror_forwarded, op) != 0) {
        sfs_storage_mirror_forwarded(op);
    }
}

/* Send the op to the buddy's rank; 0 or the error (detail set). */
static int sfs_storage_mirror_send(sfs_storage_op_t *op)
{
    sfs_service_t      *service = op->storage->service;
    sfs_tp_rpc_params_t params;
    sfs_tp_conn_t      *conn;
    sfs_wbuf_t          wb;
    sfs_cap_t           cap       = op->chunk.cap;
    uint32_t            target_id = op->chunk.target_id;
    size_t              room      = SFS_PROTO_ARGS_MAX;
    int                 rc;

    free(op->forward_args); /* (sent again) */
    op->forward_args = malloc(room);
    if (!op->forward_args) {
        return sfs_error_set(-ENOMEM, "out of memory for a mirror forward");
    }
    sfs_wbuf_init(&wb, op->forward_args, room);
    /* the same request for the buddy's target, without a capability (a
     * server's session needs none): changed in place for the packing, as
     * the disk work on it is done */
    op->chunk.target_id = op->buddy_id;
    memset(&op->chunk.cap, 0, sizeof(op->chunk.cap));
    op->chunk.flags |= SFS_CHUNK_BUDDY;
    sfs_proto_chunk_req_pack(&wb, op->opcode, &op->chunk);
    op->chunk.flags &= ~SFS_CHUNK_BUDDY;
    op->chunk.target_id = target_id;
    op->chunk.cap       = cap;
    if (wb.error) {
        return sfs_error_set(wb.error, "mirror forward of %s: arguments do not fit",
                             sfs_op_name(op->opcode));
    }
    rc = sfs_cluster_target_conn(service->cluster, op->buddy_id, &conn);
    if (rc) {
        return rc;
    }
    memset(&params, 0, sizeof(params));
    params.opcode      = op->opcode;
    params.args        = op->forward_args;
    params.args_length = wb.length;
    if (op->opcode == SFS_OP_WRITE) {
        op->forward_iov.iov_base = op->data; /* lives until the op is answered */
        op->forward_iov.iov_len  = op->data_length;
        params.payload           = &op->forward_iov;
        params.payload_count     = 1;
    }
    params.cb     = sfs_storage_mirror_reply_cb;
    params.cb_arg = op;
    /* a lost buddy must be given up before the client gives up on us */
    params.timeout_ms = service->config->rpc_timeout_ms / 2;
    if (params.timeout_ms > service->config->offline_timeout_ms) {
        params.timeout_ms = service->config->offline_timeout_ms;
    }
    if (params.timeout_ms == 0) {
        params.timeout_ms = 1;
    }
    op->forward_sent_ms = sfs_time_ms(); /* the buddy's word counts from here */
    return sfs_tp_rpc_start(conn, &params, &op->forward);
}

/* The op is to be answered: a success only while the lease (or the
 * buddy's word: a read, a change the buddy took) still holds
 * (the disk work and the forward took time; the answer is what counts). A
 * change applied but refused this way is sent again by the client to the
 * new primary: the same bytes, the same length; a read refused this way
 * is read again there. */
void sfs_storage_mirror_answer(sfs_storage_op_t *op)
{
    sfs_storage_word_use_t use;
    int                    rc;

    if (op->status) {
        return;
    }
    if (op->mirror_read) {
        use = op->opcode == SFS_OP_CHUNK_OPEN ? SFS_WORD_NONE : SFS_WORD_HOLDS;
    } else {
        use = op->forward_taken && !op->served_alone ? SFS_WORD_HOLDS : SFS_WORD_NONE;
    }
    rc = sfs_storage_mirror_fenced(op->storage, op->chunk.target_id, op->buddy_id,
                                   sfs_op_name(op->opcode), use);
    if (rc) {
        op->status = rc;
        snprintf(op->detail, sizeof(op->detail), "%s", sfs_error_detail());
        return;
    }
    if (op->served_alone && !sfs_storage_mirror_recorded(op->storage, op->chunk.target_id)) {
        /* management still records the buddy good: cut off from us, it
         * could promote the buddy, which lacks this change. Not yet
         * acknowledged: the client sends it again (the same bytes), and
         * the report goes at the next turn of the loop */
        sfs_storage_mirror_changed(op->storage);
        op->status = -ESTALE;
        snprintf(op->detail, sizeof(op->detail),
                 "%s on target %" PRIu32 ": served alone (its buddy %" PRIu32
                 " needs a resync), but management has not recorded that yet, so it is not "
                 "acknowledged (fencing: the buddy could be promoted without it)",
                 sfs_op_name(op->opcode), op->chunk.target_id, op->buddy_id);
        return;
    }
    /* tests/faults/test_fault_mirror_fence.sh reads these (storage=debug) */
    sfs_debug("mirror: target %" PRIu32 " acknowledges %s of chunk file %" PRIu64 " as primary",
              op->chunk.target_id, sfs_op_name(op->opcode), op->chunk.entry_id);
}

int sfs_storage_mirror_step(sfs_storage_op_t *op)
{
    sfs_storage_t *storage = op->storage;

    if (op->mirror_stage == 0 && op->status == 0) {
        sfs_chunk_target_t *local = sfs_storage_find(storage, op->buddy_id);
        sfs_mirror_log_t   *log   = sfs_storage_mirror_log(storage, op->chunk.target_id);

        if (log && sfs_mirror_log_degraded(log)) {
            /* the buddy needs a resync already: alone, without trying it */
            op->status       = sfs_storage_mirror_alone(op, "needs a resync");
            op->mirror_stage = 2;
            if (op->mirror_prev || op->mirror_next || storage->mirror_head == op) {
                sfs_storage_mirror_leave(op);
            }
            sfs_storage_mirror_answer(op);
            return 0;
        }
        op->mirror_stage   = 1;
        op->primary_length = op->length;
        storage->mirror_forwards++;
        storage->in_flight++;
        if (local) {
            op->target = local; /* the same request, on the buddy's target */
            sfs_workq_submit(storage->workq, &op->work);
            return 1;
        }
        sfs_error_clear();
        op->status = sfs_storage_mirror_send(op);
        if (op->status == 0) {
            return 1;
        }
        storage->in_flight--;
        sfs_storage_mirror_word_taken(storage, op->chunk.target_id, 0, 0);
        if (sfs_storage_mirror_unreachable(op->status)) {
            char why[SFS_ERROR_DETAIL_MAX];

            snprintf(why, sizeof(why), "%s",
                     sfs_error_detail()[0] ? sfs_error_detail() : sfs_strerror(op->status));
            op->status = sfs_storage_mirror_alone(op, why);
        } else {
            snprintf(op->detail, sizeof(op->detail),
                     "mirror: target %" PRIu32 " (the secondary of %" PRIu32 ") unreachable: %s",
                     op->buddy_id, op->chunk.target_id,
                     sfs_error_detail()[0] ? sfs_error_detail() : sfs_strerror(op->status));
        }
    }
    if (op->mirror_stage == 1) {
        op->length = op->primary_length; /* the client's view is the primary's */
    }
    op->mirror_stage = 2;
    if (op->mirror_prev || op->mirror_next || storage->mirror_head == op) {
        sfs_storage_mirror_leave(op);
    }
    sfs_storage_mirror_answer(op);
    return 0;
}
