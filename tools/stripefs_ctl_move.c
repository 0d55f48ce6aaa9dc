/*
 * One file's chunk moved between storage targets, crash-safe (see
 * stripefs_ctl_move.h and docs/migration.md): copy, fsync, fence the old
 * chunk against writes, commit the new pattern in one metadata transaction
 * (refused if anyone wrote the file since the copy began), tombstone and
 * remove the old chunk. Shared by the drain and the rebalance.
 */
#include "stripefs_ctl_move.h"

#include "sfs_admin.h"
#include "sfs_admin_migrate.h"
#include "sfs_errno.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int ctl_move_no_answer(int rc)
{
    switch (rc) {
    case -ECONNREFUSED:
    case -ECONNRESET:
    case -ECONNABORTED:
    case -ETIMEDOUT:
    case -EHOSTDOWN:
    case -EHOSTUNREACH:
    case -ENOTCONN:
    case -EPIPE:
    case -ESHUTDOWN:
        return 1;
    default:
        return 0;
    }
}

int ctl_move_uses(const sfs_attr_t *attr, uint32_t target)
{
    for (uint32_t i = 0; i < attr->pattern.stripe_count; i++) {
        if (attr->pattern.targets[i] == target) {
            return 1;
        }
    }
    return 0;
}

static int move_is_draining(const ctl_move_t *mv, uint32_t target)
{
    for (uint32_t i = 0; i < mv->draining_count; i++) {
        if (mv->draining[i] == target) {
            return 1;
        }
    }
    return 0;
}

static const char *move_host(const ctl_move_t *mv, uint32_t target)
{
    const sfs_map_target_t *t = sfs_map_find_target(mv->map, target);
    const sfs_map_node_t   *n = t ? sfs_map_find_node(mv->map, t->node_id) : NULL;

    return n ? n->host : "";
}

/* The new target of `attr`'s chunk on `from`: among the candidates,
 * online, not draining, room for `length` bytes above the reserve, not
 * used by the file; another host than the file's other targets first, then
 * another rank, then the preference (the most free space). 0 when none;
 * `skip` targets refused. */
static uint32_t move_choose(const ctl_move_t *mv, const sfs_attr_t *attr, uint32_t from,
                            uint64_t length, const uint32_t *skip, uint32_t skip_count)
{
    uint32_t best       = 0;
    int      best_score = -1;
    uint64_t best_pref  = 0;

    for (uint32_t i = 0; i < mv->cand_count; i++) {
        uint32_t                id = mv->cands[i];
        const sfs_map_target_t *t  = sfs_map_find_target(mv->map, id);
        uint64_t                reserve, pref;
        int                     score = 2, refused = 0;

        for (uint32_t s = 0; s < skip_count; s++) {
            refused |= skip[s] == id;
        }
        if (!t || id == from || refused || t->state != SFS_STATE_ONLINE ||
            move_is_draining(mv, id) || ctl_move_uses(attr, id)) {
            continue;
        }
        reserve = t->capacity / 100 > (1u << 20) ? t->capacity / 100 : (1u << 20);
        if (t->free < reserve || t->free - reserve < length) {
            continue;
        }
        for (uint32_t k = 0; k < attr->pattern.stripe_count; k++) {
            const sfs_map_target_t *o = sfs_map_find_target(mv->map, attr->pattern.targets[k]);

            if (!o || o->target_id == from) {
                continue;
            }
            if (strcmp(move_host(mv, o->target_id), move_host(mv, id)) == 0) {
                score = score > 1 ? 1 : score;
            }
            if (o->node_id == t->node_id) {
                score = 0;
            }
        }
        pref = mv->cand_prefer ? mv->cand_prefer[i] : t->free;
        if (score > best_score || (score == best_score && pref > best_pref)) {
            best       = id;
            best_score = score;
            best_pref  = pref;
        }
    }
    return best;
}

/* Say why no candidate can take the chunk of `attr`. */
static void move_why_not(const ctl_move_t *mv, const sfs_attr_t *attr, uint32_t from, uint64_t id,
                         uint64_t length, const uint32_t *skip, uint32_t skip_count)
{
    fprintf(stderr,
            "stripefs-ctl migrate: file %016" PRIx64 ": no target of storage pool '%s' can take "
            "its chunk (%" PRIu64 " bytes):",
            id, mv->pool_name, length);
    for (uint32_t i = 0; i < mv->cand_count; i++) {
        uint32_t                t   = mv->cands[i];
        const sfs_map_target_t *mt  = sfs_map_find_target(mv->map, t);
        const char             *why = "full";

        if (t == from) {
            continue;
        }
        for (uint32_t k = 0; k < skip_count; k++) {
            if (skip[k] == t) {
                why = "holds a tombstone of it (it was moved off there before)";
            }
        }
        if (why[0] == 'h') {
            /* said */
        } else if (!mt || mt->state != SFS_STATE_ONLINE) {
            why = "not online";
        } else if (move_is_draining(mv, t)) {
            why = "draining";
        } else if (ctl_move_uses(attr, t)) {
            why = "holds another of its chunks";
        }
        fprintf(stderr, " %u %s;", t, why);
    }
    fprintf(stderr, "%s\n", mv->cand_count > 1 ? "" : " the pool has no other target");
}

/* Whether the file's committed pattern has `to` where `from` was (the
 * answer to a commit whose reply was lost): 1 yes, 0 no, <0 unknown. */
static int move_committed(ctl_move_t *mv, uint64_t entry_id, uint32_t from, uint32_t to)
{
    sfs_attr_t attr;
    uint32_t   count = 0;
    int        eof   = 0;
    int        rc    = sfs_admin_inodes(mv->ctl->client, entry_id - 1, 1, &attr, &count, &eof);

    if (rc) {
        return rc;
    }
    return count == 1 && attr.entry_id == entry_id && ctl_move_uses(&attr, to) &&
           !ctl_move_uses(&attr, from);
}

/* Copy the chunk of `entry_id` from `from` to `to`, synced, with the
 * capability MIGRATE_BEGIN gave. */
static int move_copy(ctl_move_t *mv, uint64_t entry_id, const sfs_cap_t *cap, uint32_t from,
                     uint32_t to, uint64_t length)
{
    sfs_client_t *client = mv->ctl->client;
    int           rc;

    /* an earlier killed move's copy may be there: start from nothing */
    rc = sfs_admin_chunk_io(client, SFS_OP_TRUNCATE, to, entry_id, cap, 0, NULL, 0, NULL);
    for (uint64_t off = 0; rc == 0 && off < length; off += CTL_MOVE_PIECE) {
        uint64_t n = length - off < CTL_MOVE_PIECE ? length - off : CTL_MOVE_PIECE;

        rc = sfs_admin_chunk_io(client, SFS_OP_READ, from, entry_id, cap, off, mv->buf, n, NULL);
        if (rc == 0) {
            rc = sfs_admin_chunk_io(client, SFS_OP_WRITE, to, entry_id, cap, off, mv->buf, n, NULL);
        }
    }
    if (rc == 0) {
        rc = sfs_admin_chunk_io(client, SFS_OP_FSYNC, to, entry_id, cap, 0, NULL, 0, NULL);
    }
    return rc;
}

int ctl_move_file(ctl_move_t *mv, const sfs_attr_t *attr, uint32_t from)
{
    ctl_t            *ctl = mv->ctl;
    uint64_t          id  = attr->entry_id;
    uint32_t          skip[SFS_STRIPE_COUNT_MAX];
    uint32_t          skip_count = 0;
    uint64_t          length     = 0;
    sfs_migrate_req_t req        = {0};
    sfs_cap_t         cap;
    uint32_t          to;
    int               rc, done;

    if (attr->pattern.type == SFS_PATTERN_MIRROR) {
        return CTL_MOVE_MIRRORED;
    }
    rc = sfs_admin_migrate_begin(ctl->client, id, &req.write_gen, &cap);
    if (rc == -EBUSY) {
        return CTL_MOVE_BUSY; /* and the commit is refused if one comes during the copy */
    }
    if (rc == -ENOENT) {
        return CTL_MOVE_GONE;
    }
    if (rc == 0) {
        rc =
            sfs_admin_chunk_io(ctl->client, SFS_OP_CHUNK_STAT, from, id, &cap, 0, NULL, 0, &length);
    }
    if (rc) {
        fprintf(stderr, "stripefs-ctl migrate: file %016" PRIx64 ": %s\n", id, sfs_client_error());
        mv->last_rc = rc;
        return CTL_MOVE_FAILED;
    }
    for (;;) {
        to = move_choose(mv, attr, from, length, skip, skip_count);
        if (to == 0) {
            if (mv->say_why) {
                move_why_not(mv, attr, from, id, length, skip, skip_count);
            }
            return CTL_MOVE_NOWHERE;
        }
        rc = move_copy(mv, id, &cap, from, to, length);
        if (rc != -ESTALE || skip_count == SFS_STRIPE_COUNT_MAX) {
            break;
        }
        skip[skip_count++] = to; /* a tombstone of this file there: another target */
    }
    if (rc) {
        fprintf(stderr, "stripefs-ctl migrate: file %016" PRIx64 ": copy to target %u: %s\n", id,
                to, sfs_client_error());
        mv->last_rc = rc;
        return CTL_MOVE_FAILED;
    }
    if (mv->delay_ms) {
        usleep((useconds_t)mv->delay_ms * 1000u);
    }
    req.from     = from;
    req.to       = to;
    req.entry_id = id;
    rc = sfs_admin_chunk_moved(ctl->client, from, id, SFS_MOVED_FENCE, &req.fence_until_s);
    if (rc == 0) {
        rc = sfs_admin_migrate_commit(ctl->client, &req);
    }
    done = rc == 0 ? 1 : move_committed(mv, id, from, to);
    if (done != 1) {
        int refused = rc; /* the commit's (or the fence's) answer */

        if (done == 0) {
            /* not committed: the copy is an orphan, the old chunk writable */
            (void)sfs_admin_chunk_moved(ctl->client, from, id, SFS_MOVED_UNFENCE, NULL);
            (void)sfs_admin_chunk_unlink(ctl->client, to, &id, 1);
        }
        if (refused == -EBUSY) {
            return CTL_MOVE_BUSY;
        }
        if (refused == -ENOENT) {
            return CTL_MOVE_GONE;
        }
        fprintf(stderr, "stripefs-ctl migrate: file %016" PRIx64 ": commit: %s\n", id,
                sfs_strerror(refused));
        mv->last_rc = done < 0 ? done : refused;
        return CTL_MOVE_FAILED;
    }
    rc = sfs_admin_chunk_moved(ctl->client, from, id, SFS_MOVED_TOMB, NULL);
    if (rc) {
        /* committed; the old chunk stays until the sweep of a rerun */
        fprintf(stderr,
                "stripefs-ctl migrate: file %016" PRIx64 ": moved, but its old chunk on target "
                "%u stays (rerun migrate): %s\n",
                id, from, sfs_client_error());
    }
    mv->bytes += length;
    mv->to = to;
    return CTL_MOVED;
}
