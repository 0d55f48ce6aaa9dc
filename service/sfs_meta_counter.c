/*
 * Shared file pointers (MPI_File_*_shared): one atomic counter per open
 * file, kept in memory on the progress thread (atomic because one thread
 * serves them all) until the open forgets it at close. Never dropped while
 * in use (a silent reset would hand out file offsets twice): past
 * SFS_META_COUNTERS_MAX live counters a new one is refused with -ENFILE.
 * Not durable: a request naming another server process (it restarted since
 * the file was opened) is answered -ESTALE (sfs_meta_handlers.c).
 *
 * A tagged request's answer is kept, per client, the last
 * SFS_META_COUNTER_KEEP of each (a client has few COUNTER calls in flight:
 * one per thread), for at most SFS_META_COUNTER_CLIENTS clients, the least
 * recently heard forgotten first: a client that got no reply (its link
 * cut) sends the same call again to this server, and gets the same answer
 * (sfs_client_meta_failover.c). In memory, as the counters themselves.
 */
#define SFS_LOG_FAC "meta"
#include "sfs_service.h"

#include "sfs_meta_internal.h"

#include "sfs_alloc.h"
#include "sfs_log.h"

#include <stdlib.h>
#include <string.h>

/* An open file's shared counter: kept in memory, on the progress thread
 * (atomic because one thread serves them all). */
typedef struct sfs_meta_counter {
    sfs_hash_link_t link;
    sfs_list_t      all; /* meta->counter_list, for the cleanup */
    uint64_t        value;
} sfs_meta_counter_t;

#define SFS_META_COUNTER_KEEP    16
#define SFS_META_COUNTER_CLIENTS 20000

typedef struct sfs_meta_counter_answer {
    uint64_t op_tag; /* 0: an empty slot */
    uint64_t key;
    uint64_t before;
    uint32_t op;
    uint32_t uid;
} sfs_meta_counter_answer_t;

/* One client's kept answers (a ring). */
typedef struct sfs_meta_counter_client {
    sfs_hash_link_t           link; /* meta->counter_clients, by worker uuid */
    sfs_list_t                lru;  /* meta->counter_client_lru */
    uint32_t                  next;
    sfs_meta_counter_answer_t answers[SFS_META_COUNTER_KEEP];
} sfs_meta_counter_client_t;

int sfs_meta_counters_init(sfs_meta_t *meta)
{
    sfs_list_init(&meta->counter_list);
    sfs_list_init(&meta->counter_client_lru);
    if (sfs_hash_init(&meta->counters) != 0) {
        return -ENOMEM;
    }
    if (sfs_hash_init(&meta->counter_clients) != 0) {
        sfs_hash_cleanup(&meta->counters);
        return -ENOMEM;
    }
    return 0;
}

void sfs_meta_counters_cleanup(sfs_meta_t *meta)
{
    while (!sfs_list_is_empty(&meta->counter_list)) {
        free(sfs_container_of(sfs_list_pop_head(&meta->counter_list), sfs_meta_counter_t, all));
    }
    sfs_hash_cleanup(&meta->counters);
    while (!sfs_list_is_empty(&meta->counter_client_lru)) {
        free(sfs_container_of(sfs_list_pop_head(&meta->counter_client_lru),
                              sfs_meta_counter_client_t, lru));
    }
    sfs_hash_cleanup(&meta->counter_clients);
}

/* The client's kept answers, made (and the least recently heard client
 * forgotten past the bound) when `make`; moved to the end of the LRU. */
static sfs_meta_counter_client_t *sfs_meta_counter_client(sfs_meta_t *meta, uint64_t client,
                                                          int make)
{
    sfs_hash_link_t           *link = sfs_hash_find(&meta->counter_clients, client);
    sfs_meta_counter_client_t *c;

    if (link) {
        c = sfs_container_of(link, sfs_meta_counter_client_t, link);
        sfs_list_del(&c->lru);
        sfs_list_add_tail(&meta->counter_client_lru, &c->lru);
        return c;
    }
    if (!make) {
        return NULL;
    }
    if (meta->counter_clients.count >= SFS_META_COUNTER_CLIENTS) {
        c = sfs_container_of(sfs_list_pop_head(&meta->counter_client_lru),
                             sfs_meta_counter_client_t, lru);
        sfs_hash_del(&meta->counter_clients, &c->link);
        memset(c, 0, sizeof(*c));
    } else if (!SFS_ALLOC_PTR(c)) {
        return NULL; /* the answer is not kept: a resend would run again */
    }
    sfs_hash_add(&meta->counter_clients, &c->link, client);
    sfs_list_add_tail(&meta->counter_client_lru, &c->lru);
    return c;
}

static const sfs_meta_counter_answer_t *sfs_meta_counter_kept(sfs_meta_t *meta, uint64_t client,
                                                              uint32_t                 uid,
                                                              const sfs_counter_req_t *creq)
{
    sfs_meta_counter_client_t *c = sfs_meta_counter_client(meta, client, 0);

    for (uint32_t i = 0; c && i < SFS_META_COUNTER_KEEP; i++) {
        const sfs_meta_counter_answer_t *a = &c->answers[i];

        if (a->op_tag == creq->op_tag && a->uid == uid && a->key == creq->key &&
            a->op == creq->op) {
            return a;
        }
    }
    return NULL;
}

static void sfs_meta_counter_keep(sfs_meta_t *meta, uint64_t client, uint32_t uid,
                                  const sfs_counter_req_t *creq, uint64_t before)
{
    sfs_meta_counter_client_t *c = sfs_meta_counter_client(meta, client, 1);

    if (c) {
        c->answers[c->next] = (sfs_meta_counter_answer_t){
            .op_tag = creq->op_tag, .key = creq->key, .before = before, .op = creq->op, .uid = uid};
        c->next = (c->next + 1) % SFS_META_COUNTER_KEEP;
    }
}

static int sfs_meta_counter_run(sfs_meta_t *meta, const sfs_counter_req_t *creq, uint64_t *before_p)
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

int sfs_meta_counter(sfs_meta_t *meta, const sfs_counter_req_t *creq, uint64_t client, uint32_t uid,
                     uint64_t *before_p)
{
    const sfs_meta_counter_answer_t *kept;
    int                              rc;

    if (creq->op_tag == 0) {
        return sfs_meta_counter_run(meta, creq, before_p);
    }
    kept = sfs_meta_counter_kept(meta, client, uid, creq);
    if (kept) {
        sfs_info("shared file pointer of open file %llu: a call sent again (client %016llx, tag "
                 "%llu) answered with the answer it got the first time (%llu)",
                 (unsigned long long)creq->key, (unsigned long long)client,
                 (unsigned long long)creq->op_tag, (unsigned long long)kept->before);
        *before_p = kept->before;
        return 0;
    }
    rc = sfs_meta_counter_run(meta, creq, before_p);
    if (rc == 0) {
        sfs_meta_counter_keep(meta, client, uid, creq, *before_p);
    }
    return rc;
}
