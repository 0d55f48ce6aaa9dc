/*
 * realpath and canonicalize_file_name of stripefs names: the canonical
 * user-visible name of an existing entry (split from sfs_preload_stat.c).
 */
#include "sfs_preload.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

SFS_REAL_DECL(realpath);
SFS_REAL_DECL(canonicalize_file_name);

/* The canonical user-visible name of an existing stripefs entry. */
static char *sfs_pl_realpath_ours(int rc, const char *sfs_path, char *resolved)
{
    char       user[PATH_MAX];
    sfs_stat_t s;

    if (rc > 0) {
        rc = sfs_pl_stat_path(sfs_path, 0, &s);
    }
    if (rc == 0) {
        rc = sfs_pl_path_user(sfs_path, user, sizeof(user)) ? -ENAMETOOLONG : 0;
    }
    if (rc) {
        sfs_pl_fail(rc, "realpath", sfs_path);
        return NULL;
    }
    if (resolved) {
        memcpy(resolved, user, strlen(user) + 1);
        return resolved;
    }
    resolved = strdup(user);
    if (!resolved) {
        errno = ENOMEM;
    }
    return resolved;
}

SFS_PL_EXPORT char *realpath(const char *path, char *resolved)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_realpath_ours(rc, sfs_path, resolved) : SFS_REAL(realpath)(path, resolved);
}

SFS_PL_EXPORT char *canonicalize_file_name(const char *path)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    return rc ? sfs_pl_realpath_ours(rc, sfs_path, NULL) : SFS_REAL(canonicalize_file_name)(path);
}
