/*
 * Big-endian u64 key parts of the metadata store's records, so that LMDB's
 * byte order is numeric order (ids, parents; a kept reply's client and
 * tag). Pure code, for the store and for codecs fuzzed without LMDB.
 */
#ifndef SFS_META_KEY_H
#define SFS_META_KEY_H

#include <stdint.h>

static inline void sfs_meta_put_be64(uint8_t *out, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        out[i] = (uint8_t)v;
        v >>= 8;
    }
}

static inline uint64_t sfs_meta_get_be64(const uint8_t *in)
{
    uint64_t v = 0;

    for (int i = 0; i < 8; i++) {
        v = (v << 8) | in[i];
    }
    return v;
}

#endif
