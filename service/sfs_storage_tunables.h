/*
 * The storage service's environment knobs (sfs_tunable.h), read where the
 * storage role starts: a malformed value stops it with an error naming the
 * variable.
 */
#ifndef SFS_STORAGE_TUNABLES_H
#define SFS_STORAGE_TUNABLES_H

#include "sfs_tunable.h"

/* STRIPEFS_LOCAL_READ, STRIPEFS_TEST_WRITE_JITTER_US, STRIPEFS_META_TIMING */
extern const sfs_tunable_table_t sfs_storage_tunables;

#endif
