/*
 * Checks of a stripe pattern a client asks for (sfs_ns_create,
 * sfs_ns_setpattern). Each returns 0, or -EINVAL with a detail that names
 * `path` and says what is wrong: too small, too large, not a power of two,
 * out of range. Pure: no store, no I/O.
 */
#ifndef SFS_NS_PATTERN_H
#define SFS_NS_PATTERN_H

#include <stdint.h>

/* A power of two in SFS_CHUNK_SIZE_MIN..MAX (64 KiB..4 GiB). */
int sfs_ns_check_chunk_size(const char *path, uint64_t chunk_size);
/* 1..SFS_STRIPE_COUNT_MAX. */
int sfs_ns_check_stripe_count(const char *path, uint32_t stripe_count);

#endif
