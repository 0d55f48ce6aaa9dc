/*
 * Damage to the metadata store, for tests of the consistency checker
 * (tests/progs/sfs_meta_corrupt). Compiled into those test programs only:
 * the server's library has no way to break its own namespace.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_ns_test.h"
#include "sfs_meta_store_internal.h"

#include "sfs_buf.h"

int sfs_ns_test_drop_inode(sfs_meta_txn_t *txn, uint64_t entry_id)
{
    return sfs_meta_del_inode(txn, entry_id);
}

int sfs_ns_test_drop_name(sfs_meta_txn_t *txn, const char *path)
{
    sfs_attr_t  parent;
    const char *name;
    sfs_cred_t  server = {.flags = SFS_CRED_SERVER};
    int         rc     = sfs_meta_resolve_parent(txn, &server, path, &parent, &name);

    return rc ? rc : sfs_meta_del_dentry(txn, parent.entry_id, name);
}

int sfs_ns_test_old_record(sfs_meta_txn_t *txn, uint64_t entry_id)
{
    uint8_t    keybuf[8], valbuf[SFS_META_ATTR_MAX];
    MDB_val    key = {8, keybuf}, val;
    sfs_wbuf_t wb;
    sfs_attr_t attr;
    int        rc = sfs_meta_get_inode(txn, entry_id, &attr);

    if (rc) {
        return rc;
    }
    sfs_meta_put_be64(keybuf, entry_id);
    sfs_wbuf_init(&wb, valbuf, sizeof(valbuf));
    sfs_wbuf_u8(&wb, SFS_META_RECORD_VERSION);
    sfs_proto_attr_pack(&wb, &attr);
    val.mv_size = wb.length;
    val.mv_data = valbuf;
    rc          = mdb_put(txn->txn, txn->store->inodes, &key, &val, 0);
    return rc ? sfs_meta_mdb_error(rc, "writing an inode") : 0;
}
