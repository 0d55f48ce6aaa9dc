/*
 * stripefs-ctl: the administrator's tool, with the verbs BeeGFS users know.
 *
 *   stripefs-ctl [--config FILE | --mgmt HOST:PORT --connauth FILE] VERB [ARGS]
 *
 * Output is plain columns for scripts; exit 0 on success, 1 when the
 * operation failed, 2 on a usage error.
 */
#include "sfs/sfs_client.h"
#include "sfs_admin.h"
#include "sfs_auth.h"
#include "sfs_config.h"
#include "sfs_errno.h"
#include "sfs_map.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EXIT_USAGE 2

typedef struct ctl {
    sfs_client_params_t params;
    sfs_client_t       *client;
    const char         *prog;
} ctl_t;

typedef struct ctl_verb {
    const char *name;
    int (*run)(ctl_t *ctl, int argc, char **argv);
    int         needs_service;
    const char *synopsis;
    const char *help;
} ctl_verb_t;

static int ctl_fail(const char *verb, int rc)
{
    fprintf(stderr, "stripefs-ctl %s: %s\n", verb,
            sfs_client_error()[0] ? sfs_client_error() : sfs_strerror(rc));
    return 1;
}

static const char *ctl_size(uint64_t bytes, char *buf, size_t buflen)
{
    return sfs_format_size(bytes, buf, buflen);
}

static int ctl_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            return 1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------- */

static int ctl_listnodes(ctl_t *ctl, int argc, char **argv)
{
    const char *type = NULL;
    sfs_map_t  *map;
    uint32_t    want = 0;
    int         rc;

    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--nodetype=", 11) == 0) {
            type = argv[i] + 11;
        } else if (strcmp(argv[i], "--nodetype") == 0 && i + 1 < argc) {
            type = argv[++i];
        } else {
            fprintf(stderr, "stripefs-ctl listnodes: unexpected '%s'\n", argv[i]);
            return EXIT_USAGE;
        }
    }
    if (type) {
        want = strcmp(type, "management") == 0 || strcmp(type, "mgmt") == 0 ? SFS_ROLE_MGMT
               : strcmp(type, "meta") == 0                                  ? SFS_ROLE_META
               : strcmp(type, "storage") == 0                               ? SFS_ROLE_STORAGE
                                                                            : 0;
        if (!want) {
            fprintf(stderr, "stripefs-ctl listnodes: --nodetype is management, meta or storage\n");
            return EXIT_USAGE;
        }
    }
    rc = sfs_admin_map(ctl->client, &map);
    if (rc) {
        return ctl_fail("listnodes", rc);
    }
    printf("%-6s %-20s %-18s %-17s %-8s %s\n", "NODE", "HOST", "ROLES", "STATE", "PID",
           "LAST_CONTACT");
    for (uint32_t i = 0; i < map->node_count; i++) {
        const sfs_map_node_t *node = &map->nodes[i];
        char                  roles[64];

        if (want && !(node->roles & want)) {
            continue;
        }
        printf("%-6u %-20s %-18s %-17s %-8u %.1fs\n", node->node_id, node->host,
               sfs_roles_string(node->roles, roles, sizeof(roles)), sfs_state_name(node->state),
               node->pid, (double)node->last_contact_ms / 1000.0);
    }
    sfs_map_destroy(map);
    return 0;
}

static int ctl_listtargets(ctl_t *ctl, int argc, char **argv)
{
    sfs_map_t *map;
    int        rc;

    (void)argc;
    (void)argv;
    rc = sfs_admin_map(ctl->client, &map);
    if (rc) {
        return ctl_fail("listtargets", rc);
    }
    printf("%-7s %-5s %-16s %-17s %10s %10s %5s  %s\n", "TARGET", "NODE", "HOST", "STATE",
           "CAPACITY", "FREE", "FREE%", "DIR");
    for (uint32_t i = 0; i < map->target_count; i++) {
        const sfs_map_target_t *t    = &map->targets[i];
        const sfs_map_node_t   *node = sfs_map_find_node(map, t->node_id);
        char                    cap[32], free_text[32];

        printf("%-7u %-5u %-16s %-17s %10s %10s %4.0f%%  %s\n", t->target_id, t->node_id,
               node ? node->host : "?", sfs_state_name(t->state),
               ctl_size(t->capacity, cap, sizeof(cap)),
               ctl_size(t->free, free_text, sizeof(free_text)),
               t->capacity ? 100.0 * (double)t->free / (double)t->capacity : 0.0, t->dir);
    }
    sfs_map_destroy(map);
    return 0;
}

static int ctl_df(ctl_t *ctl, int argc, char **argv)
{
    sfs_statfs_t      st;
    sfs_meta_statfs_t meta;
    char              a[32], b[32], c[32];
    int               rc;

    rc = ctl_listtargets(ctl, argc, argv);
    if (rc) {
        return rc;
    }
    rc = sfs_statfs(ctl->client, &st);
    if (rc == 0) {
        rc = sfs_admin_meta_statfs(ctl->client, &meta);
    }
    if (rc) {
        return ctl_fail("df", rc);
    }
    printf("\nTOTAL: %s capacity, %s used, %s free (%u of %u targets online)\n",
           ctl_size(st.capacity, a, sizeof(a)), ctl_size(st.capacity - st.free, b, sizeof(b)),
           ctl_size(st.free, c, sizeof(c)), st.targets_online, st.targets);
    printf("METADATA: %" PRIu64 " files, %" PRIu64 " directories, %" PRIu64
           " removed files awaiting chunk deletion\n",
           meta.files, meta.dirs, meta.pending_chunk_deletes);
    return 0;
}

static int ctl_check_servers(ctl_t *ctl, int argc, char **argv)
{
    sfs_map_t *map;
    int        rc, failures = 0;

    (void)argc;
    (void)argv;
    rc = sfs_admin_map(ctl->client, &map);
    if (rc) {
        return ctl_fail("check-servers", rc);
    }
    for (uint32_t i = 0; i < map->node_count; i++) {
        const sfs_map_node_t *node = &map->nodes[i];
        char                  roles[64];
        double                rtt;

        rc = sfs_admin_ping(ctl->client, node->node_id, &rtt);
        if (rc) {
            failures++;
            printf("rank %-4u %-16s %-18s UNREACHABLE: %s\n", node->node_id, node->host,
                   sfs_roles_string(node->roles, roles, sizeof(roles)), sfs_client_error());
        } else {
            printf("rank %-4u %-16s %-18s reachable, %.0f us round trip (%s)\n", node->node_id,
                   node->host, sfs_roles_string(node->roles, roles, sizeof(roles)), rtt,
                   sfs_state_name(node->state));
        }
    }
    printf("%u server rank%s checked, %d unreachable\n", map->node_count,
           map->node_count == 1 ? "" : "s", failures);
    sfs_map_destroy(map);
    return failures ? 1 : 0;
}

static const char *ctl_peer_kind(uint32_t kind)
{
    return kind == SFS_PEER_SERVER ? "server" : kind == SFS_PEER_ADMIN ? "admin" : "client";
}

static int ctl_net(ctl_t *ctl, int argc, char **argv)
{
    sfs_map_t *map;
    int        rc, failures = 0;

    (void)argc;
    (void)argv;
    rc = sfs_admin_map(ctl->client, &map);
    if (rc) {
        return ctl_fail("net", rc);
    }
    for (uint32_t i = 0; i < map->node_count; i++) {
        const sfs_map_node_t *node = &map->nodes[i];
        sfs_admin_session_t  *sessions;
        uint32_t              count;
        char                  mine[256], roles[64];

        printf("rank %u on %s (%s)\n", node->node_id, node->host,
               sfs_roles_string(node->roles, roles, sizeof(roles)));
        if (sfs_admin_transports(ctl->client, node->node_id, mine, sizeof(mine)) == 0) {
            printf("  this process reaches it over: %s\n", mine);
        }
        rc = sfs_admin_sessions(ctl->client, node->node_id, &sessions, &count);
        if (rc) {
            printf("  UNREACHABLE: %s\n", sfs_client_error());
            failures++;
            continue;
        }
        printf("  %u connected peer%s:\n", count, count == 1 ? "" : "s");
        for (uint32_t s = 0; s < count; s++) {
            printf("    %-6s %-16s pid %-8u %-20s via %-28s for %.0fs\n",
                   ctl_peer_kind(sessions[s].peer_kind), sessions[s].host, sessions[s].pid,
                   sessions[s].program, sessions[s].transports,
                   (double)sessions[s].age_ms / 1000.0);
        }
        free(sessions);
    }
    sfs_map_destroy(map);
    return failures ? 1 : 0;
}

static int ctl_parse_size_arg(const char *verb, const char *text, uint64_t *out)
{
    if (sfs_parse_size(text, out) != 0) {
        fprintf(stderr, "stripefs-ctl %s: '%s' is not a size (e.g. 512k, 1m, 4g)\n", verb, text);
        return -1;
    }
    return 0;
}

static int ctl_setpattern(ctl_t *ctl, int argc, char **argv)
{
    static const struct option options[] = {{"chunksize", required_argument, NULL, 'c'},
                                            {"numtargets", required_argument, NULL, 'n'},
                                            {NULL, 0, NULL, 0}};
    uint64_t                   chunk     = 0;
    long                       count     = 0;
    int                        opt, rc;

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
        default:
            return EXIT_USAGE;
        }
    }
    if (optind != argc - 1 || (!chunk && !count)) {
        fprintf(stderr, "usage: stripefs-ctl setpattern [--chunksize SIZE] [--numtargets N] DIR\n");
        return EXIT_USAGE;
    }
    rc = sfs_setpattern(ctl->client, argv[optind], chunk, (uint32_t)count);
    if (rc) {
        return ctl_fail("setpattern", rc);
    }
    {
        sfs_stat_t st;
        char       size[32];

        if (sfs_lookup(ctl->client, argv[optind], &st) == 0) {
            printf("Path: %s\nChunksize: %s\nNumber of storage targets: desired: %u\n",
                   argv[optind], ctl_size(st.chunk_size, size, sizeof(size)), st.stripe_count);
        }
    }
    return 0;
}

static int ctl_getentryinfo(ctl_t *ctl, int argc, char **argv)
{
    sfs_stat_t st;
    sfs_map_t *map = NULL;
    char       size[32];
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
    printf("Stripe pattern details:\n+ Type: RAID0\n+ Chunksize: %s\n",
           ctl_size(st.chunk_size, size, sizeof(size)));
    if (st.type == SFS_FILE_TYPE_DIR) {
        printf("+ Number of storage targets: desired: %u\n", st.stripe_count);
    } else {
        printf("+ Number of storage targets: %u\n+ Storage targets:\n", st.target_count);
        for (uint32_t i = 0; i < st.target_count; i++) {
            const sfs_map_target_t *t    = map ? sfs_map_find_target(map, st.targets[i]) : NULL;
            const sfs_map_node_t   *node = t ? sfs_map_find_node(map, t->node_id) : NULL;

            printf("  + %u @ rank %u on %s [%s]\n", st.targets[i], t ? t->node_id : 0,
                   node ? node->host : "?", t ? sfs_state_name(t->state) : "unknown");
        }
        printf("File size: %" PRIu64 " bytes\n", st.size);
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

static int ctl_mkdir(ctl_t *ctl, int argc, char **argv)
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
static const char *ctl_mode_string(const sfs_stat_t *st, char out[11])
{
    static const char rwx[] = "rwxrwxrwx";
    uint32_t          mode  = st->mode;

    out[0] = st->type == SFS_FILE_TYPE_DIR ? 'd' : '-';
    for (int i = 0; i < 9; i++) {
        out[1 + i] = (mode & (0400u >> i)) ? rwx[i] : '-';
    }
    if (mode & 04000) {
        out[3] = out[3] == 'x' ? 's' : 'S';
    }
    if (mode & 02000) {
        out[6] = out[6] == 'x' ? 's' : 'S';
    }
    if (mode & 01000) {
        out[9] = out[9] == 'x' ? 't' : 'T';
    }
    out[10] = '\0';
    return out;
}

/* The user's name on this host, else the number. */
static const char *ctl_user_name(uint32_t uid, char *buf, size_t buflen)
{
    struct passwd *pw = getpwuid((uid_t)uid);

    if (pw) {
        snprintf(buf, buflen, "%s", pw->pw_name);
    } else {
        snprintf(buf, buflen, "%u", uid);
    }
    return buf;
}

static const char *ctl_group_name(uint32_t gid, char *buf, size_t buflen)
{
    struct group *gr = getgrgid((gid_t)gid);

    if (gr) {
        snprintf(buf, buflen, "%s", gr->gr_name);
    } else {
        snprintf(buf, buflen, "%u", gid);
    }
    return buf;
}

static void ctl_print_long(const char *name, const sfs_stat_t *st)
{
    char      when[32], mode[11], user[64], group[64];
    time_t    t = (time_t)(st->mtime_ns / 1000000000ull);
    struct tm tm;

    localtime_r(&t, &tm);
    strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
    printf("%s %3" PRIu64 " %-8s %-8s %12" PRIu64 " %s %s\n", ctl_mode_string(st, mode), st->nlink,
           ctl_user_name(st->uid, user, sizeof(user)),
           ctl_group_name(st->gid, group, sizeof(group)), st->size, when, name);
}

static int ctl_ls(ctl_t *ctl, int argc, char **argv)
{
    sfs_dir_entry_t *entries;
    char             after[256] = "";
    int              longform = 0, opt, eof = 0, rc = 0;
    const char      *path;

    optind = 1;
    while ((opt = getopt(argc, argv, "l")) != -1) {
        if (opt == 'l') {
            longform = 1;
        } else {
            return EXIT_USAGE;
        }
    }
    path    = optind < argc ? argv[optind] : "/";
    entries = calloc(1024, sizeof(*entries));
    if (!entries) {
        return 1;
    }
    {
        sfs_stat_t st;

        rc = sfs_lookup(ctl->client, path, &st);
        if (rc == 0 && st.type != SFS_FILE_TYPE_DIR) {
            rc = sfs_stat(ctl->client, path, &st);
            if (rc == 0) {
                if (longform) {
                    ctl_print_long(path, &st);
                } else {
                    printf("%s\n", path);
                }
            }
            free(entries);
            return rc ? ctl_fail("ls", rc) : 0;
        }
    }
    while (rc == 0 && !eof) {
        uint32_t count;

        rc = sfs_readdir(ctl->client, path, after, entries, 1024, &count, &eof);
        for (uint32_t i = 0; rc == 0 && i < count; i++) {
            if (longform) {
                char       child[4600];
                sfs_stat_t st;

                snprintf(child, sizeof(child), "%s/%s", path, entries[i].name);
                if (sfs_stat(ctl->client, child, &st) == 0) {
                    ctl_print_long(entries[i].name, &st);
                } else {
                    printf("?????????? %s\n", entries[i].name);
                }
            } else {
                printf("%s%s\n", entries[i].name, entries[i].type == SFS_FILE_TYPE_DIR ? "/" : "");
            }
            snprintf(after, sizeof(after), "%s", entries[i].name);
        }
    }
    free(entries);
    return rc ? ctl_fail("ls", rc) : 0;
}

static int ctl_stat(ctl_t *ctl, int argc, char **argv)
{
    int failed = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: stripefs-ctl stat PATH...\n");
        return EXIT_USAGE;
    }
    for (int i = 1; i < argc; i++) {
        sfs_stat_t st;
        char       mode[11], user[64], group[64];
        int        rc = sfs_stat(ctl->client, argv[i], &st);

        if (rc) {
            failed = ctl_fail("stat", rc);
            continue;
        }
        printf("  File: %s\n  Type: %s\n  Size: %" PRIu64 "\n  Mode: (%04o/%s)  Uid: (%u/%s)  "
               "Gid: (%u/%s)  Links: %" PRIu64 "\n  EntryID: %016" PRIx64 "\n  Chunksize: %" PRIu64
               "  Targets: %u\n",
               argv[i], st.type == SFS_FILE_TYPE_DIR ? "directory" : "regular file", st.size,
               st.mode, ctl_mode_string(&st, mode), st.uid,
               ctl_user_name(st.uid, user, sizeof(user)), st.gid,
               ctl_group_name(st.gid, group, sizeof(group)), st.nlink, st.entry_id, st.chunk_size,
               st.type == SFS_FILE_TYPE_DIR ? st.stripe_count : st.target_count);
    }
    return failed;
}

/* Connect now (chmod and chown check their arguments first, so that a
 * usage error is exit 2 with or without a service). */
static int ctl_connect(ctl_t *ctl)
{
    if (sfs_client_connect(&ctl->params, &ctl->client) != 0) {
        fprintf(stderr, "stripefs-ctl: %s\n", sfs_client_error());
        return 1;
    }
    return 0;
}

/* A failure on one path: the server's words when they name the path,
 * else the path and the errno. */
static int ctl_fail_path(const char *verb, const char *path, int rc)
{
    const char *detail = sfs_client_error();

    if (detail[0] && strstr(detail, path)) {
        fprintf(stderr, "stripefs-ctl %s: %s\n", verb, detail);
    } else {
        fprintf(stderr, "stripefs-ctl %s: %s: %s\n", verb, path,
                detail[0] ? detail : sfs_strerror(rc));
    }
    return 1;
}

static int ctl_chmod(ctl_t *ctl, int argc, char **argv)
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

static int ctl_chown(ctl_t *ctl, int argc, char **argv)
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

static int ctl_rm(ctl_t *ctl, int argc, char **argv)
{
    int recursive = 0, opt, failed = 0;

    optind = 1;
    while ((opt = getopt(argc, argv, "rf")) != -1) {
        if (opt == 'r') {
            recursive = 1;
        } else if (opt != 'f') {
            return EXIT_USAGE;
        }
    }
    if (optind == argc) {
        fprintf(stderr, "usage: stripefs-ctl rm [-r] PATH...\n");
        return EXIT_USAGE;
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

static int ctl_mv(ctl_t *ctl, int argc, char **argv)
{
    int rc;

    if (argc != 3) {
        fprintf(stderr, "usage: stripefs-ctl mv FROM TO\n");
        return EXIT_USAGE;
    }
    rc = sfs_rename(ctl->client, argv[1], argv[2]);
    return rc ? ctl_fail("mv", rc) : 0;
}

static int ctl_put(ctl_t *ctl, int argc, char **argv)
{
    sfs_file_t *file;
    char       *buf;
    uint64_t    offset = 0;
    int         fd, rc = 0, closed;

    if (argc != 3) {
        fprintf(stderr, "usage: stripefs-ctl put LOCAL_FILE STRIPEFS_PATH\n");
        return EXIT_USAGE;
    }
    fd = strcmp(argv[1], "-") == 0 ? 0 : open(argv[1], O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "stripefs-ctl put: cannot open %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    rc = sfs_file_open(ctl->client, argv[2], SFS_O_WRONLY | SFS_O_CREAT | SFS_O_TRUNC, 0644, NULL,
                       &file);
    if (rc) {
        close(fd);
        return ctl_fail("put", rc);
    }
    buf = malloc(16u << 20);
    while (buf && rc == 0) {
        ssize_t got = read(fd, buf, 16u << 20);
        ssize_t put;

        if (got <= 0) {
            rc = got < 0 ? -errno : 0;
            break;
        }
        put = sfs_file_pwrite(file, buf, (size_t)got, offset);
        if (put < 0) {
            rc = (int)put;
        }
        offset += (uint64_t)got;
    }
    free(buf);
    close(fd);
    closed = sfs_file_close(file); /* (a write still in flight may fail here) */
    if (rc == 0) {
        rc = closed;
    }
    return rc ? ctl_fail("put", rc) : 0;
}

static int ctl_get(ctl_t *ctl, int argc, char **argv)
{
    sfs_file_t *file;
    char       *buf;
    uint64_t    offset = 0;
    int         fd, rc;

    if (argc != 3) {
        fprintf(stderr, "usage: stripefs-ctl get STRIPEFS_PATH LOCAL_FILE|-\n");
        return EXIT_USAGE;
    }
    rc = sfs_file_open(ctl->client, argv[1], SFS_O_RDONLY, 0, NULL, &file);
    if (rc) {
        return ctl_fail("get", rc);
    }
    fd = strcmp(argv[2], "-") == 0 ? 1 : open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        fprintf(stderr, "stripefs-ctl get: cannot create %s: %s\n", argv[2], strerror(errno));
        sfs_file_close(file);
        return 1;
    }
    buf = malloc(16u << 20);
    while (buf) {
        ssize_t got = sfs_file_pread(file, buf, 16u << 20, offset);

        if (got <= 0) {
            rc = (int)got;
            break;
        }
        if (write(fd, buf, (size_t)got) != got) {
            rc = -errno;
            break;
        }
        offset += (uint64_t)got;
    }
    free(buf);
    if (fd != 1) {
        close(fd);
    }
    sfs_file_close(file);
    return rc ? ctl_fail("get", rc) : 0;
}

static int ctl_shutdown(ctl_t *ctl, int argc, char **argv)
{
    int rc;

    (void)argc;
    (void)argv;
    rc = sfs_admin_shutdown(ctl->client);
    if (rc) {
        return ctl_fail("shutdown", rc);
    }
    printf("shutdown requested: every server rank flushes and exits\n");
    return 0;
}

static int ctl_mkconnauth(ctl_t *ctl, int argc, char **argv)
{
    long size = SFS_CONNAUTH_DEFAULT_SIZE;
    int  opt, rc;

    (void)ctl;
    optind = 1;
    while ((opt = getopt(argc, argv, "s:")) != -1) {
        if (opt == 's') {
            size = strtol(optarg, NULL, 10);
        } else {
            return EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "usage: stripefs-ctl mkconnauth [-s BYTES] FILE\n");
        return EXIT_USAGE;
    }
    rc = sfs_auth_make_connauth(argv[optind], (size_t)size);
    if (rc) {
        return ctl_fail("mkconnauth", rc);
    }
    printf("wrote %ld random bytes to %s (mode 0400); copy it to every server host\n", size,
           argv[optind]);
    return 0;
}

static int ctl_genconfig(ctl_t *ctl, int argc, char **argv)
{
    static const struct option options[]    = {{"hosts", required_argument, NULL, 'H'},
                                               {"storage-dir", required_argument, NULL, 's'},
                                               {"meta-dir", required_argument, NULL, 'm'},
                                               {"connauth", required_argument, NULL, 'a'},
                                               {"port", required_argument, NULL, 'p'},
                                               {"output", required_argument, NULL, 'o'},
                                               {"munge-socket", required_argument, NULL, 'S'},
                                               {"munged-key", required_argument, NULL, 'K'},
                                               {"admin-group", required_argument, NULL, 'G'},
                                               {"shared-secret", no_argument, NULL, 'X'},
                                               {NULL, 0, NULL, 0}};
    const char                *munge_socket = NULL, *munged_key = NULL, *admin_group = NULL;
    int                        shared_secret = 0;
    const char                *hosts = NULL, *storage = "/var/lib/stripefs/storage";
    const char   *meta = "/var/lib/stripefs/meta", *connauth = "/etc/stripefs/connauth";
    const char   *output = NULL;
    const char   *list[256];
    uint32_t      count = 0;
    long          port  = SFS_CONFIG_DEFAULT_PORT;
    char         *copy, *save = NULL;
    sfs_config_t *config;
    int           opt, rc;

    (void)ctl;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "o:", options, NULL)) != -1) {
        switch (opt) {
        case 'H':
            hosts = optarg;
            break;
        case 's':
            storage = optarg;
            break;
        case 'm':
            meta = optarg;
            break;
        case 'a':
            connauth = optarg;
            break;
        case 'p':
            port = strtol(optarg, NULL, 10);
            break;
        case 'o':
            output = optarg;
            break;
        case 'S':
            munge_socket = optarg;
            break;
        case 'K':
            munged_key = optarg;
            break;
        case 'G':
            admin_group = optarg;
            break;
        case 'X':
            shared_secret = 1;
            break;
        default:
            return EXIT_USAGE;
        }
    }
    if (!hosts || optind != argc || port < 1 || port > 65535) {
        fprintf(stderr, "usage: stripefs-ctl genconfig --hosts H1,H2,... [--storage-dir DIR] "
                        "[--meta-dir DIR] [--connauth FILE] [--port N] [--munge-socket PATH] "
                        "[--munged-key PATH] [--admin-group GROUP] [--shared-secret] "
                        "[-o FILE]\n");
        return EXIT_USAGE;
    }
    copy = strdup(hosts);
    for (char *h = strtok_r(copy, ",", &save); h && count < 256; h = strtok_r(NULL, ",", &save)) {
        list[count++] = h;
    }
    rc = sfs_config_generate(list, count, storage, meta, connauth, (uint16_t)port, &config);
    if (rc == 0) {
        if ((munge_socket && strlen(munge_socket) >= sizeof(config->munge_socket)) ||
            (munged_key && strlen(munged_key) >= sizeof(config->munged_key)) ||
            (admin_group && strlen(admin_group) >= sizeof(config->admin_group))) {
            sfs_config_destroy(config);
            fprintf(stderr, "stripefs-ctl genconfig: a path or group name is too long\n");
            free(copy);
            return EXIT_USAGE;
        }
        if (munge_socket) {
            snprintf(config->munge_socket, sizeof(config->munge_socket), "%s", munge_socket);
        }
        if (munged_key) {
            snprintf(config->munged_key, sizeof(config->munged_key), "%s", munged_key);
        }
        if (admin_group) {
            snprintf(config->admin_group, sizeof(config->admin_group), "%s", admin_group);
        }
        if (shared_secret) {
            snprintf(config->security_mode, sizeof(config->security_mode), "shared-secret");
            config->munge = 0;
        }
        rc = sfs_config_write(config, output ? output : "/dev/stdout");
        sfs_config_destroy(config);
    }
    free(copy);
    return rc ? ctl_fail("genconfig", rc) : 0;
}

static int ctl_hosts_of(ctl_t *ctl, int argc, char **argv)
{
    sfs_config_t *config;
    int           rc;

    (void)ctl;
    if (argc != 2) {
        fprintf(stderr, "usage: stripefs-ctl hosts-of CLUSTER.yaml\n");
        return EXIT_USAGE;
    }
    rc = sfs_config_load(argv[1], &config);
    if (rc) {
        return ctl_fail("hosts-of", rc);
    }
    for (uint32_t h = 0; h < config->host_count; h++) {
        printf("%s:%u\n", config->hosts[h].name, config->hosts[h].ranks);
    }
    sfs_config_destroy(config);
    return 0;
}

static const ctl_verb_t ctl_verbs[] = {
    {"listnodes", ctl_listnodes, 1, "listnodes [--nodetype management|meta|storage]",
     "List the server ranks with their roles, state and time since last contact."},
    {"listtargets", ctl_listtargets, 1, "listtargets",
     "List the storage targets with state, capacity and free space."},
    {"df", ctl_df, 1, "df", "Free space per target and in total, and metadata counts."},
    {"net", ctl_net, 1, "net",
     "Show how this host reaches each server and who is connected to each."},
    {"check-servers", ctl_check_servers, 1, "check-servers",
     "Ping every server rank; exit 1 if any is unreachable."},
    {"setpattern", ctl_setpattern, 1, "setpattern [--chunksize SIZE] [--numtargets N] DIR",
     "Set the stripe pattern new files in DIR get (chunk size 64K..4G, power of two)."},
    {"getentryinfo", ctl_getentryinfo, 1, "getentryinfo PATH",
     "Show a file's or directory's entry id, stripe pattern and targets."},
    {"mkdir", ctl_mkdir, 1, "mkdir [-p] [-m MODE] PATH...", "Make directories."},
    {"ls", ctl_ls, 1, "ls [-l] [PATH]", "List a directory."},
    {"stat", ctl_stat, 1, "stat PATH...", "Show attributes and size."},
    {"chmod", ctl_chmod, 0, "chmod MODE PATH...",
     "Set the permission bits (octal MODE, 0 to 7777; the server decides who may)."},
    {"chown", ctl_chown, 0, "chown [USER|UID][:GROUP|GID] PATH...",
     "Set the owner and/or group (names looked up here; the server decides who may)."},
    {"rm", ctl_rm, 1, "rm [-r] PATH...",
     "Remove files or (empty, or with -r any) directories; chunk files go in the "
     "background."},
    {"mv", ctl_mv, 1, "mv FROM TO", "Rename (replaces a file or an empty directory)."},
    {"put", ctl_put, 1, "put LOCAL_FILE|- PATH", "Copy a local file into stripefs."},
    {"get", ctl_get, 1, "get PATH LOCAL_FILE|-", "Copy a stripefs file out."},
    {"shutdown", ctl_shutdown, 1, "shutdown",
     "Stop the whole service cleanly (every rank flushes and exits 0)."},
    {"mkconnauth", ctl_mkconnauth, 0, "mkconnauth [-s BYTES] FILE",
     "Create a connauth file of random bytes (mode 0400)."},
    {"genconfig", ctl_genconfig, 0,
     "genconfig --hosts H1,H2,... [--storage-dir DIR] [--meta-dir DIR] [--connauth F] "
     "[--port N] [-o FILE]",
     "Write a cluster config: mgmt and meta on the first host, one target per host."},
    {"hosts-of", ctl_hosts_of, 0, "hosts-of CLUSTER.yaml",
     "Print HOST:RANKS for every host of a config (what mpirun --host needs)."},
};

static void ctl_usage(FILE *out)
{
    fprintf(out, "usage: stripefs-ctl [--config FILE | --mgmt HOST:PORT --connauth FILE] "
                 "[--timeout SEC] VERB [ARGS]\n\nverbs:\n");
    for (size_t i = 0; i < sizeof(ctl_verbs) / sizeof(ctl_verbs[0]); i++) {
        fprintf(out, "  %-14s %s\n", ctl_verbs[i].name, ctl_verbs[i].help);
    }
    fprintf(out, "\n'stripefs-ctl VERB --help' shows a verb's arguments. Without --config or "
                 "--mgmt,\nSTRIPEFS_CONFIG, STRIPEFS_MGMT/STRIPEFS_CONNAUTH or "
                 "/etc/stripefs/stripefs.yaml\nsay where the service is.\n");
}

int main(int argc, char **argv)
{
    ctl_t ctl;
    int   i = 1, rc;

    memset(&ctl, 0, sizeof(ctl));
    ctl.params.field_mask = SFS_CLIENT_PARAM_PROGRAM | SFS_CLIENT_PARAM_ADMIN;
    ctl.params.program    = "stripefs-ctl";
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *opt = argv[i];

        if ((strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0)) {
            ctl_usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "stripefs-ctl: %s needs a value\n", opt);
            return EXIT_USAGE;
        }
        if (strcmp(opt, "--config") == 0 || strcmp(opt, "-c") == 0) {
            ctl.params.field_mask |= SFS_CLIENT_PARAM_CONFIG;
            ctl.params.config_path = argv[++i];
        } else if (strcmp(opt, "--mgmt") == 0) {
            ctl.params.field_mask |= SFS_CLIENT_PARAM_MGMT;
            ctl.params.mgmt = argv[++i];
        } else if (strcmp(opt, "--connauth") == 0) {
            ctl.params.field_mask |= SFS_CLIENT_PARAM_CONNAUTH;
            ctl.params.connauth_file = argv[++i];
        } else if (strcmp(opt, "--timeout") == 0) {
            ctl.params.field_mask |= SFS_CLIENT_PARAM_TIMEOUT;
            ctl.params.timeout_ms = (uint32_t)(atof(argv[++i]) * 1000);
        } else {
            fprintf(stderr, "stripefs-ctl: unknown option '%s' (see --help)\n", opt);
            return EXIT_USAGE;
        }
    }
    if (i == argc) {
        ctl_usage(stderr);
        return EXIT_USAGE;
    }
    for (size_t v = 0; v < sizeof(ctl_verbs) / sizeof(ctl_verbs[0]); v++) {
        const ctl_verb_t *verb = &ctl_verbs[v];

        if (strcmp(argv[i], verb->name) != 0) {
            continue;
        }
        if (ctl_wants_help(argc - i, argv + i)) {
            printf("usage: stripefs-ctl %s\n\n%s\n", verb->synopsis, verb->help);
            return 0;
        }
        if (verb->needs_service) {
            rc = sfs_client_connect(&ctl.params, &ctl.client);
            if (rc) {
                fprintf(stderr, "stripefs-ctl: %s\n", sfs_client_error());
                return 1;
            }
        }
        rc = verb->run(&ctl, argc - i, argv + i);
        sfs_client_disconnect(ctl.client);
        return rc;
    }
    fprintf(stderr, "stripefs-ctl: unknown verb '%s' (see --help)\n", argv[i]);
    return EXIT_USAGE;
}
