/* stripefs-ctl verbs that show entries: ls, stat. */
#include "stripefs_ctl.h"

#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CTL_LS_PAGE 512 /* entries with attributes per round trip (the server's page) */

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

/* The targets of a file that did not answer its stat: "102, 104". */
static const char *ctl_down_targets(const sfs_stat_t *st, char *buf, size_t buflen)
{
    size_t used = 0;

    buf[0] = '\0';
    for (uint32_t i = 0; i < st->target_count && i < SFS_CLIENT_MAX_TARGETS; i++) {
        if (st->target_down[i] && used < buflen) {
            int n = snprintf(buf + used, buflen - used, "%s%u", used ? ", " : "", st->targets[i]);

            used += n > 0 ? (size_t)n : 0;
        }
    }
    return buf;
}

/* A size that cannot be known (a target down) is shown as "?": the
 * listing goes on, and the caller says why once, on standard error. */
static void ctl_print_long(const char *name, const sfs_stat_t *st)
{
    char      when[32], mode[11], user[64], group[64], size[24];
    time_t    t = (time_t)(st->mtime_ns / 1000000000ull);
    struct tm tm;

    localtime_r(&t, &tm);
    strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
    if (st->flags & SFS_STAT_SIZE_UNKNOWN) {
        snprintf(size, sizeof(size), "?");
    } else {
        snprintf(size, sizeof(size), "%" PRIu64, st->size);
    }
    printf("%s %3" PRIu64 " %-8s %-8s %12s %s %s\n", ctl_mode_string(st, mode), st->nlink,
           ctl_user_name(st->uid, user, sizeof(user)),
           ctl_group_name(st->gid, group, sizeof(group)), size, when, name);
}

/* The files of a listing whose size is "?" and the targets that did not
 * answer ("102,104,"), for one note at the end. */
typedef struct ctl_unknown {
    uint32_t files;
    char     down[512];
} ctl_unknown_t;

static void ctl_unknown_add(ctl_unknown_t *u, const sfs_stat_t *st)
{
    if (!(st->flags & SFS_STAT_SIZE_UNKNOWN)) {
        return;
    }
    u->files++;
    for (uint32_t i = 0; i < st->target_count && i < SFS_CLIENT_MAX_TARGETS; i++) {
        char   key[16];
        size_t used = strlen(u->down);

        snprintf(key, sizeof(key), "%u,", st->targets[i]);
        if (st->target_down[i] && !strstr(u->down, key) && used + strlen(key) < sizeof(u->down)) {
            snprintf(u->down + used, sizeof(u->down) - used, "%s", key);
        }
    }
}

static void ctl_unknown_note(const ctl_unknown_t *u)
{
    char   text[sizeof(u->down) * 2];
    size_t used = 0;
    int    many = 0;

    if (!u->files) {
        return;
    }
    /* "102,104," as kept, said as "102, 104" */
    for (const char *p = u->down; *p && used + 3 < sizeof(text); p++) {
        if (*p != ',') {
            text[used++] = *p;
        } else if (p[1]) {
            text[used++] = ',';
            text[used++] = ' ';
            many         = 1;
        }
    }
    text[used] = '\0';
    fprintf(stderr,
            "stripefs-ctl ls: ?: the size of %u file%s cannot be known: storage target%s %s did "
            "not answer\n",
            u->files, u->files == 1 ? "" : "s", many ? "s" : "", text);
}

/* A page of entries with their attributes (one round trip), or -1 where
 * the server cannot list them so (an older one) or we may not search the
 * directory: then each is stat'ed after a plain listing. */
static int ctl_ls_page_stat(ctl_t *ctl, const char *path, const char *after,
                            sfs_dir_entry_t *entries, uint32_t *count_p, int *eof_p,
                            ctl_unknown_t *unknown)
{
    sfs_stat_t *stats = calloc(CTL_LS_PAGE, sizeof(*stats));
    int         rc;

    if (!stats) {
        return -ENOMEM;
    }
    rc = sfs_readdir_stat(ctl->client, path, after, entries, stats, CTL_LS_PAGE, count_p, eof_p);
    if (rc == -EOPNOTSUPP || rc == -ENOSYS || rc == -EACCES) {
        free(stats);
        return -1;
    }
    for (uint32_t i = 0; rc == 0 && i < *count_p; i++) {
        ctl_print_long(entries[i].name, &stats[i]);
        ctl_unknown_add(unknown, &stats[i]);
    }
    free(stats);
    return rc;
}

/* One directory's entries, in name order. */
static int ctl_ls_dir(ctl_t *ctl, const char *path, int longform, sfs_dir_entry_t *entries)
{
    char          after[256] = "";
    int           eof = 0, rc = 0, plus = longform;
    ctl_unknown_t unknown = {0};

    while (rc == 0 && !eof) {
        uint32_t count;

        if (plus) {
            rc = ctl_ls_page_stat(ctl, path, after, entries, &count, &eof, &unknown);
            if (rc == 0 && count) {
                snprintf(after, sizeof(after), "%s", entries[count - 1].name);
            }
            if (rc != -1) {
                continue;
            }
            plus = 0; /* list, then stat each */
            rc   = 0;
        }
        rc = sfs_readdir(ctl->client, path, after, entries, 1024, &count, &eof);
        for (uint32_t i = 0; rc == 0 && i < count; i++) {
            if (longform) {
                char       child[4600];
                sfs_stat_t st;

                snprintf(child, sizeof(child), "%s/%s", path, entries[i].name);
                if (sfs_stat(ctl->client, child, &st) == 0) {
                    ctl_print_long(entries[i].name, &st);
                    ctl_unknown_add(&unknown, &st);
                } else {
                    printf("?????????? %s\n", entries[i].name);
                    fprintf(stderr, "stripefs-ctl ls: %s: %s\n", child, sfs_client_error());
                }
            } else {
                printf("%s%s\n", entries[i].name, entries[i].type == SFS_FILE_TYPE_DIR ? "/" : "");
            }
            snprintf(after, sizeof(after), "%s", entries[i].name);
        }
    }
    ctl_unknown_note(&unknown);
    return rc;
}

/* As ls(1): the files named first, then each directory; with more than one
 * operand every directory gets a "PATH:" header and a blank line between. */
int ctl_ls(ctl_t *ctl, int argc, char **argv)
{
    static char     *root[] = {"/"};
    sfs_dir_entry_t *entries;
    char           **paths;
    int              longform = 0, opt, failed = 0, count, printed = 0;
    int             *is_dir;

    optind = 1;
    while ((opt = getopt(argc, argv, "l")) != -1) {
        if (opt == 'l') {
            longform = 1;
        } else {
            return EXIT_USAGE;
        }
    }
    paths   = optind < argc ? argv + optind : root;
    count   = optind < argc ? argc - optind : 1;
    entries = calloc(1024, sizeof(*entries));
    is_dir  = calloc((size_t)count, sizeof(*is_dir));
    if (!entries || !is_dir) {
        free(entries);
        free(is_dir);
        return 1;
    }
    for (int i = 0; i < count; i++) {
        sfs_stat_t st;
        int        rc = sfs_lookup(ctl->client, paths[i], &st);

        if (rc == 0 && st.type != SFS_FILE_TYPE_DIR) {
            rc = sfs_stat(ctl->client, paths[i], &st);
            if (rc == 0) {
                if (longform) {
                    ctl_unknown_t unknown = {0};

                    ctl_print_long(paths[i], &st);
                    ctl_unknown_add(&unknown, &st);
                    ctl_unknown_note(&unknown);
                } else {
                    printf("%s\n", paths[i]);
                }
                printed = 1;
            }
        }
        if (rc) {
            failed    = ctl_fail_path("ls", paths[i], rc);
            is_dir[i] = -1;
            continue;
        }
        is_dir[i] = st.type == SFS_FILE_TYPE_DIR;
    }
    for (int i = 0; i < count; i++) {
        int rc;

        if (is_dir[i] != 1) {
            continue;
        }
        if (count > 1) {
            printf("%s%s:\n", printed ? "\n" : "", paths[i]);
        }
        printed = 1;
        rc      = ctl_ls_dir(ctl, paths[i], longform, entries);
        if (rc) {
            failed = ctl_fail_path("ls", paths[i], rc);
        }
    }
    free(entries);
    free(is_dir);
    return failed;
}

int ctl_stat(ctl_t *ctl, int argc, char **argv)
{
    int failed = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: stripefs-ctl stat PATH...\n");
        return EXIT_USAGE;
    }
    for (int i = 1; i < argc; i++) {
        sfs_stat_t st;
        char       mode[11], user[64], group[64], size[600], down[512];
        int        rc = sfs_stat(ctl->client, argv[i], &st);

        if (rc) {
            failed = ctl_fail("stat", rc);
            continue;
        }
        if (st.flags & SFS_STAT_SIZE_UNKNOWN) {
            ctl_down_targets(&st, down, sizeof(down));
            snprintf(size, sizeof(size),
                     "unknown (at least %" PRIu64 "; storage target%s %s did not answer)", st.size,
                     strchr(down, ',') ? "s" : "", down);
        } else {
            snprintf(size, sizeof(size), "%" PRIu64, st.size);
        }
        printf("  File: %s\n  Type: %s\n  Size: %s\n  Mode: (%04o/%s)  Uid: (%u/%s)  "
               "Gid: (%u/%s)  Links: %" PRIu64 "\n  EntryID: %016" PRIx64 "\n  Chunksize: %" PRIu64
               "  Targets: %u\n",
               argv[i], st.type == SFS_FILE_TYPE_DIR ? "directory" : "regular file", size, st.mode,
               ctl_mode_string(&st, mode), st.uid, ctl_user_name(st.uid, user, sizeof(user)),
               st.gid, ctl_group_name(st.gid, group, sizeof(group)), st.nlink, st.entry_id,
               st.chunk_size, st.type == SFS_FILE_TYPE_DIR ? st.stripe_count : st.target_count);
    }
    return failed;
}
