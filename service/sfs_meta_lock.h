/*
 * Byte-range locks of the metadata role (MPI atomic mode): a lock table
 * that grants compatible locks at once and queues the others, in order.
 *
 * Promises:
 *  - Two locks conflict when their ranges overlap and one is exclusive,
 *    whoever owns them (a process does not nest locks: the driver takes one
 *    per I/O call and releases it when the data is acknowledged).
 *  - Fair: a request is granted only when it conflicts with no granted lock
 *    and with no request queued before it, so a stream of shared locks
 *    cannot starve an exclusive one.
 *  - A queued request ends exactly once through the table's callback:
 *    granted (0), cancelled by its owner (-ECANCELED), or dropped with the
 *    status given to sfs_lock_release_owner() or sfs_lock_table_destroy().
 *  - No lock outlives its owner: sfs_lock_release_owner() (a client
 *    gone) drops everything it holds or waits for.
 *  - One thread (the progress thread): no locking inside; callbacks must
 *    not call back into the table.
 *
 * The table knows nothing of the transport: owners and waiters are opaque
 * pointers (a client process's record, sfs_meta_lock_client.h, and its
 * pending request in sfs_meta_lock_rpc.c).
 */
#ifndef SFS_META_LOCK_H
#define SFS_META_LOCK_H

#include <stddef.h>
#include <stdint.h>

#define SFS_LOCK_QUEUED    1    /* sfs_lock_acquire: waiting; the callback tells */
#define SFS_LOCK_OWNER_MAX 4096 /* locks held or queued by one owner */

typedef struct sfs_lock_table sfs_lock_table_t;

/* A queued request ends: granted (status 0) or not (negative errno). */
typedef void (*sfs_lock_done_cb_t)(void *waiter, int status, void *arg);

typedef struct sfs_lock_spec {
    const void *owner; /* who holds it (a session) */
    uint64_t    entry_id;
    uint64_t    lock_id; /* the owner's name for it */
    uint64_t    offset;
    uint64_t    length; /* 0: to the end of any file */
    uint32_t    mode;   /* SFS_LOCK_SHARED or SFS_LOCK_EXCLUSIVE (sfs_proto.h) */
} sfs_lock_spec_t;

int sfs_lock_table_create(sfs_lock_done_cb_t done, void *arg, sfs_lock_table_t **table_p);
/* Queued requests end with `status`. */
void sfs_lock_table_destroy(sfs_lock_table_t *table, int status);

/* Ask for a lock: 0 granted, SFS_LOCK_QUEUED (`waiter` is handed to the
 * callback later), -EEXIST (the owner uses lock_id on this file already,
 * for another range or mode), -ENOLCK (the owner has SFS_LOCK_OWNER_MAX),
 * -EINVAL (bad mode), -ENOMEM. The same request again (its reply was
 * lost) is answered as the first: 0 once granted, else SFS_LOCK_QUEUED in
 * the first one's place in the queue (that waiter ends with -ECANCELED). */
int sfs_lock_acquire(sfs_lock_table_t *table, const sfs_lock_spec_t *spec, void *waiter);
/* Release a granted lock, or cancel a queued request (its callback gets
 * -ECANCELED), and grant what that unblocks: 0, or -ENOENT. */
int sfs_lock_release(sfs_lock_table_t *table, const void *owner, uint64_t entry_id,
                     uint64_t lock_id);
/* Everything of `owner`: released, its queued requests ended with
 * `status`; returns how many locks and requests went. */
size_t sfs_lock_release_owner(sfs_lock_table_t *table, const void *owner, int status);
/* How many locks `owner` holds or waits for. */
size_t sfs_lock_owner_count(const sfs_lock_table_t *table, const void *owner);
/* How many locks are granted (and with queued_p, queued). */
size_t sfs_lock_count(const sfs_lock_table_t *table, size_t *queued_p);

/* The metadata role's use of it (sfs_meta_lock_rpc.c): the table of
 * `meta`; a client session that ended (its locks go at once when the
 * client closed it or its process is gone, else they are kept for the
 * offline timeout, for the client to come back on a new session); the
 * timer that releases the locks of clients that did not come back. */
typedef struct sfs_meta       sfs_meta_t;
typedef struct sfs_tp_session sfs_tp_session_t;
int                           sfs_meta_locks_init(sfs_meta_t *meta);
void                          sfs_meta_locks_cleanup(sfs_meta_t *meta);
void sfs_meta_locks_session_end(sfs_meta_t *meta, sfs_tp_session_t *session);
void sfs_meta_locks_tick(sfs_meta_t *meta, uint64_t now_ms);

#endif
