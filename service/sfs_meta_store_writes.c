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
#include <stdlib.h>
#include <string.h>

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

int sfs_meta_txn_note(sfs_meta_txn_t *txn, int table, const void *key, size_t key_length,
                      const void *value, size_t value_length)
{
    if (!txn->writes) {
        return 0;
    }
    return sfs_meta_writes_add(txn->writes, SFS_META_WRITE_PUT, (sfs_meta_table_t)table, key,
                               key_length, value, value_length);
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
    if (table == SFS_META_TABLE_REPLIES) {
        return 0; /* notes for the mirror's memory, not the store (sfs_meta_reply_table.h) */
    }
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

int sfs_meta_store_apply(sfs_meta_store_t *store, const void *data, size_t length, int replace)
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
    for (int t = 0; replace && t < SFS_META_TABLE_REPLIES; t++) {
        rc = mdb_drop(apply.txn, sfs_meta_table_dbi(store, (sfs_meta_table_t)t), 0);
        if (rc) {
            mdb_txn_abort(apply.txn);
            return sfs_meta_mdb_error(rc, "emptying the store for a full copy");
        }
    }
    rc = sfs_meta_writes_parse(data, length, sfs_meta_apply_one, &apply);
    if (rc) {
        mdb_txn_abort(apply.txn);
        return rc;
    }
    rc = mdb_txn_commit(apply.txn);
    return rc ? sfs_meta_mdb_error(rc, "committing a mirror's transaction") : 0;
}

#define SFS_META_MIRROR_SEQ   "mirror_seq"
#define SFS_META_MIRROR_ALONE "mirror_alone"

int sfs_meta_store_mirror_seq(sfs_meta_store_t *store, uint64_t *seq_p)
{
    sfs_meta_txn_t *txn;
    int             rc = sfs_meta_txn_begin(store, 0, &txn);

    if (rc) {
        return rc;
    }
    rc = sfs_meta_counter_add(txn, SFS_META_MIRROR_SEQ, 0, seq_p);
    sfs_meta_txn_abort(txn);
    return rc;
}

int sfs_meta_store_mirror_mark(sfs_meta_store_t *store, uint64_t *seq_p, uint64_t *alone_p)
{
    sfs_meta_txn_t *txn;
    int             rc = sfs_meta_txn_begin(store, 0, &txn);

    if (rc) {
        return rc;
    }
    rc = sfs_meta_counter_add(txn, SFS_META_MIRROR_SEQ, 0, seq_p);
    if (rc == 0) {
        rc = sfs_meta_counter_add(txn, SFS_META_MIRROR_ALONE, 0, alone_p);
    }
    sfs_meta_txn_abort(txn);
    return rc;
}

int sfs_meta_txn_mirror_seq_next(sfs_meta_txn_t *txn, uint64_t *seq_p)
{
    return sfs_meta_counter_add(txn, SFS_META_MIRROR_SEQ, 1, seq_p);
}

int sfs_meta_txn_mirror_alone(sfs_meta_txn_t *txn)
{
    uint64_t alone;

    return sfs_meta_counter_add(txn, SFS_META_MIRROR_ALONE, 1, &alone);
}

/* Append a put to the current piece, starting a new one when it is full. */
static int sfs_meta_copy_put(sfs_meta_writes_t **pieces, uint32_t *count, size_t piece_max,
                             sfs_meta_table_t table, const MDB_val *key, const MDB_val *val)
{
    size_t             need = 8 + key->mv_size + val->mv_size;
    sfs_meta_writes_t *last = *count ? &(*pieces)[*count - 1] : NULL;

    if (!last || (last->length && last->length + need > piece_max)) {
        sfs_meta_writes_t *grown = realloc(*pieces, (*count + 1) * sizeof(*grown));

        if (!grown) {
            return -ENOMEM;
        }
        *pieces = grown;
        last    = &grown[(*count)++];
        sfs_meta_writes_init(last);
    }
    return sfs_meta_writes_add(last, SFS_META_WRITE_PUT, table, key->mv_data, key->mv_size,
                               val->mv_data, val->mv_size);
}

int sfs_meta_store_copy(sfs_meta_store_t *store, size_t piece_max, sfs_meta_writes_t **pieces_p,
                        uint32_t *count_p)
{
    sfs_meta_writes_t *pieces = NULL;
    uint32_t           count  = 0;
    MDB_txn           *txn;
    MDB_val            seq_key = {sizeof(SFS_META_MIRROR_SEQ) - 1, SFS_META_MIRROR_SEQ};
    MDB_val            seq_val = {0, NULL};
    int                rc      = mdb_txn_begin(store->env, NULL, MDB_RDONLY, &txn);

    if (rc) {
        return sfs_meta_mdb_error(rc, "starting a copy's transaction");
    }
    for (int t = 0; t < SFS_META_TABLE_REPLIES && rc == 0; t++) { /* the store's tables */
        MDB_cursor *cursor;
        MDB_val     key, val;
        int         got;

        rc = mdb_cursor_open(txn, sfs_meta_table_dbi(store, (sfs_meta_table_t)t), &cursor);
        if (rc) {
            rc = sfs_meta_mdb_error(rc, "opening a copy's cursor");
            break;
        }
        for (got = mdb_cursor_get(cursor, &key, &val, MDB_FIRST); got == 0 && rc == 0;
             got = mdb_cursor_get(cursor, &key, &val, MDB_NEXT)) {
            if (t == SFS_META_TABLE_COUNTERS && key.mv_size == seq_key.mv_size &&
                memcmp(key.mv_data, seq_key.mv_data, key.mv_size) == 0) {
                seq_val = val; /* last: a copy cut short is not taken for a whole one */
                continue;
            }
            rc = sfs_meta_copy_put(&pieces, &count, piece_max, (sfs_meta_table_t)t, &key, &val);
        }
        if (rc == 0 && got != MDB_NOTFOUND) {
            rc = sfs_meta_mdb_error(got, "reading a copy's records");
        }
        mdb_cursor_close(cursor);
    }
    if (rc == 0) {
        uint8_t zero[8] = {0};
        MDB_val none    = {sizeof(zero), zero};

        rc = sfs_meta_copy_put(&pieces, &count, piece_max, SFS_META_TABLE_COUNTERS, &seq_key,
                               seq_val.mv_data ? &seq_val : &none);
    }
    mdb_txn_abort(txn);
    if (rc) {
        for (uint32_t i = 0; i < count; i++) {
            sfs_meta_writes_free(&pieces[i]);
        }
        free(pieces);
        return rc;
    }
    *pieces_p = pieces;
    *count_p  = count;
    return 0;
}
