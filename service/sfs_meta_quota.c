/*
 * Quota records of the metadata store (sfs_meta_quota.h): usage and limits
 * per uid and per gid in the counters table, keyed "quota:" + kind + the
 * id (big endian, so a cursor lists them in order), valued files, bytes,
 * file limit, space limit (big endian u64 each).
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_quota.h"

#include "sfs_meta_store_internal.h"

#include "sfs_errno.h"

#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SFS_QUOTA_KEY_PREFIX "quota:"
#define SFS_QUOTA_KEY_SIZE   (sizeof(SFS_QUOTA_KEY_PREFIX) - 1 + 1 + 4)
#define SFS_QUOTA_VAL_SIZE   32
/* a grant goes past the asked end by at most this (and by at most half of
 * what is left), so a stream of small appends asks once per step */
#define SFS_QUOTA_GRANT_STEP (4ull << 20)

static void sfs_quota_key(uint32_t kind, uint32_t id, uint8_t *buf, MDB_val *key)
{
    size_t n = sizeof(SFS_QUOTA_KEY_PREFIX) - 1;

    memcpy(buf, SFS_QUOTA_KEY_PREFIX, n);
    buf[n]       = (uint8_t)kind;
    buf[n + 1]   = (uint8_t)(id >> 24);
    buf[n + 2]   = (uint8_t)(id >> 16);
    buf[n + 3]   = (uint8_t)(id >> 8);
    buf[n + 4]   = (uint8_t)id;
    key->mv_size = SFS_QUOTA_KEY_SIZE;
    key->mv_data = buf;
}

/* Whether `key` is a quota record's; its kind and id then. */
static int sfs_quota_key_parse(const MDB_val *key, uint32_t *kind, uint32_t *id)
{
    const uint8_t *k = key->mv_data;
    size_t         n = sizeof(SFS_QUOTA_KEY_PREFIX) - 1;

    if (key->mv_size != SFS_QUOTA_KEY_SIZE || memcmp(k, SFS_QUOTA_KEY_PREFIX, n) != 0) {
        return 0;
    }
    *kind = k[n];
    *id = (uint32_t)k[n + 1] << 24 | (uint32_t)k[n + 2] << 16 | (uint32_t)k[n + 3] << 8 | k[n + 4];
    return 1;
}

static void sfs_quota_val_unpack(const MDB_val *val, sfs_quota_entry_t *e)
{
    const uint8_t *v = val->mv_data;

    if (val->mv_size != SFS_QUOTA_VAL_SIZE) {
        return; /* zeros: the check recounts it */
    }
    e->files       = sfs_meta_get_be64(v);
    e->space       = sfs_meta_get_be64(v + 8);
    e->files_limit = sfs_meta_get_be64(v + 16);
    e->space_limit = sfs_meta_get_be64(v + 24);
}

int sfs_meta_quota_get(sfs_meta_txn_t *txn, uint32_t kind, uint32_t id, sfs_quota_entry_t *entry)
{
    uint8_t kbuf[SFS_QUOTA_KEY_SIZE];
    MDB_val key, val;
    int     rc;

    memset(entry, 0, sizeof(*entry));
    entry->kind = kind;
    entry->id   = id;
    sfs_quota_key(kind, id, kbuf, &key);
    rc = mdb_get(txn->txn, txn->store->counters, &key, &val);
    if (rc == MDB_NOTFOUND) {
        return 0;
    }
    if (rc) {
        return sfs_meta_mdb_error(rc, "reading a quota record");
    }
    sfs_quota_val_unpack(&val, entry);
    return 0;
}

int sfs_meta_quota_put_record(sfs_meta_txn_t *txn, const sfs_quota_entry_t *e)
{
    uint8_t kbuf[SFS_QUOTA_KEY_SIZE], vbuf[SFS_QUOTA_VAL_SIZE];
    MDB_val key, val = {SFS_QUOTA_VAL_SIZE, vbuf};
    int     rc;

    sfs_quota_key(e->kind, e->id, kbuf, &key);
    if (e->files == 0 && e->space == 0 && e->files_limit == 0 && e->space_limit == 0) {
        rc = sfs_meta_txn_del(txn, txn->store->counters, &key);
        return rc && rc != MDB_NOTFOUND ? sfs_meta_mdb_error(rc, "removing a quota record") : 0;
    }
    sfs_meta_put_be64(vbuf, e->files);
    sfs_meta_put_be64(vbuf + 8, e->space);
    sfs_meta_put_be64(vbuf + 16, e->files_limit);
    sfs_meta_put_be64(vbuf + 24, e->space_limit);
    rc = sfs_meta_txn_put(txn, txn->store->counters, &key, &val);
    return rc ? sfs_meta_mdb_error(rc, "writing a quota record") : 0;
}

/* Add (files, bytes), either negative, to the usage of (kind, id); usage
 * does not go below 0 (a store from before quotas counted nothing: its
 * check recounts). */
static int sfs_quota_add(sfs_meta_txn_t *txn, uint32_t kind, uint32_t id, int64_t files,
                         int64_t bytes)
{
    sfs_quota_entry_t e;
    int               rc;

    if (files == 0 && bytes == 0) {
        return 0;
    }
    rc = sfs_meta_quota_get(txn, kind, id, &e);
    if (rc) {
        return rc;
    }
    e.files = files < 0 && (uint64_t)-files > e.files ? 0 : e.files + (uint64_t)files;
    e.space = bytes < 0 && (uint64_t)-bytes > e.space ? 0 : e.space + (uint64_t)bytes;
    return sfs_meta_quota_put_record(txn, &e);
}

static int sfs_quota_counts(const sfs_attr_t *attr)
{
    return attr && attr->type == SFS_TYPE_FILE;
}

/* One kind's part of a charge: the file leaves old_id's usage and joins
 * new_id's (has_*: whether it counts there at all). */
static int sfs_quota_move(sfs_meta_txn_t *txn, uint32_t kind, int old_has, uint32_t old_id,
                          int64_t old_size, int new_has, uint32_t new_id, int64_t new_size)
{
    int rc;

    if (old_has && new_has && old_id == new_id) {
        return sfs_quota_add(txn, kind, new_id, 0, new_size - old_size);
    }
    if (old_has && (rc = sfs_quota_add(txn, kind, old_id, -1, -old_size)) != 0) {
        return rc;
    }
    return new_has ? sfs_quota_add(txn, kind, new_id, 1, new_size) : 0;
}

int sfs_meta_quota_charge(sfs_meta_txn_t *txn, const sfs_attr_t *old, const sfs_attr_t *new)
{
    int     old_has = sfs_quota_counts(old), new_has = sfs_quota_counts(new);
    int64_t old_size = old_has ? (int64_t)old->size : 0;
    int64_t new_size = new_has ? (int64_t) new->size : 0;
    int     rc;

    if (!old_has && !new_has) {
        return 0;
    }
    if (old_has && new_has && old->uid == new->uid && old->gid == new->gid &&old_size == new_size) {
        return 0; /* times, mode, writers: nothing counted changed */
    }
    rc = sfs_quota_move(txn, SFS_QUOTA_USER, old_has, old_has ? old->uid : 0, old_size, new_has,
                        new_has ? new->uid : 0, new_size);
    if (rc == 0) {
        rc = sfs_quota_move(txn, SFS_QUOTA_GROUP, old_has, old_has ? old->gid : 0, old_size,
                            new_has, new_has ? new->gid : 0, new_size);
    }
    return rc;
}

const char *sfs_meta_quota_who(uint32_t kind, uint32_t id, char *buf, size_t size)
{
    char  scratch[2048];
    int   found = 0;
    char *name  = NULL;

    /* the names of this host's user database, which the servers' identity
     * checks use too (sfs_identity.c) */
    if (kind == SFS_QUOTA_USER) {
        struct passwd pw, *res = NULL;

        found = getpwuid_r(id, &pw, scratch, sizeof(scratch), &res) == 0 && res;
        name  = found ? pw.pw_name : NULL;
        snprintf(buf, size, "user %s%s(uid %u)", found ? name : "", found ? " " : "", id);
    } else {
        struct group gr, *res = NULL;

        found = getgrgid_r(id, &gr, scratch, sizeof(scratch), &res) == 0 && res;
        name  = found ? gr.gr_name : NULL;
        snprintf(buf, size, "group %s%s(gid %u)", found ? name : "", found ? " " : "", id);
    }
    return buf;
}

/* "10 MiB", "1.5 GiB", "1000 bytes" */
static const char *sfs_quota_bytes(uint64_t bytes, char *buf, size_t size)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    double                   v       = (double)bytes;
    int                      u       = -1;

    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u < 0) {
        snprintf(buf, size, "%lu bytes", (unsigned long)bytes);
    } else if (v == (double)(uint64_t)v) {
        snprintf(buf, size, "%lu %s", (unsigned long)v, units[u]);
    } else {
        snprintf(buf, size, "%.1f %s", v, units[u]);
    }
    return buf;
}

int sfs_meta_quota_may_create(sfs_meta_txn_t *txn, const sfs_attr_t *attr, const char *path)
{
    const uint32_t kinds[2] = {SFS_QUOTA_USER, SFS_QUOTA_GROUP};
    const uint32_t ids[2]   = {attr->uid, attr->gid};

    for (int i = 0; i < 2; i++) {
        sfs_quota_entry_t e;
        char              who[300];
        int               rc = sfs_meta_quota_get(txn, kinds[i], ids[i], &e);

        if (rc) {
            return rc;
        }
        if (e.files_limit && e.files + 1 > e.files_limit) {
            return sfs_error_set(-EDQUOT, "quota: %s over its file limit %lu on %.200s",
                                 sfs_meta_quota_who(kinds[i], ids[i], who, sizeof(who)),
                                 (unsigned long)e.files_limit, path);
        }
    }
    return 0;
}

int sfs_meta_quota_may_move(sfs_meta_txn_t *txn, const sfs_attr_t *old, const sfs_attr_t *new,
                            const char *path)
{
    const uint32_t kinds[2]   = {SFS_QUOTA_USER, SFS_QUOTA_GROUP};
    const uint32_t from_id[2] = {old->uid, old->gid}, to_id[2] = {new->uid, new->gid};

    if (new->type != SFS_TYPE_FILE) {
        return 0;
    }
    for (int i = 0; i < 2; i++) {
        sfs_quota_entry_t e;
        char              who[300], lim[32];
        int               rc;

        if (from_id[i] == to_id[i]) {
            continue;
        }
        if ((rc = sfs_meta_quota_get(txn, kinds[i], to_id[i], &e)) != 0) {
            return rc;
        }
        if (e.files_limit && e.files + 1 > e.files_limit) {
            return sfs_error_set(-EDQUOT, "quota: %s over its file limit %lu on %.200s",
                                 sfs_meta_quota_who(kinds[i], to_id[i], who, sizeof(who)),
                                 (unsigned long)e.files_limit, path);
        }
        if (e.space_limit && e.space + new->size > e.space_limit) {
            return sfs_error_set(-EDQUOT, "quota: %s over its space limit %s on %.200s",
                                 sfs_meta_quota_who(kinds[i], to_id[i], who, sizeof(who)),
                                 sfs_quota_bytes(e.space_limit, lim, sizeof(lim)), path);
        }
    }
    return 0;
}

int sfs_meta_quota_limited(sfs_meta_txn_t *txn, const sfs_attr_t *attr)
{
    sfs_quota_entry_t u, g;
    int               rc;

    if ((rc = sfs_meta_quota_get(txn, SFS_QUOTA_USER, attr->uid, &u)) ||
        (rc = sfs_meta_quota_get(txn, SFS_QUOTA_GROUP, attr->gid, &g))) {
        return rc;
    }
    return u.space_limit != 0 || g.space_limit != 0;
}

int sfs_meta_quota_grant(sfs_meta_txn_t *txn, sfs_attr_t *attr, uint64_t end, uint64_t *granted_p,
                         int *limited_p)
{
    sfs_quota_entry_t e[2];
    uint64_t          left = UINT64_MAX, delta, from, granted;
    int               rc;

    *limited_p = 0;
    if ((rc = sfs_meta_quota_get(txn, SFS_QUOTA_USER, attr->uid, &e[0])) ||
        (rc = sfs_meta_quota_get(txn, SFS_QUOTA_GROUP, attr->gid, &e[1]))) {
        return rc;
    }
    from  = end > attr->size ? end : attr->size;
    delta = from - attr->size;
    for (int i = 0; i < 2; i++) {
        char     who[300], lim[32], used[32], more[32];
        uint64_t after = e[i].space + delta;

        if (!e[i].space_limit) {
            continue;
        }
        *limited_p = 1;
        if (delta && (after > e[i].space_limit || after < e[i].space)) {
            return sfs_error_set(-EDQUOT,
                                 "quota: %s over its space limit %s (%s used, this write needs "
                                 "%s more)",
                                 sfs_meta_quota_who(e[i].kind, e[i].id, who, sizeof(who)),
                                 sfs_quota_bytes(e[i].space_limit, lim, sizeof(lim)),
                                 sfs_quota_bytes(e[i].space, used, sizeof(used)),
                                 sfs_quota_bytes(delta, more, sizeof(more)));
        }
        after = after > e[i].space_limit ? e[i].space_limit : after; /* over already: 0 left */
        if (e[i].space_limit - after < left) {
            left = e[i].space_limit - after;
        }
    }
    if (!*limited_p) {
        *granted_p = end; /* nothing limits it: nothing is charged ahead */
        return 0;
    }
    /* a little more than asked, so that appends do not ask at every write,
     * but never more than half of what is left */
    granted = from + (left / 2 < SFS_QUOTA_GRANT_STEP ? left / 2 : SFS_QUOTA_GRANT_STEP);
    if (granted > attr->size && (attr->size_flags & SFS_SIZE_KNOWN)) {
        /* a write is coming (normally BEGIN forgot it already): a stat's
         * reading from before it must not be kept */
        attr->size_flags &= ~SFS_SIZE_KNOWN;
        attr->write_gen++;
    }
    attr->size = granted;
    *granted_p = granted;
    return 0;
}

int sfs_meta_quota_grow(sfs_meta_txn_t *txn, uint64_t entry_id, uint64_t end, uint64_t *granted_p,
                        int *limited_p)
{
    sfs_attr_t attr;
    uint64_t   before, granted;
    int        rc = sfs_meta_find_inode(txn, entry_id, &attr);

    *limited_p = 0;
    if (rc == -ENOENT) {
        /* removed while open: its writer writes on within what it holds
         * (docs/metadata.md, "Removed while open") */
        return sfs_error_set(-ENOENT, "file %016lx was removed", (unsigned long)entry_id);
    }
    if (rc) {
        return rc;
    }
    if (attr.type != SFS_TYPE_FILE) {
        return sfs_error_set(-EISDIR, "entry %016lx is a directory", (unsigned long)entry_id);
    }
    before = attr.size;
    rc     = sfs_meta_quota_grant(txn, &attr, end, &granted, limited_p);
    if (rc == 0 && attr.size != before) {
        rc = sfs_meta_put_inode(txn, &attr); /* charges the growth (sfs_meta_quota_charge) */
    }
    if (rc == 0) {
        *granted_p = granted;
    }
    return rc;
}

int sfs_meta_quota_set(sfs_meta_txn_t *txn, const sfs_quota_req_t *req)
{
    sfs_quota_entry_t e;
    int               rc = sfs_meta_quota_get(txn, req->kind, req->id, &e);

    if (rc) {
        return rc;
    }
    if (req->flags & SFS_QUOTA_SET_FILES) {
        e.files_limit = req->files_limit;
    }
    if (req->flags & SFS_QUOTA_SET_SPACE) {
        e.space_limit = req->space_limit;
    }
    return sfs_meta_quota_put_record(txn, &e);
}

int sfs_meta_quota_list(sfs_meta_txn_t *txn, uint32_t kind, uint32_t id, uint32_t max,
                        sfs_quota_entry_t *entries, uint32_t *count_p, int *eof_p)
{
    uint8_t     kbuf[SFS_QUOTA_KEY_SIZE];
    MDB_val     key, val;
    MDB_cursor *cursor;
    uint32_t    n = 0;
    int         rc;

    *count_p = 0;
    *eof_p   = 1;
    rc       = mdb_cursor_open(txn->txn, txn->store->counters, &cursor);
    if (rc) {
        return sfs_meta_mdb_error(rc, "listing quota records");
    }
    sfs_quota_key(kind, id, kbuf, &key);
    rc = mdb_cursor_get(cursor, &key, &val, MDB_SET_RANGE);
    while (rc == 0) {
        uint32_t k, i;

        if (!sfs_quota_key_parse(&key, &k, &i)) {
            break; /* past the quota records */
        }
        if (n == max) {
            *eof_p = 0;
            break;
        }
        memset(&entries[n], 0, sizeof(entries[n]));
        entries[n].kind = k;
        entries[n].id   = i;
        sfs_quota_val_unpack(&val, &entries[n]);
        n++;
        rc = mdb_cursor_get(cursor, &key, &val, MDB_NEXT);
    }
    mdb_cursor_close(cursor);
    if (rc && rc != MDB_NOTFOUND) {
        return sfs_meta_mdb_error(rc, "listing quota records");
    }
    *count_p = n;
    return 0;
}
