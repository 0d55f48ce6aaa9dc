/*
 * sfs_posix_check: the libc entry points real clients use (IOR, mdtest,
 * HDF5's tools, coreutils) that open or remove by name, relative to a
 * directory descriptor or to the working directory: one script of calls run
 * in a stripefs directory and in a local one, every result compared with
 * what the kernel answered. Then what has no local twin: tmpfile, freopen,
 * and the status flags (O_SYNC, O_DSYNC, O_DIRECT) through F_GETFL/F_SETFL.
 */
#include "sfs_posix_check.h"

#define SCRIPT_MAX 128

/* The outcome of each step of one run of the script: 0 or a value it read
 * (a size, a mode, flags), or -errno. */
typedef struct script {
    const char *what[SCRIPT_MAX];
    long        result[SCRIPT_MAX];
    int         count;
} script_t;

static long step_result(long rc)
{
    return rc == -1 ? -(long)errno : rc;
}

/* Record one step; `rc` is the call's result (-1 means errno). */
#define STEP(_s, _what, _call)                                                                     \
    do {                                                                                           \
        long _rc;                                                                                  \
        errno = 0;                                                                                 \
        _rc   = (long)(_call);                                                                     \
        if ((_s)->count < SCRIPT_MAX) {                                                            \
            (_s)->what[(_s)->count]   = (_what);                                                   \
            (_s)->result[(_s)->count] = step_result(_rc);                                          \
            (_s)->count++;                                                                         \
        }                                                                                          \
    } while (0)

/* A step that opens: record success as 0 (descriptor numbers differ), and
 * keep the descriptor in *fd_p. */
static long opened(int fd, int *fd_p)
{
    *fd_p = fd;
    return fd >= 0 ? 0 : -1;
}

/* stat results that mean the same on every file system */
static long stat_size(int rc, const struct stat *st)
{
    return rc ? -1 : (long)st->st_size;
}

static long stat_mode(int rc, const struct stat *st)
{
    return rc ? -1 : (long)(st->st_mode & (S_IFMT | 07777));
}

/* The name made from a template keeps its suffix and loses its X's. */
static long temp_name_ok(int fd, const char *name, const char *suffix)
{
    size_t n = strlen(name), s = strlen(suffix);

    if (fd < 0) {
        return -1;
    }
    return (n >= s && strcmp(name + n - s, suffix) == 0 && !strstr(name, "XXXXXX")) ? 0 : -EINVAL;
}

/* The script, in directory `root` (fresh, empty). */
static void run_script(const char *root, script_t *s)
{
    static const struct timespec times[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1200000000}};
    char                         path[PATH_MAX], tmpl[PATH_MAX], line[32] = "";
    struct stat                  st;
    struct statx                 stx;
    int                          dfd = -1, fd = -1, here = open(".", O_RDONLY | O_DIRECTORY);
    FILE                        *stream;

#define AT(_name) (snprintf(path, sizeof(path), "%s/%s", root, (_name)), path)
    s->count = 0;
    STEP(s, "open root O_DIRECTORY", opened(open(root, O_RDONLY | O_DIRECTORY), &dfd));

    /* the *at calls with a directory descriptor */
    STEP(s, "mkdirat d", mkdirat(dfd, "d", 0750));
    STEP(s, "mkdirat d again", mkdirat(dfd, "d", 0750));
    STEP(s, "mkdirat in a missing dir", mkdirat(dfd, "none/d", 0750));
    STEP(s, "fstatat d: mode", stat_mode(fstatat(dfd, "d", &st, 0), &st));
    STEP(s, "openat d/f O_CREAT|O_EXCL",
         opened(openat(dfd, "d/f", O_WRONLY | O_CREAT | O_EXCL, 0640), &fd));
    STEP(s, "write 5 bytes", write(fd, "hello", 5));
    STEP(s, "close", close(fd));
    STEP(s, "openat d/f O_EXCL again",
         opened(openat(dfd, "d/f", O_WRONLY | O_CREAT | O_EXCL), &fd));
    STEP(s, "openat missing", opened(openat(dfd, "missing", O_RDONLY), &fd));
    STEP(s, "openat d/f/x (not a dir)", opened(openat(dfd, "d/f/x", O_RDONLY), &fd));
    STEP(s, "openat d/f O_DIRECTORY", opened(openat(dfd, "d/f", O_RDONLY | O_DIRECTORY), &fd));
    STEP(s, "openat .. of d", opened(openat(dfd, "d/..", O_RDONLY | O_DIRECTORY), &fd));
    STEP(s, "close ..", close(fd));
    STEP(s, "faccessat R_OK", faccessat(dfd, "d/f", R_OK, 0));
    STEP(s, "faccessat W_OK AT_EACCESS", faccessat(dfd, "d/f", W_OK, AT_EACCESS));
    STEP(s, "faccessat X_OK of 0640", faccessat(dfd, "d/f", X_OK, 0));
    STEP(s, "faccessat missing", faccessat(dfd, "nope", F_OK, 0));
    STEP(s, "faccessat bad flags", faccessat(dfd, "d/f", F_OK, 0x4000000));
    STEP(s, "fstatat d/f: size", stat_size(fstatat(dfd, "d/f", &st, 0), &st));
    STEP(s, "fstatat d/f: mode", stat_mode(fstatat(dfd, "d/f", &st, AT_SYMLINK_NOFOLLOW), &st));
    STEP(s, "fstatat missing", fstatat(dfd, "d/none", &st, 0));
    STEP(s, "statx d/f: size",
         statx(dfd, "d/f", AT_SYMLINK_NOFOLLOW, STATX_SIZE, &stx) ? -1 : (long)stx.stx_size);
    STEP(s, "fchmodat d/f 0600", fchmodat(dfd, "d/f", 0600, 0));
    STEP(s, "fstatat after fchmodat", stat_mode(fstatat(dfd, "d/f", &st, 0), &st));
    STEP(s, "fchmodat missing", fchmodat(dfd, "d/none", 0600, 0));
    STEP(s, "utimensat d/f", utimensat(dfd, "d/f", times, 0));
    STEP(s, "mtime after utimensat", fstatat(dfd, "d/f", &st, 0) ? -1 : (long)st.st_mtim.tv_sec);
    STEP(s, "utimensat AT_SYMLINK_NOFOLLOW", utimensat(dfd, "d/f", times, AT_SYMLINK_NOFOLLOW));
    STEP(s, "utimensat missing", utimensat(dfd, "d/none", times, 0));
    STEP(s, "renameat d/f d/g", renameat(dfd, "d/f", dfd, "d/g"));
    STEP(s, "fstatat d/f after rename", fstatat(dfd, "d/f", &st, 0));
    STEP(s, "renameat2 NOREPLACE to free", renameat2(dfd, "d/g", dfd, "d/h", RENAME_NOREPLACE));
    STEP(s, "mkdirat e", mkdirat(dfd, "e", 0755));
    STEP(s, "renameat2 NOREPLACE onto e", renameat2(dfd, "d/h", dfd, "e", RENAME_NOREPLACE));
    STEP(s, "renameat file onto dir", renameat(dfd, "d/h", dfd, "e"));
    STEP(s, "renameat missing", renameat(dfd, "d/none", dfd, "d/x"));
    STEP(s, "unlinkat dir without AT_REMOVEDIR", unlinkat(dfd, "d", 0));
    STEP(s, "unlinkat file with AT_REMOVEDIR", unlinkat(dfd, "d/h", AT_REMOVEDIR));
    STEP(s, "unlinkat non-empty dir", unlinkat(dfd, "d", AT_REMOVEDIR));
    STEP(s, "unlinkat bad flags", unlinkat(dfd, "d/h", 0x4000000));
    STEP(s, "unlinkat d/h", unlinkat(dfd, "d/h", 0));
    STEP(s, "unlinkat d", unlinkat(dfd, "d", AT_REMOVEDIR));
    STEP(s, "unlinkat d again", unlinkat(dfd, "d", AT_REMOVEDIR));
    STEP(s, "unlinkat e", unlinkat(dfd, "e", AT_REMOVEDIR));

    /* remove(3): glibc's calls its internal unlink/rmdir */
    STEP(s, "put r-file", put_file(AT("r-file"), "x", 1));
    STEP(s, "remove a file", remove(AT("r-file")));
    STEP(s, "the file is gone", access(AT("r-file"), F_OK));
    STEP(s, "mkdir r-dir", mkdir(AT("r-dir"), 0755));
    STEP(s, "remove an empty dir", remove(AT("r-dir")));
    STEP(s, "the dir is gone", access(AT("r-dir"), F_OK));
    STEP(s, "mkdir r-full", mkdir(AT("r-full"), 0755));
    STEP(s, "put r-full/x", put_file(AT("r-full/x"), "", 0));
    STEP(s, "remove a non-empty dir", remove(AT("r-full")));
    STEP(s, "remove a missing name", remove(AT("r-missing")));
    STEP(s, "remove below a file", remove(AT("r-full/x/y")));
    STEP(s, "remove r-full/x", remove(AT("r-full/x")));
    STEP(s, "remove r-full", remove(AT("r-full")));

    /* fopen64 */
    stream = fopen64(AT("f64"), "w+");
    STEP(s, "fopen64 w+", stream ? 0 : -1);
    STEP(s, "fputs + rewind + fgets",
         stream && fputs("sixty-four\n", stream) >= 0 && fseeko64(stream, 0, SEEK_SET) == 0 &&
                 fgets(line, sizeof(line), stream) && strcmp(line, "sixty-four\n") == 0
             ? 0
             : -1);
    STEP(s, "fclose", stream ? fclose(stream) : -1);
    STEP(s, "fopen64 r of a missing name", fopen64(AT("f64-none"), "r") ? 0 : -1);
    STEP(s, "remove f64", remove(AT("f64")));

    /* the mkstemp family: suffixes and flags */
    snprintf(tmpl, sizeof(tmpl), "%s/ms-XXXXXX.suf", root);
    fd = mkstemps(tmpl, 4);
    STEP(s, "mkstemps: name", temp_name_ok(fd, tmpl, ".suf"));
    STEP(s, "mkstemps: mode", stat_mode(fstat(fd, &st), &st));
    STEP(s, "unlink + close", unlink(tmpl) | close(fd));
    snprintf(tmpl, sizeof(tmpl), "%s/mo-XXXXXX", root);
    fd = mkostemp(tmpl, O_CLOEXEC | O_APPEND);
    STEP(s, "mkostemp: name", temp_name_ok(fd, tmpl, ""));
    STEP(s, "mkostemp O_CLOEXEC: F_GETFD", fcntl(fd, F_GETFD));
    STEP(s, "mkostemp O_APPEND: F_GETFL", fcntl(fd, F_GETFL) & (O_ACCMODE | O_APPEND));
    STEP(s, "unlink + close", unlink(tmpl) | close(fd));
    snprintf(tmpl, sizeof(tmpl), "%s/mos-XXXXXX.h5", root);
    fd = mkostemps(tmpl, 3, O_CLOEXEC | O_SYNC);
    STEP(s, "mkostemps: name", temp_name_ok(fd, tmpl, ".h5"));
    STEP(s, "mkostemps O_CLOEXEC: F_GETFD", fcntl(fd, F_GETFD));
    STEP(s, "mkostemps O_SYNC: F_GETFL", fcntl(fd, F_GETFL) & (O_ACCMODE | O_SYNC));
    STEP(s, "mkostemps: mode", stat_mode(fstat(fd, &st), &st));
    STEP(s, "write to it", write(fd, "abc", 3));
    STEP(s, "remove + close", remove(tmpl) | close(fd));
    snprintf(tmpl, sizeof(tmpl), "%s/bad-XXXXX.h5", root);
    STEP(s, "mkostemps with 5 X's", mkostemps(tmpl, 3, 0));

    /* AT_FDCWD and plain relative names after chdir into the directory */
    STEP(s, "chdir root", chdir(root));
    STEP(s, "openat AT_FDCWD relative",
         opened(openat(AT_FDCWD, "cwd-f", O_WRONLY | O_CREAT | O_EXCL, 0644), &fd));
    STEP(s, "close", close(fd));
    STEP(s, "mkdirat AT_FDCWD", mkdirat(AT_FDCWD, "cwd-d", 0755));
    STEP(s, "faccessat AT_FDCWD", faccessat(AT_FDCWD, "cwd-f", W_OK, 0));
    STEP(s, "fstatat AT_FDCWD: mode", stat_mode(fstatat(AT_FDCWD, "cwd-f", &st, 0), &st));
    STEP(s, "fchmodat AT_FDCWD", fchmodat(AT_FDCWD, "cwd-f", 0604, 0));
    STEP(s, "utimensat AT_FDCWD", utimensat(AT_FDCWD, "cwd-f", times, 0));
    STEP(s, "renameat AT_FDCWD", renameat(AT_FDCWD, "cwd-f", AT_FDCWD, "cwd-d/g"));
    STEP(s, "stat moved: mode", stat_mode(stat("cwd-d/g", &st), &st));
    STEP(s, "remove relative", remove("cwd-d/g"));
    snprintf(tmpl, sizeof(tmpl), "rel-XXXXXX");
    fd = mkstemp(tmpl);
    STEP(s, "mkstemp relative: name", temp_name_ok(fd, tmpl, ""));
    STEP(s, "mkstemp relative: mode", stat_mode(fstat(fd, &st), &st));
    STEP(s, "remove it + close", remove(tmpl) | close(fd));
    snprintf(tmpl, sizeof(tmpl), "reld-XXXXXX");
    STEP(s, "mkdtemp relative", mkdtemp(tmpl) ? 0 : -1);
    STEP(s, "mkdtemp relative: mode", stat_mode(stat(tmpl, &st), &st));
    STEP(s, "remove it", remove(tmpl));
    STEP(s, "unlinkat AT_FDCWD AT_REMOVEDIR", unlinkat(AT_FDCWD, "cwd-d", AT_REMOVEDIR));
    STEP(s, "chdir back", here >= 0 ? fchdir(here) : -1);
    STEP(s, "the root is empty again", rmdir(root) == 0 ? mkdir(root, 0755) : -1);
#undef AT
    if (here >= 0) {
        close(here);
    }
    if (dfd >= 0) {
        close(dfd);
    }
}

/* Entries of a directory, "." and ".." left out. */
static int entries(const char *dir)
{
    DIR           *stream = opendir(dir);
    struct dirent *entry;
    int            n = 0;

    while (stream && (entry = readdir(stream))) {
        n += strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0;
    }
    if (stream) {
        closedir(stream);
    }
    return stream ? n : -1;
}

/* tmpfile makes its file in P_tmpdir (/tmp) whatever the working
 * directory: a local file, with the working directory in stripefs too. */
static void check_tmpfile(void)
{
    int           here = open(".", O_RDONLY | O_DIRECTORY);
    struct statfs fs;
    char          line[16] = "";
    FILE         *stream;

    CHECK(mkdir(P("tmpf"), 0755) == 0 && chdir(P("tmpf")) == 0, "chdir into %s", P("tmpf"));
    stream = tmpfile();
    CHECK(stream && fputs("temp\n", stream) >= 0 && fseek(stream, 0, SEEK_SET) == 0 &&
              fgets(line, sizeof(line), stream) && strcmp(line, "temp\n") == 0,
          "tmpfile with the working directory in stripefs: write and read back");
    CHECK(stream && fstatfs(fileno(stream), &fs) == 0 && fs.f_type != SFS_MAGIC &&
              entries(P("tmpf")) == 0,
          "tmpfile is a local file (P_tmpdir %s), nothing in stripefs", P_tmpdir);
    if (stream) {
        fclose(stream);
    }
    CHECK(here >= 0 && fchdir(here) == 0, "back to the local working directory");
    if (here >= 0) {
        close(here);
    }
}

/* freopen cannot make glibc's FILE write to stripefs: it must fail without
 * closing the stream (libc alone closed it and said ENOENT). */
static void check_freopen(void)
{
    FILE *stream = fopen(L("freopen"), "w");
    char  buf[16];
    int   fd;

    CHECK(stream != NULL, "fopen %s", L("freopen"));
    if (!stream) {
        return;
    }
    errno = 0;
    CHECK(freopen(P("freopen"), "w", stream) == NULL && errno == EOPNOTSUPP,
          "freopen onto a stripefs name fails with EOPNOTSUPP (%s)", strerrorname_np(errno));
    CHECK(fputs("still\n", stream) >= 0 && fclose(stream) == 0,
          "the stream is still open and usable");
    fd = open(L("freopen"), O_RDONLY);
    CHECK(fd >= 0 && read(fd, buf, sizeof(buf)) == 6 && memcmp(buf, "still\n", 6) == 0,
          "what was written after the refused freopen is in the local file");
    close(fd);
    CHECK(access(P("freopen"), F_OK) == -1 && errno == ENOENT, "no stripefs file was made");
}

void check_libc_entries(void)
{
    static script_t ours, kernel;
    char            roots[2][PATH_MAX];
    mode_t          saved = umask(022);
    int             same  = 0;

    snprintf(roots[0], sizeof(roots[0]), "%s", P("libc"));
    snprintf(roots[1], sizeof(roots[1]), "%s", L("libc"));
    CHECK(mkdir(roots[0], 0755) == 0, "mkdir %s: %m", roots[0]);
    CHECK(mkdir(roots[1], 0755) == 0 || errno == EEXIST, "mkdir %s: %m", roots[1]);
    run_script(roots[0], &ours);
    run_script(roots[1], &kernel);
    CHECK(ours.count == kernel.count && ours.count < SCRIPT_MAX, "%d steps run on both",
          ours.count);
    for (int i = 0; i < ours.count && i < kernel.count; i++) {
        if (ours.result[i] == kernel.result[i]) {
            same++;
            continue;
        }
        CHECK(0, "step %d, %s: stripefs %ld (%s), kernel %ld (%s)", i, ours.what[i], ours.result[i],
              ours.result[i] < 0 ? strerrorname_np((int)-ours.result[i]) : "", kernel.result[i],
              kernel.result[i] < 0 ? strerrorname_np((int)-kernel.result[i]) : "");
    }
    CHECK(same == kernel.count, "%d of %d *at/remove/fopen64/mkstemp-family steps as the kernel's",
          same, kernel.count);
    umask(saved);
    check_tmpfile();
    check_freopen();
}

/* The status flags F_GETFL reports, and which F_SETFL changes: as the
 * kernel does for the same opens on the local directory. */
#define STATUS_MASK (O_ACCMODE | O_APPEND | O_NONBLOCK | O_SYNC | O_DSYNC | O_DIRECT)

static int getfl(int fd)
{
    int flags = fcntl(fd, F_GETFL);

    return flags < 0 ? -errno : flags & STATUS_MASK;
}

static void check_flags_as_kernel(void)
{
    static const int opens[] = {
        O_RDWR,
        O_WRONLY | O_SYNC,
        O_RDWR | O_DSYNC,
        O_RDONLY | O_DIRECT,
        O_RDWR | O_SYNC | O_DIRECT,
        O_WRONLY | O_DSYNC | O_APPEND | O_NONBLOCK,
    };
    static const int setfl[] = {O_DIRECT, O_SYNC, O_DSYNC, O_APPEND | O_DIRECT, 0};
    int              bad = 0, steps = 0;

    for (size_t i = 0; i < sizeof(opens) / sizeof(opens[0]); i++) {
        int fd[2], got[2];

        fd[0] = open(P("flags"), opens[i] | O_CREAT, 0644);
        fd[1] = open(L("flags"), opens[i] | O_CREAT, 0644);
        for (int side = 0; side < 2; side++) {
            got[side] = fd[side] < 0 ? -errno : getfl(fd[side]);
        }
        steps++;
        if (got[0] != got[1]) {
            bad++;
            CHECK(0, "open %#x: F_GETFL stripefs %#x, kernel %#x", opens[i], got[0], got[1]);
        }
        for (size_t k = 0; k < sizeof(setfl) / sizeof(setfl[0]) && fd[0] >= 0 && fd[1] >= 0; k++) {
            for (int side = 0; side < 2; side++) {
                got[side] = fcntl(fd[side], F_SETFL, setfl[k]) < 0 ? -errno : getfl(fd[side]);
            }
            steps++;
            if (got[0] != got[1]) {
                bad++;
                CHECK(0, "open %#x, F_SETFL %#x: F_GETFL stripefs %#x, kernel %#x", opens[i],
                      setfl[k], got[0], got[1]);
            }
        }
        for (int side = 0; side < 2; side++) {
            if (fd[side] >= 0) {
                close(fd[side]);
            }
        }
    }
    CHECK(bad == 0, "F_GETFL after %d opens and F_SETFL changes is the kernel's", steps);
}

void check_status_flags(void)
{
    char buf[8] = "";
    int  fd, copy;

    check_flags_as_kernel();
    /* O_DIRECT asks for no alignment here: there is no cache to bypass */
    fd = open(P("direct"), O_RDWR | O_CREAT | O_DIRECT, 0644);
    CHECK(fd >= 0 && pwrite(fd, "12345", 5, 3) == 5 && pread(fd, buf, 5, 3) == 5 &&
              memcmp(buf, "12345", 5) == 0,
          "O_DIRECT: 5 bytes at offset 3 written and read back");
    /* dup copies share the open file description, and its flags */
    copy = dup(fd);
    CHECK(fcntl(fd, F_SETFL, 0) == 0 && !(fcntl(copy, F_GETFL) & O_DIRECT),
          "F_SETFL on one descriptor is seen through its dup");
    close(copy);
    close(fd);
    fd = open(P("sync"), O_WRONLY | O_CREAT | O_SYNC | O_APPEND, 0644);
    CHECK(fd >= 0 && write(fd, "ab", 2) == 2 && write(fd, "cd", 2) == 2 && close(fd) == 0 &&
              size_of(P("sync")) == 4,
          "O_SYNC|O_APPEND writes land (durability: tests/client)");
    fd = open(P("dsync"), O_RDWR | O_CREAT | O_DSYNC, 0644);
    CHECK(fd >= 0 && pwrite(fd, "xyz", 3, 0) == 3 && pread(fd, buf, 3, 0) == 3 &&
              memcmp(buf, "xyz", 3) == 0 && close(fd) == 0,
          "O_DSYNC: write and read back");
}
