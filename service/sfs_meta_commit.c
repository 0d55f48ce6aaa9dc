/*
 * The metadata role's group commit: requests are decoded on the progress
 * thread and queued here; the metadata thread takes everything queued as
 * one batch, runs each operation in a nested transaction of one write
 * transaction, commits once (one fsync for the whole batch) and only then
 * hands the replies back to the progress thread. An acknowledged operation
 * is therefore on disk.
 *
 * It also counts how many of the clients' operations each batch held (the
 * group-commit batch sizes) and logs them at info level, once per burst
 * (after SFS_META_BATCH_REPORT_IDLE_MS without a client's batch) and at
 * shutdown for the whole run: benchmarks/md.sh reads them.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_service.h"

#include "sfs_meta_internal.h"
#include "sfs_meta_mirror.h"
#include "sfs_meta_writes.h"

#include "sfs_alloc.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A burst ends after this long without a client's batch; then it is logged. */
#define SFS_META_BATCH_REPORT_IDLE_MS 1000

int sfs_meta_is_write(const sfs_meta_op_t *op)
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
    case SFS_OP_SIZE:
    case SFS_OP_QUOTA_SET:
    case SFS_OP_QUOTA_GROW:
    case SFS_OP_MIGRATE_COMMIT:
    case SFS_OP_MIGRATE_DRAIN:
    case SFS_OP_POOL_SET:
        return 1;
    default:
        return 0;
    }
}

/* Whether an operation that succeeded may be answered before the batch's
 * commit: SIZE END only. A lost END (a crash before the commit) leaves its
 * writer registered until the registration's lease runs out, and until
 * then stats ask the targets, which are exact: nothing stale is answered,
 * and a close does not wait for an fsync. (BEGIN must be durable before
 * the write it announces: a lost BEGIN would let a stat answer the old
 * size.) */
static int sfs_meta_may_reply_early(const sfs_meta_op_t *op)
{
    return op->opcode == SFS_OP_SIZE && op->size.op == SFS_SIZE_OP_END && op->status == 0;
}

/* Hand the replies that need not wait for the commit back now. */
static void sfs_meta_reply_early(sfs_meta_t *meta, sfs_list_t *ops)
{
    sfs_meta_batch_t *early = NULL;
    sfs_list_t       *elem, *tmp;

    sfs_list_for_each_safe(elem, tmp, ops)
    {
        sfs_meta_op_t *op = sfs_container_of(elem, sfs_meta_op_t, list);

        if (!sfs_meta_may_reply_early(op)) {
            continue;
        }
        if (!early) {
            early = malloc(sizeof(*early));
            if (!early) {
                return; /* they are answered after the commit, as the others */
            }
            early->meta = meta;
            sfs_list_init(&early->ops);
        }
        sfs_list_del(&op->list);
        sfs_list_add_tail(&early->ops, &op->list);
    }
    if (early && sfs_tp_worker_post(meta->service->worker, sfs_meta_batch_done, early) != 0) {
        sfs_fatal("cannot hand metadata replies back: out of memory");
    }
}

/* The histogram's bucket of a commit of `writes` writes: 1, 2, 3-4, 5-8, ... */
static unsigned sfs_meta_batch_bucket(uint32_t writes)
{
    unsigned bucket = 0;
    uint32_t top    = 1;

    while (bucket + 1 < SFS_META_BATCH_BUCKETS && writes > top) {
        bucket++;
        top <<= 1;
    }
    return bucket;
}

/* Count one batch of `client` clients' operations, `writes` of them writes. */
static void sfs_meta_batch_count(sfs_meta_batch_stats_t *stats, uint32_t writes, uint32_t client,
                                 uint64_t now_ns)
{
    if (!client) {
        stats->internal++;
        return;
    }
    if (!stats->first_ns) {
        stats->first_ns = now_ns;
    }
    stats->last_ns = now_ns;
    if (writes) {
        stats->commits++;
        stats->commit_writes += writes;
        stats->commit_ops += client;
        stats->hist[sfs_meta_batch_bucket(writes)]++;
        if (writes > stats->commit_max) {
            stats->commit_max = writes;
        }
    } else {
        stats->reads++;
        stats->read_ops += client;
        if (client > stats->read_max) {
            stats->read_max = client;
        }
    }
}

/* One line (the format benchmarks/md.sh parses). */
static void sfs_meta_batch_log(const char *what, const sfs_meta_batch_stats_t *s)
{
    sfs_info("group commit, %s: %lu writes in %lu commits (mean %.2f, max %u; commits by writes "
             "1:%lu 2:%lu 3-4:%lu 5-8:%lu 9-16:%lu 17-32:%lu 33-64:%lu 65+:%lu), %lu reads in %lu "
             "batches without a write (mean %.2f, max %u), %lu batches of the server's own; "
             "clients' batches from %.3f to %.3f; %lu reads answered on arrival",
             what, (unsigned long)s->commit_writes, (unsigned long)s->commits,
             s->commits ? (double)s->commit_writes / (double)s->commits : 0.0, s->commit_max,
             (unsigned long)s->hist[0], (unsigned long)s->hist[1], (unsigned long)s->hist[2],
             (unsigned long)s->hist[3], (unsigned long)s->hist[4], (unsigned long)s->hist[5],
             (unsigned long)s->hist[6], (unsigned long)s->hist[7], (unsigned long)s->read_ops,
             (unsigned long)s->reads, s->reads ? (double)s->read_ops / (double)s->reads : 0.0,
             s->read_max, (unsigned long)s->internal, (double)s->first_ns / 1e9,
             (double)s->last_ns / 1e9, (unsigned long)s->at_once);
}

/* Number the batch and send its writes to the mirror while this store
 * commits them; 1 if sent. A batch that cannot be sent drops the mirror
 * (it would miss the batch). */
static int sfs_meta_mirror_batch(sfs_meta_t *meta, sfs_meta_txn_t *txn, uint64_t *seq_p)
{
    sfs_meta_writes_t *writes = sfs_meta_txn_writes(txn);
    uint64_t           seq;
    const void        *data;
    size_t             length;
    char               why[600];

    if (!writes) {
        sfs_meta_mirror_link_drop(meta->mirror, "a batch was not recorded for it");
        return 0;
    }
    if (sfs_meta_txn_mirror_seq_next(txn, &seq) != 0) {
        snprintf(why, sizeof(why), "cannot number a batch: %s", sfs_error_detail());
        sfs_meta_mirror_link_drop(meta->mirror, why);
        return 0;
    }
    data = sfs_meta_writes_encoded(writes, &length);
    sfs_meta_mirror_link_send(meta->mirror, seq, data, length);
    *seq_p = seq;
    return 1;
}

/* The batch is committed but may not be acknowledged (fencing): each
 * client operation that succeeded gets `status` and the error's detail. */
static void sfs_meta_fail_ops(sfs_list_t *ops, int status)
{
    sfs_list_t *elem, *tmp;

    sfs_list_for_each_safe(elem, tmp, ops)
    {
        sfs_meta_op_t *op = sfs_container_of(elem, sfs_meta_op_t, list);

        if (op->status == 0 && op->opcode < SFS_OP_MAX) {
            op->status = status;
            snprintf(op->detail, sizeof(op->detail), "%s", sfs_error_detail());
        }
    }
}

static void sfs_meta_process(sfs_meta_t *meta, sfs_list_t *ops, uint32_t n)
{
    sfs_meta_txn_t   *txn   = NULL;
    sfs_meta_batch_t *batch = malloc(sizeof(*batch));
    sfs_list_t       *elem, *tmp;
    uint64_t          now = sfs_wall_ns();
    uint64_t          commit_start, batch_start = sfs_meta_stats_now(); /* 0: timing off */
    uint32_t          client = 0, client_writes = 0;
    int               any_write = 0, rc, mirrored = 0, commit = 0, alone = 0;
    uint64_t          batch_seq = 0; /* its number, when a mirror is configured */

    sfs_list_for_each_safe(elem, tmp, ops)
    {
        const sfs_meta_op_t *op    = sfs_container_of(elem, sfs_meta_op_t, list);
        int                  write = sfs_meta_is_write(op);

        any_write |= write;
        if (op->opcode < SFS_OP_MAX) { /* not FLUSH, not DELETES_DONE */
            client++;
            client_writes += write ? 1 : 0;
        }
    }
    sfs_error_clear();
    rc = sfs_meta_txn_begin(meta->store, any_write, &txn);
    sfs_list_for_each_safe(elem, tmp, ops)
    {
        sfs_meta_op_t  *op = sfs_container_of(elem, sfs_meta_op_t, list);
        sfs_meta_txn_t *nested;

        sfs_error_clear();
        op->times.batch_ns = batch_start;
        op->times.start_ns = sfs_meta_stats_now();
        if (rc) {
            op->status = rc;
            snprintf(op->detail, sizeof(op->detail), "%s", sfs_error_detail());
            continue;
        }
        if (!sfs_meta_is_write(op)) {
            sfs_meta_run_op(meta, txn, op, now);
            op->times.end_ns = sfs_meta_stats_now();
            continue;
        }
        op->status = sfs_meta_txn_begin_nested(txn, &nested);
        if (op->status) {
            snprintf(op->detail, sizeof(op->detail), "%s", sfs_error_detail());
            continue;
        }
        if (!sfs_meta_replies_replay(meta, op, now)) {
            sfs_meta_run_op(meta, nested, op, now);
            sfs_meta_replies_keep(meta, nested, op, now);
        }
        if (op->status) {
            sfs_meta_txn_abort(nested);
        } else if ((op->status = sfs_meta_txn_commit(nested)) != 0) {
            snprintf(op->detail, sizeof(op->detail), "%s", sfs_error_detail());
        }
        op->times.end_ns = sfs_meta_stats_now();
    }
    if (txn && any_write && meta->mirror) {
        if (sfs_meta_mirror_link_active(meta->mirror)) {
            mirrored = sfs_meta_mirror_batch(meta, txn, &batch_seq);
        }
        if (!mirrored) {
            /* numbered all the same: a mirror that was not in step before
             * this batch (not registered yet at a start, say) is then not
             * taken for one in step when its probe says its batch */
            if (sfs_meta_txn_mirror_seq_next(txn, &batch_seq) != 0 ||
                sfs_meta_txn_mirror_alone(txn) != 0) {
                sfs_warn("metadata mirror: a batch committed alone not counted (%s): the "
                         "mirror may be taken for in step without it",
                         sfs_error_detail());
                sfs_meta_mirror_link_keep(meta->mirror, batch_seq, NULL, 0);
            } else {
                sfs_meta_writes_t *writes = sfs_meta_txn_writes(txn);
                size_t             length = 0;
                const void        *data = writes ? sfs_meta_writes_encoded(writes, &length) : NULL;

                sfs_meta_mirror_link_keep(meta->mirror, batch_seq, data, length);
            }
            alone = 1;
        }
    }
    sfs_meta_reply_early(meta, ops);
    commit_start = sfs_meta_stats_now();
    if (txn) {
        if (any_write) {
            /* the one durable commit of the batch */
            commit = sfs_meta_txn_commit(txn);

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
    if (txn && any_write && commit == 0) {
        sfs_meta_replies_kept_here(meta, ops, now);
    }
    if (mirrored) {
        /* no reply of the batch goes before the mirror has it too; a mirror
         * that fails is dropped and the batch answered from here alone */
        if (sfs_meta_mirror_link_wait(meta->mirror) != 0) {
            alone = 1;
        } else if (commit != 0) {
            sfs_meta_mirror_link_drop(meta->mirror, "the mirror committed a batch whose commit "
                                                    "failed here");
            alone = 1;
        }
    }
    if (alone) {
        sfs_meta_mirror_link_alone(meta->mirror, batch_seq, commit == 0);
        if (commit == 0) {
            /* no reply of the batch before management knows (fencing) */
            int fence = sfs_meta_mirror_report_fence(meta->mirror_report, batch_seq);

            if (fence) {
                sfs_meta_fail_ops(ops, fence);
            }
        }
    }
    if (client_writes && meta->test_die_file) {
        sfs_meta_replies_test_die(meta, ops);
    }
    sfs_meta_pool_committed(meta, ops); /* before the replies go */
    if (commit_start) {
        uint64_t commit_end = sfs_meta_stats_now();

        sfs_list_for_each_safe(elem, tmp, ops)
        {
            sfs_meta_op_t *op = sfs_container_of(elem, sfs_meta_op_t, list);

            op->times.commit_start_ns = commit_start;
            op->times.commit_end_ns   = commit_end;
        }
    }
    pthread_mutex_lock(&meta->lock);
    meta->batch_running = 0; /* committed, mirrored, fenced: reads may see it */
    sfs_meta_batch_count(&meta->batch_total, client_writes, client, now);
    sfs_meta_batch_count(&meta->batch_recent, client_writes, client, now);
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

/* Wait for work (meta->lock held); while a burst of clients' batches is
 * unreported, only until it has been idle long enough, then report it. */
static void sfs_meta_wait(sfs_meta_t *meta)
{
    uint64_t        idle_ns = SFS_META_BATCH_REPORT_IDLE_MS * 1000000ull;
    uint64_t        due_ns  = meta->batch_recent.last_ns + idle_ns;
    struct timespec due;

    if (!meta->batch_recent.first_ns) {
        pthread_cond_wait(&meta->cond, &meta->lock);
        return;
    }
    if (sfs_wall_ns() < due_ns) {
        due.tv_sec  = (time_t)(due_ns / 1000000000ull);
        due.tv_nsec = (long)(due_ns % 1000000000ull);
        if (pthread_cond_timedwait(&meta->cond, &meta->lock, &due) != ETIMEDOUT) {
            return; /* work, or a spurious wakeup: look again */
        }
    }
    if (sfs_list_is_empty(&meta->queue)) {
        sfs_meta_batch_log("last burst", &meta->batch_recent);
        memset(&meta->batch_recent, 0, sizeof(meta->batch_recent));
    }
}

void *sfs_meta_thread(void *arg)
{
    sfs_meta_t *meta = arg;

    for (;;) {
        sfs_list_t ops;
        uint32_t   n = 0;
        /* a dropped mirror is probed between batches */
        uint32_t again_ms = meta->mirror ? sfs_meta_mirror_link_tick(meta->mirror) : 0;

        sfs_list_init(&ops);
        pthread_mutex_lock(&meta->lock);
        if (again_ms && sfs_list_is_empty(&meta->queue) && !meta->stopping) {
            uint64_t        due_ns = sfs_wall_ns() + (uint64_t)again_ms * 1000000ull;
            struct timespec due    = {(time_t)(due_ns / 1000000000ull),
                                      (long)(due_ns % 1000000000ull)};

            pthread_cond_timedwait(&meta->cond, &meta->lock, &due);
            if (sfs_list_is_empty(&meta->queue) && !meta->stopping) {
                pthread_mutex_unlock(&meta->lock);
                continue;
            }
        }
        while (sfs_list_is_empty(&meta->queue) && !meta->stopping) {
            sfs_meta_wait(meta);
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
        /* no read is answered on arrival until the batch's replies may go
         * (sfs_meta_read_now.c) */
        meta->batch_running = 1;
        pthread_mutex_unlock(&meta->lock);
        sfs_meta_process(meta, &ops, n);
    }
}

void sfs_meta_enqueue(sfs_meta_t *meta, sfs_meta_op_t *op)
{
    pthread_mutex_lock(&meta->lock);
    sfs_list_add_tail(&meta->queue, &op->list);
    pthread_cond_signal(&meta->cond);
    pthread_mutex_unlock(&meta->lock);
}

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
        if (meta->mirror) {
            /* the batch before may wait for the mirror's answer, which
             * this (the progress) thread brings in */
            pthread_mutex_unlock(&meta->lock);
            sfs_tp_worker_progress(meta->service->worker, 10);
            /* and a batch committed alone waits for management's record */
            sfs_meta_mirror_report_tick(meta->mirror_report);
            pthread_mutex_lock(&meta->lock);
            continue;
        }
        pthread_cond_wait(&meta->flushed, &meta->lock);
    }
    pthread_mutex_unlock(&meta->lock);
    free(op);
    rc = sfs_meta_store_sync(meta->store);
    pthread_mutex_lock(&meta->lock);
    sfs_meta_batch_log("since the start", &meta->batch_total);
    pthread_mutex_unlock(&meta->lock);
    return rc;
}
