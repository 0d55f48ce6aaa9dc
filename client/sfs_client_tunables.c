/* The client library's environment knobs (see sfs_client_tunables.h). */
#include "sfs_client_tunables.h"

#include "sfs_errno.h"
#include "sfs_munge.h"

#include <string.h>

#define SFS_CLIENT_MAX_REQUEST_TEXT "8M" /* bytes per storage RPC */
#define SFS_CLIENT_WINDOW_TEXT      "32" /* storage RPCs in flight per operation */

static const sfs_tunable_t sfs_client_tunable_entries[] = {
    {"STRIPEFS_CONFIG", SFS_TUNABLE_STRING, NULL, 0, 0,
     "cluster config file naming the service (else /etc/stripefs/stripefs.yaml, "
     "./stripefs-state/stripefs.yaml)",
     0},
    {"STRIPEFS_MGMT", SFS_TUNABLE_STRING, NULL, 0, 0,
     "management address host:port, instead of a config (a MUNGE client unless "
     "STRIPEFS_CONNAUTH is set)",
     0},
    {"STRIPEFS_CONNAUTH", SFS_TUNABLE_STRING, NULL, 0, 0,
     "connauth file: connect as a holder of the servers' shared secret", 0},
    {"STRIPEFS_MUNGE_SOCKET", SFS_TUNABLE_STRING, SFS_MUNGE_SOCKET_DEFAULT, 0, 0,
     "munged socket a STRIPEFS_MGMT client proves its uid with", 0},
    {"STRIPEFS_SERVICE_UID", SFS_TUNABLE_INT, "0", 0, 4294967294LL,
     "uid the servers run as (a STRIPEFS_MGMT client checks their MUNGE proof against it)", 0},
    {"STRIPEFS_TIMEOUT", SFS_TUNABLE_INT, NULL, 1, 86400,
     "seconds: RPC and connect timeout; overrides the config's timeouts: {rpc, connect}", 0},
    {"STRIPEFS_MAX_REQUEST", SFS_TUNABLE_SIZE, SFS_CLIENT_MAX_REQUEST_TEXT, 65536, 1LL << 30,
     "bytes of file data per storage request", 0},
    {"STRIPEFS_WINDOW", SFS_TUNABLE_INT, SFS_CLIENT_WINDOW_TEXT, 1, 4096,
     "storage requests in flight per read or write", 0},
    {"STRIPEFS_LOCAL_READ", SFS_TUNABLE_BOOL, "1", 0, 0,
     "read chunk files of same-host targets directly (0: always through the server)", 0},
    {"STRIPEFS_REPLY_CACHE", SFS_TUNABLE_BOOL, "1", 0, 0,
     "namespace changes carry an op_tag, so that one sent again after a metadata failover is "
     "answered from the reply the server kept (0: none, for measuring what keeping costs; a "
     "resent mkdir may then say EEXIST)",
     0},
    {"STRIPEFS_TEST_MIRROR_OLD_MAP", SFS_TUNABLE_BOOL, "0", 0, 0,
     "testing: act as a client whose map is older than every failover (mirrored files' requests "
     "go to the config's primaries, and a refusal is not sent again)",
     0},
};

const sfs_tunable_table_t sfs_client_tunables =
    SFS_TUNABLE_TABLE("client", sfs_client_tunable_entries);

int sfs_client_env_read(sfs_client_env_t *env)
{
    const sfs_tunable_table_t *t = &sfs_client_tunables;
    int64_t                    number;
    int                        rc;

    memset(env, 0, sizeof(*env));
    if ((rc = sfs_tunable_string(t, "STRIPEFS_CONFIG", &env->config)) != 0 ||
        (rc = sfs_tunable_string(t, "STRIPEFS_MGMT", &env->mgmt)) != 0 ||
        (rc = sfs_tunable_string(t, "STRIPEFS_CONNAUTH", &env->connauth)) != 0 ||
        (rc = sfs_tunable_string(t, "STRIPEFS_MUNGE_SOCKET", &env->munge_socket)) != 0) {
        return rc;
    }
    if ((rc = sfs_tunable_int(t, "STRIPEFS_SERVICE_UID", &number)) != 0) {
        return rc;
    }
    env->service_uid = (uint32_t)number;
    rc               = sfs_tunable_int(t, "STRIPEFS_TIMEOUT", &number);
    if (rc == 0) {
        env->timeout_ms = (uint32_t)(number * 1000);
    } else if (rc != -ENOENT) {
        return rc;
    }
    if ((rc = sfs_tunable_size(t, "STRIPEFS_MAX_REQUEST", &env->max_request)) != 0 ||
        (rc = sfs_tunable_int(t, "STRIPEFS_WINDOW", &number)) != 0) {
        return rc;
    }
    env->window = (uint32_t)number;
    if ((rc = sfs_tunable_bool(t, "STRIPEFS_REPLY_CACHE", &env->reply_cache)) != 0 ||
        (rc = sfs_tunable_bool(t, "STRIPEFS_TEST_MIRROR_OLD_MAP", &env->mirror_old_map)) != 0) {
        return rc;
    }
    return sfs_tunable_bool(t, "STRIPEFS_LOCAL_READ", &env->local_reads);
}
