/*
 * sfs_client_tunables: the environment knobs of the client library.
 *
 * Promise: the client reads the environment only through this table (via
 * common/sfs_tunable.h); `stripefs-ctl info` prints it. A malformed or
 * out-of-range value makes sfs_client_connect() fail with an error naming
 * the variable; it is never silently replaced by the default.
 */
#ifndef SFS_CLIENT_TUNABLES_H
#define SFS_CLIENT_TUNABLES_H

#include "sfs_tunable.h"

#include <stdbool.h>
#include <stdint.h>

extern const sfs_tunable_table_t sfs_client_tunables;

/* The client's knobs, read and checked once per connect. The strings point
 * into the environment (NULL when unset). */
typedef struct sfs_client_env {
    const char *config;         /* STRIPEFS_CONFIG */
    const char *mgmt;           /* STRIPEFS_MGMT */
    const char *connauth;       /* STRIPEFS_CONNAUTH */
    const char *munge_socket;   /* STRIPEFS_MUNGE_SOCKET (never NULL: it has a default) */
    uint32_t    service_uid;    /* STRIPEFS_SERVICE_UID */
    uint32_t    timeout_ms;     /* STRIPEFS_TIMEOUT; 0 when unset */
    uint64_t    max_request;    /* STRIPEFS_MAX_REQUEST */
    uint32_t    window;         /* STRIPEFS_WINDOW */
    bool        local_reads;    /* STRIPEFS_LOCAL_READ */
    bool        reply_cache;    /* STRIPEFS_REPLY_CACHE */
    bool        mirror_old_map; /* STRIPEFS_TEST_MIRROR_OLD_MAP */
} sfs_client_env_t;

/* Read every client tunable; -EINVAL with the error detail naming the
 * variable at the first bad one. */
int sfs_client_env_read(sfs_client_env_t *env);

#endif
