/*
 * The cluster configuration (YAML, parsed with libyaml): which host runs
 * management and metadata, the storage targets, the default stripe pattern,
 * ports, the connauth file, timeouts and limits.
 *
 * Every error names the file, the line and the key, e.g.
 *   "cluster.yaml:14: storage[2].id: duplicate target id 201 (first at line 9)"
 * and is recorded with sfs_error_set(); the functions return -EINVAL for a bad
 * config and -errno for a file that cannot be read.
 */
#ifndef SFS_CONFIG_H
#define SFS_CONFIG_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define SFS_CONFIG_NAME_MAX     256
#define SFS_CONFIG_DEFAULT_PORT 8008
#define SFS_CONFIG_MAX_TARGETS  1024
#define SFS_CONFIG_MAX_HOSTS    1024
#define SFS_CONFIG_MAX_TRUSTED  32

typedef struct sfs_config_host {
    char     name[SFS_CONFIG_NAME_MAX];    /* host name as the MPI job sees it */
    char     address[SFS_CONFIG_NAME_MAX]; /* address others reach it at ("" = resolve name) */
    uint32_t ranks;                        /* server ranks started on this host (default 1) */
    int      line;
} sfs_config_host_t;

typedef struct sfs_config_target {
    uint32_t id; /* e.g. 101; 1..65535, unique */
    char     host[SFS_CONFIG_NAME_MAX];
    char     dir[PATH_MAX]; /* absolute after loading */
    uint64_t capacity;      /* bytes; 0 = the file system's size */
    uint64_t bandwidth;     /* bytes/s disk cap emulation; 0 = none */
    int      line;
} sfs_config_target_t;

/* A mirror group (buddy group): two targets on different hosts that hold
 * the same chunk files of mirrored files (docs/mirroring.md). */
typedef struct sfs_config_mirror_group {
    uint32_t id;      /* 1, 2, ... in the order of the config */
    uint32_t primary; /* target ids */
    uint32_t secondary;
    int      line;
} sfs_config_mirror_group_t;

/* A storage pool (docs/pools.md): a named set of targets that the files of
 * a directory set to it use, and only they. Targets in no named pool are
 * in the pool `default` (id SFS_CONFIG_POOL_DEFAULT), which is not listed
 * here. */
#define SFS_CONFIG_POOL_NONE     0u /* a directory with no pool: any target */
#define SFS_CONFIG_POOL_DEFAULT  1u
#define SFS_CONFIG_POOL_NAME_MAX 64
#define SFS_CONFIG_MAX_POOLS     64
#define SFS_CONFIG_MAX_POOL_ID   65535

typedef struct sfs_config_pool {
    uint32_t  id; /* `id:` (2..65535), else 2, 3, ... in the order of the config */
    char      name[SFS_CONFIG_POOL_NAME_MAX];
    uint32_t *targets; /* target ids, in the config's order */
    uint32_t  target_count;
    uint32_t  target_alloc;
    int       line;
} sfs_config_pool_t;

typedef struct sfs_config {
    char path[PATH_MAX]; /* file it was loaded from ("" if parsed from memory) */
    char cluster_name[SFS_CONFIG_NAME_MAX];
    char connauth_file[PATH_MAX]; /* absolute after loading */

    char     mgmt_host[SFS_CONFIG_NAME_MAX];
    uint16_t mgmt_port; /* default SFS_CONFIG_DEFAULT_PORT */

    char     meta_host[SFS_CONFIG_NAME_MAX];
    char     meta_dir[PATH_MAX]; /* absolute after loading */
    int      meta_sync;          /* 1 (default): commits are durable (fsync) */
    uint64_t meta_map_size;      /* LMDB map size: the most the metadata store may hold,
                                  * bytes (64 MiB..1 TiB, default 16 GiB) */
    /* meta.mirror: the host whose rank keeps a synchronous copy of the
     * store ("": none), in meta.mirror_dir there (absolute after loading;
     * default meta.dir) */
    char meta_mirror_host[SFS_CONFIG_NAME_MAX];
    char meta_mirror_dir[PATH_MAX];

    sfs_config_host_t   *hosts; /* hosts named under `hosts:` plus every host a role names */
    uint32_t             host_count;
    sfs_config_target_t *targets;
    uint32_t             target_count;

    sfs_config_mirror_group_t *mirror_groups; /* mirror.groups */
    uint32_t                   mirror_group_count;
    int                        mirror_default;   /* mirror.default: the root mirrors new files */
    int                        mirror_same_host; /* mirror.same_host: one-host trials only */
    /* mirror.stale_reads: a primary without a lease from management still
     * serves reads (they go on while management is away, but one cut off
     * may serve a copy its promoted buddy has moved past) */
    int mirror_stale_reads;

    sfs_config_pool_t *pools; /* pools: (the named ones; `default` is implied) */
    uint32_t           pool_count;

    uint64_t default_chunk_size;   /* default 512 KiB */
    uint32_t default_stripe_count; /* default 4 (capped at target_count when used) */

    uint32_t rpc_timeout_ms;        /* default 30000 */
    uint32_t connect_timeout_ms;    /* default 10000 */
    uint32_t heartbeat_interval_ms; /* default 2000 */
    uint32_t offline_timeout_ms;    /* default 20000; probably-offline: sfs_mgmt.c */

    uint64_t max_message_size; /* default 64 MiB: larger messages are refused */
    uint32_t io_threads;       /* storage disk threads per rank, default 4 */
    uint64_t inline_io_max;    /* reads and writes up to this size run on the
                                * storage rank's progress thread, default 64 KiB */
    uint64_t mapped_read_min;  /* single-extent reads from this size on are
                                * served from the mapped chunk file, default
                                * 256 KiB; 0 = never */
    uint32_t max_request_rate; /* requests/s one session may send, default 1000000;
                                * 0 = unlimited. A session over it is closed. */

    /* security: (docs/security.md) */
    char security_mode[32];      /* "munge" (default) or "shared-secret" (trusted, single-user) */
    int  munge;                  /* 1 in munge mode (derived from security_mode) */
    char munge_socket[PATH_MAX]; /* munged's socket, default /run/munge/munge.socket.2 */
    char munged_key[PATH_MAX];   /* "" = the site's munged; else the one-host service
                                  * starts a munged of its own with this key */
    uint32_t service_uid;        /* uid the servers run as; clients check it, default 0 */
    char     admin_group[SFS_CONFIG_NAME_MAX]; /* members may run admin operations ("" = none) */
    uint32_t capability_lifetime_ms;           /* default 1h */
    char     trusted_hosts[SFS_CONFIG_MAX_TRUSTED][SFS_CONFIG_NAME_MAX]; /* root stays root */
    uint32_t trusted_host_count;
} sfs_config_t;

/* Load and validate a config file. Relative paths inside it are taken
 * relative to the file's directory. */
int sfs_config_load(const char *path, sfs_config_t **config_p);

/* Parse and validate YAML text; `name` is used in messages and to resolve
 * relative paths (its directory; "." if it has none). */
int sfs_config_parse(const char *text, size_t length, const char *name, sfs_config_t **config_p);

void sfs_config_destroy(sfs_config_t *config);

/* Write YAML for `config` to `path` (mode 0644), so that loading it back
 * gives the same config. */
int sfs_config_write(const sfs_config_t *config, const char *path);

/* A config for a list of hosts: mgmt and meta on hosts[0], one storage
 * target per host with id (i+1)*100+1 in `<storage_dir>` on each host,
 * consecutive hosts' targets paired into mirror groups (101+201, 301+401,
 * ...; used only by files asked to be mirrored), the meta store in
 * `<meta_dir>`. The caller destroys it. */
int sfs_config_generate(const char *const *hosts, uint32_t host_count, const char *storage_dir,
                        const char *meta_dir, const char *connauth_file, uint16_t port,
                        sfs_config_t **config_p);

/* The one-host default for trying stripefs out and for tests: all roles on
 * this host, `target_count` targets (ids 101, 102, ...) in
 * <state_dir>/targets/<id>, meta in <state_dir>/meta, connauth in
 * <state_dir>/connauth. */
int sfs_config_one_host(const char *state_dir, const char *hostname, uint32_t target_count,
                        uint16_t port, sfs_config_t **config_p);

/* The host entry matching `hostname` (case-insensitive; "imaging-01" matches
 * "imaging-01.example.org" and the reverse), or NULL. An exact match wins;
 * a short name that matches two full names finds nothing (NULL). */
const sfs_config_host_t *sfs_config_find_host(const sfs_config_t *config, const char *hostname);

/* 1 if the two host names denote the same host by the rule above. */
int sfs_config_host_matches(const char *config_name, const char *hostname);

/* Parse "512K", "4MiB", "12T", "100M", "65536" (binary units) into bytes.
 * A fraction is allowed if the result is whole ("1.5K"). -EINVAL for junk,
 * -ERANGE above 2^64-1; the detail is recorded with sfs_error_set(). */
int sfs_parse_size(const char *text, uint64_t *bytes_p);

/* Parse "30s", "500ms", "2m", "1h", "1d", "10" (seconds) into milliseconds;
 * -EINVAL for junk, -ERANGE above 2^32-1 ms (about 49 days). */
int sfs_parse_duration_ms(const char *text, uint32_t *ms_p);

/* The mirror group target `target_id` belongs to, or NULL. */
const sfs_config_mirror_group_t *sfs_config_mirror_group_of(const sfs_config_t *config,
                                                            uint32_t            target_id);

/* The pool target `target_id` is in: a named pool's id, else
 * SFS_CONFIG_POOL_DEFAULT. */
uint32_t sfs_config_pool_of(const sfs_config_t *config, uint32_t target_id);

/* The id of the pool called `name` ("default" included) into *id_p; -ENOENT
 * with a message naming the pool and the config when there is none. */
int sfs_config_pool_find(const sfs_config_t *config, const char *name, uint32_t *id_p);

/* The name of pool `id` ("default" for SFS_CONFIG_POOL_DEFAULT, "none" for
 * SFS_CONFIG_POOL_NONE), or NULL for an unknown id. */
const char *sfs_config_pool_name(const sfs_config_t *config, uint32_t id);

/* Format bytes as "12.0T", "512K", "3.4G" into buf. */
const char *sfs_format_size(uint64_t bytes, char *buf, size_t buflen);

#endif
