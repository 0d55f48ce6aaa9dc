/**
 * @file sfs_client.h
 * The stripefs client library: talk to a stripefs service directly over UCX,
 * without a mount or a kernel client. Used by the ROMIO driver, the POSIX
 * preload library and stripefs-ctl; usable by any C program.
 *
 * Conventions: every function returns 0 (or a byte count) on success and a
 * negative errno on failure; sfs_client_error() then says what failed, naming
 * the path, target or server. A client and its files are used by one thread
 * at a time. Whoever creates an object destroys it; the library never frees
 * a caller's buffers.
 */
#ifndef SFS_CLIENT_H
#define SFS_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A connection to one stripefs service (opaque). */
typedef struct sfs_client sfs_client_t;
/** An open file (opaque). */
typedef struct sfs_file sfs_file_t;
/** A nonblocking I/O request (opaque). */
typedef struct sfs_request sfs_request_t;

/** Fields of sfs_client_params_t that are set (bits are never reused). */
enum {
    SFS_CLIENT_PARAM_CONFIG   = 1u << 0, /**< config_path */
    SFS_CLIENT_PARAM_MGMT     = 1u << 1, /**< mgmt */
    SFS_CLIENT_PARAM_CONNAUTH = 1u << 2, /**< connauth_file */
    SFS_CLIENT_PARAM_TIMEOUT  = 1u << 3, /**< timeout_ms */
    SFS_CLIENT_PARAM_PROGRAM  = 1u << 4, /**< program */
    SFS_CLIENT_PARAM_ADMIN    = 1u << 5, /**< connect as an administration tool */
};

/**
 * Where the service is. Unset fields come from the environment, then from
 * defaults:
 *  - STRIPEFS_CONFIG: a cluster config file (its management address and
 *    security section: in the munge mode the client proves its uid with
 *    MUNGE and needs no secret; in the shared-secret mode it reads the
 *    connauth file);
 *  - STRIPEFS_MGMT ("host:port"): a MUNGE client (STRIPEFS_MUNGE_SOCKET,
 *    STRIPEFS_SERVICE_UID, default the site's munged and uid 0), or with
 *    STRIPEFS_CONNAUTH (a connauth file) a holder of the servers' secret;
 *  - else /etc/stripefs/stripefs.yaml, else ./stripefs-state/stripefs.yaml.
 * Timeouts: timeout_ms (RPCs and connecting), else STRIPEFS_TIMEOUT (whole
 * seconds, 1..86400), else the config's timeouts: {rpc} and {connect}, else
 * 30 s and 10 s.
 * Tuning from the environment: STRIPEFS_MAX_REQUEST (bytes per storage
 * request), STRIPEFS_WINDOW (requests in flight per operation),
 * STRIPEFS_DIRECT_COPY=0 / STRIPEFS_DIRECT_PULL=0 (no same-host direct
 * copies / pulls), STRIPEFS_LOCAL_READ=0 (never read a same-host chunk file
 * directly). `stripefs-ctl info` lists them all. A malformed or out-of-range
 * value makes the connect fail (-EINVAL) naming the variable.
 *
 * A field whose bit is set must hold a value (no NULL string, no zero
 * timeout); unknown bits are -EINVAL.
 */
typedef struct sfs_client_params {
    uint64_t    field_mask;
    const char *config_path;
    const char *mgmt;
    const char *connauth_file;
    uint32_t    timeout_ms;
    const char *program;
} sfs_client_params_t;

/** Connect and authenticate; fetches the cluster map. */
int sfs_client_connect(const sfs_client_params_t *params, sfs_client_t **client_p);
/** Give up the caller's hold on the client. Files still open keep it (and
 * their connections) working: the last sfs_file_close ends the connections.
 * So a library may close its files after the code that connected has
 * disconnected (HDF5 closing its files in its own MPI_Finalize hook). What a
 * write acknowledged is on the servers either way: a file never closed
 * loses nothing. */
void sfs_client_disconnect(sfs_client_t *client);
/** What the last failed call of this thread failed on. */
const char *sfs_client_error(void);

/* ------------------------------------------------------------------------ */

#define SFS_FILE_TYPE_REGULAR  1
#define SFS_FILE_TYPE_DIR      2
#define SFS_CLIENT_MAX_TARGETS 128

/** What stat says about a file or directory. */
typedef struct sfs_stat {
    uint64_t entry_id;
    uint32_t type; /**< SFS_FILE_TYPE_* */
    uint32_t mode; /**< permission bits */
    uint32_t uid;
    uint32_t gid;
    uint64_t size; /**< files: derived from the chunk files; dirs: 0 */
    uint64_t nlink;
    uint64_t atime_ns;
    uint64_t mtime_ns;
    uint64_t ctime_ns;
    uint64_t chunk_size; /**< the stripe pattern (dirs: default for new files) */
    uint32_t stripe_count;
    uint32_t target_count; /**< files: targets[] entries; dirs: 0 */
    uint32_t targets[SFS_CLIENT_MAX_TARGETS];
    uint32_t flags; /**< SFS_STAT_* */
    /** sfs_stat of a file: nonzero where targets[i] did not answer */
    uint8_t target_down[SFS_CLIENT_MAX_TARGETS];
} sfs_stat_t;

/** sfs_stat: some of the file's targets did not answer (a storage rank is
 * down), so its size cannot be known: `size` is what the targets that did
 * answer hold (the size is at least that), target_down[] says which. */
#define SFS_STAT_SIZE_UNKNOWN 1u
/** The entry is mirrored (files) or mirrors new files (directories):
 * targets[] are mirror groups' primaries, each chunk also on the group's
 * secondary (docs/mirroring.md). */
#define SFS_STAT_MIRRORED 2u

/** Stat a path: one round trip where the metadata server knows the file's
 * size (no open registered as writing it, docs/metadata.md); otherwise
 * this asks every target for its chunk length. A target that cannot be
 * reached does not fail it: the attributes come from the metadata server
 * and the size is flagged SFS_STAT_SIZE_UNKNOWN. Other failures
 * (permission, protocol) are returned. */
int sfs_stat(sfs_client_t *client, const char *path, sfs_stat_t *stat);
/** Stat without the size (one metadata round trip). */
int sfs_lookup(sfs_client_t *client, const char *path, sfs_stat_t *stat);
/** access(2) as the servers decide it for this process's proven identity:
 * `mode` is R_OK|W_OK|X_OK (0: the entry exists); -EACCES when refused.
 * `stat` (may be NULL) gets the entry's attributes (no size). */
int sfs_access(sfs_client_t *client, const char *path, int mode, sfs_stat_t *stat);
int sfs_mkdir(sfs_client_t *client, const char *path, uint32_t mode);
int sfs_rmdir(sfs_client_t *client, const char *path);
/** Remove a file; its chunk files are deleted in the background. */
int sfs_unlink(sfs_client_t *client, const char *path);
int sfs_rename(sfs_client_t *client, const char *from, const char *to);
/** Set the permission bits (mode & 07777). The server decides who may. */
int sfs_chmod(sfs_client_t *client, const char *path, uint32_t mode);

#ifndef SFS_ID_UNCHANGED
/** sfs_chown: keep this id as it is (what -1 means to chown(2)). */
#define SFS_ID_UNCHANGED 0xffffffffu
#endif

/**
 * Change a file's or directory's owner and group, like chown(2): uid or gid
 * SFS_ID_UNCHANGED keeps that id. The metadata server decides who may
 * (POSIX: only root changes the owner; the owner may change the group to
 * one of its groups); a refusal is -EPERM.
 */
int sfs_chown(sfs_client_t *client, const char *path, uint32_t uid, uint32_t gid);

/** sfs_utimens: set this time to now, by the server's clock (UTIME_NOW). */
#define SFS_UTIME_NOW UINT64_C(0xffffffffffffffff)
/** sfs_utimens: leave this time as it is (UTIME_OMIT). */
#define SFS_UTIME_OMIT UINT64_C(0xfffffffffffffffe)

/**
 * Set the access and modification times, in nanoseconds since the epoch,
 * like utimensat(2): either may be SFS_UTIME_NOW or SFS_UTIME_OMIT. POSIX
 * lets whoever may write the file set both to now, but only the owner (or
 * root) set explicit times: the server decides. Both omitted changes
 * nothing (the path must exist).
 */
int sfs_utimens(sfs_client_t *client, const char *path, uint64_t atime_ns, uint64_t mtime_ns);
/** Set a directory's pattern for new files (0 keeps a field). */
int sfs_setpattern(sfs_client_t *client, const char *path, uint64_t chunk_size,
                   uint32_t stripe_count);
/** sfs_setpattern, and `mirror`: 1 the directory's new files are mirrored,
 * 0 they are not, -1 as it was. -EINVAL when the config has no mirror
 * groups. */
int sfs_setpattern_mirror(sfs_client_t *client, const char *path, uint64_t chunk_size,
                          uint32_t stripe_count, int mirror);

/** Set a directory's storage pool: its new files use only the pool's
 * targets, and its new subdirectories take the pool too ("none": no pool,
 * any target). -EINVAL naming the pool when the config has none of that
 * name; the same owner-or-administrator rule as sfs_setpattern. */
int sfs_setpattern_pool(sfs_client_t *client, const char *path, const char *pool);

typedef struct sfs_dir_entry {
    char     name[256];
    uint64_t entry_id;
    uint32_t type; /**< SFS_FILE_TYPE_* */
} sfs_dir_entry_t;

/** Up to `max` entries of a directory in name order after `after` ("" for
 * the first); *eof_p is 1 when no more follow. */
int sfs_readdir(sfs_client_t *client, const char *path, const char *after, sfs_dir_entry_t *entries,
                uint32_t max, uint32_t *count_p, int *eof_p);
/** As sfs_readdir, with each entry's attributes in `stats` (as sfs_stat
 * gives them), a page in one round trip (as NFS's READDIRPLUS): an entry
 * whose size only its targets know (open for writing) is asked of them on
 * its own. `path` must be a directory one may read and search;
 * -EOPNOTSUPP from a server that cannot (list, then stat each). */
int sfs_readdir_stat(sfs_client_t *client, const char *path, const char *after,
                     sfs_dir_entry_t *entries, sfs_stat_t *stats, uint32_t max, uint32_t *count_p,
                     int *eof_p);
/** As sfs_readdir_stat without asking any target: a file whose size only
 * its targets know (someone holds it open for writing) is flagged
 * SFS_STAT_SIZE_UNKNOWN, its size what the metadata server kept. */
int sfs_readdir_attrs(sfs_client_t *client, const char *path, const char *after,
                      sfs_dir_entry_t *entries, sfs_stat_t *stats, uint32_t max, uint32_t *count_p,
                      int *eof_p);

typedef struct sfs_statfs {
    uint64_t capacity; /**< bytes, online targets, each file system once */
    uint64_t free;
    uint64_t files;
    uint64_t dirs;
    uint32_t targets;
    uint32_t targets_online;
    uint32_t filesystems; /**< file systems counted in capacity and free */
} sfs_statfs_t;

/** Space and entry counts. Targets that share one file system (this host
 * sees the same device under their directories: servers on this host) count
 * it once; targets of other hosts count one each, since nothing tells this
 * host which disk they are on. `filesystems` < `targets_online` says that
 * some were merged. */
int sfs_statfs(sfs_client_t *client, sfs_statfs_t *statfs);

/* ------------------------------------------------------------------------ */

#define SFS_O_RDONLY 0x0
#define SFS_O_WRONLY 0x1
#define SFS_O_RDWR   0x2
#define SFS_O_CREAT  0x40
#define SFS_O_EXCL   0x80
#define SFS_O_TRUNC  0x200
/** Writes return when the data is durable (fdatasync) on every target and
 * copy they went to. The values are Linux's O_DSYNC and O_SYNC: SFS_O_SYNC
 * includes the SFS_O_DSYNC bit. There is no client cache and file
 * attributes live on the metadata server, so both mean the same here: each
 * write is made durable before it returns. */
#define SFS_O_DSYNC 0x1000
#define SFS_O_SYNC  0x101000

enum {
    SFS_OPEN_PARAM_CHUNK_SIZE   = 1u << 0,
    SFS_OPEN_PARAM_STRIPE_COUNT = 1u << 1,
    SFS_OPEN_PARAM_START_TARGET = 1u << 2,
    SFS_OPEN_PARAM_MIRROR       = 1u << 3,
    SFS_OPEN_PARAM_POOL         = 1u << 4,
};

/** Pattern wishes for a file being created (ignored if it exists). */
typedef struct sfs_open_params {
    uint64_t    field_mask;
    uint64_t    chunk_size;
    uint32_t    stripe_count;
    uint32_t    start_target;
    int32_t     mirror; /**< 1: a mirrored file, 0: not, whatever its directory says */
    const char *pool;   /**< the storage pool its targets come from, not its directory's */
} sfs_open_params_t;

/** Open (and with SFS_O_CREAT create) a file. `flags`: one of SFS_O_RDONLY,
 * SFS_O_WRONLY, SFS_O_RDWR, or'ed with any of SFS_O_CREAT, SFS_O_EXCL,
 * SFS_O_TRUNC, SFS_O_DSYNC, SFS_O_SYNC; any other bit is -EINVAL. `params`
 * may be NULL. */
int sfs_file_open(sfs_client_t *client, const char *path, int flags, uint32_t mode,
                  const sfs_open_params_t *params, sfs_file_t **file_p);
/** Close the handle (no I/O: data is on the targets already). */
int sfs_file_close(sfs_file_t *file);

/** Write `length` bytes at `offset`; returns bytes written or -errno. */
ssize_t sfs_file_pwrite(sfs_file_t *file, const void *buf, size_t length, uint64_t offset);
/** Read up to `length` bytes at `offset`; returns bytes read (short at end
 * of file) or -errno. Holes read as zeros. */
ssize_t sfs_file_pread(sfs_file_t *file, void *buf, size_t length, uint64_t offset);

/** One piece of a list I/O: `length` bytes of the file at `offset`. */
typedef struct sfs_file_extent {
    uint64_t offset;
    uint64_t length;
} sfs_file_extent_t;

/** List I/O: the file extents (any order) are filled from / stored into the
 * memory pieces, in order; both lists cover the same number of bytes. All
 * targets are addressed in parallel, pieces for one target travel together.
 * Returns the bytes moved (reads stop counting at end of file). */
ssize_t sfs_file_writev(sfs_file_t *file, const sfs_file_extent_t *extents, size_t extent_count,
                        const struct iovec *memory, size_t memory_count);
ssize_t sfs_file_readv(sfs_file_t *file, const sfs_file_extent_t *extents, size_t extent_count,
                       const struct iovec *memory, size_t memory_count);

/** Nonblocking versions: the buffers stay in use until the request is done. */
int sfs_file_iwrite(sfs_file_t *file, const void *buf, size_t length, uint64_t offset,
                    sfs_request_t **request_p);
int sfs_file_iread(sfs_file_t *file, void *buf, size_t length, uint64_t offset,
                   sfs_request_t **request_p);
/** 1 when done. */
int sfs_request_test(sfs_request_t *request);
/** Wait; returns the bytes moved or -errno, and frees the request. */
ssize_t sfs_request_wait(sfs_request_t *request);

int sfs_file_size(sfs_file_t *file, uint64_t *size_p);
int sfs_file_truncate(sfs_file_t *file, uint64_t size);
/** Make everything written durable on the targets. */
int sfs_file_sync(sfs_file_t *file);
int sfs_file_stat(sfs_file_t *file, sfs_stat_t *stat);
/** The file's attributes and stripe layout as of its open, without the size
 * (no round trip). */
void sfs_file_layout(const sfs_file_t *file, sfs_stat_t *stat);
/** The file's path as the service knows it. */
const char *sfs_file_path(const sfs_file_t *file);

#define SFS_COUNTER_ADD    0 /**< add `value`, return the value before */
#define SFS_COUNTER_SET    1 /**< set to `value`, return the value before */
#define SFS_COUNTER_FORGET 2 /**< drop the counter */

/** The atomic counter of this open (MPI shared file pointers): processes
 * that share the open through local2global share the counter. */
int sfs_file_counter(sfs_file_t *file, int op, uint64_t value, uint64_t *before_p);

/** A byte-range lock on [offset, offset + length) of the file (length 0:
 * to the end of any file), granted by the metadata server (MPI atomic
 * mode): exclusive (needs the file open for writing) or shared (for
 * reading). Blocks until granted; conflicting locks of all processes wait
 * in arrival order. A process must not nest locks whose ranges conflict:
 * its second one would wait for its first. *lock_id_p names the lock for
 * sfs_file_unlock. Locks go when the process's connection does (exit,
 * crash). -EACCES: the open does not allow it. */
int sfs_file_lock(sfs_file_t *file, uint64_t offset, uint64_t length, int exclusive,
                  uint64_t *lock_id_p);
/** Release a lock of sfs_file_lock (by this process). */
int sfs_file_unlock(sfs_file_t *file, uint64_t lock_id);

/** Serialise an open file so another process can use it without asking the
 * metadata server: with buf NULL, *length_p gets the size needed. */
int sfs_file_local2global(const sfs_file_t *file, void *buf, size_t *length_p);
int sfs_file_global2local(sfs_client_t *client, const void *buf, size_t length,
                          sfs_file_t **file_p);

/** Normalise a user path ("stripefs:/a//b/../c" -> "/a/c"). */
int sfs_path_canonical(const char *path, char *out, size_t out_size);

#ifdef __cplusplus
}
#endif

#endif
