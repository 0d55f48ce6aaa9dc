/*
 * The metadata server's timing of its requests (sfs_meta_stats.h): a
 * histogram per opcode and phase, and META_STATS answering it.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_meta_stats.h"

#include "sfs_handlers.h"
#include "sfs_proto_meta_stats.h"
#include "sfs_storage_tunables.h"

#include "sfs_cred.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* Buckets: [0, 128 ns), then 4 per power of two up to about 8.6 s, then
 * one for everything longer. */
#define SFS_META_HIST_BASE_SHIFT 7
#define SFS_META_HIST_OCTAVES    26
#define SFS_META_HIST_BUCKETS    (2 + 4 * SFS_META_HIST_OCTAVES)

typedef struct sfs_meta_phase_hist {
    uint64_t sum_ns;
    uint64_t max_ns;
    uint32_t bucket[SFS_META_HIST_BUCKETS];
} sfs_meta_phase_hist_t;

typedef struct sfs_meta_op_hist {
    uint64_t              count;
    sfs_meta_phase_hist_t phase[SFS_META_PHASES];
} sfs_meta_op_hist_t;

static pthread_once_t      sfs_meta_stats_once = PTHREAD_ONCE_INIT;
static int                 sfs_meta_stats_enabled;
static sfs_meta_op_hist_t *sfs_meta_stats_ops; /* [SFS_OP_MAX]; progress thread */
static uint64_t            sfs_meta_stats_since_ns;

static void sfs_meta_stats_init(void)
{
    bool on = true;
    int  rc = sfs_tunable_bool(&sfs_storage_tunables, "STRIPEFS_META_TIMING", &on);

    if (rc) {
        sfs_warn("metadata timing off: %s", sfs_error_detail());
        sfs_error_clear();
        on = false;
    }
    if (on) {
        sfs_meta_stats_ops = calloc(SFS_OP_MAX, sizeof(*sfs_meta_stats_ops));
        if (!sfs_meta_stats_ops) {
            sfs_warn("metadata timing off: out of memory for its histograms");
            on = false;
        }
    }
    sfs_meta_stats_since_ns = sfs_time_ns();
    sfs_meta_stats_enabled  = on;
}

int sfs_meta_stats_on(void)
{
    pthread_once(&sfs_meta_stats_once, sfs_meta_stats_init);
    return sfs_meta_stats_enabled;
}

uint64_t sfs_meta_stats_now(void)
{
    return sfs_meta_stats_on() ? sfs_time_ns() : 0;
}

static unsigned sfs_meta_hist_bucket(uint64_t ns)
{
    unsigned octave;

    if (ns < (1u << SFS_META_HIST_BASE_SHIFT)) {
        return 0;
    }
    octave = (unsigned)(63 - __builtin_clzll(ns)) - SFS_META_HIST_BASE_SHIFT;
    if (octave >= SFS_META_HIST_OCTAVES) {
        return SFS_META_HIST_BUCKETS - 1;
    }
    /* the two bits after the leading one: which quarter of the octave */
    return 1 + 4 * octave + (unsigned)((ns >> (octave + SFS_META_HIST_BASE_SHIFT - 2)) & 3u);
}

/* The middle of a bucket (its value for a percentile). */
static uint64_t sfs_meta_hist_value(unsigned bucket, uint64_t max_ns)
{
    unsigned octave, quarter;
    uint64_t low, width;

    if (bucket == 0) {
        return (1u << SFS_META_HIST_BASE_SHIFT) / 2 < max_ns ? (1u << SFS_META_HIST_BASE_SHIFT) / 2
                                                             : max_ns;
    }
    if (bucket == SFS_META_HIST_BUCKETS - 1) {
        return max_ns;
    }
    octave  = (bucket - 1) / 4;
    quarter = (bucket - 1) % 4;
    width   = 1ull << (octave + SFS_META_HIST_BASE_SHIFT - 2);
    low     = (4ull + quarter) * width;
    return low + width / 2 < max_ns ? low + width / 2 : max_ns;
}

static void sfs_meta_hist_add(sfs_meta_phase_hist_t *h, uint64_t ns)
{
    h->sum_ns += ns;
    if (ns > h->max_ns) {
        h->max_ns = ns;
    }
    h->bucket[sfs_meta_hist_bucket(ns)]++;
}

/* The value under which `per_mille` of the `count` values lie. */
static uint64_t sfs_meta_hist_percentile(const sfs_meta_phase_hist_t *h, uint64_t count,
                                         unsigned per_mille)
{
    uint64_t rank = (count * per_mille + 999) / 1000, seen = 0;

    for (unsigned b = 0; b < SFS_META_HIST_BUCKETS; b++) {
        seen += h->bucket[b];
        if (seen >= rank && seen) {
            return sfs_meta_hist_value(b, h->max_ns);
        }
    }
    return h->max_ns;
}

/* b - a, or 0 where a phase was not reached (a time of 0) or the clock
 * reads run backwards across threads (they do not: CLOCK_MONOTONIC). */
static uint64_t sfs_meta_span(uint64_t a, uint64_t b)
{
    return a && b && b > a ? b - a : 0;
}

void sfs_meta_stats_done(uint32_t opcode, const sfs_meta_times_t *t)
{
    uint64_t            now = sfs_meta_stats_now();
    uint64_t            span[SFS_META_PHASES];
    uint64_t            after;
    sfs_meta_op_hist_t *hist;

    if (!now || !t->arrive_ns || opcode >= SFS_OP_MAX || !sfs_meta_stats_ops) {
        return;
    }
    /* an operation answered before its commit: no commit phases */
    after                            = t->commit_end_ns ? t->commit_end_ns : t->end_ns;
    span[SFS_META_PHASE_QUEUE]       = sfs_meta_span(t->arrive_ns, t->batch_ns);
    span[SFS_META_PHASE_AHEAD]       = sfs_meta_span(t->batch_ns, t->start_ns);
    span[SFS_META_PHASE_HANDLER]     = sfs_meta_span(t->start_ns, t->end_ns);
    span[SFS_META_PHASE_COMMIT_WAIT] = sfs_meta_span(t->end_ns, t->commit_start_ns);
    span[SFS_META_PHASE_COMMIT]      = sfs_meta_span(t->commit_start_ns, t->commit_end_ns);
    span[SFS_META_PHASE_REPLY]       = sfs_meta_span(after, now);
    span[SFS_META_PHASE_TOTAL]       = sfs_meta_span(t->arrive_ns, now);
    hist                             = &sfs_meta_stats_ops[opcode];
    hist->count++;
    for (int p = 0; p < SFS_META_PHASES; p++) {
        sfs_meta_hist_add(&hist->phase[p], span[p]);
    }
}

static void sfs_meta_stats_release(void *arg)
{
    free(arg);
}

/* META_STATS: for administrators and the service's own user (the timing
 * says how busy the server is, not whose files). */
void sfs_handle_meta_stats(sfs_service_t *service, sfs_tp_request_t *req)
{
    const sfs_cred_t *cred = sfs_tp_session_cred(sfs_tp_request_session(req));
    sfs_meta_req_t   *mreq = calloc(1, sizeof(*mreq));
    sfs_page_reply_t  page = {0};
    uint8_t           args[16];
    uint8_t          *buf;
    size_t            cap = 12 + (size_t)SFS_OP_MAX * SFS_META_STATS_ENTRY_BYTES;
    sfs_wbuf_t        wb, pb;
    struct iovec      iov;

    (void)service;
    if (!mreq) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    if (sfs_handler_decode(req, mreq, sizeof(*mreq), 0) != 0) {
        free(mreq);
        return;
    }
    if (!sfs_cred_admin(cred) && cred->uid != geteuid()) {
        free(mreq);
        sfs_tp_request_reply_error(req, -EPERM,
                                   "META_STATS is for administrators and the service's own user "
                                   "(uid %u)",
                                   (unsigned)geteuid());
        return;
    }
    buf = malloc(cap);
    if (!buf) {
        free(mreq);
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    sfs_wbuf_init(&pb, buf, cap);
    sfs_wbuf_u32(&pb, (uint32_t)sfs_meta_stats_on());
    sfs_wbuf_u64(&pb, sfs_time_ns() - sfs_meta_stats_since_ns);
    for (uint32_t op = 0; op < SFS_OP_MAX && sfs_meta_stats_ops; op++) {
        const sfs_meta_op_hist_t *h = &sfs_meta_stats_ops[op];
        sfs_meta_stats_entry_t    e;

        if (!h->count) {
            continue;
        }
        e.opcode = op;
        e.count  = h->count;
        for (int p = 0; p < SFS_META_PHASES; p++) {
            e.phase[p].sum_ns = h->phase[p].sum_ns;
            e.phase[p].max_ns = h->phase[p].max_ns;
            e.phase[p].p50_ns = sfs_meta_hist_percentile(&h->phase[p], h->count, 500);
            e.phase[p].p99_ns = sfs_meta_hist_percentile(&h->phase[p], h->count, 990);
        }
        sfs_proto_meta_stats_entry_pack(&pb, &e);
        page.count++;
    }
    if (mreq->flags & SFS_META_STATS_RESET) {
        if (sfs_meta_stats_ops) {
            memset(sfs_meta_stats_ops, 0, SFS_OP_MAX * sizeof(*sfs_meta_stats_ops));
        }
        sfs_meta_stats_since_ns = sfs_time_ns();
    }
    free(mreq);
    page.eof = 1;
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_page_reply_pack(&wb, &page);
    iov.iov_base = buf;
    iov.iov_len  = pb.length;
    sfs_tp_request_reply(req, 0, args, wb.length, &iov, 1, sfs_meta_stats_release, buf);
}
