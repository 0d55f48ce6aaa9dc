/*
 * Resent changes (docs/metadata-mirror.md): a namespace change that
 * carries an op_tag (sfs_proto.h) and succeeded leaves its reply in the
 * store, in the change's own nested transaction, so that the reply is
 * kept, committed and mirrored exactly when the change is. A client that
 * got no answer (its server was lost after the commit) sends the change
 * again to the promoted mirror, which finds the kept reply and answers
 * with it: a mkdir that succeeded is not run again (EEXIST), an unlink not
 * again (ENOENT), a create's writer not registered twice.
 *
 * Replies are kept per client worker (its session's uuid): the last
 * SFS_META_REPLY_KEEP of each (sfs_meta_store.h), and none older than
 * SFS_META_REPLY_MAX_AGE_S, removed by a pruning batch every
 * SFS_META_REPLY_PRUNE_MS (a client resends within two RPC timeouts).
 * Only successes are kept: a change that failed changed nothing, and runs
 * again as a new one. And only by a server with a metadata mirror: without
 * one no other server can be asked again (a lone server that restarts is
 * not asked again by its clients), and a kept reply costs each commit a
 * page or two more to write (create_latency.sh: about 100 us of a 400 us
 * commit on this disk).
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_internal.h"

#include "sfs_meta_reply_record.h"
#include "sfs_storage_tunables.h"

#include "sfs_alloc.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SFS_META_REPLY_MAX_AGE_S  3600
#define SFS_META_REPLY_PRUNE_MS   60000
#define SFS_META_REPLY_PRUNE_SCAN 20000 /* records looked at per pruning batch */

static int sfs_meta_replies_tagged(const sfs_meta_op_t *op)
{
    return op->args.op_tag != 0 && op->client != 0 && sfs_proto_meta_tagged(op->opcode);
}

int sfs_meta_replies_replay(sfs_meta_txn_t *txn, sfs_meta_op_t *op, uint64_t now)
{
    sfs_meta_reply_record_t record;
    int                     rc;

    if (!sfs_meta_replies_tagged(op)) {
        return 0;
    }
    rc = sfs_meta_reply_get(txn, op->client, op->args.op_tag, &record);
    if (rc == -ENOENT) {
        return 0;
    }
    if (rc) {
        sfs_warn("%s %s: the reply kept for op_tag %llu of client %016llx cannot be read (%s): "
                 "it runs as a new change",
                 sfs_op_name(op->opcode), op->args.path, (unsigned long long)op->args.op_tag,
                 (unsigned long long)op->client, sfs_error_detail());
        return 0;
    }
    if (record.opcode != op->opcode || record.uid != op->cred.uid) {
        sfs_warn("%s %s of uid %u: op_tag %llu of client %016llx was a %s of uid %u: it runs as "
                 "a new change",
                 sfs_op_name(op->opcode), op->args.path, op->cred.uid,
                 (unsigned long long)op->args.op_tag, (unsigned long long)op->client,
                 sfs_op_name(record.opcode), record.uid);
        return 0;
    }
    op->status  = 0;
    op->created = record.created;
    op->bounded = record.bounded;
    if (record.has_attr) {
        op->attr = record.attr;
    }
    sfs_info("%s %s of uid %u sent again (op_tag %llu of client %016llx): answered with the "
             "reply kept %.1f s ago, not run twice",
             sfs_op_name(op->opcode), op->args.path, op->cred.uid,
             (unsigned long long)op->args.op_tag, (unsigned long long)op->client,
             now > record.time_ns ? (double)(now - record.time_ns) / 1e9 : 0.0);
    return 1;
}

void sfs_meta_replies_keep(sfs_meta_t *meta, sfs_meta_txn_t *txn, sfs_meta_op_t *op, uint64_t now)
{
    sfs_meta_reply_record_t record;
    int                     rc;

    if (op->status != 0 || !meta->mirror || !sfs_meta_replies_tagged(op)) {
        return; /* without a mirror no other server can be asked again */
    }
    memset(&record, 0, sizeof(record));
    record.opcode   = op->opcode;
    record.uid      = op->cred.uid;
    record.created  = (uint8_t)op->created;
    record.bounded  = (uint8_t)(op->bounded != 0);
    record.has_attr = op->opcode != SFS_OP_RMDIR && op->opcode != SFS_OP_RENAME;
    record.time_ns  = now;
    record.attr     = op->attr;
    rc              = sfs_meta_reply_put(txn, op->client, op->args.op_tag, &record);
    if (rc == 0) {
        __atomic_store_n(&meta->reply_none, 0, __ATOMIC_RELAXED);
    } else {
        /* the change goes with it: one that is kept without its reply could
         * be run twice by a resend */
        op->status = rc;
        char why[256];

        snprintf(why, sizeof(why), "%s", sfs_error_detail());
        snprintf(op->detail, sizeof(op->detail), "%s %.200s: cannot keep its reply: %s",
                 sfs_op_name(op->opcode), op->args.path, why);
    }
}

void sfs_meta_replies_tick(sfs_meta_t *meta, uint64_t now_ms)
{
    sfs_meta_op_t *op;

    if (meta->next_reply_prune_ms == 0) {
        /* not at the start: a batch then may come before the mirror is back */
        meta->next_reply_prune_ms = now_ms + SFS_META_REPLY_PRUNE_MS;
    }
    if (now_ms < meta->next_reply_prune_ms) {
        return;
    }
    meta->next_reply_prune_ms = now_ms + SFS_META_REPLY_PRUNE_MS;
    if (__atomic_load_n(&meta->reply_none, __ATOMIC_RELAXED)) {
        return; /* the last round found none, and none was kept since */
    }
    if (!SFS_ALLOC_PTR(op)) {
        return; /* the next round */
    }
    op->opcode = SFS_META_OP_REPLIES_PRUNE;
    sfs_meta_enqueue(meta, op);
}

int sfs_meta_replies_prune(sfs_meta_t *meta, sfs_meta_txn_t *txn, uint64_t now)
{
    uint64_t before = now - (uint64_t)SFS_META_REPLY_MAX_AGE_S * 1000000000ull;
    uint32_t removed, kept;
    int      rc;

    if (now < (uint64_t)SFS_META_REPLY_MAX_AGE_S * 1000000000ull) {
        return 0;
    }
    rc = sfs_meta_reply_prune(txn, before, SFS_META_REPLY_PRUNE_SCAN, &meta->reply_prune_client,
                              &meta->reply_prune_tag, &removed, &kept);
    if (rc == 0 && kept == 0 && meta->reply_prune_client == 0) {
        /* a whole round from the start, and nothing is left: no more rounds
         * until a reply is kept */
        __atomic_store_n(&meta->reply_none, 1, __ATOMIC_RELAXED);
    }
    if (rc == 0 && removed) {
        sfs_debug("forgot %u kept replies older than %d s", removed, SFS_META_REPLY_MAX_AGE_S);
    }
    return rc;
}

int sfs_meta_replies_test_start(sfs_meta_t *meta)
{
    const char *path = NULL;
    int         rc =
        sfs_tunable_string(&sfs_storage_tunables, "STRIPEFS_TEST_META_DIE_BEFORE_REPLY", &path);

    if (rc || !path || !path[0]) {
        return rc;
    }
    if (!SFS_ALLOC_ARRAY(meta->test_die_file, PATH_MAX)) {
        return -ENOMEM;
    }
    snprintf(meta->test_die_file, PATH_MAX, "%s.%u", path, meta->service->rank);
    sfs_warn("testing: this rank kills itself before replying to a committed request named in "
             "%s, while that file exists",
             meta->test_die_file);
    return 0;
}

void sfs_meta_replies_test_die(sfs_meta_t *meta, sfs_list_t *ops)
{
    char        name[32] = "";
    FILE       *file;
    sfs_list_t *elem, *tmp;

    if (!meta->test_die_file || !(file = fopen(meta->test_die_file, "r"))) {
        return;
    }
    if (!fgets(name, sizeof(name), file)) {
        name[0] = '\0';
    }
    fclose(file);
    name[strcspn(name, "\n")] = '\0';
    sfs_list_for_each_safe(elem, tmp, ops)
    {
        const sfs_meta_op_t *op = sfs_container_of(elem, sfs_meta_op_t, list);

        if (op->req && op->status == 0 && strcmp(sfs_op_name(op->opcode), name) == 0) {
            sfs_warn("testing: %s %s is committed; this rank dies before replying (%s)", name,
                     op->args.path, meta->test_die_file);
            raise(SIGKILL);
        }
    }
}
