/*
 * The metadata store's writes for its mirror: every put and delete of a
 * record passes here, and a recording transaction keeps it
 * (sfs_meta_writes.h); a mirror replays a primary's set in one transaction
 * of its own.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_store_internal.h"

#include "sfs_errno.h"

#include <errno.h>
#include <stdio.h>

static sfs_meta_table_t sfs_meta_dbi_table(const sfs_meta_store_t *store, MDB_dbi dbi)
{
    if (dbi == store->inodes) {
        return SFS_META_TABLE_INODES;
    }
    if (dbi == store->dentries) {
        return SFS_META_TABLE_DENTRIES;
    }
    if (dbi == store->counters) {
        return SFS_META_TABLE_COUNTERS;
    }
    return SFS_META_TABLE_UNLINKED;
}

static MDB_dbi sfs_meta_table_dbi(const sfs_meta_store_t *store, sfs_meta_table_t table)
{
    switch (table) {
    case SFS_META_TABLE_INODES:
        return store->inodes;
    case SFS_META_TABLE_DENTRIES:
        return store->dentries;
    case SFS_META_TABLE_COUNTERS:
        return store->counters;
    default:
        return store->unlinked;
    }
}

/* Keep a write LMDB made; an errno (positive, as LMDB's codes) if it
 * cannot be kept. */
static int sfs_meta_txn_keep(sfs_meta_txn_t *txn, sfs_meta_write_op_t op, MDB_dbi dbi,
                             const MDB_val *key, const MDB_val *val)
{
    int rc;

    if (!txn->writes) {
        return 0;
    }
    rc = sfs_meta_writes_add(txn->writes, op, sfs_meta_dbi_table(txn->store, dbi), key->mv_data,
                             key->mv_size, val ? val->mv_data : NULL, val ? val->mv_size : 0);
    return rc ? -rc : 0;
}

int sfs_meta_txn_put(sfs_meta_txn_t *txn, MDB_dbi dbi, MDB_val *key, MDB_val *val)
{
    int rc = mdb_put(txn->txn, dbi, key, val, 0);

    return rc ? rc : sfs_meta_txn_keep(txn, SFS_META_WRITE_PUT, dbi, key, val);
}

int sfs_meta_txn_del(sfs_meta_txn_t *txn, MDB_dbi dbi, MDB_val *key)
{
    int rc = mdb_del(txn->txn, dbi, key, NULL);

    return rc ? rc : sfs_meta_txn_keep(txn, SFS_META_WRITE_DEL, dbi, key, NULL);
}

int sfs_meta_txn_note_del(sfs_meta_txn_t *txn, MDB_dbi dbi, const MDB_val *key)
{
    return sfs_meta_txn_keep(txn, SFS_META_WRITE_DEL, dbi, key, NULL);
}

void sfs_meta_store_record_writes(sfs_meta_store_t *store, int on)
{
    store->record_writes = on;
}

sfs_meta_writes_t *sfs_meta_txn_writes(sfs_meta_txn_t *txn)
{
    return txn->writes;
}

typedef struct sfs_meta_apply {
    MDB_txn          *txn;
    sfs_meta_store_t *store;
    uint32_t          record;
} sfs_meta_apply_t;

static int sfs_meta_apply_one(void *arg, sfs_meta_write_op_t op, sfs_meta_table_t table,
                              const void *key, size_t key_length, const void *value,
                              size_t value_length)
{
    sfs_meta_apply_t *apply = arg;
    MDB_dbi           dbi   = sfs_meta_table_dbi(apply->store, table);
    MDB_val           k     = {key_length, (void *)key};
    MDB_val           v     = {value_length, (void *)value};
    int               rc;

    apply->record++;
    if (op == SFS_META_WRITE_PUT) {
        rc = mdb_put(apply->txn, dbi, &k, &v, 0);
    } else {
        rc = mdb_del(apply->txn, dbi, &k, NULL);
        if (rc == MDB_NOTFOUND) {
            /* the primary deleted what it had: this store differs from it */
            return sfs_error_set(-ESTALE,
                                 "metadata store in %s differs from its primary's: record %u "
                                 "deletes a %zu-byte key of table %s that is not here",
                                 apply->store->dir, apply->record, key_length,
                                 sfs_meta_table_name(table));
        }
    }
    if (rc) {
        char what[96];

        snprintf(what, sizeof(what), "applying record %u (table %s)", apply->record,
                 sfs_meta_table_name(table));
        return sfs_meta_mdb_error(rc, what);
    }
    return 0;
}

int sfs_meta_store_apply(sfs_meta_store_t *store, const void *data, size_t length)
{
    sfs_meta_apply_t apply = {NULL, store, 0};
    int              rc;

    rc = sfs_meta_writes_parse(data, length, NULL, NULL); /* whole, before anything changes */
    if (rc) {
        return rc;
    }
    rc = mdb_txn_begin(store->env, NULL, 0, &apply.txn);
    if (rc) {
        return sfs_meta_mdb_error(rc, "starting a mirror's transaction");
    }
    rc = sfs_meta_writes_parse(data, length, sfs_meta_apply_one, &apply);
    if (rc) {
        mdb_txn_abort(apply.txn);
        return rc;
    }
    rc = mdb_txn_commit(apply.txn);
    return rc ? sfs_meta_mdb_error(rc, "committing a mirror's transaction") : 0;
}
