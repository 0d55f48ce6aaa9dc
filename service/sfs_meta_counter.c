/*
 * Shared file pointers (MPI_File_*_shared): one atomic counter per open
 * file, kept in memory on the progress thread (atomic because one thread
 * serves them all) until the open forgets it at close. Never dropped while
 * in use (a silent reset would hand out file offsets twice): past
 * SFS_META_COUNTERS_MAX live counters a new one is refused with -ENFILE.
 * Not durable: a request naming another server process (it restarted since
 * the file was opened) is answered -ESTALE (sfs_meta_handlers.c).
 */
#define SFS_LOG_FAC "meta"
#include "sfs_service.h"

#include "sfs_meta_internal.h"

#include "sfs_alloc.h"

#include <stdlib.h>

/* An open file's shared counter: kept in memory, on the progress thread
 * (atomic because one thread serves them all). */
typedef struct sfs_meta_counter {
    sfs_hash_link_t link;
    sfs_list_t      all; /* meta->counter_list, for the cleanup */
    uint64_t        value;
} sfs_meta_counter_t;

int sfs_meta_counters_init(sfs_meta_t *meta)
{
    sfs_list_init(&meta->counter_list);
    return sfs_hash_init(&meta->counters) != 0 ? -ENOMEM : 0;
}

void sfs_meta_counters_cleanup(sfs_meta_t *meta)
{
    while (!sfs_list_is_empty(&meta->counter_list)) {
        free(sfs_container_of(sfs_list_pop_head(&meta->counter_list), sfs_meta_counter_t, all));
    }
    sfs_hash_cleanup(&meta->counters);
}

int sfs_meta_counter(sfs_meta_t *meta, const sfs_counter_req_t *creq, uint64_t *before_p)
{
    uint64_t            before = 0;
    sfs_hash_link_t    *link;
    sfs_meta_counter_t *counter = NULL;

    link = sfs_hash_find(&meta->counters, creq->key);
    if (link) {
        counter = sfs_container_of(link, sfs_meta_counter_t, link);
        before  = counter->value;
    }
    if (creq->op == SFS_COUNTER_OP_FORGET) {
        if (counter) {
            sfs_hash_del(&meta->counters, &counter->link);
            sfs_list_del(&counter->all);
            free(counter);
        }
    } else {
        if (!counter) {
            if (meta->counters.count >= SFS_META_COUNTERS_MAX) {
                return sfs_error_set(-ENFILE,
                                     "%u shared file pointers are in use, the most this metadata "
                                     "server keeps (files using MPI_File_*_shared must be closed)",
                                     (unsigned)meta->counters.count);
            }
            if (!SFS_ALLOC_PTR(counter)) {
                return -ENOMEM;
            }
            sfs_hash_add(&meta->counters, &counter->link, creq->key);
            sfs_list_add_tail(&meta->counter_list, &counter->all);
        }
        counter->value = creq->op == SFS_COUNTER_OP_ADD ? before + creq->value : creq->value;
    }
    *before_p = before;
    return 0;
}
