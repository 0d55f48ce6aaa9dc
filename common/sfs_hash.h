/*
 * Intrusive hash table keyed by uint64_t (request ids, session ids, entry
 * ids). Chained; grows when the load passes 1. Not thread-safe.
 */
#ifndef SFS_HASH_H
#define SFS_HASH_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct sfs_hash_link {
    struct sfs_hash_link *next;
    uint64_t              key;
} sfs_hash_link_t;

typedef struct sfs_hash {
    sfs_hash_link_t **buckets;
    size_t            bucket_count; /* power of two */
    size_t            count;
} sfs_hash_t;

static inline size_t sfs_hash_bucket(const sfs_hash_t *hash, uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & (hash->bucket_count - 1);
}

static inline int sfs_hash_init(sfs_hash_t *hash)
{
    hash->bucket_count = 64;
    hash->count        = 0;
    hash->buckets      = calloc(hash->bucket_count, sizeof(*hash->buckets));
    return hash->buckets ? 0 : -ENOMEM;
}

static inline void sfs_hash_cleanup(sfs_hash_t *hash)
{
    free(hash->buckets);
    hash->buckets      = NULL;
    hash->bucket_count = 0;
    hash->count        = 0;
}

static inline void sfs_hash_grow(sfs_hash_t *hash)
{
    size_t            new_count = hash->bucket_count * 2;
    sfs_hash_link_t **fresh     = calloc(new_count, sizeof(*fresh));
    sfs_hash_t        grown     = {fresh, new_count, hash->count};

    if (!fresh) {
        return; /* keep the old table: slower, still correct */
    }
    for (size_t i = 0; i < hash->bucket_count; i++) {
        sfs_hash_link_t *link = hash->buckets[i];

        while (link) {
            sfs_hash_link_t *next   = link->next;
            size_t           bucket = sfs_hash_bucket(&grown, link->key);

            link->next    = fresh[bucket];
            fresh[bucket] = link;
            link          = next;
        }
    }
    free(hash->buckets);
    *hash = grown;
}

static inline void sfs_hash_add(sfs_hash_t *hash, sfs_hash_link_t *link, uint64_t key)
{
    size_t bucket;

    if (hash->count >= hash->bucket_count) {
        sfs_hash_grow(hash);
    }
    bucket                = sfs_hash_bucket(hash, key);
    link->key             = key;
    link->next            = hash->buckets[bucket];
    hash->buckets[bucket] = link;
    hash->count++;
}

static inline sfs_hash_link_t *sfs_hash_find(const sfs_hash_t *hash, uint64_t key)
{
    sfs_hash_link_t *link;

    for (link = hash->buckets[sfs_hash_bucket(hash, key)]; link; link = link->next) {
        if (link->key == key) {
            return link;
        }
    }
    return NULL;
}

/* Remove `link` (which must be in the table). */
static inline void sfs_hash_del(sfs_hash_t *hash, sfs_hash_link_t *link)
{
    sfs_hash_link_t **pp = &hash->buckets[sfs_hash_bucket(hash, link->key)];

    while (*pp) {
        if (*pp == link) {
            *pp = link->next;
            hash->count--;
            return;
        }
        pp = &(*pp)->next;
    }
}

#endif
