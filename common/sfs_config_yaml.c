/*
 * Reading the config's YAML: one libyaml event at a time, through tables of
 * keys (sfs_config_key_t) that say where each value goes and what it may be.
 * Here are the messages, the event reader, the value readers, mappings and
 * lists of mappings; the tables themselves are in sfs_config.c.
 *
 * The reader descends only where a table has a level, so deep or huge
 * inputs stop at the first unexpected node; the current event is owned by
 * the context and deleted before the next one is read, which keeps every
 * error path free of leaks. The first error ends the parse and is recorded
 * as "FILE:LINE: KEY: problem" with sfs_error_set().
 */
#define SFS_LOG_FAC "config"
#include "sfs_config_internal.h"
#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------ */
/* Messages                                                            */

/* `text` quoted for a message: control bytes escaped, long values cut. */
const char *sfs_config_show(const char *text, size_t length, char *buf, size_t buflen)
{
    size_t out = 0;

    for (size_t i = 0; i < length && out + 8 < buflen; i++) {
        unsigned char c = (unsigned char)text[i];

        if (i == SFS_CONFIG_SHOW_MAX) {
            memcpy(buf + out, "...", 3);
            out += 3;
            break;
        }
        if (c < 0x20 || c == 0x7f) {
            out += (size_t)snprintf(buf + out, buflen - out, "\\x%02x", c);
        } else {
            buf[out++] = (char)c;
        }
    }
    buf[out] = '\0';
    return buf;
}

int sfs_config_fail(const sfs_config_ctx_t *ctx, int line, const char *path, const char *fmt, ...)
{
    char        problem[SFS_ERROR_DETAIL_MAX];
    char        where[32] = "";
    const char *name      = ctx->name;
    size_t      name_len  = strlen(name);
    va_list     ap;

    va_start(ap, fmt);
    vsnprintf(problem, sizeof(problem), fmt, ap);
    va_end(ap);
    if (line > 0) {
        snprintf(where, sizeof(where), ":%d", line);
    }
    /* Keep the end of a long file name so that the key still fits. */
    if (name_len > 160) {
        name += name_len - 157;
    }
    sfs_error_set(-EINVAL, "%s%s%s: %s%s%s", name != ctx->name ? "..." : "", name, where,
                  path ? path : "", path && *path ? ": " : "", problem);
    sfs_debug("%s", sfs_error_detail());
    return -EINVAL;
}

int sfs_config_line_of(const yaml_mark_t *mark)
{
    return mark->line >= INT_MAX ? INT_MAX : (int)mark->line + 1;
}

int sfs_config_event_line(const sfs_config_ctx_t *ctx)
{
    return sfs_config_line_of(&ctx->event.start_mark);
}

/* ------------------------------------------------------------------ */
/* Events                                                              */

static int sfs_config_syntax_error(sfs_config_ctx_t *ctx)
{
    const yaml_parser_t *parser      = &ctx->parser;
    char                 context[64] = "";
    int                  line        = 1;

    if (parser->error == YAML_MEMORY_ERROR) {
        return sfs_error_set(-ENOMEM, "%s: out of memory while reading YAML", ctx->name);
    }
    if (parser->error == YAML_READER_ERROR) {
        /* The reader reports a byte offset, not a mark. */
        for (size_t i = 0; i < parser->problem_offset && i < ctx->length; i++) {
            line += ctx->text[i] == '\n';
        }
        return sfs_config_fail(ctx, line, NULL, "invalid YAML: %s (byte 0x%x at offset %zu)",
                               parser->problem ? parser->problem : "unreadable input",
                               (unsigned)parser->problem_value & 0xffu, parser->problem_offset);
    }
    if (parser->context != NULL) {
        snprintf(context, sizeof(context), " (%s at line %d)", parser->context,
                 sfs_config_line_of(&parser->context_mark));
    }
    return sfs_config_fail(ctx, sfs_config_line_of(&parser->problem_mark), NULL,
                           "column %zu: invalid YAML: %s%s", parser->problem_mark.column + 1,
                           parser->problem ? parser->problem : "syntax error", context);
}

/* Replace the current event by the next one. */
int sfs_config_next(sfs_config_ctx_t *ctx)
{
    yaml_event_delete(&ctx->event);
    if (!yaml_parser_parse(&ctx->parser, &ctx->event)) {
        return sfs_config_syntax_error(ctx);
    }
    return 0;
}

int sfs_config_is_null(const yaml_event_t *event)
{
    const char *value = (const char *)event->data.scalar.value;
    size_t      len   = event->data.scalar.length;

    if (event->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
        return 0;
    }
    return len == 0 || (len == 1 && value[0] == '~') ||
           (len == 4 &&
            (!strcmp(value, "null") || !strcmp(value, "Null") || !strcmp(value, "NULL")));
}

/* What the current event is, for "expected X, found Y". */
static const char *sfs_config_describe(const sfs_config_ctx_t *ctx, char *buf, size_t buflen)
{
    const yaml_event_t *event = &ctx->event;
    char                shown[SFS_CONFIG_SHOW_BUF];

    switch (event->type) {
    case YAML_SCALAR_EVENT:
        if (sfs_config_is_null(event)) {
            return "no value";
        }
        snprintf(buf, buflen, "'%s'",
                 sfs_config_show((const char *)event->data.scalar.value, event->data.scalar.length,
                                 shown, sizeof(shown)));
        return buf;
    case YAML_MAPPING_START_EVENT:
        return "a mapping";
    case YAML_SEQUENCE_START_EVENT:
        return "a list";
    default:
        return "something else";
    }
}

/* Check that the current event is a node of `type` that we can use:
 * no aliases, no tags, scalars neither null nor holding NUL bytes. */
int sfs_config_expect(sfs_config_ctx_t *ctx, const char *path, yaml_event_type_t type,
                      const char *expected)
{
    const yaml_event_t *event = &ctx->event;
    int                 line  = sfs_config_event_line(ctx);
    const yaml_char_t  *tag   = NULL;
    char                shown[SFS_CONFIG_SHOW_BUF], found[SFS_CONFIG_SHOW_BUF + 4];

    switch (event->type) {
    case YAML_ALIAS_EVENT:
        return sfs_config_fail(ctx, line, path, "aliases (*%s) are not supported",
                               sfs_config_show((const char *)event->data.alias.anchor,
                                               strlen((const char *)event->data.alias.anchor),
                                               shown, sizeof(shown)));
    case YAML_SCALAR_EVENT:
        tag = event->data.scalar.tag;
        break;
    case YAML_MAPPING_START_EVENT:
        tag = event->data.mapping_start.tag;
        break;
    case YAML_SEQUENCE_START_EVENT:
        tag = event->data.sequence_start.tag;
        break;
    default:
        break;
    }
    if (tag != NULL) {
        return sfs_config_fail(
            ctx, line, path, "YAML tags (%s) are not supported",
            sfs_config_show((const char *)tag, strlen((const char *)tag), shown, sizeof(shown)));
    }
    if (event->type != type || (type == YAML_SCALAR_EVENT && sfs_config_is_null(event))) {
        return sfs_config_fail(ctx, line, path, "expected %s, found %s", expected,
                               sfs_config_describe(ctx, found, sizeof(found)));
    }
    if (type == YAML_SCALAR_EVENT &&
        memchr(event->data.scalar.value, '\0', event->data.scalar.length) != NULL) {
        return sfs_config_fail(ctx, line, path, "the value contains a NUL byte");
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Values                                                              */

static int sfs_config_read_string(sfs_config_ctx_t *ctx, const char *path,
                                  const sfs_config_key_t *key, char *field)
{
    const char *value  = (const char *)ctx->event.data.scalar.value;
    size_t      length = ctx->event.data.scalar.length;
    int         line   = sfs_config_event_line(ctx);
    const char *problem;
    char        shown[SFS_CONFIG_SHOW_BUF];
    int         rc;

    if (length >= key->size) {
        return sfs_config_fail(ctx, line, path, "the value is too long (%zu bytes, at most %zu)",
                               length, key->size - 1);
    }
    problem = sfs_config_check_name(value, key->type);
    if (problem != NULL) {
        return sfs_config_fail(ctx, line, path, "'%s' is not a valid %s: %s",
                               sfs_config_show(value, length, shown, sizeof(shown)),
                               key->type == SFS_CONFIG_TYPE_HOSTNAME  ? "host name"
                               : key->type == SFS_CONFIG_TYPE_CLUSTER ? "cluster name"
                               : key->type == SFS_CONFIG_TYPE_ADDRESS ? "address"
                                                                      : "path",
                               problem);
    }
    if (key->type != SFS_CONFIG_TYPE_PATH) {
        memcpy(field, value, length + 1);
        return 0;
    }
    rc = sfs_config_path_resolve(ctx->base_dir, value, field, key->size);
    if (rc != 0) {
        return sfs_config_fail(ctx, line, path,
                               "'%s' is too long once made absolute (at most %zu bytes)",
                               sfs_config_show(value, length, shown, sizeof(shown)), key->size - 1);
    }
    return 0;
}

static int sfs_config_read_uint(sfs_config_ctx_t *ctx, const char *path,
                                const sfs_config_key_t *key, void *field)
{
    const char *value  = (const char *)ctx->event.data.scalar.value;
    size_t      length = ctx->event.data.scalar.length;
    int         line   = sfs_config_event_line(ctx);
    uint64_t    number = 0;
    char        shown[SFS_CONFIG_SHOW_BUF];

    if (ctx->event.data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
        return sfs_config_fail(ctx, line, path, "expected a number, found the quoted string '%s'",
                               sfs_config_show(value, length, shown, sizeof(shown)));
    }
    if (strspn(value, "0123456789") != length) {
        return sfs_config_fail(ctx, line, path, "expected a whole number, found '%s'",
                               sfs_config_show(value, length, shown, sizeof(shown)));
    }
    /* Stop once out of range, before the number could wrap. */
    for (size_t i = 0; i < length && number <= key->max; i++) {
        number = number * 10 + (uint64_t)(value[i] - '0');
    }
    if (number < key->min || number > key->max) {
        return sfs_config_fail(ctx, line, path, "%s is out of range (%" PRIu64 "..%" PRIu64 ")",
                               sfs_config_show(value, length, shown, sizeof(shown)), key->min,
                               key->max);
    }
    switch (key->size) {
    case sizeof(uint16_t):
        *(uint16_t *)field = (uint16_t)number;
        break;
    case sizeof(uint32_t):
        *(uint32_t *)field = (uint32_t)number;
        break;
    default:
        *(uint64_t *)field = number;
        break;
    }
    return 0;
}

static int sfs_config_read_bool(sfs_config_ctx_t *ctx, const char *path, int *field)
{
    static const char *const truths[] = {"true", "yes", "on"};
    static const char *const lies[]   = {"false", "no", "off"};
    const char              *value    = (const char *)ctx->event.data.scalar.value;
    char                     shown[SFS_CONFIG_SHOW_BUF];

    if (ctx->event.data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
        for (size_t i = 0; i < SFS_ARRAY_SIZE(truths); i++) {
            if (strcasecmp(value, truths[i]) == 0) {
                *field = 1;
                return 0;
            }
            if (strcasecmp(value, lies[i]) == 0) {
                *field = 0;
                return 0;
            }
        }
    }
    return sfs_config_fail(
        ctx, sfs_config_event_line(ctx), path, "expected true or false, found '%s'",
        sfs_config_show(value, ctx->event.data.scalar.length, shown, sizeof(shown)));
}

static int sfs_config_read_size(sfs_config_ctx_t *ctx, const char *path,
                                const sfs_config_key_t *key, uint64_t *field)
{
    const char *value  = (const char *)ctx->event.data.scalar.value;
    size_t      length = ctx->event.data.scalar.length;
    int         line   = sfs_config_event_line(ctx);
    char        text[64], low[32], high[32];
    uint64_t    bytes;
    int         rc;

    if (length >= sizeof(text)) {
        return sfs_config_fail(ctx, line, path, "expected a size like 512K, found a %zu-byte value",
                               length);
    }
    memcpy(text, value, length + 1);
    if (key->type == SFS_CONFIG_TYPE_BANDWIDTH && length > 2 &&
        strcasecmp(text + length - 2, "/s") == 0) {
        text[length - 2] = '\0';
    }
    rc = sfs_parse_size(text, &bytes);
    if (rc != 0) {
        return sfs_config_fail(ctx, line, path, "%s", sfs_error_detail());
    }
    /* The bound it misses comes first: 4K for a chunk is a power of two,
     * and "not a power of two" would send the reader the wrong way. */
    if (bytes < key->min) {
        return sfs_config_fail(ctx, line, path, "%s is too small (minimum %s)", text,
                               sfs_config_size_text(key->min, low, sizeof(low)));
    }
    if (bytes > key->max) {
        return sfs_config_fail(ctx, line, path, "%s is too large (maximum %s)", text,
                               sfs_config_size_text(key->max, high, sizeof(high)));
    }
    if (key->power_of_two && (bytes & (bytes - 1)) != 0) {
        return sfs_config_fail(ctx, line, path, "%s is not a power of two (like 64K, 512K, 1M)",
                               text);
    }
    *field = bytes;
    return 0;
}

static int sfs_config_read_duration(sfs_config_ctx_t *ctx, const char *path,
                                    const sfs_config_key_t *key, uint32_t *field)
{
    const char *value  = (const char *)ctx->event.data.scalar.value;
    size_t      length = ctx->event.data.scalar.length;
    int         line   = sfs_config_event_line(ctx);
    char        text[64], low[32];
    uint32_t    ms;
    int         rc;

    if (length >= sizeof(text)) {
        return sfs_config_fail(ctx, line, path,
                               "expected a duration like 30s, found a %zu-byte value", length);
    }
    memcpy(text, value, length + 1);
    rc = sfs_parse_duration_ms(text, &ms);
    if (rc != 0) {
        return sfs_config_fail(ctx, line, path, "%s", sfs_error_detail());
    }
    if (ms < key->min) {
        return sfs_config_fail(ctx, line, path, "%s is too short (at least %s)", text,
                               sfs_config_duration_text((uint32_t)key->min, low, sizeof(low)));
    }
    *field = ms;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Mappings                                                            */

static size_t sfs_config_edit_distance(const char *a, const char *b)
{
    size_t row[SFS_CONFIG_PATH_KEY_MAX + 1];
    size_t a_len = strlen(a), b_len = strlen(b);

    if (a_len > SFS_CONFIG_PATH_KEY_MAX || b_len > SFS_CONFIG_PATH_KEY_MAX) {
        return SIZE_MAX;
    }
    for (size_t j = 0; j <= b_len; j++) {
        row[j] = j;
    }
    for (size_t i = 1; i <= a_len; i++) {
        size_t diagonal = row[0];

        row[0] = i;
        for (size_t j = 1; j <= b_len; j++) {
            size_t above = row[j];
            size_t cost  = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);

            row[j]   = SFS_MIN(SFS_MIN(row[j] + 1, row[j - 1] + 1), diagonal + cost);
            diagonal = above;
        }
    }
    return row[b_len];
}

/* "storage[2]" + "id" -> "storage[2].id" (cut short if it does not fit: it
 * only goes into messages). */
static void sfs_config_child_path(const char *path, const char *key, char *out, size_t outlen)
{
    if ((size_t)snprintf(out, outlen, "%s%s%s", path, *path ? "." : "", key) >= outlen) {
        out[outlen - 1] = '\0';
    }
}

static int sfs_config_parse_value(sfs_config_ctx_t *ctx, const char *path,
                                  const sfs_config_key_t *key, void *object);

/* Read the mapping whose start is the current event, up to its end. */
int sfs_config_parse_mapping(sfs_config_ctx_t *ctx, const char *path, const sfs_config_key_t *keys,
                             size_t key_count, void *object)
{
    int  map_line                        = sfs_config_event_line(ctx);
    int  seen_line[SFS_CONFIG_TABLE_MAX] = {0};
    char child[SFS_CONFIG_PATH_KEY_MAX], shown[SFS_CONFIG_SHOW_BUF];
    int  rc;

    for (;;) {
        const char *name;
        size_t      length, best_distance = 3, index;
        const char *suggestion = NULL;
        int         line;

        rc = sfs_config_next(ctx);
        if (rc != 0) {
            return rc;
        }
        if (ctx->event.type == YAML_MAPPING_END_EVENT) {
            break;
        }
        rc = sfs_config_expect(ctx, path, YAML_SCALAR_EVENT, "a key name");
        if (rc != 0) {
            return rc;
        }
        name   = (const char *)ctx->event.data.scalar.value;
        length = ctx->event.data.scalar.length;
        line   = sfs_config_event_line(ctx);
        for (index = 0; index < key_count; index++) {
            if (strlen(keys[index].name) == length && strcmp(keys[index].name, name) == 0) {
                break;
            }
            if (sfs_config_edit_distance(name, keys[index].name) < best_distance) {
                best_distance = sfs_config_edit_distance(name, keys[index].name);
                suggestion    = keys[index].name;
            }
        }
        sfs_config_show(name, length, shown, sizeof(shown));
        if (index == key_count) {
            sfs_config_child_path(path, shown, child, sizeof(child));
            if (suggestion != NULL) {
                return sfs_config_fail(ctx, line, child, "unknown key (did you mean '%s'?)",
                                       suggestion);
            }
            return sfs_config_fail(ctx, line, child, "unknown key");
        }
        sfs_config_child_path(path, keys[index].name, child, sizeof(child));
        if (seen_line[index] != 0) {
            return sfs_config_fail(ctx, line, child, "given twice (first at line %d)",
                                   seen_line[index]);
        }
        seen_line[index] = line;
        if (keys[index].line != SFS_CONFIG_LINE_NONE) {
            ctx->lines[keys[index].line] = line;
        }
        rc = sfs_config_next(ctx);
        if (rc != 0) {
            return rc;
        }
        rc = sfs_config_parse_value(ctx, child, &keys[index], object);
        if (rc != 0) {
            return rc;
        }
    }
    for (size_t i = 0; i < key_count; i++) {
        if (keys[i].required && seen_line[i] == 0) {
            sfs_config_child_path(path, keys[i].name, child, sizeof(child));
            return sfs_config_fail(ctx, map_line, child, "required key is missing");
        }
    }
    return 0;
}

/* Read the value of `key` (the current event) into `object`. */
static int sfs_config_parse_value(sfs_config_ctx_t *ctx, const char *path,
                                  const sfs_config_key_t *key, void *object)
{
    char *field = (char *)object + key->offset;
    int   rc;

    switch (key->type) {
    case SFS_CONFIG_TYPE_SECTION:
        rc = sfs_config_expect(ctx, path, YAML_MAPPING_START_EVENT, "a mapping of settings");
        return rc ? rc : sfs_config_parse_mapping(ctx, path, key->keys, key->key_count, object);
    case SFS_CONFIG_TYPE_LIST:
        return key->parse(ctx, path, object);
    default:
        break;
    }
    switch (key->type) {
    case SFS_CONFIG_TYPE_UINT:
        rc = sfs_config_expect(ctx, path, YAML_SCALAR_EVENT, "a number");
        return rc ? rc : sfs_config_read_uint(ctx, path, key, field);
    case SFS_CONFIG_TYPE_BOOL:
        rc = sfs_config_expect(ctx, path, YAML_SCALAR_EVENT, "true or false");
        return rc ? rc : sfs_config_read_bool(ctx, path, (int *)field);
    case SFS_CONFIG_TYPE_SIZE:
    case SFS_CONFIG_TYPE_BANDWIDTH:
        rc = sfs_config_expect(ctx, path, YAML_SCALAR_EVENT, "a size like 512K or 12T");
        return rc ? rc : sfs_config_read_size(ctx, path, key, (uint64_t *)field);
    case SFS_CONFIG_TYPE_DURATION:
        rc = sfs_config_expect(ctx, path, YAML_SCALAR_EVENT, "a duration like 30s or 500ms");
        return rc ? rc : sfs_config_read_duration(ctx, path, key, (uint32_t *)field);
    default:
        rc = sfs_config_expect(ctx, path, YAML_SCALAR_EVENT,
                               key->type == SFS_CONFIG_TYPE_PATH ? "a path" : "a name");
        return rc ? rc : sfs_config_read_string(ctx, path, key, field);
    }
}

/* ------------------------------------------------------------------ */
/* Lists of mappings                                                   */

int sfs_config_grow(void **array_p, uint32_t *alloc_p, uint32_t needed, size_t item_size)
{
    uint32_t alloc = *alloc_p ? *alloc_p : 4;
    void    *array;

    if (needed <= *alloc_p) {
        return 0;
    }
    while (alloc < needed) {
        alloc *= 2;
    }
    array = realloc(*array_p, (size_t)alloc * item_size);
    if (array == NULL) {
        return sfs_error_set(-ENOMEM, "out of memory for the config's lists");
    }
    memset((char *)array + (size_t)*alloc_p * item_size, 0, (size_t)(alloc - *alloc_p) * item_size);
    *array_p = array;
    *alloc_p = alloc;
    return 0;
}

int sfs_config_parse_list(sfs_config_ctx_t *ctx, const char *path, const sfs_config_list_t *list)
{
    int      list_line = sfs_config_event_line(ctx);
    uint32_t index     = 0;
    char     item[SFS_CONFIG_PATH_KEY_MAX];
    int      rc;

    rc = sfs_config_expect(ctx, path, YAML_SEQUENCE_START_EVENT, list->expected);
    if (rc != 0) {
        return rc;
    }
    for (;; index++) {
        void *object;
        int   line;

        rc = sfs_config_next(ctx);
        if (rc != 0) {
            return rc;
        }
        if (ctx->event.type == YAML_SEQUENCE_END_EVENT) {
            break;
        }
        line = sfs_config_event_line(ctx);
        snprintf(item, sizeof(item), "%s[%" PRIu32 "]", path, index);
        if (index == list->max) {
            return sfs_config_fail(ctx, line, item, "too many %s (at most %" PRIu32 ")", list->noun,
                                   list->max);
        }
        rc = sfs_config_expect(ctx, item, YAML_MAPPING_START_EVENT, list->item);
        if (rc != 0) {
            return rc;
        }
        rc = list->add(ctx, index, line, &object);
        if (rc != 0) {
            return rc;
        }
        rc = sfs_config_parse_mapping(ctx, item, list->keys, list->key_count, object);
        if (rc != 0) {
            return rc;
        }
        if (list->done != NULL) {
            rc = list->done(ctx, index);
            if (rc != 0) {
                return rc;
            }
        }
    }
    if (index == 0) {
        return sfs_config_fail(ctx, list_line, path, "the list is empty (%s)", list->empty);
    }
    return 0;
}
