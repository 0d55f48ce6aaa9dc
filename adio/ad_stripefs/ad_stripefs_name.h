/*
 * ad_stripefs: which stripefs path a file name given to MPI-IO names.
 *
 * The rule, common/sfs_name_prefix.h's, which the POSIX preload applies too,
 * so that a name reaches the same file through both APIs: after an optional
 * "stripefs:" (which ROMIO removes before the driver sees the name), a name
 * that is the prefix STRIPEFS_PREFIX (default /stripefs) or lies below it is
 * the namespace path after the prefix; any other name is the namespace path
 * itself. So stripefs:/stripefs/x, /stripefs/x and stripefs:/x are all /x.
 * STRIPEFS_PREFIX=none keeps only the last form (stripefs:/stripefs/x is
 * then /stripefs/x). The prefix is read once per process.
 *
 * No ROMIO header here: ROMIO's ad_fstype.c calls ADIOI_STRIPEFS_Claims
 * (romio patch 0013) with its own declaration of it.
 */
#ifndef AD_STRIPEFS_NAME_H_INCLUDED
#define AD_STRIPEFS_NAME_H_INCLUDED

/* 1 if filename (as given to MPI_File_open, no "xxx:" prefix) is the prefix
 * or a name below it, so ROMIO should pick this driver; else 0. */
int ADIOI_STRIPEFS_Claims(const char *filename);

/* The namespace path of a name the driver got (prefix "stripefs:" already
 * removed): a pointer into filename, or to "/" for the prefix itself. */
const char *ADIOI_STRIPEFS_Path(const char *filename);

#endif /* AD_STRIPEFS_NAME_H_INCLUDED */
