/*
 * The store's kept replies (sfs_meta_reply_record.h): looked up before a
 * tagged change runs, put in the change's own nested transaction after it
 * succeeded, so that a reply is kept exactly when its change is, on the
 * mirror too.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_store_internal.h"

#include "sfs_meta_reply_record.h"

#include "sfs_errno.h"

#include <errno.h>
#include <string.h>

int sfs_meta_reply_get(sfs_meta_txn_t *txn, uint64_t client, uint64_t op_tag,
                       sfs_meta_reply_record_t *record)
{
    uint8_t keybuf[SFS_META_REPLY_KEY];
    MDB_val key = {sizeof(keybuf), keybuf}, val;
    int     rc;

    sfs_meta_reply_key(client, op_tag, keybuf);
    rc = mdb_get(txn->txn, txn->store->replies, &key, &val);
    if (rc == MDB_NOTFOUND) {
        return -ENOENT;
    }
    if (rc) {
        return sfs_meta_mdb_error(rc, "reading a kept reply");
    }
    return sfs_meta_reply_record_decode(val.mv_data, val.mv_size, record);
}

/* Forget `client`'s replies of tags up to `last` (each change drops the one
 * SFS_META_REPLY_KEEP changes before it: usually one record). */
static int sfs_meta_reply_forget_upto(sfs_meta_txn_t *txn, uint64_t client, uint64_t last)
{
    uint8_t     keybuf[SFS_META_REPLY_KEY];
    MDB_val     key = {sizeof(keybuf), keybuf}, val;
    MDB_cursor *cursor;
    int         rc;

    sfs_meta_reply_key(client, 0, keybuf);
    rc = mdb_cursor_open(txn->txn, txn->store->replies, &cursor);
    if (rc) {
        return sfs_meta_mdb_error(rc, "opening a cursor on the kept replies");
    }
    rc = mdb_cursor_get(cursor, &key, &val, MDB_SET_RANGE);
    while (rc == 0) {
        uint64_t key_client, key_tag;
        uint8_t  gone[SFS_META_REPLY_KEY];
        MDB_val  gone_key = {sizeof(gone), gone};

        if (sfs_meta_reply_key_parse(key.mv_data, key.mv_size, &key_client, &key_tag) != 0 ||
            key_client != client || key_tag > last) {
            break;
        }
        memcpy(gone, key.mv_data, sizeof(gone)); /* the cursor's key goes with the record */
        rc = mdb_cursor_del(cursor, 0);
        if (rc == 0) {
            rc = sfs_meta_txn_note_del(txn, txn->store->replies, &gone_key);
        }
        if (rc == 0) {
            rc = mdb_cursor_get(cursor, &key, &val, MDB_NEXT);
        }
    }
    mdb_cursor_close(cursor);
    if (rc != 0 && rc != MDB_NOTFOUND) {
        return sfs_meta_mdb_error(rc, "forgetting old kept replies");
    }
    return 0;
}

int sfs_meta_reply_put(sfs_meta_txn_t *txn, uint64_t client, uint64_t op_tag,
                       const sfs_meta_reply_record_t *record)
{
    uint8_t keybuf[SFS_META_REPLY_KEY];
    uint8_t valbuf[SFS_META_REPLY_RECORD_MAX];
    MDB_val key = {sizeof(keybuf), keybuf}, val = {0, valbuf};
    int     rc;

    if (op_tag > SFS_META_REPLY_KEEP) {
        rc = sfs_meta_reply_forget_upto(txn, client, op_tag - SFS_META_REPLY_KEEP);
        if (rc) {
            return rc;
        }
    }
    val.mv_size = sfs_meta_reply_record_encode(record, valbuf, sizeof(valbuf));
    if (val.mv_size == 0) {
        return sfs_error_set(-EINVAL, "a kept reply does not fit %zu bytes", sizeof(valbuf));
    }
    sfs_meta_reply_key(client, op_tag, keybuf);
    rc = sfs_meta_txn_put(txn, txn->store->replies, &key, &val);
    return rc ? sfs_meta_mdb_error(rc, "keeping a reply") : 0;
}

int sfs_meta_reply_prune(sfs_meta_txn_t *txn, uint64_t before_ns, uint32_t max_scan,
                         uint64_t *client_p, uint64_t *op_tag_p, uint32_t *removed_p,
                         uint32_t *kept_p)
{
    uint8_t     keybuf[SFS_META_REPLY_KEY];
    MDB_val     key = {sizeof(keybuf), keybuf}, val;
    MDB_cursor *cursor;
    uint32_t    scanned = 0, removed = 0, kept = 0;
    int         rc;

    *removed_p = 0;
    *kept_p    = 0;
    sfs_meta_reply_key(*client_p, *op_tag_p, keybuf);
    rc = mdb_cursor_open(txn->txn, txn->store->replies, &cursor);
    if (rc) {
        return sfs_meta_mdb_error(rc, "opening a cursor on the kept replies");
    }
    rc = mdb_cursor_get(cursor, &key, &val, MDB_SET_RANGE);
    while (rc == 0 && scanned < max_scan) {
        sfs_meta_reply_record_t record;
        uint8_t                 gone[SFS_META_REPLY_KEY];
        MDB_val                 gone_key = {sizeof(gone), gone};

        scanned++;
        /* an unreadable record is old by definition: nothing can use it */
        if (sfs_meta_reply_record_decode(val.mv_data, val.mv_size, &record) == 0 &&
            record.time_ns >= before_ns) {
            kept++;
            rc = mdb_cursor_get(cursor, &key, &val, MDB_NEXT);
            continue;
        }
        if (key.mv_size != sizeof(gone)) {
            kept++;
            rc = mdb_cursor_get(cursor, &key, &val, MDB_NEXT); /* not ours to judge */
            continue;
        }
        memcpy(gone, key.mv_data, sizeof(gone));
        rc = mdb_cursor_del(cursor, 0);
        if (rc == 0) {
            rc = sfs_meta_txn_note_del(txn, txn->store->replies, &gone_key);
        }
        if (rc == 0) {
            removed++;
            rc = mdb_cursor_get(cursor, &key, &val, MDB_NEXT);
        }
    }
    if (rc == 0 && sfs_meta_reply_key_parse(key.mv_data, key.mv_size, client_p, op_tag_p) == 0) {
        /* the next round starts where this one stopped */
    } else if (rc == 0 || rc == MDB_NOTFOUND) {
        *client_p = 0; /* the end: the next round starts over */
        *op_tag_p = 0;
        rc        = 0;
    }
    mdb_cursor_close(cursor);
    *removed_p = removed;
    *kept_p    = kept;
    return rc ? sfs_meta_mdb_error(rc, "pruning the kept replies") : 0;
}
