/*
 * ad_stripefs: the name rule (see ad_stripefs_name.h): STRIPEFS_PREFIX read
 * and applied by common/sfs_name_prefix.c, as the POSIX preload does, so
 * both libraries in one process agree on every name.
 */
#include "ad_stripefs_name.h"

#include "sfs_errno.h"
#include "sfs_name_prefix.h"

#include <pthread.h>
#include <stdio.h>

static pthread_once_t    ADIOI_STRIPEFS_prefix_once = PTHREAD_ONCE_INIT;
static sfs_name_prefix_t ADIOI_STRIPEFS_prefix;

static void ADIOI_STRIPEFS_prefix_init(void)
{
    if (sfs_name_prefix_load(&ADIOI_STRIPEFS_prefix) != 0) {
        fprintf(stderr, "stripefs-mpiio: %s\n", sfs_error_detail());
    }
}

/* The namespace path of a name below the prefix, else NULL. */
static const char *ADIOI_STRIPEFS_Strip(const char *filename)
{
    if (!filename || pthread_once(&ADIOI_STRIPEFS_prefix_once, ADIOI_STRIPEFS_prefix_init) != 0) {
        return NULL;
    }
    return sfs_name_prefix_strip(&ADIOI_STRIPEFS_prefix, filename);
}

int ADIOI_STRIPEFS_Claims(const char *filename)
{
    return ADIOI_STRIPEFS_Strip(filename) != NULL;
}

const char *ADIOI_STRIPEFS_Path(const char *filename)
{
    const char *path = ADIOI_STRIPEFS_Strip(filename);

    return path ? path : filename;
}
