/*
 * sfs_tunable: the environment knobs of one subsystem, in one table.
 *
 * Promise: every environment variable stripefs reads is an entry of some
 * subsystem's table (name, type, default, range, help), is read only through
 * these functions, and is listed with its current value by `stripefs-ctl
 * info`. Our own variables are named STRIPEFS_*; a table may also list a
 * variable of a library we honour (UCX_TLS), marked external.
 *
 * A malformed or out-of-range value is an error that names the variable and
 * the accepted range; it is never silently replaced by the default.
 */
#ifndef SFS_TUNABLE_H
#define SFS_TUNABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
    SFS_TUNABLE_BOOL,   /* 0/1, yes/no, on/off, true/false */
    SFS_TUNABLE_INT,    /* decimal integer in [min, max] */
    SFS_TUNABLE_SIZE,   /* bytes, with K/M/G/T suffixes (1024-based), in [min, max] */
    SFS_TUNABLE_STRING, /* free text; `check` may validate it */
} sfs_tunable_type_t;

#define SFS_TUNABLE_EXTERNAL 0x1u /* another library's variable that we honour */

typedef struct sfs_tunable sfs_tunable_t;

/* A STRING entry's validator: 0, or -EINVAL with sfs_error_set() naming the
 * variable and what is wrong with `text`. */
typedef int (*sfs_tunable_check_t)(const sfs_tunable_t *entry, const char *text);

struct sfs_tunable {
    const char         *name; /* full variable name: "STRIPEFS_TIMEOUT" */
    sfs_tunable_type_t  type;
    const char         *default_value; /* as text; NULL: unset by default */
    int64_t             min, max;      /* INT and SIZE only */
    const char         *help;          /* one line: what it changes, its unit */
    unsigned            flags;         /* SFS_TUNABLE_EXTERNAL */
    sfs_tunable_check_t check;         /* STRING only; NULL: any text */
};

typedef struct sfs_tunable_table {
    const char          *subsystem; /* "transport", "client", ... */
    const sfs_tunable_t *entries;
    size_t               count;
} sfs_tunable_table_t;

#define SFS_TUNABLE_TABLE(subsys, array)                                                           \
    {                                                                                              \
        (subsys), (array), sizeof(array) / sizeof((array)[0])                                      \
    }

/* The entry called `name`, or NULL (a programming error: names are constants). */
const sfs_tunable_t *sfs_tunable_find(const sfs_tunable_table_t *table, const char *name);

/* The variable's text as set in the environment, or NULL when unset or empty. */
const char *sfs_tunable_env(const sfs_tunable_table_t *table, const char *name);

/* Whether the variable is set (non-empty) in the environment. */
bool sfs_tunable_is_set(const sfs_tunable_table_t *table, const char *name);

/* Typed readers: the environment's value, else the default. 0 on success;
 * -EINVAL with sfs_error_set() naming the variable when the text does not
 * parse or is outside [min, max]; -ENOENT when unset and without default. */
int sfs_tunable_bool(const sfs_tunable_table_t *table, const char *name, bool *out);
int sfs_tunable_int(const sfs_tunable_table_t *table, const char *name, int64_t *out);
int sfs_tunable_size(const sfs_tunable_table_t *table, const char *name, uint64_t *out);
/* `*out` points into the environment or at the default (NULL when neither);
 * -EINVAL when the entry's `check` refuses the text. */
int sfs_tunable_string(const sfs_tunable_table_t *table, const char *name, const char **out);

/* Parse `text` as `entry` would be parsed (for tests and for `info`). */
int sfs_tunable_parse_int(const sfs_tunable_t *entry, const char *text, int64_t *out);

/* One line per entry: name, current value ("(default)" marks an unset one),
 * an error note when the current value is invalid, and the help text.
 * Returns how many of the table's current values are invalid. */
int sfs_tunable_print(FILE *out, const sfs_tunable_table_t *table);

#endif /* SFS_TUNABLE_H */
