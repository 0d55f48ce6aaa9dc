/* The batches a metadata mirror missed (sfs_meta_backlog.h). */
#include "sfs_meta_backlog.h"

#include "sfs_alloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct sfs_meta_backlog_batch {
    uint64_t seq;
    uint64_t alone; /* the store's count of batches committed alone after it */
    void    *data;
    size_t   length;
} sfs_meta_backlog_batch_t;

struct sfs_meta_backlog {
    size_t                    max_bytes;
    int                       valid;
    uint64_t                  base_seq;
    uint64_t                  base_alone;
    sfs_meta_backlog_batch_t *batches;
    uint32_t                  count;
    uint32_t                  capacity;
    size_t                    bytes;
};

int sfs_meta_backlog_create(size_t max_bytes, sfs_meta_backlog_t **backlog_p)
{
    sfs_meta_backlog_t *backlog;

    if (!SFS_ALLOC_PTR(backlog)) {
        return -ENOMEM;
    }
    backlog->max_bytes = max_bytes;
    *backlog_p         = backlog;
    return 0;
}

static void sfs_meta_backlog_forget(sfs_meta_backlog_t *backlog)
{
    for (uint32_t i = 0; i < backlog->count; i++) {
        free(backlog->batches[i].data);
    }
    backlog->count = 0;
    backlog->bytes = 0;
}

void sfs_meta_backlog_destroy(sfs_meta_backlog_t *backlog)
{
    if (!backlog) {
        return;
    }
    sfs_meta_backlog_forget(backlog);
    free(backlog->batches);
    free(backlog);
}

void sfs_meta_backlog_reset(sfs_meta_backlog_t *backlog, uint64_t seq, uint64_t alone)
{
    sfs_meta_backlog_forget(backlog);
    backlog->base_seq   = seq;
    backlog->base_alone = alone;
    backlog->valid      = 1;
}

void sfs_meta_backlog_invalidate(sfs_meta_backlog_t *backlog)
{
    sfs_meta_backlog_forget(backlog);
    backlog->valid = 0;
}

int sfs_meta_backlog_valid(const sfs_meta_backlog_t *backlog)
{
    return backlog->valid;
}

void sfs_meta_backlog_add(sfs_meta_backlog_t *backlog, uint64_t seq, int alone, const void *data,
                          size_t length)
{
    const sfs_meta_backlog_batch_t *last =
        backlog->count ? &backlog->batches[backlog->count - 1] : NULL;
    uint64_t                  last_seq   = last ? last->seq : backlog->base_seq;
    uint64_t                  last_alone = last ? last->alone : backlog->base_alone;
    sfs_meta_backlog_batch_t *b;

    if (!backlog->valid) {
        return;
    }
    if (seq != last_seq + 1 || backlog->bytes + length > backlog->max_bytes) {
        sfs_meta_backlog_invalidate(backlog);
        return;
    }
    if (backlog->count == backlog->capacity) {
        uint32_t                  capacity = backlog->capacity ? 2 * backlog->capacity : 64;
        sfs_meta_backlog_batch_t *grown    = realloc(backlog->batches, capacity * sizeof(*grown));

        if (!grown) {
            sfs_meta_backlog_invalidate(backlog);
            return;
        }
        backlog->batches  = grown;
        backlog->capacity = capacity;
    }
    b       = &backlog->batches[backlog->count];
    b->data = malloc(length ? length : 1);
    if (!b->data) {
        sfs_meta_backlog_invalidate(backlog);
        return;
    }
    memcpy(b->data, data, length);
    b->seq    = seq;
    b->alone  = last_alone + (alone ? 1 : 0);
    b->length = length;
    backlog->count++;
    backlog->bytes += length;
}

int sfs_meta_backlog_from(const sfs_meta_backlog_t *backlog, uint64_t seq, uint64_t alone,
                          uint32_t *first_p)
{
    if (!backlog->valid) {
        return -ESTALE;
    }
    if (seq == backlog->base_seq && alone == backlog->base_alone) {
        *first_p = 0;
        return 0;
    }
    for (uint32_t i = 0; i < backlog->count; i++) {
        if (backlog->batches[i].seq == seq) {
            if (backlog->batches[i].alone != alone) {
                return -ESTALE; /* that number, another history */
            }
            *first_p = i + 1;
            return 0;
        }
    }
    return -ESTALE;
}

uint32_t sfs_meta_backlog_count(const sfs_meta_backlog_t *backlog)
{
    return backlog->count;
}

size_t sfs_meta_backlog_bytes(const sfs_meta_backlog_t *backlog)
{
    return backlog->bytes;
}

const void *sfs_meta_backlog_get(const sfs_meta_backlog_t *backlog, uint32_t i, uint64_t *seq_p,
                                 size_t *length_p)
{
    if (i >= backlog->count) {
        return NULL;
    }
    *seq_p    = backlog->batches[i].seq;
    *length_p = backlog->batches[i].length;
    return backlog->batches[i].data;
}
