/*
 * Writing a config as YAML (libyaml's emitter), so that loading it back
 * gives the same config: sizes and durations in their exact units, strings
 * quoted where YAML would read them as something else, the file replaced
 * atomically.
 */
#define SFS_LOG_FAC "config"
#include "sfs_config_internal.h"
#include "sfs_errno.h"
#include "sfs_log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Units                                                               */

/* Exact text for a size ("12T", "512K", "1000"), as the writer emits it. */
const char *sfs_config_size_text(uint64_t bytes, char *buf, size_t buflen)
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
const char *sfs_config_duration_text(uint32_t ms, char *buf, size_t buflen)
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

static int sfs_config_emit_mirror(yaml_emitter_t *emitter, const sfs_config_t *config)
{
    int rc = 0;

    if (config->mirror_group_count == 0 && !config->mirror_default && !config->mirror_same_host &&
        !config->mirror_stale_reads) {
        return 0;
    }
    SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_start(emitter, "mirror", 0));
    if (config->mirror_group_count) {
        SFS_CONFIG_STEP(rc, sfs_config_emit_list_start(emitter, "groups"));
    }
    for (uint32_t i = 0; i < config->mirror_group_count && rc == 0; i++) {
        SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_start(emitter, NULL, 1));
        SFS_CONFIG_STEP(
            rc, sfs_config_emit_number(emitter, "primary", config->mirror_groups[i].primary));
        SFS_CONFIG_STEP(
            rc, sfs_config_emit_number(emitter, "secondary", config->mirror_groups[i].secondary));
        SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_end(emitter));
    }
    if (config->mirror_group_count) {
        SFS_CONFIG_STEP(rc, sfs_config_emit_list_end(emitter));
    }
    SFS_CONFIG_STEP(
        rc, sfs_config_emit_text(emitter, "default", config->mirror_default ? "true" : "false"));
    SFS_CONFIG_STEP(rc, sfs_config_emit_text(emitter, "same_host",
                                             config->mirror_same_host ? "true" : "false"));
    if (config->mirror_stale_reads) {
        SFS_CONFIG_STEP(rc, sfs_config_emit_text(emitter, "stale_reads", "true"));
    }
    SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_end(emitter));
    return rc;
}

/* pools: - {name: hdd, targets: [101, 201]} */
static int sfs_config_emit_pools(yaml_emitter_t *emitter, const sfs_config_t *config)
{
    int rc = 0;

    if (config->pool_count == 0) {
        return 0;
    }
    SFS_CONFIG_STEP(rc, sfs_config_emit_list_start(emitter, "pools"));
    for (uint32_t i = 0; i < config->pool_count && rc == 0; i++) {
        const sfs_config_pool_t *pool = &config->pools[i];
        yaml_event_t             event;
        char                     id[16];

        SFS_CONFIG_STEP(rc, sfs_config_emit_mapping_start(emitter, NULL, 1));
        SFS_CONFIG_STEP(rc, sfs_config_emit_number(emitter, "id", pool->id));
        SFS_CONFIG_STEP(rc, SFS_CONFIG_EMIT_STRING(emitter, "name", pool->name));
        SFS_CONFIG_STEP(rc, sfs_config_emit_scalar(emitter, "targets", 0));
        if (rc == 0) {
            int ok = yaml_sequence_start_event_initialize(&event, NULL, NULL, 1,
                                                          YAML_FLOW_SEQUENCE_STYLE);

            rc = sfs_config_emit(emitter, &event, ok);
        }
        for (uint32_t t = 0; t < pool->target_count; t++) {
            snprintf(id, sizeof(id), "%" PRIu32, pool->targets[t]);
            SFS_CONFIG_STEP(rc, sfs_config_emit_scalar(emitter, id, 0));
        }
        SFS_CONFIG_STEP(rc, sfs_config_emit_list_end(emitter));
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
    if (config->meta_mirror_host[0]) {
        SFS_CONFIG_STEP(rc, SFS_CONFIG_EMIT_STRING(emitter, "mirror", config->meta_mirror_host));
        SFS_CONFIG_STEP(rc, SFS_CONFIG_EMIT_STRING(emitter, "mirror_dir", config->meta_mirror_dir));
    }
    SFS_CONFIG_STEP(
        rc, sfs_config_emit_text(emitter, "map_size",
                                 sfs_config_size_text(config->meta_map_size, text, sizeof(text))));
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
    SFS_CONFIG_STEP(rc, sfs_config_emit_mirror(emitter, config));
    SFS_CONFIG_STEP(rc, sfs_config_emit_pools(emitter, config));
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
    char        temp[PATH_MAX];
    size_t      done = 0;
    struct stat existing;
    int         fd, rc;

    /* Renaming over a device or a symlink would replace it (root writing
     * /dev/stdout made it a regular file): only regular files are replaced. */
    if (lstat(path, &existing) == 0 && !S_ISREG(existing.st_mode)) {
        rc = sfs_error_set(-EINVAL, "%s is not a regular file: a config is written only to one",
                           path);
        goto err;
    }
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
