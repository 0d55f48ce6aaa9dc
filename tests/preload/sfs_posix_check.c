/*
 * POSIX calls on stripefs paths, run under LD_PRELOAD=libstripefs-posix.so
 * against a live service: every interposed call, with exact errno values.
 * It does not link the client library: all it knows is POSIX.
 *
 *   sfs_posix_check all BASE LOCALDIR   every check below; BASE is a fresh
 *                                       stripefs directory name (e.g.
 *                                       /stripefs/posix), LOCALDIR a local
 *                                       scratch directory
 *   sfs_posix_check readdir BASE N      readdir of a directory of N files
 *
 * Prints "ok: ..." or "FAILED: ..." per check; exits 0 only if all passed.
 */
#include "sfs_posix_check.h"

int  failures;
char base[1024];
char local[1024];

static void check_open_errors(void)
{
    int fd;

    CHECK(mkdir(base, 0755) == 0, "mkdir %s: %m", base);
    CHECK_ERRNO(mkdir(base, 0755), EEXIST);
    CHECK_ERRNO(open(P("missing"), O_RDONLY), ENOENT);
    CHECK_ERRNO(open(P("nodir/file"), O_RDWR | O_CREAT, 0644), ENOENT);
    fd = open(P("f"), O_RDWR | O_CREAT | O_EXCL, 0644);
    CHECK(fd >= 0, "create %s with O_EXCL: %m", P("f"));
    CHECK(close(fd) == 0, "close");
    CHECK_ERRNO(open(P("f"), O_RDWR | O_CREAT | O_EXCL, 0644), EEXIST);
    CHECK_ERRNO(open(P("f/sub"), O_RDONLY), ENOTDIR);
    CHECK_ERRNO(open(P("f"), O_RDONLY | O_DIRECTORY), ENOTDIR);
    CHECK_ERRNO(mkdir(P("f/sub"), 0755), ENOTDIR);
    CHECK(mkdir(P("d"), 0755) == 0, "mkdir d: %m");
    CHECK_ERRNO(open(P("d"), O_WRONLY), EISDIR);
    CHECK_ERRNO(open(P("d"), O_RDWR | O_CREAT, 0644), EISDIR);
    CHECK_ERRNO(open(P("d"), O_WRONLY | O_CREAT | O_EXCL, 0644), EEXIST);
    CHECK_ERRNO(open(P("f"), O_ACCMODE), EINVAL);
    CHECK_ERRNO(creat(P("d"), 0644), EISDIR);
    fd = creat(P("c"), 0600);
    CHECK(fd >= 0, "creat: %m");
    CHECK_ERRNO(read(fd, (char[4]){0}, 4), EBADF);
    CHECK(close(fd) == 0, "close creat fd");
    CHECK_ERRNO(close(fd), EBADF);
    CHECK_ERRNO(read(fd, (char[4]){0}, 4), EBADF);
    CHECK_ERRNO(write(fd, "x", 1), EBADF);
    CHECK_ERRNO(lseek(fd, 0, SEEK_SET), EBADF);
    fd = open("stripefs:", O_RDONLY | O_DIRECTORY);
    CHECK(fd >= 0, "open(\"stripefs:\") is the root directory: %m");
    close(fd);
}

static void check_io(void)
{
    const size_t   big = 20u << 20; /* spans chunks on every target */
    unsigned char *out = malloc(big), *in = malloc(big);
    unsigned char  small[64];
    int            fd;
    ssize_t        n;

    fill(out, big, 7);
    fd = open(P("io"), O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0, "open io: %m");
    n = write(fd, out, big);
    CHECK(n == (ssize_t)big, "one 20 MiB write returns %zd", n);
    CHECK(lseek(fd, 0, SEEK_CUR) == (off_t)big, "offset after write");
    CHECK(lseek(fd, 0, SEEK_SET) == 0, "rewind");
    memset(in, 0, big);
    n = read(fd, in, big);
    CHECK(n == (ssize_t)big && memcmp(in, out, big) == 0, "one 20 MiB read returns it (%zd)", n);
    CHECK(read(fd, small, sizeof(small)) == 0, "read at end of file returns 0");
    n = pread(fd, small, sizeof(small), 524288 - 10);
    CHECK(n == 64 && memcmp(small, out + 524288 - 10, 64) == 0, "pread across a chunk border");
    CHECK(lseek(fd, 0, SEEK_CUR) == (off_t)big, "pread leaves the offset alone");
    memset(small, 'p', sizeof(small));
    CHECK(pwrite(fd, small, 64, 1000) == 64, "pwrite");
    memcpy(out + 1000, small, 64);
    CHECK(pread(fd, in, 2000, 0) == 2000 && memcmp(in, out, 2000) == 0, "pwrite landed");
    CHECK(lseek(fd, -10, SEEK_END) == (off_t)big - 10, "lseek SEEK_END -10");
    CHECK(lseek(fd, 4, SEEK_CUR) == (off_t)big - 6, "lseek SEEK_CUR +4");
    CHECK(read(fd, in, 100) == 6, "short read at the end");
    CHECK_ERRNO(lseek(fd, -1, SEEK_SET), EINVAL);
    CHECK_ERRNO(lseek(fd, 0, 42), EINVAL);
    CHECK(lseek(fd, 5, SEEK_DATA) == 5 && lseek(fd, 5, SEEK_HOLE) == (off_t)big,
          "SEEK_DATA/SEEK_HOLE: all data up to the size");
    CHECK_ERRNO(lseek(fd, (off_t)big, SEEK_DATA), ENXIO);
    CHECK_ERRNO(pread(fd, in, 1, -1), EINVAL);
    CHECK(fsync(fd) == 0 && fdatasync(fd) == 0, "fsync, fdatasync");
    CHECK(close(fd) == 0, "close");
    CHECK(size_of(P("io")) == (off_t)big, "stat size %lld", (long long)size_of(P("io")));

    /* access modes */
    fd = open(P("io"), O_RDONLY);
    CHECK_ERRNO(write(fd, "x", 1), EBADF);
    CHECK_ERRNO(ftruncate(fd, 0), EINVAL);
    close(fd);
    fd = open(P("io"), O_WRONLY);
    CHECK_ERRNO(read(fd, in, 1), EBADF);
    close(fd);
    fd = open(P("io"), O_RDWR | O_TRUNC);
    CHECK(fd >= 0 && size_of(P("io")) == 0, "O_TRUNC empties the file");
    close(fd);

    /* sparse: a hole reads as zeros, past the end reads nothing */
    fd = open(P("sparse"), O_RDWR | O_CREAT, 0644);
    CHECK(pwrite(fd, "z", 1, 10 << 20) == 1, "pwrite one byte at 10 MiB");
    CHECK(size_of(P("sparse")) == (10 << 20) + 1, "sparse size 10 MiB + 1");
    memset(in, 0xEE, 4096);
    n = pread(fd, in, 4096, 5 << 20);
    CHECK(n == 4096 && in[0] == 0 && in[4095] == 0, "the hole reads as zeros");
    CHECK(pread(fd, in, 4096, 20 << 20) == 0, "pread beyond EOF returns 0 bytes");
    CHECK(pread(fd, in, 4096, (10 << 20)) == 1 && in[0] == 'z', "pread at the last byte");
    close(fd);

    /* O_APPEND: every write goes to the current end */
    fd = open(P("append"), O_WRONLY | O_CREAT | O_APPEND, 0644);
    CHECK(write(fd, "abc", 3) == 3, "append 1");
    CHECK(lseek(fd, 0, SEEK_SET) == 0, "seek to 0");
    CHECK(write(fd, "def", 3) == 3, "append 2 after seeking to 0");
    close(fd);
    fd = open(P("append"), O_RDONLY);
    n  = read(fd, in, 100);
    CHECK(n == 6 && memcmp(in, "abcdef", 6) == 0, "O_APPEND writes went to the end");
    close(fd);

    /* vector I/O */
    {
        char         a[5] = "AAAAA", b[3] = "BBB", c[7] = "CCCCCCC";
        char         x[5], y[3], z[7];
        struct iovec wv[3] = {{a, 5}, {b, 3}, {c, 7}};
        struct iovec rv[3] = {{x, 5}, {y, 3}, {z, 7}};

        fd = open(P("vec"), O_RDWR | O_CREAT | O_TRUNC, 0644);
        CHECK(writev(fd, wv, 3) == 15, "writev 3 pieces");
        CHECK(pwritev(fd, wv, 2, 100) == 8, "pwritev at 100");
        CHECK(lseek(fd, 0, SEEK_SET) == 0, "rewind");
        CHECK(readv(fd, rv, 3) == 15 && !memcmp(x, a, 5) && !memcmp(y, b, 3) && !memcmp(z, c, 7),
              "readv gets them back");
        memset(x, 0, 5);
        CHECK(preadv(fd, rv, 2, 100) == 8 && !memcmp(x, a, 5), "preadv at 100");
        CHECK(preadv(fd, rv, 3, 105) == 3, "preadv stops at the end");
        close(fd);
    }
    free(out);
    free(in);
}

static void check_dup_fcntl(void)
{
    int  fd = open(P("dup"), O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 0644);
    int  copy, high, flags;
    char buf[16];

    CHECK(fd >= 0, "open dup: %m");
    flags = fcntl(fd, F_GETFL);
    CHECK((flags & O_ACCMODE) == O_RDWR && (flags & O_APPEND), "F_GETFL: O_RDWR|O_APPEND (%#x)",
          flags);
    CHECK(fcntl(fd, F_SETFL, flags & ~O_APPEND) == 0 && !(fcntl(fd, F_GETFL) & O_APPEND),
          "F_SETFL clears O_APPEND");
    CHECK(fcntl(fd, F_GETFD) == 0, "F_GETFD: no close-on-exec");
    CHECK(fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 && fcntl(fd, F_GETFD) == FD_CLOEXEC,
          "F_SETFD close-on-exec");
    copy = dup(fd);
    CHECK(copy >= 0 && copy != fd, "dup -> %d", copy);
    CHECK(write(fd, "0123", 4) == 4 && lseek(copy, 0, SEEK_CUR) == 4, "dup shares the file offset");
    high = dup2(fd, 200);
    CHECK(high == 200, "dup2 to 200");
    CHECK(fcntl(high, F_GETFD) == 0, "dup2's copy has no close-on-exec");
    CHECK(write(high, "4567", 4) == 4, "write through the dup2 copy");
    CHECK(close(fd) == 0 && close(copy) == 0, "close the originals");
    CHECK(pread(high, buf, 8, 0) == 8 && memcmp(buf, "01234567", 8) == 0,
          "the copy outlives the originals");
    copy = fcntl(high, F_DUPFD_CLOEXEC, 300);
    CHECK(copy >= 300 && fcntl(copy, F_GETFD) == FD_CLOEXEC, "F_DUPFD_CLOEXEC >= 300 -> %d", copy);
    CHECK(dup2(high, high) == high, "dup2(fd, fd)");
    CHECK_ERRNO(dup3(high, high, 0), EINVAL);
    {
        struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET};

        CHECK_ERRNO(fcntl(high, F_SETLK, &lock), ENOLCK);
    }
    CHECK_ERRNO(flock(high, LOCK_EX), ENOSYS);
    CHECK_ERRNO(ioctl(high, FIONREAD, &(int){0}), ENOTTY);
    /* ENODEV from the preload; EBADF from the placeholder descriptor when
     * UCX's memory hooks (UCX_MEM_EVENTS) sent the call straight to libc */
    CHECK(mmap(NULL, 4096, PROT_READ, MAP_SHARED, high, 0) == MAP_FAILED &&
              (errno == ENODEV || errno == EBADF),
          "mmap of a stripefs file fails (%s)", strerrorname_np(errno));
    CHECK(posix_fadvise(high, 0, 0, POSIX_FADV_SEQUENTIAL) == 0, "posix_fadvise is accepted");
    CHECK(posix_fallocate(high, 0, 1 << 20) == 0 && size_of(P("dup")) == 1 << 20,
          "posix_fallocate extends to 1 MiB");
    {
        /* a local file dup2'ed over one of ours replaces it */
        int lfd = open(L("over"), O_RDWR | O_CREAT | O_TRUNC, 0644);

        CHECK(dup2(lfd, copy) == copy && write(copy, "local", 5) == 5 && size_of(L("over")) == 5,
              "dup2 of a local fd over a stripefs fd makes it local");
        close(lfd);
    }
    CHECK(close(high) == 0 && close(copy) == 0, "close the copies");
    CHECK_ERRNO(fcntl(high, F_GETFD), EBADF);
}

static void check_stat(void)
{
    struct stat    st;
    struct statx   stx;
    struct statfs  fs;
    struct statvfs vfs;
    int            fd;
    int (*xstat)(int, const char *, struct stat *) =
        (int (*)(int, const char *, struct stat *))dlsym(RTLD_DEFAULT, "__xstat");

    CHECK(put_file(P("st"), "hello", 5) == 0, "write st");
    CHECK(stat(P("st"), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 5 &&
              (st.st_mode & 0777) == 0644 && st.st_nlink >= 1 && st.st_blksize > 0,
          "stat: regular, 5 bytes, 0644 (mode %o)", st.st_mode);
    CHECK(lstat(P("st"), &st) == 0 && st.st_size == 5, "lstat");
    CHECK(stat(P("d"), &st) == 0 && S_ISDIR(st.st_mode), "stat of a directory");
    CHECK_ERRNO(stat(P("nope"), &st), ENOENT);
    CHECK_ERRNO(stat(P("st/x"), &st), ENOTDIR);
    fd = open(P("st"), O_RDONLY);
    CHECK(fstat(fd, &st) == 0 && st.st_size == 5 && S_ISREG(st.st_mode), "fstat");
    CHECK(fstatat(fd, "", &st, AT_EMPTY_PATH) == 0 && st.st_size == 5, "fstatat AT_EMPTY_PATH");
    close(fd);
    CHECK(fstatat(AT_FDCWD, P("st"), &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_size == 5,
          "fstatat AT_FDCWD");
    CHECK(statx(AT_FDCWD, P("st"), 0, STATX_BASIC_STATS, &stx) == 0 && stx.stx_size == 5 &&
              S_ISREG(stx.stx_mode) && (stx.stx_mask & STATX_SIZE),
          "statx with size");
    CHECK(statx(AT_FDCWD, P("d"), 0, STATX_TYPE | STATX_MODE, &stx) == 0 && S_ISDIR(stx.stx_mode),
          "statx type only");
    CHECK(xstat && xstat(1, P("st"), &st) == 0 && st.st_size == 5,
          "__xstat (what pre-2.33 binaries call)");
    CHECK(stat("stripefs:/", &st) == 0 && S_ISDIR(st.st_mode), "stat(\"stripefs:/\")");
    CHECK(statfs(base, &fs) == 0 && fs.f_type == SFS_MAGIC && fs.f_blocks > 0,
          "statfs: f_type 0x%lx, %lu blocks", (unsigned long)fs.f_type, (unsigned long)fs.f_blocks);
    CHECK(statvfs(base, &vfs) == 0 && vfs.f_namemax == 255 && vfs.f_bavail <= vfs.f_blocks,
          "statvfs");
    fd = open(P("st"), O_RDONLY);
    CHECK(fstatfs(fd, &fs) == 0 && fs.f_type == SFS_MAGIC, "fstatfs");
    CHECK(fstatvfs(fd, &vfs) == 0 && vfs.f_namemax == 255, "fstatvfs");
    CHECK_ERRNO(fgetxattr(fd, "user.x", NULL, 0), ENOTSUP);
    close(fd);
    CHECK_ERRNO(statfs(P("nope"), &fs), ENOENT);
    CHECK(access(P("st"), F_OK) == 0 && access(P("st"), R_OK | W_OK) == 0, "access F_OK, R|W");
    CHECK_ERRNO(access(P("nope"), F_OK), ENOENT);
    CHECK_ERRNO(access(P("st"), X_OK), EACCES);
    CHECK(faccessat(AT_FDCWD, P("d"), X_OK, AT_EACCESS) == 0, "faccessat X_OK on a directory");
    CHECK_ERRNO(readlink(P("st"), (char[64]){0}, 64), EINVAL);
    CHECK_ERRNO(getxattr(P("st"), "user.x", NULL, 0), ENOTSUP);
    CHECK_ERRNO(getxattr(P("nope"), "user.x", NULL, 0), ENOENT);
    {
        char  resolved[PATH_MAX];
        char *r = realpath(P("d/../st"), resolved);

        CHECK(r && strcmp(r, P("st")) == 0, "realpath %s -> %s", P("d/../st"), r ? r : "NULL");
    }
}

/* st of path: uid and gid as expected? */
static int owned_by(const char *path, uid_t uid, gid_t gid)
{
    struct stat st;

    return stat(path, &st) == 0 && st.st_uid == uid && st.st_gid == gid;
}

/* Is t within a few seconds of now? */
static int is_now(const struct timespec *t)
{
    time_t now = time(NULL);

    return t->tv_sec >= now - 5 && t->tv_sec <= now + 5;
}

/* chown reaches the server (root on the one-host service may give a file
 * away; -1 keeps an id), and times set to now (UTIME_NOW, NULL times) or
 * left alone (UTIME_OMIT). */
static void check_owner_and_now(void)
{
    struct timespec old[2] = {{.tv_sec = 1100000000}, {.tv_sec = 1150000000}};
    struct timespec ts[2];
    struct stat     st;
    uid_t           me       = geteuid();
    gid_t           my_group = getegid();
    int             fd, local_rc, local_errno, rc;

    CHECK(chown(P("st"), (uid_t)-1, (gid_t)-1) == 0 && owned_by(P("st"), me, my_group),
          "chown -1 -1 changes nothing");
    if (me == 0) {
        CHECK(chown(P("st"), 1234, 5678) == 0 && owned_by(P("st"), 1234, 5678),
              "chown 1234:5678 as root: stat shows 1234/5678");
        CHECK(chown(P("st"), (uid_t)-1, 4321) == 0 && owned_by(P("st"), 1234, 4321),
              "chown -1:4321 keeps the owner 1234 (the server must keep SFS_ID_UNCHANGED)");
        CHECK(chown(P("st"), 2345, (gid_t)-1) == 0 && owned_by(P("st"), 2345, 4321),
              "chown 2345:-1 keeps the group 4321 (the server must keep SFS_ID_UNCHANGED)");
        CHECK(lchown(P("st"), 3456, 6543) == 0 && owned_by(P("st"), 3456, 6543), "lchown");
        CHECK(fchownat(AT_FDCWD, P("st"), 4567, 7654, 0) == 0 && owned_by(P("st"), 4567, 7654),
              "fchownat");
        fd = open(P("st"), O_RDONLY);
        CHECK(fchown(fd, 5678, 8765) == 0 && owned_by(P("st"), 5678, 8765), "fchown");
        CHECK(fchownat(fd, "", 6789, 9876, AT_EMPTY_PATH) == 0 && owned_by(P("st"), 6789, 9876),
              "fchownat AT_EMPTY_PATH");
        close(fd);
        CHECK(chown(P("st"), me, my_group) == 0 && owned_by(P("st"), me, my_group),
              "chown back to %u:%u", (unsigned)me, (unsigned)my_group);
    } else {
        printf("ok: (not root: chown to other ids is the server's to refuse, not checked)\n");
    }

    /* times: now, omitted, both */
    CHECK(utimensat(AT_FDCWD, P("st"), old, 0) == 0, "utimensat to 2004/2006");
    ts[0].tv_nsec = UTIME_NOW;
    ts[1].tv_nsec = UTIME_OMIT;
    CHECK(utimensat(AT_FDCWD, P("st"), ts, 0) == 0 && stat(P("st"), &st) == 0 &&
              is_now(&st.st_atim) && st.st_mtim.tv_sec == 1150000000,
          "utimensat UTIME_NOW, UTIME_OMIT: atime now, mtime kept (%ld, %ld)",
          (long)st.st_atim.tv_sec, (long)st.st_mtim.tv_sec);
    CHECK(utimensat(AT_FDCWD, P("st"), old, 0) == 0, "utimensat to 2004/2006 again");
    ts[0].tv_nsec = UTIME_OMIT;
    ts[1].tv_nsec = UTIME_NOW;
    CHECK(utimensat(AT_FDCWD, P("st"), ts, 0) == 0 && stat(P("st"), &st) == 0 &&
              st.st_atim.tv_sec == 1100000000 && is_now(&st.st_mtim),
          "utimensat UTIME_OMIT, UTIME_NOW: atime kept, mtime now (%ld, %ld)",
          (long)st.st_atim.tv_sec, (long)st.st_mtim.tv_sec);
    CHECK(utimensat(AT_FDCWD, P("st"), old, 0) == 0 && utimes(P("st"), NULL) == 0 &&
              stat(P("st"), &st) == 0 && is_now(&st.st_atim) && is_now(&st.st_mtim),
          "utimes(NULL): both now (the server must know SFS_SETATTR_*_NOW)");
    fd = open(P("st"), O_RDONLY);
    CHECK(utimensat(AT_FDCWD, P("st"), old, 0) == 0 && futimens(fd, NULL) == 0 &&
              stat(P("st"), &st) == 0 && is_now(&st.st_atim) && is_now(&st.st_mtim),
          "futimens(NULL): both now (the server must know SFS_SETATTR_*_NOW)");
    close(fd);
    ts[0].tv_nsec = UTIME_OMIT;
    ts[1].tv_nsec = UTIME_OMIT;
    CHECK(utimensat(AT_FDCWD, P("st"), old, 0) == 0 && utimensat(AT_FDCWD, P("st"), ts, 0) == 0 &&
              stat(P("st"), &st) == 0 && st.st_atim.tv_sec == 1100000000 &&
              st.st_mtim.tv_sec == 1150000000,
          "utimensat UTIME_OMIT twice changes nothing");
    /* both omitted on a missing name: whatever the kernel says */
    errno       = 0;
    local_rc    = utimensat(AT_FDCWD, L("no-such-file"), ts, 0);
    local_errno = errno;
    errno       = 0;
    rc          = utimensat(AT_FDCWD, P("no-such-file"), ts, 0);
    CHECK(rc == local_rc && (rc == 0 || errno == local_errno),
          "utimensat UTIME_OMIT twice on a missing name: %d (%s), as locally %d (%s)", rc,
          strerrorname_np(errno) ?: "0", local_rc, strerrorname_np(local_errno) ?: "0");
    ts[0].tv_sec  = 1;
    ts[0].tv_nsec = 1000000000;
    ts[1].tv_nsec = UTIME_NOW;
    CHECK_ERRNO(utimensat(AT_FDCWD, P("st"), ts, 0), EINVAL);
}

static void check_attributes(void)
{
    struct stat     st;
    struct timespec times[2] = {{.tv_sec = 1000000000, .tv_nsec = 5},
                                {.tv_sec = 1200000000, .tv_nsec = 7}};
    struct timeval  tv[2]    = {{.tv_sec = 1300000000}, {.tv_sec = 1400000000}};
    int             fd;

    CHECK(chmod(P("st"), 0600) == 0 && stat(P("st"), &st) == 0 && (st.st_mode & 07777) == 0600,
          "chmod 0600");
    fd = open(P("st"), O_RDONLY);
    CHECK(fchmod(fd, 0640) == 0 && fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0640,
          "fchmod 0640, seen by fstat");
    CHECK(fchown(fd, st.st_uid, (gid_t)-1) == 0, "fchown to the owner it has");
    CHECK(futimens(fd, times) == 0, "futimens");
    close(fd);
    CHECK(stat(P("st"), &st) == 0 && st.st_atim.tv_sec == 1000000000 &&
              st.st_mtim.tv_sec == 1200000000 && st.st_mtim.tv_nsec == 7,
          "times set (mtime %ld.%09ld)", (long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    times[0].tv_nsec = UTIME_OMIT;
    times[1].tv_sec  = 1250000000;
    times[1].tv_nsec = 0;
    CHECK(utimensat(AT_FDCWD, P("st"), times, 0) == 0 && stat(P("st"), &st) == 0 &&
              st.st_atim.tv_sec == 1000000000 && st.st_mtim.tv_sec == 1250000000,
          "utimensat with UTIME_OMIT keeps atime");
    CHECK(utimes(P("st"), tv) == 0 && stat(P("st"), &st) == 0 && st.st_mtim.tv_sec == 1400000000,
          "utimes");
    CHECK(utime(P("st"), NULL) == 0 && stat(P("st"), &st) == 0 && st.st_mtim.tv_sec > 1400000000,
          "utime(NULL) is now (the server must know SFS_SETATTR_*_NOW)");
    check_owner_and_now();
    CHECK(truncate(P("st"), 3) == 0 && size_of(P("st")) == 3, "truncate to 3");
    CHECK(truncate(P("st"), 100000) == 0 && size_of(P("st")) == 100000, "truncate up to 100000");
    CHECK_ERRNO(truncate(P("d"), 0), EISDIR);
    CHECK_ERRNO(truncate(P("st"), -1), EINVAL);
    fd = open(P("st"), O_WRONLY);
    CHECK(ftruncate(fd, 10) == 0 && size_of(P("st")) == 10, "ftruncate to 10");
    close(fd);
}

static void check_namespace(void)
{
    struct stat st;
    int         dfd, fd;

    CHECK(mkdir(P("ns"), 0755) == 0 && mkdir(P("ns/sub"), 0700) == 0, "mkdir ns, ns/sub");
    CHECK(stat(P("ns/sub"), &st) == 0 && (st.st_mode & 0777) == 0700, "mode 0700 kept");
    CHECK(put_file(P("ns/sub/f"), "x", 1) == 0, "file in ns/sub");
    CHECK_ERRNO(rmdir(P("ns/sub")), ENOTEMPTY);
    CHECK_ERRNO(rmdir(P("ns/sub/f")), ENOTDIR);
    CHECK_ERRNO(rmdir(P("ns/none")), ENOENT);
    CHECK_ERRNO(unlink(P("ns/sub")), EISDIR);
    CHECK_ERRNO(unlink(P("ns/none")), ENOENT);
    CHECK_ERRNO(rename(P("ns/none"), P("ns/x")), ENOENT);
    CHECK_ERRNO(rename(P("ns/sub/f"), L("f")), EXDEV);
    CHECK_ERRNO(opendir(P("nope")) == NULL ? -1 : 0, ENOENT);
    CHECK_ERRNO(opendir(P("ns/sub/f")) == NULL ? -1 : 0, ENOTDIR);
    CHECK_ERRNO(link(P("ns/sub/f"), P("ns/hard")), EPERM);
    CHECK_ERRNO(symlink("f", P("ns/soft")), EPERM);

    /* rename: files replace files, directories move with their content */
    CHECK(put_file(P("ns/a"), "aaa", 3) == 0 && put_file(P("ns/b"), "b", 1) == 0, "a and b");
    CHECK(rename(P("ns/a"), P("ns/b")) == 0 && size_of(P("ns/b")) == 3 &&
              access(P("ns/a"), F_OK) != 0,
          "rename a over b replaces it");
    CHECK(mkdir(P("ns/full"), 0755) == 0 && put_file(P("ns/full/x"), "", 0) == 0, "ns/full/x");
    CHECK_ERRNO(rename(P("ns/sub"), P("ns/full")), ENOTEMPTY);
    CHECK(rename(P("ns/sub"), P("ns/moved")) == 0 && size_of(P("ns/moved/f")) == 1,
          "rename a directory with its content");
    CHECK_ERRNO(renameat2(AT_FDCWD, P("ns/b"), AT_FDCWD, P("ns/moved/f"), RENAME_NOREPLACE),
                EEXIST);

    /* the *at calls relative to a stripefs directory descriptor */
    dfd = open(P("ns"), O_RDONLY | O_DIRECTORY);
    CHECK(dfd >= 0, "open ns as a directory: %m");
    CHECK_ERRNO(read(dfd, (char[4]){0}, 4), EISDIR);
    CHECK(mkdirat(dfd, "at", 0755) == 0, "mkdirat");
    fd = openat(dfd, "at/file", O_WRONLY | O_CREAT, 0644);
    CHECK(fd >= 0 && write(fd, "12345", 5) == 5, "openat + write");
    close(fd);
    CHECK(fstatat(dfd, "at/file", &st, 0) == 0 && st.st_size == 5, "fstatat relative");
    CHECK(faccessat(dfd, "at/file", R_OK, 0) == 0, "faccessat relative");
    CHECK(renameat(dfd, "at/file", dfd, "at/file2") == 0, "renameat relative");
    CHECK(fchmodat(dfd, "at/file2", 0444, 0) == 0 && stat(P("ns/at/file2"), &st) == 0 &&
              (st.st_mode & 0777) == 0444,
          "fchmodat relative");
    CHECK(unlinkat(dfd, "at/file2", 0) == 0, "unlinkat");
    CHECK(unlinkat(dfd, "at", AT_REMOVEDIR) == 0 && access(P("ns/at"), F_OK) != 0,
          "unlinkat AT_REMOVEDIR");
    CHECK(openat(dfd, "..", O_RDONLY | O_DIRECTORY) >= 0, "openat \"..\"");
    fd = open(P("ns/b"), O_RDONLY);
    CHECK_ERRNO(openat(fd, "x", O_RDONLY), ENOTDIR);
    close(fd);
    close(dfd);

    /* O_CREAT's mode follows the umask */
    umask(027);
    CHECK(put_file(P("ns/masked"), "", 0) == 0 && stat(P("ns/masked"), &st) == 0 &&
              (st.st_mode & 0777) == 0640,
          "umask 027 makes 0644 into 0640 (%o)", st.st_mode & 0777);
    umask(022);
}

static void check_cwd(void)
{
    char cwd[PATH_MAX];
    int  here = open(".", O_RDONLY | O_DIRECTORY);

    CHECK(chdir(P("ns")) == 0, "chdir into stripefs");
    CHECK(getcwd(cwd, sizeof(cwd)) && strcmp(cwd, P("ns")) == 0, "getcwd %s", cwd);
    CHECK(put_file("rel", "rel", 3) == 0 && size_of(P("ns/rel")) == 3,
          "a relative name resolves in the stripefs working directory");
    CHECK(mkdir("reldir", 0755) == 0 && chdir("reldir") == 0 && put_file("../rel2", "", 0) == 0 &&
              access(P("ns/rel2"), F_OK) == 0,
          "relative chdir and \"..\"");
    CHECK_ERRNO(chdir(P("ns/b")), ENOTDIR);
    CHECK(fchdir(here) == 0 && access("rel", F_OK) != 0, "fchdir back to a local directory");
    close(here);
}

static void check_stdio(void)
{
    char  line[64] = "";
    FILE *f        = fopen(P("stdio"), "w");

    CHECK(f != NULL, "fopen w: %m");
    CHECK(f && fprintf(f, "line %d\n", 1) > 0 && fclose(f) == 0, "fprintf + fclose");
    f = fopen(P("stdio"), "a");
    CHECK(f && fputs("line 2\n", f) >= 0 && fclose(f) == 0, "fopen a");
    f = fopen(P("stdio"), "r");
    CHECK(f && fgets(line, sizeof(line), f) && strcmp(line, "line 1\n") == 0, "fgets line 1");
    CHECK(f && fgets(line, sizeof(line), f) && strcmp(line, "line 2\n") == 0, "fgets line 2");
    CHECK(f && fseek(f, 5, SEEK_SET) == 0 && fgetc(f) == '1', "fseek");
    if (f) {
        fclose(f);
    }
    CHECK(fopen(P("nope"), "r") == NULL && errno == ENOENT, "fopen r of a missing file: ENOENT");
}

/* Every name exactly once, "." and ".." first, paging through sfs_readdir. */
static void check_readdir(const char *dir, int count)
{
    unsigned char  *seen = calloc((size_t)count, 1);
    char            name[PATH_MAX];
    struct dirent  *entry;
    DIR            *stream;
    int             files = 0, dots = 0, duplicates = 0, strangers = 0, fd;
    long            position = -1;
    struct dirent **list;

    CHECK(mkdir(dir, 0755) == 0, "mkdir %s", dir);
    for (int i = 0; i < count; i++) {
        snprintf(name, sizeof(name), "%s/entry.%05d", dir, i);
        fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0 || close(fd) != 0) {
            CHECK(0, "create %s: %m", name);
            return;
        }
    }
    stream = opendir(dir);
    CHECK(stream != NULL, "opendir %s", dir);
    if (!stream) {
        return;
    }
    CHECK(dirfd(stream) >= 0, "dirfd");
    errno = 0;
    while ((entry = readdir(stream)) != NULL) {
        int i;

        if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, "..")) {
            dots++;
            continue;
        }
        if (sscanf(entry->d_name, "entry.%d", &i) != 1 || i < 0 || i >= count ||
            entry->d_type != DT_REG || entry->d_ino == 0) {
            strangers++;
            continue;
        }
        duplicates += seen[i]++ > 0;
        files++;
        if (files == count / 2) {
            position = telldir(stream);
        }
    }
    CHECK(errno == 0, "readdir ends with errno untouched (%d)", errno);
    CHECK(files == count && duplicates == 0 && strangers == 0 && dots == 2,
          "readdir: %d names of %d, %d duplicates, %d strangers, %d dots", files, count, duplicates,
          strangers, dots);
    seekdir(stream, position);
    entry = readdir(stream);
    snprintf(name, sizeof(name), "entry.%05d", count / 2);
    CHECK(entry && strcmp(entry->d_name, name) == 0, "seekdir/telldir resume at %s (%s)", name,
          entry ? entry->d_name : "NULL");
    rewinddir(stream);
    entry = readdir(stream);
    CHECK(entry && strcmp(entry->d_name, ".") == 0, "rewinddir starts over");
    CHECK(closedir(stream) == 0, "closedir");
    fd = scandir(dir, &list, NULL, alphasort);
    CHECK(fd == count + 2, "scandir finds %d entries", fd);
    for (int i = 0; i < fd; i++) {
        free(list[i]);
    }
    if (fd >= 0) {
        free(list);
    }
    free(seen);
}

/* fdopendir + unlinkat, the way rm -r walks a tree. */
static void check_fdopendir(void)
{
    struct dirent *entry;
    DIR           *stream;
    int            fd, removed = 0;

    CHECK(mkdir(P("tree"), 0755) == 0, "mkdir tree");
    for (int i = 0; i < 10; i++) {
        char name[64];

        snprintf(name, sizeof(name), "tree/%d", i);
        CHECK(put_file(P(name), "t", 1) == 0, "tree file %d", i);
    }
    fd     = openat(AT_FDCWD, P("tree"), O_RDONLY | O_DIRECTORY | O_NOCTTY | O_CLOEXEC);
    stream = fd >= 0 ? fdopendir(fd) : NULL;
    CHECK(stream != NULL, "fdopendir");
    while (stream && (entry = readdir(stream)) != NULL) {
        if (entry->d_name[0] != '.') {
            removed += unlinkat(dirfd(stream), entry->d_name, 0) == 0;
        }
    }
    CHECK(removed == 10, "unlinkat removed %d of 10 while reading", removed);
    if (stream) {
        closedir(stream);
    }
    CHECK(rmdir(P("tree")) == 0, "rmdir the emptied tree");
}

/* A forked child uses the descriptor it inherited, over its own connection. */
static void check_fork(void)
{
    int   fd = open(P("forked"), O_RDWR | O_CREAT | O_TRUNC, 0644);
    int   status;
    pid_t pid;

    CHECK(fd >= 0 && write(fd, "parent", 6) == 6, "parent writes");
    pid = fork();
    if (pid == 0) {
        char buf[8] = "";
        int  ok     = pread(fd, buf, 6, 0) == 6 && memcmp(buf, "parent", 6) == 0 &&
                 pwrite(fd, "child", 5, 6) == 5 && put_file(P("from-child"), "c", 1) == 0;

        _exit(ok ? 0 : 1);
    }
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
              WEXITSTATUS(status) == 0,
          "the child read and wrote through the inherited descriptor");
    CHECK(size_of(P("forked")) == 11 && size_of(P("from-child")) == 1,
          "the parent sees what the child wrote");
    CHECK(write(fd, "!", 1) == 1, "the parent's connection still works after the fork");
    close(fd);
}

static void *thread_main(void *arg)
{
    char          name[64];
    unsigned char out[100000], in[100000];
    long          id = (long)arg;
    intptr_t      ok = 1;

    for (int i = 0; i < 10 && ok; i++) {
        int fd;

        snprintf(name, sizeof(name), "threads/t%ld.%d", id, i);
        fill(out, sizeof(out), (unsigned)(id * 100 + i));
        fd = open(P(name), O_RDWR | O_CREAT | O_TRUNC, 0644);
        ok = fd >= 0 && write(fd, out, sizeof(out)) == (ssize_t)sizeof(out) &&
             pread(fd, in, sizeof(in), 0) == (ssize_t)sizeof(in) &&
             memcmp(in, out, sizeof(in)) == 0;
        if (fd >= 0) {
            close(fd);
        }
    }
    return (void *)ok;
}

static void check_threads(void)
{
    pthread_t threads[4];
    void     *result;
    int       good = 0, started = 0;

    CHECK(mkdir(P("threads"), 0755) == 0, "mkdir threads");
    for (long t = 0; t < 4; t++) {
        started += pthread_create(&threads[started], NULL, thread_main, (void *)t) == 0;
    }
    for (int t = 0; t < started; t++) {
        good += pthread_join(threads[t], &result) == 0 && result != NULL;
    }
    CHECK(good == 4, "4 threads x 10 files written and read back (%d threads ok)", good);
}

/* Local files go to libc untouched. */
static void check_local(void)
{
    struct stat   st;
    struct statfs fs;
    char          buf[8];
    int           fd = open(L("plain"), O_RDWR | O_CREAT | O_TRUNC, 0644);
    DIR          *stream;
    int           found = 0;

    CHECK(fd >= 0 && write(fd, "local", 5) == 5 && pread(fd, buf, 5, 0) == 5, "local file I/O");
    CHECK(fstat(fd, &st) == 0 && st.st_size == 5, "local fstat");
    close(fd);
    CHECK(statfs(local, &fs) == 0 && fs.f_type != SFS_MAGIC, "local statfs is the local one");
    CHECK(rename(L("plain"), L("plain2")) == 0 && stat(L("plain2"), &st) == 0, "local rename");
    stream = opendir(local);
    while (stream && readdir(stream)) {
        found++;
    }
    CHECK(stream && closedir(stream) == 0 && found >= 3, "local readdir (%d entries)", found);
    CHECK(unlink(L("plain2")) == 0, "local unlink");
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "readdir") == 0) {
        snprintf(base, sizeof(base), "%s", argv[2]);
        check_readdir(argv[2], atoi(argv[3]));
    } else if (argc == 4 && strcmp(argv[1], "all") == 0) {
        snprintf(base, sizeof(base), "%s", argv[2]);
        snprintf(local, sizeof(local), "%s", argv[3]);
        setvbuf(stdout, NULL, _IOLBF, 0);
        check_open_errors();
        check_io();
        check_dup_fcntl();
        check_stat();
        check_attributes();
        check_namespace();
        check_create_modes();
        check_cwd();
        check_stdio();
        check_libc_entries();
        check_status_flags();
        check_readdir(P("small"), 600); /* more than one page */
        check_fdopendir();
        check_fork();
        check_threads();
        check_local();
    } else {
        fprintf(stderr, "usage: %s all BASE LOCALDIR | readdir DIR N\n", argv[0]);
        return 2;
    }
    printf("%s: %d failed\n", failures ? "FAILED" : "PASSED", failures);
    return failures ? 1 : 0;
}
