/*
 * Connecting to a service: where it is (parameters, environment, config
 * file), the shared secret, the transport worker and the cluster map.
 */
#define SFS_LOG_FAC "client"
#include "sfs_client_internal.h"
#include "sfs_client_tunables.h"

#include "sfs_alloc.h"
#include "sfs_config.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_munge.h"
#include "sfs_path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *sfs_client_error(void)
{
    return sfs_error_detail();
}

int sfs_path_canonical(const char *path, char *out, size_t out_size)
{
    SFS_ARG_CHECK(path && out, "path or out is NULL");
    SFS_ARG_CHECK(out_size > 0, "out_size is 0");
    return sfs_path_normalize(path, out, out_size);
}

int sfs_client_path(const char *path, char *out)
{
    return sfs_path_normalize(path, out, SFS_PATH_MAX);
}

/* Split "host:port" (or "[v6]:port"). */
static int sfs_client_parse_mgmt(const char *mgmt, char *host, size_t host_size, uint16_t *port_p)
{
    const char   *colon = strrchr(mgmt, ':');
    unsigned long port;
    char         *end;
    size_t        n;

    if (!colon || colon == mgmt) {
        return sfs_error_set(-EINVAL, "management address '%s' is not host:port", mgmt);
    }
    port = strtoul(colon + 1, &end, 10);
    if (*end || port == 0 || port > 65535) {
        return sfs_error_set(-EINVAL, "management address '%s' has a bad port", mgmt);
    }
    n = (size_t)(colon - mgmt);
    if (mgmt[0] == '[' && n >= 2 && mgmt[n - 1] == ']') {
        mgmt++;
        n -= 2;
    }
    if (n >= host_size) {
        return sfs_error_set(-ENAMETOOLONG, "management host name too long");
    }
    memcpy(host, mgmt, n);
    host[n] = '\0';
    *port_p = (uint16_t)port;
    return 0;
}

typedef struct sfs_client_where {
    char     host[SFS_HOST_MAX];
    uint16_t port;
    char     connauth[PATH_MAX]; /* "" in munge mode */
    uint32_t timeout_ms;         /* RPCs */
    uint32_t connect_timeout_ms; /* bootstrap and connection setup */
    char     timeout_source[64]; /* where connect_timeout_ms came from, for errors */
    int      munge;              /* prove our uid with MUNGE instead of holding the secret */
    char     munge_socket[PATH_MAX];
    uint32_t service_uid;
} sfs_client_where_t;

static int sfs_client_from_config(const char *path, sfs_client_where_t *where)
{
    sfs_config_t            *config;
    const sfs_config_host_t *host;
    int                      rc = sfs_config_load(path, &config);

    if (rc) {
        return rc;
    }
    host = sfs_config_find_host(config, config->mgmt_host);
    snprintf(where->host, sizeof(where->host), "%s",
             host && host->address[0] ? host->address : config->mgmt_host);
    where->port = config->mgmt_port;
    /* in munge mode users hold no secret: only an explicit connauth file
     * (STRIPEFS_CONNAUTH, a hint) makes this a server-class client */
    where->munge       = config->munge && !where->connauth[0];
    where->service_uid = config->service_uid;
    snprintf(where->munge_socket, sizeof(where->munge_socket), "%s", config->munge_socket);
    if (!where->connauth[0] && !where->munge) {
        snprintf(where->connauth, sizeof(where->connauth), "%s", config->connauth_file);
    }
    if (!where->timeout_ms) {
        where->timeout_ms = config->rpc_timeout_ms;
    }
    if (!where->connect_timeout_ms && config->connect_timeout_ms) {
        where->connect_timeout_ms = config->connect_timeout_ms;
        snprintf(where->timeout_source, sizeof(where->timeout_source),
                 "the config's timeouts: {connect}");
    }
    sfs_config_destroy(config);
    return 0;
}

static int sfs_client_locate(const sfs_client_params_t *params, const sfs_client_env_t *env,
                             sfs_client_where_t *where)
{
    const char *config   = SFS_PARAM_VALUE(params, config_path, SFS_CLIENT_PARAM_CONFIG, NULL);
    const char *mgmt     = SFS_PARAM_VALUE(params, mgmt, SFS_CLIENT_PARAM_MGMT, NULL);
    const char *connauth = SFS_PARAM_VALUE(params, connauth_file, SFS_CLIENT_PARAM_CONNAUTH, NULL);
    static const char *const defaults[]    = {"/etc/stripefs/stripefs.yaml",
                                              "./stripefs-state/stripefs.yaml"};
    int                      mgmt_from_env = 0;

    memset(where, 0, sizeof(*where));
    /* one timeout for both, the caller's first, then STRIPEFS_TIMEOUT; else
     * the config's two (or the defaults) */
    where->timeout_ms = SFS_PARAM_VALUE(params, timeout_ms, SFS_CLIENT_PARAM_TIMEOUT, 0);
    if (where->timeout_ms) {
        snprintf(where->timeout_source, sizeof(where->timeout_source), "the caller's timeout");
    } else if (env->timeout_ms) {
        where->timeout_ms = env->timeout_ms;
        snprintf(where->timeout_source, sizeof(where->timeout_source), "STRIPEFS_TIMEOUT");
    }
    where->connect_timeout_ms = where->timeout_ms;
    if (!config && !mgmt) {
        config        = env->config;
        mgmt          = env->mgmt;
        mgmt_from_env = mgmt != NULL;
    }
    if (!connauth) {
        connauth = env->connauth;
    }
    if (connauth) {
        snprintf(where->connauth, sizeof(where->connauth), "%s", connauth);
    }
    if (mgmt) {
        int rc = sfs_client_parse_mgmt(mgmt, where->host, sizeof(where->host), &where->port);

        if (rc) {
            if (mgmt_from_env) {
                char detail[SFS_ERROR_DETAIL_MAX];

                snprintf(detail, sizeof(detail), "%s", sfs_error_detail());
                sfs_error_set(rc, "STRIPEFS_MGMT=%s: %s", mgmt, detail);
            }
            return rc;
        }
        if (!where->connauth[0]) {
            /* no secret: a user, proven by the site's munged; the servers
             * run as root unless STRIPEFS_SERVICE_UID says otherwise */
            where->munge = 1;
            snprintf(where->munge_socket, sizeof(where->munge_socket), "%s", env->munge_socket);
            where->service_uid = env->service_uid;
        }
        return 0;
    }
    if (config) {
        return sfs_client_from_config(config, where);
    }
    for (size_t i = 0; i < SFS_ARRAY_SIZE(defaults); i++) {
        if (access(defaults[i], R_OK) == 0) {
            return sfs_client_from_config(defaults[i], where);
        }
    }
    return sfs_error_set(-EHOSTUNREACH,
                         "no stripefs service configured: set STRIPEFS_CONFIG=/path/cluster.yaml, "
                         "or STRIPEFS_MGMT=host:port (a MUNGE client; with STRIPEFS_CONNAUTH=FILE "
                         "a holder of the servers' secret)");
}

/* A connect that ran out of time says how long it waited and why that long. */
static void sfs_client_connect_error(int rc, const sfs_client_where_t *where)
{
    char detail[SFS_ERROR_DETAIL_MAX];

    if (rc != -ETIMEDOUT) {
        return;
    }
    snprintf(detail, sizeof(detail), "%s", sfs_error_detail());
    sfs_error_set(rc, "%s (connect timeout %u.%03u s, from %s)", detail,
                  where->connect_timeout_ms / 1000, where->connect_timeout_ms % 1000,
                  where->timeout_source);
}

int sfs_client_connect(const sfs_client_params_t *params, sfs_client_t **client_p)
{
    sfs_tp_worker_params_t wparams;
    sfs_cluster_params_t   cparams;
    sfs_client_where_t     where;
    sfs_client_env_t       env;
    sfs_client_t          *client;
    int                    rc;

    sfs_error_clear();
    SFS_ARG_CHECK(client_p, "client_p is NULL");
    if (params) {
        SFS_ARG_CHECK(!(params->field_mask & ~(uint64_t)SFS_CLIENT_PARAM_KNOWN),
                      "params->field_mask has unknown bits");
        SFS_ARG_CHECK(!(params->field_mask & SFS_CLIENT_PARAM_CONFIG) || params->config_path,
                      "SFS_CLIENT_PARAM_CONFIG with config_path NULL");
        SFS_ARG_CHECK(!(params->field_mask & SFS_CLIENT_PARAM_MGMT) || params->mgmt,
                      "SFS_CLIENT_PARAM_MGMT with mgmt NULL");
        SFS_ARG_CHECK(!(params->field_mask & SFS_CLIENT_PARAM_CONNAUTH) || params->connauth_file,
                      "SFS_CLIENT_PARAM_CONNAUTH with connauth_file NULL");
        SFS_ARG_CHECK(!(params->field_mask & SFS_CLIENT_PARAM_PROGRAM) || params->program,
                      "SFS_CLIENT_PARAM_PROGRAM with program NULL");
        SFS_ARG_CHECK(!(params->field_mask & SFS_CLIENT_PARAM_TIMEOUT) || params->timeout_ms,
                      "SFS_CLIENT_PARAM_TIMEOUT with timeout_ms 0");
    }
    rc = sfs_client_env_read(&env);
    if (rc == 0) {
        rc = sfs_client_locate(params, &env, &where);
    }
    if (rc) {
        return rc;
    }
    if (!where.connect_timeout_ms) {
        where.connect_timeout_ms = SFS_CLIENT_DEFAULT_CONNECT_MS;
        snprintf(where.timeout_source, sizeof(where.timeout_source), "the default");
    }
    if (!SFS_ALLOC_PTR(client)) {
        return -ENOMEM;
    }
    client->refs               = 1;
    client->pid                = getpid();
    client->timeout_ms         = where.timeout_ms ? where.timeout_ms : SFS_CLIENT_DEFAULT_RPC_MS;
    client->connect_timeout_ms = where.connect_timeout_ms;
    client->uid                = (uint32_t)geteuid();
    client->gid                = (uint32_t)getegid();
    client->max_request        = env.max_request;
    client->window             = env.window;
    client->local_reads        = env.local_reads;
    client->reply_cache        = env.reply_cache;
    client->mirror_old_map     = env.mirror_old_map;
    memset(&wparams, 0, sizeof(wparams));
    wparams.field_mask = SFS_TP_WORKER_PARAM_PEER_KIND | SFS_TP_WORKER_PARAM_RPC_TIMEOUT |
                         SFS_TP_WORKER_PARAM_NAME | SFS_TP_WORKER_PARAM_MAX_PAYLOAD |
                         SFS_TP_WORKER_PARAM_UCX_LOG_LEVEL;
    wparams.ucx_log_level = "fatal"; /* UCX's messages are not for our user: our errors say it */
    if (where.munge) {
        wparams.field_mask |= SFS_TP_WORKER_PARAM_MUNGE;
        wparams.munge_client = 1;
        wparams.munge_socket = where.munge_socket;
        wparams.service_uid  = where.service_uid;
        if (geteuid() != where.service_uid) {
            /* UCX's shared-memory segments and CMA are the servers' own
             * (POSIX 0600, SysV 0660 of their group; CMA needs ptrace rights): a process of another
             * user cannot attach them, so it reaches same-host servers over TCP; large reads and
             * writes still skip it (the servers' direct copies, pulls and handed-over files work
             * across users) */
            wparams.field_mask |= SFS_TP_WORKER_PARAM_UCX_TLS;
            wparams.ucx_tls = "^posix,sysv,cma";
        }
    } else {
        rc = sfs_auth_load_connauth(where.connauth, &client->key);
        if (rc) {
            goto err_free;
        }
        wparams.field_mask |= SFS_TP_WORKER_PARAM_KEY;
        wparams.key = &client->key;
    }
    wparams.peer_kind = (params && (params->field_mask & SFS_CLIENT_PARAM_ADMIN)) ? SFS_PEER_ADMIN
                                                                                  : SFS_PEER_CLIENT;
    wparams.rpc_timeout_ms = client->timeout_ms;
    wparams.name = SFS_PARAM_VALUE(params, program, SFS_CLIENT_PARAM_PROGRAM, "stripefs-client");
    wparams.max_payload = client->max_request > (64u << 20) ? client->max_request : (64u << 20);
    rc                  = sfs_tp_worker_create(&wparams, &client->worker);
    if (rc) {
        goto err_free;
    }
    memset(&cparams, 0, sizeof(cparams));
    cparams.field_mask = SFS_CLUSTER_PARAM_MGMT_HOST | SFS_CLUSTER_PARAM_TIMEOUT |
                         (client->mirror_old_map ? SFS_CLUSTER_PARAM_TEST_IGNORE_OFFLINE : 0);
    cparams.worker             = client->worker;
    cparams.mgmt_host          = where.host;
    cparams.mgmt_port          = where.port;
    cparams.connect_timeout_ms = client->connect_timeout_ms;
    rc                         = sfs_cluster_connect(&cparams, &client->cluster);
    if (rc) {
        sfs_client_connect_error(rc, &where);
        goto err_worker;
    }
    *client_p = client;
    return 0;

err_worker : {
    char detail[SFS_ERROR_DETAIL_MAX];

    snprintf(detail, sizeof(detail), "%s", sfs_error_detail());
    sfs_tp_worker_destroy(client->worker);
    sfs_error_set(rc, "%s", detail);
}
err_free:
    free(client);
    return rc;
}

void sfs_client_get(sfs_client_t *client)
{
    __atomic_add_fetch(&client->refs, 1, __ATOMIC_RELAXED);
}

void sfs_client_put(sfs_client_t *client)
{
    if (__atomic_sub_fetch(&client->refs, 1, __ATOMIC_ACQ_REL) != 0) {
        return;
    }
    if (client->pid != getpid()) {
        /* a forked child's copy: the connections are the parent's, and
         * tearing them down here would close them under it */
        return;
    }
    sfs_client_detached_reap(client, 1); /* the last ENDs reach the server */
    sfs_cluster_destroy(client->cluster);
    sfs_tp_worker_destroy(client->worker);
    free(client);
}

void sfs_client_disconnect(sfs_client_t *client)
{
    uint64_t files;

    if (!client) {
        return;
    }
    files = __atomic_load_n(&client->refs, __ATOMIC_RELAXED) - 1;
    if (files) {
        sfs_debug("disconnect with %lu files still open: the last close ends the connections",
                  (unsigned long)files);
    }
    sfs_client_put(client);
}
