/*
 * Stripe layout math (RAID0). Pure functions: no I/O, no UCX, no MPI.
 *
 * A file with chunk size c striped over n targets stores file offset o in
 * stripe s = o / c, on target index t = s % n, at offset
 * (s / n) * c + o % c of that target's chunk file. The file size is derived
 * from the chunk file lengths; it is never stored on the metadata server.
 */
#ifndef SFS_LAYOUT_H
#define SFS_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define SFS_PATTERN_RAID0 1u
/* Buddy mirroring: striped as RAID0 over mirror groups; targets[] holds each
 * group's primary and every chunk file also lives, byte for byte, on the
 * group's secondary (which the config's mirror groups name). The layout
 * math is RAID0's. */
#define SFS_PATTERN_MIRROR 2u

#define SFS_CHUNK_SIZE_MIN       (64ull * 1024)
#define SFS_CHUNK_SIZE_MAX       (4ull * 1024 * 1024 * 1024)
#define SFS_CHUNK_SIZE_DEFAULT   (512ull * 1024)
#define SFS_STRIPE_COUNT_DEFAULT 4u
#define SFS_STRIPE_COUNT_MAX     128u

/* A file's stripe pattern: chunk size, and the ordered list of the targets
 * it is striped over (target ids as in the config, e.g. 101). */
typedef struct sfs_pattern {
    uint32_t type;         /* SFS_PATTERN_RAID0 or SFS_PATTERN_MIRROR */
    uint32_t stripe_count; /* number of entries used in targets[] */
    uint64_t chunk_size;   /* power of two, SFS_CHUNK_SIZE_MIN..MAX */
    uint32_t targets[SFS_STRIPE_COUNT_MAX];
} sfs_pattern_t;

/* One contiguous piece of a file range that lives in one chunk file. */
typedef struct sfs_layout_extent {
    uint32_t target_index;      /* index into pattern->targets */
    uint64_t file_offset;       /* offset in the file */
    uint64_t chunk_file_offset; /* offset in that target's chunk file */
    uint64_t length;
} sfs_layout_extent_t;

/* Return 0 if the chunk size is a power of two in range, else -EINVAL. */
int sfs_layout_check_chunk_size(uint64_t chunk_size);

/* Check a full pattern: type, chunk size, 1..MAX targets, no target twice.
 * Returns 0 or -EINVAL. */
int sfs_pattern_validate(const sfs_pattern_t *pattern);

/* Target index holding file offset `file_offset`. */
uint32_t sfs_layout_target_index(const sfs_pattern_t *pattern, uint64_t file_offset);

/* Offset within its target's chunk file of file offset `file_offset`. */
uint64_t sfs_layout_chunk_file_offset(const sfs_pattern_t *pattern, uint64_t file_offset);

/* Inverse of the above: the file offset stored at `chunk_file_offset` of the
 * chunk file of target index `target_index`. */
uint64_t sfs_layout_file_offset(const sfs_pattern_t *pattern, uint32_t target_index,
                                uint64_t chunk_file_offset);

/* Split the file range [file_offset, file_offset + length) into per-chunk
 * extents in file order. Calls `cb` once per extent; stops and returns the
 * callback's value if it is non-zero. */
typedef int (*sfs_layout_extent_cb)(const sfs_layout_extent_t *extent, void *arg);
int sfs_layout_map(const sfs_pattern_t *pattern, uint64_t file_offset, uint64_t length,
                   sfs_layout_extent_cb cb, void *arg);

/* File size implied by chunk file lengths (one per target index;
 * chunk_lengths[i] is the length of the chunk file of targets[i], 0 if it
 * does not exist). */
uint64_t sfs_layout_file_size(const sfs_pattern_t *pattern, const uint64_t *chunk_lengths);

/* Length the chunk file of `target_index` has when the file is exactly
 * `file_size` bytes long and dense. */
uint64_t sfs_layout_chunk_length_for_size(const sfs_pattern_t *pattern, uint32_t target_index,
                                          uint64_t file_size);

/* Target index that holds the last byte of a file of `file_size` bytes
 * (meaningless for size 0). */
uint32_t sfs_layout_last_byte_target(const sfs_pattern_t *pattern, uint64_t file_size);

#endif
