/* Environment knobs read through per-subsystem tables (see sfs_tunable.h).
 * This file is the only one in the tree that calls getenv(). */
#include "sfs_tunable.h"

#include "sfs_config.h"
#include "sfs_errno.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const sfs_tunable_t *sfs_tunable_find(const sfs_tunable_table_t *table, const char *name)
{
    for (size_t i = 0; table && name && i < table->count; i++) {
        if (strcmp(table->entries[i].name, name) == 0) {
            return &table->entries[i];
        }
    }
    return NULL;
}

static const char *sfs_tunable_entry_env(const sfs_tunable_t *entry)
{
    const char *text = getenv(entry->name);

    return (text && *text) ? text : NULL;
}

const char *sfs_tunable_env(const sfs_tunable_table_t *table, const char *name)
{
    const sfs_tunable_t *entry = sfs_tunable_find(table, name);

    return entry ? sfs_tunable_entry_env(entry) : NULL;
}

bool sfs_tunable_is_set(const sfs_tunable_table_t *table, const char *name)
{
    return sfs_tunable_env(table, name) != NULL;
}

/* The text to parse for `entry`: the environment's, else the default. */
static int sfs_tunable_text(const sfs_tunable_table_t *table, const char *name,
                            const sfs_tunable_t **entry_p, const char **text_p)
{
    const sfs_tunable_t *entry = sfs_tunable_find(table, name);

    if (!entry) {
        return sfs_error_set(-EINVAL, "%s is not a tunable of %s", name ? name : "(null)",
                             table && table->subsystem ? table->subsystem : "(no table)");
    }
    *entry_p = entry;
    *text_p  = sfs_tunable_entry_env(entry);
    if (!*text_p) {
        *text_p = entry->default_value;
    }
    return *text_p ? 0 : -ENOENT;
}

static int sfs_tunable_parse_bool(const sfs_tunable_t *entry, const char *text, bool *out)
{
    static const char *const yes[] = {"1", "yes", "on", "true", "y"};
    static const char *const no[]  = {"0", "no", "off", "false", "n"};

    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcasecmp(text, yes[i]) == 0) {
            *out = true;
            return 0;
        }
        if (strcasecmp(text, no[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    return sfs_error_set(-EINVAL, "%s=%s: expected 1/0, yes/no, on/off or true/false", entry->name,
                         text);
}

int sfs_tunable_parse_int(const sfs_tunable_t *entry, const char *text, int64_t *out)
{
    char     *end = NULL;
    long long value;

    if (entry->type == SFS_TUNABLE_SIZE) {
        uint64_t bytes;

        if (sfs_parse_size(text, &bytes) != 0 || bytes > INT64_MAX) {
            return sfs_error_set(-EINVAL, "%s=%s: expected a size (like 512K, 4M)", entry->name,
                                 text);
        }
        value = (long long)bytes;
    } else {
        errno = 0;
        value = strtoll(text, &end, 10);
        /* (strtoll would skip leading blanks: " 3" is not a number either) */
        if (errno != 0 || end == text || *end != '\0' || isspace((unsigned char)text[0])) {
            return sfs_error_set(-EINVAL, "%s=%s: expected an integer", entry->name, text);
        }
    }
    if (value < entry->min || value > entry->max) {
        return sfs_error_set(-EINVAL, "%s=%s: out of range %" PRId64 "..%" PRId64, entry->name,
                             text, entry->min, entry->max);
    }
    *out = value;
    return 0;
}

int sfs_tunable_bool(const sfs_tunable_table_t *table, const char *name, bool *out)
{
    const sfs_tunable_t *entry;
    const char          *text;
    int                  rc = sfs_tunable_text(table, name, &entry, &text);

    if (rc != 0) {
        return rc;
    }
    if (entry->type != SFS_TUNABLE_BOOL) {
        return sfs_error_set(-EINVAL, "%s is not a boolean tunable", name);
    }
    return sfs_tunable_parse_bool(entry, text, out);
}

int sfs_tunable_int(const sfs_tunable_table_t *table, const char *name, int64_t *out)
{
    const sfs_tunable_t *entry;
    const char          *text;
    int                  rc = sfs_tunable_text(table, name, &entry, &text);

    if (rc != 0) {
        return rc;
    }
    if (entry->type != SFS_TUNABLE_INT && entry->type != SFS_TUNABLE_SIZE) {
        return sfs_error_set(-EINVAL, "%s is not a numeric tunable", name);
    }
    return sfs_tunable_parse_int(entry, text, out);
}

int sfs_tunable_size(const sfs_tunable_table_t *table, const char *name, uint64_t *out)
{
    int64_t value = 0;
    int     rc    = sfs_tunable_int(table, name, &value);

    if (rc == 0) {
        *out = (uint64_t)value;
    }
    return rc;
}

int sfs_tunable_string(const sfs_tunable_table_t *table, const char *name, const char **out)
{
    const sfs_tunable_t *entry;
    const char          *text = NULL;
    int                  rc   = sfs_tunable_text(table, name, &entry, &text);

    if (rc == -ENOENT) {
        *out = NULL;
        return 0;
    }
    if (rc != 0) {
        return rc;
    }
    if (entry->type == SFS_TUNABLE_STRING && entry->check) {
        rc = entry->check(entry, text);
        if (rc != 0) {
            return rc;
        }
    }
    *out = text;
    return 0;
}

static const char *sfs_tunable_type_name(sfs_tunable_type_t type)
{
    switch (type) {
    case SFS_TUNABLE_BOOL:
        return "bool";
    case SFS_TUNABLE_INT:
        return "int";
    case SFS_TUNABLE_SIZE:
        return "size";
    case SFS_TUNABLE_STRING:
        return "string";
    }
    return "?";
}

int sfs_tunable_print(FILE *out, const sfs_tunable_table_t *table)
{
    int invalid = 0;

    fprintf(out, "# %s\n", table->subsystem);
    for (size_t i = 0; i < table->count; i++) {
        const sfs_tunable_t *entry = &table->entries[i];
        const char          *env   = sfs_tunable_entry_env(entry);
        const char          *shown = env ? env : entry->default_value;
        int64_t              number;
        bool                 flag;
        int                  rc = 0;

        if (env && entry->type == SFS_TUNABLE_BOOL) {
            rc = sfs_tunable_parse_bool(entry, env, &flag);
        } else if (env && (entry->type == SFS_TUNABLE_INT || entry->type == SFS_TUNABLE_SIZE)) {
            rc = sfs_tunable_parse_int(entry, env, &number);
        } else if (env && entry->type == SFS_TUNABLE_STRING && entry->check) {
            rc = entry->check(entry, env);
        }
        fprintf(out, "%s=%s%s%s  # %s, %s%s\n", entry->name, shown ? shown : "",
                env ? "" : " (default)", rc != 0 ? " (INVALID)" : "",
                sfs_tunable_type_name(entry->type), entry->help,
                (entry->flags & SFS_TUNABLE_EXTERNAL) ? " [external]" : "");
        if (rc != 0) {
            fprintf(out, "#   error: %s\n", sfs_error_detail());
            invalid++;
        }
    }
    return invalid;
}
