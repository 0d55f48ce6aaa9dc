/*
 * stripefs-ctl migrate --rebalance [--pool P] [--tolerance PCT]: even out
 * the fill of a storage pool's targets, e.g. after targets were added
 * (docs/migration.md, "Rebalancing a pool"). A target's fill is the bytes
 * of its chunk files (CHUNK_LIST) over its capacity; the pool's fill is the
 * sum of those bytes over the sum of the capacities. Greedy: take the
 * fullest target above the pool's fill, move a chunk of it (the largest
 * that narrows the spread) to a target below the pool's fill that the file
 * does not use, with the drain's crash-safe move (stripefs_ctl_move.c),
 * until every target is within PCT points of the pool's fill or nothing
 * can move. A rerun measures again and continues.
 */
#include "stripefs_ctl.h"
#include "stripefs_ctl_move.h"

#include "sfs_admin.h"
#include "sfs_admin_migrate.h"
#include "sfs_errno.h"
#include "sfs_map.h"
#include "sfs_time.h"
#include "sfs_tunable.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REBAL_PAGE 1024

typedef struct rebal_chunk {
    uint64_t id, length; /* length 0: gone (moved off) */
} rebal_chunk_t;

/* One target of the run: what CHUNK_LIST said, kept up to date by the moves. */
typedef struct rebal_target {
    uint32_t       id;
    uint64_t       capacity;
    uint64_t       used, used_start;
    rebal_chunk_t *chunks; /* its chunk files, the longest first */
    size_t         count;
} rebal_target_t;

typedef struct rebal {
    ctl_t              *ctl;
    sfs_map_t          *map;
    sfs_migrate_reply_t draining;
    double              tolerance; /* fill points */
    int64_t             delay_ms;
    void               *buf;
    /* files not to try again in this run: skipped (busy, mirrored, failed)
     * or moved already (so that no chunk goes back and forth) */
    uint64_t *done;
    size_t    done_count, done_cap;
    uint64_t  moves, bytes, busy, mirrored, failed;
    int       last_rc;
    uint64_t  last_print_ms;
    /* the migrate lease of the pool's targets (one migrate run per target) */
    int64_t         lease_s;
    uint64_t        lease_token, lease_ms;
    const uint32_t *lease_ids;
    uint32_t        lease_count;
} rebal_t;

/* Take the migrate lease of every target of this pool's run, or renew it
 * when a third of its life has passed: a drain or another rebalance on one
 * of them is refused (and refuses this run), naming the holder. */
static int rebal_lease_keep(rebal_t *rb)
{
    uint64_t now = sfs_time_ms();
    int      rc;

    if (rb->lease_ms && now - rb->lease_ms < (uint64_t)rb->lease_s * 1000u / 3) {
        return 0;
    }
    rc = sfs_admin_migrate_lease(rb->ctl->client, SFS_LEASE_TAKE, rb->lease_ids, rb->lease_count,
                                 (uint32_t)rb->lease_s, rb->lease_token);
    if (rc == 0) {
        rb->lease_ms = now;
    }
    return rc;
}

static void rebal_lease_release(rebal_t *rb)
{
    if (rb->lease_ms) { /* else it runs out by itself */
        (void)sfs_admin_migrate_lease(rb->ctl->client, SFS_LEASE_RELEASE, rb->lease_ids,
                                      rb->lease_count, (uint32_t)rb->lease_s, rb->lease_token);
    }
    rb->lease_ms = 0;
}

static double rebal_abs(double x)
{
    return x < 0 ? -x : x;
}

static double rebal_max(double a, double b)
{
    return a > b ? a : b;
}

static double rebal_fill(const rebal_target_t *t)
{
    return 100.0 * (double)t->used / (double)t->capacity;
}

static double rebal_pool_fill(const rebal_target_t *ts, uint32_t n)
{
    double used = 0, capacity = 0;

    for (uint32_t i = 0; i < n; i++) {
        used += (double)ts[i].used;
        capacity += (double)ts[i].capacity;
    }
    return capacity > 0 ? 100.0 * used / capacity : 0;
}

static int rebal_within(const rebal_target_t *ts, uint32_t n, double tolerance)
{
    double pool = rebal_pool_fill(ts, n);

    for (uint32_t i = 0; i < n; i++) {
        if (rebal_abs(rebal_fill(&ts[i]) - pool) > tolerance + 1e-9) {
            return 0;
        }
    }
    return 1;
}

/* Where `id` is or would go in the sorted rb->done. */
static size_t rebal_done_at(const rebal_t *rb, uint64_t id)
{
    size_t lo = 0, hi = rb->done_count;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (rb->done[mid] < id) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static int rebal_is_done(const rebal_t *rb, uint64_t id)
{
    size_t at = rebal_done_at(rb, id);

    return at < rb->done_count && rb->done[at] == id;
}

static int rebal_mark_done(rebal_t *rb, uint64_t id)
{
    size_t at = rebal_done_at(rb, id);

    if (at < rb->done_count && rb->done[at] == id) {
        return 0;
    }
    if (rb->done_count == rb->done_cap) {
        size_t    cap   = rb->done_cap ? rb->done_cap * 2 : 64;
        uint64_t *grown = realloc(rb->done, cap * sizeof(*grown));

        if (!grown) {
            return sfs_error_set(-ENOMEM, "rebalance: no memory for the list of files tried");
        }
        rb->done     = grown;
        rb->done_cap = cap;
    }
    memmove(&rb->done[at + 1], &rb->done[at], (rb->done_count - at) * sizeof(*rb->done));
    rb->done[at] = id;
    rb->done_count++;
    return 0;
}

/* The longest chunk file first. */
static int rebal_longer(const void *a, const void *b)
{
    const rebal_chunk_t *x = a, *y = b;

    return x->length < y->length ? 1 : x->length > y->length ? -1 : 0;
}

/* Measure `t`: its chunk files and their bytes (CHUNK_LIST). */
static int rebal_measure(rebal_t *rb, rebal_target_t *t)
{
    uint64_t ids[REBAL_PAGE], lengths[REBAL_PAGE];
    uint64_t after = 0;
    uint32_t n     = 0;
    size_t   cap   = 0;
    int      rc;

    free(t->chunks);
    t->chunks = NULL;
    t->count  = 0;
    t->used   = 0;
    do {
        rc = sfs_admin_chunk_list(rb->ctl->client, t->id, after, REBAL_PAGE, ids, lengths, &n);
        if (rc == 0 && t->count + n > cap) {
            size_t         grown_cap = (t->count + n) * 2;
            rebal_chunk_t *grown     = realloc(t->chunks, grown_cap * sizeof(*grown));

            if (!grown) {
                return sfs_error_set(-ENOMEM, "rebalance: target %u: no memory for %zu chunk files",
                                     t->id, t->count + n);
            }
            t->chunks = grown;
            cap       = grown_cap;
        }
        for (uint32_t i = 0; rc == 0 && i < n; i++) {
            t->chunks[t->count].id       = ids[i];
            t->chunks[t->count++].length = lengths[i];
            t->used += lengths[i];
            after = ids[i];
        }
    } while (rc == 0 && n == REBAL_PAGE);
    if (rc == 0 && t->count > 1) {
        qsort(t->chunks, t->count, sizeof(*t->chunks), rebal_longer);
    }
    return rc;
}

static void rebal_print_fills(const char *pool, const char *when, const rebal_target_t *ts,
                              uint32_t n, int start)
{
    char size[32];

    printf("rebalance: pool '%s' %s: fill %.1f%%\n", pool, when, rebal_pool_fill(ts, n));
    for (uint32_t i = 0; i < n; i++) {
        double fill =
            start ? 100.0 * (double)ts[i].used_start / (double)ts[i].capacity : rebal_fill(&ts[i]);

        printf("rebalance:   target %u: %5.1f%% (%s of ", ts[i].id, fill,
               ctl_size(start ? ts[i].used_start : ts[i].used, size, sizeof(size)));
        printf("%s)\n", ctl_size(ts[i].capacity, size, sizeof(size)));
    }
    fflush(stdout); /* a watcher (a test, a log) sees the start before the moves */
}

static void rebal_progress(rebal_t *rb, const char *pool, const rebal_target_t *ts, uint32_t n,
                           int last)
{
    uint64_t now = sfs_time_ms();
    uint32_t hi = 0, lo = 0;
    char     size[32];

    if (!last && now - rb->last_print_ms < 1000) {
        return;
    }
    rb->last_print_ms = now;
    for (uint32_t i = 1; i < n; i++) {
        hi = rebal_fill(&ts[i]) > rebal_fill(&ts[hi]) ? i : hi;
        lo = rebal_fill(&ts[i]) < rebal_fill(&ts[lo]) ? i : lo;
    }
    printf("rebalance: pool '%s': %" PRIu64 " moves, %s; fullest %u %.1f%%, emptiest %u %.1f%%\n",
           pool, rb->moves, ctl_size(rb->bytes, size, sizeof(size)), ts[hi].id, rebal_fill(&ts[hi]),
           ts[lo].id, rebal_fill(&ts[lo]));
    fflush(stdout);
}

/* Whether moving `length` bytes from s to d narrows the spread: the larger
 * of their distances from the pool's fill gets smaller. */
static int rebal_narrows(const rebal_target_t *s, const rebal_target_t *d, uint64_t length,
                         double pool)
{
    double before = rebal_max(rebal_abs(rebal_fill(s) - pool), rebal_abs(rebal_fill(d) - pool));
    double sf     = 100.0 * (double)(s->used - length) / (double)s->capacity;
    double df     = 100.0 * (double)(d->used + length) / (double)d->capacity;

    return length <= s->used &&
           rebal_max(rebal_abs(sf - pool), rebal_abs(df - pool)) < before - 1e-9;
}

/* Try the chunk files of `s`, the longest first, until one moves. 1: one
 * moved; 0: none could; <0: the service stopped answering. */
static int rebal_from(rebal_t *rb, rebal_target_t *ts, uint32_t n, rebal_target_t *s,
                      const char *pool_name)
{
    double   pool = rebal_pool_fill(ts, n);
    uint32_t cands[SFS_POOL_LIST_TARGETS];
    uint64_t prefer[SFS_POOL_LIST_TARGETS];
    int      rc;

    for (size_t c = 0; c < s->count; c++) {
        uint64_t   id = s->chunks[c].id, length = s->chunks[c].length;
        sfs_attr_t attr;
        uint32_t   got = 0, count = 0;
        int        eof = 0;
        ctl_move_t mv  = {.ctl            = rb->ctl,
                          .map            = rb->map,
                          .cands          = cands,
                          .cand_prefer    = prefer,
                          .pool_name      = pool_name,
                          .draining       = rb->draining.targets,
                          .draining_count = rb->draining.count,
                          .delay_ms       = rb->delay_ms,
                          .buf            = rb->buf};

        if (length == 0 || rebal_is_done(rb, id)) {
            continue;
        }
        for (uint32_t d = 0; d < n && count < sizeof(cands) / sizeof(cands[0]); d++) {
            if (&ts[d] != s && rebal_fill(&ts[d]) < pool &&
                rebal_narrows(s, &ts[d], length, pool)) {
                cands[count]    = ts[d].id;
                prefer[count++] = (uint64_t)((200.0 - rebal_fill(&ts[d])) * 1e9); /* emptiest */
            }
        }
        if (count == 0) {
            continue; /* too long to narrow the spread; a shorter one may */
        }
        rc = sfs_admin_inodes(rb->ctl->client, id - 1, 1, &attr, &got, &eof);
        if (rc) {
            return rc;
        }
        if (got != 1 || attr.entry_id != id || attr.type != SFS_TYPE_FILE) {
            continue; /* no file: a deletion pending (fsck's to judge) */
        }
        if (!ctl_move_uses(&attr, s->id)) {
            /* a move killed between its commit and its tombstone: finish it */
            rc = sfs_admin_chunk_moved(rb->ctl->client, s->id, id, SFS_MOVED_TOMB, NULL);
            if (rc) {
                return rc;
            }
            s->used -= length;
            s->chunks[c].length = 0;
            continue;
        }
        mv.cand_count = count;
        rc            = ctl_move_file(&mv, &attr, s->id);
        if (rc == CTL_MOVED || rc == CTL_MOVE_GONE) {
            s->used -= length;
            s->chunks[c].length = 0;
        }
        if (rc == CTL_MOVED) {
            for (uint32_t d = 0; d < n; d++) {
                ts[d].used += ts[d].id == mv.to ? mv.bytes : 0;
            }
            rb->moves++;
            rb->bytes += mv.bytes;
        }
        rb->busy += rc == CTL_MOVE_BUSY;
        rb->mirrored += rc == CTL_MOVE_MIRRORED;
        rb->failed += rc == CTL_MOVE_FAILED;
        if (rc != CTL_MOVE_GONE && rc != CTL_MOVE_NOWHERE && rebal_mark_done(rb, id) != 0) {
            return -ENOMEM;
        }
        if (rc == CTL_MOVE_FAILED && ctl_move_no_answer(mv.last_rc)) {
            return mv.last_rc;
        }
        if (rc == CTL_MOVED) {
            return 1;
        }
    }
    return 0;
}

/* Rebalance the targets `ids` of one pool: the set of targets this run
 * works on (online and not draining). 0 done, 1 not all done, -errno. */
static int rebal_targets(rebal_t *rb, const char *pool_name, const uint32_t *ids, uint32_t n)
{
    rebal_target_t *ts             = calloc(n ? n : 1, sizeof(*ts));
    uint32_t       *order          = calloc(n ? n : 1, sizeof(*order));
    uint64_t        skipped_before = rb->busy + rb->mirrored + rb->failed;
    uint64_t        moves_before   = rb->moves;
    int             rc             = ts && order ? 0 : -ENOMEM;
    int             within, skipped;

    rb->lease_ids   = ids;
    rb->lease_count = n;
    if (rc == 0) {
        rc = rebal_lease_keep(rb); /* before anything is measured or moved */
    }
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        ts[i].id         = ids[i];
        ts[i].capacity   = sfs_map_find_target(rb->map, ids[i])->capacity;
        rc               = rebal_measure(rb, &ts[i]);
        ts[i].used_start = ts[i].used;
    }
    if (rc) {
        goto out;
    }
    rebal_print_fills(pool_name, "at the start", ts, n, 1);
    while (!rebal_within(ts, n, rb->tolerance)) {
        uint32_t above = 0;
        double   pool  = rebal_pool_fill(ts, n);
        int      moved = 0;

        /* the targets above the pool's fill, the fullest first */
        for (uint32_t i = 0; i < n; i++) {
            if (rebal_fill(&ts[i]) > pool) {
                uint32_t k = above++;

                for (; k > 0 && rebal_fill(&ts[order[k - 1]]) < rebal_fill(&ts[i]); k--) {
                    order[k] = order[k - 1];
                }
                order[k] = i;
            }
        }
        for (uint32_t k = 0; !moved && k < above; k++) {
            rc = rebal_lease_keep(rb);
            if (rc == 0) {
                rc = rebal_from(rb, ts, n, &ts[order[k]], pool_name);
            }
            if (rc < 0) {
                goto out;
            }
            moved = rc;
        }
        rebal_progress(rb, pool_name, ts, n, 0);
        if (!moved) {
            break; /* nothing can move (or narrow the spread) any more */
        }
    }
    rebal_progress(rb, pool_name, ts, n, 1);
    /* the end, measured again */
    for (uint32_t i = 0; rc >= 0 && i < n; i++) {
        rc = rebal_measure(rb, &ts[i]);
    }
    if (rc < 0) {
        goto out;
    }
    rebal_print_fills(pool_name, "at the end", ts, n, 0);
    within  = rebal_within(ts, n, rb->tolerance);
    skipped = rb->busy + rb->mirrored + rb->failed > skipped_before;
    printf("rebalance: pool '%s': %" PRIu64 " files moved; %s %.1f points of the pool's fill%s\n",
           pool_name, rb->moves - moves_before,
           within ? "every target within" : "NOT every target within", rb->tolerance,
           within    ? ""
           : skipped ? " (files were skipped: rerun when they are free)"
                     : " (no move narrows the spread further)");
    rc = !within && skipped ? 1 : 0;

out:
    rebal_lease_release(rb);
    for (uint32_t i = 0; ts && i < n; i++) {
        free(ts[i].chunks);
    }
    free(ts);
    free(order);
    return rc;
}

/* Whether `id` is in a named pool (the config's, as management has it). */
static int rebal_named(const sfs_pool_list_reply_t *pools, uint32_t id)
{
    for (uint32_t p = 0; p < pools->count; p++) {
        const sfs_pool_info_t *pool = &pools->pools[p];

        for (uint32_t t = 0; pool->id != SFS_POOL_DEFAULT && t < pool->target_count; t++) {
            if (pools->targets[pool->first + t] == id) {
                return 1;
            }
        }
    }
    return 0;
}

/* The pool's targets that take part: online, not draining, with a
 * capacity. `default`'s are the map's targets in no named pool, so that a
 * target joined since the start (stripefs-server --join) is one of them. */
static uint32_t rebal_members(const rebal_t *rb, const sfs_pool_list_reply_t *pools,
                              const sfs_pool_info_t *pool, uint32_t *ids)
{
    uint32_t all = pool->id == SFS_POOL_DEFAULT ? rb->map->target_count : pool->target_count;
    uint32_t n   = 0;

    for (uint32_t t = 0; t < all && n < SFS_POOL_LIST_TARGETS; t++) {
        uint32_t                id;
        const sfs_map_target_t *mt;
        int                     out;

        if (pool->id == SFS_POOL_DEFAULT) {
            id = rb->map->targets[t].target_id;
            if (rebal_named(pools, id)) {
                continue;
            }
        } else {
            id = pools->targets[pool->first + t];
        }
        mt  = sfs_map_find_target(rb->map, id);
        out = !mt || mt->state != SFS_STATE_ONLINE || mt->capacity == 0;
        for (uint32_t d = 0; d < rb->draining.count; d++) {
            out |= rb->draining.targets[d] == id;
        }
        if (out) {
            printf("rebalance: pool '%s': target %u left out (not online, or draining)\n",
                   pool->name, id);
            continue;
        }
        ids[n++] = id;
    }
    return n;
}

int ctl_rebalance(ctl_t *ctl, int argc, char **argv)
{
    static const struct option opts[] = {{"rebalance", no_argument, NULL, 'r'},
                                         {"pool", required_argument, NULL, 'p'},
                                         {"tolerance", required_argument, NULL, 't'},
                                         {NULL, 0, NULL, 0}};
    rebal_t                    rb     = {.ctl = ctl, .tolerance = 5};
    sfs_pool_list_reply_t     *pools  = NULL;
    const char                *only   = NULL;
    uint32_t                  *ids    = NULL;
    int                        status = 0, found = 0, opt, rc;
    char                      *end;

    optind = 1;
    while ((opt = getopt_long(argc, argv, "rp:t:", opts, NULL)) != -1) {
        switch (opt) {
        case 'r':
            break;
        case 'p':
            only = optarg;
            break;
        case 't':
            rb.tolerance = strtod(optarg, &end);
            if (*end || end == optarg || !(rb.tolerance > 0) || rb.tolerance > 100) {
                fprintf(stderr,
                        "stripefs-ctl migrate: --tolerance '%s' is not a number of "
                        "points above 0 and up to 100\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        default:
            return EXIT_USAGE;
        }
    }
    if (optind != argc) {
        fprintf(stderr,
                "usage: stripefs-ctl migrate --rebalance [--pool POOL] [--tolerance PCT]\n");
        return EXIT_USAGE;
    }
    if (ctl_connect(ctl) != 0) {
        return 1;
    }
    rc = sfs_tunable_int(&ctl_migrate_tunables, "STRIPEFS_TEST_MIGRATE_DELAY_MS", &rb.delay_ms);
    if (rc == 0) {
        rc = sfs_tunable_int(&ctl_migrate_tunables, "STRIPEFS_MIGRATE_LEASE_S", &rb.lease_s);
    }
    rb.lease_token = sfs_admin_migrate_lease_token();
    if (rc == 0) {
        /* for administrators (EPERM otherwise), and no target draining is a destination */
        rc = sfs_admin_drain(ctl->client, SFS_DRAIN_LIST, 0, &rb.draining);
    }
    if (rc) {
        return ctl_fail("migrate", rc);
    }
    pools  = calloc(1, sizeof(*pools));
    rb.buf = malloc(CTL_MOVE_PIECE);
    if (!pools || !rb.buf) {
        status = ctl_fail("migrate", -ENOMEM);
        goto out;
    }
    rc = sfs_admin_map(ctl->client, &rb.map);
    if (rc == 0) {
        rc = sfs_admin_pool_list(ctl->client, pools);
    }
    if (rc == 0) {
        ids = calloc(SFS_POOL_LIST_TARGETS, sizeof(*ids));
        rc  = ids ? 0 : -ENOMEM;
    }
    if (rc) {
        status = ctl_fail("migrate", rc);
        goto out;
    }
    for (uint32_t p = 0; p < pools->count; p++) {
        const sfs_pool_info_t *pool = &pools->pools[p];
        uint32_t               n;

        if (only && strcmp(only, pool->name) != 0) {
            continue;
        }
        found = 1;
        n     = rebal_members(&rb, pools, pool, ids);
        if (n < 2) {
            if (only || n > 0) {
                printf("rebalance: pool '%s': %u targets take part: nothing to balance\n",
                       pool->name, n);
            }
            continue;
        }
        rc = rebal_targets(&rb, pool->name, ids, n);
        if (rc == -EPERM) {
            fprintf(stderr, "stripefs-ctl migrate: %s (%s)\n", sfs_client_error(),
                    sfs_strerror(rc));
            status = 1;
            goto out;
        }
        if (rc < 0) {
            fprintf(stderr,
                    "stripefs-ctl migrate: rebalance of pool '%s' stopped after %" PRIu64
                    " moves: %s (each move is whole or not done: run it again)\n",
                    pool->name, rb.moves,
                    sfs_client_error()[0] ? sfs_client_error() : sfs_strerror(rc));
            status = 1;
            goto out;
        }
        status |= rc;
    }
    if (only && !found) {
        fprintf(stderr, "stripefs-ctl migrate: no storage pool '%s' (stripefs-ctl pool list)\n",
                only);
        status = 1;
        goto out;
    }
    printf("rebalance: %" PRIu64 " moves, %" PRIu64 " bytes; %" PRIu64
           " busy (open for writing, not moved), %" PRIu64 " mirrored (not moved), %" PRIu64
           " failed\n",
           rb.moves, rb.bytes, rb.busy, rb.mirrored, rb.failed);
    status |= rb.failed ? 1 : 0;

out:
    sfs_map_destroy(rb.map);
    free(pools);
    free(ids);
    free(rb.buf);
    free(rb.done);
    return status;
}
