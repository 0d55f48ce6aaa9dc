/*
 * What every rank of the job learns before serving, over MPI: rank 0 reads
 * the config and every rank parses the same text (so they cannot disagree),
 * the service's own munged is started once, and every rank's host name is
 * gathered to check the job against the config.
 */
#define SFS_LOG_FAC "server"
#include "sfs_server.h"

#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_munged.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sfs_server_share_config(sfs_server_t *server)
{
    char      name[PATH_MAX];
    char     *text   = NULL;
    long long length = 0;
    int       rc;

    if (server->rank == 0) {
        server->pending_config[0] = '\0';
        rc = sfs_server_config_text(&server->args, server->size, name, sizeof(name), &text,
                                    (size_t *)&length, &server->state_lock, server->pending_config,
                                    sizeof(server->pending_config));
        if (rc) {
            fprintf(stderr, "stripefs-server: %s\n", sfs_error_detail());
            length = -1;
        }
    }
    MPI_Bcast(&length, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (length < 0) {
        return 1;
    }
    MPI_Bcast(name, sizeof(name), MPI_CHAR, 0, MPI_COMM_WORLD);
    if (server->rank != 0) {
        text = malloc((size_t)length + 1);
    }
    MPI_Bcast(text, (int)length, MPI_CHAR, 0, MPI_COMM_WORLD);
    rc = sfs_config_parse(text, (size_t)length, name, &server->config);
    free(text);
    if (rc) {
        if (server->rank == 0) {
            fprintf(stderr, "stripefs-server: %s\n", sfs_error_detail());
        }
        return 1;
    }
    snprintf(server->config->path, sizeof(server->config->path), "%s", name);
    return 0;
}

/* A munged of the service's own (one host): before any rank needs it. A
 * rejoining rank uses the one its service started. */
int sfs_server_start_munged(sfs_server_t *server)
{
    const sfs_config_t *config  = server->config;
    int                 started = 0;

    if (!config->munge || !config->munged_key[0] || sfs_server_attaches(&server->args)) {
        return 0;
    }
    if (server->rank == 0) {
        started = sfs_munged_start(config, &server->munged_pid) == 0 ? 1 : -1;
        if (started < 0) {
            fprintf(stderr, "stripefs-server: %s\n", sfs_error_detail());
        }
    }
    MPI_Bcast(&started, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return started < 0;
}

int sfs_server_gather_hosts(sfs_server_t *server)
{
    if (server->args.one_host) {
        /* one host: as many ranks as started */
        server->config->hosts[0].ranks = (uint32_t)server->size;
    }
    server->hosts   = calloc((size_t)server->size, SFS_HOST_MAX);
    server->host_of = calloc((size_t)server->size, sizeof(*server->host_of));
    if (!server->hosts || !server->host_of) {
        return 1;
    }
    MPI_Allgather(server->host, SFS_HOST_MAX, MPI_CHAR, server->hosts, SFS_HOST_MAX, MPI_CHAR,
                  MPI_COMM_WORLD);
    for (int r = 0; r < server->size; r++) {
        server->host_of[r] = server->hosts + (size_t)r * SFS_HOST_MAX;
    }
    return 0;
}
