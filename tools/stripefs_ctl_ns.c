/* stripefs-ctl verbs that change the namespace: setpattern, getentryinfo,
 * mkdir, chmod, chown, rm, mv. */
#include "stripefs_ctl.h"

#include "sfs_admin.h"
#include "sfs_map.h"

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "Storage pool: hdd (id 2)" for an entry; nothing from a server without
 * pools. */
static void ctl_pool_note(ctl_t *ctl, const char *path, const char *prefix)
{
    sfs_pool_reply_t pool;

    if (sfs_admin_pool_get(ctl->client, path, &pool) != 0) {
        return;
    }
    if (pool.pool == SFS_POOL_NONE) {
        printf("%snone (any target)\n", prefix);
    } else {
        printf("%s%s (id %u)\n", prefix, pool.name, pool.pool);
    }
}

int ctl_setpattern(ctl_t *ctl, int argc, char **argv)
{
    static const struct option options[] = {
        {"chunksize", required_argument, NULL, 'c'}, {"numtargets", required_argument, NULL, 'n'},
        {"mirror", no_argument, NULL, 'm'},          {"no-mirror", no_argument, NULL, 'M'},
        {"pool", required_argument, NULL, 'p'},      {NULL, 0, NULL, 0}};
    const char *pool   = NULL;
    uint64_t    chunk  = 0;
    long        count  = 0;
    int         mirror = -1;
    int         opt, rc;

    optind = 1;
    while ((opt = getopt_long(argc, argv, "c:n:", options, NULL)) != -1) {
        char *end;

        switch (opt) {
        case 'c':
            if (ctl_parse_size_arg("setpattern", optarg, &chunk)) {
                return EXIT_USAGE;
            }
            break;
        case 'n':
            count = strtol(optarg, &end, 10);
            if (*end || count < 1 || count > SFS_STRIPE_COUNT_MAX) {
                fprintf(stderr, "stripefs-ctl setpattern: --numtargets is 1..%u\n",
                        SFS_STRIPE_COUNT_MAX);
                return EXIT_USAGE;
            }
            break;
        case 'm':
        case 'M':
            if (mirror >= 0 && mirror != (opt == 'm')) {
                fprintf(stderr, "stripefs-ctl setpattern: --mirror or --no-mirror, not both\n");
                return EXIT_USAGE;
            }
            mirror = opt == 'm';
            break;
        case 'p':
            pool = optarg;
            break;
        default:
            return EXIT_USAGE;
        }
    }
    if (optind != argc - 1 || (!chunk && !count && mirror < 0 && !pool)) {
        fprintf(stderr, "usage: stripefs-ctl setpattern [--chunksize SIZE] [--numtargets N] "
                        "[--mirror|--no-mirror] [--pool NAME] DIR\n");
        return EXIT_USAGE;
    }
    rc = chunk || count || mirror >= 0
             ? sfs_setpattern_mirror(ctl->client, argv[optind], chunk, (uint32_t)count, mirror)
             : 0;
    if (rc == 0 && pool) {
        rc = sfs_setpattern_pool(ctl->client, argv[optind], pool);
    }
    if (rc) {
        return ctl_fail("setpattern", rc);
    }
    {
        sfs_stat_t st;
        char       size[32];

        if (sfs_lookup(ctl->client, argv[optind], &st) == 0) {
            printf("Path: %s\nChunksize: %s\nNumber of storage targets: desired: %u\n"
                   "Mirrored: %s\n",
                   argv[optind], ctl_size(st.chunk_size, size, sizeof(size)), st.stripe_count,
                   (st.flags & SFS_STAT_MIRRORED) ? "yes" : "no");
        }
        ctl_pool_note(ctl, argv[optind], "Storage pool: ");
    }
    return 0;
}

/* A file's stripe count against what its directory's pattern asks (the
 * entry keeps only the targets it got, so what was asked is derived from
 * the directory: right unless the pattern changed since, or the creator
 * asked for a count of its own, which the note allows for). */
static void ctl_count_note(ctl_t *ctl, const char *path, const sfs_stat_t *st, const sfs_map_t *map,
                           char *note, size_t notelen)
{
    char       parent[4096];
    char      *slash;
    sfs_stat_t dir;

    note[0] = '\0';
    if (sfs_path_canonical(path, parent, sizeof(parent)) != 0) {
        return;
    }
    slash = strrchr(parent, '/');
    if (!slash) {
        return;
    }
    slash[slash == parent ? 1 : 0] = '\0';
    if (sfs_lookup(ctl->client, parent, &dir) != 0 || dir.stripe_count <= st->target_count) {
        return;
    }
    if (map && map->target_count <= st->target_count) {
        snprintf(note, notelen, " (its directory's pattern asks %u; the cluster has %u target%s)",
                 dir.stripe_count, map->target_count, map->target_count == 1 ? "" : "s");
    } else {
        snprintf(note, notelen,
                 " (its directory's pattern asks %u; fewer targets were online at create, or "
                 "its creator asked for %u)",
                 dir.stripe_count, st->target_count);
    }
}

/* A mirrored entry: where each primary's copy lives (MIRROR_LIST). */
static void ctl_mirror_note(ctl_t *ctl, const sfs_stat_t *st)
{
    sfs_mirror_list_reply_t *groups = calloc(1, sizeof(*groups));

    printf("+ Mirrored: yes (each chunk on both targets of a mirror group; targets below "
           "are the primaries)\n");
    if (!groups || st->type == SFS_FILE_TYPE_DIR ||
        sfs_admin_mirror_list(ctl->client, groups) != 0) {
        free(groups);
        return;
    }
    for (uint32_t i = 0; i < st->target_count; i++) {
        for (uint32_t g = 0; g < groups->count; g++) {
            if (groups->groups[g].primary == st->targets[i]) {
                printf("+ Mirror group %u: primary %u (%s), secondary %u (%s)\n",
                       groups->groups[g].group_id, groups->groups[g].primary,
                       sfs_mirror_state_name(groups->groups[g].primary_state),
                       groups->groups[g].secondary,
                       sfs_mirror_state_name(groups->groups[g].secondary_state));
            }
        }
    }
    free(groups);
}

int ctl_getentryinfo(ctl_t *ctl, int argc, char **argv)
{
    sfs_stat_t st;
    sfs_map_t *map = NULL;
    char       size[32], note[200];
    int        rc;

    if (argc != 2) {
        fprintf(stderr, "usage: stripefs-ctl getentryinfo PATH\n");
        return EXIT_USAGE;
    }
    rc = sfs_stat(ctl->client, argv[1], &st);
    if (rc) {
        return ctl_fail("getentryinfo", rc);
    }
    sfs_admin_map(ctl->client, &map);
    printf("Path: %s\n", argv[1]);
    printf("Entry type: %s\n", st.type == SFS_FILE_TYPE_DIR ? "directory" : "file");
    printf("EntryID: %016" PRIx64 "\n", st.entry_id);
    if (map) {
        const sfs_map_node_t *meta = sfs_map_find_node(map, map->meta_node);

        printf("Metadata node: rank %u on %s\n", map->meta_node, meta ? meta->host : "?");
    }
    printf("Stripe pattern details:\n+ Type: %s\n+ Chunksize: %s\n",
           (st.flags & SFS_STAT_MIRRORED) ? "Buddy Mirror" : "RAID0",
           ctl_size(st.chunk_size, size, sizeof(size)));
    if (st.flags & SFS_STAT_MIRRORED) {
        ctl_mirror_note(ctl, &st);
    }
    ctl_pool_note(ctl, argv[1], "+ Storage pool: ");
    if (st.type == SFS_FILE_TYPE_DIR) {
        printf("+ Number of storage targets: desired: %u\n", st.stripe_count);
    } else {
        if (st.flags & SFS_STAT_MIRRORED) {
            /* a mirrored file gets at most one target per group */
            snprintf(note, sizeof(note), " (mirror group primaries)");
        } else {
            ctl_count_note(ctl, argv[1], &st, map, note, sizeof(note));
        }
        printf("+ Number of storage targets: %u%s\n+ Storage targets:\n", st.target_count, note);
        for (uint32_t i = 0; i < st.target_count; i++) {
            const sfs_map_target_t *t     = map ? sfs_map_find_target(map, st.targets[i]) : NULL;
            const sfs_map_node_t   *node  = t ? sfs_map_find_node(map, t->node_id) : NULL;
            const char             *state = t ? sfs_state_name(t->state) : "unknown";

            /* a target that did not answer just now is offline to this
             * file, whatever management has noticed yet */
            if (st.target_down[i] && (!t || t->state == SFS_STATE_ONLINE)) {
                printf("  + %u @ rank %u on %s [offline: did not answer; management: %s]\n",
                       st.targets[i], t ? t->node_id : 0, node ? node->host : "?", state);
            } else if (st.target_down[i]) {
                printf("  + %u @ rank %u on %s [%s: did not answer]\n", st.targets[i],
                       t ? t->node_id : 0, node ? node->host : "?", state);
            } else {
                printf("  + %u @ rank %u on %s [%s]\n", st.targets[i], t ? t->node_id : 0,
                       node ? node->host : "?", state);
            }
        }
        if (st.flags & SFS_STAT_SIZE_UNKNOWN) {
            printf("File size: unknown (at least %" PRIu64 " bytes; a target did not answer)\n",
                   st.size);
        } else {
            printf("File size: %" PRIu64 " bytes\n", st.size);
        }
    }
    sfs_map_destroy(map);
    return 0;
}

static int ctl_mkdir_one(ctl_t *ctl, const char *path, uint32_t mode, int parents)
{
    char canonical[4096];
    int  rc;

    if (!parents) {
        return sfs_mkdir(ctl->client, path, mode);
    }
    rc = sfs_path_canonical(path, canonical, sizeof(canonical));
    if (rc) {
        return rc;
    }
    for (char *p = canonical + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;

            *p = '\0';
            rc = sfs_mkdir(ctl->client, canonical, mode);
            if (rc && rc != -EEXIST) {
                return rc;
            }
            *p = saved;
            if (!saved) {
                break;
            }
        }
    }
    return 0;
}

int ctl_mkdir(ctl_t *ctl, int argc, char **argv)
{
    uint32_t mode    = 0755;
    int      parents = 0, opt, failed = 0;

    optind = 1;
    while ((opt = getopt(argc, argv, "pm:")) != -1) {
        if (opt == 'p') {
            parents = 1;
        } else if (opt == 'm') {
            char *end;

            errno = 0;
            mode  = (uint32_t)strtoul(optarg, &end, 8);
            if (!optarg[0] || *end || errno || mode > 07777 || !strchr("01234567", optarg[0])) {
                fprintf(stderr, "stripefs-ctl mkdir: invalid mode '%s' (octal, 0 to 7777)\n",
                        optarg);
                return EXIT_USAGE;
            }
        } else {
            return EXIT_USAGE;
        }
    }
    if (optind == argc) {
        fprintf(stderr, "usage: stripefs-ctl mkdir [-p] [-m MODE] PATH...\n");
        return EXIT_USAGE;
    }
    for (int i = optind; i < argc; i++) {
        int rc = ctl_mkdir_one(ctl, argv[i], mode, parents);

        if (rc) {
            failed = ctl_fail("mkdir", rc);
        }
    }
    return failed;
}

/* "drwxr-sr-t" as ls shows it: type, then rwx for user, group, other, with
 * setuid, setgid and sticky as s/S and t/T. */
int ctl_chmod(ctl_t *ctl, int argc, char **argv)
{
    unsigned long mode;
    char         *end;
    int           failed = 0;

    if (argc < 3) {
        fprintf(stderr, "usage: stripefs-ctl chmod MODE PATH...\n");
        return EXIT_USAGE;
    }
    errno = 0;
    mode  = strtoul(argv[1], &end, 8);
    if (!argv[1][0] || *end || errno || mode > 07777 || !strchr("01234567", argv[1][0])) {
        fprintf(stderr, "stripefs-ctl chmod: invalid mode '%s' (octal, 0 to 7777)\n", argv[1]);
        return EXIT_USAGE;
    }
    if (ctl_connect(ctl)) {
        return 1;
    }
    for (int i = 2; i < argc; i++) {
        int rc = sfs_chmod(ctl->client, argv[i], (uint32_t)mode);

        if (rc) {
            failed = ctl_fail_path("chmod", argv[i], rc);
        }
    }
    return failed;
}

/* A user or group of a chown spec: a name (looked up on this host) or a
 * number ("+N" is always a number, as in chown(1)); -1 if neither. */
static int ctl_id(const char *text, int is_group, uint32_t *id_p, gid_t *login_group_p)
{
    char         *end;
    unsigned long n;

    if (text[0] != '+') {
        if (is_group) {
            struct group *gr = getgrnam(text);

            if (gr) {
                *id_p = (uint32_t)gr->gr_gid;
                return 0;
            }
        } else {
            struct passwd *pw = getpwnam(text);

            if (pw) {
                *id_p = (uint32_t)pw->pw_uid;
                if (login_group_p) {
                    *login_group_p = pw->pw_gid;
                }
                return 0;
            }
        }
    }
    text += text[0] == '+';
    errno = 0;
    n     = strtoul(text, &end, 10);
    if (!text[0] || *end || errno || text[0] == '-' || n >= SFS_ID_UNCHANGED) {
        return -1;
    }
    *id_p = (uint32_t)n;
    if (login_group_p) {
        struct passwd *pw = getpwuid((uid_t)n);

        *login_group_p = pw ? pw->pw_gid : (gid_t)-1;
    }
    return 0;
}

int ctl_chown(ctl_t *ctl, int argc, char **argv)
{
    uint32_t uid = SFS_ID_UNCHANGED, gid = SFS_ID_UNCHANGED;
    char     spec[512], *colon;
    gid_t    login_group = (gid_t)-1;
    int      failed      = 0;

    if (argc < 3) {
        fprintf(stderr, "usage: stripefs-ctl chown [USER|UID][:GROUP|GID] PATH...\n");
        return EXIT_USAGE;
    }
    snprintf(spec, sizeof(spec), "%s", argv[1]);
    colon = strchr(spec, ':');
    if (colon) {
        *colon++ = '\0';
    }
    if (!spec[0] && (!colon || !colon[0])) {
        fprintf(stderr, "stripefs-ctl chown: '%s' names neither a user nor a group\n", argv[1]);
        return EXIT_USAGE;
    }
    if (spec[0] && ctl_id(spec, 0, &uid, &login_group) != 0) {
        fprintf(stderr, "stripefs-ctl chown: invalid user '%s'\n", spec);
        return EXIT_USAGE;
    }
    if (colon && colon[0] && ctl_id(colon, 1, &gid, NULL) != 0) {
        fprintf(stderr, "stripefs-ctl chown: invalid group '%s'\n", colon);
        return EXIT_USAGE;
    }
    if (colon && !colon[0]) {
        /* "USER:": the user's login group, as chown(1) does */
        if (login_group == (gid_t)-1) {
            fprintf(stderr, "stripefs-ctl chown: '%s' has no login group on this host\n", spec);
            return EXIT_USAGE;
        }
        gid = (uint32_t)login_group;
    }
    if (ctl_connect(ctl)) {
        return 1;
    }
    for (int i = 2; i < argc; i++) {
        int rc = sfs_chown(ctl->client, argv[i], uid, gid);

        if (rc) {
            failed = ctl_fail_path("chown", argv[i], rc);
        }
    }
    return failed;
}

static int ctl_rm_tree(ctl_t *ctl, const char *path)
{
    sfs_dir_entry_t *entries = calloc(256, sizeof(*entries));
    char             child[4600];
    int              rc = 0, eof = 0;

    if (!entries) {
        return -ENOMEM;
    }
    while (rc == 0 && !eof) {
        uint32_t count;

        /* always from the start: what we removed is gone */
        rc = sfs_readdir(ctl->client, path, "", entries, 256, &count, &eof);
        if (rc || count == 0) {
            break;
        }
        eof = 0;
        for (uint32_t i = 0; rc == 0 && i < count; i++) {
            snprintf(child, sizeof(child), "%s/%s", path, entries[i].name);
            rc = entries[i].type == SFS_FILE_TYPE_DIR ? ctl_rm_tree(ctl, child)
                                                      : sfs_unlink(ctl->client, child);
        }
    }
    free(entries);
    return rc ? rc : sfs_rmdir(ctl->client, path);
}

/* Why rm must not touch `path`, or NULL: the root directory (however it is
 * spelled: "/", "/.", "//", "/a/..") and, as GNU rm has it, any path whose
 * last component is "." or "..". */
static const char *ctl_rm_refusal(const char *path)
{
    char        canonical[4096];
    size_t      n = strlen(path);
    const char *last;

    while (n > 1 && path[n - 1] == '/') {
        n--;
    }
    for (last = path + n; last > path && last[-1] != '/'; last--) {
    }
    if ((path + n - last == 1 && last[0] == '.') ||
        (path + n - last == 2 && last[0] == '.' && last[1] == '.')) {
        return "refusing to remove a '.' or '..' directory";
    }
    if (sfs_path_canonical(path, canonical, sizeof(canonical)) == 0 &&
        strcmp(canonical, "/") == 0) {
        return "it is the root directory, which is never removed (--no-preserve-root is not "
               "offered)";
    }
    return NULL;
}

int ctl_rm(ctl_t *ctl, int argc, char **argv)
{
    static const struct option options[] = {{"recursive", no_argument, NULL, 'r'},
                                            {"force", no_argument, NULL, 'f'},
                                            {"preserve-root", no_argument, NULL, 'P'},
                                            {"no-preserve-root", no_argument, NULL, 'N'},
                                            {NULL, 0, NULL, 0}};
    int                        recursive = 0, opt, failed = 0, refused = 0;

    optind = 1;
    while ((opt = getopt_long(argc, argv, "rRf", options, NULL)) != -1) {
        if (opt == 'r' || opt == 'R') {
            recursive = 1;
        } else if (opt == 'N') {
            fprintf(stderr, "stripefs-ctl rm: --no-preserve-root is not offered: the root "
                            "directory is never removed\n");
            return EXIT_USAGE;
        } else if (opt != 'f' && opt != 'P') {
            return EXIT_USAGE;
        }
    }
    if (optind == argc) {
        fprintf(stderr, "usage: stripefs-ctl rm [-r] [--preserve-root] PATH...\n");
        return EXIT_USAGE;
    }
    /* every operand is checked before anything is removed */
    for (int i = optind; i < argc; i++) {
        const char *why = ctl_rm_refusal(argv[i]);

        if (why) {
            fprintf(stderr, "stripefs-ctl rm: '%s': %s\n", argv[i], why);
            refused = 1;
        }
    }
    if (refused) {
        fprintf(stderr, "stripefs-ctl rm: nothing removed\n");
        return 1;
    }
    for (int i = optind; i < argc; i++) {
        sfs_stat_t st;
        int        rc = sfs_lookup(ctl->client, argv[i], &st);

        if (rc == 0) {
            if (st.type == SFS_FILE_TYPE_DIR) {
                rc = recursive ? ctl_rm_tree(ctl, argv[i]) : sfs_rmdir(ctl->client, argv[i]);
            } else {
                rc = sfs_unlink(ctl->client, argv[i]);
            }
        }
        if (rc) {
            failed = ctl_fail("rm", rc);
        }
    }
    return failed;
}

int ctl_mv(ctl_t *ctl, int argc, char **argv)
{
    int rc;

    if (argc != 3) {
        fprintf(stderr, "usage: stripefs-ctl mv FROM TO\n");
        return EXIT_USAGE;
    }
    rc = sfs_rename(ctl->client, argv[1], argv[2]);
    return rc ? ctl_fail("mv", rc) : 0;
}
