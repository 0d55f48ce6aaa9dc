/*
 * Running one metadata operation inside a transaction, on the metadata
 * thread (sfs_meta_commit.c): the namespace call it maps to and the
 * results it keeps for the reply.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_service.h"

#include "sfs_meta_internal.h"
#include "sfs_meta_drain.h"
#include "sfs_meta_migrate.h"
#include "sfs_meta_pool.h"
#include "sfs_meta_store_internal.h"

#include "sfs_log.h"
#include "sfs_perm.h"
#include "sfs_time.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* META_CHECK's report: lines packed as protocol strings in list_data (at
 * most 1 MiB of them; the counts still cover all). */
static void sfs_meta_check_line(void *arg, const char *line)
{
    sfs_meta_op_t *op   = arg;
    size_t         need = 2 + strlen(line);
    sfs_wbuf_t     wb;

    sfs_warn("namespace check: %s", line);
    if (op->list_length + need > (1u << 20)) {
        return;
    }
    if (op->list_length + need > op->list_capacity) {
        size_t capacity = op->list_capacity ? 2 * op->list_capacity : 4096;
        void  *grown;

        while (capacity < op->list_length + need) {
            capacity *= 2;
        }
        grown = realloc(op->list_data, capacity);
        if (!grown) {
            return;
        }
        op->list_data     = grown;
        op->list_capacity = capacity;
    }
    sfs_wbuf_init(&wb, (uint8_t *)op->list_data + op->list_length, need);
    sfs_wbuf_str(&wb, line);
    op->list_length += wb.length;
    op->count++;
}

/* A create's choice of targets, kept to say when a file got fewer targets
 * than its pattern asks because fewer were usable (offline or full). */
typedef struct sfs_meta_pick {
    sfs_meta_chooser_t *chooser;
    const sfs_config_t *config; /* its mirror groups */
    uint32_t            asked;
    int                 picked;
    uint32_t            candidates; /* targets of the file's pool (the cluster's: none) */
} sfs_meta_pick_t;

static int sfs_meta_choose_noted(void *arg, uint32_t pool, uint32_t count, uint32_t start_target,
                                 uint32_t *targets)
{
    sfs_meta_pick_t *pick = arg;

    pick->asked  = count;
    pick->picked = sfs_meta_pool_choose(pick->chooser, pick->config, pool, count, start_target,
                                        targets, &pick->candidates);
    return pick->picked;
}

/* A mirrored file's targets: the members serving mirror groups now, as
 * the map says (each chunk's copy goes to the other member), in the
 * chooser's order; a group whose serving member is not good is skipped. */
static int sfs_meta_choose_primaries(void *arg, uint32_t pool, uint32_t count,
                                     uint32_t start_target, uint32_t *targets)
{
    sfs_meta_pick_t    *pick   = arg;
    const sfs_config_t *config = pick->config;
    uint32_t           *all;
    uint32_t            total, usable, n = 0;
    int                 got;

    /* a pattern wider than the groups is by design, not for a warning */
    pick->asked = count < config->mirror_group_count ? count : config->mirror_group_count;
    if (config->mirror_group_count == 0) {
        return pick->picked = sfs_error_set(-EINVAL,
                                            "no mirror groups in the config (%s): "
                                            "mirrored files need mirror.groups",
                                            config->path[0] ? config->path : "generated");
    }
    sfs_meta_chooser_counts(pick->chooser, &total, &usable);
    all = calloc(total ? total : 1, sizeof(*all));
    if (!all) {
        return pick->picked = sfs_error_set(-ENOMEM, "out of memory choosing targets");
    }
    {
        const sfs_config_mirror_group_t *start = sfs_config_mirror_group_of(config, start_target);

        /* a group's members are in one pool (the config's rule) */
        got = sfs_meta_pool_choose(
            pick->chooser, config, pool, total,
            start ? sfs_meta_chooser_mirror_primary(pick->chooser, start->primary) : 0, all, NULL);
    }
    for (int i = 0; i < got && n < count; i++) {
        const sfs_config_mirror_group_t *group = sfs_config_mirror_group_of(config, all[i]);

        /* the member serving the group now (a promoted secondary too) */
        if (group && sfs_meta_chooser_mirror_primary(pick->chooser, group->primary) == all[i]) {
            targets[n++] = all[i];
        }
    }
    free(all);
    if (got < 0) {
        return pick->picked = got;
    }
    if (n == 0) {
        return pick->picked = sfs_error_set(-EHOSTDOWN, "no mirror group has its primary online "
                                                        "and not full");
    }
    return pick->picked = (int)n;
}

/* One warning a second at most (a create storm with a target down would
 * log every file), counting the ones not logged. Metadata thread only. */
static void sfs_meta_warn_fewer(sfs_meta_t *meta, const char *path, const sfs_meta_pick_t *pick)
{
    static uint64_t last_ms, unsaid;
    uint64_t        now = sfs_time_ms();
    uint32_t        total, usable;

    sfs_meta_chooser_counts(&meta->chooser, &total, &usable);
    if (pick->picked < 0 || (uint32_t)pick->picked >= pick->asked ||
        (uint32_t)pick->picked >= total || (uint32_t)pick->picked >= pick->candidates) {
        return; /* as asked, or a pattern wider than the cluster or the pool (by design) */
    }
    if (last_ms && now - last_ms < 1000) {
        unsaid++;
        return;
    }
    sfs_warn("'%s': created with %d storage target%s, its pattern asks %u: only %u of the "
             "cluster's %u targets are online and not full (%" PRIu64 " more such creates since "
             "the last warning)",
             path, pick->picked, pick->picked == 1 ? "" : "s", pick->asked, usable, total, unsaid);
    last_ms = now;
    unsaid  = 0;
}

/* SETPATTERN --pool NAME: the directory's new entries take that pool
 * ("none": no pool); its owner's right was checked by sfs_ns_setpattern. */
static int sfs_meta_set_pool(sfs_meta_t *meta, sfs_meta_txn_t *txn, const sfs_meta_req_t *a,
                             sfs_attr_t *attr)
{
    uint32_t pool;
    int      rc = sfs_meta_pool_resolve(&meta->pools.view, a->path, a->pool, &pool);

    if (rc) {
        return rc;
    }
    attr->pool = pool;
    return sfs_meta_put_inode(txn, attr);
}

/* The permission an open's SFS_OPEN_* flags need. */
/* A write registration's life (SIZE BEGIN, CREATE with SFS_CREATE_WRITER):
 * a write capability lives this long, and a target whose clock is behind
 * ours takes it a little longer. */
static uint64_t sfs_meta_write_lease_s(const sfs_meta_t *meta)
{
    return meta->service->config->capability_lifetime_ms / 1000 + 10;
}

static unsigned sfs_meta_want(uint32_t flags)
{
    return ((flags & SFS_OPEN_READ) ? SFS_MAY_READ : 0) |
           ((flags & SFS_OPEN_WRITE) ? SFS_MAY_WRITE : 0) |
           ((flags & SFS_OPEN_EXEC) ? SFS_MAY_EXEC : 0);
}

/* SETPATTERN --mirror / --no-mirror: the directory's new files are (not)
 * mirrored; its owner's right was checked by sfs_ns_setpattern. */
static int sfs_meta_set_mirror(sfs_meta_t *meta, sfs_meta_txn_t *txn, const sfs_meta_req_t *a,
                               sfs_attr_t *attr)
{
    if ((a->flags & SFS_PATTERN_REQ_MIRROR) && (a->flags & SFS_PATTERN_REQ_NO_MIRROR)) {
        return sfs_error_set(-EINVAL, "'%.200s': --mirror and --no-mirror together", a->path);
    }
    if ((a->flags & SFS_PATTERN_REQ_MIRROR) && meta->service->config->mirror_group_count == 0) {
        return sfs_error_set(-EINVAL,
                             "'%.200s': no mirror groups in the config (%s): mirrored files "
                             "need mirror.groups",
                             a->path, meta->service->config->path);
    }
    attr->pattern.type =
        (a->flags & SFS_PATTERN_REQ_MIRROR) ? SFS_PATTERN_MIRROR : SFS_PATTERN_RAID0;
    return sfs_meta_put_inode(txn, attr);
}

void sfs_meta_run_op(sfs_meta_t *meta, sfs_meta_txn_t *txn, sfs_meta_op_t *op, uint64_t now)
{
    sfs_meta_req_t *a = &op->args;

    switch (op->opcode) {
    case SFS_OP_LOOKUP:
        op->status = sfs_ns_lookup(txn, &op->cred, a->path, sfs_meta_want(a->flags), &op->attr);
        break;
    case SFS_OP_STAT:
        if (a->flags & SFS_STAT_ENTRIES) {
            uint32_t      max     = a->max_entries && a->max_entries < SFS_META_STAT_PAGE_MAX
                                        ? a->max_entries
                                        : SFS_META_STAT_PAGE_MAX;
            sfs_dirent_t *scratch = calloc(max, sizeof(*scratch));

            op->list_data = calloc(max, sizeof(sfs_dirent_plus_t));
            op->status =
                op->list_data && scratch
                    ? sfs_ns_readdir_plus(txn, &op->cred, a->path, a->after_name, max, now,
                                          &op->attr, op->list_data, scratch, &op->count, &op->eof)
                    : -ENOMEM;
            free(scratch);
        } else {
            op->status = sfs_ns_lookup(txn, &op->cred, a->path, 0, &op->attr);
        }
        op->stored = op->status == 0 && sfs_ns_size_valid(&op->attr, now);
        if (op->status == 0 && !op->stored && op->attr.writers > 0 &&
            now / 1000000000u < op->attr.write_until_s) {
            op->stored = 2; /* a writer is registered: SFS_STAT_SIZE_WRITING */
        }
        break;
    case SFS_OP_SIZE:
        op->status = sfs_ns_size(txn, &op->cred, &op->size, now, sfs_meta_write_lease_s(meta),
                                 &op->attr, &op->size_reply);
        break;
    case SFS_OP_CREATE: {
        sfs_meta_pick_t      pick   = {.chooser = &meta->chooser,
                                       .config  = &meta->pools.view,
                                       .picked  = -1,
                                       .candidates =
                                           UINT32_MAX}; /* a mirrored file's: the groups decide */
        sfs_ns_create_args_t create = {
            .cred       = &op->cred,
            .want       = sfs_meta_want(a->flags),
            .path       = a->path,
            .mode       = a->mode,
            .uid        = a->uid,
            .gid        = a->gid,
            .flags      = a->flags & (SFS_CREATE_EXCL | SFS_CREATE_WRITER | SFS_PATTERN_REQ_MIRROR |
                                 SFS_PATTERN_REQ_NO_MIRROR | SFS_PATTERN_REQ_POOL),
            .lease_s    = sfs_meta_write_lease_s(meta),
            .chunk_size = a->chunk_size,
            .stripe_count  = a->stripe_count,
            .start_target  = a->start_target,
            .now_ns        = now,
            .choose        = sfs_meta_choose_noted,
            .choose_mirror = sfs_meta_choose_primaries,
            .choose_arg    = &pick,
        };

        /* a create that names a pool (the MPI-IO hint stripefs_pool) */
        op->status = (a->flags & SFS_PATTERN_REQ_POOL)
                         ? sfs_meta_pool_resolve(&meta->pools.view, a->path, a->pool, &create.pool)
                         : 0;
        if (op->status == 0) {
            op->status = sfs_ns_create(txn, &create, &op->attr, &op->created);
        }
        if (op->status == 0 && op->created) {
            sfs_meta_warn_fewer(meta, a->path, &pick);
        }
        break;
    }
    case SFS_OP_MKDIR:
        op->status = sfs_ns_mkdir(txn, &op->cred, a->path, a->mode, a->uid, a->gid, now, &op->attr);
        break;
    case SFS_OP_RMDIR:
        op->status = sfs_ns_rmdir(txn, &op->cred, a->path, now);
        break;
    case SFS_OP_UNLINK:
        op->status = sfs_ns_unlink(txn, &op->cred, a->path, now, &op->attr);
        break;
    case SFS_OP_RENAME:
        op->status = sfs_ns_rename(txn, &op->cred, a->path, a->new_path, now);
        break;
    case SFS_OP_READDIR: {
        uint32_t max = a->max_entries && a->max_entries < SFS_META_READDIR_MAX
                           ? a->max_entries
                           : SFS_META_READDIR_MAX;

        op->list_data = calloc(max, sizeof(sfs_dirent_t));
        op->status    = op->list_data ? sfs_ns_readdir(txn, &op->cred, a->path, a->after_name, max,
                                                       op->list_data, &op->count, &op->eof)
                                      : -ENOMEM;
        break;
    }
    case SFS_OP_SETPATTERN:
        op->status = sfs_ns_setpattern(txn, &op->cred, a->path, a->chunk_size, a->stripe_count, now,
                                       &op->attr);
        if (op->status == 0 && (a->flags & (SFS_PATTERN_REQ_MIRROR | SFS_PATTERN_REQ_NO_MIRROR))) {
            op->status = sfs_meta_set_mirror(meta, txn, a, &op->attr);
        }
        if (op->status == 0 && (a->flags & SFS_PATTERN_REQ_POOL)) {
            op->status = sfs_meta_set_pool(meta, txn, a, &op->attr);
        }
        break;
    case SFS_OP_POOL_GET: {
        const char *name;

        op->status = sfs_ns_lookup(txn, &op->cred, a->path, 0, &op->attr);
        name       = sfs_config_pool_name(&meta->pools.view, op->attr.pool);
        snprintf(a->pool, sizeof(a->pool), "%s", name ? name : "?"); /* for the reply */
        break;
    }
    case SFS_OP_POOL_SET:
    case SFS_OP_POOL_SHOW:
        op->status = sfs_meta_pool_run(meta, txn, op);
        break;
    case SFS_OP_SETATTR:
        op->status = sfs_ns_setattr(txn, &op->cred, a->path, a->flags, a->mode, a->uid, a->gid,
                                    a->atime_ns, a->mtime_ns, now, &op->attr);
        break;
    case SFS_OP_META_STATFS:
        op->status = sfs_ns_statfs(txn, &op->stats);
        break;
    case SFS_OP_META_LIST: {
        uint64_t after = a->after_id;
        uint32_t max   = a->max_entries && a->max_entries < SFS_META_LIST_MAX ? a->max_entries
                                                                              : SFS_META_LIST_MAX;

        op->list_data = calloc(max, sizeof(sfs_attr_t));
        op->status = op->list_data ? sfs_ns_list_inodes(txn, after, max, op->list_data, &op->count)
                                   : -ENOMEM;
        op->eof    = op->count < max;
        break;
    }
    case SFS_OP_META_CHECK:
        op->status = sfs_ns_check(txn, (a->flags & SFS_CHECK_REPAIR) != 0, sfs_meta_check_line, op,
                                  &op->check);
        if (op->status == 0) {
            sfs_info("namespace check%s: %lu inodes, %lu names, %lu problems, %lu repaired",
                     (a->flags & SFS_CHECK_REPAIR) ? " with repair" : "",
                     (unsigned long)op->check.inodes, (unsigned long)op->check.dentries,
                     (unsigned long)op->check.problems, (unsigned long)op->check.repaired);
        }
        break;
    case SFS_OP_META_PENDING: {
        uint64_t       after = a->after_id;
        uint32_t       max   = a->max_entries && a->max_entries < SFS_META_LIST_MAX ? a->max_entries
                                                                                    : SFS_META_LIST_MAX;
        sfs_pattern_t *patterns = calloc(max, sizeof(*patterns));

        op->list_data = calloc(max, sizeof(uint64_t));
        op->status =
            op->list_data && patterns
                ? sfs_ns_pending_deletes(txn, after, max, 0, op->list_data, patterns, &op->count)
                : -ENOMEM;
        op->eof = op->count < max;
        free(patterns);
        break;
    }
    case SFS_META_OP_DELETES_DONE:
        op->status = sfs_ns_deletes_done(txn, op->ids, op->id_count);
        break;
    case SFS_META_OP_FLUSH:
        op->status = 0;
        break;
    case SFS_OP_QUOTA_SET:
    case SFS_OP_QUOTA_GET:
    case SFS_OP_QUOTA_GROW:
        op->status = sfs_meta_quota_run(txn, op);
        break;
    case SFS_OP_MIGRATE_BEGIN:
    case SFS_OP_MIGRATE_COMMIT:
        op->status = sfs_meta_migrate_run(txn, op, now);
        break;
    case SFS_OP_MIGRATE_DRAIN:
        op->status = sfs_meta_drain_run(txn, op);
        break;
    default:
        op->status = sfs_error_set(-EOPNOTSUPP, "metadata: operation %u", op->opcode);
        break;
    }
    if (op->status == 0 && (op->opcode == SFS_OP_LOOKUP || op->opcode == SFS_OP_CREATE)) {
        op->status = sfs_meta_quota_open_bound(txn, op); /* SFS_CAP_BOUNDED */
    }
    if (op->status) {
        snprintf(op->detail, sizeof(op->detail), "%s",
                 sfs_error_detail()[0] ? sfs_error_detail() : sfs_strerror(op->status));
    }
}
