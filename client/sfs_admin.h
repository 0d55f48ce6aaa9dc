/*
 * Administration calls for the project's own tools (stripefs-ctl,
 * stripefs-fsck): the cluster map, per-server probes, shutdown, and raw
 * access to targets and metadata listings. Not part of the public API.
 */
#ifndef SFS_ADMIN_H
#define SFS_ADMIN_H

#include "sfs/sfs_client.h"
#include "sfs_map.h"

/* A fresh copy of the cluster map (the caller destroys it). */
int sfs_admin_map(sfs_client_t *client, sfs_map_t **map_p);
/* Round trip to one server rank, in microseconds. */
int sfs_admin_ping(sfs_client_t *client, uint32_t node_id, double *rtt_us_p);

typedef struct sfs_admin_session {
    uint32_t peer_kind; /* SFS_PEER_* */
    uint64_t peer_uuid;
    uint32_t pid;
    char     host[256];
    char     program[256];
    char     transports[256];
    uint64_t age_ms;
} sfs_admin_session_t;

/* The sessions a server rank has (the caller frees *sessions_p). */
int sfs_admin_sessions(sfs_client_t *client, uint32_t node_id, sfs_admin_session_t **sessions_p,
                       uint32_t *count_p);
/* Transports this process uses to reach a server rank. */
int sfs_admin_transports(sfs_client_t *client, uint32_t node_id, char *buf, size_t buflen);
/* Ask management to stop the whole service cleanly. */
int sfs_admin_shutdown(sfs_client_t *client);
/* MIRROR_LIST: the mirror groups management knows, with primaries and
 * consistency states. */
int sfs_admin_mirror_list(sfs_client_t *client, sfs_mirror_list_reply_t *reply);

/* The storage pools in force (sfs_pool.c): the metadata server's
 * POOL_SHOW (the config's pools and those changed online), or, from a
 * server without it, management's POOL_LIST (the config's). */
int sfs_admin_pool_list(sfs_client_t *client, sfs_pool_list_reply_t *reply);
/* POOL_SET (administrators): `op` (SFS_POOL_SET_CREATE, _ADD, _REMOVE,
 * _DELETE) on pool `name` with `count` targets; the server's refusal
 * names the problem. */
int sfs_admin_pool_set(sfs_client_t *client, uint32_t op, const char *name, const uint32_t *targets,
                       uint32_t count);
/* POOL_GET: the storage pool of an entry (a directory's new entries'; a
 * file's targets'). */
int sfs_admin_pool_get(sfs_client_t *client, const char *path, sfs_pool_reply_t *reply);

/* Chunk files of a target after entry id `after` (for fsck). */
int sfs_admin_chunk_list(sfs_client_t *client, uint32_t target_id, uint64_t after, uint32_t max,
                         uint64_t *ids, uint64_t *lengths, uint32_t *count_p);
/* Remove chunk files from a target (fsck --repair). */
int sfs_admin_chunk_unlink(sfs_client_t *client, uint32_t target_id, const uint64_t *ids,
                           uint32_t count);
/* MIRROR_REBUILD: ask the good member `from_target` to copy every chunk
 * file to its bad buddy `member` (docs/mirroring.md, "Rebuild");
 * *total_p gets the chunk files to copy. For administrators. */
int sfs_admin_mirror_rebuild(sfs_client_t *client, uint32_t from_target, uint32_t member,
                             uint64_t *total_p);
/* Inodes after entry id `after` (for fsck); attrs as sfs_proto.h has them. */
int sfs_admin_inodes(sfs_client_t *client, uint64_t after, uint32_t max, sfs_attr_t *attrs,
                     uint32_t *count_p, int *eof_p);
/* The metadata server's own consistency check (with repair: fix what is
 * safe). `line(arg, text)` gets each problem found (up to 1 MiB of them). */
typedef struct sfs_admin_check {
    uint64_t inodes;
    uint64_t dentries;
    uint64_t problems;
    uint64_t repaired;
} sfs_admin_check_t;
int sfs_admin_meta_check(sfs_client_t *client, int repair, void (*line)(void *, const char *),
                         void *arg, sfs_admin_check_t *result);
/* Entry ids of removed files whose chunk files are still to be deleted. */
int sfs_admin_pending(sfs_client_t *client, uint64_t after, uint32_t max, uint64_t *ids,
                      uint32_t *count_p, int *eof_p);

/* For each target of `map` (by index), the index of the first online target
 * on the same file system, as far as this host can tell (sfs_statfs.c says
 * how); its own index when alone, offline, or on another host. */
int sfs_admin_fs_groups(const sfs_map_t *map, uint32_t *group_of);

/* Metadata counters (files, dirs, pending chunk deletions). */
int sfs_admin_meta_statfs(sfs_client_t *client, sfs_meta_statfs_t *stats);

#endif
