/*
 * The cluster configuration file: parsing (libyaml event API), validation,
 * writing, and the generated configs (a list of hosts, the one-host default).
 *
 * Schema (docs/config.md has every key, default and error):
 *
 *   cluster: imaging                        # optional, default "stripefs"
 *   connauth_file: /etc/stripefs/connauth   # required
 *   mgmt: {host: imaging-01, port: 8008}    # host required; port 1..65535, default 8008
 *   meta: {host: imaging-01, dir: /var/lib/stripefs/meta, sync: true}  # host, dir required
 *   hosts:                                  # optional
 *     - {name: imaging-01, ranks: 1, address: 10.0.0.1}  # ranks 1..64 (1); address optional
 *   storage:                                # required, 1..1024 targets
 *     - {id: 101, host: imaging-01, dir: /mnt/14t_drive/stripefs, capacity: 12T,
 *        bandwidth: 100M}                   # id 1..65535 unique; capacity, bandwidth optional
 *   pattern: {chunk_size: 512K, stripe_count: 4}   # power of two 64K..4G; 1..128
 *   timeouts: {rpc: 30s, connect: 10s, heartbeat: 2s, offline: 20s}
 *   limits: {max_message: 64M, io_threads: 4, inline_io: 64K, mapped_read: 256K,
 *            max_request_rate: 1000000}
 *                                                   # 4K..4G; 1..256; per session/s, 0 = none
 *   security: {mode: munge, munge_socket: /run/munge/munge.socket.2, munged_key: PATH,
 *              service_uid: 0, admin_group: stripefs-admin, capability_lifetime: 1h,
 *              trusted_hosts: [imaging-01, imaging-02]}   # mode munge or shared-secret
 *
 * Relative paths are taken relative to the config file's directory and every
 * path is cleaned lexically ("a/./b/../c" is "a/c"), so dirs compare equal
 * when they name the same place. Without `hosts:` the host list is made of
 * the hosts that the roles name; with it, every role's host must be listed.
 *
 * The parser reads one event at a time and descends only where the schema
 * has a level, so deep or huge inputs stop at the first unexpected node; the
 * current event is owned by the context and deleted before the next one is
 * read, which keeps every error path free of leaks. The first error ends the
 * parse and is recorded as "FILE:LINE: KEY: problem" with sfs_error_set().
 */
#define SFS_LOG_FAC "config"
#include "sfs_config.h"
#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"

#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#define SFS_CONFIG_DEFAULT_CLUSTER     "stripefs"
#define SFS_CONFIG_DEFAULT_CHUNK       (512ull << 10)
#define SFS_CONFIG_DEFAULT_STRIPES     4
#define SFS_CONFIG_DEFAULT_RPC_MS      30000
#define SFS_CONFIG_DEFAULT_CONN_MS     10000
#define SFS_CONFIG_DEFAULT_HBEAT_MS    2000
#define SFS_CONFIG_DEFAULT_OFFL_MS     20000
#define SFS_CONFIG_DEFAULT_MAX_MSG     (64ull << 20)
#define SFS_CONFIG_DEFAULT_IO_THR      4
#define SFS_CONFIG_DEFAULT_INLINE_IO   (64u << 10)
#define SFS_CONFIG_DEFAULT_MAPPED_READ (256u << 10)
#define SFS_CONFIG_DEFAULT_MAX_RATE    1000000
#define SFS_CONFIG_DEFAULT_MUNGE_SOCK  "/run/munge/munge.socket.2"
#define SFS_CONFIG_DEFAULT_CAP_MS      3600000u
#define SFS_CONFIG_MAX_RANKS           64
#define SFS_CONFIG_MAX_TARGET_ID       65535
#define SFS_CONFIG_MAX_STRIPES         128
#define SFS_CONFIG_MAX_IO_THREADS      256
#define SFS_CONFIG_MAX_FILE_SIZE       (16u << 20) /* far above any real config */
#define SFS_CONFIG_PATH_KEY_MAX        96          /* "storage[1023].bandwidth" and more */
#define SFS_CONFIG_SHOW_MAX            48          /* value bytes quoted in a message */
#define SFS_CONFIG_TABLE_MAX           16          /* keys in one mapping */
#define SFS_CONFIG_GENERATED_NAME      "generated config"

/* Lines remembered for the checks that run after the whole file is read. */
typedef enum {
    SFS_CONFIG_LINE_NONE = 0,
    SFS_CONFIG_LINE_MGMT_HOST,
    SFS_CONFIG_LINE_META_HOST,
    SFS_CONFIG_LINE_META_DIR,
    SFS_CONFIG_LINE_HOSTS,
    SFS_CONFIG_LINE_OFFLINE,
    SFS_CONFIG_LINE_SECURITY_MODE,
    SFS_CONFIG_LINE_ITEM_ID, /* of the list item being read */
    SFS_CONFIG_LINE_ITEM_HOST,
    SFS_CONFIG_LINE_ITEM_DIR,
    SFS_CONFIG_LINE_COUNT,
} sfs_config_line_t;

typedef struct sfs_config_target_lines {
    int id, host, dir;
} sfs_config_target_lines_t;

typedef struct sfs_config_ctx {
    yaml_parser_t              parser;
    yaml_event_t               event; /* the current event; deleted when the next is read */
    const char                *text;  /* input, to place reader errors */
    size_t                     length;
    const char                *name;               /* file name in messages */
    char                       base_dir[PATH_MAX]; /* absolute; relative paths start here */
    sfs_config_t              *config;
    uint32_t                   target_alloc;
    uint32_t                   host_alloc;
    sfs_config_target_lines_t *target_lines; /* parallel to config->targets; NULL if generated */
    uint32_t                   target_lines_alloc;
    int                        hosts_given;
    int                        lines[SFS_CONFIG_LINE_COUNT];
} sfs_config_ctx_t;

typedef enum {
    SFS_CONFIG_TYPE_CLUSTER, /* cluster name: letters, digits, '-', '.', '_' */
    SFS_CONFIG_TYPE_HOSTNAME,
    SFS_CONFIG_TYPE_ADDRESS,
    SFS_CONFIG_TYPE_PATH,
    SFS_CONFIG_TYPE_UINT,
    SFS_CONFIG_TYPE_BOOL,
    SFS_CONFIG_TYPE_SIZE,
    SFS_CONFIG_TYPE_BANDWIDTH, /* a size, optionally followed by "/s" */
    SFS_CONFIG_TYPE_DURATION,
    SFS_CONFIG_TYPE_SECTION, /* a nested mapping into the same object */
    SFS_CONFIG_TYPE_LIST,    /* handled by `parse` */
} sfs_config_type_t;

struct sfs_config_key;
typedef int (*sfs_config_parse_fn_t)(sfs_config_ctx_t *ctx, const char *path, void *object);

typedef struct sfs_config_key {
    const char                  *name;
    sfs_config_type_t            type;
    int                          required;
    size_t                       offset;   /* of the field in the object */
    size_t                       size;     /* of the field */
    uint64_t                     min, max; /* numbers, sizes and durations */
    int                          power_of_two;
    sfs_config_line_t            line; /* where to remember the key's line */
    const struct sfs_config_key *keys; /* SECTION */
    size_t                       key_count;
    sfs_config_parse_fn_t        parse; /* LIST */
} sfs_config_key_t;

#define SFS_CONFIG_FIELD(_type, _field)                                                            \
    .offset = offsetof(_type, _field), .size = sizeof(((_type *)0)->_field)

/* ------------------------------------------------------------------ */
/* Messages                                                            */

/* `text` quoted for a message: control bytes escaped, long values cut. */
static const char *sfs_config_show(const char *text, size_t length, char *buf, size_t buflen)
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

#define SFS_CONFIG_SHOW_BUF (SFS_CONFIG_SHOW_MAX * 4 + 8)

/* Record "NAME:LINE: PATH: problem" (line and path left out when unknown)
 * and return -EINVAL. */
static int sfs_config_fail(const sfs_config_ctx_t *ctx, int line, const char *path, const char *fmt,
                           ...) __attribute__((format(printf, 4, 5)));

static int sfs_config_fail(const sfs_config_ctx_t *ctx, int line, const char *path, const char *fmt,
                           ...)
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

static int sfs_config_line_of(const yaml_mark_t *mark)
{
    return mark->line >= INT_MAX ? INT_MAX : (int)mark->line + 1;
}

static int sfs_config_event_line(const sfs_config_ctx_t *ctx)
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
static int sfs_config_next(sfs_config_ctx_t *ctx)
{
    yaml_event_delete(&ctx->event);
    if (!yaml_parser_parse(&ctx->parser, &ctx->event)) {
        return sfs_config_syntax_error(ctx);
    }
    return 0;
}

static int sfs_config_is_null(const yaml_event_t *event)
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
static int sfs_config_expect(sfs_config_ctx_t *ctx, const char *path, yaml_event_type_t type,
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
/* Paths and names                                                     */

/* Lexically clean absolute `path` into `out`: no "", "." or ".." parts,
 * no trailing slash. */
static int sfs_config_path_clean(const char *path, char *out, size_t outlen)
{
    size_t len = 0;

    while (*path != '\0') {
        const char *part;
        size_t      part_len;

        while (*path == '/') {
            path++;
        }
        part     = path;
        part_len = strcspn(path, "/");
        path += part_len;
        if (part_len == 0 || (part_len == 1 && part[0] == '.')) {
            continue;
        }
        if (part_len == 2 && part[0] == '.' && part[1] == '.') {
            while (len > 0 && out[len - 1] != '/') {
                len--;
            }
            if (len > 0) {
                len--; /* the slash before the dropped part */
            }
            continue;
        }
        if (len + 1 + part_len + 1 > outlen) {
            return -ENAMETOOLONG;
        }
        out[len++] = '/';
        memcpy(out + len, part, part_len);
        len += part_len;
    }
    if (len == 0) {
        if (outlen < 2) {
            return -ENAMETOOLONG;
        }
        out[len++] = '/';
    }
    out[len] = '\0';
    return 0;
}

/* `path` made absolute (relative to `base_dir`) and cleaned. */
static int sfs_config_path_resolve(const char *base_dir, const char *path, char *out, size_t outlen)
{
    char joined[2 * PATH_MAX + 2];

    if (path[0] == '/') {
        return sfs_config_path_clean(path, out, outlen);
    }
    if ((size_t)snprintf(joined, sizeof(joined), "%s/%s", base_dir, path) >= sizeof(joined)) {
        return -ENAMETOOLONG;
    }
    return sfs_config_path_clean(joined, out, outlen);
}

/* The directory relative paths in `name` are taken from, made absolute. */
static int sfs_config_base_dir(const char *name, char *out, size_t outlen)
{
    char        cwd[PATH_MAX];
    char        dir[PATH_MAX];
    const char *slash = strrchr(name, '/');
    size_t      dir_len;

    if (slash == NULL) {
        snprintf(dir, sizeof(dir), ".");
    } else {
        dir_len = slash == name ? 1 : (size_t)(slash - name);
        if (dir_len >= sizeof(dir)) {
            return sfs_error_set(-ENAMETOOLONG, "config file name too long: %.80s...", name);
        }
        memcpy(dir, name, dir_len);
        dir[dir_len] = '\0';
    }
    if (dir[0] == '/') {
        return sfs_config_path_clean(dir, out, outlen);
    }
    if (getcwd(cwd, sizeof(cwd)) == NULL) {
        return sfs_error_set(-errno, "cannot get the current directory: %s", strerror(errno));
    }
    if (sfs_config_path_resolve(cwd, dir, out, outlen) != 0) {
        return sfs_error_set(-ENAMETOOLONG, "config directory name too long: %.80s...", cwd);
    }
    return 0;
}

/* Problems with a name for a given charset, or NULL. */
static const char *sfs_config_check_name(const char *text, sfs_config_type_t type)
{
    for (const char *p = text; *p != '\0'; p++) {
        unsigned char c = (unsigned char)*p;

        switch (type) {
        case SFS_CONFIG_TYPE_CLUSTER:
        case SFS_CONFIG_TYPE_HOSTNAME:
            if (!isalnum(c) && c != '-' && c != '.' && c != '_') {
                return "use letters, digits, '-', '.' and '_' only";
            }
            break;
        case SFS_CONFIG_TYPE_ADDRESS:
            if (c <= 0x20 || c >= 0x7f) {
                return "no spaces, control or non-ASCII characters";
            }
            break;
        default:
            if (c < 0x20 || c == 0x7f) {
                return "no control characters";
            }
            break;
        }
    }
    if (text[0] == '\0') {
        return "the value is empty";
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Values                                                              */

/* Exact text for a size ("12T", "512K", "1000"), as the writer emits it. */
static const char *sfs_config_size_text(uint64_t bytes, char *buf, size_t buflen)
{
    static const char letters[] = "KMGTPE";

    for (int unit = 6; unit >= 1; unit--) {
        uint64_t factor = 1ull << (10 * unit);

        if (bytes != 0 && bytes % factor == 0) {
            snprintf(buf, buflen, "%" PRIu64 "%c", bytes / factor, letters[unit - 1]);
            return buf;
        }
    }
    snprintf(buf, buflen, "%" PRIu64, bytes);
    return buf;
}

/* Exact text for a duration ("30s", "2m", "1500ms"). */
static const char *sfs_config_duration_text(uint32_t ms, char *buf, size_t buflen)
{
    if (ms != 0 && ms % 3600000 == 0) {
        snprintf(buf, buflen, "%" PRIu32 "h", ms / 3600000);
    } else if (ms != 0 && ms % 60000 == 0) {
        snprintf(buf, buflen, "%" PRIu32 "m", ms / 60000);
    } else if (ms != 0 && ms % 1000 == 0) {
        snprintf(buf, buflen, "%" PRIu32 "s", ms / 1000);
    } else {
        snprintf(buf, buflen, "%" PRIu32 "ms", ms);
    }
    return buf;
}

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
    if (bytes < key->min || bytes > key->max) {
        return sfs_config_fail(ctx, line, path, "%s is out of range (%s..%s)", text,
                               sfs_config_size_text(key->min, low, sizeof(low)),
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
static int sfs_config_parse_mapping(sfs_config_ctx_t *ctx, const char *path,
                                    const sfs_config_key_t *keys, size_t key_count, void *object)
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
/* Schema                                                              */

static const sfs_config_key_t sfs_config_mgmt_keys[] = {
    {.name     = "host",
     .type     = SFS_CONFIG_TYPE_HOSTNAME,
     .required = 1,
     SFS_CONFIG_FIELD(sfs_config_t, mgmt_host),
     .line = SFS_CONFIG_LINE_MGMT_HOST},
    {.name = "port",
     .type = SFS_CONFIG_TYPE_UINT,
     SFS_CONFIG_FIELD(sfs_config_t, mgmt_port),
     .min = 1,
     .max = 65535},
};

static const sfs_config_key_t sfs_config_meta_keys[] = {
    {.name     = "host",
     .type     = SFS_CONFIG_TYPE_HOSTNAME,
     .required = 1,
     SFS_CONFIG_FIELD(sfs_config_t, meta_host),
     .line = SFS_CONFIG_LINE_META_HOST},
    {.name     = "dir",
     .type     = SFS_CONFIG_TYPE_PATH,
     .required = 1,
     SFS_CONFIG_FIELD(sfs_config_t, meta_dir),
     .line = SFS_CONFIG_LINE_META_DIR},
    {.name = "sync", .type = SFS_CONFIG_TYPE_BOOL, SFS_CONFIG_FIELD(sfs_config_t, meta_sync)},
};

static const sfs_config_key_t sfs_config_host_keys[] = {
    {.name     = "name",
     .type     = SFS_CONFIG_TYPE_HOSTNAME,
     .required = 1,
     SFS_CONFIG_FIELD(sfs_config_host_t, name)},
    {.name = "ranks",
     .type = SFS_CONFIG_TYPE_UINT,
     SFS_CONFIG_FIELD(sfs_config_host_t, ranks),
     .min = 1,
     .max = SFS_CONFIG_MAX_RANKS},
    {.name = "address",
     .type = SFS_CONFIG_TYPE_ADDRESS,
     SFS_CONFIG_FIELD(sfs_config_host_t, address)},
};

static const sfs_config_key_t sfs_config_target_keys[] = {
    {.name     = "id",
     .type     = SFS_CONFIG_TYPE_UINT,
     .required = 1,
     SFS_CONFIG_FIELD(sfs_config_target_t, id),
     .min  = 1,
     .max  = SFS_CONFIG_MAX_TARGET_ID,
     .line = SFS_CONFIG_LINE_ITEM_ID},
    {.name     = "host",
     .type     = SFS_CONFIG_TYPE_HOSTNAME,
     .required = 1,
     SFS_CONFIG_FIELD(sfs_config_target_t, host),
     .line = SFS_CONFIG_LINE_ITEM_HOST},
    {.name     = "dir",
     .type     = SFS_CONFIG_TYPE_PATH,
     .required = 1,
     SFS_CONFIG_FIELD(sfs_config_target_t, dir),
     .line = SFS_CONFIG_LINE_ITEM_DIR},
    {.name = "capacity",
     .type = SFS_CONFIG_TYPE_SIZE,
     SFS_CONFIG_FIELD(sfs_config_target_t, capacity),
     .max = UINT64_MAX},
    {.name = "bandwidth",
     .type = SFS_CONFIG_TYPE_BANDWIDTH,
     SFS_CONFIG_FIELD(sfs_config_target_t, bandwidth),
     .max = UINT64_MAX},
};

static const sfs_config_key_t sfs_config_pattern_keys[] = {
    {.name = "chunk_size",
     .type = SFS_CONFIG_TYPE_SIZE,
     SFS_CONFIG_FIELD(sfs_config_t, default_chunk_size),
     .min          = 64ull << 10,
     .max          = 4ull << 30,
     .power_of_two = 1},
    {.name = "stripe_count",
     .type = SFS_CONFIG_TYPE_UINT,
     SFS_CONFIG_FIELD(sfs_config_t, default_stripe_count),
     .min = 1,
     .max = SFS_CONFIG_MAX_STRIPES},
};

static const sfs_config_key_t sfs_config_timeout_keys[] = {
    {.name = "rpc",
     .type = SFS_CONFIG_TYPE_DURATION,
     SFS_CONFIG_FIELD(sfs_config_t, rpc_timeout_ms),
     .min = 1},
    {.name = "connect",
     .type = SFS_CONFIG_TYPE_DURATION,
     SFS_CONFIG_FIELD(sfs_config_t, connect_timeout_ms),
     .min = 1},
    {.name = "heartbeat",
     .type = SFS_CONFIG_TYPE_DURATION,
     SFS_CONFIG_FIELD(sfs_config_t, heartbeat_interval_ms),
     .min = 1},
    {.name = "offline",
     .type = SFS_CONFIG_TYPE_DURATION,
     SFS_CONFIG_FIELD(sfs_config_t, offline_timeout_ms),
     .min  = 1,
     .line = SFS_CONFIG_LINE_OFFLINE},
};

static const sfs_config_key_t sfs_config_limit_keys[] = {
    {.name = "max_message",
     .type = SFS_CONFIG_TYPE_SIZE,
     SFS_CONFIG_FIELD(sfs_config_t, max_message_size),
     .min = 4ull << 10,
     .max = 4ull << 30},
    {.name = "io_threads",
     .type = SFS_CONFIG_TYPE_UINT,
     SFS_CONFIG_FIELD(sfs_config_t, io_threads),
     .min = 1,
     .max = SFS_CONFIG_MAX_IO_THREADS},
    {.name = "inline_io",
     .type = SFS_CONFIG_TYPE_SIZE,
     SFS_CONFIG_FIELD(sfs_config_t, inline_io_max),
     .min = 0,
     .max = 16ull << 20},
    {.name = "mapped_read",
     .type = SFS_CONFIG_TYPE_SIZE,
     SFS_CONFIG_FIELD(sfs_config_t, mapped_read_min),
     .min = 0,
     .max = 4ull << 30},
    {.name = "max_request_rate",
     .type = SFS_CONFIG_TYPE_UINT,
     SFS_CONFIG_FIELD(sfs_config_t, max_request_rate),
     .min = 0,
     .max = 100000000},
};

static int sfs_config_parse_hosts(sfs_config_ctx_t *ctx, const char *path, void *object);
static int sfs_config_parse_storage(sfs_config_ctx_t *ctx, const char *path, void *object);
static int sfs_config_parse_trusted(sfs_config_ctx_t *ctx, const char *path, void *object);

static const sfs_config_key_t sfs_config_security_keys[] = {
    {.name = "mode",
     .type = SFS_CONFIG_TYPE_CLUSTER,
     SFS_CONFIG_FIELD(sfs_config_t, security_mode),
     .line = SFS_CONFIG_LINE_SECURITY_MODE},
    {.name = "munge_socket",
     .type = SFS_CONFIG_TYPE_PATH,
     SFS_CONFIG_FIELD(sfs_config_t, munge_socket)},
    {.name = "munged_key",
     .type = SFS_CONFIG_TYPE_PATH,
     SFS_CONFIG_FIELD(sfs_config_t, munged_key)},
    {.name = "service_uid",
     .type = SFS_CONFIG_TYPE_UINT,
     SFS_CONFIG_FIELD(sfs_config_t, service_uid),
     .min = 0,
     .max = 4294967294u},
    {.name = "admin_group",
     .type = SFS_CONFIG_TYPE_CLUSTER,
     SFS_CONFIG_FIELD(sfs_config_t, admin_group)},
    {.name = "capability_lifetime",
     .type = SFS_CONFIG_TYPE_DURATION,
     SFS_CONFIG_FIELD(sfs_config_t, capability_lifetime_ms),
     .min = 10000},
    {.name = "trusted_hosts", .type = SFS_CONFIG_TYPE_LIST, .parse = sfs_config_parse_trusted},
};

#define SFS_CONFIG_SECTION(_keys)                                                                  \
    .type = SFS_CONFIG_TYPE_SECTION, .keys = (_keys), .key_count = SFS_ARRAY_SIZE(_keys)

static const sfs_config_key_t sfs_config_top_keys[] = {
    {.name = "cluster",
     .type = SFS_CONFIG_TYPE_CLUSTER,
     SFS_CONFIG_FIELD(sfs_config_t, cluster_name)},
    {.name     = "connauth_file",
     .type     = SFS_CONFIG_TYPE_PATH,
     .required = 1,
     SFS_CONFIG_FIELD(sfs_config_t, connauth_file)},
    {.name = "mgmt", .required = 1, SFS_CONFIG_SECTION(sfs_config_mgmt_keys)},
    {.name = "meta", .required = 1, SFS_CONFIG_SECTION(sfs_config_meta_keys)},
    {.name  = "hosts",
     .type  = SFS_CONFIG_TYPE_LIST,
     .parse = sfs_config_parse_hosts,
     .line  = SFS_CONFIG_LINE_HOSTS},
    {.name     = "storage",
     .type     = SFS_CONFIG_TYPE_LIST,
     .required = 1,
     .parse    = sfs_config_parse_storage},
    {.name = "pattern", SFS_CONFIG_SECTION(sfs_config_pattern_keys)},
    {.name = "timeouts", SFS_CONFIG_SECTION(sfs_config_timeout_keys)},
    {.name = "limits", SFS_CONFIG_SECTION(sfs_config_limit_keys)},
    {.name = "security", SFS_CONFIG_SECTION(sfs_config_security_keys)},
};

/* ------------------------------------------------------------------ */
/* Lists                                                               */

static int sfs_config_grow(void **array_p, uint32_t *alloc_p, uint32_t needed, size_t item_size)
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

static int sfs_config_add_host(sfs_config_ctx_t *ctx, const char *name, int line)
{
    sfs_config_t      *config = ctx->config;
    sfs_config_host_t *host;
    int                rc;

    rc = sfs_config_grow((void **)&config->hosts, &ctx->host_alloc, config->host_count + 1,
                         sizeof(*config->hosts));
    if (rc != 0) {
        return rc;
    }
    host = &config->hosts[config->host_count++];
    snprintf(host->name, sizeof(host->name), "%s", name);
    host->ranks = 1;
    host->line  = line;
    return 0;
}

static int sfs_config_parse_hosts(sfs_config_ctx_t *ctx, const char *path, void *object)
{
    sfs_config_t *config    = object;
    int           list_line = sfs_config_event_line(ctx);
    char          item[SFS_CONFIG_PATH_KEY_MAX];
    int           rc;

    rc = sfs_config_expect(ctx, path, YAML_SEQUENCE_START_EVENT, "a list of hosts");
    if (rc != 0) {
        return rc;
    }
    ctx->hosts_given = 1;
    for (;;) {
        int line;

        rc = sfs_config_next(ctx);
        if (rc != 0) {
            return rc;
        }
        if (ctx->event.type == YAML_SEQUENCE_END_EVENT) {
            break;
        }
        line = sfs_config_event_line(ctx);
        snprintf(item, sizeof(item), "%s[%" PRIu32 "]", path, config->host_count);
        if (config->host_count == SFS_CONFIG_MAX_HOSTS) {
            return sfs_config_fail(ctx, line, item, "too many hosts (at most %d)",
                                   SFS_CONFIG_MAX_HOSTS);
        }
        rc = sfs_config_expect(ctx, item, YAML_MAPPING_START_EVENT,
                               "a host like {name: imaging-01, ranks: 1}");
        if (rc != 0) {
            return rc;
        }
        rc = sfs_config_add_host(ctx, "", line);
        if (rc != 0) {
            return rc;
        }
        rc = sfs_config_parse_mapping(ctx, item, sfs_config_host_keys,
                                      SFS_ARRAY_SIZE(sfs_config_host_keys),
                                      &config->hosts[config->host_count - 1]);
        if (rc != 0) {
            return rc;
        }
    }
    if (config->host_count == 0) {
        return sfs_config_fail(ctx, list_line, path,
                               "the list is empty (leave `hosts:` out to use the roles' hosts)");
    }
    return 0;
}

/* security.trusted_hosts: a list of host names or addresses. */
static int sfs_config_parse_trusted(sfs_config_ctx_t *ctx, const char *path, void *object)
{
    sfs_config_t *config = object;
    char          item[SFS_CONFIG_PATH_KEY_MAX];
    int           rc;

    rc = sfs_config_expect(ctx, path, YAML_SEQUENCE_START_EVENT, "a list of host names");
    if (rc != 0) {
        return rc;
    }
    config->trusted_host_count = 0;
    for (;;) {
        const char *value, *problem;
        int         line;

        rc = sfs_config_next(ctx);
        if (rc != 0) {
            return rc;
        }
        if (ctx->event.type == YAML_SEQUENCE_END_EVENT) {
            return 0;
        }
        line = sfs_config_event_line(ctx);
        snprintf(item, sizeof(item), "%s[%" PRIu32 "]", path, config->trusted_host_count);
        if (ctx->event.type != YAML_SCALAR_EVENT) {
            return sfs_config_fail(ctx, line, item, "expected a host name");
        }
        if (config->trusted_host_count == SFS_CONFIG_MAX_TRUSTED) {
            return sfs_config_fail(ctx, line, item, "too many trusted hosts (at most %d)",
                                   SFS_CONFIG_MAX_TRUSTED);
        }
        value   = (const char *)ctx->event.data.scalar.value;
        problem = sfs_config_check_name(value, SFS_CONFIG_TYPE_ADDRESS);
        if (problem == NULL && strlen(value) >= SFS_CONFIG_NAME_MAX) {
            problem = "too long";
        }
        if (problem != NULL) {
            char shown[SFS_CONFIG_SHOW_BUF];

            return sfs_config_fail(
                ctx, line, item, "'%s': %s",
                sfs_config_show(value, ctx->event.data.scalar.length, shown, sizeof(shown)),
                problem);
        }
        snprintf(config->trusted_hosts[config->trusted_host_count++], SFS_CONFIG_NAME_MAX, "%s",
                 value);
    }
}

static int sfs_config_parse_storage(sfs_config_ctx_t *ctx, const char *path, void *object)
{
    sfs_config_t *config    = object;
    int           list_line = sfs_config_event_line(ctx);
    char          item[SFS_CONFIG_PATH_KEY_MAX];
    int           rc;

    rc = sfs_config_expect(ctx, path, YAML_SEQUENCE_START_EVENT, "a list of targets");
    if (rc != 0) {
        return rc;
    }
    for (;;) {
        uint32_t             index = config->target_count;
        sfs_config_target_t *target;

        rc = sfs_config_next(ctx);
        if (rc != 0) {
            return rc;
        }
        if (ctx->event.type == YAML_SEQUENCE_END_EVENT) {
            break;
        }
        snprintf(item, sizeof(item), "%s[%" PRIu32 "]", path, index);
        if (index == SFS_CONFIG_MAX_TARGETS) {
            return sfs_config_fail(ctx, sfs_config_event_line(ctx), item,
                                   "too many targets (at most %d)", SFS_CONFIG_MAX_TARGETS);
        }
        rc = sfs_config_expect(ctx, item, YAML_MAPPING_START_EVENT,
                               "a target like {id: 101, host: imaging-01, dir: /data}");
        if (rc != 0) {
            return rc;
        }
        rc = sfs_config_grow((void **)&ctx->target_lines, &ctx->target_lines_alloc, index + 1,
                             sizeof(*ctx->target_lines));
        if (rc != 0) {
            return rc;
        }
        rc = sfs_config_grow((void **)&config->targets, &ctx->target_alloc, index + 1,
                             sizeof(*config->targets));
        if (rc != 0) {
            return rc;
        }
        target       = &config->targets[index];
        target->line = sfs_config_event_line(ctx);
        rc           = sfs_config_parse_mapping(ctx, item, sfs_config_target_keys,
                                                SFS_ARRAY_SIZE(sfs_config_target_keys), target);
        if (rc != 0) {
            return rc;
        }
        ctx->target_lines[index].id   = ctx->lines[SFS_CONFIG_LINE_ITEM_ID];
        ctx->target_lines[index].host = ctx->lines[SFS_CONFIG_LINE_ITEM_HOST];
        ctx->target_lines[index].dir  = ctx->lines[SFS_CONFIG_LINE_ITEM_DIR];
        config->target_count++;
    }
    if (config->target_count == 0) {
        return sfs_config_fail(ctx, list_line, path,
                               "the list is empty (at least one target is needed)");
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Checks across keys (also run on generated configs)                  */

/* Where target `index`'s keys were given (all 0 for a generated config). */
static sfs_config_target_lines_t sfs_config_target_lines(const sfs_config_ctx_t *ctx,
                                                         uint32_t                index)
{
    sfs_config_target_lines_t none = {0, 0, 0};

    return ctx->target_lines ? ctx->target_lines[index] : none;
}

/* " at line N", or "" where there is no line (generated configs). */
static const char *sfs_config_at_line(int line, char *buf, size_t buflen)
{
    if (line <= 0) {
        return "";
    }
    snprintf(buf, buflen, " at line %d", line);
    return buf;
}

/* The role host `name` (given at `line` under `path`) must match exactly
 * one entry of the host list. */
static int sfs_config_check_role_host(const sfs_config_ctx_t *ctx, const char *path,
                                      const char *name, int line)
{
    const sfs_config_t      *config = ctx->config;
    const sfs_config_host_t *first  = NULL;
    char                     at_first[32], at_second[32];

    for (uint32_t i = 0; i < config->host_count; i++) {
        const sfs_config_host_t *host = &config->hosts[i];

        if (!sfs_config_host_matches(host->name, name)) {
            continue;
        }
        if (first != NULL) {
            return sfs_config_fail(
                ctx, line, path,
                "host '%s' matches both '%s'%s and '%s'%s of the hosts list; write the full name",
                name, first->name, sfs_config_at_line(first->line, at_first, sizeof(at_first)),
                host->name, sfs_config_at_line(host->line, at_second, sizeof(at_second)));
        }
        first = host;
    }
    if (first == NULL) {
        return sfs_config_fail(
            ctx, line, path, "host '%s' is not in the hosts list%s; add it there", name,
            sfs_config_at_line(ctx->lines[SFS_CONFIG_LINE_HOSTS], at_first, sizeof(at_first)));
    }
    return 0;
}

/* Without an explicit list, every host a role names is a host, once, by
 * its fullest name: "a" then "a.x.org" is one host a.x.org, while "a.x.org"
 * and "a.y.org" are two, which leaves a plain "a" ambiguous (caught later). */
static int sfs_config_collect_hosts(sfs_config_ctx_t *ctx)
{
    sfs_config_t *config = ctx->config;
    int           rc;

    for (uint32_t role = 0; role < config->target_count + 2; role++) {
        const char        *name  = role == 0   ? config->mgmt_host
                                   : role == 1 ? config->meta_host
                                               : config->targets[role - 2].host;
        int                line  = role == 0   ? ctx->lines[SFS_CONFIG_LINE_MGMT_HOST]
                                   : role == 1 ? ctx->lines[SFS_CONFIG_LINE_META_HOST]
                                               : sfs_config_target_lines(ctx, role - 2).host;
        sfs_config_host_t *known = NULL;

        for (uint32_t i = 0; i < config->host_count && known == NULL; i++) {
            if (sfs_config_host_matches(config->hosts[i].name, name)) {
                known = &config->hosts[i];
            }
        }
        if (known != NULL) {
            if (strchr(known->name, '.') == NULL && strchr(name, '.') != NULL) {
                snprintf(known->name, sizeof(known->name), "%s", name);
                known->line = line;
            }
            continue;
        }
        if (config->host_count == SFS_CONFIG_MAX_HOSTS) {
            return sfs_config_fail(ctx, line, "hosts", "too many hosts (at most %d)",
                                   SFS_CONFIG_MAX_HOSTS);
        }
        rc = sfs_config_add_host(ctx, name, line);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int sfs_config_validate(sfs_config_ctx_t *ctx)
{
    sfs_config_t *config = ctx->config;
    char          path[SFS_CONFIG_PATH_KEY_MAX], low[32], high[32], at[32];
    int           rc;

    for (uint32_t j = 0; j < config->host_count; j++) {
        for (uint32_t i = 0; i < j; i++) {
            if (sfs_config_host_matches(config->hosts[i].name, config->hosts[j].name)) {
                snprintf(path, sizeof(path), "hosts[%" PRIu32 "].name", j);
                return sfs_config_fail(ctx, config->hosts[j].line, path,
                                       "host '%s' is listed twice (as '%s'%s)",
                                       config->hosts[j].name, config->hosts[i].name,
                                       sfs_config_at_line(config->hosts[i].line, at, sizeof(at)));
            }
        }
    }
    if (!ctx->hosts_given) {
        rc = sfs_config_collect_hosts(ctx);
        if (rc != 0) {
            return rc;
        }
    }
    rc = sfs_config_check_role_host(ctx, "mgmt.host", config->mgmt_host,
                                    ctx->lines[SFS_CONFIG_LINE_MGMT_HOST]);
    if (rc != 0) {
        return rc;
    }
    rc = sfs_config_check_role_host(ctx, "meta.host", config->meta_host,
                                    ctx->lines[SFS_CONFIG_LINE_META_HOST]);
    if (rc != 0) {
        return rc;
    }
    for (uint32_t j = 0; j < config->target_count; j++) {
        const sfs_config_target_t      *target = &config->targets[j];
        const sfs_config_target_lines_t lines  = sfs_config_target_lines(ctx, j);

        snprintf(path, sizeof(path), "storage[%" PRIu32 "].host", j);
        rc = sfs_config_check_role_host(ctx, path, target->host, lines.host);
        if (rc != 0) {
            return rc;
        }
        for (uint32_t i = 0; i < j; i++) {
            const sfs_config_target_t      *other       = &config->targets[i];
            const sfs_config_target_lines_t other_lines = sfs_config_target_lines(ctx, i);

            if (other->id == target->id) {
                snprintf(path, sizeof(path), "storage[%" PRIu32 "].id", j);
                return sfs_config_fail(ctx, lines.id, path,
                                       "duplicate target id %" PRIu32 " (first%s)", target->id,
                                       sfs_config_at_line(other_lines.id, at, sizeof(at)));
            }
            if (strcmp(other->dir, target->dir) == 0 &&
                sfs_config_host_matches(other->host, target->host)) {
                snprintf(path, sizeof(path), "storage[%" PRIu32 "].dir", j);
                return sfs_config_fail(ctx, lines.dir, path,
                                       "%s on host %s is already the directory of target "
                                       "%" PRIu32 "%s",
                                       target->dir, target->host, other->id,
                                       sfs_config_at_line(other_lines.dir, at, sizeof(at)));
            }
        }
        if (strcmp(config->meta_dir, target->dir) == 0 &&
            sfs_config_host_matches(config->meta_host, target->host)) {
            return sfs_config_fail(ctx, ctx->lines[SFS_CONFIG_LINE_META_DIR], "meta.dir",
                                   "%s on host %s is also the directory of target %" PRIu32 "%s",
                                   config->meta_dir, config->meta_host, target->id,
                                   sfs_config_at_line(lines.dir, at, sizeof(at)));
        }
    }
    if (config->offline_timeout_ms <= config->heartbeat_interval_ms) {
        return sfs_config_fail(
            ctx, ctx->lines[SFS_CONFIG_LINE_OFFLINE], "timeouts.offline",
            "%s must be longer than the heartbeat interval (%s)",
            sfs_config_duration_text(config->offline_timeout_ms, low, sizeof(low)),
            sfs_config_duration_text(config->heartbeat_interval_ms, high, sizeof(high)));
    }
    if (strcmp(config->security_mode, "munge") == 0) {
        config->munge = 1;
    } else if (strcmp(config->security_mode, "shared-secret") == 0) {
        config->munge = 0;
    } else {
        return sfs_config_fail(ctx, ctx->lines[SFS_CONFIG_LINE_SECURITY_MODE], "security.mode",
                               "'%s' is not a mode: use munge (users proven by MUNGE) or "
                               "shared-secret (trusted single-user: whoever holds the connauth "
                               "file is root on the file system)",
                               config->security_mode);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Creating, parsing, loading                                          */

static int sfs_config_alloc(sfs_config_t **config_p)
{
    sfs_config_t *config;

    if (SFS_ALLOC_PTR(config) == NULL) {
        return sfs_error_set(-ENOMEM, "out of memory for a config");
    }
    snprintf(config->cluster_name, sizeof(config->cluster_name), "%s", SFS_CONFIG_DEFAULT_CLUSTER);
    config->mgmt_port             = SFS_CONFIG_DEFAULT_PORT;
    config->meta_sync             = 1;
    config->default_chunk_size    = SFS_CONFIG_DEFAULT_CHUNK;
    config->default_stripe_count  = SFS_CONFIG_DEFAULT_STRIPES;
    config->rpc_timeout_ms        = SFS_CONFIG_DEFAULT_RPC_MS;
    config->connect_timeout_ms    = SFS_CONFIG_DEFAULT_CONN_MS;
    config->heartbeat_interval_ms = SFS_CONFIG_DEFAULT_HBEAT_MS;
    config->offline_timeout_ms    = SFS_CONFIG_DEFAULT_OFFL_MS;
    config->max_message_size      = SFS_CONFIG_DEFAULT_MAX_MSG;
    config->io_threads            = SFS_CONFIG_DEFAULT_IO_THR;
    config->inline_io_max         = SFS_CONFIG_DEFAULT_INLINE_IO;
    config->mapped_read_min       = SFS_CONFIG_DEFAULT_MAPPED_READ;
    config->max_request_rate      = SFS_CONFIG_DEFAULT_MAX_RATE;
    snprintf(config->security_mode, sizeof(config->security_mode), "munge");
    snprintf(config->munge_socket, sizeof(config->munge_socket), "%s",
             SFS_CONFIG_DEFAULT_MUNGE_SOCK);
    config->munge                  = 1;
    config->capability_lifetime_ms = SFS_CONFIG_DEFAULT_CAP_MS;
    *config_p                      = config;
    return 0;
}

void sfs_config_destroy(sfs_config_t *config)
{
    if (config == NULL) {
        return;
    }
    free(config->hosts);
    free(config->targets);
    free(config);
}

/* The events around the top-level mapping: one document, nothing after it. */
static int sfs_config_parse_document(sfs_config_ctx_t *ctx)
{
    int rc;

    rc = sfs_config_next(ctx); /* stream start */
    if (rc != 0) {
        return rc;
    }
    rc = sfs_config_next(ctx);
    if (rc != 0) {
        return rc;
    }
    if (ctx->event.type == YAML_STREAM_END_EVENT) {
        return sfs_config_fail(ctx, sfs_config_event_line(ctx), NULL,
                               "the file is empty (no settings)");
    }
    rc = sfs_config_next(ctx); /* past the document start */
    if (rc != 0) {
        return rc;
    }
    if (ctx->event.type == YAML_SCALAR_EVENT && sfs_config_is_null(&ctx->event)) {
        return sfs_config_fail(ctx, sfs_config_event_line(ctx), NULL,
                               "the file is empty (no settings)");
    }
    rc = sfs_config_expect(ctx, NULL, YAML_MAPPING_START_EVENT,
                           "a mapping of settings (cluster:, mgmt:, storage:, ...) at the top");
    if (rc != 0) {
        return rc;
    }
    rc = sfs_config_parse_mapping(ctx, "", sfs_config_top_keys, SFS_ARRAY_SIZE(sfs_config_top_keys),
                                  ctx->config);
    if (rc != 0) {
        return rc;
    }
    rc = sfs_config_next(ctx); /* document end */
    if (rc != 0) {
        return rc;
    }
    rc = sfs_config_next(ctx);
    if (rc != 0) {
        return rc;
    }
    if (ctx->event.type != YAML_STREAM_END_EVENT) {
        return sfs_config_fail(ctx, sfs_config_event_line(ctx), NULL,
                               "a second YAML document ('---'); a config has only one");
    }
    return 0;
}

static int sfs_config_parser_start(sfs_config_ctx_t *ctx)
{
    memset(&ctx->event, 0, sizeof(ctx->event));
    if (!yaml_parser_initialize(&ctx->parser)) {
        return sfs_error_set(-ENOMEM, "out of memory for the YAML parser");
    }
    yaml_parser_set_input_string(
        &ctx->parser, (const unsigned char *)(ctx->length ? ctx->text : ""), ctx->length);
    return 0;
}

static void sfs_config_parser_stop(sfs_config_ctx_t *ctx)
{
    yaml_event_delete(&ctx->event);
    yaml_parser_delete(&ctx->parser);
}

/* Read every event once, only to find syntax errors. */
static int sfs_config_syntax_pass(sfs_config_ctx_t *ctx)
{
    int rc = sfs_config_parser_start(ctx);

    while (rc == 0) {
        rc = sfs_config_next(ctx);
        if (rc == 0 && ctx->event.type == YAML_STREAM_END_EVENT) {
            break;
        }
    }
    sfs_config_parser_stop(ctx);
    return rc;
}

static int sfs_config_parse_named(const char *text, size_t length, const char *name,
                                  sfs_config_t **config_p)
{
    sfs_config_ctx_t *ctx;
    const char       *nul;
    int               rc;

    if (SFS_ALLOC_PTR(ctx) == NULL) {
        rc = sfs_error_set(-ENOMEM, "out of memory for the config parser");
        goto err;
    }
    ctx->name   = name;
    ctx->text   = text;
    ctx->length = length;
    rc          = sfs_config_base_dir(name, ctx->base_dir, sizeof(ctx->base_dir));
    if (rc != 0) {
        goto err_free_ctx;
    }
    rc = sfs_config_alloc(&ctx->config);
    if (rc != 0) {
        goto err_free_ctx;
    }
    /* libyaml would only say "control characters are not allowed". */
    nul = length ? memchr(text, '\0', length) : NULL;
    if (nul != NULL) {
        int line = 1;

        for (const char *p = text; p < nul; p++) {
            line += *p == '\n';
        }
        rc = sfs_config_fail(ctx, line, NULL, "NUL byte in the file (is it a text file?)");
        goto err_destroy_config;
    }
    /* A syntax error is reported before anything it may have garbled, such
     * as "h1 port" read as one value when "port:" is indented too far. */
    rc = sfs_config_syntax_pass(ctx);
    if (rc != 0) {
        goto err_destroy_config;
    }
    rc = sfs_config_parser_start(ctx);
    if (rc != 0) {
        goto err_destroy_config;
    }
    rc = sfs_config_parse_document(ctx);
    if (rc == 0) {
        rc = sfs_config_validate(ctx);
    }
    sfs_config_parser_stop(ctx);
    if (rc != 0) {
        goto err_destroy_config;
    }
    sfs_debug("%s: %" PRIu32 " hosts, %" PRIu32 " targets", name, ctx->config->host_count,
              ctx->config->target_count);
    *config_p = ctx->config;
    free(ctx->target_lines);
    free(ctx);
    return 0;

err_destroy_config:
    sfs_config_destroy(ctx->config);
    free(ctx->target_lines);
err_free_ctx:
    free(ctx);
err:
    return rc;
}

int sfs_config_parse(const char *text, size_t length, const char *name, sfs_config_t **config_p)
{
    if ((text == NULL && length != 0) || config_p == NULL) {
        return sfs_error_set(-EINVAL, "sfs_config_parse: no text or no output pointer");
    }
    return sfs_config_parse_named(text, length, name ? name : "<config>", config_p);
}

/* The whole of a regular file, at most SFS_CONFIG_MAX_FILE_SIZE bytes. */
static int sfs_config_read_file(const char *path, char **text_p, size_t *length_p)
{
    size_t      alloc = 4096, length = 0;
    char       *text, *bigger;
    struct stat st;
    int         fd, rc;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = sfs_error_set(-errno, "cannot open config file %s: %s", path, strerror(errno));
        goto err;
    }
    if (fstat(fd, &st) != 0) {
        rc = sfs_error_set(-errno, "cannot stat config file %s: %s", path, strerror(errno));
        goto err_close;
    }
    if (S_ISDIR(st.st_mode)) {
        rc = sfs_error_set(-EISDIR, "config file %s is a directory", path);
        goto err_close;
    }
    text = malloc(alloc);
    if (text == NULL) {
        rc = sfs_error_set(-ENOMEM, "out of memory reading %s", path);
        goto err_close;
    }
    for (;;) {
        ssize_t got;

        if (length == alloc) {
            if (alloc >= SFS_CONFIG_MAX_FILE_SIZE) {
                rc = sfs_error_set(-EFBIG, "config file %s is larger than %u MiB", path,
                                   SFS_CONFIG_MAX_FILE_SIZE >> 20);
                goto err_free;
            }
            bigger = realloc(text, alloc * 2);
            if (bigger == NULL) {
                rc = sfs_error_set(-ENOMEM, "out of memory reading %s", path);
                goto err_free;
            }
            text = bigger;
            alloc *= 2;
        }
        got = read(fd, text + length, alloc - length);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            rc = sfs_error_set(-errno, "cannot read config file %s: %s", path, strerror(errno));
            goto err_free;
        }
        if (got == 0) {
            break;
        }
        length += (size_t)got;
    }
    close(fd);
    *text_p   = text;
    *length_p = length;
    return 0;

err_free:
    free(text);
err_close:
    close(fd);
err:
    return rc;
}

int sfs_config_load(const char *path, sfs_config_t **config_p)
{
    sfs_config_t *config;
    char         *text   = NULL;
    size_t        length = 0;
    int           rc;

    if (path == NULL || config_p == NULL) {
        return sfs_error_set(-EINVAL, "sfs_config_load: no path or no output pointer");
    }
    if (strlen(path) >= sizeof(config->path)) {
        return sfs_error_set(-ENAMETOOLONG, "config file name too long: %.80s...", path);
    }
    rc = sfs_config_read_file(path, &text, &length);
    if (rc != 0) {
        goto err;
    }
    rc = sfs_config_parse_named(text, length, path, &config);
    if (rc != 0) {
        goto err_free_text;
    }
    snprintf(config->path, sizeof(config->path), "%s", path);
    *config_p = config;
    free(text);
    return 0;

err_free_text:
    free(text);
err:
    return rc;
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */

typedef struct sfs_config_out {
    char  *data;
    size_t length, alloc;
} sfs_config_out_t;

static int sfs_config_out_append(void *arg, unsigned char *bytes, size_t size)
{
    sfs_config_out_t *out = arg;

    if (out->length + size + 1 > out->alloc) {
        size_t alloc = out->alloc ? out->alloc : 1024;
        char  *data;

        while (alloc < out->length + size + 1) {
            alloc *= 2;
        }
        data = realloc(out->data, alloc);
        if (data == NULL) {
            return 0;
        }
        out->data  = data;
        out->alloc = alloc;
    }
    memcpy(out->data + out->length, bytes, size);
    out->length += size;
    out->data[out->length] = '\0';
    return 1;
}

/* Emit `event` (which the emitter takes over, even on failure). */
static int sfs_config_emit(yaml_emitter_t *emitter, yaml_event_t *event, int initialized)
{
    if (!initialized) {
        return sfs_error_set(-ENOMEM, "out of memory writing a config");
    }
    if (!yaml_emitter_emit(emitter, event)) {
        if (emitter->error == YAML_MEMORY_ERROR || emitter->error == YAML_WRITER_ERROR) {
            return sfs_error_set(-ENOMEM, "out of memory writing a config");
        }
        return sfs_error_set(-EINVAL, "cannot write the config as YAML: %s",
                             emitter->problem ? emitter->problem : "emitter error");
    }
    return 0;
}

static int sfs_config_emit_scalar(yaml_emitter_t *emitter, const char *text, int is_string)
{
    yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;
    yaml_event_t        event;
    int                 ok;

    /* Plain "", "~" or "null" would read back as no value at all. */
    if (is_string && (text[0] == '\0' || !strcmp(text, "~") || !strcasecmp(text, "null"))) {
        style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    }
    ok = yaml_scalar_event_initialize(&event, NULL, NULL, (yaml_char_t *)text, (int)strlen(text), 1,
                                      1, style);
    return sfs_config_emit(emitter, &event, ok);
}

static int sfs_config_emit_string(yaml_emitter_t *emitter, const char *key, const char *value,
                                  size_t size)
{
    int rc;

    if (memchr(value, '\0', size) == NULL) {
        return sfs_error_set(-EINVAL, "cannot write the config: %s is not terminated", key);
    }
    rc = sfs_config_emit_scalar(emitter, key, 0);
    return rc ? rc : sfs_config_emit_scalar(emitter, value, 1);
}

#define SFS_CONFIG_EMIT_STRING(_emitter, _key, _field)                                             \
    sfs_config_emit_string((_emitter), (_key), (_field), sizeof(_field))

static int sfs_config_emit_number(yaml_emitter_t *emitter, const char *key, uint64_t value)
{
    char text[24];
    int  rc;

    snprintf(text, sizeof(text), "%" PRIu64, value);
    rc = sfs_config_emit_scalar(emitter, key, 0);
    return rc ? rc : sfs_config_emit_scalar(emitter, text, 0);
}

static int sfs_config_emit_text(yaml_emitter_t *emitter, const char *key, const char *text)
{
    int rc = sfs_config_emit_scalar(emitter, key, 0);

    return rc ? rc : sfs_config_emit_scalar(emitter, text, 0);
}

static int sfs_config_emit_mapping_start(yaml_emitter_t *emitter, const char *key, int flow)
{
    yaml_event_t event;
    int          ok, rc = 0;

    if (key != NULL) {
        rc = sfs_config_emit_scalar(emitter, key, 0);
    }
    if (rc != 0) {
        return rc;
    }
    ok = yaml_mapping_start_event_initialize(
        &event, NULL, NULL, 1, flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE);
    return sfs_config_emit(emitter, &event, ok);
}

static int sfs_config_emit_mapping_end(yaml_emitter_t *emitter)
{
    yaml_event_t event;

    return sfs_config_emit(emitter, &event, yaml_mapping_end_event_initialize(&event));
}

static int sfs_config_emit_list_start(yaml_emitter_t *emitter, const char *key)
{
    yaml_event_t event;
    int          ok, rc;

    rc = sfs_config_emit_scalar(emitter, key, 0);
    if (rc != 0) {
        return rc;
    }
    ok = yaml_sequence_start_event_initialize(&event, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
    return sfs_config_emit(emitter, &event, ok);
}

static int sfs_config_emit_list_end(yaml_emitter_t *emitter)
{
    yaml_event_t event;

    return sfs_config_emit(emitter, &event, yaml_sequence_end_event_initialize(&event));
}

/* Stops at the first failure: every step is `rc = rc ? rc : step`. */
#define SFS_CONFIG_STEP(_rc, _call) ((_rc) = (_rc) ? (_rc) : (_call))

static int sfs_config_emit_hosts(yaml_emitter_t *emitter, const sfs_config_t *config)
{
    int rc = sfs_config_emit_list_start(emitter, "hosts");

    for (uint32_t i = 0; i < config->host_count && rc == 0; i++) {
        const sfs_config_host_t *host = &config->hosts[i];

        SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_start(emitter, NULL, 1));
        SFS_CONFIG_STEP(rc, SFS_CONFIG_EMIT_STRING(emitter, "name", host->name));
        SFS_CONFIG_STEP(rc, sfs_config_emit_number(emitter, "ranks", host->ranks));
        if (host->address[0] != '\0') {
            SFS_CONFIG_STEP(rc, SFS_CONFIG_EMIT_STRING(emitter, "address", host->address));
        }
        SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_end(emitter));
    }
    SFS_CONFIG_STEP(rc, sfs_config_emit_list_end(emitter));
    return rc;
}

static int sfs_config_emit_storage(yaml_emitter_t *emitter, const sfs_config_t *config)
{
    char text[32];
    int  rc = sfs_config_emit_list_start(emitter, "storage");

    for (uint32_t i = 0; i < config->target_count && rc == 0; i++) {
        const sfs_config_target_t *target = &config->targets[i];

        SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_start(emitter, NULL, 1));
        SFS_CONFIG_STEP(rc, sfs_config_emit_number(emitter, "id", target->id));
        SFS_CONFIG_STEP(rc, SFS_CONFIG_EMIT_STRING(emitter, "host", target->host));
        SFS_CONFIG_STEP(rc, SFS_CONFIG_EMIT_STRING(emitter, "dir", target->dir));
        if (target->capacity != 0) {
            SFS_CONFIG_STEP(rc, sfs_config_emit_text(
                                    emitter, "capacity",
                                    sfs_config_size_text(target->capacity, text, sizeof(text))));
        }
        if (target->bandwidth != 0) {
            SFS_CONFIG_STEP(rc, sfs_config_emit_text(
                                    emitter, "bandwidth",
                                    sfs_config_size_text(target->bandwidth, text, sizeof(text))));
        }
        SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_end(emitter));
    }
    SFS_CONFIG_STEP(rc, sfs_config_emit_list_end(emitter));
    return rc;
}

static int sfs_config_emit_settings(yaml_emitter_t *emitter, const sfs_config_t *config)
{
    char text[32];
    int  rc = 0;

    SFS_CONFIG_STEP(rc, SFS_CONFIG_EMIT_STRING(emitter, "cluster", config->cluster_name));
    SFS_CONFIG_STEP(rc, SFS_CONFIG_EMIT_STRING(emitter, "connauth_file", config->connauth_file));

    SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_start(emitter, "mgmt", 1));
    SFS_CONFIG_STEP(rc, SFS_CONFIG_EMIT_STRING(emitter, "host", config->mgmt_host));
    SFS_CONFIG_STEP(rc, sfs_config_emit_number(emitter, "port", config->mgmt_port));
    SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_end(emitter));

    SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_start(emitter, "meta", 1));
    SFS_CONFIG_STEP(rc, SFS_CONFIG_EMIT_STRING(emitter, "host", config->meta_host));
    SFS_CONFIG_STEP(rc, SFS_CONFIG_EMIT_STRING(emitter, "dir", config->meta_dir));
    SFS_CONFIG_STEP(rc,
                    sfs_config_emit_text(emitter, "sync", config->meta_sync ? "true" : "false"));
    SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_end(emitter));

    SFS_CONFIG_STEP(rc, sfs_config_emit_hosts(emitter, config));
    SFS_CONFIG_STEP(rc, sfs_config_emit_storage(emitter, config));

    SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_start(emitter, "pattern", 1));
    SFS_CONFIG_STEP(rc, sfs_config_emit_text(
                            emitter, "chunk_size",
                            sfs_config_size_text(config->default_chunk_size, text, sizeof(text))));
    SFS_CONFIG_STEP(rc,
                    sfs_config_emit_number(emitter, "stripe_count", config->default_stripe_count));
    SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_end(emitter));

    SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_start(emitter, "timeouts", 1));
    SFS_CONFIG_STEP(rc, sfs_config_emit_text(
                            emitter, "rpc",
                            sfs_config_duration_text(config->rpc_timeout_ms, text, sizeof(text))));
    SFS_CONFIG_STEP(rc, sfs_config_emit_text(emitter, "connect",
                                             sfs_config_duration_text(config->connect_timeout_ms,
                                                                      text, sizeof(text))));
    SFS_CONFIG_STEP(rc, sfs_config_emit_text(emitter, "heartbeat",
                                             sfs_config_duration_text(config->heartbeat_interval_ms,
                                                                      text, sizeof(text))));
    SFS_CONFIG_STEP(rc, sfs_config_emit_text(emitter, "offline",
                                             sfs_config_duration_text(config->offline_timeout_ms,
                                                                      text, sizeof(text))));
    SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_end(emitter));

    SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_start(emitter, "limits", 1));
    SFS_CONFIG_STEP(rc, sfs_config_emit_text(
                            emitter, "max_message",
                            sfs_config_size_text(config->max_message_size, text, sizeof(text))));
    SFS_CONFIG_STEP(rc, sfs_config_emit_number(emitter, "io_threads", config->io_threads));
    SFS_CONFIG_STEP(
        rc, sfs_config_emit_text(emitter, "inline_io",
                                 sfs_config_size_text(config->inline_io_max, text, sizeof(text))));
    SFS_CONFIG_STEP(rc, sfs_config_emit_text(
                            emitter, "mapped_read",
                            sfs_config_size_text(config->mapped_read_min, text, sizeof(text))));
    SFS_CONFIG_STEP(rc,
                    sfs_config_emit_number(emitter, "max_request_rate", config->max_request_rate));
    SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_end(emitter));

    SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_start(emitter, "security", 0));
    SFS_CONFIG_STEP(rc, SFS_CONFIG_EMIT_STRING(emitter, "mode", config->security_mode));
    SFS_CONFIG_STEP(rc, SFS_CONFIG_EMIT_STRING(emitter, "munge_socket", config->munge_socket));
    if (config->munged_key[0]) {
        SFS_CONFIG_STEP(rc, SFS_CONFIG_EMIT_STRING(emitter, "munged_key", config->munged_key));
    }
    SFS_CONFIG_STEP(rc, sfs_config_emit_number(emitter, "service_uid", config->service_uid));
    if (config->admin_group[0]) {
        SFS_CONFIG_STEP(rc, SFS_CONFIG_EMIT_STRING(emitter, "admin_group", config->admin_group));
    }
    SFS_CONFIG_STEP(rc,
                    sfs_config_emit_text(emitter, "capability_lifetime",
                                         sfs_config_duration_text(config->capability_lifetime_ms,
                                                                  text, sizeof(text))));
    if (config->trusted_host_count) {
        yaml_event_t event;
        int          ok;

        SFS_CONFIG_STEP(rc, sfs_config_emit_scalar(emitter, "trusted_hosts", 0));
        if (rc == 0) {
            ok = yaml_sequence_start_event_initialize(&event, NULL, NULL, 1,
                                                      YAML_FLOW_SEQUENCE_STYLE);
            rc = sfs_config_emit(emitter, &event, ok);
        }
        for (uint32_t i = 0; i < config->trusted_host_count; i++) {
            SFS_CONFIG_STEP(rc, sfs_config_emit_scalar(emitter, config->trusted_hosts[i], 1));
        }
        SFS_CONFIG_STEP(rc, sfs_config_emit_list_end(emitter));
    }
    SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_end(emitter));
    return rc;
}

/* The YAML text of `config`, NUL-terminated, in out->data. */
static int sfs_config_format(const sfs_config_t *config, sfs_config_out_t *out)
{
    static const char header[] = "# stripefs cluster configuration (keys: docs/config.md)\n";
    yaml_emitter_t    emitter;
    yaml_event_t      event;
    int               rc = 0;

    if (!sfs_config_out_append(out, (unsigned char *)header, sizeof(header) - 1)) {
        return sfs_error_set(-ENOMEM, "out of memory writing a config");
    }
    if (!yaml_emitter_initialize(&emitter)) {
        return sfs_error_set(-ENOMEM, "out of memory for the YAML emitter");
    }
    yaml_emitter_set_output(&emitter, sfs_config_out_append, out);
    yaml_emitter_set_unicode(&emitter, 1);
    yaml_emitter_set_width(&emitter, -1); /* one line per target, however long */

    SFS_CONFIG_STEP(
        rc, sfs_config_emit(&emitter, &event,
                            yaml_stream_start_event_initialize(&event, YAML_UTF8_ENCODING)));
    SFS_CONFIG_STEP(
        rc, sfs_config_emit(&emitter, &event,
                            yaml_document_start_event_initialize(&event, NULL, NULL, NULL, 1)));
    SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_start(&emitter, NULL, 0));
    SFS_CONFIG_STEP(rc, sfs_config_emit_settings(&emitter, config));
    SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_end(&emitter));
    SFS_CONFIG_STEP(
        rc, sfs_config_emit(&emitter, &event, yaml_document_end_event_initialize(&event, 1)));
    SFS_CONFIG_STEP(rc,
                    sfs_config_emit(&emitter, &event, yaml_stream_end_event_initialize(&event)));
    yaml_emitter_delete(&emitter);
    return rc;
}

/* Replace `path` atomically: a temporary file next to it, then rename. */
static int sfs_config_write_file(const char *path, const char *data, size_t length)
{
    char   temp[PATH_MAX];
    size_t done = 0;
    int    fd, rc;

    if ((size_t)snprintf(temp, sizeof(temp), "%s.XXXXXX", path) >= sizeof(temp)) {
        rc = sfs_error_set(-ENAMETOOLONG, "config file name too long: %.80s...", path);
        goto err;
    }
    fd = mkstemp(temp);
    if (fd < 0) {
        rc = sfs_error_set(-errno, "cannot create %s: %s", temp, strerror(errno));
        goto err;
    }
    if (fchmod(fd, 0644) != 0) {
        rc = sfs_error_set(-errno, "cannot chmod %s: %s", temp, strerror(errno));
        goto err_unlink;
    }
    while (done < length) {
        ssize_t put = write(fd, data + done, length - done);

        if (put < 0 && errno == EINTR) {
            continue;
        }
        if (put < 0) {
            rc = sfs_error_set(-errno, "cannot write %s: %s", temp, strerror(errno));
            goto err_unlink;
        }
        done += (size_t)put;
    }
    if (fsync(fd) != 0) {
        rc = sfs_error_set(-errno, "cannot sync %s: %s", temp, strerror(errno));
        goto err_unlink;
    }
    if (close(fd) != 0) {
        fd = -1;
        rc = sfs_error_set(-errno, "cannot close %s: %s", temp, strerror(errno));
        goto err_unlink;
    }
    fd = -1;
    if (rename(temp, path) != 0) {
        rc = sfs_error_set(-errno, "cannot rename %s to %s: %s", temp, path, strerror(errno));
        goto err_unlink;
    }
    return 0;

err_unlink:
    unlink(temp);
    if (fd >= 0) {
        close(fd);
    }
err:
    return rc;
}

int sfs_config_write(const sfs_config_t *config, const char *path)
{
    sfs_config_out_t out = {0};
    int              rc;

    if (config == NULL || path == NULL) {
        return sfs_error_set(-EINVAL, "sfs_config_write: no config or no path");
    }
    rc = sfs_config_format(config, &out);
    if (rc != 0) {
        goto out;
    }
    rc = sfs_config_write_file(path, out.data, out.length);
out:
    free(out.data);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Generated configs                                                   */

static int sfs_config_generated_ctx(sfs_config_ctx_t *ctx)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->name        = SFS_CONFIG_GENERATED_NAME;
    ctx->hosts_given = 1;
    if (getcwd(ctx->base_dir, sizeof(ctx->base_dir)) == NULL) {
        return sfs_error_set(-errno, "cannot get the current directory: %s", strerror(errno));
    }
    return sfs_config_alloc(&ctx->config);
}

/* Copy an argument into a config field, checked like the same key in a file. */
static int sfs_config_set_arg(sfs_config_ctx_t *ctx, const char *what, const char *value,
                              sfs_config_type_t type, char *field, size_t size)
{
    const char *problem;
    char        shown[SFS_CONFIG_SHOW_BUF];

    if (value == NULL) {
        return sfs_config_fail(ctx, 0, what, "not given");
    }
    if (strlen(value) >= size) {
        return sfs_config_fail(ctx, 0, what, "too long (at most %zu bytes)", size - 1);
    }
    problem = sfs_config_check_name(value, type);
    if (problem != NULL) {
        return sfs_config_fail(ctx, 0, what, "'%s': %s",
                               sfs_config_show(value, strlen(value), shown, sizeof(shown)),
                               problem);
    }
    if (type != SFS_CONFIG_TYPE_PATH) {
        snprintf(field, size, "%s", value);
        return 0;
    }
    if (sfs_config_path_resolve(ctx->base_dir, value, field, size) != 0) {
        return sfs_config_fail(ctx, 0, what, "too long once made absolute");
    }
    return 0;
}

static int sfs_config_add_target(sfs_config_ctx_t *ctx, uint32_t id, const char *host,
                                 const char *dir)
{
    sfs_config_t        *config = ctx->config;
    sfs_config_target_t *target;
    char                 what[SFS_CONFIG_PATH_KEY_MAX];
    int                  rc;

    rc = sfs_config_grow((void **)&config->targets, &ctx->target_alloc, config->target_count + 1,
                         sizeof(*config->targets));
    if (rc != 0) {
        return rc;
    }
    target     = &config->targets[config->target_count];
    target->id = id;
    snprintf(what, sizeof(what), "storage[%" PRIu32 "].dir", config->target_count);
    rc = sfs_config_set_arg(ctx, what, dir, SFS_CONFIG_TYPE_PATH, target->dir, sizeof(target->dir));
    if (rc != 0) {
        return rc;
    }
    snprintf(target->host, sizeof(target->host), "%s", host);
    config->target_count++;
    return 0;
}

static int sfs_config_finish_generated(sfs_config_ctx_t *ctx, sfs_config_t **config_p)
{
    int rc = sfs_config_validate(ctx);

    if (rc != 0) {
        sfs_config_destroy(ctx->config);
        return rc;
    }
    *config_p = ctx->config;
    return 0;
}

int sfs_config_generate(const char *const *hosts, uint32_t host_count, const char *storage_dir,
                        const char *meta_dir, const char *connauth_file, uint16_t port,
                        sfs_config_t **config_p)
{
    /* Target ids are (i+1)*100+1 and must stay within 1..65535. */
    const uint32_t   max_hosts = (SFS_CONFIG_MAX_TARGET_ID - 1) / 100;
    sfs_config_ctx_t ctx;
    sfs_config_t    *config;
    char             what[SFS_CONFIG_PATH_KEY_MAX];
    int              rc;

    if (hosts == NULL || config_p == NULL || host_count == 0 || host_count > max_hosts) {
        return sfs_error_set(-EINVAL, "%s: need 1..%" PRIu32 " hosts and an output pointer",
                             SFS_CONFIG_GENERATED_NAME, max_hosts);
    }
    rc = sfs_config_generated_ctx(&ctx);
    if (rc != 0) {
        return rc;
    }
    config = ctx.config;
    if (port != 0) {
        config->mgmt_port = port;
    }
    for (uint32_t i = 0; i < host_count; i++) {
        snprintf(what, sizeof(what), "hosts[%" PRIu32 "].name", i);
        rc = sfs_config_add_host(&ctx, "", 0);
        if (rc != 0) {
            goto err_destroy;
        }
        rc = sfs_config_set_arg(&ctx, what, hosts[i], SFS_CONFIG_TYPE_HOSTNAME,
                                config->hosts[i].name, sizeof(config->hosts[i].name));
        if (rc != 0) {
            goto err_destroy;
        }
        rc = sfs_config_add_target(&ctx, (i + 1) * 100 + 1, config->hosts[i].name, storage_dir);
        if (rc != 0) {
            goto err_destroy;
        }
    }
    snprintf(config->mgmt_host, sizeof(config->mgmt_host), "%s", config->hosts[0].name);
    snprintf(config->meta_host, sizeof(config->meta_host), "%s", config->hosts[0].name);
    rc = sfs_config_set_arg(&ctx, "meta.dir", meta_dir, SFS_CONFIG_TYPE_PATH, config->meta_dir,
                            sizeof(config->meta_dir));
    if (rc != 0) {
        goto err_destroy;
    }
    rc = sfs_config_set_arg(&ctx, "connauth_file", connauth_file, SFS_CONFIG_TYPE_PATH,
                            config->connauth_file, sizeof(config->connauth_file));
    if (rc != 0) {
        goto err_destroy;
    }
    /* every host runs servers, whose root can read the targets anyway:
     * root there is root on the file system */
    for (uint32_t i = 0; i < host_count && i < SFS_CONFIG_MAX_TRUSTED; i++) {
        snprintf(config->trusted_hosts[i], SFS_CONFIG_NAME_MAX, "%s", config->hosts[i].name);
        config->trusted_host_count = i + 1;
    }
    return sfs_config_finish_generated(&ctx, config_p);

err_destroy:
    sfs_config_destroy(config);
    return rc;
}

int sfs_config_one_host(const char *state_dir, const char *hostname, uint32_t target_count,
                        uint16_t port, sfs_config_t **config_p)
{
    sfs_config_ctx_t ctx;
    sfs_config_t    *config;
    char             this_host[SFS_CONFIG_NAME_MAX];
    char             path[PATH_MAX];
    int              rc;

    if (state_dir == NULL || config_p == NULL || target_count == 0 ||
        target_count > SFS_CONFIG_MAX_TARGETS) {
        return sfs_error_set(-EINVAL, "%s: need a state dir, 1..%d targets and an output pointer",
                             SFS_CONFIG_GENERATED_NAME, SFS_CONFIG_MAX_TARGETS);
    }
    /* Room for "/targets/<id>" below, so that nothing is cut off silently. */
    if (strlen(state_dir) + 32 >= sizeof(path)) {
        return sfs_error_set(-ENAMETOOLONG, "%s: state dir too long: %.80s...",
                             SFS_CONFIG_GENERATED_NAME, state_dir);
    }
    if (hostname == NULL || hostname[0] == '\0') {
        if (gethostname(this_host, sizeof(this_host)) != 0) {
            return sfs_error_set(-errno, "cannot get the host name: %s", strerror(errno));
        }
        this_host[sizeof(this_host) - 1] = '\0';
        hostname                         = this_host;
    }
    rc = sfs_config_generated_ctx(&ctx);
    if (rc != 0) {
        return rc;
    }
    config = ctx.config;
    if (port != 0) {
        config->mgmt_port = port;
    }
    rc = sfs_config_add_host(&ctx, "", 0);
    if (rc != 0) {
        goto err_destroy;
    }
    rc = sfs_config_set_arg(&ctx, "hosts[0].name", hostname, SFS_CONFIG_TYPE_HOSTNAME,
                            config->hosts[0].name, sizeof(config->hosts[0].name));
    if (rc != 0) {
        goto err_destroy;
    }
    snprintf(config->mgmt_host, sizeof(config->mgmt_host), "%s", config->hosts[0].name);
    snprintf(config->meta_host, sizeof(config->meta_host), "%s", config->hosts[0].name);
    for (uint32_t i = 0; i < target_count; i++) {
        snprintf(path, sizeof(path), "%s/targets/%" PRIu32, state_dir, 101 + i);
        rc = sfs_config_add_target(&ctx, 101 + i, config->hosts[0].name, path);
        if (rc != 0) {
            goto err_destroy;
        }
    }
    snprintf(path, sizeof(path), "%s/meta", state_dir);
    rc = sfs_config_set_arg(&ctx, "meta.dir", path, SFS_CONFIG_TYPE_PATH, config->meta_dir,
                            sizeof(config->meta_dir));
    if (rc != 0) {
        goto err_destroy;
    }
    snprintf(path, sizeof(path), "%s/connauth", state_dir);
    rc = sfs_config_set_arg(&ctx, "connauth_file", path, SFS_CONFIG_TYPE_PATH,
                            config->connauth_file, sizeof(config->connauth_file));
    if (rc != 0) {
        goto err_destroy;
    }
    /* users are proven by a munged of the service's own (its key and socket
     * in the state dir); the servers run as whoever starts them, and root
     * on this one host is root on the file system */
    snprintf(path, sizeof(path), "%s/munge/munge.key", state_dir);
    rc = sfs_config_set_arg(&ctx, "security.munged_key", path, SFS_CONFIG_TYPE_PATH,
                            config->munged_key, sizeof(config->munged_key));
    if (rc != 0) {
        goto err_destroy;
    }
    snprintf(path, sizeof(path), "%s/munge/munge.socket", state_dir);
    rc = sfs_config_set_arg(&ctx, "security.munge_socket", path, SFS_CONFIG_TYPE_PATH,
                            config->munge_socket, sizeof(config->munge_socket));
    if (rc != 0) {
        goto err_destroy;
    }
    config->service_uid = (uint32_t)geteuid();
    snprintf(config->trusted_hosts[0], SFS_CONFIG_NAME_MAX, "%s", config->hosts[0].name);
    config->trusted_host_count = 1;
    return sfs_config_finish_generated(&ctx, config_p);

err_destroy:
    sfs_config_destroy(config);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Hosts                                                               */

static int sfs_config_is_ipv4(const char *name)
{
    return name[strspn(name, "0123456789.")] == '\0';
}

int sfs_config_host_matches(const char *config_name, const char *hostname)
{
    const char *shorter, *longer;
    size_t      short_len;

    if (config_name == NULL || hostname == NULL || config_name[0] == '\0' || hostname[0] == '\0') {
        return 0;
    }
    if (strcasecmp(config_name, hostname) == 0) {
        return 1;
    }
    shorter = strlen(config_name) < strlen(hostname) ? config_name : hostname;
    longer  = shorter == config_name ? hostname : config_name;
    /* Only a short name matches a longer one, and never within an address. */
    if (strchr(shorter, '.') != NULL || sfs_config_is_ipv4(longer)) {
        return 0;
    }
    short_len = strlen(shorter);
    return strncasecmp(shorter, longer, short_len) == 0 && longer[short_len] == '.';
}

const sfs_config_host_t *sfs_config_find_host(const sfs_config_t *config, const char *hostname)
{
    const sfs_config_host_t *found = NULL;

    if (config == NULL || hostname == NULL) {
        return NULL;
    }
    for (uint32_t i = 0; i < config->host_count; i++) {
        if (strcasecmp(config->hosts[i].name, hostname) == 0) {
            return &config->hosts[i];
        }
    }
    for (uint32_t i = 0; i < config->host_count; i++) {
        if (!sfs_config_host_matches(config->hosts[i].name, hostname)) {
            continue;
        }
        if (found != NULL) {
            return NULL; /* ambiguous: a short name that matches two full names */
        }
        found = &config->hosts[i];
    }
    return found;
}
