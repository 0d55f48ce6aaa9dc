#include "sfs_layout.h"

#include <errno.h>

int sfs_layout_check_chunk_size(uint64_t chunk_size)
{
    if (chunk_size < SFS_CHUNK_SIZE_MIN || chunk_size > SFS_CHUNK_SIZE_MAX ||
        (chunk_size & (chunk_size - 1)) != 0) {
        return -EINVAL;
    }
    return 0;
}

int sfs_pattern_validate(const sfs_pattern_t *pattern)
{
    if ((pattern->type != SFS_PATTERN_RAID0 && pattern->type != SFS_PATTERN_MIRROR) ||
        sfs_layout_check_chunk_size(pattern->chunk_size) || pattern->stripe_count == 0 ||
        pattern->stripe_count > SFS_STRIPE_COUNT_MAX) {
        return -EINVAL;
    }
    for (uint32_t i = 0; i < pattern->stripe_count; i++) {
        for (uint32_t j = i + 1; j < pattern->stripe_count; j++) {
            if (pattern->targets[i] == pattern->targets[j]) {
                return -EINVAL;
            }
        }
    }
    return 0;
}

uint32_t sfs_layout_target_index(const sfs_pattern_t *pattern, uint64_t file_offset)
{
    uint64_t stripe = file_offset / pattern->chunk_size;

    return (uint32_t)(stripe % pattern->stripe_count);
}

uint64_t sfs_layout_chunk_file_offset(const sfs_pattern_t *pattern, uint64_t file_offset)
{
    uint64_t stripe = file_offset / pattern->chunk_size;

    return (stripe / pattern->stripe_count) * pattern->chunk_size +
           file_offset % pattern->chunk_size;
}

uint64_t sfs_layout_file_offset(const sfs_pattern_t *pattern, uint32_t target_index,
                                uint64_t chunk_file_offset)
{
    uint64_t row    = chunk_file_offset / pattern->chunk_size;
    uint64_t stripe = row * pattern->stripe_count + target_index;

    return stripe * pattern->chunk_size + chunk_file_offset % pattern->chunk_size;
}

int sfs_layout_map(const sfs_pattern_t *pattern, uint64_t file_offset, uint64_t length,
                   sfs_layout_extent_cb cb, void *arg)
{
    uint64_t offset = file_offset;
    uint64_t end    = file_offset + length;

    while (offset < end) {
        uint64_t            in_chunk = offset % pattern->chunk_size;
        uint64_t            piece    = pattern->chunk_size - in_chunk;
        sfs_layout_extent_t extent;
        int                 rc;

        if (piece > end - offset) {
            piece = end - offset;
        }
        extent.target_index      = sfs_layout_target_index(pattern, offset);
        extent.file_offset       = offset;
        extent.chunk_file_offset = sfs_layout_chunk_file_offset(pattern, offset);
        extent.length            = piece;
        rc                       = cb(&extent, arg);
        if (rc != 0) {
            return rc;
        }
        offset += piece;
    }
    return 0;
}

uint64_t sfs_layout_file_size(const sfs_pattern_t *pattern, const uint64_t *chunk_lengths)
{
    uint64_t size = 0;

    for (uint32_t t = 0; t < pattern->stripe_count; t++) {
        uint64_t end;

        if (chunk_lengths[t] == 0) {
            continue;
        }
        end = sfs_layout_file_offset(pattern, t, chunk_lengths[t] - 1) + 1;
        if (end > size) {
            size = end;
        }
    }
    return size;
}

uint64_t sfs_layout_chunk_length_for_size(const sfs_pattern_t *pattern, uint32_t target_index,
                                          uint64_t file_size)
{
    uint64_t c           = pattern->chunk_size;
    uint64_t n           = pattern->stripe_count;
    uint64_t full_chunks = file_size / c;
    uint64_t remainder   = file_size % c;
    /* whole chunks of this target among stripes 0 .. full_chunks-1 */
    uint64_t length = (full_chunks / n + (target_index < full_chunks % n ? 1 : 0)) * c;

    if (remainder != 0 && target_index == full_chunks % n) {
        length += remainder;
    }
    return length;
}

uint32_t sfs_layout_last_byte_target(const sfs_pattern_t *pattern, uint64_t file_size)
{
    return file_size == 0 ? 0 : sfs_layout_target_index(pattern, file_size - 1);
}
