/*
 * Fences and tombstones of moved chunk files (sfs_chunk_tombstone.h), and
 * CHUNK_MOVED, which sets them (from stripefs-ctl migrate and fsck, for
 * administrators and servers only).
 */
#define SFS_LOG_FAC "storage"
#include "sfs_chunk_tombstone.h"

#include "sfs_handlers.h"
#include "sfs_storage_internal.h"

#include "sfs_dirsync.h"
#include "sfs_alloc.h"
#include "sfs_hash.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct sfs_tomb {
    sfs_hash_link_t link; /* key: the entry id */
    uint32_t        target_id;
    int             tomb;    /* 1: tombstone; 0: a fence until `until_s` */
    uint64_t        until_s; /* wall clock */
} sfs_tomb_t;

typedef struct sfs_tombstones {
    pthread_mutex_t lock;
    sfs_hash_t      hash;
    atomic_uint     count; /* entries: 0 skips the lock */
} sfs_tombstones_t;

typedef struct sfs_moved_op {
    sfs_work_t          work;
    sfs_storage_t      *storage;
    sfs_tp_request_t   *req;
    sfs_chunk_target_t *target;
    sfs_chunk_req_t     chunk;
    uint64_t            until_s;
    int                 status;
    char                detail[SFS_ERROR_DETAIL_MAX];
} sfs_moved_op_t;

static sfs_tomb_t *sfs_tomb_find(sfs_tombstones_t *t, uint32_t target_id, uint64_t entry_id)
{
    sfs_hash_link_t *link;

    for (link = t->hash.buckets[sfs_hash_bucket(&t->hash, entry_id)]; link; link = link->next) {
        sfs_tomb_t *tomb = (sfs_tomb_t *)link;

        if (link->key == entry_id && tomb->target_id == target_id) {
            return tomb;
        }
    }
    return NULL;
}

/* Under the lock. A tombstone replaces a fence; a fence never a tombstone. */
static int sfs_tomb_set(sfs_tombstones_t *t, uint32_t target_id, uint64_t entry_id, int tomb,
                        uint64_t until_s)
{
    sfs_tomb_t *found = sfs_tomb_find(t, target_id, entry_id);

    if (found) {
        if (!found->tomb) {
            found->tomb    = tomb;
            found->until_s = until_s;
        }
        return 0;
    }
    if (!SFS_ALLOC_PTR(found)) {
        return -ENOMEM;
    }
    found->target_id = target_id;
    found->tomb      = tomb;
    found->until_s   = until_s;
    sfs_hash_add(&t->hash, &found->link, entry_id);
    atomic_fetch_add(&t->count, 1);
    return 0;
}

static void sfs_tomb_forget(sfs_tombstones_t *t, sfs_tomb_t *tomb)
{
    sfs_hash_del(&t->hash, &tomb->link);
    atomic_fetch_sub(&t->count, 1);
    free(tomb);
}

static void sfs_tomb_path(const sfs_chunk_target_t *target, uint64_t entry_id, char *buf,
                          size_t len)
{
    snprintf(buf, len, "%s/tombstones/%" PRIu64, sfs_chunk_target_dir(target), entry_id);
}

static int sfs_tomb_load(sfs_tombstones_t *t, sfs_chunk_target_t *target)
{
    char           dir[PATH_MAX];
    DIR           *d;
    struct dirent *e;
    int            rc = 0;

    snprintf(dir, sizeof(dir), "%s/tombstones", sfs_chunk_target_dir(target));
    d = opendir(dir);
    if (!d) {
        return 0; /* none (or a backend without a directory) */
    }
    while (rc == 0 && (e = readdir(d)) != NULL) {
        char    *end;
        uint64_t id = strtoull(e->d_name, &end, 10);

        if (e->d_name[0] < '0' || e->d_name[0] > '9' || *end != '\0') {
            continue;
        }
        rc = sfs_tomb_set(t, sfs_chunk_target_id(target), id, 1, 0);
        /* a move killed between its tombstone and the removal: finish it */
        if (rc == 0) {
            rc = sfs_chunk_unlink(target, id);
        }
    }
    closedir(d);
    return rc;
}

int sfs_tombstones_create(sfs_storage_t *storage)
{
    sfs_tombstones_t *t;
    int               rc;

    if (!SFS_ALLOC_PTR(t)) {
        return -ENOMEM;
    }
    pthread_mutex_init(&t->lock, NULL);
    rc                  = sfs_hash_init(&t->hash);
    storage->tombstones = t;
    for (uint32_t i = 0; rc == 0 && i < storage->target_count; i++) {
        rc = sfs_tomb_load(t, storage->targets[i]);
    }
    if (atomic_load(&t->count)) {
        sfs_info("%u tombstones of moved chunk files", atomic_load(&t->count));
    }
    return rc;
}

void sfs_tombstones_destroy(sfs_storage_t *storage)
{
    sfs_tombstones_t *t = storage->tombstones;

    if (!t) {
        return;
    }
    for (size_t b = 0; t->hash.buckets && b < t->hash.bucket_count; b++) {
        while (t->hash.buckets[b]) {
            sfs_tomb_forget(t, (sfs_tomb_t *)t->hash.buckets[b]);
        }
    }
    sfs_hash_cleanup(&t->hash);
    pthread_mutex_destroy(&t->lock);
    free(t);
    storage->tombstones = NULL;
}

int sfs_tombstones_check(sfs_storage_t *storage, uint32_t opcode, uint32_t target_id,
                         uint64_t entry_id)
{
    sfs_tombstones_t *t = storage->tombstones;
    sfs_tomb_t       *tomb;
    int               rc = 0;
    int               writes;

    if (!t || atomic_load(&t->count) == 0) {
        return 0;
    }
    switch (opcode) {
    case SFS_OP_WRITE:
    case SFS_OP_TRUNCATE:
        writes = 1;
        break;
    case SFS_OP_READ:
    case SFS_OP_CHUNK_STAT:
    case SFS_OP_FSYNC:
    case SFS_OP_CHUNK_OPEN:
        writes = 0;
        break;
    default:
        return 0;
    }
    pthread_mutex_lock(&t->lock);
    tomb = sfs_tomb_find(t, target_id, entry_id);
    if (tomb && !tomb->tomb && tomb->until_s < sfs_wall_ns() / 1000000000u) {
        sfs_tomb_forget(t, tomb); /* a fence that ran out: its move was not committed */
        tomb = NULL;
    }
    if (tomb && (tomb->tomb || writes)) {
        rc = sfs_error_set(-ESTALE,
                           "the chunk of file %016" PRIx64 " %s storage target %u (migrate): "
                           "fetch the file's pattern again",
                           entry_id, tomb->tomb ? "moved off" : "is being moved off", target_id);
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

int sfs_tombstones_admit(sfs_storage_t *storage, sfs_storage_op_t *op)
{
    int rc = sfs_tombstones_check(storage, op->opcode, op->chunk.target_id, op->chunk.entry_id);

    if (rc) {
        sfs_tp_request_reply_error(op->req, rc, "%s", sfs_error_detail());
    }
    return rc;
}

void sfs_tombstones_recheck(sfs_storage_t *storage, sfs_storage_op_t *op)
{
    int rc;

    if (op->status == -ESTALE || op->mirror) {
        return;
    }
    rc = sfs_tombstones_check(storage, op->opcode, op->chunk.target_id, op->chunk.entry_id);
    if (rc) {
        op->status = rc;
        snprintf(op->detail, sizeof(op->detail), "%s", sfs_error_detail());
    }
}

/* The tombstone on disk, durable, before the chunk file goes. */
static int sfs_tomb_write(sfs_chunk_target_t *target, uint64_t entry_id)
{
    char path[PATH_MAX];
    char dir[PATH_MAX];
    int  fd;
    int  rc = 0;

    snprintf(dir, sizeof(dir), "%s/tombstones", sfs_chunk_target_dir(target));
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        return sfs_error_set(-errno, "storage target %u: cannot make %s: %m",
                             sfs_chunk_target_id(target), dir);
    }
    sfs_tomb_path(target, entry_id, path, sizeof(path));
    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || fsync(fd) != 0) {
        rc = sfs_error_set(-errno, "storage target %u: tombstone %s: %m",
                           sfs_chunk_target_id(target), path);
    }
    if (fd >= 0) {
        close(fd);
    }
    if (rc == 0 && (rc = sfs_fsync_dir(dir)) != 0) {
        rc = sfs_error_set(rc, "storage target %u: fsync of %s: %s", sfs_chunk_target_id(target),
                           dir, strerror(-rc));
    }
    return rc;
}

static void sfs_moved_run(sfs_work_t *work)
{
    sfs_moved_op_t   *op     = sfs_container_of(work, sfs_moved_op_t, work);
    sfs_tombstones_t *t      = op->storage->tombstones;
    uint32_t          target = op->chunk.target_id;
    uint64_t          entry  = op->chunk.entry_id;
    uint64_t          now_s  = sfs_wall_ns() / 1000000000u;
    sfs_tomb_t       *found  = NULL;
    char              path[PATH_MAX];

    sfs_error_clear();
    switch (op->chunk.flags) {
    case SFS_MOVED_FENCE:
        op->until_s = now_s + SFS_MOVED_FENCE_S;
        pthread_mutex_lock(&t->lock);
        op->status = sfs_tomb_set(t, target, entry, 0, op->until_s);
        pthread_mutex_unlock(&t->lock);
        break;
    case SFS_MOVED_UNFENCE:
        pthread_mutex_lock(&t->lock);
        found = sfs_tomb_find(t, target, entry);
        if (found && !found->tomb) {
            sfs_tomb_forget(t, found);
        }
        pthread_mutex_unlock(&t->lock);
        break;
    case SFS_MOVED_TOMB:
        /* in memory first: a read that runs after the removal below finds
         * it at its recheck */
        pthread_mutex_lock(&t->lock);
        op->status = sfs_tomb_set(t, target, entry, 1, 0);
        pthread_mutex_unlock(&t->lock);
        if (op->status == 0) {
            op->status = sfs_tomb_write(op->target, entry);
        }
        if (op->status == 0) {
            op->status = sfs_chunk_unlink(op->target, entry);
        }
        break;
    case SFS_MOVED_CLEAR:
        sfs_tomb_path(op->target, entry, path, sizeof(path));
        if (unlink(path) != 0 && errno != ENOENT) {
            op->status = sfs_error_set(-errno, "storage target %u: remove %s: %m", target, path);
            break;
        }
        pthread_mutex_lock(&t->lock);
        found = sfs_tomb_find(t, target, entry);
        if (found) {
            sfs_tomb_forget(t, found);
        }
        pthread_mutex_unlock(&t->lock);
        break;
    default:
        op->status = sfs_error_set(-EINVAL, "CHUNK_MOVED: unknown flags %u", op->chunk.flags);
        break;
    }
    if (op->status) {
        snprintf(op->detail, sizeof(op->detail), "%s",
                 sfs_error_detail()[0] ? sfs_error_detail() : sfs_strerror(op->status));
    }
}

static void sfs_moved_done(sfs_work_t *work)
{
    sfs_moved_op_t    *op    = sfs_container_of(work, sfs_moved_op_t, work);
    sfs_length_reply_t reply = {.length = op->until_s};
    uint8_t            args[16];
    sfs_wbuf_t         wb;

    op->storage->in_flight--;
    if (op->status) {
        sfs_tp_request_reply_error(op->req, op->status, "%s", op->detail);
    } else {
        sfs_wbuf_init(&wb, args, sizeof(args));
        sfs_proto_length_reply_pack(&wb, &reply);
        sfs_tp_request_reply(op->req, 0, args, wb.length, NULL, 0, NULL, NULL);
    }
    free(op);
}

void sfs_handle_chunk_moved(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_storage_t    *storage = service->storage;
    const sfs_cred_t *cred    = sfs_tp_session_cred(sfs_tp_request_session(req));
    sfs_moved_op_t   *op;

    if (!(cred->flags & SFS_CRED_SERVER) && !sfs_cred_admin(cred)) {
        sfs_tp_request_reply_error(req, -EPERM, "CHUNK_MOVED is for servers and administrators");
        return;
    }
    if (!SFS_ALLOC_PTR(op)) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    op->storage = storage;
    op->req     = req;
    if (sfs_handler_decode(req, &op->chunk, sizeof(op->chunk), 0) != 0) {
        free(op);
        return;
    }
    op->target = sfs_storage_find(storage, op->chunk.target_id);
    if (!op->target) {
        sfs_tp_request_reply_error(req, -ENODEV, "rank %u does not serve storage target %u",
                                   service->rank, op->chunk.target_id);
        free(op);
        return;
    }
    op->work.run  = sfs_moved_run;
    op->work.done = sfs_moved_done;
    storage->in_flight++;
    sfs_workq_submit(storage->workq, &op->work);
}
