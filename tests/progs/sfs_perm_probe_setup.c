/* sfs_perm_probe setup: builds the tree the probe runs on (as root). */
#include "sfs_perm_probe.h"

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
    for (size_t i = 0; i < files_count; i++) {
        const node_kind_t *k = &files[i];

        add_node(0, k->owner, k->group, k->mode, "f/%s", k->name);
        for (size_t c = 0; c < file_copies_count; c++) {
            add_node(0, k->owner, k->group, k->mode, "f/%s.%s", k->name, file_copies[c]);
        }
    }
    for (size_t i = 0; i < sgid_files_count; i++) {
        const node_kind_t *k = &sgid_files[i];

        add_node(0, k->owner, k->group, k->mode, "f/%s", k->name);
    }
    for (size_t i = 0; i < setid_chown_files_count; i++) {
        const node_kind_t *k = &setid_chown_files[i];

        add_node(0, k->owner, k->group, k->mode, "f/%s", k->name);
    }
    for (size_t i = 0; i < setid_write_files_count; i++) {
        const node_kind_t *k = &setid_write_files[i];

        add_node(0, k->owner, k->group, k->mode, "f/%s", k->name);
    }
    for (size_t i = 0; i < dirs_count; i++) {
        const node_kind_t *d = &dirs[i];

        add_node(1, d->owner, d->group, d->mode, "%s", d->name);
        for (size_t e = 0; e < dir_entries_count; e++) {
            const entry_kind_t *k = &dir_entries[e];

            add_node(k->is_dir, k->owner, k->group, k->mode, "%s/%s", d->name, k->name);
        }
        add_node(0, WHO_ALICE, GRP_ALICE, 0644, "from/%s.mvin", d->name);
    }
    for (size_t i = 0; i < nested_count; i++) {
        const entry_kind_t *k = &nested[i];

        add_node(k->is_dir, k->owner, k->group, k->mode, "%s", k->name);
    }
}

static int setup_failed;
int        as_owners; /* setup --as-owners */

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

int do_setup(int argc, char **argv)
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
