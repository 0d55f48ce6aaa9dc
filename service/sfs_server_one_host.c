/*
 * Where the job's config text comes from: the file of -c, or for --one-host
 * the state dir's own config, which the first start makes (with its
 * connauth file) and later starts reuse, saving a new --port in it.
 */
#define SFS_LOG_FAC "server"
#include "sfs_server.h"

#include "sfs_errno.h"
#include "sfs_log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SFS_SERVER_TEXT_MAX (1u << 20)

static int sfs_server_read_file(const char *path, char **text_p, size_t *length_p)
{
    FILE  *file = fopen(path, "r");
    char  *text;
    size_t length;

    if (!file) {
        return sfs_error_set(-errno, "cannot open config %s: %m", path);
    }
    text = malloc(SFS_SERVER_TEXT_MAX);
    if (!text) {
        fclose(file);
        return -ENOMEM;
    }
    length = fread(text, 1, SFS_SERVER_TEXT_MAX, file);
    if (ferror(file) || length == SFS_SERVER_TEXT_MAX) {
        fclose(file);
        free(text);
        return sfs_error_set(-EINVAL, "config %s is unreadable or larger than %u bytes", path,
                             SFS_SERVER_TEXT_MAX);
    }
    fclose(file);
    *text_p   = text;
    *length_p = length;
    return 0;
}

/* --one-host on an existing state dir: its saved config wins, but an option
 * given on the command line must not be silently ignored. A new --port goes
 * into `pending` (the config with it), which replaces the saved config once
 * the service is ready (clients read the port from that file; a start that
 * is refused must leave it as it was); the target count is fixed by the data
 * already in the state dir, so a different --targets is refused. */
static int sfs_server_apply_one_host_options(const sfs_server_args_t *args, const char *path,
                                             char *pending, size_t pending_size)
{
    sfs_config_t *config;
    uint16_t      old_port;
    int           rc;

    if (!args->port_given && !args->targets_given) {
        return 0;
    }
    rc = sfs_config_load(path, &config);
    if (rc) {
        return rc;
    }
    if (args->targets_given && config->target_count != args->targets) {
        rc = sfs_error_set(-EINVAL,
                           "--targets %u: state dir %s already holds %u targets (see %s); "
                           "start without --targets or use a new --state dir",
                           args->targets, args->state_dir, config->target_count, path);
        goto out;
    }
    old_port = config->mgmt_port;
    if (args->port_given && old_port != args->port) {
        if (sfs_server_attaches(args)) {
            rc = sfs_error_set(-EINVAL,
                               "%s: the running service listens on port %u (%s), not on "
                               "--port %u",
                               args->join ? "--join" : "--rejoin", old_port, path, args->port);
            goto out;
        }
        config->mgmt_port = (uint16_t)args->port;
        snprintf(pending, pending_size, "%s.new", path);
        rc = sfs_config_write(config, pending);
        if (rc == 0) {
            sfs_info("management port %u, not %u as before: saved in %s once the service is "
                     "ready",
                     args->port, old_port, path);
        } else {
            pending[0] = '\0';
        }
    }
out:
    sfs_config_destroy(config);
    return rc;
}

/* Rank 0: the config text everyone parses. For --one-host, make the state
 * directory, its config and its connauth file on first start. */
int sfs_server_config_text(const sfs_server_args_t *args, int size, char *name, size_t name_size,
                           char **text_p, size_t *length_p, sfs_dirlock_t **state_lock_p,
                           char *pending, size_t pending_size)
{
    char          path[PATH_MAX];
    char          host[SFS_HOST_MAX];
    sfs_config_t *config;
    int           rc;

    if (args->config_path) {
        snprintf(name, name_size, "%s", args->config_path);
        return sfs_server_read_file(args->config_path, text_p, length_p);
    }
    /* users reach the config and the munge socket in it; the targets, the
     * metadata and the keys inside stay the service's own */
    if (mkdir(args->state_dir, 0755) != 0 && errno != EEXIST) {
        return sfs_error_set(-errno, "cannot create state dir %s: %m", args->state_dir);
    }
    /* a second service on a live state dir is refused before its config
     * (port), munged or anything else is touched; a --rejoin joins the
     * running service, whose rank 0 holds the claim */
    if (!sfs_server_attaches(args)) {
        rc = sfs_dirlock_acquire(args->state_dir, "state dir", state_lock_p);
        if (rc) {
            return rc;
        }
    }
    snprintf(path, sizeof(path), "%s/stripefs.yaml", args->state_dir);
    if (access(path, F_OK) != 0 && sfs_server_attaches(args)) {
        return sfs_error_set(-ENOENT,
                             "%s: %s does not exist (no service was started in "
                             "%s)",
                             args->join ? "--join" : "--rejoin", path, args->state_dir);
    }
    if (access(path, F_OK) != 0) {
        if (gethostname(host, sizeof(host)) != 0) {
            snprintf(host, sizeof(host), "localhost");
        }
        rc = sfs_config_one_host(args->state_dir, host, args->targets, (uint16_t)args->port,
                                 &config);
        if (rc) {
            return rc;
        }
        config->hosts[0].ranks = (uint32_t)size;
        rc                     = sfs_config_write(config, path);
        if (rc == 0 && access(config->connauth_file, F_OK) != 0) {
            rc = sfs_auth_make_connauth(config->connauth_file, SFS_CONNAUTH_DEFAULT_SIZE);
        }
        sfs_config_destroy(config);
        if (rc) {
            return rc;
        }
    } else {
        rc = sfs_server_apply_one_host_options(args, path, pending, pending_size);
        if (rc) {
            return rc;
        }
    }
    snprintf(name, name_size, "%s", path);
    return sfs_server_read_file(pending[0] ? pending : path, text_p, length_p);
}

void sfs_server_save_pending_config(sfs_server_t *server)
{
    const char *path = server->config->path;

    if (!server->pending_config[0]) {
        return;
    }
    if (rename(server->pending_config, path) != 0) {
        sfs_error("cannot save the new management port in %s (rename of %s): %m; clients "
                  "that read %s look for the old one",
                  path, server->pending_config, path);
    } else {
        sfs_info("management port %u saved in %s", server->config->mgmt_port, path);
    }
    server->pending_config[0] = '\0';
}

void sfs_server_drop_pending_config(sfs_server_t *server)
{
    if (server->pending_config[0]) {
        unlink(server->pending_config);
        server->pending_config[0] = '\0';
    }
}
