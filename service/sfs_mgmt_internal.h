/*
 * Inside the management role: its registry, shared by sfs_mgmt.c (life
 * cycle, states, the map, the clean stop) and sfs_mgmt_handlers.c (its
 * requests).
 */
#ifndef SFS_MGMT_INTERNAL_H
#define SFS_MGMT_INTERNAL_H

#include "sfs_service.h"

#include "sfs_map.h"
#include "sfs_mgmt_state.h"

#define SFS_MGMT_STOP_TIMEOUT_MS 30000
/* How often the states are looked at, and the slack added to 1.25
 * heartbeat intervals before a silent rank is probably-offline (a heartbeat
 * is sent by a progress loop that may be late by its own poll timeout). */
#define SFS_MGMT_CHECK_MS         100
#define SFS_MGMT_SUSPECT_SLACK_MS 250
/* how much before the offline timeout a silent rank is offline (its
 * buddies promoted): a waiting client's map look (250 ms), its resend and
 * a margin, so that the pause it sees stays within the timeout */
#define SFS_MGMT_FAILOVER_SLACK_MS 1000

typedef struct sfs_mgmt_node {
    uint32_t node_id;
    uint32_t roles;
    uint32_t pid;
    uint32_t state;
    char     host[SFS_HOST_MAX];
    void    *address;
    size_t   address_length;
    uint64_t last_contact_ms;
} sfs_mgmt_node_t;

typedef struct sfs_mgmt_target {
    uint32_t target_id;
    uint32_t node_id;
    uint64_t capacity;
    uint64_t free;
    uint64_t bandwidth;
    char     dir[PATH_MAX];
} sfs_mgmt_target_t;

typedef struct sfs_mgmt_stop {
    sfs_tp_conn_t *conn;
    sfs_tp_rpc_t  *rpc;
    uint32_t       node_id;
} sfs_mgmt_stop_t;

struct sfs_mgmt {
    sfs_service_t     *service;
    sfs_mgmt_node_t   *nodes;
    uint32_t           node_count;
    sfs_mgmt_target_t *targets;
    uint32_t           target_count;
    uint64_t           version;
    uint64_t           next_check_ms;
    uint64_t           last_check_ms; /* a longer gap is management's own stall */
    uint64_t           heard_ms;      /* the last heartbeat of another rank (sfs_mgmt_heard) */
    int                shutdown_requested;
    int                shutdown_started;
    int                mirror_stops_sent; /* the metadata mirror is stopped last */
    uint64_t           shutdown_deadline_ms;
    sfs_mgmt_stop_t   *stops;
    uint32_t           stop_count;
    sfs_mgmt_mirror_t *mirrors; /* one per config mirror group, made on first use */
    /* the metadata mirror (meta.mirror), as the metadata server reports it
     * (sfs_mgmt_meta_mirror.c) */
    uint32_t meta_mirror_state; /* SFS_MIRROR_STATE_* */
    uint64_t meta_mirror_seq;   /* since the metadata server's batch */
    /* the metadata server's rank, and its failover (sfs_mgmt_meta_promote.c) */
    uint32_t       meta_node;
    int            meta_promoted; /* a promotion happened: the others are deposed */
    int            promote_said;  /* why not promoted, said once (a reason's number) */
    uint32_t       promote_to;
    uint64_t       next_promote_ms;
    sfs_tp_conn_t *promote_conn;
    sfs_tp_rpc_t  *promote_rpc;
    uint8_t        promote_args[32];
};

sfs_mgmt_node_t   *sfs_mgmt_find_node(sfs_mgmt_t *mgmt, uint32_t node_id);
sfs_mgmt_target_t *sfs_mgmt_find_target(sfs_mgmt_t *mgmt, uint32_t target_id);
/* The map as of now; its nodes' addresses are borrowed from the registry.
 * Free map->nodes and map->targets. */
int sfs_mgmt_build_map(sfs_mgmt_t *mgmt, sfs_map_t *map);
/* The mirror groups' states (made from the config on first use; NULL
 * when out of memory or without groups), and their members' lines of a
 * map being built (sfs_mgmt_mirror.c). */
sfs_mgmt_mirror_t *sfs_mgmt_mirrors(sfs_mgmt_t *mgmt);
void               sfs_mgmt_mirror_map(sfs_mgmt_t *mgmt, sfs_map_t *map);
/* Rank `node_id` went offline: promote the secondary of each group whose
 * primary it served (if good and online). Non-zero if the map changed. */
int sfs_mgmt_mirror_failover(sfs_mgmt_t *mgmt, uint32_t node_id);
/* The mirror state on disk (sfs_mgmt_mirror_store.c; its text:
 * sfs_mgmt_state.h). Path: 1 and the path, 0 when nothing is kept (a
 * config from memory), or an error. Load at start (no file: the config's
 * primaries): 0 or the error, detail set. Save after every change (a
 * failure is logged: the change holds in memory). */
int sfs_mgmt_mirror_state_path(const sfs_config_t *config, char *path, size_t size);
/* Management's file `name` (in meta.dir when management shares the
 * metadata host, else beside the config): 1 and the path, 0 (a config from
 * memory: nothing kept) or an error. Write: atomically and durably (a
 * temporary file, fsync, rename, fsync of the directory), 0 or an error
 * naming the file. Read: 0 and the whole text (NUL-terminated, to free), 1
 * when there is no file, or an error naming it (over 1 MiB, a NUL byte). */
int sfs_mgmt_state_path(const sfs_config_t *config, const char *name, char *path, size_t size);
int sfs_mgmt_state_write(const char *path, const char *buf, size_t len);
int sfs_mgmt_state_read(const char *path, char **text_p);
/* A replicated command applied (sfs_mgmt_state_apply.c, sfs_mgmt_raft.h):
 * `kind`'s file (SFS_MGMT_RAFT_*) replaced by text (length bytes), once its
 * own parser accepts it for this config: 0, or -EBADMSG naming the file and
 * line with nothing written, or the write's error. A config from memory
 * keeps nothing: 0. */
int  sfs_mgmt_state_apply(const sfs_config_t *config, uint32_t kind, const char *text,
                          size_t length);
int  sfs_mgmt_mirror_load(sfs_mgmt_t *mgmt);
void sfs_mgmt_mirror_save(sfs_mgmt_t *mgmt);
/* Member `bad` (0 or 1) of `g` was reported bad: if it is the primary, its
 * good online buddy is promoted (docs/mirroring.md, "Rebuild"). Non-zero
 * if the map changed. */
int sfs_mgmt_mirror_bad_primary(sfs_mgmt_t *mgmt, sfs_mgmt_mirror_t *g, int bad);
/* The metadata mirror's state on disk (sfs_mgmt_meta_mirror.c), the file
 * meta-mirror-state beside mirror-state (its text: sfs_mgmt_state.h).
 * Load at start when meta.mirror is set (no
 * file: needs-resync, batch 0: nothing says the copy is in step); save at
 * every change (a failure is logged). */
int  sfs_mgmt_meta_mirror_load(sfs_mgmt_t *mgmt);
void sfs_mgmt_meta_mirror_list(sfs_mgmt_t *mgmt, sfs_meta_mirror_info_t *info);
/* The metadata mirror's state, in memory and in its file. */
void sfs_mgmt_meta_mirror_set(sfs_mgmt_t *mgmt, uint32_t state, uint64_t seq);
/* The metadata server's rank: the plan's. A recorded promotion of another
 * rank refuses the start, naming what to do. */
int sfs_mgmt_meta_primary_load(sfs_mgmt_t *mgmt);
/* Every check: promote the metadata mirror once the metadata server is
 * offline, if the mirror was good and is online. */
void sfs_mgmt_meta_failover_tick(sfs_mgmt_t *mgmt, uint64_t now);
void sfs_mgmt_meta_failover_destroy(sfs_mgmt_t *mgmt);

/* Pure (unit-tested): how long a rank may be silent before it is
 * probably-offline, before it is offline (the offline timeout less
 * SFS_MGMT_FAILOVER_SLACK_MS, or a quarter of a short timeout), and the
 * state after `silent_ms` of silence. */
uint64_t sfs_mgmt_suspect_after_ms(const sfs_config_t *config);
/* A heartbeat (or registration) of `node`: its contact is now. Where no
 * other rank had been heard for the offline time, management's own host
 * was the likelier one cut off: the ranks still silent are probably-offline
 * (not offline, not given up by the map's readers) for the time from
 * suspicion to offline, so that they can be heard again first. */
void     sfs_mgmt_heard(sfs_mgmt_t *mgmt, sfs_mgmt_node_t *node, uint64_t now);
uint64_t sfs_mgmt_offline_after_ms(const sfs_config_t *config);
uint32_t sfs_mgmt_state_after(const sfs_config_t *config, uint64_t silent_ms);

#endif
