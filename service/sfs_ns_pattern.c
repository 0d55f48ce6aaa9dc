/*
 * The rules a stripe pattern asked for (by setpattern, or by a create's
 * striping hints) must follow, each refusal saying which rule was broken:
 * a user who asked for 4 KiB chunks needs "too small", not "not a power of
 * two".
 */
#define SFS_LOG_FAC "meta"
#include "sfs_ns_pattern.h"

#include "sfs_errno.h"
#include "sfs_layout.h"

int sfs_ns_check_chunk_size(const char *path, uint64_t chunk_size)
{
    if (chunk_size < SFS_CHUNK_SIZE_MIN) {
        return sfs_error_set(-EINVAL, "'%.200s': chunk size %lu is too small (minimum 64 KiB)",
                             path, (unsigned long)chunk_size);
    }
    if (chunk_size > SFS_CHUNK_SIZE_MAX) {
        return sfs_error_set(-EINVAL, "'%.200s': chunk size %lu is too large (maximum 4 GiB)", path,
                             (unsigned long)chunk_size);
    }
    if ((chunk_size & (chunk_size - 1)) != 0) {
        return sfs_error_set(-EINVAL,
                             "'%.200s': chunk size %lu is not a power of two (like 64 KiB, "
                             "512 KiB, 1 MiB)",
                             path, (unsigned long)chunk_size);
    }
    /* the layout's own rule, should it ever grow another */
    if (sfs_layout_check_chunk_size(chunk_size) != 0) {
        return sfs_error_set(-EINVAL, "'%.200s': chunk size %lu is not allowed", path,
                             (unsigned long)chunk_size);
    }
    return 0;
}

int sfs_ns_check_stripe_count(const char *path, uint32_t stripe_count)
{
    if (stripe_count == 0 || stripe_count > SFS_STRIPE_COUNT_MAX) {
        return sfs_error_set(-EINVAL, "'%.200s': stripe count %u out of range 1..%u", path,
                             stripe_count, SFS_STRIPE_COUNT_MAX);
    }
    return 0;
}
