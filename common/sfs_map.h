/*
 * The cluster map that management serves: server nodes (ranks) with their
 * roles and UCX worker addresses, and storage targets with their node,
 * state, capacity and free space. Clients fetch it once at connect time and
 * again when a target's node cannot be reached.
 */
#ifndef SFS_MAP_H
#define SFS_MAP_H

#include "sfs_proto.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* Target and node states, as BeeGFS administrators know them. */
#define SFS_STATE_ONLINE           1u
#define SFS_STATE_PROBABLY_OFFLINE 2u
#define SFS_STATE_OFFLINE          3u

typedef struct sfs_map_node {
    uint32_t node_id; /* the server's rank in the service job */
    uint32_t roles;   /* SFS_ROLE_* */
    uint32_t state;
    uint32_t pid;
    uint64_t last_contact_ms; /* ms since management last heard from it */
    char     host[SFS_HOST_MAX];
    void    *address; /* UCX worker address (owned) */
    size_t   address_length;
} sfs_map_node_t;

typedef struct sfs_map_target {
    uint32_t target_id;
    uint32_t node_id;
    uint32_t state;
    uint64_t capacity;  /* bytes */
    uint64_t free;      /* bytes */
    uint64_t bandwidth; /* emulated disk cap, bytes/s, 0 = none */
    uint64_t last_contact_ms;
    char     dir[PATH_MAX];
    /* a mirror group's member (docs/mirroring.md); 0s for other targets */
    uint32_t mirror_primary; /* the group's current primary target */
    uint32_t mirror_state;   /* SFS_MIRROR_STATE_* of this member */
    uint64_t resync_done;    /* chunk files a resync of it has copied */
    uint64_t resync_total;   /* of this many */
} sfs_map_target_t;

typedef struct sfs_map {
    uint64_t version;
    char     cluster[SFS_HOST_MAX];
    uint32_t mgmt_node;
    uint32_t meta_node;
    uint64_t default_chunk_size;
    uint32_t default_stripe_count;
    uint32_t rpc_timeout_ms;
    /* timeouts.offline: a rank silent this long is offline, its mirror
     * buddies promoted; a storage rank's fencing lease is half of it */
    uint32_t          offline_timeout_ms;
    uint32_t          node_count;
    uint32_t          target_count;
    sfs_map_node_t   *nodes;
    sfs_map_target_t *targets;
} sfs_map_t;

/* Bytes sfs_map_pack needs. */
size_t sfs_map_packed_size(const sfs_map_t *map);
void   sfs_map_pack(sfs_wbuf_t *wb, const sfs_map_t *map);
/* Decode a map; every count and length is checked. */
int sfs_map_unpack(const void *data, size_t length, sfs_map_t **map_p);
/* Deep copy. */
int  sfs_map_dup(const sfs_map_t *map, sfs_map_t **copy_p);
void sfs_map_destroy(sfs_map_t *map);

const sfs_map_node_t   *sfs_map_find_node(const sfs_map_t *map, uint32_t node_id);
const sfs_map_target_t *sfs_map_find_target(const sfs_map_t *map, uint32_t target_id);

/* "online", "probably-offline", "offline" */
const char *sfs_state_name(uint32_t state);
/* "mgmt,meta,storage" into buf */
const char *sfs_roles_string(uint32_t roles, char *buf, size_t buflen);

#endif
