/*
 * META_STATS (56): the metadata server's timing of its requests, per
 * opcode (service/sfs_meta_stats.c; docs/metadata.md, "Where a create's
 * time goes"). Request: a meta_req whose flags may hold
 * SFS_META_STATS_RESET; reply: a page_reply whose count is the number of
 * entries, and a payload of
 *     u32 enabled (STRIPEFS_META_TIMING), u64 ns since the start or reset,
 *     then `count` entries: u32 opcode, u64 count, and for each phase
 *     u64 sum, p50, p99, max (ns), the phases in the order below.
 * Percentiles come from a histogram of 4 buckets per power of two (each
 * value the middle of its bucket: within about 12%).
 */
#ifndef SFS_PROTO_META_STATS_H
#define SFS_PROTO_META_STATS_H

#include "sfs_buf.h"

#include <stdint.h>

#define SFS_META_STATS_RESET 0x1u /* meta_req flags: start counting again (after the answer) */

/* The phases of one request on the metadata server, in order. */
enum {
    SFS_META_PHASE_QUEUE,       /* its arrival to its batch's start (the metadata thread busy) */
    SFS_META_PHASE_AHEAD,       /* its batch's start to its handler's (the ops before it) */
    SFS_META_PHASE_HANDLER,     /* the handler (the operation in its transaction) */
    SFS_META_PHASE_COMMIT_WAIT, /* its handler's end to its batch's commit start */
    SFS_META_PHASE_COMMIT,      /* the batch's LMDB commit (its fsync) */
    SFS_META_PHASE_REPLY,       /* the commit's end to its reply handed to the transport */
    SFS_META_PHASE_TOTAL,       /* arrival to reply */
    SFS_META_PHASES
};

typedef struct sfs_meta_stats_phase {
    uint64_t sum_ns;
    uint64_t p50_ns;
    uint64_t p99_ns;
    uint64_t max_ns;
} sfs_meta_stats_phase_t;

typedef struct sfs_meta_stats_entry {
    uint32_t               opcode;
    uint64_t               count;
    sfs_meta_stats_phase_t phase[SFS_META_PHASES];
} sfs_meta_stats_entry_t;

static inline void sfs_proto_meta_stats_entry_pack(sfs_wbuf_t *wb, const sfs_meta_stats_entry_t *e)
{
    sfs_wbuf_u32(wb, e->opcode);
    sfs_wbuf_u64(wb, e->count);
    for (int p = 0; p < SFS_META_PHASES; p++) {
        sfs_wbuf_u64(wb, e->phase[p].sum_ns);
        sfs_wbuf_u64(wb, e->phase[p].p50_ns);
        sfs_wbuf_u64(wb, e->phase[p].p99_ns);
        sfs_wbuf_u64(wb, e->phase[p].max_ns);
    }
}

static inline void sfs_proto_meta_stats_entry_unpack(sfs_rbuf_t *rb, sfs_meta_stats_entry_t *e)
{
    e->opcode = sfs_rbuf_u32(rb);
    e->count  = sfs_rbuf_u64(rb);
    for (int p = 0; p < SFS_META_PHASES; p++) {
        e->phase[p].sum_ns = sfs_rbuf_u64(rb);
        e->phase[p].p50_ns = sfs_rbuf_u64(rb);
        e->phase[p].p99_ns = sfs_rbuf_u64(rb);
        e->phase[p].max_ns = sfs_rbuf_u64(rb);
    }
}

/* Bytes of one packed entry. */
#define SFS_META_STATS_ENTRY_BYTES (4 + 8 + SFS_META_PHASES * 32)

#endif
