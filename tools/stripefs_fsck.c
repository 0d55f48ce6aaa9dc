/*
 * stripefs-fsck: check a stripefs file system for consistency.
 *
 *   stripefs-fsck [--repair] [--config FILE | --mgmt HOST:PORT --connauth FILE]
 *
 * 1. The metadata server checks its namespace against itself: dangling
 *    names, orphan inodes, types, parents, counters (and repairs them).
 * 2. Every target's chunk files are compared with the files' patterns:
 *    orphaned chunk files (no file, no pending deletion) and chunk files on a
 *    target that is not in their file's pattern (removed with --repair); a
 *    mirrored file's pattern names the groups' primaries, and their
 *    secondaries (MIRROR_LIST) hold its copies. A chunk file on a target
 *    its file does not use (left by a killed migrate) is repaired with a
 *    tombstone (docs/migration.md), so that an open still holding the old
 *    pattern gets ESTALE, not zeros.
 * Run it on a quiet file system: a file created or removed while it runs can
 * show up as a false finding (run it again to confirm).
 *
 * Exit status: 0 consistent (or everything found was repaired), 1 problems
 * remain, 2 the check itself failed.
 */
#include "sfs/sfs_client.h"
#include "sfs_admin.h"
#include "sfs_admin_migrate.h"
#include "sfs_errno.h"
#include "sfs_map.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FSCK_PAGE 1024

typedef struct fsck_file {
    uint64_t entry_id;
    uint32_t target_count;
    uint32_t targets[2 * SFS_STRIPE_COUNT_MAX]; /* mirrored: the primaries, then the secondaries */
} fsck_file_t;

typedef struct fsck {
    sfs_client_t            *client;
    sfs_mirror_list_reply_t *mirror; /* the mirror groups */
    int                      repair;
    fsck_file_t             *files;
    size_t                   file_count;
    uint64_t                *pending;
    size_t                   pending_count;
    uint64_t                 problems;
    uint64_t                 repaired;
    uint64_t                 chunks;
} fsck_t;

static int fsck_cmp_file(const void *a, const void *b)
{
    uint64_t x = ((const fsck_file_t *)a)->entry_id, y = ((const fsck_file_t *)b)->entry_id;

    return x < y ? -1 : x > y;
}

static int fsck_cmp_id(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static void fsck_meta_line(void *arg, const char *line)
{
    (void)arg;
    printf("  metadata: %s\n", line);
}

/* A mirrored file's copies are on its primaries' buddies too. */
static void fsck_add_secondaries(const fsck_t *fsck, fsck_file_t *file)
{
    uint32_t primaries = file->target_count;

    for (uint32_t t = 0; t < primaries; t++) {
        for (uint32_t g = 0; g < fsck->mirror->count; g++) {
            if (fsck->mirror->groups[g].primary == file->targets[t]) {
                file->targets[file->target_count++] = fsck->mirror->groups[g].secondary;
            }
        }
    }
}

static int fsck_load_files(fsck_t *fsck)
{
    sfs_attr_t *attrs    = calloc(FSCK_PAGE, sizeof(*attrs));
    size_t      capacity = 0;
    uint64_t    after    = 0;
    int         eof = 0, rc = 0;

    if (!attrs) {
        return -ENOMEM;
    }
    while (!eof && rc == 0) {
        uint32_t count;

        rc = sfs_admin_inodes(fsck->client, after, FSCK_PAGE, attrs, &count, &eof);
        for (uint32_t i = 0; rc == 0 && i < count; i++) {
            after = attrs[i].entry_id;
            if (attrs[i].type != SFS_TYPE_FILE) {
                continue;
            }
            if (fsck->file_count == capacity) {
                fsck_file_t *grown;

                capacity = capacity ? 2 * capacity : 1024;
                grown    = realloc(fsck->files, capacity * sizeof(*grown));
                if (!grown) {
                    rc = -ENOMEM;
                    break;
                }
                fsck->files = grown;
            }
            fsck->files[fsck->file_count].entry_id     = attrs[i].entry_id;
            fsck->files[fsck->file_count].target_count = attrs[i].pattern_targets;
            memcpy(fsck->files[fsck->file_count].targets, attrs[i].pattern.targets,
                   sizeof(uint32_t) * attrs[i].pattern_targets);
            if (attrs[i].pattern.type == SFS_PATTERN_MIRROR) {
                fsck_add_secondaries(fsck, &fsck->files[fsck->file_count]);
            }
            fsck->file_count++;
        }
        if (count == 0) {
            break;
        }
    }
    free(attrs);
    if (fsck->file_count) {
        qsort(fsck->files, fsck->file_count, sizeof(*fsck->files), fsck_cmp_file);
    }
    return rc;
}

static int fsck_load_pending(fsck_t *fsck)
{
    uint64_t after = 0;
    int      eof = 0, rc = 0;

    while (!eof && rc == 0) {
        uint64_t *grown = realloc(fsck->pending, (fsck->pending_count + FSCK_PAGE) * 8);
        uint32_t  count;

        if (!grown) {
            return -ENOMEM;
        }
        fsck->pending = grown;
        rc = sfs_admin_pending(fsck->client, after, FSCK_PAGE, fsck->pending + fsck->pending_count,
                               &count, &eof);
        if (rc || count == 0) {
            break;
        }
        fsck->pending_count += count;
        after = fsck->pending[fsck->pending_count - 1];
    }
    if (fsck->pending_count) {
        qsort(fsck->pending, fsck->pending_count, sizeof(uint64_t), fsck_cmp_id);
    }
    return rc;
}

/* One chunk file: whose is it, and may it be on this target? */
static int fsck_judge_chunk(fsck_t *fsck, uint32_t target_id, uint64_t id, uint64_t length)
{
    fsck_file_t  key = {.entry_id = id};
    fsck_file_t *file;

    /* (bsearch must not get a NULL array, even of 0 elements: a namespace
     * with no file, or no pending deletion, has none) */
    file = fsck->file_count
               ? bsearch(&key, fsck->files, fsck->file_count, sizeof(*fsck->files), fsck_cmp_file)
               : NULL;
    if (file) {
        for (uint32_t t = 0; t < file->target_count; t++) {
            if (file->targets[t] == target_id) {
                return 0;
            }
        }
        printf("  target %u: chunk file of entry %016" PRIx64 " (%" PRIu64
               " bytes) is on a target that is not in its pattern\n",
               target_id, id, length);
        return 2;
    }
    if (fsck->pending_count &&
        bsearch(&id, fsck->pending, fsck->pending_count, sizeof(uint64_t), fsck_cmp_id)) {
        return 0; /* its file was removed; the service deletes it soon */
    }
    printf("  target %u: orphaned chunk file %016" PRIx64 " (%" PRIu64
           " bytes): no file has this entry id\n",
           target_id, id, length);
    return 1;
}

static int fsck_target(fsck_t *fsck, uint32_t target_id)
{
    uint64_t *ids       = calloc(FSCK_PAGE, sizeof(uint64_t));
    uint64_t *lengths   = calloc(FSCK_PAGE, sizeof(uint64_t));
    uint64_t *bad       = calloc(SFS_PROTO_MAX_EXTENTS, sizeof(uint64_t));
    uint64_t  after     = 0;
    uint32_t  bad_count = 0;
    int       rc        = 0;

    if (!ids || !lengths || !bad) {
        rc = -ENOMEM;
        goto out;
    }
    for (;;) {
        uint32_t count;

        rc = sfs_admin_chunk_list(fsck->client, target_id, after, FSCK_PAGE, ids, lengths, &count);
        if (rc || count == 0) {
            break;
        }
        for (uint32_t i = 0; i < count; i++) {
            fsck->chunks++;
            int judged = fsck_judge_chunk(fsck, target_id, ids[i], lengths[i]);

            if (judged) {
                fsck->problems++;
            }
            if (judged == 2 && fsck->repair) {
                /* left by a move (docs/migration.md): an open of the file
                 * may hold a pattern naming this target, so a tombstone
                 * (ESTALE, not zeros) replaces it */
                rc = sfs_admin_chunk_moved(fsck->client, target_id, ids[i], SFS_MOVED_TOMB, NULL);
                if (rc) {
                    goto out;
                }
                fsck->repaired++;
            } else if (judged && fsck->repair) {
                bad[bad_count++] = ids[i];
            }
            if (bad_count == SFS_PROTO_MAX_EXTENTS || (bad_count && i + 1 == count)) {
                rc = sfs_admin_chunk_unlink(fsck->client, target_id, bad, bad_count);
                if (rc) {
                    goto out;
                }
                fsck->repaired += bad_count;
                bad_count = 0;
            }
        }
        after = ids[count - 1];
        if (count < FSCK_PAGE) {
            break;
        }
    }
out:
    free(ids);
    free(lengths);
    free(bad);
    return rc;
}

static void fsck_usage(FILE *out)
{
    fprintf(out, "usage: stripefs-fsck [--repair] [--config FILE | --mgmt HOST:PORT --connauth "
                 "FILE]\n\n"
                 "Checks metadata against itself and every target's chunk files against the\n"
                 "files' stripe patterns; --repair removes dangling names, orphan inodes,\n"
                 "orphaned and misplaced chunk files. Run it on a quiet file system.\n"
                 "Exit: 0 consistent or repaired, 1 problems remain, 2 the check failed.\n");
}

int main(int argc, char **argv)
{
    sfs_client_params_t params = {.field_mask = SFS_CLIENT_PARAM_PROGRAM | SFS_CLIENT_PARAM_ADMIN,
                                  .program    = "stripefs-fsck"};
    sfs_admin_check_t   meta;
    sfs_map_t          *map = NULL;
    fsck_t              fsck;
    int                 rc;

    memset(&fsck, 0, sizeof(fsck));
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--repair") == 0) {
            fsck.repair = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fsck_usage(stdout);
            return 0;
        } else if (i + 1 < argc && strcmp(argv[i], "--config") == 0) {
            params.field_mask |= SFS_CLIENT_PARAM_CONFIG;
            params.config_path = argv[++i];
        } else if (i + 1 < argc && strcmp(argv[i], "--mgmt") == 0) {
            params.field_mask |= SFS_CLIENT_PARAM_MGMT;
            params.mgmt = argv[++i];
        } else if (i + 1 < argc && strcmp(argv[i], "--connauth") == 0) {
            params.field_mask |= SFS_CLIENT_PARAM_CONNAUTH;
            params.connauth_file = argv[++i];
        } else {
            fprintf(stderr, "stripefs-fsck: unexpected '%s'\n", argv[i]);
            fsck_usage(stderr);
            return 2;
        }
    }
    rc = sfs_client_connect(&params, &fsck.client);
    if (rc) {
        fprintf(stderr, "stripefs-fsck: %s\n", sfs_client_error());
        return 2;
    }
    printf("phase 1: metadata%s\n", fsck.repair ? " (repairing)" : "");
    rc = sfs_admin_meta_check(fsck.client, fsck.repair, fsck_meta_line, NULL, &meta);
    if (rc) {
        goto failed;
    }
    printf("  %" PRIu64 " inodes, %" PRIu64 " names: %" PRIu64 " problem(s), %" PRIu64
           " repaired\n",
           meta.inodes, meta.dentries, meta.problems, meta.repaired);
    printf("phase 2: chunk files%s\n", fsck.repair ? " (repairing)" : "");
    /* chunk files are judged against files and pending deletions read
     * afterwards, so a file removed meanwhile is not taken for an orphan */
    fsck.mirror = calloc(1, sizeof(*fsck.mirror));
    if (!fsck.mirror) {
        rc = -ENOMEM;
        goto failed;
    }
    if ((rc = sfs_admin_map(fsck.client, &map)) ||
        (rc = sfs_admin_mirror_list(fsck.client, fsck.mirror)) || (rc = fsck_load_files(&fsck)) ||
        (rc = fsck_load_pending(&fsck))) {
        goto failed;
    }
    for (uint32_t t = 0; t < map->target_count; t++) {
        if (map->targets[t].state != SFS_STATE_ONLINE) {
            printf("  target %u is %s: not checked\n", map->targets[t].target_id,
                   sfs_state_name(map->targets[t].state));
            fsck.problems++;
            continue;
        }
        rc = fsck_target(&fsck, map->targets[t].target_id);
        if (rc) {
            goto failed;
        }
    }
    printf("  %zu files, %" PRIu64 " chunk files on %u targets, %zu removed files awaiting "
           "chunk deletion: %" PRIu64 " problem(s), %" PRIu64 " repaired\n",
           fsck.file_count, fsck.chunks, map->target_count, fsck.pending_count, fsck.problems,
           fsck.repaired);
    sfs_map_destroy(map);
    sfs_client_disconnect(fsck.client);
    free(fsck.files);
    free(fsck.pending);
    free(fsck.mirror);
    {
        uint64_t left = meta.problems - meta.repaired + fsck.problems - fsck.repaired;

        printf("%s\n", left ? "PROBLEMS REMAIN" : "consistent");
        return left ? 1 : 0;
    }

failed:
    fprintf(stderr, "stripefs-fsck: the check failed: %s\n", sfs_client_error());
    sfs_map_destroy(map);
    sfs_client_disconnect(fsck.client);
    free(fsck.files);
    free(fsck.pending);
    free(fsck.mirror);
    return 2;
}
