/*
 * Damage to the metadata store, for tests of the consistency checker
 * (tests/progs/sfs_meta_corrupt). Compiled into those test programs only:
 * the server's library has no way to break its own namespace.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_ns_test.h"
#include "sfs_meta_store_internal.h"

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
