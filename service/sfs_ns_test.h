/*
 * For tests of the consistency checker only: damage the store. Built into
 * test programs (service/sfs_ns_test.c), never into libsfs_service.
 */
#ifndef SFS_NS_TEST_H
#define SFS_NS_TEST_H

#include "sfs_meta_store.h"

#include <stdint.h>

/* Remove an inode and leave the names that point to it (dangling). */
int sfs_ns_test_drop_inode(sfs_meta_txn_t *txn, uint64_t entry_id);
/* Remove a name and leave its inode (an orphan). */
int sfs_ns_test_drop_name(sfs_meta_txn_t *txn, const char *path);
/* Write an inode's record as versions before the kept size did (no
 * dynamic attributes after the attribute block). */
int sfs_ns_test_old_record(sfs_meta_txn_t *txn, uint64_t entry_id);

#endif
