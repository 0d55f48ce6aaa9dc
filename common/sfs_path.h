/*
 * Path rules. Clients normalise what users give them; servers accept only
 * canonical paths from the wire.
 *
 * Canonical: starts with '/', components separated by a single '/', no
 * trailing '/' (except the root "/"), no "." or ".." components, each
 * component 1..SFS_NAME_MAX bytes, the whole path shorter than SFS_PATH_MAX.
 */
#ifndef SFS_PATH_H
#define SFS_PATH_H

#include <stddef.h>

#define SFS_PATH_PREFIX "stripefs:"

/* Normalise a user path: strip the "stripefs:" prefix, make it absolute
 * (relative paths are taken from the root), collapse "//" and "." and resolve
 * ".." lexically (".." of the root is the root, as in POSIX). Returns 0,
 * -EINVAL (empty path), or -ENAMETOOLONG (a component or the result too
 * long). The error detail names the path. */
int sfs_path_normalize(const char *path, char *out, size_t out_size);

/* 0 if `path` is canonical, else -EINVAL or -ENAMETOOLONG. */
int sfs_path_check(const char *path);

/* Split a canonical path into its parent (canonical) and final name.
 * The root has no parent: -EINVAL. */
int sfs_path_split(const char *path, char *parent, size_t parent_size, const char **name_p);

/* 1 if canonical path `path` equals `dir` or lies below it. */
int sfs_path_is_within(const char *path, const char *dir);

#endif
