/*
 * Resync of a returning mirror member (sfs_mirror_resync.h).
 */
#define SFS_LOG_FAC "storage"
#include "sfs_mirror_resync.h"
#include "sfs_mirror_resync_internal.h"

#include "sfs_errno.h"
#include "sfs_log.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sfs_mirror_resync_create(sfs_chunk_target_t *target, sfs_mirror_log_t *log,
                             sfs_mirror_resync_t **resync_p)
{
    sfs_mirror_resync_t *r = calloc(1, sizeof(*r));
    int                  rc;

    if (!r || !(r->args = malloc(SFS_PROTO_ARGS_MAX))) {
        free(r);
        return -ENOMEM;
    }
    r->target = target;
    r->log    = log;
    /* a log found at start: the buddy was lost before this process ran */
    r->seen_away = sfs_mirror_log_degraded(log);
    rc           = sfs_mirror_rebuild_open(r);
    if (rc) {
        sfs_mirror_resync_destroy(r);
        return rc;
    }
    *resync_p = r;
    return 0;
}

void sfs_mirror_resync_destroy(sfs_mirror_resync_t *r)
{
    if (!r) {
        return;
    }
    sfs_tp_rpc_release(r->rpc);
    sfs_tp_rpc_release(r->probe_rpc);
    free(r->all);
    free(r->buf);
    free(r->args);
    free(r);
}

void sfs_mirror_resync_wanted(sfs_mirror_resync_t *r)
{
    r->seen_away = 1;
}

uint32_t sfs_mirror_resync_state(const sfs_mirror_resync_t *r, uint64_t *done_p, uint64_t *total_p)
{
    uint32_t count = sfs_mirror_log_count(r->log);

    if (r->rebuild) {
        /* bad until the full copy is done; "rebuilding D/T" once started */
        *done_p  = r->rebuild == SFS_MIRROR_REBUILD_STARTED ? r->idx : 0;
        *total_p = r->rebuild == SFS_MIRROR_REBUILD_STARTED ? r->all_count : 0;
        return SFS_MIRROR_STATE_BAD;
    }
    *done_p  = r->active ? r->idx - r->base : 0;
    *total_p = count - (r->active ? r->base : sfs_mirror_log_copied(r->log));
    if (!sfs_mirror_log_degraded(r->log)) {
        return SFS_MIRROR_STATE_GOOD;
    }
    return r->active ? SFS_MIRROR_STATE_RESYNCING : SFS_MIRROR_STATE_NEEDS_RESYNC;
}

/* Send one request to the buddy's target; 0 or the error (detail set). */
static int sfs_mirror_resync_send(sfs_mirror_resync_t *r, uint32_t opcode, uint64_t length,
                                  const void *data, uint64_t data_length)
{
    uint32_t            buddy = sfs_mirror_log_buddy(r->log);
    sfs_tp_rpc_params_t params;
    sfs_tp_conn_t      *conn;
    sfs_wbuf_t          wb;
    int                 rc;

    sfs_wbuf_init(&wb, r->args, SFS_PROTO_ARGS_MAX);
    if (opcode == SFS_OP_CHUNK_UNLINK) {
        sfs_chunk_unlink_req_t *u = calloc(1, sizeof(*u));

        if (!u) {
            return -ENOMEM;
        }
        u->target_id    = buddy;
        u->count        = 1;
        u->entry_ids[0] = r->entry_id;
        sfs_proto_chunk_unlink_req_pack(&wb, u);
        free(u);
    } else {
        sfs_chunk_req_t chunk;

        memset(&chunk, 0, offsetof(sfs_chunk_req_t, extents));
        memset(&chunk.cap, 0, sizeof(chunk.cap)); /* a server's session needs none */
        chunk.target_id = buddy;
        chunk.entry_id  = r->entry_id;
        if (opcode == SFS_OP_TRUNCATE) {
            chunk.length = length;
            chunk.flags  = SFS_TRUNCATE_EXACT;
        } else if (opcode == SFS_OP_WRITE) {
            chunk.extent_count            = 1;
            chunk.extents[0].chunk_offset = r->offset;
            chunk.extents[0].length       = data_length;
        }
        chunk.flags |= SFS_CHUNK_BUDDY; /* refused by a member that is the primary */
        sfs_proto_chunk_req_pack(&wb, opcode, &chunk);
    }
    if (wb.error) {
        return sfs_error_set(wb.error, "resync: %s does not fit", sfs_op_name(opcode));
    }
    rc = sfs_cluster_target_conn(r->cluster, buddy, &conn);
    if (rc) {
        return rc;
    }
    memset(&params, 0, sizeof(params));
    params.opcode      = opcode;
    params.args        = r->args;
    params.args_length = wb.length;
    if (data_length) {
        r->iov.iov_base      = (void *)data;
        r->iov.iov_len       = data_length;
        params.payload       = &r->iov;
        params.payload_count = 1;
    }
    return sfs_tp_rpc_start(conn, &params, &r->rpc);
}

/* The next request of the pass: 0 (sent, or the pass moved on), or the error. */
static int sfs_mirror_resync_next(sfs_mirror_resync_t *r)
{
    int fd, rc;

    switch (r->phase) {
    case SFS_RESYNC_START:
        r->entry_id = r->full ? r->all[r->idx] : sfs_mirror_log_entry(r->log, r->idx);
        fd          = sfs_chunk_open_readonly(r->target, r->entry_id);
        if (fd == -ENOENT) {
            r->phase = SFS_RESYNC_NEXT; /* removed here: removed there */
            return sfs_mirror_resync_send(r, SFS_OP_CHUNK_UNLINK, 0, NULL, 0);
        }
        if (fd >= 0) {
            close(fd);
        }
        rc = sfs_chunk_stat(r->target, r->entry_id, &r->length);
        if (rc) {
            return rc;
        }
        r->offset = 0;
        r->phase  = SFS_RESYNC_COPY;
        return sfs_mirror_resync_send(r, SFS_OP_TRUNCATE, r->length, NULL, 0);
    case SFS_RESYNC_COPY: {
        sfs_io_extent_t e;
        uint64_t        now_length;

        if (r->offset >= r->length) {
            r->phase = SFS_RESYNC_SYNC;
            return sfs_mirror_resync_send(r, SFS_OP_FSYNC, 0, NULL, 0);
        }
        if (!r->buf && !(r->buf = malloc(SFS_RESYNC_PIECE))) {
            return -ENOMEM;
        }
        e.chunk_offset = r->offset;
        e.length =
            r->length - r->offset < SFS_RESYNC_PIECE ? r->length - r->offset : SFS_RESYNC_PIECE;
        /* a file cut meanwhile reads zeros here, and was logged again by
         * that TRUNCATE: the next pass copies it again */
        rc = sfs_chunk_read(r->target, r->entry_id, &e, 1, r->buf, 0, &now_length);
        if (rc) {
            return rc;
        }
        rc = sfs_mirror_resync_send(r, SFS_OP_WRITE, 0, r->buf, e.length);
        r->offset += e.length;
        r->bytes += e.length;
        return rc;
    }
    case SFS_RESYNC_SYNC:
    default:
        if (r->full) {
            sfs_mirror_rebuild_copied(r);
        }
        r->files++;
        r->phase = SFS_RESYNC_START;
        r->idx++;
        return 0;
    }
}

int sfs_mirror_resync_abandon(sfs_mirror_resync_t *r, int rc, const char *detail, uint64_t now)
{
    switch (rc) {
    case -ETIMEDOUT:
    case -ECONNRESET:
    case -ECONNREFUSED:
    case -EHOSTUNREACH:
    case -ENOTCONN:
    case -EPIPE:
        r->seen_away     = 0; /* gone again: wait until the map shows it back */
        r->lost_pid      = 0;
        r->quiet_lost_ms = now;
        break;
    default:
        break;
    }
    sfs_warn("%s of target %" PRIu32 " from %" PRIu32 " stopped after %" PRIu64
             " chunk files: %s (tried again in %d ms)",
             r->full ? "rebuild" : "resync", sfs_mirror_log_buddy(r->log),
             sfs_mirror_log_target(r->log), r->files,
             detail && detail[0] ? detail : sfs_strerror(rc), SFS_RESYNC_BACKOFF);
    if (!r->full) {
        sfs_mirror_log_pass_abandon(r->log);
    }
    r->active      = 0;
    r->next_try_ms = now + SFS_RESYNC_BACKOFF;
    return 1;
}

/* Whether the map names the buddy as the group's primary while this
 * member's log says the buddy lacks changes: this member was the primary,
 * was cut off (or stopped) and its buddy was promoted meanwhile. */
static int sfs_mirror_resync_not_primary(const sfs_mirror_resync_t *r, const sfs_map_t *map)
{
    const sfs_map_target_t *me =
        map ? sfs_map_find_target(map, sfs_mirror_log_target(r->log)) : NULL;

    return sfs_mirror_log_degraded(r->log) && me && me->mirror_primary &&
           me->mirror_primary == sfs_mirror_log_buddy(r->log);
}

/* A member that is not the primary any more copies nothing to the one that
 * is (that would put its older copy over the newer): once no request of a
 * pass is out, its log is dropped. What it lists are changes the primary
 * has newer copies of, or removals the metadata server sends both members
 * again until both confirm; this member gets a resync from the primary.
 * Non-zero: the state changed (to report). */
static int sfs_mirror_resync_drop(sfs_mirror_resync_t *r, uint64_t now)
{
    uint32_t count = sfs_mirror_log_count(r->log);

    if (r->rpc) {
        if (!sfs_tp_rpc_is_done(r->rpc)) {
            return 0;
        }
        sfs_tp_rpc_release(r->rpc);
        r->rpc = NULL;
    }
    if (r->active) {
        (void)sfs_mirror_log_pass_abandon(r->log);
        r->active = 0;
    }
    if (sfs_mirror_log_clear(r->log) != 0) {
        sfs_warn("target %" PRIu32 ": %s", sfs_mirror_log_target(r->log), sfs_error_detail());
        r->next_try_ms = now + SFS_RESYNC_BACKOFF;
        return 0;
    }
    r->seen_away     = 0;
    r->lost_pid      = 0;
    r->quiet_lost_ms = 0;
    sfs_warn("target %" PRIu32 " is not its group's primary any more (%" PRIu32
             " is, promoted while this one was cut off or stopped): its change log (%" PRIu32
             " chunk files) is dropped; it gets a resync from %" PRIu32 " instead",
             sfs_mirror_log_target(r->log), sfs_mirror_log_buddy(r->log), count,
             sfs_mirror_log_buddy(r->log));
    return 1;
}

int sfs_mirror_resync_tick(sfs_mirror_resync_t *r, sfs_cluster_t *cluster, const sfs_map_t *map,
                           uint64_t now)
{
    uint32_t buddy   = sfs_mirror_log_buddy(r->log);
    int      changed = 0, rc;

    r->cluster = cluster;
    if (!r->rebuild && sfs_mirror_resync_not_primary(r, map)) {
        return sfs_mirror_resync_drop(r, now);
    }
    if (r->probe) {
        sfs_mirror_rebuild_probe_tick(r, map, now); /* this member: its directory is new */
        map = sfs_cluster_map(cluster);             /* a connection made may have replaced it */
    }
    if (r->rebuild) {
        /* the buddy lost its disk: a full copy, or waiting for the command */
        if (!sfs_mirror_rebuild_tick(r, map, now, &changed)) {
            return changed;
        }
    } else if (!sfs_mirror_log_degraded(r->log)) {
        return 0;
    } else if (!r->active) {
        const sfs_map_target_t *t    = map ? sfs_map_find_target(map, buddy) : NULL;
        const sfs_map_node_t   *node = t ? sfs_map_find_node(map, t->node_id) : NULL;

        if (!t || t->state != SFS_STATE_ONLINE || !node) {
            r->seen_away = 1;
            return changed;
        }
        /* a rank killed and back within a heartbeat is never shown away: its
         * new process (another pid) registered again, so it was away all
         * the same */
        if (r->lost_pid == 0) {
            r->lost_pid = node->pid;
        } else if (node->pid != r->lost_pid) {
            r->seen_away = 1;
        }
        /* a loss the map never showed (a forward that failed or timed out
         * while management heard the buddy all along: a link back from a
         * cut, a busy rank), or a pass that timed out so: past the offline
         * timeout the buddy is taken as back. Counted from the first tick
         * that sees the log without a pass; a buddy that is really gone is
         * offline in the map by then */
        if (!r->seen_away && !r->quiet_lost_ms) {
            r->quiet_lost_ms = now;
        } else if (!r->seen_away &&
                   now >= r->quiet_lost_ms + (uint64_t)map->offline_timeout_ms + 1000) {
            r->seen_away = 1;
        }
        /* online, and was away since it was lost: it came back (the map's
         * "online" right after the loss is only management not knowing yet) */
        if (now < r->next_try_ms || !r->seen_away) {
            return changed;
        }
        r->base = sfs_mirror_log_copied(r->log);
        sfs_mirror_log_pass_begin(r->log, &r->idx, &r->end);
        r->active = 1;
        r->phase  = SFS_RESYNC_START;
        r->files = r->bytes = 0;
        r->start_ms         = now;
        sfs_warn("resync of target %" PRIu32 " from %" PRIu32 ": %" PRIu32
                 " chunk files changed while it was away",
                 buddy, sfs_mirror_log_target(r->log), r->end - r->idx);
        changed = 1;
    }
    if (r->rpc) {
        if (!sfs_tp_rpc_is_done(r->rpc)) {
            return changed;
        }
        rc = sfs_tp_rpc_status(r->rpc);
        if (rc) {
            char detail[SFS_ERROR_DETAIL_MAX];

            snprintf(detail, sizeof(detail), "%s", sfs_tp_rpc_error_detail(r->rpc));
            sfs_tp_rpc_release(r->rpc);
            r->rpc = NULL;
            return sfs_mirror_resync_abandon(r, rc, detail, now);
        }
        sfs_tp_rpc_release(r->rpc);
        r->rpc = NULL;
        changed |= r->phase == SFS_RESYNC_SYNC || r->phase == SFS_RESYNC_NEXT;
    }
    while (!r->rpc) {
        if (r->idx == r->end && r->full) {
            return sfs_mirror_rebuild_done(r, now);
        }
        if (r->idx == r->end) {
            if (!sfs_mirror_log_pass_done(r->log)) {
                sfs_mirror_log_pass_begin(r->log, &r->idx, &r->end); /* changed meanwhile */
                continue;
            }
            rc = sfs_mirror_log_clear(r->log);
            if (rc) {
                return sfs_mirror_resync_abandon(r, rc, sfs_error_detail(), now);
            }
            sfs_warn("resync of target %" PRIu32 " from %" PRIu32 " done: %" PRIu64
                     " chunk files, %" PRIu64 " bytes in %.2f s (%.0f MB/s); both copies are good",
                     buddy, sfs_mirror_log_target(r->log), r->files, r->bytes,
                     (double)(now - r->start_ms) / 1000.0,
                     now > r->start_ms ? (double)r->bytes / 1e3 / (double)(now - r->start_ms)
                                       : 0.0);
            r->active        = 0;
            r->seen_away     = 0; /* a later loss waits for the map to show it away */
            r->lost_pid      = 0;
            r->quiet_lost_ms = 0;
            return 1;
        }
        if (r->phase == SFS_RESYNC_NEXT) {
            if (r->full) {
                sfs_mirror_rebuild_copied(r);
            }
            r->files++;
            r->phase = SFS_RESYNC_START;
            r->idx++;
            changed = 1;
            continue;
        }
        sfs_error_clear();
        rc = sfs_mirror_resync_next(r);
        if (rc) {
            return sfs_mirror_resync_abandon(r, rc, sfs_error_detail(), now);
        }
    }
    return changed;
}
