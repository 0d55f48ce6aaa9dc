/*
 * Temporary names in stripefs directories: the mkstemp family (mkstemp,
 * mkostemp, mkstemps, mkostemps and their *64 names) and mkdtemp.
 * (tmpfile(3) is not here: glibc makes it in P_tmpdir, /tmp, never in a
 * directory the program names; see docs/posix-preload.md.)
 */
#include "sfs_preload.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* mkstemp, mkostemp, mkstemps, mkostemps (and the *64 names), mkdtemp       */

/* glibc makes the name and creates the file or directory with its internal
 * open and mkdir, which nothing can interpose: a stripefs template is served
 * here, with glibc's rules (six X's before suffixlen bytes of suffix, else
 * EINVAL; the file O_RDWR | O_CREAT | O_EXCL with mode 0600, the directory
 * 0700, both less the umask as the kernel applies it). */
#define SFS_PL_TEMP_TRIES 1000

/* 1 if tmpl is a stripefs template (sfs_path gets its name as it is), 0 if
 * it is not ours, -errno if it cannot be used. */
static int sfs_pl_temp_check(const char *tmpl, int suffixlen, char *sfs_path)
{
    int    rc = sfs_pl_path(tmpl, sfs_path);
    size_t length;

    if (rc <= 0) {
        return rc;
    }
    length = strlen(tmpl);
    if (suffixlen < 0 || length < 6 + (size_t)suffixlen ||
        memcmp(tmpl + length - (size_t)suffixlen - 6, "XXXXXX", 6) != 0) {
        return -EINVAL;
    }
    return 1;
}

/* Six random letters and digits in place of the X's; sfs_path gets the
 * name. */
static int sfs_pl_temp_next(char *tmpl, int suffixlen, char *sfs_path)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    char             *xs        = tmpl + strlen(tmpl) - (size_t)suffixlen - 6;
    uint64_t          r         = 0;

    if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
        struct timespec now;

        clock_gettime(CLOCK_REALTIME, &now);
        r ^= ((uint64_t)now.tv_nsec << 20 ^ (uint64_t)now.tv_sec ^ (uint64_t)getpid() << 40) *
             0x9e3779b97f4a7c15ull;
    }
    for (int i = 0; i < 6; i++) {
        xs[i] = letters[r % 62];
        r /= 62;
    }
    return sfs_pl_path(tmpl, sfs_path);
}

/* Create a file (returns its descriptor) or, with is_dir, a directory
 * (returns 0) under a fresh name from tmpl; -errno on failure. */
static int sfs_pl_temp_create(char *tmpl, int suffixlen, int flags, int is_dir)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = -EEXIST;

    for (int i = 0; i < SFS_PL_TEMP_TRIES && rc == -EEXIST; i++) {
        rc = sfs_pl_temp_next(tmpl, suffixlen, sfs_path);
        if (rc < 0) {
            break;
        }
        if (is_dir) {
            sfs_client_t *client;

            rc = sfs_pl_enter(&client);
            if (rc == 0) {
                rc = sfs_mkdir(client, sfs_path, 0700 & ~sfs_pl_umask());
                sfs_pl_unlock();
            }
        } else {
            rc = sfs_pl_open_path(sfs_path, (flags & ~O_ACCMODE) | O_RDWR | O_CREAT | O_EXCL, 0600);
        }
    }
    return rc;
}

/* The mkstemp family: suffixlen bytes of suffix, open flags (O_APPEND,
 * O_CLOEXEC, O_SYNC). */
static int sfs_pl_mkstemp(int rc, char *tmpl, const char *sfs_path, int suffixlen, int flags)
{
    if (rc > 0) {
        rc = sfs_pl_temp_create(tmpl, suffixlen, flags, 0);
    }
    return rc < 0 ? sfs_pl_fail(rc, "mkstemp", sfs_path) : rc;
}

#define SFS_PL_MKSTEMP(_name, _params, _suffixlen, _flags, _args)                                  \
    SFS_REAL_DECL(_name);                                                                          \
    SFS_PL_EXPORT int _name _params                                                                \
    {                                                                                              \
        char sfs_path[SFS_PL_PATH_MAX];                                                            \
        int  rc = sfs_pl_temp_check(tmpl, _suffixlen, sfs_path);                                   \
                                                                                                   \
        return rc ? sfs_pl_mkstemp(rc, tmpl, sfs_path, _suffixlen, _flags)                         \
                  : SFS_REAL(_name) _args;                                                         \
    }

SFS_PL_MKSTEMP(mkstemp, (char *tmpl), 0, 0, (tmpl))
SFS_PL_MKSTEMP(mkstemp64, (char *tmpl), 0, 0, (tmpl))
SFS_PL_MKSTEMP(mkostemp, (char *tmpl, int flags), 0, flags, (tmpl, flags))
SFS_PL_MKSTEMP(mkostemp64, (char *tmpl, int flags), 0, flags, (tmpl, flags))
SFS_PL_MKSTEMP(mkstemps, (char *tmpl, int suffixlen), suffixlen, 0, (tmpl, suffixlen))
SFS_PL_MKSTEMP(mkstemps64, (char *tmpl, int suffixlen), suffixlen, 0, (tmpl, suffixlen))
SFS_PL_MKSTEMP(mkostemps, (char *tmpl, int suffixlen, int flags), suffixlen, flags,
               (tmpl, suffixlen, flags))
SFS_PL_MKSTEMP(mkostemps64, (char *tmpl, int suffixlen, int flags), suffixlen, flags,
               (tmpl, suffixlen, flags))

SFS_REAL_DECL(mkdtemp);

SFS_PL_EXPORT char *mkdtemp(char *tmpl)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_temp_check(tmpl, 0, sfs_path);

    if (rc == 0) {
        return SFS_REAL(mkdtemp)(tmpl);
    }
    if (rc > 0) {
        rc = sfs_pl_temp_create(tmpl, 0, 0, 1);
    }
    if (rc < 0) {
        sfs_pl_fail(rc, "mkdtemp", sfs_path);
        return NULL;
    }
    return tmpl;
}
