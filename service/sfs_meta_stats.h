/*
 * Where the metadata server's time goes, per request (docs/metadata.md):
 * each queued operation carries the times of its phases (arrival on the
 * progress thread, its batch's start, its handler's start and end on the
 * metadata thread,
 * its batch's commit start and end), and its reply adds them to a
 * histogram per opcode and phase (sfs_proto_meta_stats.h lists the
 * phases). META_STATS (sfs_handle_meta_stats) answers them.
 *
 * Switched by STRIPEFS_META_TIMING (sfs_storage_tunables.h, default on):
 * when off, sfs_meta_stats_now() answers 0 and nothing is counted. The
 * cost when on is one clock read per phase and a few additions per
 * request (under 1% of the cheapest one, a STAT).
 *
 * Threads: times are taken on either thread; sfs_meta_stats_done and the
 * handler run on the progress thread only, which owns the histograms.
 */
#ifndef SFS_META_STATS_H
#define SFS_META_STATS_H

#include <stdint.h>

typedef struct sfs_meta_times {
    uint64_t arrive_ns; /* 0: not timed */
    uint64_t batch_ns;  /* the metadata thread took its batch */
    uint64_t start_ns;
    uint64_t end_ns;
    uint64_t commit_start_ns; /* 0: answered before its batch's commit (SIZE END) */
    uint64_t commit_end_ns;
} sfs_meta_times_t;

/* Whether timing is on (read once from the environment). */
int sfs_meta_stats_on(void);

/* The monotonic clock when timing is on, else 0. */
uint64_t sfs_meta_stats_now(void);

/* Count a request of `opcode` whose reply was just handed to the
 * transport (progress thread). Untimed requests are ignored. */
void sfs_meta_stats_done(uint32_t opcode, const sfs_meta_times_t *times);

#endif
