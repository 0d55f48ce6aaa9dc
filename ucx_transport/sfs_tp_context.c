/*
 * The UCX context of a worker: the UCX configuration stripefs wants (peer
 * failure detection on shared memory, a short keepalive, the transports a
 * client may use, UCX's log level in a client) and ucp_init.
 *
 * Our settings go into the configuration we read (ucp_config_read) with
 * ucp_config_modify, never into the environment: the application's own
 * UCX (its MPI) and its children see only what the user set. A UCX variable
 * the user did set wins (sfs_tp_tunables lists those we look at).
 */
#define SFS_LOG_FAC "ucx"
#include "sfs_tp_internal.h"

#include "sfs_errno.h"
#include "sfs_log.h"

#include <stdio.h>
#include <string.h>

/* Whether UCX_TLS lets UCX use the shared-memory transport `name`: unset,
 * "all", a list naming it or an alias of it ("sm", "shm", "mm"), or an
 * exclusion list ("^tcp") that names neither. */
static int sfs_tp_tls_may_use(const char *name)
{
    const char *tls = sfs_tunable_env(&sfs_tp_tunables, "UCX_TLS");
    char        list[256], *save = NULL;
    int         exclude, named   = 0;

    if (!tls) {
        return 1;
    }
    exclude = tls[0] == '^';
    snprintf(list, sizeof(list), "%s", tls + exclude);
    for (char *tl = strtok_r(list, ",", &save); tl; tl = strtok_r(NULL, ",", &save)) {
        if ((!exclude && strcmp(tl, "all") == 0) || strcmp(tl, "sm") == 0 ||
            strcmp(tl, "shm") == 0 || strcmp(tl, "mm") == 0 || strcmp(tl, name) == 0) {
            named = 1;
        }
    }
    return exclude ? !named : named;
}

static int sfs_tp_user_set(const char *name)
{
    return sfs_tunable_is_set(&sfs_tp_tunables, name);
}

static int sfs_tp_config_set(ucp_config_t *config, const char *key, const char *value)
{
    ucs_status_t status = ucp_config_modify(config, key, value);

    if (status != UCS_OK) {
        return sfs_error_set(-EINVAL, "UCX refused its setting %s=%s: %s", key, value,
                             ucs_status_string(status));
    }
    sfs_debug("UCX configuration: %s=%s", key, value);
    return 0;
}

/* Our changes to the configuration UCX read from the environment. */
static int sfs_tp_config_adjust(ucp_config_t *config, const char *ucx_tls,
                                const char *ucx_log_level)
{
    int restricted = ucx_tls && !sfs_tp_user_set("UCX_TLS");
    int rc;

    if (restricted) {
        rc = sfs_tp_config_set(config, "TLS", ucx_tls);
        if (rc) {
            return rc;
        }
    }
    /* Shared-memory transports support peer-failure detection only when
     * asked to; without it UCX drops them for error-handling endpoints and
     * same-host traffic falls back to TCP. One key covers posix and sysv
     * (their common "MM_" table); a user who set either decides for both.
     * Where UCX_TLS leaves both out, setting it would only earn a warning
     * ("invalid configuration"). */
    if (!restricted && (sfs_tp_tls_may_use("posix") || sfs_tp_tls_may_use("sysv")) &&
        !sfs_tp_user_set("UCX_POSIX_ERROR_HANDLING") &&
        !sfs_tp_user_set("UCX_SYSV_ERROR_HANDLING")) {
        rc = sfs_tp_config_set(config, "MM_ERROR_HANDLING", "y");
        if (rc) {
            return rc;
        }
    }
    /* notice a dead peer in seconds rather than UCX's default 20 s */
    if (!sfs_tp_user_set("UCX_KEEPALIVE_INTERVAL")) {
        rc = sfs_tp_config_set(config, "KEEPALIVE_INTERVAL", "2s");
        if (rc) {
            return rc;
        }
    }
    /* (UCX's log level is its global one: this sets it for the process) */
    if (ucx_log_level && !sfs_tp_user_set("UCX_LOG_LEVEL")) {
        rc = sfs_tp_config_set(config, "LOG_LEVEL", ucx_log_level);
        if (rc) {
            return rc;
        }
    }
    return 0;
}

int sfs_tp_context_create(sfs_tp_worker_t *worker, const char *ucx_tls, const char *ucx_log_level)
{
    ucp_params_t  ucp_params;
    ucp_config_t *config;
    ucs_status_t  status;
    int           rc;

    status = ucp_config_read(NULL, NULL, &config);
    if (status != UCS_OK) {
        return sfs_error_set(-EIO, "ucp_config_read failed: %s", ucs_status_string(status));
    }
    rc = sfs_tp_config_adjust(config, ucx_tls, ucx_log_level);
    if (rc) {
        ucp_config_release(config);
        return rc;
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
