/*
 * The UCX context of a worker: the UCX configuration stripefs wants (peer
 * failure detection on shared memory, a short keepalive, the transports a
 * client may use) and ucp_init.
 */
#define SFS_LOG_FAC "ucx"
#include "sfs_tp_internal.h"

#include "sfs_errno.h"
#include "sfs_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether UCX_TLS lets UCX use the transport `name` (a shared-memory
 * one): unset, "all", an exclusion list ("^tcp"), or a list naming it or
 * one of its aliases ("sm", "shm"). */
static int sfs_tp_tls_may_use(const char *name)
{
    const char *tls = sfs_tunable_env(&sfs_tp_tunables, "UCX_TLS");
    char        list[256], *save = NULL;

    if (!tls || !*tls || tls[0] == '^') {
        return 1;
    }
    snprintf(list, sizeof(list), "%s", tls);
    for (char *tl = strtok_r(list, ",", &save); tl; tl = strtok_r(NULL, ",", &save)) {
        if (strcmp(tl, "all") == 0 || strcmp(tl, "sm") == 0 || strcmp(tl, "shm") == 0 ||
            strcmp(tl, name) == 0) {
            return 1;
        }
    }
    return 0;
}

int sfs_tp_context_create(sfs_tp_worker_t *worker, const char *ucx_tls)
{
    ucp_params_t  ucp_params;
    ucp_config_t *config;
    ucs_status_t  status;
    int           restricted;

    /* Shared-memory transports support peer-failure detection only when
     * asked to; without it UCX drops them for error-handling endpoints and
     * same-host traffic falls back to TCP. A user's own setting wins; with
     * UCX_TLS leaving them out, setting it would only earn a warning. */
    restricted = ucx_tls && !sfs_tunable_is_set(&sfs_tp_tunables, "UCX_TLS");
    if (!restricted && sfs_tp_tls_may_use("posix")) {
        setenv("UCX_POSIX_ERROR_HANDLING", "y", 0);
    }
    if (!restricted && sfs_tp_tls_may_use("sysv")) {
        setenv("UCX_SYSV_ERROR_HANDLING", "y", 0);
    }
    /* notice a dead peer in seconds rather than UCX's default 20 s */
    setenv("UCX_KEEPALIVE_INTERVAL", "2s", 0);
    status = ucp_config_read(NULL, NULL, &config);
    if (status != UCS_OK) {
        return sfs_error_set(-EIO, "ucp_config_read failed: %s", ucs_status_string(status));
    }
    if (restricted) {
        status = ucp_config_modify(config, "TLS", ucx_tls);
        if (status != UCS_OK) {
            ucp_config_release(config);
            return sfs_error_set(-EINVAL, "UCX refused transports '%s': %s", ucx_tls,
                                 ucs_status_string(status));
        }
    }
    memset(&ucp_params, 0, sizeof(ucp_params));
    ucp_params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME;
    ucp_params.features   = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    ucp_params.name       = "stripefs";
    status                = ucp_init(&ucp_params, config, &worker->context);
    ucp_config_release(config);
    if (status != UCS_OK) {
        return sfs_error_set(-EIO, "ucp_init failed: %s", ucs_status_string(status));
    }
    return 0;
}
