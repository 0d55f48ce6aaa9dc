/* sfs_perm_probe probe: the operations of the matrix, one line of output each. */
#include "sfs_perm_probe.h"

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

int do_probe(void)
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
    for (size_t i = 0; i < files_count; i++) {
        probe_file(&files[i]);
    }
    for (size_t i = 0; i < sgid_files_count; i++) {
        char rel[64];

        snprintf(rel, sizeof(rel), "f/%s", sgid_files[i].name);
        op_chmod(rel, 02755);
    }
    for (size_t i = 0; i < setid_chown_files_count; i++) {
        char rel[64];

        snprintf(rel, sizeof(rel), "f/%s", setid_chown_files[i].name);
        op_chown(rel, geteuid(), (gid_t)-1, "owner=self");
    }
    for (size_t i = 0; i < setid_write_files_count; i++) {
        char rel[64];

        snprintf(rel, sizeof(rel), "f/%s", setid_write_files[i].name);
        op_open(rel, O_WRONLY, "O_WRONLY", 0, IO_WRITE, 1);
    }
    for (size_t i = 0; i < dirs_count; i++) {
        probe_dir(&dirs[i]);
    }
    probe_nested();
    printf("operations: %d\n", op_count);
    return 0;
}
