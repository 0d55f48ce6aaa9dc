/*
 * The cluster configuration's schema, as tables of keys, and the entry
 * points that parse and load a file with them (sfs_config_yaml.c reads the
 * events; sfs_config_check.c runs the checks across keys).
 *
 * Schema (docs/config.md has every key, default and error):
 *
 *   cluster: imaging                        # optional, default "stripefs"
 *   connauth_file: /etc/stripefs/connauth   # required
 *   mgmt: {host: imaging-01, port: 8008}    # host required; port 1..65535, default 8008
 *   meta: {host: imaging-01, dir: /var/lib/stripefs/meta, sync: true,  # host, dir required
 *          map_size: 16G}                   # LMDB map size 64M..1T, default 16G
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
 *   mirror: {groups: [{primary: 101, secondary: 201}], default: false, same_host: false,
 *            stale_reads: false}
 *                                           # sfs_config_mirror.c
 *   pools: [{name: hdd, targets: [101, 201]}]   # sfs_config_pool.c
 *
 * Relative paths are taken relative to the config file's directory and every
 * path is cleaned lexically ("a/./b/../c" is "a/c"), so dirs compare equal
 * when they name the same place. Without `hosts:` the host list is made of
 * the hosts that the roles name; with it, every role's host must be listed.
 */
#define SFS_LOG_FAC "config"
#include "sfs_config_internal.h"
#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SFS_CONFIG_SECOND_DOC "a second YAML document; a config has exactly one"

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
    /* a synchronous copy of the store on another host (docs/metadata.md) */
    {.name = "mirror",
     .type = SFS_CONFIG_TYPE_HOSTNAME,
     SFS_CONFIG_FIELD(sfs_config_t, meta_mirror_host),
     .line = SFS_CONFIG_LINE_META_MIRROR},
    {.name = "mirror_dir",
     .type = SFS_CONFIG_TYPE_PATH,
     SFS_CONFIG_FIELD(sfs_config_t, meta_mirror_dir),
     .line = SFS_CONFIG_LINE_META_MIRROR_DIR},
    /* address space LMDB maps, and so the most the store can hold: a full
     * store refuses creates with ENOSPC */
    {.name = "map_size",
     .type = SFS_CONFIG_TYPE_SIZE,
     SFS_CONFIG_FIELD(sfs_config_t, meta_map_size),
     .min = SFS_CONFIG_MIN_MAP_SIZE,
     .max = SFS_CONFIG_MAX_MAP_SIZE},
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
    {.name      = "mirror",
     .type      = SFS_CONFIG_TYPE_SECTION,
     .keys      = sfs_config_mirror_keys,
     .key_count = SFS_CONFIG_MIRROR_KEY_COUNT},
    {.name = "pools", .type = SFS_CONFIG_TYPE_LIST, .parse = sfs_config_parse_pools},
};

/* ------------------------------------------------------------------ */
/* Lists                                                               */

int sfs_config_add_host(sfs_config_ctx_t *ctx, const char *name, int line)
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

static int sfs_config_hosts_add(sfs_config_ctx_t *ctx, uint32_t index, int line, void **item_p)
{
    int rc = sfs_config_add_host(ctx, "", line);

    (void)index;
    if (rc == 0) {
        *item_p = &ctx->config->hosts[ctx->config->host_count - 1];
    }
    return rc;
}

static int sfs_config_parse_hosts(sfs_config_ctx_t *ctx, const char *path, void *object)
{
    static const sfs_config_list_t hosts = {
        .expected  = "a list of hosts",
        .item      = "a host like {name: imaging-01, ranks: 1}",
        .noun      = "hosts",
        .max       = SFS_CONFIG_MAX_HOSTS,
        .empty     = "leave `hosts:` out to use the roles' hosts",
        .keys      = sfs_config_host_keys,
        .key_count = SFS_ARRAY_SIZE(sfs_config_host_keys),
        .add       = sfs_config_hosts_add,
    };

    (void)object;
    ctx->hosts_given = 1;
    return sfs_config_parse_list(ctx, path, &hosts);
}

static int sfs_config_storage_add(sfs_config_ctx_t *ctx, uint32_t index, int line, void **item_p)
{
    sfs_config_t *config = ctx->config;
    int           rc;

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
    config->targets[index].line = line;
    *item_p                     = &config->targets[index];
    return 0;
}

/* The target counts once all its keys are read; the checks across targets
 * need the lines its keys were given at. */
static int sfs_config_storage_done(sfs_config_ctx_t *ctx, uint32_t index)
{
    ctx->target_lines[index].id   = ctx->lines[SFS_CONFIG_LINE_ITEM_ID];
    ctx->target_lines[index].host = ctx->lines[SFS_CONFIG_LINE_ITEM_HOST];
    ctx->target_lines[index].dir  = ctx->lines[SFS_CONFIG_LINE_ITEM_DIR];
    ctx->config->target_count     = index + 1;
    return 0;
}

static int sfs_config_parse_storage(sfs_config_ctx_t *ctx, const char *path, void *object)
{
    static const sfs_config_list_t storage = {
        .expected  = "a list of targets",
        .item      = "a target like {id: 101, host: imaging-01, dir: /data}",
        .noun      = "targets",
        .max       = SFS_CONFIG_MAX_TARGETS,
        .empty     = "at least one target is needed",
        .keys      = sfs_config_target_keys,
        .key_count = SFS_ARRAY_SIZE(sfs_config_target_keys),
        .add       = sfs_config_storage_add,
        .done      = sfs_config_storage_done,
    };

    (void)object;
    return sfs_config_parse_list(ctx, path, &storage);
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

/* ------------------------------------------------------------------ */
/* Creating, parsing, loading                                          */

int sfs_config_alloc(sfs_config_t **config_p)
{
    sfs_config_t *config;

    if (SFS_ALLOC_PTR(config) == NULL) {
        return sfs_error_set(-ENOMEM, "out of memory for a config");
    }
    snprintf(config->cluster_name, sizeof(config->cluster_name), "%s", SFS_CONFIG_DEFAULT_CLUSTER);
    config->mgmt_port             = SFS_CONFIG_DEFAULT_PORT;
    config->meta_sync             = 1;
    config->meta_map_size         = SFS_CONFIG_DEFAULT_MAP_SIZE;
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
    free(config->mirror_groups);
    sfs_config_pool_free(config);
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
        return sfs_config_fail(ctx, sfs_config_event_line(ctx), NULL, SFS_CONFIG_SECOND_DOC);
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

/* Read every event once, only to find syntax errors and a second document:
 * both are reported before anything they may have garbled or left out (the
 * first of two documents often lacks keys that the second holds). */
static int sfs_config_syntax_pass(sfs_config_ctx_t *ctx)
{
    int rc        = sfs_config_parser_start(ctx);
    int documents = 0;

    while (rc == 0) {
        rc = sfs_config_next(ctx);
        if (rc == 0 && ctx->event.type == YAML_STREAM_END_EVENT) {
            break;
        }
        if (rc == 0 && ctx->event.type == YAML_DOCUMENT_START_EVENT && ++documents == 2) {
            rc = sfs_config_fail(ctx, sfs_config_event_line(ctx), NULL, SFS_CONFIG_SECOND_DOC);
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
