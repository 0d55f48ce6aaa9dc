/*
 * The in-memory chunk backend (sfs_chunk_backend_mem), for unit tests:
 * select it with sfs_chunk_target_open_params (SFS_CHUNK_TARGET_PARAM_BACKEND;
 * SFS_CHUNK_TARGET_PARAM_DEVICE_SIZE sets the emulated device's size, past
 * which writes fail with ENOSPC). The functions below take the backend's
 * state, sfs_chunk_target_backend_state(target). Built into test programs
 * only.
 */
#ifndef SFS_CHUNK_MEM_H
#define SFS_CHUNK_MEM_H

#include "sfs_chunk_backend.h"

#include <stdint.h>

/* The backend's operations, for counting calls and injecting errors. */
typedef enum sfs_chunk_mem_op {
    SFS_CHUNK_MEM_OPEN,
    SFS_CHUNK_MEM_PREAD,
    SFS_CHUNK_MEM_PREAD_NOWAIT,
    SFS_CHUNK_MEM_PWRITE,
    SFS_CHUNK_MEM_PWRITE_NOWAIT,
    SFS_CHUNK_MEM_TRUNCATE,
    SFS_CHUNK_MEM_FSYNC,
    SFS_CHUNK_MEM_STAT,
    SFS_CHUNK_MEM_UNLINK,
    SFS_CHUNK_MEM_LIST,
    SFS_CHUNK_MEM_SPACE,
    SFS_CHUNK_MEM_SYNC,
    SFS_CHUNK_MEM_OPS
} sfs_chunk_mem_op_t;

/* The next `times` calls of `op` fail with `rc` (a negative errno). */
void sfs_chunk_mem_fail(void *state, sfs_chunk_mem_op_t op, int rc, uint32_t times);
/* How many times `op` was called (failed calls included). */
uint64_t sfs_chunk_mem_calls(void *state, sfs_chunk_mem_op_t op);
/* Bytes the chunks hold now. */
uint64_t sfs_chunk_mem_used(void *state);
/* A power loss: every chunk goes back to what was last made durable
 * (fsync of the chunk, or sync of the target), in place, so that chunks
 * the store keeps open read so too; chunks never made durable become empty
 * and vanish. Removals count as done. */
int sfs_chunk_mem_crash(void *state);

#endif
