/*
 * What the pieces of the chunk store share; not for other modules (they
 * use sfs_chunk_store.h).
 *
 *   sfs_chunk_store.c  the target, capacity and bandwidth, the extent loops
 *   sfs_chunk_cache.c  the cache of open chunks shared by the I/O threads
 *   sfs_chunk_map.c    mapped reads, and shrinking only when none is in flight
 *   sfs_chunk_posix.c  the posix backend (sfs_chunk_backend.h)
 */
#ifndef SFS_CHUNK_STORE_INTERNAL_H
#define SFS_CHUNK_STORE_INTERNAL_H

#include "sfs_chunk_store.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>

#define SFS_CHUNK_FD_CACHE 128 /* open chunk files kept per target */
/* An open chunk file keeps one mapping of its first bytes for large reads,
 * so that reading it again costs no mmap, page faults and munmap (with its
 * TLB shootdown) per request: a window of the file's length rounded up to
 * this, at most SFS_CHUNK_KEEP_MAP_MAX. */
#define SFS_CHUNK_KEEP_MAP_ROUND (64ull << 20)
#define SFS_CHUNK_KEEP_MAP_MAX   (1ull << 30)

/* An open chunk file kept for the next request on it: small I/O then costs
 * no open/close. Slots are used by several I/O threads at once. */
typedef struct sfs_chunk_fd {
    uint64_t         entry_id;
    sfs_chunk_obj_t *obj;      /* NULL: empty slot */
    uint32_t         users;    /* requests using it now */
    int              doomed;   /* unlinked: close when the last user is done */
    uint32_t         mapped;   /* mapped reads in flight (see sfs_chunk_read_map) */
    uint64_t         last_use; /* for LRU eviction */
    void            *kept_map; /* the lasting mapping of [0, kept_length), or NULL */
    uint64_t         kept_length;
} sfs_chunk_fd_t;

/* What an I/O request holds while it uses a chunk file. */
typedef struct sfs_chunk_handle {
    sfs_chunk_obj_t *obj;
    int              slot; /* -1: not cached, close after use */
} sfs_chunk_handle_t;

struct sfs_chunk_target {
    uint32_t                       id;
    char                           dir[PATH_MAX];
    const sfs_chunk_backend_ops_t *ops;
    void                          *store; /* the backend's state */
    uint64_t                       capacity_limit;
    uint64_t                       bandwidth;
    /* writes at least this large start their writeback at once (not
     * waiting for the kernel's dirty thresholds), so that the disk works
     * while the client still sends; 0: never */
    uint64_t early_writeback_min;
    uint64_t used_bytes;      /* atomic: bytes in chunk files */
    uint64_t chunks_at_open;  /* chunk files there were when it was opened */
    int      no_nowait_write; /* the device refused RWF_NOWAIT writes */
    /* atomic, for the heartbeat (sfs_chunk_target_has_news): */
    int             answered_enospc;    /* reported with no free space until a chunk shrinks */
    int             reported_enospc;    /* ...and the last report said so */
    uint64_t        grown_since_report; /* bytes the chunk files grew by since the last report */
    uint64_t        reported_capacity;  /* the last report's */
    pthread_mutex_t throttle_lock;
    uint64_t        disk_free_at_ns; /* emulated disk: busy until then */
    pthread_mutex_t fd_lock;
    pthread_cond_t  unmapped; /* a mapped read ended */
    uint64_t        fd_clock;
    sfs_chunk_fd_t  fds[SFS_CHUNK_FD_CACHE];
};

/* The open-chunk cache (sfs_chunk_cache.c). The cached chunk of `entry_id`
 * (fd_lock held), or -1. */
int sfs_chunk_fd_find(sfs_chunk_target_t *target, uint64_t entry_id);
/* The chunk of `entry_id` if it is open in the cache; -EAGAIN if not
 * (opening it could wait for the disk). */
int sfs_chunk_fd_get_cached(sfs_chunk_target_t *target, uint64_t entry_id,
                            sfs_chunk_handle_t *handle);
/* The chunk of `entry_id`, open read-write (created if `create`), from the
 * cache when it is there. -ENOENT when it does not exist and !create. */
int  sfs_chunk_fd_get(sfs_chunk_target_t *target, uint64_t entry_id, int create,
                      sfs_chunk_handle_t *handle);
void sfs_chunk_fd_put(sfs_chunk_target_t *target, sfs_chunk_handle_t *handle);
/* The chunk is going away: drop it from the cache (at once, or when the
 * last request on it is done). */
void sfs_chunk_fd_forget(sfs_chunk_target_t *target, uint64_t entry_id);
/* Close a slot's chunk and its lasting mapping (fd_lock held, or the
 * target going away; nobody uses the slot). */
void sfs_chunk_fd_close_slot(sfs_chunk_target_t *target, sfs_chunk_fd_t *e);

/* Truncate an open chunk to a shorter `length` once no mapped read of it
 * is in flight (sfs_chunk_map.c). */
int sfs_chunk_shrink(sfs_chunk_target_t *target, uint64_t entry_id, sfs_chunk_obj_t *obj,
                     uint64_t length);

#endif
