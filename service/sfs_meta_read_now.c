/*
 * Reads answered on arrival. A STAT, LOOKUP or READDIR reads the store
 * only (no state of the metadata thread's), so while that thread holds no
 * batch and none is queued the progress thread answers it at once, in a
 * read transaction of its own, instead of handing it to the metadata
 * thread and its reply back: two thread switches less per read, which
 * were most of a stat's time on the server (a profile of a stat loop:
 * futex waits and wakeups first).
 *
 * What a read may see is unchanged: its transaction begins under the
 * metadata lock while no batch is running, and a batch stops running
 * (sfs_meta_commit.c) only once it is committed, on the mirror and past
 * its fence, i.e. once its replies may go. So a read never sees a write
 * that could still be lost or refused, and a read that arrives while
 * writes are queued or running waits behind them, in order, as before.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_service.h"

#include "sfs_meta_internal.h"
#include "sfs_storage_tunables.h"

#include "sfs_log.h"
#include "sfs_time.h"

#include <pthread.h>
#include <stdbool.h>

int sfs_meta_read_now_init(sfs_meta_t *meta)
{
    bool on = true;
    int  rc = sfs_tunable_bool(&sfs_storage_tunables, "STRIPEFS_META_READ_NOW", &on);

    meta->read_now = on;
    if (!on && rc == 0) {
        sfs_info("reads are queued for the metadata thread (STRIPEFS_META_READ_NOW=0)");
    }
    return rc;
}

static int sfs_meta_read_op(const sfs_meta_op_t *op)
{
    return op->opcode == SFS_OP_STAT || op->opcode == SFS_OP_LOOKUP || op->opcode == SFS_OP_READDIR;
}

/* Count a read answered on arrival as a client's batch of its burst
 * (meta->lock held); wake the metadata thread at a burst's start, which
 * reports the burst once it has been idle (sfs_meta_wait). */
static void sfs_meta_read_now_count(sfs_meta_t *meta, uint64_t now_ns)
{
    int starts = !meta->batch_recent.first_ns;

    for (int i = 0; i < 2; i++) {
        sfs_meta_batch_stats_t *stats = i ? &meta->batch_recent : &meta->batch_total;

        if (!stats->first_ns) {
            stats->first_ns = now_ns;
        }
        stats->last_ns = now_ns;
        stats->at_once++;
    }
    if (starts) {
        pthread_cond_signal(&meta->cond);
    }
}

int sfs_meta_read_now(sfs_meta_t *meta, sfs_meta_op_t *op)
{
    sfs_meta_txn_t *txn = NULL;
    uint64_t        now = sfs_wall_ns();
    int             rc  = -1;

    if (!meta->read_now || !sfs_meta_read_op(op)) {
        return 0;
    }
    pthread_mutex_lock(&meta->lock);
    if (!meta->batch_running && !meta->stopping && sfs_list_is_empty(&meta->queue)) {
        rc = sfs_meta_txn_begin(meta->store, 0, &txn);
        if (rc == 0) {
            sfs_meta_read_now_count(meta, now);
        }
    }
    pthread_mutex_unlock(&meta->lock);
    if (rc) {
        return 0; /* queued: the metadata thread answers, or says what failed */
    }
    op->times.batch_ns = op->times.start_ns = sfs_meta_stats_now();
    sfs_error_clear();
    sfs_meta_run_op(meta, txn, op, now);
    sfs_meta_txn_abort(txn);
    op->times.end_ns = op->times.commit_start_ns = op->times.commit_end_ns = sfs_meta_stats_now();
    sfs_meta_reply_now(meta, op);
    return 1;
}
