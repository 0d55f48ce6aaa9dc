/*
 * Calls that look at entries: the stat family (including statx and the
 * __xstat names older binaries use), statfs/statvfs, access, readlink,
 * extended attributes (none); realpath is sfs_preload_realpath.c's.
 */
#include "sfs_preload.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

/* On the 64-bit ABIs we build for, the 64 variants are the same structs. */
_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "struct stat64 differs");
_Static_assert(sizeof(struct statfs) == sizeof(struct statfs64), "struct statfs64 differs");
_Static_assert(sizeof(struct statvfs) == sizeof(struct statvfs64), "struct statvfs64 differs");

/* glibc < 2.33 programs call these; the headers no longer declare them. */
int __xstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstat(int ver, int fd, struct stat *st);
int __fxstat64(int ver, int fd, struct stat64 *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags);

SFS_REAL_DECL(stat);
SFS_REAL_DECL(stat64);
SFS_REAL_DECL(lstat);
SFS_REAL_DECL(lstat64);
SFS_REAL_DECL(fstat);
SFS_REAL_DECL(fstat64);
SFS_REAL_DECL(fstatat);
SFS_REAL_DECL(fstatat64);
SFS_REAL_DECL(statx);
SFS_REAL_DECL(statfs);
SFS_REAL_DECL(statfs64);
SFS_REAL_DECL(fstatfs);
SFS_REAL_DECL(fstatfs64);
SFS_REAL_DECL(statvfs);
SFS_REAL_DECL(statvfs64);
SFS_REAL_DECL(fstatvfs);
SFS_REAL_DECL(fstatvfs64);
SFS_REAL_DECL(access);
SFS_REAL_DECL(faccessat);
SFS_REAL_DECL(euidaccess);
SFS_REAL_DECL(eaccess);
SFS_REAL_DECL(readlink);
SFS_REAL_DECL(readlinkat);
SFS_REAL_DECL(getxattr);
SFS_REAL_DECL(lgetxattr);
SFS_REAL_DECL(fgetxattr);
SFS_REAL_DECL(listxattr);
SFS_REAL_DECL(llistxattr);
SFS_REAL_DECL(flistxattr);
SFS_REAL_DECL(setxattr);
SFS_REAL_DECL(lsetxattr);
SFS_REAL_DECL(fsetxattr);
SFS_REAL_DECL(removexattr);
SFS_REAL_DECL(lremovexattr);
SFS_REAL_DECL(fremovexattr);

/* ------------------------------------------------------------------------ */
/* stat                                                                      */

/* A file whose size cannot be known because one of its storage targets
 * does not answer: stat, lstat, fstatat and statx of its path still answer
 * (mode, owner, times from the metadata server), so that ls -l of a
 * directory with a dead target does not fail for every file. st_size is
 * what the reachable targets hold, a lower bound; statx leaves STATX_SIZE
 * and STATX_BLOCKS out of stx_mask. What acts on the size of an open file
 * (fstat, lseek SEEK_END, O_APPEND, a read of a missing chunk) fails with
 * the error naming the target. Said once per process on standard error. */
static void sfs_pl_size_unknown(const char *sfs_path, const sfs_stat_t *s)
{
    static atomic_int said;

    if (atomic_exchange(&said, 1)) {
        return;
    }
    for (uint32_t i = 0; i < s->target_count && i < SFS_CLIENT_MAX_TARGETS; i++) {
        if (s->target_down[i]) {
            fprintf(stderr,
                    "stripefs-posix: stat %s: size unknown: storage target %u did not answer; "
                    "st_size is the %llu bytes the other targets hold (not reported again)\n",
                    sfs_path, s->targets[i], (unsigned long long)s->size);
            return;
        }
    }
}

int sfs_pl_stat_path(const char *sfs_path, int need_size, sfs_stat_t *s)
{
    sfs_client_t *client;
    int           rc;

    if (sfs_pl_listed_stat(sfs_path, need_size, s) || sfs_pl_listed_ahead(sfs_path, need_size, s)) {
        return 0;
    }
    rc = sfs_pl_enter_to_read(&client);
    if (rc) {
        return rc;
    }
    rc = need_size ? sfs_stat(client, sfs_path, s) : sfs_lookup(client, sfs_path, s);
    sfs_pl_unlock();
    if (rc == 0 && (s->flags & SFS_STAT_SIZE_UNKNOWN)) {
        sfs_pl_size_unknown(sfs_path, s);
    }
    return rc;
}

int sfs_pl_stat_fd(int fd, int need_size, sfs_stat_t *s)
{
    sfs_client_t *client;
    sfs_pl_fd_t  *entry;
    sfs_file_t   *file;
    sfs_stat_t    fresh;
    int           rc = sfs_pl_enter(&client);

    if (rc) {
        return rc;
    }
    entry = sfs_pl_fd_get(fd);
    if (!entry) {
        rc = -EBADF;
        goto out;
    }
    if (entry->ofd->is_dir) {
        rc = sfs_lookup(client, entry->ofd->path, s);
        goto out;
    }
    rc = sfs_pl_ofd_file(entry->ofd, client, &file);
    if (rc) {
        goto out;
    }
    if (!need_size) {
        /* one lookup by name, unless the name is gone or is now a directory */
        rc = sfs_lookup(client, entry->ofd->path, s);
        if (rc == 0 && s->type == SFS_FILE_TYPE_REGULAR) {
            goto out;
        }
    }
    /* a reader: one STAT by name (the kept size where it is exact) while
     * the name means the handle's entry; else the handle asks its targets
     * for the size, and mode and times come fresh by name */
    sfs_file_layout(file, &fresh);
    if ((entry->ofd->flags & O_ACCMODE) == O_RDONLY &&
        (rc = sfs_stat(client, entry->ofd->path, s)) == 0 && s->entry_id == fresh.entry_id &&
        !(s->flags & SFS_STAT_SIZE_UNKNOWN)) {
        goto out;
    }
    rc = sfs_file_stat(file, s);
    if (rc == 0 && sfs_lookup(client, entry->ofd->path, &fresh) == 0 &&
        fresh.entry_id == s->entry_id) {
        s->mode     = fresh.mode;
        s->uid      = fresh.uid;
        s->gid      = fresh.gid;
        s->nlink    = fresh.nlink;
        s->atime_ns = fresh.atime_ns;
        s->mtime_ns = fresh.mtime_ns;
        s->ctime_ns = fresh.ctime_ns;
    }
out:
    sfs_pl_unlock();
    return rc;
}

void sfs_pl_stat_fill(const sfs_stat_t *s, struct stat *st)
{
    memset(st, 0, sizeof(*st));
    st->st_dev   = makedev(SFS_PL_DEV_MAJOR, SFS_PL_DEV_MINOR);
    st->st_ino   = (ino_t)s->entry_id;
    st->st_mode  = (s->type == SFS_FILE_TYPE_DIR ? S_IFDIR : S_IFREG) | (s->mode & 07777);
    st->st_nlink = (nlink_t)(s->nlink ? s->nlink : 1);
    st->st_uid   = s->uid;
    st->st_gid   = s->gid;
    st->st_size  = (off_t)s->size;
    /* tools size their buffers by st_blksize: one chunk is a good unit */
    st->st_blksize      = (blksize_t)(s->chunk_size ? s->chunk_size : 512 * 1024);
    st->st_blocks       = (blkcnt_t)((s->size + 511) / 512);
    st->st_atim.tv_sec  = (time_t)(s->atime_ns / 1000000000u);
    st->st_atim.tv_nsec = (long)(s->atime_ns % 1000000000u);
    st->st_mtim.tv_sec  = (time_t)(s->mtime_ns / 1000000000u);
    st->st_mtim.tv_nsec = (long)(s->mtime_ns % 1000000000u);
    st->st_ctim.tv_sec  = (time_t)(s->ctime_ns / 1000000000u);
    st->st_ctim.tv_nsec = (long)(s->ctime_ns % 1000000000u);
}

static int sfs_pl_stat_result(int rc, const sfs_stat_t *s, struct stat *st, const char *call,
                              const char *what)
{
    if (rc) {
        return sfs_pl_fail(rc, call, what);
    }
    sfs_pl_stat_fill(s, st);
    return 0;
}

/* stat/lstat of a path (no symlinks in stripefs: the same). */
static int sfs_pl_stat_named(int rc, const char *sfs_path, struct stat *st, const char *call)
{
    sfs_stat_t s;

    if (rc < 0) {
        return sfs_pl_fail(rc, call, sfs_path);
    }
    return sfs_pl_stat_result(sfs_pl_stat_path(sfs_path, 1, &s), &s, st, call, sfs_path);
}

static int sfs_pl_fstat_ours(int fd, struct stat *st)
{
    sfs_stat_t s;

    return sfs_pl_stat_result(sfs_pl_stat_fd(fd, 1, &s), &s, st, "fstat", NULL);
}

SFS_PL_EXPORT int stat(const char *path, struct stat *st)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_stat_named(rc, sfs_path, st, "stat") : SFS_REAL(stat)(path, st);
}

SFS_PL_EXPORT int stat64(const char *path, struct stat64 *st)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_stat_named(rc, sfs_path, (struct stat *)st, "stat")
              : SFS_REAL(stat64)(path, st);
}

SFS_PL_EXPORT int lstat(const char *path, struct stat *st)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_stat_named(rc, sfs_path, st, "lstat") : SFS_REAL(lstat)(path, st);
}

SFS_PL_EXPORT int lstat64(const char *path, struct stat64 *st)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_stat_named(rc, sfs_path, (struct stat *)st, "lstat")
              : SFS_REAL(lstat64)(path, st);
}

SFS_PL_EXPORT int fstat(int fd, struct stat *st)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_fstat_ours(fd, st) : SFS_REAL(fstat)(fd, st);
}

SFS_PL_EXPORT int fstat64(int fd, struct stat64 *st)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_fstat_ours(fd, (struct stat *)st)
                                 : SFS_REAL(fstat64)(fd, st);
}

/* fstatat: 1 if it was ours (result in *result_p), 0 to pass it on. */
static int sfs_pl_fstatat_ours(int dirfd, const char *path, struct stat *st, int flags,
                               int *result_p)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc;

    if ((flags & AT_EMPTY_PATH) && sfs_pl_is_empty(path)) {
        if (!sfs_pl_fd_is_ours(dirfd)) {
            return 0;
        }
        *result_p = sfs_pl_fstat_ours(dirfd, st);
        return 1;
    }
    rc = sfs_pl_path_at(dirfd, path, sfs_path);
    if (rc == 0) {
        return 0;
    }
    *result_p = sfs_pl_stat_named(rc, sfs_path, st, "fstatat");
    return 1;
}

SFS_PL_EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
    int result;

    return sfs_pl_fstatat_ours(dirfd, path, st, flags, &result)
               ? result
               : SFS_REAL(fstatat)(dirfd, path, st, flags);
}

SFS_PL_EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
    int result;

    return sfs_pl_fstatat_ours(dirfd, path, (struct stat *)st, flags, &result)
               ? result
               : SFS_REAL(fstatat64)(dirfd, path, st, flags);
}

/* The version argument is 1 (_STAT_VER_LINUX) on x86_64 and 0 on aarch64:
 * the kernel's struct stat either way, which is glibc's struct stat. */
SFS_PL_EXPORT int __xstat(int ver, const char *path, struct stat *st)
{
    return stat(path, st);
}

SFS_PL_EXPORT int __xstat64(int ver, const char *path, struct stat64 *st)
{
    return stat64(path, st);
}

SFS_PL_EXPORT int __lxstat(int ver, const char *path, struct stat *st)
{
    return lstat(path, st);
}

SFS_PL_EXPORT int __lxstat64(int ver, const char *path, struct stat64 *st)
{
    return lstat64(path, st);
}

SFS_PL_EXPORT int __fxstat(int ver, int fd, struct stat *st)
{
    return fstat(fd, st);
}

SFS_PL_EXPORT int __fxstat64(int ver, int fd, struct stat64 *st)
{
    return fstat64(fd, st);
}

SFS_PL_EXPORT int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
    return fstatat(dirfd, path, st, flags);
}

SFS_PL_EXPORT int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags)
{
    return fstatat64(dirfd, path, st, flags);
}

static void sfs_pl_statx_time(struct statx_timestamp *t, uint64_t ns)
{
    t->tv_sec  = (int64_t)(ns / 1000000000u);
    t->tv_nsec = (uint32_t)(ns % 1000000000u);
}

SFS_PL_EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *stx)
{
    char       sfs_path[SFS_PL_PATH_MAX];
    sfs_stat_t s;
    /* without size or blocks asked for, one metadata lookup is enough */
    int need_size = !!(mask & (STATX_SIZE | STATX_BLOCKS));
    int rc;

    if ((flags & AT_EMPTY_PATH) && sfs_pl_is_empty(path)) {
        if (!sfs_pl_fd_is_ours(dirfd)) {
            return SFS_REAL(statx)(dirfd, path, flags, mask, stx);
        }
        rc = sfs_pl_stat_fd(dirfd, need_size, &s);
    } else {
        rc = sfs_pl_path_at(dirfd, path, sfs_path);
        if (rc == 0) {
            return SFS_REAL(statx)(dirfd, path, flags, mask, stx);
        }
        if (rc > 0) {
            rc = sfs_pl_stat_path(sfs_path, need_size, &s);
        }
    }
    if (rc) {
        return sfs_pl_fail(rc, "statx", path);
    }
    memset(stx, 0, sizeof(*stx));
    stx->stx_mask    = STATX_BASIC_STATS & ~(need_size && !(s.flags & SFS_STAT_SIZE_UNKNOWN)
                                                 ? 0u
                                                 : (unsigned)(STATX_SIZE | STATX_BLOCKS));
    stx->stx_blksize = (uint32_t)(s.chunk_size ? s.chunk_size : 512 * 1024);
    stx->stx_nlink   = (uint32_t)(s.nlink ? s.nlink : 1);
    stx->stx_uid     = s.uid;
    stx->stx_gid     = s.gid;
    stx->stx_mode =
        (uint16_t)((s.type == SFS_FILE_TYPE_DIR ? S_IFDIR : S_IFREG) | (s.mode & 07777));
    stx->stx_ino    = s.entry_id;
    stx->stx_size   = s.size;
    stx->stx_blocks = (s.size + 511) / 512;
    sfs_pl_statx_time(&stx->stx_atime, s.atime_ns);
    sfs_pl_statx_time(&stx->stx_mtime, s.mtime_ns);
    sfs_pl_statx_time(&stx->stx_ctime, s.ctime_ns);
    stx->stx_dev_major = SFS_PL_DEV_MAJOR;
    stx->stx_dev_minor = SFS_PL_DEV_MINOR;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* statfs and statvfs                                                        */

#define SFS_PL_FS_BLOCK       4096u
#define SFS_PL_FS_FREE_INODES (1ull << 32) /* no inode limit: report plenty */

/* The service's numbers; with a path, the path must exist. */
static int sfs_pl_statfs_get(const char *sfs_path, int fd, sfs_statfs_t *out)
{
    sfs_client_t *client;
    sfs_stat_t    s;
    int           rc = sfs_pl_enter(&client);

    if (rc) {
        return rc;
    }
    if (sfs_path) {
        rc = sfs_lookup(client, sfs_path, &s);
    } else if (!sfs_pl_fd_get(fd)) {
        rc = -EBADF;
    }
    if (rc == 0) {
        rc = sfs_statfs(client, out);
    }
    sfs_pl_unlock();
    return rc;
}

static int sfs_pl_statfs_fill(int rc, const sfs_statfs_t *f, struct statfs *out)
{
    if (rc) {
        return sfs_pl_fail(rc, "statfs", NULL);
    }
    memset(out, 0, sizeof(*out));
    out->f_type          = SFS_PL_FS_MAGIC;
    out->f_bsize         = SFS_PL_FS_BLOCK;
    out->f_frsize        = SFS_PL_FS_BLOCK;
    out->f_blocks        = f->capacity / SFS_PL_FS_BLOCK;
    out->f_bfree         = f->free / SFS_PL_FS_BLOCK;
    out->f_bavail        = f->free / SFS_PL_FS_BLOCK;
    out->f_files         = f->files + f->dirs + SFS_PL_FS_FREE_INODES;
    out->f_ffree         = SFS_PL_FS_FREE_INODES;
    out->f_namelen       = 255;
    out->f_fsid.__val[0] = (int)SFS_PL_DEV_MAJOR;
    out->f_fsid.__val[1] = (int)SFS_PL_DEV_MINOR;
    out->f_flags         = ST_NOSUID | ST_NODEV;
    return 0;
}

static int sfs_pl_statvfs_fill(int rc, const sfs_statfs_t *f, struct statvfs *out)
{
    struct statfs fs;

    if (sfs_pl_statfs_fill(rc, f, &fs) != 0) {
        return -1;
    }
    memset(out, 0, sizeof(*out));
    out->f_bsize   = fs.f_bsize;
    out->f_frsize  = fs.f_frsize;
    out->f_blocks  = fs.f_blocks;
    out->f_bfree   = fs.f_bfree;
    out->f_bavail  = fs.f_bavail;
    out->f_files   = fs.f_files;
    out->f_ffree   = fs.f_ffree;
    out->f_favail  = fs.f_ffree;
    out->f_fsid    = ((unsigned long)SFS_PL_DEV_MAJOR << 32) | SFS_PL_DEV_MINOR;
    out->f_flag    = ST_NOSUID | ST_NODEV;
    out->f_namemax = 255;
    return 0;
}

static int sfs_pl_statfs_named(int rc, const char *sfs_path, struct statfs *out)
{
    sfs_statfs_t f;

    if (rc < 0) {
        return sfs_pl_fail(rc, "statfs", sfs_path);
    }
    return sfs_pl_statfs_fill(sfs_pl_statfs_get(sfs_path, -1, &f), &f, out);
}

static int sfs_pl_statvfs_named(int rc, const char *sfs_path, struct statvfs *out)
{
    sfs_statfs_t f;

    if (rc < 0) {
        return sfs_pl_fail(rc, "statvfs", sfs_path);
    }
    return sfs_pl_statvfs_fill(sfs_pl_statfs_get(sfs_path, -1, &f), &f, out);
}

SFS_PL_EXPORT int statfs(const char *path, struct statfs *out)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_statfs_named(rc, sfs_path, out) : SFS_REAL(statfs)(path, out);
}

SFS_PL_EXPORT int statfs64(const char *path, struct statfs64 *out)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_statfs_named(rc, sfs_path, (struct statfs *)out)
              : SFS_REAL(statfs64)(path, out);
}

SFS_PL_EXPORT int fstatfs(int fd, struct statfs *out)
{
    sfs_statfs_t f;

    if (!sfs_pl_fd_is_ours(fd)) {
        return SFS_REAL(fstatfs)(fd, out);
    }
    return sfs_pl_statfs_fill(sfs_pl_statfs_get(NULL, fd, &f), &f, out);
}

SFS_PL_EXPORT int fstatfs64(int fd, struct statfs64 *out)
{
    sfs_statfs_t f;

    if (!sfs_pl_fd_is_ours(fd)) {
        return SFS_REAL(fstatfs64)(fd, out);
    }
    return sfs_pl_statfs_fill(sfs_pl_statfs_get(NULL, fd, &f), &f, (struct statfs *)out);
}

SFS_PL_EXPORT int statvfs(const char *path, struct statvfs *out)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_statvfs_named(rc, sfs_path, out) : SFS_REAL(statvfs)(path, out);
}

SFS_PL_EXPORT int statvfs64(const char *path, struct statvfs64 *out)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_statvfs_named(rc, sfs_path, (struct statvfs *)out)
              : SFS_REAL(statvfs64)(path, out);
}

SFS_PL_EXPORT int fstatvfs(int fd, struct statvfs *out)
{
    sfs_statfs_t f;

    if (!sfs_pl_fd_is_ours(fd)) {
        return SFS_REAL(fstatvfs)(fd, out);
    }
    return sfs_pl_statvfs_fill(sfs_pl_statfs_get(NULL, fd, &f), &f, out);
}

SFS_PL_EXPORT int fstatvfs64(int fd, struct statvfs64 *out)
{
    sfs_statfs_t f;

    if (!sfs_pl_fd_is_ours(fd)) {
        return SFS_REAL(fstatvfs64)(fd, out);
    }
    return sfs_pl_statvfs_fill(sfs_pl_statfs_get(NULL, fd, &f), &f, (struct statvfs *)out);
}

/* ------------------------------------------------------------------------ */
/* access                                                                    */

static int sfs_pl_in_group(gid_t gid, int effective)
{
    gid_t groups[256];
    int   n;

    if (gid == (effective ? getegid() : getgid())) {
        return 1;
    }
    n = getgroups((int)(sizeof(groups) / sizeof(groups[0])), groups);
    for (int i = 0; i < n; i++) {
        if (groups[i] == gid) {
            return 1;
        }
    }
    return 0;
}

/* The kernel's rule: root may read and write anything and execute what
 * anyone may; others get the owner, group or other bits. */
static int sfs_pl_access_check(const sfs_stat_t *s, int mode, int effective)
{
    uid_t    uid  = effective ? geteuid() : getuid();
    unsigned bits = s->mode & 0777;
    unsigned granted;

    if (mode == F_OK) {
        return 0;
    }
    if (uid == 0) {
        if ((mode & X_OK) && s->type != SFS_FILE_TYPE_DIR && !(bits & 0111)) {
            return -EACCES;
        }
        return 0;
    }
    if (uid == s->uid) {
        granted = (bits >> 6) & 7;
    } else if (sfs_pl_in_group(s->gid, effective)) {
        granted = (bits >> 3) & 7;
    } else {
        granted = bits & 7;
    }
    return ((unsigned)mode & 7 & ~granted) ? -EACCES : 0;
}

/* The servers decide (they know this process's proven identity: root
 * squash, supplementary groups); real and effective ids are the same to
 * them, as MUNGE vouches for the process. */
static int sfs_pl_access_named(int rc, const char *sfs_path, int mode, int effective)
{
    sfs_client_t *client;

    (void)effective;
    if (rc > 0) {
        rc = (mode & ~(R_OK | W_OK | X_OK)) ? -EINVAL : sfs_pl_enter(&client);
        if (rc == 0) {
            rc = sfs_access(client, sfs_path, mode, NULL);
            sfs_pl_unlock();
        }
    }
    return rc ? sfs_pl_fail(rc, "access", sfs_path) : 0;
}

SFS_PL_EXPORT int access(const char *path, int mode)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_access_named(rc, sfs_path, mode, 0) : SFS_REAL(access)(path, mode);
}

SFS_PL_EXPORT int euidaccess(const char *path, int mode)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_access_named(rc, sfs_path, mode, 1) : SFS_REAL(euidaccess)(path, mode);
}

SFS_PL_EXPORT int eaccess(const char *path, int mode)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_access_named(rc, sfs_path, mode, 1) : SFS_REAL(eaccess)(path, mode);
}

SFS_PL_EXPORT int faccessat(int dirfd, const char *path, int mode, int flags)
{
    char       sfs_path[SFS_PL_PATH_MAX];
    sfs_stat_t s;
    int        rc;

    if ((flags & AT_EMPTY_PATH) && sfs_pl_is_empty(path)) {
        if (!sfs_pl_fd_is_ours(dirfd)) {
            return SFS_REAL(faccessat)(dirfd, path, mode, flags);
        }
        rc = sfs_pl_stat_fd(dirfd, 0, &s);
        if (rc == 0) {
            rc = sfs_pl_access_check(&s, mode, !!(flags & AT_EACCESS));
        }
        return rc ? sfs_pl_fail(rc, "faccessat", NULL) : 0;
    }
    rc = sfs_pl_path_at(dirfd, path, sfs_path);
    if (rc && (flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))) {
        return sfs_pl_fail(-EINVAL, "faccessat", path); /* as faccessat2(2) */
    }
    return rc ? sfs_pl_access_named(rc, sfs_path, mode, !!(flags & AT_EACCESS))
              : SFS_REAL(faccessat)(dirfd, path, mode, flags);
}

/* ------------------------------------------------------------------------ */
/* readlink (there are no links) and extended attributes (none)              */

/* -EINVAL if the entry exists (it is no link), else its error. */
static int sfs_pl_no_link(int rc, const char *sfs_path)
{
    sfs_stat_t s;

    if (rc > 0) {
        rc = sfs_pl_stat_path(sfs_path, 0, &s);
    }
    return sfs_pl_fail(rc ? rc : -EINVAL, "readlink", sfs_path);
}

SFS_PL_EXPORT ssize_t readlink(const char *path, char *buf, size_t size)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_no_link(rc, sfs_path) : SFS_REAL(readlink)(path, buf, size);
}

SFS_PL_EXPORT ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t size)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path_at(dirfd, path, sfs_path);

    return rc ? sfs_pl_no_link(rc, sfs_path) : SFS_REAL(readlinkat)(dirfd, path, buf, size);
}

/* ENOTSUP once the entry is known to exist: what a file system without
 * extended attributes says (ls -l then shows no ACL mark). */
static int sfs_pl_no_xattr(int rc, const char *sfs_path)
{
    sfs_stat_t s;

    if (rc > 0) {
        rc = sfs_pl_stat_path(sfs_path, 0, &s);
    }
    return sfs_pl_fail(rc ? rc : -ENOTSUP, "xattr", sfs_path);
}

#define SFS_PL_XATTR_PATH(_call, _ret, _params, ...)                                               \
    SFS_PL_EXPORT _ret _call _params                                                               \
    {                                                                                              \
        char sfs_path[SFS_PL_PATH_MAX];                                                            \
        int  rc = sfs_pl_path(path, sfs_path);                                                     \
                                                                                                   \
        return rc ? sfs_pl_no_xattr(rc, sfs_path) : SFS_REAL(_call)(__VA_ARGS__);                  \
    }
#define SFS_PL_XATTR_FD(_call, _ret, _params, ...)                                                 \
    SFS_PL_EXPORT _ret _call _params                                                               \
    {                                                                                              \
        return sfs_pl_fd_is_ours(fd) ? sfs_pl_fail(-ENOTSUP, "xattr", NULL)                        \
                                     : SFS_REAL(_call)(__VA_ARGS__);                               \
    }

SFS_PL_XATTR_PATH(getxattr, ssize_t, (const char *path, const char *name, void *value, size_t size),
                  path, name, value, size)
SFS_PL_XATTR_PATH(lgetxattr, ssize_t,
                  (const char *path, const char *name, void *value, size_t size), path, name, value,
                  size)
SFS_PL_XATTR_FD(fgetxattr, ssize_t, (int fd, const char *name, void *value, size_t size), fd, name,
                value, size)
SFS_PL_XATTR_PATH(listxattr, ssize_t, (const char *path, char *list, size_t size), path, list, size)
SFS_PL_XATTR_PATH(llistxattr, ssize_t, (const char *path, char *list, size_t size), path, list,
                  size)
SFS_PL_XATTR_FD(flistxattr, ssize_t, (int fd, char *list, size_t size), fd, list, size)
SFS_PL_XATTR_PATH(setxattr, int,
                  (const char *path, const char *name, const void *value, size_t size, int flags),
                  path, name, value, size, flags)
SFS_PL_XATTR_PATH(lsetxattr, int,
                  (const char *path, const char *name, const void *value, size_t size, int flags),
                  path, name, value, size, flags)
SFS_PL_XATTR_FD(fsetxattr, int,
                (int fd, const char *name, const void *value, size_t size, int flags), fd, name,
                value, size, flags)
SFS_PL_XATTR_PATH(removexattr, int, (const char *path, const char *name), path, name)
SFS_PL_XATTR_PATH(lremovexattr, int, (const char *path, const char *name), path, name)
SFS_PL_XATTR_FD(fremovexattr, int, (int fd, const char *name), fd, name)
