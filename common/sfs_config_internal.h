/*
 * Inside the config module (common/sfs_config*.c), shared by its files and
 * by nothing else: the defaults, the parse context, the key tables' types
 * and the helpers one file offers another.
 *
 *   sfs_config_yaml.c      YAML events, messages, values, mappings, lists
 *   sfs_config.c           the schema (key tables), parsing and loading
 *   sfs_config_check.c     paths and names, checks across keys, host rules
 *   sfs_config_write.c     writing YAML
 *   sfs_config_generate.c  genconfig and the one-host generator
 *   sfs_config_mirror.c    mirror groups; sfs_config_pool.c storage pools
 */
#ifndef SFS_CONFIG_INTERNAL_H
#define SFS_CONFIG_INTERNAL_H

#include "sfs_config.h"

#include <stddef.h>
#include <stdint.h>
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
#define SFS_CONFIG_DEFAULT_MAP_SIZE    (16ull << 30)
#define SFS_CONFIG_MIN_MAP_SIZE        (64ull << 20)
#define SFS_CONFIG_MAX_MAP_SIZE        (1ull << 40)
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
    SFS_CONFIG_LINE_META_MIRROR,
    SFS_CONFIG_LINE_META_MIRROR_DIR,
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
    uint32_t                   mirror_alloc;
    uint32_t                   pool_alloc;
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

#define SFS_CONFIG_SHOW_BUF (SFS_CONFIG_SHOW_MAX * 4 + 8)

/* One list of mappings (`hosts:`, `storage:`): every item is read through
 * `keys` into the object that `add` makes room for. */
typedef struct sfs_config_list {
    const char             *expected; /* "a list of hosts" */
    const char             *item;     /* what an item looks like, for "expected ..." */
    const char             *noun;     /* "hosts", for "too many hosts (at most N)" */
    uint32_t                max;      /* items */
    const char             *empty;    /* what to say of an empty list */
    const sfs_config_key_t *keys;     /* of one item */
    size_t                  key_count;
    /* Room for item `index`, whose mapping starts at `line`. */
    int (*add)(sfs_config_ctx_t *ctx, uint32_t index, int line, void **item_p);
    /* After the item's keys were read; NULL if there is nothing to do. */
    int (*done)(sfs_config_ctx_t *ctx, uint32_t index);
} sfs_config_list_t;

/* --- sfs_config_yaml.c ------------------------------------------- */

/* `text` quoted for a message: control bytes escaped, long values cut. */
const char *sfs_config_show(const char *text, size_t length, char *buf, size_t buflen);

/* Record "NAME:LINE: PATH: problem" (line and path left out when unknown)
 * and return -EINVAL. */
int sfs_config_fail(const sfs_config_ctx_t *ctx, int line, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

int sfs_config_line_of(const yaml_mark_t *mark);
int sfs_config_event_line(const sfs_config_ctx_t *ctx);

/* Replace the current event by the next one. */
int sfs_config_next(sfs_config_ctx_t *ctx);
int sfs_config_is_null(const yaml_event_t *event);

/* Check that the current event is a node of `type` that we can use:
 * no aliases, no tags, scalars neither null nor holding NUL bytes. */
int sfs_config_expect(sfs_config_ctx_t *ctx, const char *path, yaml_event_type_t type,
                      const char *expected);

/* Read the mapping whose start is the current event, up to its end. */
int sfs_config_parse_mapping(sfs_config_ctx_t *ctx, const char *path, const sfs_config_key_t *keys,
                             size_t key_count, void *object);

/* Read the list of mappings whose start is the current event. */
int sfs_config_parse_list(sfs_config_ctx_t *ctx, const char *path, const sfs_config_list_t *list);

/* Grow a zero-filled array to hold `needed` items. */
int sfs_config_grow(void **array_p, uint32_t *alloc_p, uint32_t needed, size_t item_size);

/* --- sfs_config.c ------------------------------------------------ */

/* A config holding the defaults. */
int sfs_config_alloc(sfs_config_t **config_p);

/* Append a host named `name` (ranks 1) to the config's host list. */
int sfs_config_add_host(sfs_config_ctx_t *ctx, const char *name, int line);

/* --- sfs_config_check.c ------------------------------------------ */

/* `path` made absolute (relative to `base_dir`) and cleaned lexically. */
int sfs_config_path_resolve(const char *base_dir, const char *path, char *out, size_t outlen);

/* The directory relative paths in `name` are taken from, made absolute. */
int sfs_config_base_dir(const char *name, char *out, size_t outlen);

/* Problems with a name for a given charset, or NULL. */
const char *sfs_config_check_name(const char *text, sfs_config_type_t type);

/* The checks across keys, run once the whole config is read (or made). */
int sfs_config_validate(sfs_config_ctx_t *ctx);

/* --- sfs_config_mirror.c ----------------------------------------- */

/* The `mirror:` section's keys (groups, default, same_host, stale_reads);
 * their number is a constant for sfs_config.c's table of sections. */
#define SFS_CONFIG_MIRROR_KEY_COUNT 4
extern const sfs_config_key_t sfs_config_mirror_keys[SFS_CONFIG_MIRROR_KEY_COUNT];

/* The checks of mirror groups: known targets, two hosts (unless
 * mirror.same_host), no target in two groups. */
int sfs_config_mirror_validate(sfs_config_ctx_t *ctx);

/* --- sfs_config_pool.c ------------------------------------------- */

/* The `pools:` list: {name: hdd, targets: [101, 201]} each. */
int sfs_config_parse_pools(sfs_config_ctx_t *ctx, const char *path, void *object);

/* The checks of pools: names (not `default` or `none`, no two alike), known
 * targets, no target in two pools, a mirror group's members in one pool. */
int sfs_config_pool_validate(sfs_config_ctx_t *ctx);

/* Free the pools' target lists and the pools. */
void sfs_config_pool_free(sfs_config_t *config);

/* --- sfs_config_write.c ------------------------------------------ */

/* Exact text for a size ("12T", "512K", "1000"), as the writer emits it. */
const char *sfs_config_size_text(uint64_t bytes, char *buf, size_t buflen);

/* Exact text for a duration ("30s", "2m", "1500ms"). */
const char *sfs_config_duration_text(uint32_t ms, char *buf, size_t buflen);

#endif
