/* The STRIPEFS_PREFIX rule shared by the MPI-IO driver and the POSIX
 * preload (sfs_name_prefix.h). */
#include "sfs_name_prefix.h"

#include "sfs_errno.h"

#include <string.h>

/* The length of `value` as a prefix (trailing '/' trimmed), 0 for "none";
 * -EINVAL for a relative path or "/", which would capture names that are
 * not ours. */
static long sfs_name_prefix_length(const char *value)
{
    size_t n;

    if (strcmp(value, SFS_NAME_PREFIX_NONE) == 0) {
        return 0;
    }
    n = strlen(value);
    while (n > 1 && value[n - 1] == '/') {
        n--;
    }
    if (value[0] != '/' || n == 1 || n >= SFS_NAME_PREFIX_MAX) {
        return sfs_error_set(-EINVAL,
                             "STRIPEFS_PREFIX='%s' ignored: it must be an absolute path other "
                             "than '/' (or '" SFS_NAME_PREFIX_NONE "')",
                             value);
    }
    return (long)n;
}

static int sfs_name_prefix_check(const sfs_tunable_t *entry, const char *text)
{
    long n = sfs_name_prefix_length(text);

    (void)entry;
    return n < 0 ? (int)n : 0;
}

static const sfs_tunable_t sfs_name_tunable_entries[] = {
    {.name          = "STRIPEFS_PREFIX",
     .type          = SFS_TUNABLE_STRING,
     .default_value = SFS_NAME_PREFIX_DEFAULT,
     .help =
         "the directory (absolute, not /) whose paths are stripefs paths, for POSIX "
         "calls and MPI-IO alike; '" SFS_NAME_PREFIX_NONE "': only stripefs:/... names are served",
     .check = sfs_name_prefix_check},
};

const sfs_tunable_table_t sfs_name_tunables = SFS_TUNABLE_TABLE("names", sfs_name_tunable_entries);

int sfs_name_prefix_load(sfs_name_prefix_t *prefix)
{
    const char *value = NULL;
    long        n;
    int         rc;

    prefix->path[0] = '\0';
    prefix->length  = 0;
    /* the entry's check refuses a bad value, with the message */
    rc = sfs_tunable_string(&sfs_name_tunables, "STRIPEFS_PREFIX", &value);
    if (rc) {
        return rc;
    }
    n = sfs_name_prefix_length(value ? value : SFS_NAME_PREFIX_DEFAULT);
    if (n <= 0) {
        return (int)n; /* 0: "none", only "stripefs:" names */
    }
    memcpy(prefix->path, value ? value : SFS_NAME_PREFIX_DEFAULT, (size_t)n);
    prefix->path[n] = '\0';
    prefix->length  = (size_t)n;
    return 0;
}

const char *sfs_name_prefix_strip(const sfs_name_prefix_t *prefix, const char *name)
{
    size_t n = prefix->length;

    if (!n || !name || strncmp(name, prefix->path, n) != 0 || (name[n] != '\0' && name[n] != '/')) {
        return NULL;
    }
    return name[n] ? name + n : "/";
}
