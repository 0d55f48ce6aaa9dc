/*
 * Which file system the job serves, checked over MPI before any rank
 * registers (so before a client can reach a target). The metadata store
 * keeps a random id from its first start on and every storage target
 * records it (<target dir>/filesystem.id). A start is refused when the
 * metadata store is missing or new (no id, no name) while a target holds
 * chunk files or a file system's id: the metadata store was lost or the
 * config names the wrong directory, and a new, empty namespace would hand
 * the old chunks' ids to new files. A target recording another file
 * system's id is refused too.
 *
 * Two exchanges. The first runs before any rank opens anything and changes
 * nothing: a missing store with targets that hold data. The second, once
 * the store and targets are open, compares ids. Only when both pass is
 * anything written: the store keeps its id first and the targets after, so
 * that a crash between the two leaves targets that take the id next time.
 */
#define SFS_LOG_FAC "server"
#include "sfs_server.h"

#include "sfs_chunk_store.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_meta_store.h"
#include "sfs_proto.h"

#include <fcntl.h>
#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* What one rank tells the metadata rank. */
typedef struct sfs_rank_identity {
    int32_t               failed; /* this rank could not read its targets (it said why) */
    uint32_t              count;
    sfs_target_identity_t ids[SFS_REGISTER_MAX_TARGETS];
} sfs_rank_identity_t;

/* A new file system's id: random, never 0. */
static uint64_t sfs_server_new_fs_id(void)
{
    uint64_t id = 0;
    int      fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

    if (fd >= 0) {
        if (read(fd, &id, sizeof(id)) != (ssize_t)sizeof(id)) {
            id = 0;
        }
        close(fd);
    }
    if (id == 0) {
        id = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL);
    }
    return id | 1; /* never 0 */
}

static const sfs_config_target_t *sfs_server_config_target(const sfs_config_t *config, uint32_t id)
{
    for (uint32_t i = 0; i < config->target_count; i++) {
        if (config->targets[i].id == id) {
            return &config->targets[i];
        }
    }
    return NULL;
}

/* One target against the store: 0, or -1 once it has said why it is refused. */
static int sfs_server_judge_target(const sfs_server_t *server, int rank,
                                   const sfs_target_identity_t *t, uint64_t fs_id, int empty)
{
    const sfs_config_t        *config = server->config;
    const sfs_config_target_t *ct     = sfs_server_config_target(config, t->target_id);
    char                       where[PATH_MAX + 2 * SFS_HOST_MAX];

    snprintf(where, sizeof(where), "target %u (%s on %s)", t->target_id, ct ? ct->dir : "?",
             server->host_of[rank]);
    if (t->fs_id != 0 && t->fs_id != fs_id && (fs_id != 0 || !empty || t->chunks > 0)) {
        if (fs_id != 0) {
            fprintf(stderr,
                    "stripefs-server: refusing to start: %s belongs to file system %016" PRIx64
                    ", but the metadata store in %s is file system %016" PRIx64
                    ": the config (%s) gives this service another file system's target\n",
                    where, t->fs_id, config->meta_dir, fs_id, config->path);
        } else {
            fprintf(stderr,
                    "stripefs-server: refusing to start: %s belongs to file system %016" PRIx64
                    " (%" PRIu64 " chunk files), but the metadata store in %s %s: its "
                    "metadata store was lost or moved, or the config (%s) names the wrong "
                    "meta dir\n",
                    where, t->fs_id, t->chunks, config->meta_dir,
                    empty ? "is new (empty)" : "has names and no id (another file system's)",
                    config->path);
        }
        return -1;
    }
    if (t->fs_id == 0 && fs_id == 0 && empty && t->chunks > 0) {
        fprintf(stderr,
                "stripefs-server: refusing to start: %s holds %" PRIu64
                " chunk files, but the metadata store in %s is new (empty): its metadata store "
                "was lost or moved, or the config (%s) names the wrong meta dir; a new file "
                "system would give the old chunks' ids to new files\n",
                where, t->chunks, config->meta_dir, config->path);
        return -1;
    }
    return 0;
}

/* The metadata rank: every rank's targets against its store; the id to
 * keep, or 0 to refuse (each reason said). */
static uint64_t sfs_server_judge(const sfs_server_t *server, const sfs_rank_identity_t *all)
{
    uint64_t fs_id   = 0;
    int      empty   = 0;
    int      refused = 0;
    int      rc;

    rc = sfs_meta_identity(server->service->meta, &fs_id, &empty);
    if (rc) {
        fprintf(stderr, "stripefs-server: %s\n", sfs_error_detail());
        return 0;
    }
    for (int rank = 0; rank < server->size; rank++) {
        if (all[rank].failed) {
            refused = 1;
            continue;
        }
        for (uint32_t i = 0; i < all[rank].count && i < SFS_REGISTER_MAX_TARGETS; i++) {
            if (sfs_server_judge_target(server, rank, &all[rank].ids[i], fs_id, empty) != 0) {
                refused = 1;
            }
        }
    }
    if (refused) {
        if (empty && fs_id == 0) {
            fprintf(stderr,
                    "stripefs-server: nothing was changed. Restore the metadata store "
                    "into %s (or correct meta dir in %s); to start a new file system "
                    "instead, remove the chunk files (chunks/) and filesystem.id of the "
                    "targets named above.\n",
                    server->config->meta_dir, server->config->path);
        }
        return 0;
    }
    if (fs_id == 0) {
        fs_id = sfs_server_new_fs_id();
        rc    = sfs_meta_set_identity(server->service->meta, fs_id);
        if (rc) {
            fprintf(stderr, "stripefs-server: cannot keep the file system's id: %s\n",
                    sfs_error_detail());
            return 0;
        }
        sfs_info("file system id %016" PRIx64 " (kept in the metadata store in %s)", fs_id,
                 server->config->meta_dir);
    }
    return fs_id;
}

typedef uint64_t (*sfs_server_judge_fn)(const sfs_server_t *server, const sfs_rank_identity_t *all);

/* Every rank's `mine` to the metadata rank, whose `judge` answers (0:
 * refused); every rank returns the answer. */
static uint64_t sfs_server_exchange(const sfs_server_t *server, const sfs_rank_identity_t *mine,
                                    sfs_server_judge_fn judge)
{
    sfs_rank_identity_t *all       = NULL;
    int                  meta_rank = (int)server->plan->meta_rank;
    uint64_t             answer    = 0;
    int                  ready     = 1;

    if (server->rank == meta_rank) {
        all   = calloc((size_t)server->size, sizeof(*all));
        ready = all != NULL;
        if (!ready) {
            fprintf(stderr, "stripefs-server: rank %d: out of memory for the targets' ids\n",
                    server->rank);
        }
    }
    MPI_Bcast(&ready, 1, MPI_INT, meta_rank, MPI_COMM_WORLD);
    if (!ready) {
        return 0;
    }
    MPI_Gather(mine, (int)sizeof(*mine), MPI_BYTE, all, (int)sizeof(*mine), MPI_BYTE, meta_rank,
               MPI_COMM_WORLD);
    if (server->rank == meta_rank) {
        answer = judge(server, all);
        free(all);
    }
    MPI_Bcast(&answer, 1, MPI_UINT64_T, meta_rank, MPI_COMM_WORLD);
    return answer;
}

/* The first exchange's judge: a store that does not exist yet with a
 * target that holds data is refused (1: go on). */
static uint64_t sfs_server_judge_missing_store(const sfs_server_t        *server,
                                               const sfs_rank_identity_t *all)
{
    int exists  = sfs_meta_store_exists(server->config->meta_dir);
    int refused = 0;

    if (exists < 0) {
        fprintf(stderr, "stripefs-server: refusing to start: %s\n", sfs_error_detail());
        return 0;
    }
    for (int rank = 0; rank < server->size; rank++) {
        if (all[rank].failed) {
            refused = 1;
            continue;
        }
        for (uint32_t i = 0; !exists && i < all[rank].count && i < SFS_REGISTER_MAX_TARGETS; i++) {
            const sfs_target_identity_t *t = &all[rank].ids[i];
            const sfs_config_target_t *ct  = sfs_server_config_target(server->config, t->target_id);
            char                       of[64] = "";

            if (t->chunks == 0) {
                continue; /* nothing to lose: a new file system may take it */
            }
            if (t->fs_id != 0) {
                snprintf(of, sizeof(of), " of file system %016" PRIx64, t->fs_id);
            }
            fprintf(
                stderr,
                "stripefs-server: refusing to start: target %u (%s on %s) holds chunk files%s, but "
                "there is no metadata store in %s: it was lost or moved, or the config (%s) "
                "names the wrong meta dir; a new, empty file system would give the old "
                "chunks' ids to new files\n",
                t->target_id, ct ? ct->dir : "?", server->host_of[rank], of,
                server->config->meta_dir, server->config->path);
            refused = 1;
        }
    }
    if (refused && !exists) {
        fprintf(stderr,
                "stripefs-server: nothing was changed. Put the metadata store back into %s "
                "(or correct the meta dir in %s); to start a new file system instead, remove "
                "chunks/ and filesystem.id from the targets named above.\n",
                server->config->meta_dir, server->config->path);
    }
    return refused ? 0 : 1;
}

int sfs_server_check_new_store(sfs_server_t *server)
{
    const sfs_rank_roles_t *roles = &server->plan->ranks[server->rank];
    sfs_rank_identity_t     mine  = {0};

    for (uint32_t i = 0; i < roles->target_count && i < SFS_REGISTER_MAX_TARGETS; i++) {
        const sfs_config_target_t *ct = &server->config->targets[roles->targets[i]];
        sfs_target_identity_t     *t  = &mine.ids[mine.count++];

        t->target_id = ct->id;
        if (sfs_chunk_target_survey(ct, &t->fs_id, &t->chunks) != 0) {
            fprintf(stderr, "stripefs-server: rank %d on %s: refusing to start: %s\n", server->rank,
                    server->host, sfs_error_detail());
            mine.failed = 1;
            break;
        }
    }
    return sfs_server_exchange(server, &mine, sfs_server_judge_missing_store) ? 0 : 1;
}

int sfs_server_check_identity(sfs_server_t *server)
{
    sfs_rank_identity_t mine = {0};
    uint64_t            fs_id;
    int                 rc = 0, worst;

    if (server->service->storage) {
        rc = sfs_storage_identities(server->service->storage, mine.ids, SFS_REGISTER_MAX_TARGETS,
                                    &mine.count);
        if (rc) {
            fprintf(stderr, "stripefs-server: rank %d on %s: refusing to start: %s\n", server->rank,
                    server->host, sfs_error_detail());
            mine.failed = 1;
        }
    }
    fs_id = sfs_server_exchange(server, &mine, sfs_server_judge);
    rc    = fs_id == 0 ? -EINVAL : 0;
    if (rc == 0 && server->service->storage) {
        rc = sfs_storage_set_identity(server->service->storage, fs_id);
        if (rc) {
            fprintf(stderr, "stripefs-server: rank %d on %s: %s\n", server->rank, server->host,
                    sfs_error_detail());
        }
    }
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return worst ? 1 : 0;
}
