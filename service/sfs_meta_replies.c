/*
 * Resent changes (docs/metadata-mirror.md): a namespace change that
 * carries an op_tag (sfs_proto.h) and succeeded on a server with a
 * metadata mirror puts its reply into the batch's writes as a note, in the
 * change's own nested transaction, so that the mirror gets it exactly when
 * it gets the change; the mirror keeps it in memory
 * (sfs_meta_reply_table.h), never on a disk, and so does the server once
 * the batch is committed. A client that got no answer (its server was lost
 * after the commit, or its own link was cut) sends the change again to the
 * promoted mirror, or to the same server while the map names it online,
 * which finds the kept reply and answers with it: a mkdir
 * that succeeded is not run again (EEXIST), an unlink not again (ENOENT),
 * a create's writer not registered twice.
 *
 * Only successes are kept: a change that failed changed nothing, and runs
 * again as a new one. Without a mirror nothing is noted: no other server
 * can be asked again (a lone server that restarts is not asked again by
 * its clients).
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_internal.h"

#include "sfs_meta_reply_record.h"
#include "sfs_meta_reply_table.h"
#include "sfs_meta_writes.h"
#include "sfs_storage_tunables.h"

#include "sfs_alloc.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int sfs_meta_replies_tagged(const sfs_meta_op_t *op)
{
    return op->args.op_tag != 0 && op->client != 0 && sfs_proto_meta_tagged(op->opcode);
}

int sfs_meta_replies_replay(sfs_meta_t *meta, sfs_meta_op_t *op, uint64_t now)
{
    sfs_meta_reply_record_t record;

    if (!sfs_meta_replies_tagged(op) ||
        sfs_meta_reply_table_get(meta->service->kept_replies, op->client, op->args.op_tag,
                                 &record) != 0) {
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

/* The reply of a change that succeeded, as kept. */
static void sfs_meta_replies_record(const sfs_meta_op_t *op, uint64_t now,
                                    sfs_meta_reply_record_t *record)
{
    memset(record, 0, sizeof(*record));
    record->opcode   = op->opcode;
    record->uid      = op->cred.uid;
    record->created  = (uint8_t)op->created;
    record->bounded  = (uint8_t)(op->bounded != 0);
    record->has_attr = op->opcode != SFS_OP_RMDIR && op->opcode != SFS_OP_RENAME;
    record->time_ns  = now;
    record->attr     = op->attr;
}

void sfs_meta_replies_kept_here(sfs_meta_t *meta, sfs_list_t *ops, uint64_t now)
{
    sfs_meta_reply_record_t record;
    sfs_list_t             *elem, *tmp;
    uint32_t                failed = 0;

    if (!meta->mirror) {
        return; /* a client sends nothing again to a server without a mirror */
    }
    sfs_list_for_each_safe(elem, tmp, ops)
    {
        sfs_meta_op_t *op = sfs_container_of(elem, sfs_meta_op_t, list);

        if (op->status != 0 || op->opcode >= SFS_OP_MAX || !sfs_meta_replies_tagged(op)) {
            continue;
        }
        sfs_meta_replies_record(op, now, &record);
        if (sfs_meta_reply_table_put(meta->service->kept_replies, op->client, op->args.op_tag,
                                     &record, now) != 0) {
            failed++;
        }
    }
    if (failed) {
        sfs_warn("%u replies of a committed batch not kept here (out of memory): sent again to "
                 "this server, those changes would run twice",
                 failed);
    }
}

void sfs_meta_replies_keep(sfs_meta_t *meta, sfs_meta_txn_t *txn, sfs_meta_op_t *op, uint64_t now)
{
    sfs_meta_reply_record_t record;
    uint8_t                 key[SFS_META_REPLY_KEY];
    uint8_t                 value[SFS_META_REPLY_RECORD_MAX];
    size_t                  length;
    int                     rc;

    if (op->status != 0 || !meta->mirror || !sfs_meta_replies_tagged(op)) {
        return; /* without a mirror no other server can be asked again */
    }
    sfs_meta_replies_record(op, now, &record);
    sfs_meta_reply_key(op->client, op->args.op_tag, key);
    length = sfs_meta_reply_record_encode(&record, value, sizeof(value));
    rc = length ? sfs_meta_txn_note(txn, SFS_META_TABLE_REPLIES, key, sizeof(key), value, length)
                : -EINVAL;
    if (rc) {
        /* the change goes with it: one that is mirrored without its reply
         * could be run twice by a resend */
        char why[256];

        snprintf(why, sizeof(why), "%s", length ? sfs_error_detail() : "does not encode");
        op->status = rc;
        snprintf(op->detail, sizeof(op->detail), "%s %.200s: cannot keep its reply: %s",
                 sfs_op_name(op->opcode), op->args.path, why);
    }
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
