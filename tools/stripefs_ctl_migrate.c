/*
 * stripefs-ctl migrate --from TARGET [--wait SECONDS] [--cancel]: drain a storage target
 * while the service runs (docs/migration.md). The target is marked
 * draining (no new files), then each file with a chunk on it is moved to
 * another target of the same storage pool, one file at a time, each move
 * crash-safe: copy, fsync, fence the old chunk against writes, commit the
 * new pattern in one metadata transaction (refused if anyone wrote the
 * file since the copy began), tombstone and remove the old chunk. Files
 * busy with a writer are retried at the end of the pass (with --wait,
 * every second until their writers close or the time runs out) and
 * reported if still busy. One run per target: the run holds the target's
 * migrate lease (MIGRATE_LEASE), renewed while it works. Rerunning
 * continues where a run stopped (a file moved is no longer on the target;
 * leftovers of a killed move are swept).
 */
#include "stripefs_ctl.h"

#include "sfs_admin.h"
#include "sfs_admin_migrate.h"
#include "sfs_errno.h"
#include "sfs_layout.h"
#include "sfs_map.h"
#include "sfs_time.h"
#include "sfs_tunable.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIGRATE_PAGE   1024
#define MIGRATE_PIECE  (4ull << 20) /* bytes copied per READ/WRITE */
#define MIGRATE_PASSES 3            /* busy files are tried again this many times */

static const sfs_tunable_t ctl_migrate_tunable_entries[] = {
    {
        .name          = "STRIPEFS_TEST_MIGRATE_DELAY_MS",
        .type          = SFS_TUNABLE_INT,
        .default_value = "0",
        .min           = 0,
        .max           = 60000,
        .help          = "testing only: stripefs-ctl migrate sleeps this long after copying "
                         "each chunk, before its commit (tests/service/test_service_migrate.sh "
                         "kills the service in the middle)",
    },
    {
        .name          = "STRIPEFS_MIGRATE_LEASE_S",
        .type          = SFS_TUNABLE_INT,
        .default_value = "30",
        .min           = 1,
        .max           = SFS_LEASE_S_MAX,
        .help          = "stripefs-ctl migrate holds its target's migrate lease this long, "
                         "renewed every third of it while it works: a second run on the target "
                         "is refused until the lease runs out (a run killed frees its target "
                         "after this long)",
    },
};

const sfs_tunable_table_t ctl_migrate_tunables =
    SFS_TUNABLE_TABLE("migrate", ctl_migrate_tunable_entries);

enum { MOVED, MOVE_BUSY, MOVE_MIRRORED, MOVE_GONE, MOVE_FAILED };

typedef struct migrate {
    ctl_t                 *ctl;
    uint32_t               from;
    sfs_map_t             *map;
    sfs_pool_list_reply_t *pools;
    sfs_migrate_reply_t    draining;
    const uint32_t        *pool_targets; /* the pool of `from` */
    uint32_t               pool_count;
    const char            *pool_name;
    int64_t                delay_ms;
    int64_t                lease_s;     /* STRIPEFS_MIGRATE_LEASE_S */
    uint64_t               lease_token; /* this run (0: no lease taken) */
    uint64_t               lease_ms;    /* taken or renewed then */
    uint64_t               wait_s;      /* --wait: busy files retried this long */
    void                  *buf;
    uint64_t               files, moved, bytes, busy, mirrored, failed;
    uint64_t               total_bytes;
    uint64_t               last_print_ms;
    int                    last_rc; /* of the last file that failed */
} migrate_t;

/* The service stopped answering (killed, restarting): no use going on. */
static int migrate_no_answer(int rc)
{
    switch (rc) {
    case -ECONNREFUSED:
    case -ECONNRESET:
    case -ECONNABORTED:
    case -ETIMEDOUT:
    case -EHOSTDOWN:
    case -EHOSTUNREACH:
    case -ENOTCONN:
    case -EPIPE:
    case -ESHUTDOWN:
        return 1;
    default:
        return 0;
    }
}

static int migrate_uses(const sfs_attr_t *attr, uint32_t target)
{
    for (uint32_t i = 0; i < attr->pattern.stripe_count; i++) {
        if (attr->pattern.targets[i] == target) {
            return 1;
        }
    }
    return 0;
}

static int migrate_is_draining(const migrate_t *m, uint32_t target)
{
    for (uint32_t i = 0; i < m->draining.count; i++) {
        if (m->draining.targets[i] == target) {
            return 1;
        }
    }
    return 0;
}

static const char *migrate_host(const migrate_t *m, uint32_t target)
{
    const sfs_map_target_t *t = sfs_map_find_target(m->map, target);
    const sfs_map_node_t   *n = t ? sfs_map_find_node(m->map, t->node_id) : NULL;

    return n ? n->host : "";
}

/* The new target of `attr`'s chunk on `from`: in its pool, online, not
 * draining, room for `length` bytes above the reserve, not used by the
 * file; another host than the file's other targets first, then another
 * rank, then the most free space. 0 when none; `skip` targets refused. */
static uint32_t migrate_choose(const migrate_t *m, const sfs_attr_t *attr, uint64_t length,
                               const uint32_t *skip, uint32_t skip_count)
{
    uint32_t best       = 0;
    int      best_score = -1;
    uint64_t best_free  = 0;

    for (uint32_t i = 0; i < m->pool_count; i++) {
        uint32_t                id = m->pool_targets[i];
        const sfs_map_target_t *t  = sfs_map_find_target(m->map, id);
        uint64_t                reserve;
        int                     score = 2, refused = 0;

        for (uint32_t s = 0; s < skip_count; s++) {
            refused |= skip[s] == id;
        }
        if (!t || id == m->from || refused || t->state != SFS_STATE_ONLINE ||
            migrate_is_draining(m, id) || migrate_uses(attr, id)) {
            continue;
        }
        reserve = t->capacity / 100 > (1u << 20) ? t->capacity / 100 : (1u << 20);
        if (t->free < reserve || t->free - reserve < length) {
            continue;
        }
        for (uint32_t k = 0; k < attr->pattern.stripe_count; k++) {
            const sfs_map_target_t *o = sfs_map_find_target(m->map, attr->pattern.targets[k]);

            if (!o || o->target_id == m->from) {
                continue;
            }
            if (strcmp(migrate_host(m, o->target_id), migrate_host(m, id)) == 0) {
                score = score > 1 ? 1 : score;
            }
            if (o->node_id == t->node_id) {
                score = 0;
            }
        }
        if (score > best_score || (score == best_score && t->free > best_free)) {
            best       = id;
            best_score = score;
            best_free  = t->free;
        }
    }
    return best;
}

/* Say why no target of the pool can take the chunk of `attr`. */
static void migrate_why_not(const migrate_t *m, const sfs_attr_t *attr, uint64_t id,
                            uint64_t length, const uint32_t *skip, uint32_t skip_count)
{
    fprintf(stderr,
            "stripefs-ctl migrate: file %016" PRIx64 ": no target of storage pool '%s' can take "
            "its chunk (%" PRIu64 " bytes):",
            id, m->pool_name, length);
    for (uint32_t i = 0; i < m->pool_count; i++) {
        uint32_t                t   = m->pool_targets[i];
        const sfs_map_target_t *mt  = sfs_map_find_target(m->map, t);
        const char             *why = "full";

        if (t == m->from) {
            continue;
        }
        for (uint32_t k = 0; k < skip_count; k++) {
            if (skip[k] == t) {
                why = "holds a tombstone of it (it was moved off there before)";
            }
        }
        if (why[0] == 'h') {
            /* said */
        } else if (!mt || mt->state != SFS_STATE_ONLINE) {
            why = "not online";
        } else if (migrate_is_draining(m, t)) {
            why = "draining";
        } else if (migrate_uses(attr, t)) {
            why = "holds another of its chunks";
        }
        fprintf(stderr, " %u %s;", t, why);
    }
    fprintf(stderr, "%s\n", m->pool_count > 1 ? "" : " the pool has no other target");
}

/* Whether the file's committed pattern has `to` where `from` was (the
 * answer to a commit whose reply was lost): 1 yes, 0 no, <0 unknown. */
static int migrate_committed(migrate_t *m, uint64_t entry_id, uint32_t to)
{
    sfs_attr_t attr;
    uint32_t   count = 0;
    int        eof   = 0;
    int        rc    = sfs_admin_inodes(m->ctl->client, entry_id - 1, 1, &attr, &count, &eof);

    if (rc) {
        return rc;
    }
    return count == 1 && attr.entry_id == entry_id && migrate_uses(&attr, to) &&
           !migrate_uses(&attr, m->from);
}

/* Copy the chunk of `entry_id` from m->from to `to`, synced, with the
 * capability MIGRATE_BEGIN gave. */
static int migrate_copy(migrate_t *m, uint64_t entry_id, const sfs_cap_t *cap, uint32_t to,
                        uint64_t length)
{
    sfs_client_t *client = m->ctl->client;
    int           rc;

    /* an earlier killed move's copy may be there: start from nothing */
    rc = sfs_admin_chunk_io(client, SFS_OP_TRUNCATE, to, entry_id, cap, 0, NULL, 0, NULL);
    for (uint64_t off = 0; rc == 0 && off < length; off += MIGRATE_PIECE) {
        uint64_t n = length - off < MIGRATE_PIECE ? length - off : MIGRATE_PIECE;

        rc = sfs_admin_chunk_io(client, SFS_OP_READ, m->from, entry_id, cap, off, m->buf, n, NULL);
        if (rc == 0) {
            rc = sfs_admin_chunk_io(client, SFS_OP_WRITE, to, entry_id, cap, off, m->buf, n, NULL);
        }
    }
    if (rc == 0) {
        rc = sfs_admin_chunk_io(client, SFS_OP_FSYNC, to, entry_id, cap, 0, NULL, 0, NULL);
    }
    return rc;
}

static int migrate_one(migrate_t *m, const sfs_attr_t *attr)
{
    ctl_t            *ctl = m->ctl;
    uint64_t          id  = attr->entry_id;
    uint32_t          skip[SFS_STRIPE_COUNT_MAX];
    uint32_t          skip_count = 0;
    uint64_t          length     = 0;
    sfs_migrate_req_t req        = {0};
    sfs_cap_t         cap;
    uint32_t          to;
    int               rc, done;

    if (attr->pattern.type == SFS_PATTERN_MIRROR) {
        return MOVE_MIRRORED;
    }
    rc = sfs_admin_migrate_begin(ctl->client, id, &req.write_gen, &cap);
    if (rc == -EBUSY) {
        return MOVE_BUSY; /* and the commit is refused if one comes during the copy */
    }
    if (rc == -ENOENT) {
        return MOVE_GONE;
    }
    if (rc == 0) {
        rc = sfs_admin_chunk_io(ctl->client, SFS_OP_CHUNK_STAT, m->from, id, &cap, 0, NULL, 0,
                                &length);
    }
    if (rc) {
        fprintf(stderr, "stripefs-ctl migrate: file %016" PRIx64 ": %s\n", id, sfs_client_error());
        m->last_rc = rc;
        return MOVE_FAILED;
    }
    for (;;) {
        to = migrate_choose(m, attr, length, skip, skip_count);
        if (to == 0) {
            migrate_why_not(m, attr, id, length, skip, skip_count);
            return MOVE_FAILED;
        }
        rc = migrate_copy(m, id, &cap, to, length);
        if (rc != -ESTALE || skip_count == SFS_STRIPE_COUNT_MAX) {
            break;
        }
        skip[skip_count++] = to; /* a tombstone of this file there: another target */
    }
    if (rc) {
        fprintf(stderr, "stripefs-ctl migrate: file %016" PRIx64 ": copy to target %u: %s\n", id,
                to, sfs_client_error());
        m->last_rc = rc;
        return MOVE_FAILED;
    }
    if (m->delay_ms) {
        usleep((useconds_t)m->delay_ms * 1000u);
    }
    req.from     = m->from;
    req.to       = to;
    req.entry_id = id;
    rc = sfs_admin_chunk_moved(ctl->client, m->from, id, SFS_MOVED_FENCE, &req.fence_until_s);
    if (rc == 0) {
        rc = sfs_admin_migrate_commit(ctl->client, &req);
    }
    done = rc == 0 ? 1 : migrate_committed(m, id, to);
    if (done != 1) {
        int refused = rc; /* the commit's (or the fence's) answer */

        if (done == 0) {
            /* not committed: the copy is an orphan, the old chunk writable */
            (void)sfs_admin_chunk_moved(ctl->client, m->from, id, SFS_MOVED_UNFENCE, NULL);
            (void)sfs_admin_chunk_unlink(ctl->client, to, &id, 1);
        }
        if (refused == -EBUSY) {
            return MOVE_BUSY;
        }
        if (refused == -ENOENT) {
            return MOVE_GONE;
        }
        fprintf(stderr, "stripefs-ctl migrate: file %016" PRIx64 ": commit: %s\n", id,
                sfs_strerror(refused));
        m->last_rc = done < 0 ? done : refused;
        return MOVE_FAILED;
    }
    rc = sfs_admin_chunk_moved(ctl->client, m->from, id, SFS_MOVED_TOMB, NULL);
    if (rc) {
        /* committed; the old chunk stays until the sweep of a rerun */
        fprintf(stderr,
                "stripefs-ctl migrate: file %016" PRIx64 ": moved, but its old chunk on target "
                "%u stays (rerun migrate): %s\n",
                id, m->from, sfs_client_error());
    }
    m->bytes += length;
    return MOVED;
}

/* Take the target's migrate lease, or renew it when a third of its life
 * has passed: a run that lost it (it was stopped longer than the lease)
 * stops. */
static int migrate_lease_keep(migrate_t *m)
{
    uint64_t now = sfs_time_ms();
    int      rc;

    if (m->lease_token && now - m->lease_ms < (uint64_t)m->lease_s * 1000u / 3) {
        return 0;
    }
    if (!m->lease_token) {
        m->lease_token = sfs_admin_migrate_lease_token();
    }
    rc = sfs_admin_migrate_lease(m->ctl->client, SFS_LEASE_TAKE, &m->from, 1, (uint32_t)m->lease_s,
                                 m->lease_token);
    if (rc == 0) {
        m->lease_ms = now;
    }
    return rc;
}

static void migrate_progress(migrate_t *m, int last)
{
    uint64_t now = sfs_time_ms();
    char     a[32], b[32];

    if (!last && now - m->last_print_ms < 1000) {
        return;
    }
    m->last_print_ms = now;
    printf("migrate: target %u: %" PRIu64 "/%" PRIu64 " files moved, %s of %s\n", m->from, m->moved,
           m->files, ctl_size(m->bytes, a, sizeof(a)), ctl_size(m->total_bytes, b, sizeof(b)));
    fflush(stdout);
}

/* Files with a chunk on m->from (attrs; the caller frees *list_p). */
static int migrate_list(migrate_t *m, sfs_attr_t **list_p, size_t *count_p)
{
    sfs_attr_t *page  = calloc(MIGRATE_PAGE, sizeof(*page));
    sfs_attr_t *list  = NULL;
    size_t      count = 0, cap = 0;
    uint64_t    after = 0;
    int         eof = 0, rc = page ? 0 : -ENOMEM;

    while (rc == 0 && !eof) {
        uint32_t n = 0;

        rc = sfs_admin_inodes(m->ctl->client, after, MIGRATE_PAGE, page, &n, &eof);
        for (uint32_t i = 0; rc == 0 && i < n; i++) {
            after = page[i].entry_id;
            if (page[i].type != SFS_TYPE_FILE || !migrate_uses(&page[i], m->from)) {
                continue;
            }
            if (count == cap) {
                sfs_attr_t *grown = realloc(list, (cap ? cap * 2 : 64) * sizeof(*list));

                if (!grown) {
                    rc = -ENOMEM;
                    break;
                }
                list = grown;
                cap  = cap ? cap * 2 : 64;
            }
            list[count++] = page[i];
        }
        if (n == 0) {
            break;
        }
    }
    free(page);
    if (rc) {
        free(list);
        return rc;
    }
    *list_p  = list;
    *count_p = count;
    return 0;
}

/* Chunk files left on m->from whose file no longer uses it (a move killed
 * between its commit and its tombstone): tombstone and remove them.
 * *left_p gets how many chunk files stay. */
static int migrate_sweep(migrate_t *m, uint64_t *left_p)
{
    uint64_t ids[MIGRATE_PAGE], lengths[MIGRATE_PAGE];
    uint64_t after = 0, left = 0;
    uint32_t n = 0;
    int      rc;

    do {
        rc = sfs_admin_chunk_list(m->ctl->client, m->from, after, MIGRATE_PAGE, ids, lengths, &n);
        for (uint32_t i = 0; rc == 0 && i < n; i++) {
            sfs_attr_t attr;
            uint32_t   got = 0;
            int        eof = 0;

            after = ids[i];
            rc    = sfs_admin_inodes(m->ctl->client, ids[i] - 1, 1, &attr, &got, &eof);
            if (rc == 0 && got == 1 && attr.entry_id == ids[i] && migrate_uses(&attr, m->from)) {
                left++; /* still its file's: not moved (busy, mirrored, failed) */
                continue;
            }
            if (rc == 0 && got == 1 && attr.entry_id == ids[i]) {
                rc = sfs_admin_chunk_moved(m->ctl->client, m->from, ids[i], SFS_MOVED_TOMB, NULL);
            } else if (rc == 0) {
                left++; /* no file: a deletion pending, or fsck's to judge */
            }
        }
    } while (rc == 0 && n == MIGRATE_PAGE);
    *left_p = left;
    return rc;
}

static int migrate_pool(migrate_t *m)
{
    for (uint32_t i = 0; i < m->pools->count; i++) {
        const sfs_pool_info_t *pool = &m->pools->pools[i];

        for (uint32_t t = 0; t < pool->target_count; t++) {
            if (m->pools->targets[pool->first + t] == m->from) {
                m->pool_targets = &m->pools->targets[pool->first];
                m->pool_count   = pool->target_count;
                m->pool_name    = pool->name;
                return 0;
            }
        }
    }
    /* a service without pools: every target is one pool */
    return -ENOENT;
}

static int migrate_run(migrate_t *m)
{
    sfs_attr_t *list       = NULL;
    size_t      count      = 0;
    uint64_t    left       = 0;
    uint64_t    wait_until = sfs_time_ms() + m->wait_s * 1000u, said_ms = 0;
    int         rc;

    for (int pass = 0;; pass++) {
        uint64_t busy = 0;

        rc = migrate_list(m, &list, &count);
        if (rc) {
            return ctl_fail("migrate", rc);
        }
        if (pass == 0) {
            m->files = count;
            /* the bytes to move, from the sizes the metadata server keeps
             * (a file being written may end up longer) */
            for (size_t i = 0; i < count; i++) {
                for (uint32_t t = 0; t < list[i].pattern.stripe_count; t++) {
                    if (list[i].pattern.targets[t] == m->from) {
                        m->total_bytes +=
                            sfs_layout_chunk_length_for_size(&list[i].pattern, t, list[i].size);
                    }
                }
            }
            migrate_progress(m, 1);
        }
        m->mirrored = m->failed = 0;
        for (size_t i = 0; i < count; i++) {
            switch (migrate_one(m, &list[i])) {
            case MOVED:
            case MOVE_GONE:
                m->moved++;
                break;
            case MOVE_BUSY:
                busy++;
                break;
            case MOVE_MIRRORED:
                m->mirrored++;
                break;
            default:
                m->failed++;
                break;
            }
            migrate_progress(m, 0);
            if (m->last_rc && migrate_no_answer(m->last_rc)) {
                free(list);
                migrate_progress(m, 1);
                fprintf(stderr,
                        "stripefs-ctl migrate: the service stopped answering (%s): %" PRIu64
                        " of %" PRIu64 " files moved; run migrate again when it is back (each "
                        "move is whole or not done)\n",
                        sfs_strerror(m->last_rc), m->moved, m->files);
                return 1;
            }
            rc = migrate_lease_keep(m);
            if (rc) {
                free(list);
                return ctl_fail("migrate", rc);
            }
        }
        free(list);
        list    = NULL;
        m->busy = busy;
        if (busy == 0 || (m->wait_s ? sfs_time_ms() >= wait_until : pass + 1 >= MIGRATE_PASSES)) {
            break;
        }
        if (!m->wait_s) {
            printf("migrate: %" PRIu64 " files open for writing: trying them again\n", busy);
        } else if (pass == 0) {
            printf("migrate: %" PRIu64 " files open for writing: waiting up to %" PRIu64
                   " s for their writers to close\n",
                   busy, m->wait_s);
            said_ms = sfs_time_ms();
        } else if (sfs_time_ms() - said_ms >= 10000) { /* every 10 s */
            printf("migrate: %" PRIu64 " files still open for writing (%" PRIu64 " s left)\n", busy,
                   (wait_until - sfs_time_ms()) / 1000);
            said_ms = sfs_time_ms();
        }
        fflush(stdout);
        sleep(m->wait_s ? 1 : 2);
    }
    rc = migrate_sweep(m, &left);
    if (rc) {
        return ctl_fail("migrate", rc);
    }
    migrate_progress(m, 1);
    printf("migrate: target %u: %" PRIu64 " moved, %" PRIu64 " busy (open for writing, not "
           "moved), %" PRIu64 " mirrored (mirrored targets cannot be drained yet), %" PRIu64
           " failed; %" PRIu64 " chunk files left on it\n",
           m->from, m->moved, m->busy, m->mirrored, m->failed, left);
    return m->busy || m->mirrored || m->failed || left ? 1 : 0;
}

int ctl_migrate(ctl_t *ctl, int argc, char **argv)
{
    static const struct option opts[] = {{"from", required_argument, NULL, 'f'},
                                         {"cancel", no_argument, NULL, 'c'},
                                         {"wait", required_argument, NULL, 'w'},
                                         {NULL, 0, NULL, 0}};
    migrate_t                  m      = {.ctl = ctl};
    char                      *end;
    int                        cancel = 0, opt, rc;

    optind = 1;
    while ((opt = getopt_long(argc, argv, "f:cw:", opts, NULL)) != -1) {
        switch (opt) {
        case 'f':
            m.from = (uint32_t)strtoul(optarg, &end, 10);
            if (*end || m.from == 0) {
                fprintf(stderr, "stripefs-ctl migrate: '%s' is not a target id\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'c':
            cancel = 1;
            break;
        case 'w':
            m.wait_s = strtoull(optarg, &end, 10);
            if (*end || optarg[0] == '-' || optarg[0] == '\0' || m.wait_s > 7 * 86400) {
                fprintf(stderr, "stripefs-ctl migrate: --wait '%s' is not a number of seconds\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        default:
            return EXIT_USAGE;
        }
    }
    if (m.from == 0 || optind != argc) {
        fprintf(stderr, "usage: stripefs-ctl migrate --from TARGET [--wait SECONDS] [--cancel]\n");
        return EXIT_USAGE;
    }
    if (ctl_connect(ctl) != 0) {
        return 1;
    }
    rc = sfs_tunable_int(&ctl_migrate_tunables, "STRIPEFS_TEST_MIGRATE_DELAY_MS", &m.delay_ms);
    if (rc == 0) {
        rc = sfs_tunable_int(&ctl_migrate_tunables, "STRIPEFS_MIGRATE_LEASE_S", &m.lease_s);
    }
    if (rc == 0 && !cancel) { /* one run per target: refused here, before anything */
        rc = migrate_lease_keep(&m);
    }
    if (rc) {
        return ctl_fail("migrate", rc);
    }
    rc =
        sfs_admin_drain(ctl->client, cancel ? SFS_DRAIN_CLEAR : SFS_DRAIN_SET, m.from, &m.draining);
    if (rc) {
        rc = ctl_fail("migrate", rc);
        goto out;
    }
    if (cancel) {
        printf("migrate: target %u takes new files again (moved files stay where they are)\n",
               m.from);
        return 0;
    }
    printf("migrate: target %u draining: no new files\n", m.from);
    m.pools = calloc(1, sizeof(*m.pools));
    m.buf   = malloc(MIGRATE_PIECE);
    if (!m.pools || !m.buf) {
        rc = ctl_fail("migrate", -ENOMEM);
        goto out;
    }
    rc = sfs_admin_map(ctl->client, &m.map);
    if (rc == 0) {
        rc = sfs_admin_pool_list(ctl->client, m.pools);
    }
    if (rc == 0 && migrate_pool(&m) != 0) {
        rc = sfs_error_set(-ENOENT, "storage target %u is in no storage pool (or does not exist)",
                           m.from);
    }
    if (rc) {
        rc = ctl_fail("migrate", rc);
        goto out;
    }
    if (!sfs_map_find_target(m.map, m.from)) {
        fprintf(stderr, "stripefs-ctl migrate: storage target %u does not exist\n", m.from);
        rc = 1;
        goto out;
    }
    rc = migrate_run(&m);

out:
    if (m.lease_token) { /* else it runs out */
        (void)sfs_admin_migrate_lease(ctl->client, SFS_LEASE_RELEASE, &m.from, 1,
                                      (uint32_t)m.lease_s, m.lease_token);
    }
    sfs_map_destroy(m.map);
    free(m.pools);
    free(m.buf);
    return rc;
}
