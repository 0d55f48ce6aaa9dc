/*
 * The chunk store's cache of open chunks: a request on a chunk opened
 * lately costs no open/close, and several I/O threads use one open chunk at
 * once. A slot is reused least recently used first; an unlinked chunk's
 * slot is closed when its last user is done.
 */
#define SFS_LOG_FAC "chunk"
#include "sfs_chunk_store_internal.h"

#include "sfs_errno.h"
#include "sfs_log.h"

#include <inttypes.h>

/* Close a cache slot's file and drop its lasting mapping (fd_lock held, or
 * the target going away; nobody uses the slot). */
void sfs_chunk_fd_close_slot(sfs_chunk_target_t *target, sfs_chunk_fd_t *e)
{
    if (e->kept_map && target->ops->unmap(e->kept_map, e->kept_length) != 0) {
        sfs_warn("munmap of chunk %016" PRIx64 " failed: %m", e->entry_id);
    }
    e->kept_map    = NULL;
    e->kept_length = 0;
    if (e->obj) {
        target->ops->close(target->store, e->obj);
    }
    e->obj = NULL;
}

int sfs_chunk_fd_find(sfs_chunk_target_t *target, uint64_t entry_id)
{
    for (int i = 0; i < SFS_CHUNK_FD_CACHE; i++) {
        if (target->fds[i].obj && target->fds[i].entry_id == entry_id && !target->fds[i].doomed) {
            return i;
        }
    }
    return -1;
}

/* Take a reference on cache slot `slot` (fd_lock held). */
static void sfs_chunk_fd_use(sfs_chunk_target_t *target, int slot, sfs_chunk_handle_t *handle)
{
    target->fds[slot].users++;
    target->fds[slot].last_use = ++target->fd_clock;
    handle->obj                = target->fds[slot].obj;
    handle->slot               = slot;
}

/* The chunk file of `entry_id` if it is open in the cache; -EAGAIN if not
 * (opening it could wait for the disk). */
int sfs_chunk_fd_get_cached(sfs_chunk_target_t *target, uint64_t entry_id,
                            sfs_chunk_handle_t *handle)
{
    int slot;

    pthread_mutex_lock(&target->fd_lock);
    slot = sfs_chunk_fd_find(target, entry_id);
    if (slot >= 0) {
        sfs_chunk_fd_use(target, slot, handle);
    }
    pthread_mutex_unlock(&target->fd_lock);
    return slot >= 0 ? 0 : -EAGAIN;
}

/* The chunk file of `entry_id`, open read-write (created if `create`), from
 * the cache when it is there. -ENOENT when it does not exist and !create. */
int sfs_chunk_fd_get(sfs_chunk_target_t *target, uint64_t entry_id, int create,
                     sfs_chunk_handle_t *handle)
{
    sfs_chunk_obj_t *obj;
    int              slot, rc, victim = -1;

    if (sfs_chunk_fd_get_cached(target, entry_id, handle) == 0) {
        return 0;
    }
    rc = target->ops->open(target->store, entry_id, create, &obj);
    if (rc) {
        return rc;
    }
    pthread_mutex_lock(&target->fd_lock);
    slot = sfs_chunk_fd_find(target, entry_id);
    if (slot >= 0) { /* another thread opened it meanwhile */
        sfs_chunk_fd_use(target, slot, handle);
        pthread_mutex_unlock(&target->fd_lock);
        target->ops->close(target->store, obj);
        return 0;
    }
    for (int i = 0; i < SFS_CHUNK_FD_CACHE; i++) {
        sfs_chunk_fd_t *e = &target->fds[i];

        if (!e->obj) {
            victim = i;
            break;
        }
        if (e->users == 0 && (victim < 0 || e->last_use < target->fds[victim].last_use)) {
            victim = i;
        }
    }
    handle->obj  = obj;
    handle->slot = victim;
    if (victim >= 0) {
        sfs_chunk_fd_t *e = &target->fds[victim];

        sfs_chunk_fd_close_slot(target, e);
        e->entry_id = entry_id;
        e->obj      = obj;
        e->users    = 1;
        e->doomed   = 0;
        e->mapped   = 0;
        e->last_use = ++target->fd_clock;
    }
    pthread_mutex_unlock(&target->fd_lock);
    return 0;
}

void sfs_chunk_fd_put(sfs_chunk_target_t *target, sfs_chunk_handle_t *handle)
{
    if (handle->slot < 0) {
        target->ops->close(target->store, handle->obj);
        return;
    }
    pthread_mutex_lock(&target->fd_lock);
    if (--target->fds[handle->slot].users == 0 && target->fds[handle->slot].doomed) {
        sfs_chunk_fd_close_slot(target, &target->fds[handle->slot]);
    }
    pthread_mutex_unlock(&target->fd_lock);
}

/* The file is going away: drop it from the cache (at once, or when the
 * last request on it is done). */
void sfs_chunk_fd_forget(sfs_chunk_target_t *target, uint64_t entry_id)
{
    int slot;

    pthread_mutex_lock(&target->fd_lock);
    slot = sfs_chunk_fd_find(target, entry_id);
    if (slot >= 0) {
        if (target->fds[slot].users == 0) {
            sfs_chunk_fd_close_slot(target, &target->fds[slot]);
        } else {
            target->fds[slot].doomed = 1;
        }
    }
    pthread_mutex_unlock(&target->fd_lock);
}
