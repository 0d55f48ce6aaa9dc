/*
 * Damage a stopped service's metadata store on purpose, for the fsck tests:
 *
 *   sfs_meta_corrupt META_DIR drop-inode PATH    (leaves a dangling name)
 *   sfs_meta_corrupt META_DIR drop-name PATH     (leaves an orphan inode)
 *   sfs_meta_corrupt META_DIR old-record PATH    (the inode as written before
 *                                                 the kept size existed)
 */
#include "sfs_meta_store.h"
#include "sfs_ns_test.h"

#include "sfs_errno.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    sfs_meta_store_params_t params = {.dir = argc > 1 ? argv[1] : "", .sync = 1};
    sfs_meta_store_t       *store;
    sfs_meta_txn_t         *txn;
    sfs_attr_t              attr;
    int                     rc;

    if (argc != 4) {
        fprintf(stderr, "usage: %s META_DIR drop-inode|drop-name|old-record PATH\n", argv[0]);
        return 2;
    }
    if (sfs_meta_store_open(&params, &store) != 0 || sfs_meta_txn_begin(store, 1, &txn) != 0) {
        fprintf(stderr, "cannot open %s: %s\n", argv[1], sfs_error_detail());
        return 1;
    }
    rc = sfs_ns_lookup(txn, &(sfs_cred_t){.flags = SFS_CRED_SERVER}, argv[3], 0, &attr);
    if (rc == 0 && strcmp(argv[2], "drop-inode") == 0) {
        rc = sfs_ns_test_drop_inode(txn, attr.entry_id);
    } else if (rc == 0 && strcmp(argv[2], "drop-name") == 0) {
        rc = sfs_ns_test_drop_name(txn, argv[3]);
    } else if (rc == 0 && strcmp(argv[2], "old-record") == 0) {
        rc = sfs_ns_test_old_record(txn, attr.entry_id);
    } else if (rc == 0) {
        rc = -EINVAL;
    }
    if (rc) {
        fprintf(stderr, "%s %s: %s\n", argv[2], argv[3], sfs_strerror(rc));
        sfs_meta_txn_abort(txn);
        sfs_meta_store_close(store);
        return 1;
    }
    rc = sfs_meta_txn_commit(txn);
    sfs_meta_store_close(store);
    printf("%s %s: done (entry %016lx)\n", argv[2], argv[3], (unsigned long)attr.entry_id);
    return rc ? 1 : 0;
}
