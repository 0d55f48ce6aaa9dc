/*
 * The service's identity policy: what a MUNGE-proven uid becomes on this
 * file system. Root from a host that is not in security.trusted_hosts is
 * squashed to nobody (as NFS's root_squash); supplementary groups are
 * resolved here from the servers' user database (as NFS's manage-gids), since
 * MUNGE vouches only for the uid and the primary gid; root from a trusted
 * host and members of security.admin_group may run administrative operations.
 */
#ifndef SFS_IDENTITY_H
#define SFS_IDENTITY_H

#include "sfs_config.h"
#include "sfs_tp.h"

typedef struct sfs_identity sfs_identity_t;

/* Resolve the trusted hosts' addresses (and, for this host, the origin its
 * own munged puts in credentials) and the admin group. */
int  sfs_identity_create(const sfs_config_t *config, const char *this_host,
                         sfs_identity_t **identity_p);
void sfs_identity_destroy(sfs_identity_t *identity);

/* The transport's sfs_tp_identity_cb_t (arg: the sfs_identity_t). */
int sfs_identity_resolve(void *arg, const sfs_tp_proof_t *proof, sfs_cred_t *cred);

#endif
