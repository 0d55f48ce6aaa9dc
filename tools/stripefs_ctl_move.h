/*
 * The crash-safe move of one file's chunk from one storage target to
 * another (docs/migration.md, "What it does, per file"), shared by
 * `stripefs-ctl migrate --from` (drain, stripefs_ctl_migrate.c) and
 * `migrate --rebalance` (stripefs_ctl_rebalance.c): choose the new target,
 * copy and fsync, fence the old chunk, commit the new pattern, tombstone the
 * old chunk; a commit whose answer was lost is judged by reading the inode
 * back before anything is removed.
 */
#ifndef SFS_STRIPEFS_CTL_MOVE_H
#define SFS_STRIPEFS_CTL_MOVE_H

#include "stripefs_ctl.h"

#include "sfs_map.h"
#include "sfs_proto.h"

#include <stdint.h>

#define CTL_MOVE_PIECE (4ull << 20) /* bytes copied per READ/WRITE: the size of buf */

/* What became of one file. */
enum {
    CTL_MOVED,         /* committed (its old chunk tombstoned, or left for a sweep) */
    CTL_MOVE_BUSY,     /* a writer is registered, or began during the copy */
    CTL_MOVE_MIRRORED, /* mirrored files are not moved */
    CTL_MOVE_GONE,     /* removed meanwhile */
    CTL_MOVE_FAILED,   /* said on stderr; last_rc has why */
    CTL_MOVE_NOWHERE,  /* no candidate could take the chunk (said when say_why) */
};

typedef struct ctl_move {
    ctl_t           *ctl;
    const sfs_map_t *map;
    /* the targets the new one is chosen from (a drain: the pool's) */
    const uint32_t *cands;
    uint32_t        cand_count;
    /* NULL: among equal host choices, the most free space first (a drain);
     * else a preference per candidate (same order), higher first */
    const uint64_t *cand_prefer;
    const char     *pool_name; /* for messages */
    const uint32_t *draining;  /* targets never chosen */
    uint32_t        draining_count;
    int64_t         delay_ms; /* testing: sleep after the copy, before the fence */
    void           *buf;      /* CTL_MOVE_PIECE bytes */
    int             say_why;  /* CTL_MOVE_NOWHERE: print why, per candidate */
    /* out */
    uint64_t bytes;   /* chunk bytes moved, added to by each move */
    uint32_t to;      /* the target of the last move */
    int      last_rc; /* of the last file that failed */
} ctl_move_t;

/* Whether `attr`'s pattern names `target`. */
int ctl_move_uses(const sfs_attr_t *attr, uint32_t target);
/* The service stopped answering (killed, restarting): no use going on. */
int ctl_move_no_answer(int rc);
/* Move the chunk of `attr` (a file) on `from` to a target chosen among
 * mv->cands: online, not draining, room for the chunk above the reserve,
 * not used by the file; another host than the file's other targets first,
 * then another rank, then mv->cand_prefer (or the most free space). A
 * target holding a tombstone of the file (ESTALE) is skipped for the next.
 * Returns CTL_MOVED and the others above; never a negative errno. */
int ctl_move_file(ctl_move_t *mv, const sfs_attr_t *attr, uint32_t from);

/* stripefs_ctl_rebalance.c: `migrate --rebalance [--pool P] [--tolerance
 * PCT]` (argv after the verb's own parsing is stripefs_ctl_migrate.c's). */
int ctl_rebalance(ctl_t *ctl, int argc, char **argv);

#endif
