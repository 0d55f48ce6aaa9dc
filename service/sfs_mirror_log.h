/*
 * The change log of a mirror group's primary target (docs/mirroring.md,
 * "Failover"): while its buddy is away, the primary serves alone and
 * records which chunk files (entry ids) changed, so that the buddy is later
 * resynced with those files only, not a full copy.
 *
 * On disk: <target dir>/mirror-changes, text. A header line
 * "stripefs mirror changes: target P buddy S" then one decimal entry id per
 * line, appended and fdatasync'd before the request that changed it is
 * answered. The file's presence means "the buddy needs a resync" (it
 * survives a crash or restart of the primary); a torn last line (no
 * newline, a crash mid-append) is ignored when read back: its request was
 * not answered. Removed when a resync has copied everything.
 *
 * Used from the storage progress thread only (no locking). Its disk I/O
 * (one append and fdatasync per chunk file, the first time it changes
 * while the buddy is away) is done there.
 */
#ifndef SFS_MIRROR_LOG_H
#define SFS_MIRROR_LOG_H

#include <stdint.h>

typedef struct sfs_mirror_log sfs_mirror_log_t;

#define SFS_MIRROR_LOG_NAME "mirror-changes"

/* Open the log of primary target `target_id` in `dir` (nothing is created
 * while the buddy is good): an existing file is read back, and the log is
 * then degraded (the buddy needs a resync). */
int  sfs_mirror_log_open(const char *dir, uint32_t target_id, uint32_t buddy_id,
                         sfs_mirror_log_t **log_p);
void sfs_mirror_log_close(sfs_mirror_log_t *log);

/* Non-zero while the buddy needs a resync (the file exists). */
int      sfs_mirror_log_degraded(const sfs_mirror_log_t *log);
uint32_t sfs_mirror_log_target(const sfs_mirror_log_t *log);
uint32_t sfs_mirror_log_buddy(const sfs_mirror_log_t *log);

/* The buddy is lost: create the file (durable, with its directory entry)
 * if it is not there yet. */
int sfs_mirror_log_begin(sfs_mirror_log_t *log);
/* Record that the chunk file of `entry_id` changed (begins the log if
 * needed); durable when it returns 0. An id already recorded costs nothing. */
int sfs_mirror_log_note(sfs_mirror_log_t *log, uint64_t entry_id);

/* The recorded entry ids, in the order first recorded. */
uint32_t sfs_mirror_log_count(const sfs_mirror_log_t *log);
uint64_t sfs_mirror_log_entry(const sfs_mirror_log_t *log, uint32_t i);
/* Resync in passes (sfs_mirror_resync.c): a pass copies entries
 * [*first_p, *end_p) — those not copied yet — and forgets which ids are
 * recorded, so that a chunk file changed again during the pass is recorded
 * again (a new entry, copied by the next pass). Pass done: those entries
 * are copied; non-zero when nothing is left (then clear). Pass abandoned
 * (the buddy went away again): its entries are still to be copied. */
void sfs_mirror_log_pass_begin(sfs_mirror_log_t *log, uint32_t *first_p, uint32_t *end_p);
int  sfs_mirror_log_pass_done(sfs_mirror_log_t *log);
int  sfs_mirror_log_pass_abandon(sfs_mirror_log_t *log);
/* Counts the passes begun and the clears: a removal recorded while the
 * generation was G and done on disk when it is no longer G may have been
 * copied by a pass before it went (to be recorded again). */
uint64_t sfs_mirror_log_generation(const sfs_mirror_log_t *log);
/* Entries copied by the passes so far. */
uint32_t sfs_mirror_log_copied(const sfs_mirror_log_t *log);
/* Everything is copied: remove the file; the buddy is good again. */
int sfs_mirror_log_clear(sfs_mirror_log_t *log);

#endif
