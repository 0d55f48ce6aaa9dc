#include "sfs_roles.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_proto.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void sfs_role_plan_destroy(sfs_role_plan_t *plan)
{
    if (!plan) {
        return;
    }
    for (uint32_t r = 0; r < plan->rank_count; r++) {
        free(plan->ranks[r].targets);
    }
    free(plan->ranks);
    free(plan);
}

/* "localhost" in a config means the host this job runs on (one-host use). */
static int sfs_role_host_matches(const char *config_name, const char *hostname)
{
    char self[256];

    if (sfs_config_host_matches(config_name, hostname)) {
        return 1;
    }
    if (strcmp(config_name, "localhost") != 0 || gethostname(self, sizeof(self)) != 0) {
        return 0;
    }
    self[sizeof(self) - 1] = '\0';
    return sfs_config_host_matches(self, hostname);
}

static int sfs_role_find_host(const sfs_config_t *config, const char *name)
{
    for (uint32_t h = 0; h < config->host_count; h++) {
        if (sfs_role_host_matches(config->hosts[h].name, name)) {
            return (int)h;
        }
    }
    return -1;
}

int sfs_role_plan_create(const sfs_config_t *config, const char *const *hostnames,
                         uint32_t rank_count, sfs_role_plan_t **plan_p)
{
    const char      *cfg = config->path[0] ? config->path : "the config";
    sfs_role_plan_t *plan;
    uint32_t        *local_count = NULL;
    uint32_t         expected    = 0;
    int              rc          = -EINVAL;
    int              mgmt_host, meta_host, mirror_host;

    if (!SFS_ALLOC_PTR(plan) || !SFS_ALLOC_ARRAY(plan->ranks, rank_count) ||
        !SFS_ALLOC_ARRAY(local_count, config->host_count)) {
        rc = -ENOMEM;
        goto err;
    }
    plan->rank_count = rank_count;
    for (uint32_t h = 0; h < config->host_count; h++) {
        expected += config->hosts[h].ranks;
    }
    /* every rank must run on a host the config names */
    for (uint32_t r = 0; r < rank_count; r++) {
        int h = sfs_role_find_host(config, hostnames[r]);

        if (h < 0) {
            sfs_error_set(
                -EINVAL, "rank %u runs on host '%s', which %s does not name (hosts there: %s%s)", r,
                hostnames[r], cfg, config->hosts[0].name, config->host_count > 1 ? ", ..." : "");
            goto err;
        }
        plan->ranks[r].host_index = (uint32_t)h;
        local_count[h]++;
    }
    for (uint32_t h = 0; h < config->host_count; h++) {
        if (local_count[h] != config->hosts[h].ranks) {
            sfs_error_set(-EINVAL,
                          "host '%s': %s expects %u server rank%s there, the job started %u "
                          "(the job has %u ranks, the config %u in all; check -np and --host)",
                          config->hosts[h].name, cfg, config->hosts[h].ranks,
                          config->hosts[h].ranks == 1 ? "" : "s", local_count[h], rank_count,
                          expected);
            goto err;
        }
    }
    plan->meta_mirror_rank = UINT32_MAX;
    mgmt_host              = sfs_role_find_host(config, config->mgmt_host);
    meta_host              = sfs_role_find_host(config, config->meta_host);
    mirror_host =
        config->meta_mirror_host[0] ? sfs_role_find_host(config, config->meta_mirror_host) : -1;
    if (config->meta_mirror_host[0] && mirror_host < 0) {
        sfs_error_set(-EINVAL, "%s: the metadata mirror's host is not among the hosts", cfg);
        goto err;
    }
    if (mgmt_host < 0 || meta_host < 0) {
        sfs_error_set(-EINVAL, "%s: the management or metadata host is not among the hosts", cfg);
        goto err;
    }
    /* deal the roles of each host to its ranks */
    for (uint32_t h = 0; h < config->host_count; h++) {
        uint32_t locals[64];
        uint32_t k = 0, first_storage, next = 0;
        int      has_service = ((int)h == mgmt_host) || ((int)h == meta_host);

        for (uint32_t r = 0; r < rank_count && k < 64; r++) {
            if (plan->ranks[r].host_index == h) {
                locals[k++] = r;
            }
        }
        if (k == 0) {
            continue;
        }
        if ((int)h == mgmt_host) {
            plan->ranks[locals[0]].roles |= SFS_ROLE_MGMT;
            plan->mgmt_rank = locals[0];
        }
        if ((int)h == meta_host) {
            plan->ranks[locals[0]].roles |= SFS_ROLE_META;
            plan->meta_rank = locals[0];
        }
        if ((int)h == mirror_host) {
            uint32_t mirror = (int)h == meta_host ? 1 : 0; /* never the metadata server */

            if (mirror >= k) {
                sfs_error_set(-EINVAL,
                              "host '%s' keeps the metadata mirror (meta.mirror) beside the "
                              "metadata server: it needs a second rank (ranks: 2 there)",
                              config->hosts[h].name);
                goto err;
            }
            plan->ranks[locals[mirror]].roles |= SFS_ROLE_META_MIRROR;
            plan->meta_mirror_rank = locals[mirror];
        }
        first_storage = (has_service && k > 1) ? 1 : 0;
        for (uint32_t t = 0; t < config->target_count; t++) {
            sfs_rank_roles_t *rr;
            uint32_t         *grown;

            if (!sfs_config_host_matches(config->hosts[h].name, config->targets[t].host) &&
                strcmp(config->hosts[h].name, config->targets[t].host) != 0) {
                continue;
            }
            rr    = &plan->ranks[locals[first_storage + next % (k - first_storage)]];
            grown = realloc(rr->targets, (rr->target_count + 1) * sizeof(*grown));
            if (!grown) {
                rc = -ENOMEM;
                goto err;
            }
            rr->targets                     = grown;
            rr->targets[rr->target_count++] = t;
            rr->roles |= SFS_ROLE_STORAGE;
            next++;
        }
    }
    free(local_count);
    *plan_p = plan;
    return 0;

err:
    free(local_count);
    sfs_role_plan_destroy(plan);
    return rc;
}
