/*
 * The prefix under which stripefs paths appear to POSIX calls
 * (STRIPEFS_PREFIX, default /stripefs) and the one name rule that the
 * MPI-IO driver (adio/ad_stripefs/ad_stripefs_name.c) and the POSIX preload
 * (preload/sfs_preload.c) both apply with it, so that a name reaches the
 * same file through both APIs: a name that is the prefix or lies below it
 * is the namespace path after the prefix.
 *
 * Promises: one parse of the variable for both libraries (the same
 * defaults, the same refusals); no allocation; no state of its own.
 */
#ifndef SFS_NAME_PREFIX_H
#define SFS_NAME_PREFIX_H

#include "sfs_tunable.h"

#include <stddef.h>

#define SFS_NAME_PREFIX_DEFAULT "/stripefs"
/* STRIPEFS_PREFIX set to this switches the prefix off (an empty variable
 * counts as unset, as for every tunable). */
#define SFS_NAME_PREFIX_NONE "none"
#define SFS_NAME_PREFIX_MAX  4096

typedef struct sfs_name_prefix {
    char   path[SFS_NAME_PREFIX_MAX]; /* absolute, no trailing '/' */
    size_t length;                    /* 0: no prefix */
} sfs_name_prefix_t;

/* STRIPEFS_PREFIX, shown by stripefs-ctl info. */
extern const sfs_tunable_table_t sfs_name_tunables;

/* Read STRIPEFS_PREFIX into *prefix: 0, or -EINVAL with a message naming
 * the value (a relative path or "/", which would capture names that are
 * not ours); *prefix then has none. */
int sfs_name_prefix_load(sfs_name_prefix_t *prefix);

/* The namespace path `name` stands for when it is the prefix ("/") or lies
 * below it (a pointer into name); NULL otherwise. */
const char *sfs_name_prefix_strip(const sfs_name_prefix_t *prefix, const char *name);

#endif /* SFS_NAME_PREFIX_H */
