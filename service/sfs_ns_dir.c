/*
 * Namespace operations on directories: mkdir, rmdir, rename (which may
 * replace a file or an empty directory), readdir in name order, and
 * setpattern (a directory's default pattern for new files).
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_store_internal.h"
#include "sfs_ns_pattern.h"
#include "sfs_perm.h"

#include "sfs_buf.h"
#include "sfs_errno.h"
#include "sfs_path.h"

#include <string.h>

int sfs_ns_mkdir(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path, uint32_t mode,
                 uint32_t uid, uint32_t gid, uint64_t now_ns, sfs_attr_t *attr)
{
    sfs_attr_t  parent;
    const char *name;
    uint64_t    id;
    uint32_t    type;
    int         rc;

    rc = sfs_meta_resolve_parent(txn, cred, path, &parent, &name);
    if (rc) {
        return rc;
    }
    if (sfs_perm_check(cred, &parent, SFS_MAY_EXEC) != 0) {
        return sfs_error_set(-EACCES, "'%.200s': permission denied (search)", path);
    }
    rc = sfs_meta_get_dentry(txn, parent.entry_id, name, &id, &type);
    if (rc == 0) {
        return sfs_error_set(-EEXIST, "'%.200s' exists", path);
    }
    if (rc != -ENOENT) {
        return rc;
    }
    rc = sfs_meta_may_change(cred, &parent, path);
    if (rc) {
        return rc;
    }
    memset(attr, 0, sizeof(*attr));
    rc = sfs_meta_next_id(txn, &attr->entry_id);
    if (rc) {
        return rc;
    }
    attr->parent_id = parent.entry_id;
    attr->type      = SFS_TYPE_DIR;
    sfs_meta_new_owner(cred, &parent, 1, mode, uid, gid, attr);
    attr->ctime_ns = attr->mtime_ns = attr->atime_ns = now_ns;
    attr->nlink                                      = 2;
    attr->pattern                                    = parent.pattern; /* inherited default */
    attr->pattern_targets                            = 0;
    attr->pool                                       = parent.pool; /* inherited too */
    if ((rc = sfs_meta_put_inode(txn, attr)) ||
        (rc = sfs_meta_put_dentry(txn, parent.entry_id, name, attr->entry_id, SFS_TYPE_DIR)) ||
        (rc = sfs_meta_counter_add(txn, "dirs", 1, NULL))) {
        return rc;
    }
    parent.nlink++;
    parent.mtime_ns = parent.ctime_ns = now_ns;
    return sfs_meta_put_inode(txn, &parent);
}

int sfs_meta_dir_is_empty(sfs_meta_txn_t *txn, uint64_t dir_id, int *empty_p)
{
    uint8_t     keybuf[8];
    MDB_val     key = {8, keybuf}, val;
    MDB_cursor *cursor;
    int         rc;

    sfs_meta_put_be64(keybuf, dir_id);
    rc = mdb_cursor_open(txn->txn, txn->store->dentries, &cursor);
    if (rc) {
        return sfs_meta_mdb_error(rc, "opening a cursor");
    }
    rc       = mdb_cursor_get(cursor, &key, &val, MDB_SET_RANGE);
    *empty_p = rc == MDB_NOTFOUND ||
               (rc == 0 && (key.mv_size < 8 || sfs_meta_get_be64(key.mv_data) != dir_id));
    mdb_cursor_close(cursor);
    return (rc == 0 || rc == MDB_NOTFOUND) ? 0 : sfs_meta_mdb_error(rc, "reading a directory");
}

/* Remove a directory entry of type dir (already checked empty). */
int sfs_meta_remove_dir(sfs_meta_txn_t *txn, sfs_attr_t *parent, const char *name, uint64_t id,
                        uint64_t now_ns)
{
    int rc;

    if ((rc = sfs_meta_del_dentry(txn, parent->entry_id, name)) ||
        (rc = sfs_meta_del_inode(txn, id)) || (rc = sfs_meta_counter_add(txn, "dirs", -1, NULL))) {
        return rc;
    }
    parent->nlink--;
    parent->mtime_ns = parent->ctime_ns = now_ns;
    return 0;
}

int sfs_ns_rmdir(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path, uint64_t now_ns)
{
    sfs_attr_t  parent, victim;
    const char *name;
    uint64_t    id;
    uint32_t    type;
    int         rc, empty;

    if (strcmp(path, "/") == 0) {
        return sfs_error_set(-EBUSY, "cannot remove the root directory");
    }
    rc = sfs_meta_resolve_parent(txn, cred, path, &parent, &name);
    if (rc) {
        return rc;
    }
    rc = sfs_meta_get_dentry(txn, parent.entry_id, name, &id, &type);
    if (rc == -ENOENT) {
        return sfs_error_set(-ENOENT, "no such directory: '%.200s'", path);
    }
    if (rc) {
        return rc;
    }
    if ((rc = sfs_meta_get_inode(txn, id, &victim)) ||
        (rc = sfs_meta_may_delete(cred, &parent, &victim, path))) {
        return rc;
    }
    if (type != SFS_TYPE_DIR) {
        return sfs_error_set(-ENOTDIR, "'%.200s' is not a directory", path);
    }
    rc = sfs_meta_dir_is_empty(txn, id, &empty);
    if (rc) {
        return rc;
    }
    if (!empty) {
        return sfs_error_set(-ENOTEMPTY, "directory '%.200s' is not empty", path);
    }
    rc = sfs_meta_remove_dir(txn, &parent, name, id, now_ns);
    return rc ? rc : sfs_meta_put_inode(txn, &parent);
}

int sfs_ns_rename(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *from, const char *to,
                  uint64_t now_ns)
{
    sfs_attr_t  from_parent, to_parent, moving;
    const char *from_name, *to_name;
    uint64_t    from_id, to_id;
    uint32_t    from_type, to_type;
    int         rc, same_parent;

    if ((rc = sfs_meta_resolve_parent(txn, cred, from, &from_parent, &from_name)) ||
        (rc = sfs_meta_resolve_parent(txn, cred, to, &to_parent, &to_name))) {
        return rc == -EEXIST ? sfs_error_set(-EBUSY, "cannot rename the root directory") : rc;
    }
    rc = sfs_meta_get_dentry(txn, from_parent.entry_id, from_name, &from_id, &from_type);
    if (rc == -ENOENT) {
        return sfs_error_set(-ENOENT, "no such file or directory: '%.200s'", from);
    }
    if (rc) {
        return rc;
    }
    if ((rc = sfs_meta_get_inode(txn, from_id, &moving)) ||
        (rc = sfs_meta_may_delete(cred, &from_parent, &moving, from))) {
        return rc;
    }
    if (strcmp(from, to) == 0) {
        return 0;
    }
    if (from_type == SFS_TYPE_DIR && sfs_path_is_within(to, from)) {
        return sfs_error_set(-EINVAL, "cannot move directory '%.200s' into itself", from);
    }
    same_parent = from_parent.entry_id == to_parent.entry_id;
    rc          = sfs_meta_get_dentry(txn, to_parent.entry_id, to_name, &to_id, &to_type);
    if (rc == 0) {
        sfs_attr_t victim;

        if (to_id == from_id) {
            return 0;
        }
        if ((rc = sfs_meta_get_inode(txn, to_id, &victim)) ||
            (rc = sfs_meta_may_delete(cred, &to_parent, &victim, to))) {
            return rc;
        }
        if (from_type == SFS_TYPE_DIR && to_type != SFS_TYPE_DIR) {
            return sfs_error_set(-ENOTDIR, "'%.200s' is not a directory", to);
        }
        if (from_type != SFS_TYPE_DIR && to_type == SFS_TYPE_DIR) {
            return sfs_error_set(-EISDIR, "'%.200s' is a directory", to);
        }
        if (to_type == SFS_TYPE_DIR) {
            int empty;

            rc = sfs_meta_dir_is_empty(txn, to_id, &empty);
            if (rc) {
                return rc;
            }
            if (!empty) {
                return sfs_error_set(-ENOTEMPTY, "directory '%.200s' is not empty", to);
            }
            rc = sfs_meta_remove_dir(txn, &to_parent, to_name, to_id, now_ns);
        } else {
            rc = sfs_meta_get_inode(txn, to_id, &victim);
            if (rc == 0) {
                rc = sfs_meta_remove_file(txn, &to_parent, to_name, &victim, now_ns);
            }
        }
        if (rc) {
            return rc;
        }
        if (same_parent) {
            from_parent = to_parent; /* keep one copy of the shared parent */
        }
    } else if (rc != -ENOENT) {
        return rc;
    } else if ((rc = sfs_meta_may_change(cred, &to_parent, to)) != 0) {
        return rc;
    }
    if (!same_parent && from_type == SFS_TYPE_DIR &&
        sfs_perm_check(cred, &moving, SFS_MAY_WRITE) != 0) {
        return sfs_error_set(-EACCES,
                             "'%.200s': permission denied (moving a directory elsewhere "
                             "needs write permission on it)",
                             from);
    }
    if ((rc = sfs_meta_del_dentry(txn, from_parent.entry_id, from_name)) ||
        (rc = sfs_meta_put_dentry(txn, to_parent.entry_id, to_name, from_id, from_type))) {
        return rc;
    }
    moving.parent_id     = to_parent.entry_id;
    moving.ctime_ns      = now_ns;
    from_parent.mtime_ns = from_parent.ctime_ns = now_ns;
    if (same_parent) {
        return (rc = sfs_meta_put_inode(txn, &moving)) ? rc : sfs_meta_put_inode(txn, &from_parent);
    }
    to_parent.mtime_ns = to_parent.ctime_ns = now_ns;
    if (from_type == SFS_TYPE_DIR) {
        from_parent.nlink--;
        to_parent.nlink++;
    }
    if ((rc = sfs_meta_put_inode(txn, &moving)) || (rc = sfs_meta_put_inode(txn, &from_parent))) {
        return rc;
    }
    return sfs_meta_put_inode(txn, &to_parent);
}

int sfs_ns_readdir(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path, const char *after,
                   uint32_t max, sfs_dirent_t *entries, uint32_t *count_p, int *eof_p)
{
    uint8_t     keybuf[8 + SFS_NAME_MAX];
    MDB_val     key, val;
    MDB_cursor *cursor;
    uint64_t    dir_id;
    uint32_t    type, count = 0;
    int         rc;

    *count_p = 0;
    *eof_p   = 1;
    rc       = sfs_meta_check_path(path);
    if (rc == 0) {
        rc = sfs_meta_resolve(txn, cred, path, &dir_id, &type);
    }
    if (rc) {
        return rc;
    }
    if (type != SFS_TYPE_DIR) {
        return sfs_error_set(-ENOTDIR, "'%.200s' is not a directory", path);
    }
    if (!sfs_cred_privileged(cred)) {
        sfs_attr_t dir;

        rc = sfs_meta_get_inode(txn, dir_id, &dir);
        if (rc) {
            return rc;
        }
        if (sfs_perm_check(cred, &dir, SFS_MAY_READ) != 0) {
            return sfs_error_set(-EACCES, "'%.200s': permission denied (read)", path);
        }
    }
    if (strlen(after) > SFS_NAME_MAX) {
        return sfs_error_set(-ENAMETOOLONG, "readdir resume name too long");
    }
    sfs_meta_dentry_key(dir_id, after, keybuf, &key);
    rc = mdb_cursor_open(txn->txn, txn->store->dentries, &cursor);
    if (rc) {
        return sfs_meta_mdb_error(rc, "opening a cursor");
    }
    rc = mdb_cursor_get(cursor, &key, &val, MDB_SET_RANGE);
    while (rc == 0) {
        sfs_rbuf_t rb;
        size_t     n;

        if (key.mv_size < 8 || sfs_meta_get_be64(key.mv_data) != dir_id) {
            break;
        }
        n = key.mv_size - 8;
        if (n > SFS_NAME_MAX) {
            rc = EIO;
            break;
        }
        if (after[0] && n == strlen(after) && memcmp((uint8_t *)key.mv_data + 8, after, n) == 0) {
            rc = mdb_cursor_get(cursor, &key, &val, MDB_NEXT);
            continue;
        }
        if (count == max) {
            *eof_p = 0;
            break;
        }
        memcpy(entries[count].name, (uint8_t *)key.mv_data + 8, n);
        entries[count].name[n] = '\0';
        sfs_rbuf_init(&rb, val.mv_data, val.mv_size);
        entries[count].entry_id = sfs_rbuf_u64(&rb);
        entries[count].type     = sfs_rbuf_u32(&rb);
        count++;
        rc = mdb_cursor_get(cursor, &key, &val, MDB_NEXT);
    }
    mdb_cursor_close(cursor);
    if (rc != 0 && rc != MDB_NOTFOUND) {
        return sfs_meta_mdb_error(rc, "reading a directory");
    }
    *count_p = count;
    return 0;
}

int sfs_ns_setpattern(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path,
                      uint64_t chunk_size, uint32_t stripe_count, uint64_t now_ns, sfs_attr_t *attr)
{
    int rc = sfs_ns_lookup(txn, cred, path, 0, attr);

    if (rc) {
        return rc;
    }
    if (!sfs_perm_owner(cred, attr) && !sfs_cred_admin(cred)) {
        return sfs_error_set(-EPERM,
                             "'%.200s': only its owner (uid %u) or an administrator may "
                             "set its pattern",
                             path, attr->uid);
    }
    if (attr->type != SFS_TYPE_DIR) {
        return sfs_error_set(-ENOTDIR,
                             "'%.200s' is a file: a file's pattern is fixed when it "
                             "is created (set it on its directory)",
                             path);
    }
    /* 0 keeps what the directory has */
    if ((chunk_size && (rc = sfs_ns_check_chunk_size(path, chunk_size))) ||
        (stripe_count && (rc = sfs_ns_check_stripe_count(path, stripe_count)))) {
        return rc;
    }
    if (chunk_size) {
        attr->pattern.chunk_size = chunk_size;
    }
    if (stripe_count) {
        attr->pattern.stripe_count = stripe_count;
    }
    attr->ctime_ns = now_ns;
    return sfs_meta_put_inode(txn, attr);
}

int sfs_ns_readdir_plus(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path,
                        const char *after, uint32_t max, uint64_t now_ns, sfs_attr_t *dir,
                        sfs_dirent_plus_t *entries, sfs_dirent_t *scratch, uint32_t *count_p,
                        int *eof_p)
{
    int rc = sfs_ns_lookup(txn, cred, path, 0, dir);

    *count_p = 0;
    *eof_p   = 1;
    if (rc) {
        return rc;
    }
    if (dir->type != SFS_TYPE_DIR) {
        return 0; /* a file: its own attributes only */
    }
    /* the children's attributes need search permission, as a stat of each */
    if (sfs_perm_check(cred, dir, SFS_MAY_EXEC) != 0) {
        return sfs_error_set(-EACCES, "'%.200s': permission denied (search)", path);
    }
    rc = sfs_ns_readdir(txn, cred, path, after, max, scratch, count_p, eof_p);
    for (uint32_t i = 0; rc == 0 && i < *count_p; i++) {
        entries[i].dirent = scratch[i];
        rc                = sfs_meta_get_inode(txn, scratch[i].entry_id, &entries[i].attr);
        if (rc == 0) {
            entries[i].size_valid = (uint8_t)sfs_ns_size_valid(&entries[i].attr, now_ns);
        }
    }
    return rc;
}
