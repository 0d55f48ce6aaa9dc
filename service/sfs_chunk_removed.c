/*
 * Chunk files removed lately (sfs_chunk_removed.h): a hash by entry id for
 * the lookups and a list in the order of removal for the expiry, so that a
 * note or a lookup costs O(1) and old entries go from the list's head.
 */
#include "sfs_chunk_removed.h"

#include "sfs_alloc.h"
#include "sfs_hash.h"
#include "sfs_list.h"

#include <errno.h>
#include <stdlib.h>

typedef struct sfs_chunk_gone {
    sfs_hash_link_t link;  /* key: the entry id */
    sfs_list_t      order; /* oldest first */
    uint32_t        target_id;
    uint64_t        at_ms;
} sfs_chunk_gone_t;

struct sfs_chunk_removed {
    sfs_hash_t hash;
    sfs_list_t order;
    uint32_t   max; /* entries: hash.count */
    uint64_t   keep_ms;
    uint64_t   dropped;
};

int sfs_chunk_removed_create(uint32_t max, uint64_t keep_ms, sfs_chunk_removed_t **removed_p)
{
    sfs_chunk_removed_t *removed;

    if (!SFS_ALLOC_PTR(removed)) {
        return -ENOMEM;
    }
    if (sfs_hash_init(&removed->hash) != 0) {
        free(removed);
        return -ENOMEM;
    }
    sfs_list_init(&removed->order);
    removed->max     = max ? max : 1;
    removed->keep_ms = keep_ms;
    *removed_p       = removed;
    return 0;
}

static void sfs_chunk_removed_forget(sfs_chunk_removed_t *removed, sfs_chunk_gone_t *gone)
{
    sfs_hash_del(&removed->hash, &gone->link);
    sfs_list_del(&gone->order);
    free(gone);
}

void sfs_chunk_removed_destroy(sfs_chunk_removed_t *removed)
{
    if (!removed) {
        return;
    }
    while (!sfs_list_is_empty(&removed->order)) {
        sfs_chunk_removed_forget(removed,
                                 sfs_container_of(removed->order.next, sfs_chunk_gone_t, order));
    }
    sfs_hash_cleanup(&removed->hash);
    free(removed);
}

/* Forget what is older than keep_ms, and the oldest while full. */
static void sfs_chunk_removed_expire(sfs_chunk_removed_t *removed, uint64_t now_ms, uint32_t room)
{
    while (!sfs_list_is_empty(&removed->order)) {
        sfs_chunk_gone_t *oldest = sfs_container_of(removed->order.next, sfs_chunk_gone_t, order);

        if (now_ms - oldest->at_ms < removed->keep_ms &&
            removed->hash.count + room <= removed->max) {
            break;
        }
        if (now_ms - oldest->at_ms < removed->keep_ms) {
            removed->dropped++;
        }
        sfs_chunk_removed_forget(removed, oldest);
    }
}

static sfs_chunk_gone_t *sfs_chunk_removed_find(sfs_chunk_removed_t *removed, uint32_t target_id,
                                                uint64_t entry_id)
{
    sfs_hash_link_t *link = removed->hash.buckets[sfs_hash_bucket(&removed->hash, entry_id)];

    for (; link; link = link->next) {
        sfs_chunk_gone_t *gone = (sfs_chunk_gone_t *)link;

        if (link->key == entry_id && gone->target_id == target_id) {
            return gone;
        }
    }
    return NULL;
}

int sfs_chunk_removed_note(sfs_chunk_removed_t *removed, uint32_t target_id, uint64_t entry_id,
                           uint64_t now_ms)
{
    sfs_chunk_gone_t *gone = sfs_chunk_removed_find(removed, target_id, entry_id);

    if (gone) { /* removed again (a resend): newest now */
        sfs_chunk_removed_forget(removed, gone);
    }
    sfs_chunk_removed_expire(removed, now_ms, 1);
    if (!SFS_ALLOC_PTR(gone)) {
        return -ENOMEM;
    }
    gone->target_id = target_id;
    gone->at_ms     = now_ms;
    sfs_hash_add(&removed->hash, &gone->link, entry_id);
    sfs_list_add_tail(&removed->order, &gone->order);
    return 0;
}

int sfs_chunk_removed_recent(sfs_chunk_removed_t *removed, uint32_t target_id, uint64_t entry_id,
                             uint64_t now_ms)
{
    sfs_chunk_gone_t *gone;

    if (removed->hash.count == 0) {
        return 0;
    }
    gone = sfs_chunk_removed_find(removed, target_id, entry_id);
    return gone && now_ms - gone->at_ms < removed->keep_ms;
}

uint32_t sfs_chunk_removed_count(const sfs_chunk_removed_t *removed)
{
    return (uint32_t)removed->hash.count;
}

uint64_t sfs_chunk_removed_dropped(const sfs_chunk_removed_t *removed)
{
    return removed->dropped;
}
