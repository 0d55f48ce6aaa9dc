/*
 * A fixed permission matrix, answered by whatever file system holds DIR.
 * The program calls plain libc only: under LD_PRELOAD=libstripefs-posix.so
 * a /stripefs/... DIR is served by the service, otherwise by the kernel, so
 * the same run on a local ext4 directory is the oracle.
 *
 *   sfs_perm_probe setup [--as-owners] DIR [ALICE_UID BOB_UID TEAM_GID]   as root
 *   sfs_perm_probe probe DIR                               as the user under test
 *
 * setup builds the tree below (DIR is made if missing; it should be empty):
 * files of every interesting mode in f/ (one copy per operation that changes
 * them), directories of every interesting mode (sticky, read-only, setgid,
 * search-only, group-writable) each holding files and directories of alice
 * and of bob, nested directories where an ancestor lacks search permission.
 * Owners: alice, bob (uids given, default: the users sfsalice and sfsbob),
 * root; groups: alice's and bob's primary groups, the team group (default
 * sfsteam), root. It creates everything first, then chowns and chmods
 * bottom-up. With --as-owners, each entry is made and chmodded by its owner
 * instead (child processes with the owner's ids), so that only the two files
 * whose group their owner is not in need root's chown. Every entry is then
 * checked with stat. Errors are printed ("setup: chown PATH: EPERM") and
 * setup goes on; it exits 1 if any step failed.
 *
 * probe runs a fixed list of operations and prints one line each,
 * "OPERATION RELATIVE-PATH [DETAIL]: OK [details]" or ": ERRNO-NAME", with
 * owners and groups in a form that does not depend on uids ("owner=self",
 * "group=primary", "group=team", else the name), so that the output is the
 * same for the same user on two file systems that behave the same. Every
 * operation that changes something has its own object, so each answer is
 * independent of the others. The first line is the umask the caller set
 * (created files and directories are reported with their resulting modes).
 * A tree serves one probe run: make one per user.
 *
 * Not covered on purpose: O_CREAT on an existing file of another user in a
 * sticky world-writable directory (Linux's fs.protected_regular makes that a
 * local policy, not POSIX).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define CONTENT      "0123456789\n"
#define EXPLICIT_SEC 1000000000L

/* who owns a node: alice, bob or root; groups: alice's, bob's, team, root */
enum { WHO_ALICE, WHO_BOB, WHO_ROOT };
enum { GRP_ALICE, GRP_BOB, GRP_TEAM, GRP_ROOT };

typedef struct node_kind {
    const char *name;
    int         owner, group;
    mode_t      mode;
} node_kind_t;

/* files in f/; each has copies NAME.OP for the operations that change it */
static const node_kind_t files[] = {
    {"600", WHO_ALICE, GRP_ALICE, 0600}, {"640", WHO_ALICE, GRP_ALICE, 0640},
    {"640t", WHO_ALICE, GRP_TEAM, 0640}, {"644", WHO_ALICE, GRP_ALICE, 0644},
    {"666", WHO_ALICE, GRP_ALICE, 0666}, {"400", WHO_ALICE, GRP_ALICE, 0400},
    {"200", WHO_ALICE, GRP_ALICE, 0200}, {"660t", WHO_ALICE, GRP_TEAM, 0660},
    {"755", WHO_ALICE, GRP_ALICE, 0755}, {"b600", WHO_BOB, GRP_BOB, 0600},
    {"b664t", WHO_BOB, GRP_TEAM, 0664},
};
static const char *const file_copies[] = {"wr",  "rw",  "cr",  "tr",  "tc",  "cm",  "cos", "cop",
                                          "cor", "cgp", "cgt", "cgo", "cnn", "ut0", "ut1"};

/* files in f/ that get chmod 02755: setgid kept or cleared */
static const node_kind_t sgid_files[] = {
    {"sg.aa", WHO_ALICE, GRP_ALICE, 0644}, {"sg.at", WHO_ALICE, GRP_TEAM, 0644},
    {"sg.ab", WHO_ALICE, GRP_BOB, 0644},   {"sg.bt", WHO_BOB, GRP_TEAM, 0644},
    {"sg.ba", WHO_BOB, GRP_ALICE, 0644},
};

/* set-id files in f/: a chown by the owner clears both bits (group execute
 * is set); a write by someone else than root clears them */
static const node_kind_t setid_chown_files[] = {
    {"sid.a", WHO_ALICE, GRP_ALICE, 06755},
    {"sid.b", WHO_BOB, GRP_BOB, 06755},
};
static const node_kind_t setid_write_files[] = {
    {"sidw.t", WHO_ALICE, GRP_TEAM, 06775},
    {"sidw.o", WHO_ALICE, GRP_ALICE, 06777},
};

/* directories at the top, each with the same contents (dir_entries) */
static const node_kind_t dirs[] = {
    {"d700", WHO_ALICE, GRP_ALICE, 0700}, {"d750t", WHO_ALICE, GRP_TEAM, 0750},
    {"d755", WHO_ALICE, GRP_ALICE, 0755}, {"d711", WHO_ALICE, GRP_ALICE, 0711},
    {"d770t", WHO_ALICE, GRP_TEAM, 0770}, {"d777", WHO_ALICE, GRP_ALICE, 0777},
    {"d1777", WHO_ROOT, GRP_ROOT, 01777}, {"d1777a", WHO_ALICE, GRP_ALICE, 01777},
    {"d555", WHO_ALICE, GRP_ALICE, 0555}, {"d2775t", WHO_ALICE, GRP_TEAM, 02775},
    {"db700", WHO_BOB, GRP_BOB, 0700},
};

typedef struct entry_kind {
    const char *name;
    int         is_dir, owner, group;
    mode_t      mode;
} entry_kind_t;

static const entry_kind_t dir_entries[] = {
    {"afile", 0, WHO_ALICE, GRP_ALICE, 0644},  {"rm_a", 0, WHO_ALICE, GRP_ALICE, 0644},
    {"rm_b", 0, WHO_BOB, GRP_BOB, 0644},       {"mv_a", 0, WHO_ALICE, GRP_ALICE, 0644},
    {"mv_b", 0, WHO_BOB, GRP_BOB, 0644},       {"rmd_a", 1, WHO_ALICE, GRP_ALICE, 0755},
    {"rmd_b", 1, WHO_BOB, GRP_BOB, 0755},      {"mvd_w", 1, WHO_ALICE, GRP_ALICE, 0755},
    {"mvd_nw", 1, WHO_ALICE, GRP_ALICE, 0555}, {"mvd_bw", 1, WHO_BOB, GRP_BOB, 0755},
};

/* nested directories: an ancestor without search (or read) permission */
static const entry_kind_t nested[] = {
    {"n1", 1, WHO_ALICE, GRP_ALICE, 0755},       {"n1/n2", 1, WHO_ALICE, GRP_ALICE, 0700},
    {"n1/n2/n3", 1, WHO_ALICE, GRP_ALICE, 0777}, {"n1/n2/n3/file", 0, WHO_ALICE, GRP_ALICE, 0666},
    {"n1/n2t", 1, WHO_ALICE, GRP_TEAM, 0750},    {"n1/n2t/file", 0, WHO_ALICE, GRP_ALICE, 0644},
    {"n1/n2r", 1, WHO_ALICE, GRP_ALICE, 0744},   {"n1/n2r/file", 0, WHO_ALICE, GRP_ALICE, 0644},
    {"n1/n2x", 1, WHO_ALICE, GRP_ALICE, 0711},   {"n1/n2x/file", 0, WHO_ALICE, GRP_ALICE, 0644},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *base; /* DIR */

static const char *errname(int err)
{
    static char buf[32];
    const char *name = strerrorname_np(err);

    if (name) {
        return name;
    }
    snprintf(buf, sizeof(buf), "E%d", err);
    return buf;
}

static char *path_of(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static char *path_of(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    int     n = snprintf(buf, len, "%s/", base);

    va_start(ap, fmt);
    vsnprintf(buf + n, len - (size_t)n, fmt, ap);
    va_end(ap);
    return buf;
}

/* ---------------------------------------------------------------------- */
/* setup                                                                  */

typedef struct node {
    char   rel[128];
    int    is_dir;
    uid_t  uid;
    gid_t  gid;
    mode_t mode;
} node_t;

static node_t nodes[1024];
static size_t node_count;
static uid_t  who_uid[3];
static gid_t  grp_gid[4];

static void add_node(int is_dir, int owner, int group, mode_t mode, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void add_node(int is_dir, int owner, int group, mode_t mode, const char *fmt, ...)
{
    node_t *n;
    va_list ap;

    if (node_count == COUNT(nodes)) {
        fprintf(stderr, "setup: too many nodes\n");
        exit(2);
    }
    n = &nodes[node_count++];
    va_start(ap, fmt);
    vsnprintf(n->rel, sizeof(n->rel), fmt, ap);
    va_end(ap);
    n->is_dir = is_dir;
    n->uid    = who_uid[owner];
    n->gid    = grp_gid[group];
    n->mode   = mode;
}

static void build_node_list(void)
{
    add_node(1, WHO_ALICE, GRP_ALICE, 0755, "f");
    add_node(1, WHO_ROOT, GRP_ROOT, 0777, "from");
    add_node(1, WHO_ROOT, GRP_ROOT, 0777, "to");
    for (size_t i = 0; i < COUNT(files); i++) {
        const node_kind_t *k = &files[i];

        add_node(0, k->owner, k->group, k->mode, "f/%s", k->name);
        for (size_t c = 0; c < COUNT(file_copies); c++) {
            add_node(0, k->owner, k->group, k->mode, "f/%s.%s", k->name, file_copies[c]);
        }
    }
    for (size_t i = 0; i < COUNT(sgid_files); i++) {
        const node_kind_t *k = &sgid_files[i];

        add_node(0, k->owner, k->group, k->mode, "f/%s", k->name);
    }
    for (size_t i = 0; i < COUNT(setid_chown_files); i++) {
        const node_kind_t *k = &setid_chown_files[i];

        add_node(0, k->owner, k->group, k->mode, "f/%s", k->name);
    }
    for (size_t i = 0; i < COUNT(setid_write_files); i++) {
        const node_kind_t *k = &setid_write_files[i];

        add_node(0, k->owner, k->group, k->mode, "f/%s", k->name);
    }
    for (size_t i = 0; i < COUNT(dirs); i++) {
        const node_kind_t *d = &dirs[i];

        add_node(1, d->owner, d->group, d->mode, "%s", d->name);
        for (size_t e = 0; e < COUNT(dir_entries); e++) {
            const entry_kind_t *k = &dir_entries[e];

            add_node(k->is_dir, k->owner, k->group, k->mode, "%s/%s", d->name, k->name);
        }
        add_node(0, WHO_ALICE, GRP_ALICE, 0644, "from/%s.mvin", d->name);
    }
    for (size_t i = 0; i < COUNT(nested); i++) {
        const entry_kind_t *k = &nested[i];

        add_node(k->is_dir, k->owner, k->group, k->mode, "%s", k->name);
    }
}

static int setup_failed;
static int as_owners; /* setup --as-owners */

static void setup_error(const char *what, const char *path)
{
    fprintf(stderr, "setup: %s %s: %s\n", what, path, errname(errno));
    setup_failed = 1;
}

static uid_t uid_arg(const char *arg, const char *user)
{
    struct passwd *pw;

    if (arg) {
        return (uid_t)strtoul(arg, NULL, 10);
    }
    pw = getpwnam(user);
    if (!pw) {
        fprintf(stderr, "setup: no user %s (pass the uids)\n", user);
        exit(2);
    }
    return pw->pw_uid;
}

/* make one node (a directory 0777 or a file 0666 with CONTENT, before the umask) */
static void create_node(const node_t *n, mode_t dir_mode, mode_t file_mode)
{
    char path[512];

    path_of(path, sizeof(path), "%s", n->rel);
    if (n->is_dir) {
        if (mkdir(path, dir_mode) != 0) {
            setup_error("mkdir", path);
        }
    } else {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, file_mode);

        if (fd < 0) {
            setup_error("create", path);
            return;
        }
        if (write(fd, CONTENT, strlen(CONTENT)) != (ssize_t)strlen(CONTENT)) {
            setup_error("write", path);
        }
        if (close(fd) != 0) {
            setup_error("close", path);
        }
    }
}

/* what was asked is what is there */
static void verify_node(const node_t *n)
{
    char        path[512];
    struct stat st;

    path_of(path, sizeof(path), "%s", n->rel);
    if (stat(path, &st) != 0) {
        setup_error("stat", path);
    } else if (st.st_uid != n->uid || st.st_gid != n->gid || (st.st_mode & 07777) != n->mode) {
        fprintf(stderr, "setup: %s is %u:%u %04o, not %u:%u %04o\n", path, (unsigned)st.st_uid,
                (unsigned)st.st_gid, (unsigned)(st.st_mode & 07777), (unsigned)n->uid,
                (unsigned)n->gid, (unsigned)n->mode);
        setup_failed = 1;
    }
}

/* every node checked; the top directory root's, 0755 */
static void finish_setup(void)
{
    for (size_t i = 0; i < node_count; i++) {
        verify_node(&nodes[i]);
    }
    if (chown(base, 0, 0) != 0) {
        setup_error("chown", base);
    }
    if (chmod(base, 0755) != 0) {
        setup_error("chmod", base);
    }
}

/* --as-owners: each node is made and chmodded by its owner (a child process
 * with the owner's uid, a group of the owner's as its gid, and the owner's
 * groups), so that no chown is needed, except for a group the owner is not
 * in (sg.ab, sg.ba): root chowns those afterwards. */
static gid_t user_primary(uid_t uid)
{
    return uid == who_uid[WHO_ALICE] ? grp_gid[GRP_ALICE]
           : uid == who_uid[WHO_BOB] ? grp_gid[GRP_BOB]
                                     : 0;
}

static int owner_in_group(uid_t uid, gid_t gid)
{
    return uid == 0 || gid == user_primary(uid) || gid == grp_gid[GRP_TEAM];
}

/* the gid a node is made with by its owner */
static gid_t creator_gid(const node_t *n)
{
    return owner_in_group(n->uid, n->gid) ? n->gid : user_primary(n->uid);
}

static int node_depth(const node_t *n)
{
    int depth = 0;

    for (const char *c = n->rel; *c; c++) {
        depth += *c == '/';
    }
    return depth;
}

enum { STEP_CREATE, STEP_CHMOD };

/* run fn in a child process as root and wait for it: with --as-owners the
 * parent never touches stripefs itself, so that no child is forked from a
 * process with a live client (UCX's locks held by its threads at the fork
 * would stay locked in the child) */
static void in_root_child(void (*fn)(void))
{
    pid_t pid;
    int   status;

    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        setup_error("fork", base);
        return;
    }
    if (pid == 0) {
        fn();
        fflush(stdout);
        fflush(stderr);
        _exit(setup_failed);
    }
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        setup_failed = 1;
    }
}

/* in a child with identity (uid, gid): STEP over the nodes of that depth and identity */
static void owner_step(uid_t uid, gid_t gid, int depth, int step)
{
    pid_t pid;
    int   status;

    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        setup_error("fork", base);
        return;
    }
    if (pid == 0) {
        gid_t groups[3];
        int   ngroups = 0;

        groups[ngroups++] = gid;
        if (uid != 0) {
            groups[ngroups++] = user_primary(uid);
            groups[ngroups++] = grp_gid[GRP_TEAM];
        }
        if (setgroups((size_t)ngroups, groups) != 0 || setresgid(gid, gid, gid) != 0 ||
            setresuid(uid, uid, uid) != 0) {
            setup_error("setresuid", base);
            _exit(1);
        }
        umask(0);
        for (size_t i = 0; i < node_count; i++) {
            const node_t *n = &nodes[i];
            char          path[512];

            if (n->uid != uid || creator_gid(n) != gid || node_depth(n) != depth) {
                continue;
            }
            if (step == STEP_CREATE) {
                create_node(n, 0777, 0666);
            } else if (chmod(path_of(path, sizeof(path), "%s", n->rel),
                             owner_in_group(n->uid, n->gid) ? n->mode : n->mode & 0777) != 0) {
                setup_error("chmod", path);
            }
        }
        fflush(stdout);
        fflush(stderr);
        _exit(setup_failed);
    }
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        setup_failed = 1;
    }
}

/* every identity (uid, creator gid) at a depth */
static void owner_steps(int depth, int step)
{
    for (size_t i = 0; i < node_count; i++) {
        const node_t *n = &nodes[i];
        size_t        j;

        if (node_depth(n) != depth) {
            continue;
        }
        for (j = 0; j < i; j++) { /* first node of its identity at this depth */
            if (node_depth(&nodes[j]) == depth && nodes[j].uid == n->uid &&
                creator_gid(&nodes[j]) == creator_gid(n)) {
                break;
            }
        }
        if (j == i) {
            owner_step(n->uid, creator_gid(n), depth, step);
        }
    }
}

static void make_base_open(void)
{
    if (mkdir(base, 0777) != 0 && errno != EEXIST) {
        setup_error("mkdir", base);
    } else if (chmod(base, 0777) != 0) {
        setup_error("chmod", base);
    }
}

/* root's part: the groups the owners are not in, then everything checked */
static void owners_fixup(void)
{
    char path[512];

    for (size_t i = 0; i < node_count; i++) {
        const node_t *n = &nodes[i];

        if (!owner_in_group(n->uid, n->gid)) {
            path_of(path, sizeof(path), "%s", n->rel);
            if (chown(path, (uid_t)-1, n->gid) != 0) {
                setup_error("chown", path);
            } else if (chmod(path, n->mode) != 0) {
                setup_error("chmod", path);
            }
        }
    }
    finish_setup();
}

static void setup_as_owners(void)
{
    int max_depth = 0;

    for (size_t i = 0; i < node_count; i++) {
        max_depth = node_depth(&nodes[i]) > max_depth ? node_depth(&nodes[i]) : max_depth;
    }
    in_root_child(make_base_open);
    /* made top-down in directories open to all, then chmodded bottom-up */
    for (int depth = 0; depth <= max_depth; depth++) {
        owner_steps(depth, STEP_CREATE);
    }
    for (int depth = max_depth; depth >= 0; depth--) {
        owner_steps(depth, STEP_CHMOD);
    }
    in_root_child(owners_fixup);
}

/* as root: everything made first, then owners and modes, deepest first
 * (chown before chmod: a chown may clear set-id bits) */
static void setup_with_chown(void)
{
    char path[512];

    for (size_t i = 0; i < node_count; i++) {
        create_node(&nodes[i], 0700, 0600);
    }
    for (size_t i = node_count; i-- > 0;) {
        const node_t *n = &nodes[i];

        path_of(path, sizeof(path), "%s", n->rel);
        if (chown(path, n->uid, n->gid) != 0) {
            setup_error("chown", path);
        }
        if (chmod(path, n->mode) != 0) {
            setup_error("chmod", path);
        }
    }
}

static int do_setup(int argc, char **argv)
{
    struct passwd *pw;
    struct group  *gr;

    who_uid[WHO_ALICE] = uid_arg(argc > 3 ? argv[3] : NULL, "sfsalice");
    who_uid[WHO_BOB]   = uid_arg(argc > 4 ? argv[4] : NULL, "sfsbob");
    who_uid[WHO_ROOT]  = 0;
    if (argc > 5) {
        grp_gid[GRP_TEAM] = (gid_t)strtoul(argv[5], NULL, 10);
    } else if ((gr = getgrnam("sfsteam"))) {
        grp_gid[GRP_TEAM] = gr->gr_gid;
    } else {
        fprintf(stderr, "setup: no group sfsteam (pass the gid)\n");
        return 2;
    }
    /* primary groups of alice and bob */
    if (!(pw = getpwuid(who_uid[WHO_ALICE]))) {
        fprintf(stderr, "setup: uid %u has no passwd entry\n", (unsigned)who_uid[WHO_ALICE]);
        return 2;
    }
    grp_gid[GRP_ALICE] = pw->pw_gid;
    if (!(pw = getpwuid(who_uid[WHO_BOB]))) {
        fprintf(stderr, "setup: uid %u has no passwd entry\n", (unsigned)who_uid[WHO_BOB]);
        return 2;
    }
    grp_gid[GRP_BOB]  = pw->pw_gid;
    grp_gid[GRP_ROOT] = 0;
    build_node_list();

    umask(022);
    if (as_owners) {
        setup_as_owners();
    } else if (mkdir(base, 0755) != 0 && errno != EEXIST) {
        setup_error("mkdir", base);
        return 1;
    } else {
        setup_with_chown();
        finish_setup();
    }
    printf("setup: %zu entries under %s%s%s\n", node_count, base,
           as_owners ? " (made by their owners)" : "", setup_failed ? " (with errors)" : "");
    return setup_failed ? 1 : 0;
}

/* ---------------------------------------------------------------------- */
/* probe                                                                  */

static uid_t peer_uid;  /* another sfs user: bob for alice, else alice */
static gid_t team_gid;  /* sfsteam */
static gid_t other_gid; /* a primary group the caller is not in */
static int   op_count;

static void result(int err, const char *detail, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void result(int err, const char *detail, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    if (err) {
        printf(": %s\n", errname(err));
    } else {
        printf(": OK%s%s\n", detail && detail[0] ? " " : "", detail ? detail : "");
    }
    op_count++;
}

static const char *owner_name(uid_t uid, char *buf, size_t len)
{
    struct passwd *pw;

    if (uid == geteuid()) {
        return "self";
    }
    pw = getpwuid(uid);
    if (pw) {
        snprintf(buf, len, "%s", pw->pw_name);
    } else {
        snprintf(buf, len, "uid-unknown");
    }
    return buf;
}

static const char *group_name(gid_t gid, char *buf, size_t len)
{
    struct group *gr;

    if (gid == getegid()) {
        return "primary";
    }
    if (gid == team_gid) {
        return "team";
    }
    gr = getgrgid(gid);
    if (gr) {
        snprintf(buf, len, "%s", gr->gr_name);
    } else {
        snprintf(buf, len, "gid-unknown");
    }
    return buf;
}

/* "mode=0644 owner=self group=primary" of a path (or the stat error) */
static const char *attrs_of(const char *path, char *buf, size_t len)
{
    struct stat st;
    char        o[64], g[64];

    if (stat(path, &st) != 0) {
        snprintf(buf, len, "stat=%s", errname(errno));
        return buf;
    }
    snprintf(buf, len, "%s mode=%04o owner=%s group=%s", S_ISDIR(st.st_mode) ? "dir" : "file",
             (unsigned)(st.st_mode & 07777), owner_name(st.st_uid, o, sizeof(o)),
             group_name(st.st_gid, g, sizeof(g)));
    return buf;
}

static void op_stat(const char *rel)
{
    char path[512], attrs[256];
    int  err = 0;

    path_of(path, sizeof(path), "%s", rel);
    attrs_of(path, attrs, sizeof(attrs));
    if (strncmp(attrs, "stat=", 5) == 0) {
        err = errno;
    }
    result(err, attrs, "stat %s", rel);
}

static void op_access(const char *rel)
{
    static const struct {
        int         mode;
        const char *name;
    } modes[] = {{R_OK, "R_OK"}, {W_OK, "W_OK"}, {X_OK, "X_OK"}};
    char path[512];

    path_of(path, sizeof(path), "%s", rel);
    for (size_t i = 0; i < COUNT(modes); i++) {
        int rc = access(path, modes[i].mode);

        result(rc == 0 ? 0 : errno, NULL, "access %s %s", rel, modes[i].name);
    }
}

enum { IO_NONE, IO_READ, IO_WRITE, IO_RDWR };

/* open with flags; on success do the I/O and report created attributes */
static void op_open(const char *rel, int flags, const char *flag_name, mode_t mode, int io,
                    int show_attrs)
{
    char    path[512], detail[384], attrs[256], buf[64];
    int     fd, n = 0;
    ssize_t rc;

    path_of(path, sizeof(path), "%s", rel);
    fd = open(path, flags, mode);
    if (fd < 0) {
        result(errno, NULL, "open %s %s", rel, flag_name);
        return;
    }
    detail[0] = '\0';
    if (io == IO_READ || io == IO_RDWR) {
        rc = pread(fd, buf, sizeof(buf), 0);
        n += rc < 0 ? snprintf(detail + n, sizeof(detail) - (size_t)n, "read=%s ", errname(errno))
                    : snprintf(detail + n, sizeof(detail) - (size_t)n, "read=%zd ", rc);
    }
    if (io == IO_WRITE || io == IO_RDWR) {
        rc = pwrite(fd, "probe\n", 6, 0);
        n += rc < 0 ? snprintf(detail + n, sizeof(detail) - (size_t)n, "write=%s ", errname(errno))
                    : snprintf(detail + n, sizeof(detail) - (size_t)n, "write=%zd ", rc);
    }
    if (close(fd) != 0) {
        n += snprintf(detail + n, sizeof(detail) - (size_t)n, "close=%s ", errname(errno));
    }
    if (show_attrs) {
        struct stat st;

        attrs_of(path, attrs, sizeof(attrs));
        n += snprintf(detail + n, sizeof(detail) - (size_t)n, "%s ", attrs);
        if (stat(path, &st) == 0) {
            n += snprintf(detail + n, sizeof(detail) - (size_t)n, "size=%lld ",
                          (long long)st.st_size);
        }
    }
    if (n > 0 && detail[n - 1] == ' ') {
        detail[n - 1] = '\0';
    }
    result(0, detail, "open %s %s", rel, flag_name);
}

static void op_readdir(const char *rel)
{
    char           path[512], detail[96];
    DIR           *d;
    struct dirent *de;
    int            count = 0;

    path_of(path, sizeof(path), "%s", rel);
    d = opendir(path);
    if (!d) {
        result(errno, NULL, "readdir %s", rel);
        return;
    }
    errno = 0;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
            count++;
        }
    }
    if (errno != 0) { /* opendir said yes, readdir no: not what a kernel does */
        snprintf(detail, sizeof(detail), "opendir=OK readdir=%s after=%d", errname(errno), count);
        closedir(d);
        result(0, detail, "readdir %s", rel);
        return;
    }
    closedir(d);
    snprintf(detail, sizeof(detail), "entries=%d", count);
    result(0, detail, "readdir %s", rel);
}

static void op_mkdir(const char *rel)
{
    char path[512], attrs[256];

    path_of(path, sizeof(path), "%s", rel);
    if (mkdir(path, 0777) != 0) {
        result(errno, NULL, "mkdir %s", rel);
        return;
    }
    result(0, attrs_of(path, attrs, sizeof(attrs)), "mkdir %s", rel);
}

static void op_rmdir(const char *rel)
{
    char path[512];

    path_of(path, sizeof(path), "%s", rel);
    result(rmdir(path) == 0 ? 0 : errno, NULL, "rmdir %s", rel);
}

static void op_unlink(const char *rel)
{
    char path[512];

    path_of(path, sizeof(path), "%s", rel);
    result(unlink(path) == 0 ? 0 : errno, NULL, "unlink %s", rel);
}

static void op_rename(const char *from_rel, const char *to_rel)
{
    char from[512], to[512];

    path_of(from, sizeof(from), "%s", from_rel);
    path_of(to, sizeof(to), "%s", to_rel);
    result(rename(from, to) == 0 ? 0 : errno, NULL, "rename %s %s", from_rel, to_rel);
}

static void op_truncate(const char *rel)
{
    char        path[512], detail[32];
    struct stat st;

    path_of(path, sizeof(path), "%s", rel);
    if (truncate(path, 4) != 0) {
        result(errno, NULL, "truncate %s 4", rel);
        return;
    }
    snprintf(detail, sizeof(detail), "size=%lld",
             stat(path, &st) == 0 ? (long long)st.st_size : -1LL);
    result(0, detail, "truncate %s 4", rel);
}

static void op_chmod(const char *rel, mode_t mode)
{
    char path[512], attrs[256];

    path_of(path, sizeof(path), "%s", rel);
    if (chmod(path, mode) != 0) {
        result(errno, NULL, "chmod %s %04o", rel, (unsigned)mode);
        return;
    }
    result(0, attrs_of(path, attrs, sizeof(attrs)), "chmod %s %04o", rel, (unsigned)mode);
}

static void op_chown(const char *rel, uid_t uid, gid_t gid, const char *what)
{
    char path[512], attrs[256];

    path_of(path, sizeof(path), "%s", rel);
    if (chown(path, uid, gid) != 0) {
        result(errno, NULL, "chown %s %s", rel, what);
        return;
    }
    result(0, attrs_of(path, attrs, sizeof(attrs)), "chown %s %s", rel, what);
}

static void op_utimes(const char *rel, int explicit_times)
{
    char           path[512], detail[64];
    struct timeval tv[2] = {{EXPLICIT_SEC, 0}, {EXPLICIT_SEC, 0}};
    struct stat    st;

    path_of(path, sizeof(path), "%s", rel);
    if (utimes(path, explicit_times ? tv : NULL) != 0) {
        result(errno, NULL, "utimes %s %s", rel, explicit_times ? "explicit" : "now");
        return;
    }
    if (stat(path, &st) != 0) {
        snprintf(detail, sizeof(detail), "stat=%s", errname(errno));
    } else if (explicit_times) {
        snprintf(detail, sizeof(detail), "mtime=%s",
                 st.st_mtime == EXPLICIT_SEC ? "as-set" : "not-as-set");
    } else {
        snprintf(detail, sizeof(detail), "mtime=%s", st.st_mtime > EXPLICIT_SEC ? "recent" : "old");
    }
    result(0, detail, "utimes %s %s", rel, explicit_times ? "explicit" : "now");
}

static void probe_file(const node_kind_t *k)
{
    char rel[128];

#define COPY(op) (snprintf(rel, sizeof(rel), "f/%s.%s", k->name, op), rel)
    snprintf(rel, sizeof(rel), "f/%s", k->name);
    op_stat(rel);
    op_access(rel);
    op_open(rel, O_RDONLY, "O_RDONLY", 0, IO_READ, 0);
    op_open(rel, O_WRONLY | O_CREAT | O_EXCL, "O_WRONLY|O_CREAT|O_EXCL", 0644, IO_NONE, 0);
    op_open(COPY("wr"), O_WRONLY, "O_WRONLY", 0, IO_WRITE, 0);
    op_open(COPY("rw"), O_RDWR, "O_RDWR", 0, IO_RDWR, 0);
    op_open(COPY("cr"), O_WRONLY | O_CREAT, "O_WRONLY|O_CREAT", 0644, IO_WRITE, 0);
    op_open(COPY("tr"), O_WRONLY | O_TRUNC, "O_WRONLY|O_TRUNC", 0, IO_NONE, 1);
    op_truncate(COPY("tc"));
    op_chmod(COPY("cm"), 0604);
    op_chown(COPY("cos"), geteuid(), (gid_t)-1, "owner=self");
    op_chown(COPY("cop"), peer_uid, (gid_t)-1, "owner=peer");
    op_chown(COPY("cor"), 0, (gid_t)-1, "owner=root");
    op_chown(COPY("cgp"), (uid_t)-1, getegid(), "group=primary");
    op_chown(COPY("cgt"), (uid_t)-1, team_gid, "group=team");
    op_chown(COPY("cgo"), (uid_t)-1, other_gid, "group=other");
    op_chown(COPY("cnn"), (uid_t)-1, (gid_t)-1, "-1:-1");
    op_utimes(COPY("ut0"), 0);
    op_utimes(COPY("ut1"), 1);
#undef COPY
}

static void probe_dir(const node_kind_t *d)
{
    char rel[128], rel2[128];

#define IN(entry) (snprintf(rel, sizeof(rel), "%s/%s", d->name, entry), rel)
    op_readdir(d->name);
    op_open(d->name, O_RDONLY, "O_RDONLY", 0, IO_NONE, 0);
    op_open(d->name, O_RDONLY | O_DIRECTORY, "O_RDONLY|O_DIRECTORY", 0, IO_NONE, 0);
    op_stat(d->name);
    op_access(d->name);
    op_stat(IN("afile"));
    op_open(IN("afile"), O_RDONLY, "O_RDONLY", 0, IO_READ, 0);
    op_open(IN("afile"), O_WRONLY | O_CREAT | O_EXCL, "O_WRONLY|O_CREAT|O_EXCL", 0644, IO_NONE, 0);
    op_open(IN("new_f"), O_WRONLY | O_CREAT, "O_WRONLY|O_CREAT", 0666, IO_WRITE, 1);
    op_open(IN("new_x"), O_WRONLY | O_CREAT | O_EXCL, "O_WRONLY|O_CREAT|O_EXCL", 0640, IO_NONE, 1);
    op_mkdir(IN("new_d"));
    op_unlink(IN("rm_a"));
    op_unlink(IN("rm_b"));
    snprintf(rel2, sizeof(rel2), "%s/mv_a.new", d->name);
    op_rename(IN("mv_a"), rel2);
    snprintf(rel2, sizeof(rel2), "%s/mv_b.new", d->name);
    op_rename(IN("mv_b"), rel2);
    op_rmdir(IN("rmd_a"));
    op_rmdir(IN("rmd_b"));
    snprintf(rel2, sizeof(rel2), "to/%s.mvd_w", d->name);
    op_rename(IN("mvd_w"), rel2);
    snprintf(rel2, sizeof(rel2), "to/%s.mvd_nw", d->name);
    op_rename(IN("mvd_nw"), rel2);
    snprintf(rel2, sizeof(rel2), "to/%s.mvd_bw", d->name);
    op_rename(IN("mvd_bw"), rel2);
    snprintf(rel2, sizeof(rel2), "from/%s.mvin", d->name);
    op_rename(rel2, IN("mvin"));
#undef IN
}

static void probe_nested(void)
{
    op_stat("n1/n2");
    op_readdir("n1/n2");
    op_stat("n1/n2/n3");
    op_readdir("n1/n2/n3");
    op_stat("n1/n2/n3/file");
    op_access("n1/n2/n3/file");
    op_open("n1/n2/n3/file", O_RDWR, "O_RDWR", 0, IO_READ, 0);
    op_open("n1/n2/n3/new_f", O_WRONLY | O_CREAT, "O_WRONLY|O_CREAT", 0666, IO_NONE, 1);
    op_mkdir("n1/n2/n3/new_d");
    op_unlink("n1/n2/n3/file");
    for (int i = 0; i < 3; i++) {
        static const char *const sub[] = {"n1/n2t", "n1/n2r", "n1/n2x"};
        char                     rel[64];

        op_readdir(sub[i]);
        snprintf(rel, sizeof(rel), "%s/file", sub[i]);
        op_stat(rel);
        op_open(rel, O_RDONLY, "O_RDONLY", 0, IO_READ, 0);
    }
}

/* uid and primary gid of a user (getpwnam's answer is overwritten by the next call) */
static int user_ids(const char *name, uid_t *uid, gid_t *gid)
{
    struct passwd *pw = getpwnam(name);

    if (!pw) {
        return -1;
    }
    *uid = pw->pw_uid;
    *gid = pw->pw_gid;
    return 0;
}

static int do_probe(void)
{
    uid_t         alice_uid, bob_uid;
    gid_t         alice_gid, bob_gid;
    struct group *team = getgrnam("sfsteam");
    mode_t        mask = umask(0);

    umask(mask);
    if (!team || user_ids("sfsalice", &alice_uid, &alice_gid) != 0 ||
        user_ids("sfsbob", &bob_uid, &bob_gid) != 0) {
        fprintf(stderr, "probe: the users sfsalice, sfsbob and the group sfsteam must exist\n");
        return 2;
    }
    team_gid  = team->gr_gid;
    peer_uid  = geteuid() == bob_uid ? alice_uid : bob_uid;
    other_gid = getegid() == alice_gid ? bob_gid : alice_gid;
    printf("umask: %04o\n", (unsigned)mask);
    printf("in team: %s\n", group_member(team_gid) ? "yes" : "no");
    op_stat(".");
    for (size_t i = 0; i < COUNT(files); i++) {
        probe_file(&files[i]);
    }
    for (size_t i = 0; i < COUNT(sgid_files); i++) {
        char rel[64];

        snprintf(rel, sizeof(rel), "f/%s", sgid_files[i].name);
        op_chmod(rel, 02755);
    }
    for (size_t i = 0; i < COUNT(setid_chown_files); i++) {
        char rel[64];

        snprintf(rel, sizeof(rel), "f/%s", setid_chown_files[i].name);
        op_chown(rel, geteuid(), (gid_t)-1, "owner=self");
    }
    for (size_t i = 0; i < COUNT(setid_write_files); i++) {
        char rel[64];

        snprintf(rel, sizeof(rel), "f/%s", setid_write_files[i].name);
        op_open(rel, O_WRONLY, "O_WRONLY", 0, IO_WRITE, 1);
    }
    for (size_t i = 0; i < COUNT(dirs); i++) {
        probe_dir(&dirs[i]);
    }
    probe_nested();
    printf("operations: %d\n", op_count);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 3 && strcmp(argv[1], "setup") == 0) {
        if (strcmp(argv[2], "--as-owners") == 0) {
            as_owners = 1;
            argv++;
            argc--;
        }
        base = argv[2];
        return argc >= 3 ? do_setup(argc, argv) : 2;
    }
    if (argc == 3 && strcmp(argv[1], "probe") == 0) {
        base = argv[2];
        return do_probe();
    }
    fprintf(stderr,
            "usage: %s setup DIR [ALICE_UID BOB_UID TEAM_GID]\n"
            "       %s probe DIR\n",
            argv[0], argv[0]);
    return 2;
}
