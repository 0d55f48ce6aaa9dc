#define SFS_LOG_FAC "meta"
#include "sfs_meta_store.h"
#include "sfs_perm.h"

#include "sfs_alloc.h"
#include "sfs_buf.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_path.h"

#include <limits.h>
#include <lmdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define SFS_META_RECORD_VERSION 1
#define SFS_META_ATTR_MAX       (128 + 4 * SFS_STRIPE_COUNT_MAX)

struct sfs_meta_store {
    MDB_env *env;
    MDB_dbi  inodes;   /* u64 id (big endian) -> attr record */
    MDB_dbi  dentries; /* u64 parent id (big endian) + name -> u64 id + u32 type */
    MDB_dbi  counters; /* name -> u64 */
    MDB_dbi  unlinked; /* u64 id -> pattern of a removed file awaiting chunk deletion */
    char     dir[PATH_MAX];
};

struct sfs_meta_txn {
    sfs_meta_store_t *store;
    MDB_txn          *txn;
    int               write;
};

static int sfs_meta_mdb_error(int mdb_rc, const char *what)
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

static void sfs_meta_put_be64(uint8_t *out, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        out[i] = (uint8_t)v;
        v >>= 8;
    }
}

static uint64_t sfs_meta_get_be64(const uint8_t *in)
{
    uint64_t v = 0;

    for (int i = 0; i < 8; i++) {
        v = (v << 8) | in[i];
    }
    return v;
}

/* ---------------------------------------------------------------------- */
/* Records                                                                  */

static int sfs_meta_get_inode(sfs_meta_txn_t *txn, uint64_t id, sfs_attr_t *attr)
{
    uint8_t    keybuf[8];
    MDB_val    key = {8, keybuf}, val;
    sfs_rbuf_t rb;
    int        rc;

    sfs_meta_put_be64(keybuf, id);
    rc = mdb_get(txn->txn, txn->store->inodes, &key, &val);
    if (rc == MDB_NOTFOUND) {
        return sfs_error_set(-EIO,
                             "metadata store: entry %016lx is named but has no inode "
                             "(run stripefs-fsck)",
                             (unsigned long)id);
    }
    if (rc) {
        return sfs_meta_mdb_error(rc, "reading an inode");
    }
    sfs_rbuf_init(&rb, val.mv_data, val.mv_size);
    if (sfs_rbuf_u8(&rb) != SFS_META_RECORD_VERSION) {
        return sfs_error_set(-EIO, "metadata store: inode %016lx has an unknown format",
                             (unsigned long)id);
    }
    sfs_proto_attr_unpack(&rb, attr);
    if (rb.error) {
        return sfs_error_set(-EIO, "metadata store: inode %016lx is corrupt", (unsigned long)id);
    }
    return 0;
}

static int sfs_meta_put_inode(sfs_meta_txn_t *txn, const sfs_attr_t *attr)
{
    uint8_t    keybuf[8], valbuf[SFS_META_ATTR_MAX];
    MDB_val    key = {8, keybuf}, val;
    sfs_wbuf_t wb;
    int        rc;

    sfs_meta_put_be64(keybuf, attr->entry_id);
    sfs_wbuf_init(&wb, valbuf, sizeof(valbuf));
    sfs_wbuf_u8(&wb, SFS_META_RECORD_VERSION);
    sfs_proto_attr_pack(&wb, attr);
    if (wb.error) {
        return sfs_error_set(-EIO, "metadata store: inode record too large");
    }
    val.mv_size = wb.length;
    val.mv_data = valbuf;
    rc          = mdb_put(txn->txn, txn->store->inodes, &key, &val, 0);
    return rc ? sfs_meta_mdb_error(rc, "writing an inode") : 0;
}

static int sfs_meta_del_inode(sfs_meta_txn_t *txn, uint64_t id)
{
    uint8_t keybuf[8];
    MDB_val key = {8, keybuf};
    int     rc;

    sfs_meta_put_be64(keybuf, id);
    rc = mdb_del(txn->txn, txn->store->inodes, &key, NULL);
    return rc ? sfs_meta_mdb_error(rc, "removing an inode") : 0;
}

static void sfs_meta_dentry_key(uint64_t parent, const char *name, uint8_t *buf, MDB_val *key)
{
    size_t n = strlen(name);

    sfs_meta_put_be64(buf, parent);
    memcpy(buf + 8, name, n);
    key->mv_size = 8 + n;
    key->mv_data = buf;
}

/* 0 and the child's id and type, or -ENOENT. */
static int sfs_meta_get_dentry(sfs_meta_txn_t *txn, uint64_t parent, const char *name,
                               uint64_t *id_p, uint32_t *type_p)
{
    uint8_t    keybuf[8 + SFS_NAME_MAX];
    MDB_val    key, val;
    sfs_rbuf_t rb;
    int        rc;

    sfs_meta_dentry_key(parent, name, keybuf, &key);
    rc = mdb_get(txn->txn, txn->store->dentries, &key, &val);
    if (rc == MDB_NOTFOUND) {
        return -ENOENT;
    }
    if (rc) {
        return sfs_meta_mdb_error(rc, "reading a directory entry");
    }
    sfs_rbuf_init(&rb, val.mv_data, val.mv_size);
    *id_p   = sfs_rbuf_u64(&rb);
    *type_p = sfs_rbuf_u32(&rb);
    return rb.error ? sfs_error_set(-EIO, "metadata store: corrupt directory entry '%s'", name) : 0;
}

static int sfs_meta_put_dentry(sfs_meta_txn_t *txn, uint64_t parent, const char *name, uint64_t id,
                               uint32_t type)
{
    uint8_t    keybuf[8 + SFS_NAME_MAX], valbuf[12];
    MDB_val    key, val = {12, valbuf};
    sfs_wbuf_t wb;
    int        rc;

    sfs_meta_dentry_key(parent, name, keybuf, &key);
    sfs_wbuf_init(&wb, valbuf, sizeof(valbuf));
    sfs_wbuf_u64(&wb, id);
    sfs_wbuf_u32(&wb, type);
    rc = mdb_put(txn->txn, txn->store->dentries, &key, &val, 0);
    return rc ? sfs_meta_mdb_error(rc, "writing a directory entry") : 0;
}

static int sfs_meta_del_dentry(sfs_meta_txn_t *txn, uint64_t parent, const char *name)
{
    uint8_t keybuf[8 + SFS_NAME_MAX];
    MDB_val key;
    int     rc;

    sfs_meta_dentry_key(parent, name, keybuf, &key);
    rc = mdb_del(txn->txn, txn->store->dentries, &key, NULL);
    return rc ? sfs_meta_mdb_error(rc, "removing a directory entry") : 0;
}

static int sfs_meta_counter_add(sfs_meta_txn_t *txn, const char *name, int64_t delta,
                                uint64_t *value_p)
{
    MDB_val  key = {strlen(name), (void *)name}, val;
    uint8_t  buf[8];
    uint64_t value = 0;
    int      rc;

    rc = mdb_get(txn->txn, txn->store->counters, &key, &val);
    if (rc == 0 && val.mv_size == 8) {
        value = sfs_meta_get_be64(val.mv_data);
    } else if (rc && rc != MDB_NOTFOUND) {
        return sfs_meta_mdb_error(rc, "reading a counter");
    }
    value += (uint64_t)delta;
    if (delta != 0) {
        sfs_meta_put_be64(buf, value);
        val.mv_size = 8;
        val.mv_data = buf;
        rc          = mdb_put(txn->txn, txn->store->counters, &key, &val, 0);
        if (rc) {
            return sfs_meta_mdb_error(rc, "writing a counter");
        }
    }
    if (value_p) {
        *value_p = value;
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Open                                                                     */

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
    rc = mdb_env_create(&store->env);
    if (rc) {
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
            root.pattern.type = SFS_PATTERN_RAID0;
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
    free(store);
}

int sfs_meta_store_sync(sfs_meta_store_t *store)
{
    int rc = mdb_env_sync(store->env, 1);

    return rc ? sfs_meta_mdb_error(rc, "sync") : 0;
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
    *txn_p     = txn;
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
    txn->store = parent->store;
    txn->write = 1;
    *txn_p     = txn;
    return 0;
}

int sfs_meta_txn_commit(sfs_meta_txn_t *txn)
{
    int rc = mdb_txn_commit(txn->txn);

    free(txn);
    return rc ? sfs_meta_mdb_error(rc, "commit") : 0;
}

void sfs_meta_txn_abort(sfs_meta_txn_t *txn)
{
    if (txn) {
        mdb_txn_abort(txn->txn);
        free(txn);
    }
}

/* ---------------------------------------------------------------------- */
/* Namespace                                                                */

static int sfs_meta_check_path(const char *path)
{
    int rc = sfs_path_check(path);

    if (rc) {
        return sfs_error_set(rc, "invalid path '%.200s'", path);
    }
    return 0;
}

/* Resolve a canonical path to its entry id and type; the caller needs
 * search permission on every directory it passes through. */
static int sfs_meta_resolve(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path,
                            uint64_t *id_p, uint32_t *type_p)
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
static int sfs_meta_resolve_parent(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path,
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
static int sfs_meta_may_change(const sfs_cred_t *cred, const sfs_attr_t *dir, const char *path)
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
static int sfs_meta_may_delete(const sfs_cred_t *cred, const sfs_attr_t *dir,
                               const sfs_attr_t *victim, const char *path)
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

static int sfs_meta_next_id(sfs_meta_txn_t *txn, uint64_t *id_p)
{
    uint64_t next;
    int      rc = sfs_meta_counter_add(txn, "next_id", 1, &next);

    if (rc == 0) {
        *id_p = next - 1;
    }
    return rc;
}

/* Owner and mode of a new entry: a server names them (it acts for a user it
 * trusts), anyone else gets its own ids (sfs_perm_new_entry). */
static void sfs_meta_new_owner(const sfs_cred_t *cred, const sfs_attr_t *parent, int is_dir,
                               uint32_t mode, uint32_t uid, uint32_t gid, sfs_attr_t *attr)
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
    int         rc, picked;

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
    attr->pattern.type       = SFS_PATTERN_RAID0;
    attr->pattern.chunk_size = args->chunk_size ? args->chunk_size : parent.pattern.chunk_size;
    attr->pattern.stripe_count =
        args->stripe_count ? args->stripe_count : parent.pattern.stripe_count;
    if (sfs_layout_check_chunk_size(attr->pattern.chunk_size) != 0) {
        return sfs_error_set(-EINVAL,
                             "'%.200s': chunk size %lu is not a power of two in "
                             "64 KiB..4 GiB",
                             args->path, (unsigned long)attr->pattern.chunk_size);
    }
    if (attr->pattern.stripe_count == 0 || attr->pattern.stripe_count > SFS_STRIPE_COUNT_MAX) {
        return sfs_error_set(-EINVAL, "'%.200s': stripe count %u out of range 1..%u", args->path,
                             attr->pattern.stripe_count, SFS_STRIPE_COUNT_MAX);
    }
    picked = args->choose(args->choose_arg, attr->pattern.stripe_count, args->start_target,
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
    if ((rc = sfs_meta_put_inode(txn, attr)) ||
        (rc = sfs_meta_put_dentry(txn, parent.entry_id, name, attr->entry_id, SFS_TYPE_FILE)) ||
        (rc = sfs_meta_counter_add(txn, "files", 1, NULL))) {
        return rc;
    }
    parent.mtime_ns = parent.ctime_ns = args->now_ns;
    rc                                = sfs_meta_put_inode(txn, &parent);
    if (rc == 0) {
        *created_p = 1;
    }
    return rc;
}

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
    if ((rc = sfs_meta_put_inode(txn, attr)) ||
        (rc = sfs_meta_put_dentry(txn, parent.entry_id, name, attr->entry_id, SFS_TYPE_DIR)) ||
        (rc = sfs_meta_counter_add(txn, "dirs", 1, NULL))) {
        return rc;
    }
    parent.nlink++;
    parent.mtime_ns = parent.ctime_ns = now_ns;
    return sfs_meta_put_inode(txn, &parent);
}

static int sfs_meta_dir_is_empty(sfs_meta_txn_t *txn, uint64_t dir_id, int *empty_p)
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
static int sfs_meta_remove_dir(sfs_meta_txn_t *txn, sfs_attr_t *parent, const char *name,
                               uint64_t id, uint64_t now_ns)
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

/* Queue a removed file's chunk files for deletion on its targets. */
static int sfs_meta_queue_delete(sfs_meta_txn_t *txn, const sfs_attr_t *attr)
{
    uint8_t    keybuf[8], valbuf[SFS_META_ATTR_MAX];
    MDB_val    key = {8, keybuf}, val;
    sfs_wbuf_t wb;
    int        rc;

    sfs_meta_put_be64(keybuf, attr->entry_id);
    sfs_wbuf_init(&wb, valbuf, sizeof(valbuf));
    sfs_wbuf_u8(&wb, SFS_META_RECORD_VERSION);
    sfs_proto_attr_pack(&wb, attr);
    val.mv_size = wb.length;
    val.mv_data = valbuf;
    rc          = mdb_put(txn->txn, txn->store->unlinked, &key, &val, 0);
    return rc ? sfs_meta_mdb_error(rc, "queueing chunk deletion") : 0;
}

static int sfs_meta_remove_file(sfs_meta_txn_t *txn, sfs_attr_t *parent, const char *name,
                                const sfs_attr_t *attr, uint64_t now_ns)
{
    int rc;

    if ((rc = sfs_meta_del_dentry(txn, parent->entry_id, name)) ||
        (rc = sfs_meta_del_inode(txn, attr->entry_id)) ||
        (rc = sfs_meta_counter_add(txn, "files", -1, NULL)) ||
        (rc = sfs_meta_queue_delete(txn, attr)) ||
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
    if (chunk_size && sfs_layout_check_chunk_size(chunk_size) != 0) {
        return sfs_error_set(-EINVAL, "chunk size %lu is not a power of two in 64 KiB..4 GiB",
                             (unsigned long)chunk_size);
    }
    if (stripe_count > SFS_STRIPE_COUNT_MAX) {
        return sfs_error_set(-EINVAL, "stripe count %u out of range 1..%u", stripe_count,
                             SFS_STRIPE_COUNT_MAX);
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
        if (sfs_perm_chown(cred, attr, uid, gid) != 0) {
            return sfs_error_set(-EPERM,
                                 "'%.200s': operation not permitted (only root gives a file away; "
                                 "its owner may change its group to one of their own)",
                                 path);
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

int sfs_ns_statfs(sfs_meta_txn_t *txn, sfs_meta_statfs_t *stats)
{
    int rc;

    if ((rc = sfs_meta_counter_add(txn, "files", 0, &stats->files)) ||
        (rc = sfs_meta_counter_add(txn, "dirs", 0, &stats->dirs)) ||
        (rc = sfs_meta_counter_add(txn, "pending_deletes", 0, &stats->pending_chunk_deletes))) {
        return rc;
    }
    return 0;
}

int sfs_ns_pending_deletes(sfs_meta_txn_t *txn, uint64_t after, uint32_t max, uint64_t *ids,
                           sfs_pattern_t *patterns, uint32_t *count_p)
{
    uint8_t     keybuf[8];
    MDB_val     key = {8, keybuf}, val;
    MDB_cursor *cursor;
    uint32_t    count = 0;
    int         rc;

    sfs_meta_put_be64(keybuf, after + 1);
    rc = mdb_cursor_open(txn->txn, txn->store->unlinked, &cursor);
    if (rc) {
        return sfs_meta_mdb_error(rc, "opening a cursor");
    }
    rc = mdb_cursor_get(cursor, &key, &val, MDB_SET_RANGE);
    while (rc == 0 && count < max) {
        sfs_rbuf_t rb;
        sfs_attr_t attr;

        sfs_rbuf_init(&rb, val.mv_data, val.mv_size);
        sfs_rbuf_u8(&rb);
        sfs_proto_attr_unpack(&rb, &attr);
        if (key.mv_size == 8 && !rb.error) {
            ids[count]                   = sfs_meta_get_be64(key.mv_data);
            patterns[count]              = attr.pattern;
            patterns[count].stripe_count = attr.pattern_targets;
            count++;
        }
        rc = mdb_cursor_get(cursor, &key, &val, MDB_NEXT);
    }
    mdb_cursor_close(cursor);
    if (rc != 0 && rc != MDB_NOTFOUND) {
        return sfs_meta_mdb_error(rc, "reading pending deletions");
    }
    *count_p = count;
    return 0;
}

int sfs_ns_deletes_done(sfs_meta_txn_t *txn, const uint64_t *ids, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        uint8_t keybuf[8];
        MDB_val key = {8, keybuf};
        int     rc;

        sfs_meta_put_be64(keybuf, ids[i]);
        rc = mdb_del(txn->txn, txn->store->unlinked, &key, NULL);
        if (rc == MDB_NOTFOUND) {
            continue;
        }
        if (rc) {
            return sfs_meta_mdb_error(rc, "forgetting a finished deletion");
        }
        rc = sfs_meta_counter_add(txn, "pending_deletes", -1, NULL);
        if (rc) {
            return rc;
        }
    }
    return 0;
}

int sfs_ns_list_inodes(sfs_meta_txn_t *txn, uint64_t after, uint32_t max, sfs_attr_t *attrs,
                       uint32_t *count_p)
{
    uint8_t     keybuf[8];
    MDB_val     key = {8, keybuf}, val;
    MDB_cursor *cursor;
    uint32_t    count = 0;
    int         rc;

    sfs_meta_put_be64(keybuf, after + 1);
    rc = mdb_cursor_open(txn->txn, txn->store->inodes, &cursor);
    if (rc) {
        return sfs_meta_mdb_error(rc, "opening a cursor");
    }
    rc = mdb_cursor_get(cursor, &key, &val, MDB_SET_RANGE);
    while (rc == 0 && count < max) {
        sfs_rbuf_t rb;

        sfs_rbuf_init(&rb, val.mv_data, val.mv_size);
        sfs_rbuf_u8(&rb);
        sfs_proto_attr_unpack(&rb, &attrs[count]);
        if (!rb.error) {
            count++;
        }
        rc = mdb_cursor_get(cursor, &key, &val, MDB_NEXT);
    }
    mdb_cursor_close(cursor);
    if (rc != 0 && rc != MDB_NOTFOUND) {
        return sfs_meta_mdb_error(rc, "listing inodes");
    }
    *count_p = count;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Consistency check                                                        */

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
            rc = mdb_cursor_del(cursor, 0);
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
    return rc;
}

int sfs_ns_test_drop_inode(sfs_meta_txn_t *txn, uint64_t entry_id)
{
    return sfs_meta_del_inode(txn, entry_id);
}

int sfs_ns_test_drop_name(sfs_meta_txn_t *txn, const char *path)
{
    sfs_attr_t  parent;
    const char *name;
    sfs_cred_t  server = {.flags = SFS_CRED_SERVER};
    int         rc     = sfs_meta_resolve_parent(txn, &server, path, &parent, &name);

    return rc ? rc : sfs_meta_del_dentry(txn, parent.entry_id, name);
}
