/* stripefs-ctl quota: per-user and per-group limits of files and space,
 * and their usage (docs/quotas.md). */
#include "stripefs_ctl.h"

#include "sfs_errno.h"
#include "sfs_quota.h"

#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CTL_QUOTA_USAGE                                                                            \
    "usage: stripefs-ctl quota set --user NAME|--group NAME [--files N] [--space SIZE]\n"          \
    "       stripefs-ctl quota show [--user NAME|--group NAME] [--raw]\n"                          \
    "       stripefs-ctl quota list [--raw]\n"                                                     \
    "(a limit of 0 or 'none' removes it)\n"

/* A user or group named or numbered on the command line. */
static int ctl_quota_id(uint32_t kind, const char *text, uint32_t *id)
{
    char         *end;
    unsigned long n = strtoul(text, &end, 10);

    if (*text && *end == '\0' && n <= UINT32_MAX) {
        *id = (uint32_t)n;
        return 0;
    }
    if (kind == SFS_QUOTA_USER) {
        struct passwd *pw = getpwnam(text);

        if (pw) {
            *id = pw->pw_uid;
            return 0;
        }
    } else {
        struct group *gr = getgrnam(text);

        if (gr) {
            *id = gr->gr_gid;
            return 0;
        }
    }
    fprintf(stderr, "stripefs-ctl quota: no such %s: '%s'\n",
            kind == SFS_QUOTA_USER ? "user" : "group", text);
    return -1;
}

static const char *ctl_quota_name(uint32_t kind, uint32_t id, char *buf, size_t size)
{
    if (kind == SFS_QUOTA_USER) {
        struct passwd *pw = getpwuid(id);

        snprintf(buf, size, "%s", pw ? pw->pw_name : "-");
    } else {
        struct group *gr = getgrgid(id);

        snprintf(buf, size, "%s", gr ? gr->gr_name : "-");
    }
    return buf;
}

/* "stripefs-ctl quota VERB: <the server's words> [EDQUOT (Disk quota
 * exceeded)]": the errno too, which scripts (and tests) check. */
static int ctl_quota_fail(const char *verb, int rc)
{
    fprintf(stderr, "stripefs-ctl %s: %s [%s]\n", verb,
            sfs_client_error()[0] ? sfs_client_error() : "failed", sfs_strerror(rc));
    return 1;
}

static int ctl_quota_limit(const char *what, const char *text, int space, uint64_t *out)
{
    char *end;

    if (strcmp(text, "none") == 0) {
        *out = 0;
        return 0;
    }
    if (space) {
        return ctl_parse_size_arg("quota set", text, out);
    }
    *out = strtoull(text, &end, 10);
    if (!*text || *end || text[0] == '-') {
        fprintf(stderr, "stripefs-ctl quota set: %s '%s' is not a number\n", what, text);
        return -1;
    }
    return 0;
}

static void ctl_quota_print(const sfs_quota_entry_t *e, int raw)
{
    char name[256], used[32], limit[32];

    ctl_quota_name(e->kind, e->id, name, sizeof(name));
    if (raw) {
        printf("%s %s %u files=%lu space=%lu files_limit=%lu space_limit=%lu\n",
               e->kind == SFS_QUOTA_USER ? "user" : "group", name, e->id, (unsigned long)e->files,
               (unsigned long)e->space, (unsigned long)e->files_limit,
               (unsigned long)e->space_limit);
        return;
    }
    printf("%-6s %-16s %10u %10lu %10s %10s %10s\n", e->kind == SFS_QUOTA_USER ? "user" : "group",
           name, e->id, (unsigned long)e->files,
           e->files_limit
               ? (snprintf(limit, sizeof(limit), "%lu", (unsigned long)e->files_limit), limit)
               : "none",
           ctl_size(e->space, used, sizeof(used)),
           e->space_limit ? ctl_size(e->space_limit, limit, sizeof(limit)) : "none");
}

static void ctl_quota_header(int raw)
{
    if (!raw) {
        printf("%-6s %-16s %10s %10s %10s %10s %10s\n", "TYPE", "NAME", "ID", "FILES", "FILE-LIMIT",
               "SPACE", "SPACE-LIMIT");
    }
}

static int ctl_quota_list(ctl_t *ctl, int raw)
{
    sfs_quota_entry_t *page = calloc(SFS_QUOTA_PAGE_MAX, sizeof(*page));
    uint32_t           kind = SFS_QUOTA_USER, id = 0, count;
    int                eof = 0, rc = 0;

    if (!page) {
        return ctl_fail("quota list", -ENOMEM);
    }
    ctl_quota_header(raw);
    while (!eof && kind <= SFS_QUOTA_GROUP) {
        rc = sfs_quota_list(ctl->client, kind, id, SFS_QUOTA_PAGE_MAX, page, &count, &eof);
        if (rc || count == 0) {
            break;
        }
        for (uint32_t i = 0; i < count; i++) {
            ctl_quota_print(&page[i], raw);
        }
        kind = page[count - 1].kind;
        id   = page[count - 1].id + 1;
        kind += id == 0;
    }
    free(page);
    return rc ? ctl_quota_fail("quota list", rc) : 0;
}

int ctl_quota(ctl_t *ctl, int argc, char **argv)
{
    static const struct option options[] = {
        {"user", required_argument, NULL, 'u'},  {"group", required_argument, NULL, 'g'},
        {"files", required_argument, NULL, 'f'}, {"space", required_argument, NULL, 's'},
        {"raw", no_argument, NULL, 'r'},         {NULL, 0, NULL, 0}};
    const char *sub, *who = NULL;
    uint32_t    kind = SFS_QUOTA_USER, id = 0, flags = 0;
    uint64_t    files = 0, space = 0;
    int         raw = 0, c;

    if (argc < 2 || ctl_wants_help(argc, argv)) {
        fputs(CTL_QUOTA_USAGE, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    sub    = argv[1];
    optind = 1;
    while ((c = getopt_long(argc - 1, argv + 1, "", options, NULL)) != -1) {
        switch (c) {
        case 'u':
        case 'g':
            if (who) {
                fputs("stripefs-ctl quota: one of --user and --group\n", stderr);
                return EXIT_USAGE;
            }
            who  = optarg;
            kind = c == 'u' ? SFS_QUOTA_USER : SFS_QUOTA_GROUP;
            break;
        case 'f':
            if (ctl_quota_limit("--files", optarg, 0, &files) != 0) {
                return EXIT_USAGE;
            }
            flags |= SFS_QUOTA_SET_FILES;
            break;
        case 's':
            if (ctl_quota_limit("--space", optarg, 1, &space) != 0) {
                return EXIT_USAGE;
            }
            flags |= SFS_QUOTA_SET_SPACE;
            break;
        case 'r':
            raw = 1;
            break;
        default:
            fputs(CTL_QUOTA_USAGE, stderr);
            return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc) {
        fputs(CTL_QUOTA_USAGE, stderr);
        return EXIT_USAGE;
    }
    if (who && ctl_quota_id(kind, who, &id) != 0) {
        return 1;
    }
    if (strcmp(sub, "set") == 0) {
        if (!who || flags == 0) {
            fputs("stripefs-ctl quota set: needs --user or --group, and --files and/or --space\n",
                  stderr);
            return EXIT_USAGE;
        }
        int rc;

        if (ctl_connect(ctl) != 0) {
            return 1;
        }
        rc = sfs_quota_set(ctl->client, kind, id, flags, files, space);
        return rc ? ctl_quota_fail("quota set", rc) : 0;
    }
    if (flags) {
        fputs("stripefs-ctl quota: --files and --space are for 'set'\n", stderr);
        return EXIT_USAGE;
    }
    if (strcmp(sub, "list") == 0 && !who) {
        return ctl_connect(ctl) ? 1 : ctl_quota_list(ctl, raw);
    }
    if (strcmp(sub, "show") == 0) {
        sfs_quota_entry_t e;
        int               rc;

        if (ctl_connect(ctl) != 0) {
            return 1;
        }
        ctl_quota_header(raw);
        if (who) {
            if ((rc = sfs_quota_get(ctl->client, kind, id, &e)) != 0) {
                return ctl_quota_fail("quota show", rc);
            }
            ctl_quota_print(&e, raw);
            return 0;
        }
        /* one's own: the user and the primary group */
        if ((rc = sfs_quota_get(ctl->client, SFS_QUOTA_USER, getuid(), &e)) != 0) {
            return ctl_quota_fail("quota show", rc);
        }
        ctl_quota_print(&e, raw);
        if ((rc = sfs_quota_get(ctl->client, SFS_QUOTA_GROUP, getgid(), &e)) != 0) {
            return ctl_quota_fail("quota show", rc);
        }
        ctl_quota_print(&e, raw);
        return 0;
    }
    fputs(CTL_QUOTA_USAGE, stderr);
    return EXIT_USAGE;
}
