/*
 * The namespace consistency check behind stripefs-fsck: every name must
 * point to an inode of its type whose parent is the directory holding the
 * name, every inode but the root must be named, and the counters must
 * match; with repair, each problem found is fixed.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_store_internal.h"

#include "sfs_meta_quota.h"

#include "sfs_buf.h"
#include "sfs_errno.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sfs_ns_id_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static void sfs_ns_report(sfs_ns_report_fn report, void *arg, sfs_ns_check_stats_t *stats,
                          const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void sfs_ns_report(sfs_ns_report_fn report, void *arg, sfs_ns_check_stats_t *stats,
                          const char *fmt, ...)
{
    char    line[600];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    stats->problems++;
    report(arg, line);
}

/* Walk every name: its parent and its inode must exist and agree. Collects
 * the ids names point to (sorted) for the orphan check. */
static int sfs_ns_check_dentries(sfs_meta_txn_t *txn, int repair, sfs_ns_report_fn report,
                                 void *arg, sfs_ns_check_stats_t *stats, uint64_t **named_p,
                                 size_t *named_count_p)
{
    MDB_cursor *cursor;
    MDB_val     key, val;
    uint64_t   *named = NULL;
    size_t      count = 0, capacity = 0;
    int         rc;

    rc = mdb_cursor_open(txn->txn, txn->store->dentries, &cursor);
    if (rc) {
        return sfs_meta_mdb_error(rc, "opening a cursor");
    }
    rc = mdb_cursor_get(cursor, &key, &val, MDB_FIRST);
    while (rc == 0) {
        char       name[SFS_NAME_MAX + 1];
        uint64_t   parent, child;
        uint32_t   type;
        sfs_attr_t parent_attr, child_attr;
        sfs_rbuf_t rb;
        size_t     n    = key.mv_size >= 8 ? key.mv_size - 8 : 0;
        int        drop = 0, fix = 0;

        stats->dentries++;
        parent = key.mv_size >= 8 ? sfs_meta_get_be64(key.mv_data) : 0;
        memcpy(name, (uint8_t *)key.mv_data + 8, n > SFS_NAME_MAX ? SFS_NAME_MAX : n);
        name[n > SFS_NAME_MAX ? SFS_NAME_MAX : n] = '\0';
        sfs_rbuf_init(&rb, val.mv_data, val.mv_size);
        child = sfs_rbuf_u64(&rb);
        type  = sfs_rbuf_u32(&rb);
        if (key.mv_size < 9 || n > SFS_NAME_MAX || rb.error) {
            sfs_ns_report(report, arg, stats, "malformed directory entry record (%zu bytes)",
                          (size_t)key.mv_size);
            drop = 1;
        } else if (sfs_meta_get_inode(txn, parent, &parent_attr) != 0 ||
                   parent_attr.type != SFS_TYPE_DIR) {
            sfs_ns_report(report, arg, stats,
                          "name '%s' lies in %016lx, which is not a directory that exists", name,
                          (unsigned long)parent);
            drop = 1;
        } else if (sfs_meta_get_inode(txn, child, &child_attr) != 0) {
            sfs_ns_report(report, arg, stats,
                          "dangling entry: '%s' in directory %016lx names entry %016lx, which "
                          "does not exist",
                          name, (unsigned long)parent, (unsigned long)child);
            drop = 1;
        } else {
            if (child_attr.type != type) {
                sfs_ns_report(report, arg, stats, "'%s' (%016lx) is recorded as a %s but is a %s",
                              name, (unsigned long)child, type == SFS_TYPE_DIR ? "dir" : "file",
                              child_attr.type == SFS_TYPE_DIR ? "dir" : "file");
                fix = 1;
            }
            if (child_attr.parent_id != parent) {
                sfs_ns_report(report, arg, stats,
                              "'%s' (%016lx) is named in %016lx but records parent %016lx", name,
                              (unsigned long)child, (unsigned long)parent,
                              (unsigned long)child_attr.parent_id);
                fix = 1;
            }
            if (count == capacity) {
                uint64_t *grown;

                capacity = capacity ? capacity * 2 : 1024;
                grown    = realloc(named, capacity * sizeof(*grown));
                if (!grown) {
                    rc = -ENOMEM;
                    break;
                }
                named = grown;
            }
            named[count++] = child;
        }
        if (repair && drop) {
            uint8_t kept[SFS_META_WRITES_KEY_MAX];
            MDB_val gone = {key.mv_size < sizeof(kept) ? key.mv_size : sizeof(kept), kept};

            memcpy(kept, key.mv_data, gone.mv_size); /* the cursor's key goes with the entry */
            rc = mdb_cursor_del(cursor, 0);
            if (rc == 0) {
                rc = sfs_meta_txn_note_del(txn, txn->store->dentries, &gone);
            }
            if (rc) {
                rc = sfs_meta_mdb_error(rc, "removing a dangling entry");
                break;
            }
            stats->repaired++;
        } else if (repair && fix) {
            child_attr.parent_id = parent;
            rc                   = sfs_meta_put_dentry(txn, parent, name, child, child_attr.type);
            if (rc == 0) {
                rc = sfs_meta_put_inode(txn, &child_attr);
            }
            if (rc) {
                break;
            }
            stats->repaired++;
        }
        rc = mdb_cursor_get(cursor, &key, &val, MDB_NEXT);
    }
    mdb_cursor_close(cursor);
    if (rc != 0 && rc != MDB_NOTFOUND) {
        free(named);
        return rc < 0 ? rc : sfs_meta_mdb_error(rc, "walking directory entries");
    }
    if (count) {
        qsort(named, count, sizeof(*named), sfs_ns_id_cmp);
    }
    *named_p       = named;
    *named_count_p = count;
    return 0;
}

int sfs_ns_check(sfs_meta_txn_t *txn, int repair, sfs_ns_report_fn report, void *arg,
                 sfs_ns_check_stats_t *stats)
{
    MDB_cursor *cursor;
    MDB_val     key, val;
    uint64_t   *named = NULL, *orphans = NULL;
    size_t      named_count = 0, orphan_count = 0, orphan_capacity = 0;
    uint64_t    files = 0, dirs = 0, counted_files, counted_dirs;
    int         rc;

    memset(stats, 0, sizeof(*stats));
    rc = sfs_ns_check_dentries(txn, repair, report, arg, stats, &named, &named_count);
    if (rc) {
        return rc;
    }
    rc = mdb_cursor_open(txn->txn, txn->store->inodes, &cursor);
    if (rc) {
        free(named);
        return sfs_meta_mdb_error(rc, "opening a cursor");
    }
    rc = mdb_cursor_get(cursor, &key, &val, MDB_FIRST);
    while (rc == 0) {
        sfs_attr_t attr;
        sfs_rbuf_t rb;
        uint64_t   id = key.mv_size == 8 ? sfs_meta_get_be64(key.mv_data) : 0;

        stats->inodes++;
        sfs_rbuf_init(&rb, val.mv_data, val.mv_size);
        sfs_rbuf_u8(&rb);
        sfs_proto_attr_unpack(&rb, &attr);
        if (rb.error || key.mv_size != 8) {
            sfs_ns_report(report, arg, stats, "inode %016lx is corrupt", (unsigned long)id);
        } else if (id != SFS_ROOT_ID &&
                   !bsearch(&id, named, named_count, sizeof(*named), sfs_ns_id_cmp)) {
            sfs_ns_report(report, arg, stats, "orphan %s %016lx: no name points to it",
                          attr.type == SFS_TYPE_DIR ? "directory" : "file", (unsigned long)id);
            if (orphan_count == orphan_capacity) {
                uint64_t *grown;

                orphan_capacity = orphan_capacity ? 2 * orphan_capacity : 64;
                grown           = realloc(orphans, orphan_capacity * sizeof(*grown));
                if (!grown) {
                    rc = -ENOMEM;
                    break;
                }
                orphans = grown;
            }
            orphans[orphan_count++] = id;
        } else {
            if (attr.type == SFS_TYPE_FILE) {
                files++;
                if (attr.pattern_targets != attr.pattern.stripe_count ||
                    sfs_pattern_validate(&attr.pattern) != 0) {
                    sfs_ns_report(report, arg, stats, "file %016lx has an invalid stripe pattern",
                                  (unsigned long)id);
                }
            } else {
                dirs++;
            }
        }
        rc = mdb_cursor_get(cursor, &key, &val, MDB_NEXT);
    }
    mdb_cursor_close(cursor);
    free(named);
    if (rc != 0 && rc != MDB_NOTFOUND) {
        free(orphans);
        return rc < 0 ? rc : sfs_meta_mdb_error(rc, "walking inodes");
    }
    rc = 0;
    for (size_t i = 0; repair && i < orphan_count && rc == 0; i++) {
        sfs_attr_t attr;

        rc = sfs_meta_get_inode(txn, orphans[i], &attr);
        if (rc == 0 && attr.type == SFS_TYPE_FILE) {
            rc = sfs_meta_queue_delete(txn, &attr);
            if (rc == 0) {
                rc = sfs_meta_counter_add(txn, "pending_deletes", 1, NULL);
            }
        }
        if (rc == 0) {
            rc = sfs_meta_del_inode(txn, orphans[i]);
        }
        stats->repaired += rc == 0;
    }
    free(orphans);
    if (rc) {
        return rc;
    }
    if ((rc = sfs_meta_counter_add(txn, "files", 0, &counted_files)) ||
        (rc = sfs_meta_counter_add(txn, "dirs", 0, &counted_dirs))) {
        return rc;
    }
    if (counted_files != files || counted_dirs != dirs) {
        sfs_ns_report(report, arg, stats,
                      "counters say %lu files and %lu directories; there are %lu and %lu",
                      (unsigned long)counted_files, (unsigned long)counted_dirs,
                      (unsigned long)files, (unsigned long)dirs);
        if (repair) {
            rc = sfs_meta_counter_add(txn, "files", (int64_t)(files - counted_files), NULL);
            if (rc == 0) {
                rc = sfs_meta_counter_add(txn, "dirs", (int64_t)(dirs - counted_dirs), NULL);
            }
            stats->repaired += rc == 0;
        }
    }
    return rc ? rc : sfs_meta_quota_check(txn, repair, report, arg, stats);
}
