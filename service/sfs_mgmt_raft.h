/*
 * One replica of management's replicated state (docs/management-raft.md):
 * Debian's libraft (0.15, canonical/raft) with its libuv I/O and TCP
 * transport, on a thread and event loop of its own.
 *
 * The replicated state is management's three state files; a command
 * replaces one of them whole (sfs_mgmt_raft_cmd.h). Once a command is
 * committed (held by a majority of the replicas' logs, on disk), every
 * replica applies it, in log order, by calling `apply` on its loop thread;
 * a replica that was away catches up from the leader's log or, if the
 * leader has compacted it, from a snapshot (the latest text of each kind),
 * and applies those.
 *
 * Only the leader takes proposals: sfs_mgmt_raft_propose() elsewhere is
 * -ENOTCONN with the detail naming the leader it knows. A proposal returns
 * 0 only once the command is committed and applied here. -ECONNABORTED
 * (leadership lost before the commit) leaves it unknown whether the command
 * will be applied: the caller proposes it again at the new leader, which a
 * command that replaces a whole file makes harmless.
 *
 * What is built: this replica, its log and snapshots on disk (`dir`), the
 * three-member configuration bootstrapped on first start, leader changes
 * reported. Not built yet: management deciding through it (promotions,
 * mirror states: docs/management-raft.md, "What remains").
 */
#ifndef SFS_MGMT_RAFT_H
#define SFS_MGMT_RAFT_H

#include <stddef.h>
#include <stdint.h>

#define SFS_MGMT_RAFT_MEMBERS_MAX 7u

typedef struct sfs_mgmt_raft sfs_mgmt_raft_t;

/* Called on the replica's loop thread, in log order: `kind`'s file is now
 * `text` (length bytes, not NUL-terminated). */
typedef void (*sfs_mgmt_raft_apply_fn)(void *arg, uint32_t kind, const char *text, size_t length);
/* Called on the loop thread when this replica starts or stops leading. */
typedef void (*sfs_mgmt_raft_leader_fn)(void *arg, int leading);

typedef struct sfs_mgmt_raft_params {
    uint32_t                id;        /* this replica: 1 .. count */
    uint32_t                count;     /* members: 1 .. SFS_MGMT_RAFT_MEMBERS_MAX */
    const char *const      *addresses; /* each member's "host:port", [id - 1] this one's */
    const char             *dir;       /* log and snapshots; made if missing */
    uint32_t                election_timeout_ms;  /* 0: 1000 */
    uint32_t                heartbeat_timeout_ms; /* 0: 100 */
    uint32_t                snapshot_threshold;   /* entries between snapshots; 0: 1024 */
    uint32_t                snapshot_trailing;    /* entries kept after one; 0: 128 */
    sfs_mgmt_raft_apply_fn  apply;
    sfs_mgmt_raft_leader_fn leader; /* may be NULL */
    void                   *arg;
} sfs_mgmt_raft_params_t;

/* Open (or make) the replica's log in dir, bootstrap the configuration if
 * the log is new, and start its thread. Errors name the replica, address
 * and directory. */
int sfs_mgmt_raft_start(const sfs_mgmt_raft_params_t *params, sfs_mgmt_raft_t **raft_p);
/* Stop the thread and close the log (what is committed stays on disk). */
void sfs_mgmt_raft_stop(sfs_mgmt_raft_t *raft);

/* Any thread: replace `kind`'s file by `text` on every replica (above).
 * Waits at most timeout_ms (-ETIMEDOUT: the command may still be applied). */
int sfs_mgmt_raft_propose(sfs_mgmt_raft_t *raft, uint32_t kind, const char *text, size_t length,
                          uint32_t timeout_ms);
/* Any thread: 1 if this replica leads, else 0; *leader_p (if not NULL) the
 * leader's id as this replica last knew it, 0 for none. */
int sfs_mgmt_raft_leading(sfs_mgmt_raft_t *raft, uint32_t *leader_p);
/* Any thread: the index of the last command applied here. */
uint64_t sfs_mgmt_raft_applied(sfs_mgmt_raft_t *raft);

#endif
