/*
 * The metadata store's records: how an inode, a directory entry, a counter
 * and a pending chunk deletion are encoded in their LMDB tables, their
 * get/put/del, and the scans over whole tables (statfs counters, pending
 * deletions, every inode).
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_store_internal.h"

#include "sfs_meta_quota.h"

#include "sfs_buf.h"
#include "sfs_errno.h"

#include <string.h>

/* The dynamic attributes after the attribute block, then the storage
 * pool. A record written before they existed ends there: its size is
 * unknown (the next stat asks the targets once and keeps what they say). */
static void sfs_meta_dynattr_unpack(sfs_rbuf_t *rb, sfs_attr_t *attr)
{
    attr->size          = 0;
    attr->size_flags    = 0;
    attr->writers       = 0;
    attr->write_gen     = 0;
    attr->write_until_s = 0;
    attr->pool          = 0;
    if (rb->error || sfs_rbuf_remaining(rb) == 0) {
        return;
    }
    attr->size          = sfs_rbuf_u64(rb);
    attr->size_flags    = sfs_rbuf_u32(rb) & (SFS_SIZE_KNOWN | SFS_SIZE_BASE | SFS_SIZE_SHARED);
    attr->writers       = sfs_rbuf_u32(rb);
    attr->write_gen     = sfs_rbuf_u64(rb);
    attr->write_until_s = sfs_rbuf_u64(rb);
    /* the storage pool; a record written before pools ends here (none) */
    if (!rb->error && sfs_rbuf_remaining(rb) >= 4) {
        attr->pool = sfs_rbuf_u32(rb);
    }
}

static void sfs_meta_dynattr_pack(sfs_wbuf_t *wb, const sfs_attr_t *attr)
{
    sfs_wbuf_u64(wb, attr->size);
    sfs_wbuf_u32(wb, attr->size_flags);
    sfs_wbuf_u32(wb, attr->writers);
    sfs_wbuf_u64(wb, attr->write_gen);
    sfs_wbuf_u64(wb, attr->write_until_s);
    sfs_wbuf_u32(wb, attr->pool);
}

int sfs_meta_find_inode(sfs_meta_txn_t *txn, uint64_t id, sfs_attr_t *attr)
{
    uint8_t    keybuf[8];
    MDB_val    key = {8, keybuf}, val;
    sfs_rbuf_t rb;
    int        rc;

    sfs_meta_put_be64(keybuf, id);
    rc = mdb_get(txn->txn, txn->store->inodes, &key, &val);
    if (rc == MDB_NOTFOUND) {
        return -ENOENT;
    }
    if (rc) {
        return sfs_meta_mdb_error(rc, "reading an inode");
    }
    sfs_rbuf_init(&rb, val.mv_data, val.mv_size);
    if (sfs_rbuf_u8(&rb) != SFS_META_RECORD_VERSION) {
        return sfs_error_set(-EIO, "metadata store: inode %016lx has an unknown format",
                             (unsigned long)id);
    }
    sfs_proto_attr_unpack(&rb, attr);
    sfs_meta_dynattr_unpack(&rb, attr);
    if (rb.error) {
        return sfs_error_set(-EIO, "metadata store: inode %016lx is corrupt", (unsigned long)id);
    }
    return 0;
}

int sfs_meta_get_inode(sfs_meta_txn_t *txn, uint64_t id, sfs_attr_t *attr)
{
    int rc = sfs_meta_find_inode(txn, id, attr);

    if (rc == -ENOENT) {
        return sfs_error_set(-EIO,
                             "metadata store: entry %016lx is named but has no inode "
                             "(run stripefs-fsck)",
                             (unsigned long)id);
    }
    return rc;
}

int sfs_meta_put_inode(sfs_meta_txn_t *txn, const sfs_attr_t *attr)
{
    uint8_t    keybuf[8], valbuf[SFS_META_ATTR_MAX];
    MDB_val    key = {8, keybuf}, val;
    sfs_wbuf_t wb;
    int        rc;

    sfs_attr_t old;

    /* quota usage changes in the same transaction as what it counts */
    rc = sfs_meta_find_inode(txn, attr->entry_id, &old);
    if (rc == -EIO) {
        sfs_error_clear(); /* a corrupt one (fsck rewriting it) was counted by no one */
    }
    if ((rc && rc != -ENOENT && rc != -EIO) ||
        (rc = sfs_meta_quota_charge(txn, rc ? NULL : &old, attr)) != 0) {
        return rc;
    }
    sfs_meta_put_be64(keybuf, attr->entry_id);
    sfs_wbuf_init(&wb, valbuf, sizeof(valbuf));
    sfs_wbuf_u8(&wb, SFS_META_RECORD_VERSION);
    sfs_proto_attr_pack(&wb, attr);
    sfs_meta_dynattr_pack(&wb, attr);
    if (wb.error) {
        return sfs_error_set(-EIO, "metadata store: inode record too large");
    }
    val.mv_size = wb.length;
    val.mv_data = valbuf;
    rc          = sfs_meta_txn_put(txn, txn->store->inodes, &key, &val);
    return rc ? sfs_meta_mdb_error(rc, "writing an inode") : 0;
}

int sfs_meta_del_inode(sfs_meta_txn_t *txn, uint64_t id)
{
    uint8_t    keybuf[8];
    MDB_val    key = {8, keybuf};
    sfs_attr_t old;
    int        rc = sfs_meta_find_inode(txn, id, &old);

    if (rc == 0) {
        rc = sfs_meta_quota_charge(txn, &old, NULL);
    } else if (rc == -EIO) {
        sfs_error_clear(); /* a corrupt one (fsck removing it) was counted by no one */
        rc = 0;
    }
    if (rc && rc != -ENOENT) {
        return rc;
    }
    sfs_meta_put_be64(keybuf, id);
    rc = sfs_meta_txn_del(txn, txn->store->inodes, &key);
    return rc ? sfs_meta_mdb_error(rc, "removing an inode") : 0;
}

void sfs_meta_dentry_key(uint64_t parent, const char *name, uint8_t *buf, MDB_val *key)
{
    size_t n = strlen(name);

    sfs_meta_put_be64(buf, parent);
    memcpy(buf + 8, name, n);
    key->mv_size = 8 + n;
    key->mv_data = buf;
}

/* 0 and the child's id and type, or -ENOENT. */
int sfs_meta_get_dentry(sfs_meta_txn_t *txn, uint64_t parent, const char *name, uint64_t *id_p,
                        uint32_t *type_p)
{
    uint8_t    keybuf[8 + SFS_NAME_MAX];
    MDB_val    key, val;
    sfs_rbuf_t rb;
    int        rc;

    sfs_meta_dentry_key(parent, name, keybuf, &key);
    rc = mdb_get(txn->txn, txn->store->dentries, &key, &val);
    if (rc == MDB_NOTFOUND) {
        return -ENOENT;
    }
    if (rc) {
        return sfs_meta_mdb_error(rc, "reading a directory entry");
    }
    sfs_rbuf_init(&rb, val.mv_data, val.mv_size);
    *id_p   = sfs_rbuf_u64(&rb);
    *type_p = sfs_rbuf_u32(&rb);
    return rb.error ? sfs_error_set(-EIO, "metadata store: corrupt directory entry '%s'", name) : 0;
}

int sfs_meta_put_dentry(sfs_meta_txn_t *txn, uint64_t parent, const char *name, uint64_t id,
                        uint32_t type)
{
    uint8_t    keybuf[8 + SFS_NAME_MAX], valbuf[12];
    MDB_val    key, val = {12, valbuf};
    sfs_wbuf_t wb;
    int        rc;

    sfs_meta_dentry_key(parent, name, keybuf, &key);
    sfs_wbuf_init(&wb, valbuf, sizeof(valbuf));
    sfs_wbuf_u64(&wb, id);
    sfs_wbuf_u32(&wb, type);
    rc = sfs_meta_txn_put(txn, txn->store->dentries, &key, &val);
    return rc ? sfs_meta_mdb_error(rc, "writing a directory entry") : 0;
}

int sfs_meta_del_dentry(sfs_meta_txn_t *txn, uint64_t parent, const char *name)
{
    uint8_t keybuf[8 + SFS_NAME_MAX];
    MDB_val key;
    int     rc;

    sfs_meta_dentry_key(parent, name, keybuf, &key);
    rc = sfs_meta_txn_del(txn, txn->store->dentries, &key);
    return rc ? sfs_meta_mdb_error(rc, "removing a directory entry") : 0;
}

int sfs_meta_counter_add(sfs_meta_txn_t *txn, const char *name, int64_t delta, uint64_t *value_p)
{
    MDB_val  key = {strlen(name), (void *)name}, val;
    uint8_t  buf[8];
    uint64_t value = 0;
    int      rc;

    rc = mdb_get(txn->txn, txn->store->counters, &key, &val);
    if (rc == 0 && val.mv_size == 8) {
        value = sfs_meta_get_be64(val.mv_data);
    } else if (rc && rc != MDB_NOTFOUND) {
        return sfs_meta_mdb_error(rc, "reading a counter");
    }
    value += (uint64_t)delta;
    if (delta != 0) {
        sfs_meta_put_be64(buf, value);
        val.mv_size = 8;
        val.mv_data = buf;
        rc          = sfs_meta_txn_put(txn, txn->store->counters, &key, &val);
        if (rc) {
            return sfs_meta_mdb_error(rc, "writing a counter");
        }
    }
    if (value_p) {
        *value_p = value;
    }
    return 0;
}

int sfs_meta_next_id(sfs_meta_txn_t *txn, uint64_t *id_p)
{
    uint64_t next;
    int      rc = sfs_meta_counter_add(txn, "next_id", 1, &next);

    if (rc == 0) {
        *id_p = next - 1;
    }
    return rc;
}

/* Queue a removed file's chunk files for deletion on its targets. The
 * record keeps the inode whole, its writers' registrations too: the
 * deletion waits for them (sfs_ns_pending_deletes). A record written
 * before it kept them decodes with none. */
int sfs_meta_queue_delete(sfs_meta_txn_t *txn, const sfs_attr_t *attr)
{
    uint8_t    keybuf[8], valbuf[SFS_META_ATTR_MAX];
    MDB_val    key = {8, keybuf}, val;
    sfs_wbuf_t wb;
    int        rc;

    sfs_meta_put_be64(keybuf, attr->entry_id);
    sfs_wbuf_init(&wb, valbuf, sizeof(valbuf));
    sfs_wbuf_u8(&wb, SFS_META_RECORD_VERSION);
    sfs_proto_attr_pack(&wb, attr);
    sfs_meta_dynattr_pack(&wb, attr);
    val.mv_size = wb.length;
    val.mv_data = valbuf;
    rc          = sfs_meta_txn_put(txn, txn->store->unlinked, &key, &val);
    return rc ? sfs_meta_mdb_error(rc, "queueing chunk deletion") : 0;
}

int sfs_ns_statfs(sfs_meta_txn_t *txn, sfs_meta_statfs_t *stats)
{
    int rc;

    if ((rc = sfs_meta_counter_add(txn, "files", 0, &stats->files)) ||
        (rc = sfs_meta_counter_add(txn, "dirs", 0, &stats->dirs)) ||
        (rc = sfs_meta_counter_add(txn, "pending_deletes", 0, &stats->pending_chunk_deletes))) {
        return rc;
    }
    return 0;
}

/* A pending deletion's record (the version byte, the inode's attributes
 * and its dynamic ones): 0, or non-zero when it is cut short. */
static int sfs_meta_unlinked_decode(const MDB_val *val, sfs_attr_t *attr)
{
    sfs_rbuf_t rb;

    sfs_rbuf_init(&rb, val->mv_data, val->mv_size);
    sfs_rbuf_u8(&rb);
    sfs_proto_attr_unpack(&rb, attr);
    sfs_meta_dynattr_unpack(&rb, attr);
    return rb.error;
}

/* A removed file's pending-deletion record, or a bare -ENOENT. */
int sfs_meta_find_unlinked(sfs_meta_txn_t *txn, uint64_t id, sfs_attr_t *attr)
{
    uint8_t keybuf[8];
    MDB_val key = {8, keybuf}, val;
    int     rc;

    sfs_meta_put_be64(keybuf, id);
    rc = mdb_get(txn->txn, txn->store->unlinked, &key, &val);
    if (rc == MDB_NOTFOUND) {
        return -ENOENT;
    }
    if (rc) {
        return sfs_meta_mdb_error(rc, "reading a pending deletion");
    }
    if (sfs_meta_unlinked_decode(&val, attr) != 0) {
        return sfs_error_set(-EIO, "metadata store: the pending deletion of %016lx is corrupt",
                             (unsigned long)id);
    }
    return 0;
}

/* Whether a pending deletion waits at `ready_s` (0: never): a writer's
 * registration lives, and the removal is not SFS_META_DELETE_WRITER_WAIT_S
 * old yet. */
static int sfs_ns_deletion_waits(const sfs_attr_t *attr, uint64_t ready_s)
{
    return ready_s && attr->writers > 0 && ready_s < attr->write_until_s &&
           ready_s < attr->ctime_ns / 1000000000u + SFS_META_DELETE_WRITER_WAIT_S;
}

int sfs_ns_pending_deletes(sfs_meta_txn_t *txn, uint64_t after, uint32_t max, uint64_t ready_s,
                           uint64_t *ids, sfs_pattern_t *patterns, uint32_t *count_p)
{
    uint8_t     keybuf[8];
    MDB_val     key = {8, keybuf}, val;
    MDB_cursor *cursor;
    uint32_t    count = 0;
    int         rc;

    sfs_meta_put_be64(keybuf, after + 1);
    rc = mdb_cursor_open(txn->txn, txn->store->unlinked, &cursor);
    if (rc) {
        return sfs_meta_mdb_error(rc, "opening a cursor");
    }
    rc = mdb_cursor_get(cursor, &key, &val, MDB_SET_RANGE);
    while (rc == 0 && count < max) {
        sfs_attr_t attr;

        /* one still open for writing waits: its writes would make the
         * chunk files again after their deletion */
        if (key.mv_size == 8 && sfs_meta_unlinked_decode(&val, &attr) == 0 &&
            !sfs_ns_deletion_waits(&attr, ready_s)) {
            ids[count]                   = sfs_meta_get_be64(key.mv_data);
            patterns[count]              = attr.pattern;
            patterns[count].stripe_count = attr.pattern_targets;
            count++;
        }
        rc = mdb_cursor_get(cursor, &key, &val, MDB_NEXT);
    }
    mdb_cursor_close(cursor);
    if (rc != 0 && rc != MDB_NOTFOUND) {
        return sfs_meta_mdb_error(rc, "reading pending deletions");
    }
    *count_p = count;
    return 0;
}

int sfs_ns_deletes_done(sfs_meta_txn_t *txn, const uint64_t *ids, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        uint8_t keybuf[8];
        MDB_val key = {8, keybuf};
        int     rc;

        sfs_meta_put_be64(keybuf, ids[i]);
        rc = sfs_meta_txn_del(txn, txn->store->unlinked, &key);
        if (rc == MDB_NOTFOUND) {
            continue;
        }
        if (rc) {
            return sfs_meta_mdb_error(rc, "forgetting a finished deletion");
        }
        rc = sfs_meta_counter_add(txn, "pending_deletes", -1, NULL);
        if (rc) {
            return rc;
        }
    }
    return 0;
}

int sfs_ns_list_inodes(sfs_meta_txn_t *txn, uint64_t after, uint32_t max, sfs_attr_t *attrs,
                       uint32_t *count_p)
{
    uint8_t     keybuf[8];
    MDB_val     key = {8, keybuf}, val;
    MDB_cursor *cursor;
    uint32_t    count = 0;
    int         rc;

    sfs_meta_put_be64(keybuf, after + 1);
    rc = mdb_cursor_open(txn->txn, txn->store->inodes, &cursor);
    if (rc) {
        return sfs_meta_mdb_error(rc, "opening a cursor");
    }
    rc = mdb_cursor_get(cursor, &key, &val, MDB_SET_RANGE);
    while (rc == 0 && count < max) {
        sfs_rbuf_t rb;

        sfs_rbuf_init(&rb, val.mv_data, val.mv_size);
        sfs_rbuf_u8(&rb);
        sfs_proto_attr_unpack(&rb, &attrs[count]);
        if (!rb.error) {
            count++;
        }
        rc = mdb_cursor_get(cursor, &key, &val, MDB_NEXT);
    }
    mdb_cursor_close(cursor);
    if (rc != 0 && rc != MDB_NOTFOUND) {
        return sfs_meta_mdb_error(rc, "listing inodes");
    }
    *count_p = count;
    return 0;
}
