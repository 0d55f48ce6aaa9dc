/*
 * META_STATS for stripefs-ctl (sfs_proto_meta_stats.h): the metadata
 * server's timing of its requests per opcode. Not part of the public API.
 */
#ifndef SFS_ADMIN_STATS_H
#define SFS_ADMIN_STATS_H

#include "sfs/sfs_client.h"
#include "sfs_proto.h"
#include "sfs_proto_meta_stats.h"

typedef struct sfs_admin_meta_stats {
    int                    enabled;  /* STRIPEFS_META_TIMING on the server */
    uint64_t               since_ns; /* counted for this long (since its start or a reset) */
    uint32_t               count;
    sfs_meta_stats_entry_t entries[SFS_OP_MAX];
} sfs_admin_meta_stats_t;

/* Fetch the timing into *stats; with `reset`, the server starts counting
 * again after answering. Administrators and the service's user only
 * (-EPERM otherwise). */
int sfs_admin_meta_stats(sfs_client_t *client, int reset, sfs_admin_meta_stats_t *stats);

#endif
