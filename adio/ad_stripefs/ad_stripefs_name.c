/*
 * ad_stripefs: the name rule (see ad_stripefs_name.h). The prefix is the
 * preload's tunable, read through its table, and checked as the preload
 * checks it, so both libraries in one process agree on every name.
 */
#include "ad_stripefs_name.h"

#include "sfs_preload_tunables.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_once_t ADIOI_STRIPEFS_prefix_once = PTHREAD_ONCE_INIT;
static char           ADIOI_STRIPEFS_prefix[256];
static size_t         ADIOI_STRIPEFS_prefix_length; /* 0: no prefix */

static void ADIOI_STRIPEFS_prefix_init(void)
{
    const char *env = NULL;
    size_t      n;

    if (sfs_tunable_string(&sfs_preload_tunables, "STRIPEFS_PREFIX", &env) != 0 || !env) {
        env = SFS_PL_PREFIX_DEFAULT;
    }
    if (strcmp(env, SFS_PL_PREFIX_NONE) == 0) {
        return;
    }
    n = strlen(env);
    while (n > 1 && env[n - 1] == '/') {
        n--;
    }
    /* "/" or a relative prefix would capture names that are not ours */
    if (env[0] != '/' || n == 1 || n >= sizeof(ADIOI_STRIPEFS_prefix)) {
        fprintf(stderr,
                "stripefs-mpiio: STRIPEFS_PREFIX='%s' ignored: it must be an absolute "
                "path other than '/' (or '" SFS_PL_PREFIX_NONE "')\n",
                env);
        return;
    }
    memcpy(ADIOI_STRIPEFS_prefix, env, n);
    ADIOI_STRIPEFS_prefix[n]     = '\0';
    ADIOI_STRIPEFS_prefix_length = n;
}

int ADIOI_STRIPEFS_Claims(const char *filename)
{
    size_t n;

    if (!filename || pthread_once(&ADIOI_STRIPEFS_prefix_once, ADIOI_STRIPEFS_prefix_init) != 0) {
        return 0;
    }
    n = ADIOI_STRIPEFS_prefix_length;
    return n && strncmp(filename, ADIOI_STRIPEFS_prefix, n) == 0 &&
           (filename[n] == '\0' || filename[n] == '/');
}

const char *ADIOI_STRIPEFS_Path(const char *filename)
{
    if (!ADIOI_STRIPEFS_Claims(filename)) {
        return filename;
    }
    return filename[ADIOI_STRIPEFS_prefix_length] ? filename + ADIOI_STRIPEFS_prefix_length : "/";
}
