/*
 * Configs made rather than read: `stripefs-ctl genconfig` (a list of hosts,
 * one target on each) and the one-host default for trying stripefs out.
 * Arguments are checked as the same keys would be in a file, and the
 * result goes through the same checks across keys.
 */
#define SFS_LOG_FAC "config"
#include "sfs_config_internal.h"
#include "sfs_errno.h"
#include "sfs_log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
    /* consecutive hosts' targets pair into mirror groups (101+201,
     * 301+401, ...; an odd last host's target is in none): used only by
     * the files asked to be mirrored (docs/mirroring.md) */
    for (uint32_t i = 0; i + 1 < host_count; i += 2) {
        sfs_config_mirror_group_t *group;

        rc = sfs_config_grow((void **)&config->mirror_groups, &ctx.mirror_alloc,
                             config->mirror_group_count + 1, sizeof(*config->mirror_groups));
        if (rc != 0) {
            goto err_destroy;
        }
        group            = &config->mirror_groups[config->mirror_group_count];
        group->id        = config->mirror_group_count + 1;
        group->primary   = config->targets[i].id;
        group->secondary = config->targets[i + 1].id;
        config->mirror_group_count++;
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
