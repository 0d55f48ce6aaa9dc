/*
 * Where a storage target keeps its chunk files: an ops table the chunk store
 * (sfs_chunk_store.c) calls for every byte it stores. The store keeps what
 * every backend shares: the target's identity, its capacity limit and used
 * bytes, the emulated disk bandwidth, the cache of open chunks (and the
 * rule that a chunk never shrinks under a mapped read), the extent loops
 * (holes read as zeros) and the error messages naming the target and chunk.
 *
 * Backends: posix (sfs_chunk_posix.c, files under <target dir>/chunks/, what
 * the server uses) and mem (sfs_chunk_mem.c, in memory, for unit tests; it
 * is built into the test programs, not the server).
 *
 * Every op returns 0 (or a byte count) or a negative errno and records no
 * detail: the store names the target and chunk. Ops marked optional may be
 * NULL. All ops may be called from several threads at once; those on one
 * open chunk (sfs_chunk_obj_t) too.
 */
#ifndef SFS_CHUNK_BACKEND_H
#define SFS_CHUNK_BACKEND_H

#include "sfs_proto.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One open chunk of a backend (its own layout; opaque to the store). A
 * chunk unlinked while open stays readable and writable until closed, as
 * a POSIX file does. */
typedef struct sfs_chunk_obj sfs_chunk_obj_t;

/* What a backend is attached with (sfs_chunk_target_open_params). */
typedef struct sfs_chunk_backend_params {
    const char *dir;          /* the target's directory (posix: made if missing) */
    uint32_t    target_id;    /* posix: checked against <dir>/target.id, or written there */
    const char *cluster_name; /* ... and recorded with it */
    uint64_t    device_size;  /* mem: bytes the emulated device holds (0 = no limit) */
} sfs_chunk_backend_params_t;

/* Called by `list` once per chunk; a non-zero return stops the walk and is
 * returned by `list`. */
typedef int (*sfs_chunk_list_cb)(void *arg, uint64_t entry_id, uint64_t length);

typedef struct sfs_chunk_backend_ops {
    const char *name;
    /* The target's store; its error detail is set (a directory to name). */
    int (*attach)(const sfs_chunk_backend_params_t *params, void **state_p);
    void (*detach)(void *state);
    /* Size of the device and its free bytes (statvfs). */
    int (*space)(void *state, uint64_t *capacity_p, uint64_t *free_p);
    /* Make everything written durable (syncfs). */
    int (*sync)(void *state);

    /* Open a chunk read-write; -ENOENT if it does not exist and !create. */
    int (*open)(void *state, uint64_t entry_id, int create, sfs_chunk_obj_t **obj_p);
    void (*close)(void *state, sfs_chunk_obj_t *obj);
    /* Bytes moved (a read past the end moves 0), or a negative errno; with
     * `nowait`, -EAGAIN where the disk would be waited for and -EOPNOTSUPP
     * where the device cannot tell. */
    ssize_t (*pread)(sfs_chunk_obj_t *obj, void *buf, size_t length, uint64_t offset, int nowait);
    ssize_t (*pwrite)(sfs_chunk_obj_t *obj, const void *buf, size_t length, uint64_t offset,
                      int nowait);
    int (*size)(sfs_chunk_obj_t *obj, uint64_t *length_p);
    int (*truncate)(sfs_chunk_obj_t *obj, uint64_t length);
    /* Make the chunk's data durable (fdatasync). */
    int (*fsync)(sfs_chunk_obj_t *obj);
    /* Optional hint: start writing these just-written ranges to the device. */
    void (*writeback)(void *state, sfs_chunk_obj_t *obj, const sfs_io_extent_t *extents,
                      uint32_t count);

    /* Length of a chunk that is not open; -ENOENT if there is none. */
    int (*stat)(void *state, uint64_t entry_id, uint64_t *length_p);
    /* Remove a chunk, giving the length it had; -ENOENT if there was none. */
    int (*unlink)(void *state, uint64_t entry_id, uint64_t *length_p);
    /* Every chunk, in no particular order. */
    int (*list)(void *state, sfs_chunk_list_cb cb, void *arg);

    /* Optional: the chunk as a read-only file descriptor the caller closes
     * (handed to a client on the same host). */
    int (*open_fd)(void *state, uint64_t entry_id);
    /* Optional mapped reads: map [offset, offset + length) of an open chunk
     * read-only (offset page aligned; the mapping may reach past the end,
     * where it is never read); unmap; whether its pages are in memory now. */
    int (*map)(sfs_chunk_obj_t *obj, uint64_t offset, uint64_t length, void **addr_p);
    int (*unmap)(void *addr, uint64_t length);
    int (*resident)(void *addr, uint64_t length);

    /* Optional: the file system this target's chunks belong to, as
     * recorded with set_fs_id (0: none recorded; -EBADMSG: a record that
     * cannot be read as one), and recording it durably. Without them a
     * backend records nothing (its chunks live no longer than it). */
    int (*fs_id)(void *state, uint64_t *fs_id_p);
    int (*set_fs_id)(void *state, uint64_t fs_id);
} sfs_chunk_backend_ops_t;

/* Chunk files under <dir>/chunks/<id % 256>/<id>. */
extern const sfs_chunk_backend_ops_t sfs_chunk_backend_posix;
/* Without attaching, changing nothing: the file system id recorded in the
 * posix target directory `dir` (0: none, or no such directory; -EBADMSG:
 * unreadable) and whether it holds a chunk file (*chunks_p 1, else 0). */
int sfs_chunk_posix_survey(const char *dir, uint64_t *fs_id_p, uint64_t *chunks_p);
/* In memory, for unit tests (sfs_chunk_mem.h); not in the server. */
extern const sfs_chunk_backend_ops_t sfs_chunk_backend_mem;

#endif
