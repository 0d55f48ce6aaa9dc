/*
 * Which server rank does what: the config names hosts and the roles and
 * targets on each; the MPI job tells where each rank runs. Ranks on one host
 * are taken in rank order: with one rank it has everything; with several,
 * the first has management and metadata (if that host has them) and the
 * targets are dealt round-robin to the others. The metadata mirror
 * (meta.mirror) is the first rank of its host that is not the metadata
 * server.
 *
 * Pure logic (no MPI), so it can be tested without a job.
 */
#ifndef SFS_ROLES_H
#define SFS_ROLES_H

#include "sfs_config.h"

#include <stdint.h>

typedef struct sfs_rank_roles {
    uint32_t  roles;      /* SFS_ROLE_* */
    uint32_t  host_index; /* into config->hosts */
    uint32_t  target_count;
    uint32_t *targets; /* indices into config->targets */
} sfs_rank_roles_t;

typedef struct sfs_role_plan {
    uint32_t rank_count;
    uint32_t mgmt_rank;
    uint32_t meta_rank;
    uint32_t meta_mirror_rank; /* UINT32_MAX: no metadata mirror */
    /* management comes back (--rejoin) while the rest of the service runs:
     * its metadata server may be a promoted mirror (sfs_mgmt_meta_primary_load) */
    int               mgmt_rejoining;
    sfs_rank_roles_t *ranks;
} sfs_role_plan_t;

/* Plan roles for a job of `rank_count` ranks whose host names are
 * `hostnames[rank]`. Refuses a job that does not match the config, with a
 * message (sfs_error_detail) that says which host or rank is wrong and how. */
int  sfs_role_plan_create(const sfs_config_t *config, const char *const *hostnames,
                          uint32_t rank_count, sfs_role_plan_t **plan_p);
void sfs_role_plan_destroy(sfs_role_plan_t *plan);

#endif
