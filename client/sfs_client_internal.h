/* Internal structures of the client library (client/ only). */
#ifndef SFS_CLIENT_INTERNAL_H
#define SFS_CLIENT_INTERNAL_H

#include "sfs/sfs_client.h"

#include "sfs_cluster.h"
#include "sfs_proto.h"
#include "sfs_tp.h"

#include <sys/types.h>

/* STRIPEFS_MAX_REQUEST and STRIPEFS_WINDOW: defaults in sfs_client_tunables.c */
#define SFS_CLIENT_DEFAULT_RPC_MS     30000      /* without a config or STRIPEFS_TIMEOUT */
#define SFS_CLIENT_DEFAULT_CONNECT_MS 10000      /* ... the config's default too */
#define SFS_CLIENT_BOUNCE_PIECES      8          /* more pieces than this: pack them */
#define SFS_CLIENT_BOUNCE_MAX         (1u << 20) /* ... if the request is this small */
#define SFS_CLIENT_DETACHED_MAX       64         /* unanswered SIZE ENDs in flight */

/* A bad argument of a public call: -EINVAL, the detail naming the call and
 * the argument (the public API never dereferences what it has not checked). */
#define SFS_ARG_CHECK(cond, what)                                                                  \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            return sfs_error_set(-EINVAL, "%s: %s", __func__, (what));                             \
        }                                                                                          \
    } while (0)

/* Every bit sfs_file_open knows (others are refused). */
#define SFS_O_KNOWN                                                                                \
    (SFS_O_WRONLY | SFS_O_RDWR | SFS_O_CREAT | SFS_O_EXCL | SFS_O_TRUNC | SFS_O_SYNC | SFS_O_DSYNC)
#define SFS_OPEN_PARAM_KNOWN                                                                       \
    (SFS_OPEN_PARAM_CHUNK_SIZE | SFS_OPEN_PARAM_STRIPE_COUNT | SFS_OPEN_PARAM_START_TARGET |       \
     SFS_OPEN_PARAM_MIRROR | SFS_OPEN_PARAM_POOL)
#define SFS_CLIENT_PARAM_KNOWN                                                                     \
    (SFS_CLIENT_PARAM_CONFIG | SFS_CLIENT_PARAM_MGMT | SFS_CLIENT_PARAM_CONNAUTH |                 \
     SFS_CLIENT_PARAM_TIMEOUT | SFS_CLIENT_PARAM_PROGRAM | SFS_CLIENT_PARAM_ADMIN)

struct sfs_client {
    sfs_tp_worker_t *worker;
    sfs_cluster_t   *cluster;
    sfs_auth_key_t   key;
    uint32_t         timeout_ms;         /* RPCs */
    uint32_t         connect_timeout_ms; /* bootstrap and connection setup */
    uint32_t         uid;
    uint32_t         gid;
    uint64_t         max_request;
    uint32_t         window;
    uint64_t         refs;        /* the connector's one, plus one per open file (atomic) */
    pid_t            pid;         /* the process whose connections these are */
    int              local_reads; /* read same-host chunk files directly (sfs_file_local.c) */
    uint32_t         local_fds;   /* ... descriptors held for that */
    /* metadata RPCs no one waits for (sfs_client_detached.c) */
    sfs_tp_rpc_t *detached[SFS_CLIENT_DETACHED_MAX];
    uint32_t      detached_op[SFS_CLIENT_DETACHED_MAX];
    uint32_t      detached_count;
    uint64_t      last_op_tag;    /* the op_tag of the last namespace change (atomic) */
    int           reply_cache;    /* send op_tags (STRIPEFS_REPLY_CACHE) */
    int           mirror_old_map; /* testing: STRIPEFS_TEST_MIRROR_OLD_MAP */
    int           lock_owners; /* the metadata server last asked for a lock keeps locks per client
                                * process (SFS_FEATURE_LOCK_OWNERS): a LOCK or UNLOCK may go again
                                * (atomic; sfs_client_lock.c) */
};

typedef struct sfs_file_local sfs_file_local_t;

#define SFS_FILE_HELD_LOCKS 16

struct sfs_file {
    sfs_client_t *client;
    char          path[SFS_PATH_MAX];
    sfs_attr_t    attr;
    int           flags;
    uint64_t      open_id;      /* names this open's shared counter */
    int           counter_used; /* forget the counter at close */
    uint64_t      meta_uuid;    /* the metadata server it was opened with (0: unknown) */
    /* locks held, with the metadata server that granted each (its worker
     * uuid): one granted by a server since replaced or restarted is lost,
     * and its unlock says so (sfs_client_lock.c); past the table's size a
     * lock is not checked */
    uint64_t          held_lock_id[SFS_FILE_HELD_LOCKS];
    uint64_t          held_lock_uuid[SFS_FILE_HELD_LOCKS];
    sfs_file_local_t *local;             /* chunk files read directly, or NULL */
    sfs_cap_t         cap;               /* the targets' permission for this open */
    uint64_t          cap_got_s;         /* when it came (renewed at half its life) */
    int               privs_checked;     /* set-id bits dealt with before the first write */
    int               writer_registered; /* SIZE BEGIN (or the CREATE) told the metadata server */
    int               writer_modified;   /* this open wrote or truncated: mtime moves at END */
    pid_t             writer_pid;        /* ... from this process (not a forked copy) */
    uint64_t          size_view;         /* the size as this open made it, if size_view_ok: */
    int               size_view_ok;      /* the first writer, and none of its writes failed */
    int               quota_limited;     /* SIZE BEGIN: a space quota applies (sfs_quota.c) */
    uint64_t          quota_granted;     /* ... writes up to here were granted */
    sfs_bound_t       bound;             /* cap has SFS_CAP_BOUNDED: the targets' write bound */
};

/* sfs_file_size.c: the kept size (docs/metadata.md). Register this open as
 * a writer before its first write or truncate (0, or the error: writing
 * unregistered would let stats answer a stale size); renew it with the
 * capability; end it at close. */
int  sfs_file_writer_begin(sfs_file_t *file);
void sfs_file_writer_renew(sfs_file_t *file);
void sfs_file_writer_end(sfs_file_t *file);
/* This open's view of the size: a write of these extents is going out; a
 * write or truncate failed (the size is then only the targets'); a
 * truncate to `size` succeeded. */
void sfs_file_writer_extends(sfs_file_t *file, const sfs_file_extent_t *extents, size_t count);
void sfs_file_writer_failed(sfs_file_t *file);
void sfs_file_writer_truncated(sfs_file_t *file, uint64_t size);
/* sfs_quota.c: before a write of these extents goes out, where a space
 * quota applies: ask QUOTA_GROW for what passes the granted end (0, or
 * -EDQUOT naming the quota and the file). */
int sfs_file_quota_grow(sfs_file_t *file, const sfs_file_extent_t *extents, size_t count);
/* sfs_stat through STAT: -EOPNOTSUPP from a server without it. */
int sfs_client_stat_kept(sfs_client_t *client, const sfs_meta_req_t *req, sfs_stat_t *stat);

/* sfs_client_names.c: servers named for error messages. "ROLE (rank N on
 * HOST)"; "storage target T (rank N on HOST)". */
#define SFS_CLIENT_NAME_MAX 320
const char *sfs_client_node_name(sfs_client_t *client, uint32_t node_id, const char *role,
                                 char *buf, size_t buflen);
const char *sfs_client_target_name(sfs_client_t *client, uint32_t target_id, char *buf,
                                   size_t buflen);
/* Whether rc means that the server did not answer (timed out, connection
 * lost or refused, unreachable) rather than that it refused the request. */
int sfs_client_no_answer(int rc);
/* sfs_client_mirror.c: a mirrored file's requests in a failover. The
 * target serving pattern->targets[index] now (its group's current primary
 * for a mirrored file); whether a failed request is to be sent again after
 * a wait; the wait (a pause and a map refresh), -ETIMEDOUT once past
 * *deadline_ms (0: set now, to three RPC timeouts ahead). */
uint32_t sfs_client_mirror_target(sfs_client_t *client, const sfs_pattern_t *pattern,
                                  uint32_t index);
int      sfs_client_mirror_retryable(const sfs_pattern_t *pattern, int rc);
/* Non-zero when the map names a mirror group's primary whose rank is
 * offline: no failover is coming (the buddy could not be promoted). */
int sfs_client_mirror_lost(sfs_client_t *client, const sfs_pattern_t *pattern, uint32_t index);
int sfs_client_mirror_wait(sfs_client_t *client, uint64_t *deadline_ms);
/* Non-zero when a request for pattern->targets[index] may go out again:
 * the map names its group's serving member online (or the file is not
 * mirrored, or there is no map). A member the map shows away is not sent
 * to: the request waits for its return or its buddy's promotion. */
int sfs_client_mirror_serving(sfs_client_t *client, const sfs_pattern_t *pattern, uint32_t index);
/* Waits (sfs_client_mirror_wait) while a group among the pattern's first
 * `count` (those marked in `only`, or all when NULL) has a primary the map
 * shows away and not yet replaced: 0 once each is serving or lost, or
 * -ETIMEDOUT past *deadline_ms. For the calls sent to every target
 * (TRUNCATE, FSYNC, CHUNK_STAT), as sfs_io_retry does for reads and writes. */
int sfs_client_mirror_wait_serving(sfs_client_t *client, const sfs_pattern_t *pattern,
                                   uint32_t count, const uint8_t *only, uint64_t *deadline_ms);
/* sfs_client_meta_failover.c: whether a failed metadata call to rank
 * `called` waits for a failover (no answer, `rpc` NULL or not answered by
 * the server, or ESTALE from a replaced server; and a metadata mirror in
 * the map; or EAGAIN from a server without its lease), and the wait: 0 once
 * the map names another metadata server (send the call again), or after one
 * pause with SFS_META_WAIT_FENCED (the EAGAIN: send it again to whichever
 * server the map names), or with SFS_META_WAIT_SAME_OK once a fresh map
 * names the same server online (a call that may be sent twice and got no
 * answer), -ETIMEDOUT past *deadline_ms (0: set now, to two RPC timeouts
 * ahead). */
int sfs_client_meta_failover_wanted(sfs_client_t *client, uint32_t called, int rc,
                                    const sfs_tp_rpc_t *rpc);
#define SFS_META_WAIT_FENCED  1 /* after one pause, to whichever server the map names */
#define SFS_META_WAIT_SAME_OK 2 /* also to the same one, online in a fresh map */
int sfs_client_meta_failover_wait(sfs_client_t *client, uint32_t called, int how,
                                  uint64_t *deadline_ms);
/* A metadata call to rank `called`, begun at `start` (ms), failed with rc
 * (*rpc_p its RPC, or NULL): when it waits for a failover (above), it is
 * sent again to the successor, with a line that says how long the pause
 * was. Returns the final rc (*rpc_p replaced); the error detail is the
 * first failure's when nothing was sent again. */
int sfs_client_meta_failover(sfs_client_t *client, const sfs_tp_rpc_params_t *params,
                             uint32_t called, uint64_t start, int rc, sfs_tp_rpc_t **rpc_p);
/* A failed metadata call: prefix the error detail with the metadata
 * server's name (unless it names it already); returns rc. */
int sfs_client_meta_error(sfs_client_t *client, int rc);

/* sfs_file_local.c: the chunk file of target `target_index` to read
 * directly (a descriptor the file keeps), or -1 to read through the server.
 * `bytes` is the read about to be made (small files do not ask). */
int  sfs_file_local_fd(sfs_file_t *file, uint32_t target_index, uint64_t bytes);
void sfs_file_local_close(sfs_file_t *file);
/* sfs_file_moved.c: a target answered -ESTALE (the file's chunk moved,
 * docs/migration.md): fetch the pattern again; 0 when it changed, else
 * -ESTALE (mirrored, gone, renamed, or unchanged for 10 s). */
int sfs_file_refetch_pattern(sfs_file_t *file);

/* The data path's request (sfs_file_io.c), shared with its asynchronous
 * calls (sfs_file_async.c): made and started by create; advance sends and
 * reaps without blocking unless `block`; finished says whether every piece
 * is done; finish waits for the rest, frees it and returns its result (bytes
 * or a negative errno with its message). */
int     sfs_io_create(sfs_file_t *file, int write, const sfs_file_extent_t *extents,
                      size_t extent_count, const struct iovec *memory, size_t memory_count,
                      sfs_request_t **req_p);
void    sfs_io_advance(sfs_request_t *req, int block);
int     sfs_io_finished(const sfs_request_t *req);
ssize_t sfs_io_finish(sfs_request_t *req);
/* Take `attr`'s pattern if it is this file's and another (1), else 0: a
 * lookup found the chunks moved (the capability's renewal does it too, so an
 * open's pattern is at most half a capability's life old). */
int sfs_file_adopt_pattern(sfs_file_t *file, const sfs_attr_t *attr);

/* One blocking metadata RPC with arguments already encoded: call, and hand
 * back the reply (the caller releases *rpc_p if set). A server that did
 * not answer is named in the error; a refusal keeps the server's words. */
int sfs_client_meta_call_args(sfs_client_t *client, uint32_t opcode, const void *args,
                              size_t length, sfs_tp_rpc_t **rpc_p);
/* A metadata RPC whose reply no one waits for (sfs_client_detached.c):
 * sent now; its outcome only reaches the debug log. At most
 * SFS_CLIENT_DETACHED_MAX are in flight (then this waits for them); the
 * last reference to the client waits for all before the connections go.
 * For requests whose loss costs only speed (SIZE END). */
int sfs_client_meta_post(sfs_client_t *client, uint32_t opcode, const void *args, size_t length);
/* A management request without arguments whose reply decodes into `reply`
 * (MIRROR_LIST, POOL_LIST; sfs_admin.c); the error names the opcode. */
int sfs_admin_mgmt_list(sfs_client_t *client, uint32_t opcode, void *reply, size_t reply_size);
/* Release the finished ones; with `wait_all`, wait for every one first. */
void sfs_client_detached_reap(sfs_client_t *client, int wait_all);
/* The same for a meta_req: pack `req` for `opcode`, then as above. */
int sfs_client_meta_call(sfs_client_t *client, uint32_t opcode, const sfs_meta_req_t *req,
                         sfs_tp_rpc_t **rpc_p);
/* Normalise a user path into req->path; the error names the path. */
int sfs_client_path(const char *path, char *out);
/* Ask every target of a file for its chunk length (in parallel). */
/* As sfs_client_chunk_lengths; with `down`, a target that cannot be
 * reached is marked there (its length 0) instead of failing the call. */
int sfs_client_chunk_lengths_down(sfs_client_t *client, const sfs_attr_t *attr,
                                  const sfs_cap_t *cap, uint64_t *lengths, uint8_t *down);
int sfs_client_chunk_lengths(sfs_client_t *client, const sfs_attr_t *attr, const sfs_cap_t *cap,
                             uint64_t *lengths);
/* As sfs_client_chunk_lengths_down, asking only the targets t without
 * known[t] (known NULL: all); the others' lengths[t] are left as given. */
int sfs_client_chunk_lengths_some(sfs_client_t *client, const sfs_attr_t *attr,
                                  const sfs_cap_t *cap, uint64_t *lengths, uint8_t *down,
                                  const uint8_t *known);
/* A metadata call that answers with attributes (and, for an open, a
 * created flag and a capability); attr, created_p and cap_p may be NULL. */
int sfs_client_meta_attr(sfs_client_t *client, uint32_t opcode, sfs_meta_req_t *req,
                         sfs_attr_t *attr, int *created_p, sfs_cap_t *cap_p);
/* Renew the file's capability when half its life is gone (by looking the
 * path up again). Failing is no error: the old one serves until it expires. */
void sfs_file_cap_refresh(sfs_file_t *file);
/* Before the first write of an open file with set-id bits: ask the
 * metadata server to clear them (it keeps them for root), as the kernel
 * does on write. Best effort: the write goes on either way. */
void sfs_file_kill_privs(sfs_file_t *file);
/* The client's references (sfs_client.c): every open file holds one, so
 * that a disconnect while files are open (a library closing its files in
 * its own MPI_Finalize hook, after ours) leaves them working; the last put
 * frees the connections. */
void sfs_client_get(sfs_client_t *client);
void sfs_client_put(sfs_client_t *client);
void sfs_client_attr_to_stat(const sfs_attr_t *attr, sfs_stat_t *stat);
/* A directory entry of the wire (READDIR, STAT's listing) as the API's. */
void sfs_client_dirent_to_entry(const sfs_dirent_t *dirent, sfs_dir_entry_t *entry);

/* One page of a metadata listing (READDIR, META_LIST, META_PENDING): asks
 * for up to `max` items of `path` after the name `after_name` (READDIR) or
 * the id `after_id` (the others), checks the reply's count and end-of-list
 * flag, and sets *payload to the items. The caller decodes them and
 * releases *rpc_p. */
int sfs_client_meta_page(sfs_client_t *client, uint32_t opcode, const char *path,
                         const char *after_name, uint64_t after_id, uint32_t max,
                         sfs_tp_rpc_t **rpc_p, uint32_t *count_p, int *eof_p, sfs_rbuf_t *payload);

#endif
