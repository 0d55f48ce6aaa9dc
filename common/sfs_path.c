#include "sfs_path.h"
#include "sfs_errno.h"
#include "sfs_proto.h"

#include <string.h>

int sfs_path_normalize(const char *path, char *out, size_t out_size)
{
    const char *p      = path;
    size_t      length = 0;

    if (out_size < 2) {
        return -ENAMETOOLONG;
    }
    if (strncmp(p, SFS_PATH_PREFIX, strlen(SFS_PATH_PREFIX)) == 0) {
        p += strlen(SFS_PATH_PREFIX);
    }
    if (*p == '\0') {
        return sfs_error_set(-EINVAL, "empty path '%s'", path);
    }
    out[0] = '/';
    length = 1;
    while (*p) {
        const char *start;
        size_t      n;

        while (*p == '/') {
            p++;
        }
        start = p;
        while (*p && *p != '/') {
            p++;
        }
        n = (size_t)(p - start);
        if (n == 0 || (n == 1 && start[0] == '.')) {
            continue;
        }
        if (n == 2 && start[0] == '.' && start[1] == '.') {
            /* drop the last component; the root stays the root */
            while (length > 1 && out[length - 1] != '/') {
                length--;
            }
            if (length > 1) {
                length--;
            }
            continue;
        }
        if (n > SFS_NAME_MAX) {
            return sfs_error_set(-ENAMETOOLONG,
                                 "path '%.64s...': a component is %zu bytes long "
                                 "(at most %d)",
                                 path, n, SFS_NAME_MAX);
        }
        if (length + (length > 1) + n + 1 > out_size || length + (length > 1) + n >= SFS_PATH_MAX) {
            return sfs_error_set(-ENAMETOOLONG, "path '%.64s...' is too long (at most %d bytes)",
                                 path, SFS_PATH_MAX - 1);
        }
        if (length > 1) {
            out[length++] = '/';
        }
        memcpy(out + length, start, n);
        length += n;
    }
    out[length] = '\0';
    return 0;
}

int sfs_path_check(const char *path)
{
    size_t      total = strnlen(path, SFS_PATH_MAX);
    const char *p     = path;

    if (total >= SFS_PATH_MAX) {
        return -ENAMETOOLONG;
    }
    if (path[0] != '/') {
        return -EINVAL;
    }
    if (path[1] == '\0') {
        return 0;
    }
    while (*p == '/') {
        const char *start = ++p;
        size_t      n;

        while (*p && *p != '/') {
            p++;
        }
        n = (size_t)(p - start);
        if (n == 0 || (n == 1 && start[0] == '.') ||
            (n == 2 && start[0] == '.' && start[1] == '.')) {
            return -EINVAL;
        }
        if (n > SFS_NAME_MAX) {
            return -ENAMETOOLONG;
        }
    }
    return 0;
}

int sfs_path_split(const char *path, char *parent, size_t parent_size, const char **name_p)
{
    const char *slash = strrchr(path, '/');
    size_t      n;

    if (!slash || path[1] == '\0') {
        return -EINVAL;
    }
    n = (size_t)(slash - path);
    if (n == 0) {
        n = 1; /* parent is the root */
    }
    if (n >= parent_size) {
        return -ENAMETOOLONG;
    }
    memcpy(parent, path, n);
    parent[n] = '\0';
    *name_p   = slash + 1;
    return 0;
}

int sfs_path_is_within(const char *path, const char *dir)
{
    size_t n = strlen(dir);

    if (strcmp(dir, "/") == 0) {
        return 1;
    }
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}
