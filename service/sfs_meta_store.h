/*
 * The metadata store: the namespace (directories, names, entry ids,
 * patterns, owners, times) in LMDB, a transactional B-tree that survives
 * kill -9 and power loss once a write transaction has committed.
 *
 * Operations run inside a transaction the caller opens; a caller batches
 * many operations into one write transaction (group commit), each in a
 * nested transaction so a failing one leaves no trace. Paths must be
 * canonical (sfs_path_check). Functions return 0 or a negative errno and
 * record a detail naming the path.
 *
 * Not thread-safe per transaction; one writer at a time (LMDB's rule).
 */
#ifndef SFS_META_STORE_H
#define SFS_META_STORE_H

#include "sfs_cred.h"
#include "sfs_proto.h"

#include <stdint.h>

#define SFS_ROOT_ID 1ull

typedef struct sfs_meta_store sfs_meta_store_t;
typedef struct sfs_meta_txn   sfs_meta_txn_t;

/* Picks `count` target ids for a new file (at most SFS_STRIPE_COUNT_MAX),
 * all in storage pool `pool` (SFS_POOL_NONE: any target); `start_target`
 * non-zero asks for that target first. Returns how many it picked (>= 1)
 * or a negative errno when none is usable. */
typedef int (*sfs_meta_choose_fn)(void *arg, uint32_t pool, uint32_t count, uint32_t start_target,
                                  uint32_t *targets);

typedef struct sfs_meta_store_params {
    const char *dir;
    int         sync;       /* durable commits (fsync) */
    uint64_t    map_size;   /* LMDB map size, bytes */
    uint64_t    chunk_size; /* the root's default pattern, used on first open */
    uint32_t    stripe_count;
    int         mirror; /* a new root directory mirrors new files (mirror.default) */
} sfs_meta_store_params_t;

int sfs_meta_store_open(const sfs_meta_store_params_t *params, sfs_meta_store_t **store_p);
/* Whether `dir` holds a store (its data file), changing nothing: 1, 0, or a
 * negative errno with the detail set. */
int  sfs_meta_store_exists(const char *dir);
void sfs_meta_store_close(sfs_meta_store_t *store);
/* Flush to disk (only matters when sync is off). */
int sfs_meta_store_sync(sfs_meta_store_t *store);
/* The file system's identity: a random id the store keeps (0: none yet;
 * stores made before ids were kept have none until their next start), and
 * whether its namespace is empty (no name in any directory, no chunk
 * deletion pending). A store with neither an id nor a name is a new file
 * system. */
int sfs_meta_store_identity(sfs_meta_store_t *store, uint64_t *fs_id_p, int *empty_p);
/* Keep `fs_id` (not 0) as the file system's id, durably even when sync is
 * off; -EEXIST if the store has another one. */
int sfs_meta_store_set_identity(sfs_meta_store_t *store, uint64_t fs_id);

/* Metadata mirroring (docs/metadata.md): with `on`, every write
 * transaction begun from now on keeps its writes (those of its nested
 * transactions that committed), for sfs_meta_txn_writes. Off by default:
 * then nothing is kept and nothing costs. */
void sfs_meta_store_record_writes(sfs_meta_store_t *store, int on);
/* The writes a recording top-level write transaction has kept so far
 * (sfs_meta_writes.h), owned by it until its commit or abort; NULL when it
 * does not record. */
struct sfs_meta_writes *sfs_meta_txn_writes(sfs_meta_txn_t *txn);
/* A mirror's replay of its primary's encoded writes (sfs_meta_writes.h):
 * all of them in one transaction, durable as the store's commits are, or
 * none; with `replace`, every record of the store is removed first (the
 * first piece of a full copy). -EPROTO for a malformed set (checked whole
 * before anything changes); -ESTALE when a delete finds nothing, i.e. this
 * store is not the copy of the primary's it should be. */
int sfs_meta_store_apply(sfs_meta_store_t *store, const void *data, size_t length, int replace);
/* The number of the last batch a mirrored store holds (0: none), the same
 * on a primary and a mirror that is in step with it. */
int sfs_meta_store_mirror_seq(sfs_meta_store_t *store, uint64_t *seq_p);
/* The same and the count of batches the primary committed without its
 * mirror, ever (mirror_alone): a mirror whose two numbers both equal the
 * primary's has every batch the primary has. A batch committed alone
 * changes the count, which only a full copy (or a replay of that batch)
 * brings to the mirror; so a batch number that is equal by chance (a batch
 * the mirror got but the primary lost in a crash, then another batch of
 * that number committed alone) is never taken for in step, even after the
 * primary restarts. */
int sfs_meta_store_mirror_mark(sfs_meta_store_t *store, uint64_t *seq_p, uint64_t *alone_p);
/* In a write transaction of a primary: the next batch number, kept in the
 * store (and so among the batch's writes). */
int sfs_meta_txn_mirror_seq_next(sfs_meta_txn_t *txn, uint64_t *seq_p);
/* In the write transaction of a batch committed without the mirror. */
int sfs_meta_txn_mirror_alone(sfs_meta_txn_t *txn);
/* The whole store as write sets of at most `piece_max` encoded bytes each
 * (a put of every record, the batch number last, so that a copy cut short
 * is never taken for a whole one), from one read transaction. The caller
 * frees each piece (sfs_meta_writes_free) and the array. */
int sfs_meta_store_copy(sfs_meta_store_t *store, size_t piece_max,
                        struct sfs_meta_writes **pieces_p, uint32_t *count_p);

/* A write for the mirror only (sfs_meta_writes.h): `table` is one that no
 * store keeps (SFS_META_TABLE_REPLIES), so it goes into a recording
 * transaction's writes, and a nested transaction that aborts forgets it;
 * nothing when the transaction does not record. -EINVAL, -ENOMEM. */
int sfs_meta_txn_note(sfs_meta_txn_t *txn, int table, const void *key, size_t key_length,
                      const void *value, size_t value_length);

int sfs_meta_txn_begin(sfs_meta_store_t *store, int write, sfs_meta_txn_t **txn_p);
/* A nested transaction inside a write transaction. */
int  sfs_meta_txn_begin_nested(sfs_meta_txn_t *parent, sfs_meta_txn_t **txn_p);
int  sfs_meta_txn_commit(sfs_meta_txn_t *txn);
void sfs_meta_txn_abort(sfs_meta_txn_t *txn);

typedef struct sfs_ns_create_args {
    const sfs_cred_t  *cred; /* who asks (permissions; the owner of a new file) */
    unsigned           want; /* SFS_MAY_READ/WRITE an existing file is opened with */
    const char        *path;
    uint32_t           mode;
    uint32_t           uid; /* owner, only when a server asks (SFS_CRED_SERVER) */
    uint32_t           gid;
    uint32_t           flags;   /* SFS_CREATE_EXCL, _WRITER, SFS_PATTERN_REQ_(NO_)MIRROR, _POOL */
    uint64_t           lease_s; /* SFS_CREATE_WRITER: the registration's life */
    uint32_t           pool;    /* with SFS_PATTERN_REQ_POOL; else the directory's */
    uint64_t           chunk_size;   /* 0: the directory's */
    uint32_t           stripe_count; /* 0: the directory's */
    uint32_t           start_target;
    uint64_t           now_ns;
    sfs_meta_choose_fn choose;
    sfs_meta_choose_fn choose_mirror; /* a mirrored file's: group primaries only */
    void              *choose_arg;
} sfs_ns_create_args_t;

/* Every operation below checks POSIX permissions for `cred` (sfs_perm.h)
 * and fails with -EACCES or -EPERM as a local file system would. */

/* The entry at `path`; `want` (SFS_MAY_* bits, 0 for none) is the access
 * an open asks for. */
int sfs_ns_lookup(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path, unsigned want,
                  sfs_attr_t *attr);
/* Create a file, or open an existing one (-EEXIST with SFS_CREATE_EXCL,
 * -EISDIR for a directory). *created_p says which happened: 0 opened, 1
 * created, SFS_CREATED_WRITER created with the asking open registered as
 * its writer (SFS_CREATE_WRITER: the same record as a SIZE BEGIN of the
 * new, empty file would leave), SFS_CREATED_WRITER_QUOTA the same with a
 * space quota applying (docs/quotas.md). */
int sfs_ns_create(sfs_meta_txn_t *txn, const sfs_ns_create_args_t *args, sfs_attr_t *attr,
                  int *created_p);
int sfs_ns_mkdir(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path, uint32_t mode,
                 uint32_t uid, uint32_t gid, uint64_t now_ns, sfs_attr_t *attr);
int sfs_ns_rmdir(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path, uint64_t now_ns);
/* Remove a file's name and inode; its chunk files are queued for deletion. */
int sfs_ns_unlink(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path, uint64_t now_ns,
                  sfs_attr_t *attr);
/* POSIX rename: replaces a file, or an empty directory, at `to`. */
int sfs_ns_rename(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *from, const char *to,
                  uint64_t now_ns);
/* Entries of a directory in name order after `after` ("" = from the start). */
int sfs_ns_readdir(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path, const char *after,
                   uint32_t max, sfs_dirent_t *entries, uint32_t *count_p, int *eof_p);
/* STAT with SFS_STAT_ENTRIES: `dir` gets the attributes of `path`; for a
 * directory, also a page of its entries (as sfs_ns_readdir, in `scratch`)
 * each with its attributes and whether its kept size is exact at `now_ns`
 * (search permission on the directory needed as well as read). */
int sfs_ns_readdir_plus(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path,
                        const char *after, uint32_t max, uint64_t now_ns, sfs_attr_t *dir,
                        sfs_dirent_plus_t *entries, sfs_dirent_t *scratch, uint32_t *count_p,
                        int *eof_p);
/* A directory's default pattern for new files (0 = keep): its owner or an
 * administrator. A directory's storage pool is set the same way, by the
 * caller with the directory `attr` returns (sfs_meta_run.c). */
int sfs_ns_setpattern(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path,
                      uint64_t chunk_size, uint32_t stripe_count, uint64_t now_ns,
                      sfs_attr_t *attr);
/* mask: SFS_SETATTR_* (chmod, chown with SFS_ID_UNCHANGED, times). */
int sfs_ns_setattr(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const char *path, uint32_t mask,
                   uint32_t mode, uint32_t uid, uint32_t gid, uint64_t atime_ns, uint64_t mtime_ns,
                   uint64_t now_ns, sfs_attr_t *attr);
int sfs_ns_statfs(sfs_meta_txn_t *txn, sfs_meta_statfs_t *stats);

/* Whether a file's kept size is exact now (sfs_ns_size.c): known, and no
 * writer registered whose registration still counts at `now_ns`. */
int sfs_ns_size_valid(const sfs_attr_t *attr, uint64_t now_ns);
/* SIZE (docs/metadata.md): register or end a writing open of entry
 * `req->entry_id`, or keep the size a stat read from its targets.
 * Registrations count for `lease_s` seconds past the last BEGIN/RENEW
 * (the write capability's life and some slack for the servers' clocks).
 * The caller checked the capability. STORE needs write permission for
 * `cred` and is ignored (reply->stored 0) when a writer registered or
 * ended since the stat (write_gen moved); an END with SFS_SIZE_VIEW keeps
 * its size when it was the only writer since the size was known. `attr`
 * gets the inode after it. */
int sfs_ns_size(sfs_meta_txn_t *txn, const sfs_cred_t *cred, const sfs_size_req_t *req,
                uint64_t now_ns, uint64_t lease_s, sfs_attr_t *attr, sfs_size_reply_t *reply);

/* Chunk deletions waiting (unlinked files): up to `max` entry ids after
 * `after`, each with its pattern. `ready_s` 0: all of them; else (wall
 * clock, seconds) only those that may go now: a file removed while open
 * for writing waits until its writers' registrations end (their close) or
 * run out, so that no write after the removal makes a chunk file again,
 * but not longer than SFS_META_DELETE_WRITER_WAIT_S after the removal: a
 * close whose END was lost (a cut, a failover; it is never sent again)
 * looks like a writer that holds the file, whose registration lasts the
 * capability's life. */
#define SFS_META_DELETE_WRITER_WAIT_S 30u
int sfs_ns_pending_deletes(sfs_meta_txn_t *txn, uint64_t after, uint32_t max, uint64_t ready_s,
                           uint64_t *ids, sfs_pattern_t *patterns, uint32_t *count_p);
/* Forget deletions that are done. */
int sfs_ns_deletes_done(sfs_meta_txn_t *txn, const uint64_t *ids, uint32_t count);

/* Check the namespace against itself: names whose inode is missing
 * (dangling), inodes no name points to (orphans), wrong types and parents,
 * counters. `report` gets one line per problem. With `repair`, dangling
 * names are removed, orphan files are removed (their chunk files queued for
 * deletion), orphan directories removed, types/parents/counters fixed. */
typedef struct sfs_ns_check_stats {
    uint64_t inodes;
    uint64_t dentries;
    uint64_t problems;
    uint64_t repaired;
} sfs_ns_check_stats_t;
typedef void (*sfs_ns_report_fn)(void *arg, const char *line);
int sfs_ns_check(sfs_meta_txn_t *txn, int repair, sfs_ns_report_fn report, void *arg,
                 sfs_ns_check_stats_t *stats);

/* Every inode after entry id `after` (for the consistency checker). */
int sfs_ns_list_inodes(sfs_meta_txn_t *txn, uint64_t after, uint32_t max, sfs_attr_t *attrs,
                       uint32_t *count_p);

#endif
