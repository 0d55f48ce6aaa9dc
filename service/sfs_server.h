/*
 * Inside stripefs-server (service/sfs_server_*.c), for its files only: the
 * state main sets up and tears down, and the steps main runs in order.
 *
 *   sfs_server_main.c      main, serving as one rank of the full job, the loop
 *   sfs_server_args.c      the command line
 *   sfs_server_one_host.c  --one-host: the state dir, its config and connauth
 *   sfs_server_bcast.c     the config shared by every rank, munged, host names
 *   sfs_server_rejoin.c    --rejoin: a lost rank comes back
 *   sfs_server_join.c      --join: a new storage rank for new targets
 *   sfs_server_identity.c  the file system's id: a lost metadata store refused
 *
 * A step returns 0 to go on, or non-zero once it has said why the server
 * stops and set `exit_code`.
 */
#ifndef SFS_SERVER_H
#define SFS_SERVER_H

#include "sfs_dirlock.h"
#include "sfs_service.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct sfs_server_args {
    const char *config_path;
    int         one_host;
    const char *state_dir;
    uint32_t    targets;
    uint32_t    port;
    int         targets_given; /* --targets or --port was on the command line */
    int         port_given;
    const char *ready_file;
    const char *log_level;
    int         rejoin_rank; /* -1: part of the full job */
    int         join;        /* --join: a new rank of a running service */
} sfs_server_args_t;

typedef struct sfs_server {
    sfs_server_args_t args;
    int               rank, size; /* in MPI_COMM_WORLD */
    char              host[SFS_HOST_MAX];
    sfs_config_t     *config;
    char             *hosts;   /* every rank's host name, SFS_HOST_MAX bytes each */
    const char      **host_of; /* [rank] into hosts */
    sfs_role_plan_t  *plan;
    sfs_service_t    *service;
    pid_t             munged_pid; /* 0: none of our own */
    sfs_dirlock_t    *state_lock; /* rank 0 of --one-host: the state dir is ours */
    char              pending_config[PATH_MAX + 8]; /* rank 0: the config once ready ("" none) */
    int               lost_rank; /* a rank never reached the end: skip MPI_Finalize */
    int               exit_code;
} sfs_server_t;

/* sfs_server_args.c: parse the command line (rank 0 prints --help or the
 * error) and set the log level. */
int sfs_server_command_line(sfs_server_t *server, int argc, char **argv);

/* sfs_server_one_host.c: rank 0's config text for the job: the file of -c,
 * or for --one-host the state dir's, made on first start. `name` receives
 * the file's name; `pending` (set to "" by the caller) the name of a changed
 * config that replaces it once the service is ready (a new --port). */
int sfs_server_config_text(const sfs_server_args_t *args, int size, char *name, size_t name_size,
                           char **text_p, size_t *length_p, sfs_dirlock_t **state_lock_p,
                           char *pending, size_t pending_size);
/* Rank 0, once the service is ready: the pending config replaces the saved
 * one; at the end of a start that failed, it is removed. */
void sfs_server_save_pending_config(sfs_server_t *server);
void sfs_server_drop_pending_config(sfs_server_t *server);

/* sfs_server_bcast.c */
int sfs_server_share_config(sfs_server_t *server); /* rank 0 reads, everyone parses */
int sfs_server_start_munged(sfs_server_t *server); /* the service's own munged, if any */
int sfs_server_gather_hosts(sfs_server_t *server); /* every rank's host name */

/* Attaching to a running service (--rejoin, --join): a job of one rank that
 * takes no state-dir lock and starts no munged of its own. */
static inline int sfs_server_attaches(const sfs_server_args_t *args)
{
    return args->rejoin_rank >= 0 || args->join;
}

/* sfs_server_rejoin.c: serve as a rank that was lost, until stopped; and the
 * steps of any process that attaches: a worker connected to management,
 * the service of the planned roles (server->plan) registered as `rank`,
 * serving until stopped. */
void sfs_server_rejoin(sfs_server_t *server);
int  sfs_server_attach_connect(const sfs_config_t *config, sfs_tp_worker_t **worker_p,
                               sfs_cluster_t **cluster_p);
int  sfs_server_attach_start(sfs_server_t *server, uint32_t rank);
void sfs_server_attach_serve(sfs_server_t *server, uint32_t rank, const char *what);

/* sfs_server_identity.c, every rank of the full job: before its service is
 * created (read-only), a missing metadata store with targets holding data;
 * after, and before it registers, the store's file system id against every
 * target's. A start over a lost metadata store, or with another file
 * system's target, is refused; every rank learns it. */
int sfs_server_check_new_store(sfs_server_t *server);
int sfs_server_check_identity(sfs_server_t *server);

/* sfs_server_join.c: serve the config's targets of this host that the
 * running service does not have, as a new rank, until stopped. */
void sfs_server_join(sfs_server_t *server);

/* sfs_server_main.c, shared with the rejoin */
void sfs_server_catch_signals(sfs_service_t *service); /* SIGTERM/SIGINT stop it */
void sfs_server_release_signals(void);
void sfs_server_write_ready(const char *path, const sfs_config_t *config);
void sfs_server_loop(sfs_service_t *service); /* until asked to stop */

#endif
