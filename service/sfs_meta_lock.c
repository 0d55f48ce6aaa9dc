/*
 * The byte-range lock table (sfs_meta_lock.h): per file, a list of granted
 * locks and a queue of requests in arrival order; per owner, a list of all
 * its locks and requests, so that a client that goes away loses them all.
 * Lists are scanned: an MPI job holds a handful of locks per file at once.
 */
#define SFS_LOG_FAC "lock"
#include "sfs_meta_lock.h"

#include "sfs_alloc.h"
#include "sfs_hash.h"
#include "sfs_list.h"
#include "sfs_proto.h"

#include <errno.h>
#include <stdlib.h>

typedef struct sfs_lock_file {
    sfs_hash_link_t link; /* by entry id */
    sfs_list_t      granted;
    sfs_list_t      queued;
} sfs_lock_file_t;

typedef struct sfs_lock_owner {
    sfs_hash_link_t link; /* by owner pointer */
    sfs_list_t      locks;
    size_t          count;
} sfs_lock_owner_t;

typedef struct sfs_lock {
    sfs_list_t        file_list; /* in file->granted or file->queued */
    sfs_list_t        owner_list;
    sfs_lock_file_t  *file;
    sfs_lock_owner_t *owner;
    uint64_t          lock_id;
    uint64_t          start;
    uint64_t          end; /* exclusive */
    uint32_t          mode;
    int               granted;
    void             *waiter;
} sfs_lock_t;

struct sfs_lock_table {
    sfs_hash_t         files;
    sfs_hash_t         owners;
    sfs_lock_done_cb_t done;
    void              *arg;
    size_t             granted;
    size_t             queued;
    int                destroying; /* grant nothing more */
};

int sfs_lock_table_create(sfs_lock_done_cb_t done, void *arg, sfs_lock_table_t **table_p)
{
    sfs_lock_table_t *table;

    if (!SFS_ALLOC_PTR(table)) {
        return -ENOMEM;
    }
    if (sfs_hash_init(&table->files) != 0 || sfs_hash_init(&table->owners) != 0) {
        sfs_hash_cleanup(&table->files);
        free(table);
        return -ENOMEM;
    }
    table->done = done;
    table->arg  = arg;
    *table_p    = table;
    return 0;
}

static int sfs_lock_conflict(const sfs_lock_t *a, const sfs_lock_t *b)
{
    return a->start < b->end && b->start < a->end &&
           (a->mode == SFS_LOCK_EXCLUSIVE || b->mode == SFS_LOCK_EXCLUSIVE);
}

/* Whether `lock` conflicts with a granted lock, or with a request queued
 * before it (`stop`: `lock` itself, or NULL for a new one: all of them). */
static int sfs_lock_blocked(const sfs_lock_file_t *file, const sfs_lock_t *lock,
                            const sfs_list_t *stop)
{
    const sfs_list_t *elem;

    for (elem = file->granted.next; elem != &file->granted; elem = elem->next) {
        if (sfs_lock_conflict(sfs_container_of(elem, sfs_lock_t, file_list), lock)) {
            return 1;
        }
    }
    for (elem = file->queued.next; elem != &file->queued && elem != stop; elem = elem->next) {
        if (sfs_lock_conflict(sfs_container_of(elem, sfs_lock_t, file_list), lock)) {
            return 1;
        }
    }
    return 0;
}

/* Unlink and free `lock`, and its file and owner if they are left empty. */
static void sfs_lock_free(sfs_lock_table_t *table, sfs_lock_t *lock)
{
    sfs_lock_file_t  *file  = lock->file;
    sfs_lock_owner_t *owner = lock->owner;

    sfs_list_del(&lock->file_list);
    sfs_list_del(&lock->owner_list);
    if (lock->granted) {
        table->granted--;
    } else {
        table->queued--;
    }
    free(lock);
    if (sfs_list_is_empty(&file->granted) && sfs_list_is_empty(&file->queued)) {
        sfs_hash_del(&table->files, &file->link);
        free(file);
    }
    if (--owner->count == 0) {
        sfs_hash_del(&table->owners, &owner->link);
        free(owner);
    }
}

/* Grant the queued requests of `file` that nothing blocks any more, in
 * order. The callback may not touch the table, so the scan stays valid. */
static void sfs_lock_grant_queued(sfs_lock_table_t *table, sfs_lock_file_t *file)
{
    sfs_list_t *elem, *next;

    if (table->destroying) {
        return;
    }
    for (elem = file->queued.next; elem != &file->queued; elem = next) {
        sfs_lock_t *lock = sfs_container_of(elem, sfs_lock_t, file_list);

        next = elem->next;
        if (sfs_lock_blocked(file, lock, elem)) {
            continue;
        }
        sfs_list_del(&lock->file_list);
        sfs_list_add_tail(&file->granted, &lock->file_list);
        lock->granted = 1;
        table->queued--;
        table->granted++;
        table->done(lock->waiter, 0, table->arg);
        lock->waiter = NULL;
    }
}

static sfs_lock_file_t *sfs_lock_file_find(const sfs_lock_table_t *table, uint64_t entry_id)
{
    sfs_hash_link_t *link = sfs_hash_find(&table->files, entry_id);

    return link ? sfs_container_of(link, sfs_lock_file_t, link) : NULL;
}

/* The owner's lock `lock_id` on `file`, or NULL. */
static sfs_lock_t *sfs_lock_find(const sfs_lock_file_t *file, const void *owner, uint64_t lock_id)
{
    const sfs_list_t *heads[2] = {&file->granted, &file->queued};

    for (int i = 0; i < 2; i++) {
        for (sfs_list_t *elem = heads[i]->next; elem != heads[i]; elem = elem->next) {
            sfs_lock_t *lock = sfs_container_of(elem, sfs_lock_t, file_list);

            if (lock->lock_id == lock_id && lock->owner->link.key == (uint64_t)(uintptr_t)owner) {
                return lock;
            }
        }
    }
    return NULL;
}

static uint64_t sfs_lock_spec_end(const sfs_lock_spec_t *spec)
{
    return spec->length == 0 || spec->length > UINT64_MAX - spec->offset
               ? UINT64_MAX
               : spec->offset + spec->length;
}

/* The owner asks again for a lock it has asked for (its first request's
 * reply was lost): answered as the first, in the first one's place. */
static int sfs_lock_again(sfs_lock_table_t *table, sfs_lock_t *lock, const sfs_lock_spec_t *spec,
                          void *waiter)
{
    void *before = lock->waiter;

    if (lock->start != spec->offset || lock->end != sfs_lock_spec_end(spec) ||
        lock->mode != spec->mode) {
        return -EEXIST;
    }
    if (lock->granted) {
        return 0;
    }
    lock->waiter = waiter;
    table->done(before, -ECANCELED, table->arg);
    return SFS_LOCK_QUEUED;
}

int sfs_lock_acquire(sfs_lock_table_t *table, const sfs_lock_spec_t *spec, void *waiter)
{
    uint64_t          key  = (uint64_t)(uintptr_t)spec->owner;
    sfs_lock_file_t  *file = sfs_lock_file_find(table, spec->entry_id);
    sfs_hash_link_t  *link;
    sfs_lock_owner_t *owner = NULL;
    sfs_lock_t       *lock;

    if (spec->mode != SFS_LOCK_SHARED && spec->mode != SFS_LOCK_EXCLUSIVE) {
        return -EINVAL;
    }
    link = sfs_hash_find(&table->owners, key);
    if (link) {
        owner = sfs_container_of(link, sfs_lock_owner_t, link);
        if (owner->count >= SFS_LOCK_OWNER_MAX) {
            return -ENOLCK;
        }
    }
    if (file && (lock = sfs_lock_find(file, spec->owner, spec->lock_id)) != NULL) {
        return sfs_lock_again(table, lock, spec, waiter);
    }
    if (!SFS_ALLOC_PTR(lock)) {
        return -ENOMEM;
    }
    if (!file) {
        if (!SFS_ALLOC_PTR(file)) {
            free(lock);
            return -ENOMEM;
        }
        sfs_list_init(&file->granted);
        sfs_list_init(&file->queued);
        sfs_hash_add(&table->files, &file->link, spec->entry_id);
    }
    if (!owner) {
        if (!SFS_ALLOC_PTR(owner)) {
            if (sfs_list_is_empty(&file->granted) && sfs_list_is_empty(&file->queued)) {
                sfs_hash_del(&table->files, &file->link);
                free(file);
            }
            free(lock);
            return -ENOMEM;
        }
        sfs_list_init(&owner->locks);
        sfs_hash_add(&table->owners, &owner->link, key);
    }
    lock->file    = file;
    lock->owner   = owner;
    lock->lock_id = spec->lock_id;
    lock->start   = spec->offset;
    lock->end     = sfs_lock_spec_end(spec);
    lock->mode    = spec->mode;
    sfs_list_add_tail(&owner->locks, &lock->owner_list);
    owner->count++;
    if (!sfs_lock_blocked(file, lock, NULL)) {
        lock->granted = 1;
        sfs_list_add_tail(&file->granted, &lock->file_list);
        table->granted++;
        return 0;
    }
    lock->waiter = waiter;
    sfs_list_add_tail(&file->queued, &lock->file_list);
    table->queued++;
    return SFS_LOCK_QUEUED;
}

int sfs_lock_release(sfs_lock_table_t *table, const void *owner, uint64_t entry_id,
                     uint64_t lock_id)
{
    sfs_lock_file_t *file = sfs_lock_file_find(table, entry_id);
    sfs_lock_t      *lock = file ? sfs_lock_find(file, owner, lock_id) : NULL;
    void            *waiter;
    int              granted;

    if (!lock) {
        return -ENOENT;
    }
    granted = lock->granted;
    waiter  = lock->waiter;
    sfs_lock_free(table, lock);
    if (!granted) {
        table->done(waiter, -ECANCELED, table->arg);
    }
    /* the file may be gone with its last lock */
    file = sfs_lock_file_find(table, entry_id);
    if (file) {
        sfs_lock_grant_queued(table, file);
    }
    return 0;
}

size_t sfs_lock_release_owner(sfs_lock_table_t *table, const void *owner, int status)
{
    sfs_hash_link_t  *link = sfs_hash_find(&table->owners, (uint64_t)(uintptr_t)owner);
    sfs_lock_owner_t *lord;
    size_t            released = 0, count;
    uint64_t         *entries;

    if (!link) {
        return 0;
    }
    lord  = sfs_container_of(link, sfs_lock_owner_t, link);
    count = lord->count;
    /* the files whose queues may move once this owner's locks are gone */
    entries = calloc(count, sizeof(*entries));
    while (released < count) {
        sfs_lock_t *lock    = sfs_container_of(lord->locks.next, sfs_lock_t, owner_list);
        void       *waiter  = lock->waiter;
        int         granted = lock->granted;

        if (entries) {
            entries[released] = lock->file->link.key;
        }
        released++;
        sfs_lock_free(table, lock); /* the last one frees `lord` */
        if (!granted) {
            table->done(waiter, status, table->arg);
        }
    }
    for (size_t i = 0; entries && i < count; i++) {
        sfs_lock_file_t *file = sfs_lock_file_find(table, entries[i]);

        if (file) {
            sfs_lock_grant_queued(table, file);
        }
    }
    if (!entries) {
        /* out of memory: look at every file rather than leave one stuck */
        for (size_t b = 0; b < table->files.bucket_count; b++) {
            for (sfs_hash_link_t *l = table->files.buckets[b]; l; l = l->next) {
                sfs_lock_grant_queued(table, sfs_container_of(l, sfs_lock_file_t, link));
            }
        }
    }
    free(entries);
    return released;
}

size_t sfs_lock_owner_count(const sfs_lock_table_t *table, const void *owner)
{
    sfs_hash_link_t *link = sfs_hash_find(&table->owners, (uint64_t)(uintptr_t)owner);

    return link ? sfs_container_of(link, sfs_lock_owner_t, link)->count : 0;
}

size_t sfs_lock_count(const sfs_lock_table_t *table, size_t *queued_p)
{
    if (queued_p) {
        *queued_p = table->queued;
    }
    return table->granted;
}

void sfs_lock_table_destroy(sfs_lock_table_t *table, int status)
{
    if (!table) {
        return;
    }
    table->destroying = 1;
    while (table->owners.count) {
        for (size_t b = 0; b < table->owners.bucket_count; b++) {
            sfs_hash_link_t *link = table->owners.buckets[b];

            if (link) {
                sfs_lock_release_owner(table, (const void *)(uintptr_t)link->key, status);
                break;
            }
        }
    }
    sfs_hash_cleanup(&table->files);
    sfs_hash_cleanup(&table->owners);
    free(table);
}
