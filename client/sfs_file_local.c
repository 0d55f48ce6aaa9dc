/*
 * Short-circuit reads: a storage server on this host hands the client its
 * chunk files, read-only (CHUNK_OPEN, sfs_tp_fdpass.c), and the client
 * reads them with pread: one copy from the page cache, like a local file
 * system, and no round trip per read. Writes still go through the server
 * (it owns space accounting, ENOSPC, sync, caps); both use the same page
 * cache, so a read sees every write the server has acknowledged.
 *
 * A file asks for a target's chunk file once it has read SFS_LOCAL_ASK_AFTER
 * bytes from it (small files keep their single READ round trip). A refusal
 * (another host, a capped target, STRIPEFS_LOCAL_READ=0) is final for that
 * open file; a chunk file that does not exist yet, or a pid proof the
 * server has not seen yet, is asked for again a second later. A process
 * keeps at most SFS_LOCAL_MAX_FDS such descriptors.
 *
 * A mirrored file's descriptor is the primary's copy, handed over while
 * that member was primary and held its lease (docs/mirroring.md,
 * "Fencing"). It is used for 2/5 of the offline timeout T from when it
 * was asked for, then asked for again: the lease ended no earlier than the
 * answer, and no buddy is promoted before T/2 after the lease's end, so
 * reads through it happen before any failover. A member that is no longer
 * primary, or cut off, or gone, refuses or does not answer the new ask,
 * and the file reads through the servers (and their failover) from then on.
 */
#define SFS_LOG_FAC "client"
#include "sfs_client_internal.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SFS_LOCAL_ASK_AFTER (1u << 20)
#define SFS_LOCAL_RETRY_MS  1000
#define SFS_LOCAL_NEVER     UINT64_MAX
/* descriptors one client process keeps for this at most: a job with
 * thousands of large files open reads the rest through the servers */
#define SFS_LOCAL_MAX_FDS 512

struct sfs_file_local {
    int      fd[SFS_STRIPE_COUNT_MAX];            /* -1: none */
    uint64_t held_until_ms[SFS_STRIPE_COUNT_MAX]; /* a mirrored file's: ask again then */
    uint64_t read_bytes[SFS_STRIPE_COUNT_MAX];
    uint64_t ask_after_ms[SFS_STRIPE_COUNT_MAX]; /* SFS_LOCAL_NEVER: refused */
};

/* How long a mirrored file's descriptor may be used after it was asked
 * for; 0: not at all (a map without the offline timeout). */
static uint64_t sfs_file_local_mirror_hold_ms(sfs_file_t *file)
{
    const sfs_map_t *map = sfs_cluster_map(file->client->cluster);

    return map ? (uint64_t)map->offline_timeout_ms * 2 / 5 : 0;
}

void sfs_file_local_close(sfs_file_t *file)
{
    if (!file->local) {
        return;
    }
    for (uint32_t t = 0; t < SFS_STRIPE_COUNT_MAX; t++) {
        if (file->local->fd[t] >= 0) {
            close(file->local->fd[t]);
            file->client->local_fds--;
        }
    }
    free(file->local);
    file->local = NULL;
}

/* CHUNK_OPEN to the target's server: the descriptor, or an error. */
static int sfs_file_local_ask(sfs_file_t *file, uint32_t target_index, int *fd_p)
{
    uint32_t target = sfs_client_mirror_target(file->client, &file->attr.pattern, target_index);
    sfs_chunk_req_t     chunk;
    uint8_t             args[96];
    sfs_tp_rpc_params_t params;
    sfs_tp_conn_t      *conn;
    sfs_tp_rpc_t       *rpc = NULL;
    sfs_wbuf_t          wb;
    int                 rc;

    /* no extents: only the fields before them are packed */
    memset(&chunk, 0, offsetof(sfs_chunk_req_t, extents));
    chunk.target_id = target;
    chunk.entry_id  = file->attr.entry_id;
    chunk.cap       = file->cap;
    if (file->attr.pattern.type == SFS_PATTERN_MIRROR) {
        chunk.flags = SFS_CHUNK_MIRRORED; /* the primary's copy only */
    }
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_chunk_req_pack(&wb, SFS_OP_CHUNK_OPEN, &chunk);
    rc = wb.error ? -EMSGSIZE : sfs_cluster_target_conn(file->client->cluster, target, &conn);
    if (rc == 0) {
        rc = sfs_tp_conn_files_ready(conn);
    }
    if (rc) {
        return rc;
    }
    memset(&params, 0, sizeof(params));
    params.opcode      = SFS_OP_CHUNK_OPEN;
    params.args        = args;
    params.args_length = wb.length;
    rc                 = sfs_tp_call(conn, &params, &rpc);
    if (rc == 0) {
        rc = sfs_tp_rpc_take_fd(rpc, fd_p);
    }
    sfs_tp_rpc_release(rpc);
    return rc;
}

int sfs_file_local_fd(sfs_file_t *file, uint32_t target_index, uint64_t bytes)
{
    sfs_file_local_t *local = file->local;
    uint64_t          now;
    int               fd, rc;

    if (!file->client->local_reads) {
        return -1;
    }
    if (!local) {
        if (!SFS_ALLOC_PTR(local)) {
            return -1;
        }
        for (uint32_t t = 0; t < SFS_STRIPE_COUNT_MAX; t++) {
            local->fd[t] = -1;
        }
        file->local = local;
    }
    if (local->fd[target_index] >= 0) {
        if (file->attr.pattern.type != SFS_PATTERN_MIRROR ||
            sfs_time_ms() < local->held_until_ms[target_index]) {
            return local->fd[target_index];
        }
        /* a mirrored file's: its member may no longer be primary */
        close(local->fd[target_index]);
        local->fd[target_index] = -1;
        file->client->local_fds--;
        local->ask_after_ms[target_index] = 0;
    }
    local->read_bytes[target_index] += bytes;
    if (local->read_bytes[target_index] < SFS_LOCAL_ASK_AFTER) {
        return -1;
    }
    now = sfs_time_ms();
    if (now < local->ask_after_ms[target_index] ||
        local->ask_after_ms[target_index] == SFS_LOCAL_NEVER ||
        file->client->local_fds >= SFS_LOCAL_MAX_FDS) {
        return -1;
    }
    if (file->attr.pattern.type == SFS_PATTERN_MIRROR) {
        uint64_t hold = sfs_file_local_mirror_hold_ms(file);

        if (hold == 0) {
            local->ask_after_ms[target_index] = SFS_LOCAL_NEVER;
            return -1;
        }
        local->held_until_ms[target_index] = now + hold; /* from before the ask */
    }
    rc = sfs_file_local_ask(file, target_index, &fd);
    if (rc == 0) {
        sfs_debug("%s: reading target %u's chunk file directly", file->path,
                  file->attr.pattern.targets[target_index]);
        local->fd[target_index] = fd;
        file->client->local_fds++;
        return fd;
    }
    /* not there yet, our pid proof not seen yet, a full socket: later;
     * else (another host, a capped target, turned off) never */
    local->ask_after_ms[target_index] = (rc == -ENOENT || rc == -EPERM || rc == -EAGAIN)
                                            ? now + SFS_LOCAL_RETRY_MS
                                            : SFS_LOCAL_NEVER;
    sfs_debug("%s: no direct reads of target %u: %s", file->path,
              file->attr.pattern.targets[target_index], sfs_strerror(rc));
    return -1;
}
