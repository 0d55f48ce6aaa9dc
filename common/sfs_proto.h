/*
 * The stripefs wire protocol, shared by client and service.
 *
 * Every message is one UCX active message: its AM header is the fixed 64-byte
 * sfs_proto_hdr_t below, followed by the operation's arguments (args_length
 * bytes, encoded with sfs_buf.h) when UCX allows a header that long; its
 * data is the bulk payload (payload_length bytes: file data, a map,
 * directory entries), preceded by the arguments when they did not fit in
 * the header. Requests and
 * replies share the header layout; a reply has SFS_PROTO_FLAG_REPLY and the
 * request's id, and carries the result as a negative errno in `status`.
 *
 * Authenticated messages carry a MAC (keyed by the session key) over the
 * first 48 header bytes and the arguments; see sfs_auth.h.
 */
#ifndef SFS_PROTO_H
#define SFS_PROTO_H

#include "sfs_buf.h"
#include "sfs_layout.h"
#include "sfs_proto_bound.h" /* write bounds: sfs_bound_t, SFS_CAP_BOUNDED */
#include "sfs_proto_pool.h"  /* storage pools: SFS_POOL_NAME_MAX, their codecs */

#include <errno.h>
#include <stdint.h>

#define SFS_PROTO_MAGIC      0x31534653u /* "SFS1" */
#define SFS_PROTO_VERSION    1
#define SFS_PROTO_HDR_SIZE   64
#define SFS_PROTO_MAC_SIZE   16
#define SFS_PROTO_MAC_COVERS 48    /* header bytes covered by the MAC (all but the MAC) */
#define SFS_PROTO_ARGS_MAX   16384 /* largest argument block accepted */

#define SFS_PROTO_FLAG_REPLY 0x1u
/* Request: the arguments end with a direct-copy descriptor (where the
 * requester wants its reply payload, see ucx_transport/sfs_tp_direct.c). */
#define SFS_PROTO_FLAG_DIRECT 0x2u
/* Reply: the payload (payload_length bytes) was copied straight into the
 * requester's memory; the message carries none. */
#define SFS_PROTO_FLAG_DELIVERED 0x4u
/* Request: the arguments end with a direct-copy descriptor of the
 * requester's payload, which the server copies out of its memory (a WRITE
 * between processes of one host); the message carries none. A server that
 * cannot answers SFS_PULL_REFUSED and the requester sends it again with
 * its payload. */
#define SFS_PROTO_FLAG_PULL 0x8u
#define SFS_PROTO_FLAGS_KNOWN                                                                      \
    (SFS_PROTO_FLAG_REPLY | SFS_PROTO_FLAG_DIRECT | SFS_PROTO_FLAG_DELIVERED | SFS_PROTO_FLAG_PULL)
/* Reply status: the server could not copy a pulled payload (send it). */
#define SFS_PULL_REFUSED (-EAGAIN)

/* Active message ids registered with UCX. */
#define SFS_AM_ID_REQUEST 11
#define SFS_AM_ID_REPLY   12

#define SFS_PATH_MAX          4096 /* including the NUL */
#define SFS_NAME_MAX          255
#define SFS_HOST_MAX          256
#define SFS_NONCE_SIZE        32
#define SFS_PROOF_SIZE        32
#define SFS_ADDRESS_MAX       4096 /* UCX worker address */
#define SFS_PROTO_MAX_EXTENTS 512  /* extents in one chunk I/O request */

/*
 * The operations, one line each:
 *   _(NAME, number, role, request, reply, handler)
 * number: never reused. role: the role that serves it (SFS_ROLE_*); a
 *   request to a role a server does not have gets -EOPNOTSUPP.
 * request, reply: the codec of the arguments: the struct sfs_<codec>_t with
 *   sfs_proto_<codec>_pack() and _unpack(); `none`: no arguments. Bulk data
 *   (file data, a map, entries) travels in the payload, not here.
 * handler: the server function sfs_handle_<handler>() that serves it
 *   (service/sfs_handlers.h); `transport`: answered inside the transport.
 * sfs_proto_op_info() gives each line as data; servers dispatch from it and
 * the fuzzer decodes through it.
 */
#define SFS_PROTO_OPS(_)                                                                           \
    /* the session: handshake, probes, goodbye */                                                  \
    _(HELLO, 1, ANY, hello_req, hello_reply, transport)                                            \
    _(AUTH, 2, ANY, auth_req, auth_reply, transport)                                               \
    _(PING, 3, ANY, none, ping_reply, ping)                                                        \
    _(NET_INFO, 4, ANY, none, net_info_reply, net_info) /* payload: sfs_net_session_t each */      \
    _(BYE, 5, ANY, none, none, transport)               /* no reply */                             \
    _(DIRECT, 6, ANY, direct_proof, none, transport)    /* a unix datagram, not UCX */             \
    /* management */                                                                               \
    _(POOL_LIST, 8, MGMT, none, pool_list_reply, pool_list) /* storage pools */                    \
    _(REGISTER, 10, MGMT, register_req, none, register)                                            \
    _(HEARTBEAT, 11, MGMT, heartbeat_req, heartbeat_reply, heartbeat)                              \
    _(GET_MAP, 12, MGMT, none, none, get_map) /* payload: the map (sfs_map.h) */                   \
    _(SHUTDOWN, 13, MGMT, none, none, shutdown)                                                    \
    _(STOP, 14, ANY, none, none, stop) /* management tells a rank to stop */                       \
    _(MIRROR_LIST, 15, MGMT, none, mirror_list_reply, mirror_list)                                 \
    _(MIRROR_REPORT, 16, MGMT, mirror_report_req, none, mirror_report)                             \
    _(META_MIRROR_STATE, 59, MGMT, meta_mirror_state_req, none, meta_mirror_state)                 \
    /* metadata */                                                                                 \
    _(LOOKUP, 20, META, meta_req, open_reply, meta)                                                \
    _(CREATE, 21, META, meta_req, open_reply, meta)                                                \
    _(MKDIR, 22, META, meta_req, open_reply, meta)                                                 \
    _(RMDIR, 23, META, meta_req, none, meta)                                                       \
    _(UNLINK, 24, META, meta_req, open_reply, meta)                                                \
    _(RENAME, 25, META, meta_req, none, meta)                                                      \
    _(READDIR, 26, META, meta_req, page_reply, meta) /* payload: sfs_dirent_t each */              \
    _(SETPATTERN, 27, META, meta_req, open_reply, meta)                                            \
    _(SETATTR, 28, META, meta_req, open_reply, meta)                                               \
    _(META_STATFS, 29, META, meta_req, meta_statfs, meta)                                          \
    _(META_LIST, 30, META, meta_req, page_reply, meta_admin)    /* payload: sfs_attr_t each */     \
    _(META_CHECK, 31, META, meta_req, check_reply, meta_admin)  /* payload: lines */               \
    _(META_PENDING, 32, META, meta_req, page_reply, meta_admin) /* payload: u64 ids */             \
    _(COUNTER, 33, META, counter_req, counter_reply, counter)                                      \
    _(LOCK, 34, META, lock_req, none, lock)            /* byte-range lock; replied once granted */ \
    _(UNLOCK, 35, META, unlock_req, none, lock)        /* release, or cancel a queued LOCK */      \
    _(STAT, 36, META, meta_req, stat_reply, meta)      /* payload: sfs_dirent_plus_t each */       \
    _(SIZE, 37, META, size_req, size_reply, meta_size) /* writers and the kept size */             \
    _(QUOTA_SET, 50, META, quota_req, none, meta_quota)                                            \
    _(QUOTA_GET, 51, META, quota_req, page_reply, meta_quota) /* payload: sfs_quota_entry_t */     \
    _(QUOTA_GROW, 52, META, quota_grow_req, quota_grow_reply, meta_quota)                          \
    _(POOL_GET, 38, META, meta_req, pool_reply, meta)            /* an entry's storage pool */     \
    _(MIGRATE_COMMIT, 53, META, migrate_req, none, meta_migrate) /* a moved chunk's new pattern */ \
    _(MIGRATE_DRAIN, 54, META, migrate_req, migrate_reply, meta_drain) /* no new files there */    \
    _(MIGRATE_BEGIN, 55, META, migrate_req, migrate_req, meta_migrate) /* a file's write_gen */    \
    _(META_STATS, 56, META, meta_req, page_reply, meta_stats)                                      \
    _(MIGRATE_LEASE, 57, META, migrate_lease_req, none, meta_lease) /* one migrate per target */   \
    _(POOL_SET, 61, META, pool_set_req, none, meta_pool)            /* change a storage pool */    \
    _(POOL_SHOW, 62, META, none, pool_list_reply, meta_pool)        /* the pools in force */       \
    /* metadata mirror: a batch's writes, a probe, a full copy (payload: sfs_meta_writes.h) */     \
    _(META_MIRROR, 58, META_MIRROR, meta_mirror_req, meta_mirror_reply, meta_mirror)               \
    /* management makes the mirror the metadata server (its primary is offline) */                 \
    _(META_PROMOTE, 60, META_MIRROR, meta_promote_req, meta_mirror_reply, meta_promote)            \
    /* storage */                                                                                  \
    _(WRITE, 40, STORAGE, chunk_req, length_reply, chunk) /* payload: the data */                  \
    _(READ, 41, STORAGE, chunk_req, length_reply, chunk)  /* reply payload: the data */            \
    _(CHUNK_STAT, 42, STORAGE, chunk_req, length_reply, chunk)                                     \
    _(TRUNCATE, 43, STORAGE, chunk_req, length_reply, chunk)                                       \
    _(FSYNC, 44, STORAGE, chunk_req, length_reply, chunk)                                          \
    _(CHUNK_UNLINK, 45, STORAGE, chunk_unlink_req, chunk_unlink_reply, chunk_unlink)               \
    _(CHUNK_LIST, 46, STORAGE, chunk_req, chunk_list_reply, chunk) /* payload: id, length */       \
    _(CHUNK_OPEN, 47, STORAGE, chunk_req, length_reply, chunk) /* the file, read-only, handed */   \
    _(CHUNK_MOVED, 49, STORAGE, chunk_req, length_reply, chunk_moved)       /* fence, tombstone */ \
    _(MIRROR_REBUILD, 48, STORAGE, chunk_req, length_reply, mirror_rebuild) /* lost disk */

typedef enum {
#define SFS_PROTO_OP_ENUM(_name, _num, _role, _req, _rep, _handler) SFS_OP_##_name = _num,
    SFS_PROTO_OPS(SFS_PROTO_OP_ENUM)
#undef SFS_PROTO_OP_ENUM
        SFS_OP_MAX = 64
} sfs_op_t;

/* Roles a server rank can have (bit mask). */
#define SFS_ROLE_ANY         0u
#define SFS_ROLE_MGMT        0x1u
#define SFS_ROLE_META        0x2u
#define SFS_ROLE_STORAGE     0x4u
#define SFS_ROLE_META_MIRROR 0x8u /* keeps a synchronous copy of the metadata store */

/* Name of an opcode ("WRITE"), or NULL if unknown. */
const char *sfs_op_name(uint32_t opcode);
/* Role serving an opcode (SFS_ROLE_*), or -1 if unknown. */
int sfs_op_role(uint32_t opcode);

/* A codec's decoder and encoder, whatever its struct (opcode for those
 * that vary). */
typedef void (*sfs_proto_unpack_fn)(sfs_rbuf_t *rb, uint32_t opcode, void *out);
typedef void (*sfs_proto_pack_fn)(sfs_wbuf_t *wb, uint32_t opcode, const void *in);

/* One line of SFS_PROTO_OPS as data. */
typedef struct sfs_proto_op_info {
    uint32_t            opcode;
    const char         *name;
    uint32_t            role;          /* SFS_ROLE_* */
    const char         *request_codec; /* "meta_req", "none" */
    const char         *reply_codec;
    const char         *handler; /* "meta", "transport" */
    sfs_proto_unpack_fn unpack_request;
    sfs_proto_pack_fn   pack_request;
    size_t              request_size; /* sizeof its struct */
    sfs_proto_unpack_fn unpack_reply;
    sfs_proto_pack_fn   pack_reply;
    size_t              reply_size;
} sfs_proto_op_info_t;

/* The line of `opcode`, or NULL if there is none. */
const sfs_proto_op_info_t *sfs_proto_op_info(uint32_t opcode);
/* Decode the arguments of a request (reply = 0) or reply (1) of `opcode`
 * into `out` (`out_size` bytes: the codec's struct, else -EINVAL): every
 * byte must be used. Returns 0, -ENAMETOOLONG (a path too long) or
 * -EBADMSG. */
int sfs_proto_decode(uint32_t opcode, int reply, const void *args, size_t length, void *out,
                     size_t out_size);

/* Encode `in` (`in_size` bytes: the codec's struct, else -EINVAL) as the
 * arguments of a request or reply of `opcode`. Returns 0 or wb->error. */
int sfs_proto_encode(uint32_t opcode, int reply, const void *in, size_t in_size, sfs_wbuf_t *wb);

/* No arguments (the `none` codec). */
typedef struct sfs_none {
    uint8_t unused;
} sfs_none_t;
void sfs_proto_none_pack(sfs_wbuf_t *wb, const sfs_none_t *none);
void sfs_proto_none_unpack(sfs_rbuf_t *rb, sfs_none_t *none);

typedef struct sfs_proto_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t opcode;
    uint32_t flags;
    uint32_t args_length;
    uint64_t request_id;
    uint64_t session_id;
    int32_t  status;
    uint32_t sender; /* sender's node id (server rank) or 0 for clients */
    uint64_t payload_length;
    uint8_t  mac[SFS_PROTO_MAC_SIZE];
} sfs_proto_hdr_t;

void sfs_proto_hdr_pack(const sfs_proto_hdr_t *hdr, uint8_t out[SFS_PROTO_HDR_SIZE]);
/* Decode and check magic, version, opcode, lengths against `max_payload`.
 * Returns 0, -EPROTO (magic/version) or -EBADMSG. */
int sfs_proto_hdr_unpack(const void *in, size_t length, uint64_t max_payload, sfs_proto_hdr_t *hdr);

/* ---------------------------------------------------------------------- */
/* Attributes and patterns                                                */

#define SFS_TYPE_FILE 1u
#define SFS_TYPE_DIR  2u

typedef struct sfs_attr {
    uint64_t entry_id;
    uint64_t parent_id;
    uint32_t type; /* SFS_TYPE_* */
    uint32_t mode; /* permission bits */
    uint32_t uid;
    uint32_t gid;
    uint64_t ctime_ns;
    uint64_t mtime_ns;
    uint64_t atime_ns;
    uint64_t nlink; /* dirs: 2 + subdirectories; files: 1 */
    /* files: the pattern with its targets; directories: the default pattern
     * for new files, stripe_count = desired count, no targets. */
    sfs_pattern_t pattern;
    uint32_t      pattern_targets; /* entries of pattern.targets that are valid */
    uint32_t      pool; /* storage pool of a dir's new entries / a file's targets (docs/pools.md) */
    /* Files: the dynamic attributes the metadata server keeps (docs/metadata.md).
     * Not in sfs_proto_attr_pack: the inode record and STAT's reply carry
     * them. */
    uint64_t size;          /* exact when SFS_SIZE_KNOWN and no writer is registered */
    uint32_t size_flags;    /* SFS_SIZE_* */
    uint32_t writers;       /* opens registered by SIZE BEGIN and not yet ENDed */
    uint64_t write_gen;     /* bumped by every BEGIN and END: a STORE names the one it saw */
    uint64_t write_until_s; /* wall clock: the writers' registrations count until then */
} sfs_attr_t;

#define SFS_SIZE_KNOWN 0x1u /* `size` is what the targets hold (no writer since) */
/* The inode record only: the registrations since writers was last 0 began
 * with the size known (BASE) and overlapped (SHARED); a lone writer's END
 * then knows the size (docs/metadata.md). */
#define SFS_SIZE_BASE   0x2u
#define SFS_SIZE_SHARED 0x4u

void sfs_proto_attr_pack(sfs_wbuf_t *wb, const sfs_attr_t *attr);
void sfs_proto_attr_unpack(sfs_rbuf_t *rb, sfs_attr_t *attr);

/* ---------------------------------------------------------------------- */
/* Handshake                                                              */

#define SFS_PEER_CLIENT 1u
#define SFS_PEER_SERVER 2u
#define SFS_PEER_ADMIN  3u

/* How a peer proves who it is (HELLO's method):
 * SECRET: both sides prove they hold the servers' connauth secret (server
 *   ranks among themselves; every client in the shared-secret mode);
 * MUNGE: the client proves its uid and gid with a MUNGE credential and the
 *   server proves it runs as the service's uid the same way; the session
 *   key comes from an X25519 key exchange (libsodium crypto_kx), and both
 *   credentials carry a hash of the handshake, so neither is any use in
 *   another session. */
#define SFS_AUTH_METHOD_SECRET 1u
#define SFS_AUTH_METHOD_MUNGE  2u
#define SFS_KX_PUBLIC_SIZE     32
#define SFS_CRED_TEXT_MAX      2048 /* an encoded MUNGE credential, NUL included */

#include "sfs_proto_features.h" /* HELLO's feature bits (SFS_FEATURE_*) */

typedef struct sfs_hello_req {
    uint32_t    peer_kind;
    uint64_t    peer_uuid;
    uint32_t    pid;
    char        host[SFS_HOST_MAX];
    char        program[SFS_NAME_MAX + 1];
    uint8_t     nonce[SFS_NONCE_SIZE];
    const void *address; /* the peer's UCX worker address (points into the message) */
    size_t      address_length;
    uint32_t    method;                        /* SFS_AUTH_METHOD_* */
    uint8_t     kx_public[SFS_KX_PUBLIC_SIZE]; /* MUNGE: the client's key-exchange key */
    uint64_t    features;                      /* SFS_FEATURE_* */
} sfs_hello_req_t;

typedef struct sfs_hello_reply {
    uint64_t session_id; /* pending until AUTH succeeds */
    uint32_t server_node;
    char     server_host[SFS_HOST_MAX];
    uint8_t  nonce[SFS_NONCE_SIZE];
    uint8_t  proof[SFS_PROOF_SIZE];         /* SECRET: proves the server knows the secret */
    uint8_t  kx_public[SFS_KX_PUBLIC_SIZE]; /* MUNGE: the server's key-exchange key */
    char     credential[SFS_CRED_TEXT_MAX]; /* MUNGE: the server's credential */
    uint64_t features;                      /* SFS_FEATURE_* */
    uint64_t server_uuid; /* the server process's worker uuid (a restart changes it); 0: none */
} sfs_hello_reply_t;

typedef struct sfs_auth_req {
    uint8_t proof[SFS_PROOF_SIZE];         /* SECRET: proves the client knows the secret */
    char    credential[SFS_CRED_TEXT_MAX]; /* MUNGE: the client's credential */
} sfs_auth_req_t;

/* AUTH reply: the session is open. */
typedef struct sfs_auth_reply {
    uint64_t direct_id; /* where same-host direct copies are proven (sfs_tp_direct.c), 0: none */
} sfs_auth_reply_t;

/* HELLO and its reply end with `features`; a peer older than it sends
 * none (decoded as 0), a newer one may send more after it, which is
 * skipped: HELLO is the one message whose arguments may grow. */
void sfs_proto_hello_req_pack(sfs_wbuf_t *wb, const sfs_hello_req_t *req);
void sfs_proto_hello_req_unpack(sfs_rbuf_t *rb, sfs_hello_req_t *req);
void sfs_proto_hello_reply_pack(sfs_wbuf_t *wb, const sfs_hello_reply_t *reply);
void sfs_proto_hello_reply_unpack(sfs_rbuf_t *rb, sfs_hello_reply_t *reply);
void sfs_proto_auth_req_pack(sfs_wbuf_t *wb, const sfs_auth_req_t *req);
void sfs_proto_auth_req_unpack(sfs_rbuf_t *rb, sfs_auth_req_t *req);
void sfs_proto_auth_reply_pack(sfs_wbuf_t *wb, const sfs_auth_reply_t *reply);
void sfs_proto_auth_reply_unpack(sfs_rbuf_t *rb, sfs_auth_reply_t *reply);

/* ---------------------------------------------------------------------- */
/* Capabilities                                                           */

/* A capability (common/sfs_cap.h says what it is and how it is checked). */
#define SFS_CAP_READ      0x1u
#define SFS_CAP_WRITE     0x2u
#define SFS_CAP_MAC_SIZE  16
#define SFS_CAP_WIRE_SIZE (8 + 4 + 4 + 8 + SFS_CAP_MAC_SIZE)

typedef struct sfs_cap {
    uint64_t entry_id;
    uint32_t access; /* SFS_CAP_* */
    uint32_t uid;
    uint64_t expires_s; /* wall clock (servers' clocks must agree to a few seconds) */
    uint8_t  mac[SFS_CAP_MAC_SIZE];
} sfs_cap_t;

void sfs_cap_pack(sfs_wbuf_t *wb, const sfs_cap_t *cap);
/* Decode; sets rb->error for unknown access bits. */
void sfs_cap_unpack(sfs_rbuf_t *rb, sfs_cap_t *cap);

/* ---------------------------------------------------------------------- */
/* Metadata requests                                                      */

#define SFS_CREATE_EXCL 0x1u /* fail with -EEXIST if the name exists */
/* CREATE of an open that will write: a file this creates is registered
 * with this open as its only writer in the create's own commit (as SIZE
 * BEGIN would), and the reply's `created` is SFS_CREATED_WRITER instead of
 * 1, so the client sends no BEGIN before its first write (docs/metadata.md).
 * A server that does not know the flag answers 1: the client then begins. */
#define SFS_CREATE_WRITER 0x1000u
/* CREATE: a mirrored file whatever its directory says; SETPATTERN: new files
 * are mirrored (MIRROR) or not (NO_MIRROR); neither: as it was. */
#define SFS_PATTERN_REQ_MIRROR    0x2u
#define SFS_PATTERN_REQ_NO_MIRROR 0x4u

typedef struct sfs_meta_req {
    char     path[SFS_PATH_MAX];
    char     new_path[SFS_PATH_MAX];       /* RENAME: where to */
    char     after_name[SFS_NAME_MAX + 1]; /* READDIR: resume after this name ("": start) */
    uint64_t after_id;                     /* META_LIST, META_PENDING: resume after this id */
    uint32_t flags;                        /* CREATE: SFS_CREATE_*; SETATTR: SFS_SETATTR_* mask */
    uint32_t mode;
    uint32_t uid;
    uint32_t gid;
    uint64_t chunk_size;   /* CREATE/SETPATTERN: 0 = inherit */
    uint32_t stripe_count; /* CREATE/SETPATTERN: 0 = inherit */
    uint32_t start_target; /* CREATE: first target id wanted, 0 = chooser decides */
    uint64_t atime_ns;
    uint64_t mtime_ns;
    uint32_t max_entries;             /* READDIR, META_LIST, META_PENDING: 0 = the server's page */
    char     pool[SFS_POOL_NAME_MAX]; /* CREATE/SETPATTERN with SFS_PATTERN_REQ_POOL */
    uint64_t op_tag; /* a change's number, kept by its resend: docs/metadata-mirror.md */
} sfs_meta_req_t;

#define SFS_CHECK_REPAIR 0x1u /* META_CHECK: fix what is safe to fix */

/* COUNTER: args u64 key, u32 op, u64 value; reply u64 value before. */
#define SFS_COUNTER_OP_ADD    0u
#define SFS_COUNTER_OP_SET    1u
#define SFS_COUNTER_OP_FORGET 2u

typedef struct sfs_counter_req {
    uint64_t key; /* the open file's id */
    uint32_t op;  /* SFS_COUNTER_OP_* */
    uint64_t value;
    /* the uuid of the metadata server the file was opened with (HELLO's
     * server_uuid); 0: any. Another one (restarted since) answers -ESTALE. */
    uint64_t server_uuid;
    uint64_t op_tag; /* not 0: kept with the answer (a resend gets it), after server_uuid */
} sfs_counter_req_t;

void sfs_proto_counter_req_pack(sfs_wbuf_t *wb, const sfs_counter_req_t *req);
/* Sets rb->error also for an unknown op. */
void sfs_proto_counter_req_unpack(sfs_rbuf_t *rb, sfs_counter_req_t *req);

typedef struct sfs_counter_reply {
    uint64_t before; /* the value before the operation */
} sfs_counter_reply_t;

void sfs_proto_counter_reply_pack(sfs_wbuf_t *wb, const sfs_counter_reply_t *reply);
void sfs_proto_counter_reply_unpack(sfs_rbuf_t *rb, sfs_counter_reply_t *reply);

#define SFS_SETATTR_MODE  0x1u
#define SFS_SETATTR_OWNER 0x2u
#define SFS_SETATTR_ATIME 0x4u
#define SFS_SETATTR_MTIME 0x8u
/* set the time to the server's clock (utimes(NULL), UTIME_NOW): POSIX lets
 * anyone with write permission do that, explicit times only the owner */
#define SFS_SETATTR_ATIME_NOW 0x10u
#define SFS_SETATTR_MTIME_NOW 0x20u
/* a write is about to change the file: clear its setuid bit, and its
 * setgid bit where group execute is set, unless the writer is root (as
 * the kernel's file_remove_privs); needs write permission */
#define SFS_SETATTR_KILL_PRIV 0x40u
#define SFS_SETATTR_KNOWN     0x7fu
/* SETATTR with SFS_SETATTR_OWNER: keep this id as it is (chown's -1) */
#define SFS_ID_UNCHANGED 0xffffffffu

/* LOOKUP / CREATE: the access an open wants; the server checks it against
 * the file's mode and replies with a capability for the storage targets. */
#define SFS_OPEN_READ  0x100u
#define SFS_OPEN_WRITE 0x200u
#define SFS_OPEN_EXEC  0x400u /* LOOKUP only: access(X_OK) */

void sfs_proto_meta_req_pack(sfs_wbuf_t *wb, uint32_t opcode, const sfs_meta_req_t *req);
void sfs_proto_meta_req_unpack(sfs_rbuf_t *rb, uint32_t opcode, sfs_meta_req_t *req);
int  sfs_proto_meta_tagged(uint32_t opcode); /* a change: may end with a u64 op_tag (not 0) */

/* LOOKUP, CREATE, MKDIR, UNLINK, SETPATTERN, SETATTR reply: the entry's
 * attributes; CREATE says whether it made the file; a file looked up or
 * created comes with a capability for its targets (sfs_cap.h). */
#define SFS_CREATED_WRITER 2u /* created, and the asking open registered as its writer */

typedef struct sfs_open_reply {
    sfs_attr_t attr;
    uint8_t    created; /* CREATE: 0, 1, SFS_CREATED_WRITER or SFS_CREATED_WRITER_QUOTA */
    uint8_t    has_cap; /* LOOKUP, CREATE of a file */
    sfs_cap_t  cap;
} sfs_open_reply_t;

void sfs_proto_open_reply_pack(sfs_wbuf_t *wb, uint32_t opcode, const sfs_open_reply_t *reply);
void sfs_proto_open_reply_unpack(sfs_rbuf_t *rb, uint32_t opcode, sfs_open_reply_t *reply);

/* STAT reply: the attributes, and the size when the metadata server knows
 * it exactly (no writer registered, docs/metadata.md); otherwise the
 * client asks the targets with the capability (access 0: chunk lengths
 * only) and, where it may write the file, stores what they said with SIZE
 * STORE naming `write_gen`. A directory asked with SFS_STAT_ENTRIES (meta_req
 * flags; after_name and max_entries as READDIR) also gets a page of its
 * entries with their attributes, as NFS's READDIRPLUS: `count` of them in
 * the payload (sfs_dirent_plus_t each), `eof` after the last. */
#define SFS_STAT_ENTRIES 0x1u
/* attr.size of a STAT reply whose size is not exact because a writer is
 * registered: a SIZE STORE would be refused, so none is sent. (A server
 * before this sends the record's size, never this value.) */
#define SFS_STAT_SIZE_WRITING UINT64_MAX

typedef struct sfs_stat_reply {
    sfs_attr_t attr;
    uint8_t    size_valid; /* 1: attr.size is exact */
    uint8_t    has_cap;    /* files */
    sfs_cap_t  cap;
    uint32_t   count; /* SFS_STAT_ENTRIES */
    uint8_t    eof;
} sfs_stat_reply_t;

void sfs_proto_stat_reply_pack(sfs_wbuf_t *wb, const sfs_stat_reply_t *reply);
void sfs_proto_stat_reply_unpack(sfs_rbuf_t *rb, sfs_stat_reply_t *reply);

/* SIZE: a writing open and the kept size of a file (docs/metadata.md). */
#define SFS_SIZE_OP_BEGIN 0u /* this open is about to write or truncate (write cap) */
#define SFS_SIZE_OP_END   1u /* this open is closed (write cap); flags: SFS_SIZE_MODIFIED */
#define SFS_SIZE_OP_RENEW 2u /* the registration lives on with a renewed write cap */
#define SFS_SIZE_OP_STORE 3u /* keep `size`, read from the targets, if write_gen still holds */
#define SFS_SIZE_OP_MAX   3u
#define SFS_SIZE_MODIFIED 0x1u /* END: the open wrote or truncated (mtime, ctime: now) */
/* END: `size` is the size as this open knows it: the one BEGIN answered,
 * extended by its writes and set by its truncates (none failed) */
#define SFS_SIZE_VIEW  0x2u
#define SFS_SIZE_FLAGS (SFS_SIZE_MODIFIED | SFS_SIZE_VIEW)

typedef struct sfs_size_req {
    uint64_t  entry_id;
    uint32_t  op; /* SFS_SIZE_OP_* */
    uint32_t  flags;
    uint64_t  write_gen; /* STORE: from the STAT reply */
    uint64_t  size;      /* STORE; END with SFS_SIZE_VIEW */
    sfs_cap_t cap;       /* the open's (BEGIN, END, RENEW) or the STAT's (STORE) */
} sfs_size_req_t;

/* Sets rb->error also for an unknown op or flag. */
void sfs_proto_size_req_pack(sfs_wbuf_t *wb, const sfs_size_req_t *req);
void sfs_proto_size_req_unpack(sfs_rbuf_t *rb, sfs_size_req_t *req);

typedef struct sfs_size_reply {
    uint32_t    writers; /* registered after the operation */
    uint8_t     stored;  /* STORE, END: whether the size was kept */
    uint8_t     base; /* BEGIN: 1 the first writer, and `size` is the file's size; SFS_SIZE_QUOTA */
    uint64_t    size;
    uint64_t    granted; /* on the wire only with SFS_SIZE_QUOTA: BEGIN's space grant (quotas) */
    sfs_bound_t bound;   /* on the wire only with SFS_SIZE_BOUND (sfs_proto_bound.h) */
} sfs_size_reply_t;

void sfs_proto_size_reply_pack(sfs_wbuf_t *wb, const sfs_size_reply_t *reply);
void sfs_proto_size_reply_unpack(sfs_rbuf_t *rb, sfs_size_reply_t *reply);

/* READDIR, META_LIST, META_PENDING reply: how many entries the payload
 * holds and whether they are the last. */
typedef struct sfs_page_reply {
    uint32_t count;
    uint8_t  eof;
} sfs_page_reply_t;

void sfs_proto_page_reply_pack(sfs_wbuf_t *wb, const sfs_page_reply_t *reply);
void sfs_proto_page_reply_unpack(sfs_rbuf_t *rb, sfs_page_reply_t *reply);

/* META_CHECK reply; the payload holds `lines` strings. */
typedef struct sfs_check_reply {
    uint64_t inodes;
    uint64_t dentries;
    uint64_t problems;
    uint64_t repaired;
    uint32_t lines;
} sfs_check_reply_t;

void sfs_proto_check_reply_pack(sfs_wbuf_t *wb, const sfs_check_reply_t *reply);
void sfs_proto_check_reply_unpack(sfs_rbuf_t *rb, sfs_check_reply_t *reply);

/* READDIR payload: entries. */
typedef struct sfs_dirent {
    char     name[SFS_NAME_MAX + 1];
    uint64_t entry_id;
    uint32_t type;
} sfs_dirent_t;

void sfs_proto_dirent_pack(sfs_wbuf_t *wb, const sfs_dirent_t *dirent);
void sfs_proto_dirent_unpack(sfs_rbuf_t *rb, sfs_dirent_t *dirent);

/* STAT payload with SFS_STAT_ENTRIES: an entry, its attributes and kept size
 * (size_valid 0: only its targets know it). */
typedef struct sfs_dirent_plus {
    sfs_dirent_t dirent;
    sfs_attr_t   attr;
    uint8_t      size_valid;
} sfs_dirent_plus_t;

void sfs_proto_dirent_plus_pack(sfs_wbuf_t *wb, const sfs_dirent_plus_t *plus);
void sfs_proto_dirent_plus_unpack(sfs_rbuf_t *rb, sfs_dirent_plus_t *plus);

typedef struct sfs_meta_statfs {
    uint64_t files;
    uint64_t dirs;
    uint64_t pending_chunk_deletes;
} sfs_meta_statfs_t;

void sfs_proto_meta_statfs_pack(sfs_wbuf_t *wb, const sfs_meta_statfs_t *stats);
void sfs_proto_meta_statfs_unpack(sfs_rbuf_t *rb, sfs_meta_statfs_t *stats);

/* ---------------------------------------------------------------------- */
/* Storage requests                                                       */

typedef struct sfs_io_extent {
    uint64_t chunk_offset;
    uint64_t length;
} sfs_io_extent_t;

#define SFS_TRUNCATE_EXACT       0u /* set the chunk file length */
#define SFS_TRUNCATE_SHRINK_ONLY 1u /* only cut a longer chunk file */

#define SFS_WRITE_SYNC 0x1u /* fdatasync before replying */
/* WRITE, TRUNCATE, FSYNC of a mirrored file (SFS_PATTERN_MIRROR), sent to the group's
 * primary: it applies it and forwards it to the secondary before replying. */
#define SFS_CHUNK_MIRRORED 0x100u
#define SFS_CHUNK_BUDDY    0x400u /* a copy to the buddy: refused by a primary (mirroring.md) */

typedef struct sfs_chunk_req {
    uint32_t        target_id;
    uint64_t        entry_id;
    uint32_t        flags;  /* WRITE: SFS_WRITE_*; TRUNCATE: SFS_TRUNCATE_* */
    uint64_t        length; /* TRUNCATE */
    uint32_t        extent_count;
    sfs_io_extent_t extents[SFS_PROTO_MAX_EXTENTS];
    sfs_cap_t       cap;   /* from the metadata server's open; zero from servers */
    sfs_bound_t     bound; /* WRITE, TRUNCATE with SFS_CHUNK_BOUND (sfs_proto_bound.h) */
} sfs_chunk_req_t;

/* Encode/decode a chunk request (WRITE, READ, CHUNK_STAT, TRUNCATE, FSYNC,
 * CHUNK_OPEN, CHUNK_LIST: entry_id is the id to list after, length the
 * most ids wanted).
 * Unpack checks the extents: count <= SFS_PROTO_MAX_EXTENTS, no overflow
 * of offset + length. */
void sfs_proto_chunk_req_pack(sfs_wbuf_t *wb, uint32_t opcode, const sfs_chunk_req_t *req);
void sfs_proto_chunk_req_unpack(sfs_rbuf_t *rb, uint32_t opcode, sfs_chunk_req_t *req);

/* WRITE, READ, CHUNK_STAT, TRUNCATE, FSYNC, CHUNK_OPEN reply: the chunk
 * file's length after the operation. */
typedef struct sfs_length_reply {
    uint64_t length;
} sfs_length_reply_t;

void sfs_proto_length_reply_pack(sfs_wbuf_t *wb, const sfs_length_reply_t *reply);
void sfs_proto_length_reply_unpack(sfs_rbuf_t *rb, sfs_length_reply_t *reply);

/* CHUNK_LIST reply: the payload holds `count` x (u64 entry id, u64 length). */
typedef struct sfs_chunk_list_reply {
    uint32_t count;
} sfs_chunk_list_reply_t;

void sfs_proto_chunk_list_reply_pack(sfs_wbuf_t *wb, const sfs_chunk_list_reply_t *reply);
void sfs_proto_chunk_list_reply_unpack(sfs_rbuf_t *rb, sfs_chunk_list_reply_t *reply);

/* CHUNK_UNLINK: remove the chunk files of these entries from one target
 * (the metadata server's background deletion, fsck's repair). */
#define SFS_CHUNK_UNLINK_MAX 512

typedef struct sfs_chunk_unlink_req {
    uint32_t target_id;
    uint32_t count;
    uint64_t entry_ids[SFS_CHUNK_UNLINK_MAX];
} sfs_chunk_unlink_req_t;

typedef struct sfs_chunk_unlink_reply {
    uint32_t removed; /* chunk files removed (those already gone count too) */
} sfs_chunk_unlink_reply_t;

/* Pack sets wb->error for a count over SFS_CHUNK_UNLINK_MAX; unpack
 * refuses it. */
void sfs_proto_chunk_unlink_req_pack(sfs_wbuf_t *wb, const sfs_chunk_unlink_req_t *req);
void sfs_proto_chunk_unlink_req_unpack(sfs_rbuf_t *rb, sfs_chunk_unlink_req_t *req);
void sfs_proto_chunk_unlink_reply_pack(sfs_wbuf_t *wb, const sfs_chunk_unlink_reply_t *reply);
void sfs_proto_chunk_unlink_reply_unpack(sfs_rbuf_t *rb, sfs_chunk_unlink_reply_t *reply);

/* ---------------------------------------------------------------------- */
/* Management requests                                                    */

#define SFS_REGISTER_MAX_TARGETS 64

typedef struct sfs_register_target {
    uint32_t target_id;
    char     dir[SFS_PATH_MAX];
    uint64_t capacity;
    uint64_t free;
    uint64_t bandwidth;
} sfs_register_target_t;

/* REGISTER: a server rank, its roles, its address and its targets. */
typedef struct sfs_register_req {
    uint32_t              rank;
    uint32_t              roles;
    uint32_t              pid;
    char                  host[SFS_HOST_MAX];
    const void           *address; /* points into the message */
    size_t                address_length;
    uint32_t              target_count;
    sfs_register_target_t targets[SFS_REGISTER_MAX_TARGETS];
} sfs_register_req_t;

void sfs_proto_register_req_pack(sfs_wbuf_t *wb, const sfs_register_req_t *req);
void sfs_proto_register_req_unpack(sfs_rbuf_t *rb, sfs_register_req_t *req);

/* HEARTBEAT: a server rank is alive, with its targets' free space. */
typedef struct sfs_heartbeat_target {
    uint32_t target_id;
    uint64_t capacity;
    uint64_t free;
    uint64_t bandwidth;
} sfs_heartbeat_target_t;

typedef struct sfs_heartbeat_req {
    uint32_t               rank;
    uint32_t               target_count;
    sfs_heartbeat_target_t targets[SFS_REGISTER_MAX_TARGETS];
} sfs_heartbeat_req_t;

/* Management does not know the rank (it restarted): register again. */
#define SFS_HEARTBEAT_REGISTER_AGAIN 0x1u
#define SFS_HEARTBEAT_NOT_META       0x2u /* another rank is the metadata server now */

typedef struct sfs_heartbeat_reply {
    uint32_t flags; /* SFS_HEARTBEAT_*; a peer ignores bits it does not know */
} sfs_heartbeat_reply_t;

void sfs_proto_heartbeat_req_pack(sfs_wbuf_t *wb, const sfs_heartbeat_req_t *req);
void sfs_proto_heartbeat_req_unpack(sfs_rbuf_t *rb, sfs_heartbeat_req_t *req);
void sfs_proto_heartbeat_reply_pack(sfs_wbuf_t *wb, const sfs_heartbeat_reply_t *reply);
void sfs_proto_heartbeat_reply_unpack(sfs_rbuf_t *rb, sfs_heartbeat_reply_t *reply);

/* ---------------------------------------------------------------------- */
/* Probes: PING and NET_INFO                                              */

typedef struct sfs_ping_reply {
    uint32_t rank;
    uint32_t roles; /* SFS_ROLE_* */
} sfs_ping_reply_t;

/* NET_INFO reply: the payload holds `count` sfs_net_session_t. */
typedef struct sfs_net_info_reply {
    uint32_t rank;
    uint32_t count;
} sfs_net_info_reply_t;

#define SFS_TRANSPORTS_MAX 256

typedef struct sfs_net_session {
    uint32_t peer_kind; /* SFS_PEER_* */
    uint64_t peer_uuid;
    uint32_t pid;
    char     host[SFS_HOST_MAX];
    char     program[SFS_NAME_MAX + 1];
    char     transports[SFS_TRANSPORTS_MAX];
    uint64_t age_ms;
} sfs_net_session_t;

void sfs_proto_ping_reply_pack(sfs_wbuf_t *wb, const sfs_ping_reply_t *reply);
void sfs_proto_ping_reply_unpack(sfs_rbuf_t *rb, sfs_ping_reply_t *reply);
void sfs_proto_net_info_reply_pack(sfs_wbuf_t *wb, const sfs_net_info_reply_t *reply);
void sfs_proto_net_info_reply_unpack(sfs_rbuf_t *rb, sfs_net_info_reply_t *reply);
void sfs_proto_net_session_pack(sfs_wbuf_t *wb, const sfs_net_session_t *session);
void sfs_proto_net_session_unpack(sfs_rbuf_t *rb, sfs_net_session_t *session);

/* ---------------------------------------------------------------------- */
/* Direct-copy descriptor (SFS_PROTO_FLAG_DIRECT): the last bytes of a      */
/* request's arguments, count x (u64 address, u64 length), u64 deadline     */
/* (CLOCK_MONOTONIC ms of the requester), u32 count.                        */

#define SFS_PROTO_DIRECT_MAX_IOV 64

typedef struct sfs_direct_desc {
    uint32_t count;
    uint64_t address[SFS_PROTO_DIRECT_MAX_IOV];
    uint64_t length[SFS_PROTO_DIRECT_MAX_IOV];
    uint64_t deadline_ms;
} sfs_direct_desc_t;

/* Bytes the descriptor of `count` buffers takes. */
size_t sfs_proto_direct_desc_size(uint32_t count);
void   sfs_proto_direct_desc_pack(sfs_wbuf_t *wb, const sfs_direct_desc_t *desc);
/* Decode the descriptor at the end of `args`; returns the length of the
 * arguments before it, or -EBADMSG (count 0 or over the maximum, or more
 * than the arguments hold). */
long sfs_proto_direct_desc_unpack(const uint8_t *args, size_t args_length, sfs_direct_desc_t *desc);

/* ---------------------------------------------------------------------- */
/* Same-host side channels (unix sockets, not UCX): each message is a      */
/* protocol header sealed with the session key and fixed arguments. The    */
/* *_msg_unpack functions check the size, the header and its fields; the   */
/* MAC is the receiver's to check (it knows the session).                   */

/* DIRECT: a same-host client proves its pid to the server's datagram
 * socket (ucx_transport/sfs_tp_direct.c); the kernel adds the pid. */
typedef struct sfs_direct_proof {
    uint64_t now_ms; /* the client's CLOCK_MONOTONIC: both must agree */
} sfs_direct_proof_t;

#define SFS_DIRECT_PROOF_MSG_SIZE (SFS_PROTO_HDR_SIZE + 8)

void sfs_proto_direct_proof_pack(sfs_wbuf_t *wb, const sfs_direct_proof_t *proof);
void sfs_proto_direct_proof_unpack(sfs_rbuf_t *rb, sfs_direct_proof_t *proof);
/* A whole proof datagram: opcode DIRECT, not a reply. 0 or -EBADMSG. */
int sfs_proto_direct_proof_msg_unpack(const uint8_t *msg, size_t length, sfs_proto_hdr_t *hdr,
                                      sfs_direct_proof_t *proof);

/* The file a server hands over with SCM_RIGHTS (CHUNK_OPEN, see
 * ucx_transport/sfs_tp_fdpass.c): the receiver believes the descriptor
 * only if it is this file. */
typedef struct sfs_fd_handoff {
    uint64_t device;
    uint64_t inode;
} sfs_fd_handoff_t;

#define SFS_FD_HANDOFF_MSG_SIZE (SFS_PROTO_HDR_SIZE + 16)
void sfs_proto_fd_handoff_pack(sfs_wbuf_t *wb, const sfs_fd_handoff_t *handoff);
void sfs_proto_fd_handoff_unpack(sfs_rbuf_t *rb, sfs_fd_handoff_t *handoff);
/* A whole handoff message: a reply (tagged with the request's opcode and
 * id) without status. 0 or -EBADMSG. */
int sfs_proto_fd_handoff_msg_unpack(const uint8_t *msg, size_t length, sfs_proto_hdr_t *hdr,
                                    sfs_fd_handoff_t *handoff);

/* Total bytes the extents of a request cover. */
uint64_t sfs_chunk_req_bytes(const sfs_chunk_req_t *req);

/* the codecs of LOCK/UNLOCK, MIRROR_LIST and QUOTA_*, in headers of their own */
#include "sfs_proto_lock.h"
#include "sfs_proto_migrate.h" /* draining and migrating targets (needs sfs_cap_t) */
#include "sfs_proto_mirror.h"
#include "sfs_proto_quota.h"

#endif
