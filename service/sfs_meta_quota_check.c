/*
 * The quota part of the namespace check (sfs_meta_quota.h): usage recounted
 * from every inode and compared with the usage records; a repair writes
 * the recount (limits stay). Usage is changed in the same transaction as
 * the inodes, so a difference means a store from before quotas, or damage.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_quota.h"

#include "sfs_meta_store_internal.h"

#include "sfs_buf.h"
#include "sfs_errno.h"
#include "sfs_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sfs_quota_tally {
    sfs_quota_entry_t *entries; /* files and space only */
    size_t             count;
    size_t             capacity;
} sfs_quota_tally_t;

static int sfs_quota_tally_cmp(const void *a, const void *b)
{
    const sfs_quota_entry_t *x = a, *y = b;

    if (x->kind != y->kind) {
        return x->kind < y->kind ? -1 : 1;
    }
    return x->id < y->id ? -1 : x->id > y->id;
}

static sfs_quota_entry_t *sfs_quota_tally_find(sfs_quota_tally_t *t, uint32_t kind, uint32_t id)
{
    sfs_quota_entry_t key = {.kind = kind, .id = id};

    return t->count ? bsearch(&key, t->entries, t->count, sizeof(key), sfs_quota_tally_cmp) : NULL;
}

/* Count one file for (kind, id); the array is kept sorted. */
static int sfs_quota_tally_add(sfs_quota_tally_t *t, uint32_t kind, uint32_t id, uint64_t size)
{
    sfs_quota_entry_t *e = sfs_quota_tally_find(t, kind, id);
    size_t             at;

    if (!e) {
        if (t->count == t->capacity) {
            size_t             capacity = t->capacity ? 2 * t->capacity : 64;
            sfs_quota_entry_t *grown    = realloc(t->entries, capacity * sizeof(*grown));

            if (!grown) {
                return sfs_error_set(-ENOMEM, "out of memory recounting quotas");
            }
            t->entries  = grown;
            t->capacity = capacity;
        }
        for (at = 0; at < t->count; at++) {
            if (t->entries[at].kind > kind ||
                (t->entries[at].kind == kind && t->entries[at].id > id)) {
                break;
            }
        }
        memmove(&t->entries[at + 1], &t->entries[at], (t->count - at) * sizeof(*e));
        e = &t->entries[at];
        memset(e, 0, sizeof(*e));
        e->kind = kind;
        e->id   = id;
        t->count++;
    }
    e->files++;
    e->space += size;
    return 0;
}

static int sfs_quota_recount(sfs_meta_txn_t *txn, sfs_quota_tally_t *t)
{
    MDB_cursor *cursor;
    MDB_val     key, val;
    int         failed = 0, rc = mdb_cursor_open(txn->txn, txn->store->inodes, &cursor);

    if (rc) {
        return sfs_meta_mdb_error(rc, "recounting quotas");
    }
    rc = mdb_cursor_get(cursor, &key, &val, MDB_FIRST);
    while (rc == 0) {
        sfs_attr_t attr;

        if (key.mv_size == 8 &&
            sfs_meta_get_inode(txn, sfs_meta_get_be64(key.mv_data), &attr) == 0 &&
            attr.type == SFS_TYPE_FILE) {
            if ((failed = sfs_quota_tally_add(t, SFS_QUOTA_USER, attr.uid, attr.size)) ||
                (failed = sfs_quota_tally_add(t, SFS_QUOTA_GROUP, attr.gid, attr.size))) {
                break;
            }
        }
        sfs_error_clear(); /* a corrupt inode is the namespace check's to report */
        rc = mdb_cursor_get(cursor, &key, &val, MDB_NEXT);
    }
    mdb_cursor_close(cursor);
    if (failed) {
        return failed;
    }
    return rc && rc != MDB_NOTFOUND ? sfs_meta_mdb_error(rc, "recounting quotas") : 0;
}

/* Compare one record with its recount (zeros where none); repair it. */
static int sfs_quota_check_one(sfs_meta_txn_t *txn, int repair, sfs_ns_report_fn line, void *arg,
                               sfs_ns_check_stats_t *stats, const sfs_quota_entry_t *kept,
                               const sfs_quota_entry_t *counted)
{
    char              who[300], text[600];
    sfs_quota_entry_t fixed;

    if (kept->files == counted->files && kept->space == counted->space) {
        return 0;
    }
    snprintf(text, sizeof(text),
             "quota usage of %s says %lu files and %lu bytes; its inodes count %lu and %lu",
             sfs_meta_quota_who(kept->kind, kept->id, who, sizeof(who)), (unsigned long)kept->files,
             (unsigned long)kept->space, (unsigned long)counted->files,
             (unsigned long)counted->space);
    stats->problems++;
    line(arg, text);
    if (!repair) {
        return 0;
    }
    fixed       = *kept;
    fixed.files = counted->files;
    fixed.space = counted->space;
    {
        int rc = sfs_meta_quota_put_record(txn, &fixed);

        stats->repaired += rc == 0;
        return rc;
    }
}

int sfs_meta_quota_check(sfs_meta_txn_t *txn, int repair, sfs_ns_report_fn line, void *arg,
                         sfs_ns_check_stats_t *stats)
{
    sfs_quota_tally_t  tally = {0};
    sfs_quota_entry_t *page  = calloc(SFS_QUOTA_PAGE_MAX, sizeof(*page));
    uint32_t           kind = 0, id = 0, count;
    int                eof = 0, rc;

    if (!page) {
        return sfs_error_set(-ENOMEM, "out of memory checking quotas");
    }
    rc = sfs_quota_recount(txn, &tally);
    /* every record against its recount (a record's recount is then marked
     * done by files = UINT64_MAX), then recounts without a record */
    while (rc == 0 && !eof) {
        rc = sfs_meta_quota_list(txn, kind, id, SFS_QUOTA_PAGE_MAX, page, &count, &eof);
        for (uint32_t i = 0; rc == 0 && i < count; i++) {
            sfs_quota_entry_t *c    = sfs_quota_tally_find(&tally, page[i].kind, page[i].id);
            sfs_quota_entry_t  none = {.kind = page[i].kind, .id = page[i].id};

            rc = sfs_quota_check_one(txn, repair, line, arg, stats, &page[i], c ? c : &none);
            if (c) {
                c->files = UINT64_MAX;
            }
        }
        if (count == 0) {
            break;
        }
        kind = page[count - 1].kind;
        id   = page[count - 1].id + 1;
        if (id == 0) {
            kind++;
        }
        if (kind > SFS_QUOTA_GROUP) {
            break;
        }
    }
    for (size_t i = 0; rc == 0 && i < tally.count; i++) {
        sfs_quota_entry_t none = {.kind = tally.entries[i].kind, .id = tally.entries[i].id};

        if (tally.entries[i].files != UINT64_MAX) {
            rc = sfs_quota_check_one(txn, repair, line, arg, stats, &none, &tally.entries[i]);
        }
    }
    free(tally.entries);
    free(page);
    return rc;
}

static void sfs_quota_upgrade_line(void *arg, const char *line)
{
    (void)arg;
    sfs_info("quota usage recounted: %s", line);
}

int sfs_meta_quota_upgrade(sfs_meta_store_t *store)
{
    sfs_ns_check_stats_t stats = {0};
    sfs_meta_txn_t      *txn;
    uint64_t             counted;
    int                  rc = sfs_meta_txn_begin(store, 1, &txn);

    if (rc) {
        return rc;
    }
    rc = sfs_meta_counter_add(txn, "quota_usage_counted", 0, &counted);
    if (rc == 0 && counted == 0) {
        /* a store from before quotas (or a new one): count once what its
         * inodes hold; from here on every inode change keeps it */
        rc = sfs_meta_quota_check(txn, 1, sfs_quota_upgrade_line, NULL, &stats);
        if (rc == 0) {
            rc = sfs_meta_counter_add(txn, "quota_usage_counted", 1, NULL);
        }
        if (rc == 0 && stats.repaired) {
            sfs_info("quota usage of %lu users and groups counted from the inodes",
                     (unsigned long)stats.repaired);
        }
    }
    if (rc) {
        sfs_meta_txn_abort(txn);
        return rc;
    }
    return sfs_meta_txn_commit(txn);
}
