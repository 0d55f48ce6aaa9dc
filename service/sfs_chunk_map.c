/*
 * Mapped reads: a large read served from the page cache without a copy,
 * the chunk's pages mapped into the server and handed to the transport as
 * they are. A chunk never shrinks while a mapped read of it is in flight.
 */
#define SFS_LOG_FAC "chunk"
#include "sfs_chunk_store_internal.h"

#include "sfs_errno.h"
#include "sfs_log.h"

#include <inttypes.h>
#include <string.h>
#include <unistd.h>

/* A file must not shrink under a mapped read: the pages past the new end
 * would fault (SIGBUS) when the transport copies from them. Shrinking is
 * rare: it waits until the replies that map the file have gone (bounded
 * by the transport's own timeouts on a dead client) and truncates with
 * the cache locked, so that no new mapping sees the old length. */
int sfs_chunk_shrink(sfs_chunk_target_t *target, uint64_t entry_id, sfs_chunk_obj_t *obj,
                     uint64_t length)
{
    int slot, rc;

    pthread_mutex_lock(&target->fd_lock);
    slot = sfs_chunk_fd_find(target, entry_id);
    if (slot >= 0 && target->fds[slot].mapped > 0) {
        sfs_debug("target %u: shrinking chunk %016" PRIx64 " waits for %u mapped reads", target->id,
                  entry_id, target->fds[slot].mapped);
    }
    while ((slot = sfs_chunk_fd_find(target, entry_id)) >= 0 && target->fds[slot].mapped > 0) {
        pthread_cond_wait(&target->unmapped, &target->fd_lock);
    }
    rc = target->ops->truncate(obj, length);
    pthread_mutex_unlock(&target->fd_lock);
    return rc;
}

static void sfs_chunk_map_end(sfs_chunk_target_t *target, int slot)
{
    pthread_mutex_lock(&target->fd_lock);
    target->fds[slot].mapped--;
    pthread_cond_broadcast(&target->unmapped);
    pthread_mutex_unlock(&target->fd_lock);
}

/* [start, end) of the slot's file through its lasting mapping, made or
 * widened if no other mapped read uses it now (we are counted in `mapped`);
 * NULL if it cannot serve (then map the extent alone). The mapping may
 * reach past the end of the file: only bytes inside it are ever read, and
 * the file cannot shrink while a mapped read is in flight. */
static void *sfs_chunk_kept_map(sfs_chunk_target_t *target, int slot, uint64_t start, uint64_t end,
                                uint64_t file_length)
{
    sfs_chunk_fd_t *e    = &target->fds[slot];
    void           *addr = NULL;
    uint64_t        length;

    if (end > SFS_CHUNK_KEEP_MAP_MAX) {
        return NULL;
    }
    pthread_mutex_lock(&target->fd_lock);
    if (e->kept_map && end <= e->kept_length) {
        addr = (uint8_t *)e->kept_map + start;
    } else if (e->mapped == 1) { /* nobody else reads through the old one */
        length = (file_length + SFS_CHUNK_KEEP_MAP_ROUND - 1) / SFS_CHUNK_KEEP_MAP_ROUND *
                 SFS_CHUNK_KEEP_MAP_ROUND;
        if (length > SFS_CHUNK_KEEP_MAP_MAX) {
            length = SFS_CHUNK_KEEP_MAP_MAX;
        }
        if (e->kept_map && target->ops->unmap(e->kept_map, e->kept_length) != 0) {
            sfs_warn("target %u: munmap failed: %m", target->id);
        }
        if (target->ops->map(e->obj, 0, length, &e->kept_map) != 0) {
            e->kept_map    = NULL;
            e->kept_length = 0;
        } else {
            e->kept_length = length;
            addr           = (uint8_t *)e->kept_map + start;
        }
    }
    pthread_mutex_unlock(&target->fd_lock);
    return addr;
}

int sfs_chunk_read_map(sfs_chunk_target_t *target, uint64_t entry_id, const sfs_io_extent_t *extent,
                       uint32_t flags, sfs_chunk_map_t *map, uint64_t *length_p)
{
    sfs_chunk_handle_t handle;
    long               page  = sysconf(_SC_PAGESIZE);
    uint64_t           start = extent->chunk_offset & ~((uint64_t)page - 1);
    uint64_t           end   = extent->chunk_offset + extent->length;
    uint64_t           length;
    void              *addr;
    int                kept = 0;
    int                rc;

    memset(map, 0, sizeof(*map));
    if (target->bandwidth || extent->length == 0 || !target->ops->map) {
        return -EAGAIN;
    }
    rc = (flags & SFS_CHUNK_IO_NOWAIT) ? sfs_chunk_fd_get_cached(target, entry_id, &handle)
                                       : sfs_chunk_fd_get(target, entry_id, 0, &handle);
    if (rc) {
        return rc == -ENOENT ? -EAGAIN
                             : sfs_error_set(rc, "target %u: cannot open chunk %016" PRIx64 ": %s",
                                             target->id, entry_id, strerror(-rc));
    }
    /* only a cached file can be guarded against shrinking */
    if (handle.slot < 0) {
        sfs_chunk_fd_put(target, &handle);
        return -EAGAIN;
    }
    /* counted before the length is read: a shrink after this waits */
    pthread_mutex_lock(&target->fd_lock);
    target->fds[handle.slot].mapped++;
    pthread_mutex_unlock(&target->fd_lock);
    /* only bytes inside the file can be mapped (past its end: zeros) */
    addr = NULL;
    if (target->ops->size(handle.obj, &length) == 0 && length >= end) {
        addr = sfs_chunk_kept_map(target, handle.slot, start, end, length);
        kept = addr != NULL;
        if (!kept && target->ops->map(handle.obj, start, end - start, &addr) != 0) {
            addr = NULL;
        }
    }
    /* only pages in the page cache: the transport must never wait for
     * the disk (a read that needs the disk copies on a disk thread) */
    if (addr && !target->ops->resident(addr, end - start)) {
        if (!kept && target->ops->unmap(addr, end - start) != 0) {
            sfs_warn("target %u: munmap failed: %m", target->id);
        }
        addr = NULL;
    }
    if (!addr) {
        sfs_chunk_map_end(target, handle.slot);
        sfs_chunk_fd_put(target, &handle);
        return -EAGAIN;
    }
    /* the handle's reference keeps the slot (and its entry) until unmap */
    map->addr     = addr;
    map->length   = end - start;
    map->kept     = kept;
    map->data     = (uint8_t *)addr + (extent->chunk_offset - start);
    map->slot     = handle.slot;
    map->obj      = handle.obj;
    map->entry_id = entry_id;
    *length_p     = length;
    return 0;
}

void sfs_chunk_unmap(sfs_chunk_target_t *target, sfs_chunk_map_t *map)
{
    sfs_chunk_handle_t handle = {.obj = map->obj, .slot = map->slot};

    if (!map->addr) {
        return;
    }
    if (!map->kept && target->ops->unmap(map->addr, map->length) != 0) {
        sfs_warn("target %u: munmap of chunk %016" PRIx64 " failed: %m", target->id, map->entry_id);
    }
    sfs_chunk_map_end(target, map->slot);
    sfs_chunk_fd_put(target, &handle);
    map->addr = NULL;
}
