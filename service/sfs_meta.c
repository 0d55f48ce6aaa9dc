/*
 * The metadata role. Requests are decoded on the progress thread and queued
 * for the metadata thread, which takes everything queued as one batch, runs
 * each operation in a nested transaction of one write transaction, commits
 * once (one fsync for the whole batch: group commit) and only then hands the
 * replies back. An acknowledged operation is therefore on disk.
 *
 * It also picks the targets of new files (weighted by free space, spread by
 * smooth weighted round-robin) and deletes the chunk files of removed files
 * in the background.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_service.h"

#include "sfs_alloc.h"
#include "sfs_cap.h"
#include "sfs_errno.h"
#include "sfs_hash.h"
#include "sfs_list.h"
#include "sfs_log.h"
#include "sfs_meta_store.h"
#include "sfs_perm.h"
#include "sfs_time.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define SFS_META_BATCH_MAX       1024
#define SFS_META_READDIR_MAX     4096
#define SFS_META_LIST_MAX        1024
#define SFS_META_DELETE_BATCH    256
#define SFS_META_DELETE_RETRY_MS 5000
#define SFS_META_OP_FLUSH        1000 /* internal opcodes */
#define SFS_META_OP_DELETES_DONE 1001

typedef struct sfs_meta_op {
    sfs_list_t           list;
    sfs_tp_request_t    *req;
    uint32_t             opcode;
    sfs_cred_t           cred; /* the caller's, proven in its session */
    sfs_meta_req_t       args;
    int                  status;
    char                 detail[SFS_ERROR_DETAIL_MAX];
    sfs_attr_t           attr;
    int                  created;
    void                *list_data; /* READDIR entries / META_LIST attrs */
    uint32_t             count;
    int                  eof;
    sfs_meta_statfs_t    stats;
    uint64_t            *ids; /* DELETES_DONE */
    uint32_t             id_count;
    sfs_ns_check_stats_t check;       /* META_CHECK */
    size_t               list_length; /* bytes used in list_data (META_CHECK lines) */
    size_t               list_capacity;
    int                  flushed; /* FLUSH: set by the metadata thread */
} sfs_meta_op_t;

/* An open file's shared counter: kept in memory, on the progress thread
 * (atomic because one thread serves them all). */
typedef struct sfs_meta_counter {
    sfs_hash_link_t link;
    sfs_list_t      lru;
    uint64_t        value;
} sfs_meta_counter_t;

#define SFS_META_COUNTERS_MAX 100000 /* forgotten opens are dropped, oldest first */

typedef struct sfs_meta_target {
    uint32_t id;
    uint64_t weight;
    int64_t  current;
} sfs_meta_target_t;

typedef struct sfs_meta_delete {
    uint64_t      entry_id;
    sfs_pattern_t pattern;
    int           failed;
} sfs_meta_delete_t;

typedef struct sfs_meta_delete_rpc {
    sfs_tp_rpc_t *rpc;
    uint32_t      target_id;
    uint8_t       args[16 + 8 * SFS_META_DELETE_BATCH];
    uint64_t      ids[SFS_META_DELETE_BATCH];
    uint32_t      id_count;
} sfs_meta_delete_rpc_t;

struct sfs_meta {
    sfs_service_t    *service;
    sfs_meta_store_t *store;
    pthread_t         thread;
    int               thread_started;
    pthread_mutex_t   lock;
    pthread_cond_t    cond;
    pthread_cond_t    flushed;
    sfs_list_t        queue;
    int               stopping;
    uint64_t          in_flight; /* progress thread only */

    pthread_mutex_t    targets_lock;
    sfs_meta_target_t *targets;
    uint32_t           target_count;
    uint64_t           next_refresh_ms;
    uint64_t           files_chosen; /* for rotating the first target */

    sfs_meta_delete_t     *deletes;
    uint32_t               delete_count;
    sfs_meta_delete_rpc_t *delete_rpcs;
    uint32_t               delete_rpc_count;
    uint64_t               next_delete_ms;

    uint64_t batches;
    uint64_t ops;
    uint32_t largest_batch;

    sfs_hash_t counters;
    sfs_list_t counter_lru;
};

static int sfs_meta_is_write(const sfs_meta_op_t *op)
{
    if (op->opcode == SFS_OP_META_CHECK) {
        return (op->args.flags & SFS_CHECK_REPAIR) != 0;
    }
    switch (op->opcode) {
    case SFS_OP_CREATE:
    case SFS_OP_MKDIR:
    case SFS_OP_RMDIR:
    case SFS_OP_UNLINK:
    case SFS_OP_RENAME:
    case SFS_OP_SETPATTERN:
    case SFS_OP_SETATTR:
    case SFS_META_OP_DELETES_DONE:
        return 1;
    default:
        return 0;
    }
}

/* ---------------------------------------------------------------------- */
/* Target chooser (runs on the metadata thread)                             */

static int sfs_meta_choose(void *arg, uint32_t count, uint32_t start_target, uint32_t *targets)
{
    sfs_meta_t *meta   = arg;
    uint32_t    picked = 0;
    int64_t     total  = 0;

    pthread_mutex_lock(&meta->targets_lock);
    for (uint32_t i = 0; i < meta->target_count; i++) {
        total += (int64_t)meta->targets[i].weight;
    }
    if (meta->target_count == 0 || total == 0) {
        pthread_mutex_unlock(&meta->targets_lock);
        return sfs_error_set(meta->target_count ? -ENOSPC : -EHOSTDOWN,
                             meta->target_count ? "every storage target is full"
                                                : "no storage target is online");
    }
    if (count > meta->target_count) {
        count = meta->target_count; /* as many as there are, like BeeGFS */
    }
    if (start_target) {
        for (uint32_t i = 0; i < meta->target_count; i++) {
            if (meta->targets[i].id == start_target && meta->targets[i].weight) {
                targets[picked++] = start_target;
            }
        }
    }
    /* smooth weighted round-robin: over many files each target gets a share
     * in proportion to its free space, and consecutive files start on
     * different targets */
    while (picked < count) {
        sfs_meta_target_t *best = NULL;

        for (uint32_t i = 0; i < meta->target_count; i++) {
            sfs_meta_target_t *t     = &meta->targets[i];
            int                taken = 0;

            if (!t->weight) {
                continue;
            }
            t->current += (int64_t)t->weight;
            for (uint32_t j = 0; j < picked; j++) {
                taken |= targets[j] == t->id;
            }
            if (!taken && (!best || t->current > best->current)) {
                best = t;
            }
        }
        if (!best) {
            break; /* fewer usable targets than asked for */
        }
        best->current -= total;
        targets[picked++] = best->id;
    }
    /* when a file takes every target the weights pick the same order each
     * time: rotate it, so that small files (one chunk) spread over all
     * targets instead of all landing on the first one */
    if (!start_target && picked > 1) {
        uint32_t shift = (uint32_t)(meta->files_chosen++ % picked);
        uint32_t rotated[SFS_STRIPE_COUNT_MAX];

        for (uint32_t i = 0; i < picked; i++) {
            rotated[i] = targets[(i + shift) % picked];
        }
        memcpy(targets, rotated, picked * sizeof(*targets));
    }
    pthread_mutex_unlock(&meta->targets_lock);
    return (int)picked;
}

static void sfs_meta_refresh_targets(sfs_meta_t *meta)
{
    const sfs_map_t   *map;
    sfs_meta_target_t *fresh;
    uint32_t           n = 0;

    if (!meta->service->cluster || sfs_cluster_refresh_map(meta->service->cluster) != 0) {
        return;
    }
    map = sfs_cluster_map(meta->service->cluster);
    if (!SFS_ALLOC_ARRAY(fresh, map->target_count)) {
        return;
    }
    for (uint32_t i = 0; i < map->target_count; i++) {
        const sfs_map_target_t *t = &map->targets[i];

        if (t->state != SFS_STATE_ONLINE) {
            continue;
        }
        fresh[n].id = t->target_id;
        /* weight by free space in MiB; a full target gets none */
        fresh[n].weight = t->free >> 20;
        pthread_mutex_lock(&meta->targets_lock);
        for (uint32_t j = 0; j < meta->target_count; j++) {
            if (meta->targets[j].id == t->target_id) {
                fresh[n].current = meta->targets[j].current;
            }
        }
        pthread_mutex_unlock(&meta->targets_lock);
        n++;
    }
    pthread_mutex_lock(&meta->targets_lock);
    free(meta->targets);
    meta->targets      = fresh;
    meta->target_count = n;
    pthread_mutex_unlock(&meta->targets_lock);
}

/* ---------------------------------------------------------------------- */
/* The metadata thread                                                      */

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

/* The permission an open's SFS_OPEN_* flags need. */
static unsigned sfs_meta_want(uint32_t flags)
{
    return ((flags & SFS_OPEN_READ) ? SFS_MAY_READ : 0) |
           ((flags & SFS_OPEN_WRITE) ? SFS_MAY_WRITE : 0) |
           ((flags & SFS_OPEN_EXEC) ? SFS_MAY_EXEC : 0);
}

static void sfs_meta_run_op(sfs_meta_t *meta, sfs_meta_txn_t *txn, sfs_meta_op_t *op, uint64_t now)
{
    sfs_meta_req_t *a = &op->args;

    switch (op->opcode) {
    case SFS_OP_LOOKUP:
        op->status = sfs_ns_lookup(txn, &op->cred, a->path, sfs_meta_want(a->flags), &op->attr);
        break;
    case SFS_OP_CREATE: {
        sfs_ns_create_args_t create = {
            .cred         = &op->cred,
            .want         = sfs_meta_want(a->flags),
            .path         = a->path,
            .mode         = a->mode,
            .uid          = a->uid,
            .gid          = a->gid,
            .flags        = a->flags & SFS_CREATE_EXCL,
            .chunk_size   = a->chunk_size,
            .stripe_count = a->stripe_count,
            .start_target = a->start_target,
            .now_ns       = now,
            .choose       = sfs_meta_choose,
            .choose_arg   = meta,
        };

        op->status = sfs_ns_create(txn, &create, &op->attr, &op->created);
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
        op->status = sfs_ns_rename(txn, &op->cred, a->path, a->path2, now);
        break;
    case SFS_OP_READDIR: {
        uint32_t max = a->max_entries && a->max_entries < SFS_META_READDIR_MAX
                           ? a->max_entries
                           : SFS_META_READDIR_MAX;

        op->list_data = calloc(max, sizeof(sfs_dirent_t));
        op->status    = op->list_data ? sfs_ns_readdir(txn, &op->cred, a->path, a->path2, max,
                                                       op->list_data, &op->count, &op->eof)
                                      : -ENOMEM;
        break;
    }
    case SFS_OP_SETPATTERN:
        op->status = sfs_ns_setpattern(txn, &op->cred, a->path, a->chunk_size, a->stripe_count, now,
                                       &op->attr);
        break;
    case SFS_OP_SETATTR:
        op->status = sfs_ns_setattr(txn, &op->cred, a->path, a->flags, a->mode, a->uid, a->gid,
                                    a->atime_ns, a->mtime_ns, now, &op->attr);
        break;
    case SFS_OP_META_STATFS:
        op->status = sfs_ns_statfs(txn, &op->stats);
        break;
    case SFS_OP_META_LIST: {
        uint64_t after = 0;
        uint32_t max   = a->max_entries && a->max_entries < SFS_META_LIST_MAX ? a->max_entries
                                                                              : SFS_META_LIST_MAX;

        sscanf(a->path2, "%" SCNu64, &after);
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
        uint64_t       after = 0;
        uint32_t       max   = a->max_entries && a->max_entries < SFS_META_LIST_MAX ? a->max_entries
                                                                                    : SFS_META_LIST_MAX;
        sfs_pattern_t *patterns = calloc(max, sizeof(*patterns));

        sscanf(a->path2, "%" SCNu64, &after);
        op->list_data = calloc(max, sizeof(uint64_t));
        op->status =
            op->list_data && patterns
                ? sfs_ns_pending_deletes(txn, after, max, op->list_data, patterns, &op->count)
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
    default:
        op->status = sfs_error_set(-EOPNOTSUPP, "metadata: operation %u", op->opcode);
        break;
    }
    if (op->status) {
        snprintf(op->detail, sizeof(op->detail), "%s",
                 sfs_error_detail()[0] ? sfs_error_detail() : sfs_strerror(op->status));
    }
}

typedef struct sfs_meta_batch {
    sfs_meta_t *meta;
    sfs_list_t  ops;
} sfs_meta_batch_t;

static void sfs_meta_batch_done(void *arg);

static void sfs_meta_process(sfs_meta_t *meta, sfs_list_t *ops, uint32_t n)
{
    sfs_meta_txn_t   *txn   = NULL;
    sfs_meta_batch_t *batch = malloc(sizeof(*batch));
    sfs_list_t       *elem, *tmp;
    uint64_t          now       = sfs_wall_ns();
    int               any_write = 0, rc;

    sfs_list_for_each_safe(elem, tmp, ops)
    {
        any_write |= sfs_meta_is_write(sfs_container_of(elem, sfs_meta_op_t, list));
    }
    sfs_error_clear();
    rc = sfs_meta_txn_begin(meta->store, any_write, &txn);
    sfs_list_for_each_safe(elem, tmp, ops)
    {
        sfs_meta_op_t  *op = sfs_container_of(elem, sfs_meta_op_t, list);
        sfs_meta_txn_t *nested;

        sfs_error_clear();
        if (rc) {
            op->status = rc;
            snprintf(op->detail, sizeof(op->detail), "%s", sfs_error_detail());
            continue;
        }
        if (!sfs_meta_is_write(op)) {
            sfs_meta_run_op(meta, txn, op, now);
            continue;
        }
        op->status = sfs_meta_txn_begin_nested(txn, &nested);
        if (op->status) {
            snprintf(op->detail, sizeof(op->detail), "%s", sfs_error_detail());
            continue;
        }
        sfs_meta_run_op(meta, nested, op, now);
        if (op->status) {
            sfs_meta_txn_abort(nested);
        } else if ((op->status = sfs_meta_txn_commit(nested)) != 0) {
            snprintf(op->detail, sizeof(op->detail), "%s", sfs_error_detail());
        }
    }
    if (txn) {
        if (any_write) {
            /* the one durable commit of the batch */
            int commit = sfs_meta_txn_commit(txn);

            if (commit) {
                sfs_error("commit of a batch of %u operations failed: %s", n, sfs_error_detail());
                sfs_list_for_each_safe(elem, tmp, ops)
                {
                    sfs_meta_op_t *op = sfs_container_of(elem, sfs_meta_op_t, list);

                    if (op->status == 0) {
                        op->status = commit;
                        snprintf(op->detail, sizeof(op->detail), "metadata commit failed: %s",
                                 sfs_strerror(commit));
                    }
                }
            }
        } else {
            sfs_meta_txn_abort(txn);
        }
    }
    pthread_mutex_lock(&meta->lock);
    meta->batches++;
    meta->ops += n;
    if (n > meta->largest_batch) {
        meta->largest_batch = n;
    }
    /* flushes are waited for by a blocked caller, not replied to */
    sfs_list_for_each_safe(elem, tmp, ops)
    {
        sfs_meta_op_t *op = sfs_container_of(elem, sfs_meta_op_t, list);

        if (op->opcode == SFS_META_OP_FLUSH) {
            sfs_list_del(&op->list);
            op->flushed = 1;
        }
    }
    pthread_cond_broadcast(&meta->flushed);
    pthread_mutex_unlock(&meta->lock);
    if (sfs_list_is_empty(ops)) {
        free(batch);
        return;
    }
    if (!batch) {
        sfs_fatal("out of memory handing back %u metadata replies", n);
        return;
    }
    batch->meta = meta;
    sfs_list_init(&batch->ops);
    sfs_list_splice_tail(&batch->ops, ops);
    if (sfs_tp_worker_post(meta->service->worker, sfs_meta_batch_done, batch) != 0) {
        sfs_fatal("cannot hand metadata replies back: out of memory");
    }
}

static void *sfs_meta_thread(void *arg)
{
    sfs_meta_t *meta = arg;

    for (;;) {
        sfs_list_t ops;
        uint32_t   n = 0;

        sfs_list_init(&ops);
        pthread_mutex_lock(&meta->lock);
        while (sfs_list_is_empty(&meta->queue) && !meta->stopping) {
            pthread_cond_wait(&meta->cond, &meta->lock);
        }
        if (sfs_list_is_empty(&meta->queue) && meta->stopping) {
            pthread_mutex_unlock(&meta->lock);
            return NULL;
        }
        while (n < SFS_META_BATCH_MAX) {
            sfs_list_t *elem = sfs_list_pop_head(&meta->queue);

            if (!elem) {
                break;
            }
            sfs_list_add_tail(&ops, elem);
            n++;
        }
        pthread_mutex_unlock(&meta->lock);
        sfs_meta_process(meta, &ops, n);
    }
}

static void sfs_meta_enqueue(sfs_meta_t *meta, sfs_meta_op_t *op)
{
    pthread_mutex_lock(&meta->lock);
    sfs_list_add_tail(&meta->queue, &op->list);
    pthread_cond_signal(&meta->cond);
    pthread_mutex_unlock(&meta->lock);
}

/* ---------------------------------------------------------------------- */
/* Replies (progress thread)                                                */

static void sfs_meta_free_op(sfs_meta_op_t *op)
{
    free(op->list_data);
    free(op->ids);
    free(op);
}

static void sfs_meta_release_op(void *arg)
{
    sfs_meta_free_op(arg);
}

/* A file looked up or created gets a capability for its storage targets,
 * granting what was checked: read and/or write for an open (SFS_OPEN_*),
 * only its chunk lengths (its size) otherwise (sfs_cap.h). */
static void sfs_meta_pack_cap(sfs_meta_t *meta, const sfs_meta_op_t *op, sfs_wbuf_t *wb)
{
    uint32_t  lifetime_s = meta->service->config->capability_lifetime_ms / 1000;
    sfs_cap_t cap;

    if (op->attr.type != SFS_TYPE_FILE) {
        return;
    }
    memset(&cap, 0, sizeof(cap));
    cap.entry_id = op->attr.entry_id;
    cap.access   = ((op->args.flags & SFS_OPEN_READ) ? SFS_CAP_READ : 0) |
                 ((op->args.flags & SFS_OPEN_WRITE) ? SFS_CAP_WRITE : 0);
    cap.uid       = op->cred.uid;
    cap.expires_s = sfs_wall_ns() / 1000000000u + (lifetime_s ? lifetime_s : 1);
    sfs_cap_seal(&meta->service->cap_key, &cap);
    sfs_cap_pack(wb, &cap);
}

static void sfs_meta_reply(sfs_meta_t *meta, sfs_meta_op_t *op)
{
    uint8_t      args[SFS_PROTO_ARGS_MAX];
    sfs_wbuf_t   wb;
    struct iovec iov;

    if (!op->req) { /* internal */
        if (op->status) {
            sfs_warn("internal metadata operation failed: %s", op->detail);
        }
        sfs_meta_free_op(op);
        return;
    }
    if (op->status) {
        sfs_tp_request_reply_error(op->req, op->status, "%s", op->detail);
        sfs_meta_free_op(op);
        return;
    }
    sfs_wbuf_init(&wb, args, sizeof(args));
    switch (op->opcode) {
    case SFS_OP_LOOKUP:
        sfs_proto_attr_pack(&wb, &op->attr);
        sfs_meta_pack_cap(meta, op, &wb);
        break;
    case SFS_OP_MKDIR:
    case SFS_OP_UNLINK:
    case SFS_OP_SETPATTERN:
    case SFS_OP_SETATTR:
        sfs_proto_attr_pack(&wb, &op->attr);
        break;
    case SFS_OP_CREATE:
        sfs_proto_attr_pack(&wb, &op->attr);
        sfs_wbuf_u8(&wb, (uint8_t)op->created);
        sfs_meta_pack_cap(meta, op, &wb);
        break;
    case SFS_OP_META_STATFS:
        sfs_wbuf_u64(&wb, op->stats.files);
        sfs_wbuf_u64(&wb, op->stats.dirs);
        sfs_wbuf_u64(&wb, op->stats.pending_chunk_deletes);
        break;
    case SFS_OP_META_CHECK:
        sfs_wbuf_u64(&wb, op->check.inodes);
        sfs_wbuf_u64(&wb, op->check.dentries);
        sfs_wbuf_u64(&wb, op->check.problems);
        sfs_wbuf_u64(&wb, op->check.repaired);
        sfs_wbuf_u32(&wb, op->count);
        iov.iov_base = op->list_data;
        iov.iov_len  = op->list_length;
        sfs_tp_request_reply(op->req, 0, args, wb.length, &iov, 1, sfs_meta_release_op, op);
        return;
    case SFS_OP_META_PENDING: {
        uint8_t   *buf = malloc((size_t)op->count * 8 + 1);
        sfs_wbuf_t pb;

        if (!buf) {
            sfs_tp_request_reply_error(op->req, -ENOMEM, "out of memory");
            sfs_meta_free_op(op);
            return;
        }
        sfs_wbuf_init(&pb, buf, (size_t)op->count * 8);
        for (uint32_t i = 0; i < op->count; i++) {
            sfs_wbuf_u64(&pb, ((uint64_t *)op->list_data)[i]);
        }
        free(op->list_data);
        op->list_data = buf;
        sfs_wbuf_u32(&wb, op->count);
        sfs_wbuf_u8(&wb, (uint8_t)op->eof);
        iov.iov_base = buf;
        iov.iov_len  = pb.length;
        sfs_tp_request_reply(op->req, 0, args, wb.length, &iov, 1, sfs_meta_release_op, op);
        return;
    }
    case SFS_OP_READDIR:
    case SFS_OP_META_LIST: {
        size_t     per = op->opcode == SFS_OP_READDIR ? (2 + SFS_NAME_MAX + 12)
                                                      : (128 + 4 * SFS_STRIPE_COUNT_MAX);
        size_t     cap = per * op->count + 1;
        uint8_t   *buf = malloc(cap);
        sfs_wbuf_t pb;

        if (!buf) {
            sfs_tp_request_reply_error(op->req, -ENOMEM, "out of memory");
            sfs_meta_free_op(op);
            return;
        }
        sfs_wbuf_init(&pb, buf, cap);
        for (uint32_t i = 0; i < op->count; i++) {
            if (op->opcode == SFS_OP_READDIR) {
                sfs_proto_dirent_pack(&pb, &((sfs_dirent_t *)op->list_data)[i]);
            } else {
                sfs_proto_attr_pack(&pb, &((sfs_attr_t *)op->list_data)[i]);
            }
        }
        free(op->list_data);
        op->list_data = buf;
        sfs_wbuf_u32(&wb, op->count);
        sfs_wbuf_u8(&wb, (uint8_t)op->eof);
        iov.iov_base = buf;
        iov.iov_len  = pb.length;
        sfs_tp_request_reply(op->req, 0, args, wb.length, &iov, 1, sfs_meta_release_op, op);
        return;
    }
    default:
        break;
    }
    (void)meta;
    sfs_tp_request_reply(op->req, 0, args, wb.length, NULL, 0, NULL, NULL);
    sfs_meta_free_op(op);
}

static void sfs_meta_batch_done(void *arg)
{
    sfs_meta_batch_t *batch = arg;
    sfs_list_t       *elem;

    while ((elem = sfs_list_pop_head(&batch->ops)) != NULL) {
        sfs_meta_op_t *op = sfs_container_of(elem, sfs_meta_op_t, list);

        if (op->req) {
            batch->meta->in_flight--;
        }
        sfs_meta_reply(batch->meta, op);
    }
    free(batch);
}

static void sfs_meta_counter(sfs_meta_t *meta, sfs_tp_request_t *req)
{
    const void         *args;
    size_t              length;
    sfs_rbuf_t          rb;
    sfs_counter_req_t   creq;
    uint64_t            before = 0;
    sfs_hash_link_t    *link;
    sfs_meta_counter_t *counter = NULL;
    uint8_t             out[8];
    sfs_wbuf_t          wb;

    args = sfs_tp_request_args(req, &length);
    sfs_rbuf_init(&rb, args, length);
    sfs_proto_counter_req_unpack(&rb, &creq);
    if (rb.error || sfs_rbuf_remaining(&rb)) {
        sfs_tp_request_reply_error(req, -EBADMSG, "malformed COUNTER request");
        return;
    }
    link = sfs_hash_find(&meta->counters, creq.key);
    if (link) {
        counter = sfs_container_of(link, sfs_meta_counter_t, link);
        before  = counter->value;
        sfs_list_del(&counter->lru);
        sfs_list_add_tail(&meta->counter_lru, &counter->lru);
    }
    if (creq.op == SFS_COUNTER_OP_FORGET) {
        if (counter) {
            sfs_hash_del(&meta->counters, &counter->link);
            sfs_list_del(&counter->lru);
            free(counter);
        }
    } else {
        if (!counter) {
            if (meta->counters.count >= SFS_META_COUNTERS_MAX) {
                sfs_meta_counter_t *oldest = sfs_container_of(sfs_list_pop_head(&meta->counter_lru),
                                                              sfs_meta_counter_t, lru);

                sfs_hash_del(&meta->counters, &oldest->link);
                free(oldest);
            }
            if (!SFS_ALLOC_PTR(counter)) {
                sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
                return;
            }
            sfs_hash_add(&meta->counters, &counter->link, creq.key);
            sfs_list_add_tail(&meta->counter_lru, &counter->lru);
        }
        counter->value = creq.op == SFS_COUNTER_OP_ADD ? before + creq.value : creq.value;
    }
    sfs_wbuf_init(&wb, out, sizeof(out));
    sfs_wbuf_u64(&wb, before);
    sfs_tp_request_reply(req, 0, out, wb.length, NULL, 0, NULL, NULL);
}

void sfs_meta_handle(sfs_meta_t *meta, sfs_tp_request_t *req)
{
    sfs_meta_op_t *op;
    const void    *args;
    size_t         length, payload_length;
    sfs_rbuf_t     rb;

    if (!SFS_ALLOC_PTR(op)) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    op->req    = req;
    op->opcode = sfs_tp_request_opcode(req);
    if (op->opcode == SFS_OP_COUNTER) {
        free(op);
        sfs_meta_counter(meta, req);
        return;
    }
    op->cred = *sfs_tp_session_cred(sfs_tp_request_session(req));
    if ((op->opcode == SFS_OP_META_LIST || op->opcode == SFS_OP_META_CHECK ||
         op->opcode == SFS_OP_META_PENDING) &&
        !sfs_cred_admin(&op->cred)) {
        sfs_warn("refused %s from uid %u (%s): not an administrator", sfs_op_name(op->opcode),
                 op->cred.uid, sfs_tp_session_peer_host(sfs_tp_request_session(req)));
        sfs_tp_request_reply_error(req, -EPERM,
                                   "%s is for administrators (root on a trusted host, or the "
                                   "admin group)",
                                   sfs_op_name(op->opcode));
        free(op);
        return;
    }
    args = sfs_tp_request_args(req, &length);
    sfs_rbuf_init(&rb, args, length);
    sfs_proto_meta_req_unpack(&rb, op->opcode, &op->args);
    sfs_tp_request_payload(req, &payload_length);
    if (rb.error || sfs_rbuf_remaining(&rb) != 0 || payload_length != 0) {
        sfs_tp_request_reply_error(req, rb.error == -ENAMETOOLONG ? -ENAMETOOLONG : -EBADMSG,
                                   "malformed %s request%s", sfs_op_name(op->opcode),
                                   rb.error == -ENAMETOOLONG ? " (path too long)" : "");
        free(op);
        return;
    }
    meta->in_flight++;
    sfs_meta_enqueue(meta, op);
}

/* ---------------------------------------------------------------------- */
/* Background chunk deletion (progress thread, from the timer)              */

static void sfs_meta_delete_start(sfs_meta_t *meta)
{
    sfs_meta_txn_t *txn;
    uint64_t        ids[SFS_META_DELETE_BATCH];
    sfs_pattern_t  *patterns;
    uint32_t        count = 0;

    patterns = calloc(SFS_META_DELETE_BATCH, sizeof(*patterns));
    if (!patterns) {
        return;
    }
    if (sfs_meta_txn_begin(meta->store, 0, &txn) == 0) {
        sfs_ns_pending_deletes(txn, 0, SFS_META_DELETE_BATCH, ids, patterns, &count);
        sfs_meta_txn_abort(txn);
    }
    if (count == 0) {
        free(patterns);
        return;
    }
    meta->deletes     = calloc(count, sizeof(*meta->deletes));
    meta->delete_rpcs = calloc(
        (size_t)count * SFS_STRIPE_COUNT_MAX > 4096 ? 4096 : (size_t)count * SFS_STRIPE_COUNT_MAX,
        sizeof(*meta->delete_rpcs));
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
            uint32_t               target_id = patterns[i].targets[t];
            sfs_meta_delete_rpc_t *slot      = NULL;

            for (uint32_t r = 0; r < meta->delete_rpc_count; r++) {
                if (meta->delete_rpcs[r].target_id == target_id &&
                    meta->delete_rpcs[r].id_count < SFS_META_DELETE_BATCH) {
                    slot = &meta->delete_rpcs[r];
                }
            }
            if (!slot) {
                slot            = &meta->delete_rpcs[meta->delete_rpc_count++];
                slot->target_id = target_id;
            }
            slot->ids[slot->id_count++] = ids[i];
        }
    }
    free(patterns);
    for (uint32_t r = 0; r < meta->delete_rpc_count; r++) {
        sfs_meta_delete_rpc_t *slot = &meta->delete_rpcs[r];
        sfs_tp_rpc_params_t    params;
        sfs_tp_conn_t         *conn;
        sfs_wbuf_t             wb;

        sfs_wbuf_init(&wb, slot->args, sizeof(slot->args));
        sfs_wbuf_u32(&wb, slot->target_id);
        sfs_wbuf_u32(&wb, slot->id_count);
        for (uint32_t i = 0; i < slot->id_count; i++) {
            sfs_wbuf_u64(&wb, slot->ids[i]);
        }
        memset(&params, 0, sizeof(params));
        params.opcode      = SFS_OP_CHUNK_UNLINK;
        params.args        = slot->args;
        params.args_length = wb.length;
        if (sfs_cluster_target_conn(meta->service->cluster, slot->target_id, &conn) != 0 ||
            sfs_tp_rpc_start(conn, &params, &slot->rpc) != 0) {
            slot->rpc = NULL; /* retried in a later round */
        }
    }
}

static void sfs_meta_delete_finish(sfs_meta_t *meta)
{
    sfs_meta_op_t *op;
    uint32_t       done = 0, failed_rpcs = 0;

    for (uint32_t r = 0; r < meta->delete_rpc_count; r++) {
        sfs_meta_delete_rpc_t *slot = &meta->delete_rpcs[r];
        int                    ok   = slot->rpc && sfs_tp_rpc_status(slot->rpc) == 0;

        if (!ok) {
            failed_rpcs++;
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
    meta->next_delete_ms   = sfs_time_ms() + (failed_rpcs ? SFS_META_DELETE_RETRY_MS : 200);
}

void sfs_meta_timer(sfs_meta_t *meta)
{
    uint64_t now = sfs_time_ms();

    if (now >= meta->next_refresh_ms && meta->service->registered) {
        meta->next_refresh_ms = now + meta->service->config->heartbeat_interval_ms;
        sfs_meta_refresh_targets(meta);
    }
    if (meta->deletes) {
        for (uint32_t r = 0; r < meta->delete_rpc_count; r++) {
            if (meta->delete_rpcs[r].rpc && !sfs_tp_rpc_is_done(meta->delete_rpcs[r].rpc)) {
                return;
            }
        }
        sfs_meta_delete_finish(meta);
        return;
    }
    if (now >= meta->next_delete_ms && meta->service->registered) {
        meta->next_delete_ms = now + 1000;
        sfs_meta_delete_start(meta);
    }
}

void sfs_meta_map_changed(sfs_meta_t *meta)
{
    meta->next_refresh_ms = 0;
}

/* ---------------------------------------------------------------------- */

int sfs_meta_flush(sfs_meta_t *meta)
{
    sfs_meta_op_t *op;
    int            rc;

    if (!SFS_ALLOC_PTR(op)) {
        return -ENOMEM;
    }
    op->opcode = SFS_META_OP_FLUSH;
    pthread_mutex_lock(&meta->lock);
    sfs_list_add_tail(&meta->queue, &op->list);
    pthread_cond_signal(&meta->cond);
    while (!op->flushed) {
        pthread_cond_wait(&meta->flushed, &meta->lock);
    }
    pthread_mutex_unlock(&meta->lock);
    free(op);
    rc = sfs_meta_store_sync(meta->store);
    sfs_info("metadata flushed: %lu operations in %lu batches (largest %u)",
             (unsigned long)meta->ops, (unsigned long)meta->batches, meta->largest_batch);
    return rc;
}

int sfs_meta_create(sfs_service_t *service, sfs_meta_t **meta_p)
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
    pthread_mutex_init(&meta->targets_lock, NULL);
    sfs_list_init(&meta->queue);
    sfs_list_init(&meta->counter_lru);
    if (sfs_hash_init(&meta->counters) != 0) {
        free(meta);
        return -ENOMEM;
    }
    memset(&params, 0, sizeof(params));
    params.dir          = service->config->meta_dir;
    params.sync         = service->config->meta_sync;
    params.map_size     = service->config->meta_map_size;
    params.chunk_size   = service->config->default_chunk_size;
    params.stripe_count = service->config->default_stripe_count;
    rc                  = sfs_meta_store_open(&params, &meta->store);
    if (rc) {
        goto err;
    }
    rc = pthread_create(&meta->thread, NULL, sfs_meta_thread, meta);
    if (rc) {
        rc = sfs_error_set(-rc, "cannot start the metadata thread: %s", strerror(rc));
        goto err;
    }
    meta->thread_started = 1;
    sfs_info("metadata server, store in %s (%s commits)", service->config->meta_dir,
             service->config->meta_sync ? "durable" : "unsynced");
    *meta_p = meta;
    return 0;

err:
    sfs_meta_destroy(meta);
    return rc;
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
        pthread_join(meta->thread, NULL);
        while (meta->in_flight) {
            sfs_tp_worker_progress(meta->service->worker, 10);
        }
    }
    if (meta->deletes) {
        for (uint32_t r = 0; r < meta->delete_rpc_count; r++) {
            sfs_tp_rpc_release(meta->delete_rpcs[r].rpc);
        }
        free(meta->deletes);
        free(meta->delete_rpcs);
    }
    sfs_meta_store_close(meta->store);
    free(meta->targets);
    while (!sfs_list_is_empty(&meta->counter_lru)) {
        free(sfs_container_of(sfs_list_pop_head(&meta->counter_lru), sfs_meta_counter_t, lru));
    }
    sfs_hash_cleanup(&meta->counters);
    pthread_mutex_destroy(&meta->lock);
    pthread_cond_destroy(&meta->cond);
    pthread_cond_destroy(&meta->flushed);
    pthread_mutex_destroy(&meta->targets_lock);
    free(meta);
}
