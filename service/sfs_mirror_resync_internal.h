/*
 * What the resync (sfs_mirror_resync.c) and the rebuild
 * (sfs_mirror_rebuild.c) of a mirror member share: the copy's state. A
 * rebuild is a resync whose first pass copies every chunk file of this
 * target instead of the change log's (docs/mirroring.md, "Rebuild").
 */
#ifndef SFS_MIRROR_RESYNC_INTERNAL_H
#define SFS_MIRROR_RESYNC_INTERNAL_H

#include "sfs_mirror_resync.h"

#include <sys/uio.h>

#define SFS_RESYNC_PIECE   (512u * 1024)
#define SFS_RESYNC_BACKOFF 1000 /* ms before trying again after a failure */

enum { SFS_RESYNC_START, SFS_RESYNC_COPY, SFS_RESYNC_SYNC, SFS_RESYNC_NEXT };

struct sfs_mirror_resync {
    sfs_cluster_t      *cluster;
    sfs_chunk_target_t *target;
    sfs_mirror_log_t   *log;
    int                 active;
    int                 seen_away; /* the map showed the buddy not online since it was lost */
    uint32_t            lost_pid;  /* the buddy's rank's pid the map showed at the loss (0: none) */
    uint64_t            quiet_lost_ms; /* a pass lost the buddy then; 0: not since it was back */
    uint32_t            idx, end;      /* the pass: log entries [idx, end) left */
    uint32_t            base;          /* entries copied before this resync started */
    int                 phase;
    uint64_t            entry_id;
    uint64_t            length, offset;
    uint64_t            next_try_ms;
    uint64_t            start_ms;
    uint64_t            files, bytes; /* copied by this resync */
    sfs_tp_rpc_t       *rpc;
    uint8_t            *buf;
    uint8_t            *args;
    struct iovec        iov;
    /* rebuild: the buddy lost its disk (this member copies everything) */
    int       rebuild;      /* SFS_MIRROR_REBUILD_* */
    int       full;         /* the pass under way copies all[], not the log's entries */
    uint64_t *all;          /* the full pass: every chunk file of this target */
    uint32_t  all_count;    /* all[]'s length: [idx, all_count) is left */
    uint64_t  resume_after; /* chunk files up to this id were copied before a restart */
    /* this member's disk id (<dir>/mirror-member), told to the buddy */
    uint64_t      disk_id;
    int           probe;
    uint64_t      probe_next_ms;
    sfs_tp_rpc_t *probe_rpc;
    uint8_t       probe_args[128];
};

/* The copy failed: stop it and try again later (non-zero: state changed). */
int sfs_mirror_resync_abandon(sfs_mirror_resync_t *r, int rc, const char *detail, uint64_t now);

/* sfs_mirror_rebuild.c. Open: read the rebuild flag of this target, and
 * see whether its own directory is new (then it asks its buddy). */
int sfs_mirror_rebuild_open(sfs_mirror_resync_t *r);
/* While a rebuild is flagged: 1 when a full pass is under way (the caller
 * drives the copy), else 0 (nothing to copy now); *changed_p is set when
 * the state changed. */
int sfs_mirror_rebuild_tick(sfs_mirror_resync_t *r, const sfs_map_t *map, uint64_t now,
                            int *changed_p);
/* The full pass copied everything: the flag goes, the change log's resync
 * (what changed meanwhile) follows. Returns 1 (the state changed). */
int sfs_mirror_rebuild_done(sfs_mirror_resync_t *r, uint64_t now);
/* The full pass copied chunk file r->entry_id: noted in the flag file, so
 * that a restart resumes after it. */
void sfs_mirror_rebuild_copied(sfs_mirror_resync_t *r);
/* Ask the buddy whether this new directory needs a rebuild. */
void sfs_mirror_rebuild_probe_tick(sfs_mirror_resync_t *r, const sfs_map_t *map, uint64_t now);

#endif
