/*
 * Namespace paths: resolving a canonical path to its entry (with search
 * permission on the way), and the rules for adding, removing and owning a
 * name in a directory (sticky bit, set-group-id directories).
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_store_internal.h"
#include "sfs_perm.h"

#include "sfs_errno.h"
#include "sfs_path.h"

#include <string.h>
#include <sys/stat.h>

int sfs_meta_check_path(const char *path)
{
    int rc = sfs_path_check(path);

    if (rc) {
        return sfs_error_set(rc, "invalid path '%.200s'", path);
    }
    return 0;
}

/* Resolve a canonical path to its entry id and type; the caller needs
 * search permission on every directory it passes through. */
int sfs_meta_resolve(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path, uint64_t *id_p,
                     uint32_t *type_p)
{
    char        name[SFS_NAME_MAX + 1];
    const char *p    = path;
    uint64_t    id   = SFS_ROOT_ID;
    uint32_t    type = SFS_TYPE_DIR;

    while (*p == '/') {
        const char *start = ++p;
        size_t      n;
        int         rc;

        while (*p && *p != '/') {
            p++;
        }
        n = (size_t)(p - start);
        if (n == 0) {
            break; /* the root */
        }
        if (type != SFS_TYPE_DIR) {
            return sfs_error_set(-ENOTDIR, "'%.200s': a component is not a directory", path);
        }
        if (!sfs_cred_privileged(cred)) {
            sfs_attr_t dir;

            rc = sfs_meta_get_inode(txn, id, &dir);
            if (rc) {
                return rc;
            }
            if (sfs_perm_check(cred, &dir, SFS_MAY_EXEC) != 0) {
                return sfs_error_set(-EACCES, "'%.200s': permission denied (search)", path);
            }
        }
        memcpy(name, start, n);
        name[n] = '\0';
        rc      = sfs_meta_get_dentry(txn, id, name, &id, &type);
        if (rc == -ENOENT) {
            return sfs_error_set(-ENOENT, "no such file or directory: '%.200s'", path);
        }
        if (rc) {
            return rc;
        }
    }
    *id_p   = id;
    *type_p = type;
    return 0;
}

/* Resolve the parent directory of a path and give the final name. */
int sfs_meta_resolve_parent(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path,
                            sfs_attr_t *parent, const char **name_p)
{
    char     parent_path[SFS_PATH_MAX];
    uint64_t id;
    uint32_t type;
    int      rc;

    rc = sfs_meta_check_path(path);
    if (rc) {
        return rc;
    }
    if (strcmp(path, "/") == 0) {
        return sfs_error_set(-EEXIST, "'/' is the root directory");
    }
    rc = sfs_path_split(path, parent_path, sizeof(parent_path), name_p);
    if (rc) {
        return sfs_error_set(rc, "invalid path '%.200s'", path);
    }
    rc = sfs_meta_resolve(txn, cred, parent_path, &id, &type);
    if (rc) {
        return rc;
    }
    if (type != SFS_TYPE_DIR) {
        return sfs_error_set(-ENOTDIR, "'%.200s' is not a directory", parent_path);
    }
    return sfs_meta_get_inode(txn, id, parent);
}

/* Adding or removing a name in `dir` needs write and search permission. */
int sfs_meta_may_change(const sfs_cred_t *cred, const sfs_attr_t *dir, const char *path)
{
    if (sfs_perm_check(cred, dir, SFS_MAY_WRITE | SFS_MAY_EXEC) != 0) {
        return sfs_error_set(-EACCES,
                             "'%.200s': permission denied (no write permission on its "
                             "directory)",
                             path);
    }
    return 0;
}

/* Removing `victim` (or renaming it away) from `dir`. */
int sfs_meta_may_delete(const sfs_cred_t *cred, const sfs_attr_t *dir, const sfs_attr_t *victim,
                        const char *path)
{
    int rc = sfs_meta_may_change(cred, dir, path);

    if (rc == 0 && sfs_perm_sticky(cred, dir, victim) != 0) {
        rc = sfs_error_set(-EPERM,
                           "'%.200s': operation not permitted (sticky directory: only "
                           "the owner may remove it)",
                           path);
    }
    return rc;
}

/* Owner and mode of a new entry: a server names them (it acts for a user it
 * trusts), anyone else gets its own ids (sfs_perm_new_entry). */
void sfs_meta_new_owner(const sfs_cred_t *cred, const sfs_attr_t *parent, int is_dir, uint32_t mode,
                        uint32_t uid, uint32_t gid, sfs_attr_t *attr)
{
    if (cred->flags & SFS_CRED_SERVER) {
        attr->mode = mode & 07777;
        attr->uid  = uid;
        attr->gid  = gid;
        if ((parent->mode & S_ISGID) && is_dir) {
            attr->mode |= S_ISGID;
        }
        return;
    }
    sfs_perm_new_entry(cred, parent, is_dir, mode, &attr->uid, &attr->gid, &attr->mode);
}
