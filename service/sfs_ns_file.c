/*
 * Namespace operations on files and on any entry's attributes: lookup,
 * create (choosing the new file's targets), unlink (queueing its chunk
 * files for deletion), setattr.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_store_internal.h"
#include "sfs_meta_quota.h"
#include "sfs_ns_pattern.h"
#include "sfs_perm.h"

#include "sfs_errno.h"

#include <string.h>

int sfs_ns_lookup(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path, unsigned want,
                  sfs_attr_t *attr)
{
    uint64_t id;
    uint32_t type;
    int      rc = sfs_meta_check_path(path);

    if (rc == 0) {
        rc = sfs_meta_resolve(txn, cred, path, &id, &type);
    }
    if (rc == 0) {
        rc = sfs_meta_get_inode(txn, id, attr);
    }
    if (rc == 0 && want && sfs_perm_check(cred, attr, want) != 0) {
        rc = sfs_error_set(-EACCES, "'%.200s': permission denied (mode %04o, owner %u:%u)", path,
                           attr->mode & 07777, attr->uid, attr->gid);
    }
    return rc;
}

int sfs_ns_create(sfs_meta_txn_t *txn, const sfs_ns_create_args_t *args, sfs_attr_t *attr,
                  int *created_p)
{
    sfs_attr_t  parent;
    const char *name;
    uint64_t    id;
    uint32_t    type;
    int         rc, picked, limited = 0;

    *created_p = 0;
    rc         = sfs_meta_resolve_parent(txn, args->cred, args->path, &parent, &name);
    if (rc) {
        return rc;
    }
    if (sfs_perm_check(args->cred, &parent, SFS_MAY_EXEC) != 0) {
        return sfs_error_set(-EACCES, "'%.200s': permission denied (search)", args->path);
    }
    rc = sfs_meta_get_dentry(txn, parent.entry_id, name, &id, &type);
    if (rc == 0) {
        if (args->flags & SFS_CREATE_EXCL) {
            return sfs_error_set(-EEXIST, "'%.200s' exists", args->path);
        }
        if (type == SFS_TYPE_DIR) {
            return sfs_error_set(-EISDIR, "'%.200s' is a directory", args->path);
        }
        rc = sfs_meta_get_inode(txn, id, attr);
        if (rc == 0 && args->want && sfs_perm_check(args->cred, attr, args->want) != 0) {
            rc = sfs_error_set(-EACCES, "'%.200s': permission denied (mode %04o, owner %u:%u)",
                               args->path, attr->mode & 07777, attr->uid, attr->gid);
        }
        return rc;
    }
    if (rc != -ENOENT) {
        return rc;
    }
    rc = sfs_meta_may_change(args->cred, &parent, args->path);
    if (rc) {
        return rc;
    }
    memset(attr, 0, sizeof(*attr));
    attr->pattern.type =
        ((args->flags & SFS_PATTERN_REQ_MIRROR) ||
         (parent.pattern.type == SFS_PATTERN_MIRROR && !(args->flags & SFS_PATTERN_REQ_NO_MIRROR)))
            ? SFS_PATTERN_MIRROR
            : SFS_PATTERN_RAID0;
    attr->pattern.chunk_size = args->chunk_size ? args->chunk_size : parent.pattern.chunk_size;
    attr->pattern.stripe_count =
        args->stripe_count ? args->stripe_count : parent.pattern.stripe_count;
    if ((rc = sfs_ns_check_chunk_size(args->path, attr->pattern.chunk_size)) ||
        (rc = sfs_ns_check_stripe_count(args->path, attr->pattern.stripe_count))) {
        return rc;
    }
    if (attr->pattern.type == SFS_PATTERN_MIRROR && !args->choose_mirror) {
        return sfs_error_set(-EINVAL, "'%.200s': mirrored files cannot be created here",
                             args->path);
    }
    /* the pool the directory is set to, unless the create names one */
    attr->pool = (args->flags & SFS_PATTERN_REQ_POOL) ? args->pool : parent.pool;
    picked     = (attr->pattern.type == SFS_PATTERN_MIRROR ? args->choose_mirror : args->choose)(
        args->choose_arg, attr->pool, attr->pattern.stripe_count, args->start_target,
        attr->pattern.targets);
    if (picked < 0) {
        return picked;
    }
    attr->pattern.stripe_count = (uint32_t)picked;
    attr->pattern_targets      = (uint32_t)picked;
    rc                         = sfs_meta_next_id(txn, &attr->entry_id);
    if (rc) {
        return rc;
    }
    attr->parent_id = parent.entry_id;
    attr->type      = SFS_TYPE_FILE;
    sfs_meta_new_owner(args->cred, &parent, 0, args->mode, args->uid, args->gid, attr);
    attr->ctime_ns = attr->mtime_ns = attr->atime_ns = args->now_ns;
    attr->nlink                                      = 1;
    attr->size_flags = SFS_SIZE_KNOWN; /* empty, and no writer yet */
    if (args->flags & SFS_CREATE_WRITER) {
        /* its creator writes it: registered now, in this commit, which
         * saves the open a BEGIN (a commit of its own) before its first
         * write; it knows the size from 0 on (sfs_ns_size.c) */
        attr->size_flags    = SFS_SIZE_BASE;
        attr->writers       = 1;
        attr->write_gen     = 1;
        attr->write_until_s = args->now_ns / 1000000000u + args->lease_s;
    }
    if ((rc = sfs_meta_quota_may_create(txn, attr, args->path)) ||
        ((args->flags & SFS_CREATE_WRITER) &&
         (rc = limited = sfs_meta_quota_limited(txn, attr)) < 0) ||
        (rc = sfs_meta_put_inode(txn, attr)) ||
        (rc = sfs_meta_put_dentry(txn, parent.entry_id, name, attr->entry_id, SFS_TYPE_FILE)) ||
        (rc = sfs_meta_counter_add(txn, "files", 1, NULL))) {
        return rc;
    }
    parent.mtime_ns = parent.ctime_ns = args->now_ns;
    rc                                = sfs_meta_put_inode(txn, &parent);
    if (rc == 0) {
        /* a writer of a file under a space quota asks QUOTA_GROW before
         * its first write (docs/quotas.md) */
        *created_p = !(args->flags & SFS_CREATE_WRITER) ? 1
                     : limited                          ? (int)SFS_CREATED_WRITER_QUOTA
                                                        : (int)SFS_CREATED_WRITER;
    }
    return rc;
}

int sfs_meta_remove_file(sfs_meta_txn_t *txn, sfs_attr_t *parent, const char *name,
                         const sfs_attr_t *attr, uint64_t now_ns)
{
    sfs_attr_t gone = *attr;
    int        rc;

    gone.ctime_ns = now_ns; /* its removal's time: how long the deletion may wait for a writer */
    if ((rc = sfs_meta_del_dentry(txn, parent->entry_id, name)) ||
        (rc = sfs_meta_del_inode(txn, attr->entry_id)) ||
        (rc = sfs_meta_counter_add(txn, "files", -1, NULL)) ||
        (rc = sfs_meta_queue_delete(txn, &gone)) ||
        (rc = sfs_meta_counter_add(txn, "pending_deletes", 1, NULL))) {
        return rc;
    }
    parent->mtime_ns = parent->ctime_ns = now_ns;
    return 0;
}

int sfs_ns_unlink(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path, uint64_t now_ns,
                  sfs_attr_t *attr)
{
    sfs_attr_t  parent;
    const char *name;
    uint64_t    id;
    uint32_t    type;
    int         rc;

    rc = sfs_meta_resolve_parent(txn, cred, path, &parent, &name);
    if (rc) {
        return rc == -EEXIST ? sfs_error_set(-EISDIR, "'/' is a directory") : rc;
    }
    rc = sfs_meta_get_dentry(txn, parent.entry_id, name, &id, &type);
    if (rc == -ENOENT) {
        return sfs_error_set(-ENOENT, "no such file: '%.200s'", path);
    }
    if (rc) {
        return rc;
    }
    rc = sfs_meta_get_inode(txn, id, attr);
    if (rc == 0) {
        rc = sfs_meta_may_delete(cred, &parent, attr, path);
    }
    if (rc) {
        return rc;
    }
    if (type == SFS_TYPE_DIR) {
        return sfs_error_set(-EISDIR, "'%.200s' is a directory (use rmdir)", path);
    }
    rc = sfs_meta_remove_file(txn, &parent, name, attr, now_ns);
    return rc ? rc : sfs_meta_put_inode(txn, &parent);
}

int sfs_ns_setattr(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path, uint32_t mask,
                   uint32_t mode, uint32_t uid, uint32_t gid, uint64_t atime_ns, uint64_t mtime_ns,
                   uint64_t now_ns, sfs_attr_t *attr)
{
    uint32_t explicit_times = mask & (SFS_SETATTR_ATIME | SFS_SETATTR_MTIME);
    uint32_t now_times      = mask & (SFS_SETATTR_ATIME_NOW | SFS_SETATTR_MTIME_NOW);
    int      rc             = sfs_ns_lookup(txn, cred, path, 0, attr);

    if (rc) {
        return rc;
    }
    if (mask & ~SFS_SETATTR_KNOWN) {
        return sfs_error_set(-EINVAL, "'%.200s': unknown attribute bits %#x", path,
                             mask & ~SFS_SETATTR_KNOWN);
    }
    if (mask & SFS_SETATTR_MODE) {
        if (sfs_perm_chmod(cred, attr, mode, &attr->mode) != 0) {
            return sfs_error_set(-EPERM, "'%.200s': only its owner (uid %u) may change its mode",
                                 path, attr->uid);
        }
    }
    if ((mask & SFS_SETATTR_KILL_PRIV) && sfs_perm_kill_privs(cred, attr) != 0) {
        return sfs_error_set(-EACCES, "'%.200s': permission denied (write)", path);
    }
    if (mask & SFS_SETATTR_OWNER) {
        sfs_attr_t before = *attr;

        if (sfs_perm_chown(cred, attr, uid, gid) != 0) {
            return sfs_error_set(-EPERM,
                                 "'%.200s': operation not permitted (only root gives a file away; "
                                 "its owner may change its group to one of their own)",
                                 path);
        }
        /* a user's chgrp into a group at its limit is refused, as on ext4
         * (root's is not) */
        if (!sfs_cred_privileged(cred) &&
            (rc = sfs_meta_quota_may_move(txn, &before, attr, path)) != 0) {
            return rc;
        }
    }
    if (explicit_times || now_times) {
        /* only "both to now" (utimes(NULL)) may be done with write
         * permission: anything else is setting times (Linux's
         * ATTR_TIMES_SET), the owner's */
        rc = sfs_perm_utimes(cred, attr,
                             explicit_times == 0 &&
                                 now_times == (SFS_SETATTR_ATIME_NOW | SFS_SETATTR_MTIME_NOW));
        if (rc == -EPERM) {
            return sfs_error_set(rc, "'%.200s': only its owner (uid %u) may set its times", path,
                                 attr->uid);
        }
        if (rc) {
            return sfs_error_set(rc,
                                 "'%.200s': permission denied (setting the times to now "
                                 "needs write permission)",
                                 path);
        }
    }
    if (mask & SFS_SETATTR_ATIME) {
        attr->atime_ns = atime_ns;
    }
    if (mask & SFS_SETATTR_MTIME) {
        attr->mtime_ns = mtime_ns;
    }
    if (mask & SFS_SETATTR_ATIME_NOW) {
        attr->atime_ns = now_ns;
    }
    if (mask & SFS_SETATTR_MTIME_NOW) {
        attr->mtime_ns = now_ns;
    }
    attr->ctime_ns = now_ns;
    return sfs_meta_put_inode(txn, attr);
}
