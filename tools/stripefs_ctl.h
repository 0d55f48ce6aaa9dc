/*
 * stripefs-ctl's parts: each tools/stripefs_ctl_*.c holds one family of
 * verbs; stripefs_ctl.c has the verb table, the shared helpers and main.
 * A verb gets its own argv (argv[0] is the verb) and returns the exit
 * status: 0, 1 when the operation failed, EXIT_USAGE for a usage error.
 */
#ifndef SFS_STRIPEFS_CTL_H
#define SFS_STRIPEFS_CTL_H

#include "sfs/sfs_client.h"

#include <stddef.h>
#include <stdint.h>

#define EXIT_USAGE 2

typedef struct ctl {
    sfs_client_params_t params;
    sfs_client_t       *client;
    const char         *prog;
} ctl_t;

/* Print "stripefs-ctl VERB: <the client's error>"; returns 1. */
int ctl_fail(const char *verb, int rc);
/* A failure on one path: the server's words when they name the path, else
 * the path and the errno; returns 1. */
int         ctl_fail_path(const char *verb, const char *path, int rc);
const char *ctl_size(uint64_t bytes, char *buf, size_t buflen);
int         ctl_wants_help(int argc, char **argv);
/* Connect now, for verbs that check their arguments first; 0 or 1. */
int ctl_connect(ctl_t *ctl);
/* A size argument; -1 (after saying so) when it is not one. */
int ctl_parse_size_arg(const char *verb, const char *text, uint64_t *out);
/* A verb that takes no operands: EXIT_USAGE (after saying so) if argv has any. */
int ctl_no_operands(int argc, char **argv, const char *synopsis);

/* stripefs_ctl_cluster.c */
int ctl_listnodes(ctl_t *ctl, int argc, char **argv);
int ctl_listtargets(ctl_t *ctl, int argc, char **argv);
int ctl_df(ctl_t *ctl, int argc, char **argv);
int ctl_check_servers(ctl_t *ctl, int argc, char **argv);
int ctl_net(ctl_t *ctl, int argc, char **argv);
int ctl_shutdown(ctl_t *ctl, int argc, char **argv);
/* stripefs_ctl_ns.c */
int ctl_setpattern(ctl_t *ctl, int argc, char **argv);
int ctl_getentryinfo(ctl_t *ctl, int argc, char **argv);
int ctl_mkdir(ctl_t *ctl, int argc, char **argv);
int ctl_chmod(ctl_t *ctl, int argc, char **argv);
int ctl_chown(ctl_t *ctl, int argc, char **argv);
int ctl_rm(ctl_t *ctl, int argc, char **argv);
int ctl_mv(ctl_t *ctl, int argc, char **argv);
/* stripefs_ctl_ls.c */
int ctl_ls(ctl_t *ctl, int argc, char **argv);
int ctl_stat(ctl_t *ctl, int argc, char **argv);
/* stripefs_ctl_files.c */
int ctl_put(ctl_t *ctl, int argc, char **argv);
int ctl_get(ctl_t *ctl, int argc, char **argv);
int ctl_mkconnauth(ctl_t *ctl, int argc, char **argv);
int ctl_genconfig(ctl_t *ctl, int argc, char **argv);
int ctl_hosts_of(ctl_t *ctl, int argc, char **argv);
/* stripefs_ctl_mirror.c */
int ctl_mirror(ctl_t *ctl, int argc, char **argv);
/* stripefs_ctl_quota.c */
int ctl_quota(ctl_t *ctl, int argc, char **argv);
/* stripefs_ctl_pool.c */
int ctl_pool(ctl_t *ctl, int argc, char **argv);
/* df's lines per storage pool (nothing from a server without pools). */
void ctl_pool_df(ctl_t *ctl);
/* stripefs_ctl_stats.c */
int ctl_stats(ctl_t *ctl, int argc, char **argv);
/* stripefs_ctl_migrate.c: drain a target (docs/migration.md) */
int                                   ctl_migrate(ctl_t *ctl, int argc, char **argv);
extern const struct sfs_tunable_table ctl_migrate_tunables;
/* stripefs_ctl_info.c */
int ctl_info(ctl_t *ctl, int argc, char **argv);

#endif
