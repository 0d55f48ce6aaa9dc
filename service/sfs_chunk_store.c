/*
 * The chunk store of one storage target, over a backend's ops table
 * (sfs_chunk_backend.h): what every backend shares. The target's identity
 * and capacity limit (used bytes counted here), the emulated disk
 * bandwidth, the extent loops (bytes past the end read as zeros), and the
 * error messages naming the target and the chunk. The cache of open
 * chunks is in sfs_chunk_cache.c, mapped reads in sfs_chunk_map.c.
 */
#define SFS_LOG_FAC "chunk"
#include "sfs_chunk_store_internal.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int sfs_chunk_add_used(void *arg, uint64_t entry_id, uint64_t length)
{
    sfs_chunk_target_t *target = arg;

    (void)entry_id;
    target->used_bytes += length;
    target->chunks_at_open++;
    return 0;
}

int sfs_chunk_target_open_params(const sfs_config_target_t *config, const char *cluster_name,
                                 const sfs_chunk_target_params_t *params,
                                 sfs_chunk_target_t             **target_p)
{
    sfs_chunk_backend_params_t backend = {0};
    sfs_chunk_target_t        *target;
    int                        rc;

    if (!SFS_ALLOC_PTR(target)) {
        return -ENOMEM;
    }
    target->id                  = config->id;
    target->capacity_limit      = config->capacity;
    target->bandwidth           = config->bandwidth;
    target->early_writeback_min = SFS_CHUNK_EARLY_WRITEBACK_DEFAULT;
    target->ops                 = &sfs_chunk_backend_posix;
    if (params && (params->field_mask & SFS_CHUNK_TARGET_PARAM_BACKEND) && params->backend) {
        target->ops = params->backend;
    }
    if (params && (params->field_mask & SFS_CHUNK_TARGET_PARAM_DEVICE_SIZE)) {
        backend.device_size = params->device_size;
    }
    pthread_mutex_init(&target->throttle_lock, NULL);
    pthread_mutex_init(&target->fd_lock, NULL);
    pthread_cond_init(&target->unmapped, NULL);
    snprintf(target->dir, sizeof(target->dir), "%s", config->dir);
    backend.dir          = target->dir;
    backend.target_id    = target->id;
    backend.cluster_name = cluster_name;
    rc                   = target->ops->attach(&backend, &target->store);
    if (rc) {
        goto err;
    }
    rc = target->ops->list(target->store, sfs_chunk_add_used, target);
    if (rc) {
        sfs_error_set(rc, "target %u: cannot list the chunks in %s: %s", target->id, target->dir,
                      strerror(-rc));
        goto err;
    }
    *target_p = target;
    return 0;

err:
    sfs_chunk_target_close(target);
    return rc;
}

int sfs_chunk_target_open(const sfs_config_target_t *config, const char *cluster_name,
                          sfs_chunk_target_t **target_p)
{
    return sfs_chunk_target_open_params(config, cluster_name, NULL, target_p);
}

void sfs_chunk_target_close(sfs_chunk_target_t *target)
{
    if (!target) {
        return;
    }
    for (int i = 0; i < SFS_CHUNK_FD_CACHE; i++) {
        sfs_chunk_fd_close_slot(target, &target->fds[i]);
    }
    if (target->store) {
        target->ops->detach(target->store);
    }
    pthread_cond_destroy(&target->unmapped);
    pthread_mutex_destroy(&target->fd_lock);
    pthread_mutex_destroy(&target->throttle_lock);
    free(target);
}

uint32_t sfs_chunk_target_id(const sfs_chunk_target_t *target)
{
    return target->id;
}

const char *sfs_chunk_target_dir(const sfs_chunk_target_t *target)
{
    return target->dir;
}

uint64_t sfs_chunk_target_bandwidth(const sfs_chunk_target_t *target)
{
    return target->bandwidth;
}

void sfs_chunk_target_set_early_writeback(sfs_chunk_target_t *target, uint64_t min_bytes)
{
    target->early_writeback_min = min_bytes;
}

/* A failed read of a target's file system id, as an error naming it. */
static int sfs_chunk_fs_id_error(int rc, uint32_t target_id, const char *dir)
{
    if (rc == -EBADMSG) {
        return sfs_error_set(rc,
                             "target %u: %s/filesystem.id is damaged (not \"stripefs file "
                             "system <16 hex digits>\"): cannot tell which file system its "
                             "chunks belong to",
                             target_id, dir);
    }
    return sfs_error_set(rc, "target %u: cannot read the file system id in %s: %s", target_id, dir,
                         strerror(-rc));
}

int sfs_chunk_target_fs_id(sfs_chunk_target_t *target, uint64_t *fs_id_p, uint64_t *chunks_p)
{
    int rc = 0;

    *fs_id_p  = 0;
    *chunks_p = target->chunks_at_open;
    if (target->ops->fs_id) {
        rc = target->ops->fs_id(target->store, fs_id_p);
    }
    return rc ? sfs_chunk_fs_id_error(rc, target->id, target->dir) : 0;
}

int sfs_chunk_target_survey(const sfs_config_target_t *config, uint64_t *fs_id_p,
                            uint64_t *chunks_p)
{
    int rc = sfs_chunk_posix_survey(config->dir, fs_id_p, chunks_p);

    return rc ? sfs_chunk_fs_id_error(rc, config->id, config->dir) : 0;
}

int sfs_chunk_target_set_fs_id(sfs_chunk_target_t *target, uint64_t fs_id)
{
    int rc = target->ops->set_fs_id ? target->ops->set_fs_id(target->store, fs_id) : 0;

    if (rc) {
        return sfs_error_set(rc, "target %u: cannot record the file system's id in %s: %s",
                             target->id, target->dir, strerror(-rc));
    }
    return 0;
}

void *sfs_chunk_target_backend_state(sfs_chunk_target_t *target)
{
    return target->store;
}

/* A write answered ENOSPC: the target reports no free space from now on. */
static void sfs_chunk_mark_full(sfs_chunk_target_t *target)
{
    __atomic_store_n(&target->answered_enospc, 1, __ATOMIC_RELAXED);
}

/* Space was freed: its free space is what the disk and the limit say. */
static void sfs_chunk_mark_room(sfs_chunk_target_t *target)
{
    __atomic_store_n(&target->answered_enospc, 0, __ATOMIC_RELAXED);
}

int sfs_chunk_target_has_news(sfs_chunk_target_t *target)
{
    uint64_t capacity = __atomic_load_n(&target->reported_capacity, __ATOMIC_RELAXED);

    return __atomic_load_n(&target->answered_enospc, __ATOMIC_RELAXED) !=
               __atomic_load_n(&target->reported_enospc, __ATOMIC_RELAXED) ||
           (capacity &&
            __atomic_load_n(&target->grown_since_report, __ATOMIC_RELAXED) >= capacity / 100);
}

int sfs_chunk_target_space(sfs_chunk_target_t *target, uint64_t *capacity_p, uint64_t *free_p)
{
    uint64_t capacity, avail, used;
    int      full, rc = target->ops->space(target->store, &capacity, &avail);

    if (rc) {
        return sfs_error_set(rc, "target %u: statvfs %s: %s", target->id, target->dir,
                             strerror(-rc));
    }
    if (target->capacity_limit) {
        used = __atomic_load_n(&target->used_bytes, __ATOMIC_RELAXED);
        if (target->capacity_limit < capacity) {
            capacity = target->capacity_limit;
        }
        if (capacity - (used < capacity ? used : capacity) < avail) {
            avail = capacity - (used < capacity ? used : capacity);
        }
    }
    full = __atomic_load_n(&target->answered_enospc, __ATOMIC_RELAXED);
    __atomic_store_n(&target->reported_enospc, full, __ATOMIC_RELAXED);
    __atomic_store_n(&target->grown_since_report, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&target->reported_capacity, capacity, __ATOMIC_RELAXED);
    *capacity_p = capacity;
    *free_p     = full ? 0 : avail;
    return 0;
}

int sfs_chunk_target_sync(sfs_chunk_target_t *target)
{
    int rc = target->ops->sync(target->store);

    if (rc) {
        return sfs_error_set(rc, "target %u: syncfs %s: %s", target->id, target->dir,
                             strerror(-rc));
    }
    return 0;
}

/* Emulated disk bandwidth: the disk serves one request at a time at
 * `bandwidth` bytes/s, so a request waits for the ones before it. */
static void sfs_chunk_throttle(sfs_chunk_target_t *target, uint64_t bytes)
{
    uint64_t        now, finish;
    struct timespec ts;

    if (!target->bandwidth || !bytes) {
        return;
    }
    pthread_mutex_lock(&target->throttle_lock);
    now = sfs_time_ns();
    if (target->disk_free_at_ns < now) {
        target->disk_free_at_ns = now;
    }
    target->disk_free_at_ns += bytes * 1000000000ull / target->bandwidth;
    finish = target->disk_free_at_ns;
    pthread_mutex_unlock(&target->throttle_lock);
    if (finish > now) {
        ts.tv_sec  = (time_t)(finish / 1000000000ull);
        ts.tv_nsec = (long)(finish % 1000000000ull);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        }
    }
}

int sfs_chunk_write(sfs_chunk_target_t *target, uint64_t entry_id, const sfs_io_extent_t *extents,
                    uint32_t count, const void *data, unsigned flags, uint64_t *length_p)
{
    int                sync   = (flags & SFS_CHUNK_IO_SYNC) != 0;
    int                nowait = (flags & SFS_CHUNK_IO_NOWAIT) != 0;
    const uint8_t     *src    = data;
    sfs_chunk_handle_t handle;
    uint64_t           end = 0, total = 0, before = 0;
    int                rc;

    for (uint32_t i = 0; i < count; i++) {
        total += extents[i].length;
        if (extents[i].chunk_offset + extents[i].length > end) {
            end = extents[i].chunk_offset + extents[i].length;
        }
    }
    if (nowait && (sync || target->capacity_limit ||
                   __atomic_load_n(&target->no_nowait_write, __ATOMIC_RELAXED))) {
        return -EAGAIN;
    }
    rc = nowait ? sfs_chunk_fd_get_cached(target, entry_id, &handle)
                : sfs_chunk_fd_get(target, entry_id, 1, &handle);
    if (rc == -EAGAIN) {
        return rc;
    }
    if (rc) {
        return sfs_error_set(rc, "target %u: cannot open chunk %016" PRIx64 ": %s", target->id,
                             entry_id, strerror(-rc));
    }
    /* only a capacity limit needs to know how much the file grows */
    if (target->capacity_limit) {
        rc = target->ops->size(handle.obj, &before);
        if (rc) {
            goto out;
        }
        if (end > before &&
            __atomic_load_n(&target->used_bytes, __ATOMIC_RELAXED) + (end - before) >
                target->capacity_limit) {
            rc = sfs_error_set(-ENOSPC, "target %u is full (capacity limit %" PRIu64 " bytes)",
                               target->id, target->capacity_limit);
            sfs_chunk_mark_full(target);
            goto out_nodetail;
        }
    }
    sfs_chunk_throttle(target, total);
    for (uint32_t i = 0; i < count; i++) {
        uint64_t done = 0;

        while (done < extents[i].length) {
            ssize_t put = target->ops->pwrite(handle.obj, src + done, extents[i].length - done,
                                              extents[i].chunk_offset + done, nowait);

            if (put == -EINTR) {
                continue;
            }
            if (put < 0) {
                rc = (int)put;
                if (nowait && (rc == -EAGAIN || rc == -EOPNOTSUPP)) {
                    if (rc == -EOPNOTSUPP) { /* never again on this file system */
                        __atomic_store_n(&target->no_nowait_write, 1, __ATOMIC_RELAXED);
                    }
                    rc = -EAGAIN; /* done again on a disk thread: the same bytes */
                    goto out_nodetail;
                }
                goto out;
            }
            done += (uint64_t)put;
        }
        src += extents[i].length;
    }
    if (sync && (rc = target->ops->fsync(handle.obj)) != 0) {
        goto out;
    }
    if (!sync && target->early_writeback_min && total >= target->early_writeback_min &&
        target->ops->writeback) {
        target->ops->writeback(target->store, handle.obj, extents, count);
    }
    if (target->capacity_limit && end > before) {
        __atomic_add_fetch(&target->used_bytes, end - before, __ATOMIC_RELAXED);
    }
    /* the growth (exact only with a capacity limit: else what was written) */
    __atomic_add_fetch(&target->grown_since_report,
                       target->capacity_limit ? (end > before ? end - before : 0) : total,
                       __ATOMIC_RELAXED);
    /* the chunk file is at least this long (exact only with a capacity limit) */
    *length_p = end > before ? end : before;
out:
    if (rc) {
        sfs_error_set(rc, "target %u: writing chunk %016" PRIx64 " failed: %s", target->id,
                      entry_id, sfs_strerror(rc));
    }
    if (rc == -ENOSPC) {
        sfs_chunk_mark_full(target);
    }
out_nodetail:
    sfs_chunk_fd_put(target, &handle);
    return rc;
}

int sfs_chunk_read(sfs_chunk_target_t *target, uint64_t entry_id, const sfs_io_extent_t *extents,
                   uint32_t count, void *buf, unsigned flags, uint64_t *length_p)
{
    int                nowait = (flags & SFS_CHUNK_IO_NOWAIT) != 0;
    uint8_t           *dst    = buf;
    sfs_chunk_handle_t handle;
    uint64_t           total = 0, length;
    int                rc;

    for (uint32_t i = 0; i < count; i++) {
        total += extents[i].length;
    }
    rc = nowait ? sfs_chunk_fd_get_cached(target, entry_id, &handle)
                : sfs_chunk_fd_get(target, entry_id, 0, &handle);
    if (rc == -EAGAIN) {
        return rc;
    }
    if (rc == -ENOENT) {
        memset(buf, 0, total);
        *length_p = 0;
        return 0;
    }
    if (rc) {
        return sfs_error_set(rc, "target %u: cannot open chunk %016" PRIx64 ": %s", target->id,
                             entry_id, strerror(-rc));
    }
    rc = target->ops->size(handle.obj, &length);
    if (rc) {
        goto out;
    }
    sfs_chunk_throttle(target, total);
    for (uint32_t i = 0; i < count; i++) {
        uint64_t done = 0;

        while (done < extents[i].length) {
            ssize_t got = target->ops->pread(handle.obj, dst + done, extents[i].length - done,
                                             extents[i].chunk_offset + done, nowait);

            if (got == -EINTR) {
                continue;
            }
            if (got < 0) {
                rc = (int)got;
                if (nowait && (rc == -EAGAIN || rc == -EOPNOTSUPP)) {
                    rc = -EAGAIN; /* not in the page cache: read on a disk thread */
                    sfs_chunk_fd_put(target, &handle);
                    return rc;
                }
                goto out;
            }
            if (got == 0) {
                /* past the end of the chunk file: a hole */
                memset(dst + done, 0, extents[i].length - done);
                break;
            }
            done += (uint64_t)got;
        }
        dst += extents[i].length;
    }
    *length_p = length;
out:
    if (rc) {
        sfs_error_set(rc, "target %u: reading chunk %016" PRIx64 " failed: %s", target->id,
                      entry_id, sfs_strerror(rc));
    }
    sfs_chunk_fd_put(target, &handle);
    return rc;
}

int sfs_chunk_stat(sfs_chunk_target_t *target, uint64_t entry_id, uint64_t *length_p)
{
    int rc = target->ops->stat(target->store, entry_id, length_p);

    if (rc == -ENOENT) {
        *length_p = 0;
        return 0;
    }
    if (rc) {
        return sfs_error_set(rc, "target %u: stat chunk %016" PRIx64 ": %s", target->id, entry_id,
                             strerror(-rc));
    }
    return 0;
}

int sfs_chunk_open_readonly(sfs_chunk_target_t *target, uint64_t entry_id)
{
    int fd = target->ops->open_fd ? target->ops->open_fd(target->store, entry_id) : -EOPNOTSUPP;

    if (fd < 0 && fd != -ENOENT) {
        sfs_error_set(fd, "target %u: cannot open chunk %016" PRIx64 ": %s", target->id, entry_id,
                      strerror(-fd));
    }
    return fd;
}

int sfs_chunk_truncate(sfs_chunk_target_t *target, uint64_t entry_id, uint64_t length,
                       uint32_t mode)
{
    sfs_chunk_obj_t *obj;
    uint64_t         size;
    int              rc;

    rc = target->ops->open(target->store, entry_id, mode == SFS_TRUNCATE_EXACT, &obj);
    if (rc == -ENOENT) {
        return 0; /* shrinking a chunk file that does not exist */
    }
    if (rc) {
        return sfs_error_set(rc, "target %u: cannot open chunk %016" PRIx64 ": %s", target->id,
                             entry_id, strerror(-rc));
    }
    rc = target->ops->size(obj, &size);
    if (rc == 0 && size != length && (mode == SFS_TRUNCATE_EXACT || size > length)) {
        if (size > length) {
            rc = sfs_chunk_shrink(target, entry_id, obj, length);
        } else {
            rc = target->ops->truncate(obj, length);
        }
        if (rc == 0 && size > length) {
            __atomic_sub_fetch(&target->used_bytes, size - length, __ATOMIC_RELAXED);
            sfs_chunk_mark_room(target);
        } else if (rc == 0) {
            __atomic_add_fetch(&target->used_bytes, length - size, __ATOMIC_RELAXED);
        }
    }
    target->ops->close(target->store, obj);
    if (rc) {
        return sfs_error_set(rc, "target %u: truncating chunk %016" PRIx64 ": %s", target->id,
                             entry_id, strerror(-rc));
    }
    return 0;
}

int sfs_chunk_fsync(sfs_chunk_target_t *target, uint64_t entry_id)
{
    sfs_chunk_handle_t handle;
    int                rc = sfs_chunk_fd_get(target, entry_id, 0, &handle);

    if (rc == -ENOENT) {
        return 0;
    }
    if (rc) {
        return sfs_error_set(rc, "target %u: cannot open chunk %016" PRIx64 ": %s", target->id,
                             entry_id, strerror(-rc));
    }
    rc = target->ops->fsync(handle.obj);
    if (rc) {
        sfs_error_set(rc, "target %u: fsync chunk %016" PRIx64 ": %s", target->id, entry_id,
                      strerror(-rc));
    }
    sfs_chunk_fd_put(target, &handle);
    return rc;
}

int sfs_chunk_unlink(sfs_chunk_target_t *target, uint64_t entry_id)
{
    uint64_t length;
    int      rc;

    sfs_chunk_fd_forget(target, entry_id);
    rc = target->ops->unlink(target->store, entry_id, &length);
    if (rc == -ENOENT) {
        return 0;
    }
    if (rc) {
        return sfs_error_set(rc, "target %u: unlink chunk %016" PRIx64 ": %s", target->id, entry_id,
                             strerror(-rc));
    }
    __atomic_sub_fetch(&target->used_bytes, length, __ATOMIC_RELAXED);
    sfs_chunk_mark_room(target);
    return 0;
}

typedef struct sfs_chunk_entry {
    uint64_t id;
    uint64_t length;
} sfs_chunk_entry_t;

typedef struct sfs_chunk_found {
    uint64_t           after;
    sfs_chunk_entry_t *entries;
    size_t             count, capacity;
} sfs_chunk_found_t;

static int sfs_chunk_entry_cmp(const void *a, const void *b)
{
    const sfs_chunk_entry_t *x = a, *y = b;

    return x->id < y->id ? -1 : x->id > y->id;
}

static int sfs_chunk_collect(void *arg, uint64_t entry_id, uint64_t length)
{
    sfs_chunk_found_t *found = arg;

    if (entry_id <= found->after) {
        return 0;
    }
    if (found->count == found->capacity) {
        size_t             capacity = found->capacity ? found->capacity * 2 : 1024;
        sfs_chunk_entry_t *grown    = realloc(found->entries, capacity * sizeof(*grown));

        if (!grown) {
            return -ENOMEM;
        }
        found->entries  = grown;
        found->capacity = capacity;
    }
    found->entries[found->count].id       = entry_id;
    found->entries[found->count++].length = length;
    return 0;
}

int sfs_chunk_list(sfs_chunk_target_t *target, uint64_t after, uint32_t max, uint64_t *ids,
                   uint64_t *lengths, uint32_t *count_p)
{
    sfs_chunk_found_t found = {.after = after};
    int               rc;

    /* a full walk per page: simple, and fsck is not a hot path */
    rc = target->ops->list(target->store, sfs_chunk_collect, &found);
    if (rc) {
        free(found.entries);
        return rc == -ENOMEM ? rc
                             : sfs_error_set(rc, "target %u: cannot list the chunks in %s: %s",
                                             target->id, target->dir, strerror(-rc));
    }
    if (found.count) {
        qsort(found.entries, found.count, sizeof(*found.entries), sfs_chunk_entry_cmp);
    }
    *count_p = (uint32_t)(found.count < max ? found.count : max);
    for (uint32_t i = 0; i < *count_p; i++) {
        ids[i]     = found.entries[i].id;
        lengths[i] = found.entries[i].length;
    }
    free(found.entries);
    return 0;
}
