/*
 * The metadata role's group commit: requests are decoded on the progress
 * thread and queued here; the metadata thread takes everything queued as
 * one batch, runs each operation in a nested transaction of one write
 * transaction, commits once (one fsync for the whole batch) and only then
 * hands the replies back to the progress thread. An acknowledged operation
 * is therefore on disk.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_service.h"

#include "sfs_meta_internal.h"

#include "sfs_alloc.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <stdio.h>
#include <stdlib.h>

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
    sfs_meta_reply_early(meta, ops);
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

void *sfs_meta_thread(void *arg)
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
        pthread_cond_wait(&meta->flushed, &meta->lock);
    }
    pthread_mutex_unlock(&meta->lock);
    free(op);
    rc = sfs_meta_store_sync(meta->store);
    sfs_info("metadata flushed: %lu operations in %lu batches (largest %u)",
             (unsigned long)meta->ops, (unsigned long)meta->batches, meta->largest_batch);
    return rc;
}
