/*
 * What the pieces of the metadata store share; not for other modules
 * (they use sfs_meta_store.h).
 *
 *   sfs_meta_store.c         the LMDB environment and transactions
 *   sfs_meta_store_record.c  records: inode, directory entry, counter and
 *                            pending-deletion encodings, get/put/del, scans
 *   sfs_meta_store_writes.c  every put and delete, kept for the mirror
 *                            (sfs_meta_writes.h), and a mirror's replay
 *   sfs_ns_path.c            path resolution and the permission rules of
 *                            adding, removing and owning names
 *   sfs_ns_file.c            file operations (lookup, create, unlink, setattr)
 *   sfs_ns_dir.c             directory operations (mkdir, rmdir, rename,
 *                            readdir, setpattern)
 *   sfs_ns_check.c           the consistency check (stripefs-fsck)
 *   sfs_ns_test.c            damage for tests; linked into test programs only
 *
 * Record helpers return 0 or a negative errno with the detail set;
 * sfs_meta_get_dentry alone returns a bare -ENOENT (no detail) for a
 * missing name, which callers turn into a message naming the path.
 */
#ifndef SFS_META_STORE_INTERNAL_H
#define SFS_META_STORE_INTERNAL_H

#include "sfs_dirlock.h"
#include "sfs_meta_key.h" /* keys are big endian: numeric order */
#include "sfs_meta_store.h"
#include "sfs_meta_writes.h"

#include <limits.h>
#include <lmdb.h>
#include <stdint.h>

#define SFS_META_RECORD_VERSION 1
#define SFS_META_ATTR_MAX       (160 + 4 * SFS_STRIPE_COUNT_MAX) /* dynamic attributes: 32 */

struct sfs_meta_store {
    MDB_env       *env;
    MDB_dbi        inodes;   /* u64 id (big endian) -> attr record */
    MDB_dbi        dentries; /* u64 parent id (big endian) + name -> u64 id + u32 type */
    MDB_dbi        counters; /* name -> u64 */
    MDB_dbi        unlinked; /* u64 id -> pattern of a removed file awaiting chunk deletion */
    char           dir[PATH_MAX];
    sfs_dirlock_t *lock;          /* this process's claim on dir */
    int            record_writes; /* write transactions keep their writes */
};

struct sfs_meta_txn {
    sfs_meta_store_t      *store;
    MDB_txn               *txn;
    int                    write;
    sfs_meta_writes_t     *writes; /* the top-level transaction's, when recording */
    int                    owns_writes;
    sfs_meta_writes_mark_t mark; /* a nested one's start in `writes` */
};

/* Every change of a record goes through these two (LMDB's return codes),
 * so that a recording transaction keeps it for the mirror; a write LMDB
 * made but that cannot be kept fails with ENOMEM, and the caller's
 * transaction is aborted. (sfs_meta_store_writes.c) */
int sfs_meta_txn_put(sfs_meta_txn_t *txn, MDB_dbi dbi, MDB_val *key, MDB_val *val);
int sfs_meta_txn_del(sfs_meta_txn_t *txn, MDB_dbi dbi, MDB_val *key);
/* Keep a delete made through a cursor (mdb_cursor_del) of `key`. */
int sfs_meta_txn_note_del(sfs_meta_txn_t *txn, MDB_dbi dbi, const MDB_val *key);

/* An LMDB error as a negative errno, with the detail set (`what` failed);
 * MDB_NOTFOUND is a bare -ENOENT. (sfs_meta_store.c) */
int sfs_meta_mdb_error(int mdb_rc, const char *what);

/* Records (sfs_meta_store_record.c) */
int  sfs_meta_get_inode(sfs_meta_txn_t *txn, uint64_t id, sfs_attr_t *attr);
int  sfs_meta_put_inode(sfs_meta_txn_t *txn, const sfs_attr_t *attr);
int  sfs_meta_del_inode(sfs_meta_txn_t *txn, uint64_t id);
void sfs_meta_dentry_key(uint64_t parent, const char *name, uint8_t *buf, MDB_val *key);
int  sfs_meta_get_dentry(sfs_meta_txn_t *txn, uint64_t parent, const char *name, uint64_t *id_p,
                         uint32_t *type_p);
int  sfs_meta_put_dentry(sfs_meta_txn_t *txn, uint64_t parent, const char *name, uint64_t id,
                         uint32_t type);
int  sfs_meta_del_dentry(sfs_meta_txn_t *txn, uint64_t parent, const char *name);
/* Add `delta` to counter `name` (missing = 0); *value_p (may be NULL) gets
 * the new value. */
int sfs_meta_counter_add(sfs_meta_txn_t *txn, const char *name, int64_t delta, uint64_t *value_p);
int sfs_meta_next_id(sfs_meta_txn_t *txn, uint64_t *id_p);
/* Queue a removed file's chunk files for deletion on its targets. */
int sfs_meta_queue_delete(sfs_meta_txn_t *txn, const sfs_attr_t *attr);
/* The inode `id`, or a bare -ENOENT when there is none. */
int sfs_meta_find_inode(sfs_meta_txn_t *txn, uint64_t id, sfs_attr_t *attr);
/* A removed file's record waiting for its deletion, or a bare -ENOENT. */
int sfs_meta_find_unlinked(sfs_meta_txn_t *txn, uint64_t id, sfs_attr_t *attr);

/* Paths and permissions (sfs_ns_path.c) */
int  sfs_meta_check_path(const char *path);
int  sfs_meta_resolve(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path, uint64_t *id_p,
                      uint32_t *type_p);
int  sfs_meta_resolve_parent(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path,
                             sfs_attr_t *parent, const char **name_p);
int  sfs_meta_may_change(const sfs_cred_t *cred, const sfs_attr_t *dir, const char *path);
int  sfs_meta_may_delete(const sfs_cred_t *cred, const sfs_attr_t *dir, const sfs_attr_t *victim,
                         const char *path);
void sfs_meta_new_owner(const sfs_cred_t *cred, const sfs_attr_t *parent, int is_dir, uint32_t mode,
                        uint32_t uid, uint32_t gid, sfs_attr_t *attr);

/* Removing names (sfs_ns_file.c, sfs_ns_dir.c); the caller writes `parent`
 * back. */
int sfs_meta_remove_file(sfs_meta_txn_t *txn, sfs_attr_t *parent, const char *name,
                         const sfs_attr_t *attr, uint64_t now_ns);
int sfs_meta_dir_is_empty(sfs_meta_txn_t *txn, uint64_t dir_id, int *empty_p);
int sfs_meta_remove_dir(sfs_meta_txn_t *txn, sfs_attr_t *parent, const char *name, uint64_t id,
                        uint64_t now_ns);

#endif
