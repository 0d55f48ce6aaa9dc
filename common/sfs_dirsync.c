#include "sfs_dirsync.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

static int sfs_fsync_fd_close(int fd)
{
    int rc = 0;

    if (fd < 0) {
        return -errno;
    }
    if (fsync(fd) != 0) {
        rc = -errno;
    }
    close(fd);
    return rc;
}

int sfs_fsync_dir(const char *path)
{
    return sfs_fsync_fd_close(open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

int sfs_fsync_dirat(int dirfd, const char *name)
{
    return sfs_fsync_fd_close(openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

int sfs_fsync_parent(const char *path)
{
    char   parent[PATH_MAX];
    size_t n = strlen(path);

    if (n >= sizeof(parent)) {
        return -ENAMETOOLONG;
    }
    memcpy(parent, path, n + 1);
    while (n > 1 && parent[n - 1] == '/') { /* "a/b/" is b's name in a */
        parent[--n] = '\0';
    }
    while (n > 0 && parent[n - 1] != '/') {
        n--;
    }
    if (n == 0) {
        return sfs_fsync_dir(".");
    }
    parent[n > 1 ? n - 1 : 1] = '\0'; /* "/x" -> "/" */
    return sfs_fsync_dir(parent);
}
