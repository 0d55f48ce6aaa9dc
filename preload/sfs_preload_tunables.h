/*
 * The environment knobs of libstripefs-posix.so (see common/sfs_tunable.h).
 *
 * Header-only on purpose: stripefs-ctl includes it to print the table with
 * the current values (`stripefs-ctl info`) without linking the preload
 * library, and the preload reads its variables through it. Both objects are
 * static, so each includer has its own copy; `unused` keeps a file that
 * includes the header for one of them free of warnings.
 */
#ifndef SFS_PRELOAD_TUNABLES_H
#define SFS_PRELOAD_TUNABLES_H

#include "sfs_tunable.h"

/* (STRIPEFS_PREFIX is common/sfs_name_prefix.h's: the MPI-IO driver reads
 * it too.) */

__attribute__((unused)) static const sfs_tunable_t sfs_preload_tunable_entries[] = {
    {.name          = "STRIPEFS_PRELOAD_DEBUG",
     .type          = SFS_TUNABLE_BOOL,
     .default_value = "0",
     .help          = "report every failed stripefs call on stderr, with the service's detail"},
    {.name          = "STRIPEFS_PRELOAD_LIST_ATTRS",
     .type          = SFS_TUNABLE_BOOL,
     .default_value = "1",
     .help          = "directory listings bring their entries' attributes, a page in one round "
                      "trip, and a stat of an entry just listed takes them (0: a round trip per "
                      "stat)"},
    {.name          = "STRIPEFS_CLIENT_LIBRARY",
     .type          = SFS_TUNABLE_STRING,
     .default_value = NULL,
     .help          = "the client library to dlopen (unset: libstripefs.so.0 next to the "
                      "preload library, else the loader's search path)"},
};

__attribute__((unused)) static const sfs_tunable_table_t sfs_preload_tunables =
    SFS_TUNABLE_TABLE("preload", sfs_preload_tunable_entries);

#endif /* SFS_PRELOAD_TUNABLES_H */
