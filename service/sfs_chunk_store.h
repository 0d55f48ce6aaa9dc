/*
 * Chunk files of one storage target: one chunk per (file, target), named by
 * the file's entry id, kept by a backend (sfs_chunk_backend.h): by default
 * posix, files under <target dir>/chunks/<id % 256>/<id>, with a
 * <target dir>/target.id marker that ties the directory to its target id so
 * a misconfigured host cannot write into another target's directory.
 *
 * All calls are thread-safe. They are blocking disk I/O, run on the storage
 * I/O threads, except sfs_chunk_read_map, sfs_chunk_unmap and reads and
 * writes with SFS_CHUNK_IO_NOWAIT, which never wait for the disk and may
 * run on the progress thread.
 */
#ifndef SFS_CHUNK_STORE_H
#define SFS_CHUNK_STORE_H

#include "sfs_chunk_backend.h"
#include "sfs_config.h"
#include "sfs_proto.h"

#include <stdint.h>

typedef struct sfs_chunk_target sfs_chunk_target_t;

/* Bits of sfs_chunk_target_params_t.field_mask (never renumbered). */
enum {
    SFS_CHUNK_TARGET_PARAM_BACKEND     = 1u << 0,
    SFS_CHUNK_TARGET_PARAM_DEVICE_SIZE = 1u << 1,
};

typedef struct sfs_chunk_target_params {
    uint64_t                       field_mask;
    const sfs_chunk_backend_ops_t *backend;     /* default &sfs_chunk_backend_posix */
    uint64_t                       device_size; /* the mem backend's device (default: no limit) */
} sfs_chunk_target_params_t;

/* Open (creating if needed) the target's directory, with the posix backend. */
int sfs_chunk_target_open(const sfs_config_target_t *config, const char *cluster_name,
                          sfs_chunk_target_t **target_p);
/* The same with a backend of choice (`params` may be NULL). */
int      sfs_chunk_target_open_params(const sfs_config_target_t *config, const char *cluster_name,
                                      const sfs_chunk_target_params_t *params,
                                      sfs_chunk_target_t             **target_p);
void     sfs_chunk_target_close(sfs_chunk_target_t *target);
uint32_t sfs_chunk_target_id(const sfs_chunk_target_t *target);
const char *sfs_chunk_target_dir(const sfs_chunk_target_t *target);
uint64_t    sfs_chunk_target_bandwidth(const sfs_chunk_target_t *target);
/* Writes of at least `min_bytes` start their writeback at once (0: none
 * do; the kernel writes back when its dirty thresholds say). Default
 * SFS_CHUNK_EARLY_WRITEBACK_DEFAULT. */
#define SFS_CHUNK_EARLY_WRITEBACK_DEFAULT (256 * 1024)
void sfs_chunk_target_set_early_writeback(sfs_chunk_target_t *target, uint64_t min_bytes);

/* Capacity (the config's limit or the file system's size) and free bytes:
 * none once a write answered ENOSPC, until a chunk file shrinks or goes
 * (the metadata server then places no new file here, docs/capacity.md). */
int sfs_chunk_target_space(sfs_chunk_target_t *target, uint64_t *capacity_p, uint64_t *free_p);
/* Whether the last sfs_chunk_target_space is out of date enough that
 * management should hear now, not at the next heartbeat: the target
 * answered ENOSPC since, or its chunk files grew by 1% of its capacity
 * (new files are placed by free space, docs/capacity.md). */
int sfs_chunk_target_has_news(sfs_chunk_target_t *target);
/* Flush everything written to this target to disk (syncfs). */
int sfs_chunk_target_sync(sfs_chunk_target_t *target);
/* Which file system the chunks here belong to: the id recorded with
 * sfs_chunk_target_set_fs_id (0: none yet, or a backend that records none)
 * and how many chunk files the target held when it was opened. A record
 * that cannot be read is an error naming the target and its directory. */
int sfs_chunk_target_fs_id(sfs_chunk_target_t *target, uint64_t *fs_id_p, uint64_t *chunks_p);
/* The same for a target not opened, read-only (its directory may not
 * exist): *chunks_p is 1 if it holds any chunk file, else 0. */
int sfs_chunk_target_survey(const sfs_config_target_t *config, uint64_t *fs_id_p,
                            uint64_t *chunks_p);
/* Record the file system's id, durably (docs/faults.md, "A lost metadata
 * store"). */
int sfs_chunk_target_set_fs_id(sfs_chunk_target_t *target, uint64_t fs_id);
/* The backend's state (what its attach made), for tests of a backend. */
void *sfs_chunk_target_backend_state(sfs_chunk_target_t *target);

/* Flags of sfs_chunk_write and sfs_chunk_read. */
enum {
    SFS_CHUNK_IO_SYNC = 1, /* write: fdatasync before returning */
    /* never wait for the disk: only a chunk file already open, only the page
     * cache (RWF_NOWAIT); -EAGAIN, with nothing reported, where it would
     * wait: do the same call again without the flag on a disk thread */
    SFS_CHUNK_IO_NOWAIT = 2,
};

/* Write `data` (the extents' bytes back to back) at the extents of the chunk
 * file of `entry_id`; *length_p gets the chunk file's length afterwards. */
int sfs_chunk_write(sfs_chunk_target_t *target, uint64_t entry_id, const sfs_io_extent_t *extents,
                    uint32_t count, const void *data, unsigned flags, uint64_t *length_p);
/* Read the extents into `buf` back to back; bytes past the end of the chunk
 * file (holes, or no file) read as zeros. *length_p gets the chunk length. */
int sfs_chunk_read(sfs_chunk_target_t *target, uint64_t entry_id, const sfs_io_extent_t *extents,
                   uint32_t count, void *buf, unsigned flags, uint64_t *length_p);
/* A read served from the page cache without a copy: the chunk file's
 * pages mapped into the server, handed to the transport as they are. */
typedef struct sfs_chunk_map {
    void    *addr; /* the mapping (page aligned) */
    uint64_t length;
    int      kept; /* the open file's lasting mapping: not unmapped after use */
    void    *data; /* the extent's first byte */
    int      slot; /* open-chunk cache slot held while mapped */
    void    *obj;  /* the backend's open chunk (sfs_chunk_obj_t) */
    uint64_t entry_id;
} sfs_chunk_map_t;

/* Map one extent of the chunk file for reading; *length_p gets the chunk
 * length. -EAGAIN when the extent cannot be mapped (it reaches past the
 * end of the file, no file, a throttled target, no cache slot, a backend
 * that cannot map, or some of its pages are not in the page cache): read
 * it with sfs_chunk_read then.
 * Never waits for the disk for the data; opening a chunk file that is not
 * open yet may, so with SFS_CHUNK_IO_NOWAIT in flags it only uses an open
 * one (-EAGAIN otherwise), and the progress thread may call it. The file
 * cannot shrink until sfs_chunk_unmap, which any thread may call. */
int sfs_chunk_read_map(sfs_chunk_target_t *target, uint64_t entry_id, const sfs_io_extent_t *extent,
                       uint32_t flags, sfs_chunk_map_t *map, uint64_t *length_p);
void sfs_chunk_unmap(sfs_chunk_target_t *target, sfs_chunk_map_t *map);

/* Length of the chunk file (0 if there is none). */
int sfs_chunk_stat(sfs_chunk_target_t *target, uint64_t entry_id, uint64_t *length_p);
/* The chunk file opened read-only (a new descriptor the caller closes), or
 * -ENOENT if it does not exist, -EOPNOTSUPP if the backend keeps no files,
 * or another negative errno. */
int sfs_chunk_open_readonly(sfs_chunk_target_t *target, uint64_t entry_id);
/* SFS_TRUNCATE_EXACT or SFS_TRUNCATE_SHRINK_ONLY. */
int sfs_chunk_truncate(sfs_chunk_target_t *target, uint64_t entry_id, uint64_t length,
                       uint32_t mode);
int sfs_chunk_fsync(sfs_chunk_target_t *target, uint64_t entry_id);
/* Remove the chunk file; 0 also when there was none. */
int sfs_chunk_unlink(sfs_chunk_target_t *target, uint64_t entry_id);

/* Chunk files in entry id order after `after`: up to `max` (id, length)
 * pairs; *count_p gets how many. For the consistency checker. */
int sfs_chunk_list(sfs_chunk_target_t *target, uint64_t after, uint32_t max, uint64_t *ids,
                   uint64_t *lengths, uint32_t *count_p);

#endif
