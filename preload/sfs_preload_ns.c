/*
 * Calls that change the namespace or an entry's attributes: mkdir, rmdir,
 * unlink, remove, rename, chmod, chown, times, truncate by name, links (refused),
 * mkdtemp, and the working directory (chdir into stripefs sets a virtual
 * one that relative names then resolve against). Who may change what is
 * the metadata server's decision, never this library's.
 */
#include "sfs_preload.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

SFS_REAL_DECL(mkdir);
SFS_REAL_DECL(mkdirat);
SFS_REAL_DECL(rmdir);
SFS_REAL_DECL(remove);
SFS_REAL_DECL(unlink);
SFS_REAL_DECL(unlinkat);
SFS_REAL_DECL(rename);
SFS_REAL_DECL(renameat);
SFS_REAL_DECL(renameat2);
SFS_REAL_DECL(chmod);
SFS_REAL_DECL(fchmod);
SFS_REAL_DECL(fchmodat);
SFS_REAL_DECL(chown);
SFS_REAL_DECL(lchown);
SFS_REAL_DECL(fchown);
SFS_REAL_DECL(fchownat);
SFS_REAL_DECL(utime);
SFS_REAL_DECL(utimes);
SFS_REAL_DECL(lutimes);
SFS_REAL_DECL(futimes);
SFS_REAL_DECL(futimesat);
SFS_REAL_DECL(utimensat);
SFS_REAL_DECL(futimens);
SFS_REAL_DECL(truncate);
SFS_REAL_DECL(truncate64);
SFS_REAL_DECL(link);
SFS_REAL_DECL(linkat);
SFS_REAL_DECL(symlink);
SFS_REAL_DECL(symlinkat);
SFS_REAL_DECL(chdir);
SFS_REAL_DECL(fchdir);
SFS_REAL_DECL(getcwd);
SFS_REAL_DECL(get_current_dir_name);

/* The stripefs path of one of our descriptors (lock not held): 0, or
 * -EBADF when fd is not (or no longer) ours. */
static int sfs_pl_fd_path(int fd, char *out, int *is_dir_p)
{
    sfs_pl_fd_t *entry;

    sfs_pl_lock();
    entry = sfs_pl_fd_get(fd);
    if (entry) {
        snprintf(out, SFS_PL_PATH_MAX, "%s", entry->ofd->path);
        if (is_dir_p) {
            *is_dir_p = entry->ofd->is_dir;
        }
    }
    sfs_pl_unlock();
    return entry ? 0 : -EBADF;
}

/* ------------------------------------------------------------------------ */
/* mkdir, rmdir, unlink, rename                                              */

/* mkdir(2) keeps the permission bits and the sticky bit, less the umask
 * (setuid and setgid in `mode` are dropped, as Linux does). */
static int sfs_pl_mkdir_named(int rc, const char *sfs_path, mode_t mode)
{
    sfs_client_t *client;

    if (rc > 0) {
        rc = sfs_pl_enter(&client);
        if (rc == 0) {
            rc = sfs_mkdir(client, sfs_path, mode & ~sfs_pl_umask() & 01777);
            sfs_pl_unlock();
        }
    }
    return rc ? sfs_pl_fail(rc, "mkdir", sfs_path) : 0;
}

SFS_PL_EXPORT int mkdir(const char *path, mode_t mode)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_mkdir_named(rc, sfs_path, mode) : SFS_REAL(mkdir)(path, mode);
}

SFS_PL_EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path_at(dirfd, path, sfs_path);

    return rc ? sfs_pl_mkdir_named(rc, sfs_path, mode) : SFS_REAL(mkdirat)(dirfd, path, mode);
}

/* rmdir (is_dir) or unlink of a stripefs name. */
static int sfs_pl_remove_named(int rc, const char *sfs_path, int is_dir)
{
    sfs_client_t *client;

    if (rc > 0) {
        rc = sfs_pl_enter(&client);
        if (rc == 0) {
            rc = is_dir ? sfs_rmdir(client, sfs_path) : sfs_unlink(client, sfs_path);
            sfs_pl_unlock();
        }
    }
    /* rmdir("/") is EBUSY in Linux, never "not empty" */
    if (rc && is_dir && strcmp(sfs_path, "/") == 0) {
        rc = -EBUSY;
    }
    return rc ? sfs_pl_fail(rc, is_dir ? "rmdir" : "unlink", sfs_path) : 0;
}

SFS_PL_EXPORT int rmdir(const char *path)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_remove_named(rc, sfs_path, 1) : SFS_REAL(rmdir)(path);
}

SFS_PL_EXPORT int unlink(const char *path)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_remove_named(rc, sfs_path, 0) : SFS_REAL(unlink)(path);
}

SFS_PL_EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path_at(dirfd, path, sfs_path);

    if (rc && (flags & ~AT_REMOVEDIR)) {
        return sfs_pl_fail(-EINVAL, "unlinkat", path);
    }
    return rc ? sfs_pl_remove_named(rc, sfs_path, !!(flags & AT_REMOVEDIR))
              : SFS_REAL(unlinkat)(dirfd, path, flags);
}

/* remove(3): glibc's calls its own internal unlink and rmdir, which no
 * preload can interpose (without this a stripefs name failed with ENOENT and
 * stayed). As glibc does: unlink, and rmdir where that says EISDIR. */
SFS_PL_EXPORT int remove(const char *path)
{
    char          sfs_path[SFS_PL_PATH_MAX];
    sfs_client_t *client;
    int           rc = sfs_pl_path(path, sfs_path);

    if (rc == 0) {
        return SFS_REAL(remove)(path);
    }
    if (rc > 0) {
        rc = sfs_pl_enter(&client);
        if (rc == 0) {
            rc = sfs_unlink(client, sfs_path);
            if (rc == -EISDIR) {
                rc = sfs_rmdir(client, sfs_path);
                if (rc && strcmp(sfs_path, "/") == 0) {
                    rc = -EBUSY; /* as rmdir("/") */
                }
            }
            sfs_pl_unlock();
        }
    }
    return rc ? sfs_pl_fail(rc, "remove", sfs_path) : 0;
}

/* Both names resolved: both stripefs (rename there), one of them (EXDEV,
 * so mv copies), or neither (-1: not ours). */
static int sfs_pl_rename_named(int rc_from, const char *from, int rc_to, const char *to,
                               unsigned flags)
{
    sfs_client_t *client;
    sfs_stat_t    s;
    int           rc = rc_from < 0 ? rc_from : rc_to < 0 ? rc_to : 0;

    if (rc == 0 && (!rc_from || !rc_to)) {
        rc = -EXDEV;
    }
    if (rc == 0 && (flags & ~(unsigned)RENAME_NOREPLACE)) {
        rc = -EINVAL; /* RENAME_EXCHANGE, RENAME_WHITEOUT: not offered */
    }
    if (rc == 0) {
        rc = sfs_pl_enter(&client);
        if (rc == 0) {
            if (flags & RENAME_NOREPLACE) {
                /* checked here, not atomically in the service */
                rc = sfs_lookup(client, to, &s);
                rc = rc == 0 ? -EEXIST : rc == -ENOENT ? 0 : rc;
            }
            if (rc == 0) {
                rc = sfs_rename(client, from, to);
            }
            sfs_pl_unlock();
        }
    }
    return rc ? sfs_pl_fail(rc, "rename", rc_from > 0 ? from : to) : 0;
}

SFS_PL_EXPORT int rename(const char *from, const char *to)
{
    char sfs_from[SFS_PL_PATH_MAX], sfs_to[SFS_PL_PATH_MAX];
    int  rc_from = sfs_pl_path(from, sfs_from);
    int  rc_to   = sfs_pl_path(to, sfs_to);

    return rc_from || rc_to ? sfs_pl_rename_named(rc_from, sfs_from, rc_to, sfs_to, 0)
                            : SFS_REAL(rename)(from, to);
}

SFS_PL_EXPORT int renameat(int fromfd, const char *from, int tofd, const char *to)
{
    char sfs_from[SFS_PL_PATH_MAX], sfs_to[SFS_PL_PATH_MAX];
    int  rc_from = sfs_pl_path_at(fromfd, from, sfs_from);
    int  rc_to   = sfs_pl_path_at(tofd, to, sfs_to);

    return rc_from || rc_to ? sfs_pl_rename_named(rc_from, sfs_from, rc_to, sfs_to, 0)
                            : SFS_REAL(renameat)(fromfd, from, tofd, to);
}

SFS_PL_EXPORT int renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned flags)
{
    char sfs_from[SFS_PL_PATH_MAX], sfs_to[SFS_PL_PATH_MAX];
    int  rc_from = sfs_pl_path_at(fromfd, from, sfs_from);
    int  rc_to   = sfs_pl_path_at(tofd, to, sfs_to);

    return rc_from || rc_to ? sfs_pl_rename_named(rc_from, sfs_from, rc_to, sfs_to, flags)
                            : SFS_REAL(renameat2)(fromfd, from, tofd, to, flags);
}

/* ------------------------------------------------------------------------ */
/* chmod and chown                                                           */

static int sfs_pl_chmod_named(int rc, const char *sfs_path, mode_t mode)
{
    sfs_client_t *client;

    if (rc > 0) {
        rc = sfs_pl_enter(&client);
        if (rc == 0) {
            rc = sfs_chmod(client, sfs_path, mode & 07777);
            sfs_pl_unlock();
        }
    }
    return rc ? sfs_pl_fail(rc, "chmod", sfs_path) : 0;
}

SFS_PL_EXPORT int chmod(const char *path, mode_t mode)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_chmod_named(rc, sfs_path, mode) : SFS_REAL(chmod)(path, mode);
}

SFS_PL_EXPORT int fchmodat(int dirfd, const char *path, mode_t mode, int flags)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path_at(dirfd, path, sfs_path);

    return rc ? sfs_pl_chmod_named(rc, sfs_path, mode)
              : SFS_REAL(fchmodat)(dirfd, path, mode, flags);
}

SFS_PL_EXPORT int fchmod(int fd, mode_t mode)
{
    char sfs_path[SFS_PL_PATH_MAX];

    if (!sfs_pl_fd_is_ours(fd)) {
        return SFS_REAL(fchmod)(fd, mode);
    }
    return sfs_pl_chmod_named(sfs_pl_fd_path(fd, sfs_path, NULL) ?: 1, sfs_path, mode);
}

/* The server decides who may: root any owner, the owner a group of its
 * own. -1 keeps an id (SFS_ID_UNCHANGED, the same value). */
static int sfs_pl_chown_named(int rc, const char *sfs_path, uid_t uid, gid_t gid)
{
    sfs_client_t *client;

    if (rc > 0) {
        rc = sfs_pl_enter(&client);
        if (rc == 0) {
            rc = sfs_chown(client, sfs_path, uid == (uid_t)-1 ? SFS_ID_UNCHANGED : (uint32_t)uid,
                           gid == (gid_t)-1 ? SFS_ID_UNCHANGED : (uint32_t)gid);
            sfs_pl_unlock();
        }
    }
    return rc ? sfs_pl_fail(rc, "chown", sfs_path) : 0;
}

SFS_PL_EXPORT int chown(const char *path, uid_t uid, gid_t gid)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_chown_named(rc, sfs_path, uid, gid) : SFS_REAL(chown)(path, uid, gid);
}

SFS_PL_EXPORT int lchown(const char *path, uid_t uid, gid_t gid)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_chown_named(rc, sfs_path, uid, gid) : SFS_REAL(lchown)(path, uid, gid);
}

SFS_PL_EXPORT int fchownat(int dirfd, const char *path, uid_t uid, gid_t gid, int flags)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc;

    if ((flags & AT_EMPTY_PATH) && sfs_pl_is_empty(path) && sfs_pl_fd_is_ours(dirfd)) {
        return sfs_pl_chown_named(sfs_pl_fd_path(dirfd, sfs_path, NULL) ?: 1, sfs_path, uid, gid);
    }
    rc = sfs_pl_path_at(dirfd, path, sfs_path);
    return rc ? sfs_pl_chown_named(rc, sfs_path, uid, gid)
              : SFS_REAL(fchownat)(dirfd, path, uid, gid, flags);
}

SFS_PL_EXPORT int fchown(int fd, uid_t uid, gid_t gid)
{
    char sfs_path[SFS_PL_PATH_MAX];

    if (!sfs_pl_fd_is_ours(fd)) {
        return SFS_REAL(fchown)(fd, uid, gid);
    }
    return sfs_pl_chown_named(sfs_pl_fd_path(fd, sfs_path, NULL) ?: 1, sfs_path, uid, gid);
}

/* ------------------------------------------------------------------------ */
/* times                                                                     */

/* One utimensat time for sfs_utimens: UTIME_NOW and UTIME_OMIT become
 * SFS_UTIME_NOW and SFS_UTIME_OMIT (the server sets "now" by its clock, and
 * lets whoever may write do it, as POSIX says; explicit times need the
 * owner); -EINVAL for a time utimensat refuses. */
static int sfs_pl_utime_ns(const struct timespec *t, uint64_t *ns)
{
    if (t->tv_nsec == UTIME_NOW) {
        *ns = SFS_UTIME_NOW;
    } else if (t->tv_nsec == UTIME_OMIT) {
        *ns = SFS_UTIME_OMIT;
    } else if (t->tv_nsec < 0 || t->tv_nsec >= 1000000000 || t->tv_sec < 0) {
        return -EINVAL;
    } else {
        *ns = (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
    }
    return 0;
}

/* utimensat semantics: NULL = now for both, UTIME_NOW, UTIME_OMIT; both
 * omitted changes nothing and, as in Linux, looks nothing up. */
static int sfs_pl_utimens_named(int rc, const char *sfs_path, const struct timespec times[2])
{
    sfs_client_t *client;
    uint64_t      ns[2] = {SFS_UTIME_NOW, SFS_UTIME_NOW};

    if (rc <= 0) {
        goto out;
    }
    for (int i = 0; times && i < 2; i++) {
        rc = sfs_pl_utime_ns(&times[i], &ns[i]);
        if (rc) {
            goto out;
        }
    }
    if (ns[0] == SFS_UTIME_OMIT && ns[1] == SFS_UTIME_OMIT) {
        return 0;
    }
    rc = sfs_pl_enter(&client);
    if (rc == 0) {
        rc = sfs_utimens(client, sfs_path, ns[0], ns[1]);
        sfs_pl_unlock();
    }
out:
    return rc ? sfs_pl_fail(rc, "utimens", sfs_path) : 0;
}

/* struct timeval[2] (NULL = now) to the timespec form. */
static const struct timespec *sfs_pl_from_timeval(const struct timeval tv[2], struct timespec ts[2])
{
    if (!tv) {
        return NULL;
    }
    for (int i = 0; i < 2; i++) {
        ts[i].tv_sec  = tv[i].tv_sec;
        ts[i].tv_nsec = tv[i].tv_usec >= 0 && tv[i].tv_usec < 1000000 ? tv[i].tv_usec * 1000 : -1;
    }
    return ts;
}

SFS_PL_EXPORT int utimensat(int dirfd, const char *path, const struct timespec times[2], int flags)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc;

    if (sfs_pl_is_null(path) || ((flags & AT_EMPTY_PATH) && !path[0])) {
        /* the descriptor itself (what futimens does) */
        if (!sfs_pl_fd_is_ours(dirfd)) {
            return SFS_REAL(utimensat)(dirfd, path, times, flags);
        }
        return sfs_pl_utimens_named(sfs_pl_fd_path(dirfd, sfs_path, NULL) ?: 1, sfs_path, times);
    }
    rc = sfs_pl_path_at(dirfd, path, sfs_path);
    return rc ? sfs_pl_utimens_named(rc, sfs_path, times)
              : SFS_REAL(utimensat)(dirfd, path, times, flags);
}

SFS_PL_EXPORT int futimens(int fd, const struct timespec times[2])
{
    char sfs_path[SFS_PL_PATH_MAX];

    if (!sfs_pl_fd_is_ours(fd)) {
        return SFS_REAL(futimens)(fd, times);
    }
    return sfs_pl_utimens_named(sfs_pl_fd_path(fd, sfs_path, NULL) ?: 1, sfs_path, times);
}

SFS_PL_EXPORT int utime(const char *path, const struct utimbuf *times)
{
    char            sfs_path[SFS_PL_PATH_MAX];
    struct timespec ts[2];
    int             rc = sfs_pl_path(path, sfs_path);

    if (!rc) {
        return SFS_REAL(utime)(path, times);
    }
    if (times) {
        ts[0].tv_sec  = times->actime;
        ts[0].tv_nsec = 0;
        ts[1].tv_sec  = times->modtime;
        ts[1].tv_nsec = 0;
    }
    return sfs_pl_utimens_named(rc, sfs_path, times ? ts : NULL);
}

SFS_PL_EXPORT int utimes(const char *path, const struct timeval times[2])
{
    char            sfs_path[SFS_PL_PATH_MAX];
    struct timespec ts[2];
    int             rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_utimens_named(rc, sfs_path, sfs_pl_from_timeval(times, ts))
              : SFS_REAL(utimes)(path, times);
}

SFS_PL_EXPORT int lutimes(const char *path, const struct timeval times[2])
{
    char            sfs_path[SFS_PL_PATH_MAX];
    struct timespec ts[2];
    int             rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_utimens_named(rc, sfs_path, sfs_pl_from_timeval(times, ts))
              : SFS_REAL(lutimes)(path, times);
}

SFS_PL_EXPORT int futimesat(int dirfd, const char *path, const struct timeval times[2])
{
    char            sfs_path[SFS_PL_PATH_MAX];
    struct timespec ts[2];
    int             rc = sfs_pl_path_at(dirfd, path, sfs_path);

    return rc ? sfs_pl_utimens_named(rc, sfs_path, sfs_pl_from_timeval(times, ts))
              : SFS_REAL(futimesat)(dirfd, path, times);
}

SFS_PL_EXPORT int futimes(int fd, const struct timeval times[2])
{
    char            sfs_path[SFS_PL_PATH_MAX];
    struct timespec ts[2];

    if (!sfs_pl_fd_is_ours(fd)) {
        return SFS_REAL(futimes)(fd, times);
    }
    return sfs_pl_utimens_named(sfs_pl_fd_path(fd, sfs_path, NULL) ?: 1, sfs_path,
                                sfs_pl_from_timeval(times, ts));
}

/* ------------------------------------------------------------------------ */
/* truncate by name                                                          */

static int sfs_pl_truncate_named(int rc, const char *sfs_path, off_t length)
{
    sfs_client_t *client;
    sfs_file_t   *file;

    if (rc > 0 && length < 0) {
        rc = -EINVAL;
    }
    if (rc > 0) {
        rc = sfs_pl_enter(&client);
        if (rc == 0) {
            rc = sfs_file_open(client, sfs_path, SFS_O_WRONLY, 0, NULL, &file);
            if (rc == 0) {
                rc = sfs_file_truncate(file, (uint64_t)length);
                sfs_file_close(file);
            }
            sfs_pl_unlock();
        }
    }
    return rc ? sfs_pl_fail(rc, "truncate", sfs_path) : 0;
}

SFS_PL_EXPORT int truncate(const char *path, off_t length)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_truncate_named(rc, sfs_path, length) : SFS_REAL(truncate)(path, length);
}

SFS_PL_EXPORT int truncate64(const char *path, off64_t length)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_truncate_named(rc, sfs_path, length) : SFS_REAL(truncate64)(path, length);
}

/* ------------------------------------------------------------------------ */
/* links: stripefs has neither hard nor symbolic links                       */

static int sfs_pl_no_links(int rc, const char *call, const char *sfs_path)
{
    return sfs_pl_fail(rc < 0 ? rc : -EPERM, call, sfs_path);
}

/* link between two names: a bad name's error, EXDEV across file systems,
 * else EPERM (no hard links). */
static int sfs_pl_link_rc(int rc_from, int rc_to)
{
    if (rc_from < 0 || rc_to < 0) {
        return rc_from < 0 ? rc_from : rc_to;
    }
    return rc_from && rc_to ? -EPERM : -EXDEV;
}

SFS_PL_EXPORT int link(const char *from, const char *to)
{
    char sfs_from[SFS_PL_PATH_MAX], sfs_to[SFS_PL_PATH_MAX];
    int  rc_from = sfs_pl_path(from, sfs_from);
    int  rc_to   = sfs_pl_path(to, sfs_to);

    if (!rc_from && !rc_to) {
        return SFS_REAL(link)(from, to);
    }
    return sfs_pl_no_links(sfs_pl_link_rc(rc_from, rc_to), "link", rc_from ? sfs_from : sfs_to);
}

SFS_PL_EXPORT int linkat(int fromfd, const char *from, int tofd, const char *to, int flags)
{
    char sfs_from[SFS_PL_PATH_MAX], sfs_to[SFS_PL_PATH_MAX];
    int  rc_from = sfs_pl_path_at(fromfd, from, sfs_from);
    int  rc_to   = sfs_pl_path_at(tofd, to, sfs_to);

    if (!rc_from && !rc_to) {
        return SFS_REAL(linkat)(fromfd, from, tofd, to, flags);
    }
    return sfs_pl_no_links(sfs_pl_link_rc(rc_from, rc_to), "link", rc_from ? sfs_from : sfs_to);
}

SFS_PL_EXPORT int symlink(const char *target, const char *path)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_no_links(rc, "symlink", sfs_path) : SFS_REAL(symlink)(target, path);
}

SFS_PL_EXPORT int symlinkat(const char *target, int dirfd, const char *path)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path_at(dirfd, path, sfs_path);

    return rc ? sfs_pl_no_links(rc, "symlink", sfs_path) : SFS_REAL(symlinkat)(target, dirfd, path);
}

/* ------------------------------------------------------------------------ */
/* the working directory                                                     */

/* chdir into a stripefs directory: relative names resolve against it from
 * now on (in this process; a child started with exec starts elsewhere). */
static int sfs_pl_chdir_named(int rc, const char *sfs_path)
{
    sfs_stat_t s;

    if (rc > 0) {
        rc = sfs_pl_stat_path(sfs_path, 0, &s);
        if (rc == 0 && s.type != SFS_FILE_TYPE_DIR) {
            rc = -ENOTDIR;
        }
    }
    if (rc) {
        return sfs_pl_fail(rc, "chdir", sfs_path);
    }
    sfs_pl_cwd_set(sfs_path);
    return 0;
}

SFS_PL_EXPORT int chdir(const char *path)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    if (rc) {
        return sfs_pl_chdir_named(rc, sfs_path);
    }
    rc = SFS_REAL(chdir)(path);
    if (rc == 0 && !sfs_pl_busy) {
        sfs_pl_cwd_set(NULL);
    }
    return rc;
}

SFS_PL_EXPORT int fchdir(int fd)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  is_dir = 0;
    int  rc;

    if (sfs_pl_fd_is_ours(fd)) {
        rc = sfs_pl_fd_path(fd, sfs_path, &is_dir);
        return sfs_pl_chdir_named(rc ? rc : is_dir ? 1 : -ENOTDIR, sfs_path);
    }
    rc = SFS_REAL(fchdir)(fd);
    if (rc == 0 && !sfs_pl_busy) {
        sfs_pl_cwd_set(NULL);
    }
    return rc;
}

SFS_PL_EXPORT char *getcwd(char *buf, size_t size)
{
    char cwd[SFS_PL_PATH_MAX], user[PATH_MAX];

    if (sfs_pl_busy || !sfs_pl_cwd_get(cwd)) {
        return SFS_REAL(getcwd)(buf, size);
    }
    if (sfs_pl_path_user(cwd, user, sizeof(user))) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    if (!buf) {
        /* glibc's extension: allocate, at least `size` bytes if given */
        size_t need = strlen(user) + 1;

        buf = malloc(size > need ? size : need);
        if (!buf) {
            errno = ENOMEM;
            return NULL;
        }
        size = size > need ? size : need;
    }
    if (strlen(user) + 1 > size) {
        errno = size ? ERANGE : EINVAL;
        return NULL;
    }
    memcpy(buf, user, strlen(user) + 1);
    return buf;
}

SFS_PL_EXPORT char *get_current_dir_name(void)
{
    char cwd[SFS_PL_PATH_MAX];

    if (sfs_pl_busy || !sfs_pl_cwd_get(cwd)) {
        return SFS_REAL(get_current_dir_name)();
    }
    return getcwd(NULL, 0);
}
