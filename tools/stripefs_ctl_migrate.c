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
 * The per-file move is stripefs_ctl_move.c's; --rebalance is
 * stripefs_ctl_rebalance.c's.
 */
#include "stripefs_ctl.h"
#include "stripefs_ctl_move.h"

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
#define MIGRATE_PIECE  CTL_MOVE_PIECE
#define MIGRATE_PASSES 3 /* busy files are tried again this many times */

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

enum {
    MOVED         = CTL_MOVED,
    MOVE_BUSY     = CTL_MOVE_BUSY,
    MOVE_MIRRORED = CTL_MOVE_MIRRORED,
    MOVE_GONE     = CTL_MOVE_GONE,
};

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

static int migrate_no_answer(int rc)
{
    return ctl_move_no_answer(rc);
}

static int migrate_uses(const sfs_attr_t *attr, uint32_t target)
{
    return ctl_move_uses(attr, target);
}

/* One file's crash-safe move off m->from (stripefs_ctl_move.c) to another
 * target of its pool; CTL_MOVE_NOWHERE and _FAILED count as failed. */
static int migrate_one(migrate_t *m, const sfs_attr_t *attr)
{
    ctl_move_t mv = {.ctl            = m->ctl,
                     .map            = m->map,
                     .cands          = m->pool_targets,
                     .cand_count     = m->pool_count,
                     .pool_name      = m->pool_name,
                     .draining       = m->draining.targets,
                     .draining_count = m->draining.count,
                     .delay_ms       = m->delay_ms,
                     .buf            = m->buf,
                     .say_why        = 1};
    int        rc = ctl_move_file(&mv, attr, m->from);

    m->bytes += mv.bytes;
    if (mv.last_rc) {
        m->last_rc = mv.last_rc;
    }
    return rc;
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

/* The bytes to move: what the target's chunk files hold now, as its storage
 * server lists them (the metadata server's kept size is not known for a
 * file written by several writers until a stat stores it; a file being
 * written may still grow). */
static int migrate_target_bytes(migrate_t *m, uint64_t *bytes_p)
{
    uint64_t ids[MIGRATE_PAGE], lengths[MIGRATE_PAGE];
    uint64_t after = 0, bytes = 0;
    uint32_t n = 0;
    int      rc;

    do {
        rc = sfs_admin_chunk_list(m->ctl->client, m->from, after, MIGRATE_PAGE, ids, lengths, &n);
        for (uint32_t i = 0; rc == 0 && i < n; i++) {
            after = ids[i];
            bytes += lengths[i];
        }
    } while (rc == 0 && n == MIGRATE_PAGE);
    if (rc == 0) {
        *bytes_p = bytes;
    }
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
            rc       = migrate_target_bytes(m, &m->total_bytes);
            if (rc) {
                free(list);
                return ctl_fail("migrate", rc);
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

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rebalance") == 0) {
            return ctl_rebalance(ctl, argc, argv); /* stripefs_ctl_rebalance.c */
        }
    }
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
