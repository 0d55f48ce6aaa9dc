/*
 * The metadata store's LMDB environment: opening it (and making the root
 * directory of a new file system), flushing, closing, and transactions
 * (plain and nested, for group commit).
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_store_internal.h"

#include "sfs_alloc.h"
#include "sfs_dirsync.h"
#include "sfs_errno.h"
#include "sfs_log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sfs_meta_mdb_error(int mdb_rc, const char *what)
{
    int rc;

    switch (mdb_rc) {
    case MDB_NOTFOUND:
        return -ENOENT;
    case MDB_MAP_FULL:
        rc = -ENOSPC;
        break;
    case ENOMEM:
        rc = -ENOMEM;
        break;
    default:
        rc = mdb_rc > 0 ? -mdb_rc : -EIO;
        break;
    }
    return sfs_error_set(rc, "metadata store: %s: %s", what, mdb_strerror(mdb_rc));
}

int sfs_meta_store_open(const sfs_meta_store_params_t *params, sfs_meta_store_t **store_p)
{
    sfs_meta_store_t *store;
    MDB_txn          *txn;
    int               rc;

    if (!SFS_ALLOC_PTR(store)) {
        return -ENOMEM;
    }
    snprintf(store->dir, sizeof(store->dir), "%s", params->dir);
    if (mkdir(store->dir, 0700) != 0 && errno != EEXIST) {
        rc = -errno;
        free(store);
        return sfs_error_set(rc, "cannot create metadata directory %s: %s", params->dir,
                             strerror(-rc));
    }
    /* LMDB lets many processes share an environment: one server only */
    rc = sfs_dirlock_acquire(store->dir, "metadata store", &store->lock);
    if (rc) {
        free(store);
        return rc;
    }
    rc = mdb_env_create(&store->env);
    if (rc) {
        sfs_dirlock_release(store->lock);
        free(store);
        return sfs_meta_mdb_error(rc, "creating the environment");
    }
    mdb_env_set_maxdbs(store->env, 8);
    mdb_env_set_mapsize(store->env, params->map_size ? params->map_size : (16ull << 30));
    /* NOTLS: read transactions are used from more than one thread */
    rc = mdb_env_open(store->env, store->dir, MDB_NOTLS | (params->sync ? 0 : MDB_NOSYNC), 0600);
    if (rc) {
        sfs_meta_mdb_error(rc, "opening");
        sfs_error_set(rc > 0 ? -rc : -EIO, "cannot open the metadata store in %s: %s", params->dir,
                      mdb_strerror(rc));
        rc = rc > 0 ? -rc : -EIO;
        goto err_env;
    }
    /* data.mdb's name (LMDB syncs its contents, not the directory) and the
     * store directory's own: without them a power cut on a file system
     * that keeps only fsynced names loses the whole store */
    if (params->sync &&
        ((rc = sfs_fsync_dir(store->dir)) != 0 || (rc = sfs_fsync_parent(store->dir)) != 0)) {
        sfs_error_set(rc, "metadata store in %s: cannot make its names durable (fsync): %s",
                      params->dir, strerror(-rc));
        goto err_env;
    }
    rc = mdb_txn_begin(store->env, NULL, 0, &txn);
    if (rc) {
        rc = sfs_meta_mdb_error(rc, "starting the first transaction");
        goto err_env;
    }
    if ((rc = mdb_dbi_open(txn, "inodes", MDB_CREATE, &store->inodes)) ||
        (rc = mdb_dbi_open(txn, "dentries", MDB_CREATE, &store->dentries)) ||
        (rc = mdb_dbi_open(txn, "counters", MDB_CREATE, &store->counters)) ||
        (rc = mdb_dbi_open(txn, "unlinked", MDB_CREATE, &store->unlinked))) {
        mdb_txn_abort(txn);
        rc = sfs_meta_mdb_error(rc, "opening its tables");
        goto err_env;
    }
    {
        sfs_meta_txn_t wrap = {store, txn, 1};
        sfs_attr_t     root;

        if (sfs_meta_get_inode(&wrap, SFS_ROOT_ID, &root) != 0) {
            /* a new file system: make the root directory */
            memset(&root, 0, sizeof(root));
            root.entry_id     = SFS_ROOT_ID;
            root.parent_id    = SFS_ROOT_ID;
            root.type         = SFS_TYPE_DIR;
            root.mode         = 0755; /* as mkfs leaves it: root makes room for users */
            root.nlink        = 2;
            root.pattern.type = params->mirror ? SFS_PATTERN_MIRROR : SFS_PATTERN_RAID0;
            root.pattern.chunk_size =
                params->chunk_size ? params->chunk_size : SFS_CHUNK_SIZE_DEFAULT;
            root.pattern.stripe_count =
                params->stripe_count ? params->stripe_count : SFS_STRIPE_COUNT_DEFAULT;
            rc = sfs_meta_put_inode(&wrap, &root);
            if (rc == 0) {
                rc = sfs_meta_counter_add(&wrap, "next_id", (int64_t)SFS_ROOT_ID + 1, NULL);
            }
            if (rc == 0) {
                rc = sfs_meta_counter_add(&wrap, "dirs", 1, NULL);
            }
            if (rc) {
                mdb_txn_abort(txn);
                goto err_env;
            }
            sfs_info("new metadata store in %s", params->dir);
        }
    }
    rc = mdb_txn_commit(txn);
    if (rc) {
        rc = sfs_meta_mdb_error(rc, "committing the first transaction");
        goto err_env;
    }
    *store_p = store;
    return 0;

err_env:
    mdb_env_close(store->env);
    sfs_dirlock_release(store->lock);
    free(store);
    return rc;
}

void sfs_meta_store_close(sfs_meta_store_t *store)
{
    if (!store) {
        return;
    }
    mdb_env_sync(store->env, 1);
    mdb_env_close(store->env);
    sfs_dirlock_release(store->lock);
    free(store);
}

int sfs_meta_store_sync(sfs_meta_store_t *store)
{
    int rc = mdb_env_sync(store->env, 1);

    return rc ? sfs_meta_mdb_error(rc, "sync") : 0;
}

int sfs_meta_store_exists(const char *dir)
{
    char path[PATH_MAX + 16];

    snprintf(path, sizeof(path), "%s/data.mdb", dir); /* LMDB's name for it */
    if (access(path, F_OK) == 0) {
        return 1;
    }
    if (errno == ENOENT) {
        return 0;
    }
    return sfs_error_set(-errno, "cannot look for the metadata store %s: %m", path);
}

#define SFS_META_FS_ID_COUNTER "fs_id"

int sfs_meta_store_identity(sfs_meta_store_t *store, uint64_t *fs_id_p, int *empty_p)
{
    sfs_meta_txn_t *txn;
    MDB_stat        names, pending;
    int             rc;

    rc = sfs_meta_txn_begin(store, 0, &txn);
    if (rc) {
        return rc;
    }
    rc = sfs_meta_counter_add(txn, SFS_META_FS_ID_COUNTER, 0, fs_id_p);
    if (rc == 0 && ((rc = mdb_stat(txn->txn, store->dentries, &names)) != 0 ||
                    (rc = mdb_stat(txn->txn, store->unlinked, &pending)) != 0)) {
        rc = sfs_meta_mdb_error(rc, "counting its names");
    }
    sfs_meta_txn_abort(txn);
    if (rc) {
        char why[256];

        snprintf(why, sizeof(why), "%s", sfs_error_detail());
        return sfs_error_set(rc, "metadata store in %s: cannot read its identity: %s", store->dir,
                             why);
    }
    *empty_p = names.ms_entries == 0 && pending.ms_entries == 0;
    return 0;
}

int sfs_meta_store_set_identity(sfs_meta_store_t *store, uint64_t fs_id)
{
    sfs_meta_txn_t *txn;
    uint64_t        had = 0;
    int             rc;

    rc = sfs_meta_txn_begin(store, 1, &txn);
    if (rc) {
        return rc;
    }
    rc = sfs_meta_counter_add(txn, SFS_META_FS_ID_COUNTER, 0, &had);
    if (rc == 0 && had != 0 && had != fs_id) {
        rc = sfs_error_set(-EEXIST,
                           "metadata store in %s is file system %016" PRIx64 ", not %016" PRIx64,
                           store->dir, had, fs_id);
    }
    if (rc == 0 && had == 0) {
        rc = sfs_meta_counter_add(txn, SFS_META_FS_ID_COUNTER, (int64_t)fs_id, NULL);
    }
    if (rc) {
        sfs_meta_txn_abort(txn);
        return rc;
    }
    rc = sfs_meta_txn_commit(txn);
    if (rc == 0) {
        rc = sfs_meta_store_sync(store); /* kept even with meta.sync off */
    }
    return rc;
}

int sfs_meta_txn_begin(sfs_meta_store_t *store, int write, sfs_meta_txn_t **txn_p)
{
    sfs_meta_txn_t *txn;
    int             rc;

    if (!SFS_ALLOC_PTR(txn)) {
        return -ENOMEM;
    }
    rc = mdb_txn_begin(store->env, NULL, write ? 0 : MDB_RDONLY, &txn->txn);
    if (rc) {
        free(txn);
        return sfs_meta_mdb_error(rc, "starting a transaction");
    }
    txn->store = store;
    txn->write = write;
    if (write && store->record_writes) {
        if (!SFS_ALLOC_PTR(txn->writes)) {
            mdb_txn_abort(txn->txn);
            free(txn);
            return -ENOMEM;
        }
        sfs_meta_writes_init(txn->writes);
        txn->owns_writes = 1;
    }
    *txn_p = txn;
    return 0;
}

int sfs_meta_txn_begin_nested(sfs_meta_txn_t *parent, sfs_meta_txn_t **txn_p)
{
    sfs_meta_txn_t *txn;
    int             rc;

    if (!SFS_ALLOC_PTR(txn)) {
        return -ENOMEM;
    }
    rc = mdb_txn_begin(parent->store->env, parent->txn, 0, &txn->txn);
    if (rc) {
        free(txn);
        return sfs_meta_mdb_error(rc, "starting a nested transaction");
    }
    txn->store  = parent->store;
    txn->write  = 1;
    txn->writes = parent->writes; /* kept in the top-level set; forgotten if this aborts */
    if (txn->writes) {
        sfs_meta_writes_mark(txn->writes, &txn->mark);
    }
    *txn_p = txn;
    return 0;
}

static void sfs_meta_txn_free(sfs_meta_txn_t *txn)
{
    if (txn->owns_writes) {
        sfs_meta_writes_free(txn->writes);
        free(txn->writes);
    }
    free(txn);
}

int sfs_meta_txn_commit(sfs_meta_txn_t *txn)
{
    int rc = mdb_txn_commit(txn->txn);

    if (rc && txn->writes && !txn->owns_writes) {
        sfs_meta_writes_rewind(txn->writes, &txn->mark); /* a failed nested commit aborts it */
    }
    sfs_meta_txn_free(txn);
    return rc ? sfs_meta_mdb_error(rc, "commit") : 0;
}

void sfs_meta_txn_abort(sfs_meta_txn_t *txn)
{
    if (txn) {
        mdb_txn_abort(txn->txn);
        if (txn->writes && !txn->owns_writes) {
            sfs_meta_writes_rewind(txn->writes, &txn->mark);
        }
        sfs_meta_txn_free(txn);
    }
}
