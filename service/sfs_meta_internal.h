/*
 * Inside the metadata role (sfs_meta*.c): the role's state, one queued
 * operation, and what each of its files offers the others.
 *
 *   sfs_meta.c          life cycle and the timer (map refresh, deletions)
 *   sfs_meta_handlers.c its requests: decode, check, queue (progress thread)
 *   sfs_meta_commit.c   the group-commit queue and the metadata thread
 *   sfs_meta_run.c      running one operation in a transaction
 *   sfs_meta_reply.c    replies, capabilities included (progress thread)
 *   sfs_meta_chooser.c  the target chooser (its own header)
 *   sfs_meta_drain.c    MIGRATE_DRAIN's kept flags, MIGRATE_LEASE (its own header;
 *                       the lease table: sfs_meta_lease.c)
 *   sfs_meta_counter.c  shared file-pointer counters (progress thread)
 *   sfs_meta_lock*.c    byte-range locks, LOCK/UNLOCK (its own header)
 *   sfs_ns_size.c       the kept sizes: writers' registrations (metadata thread)
 *   sfs_meta_delete.c   background deletion of removed files' chunk files
 *   sfs_meta_quota_rpc.c QUOTA_*: handler, run, reply (store part: sfs_meta_quota.h)
 */
#ifndef SFS_META_INTERNAL_H
#define SFS_META_INTERNAL_H

#include "sfs_service.h"

#include "sfs_errno.h"
#include "sfs_hash.h"
#include "sfs_list.h"
#include "sfs_meta_chooser.h"
#include "sfs_meta_lock.h"
#include "sfs_meta_lock_client.h"
#include "sfs_meta_pool.h"
#include "sfs_meta_stats.h"
#include "sfs_meta_store.h"

#include <pthread.h>
#include <sys/uio.h>

#define SFS_META_BATCH_MAX       1024
#define SFS_META_READDIR_MAX     4096
#define SFS_META_STAT_PAGE_MAX   512 /* STAT's listing: entries with attributes */
#define SFS_META_LIST_MAX        1024
#define SFS_META_DELETE_BATCH    256
#define SFS_META_DELETE_RETRY_MS 5000
#define SFS_META_COUNTERS_MAX    1000000 /* live shared pointers; then -ENFILE (never evicted) */
#define SFS_META_OP_FLUSH        1000    /* internal opcodes */
#define SFS_META_OP_DELETES_DONE 1001

typedef struct sfs_meta_op {
    sfs_list_t           list;
    sfs_tp_request_t    *req;
    uint32_t             opcode;
    sfs_cred_t           cred;   /* the caller's, proven in its session */
    uint64_t             client; /* its session's worker uuid (kept replies); 0: internal */
    sfs_meta_req_t       args;
    sfs_size_req_t       size;       /* SIZE */
    sfs_size_reply_t     size_reply; /* SIZE; QUOTA_GROW (size: granted, stored: limited) */
    sfs_quota_req_t      quota;      /* QUOTA_SET, QUOTA_GET */
    sfs_migrate_req_t    migrate;    /* MIGRATE_COMMIT, _BEGIN, _DRAIN (sfs_meta_*.c) */
    uint32_t             stored;     /* STAT: 1 the kept size is exact, 2 a writer is registered */
    int                  status;
    char                 detail[SFS_ERROR_DETAIL_MAX];
    sfs_attr_t           attr;
    int                  created;
    int                  bounded;   /* LOOKUP, CREATE for write: a space limit applies */
    void                *list_data; /* READDIR entries / META_LIST attrs */
    uint32_t             count;
    int                  eof;
    sfs_meta_statfs_t    stats;
    uint64_t            *ids; /* DELETES_DONE */
    uint32_t             id_count;
    sfs_ns_check_stats_t check;       /* META_CHECK */
    size_t               list_length; /* bytes used in list_data (META_CHECK lines) */
    size_t               list_capacity;
    int                  flushed; /* FLUSH: set by the metadata thread */
    sfs_meta_times_t     times;   /* STRIPEFS_META_TIMING (sfs_meta_stats.h) */
} sfs_meta_op_t;

typedef struct sfs_meta_delete {
    uint64_t      entry_id;
    sfs_pattern_t pattern;
    int           failed;
} sfs_meta_delete_t;

typedef struct sfs_meta_delete_rpc {
    sfs_tp_rpc_t *rpc;
    uint32_t      target_id;
    uint8_t       args[16 + 8 * SFS_META_DELETE_BATCH];
    uint64_t      ids[SFS_META_DELETE_BATCH];
    uint32_t      id_count;
    int           target_away; /* not sent: the map shows its target not online */
} sfs_meta_delete_rpc_t;

/* Group-commit statistics (sfs_meta_commit.c): how many of the clients'
 * operations each batch held. A batch with a write is one durable commit;
 * batches of the server's own operations only (deletions done) are counted
 * apart, so that the sizes say what clients' concurrency achieved. */
#define SFS_META_BATCH_BUCKETS 8 /* commits of 1, 2, 3-4, 5-8, ..., 33-64, 65+ writes */
typedef struct sfs_meta_batch_stats {
    uint64_t commits;       /* batches with a client's write */
    uint64_t commit_writes; /* the clients' writes in them */
    uint64_t commit_ops;    /* all the clients' operations in them */
    uint32_t commit_max;    /* the most writes in one commit */
    uint64_t hist[SFS_META_BATCH_BUCKETS];
    uint64_t reads;    /* batches of the clients' reads only (no commit) */
    uint64_t read_ops; /* the operations in them */
    uint32_t read_max;
    uint64_t internal; /* batches of the server's own operations only */
    uint64_t at_once;  /* reads answered on arrival (sfs_meta_read_now.c) */
    uint64_t first_ns; /* wall time of the first and the last client batch */
    uint64_t last_ns;
} sfs_meta_batch_stats_t;

struct sfs_meta {
    sfs_service_t    *service;
    sfs_meta_store_t *store;
    pthread_t         thread;
    int               thread_started;
    pthread_mutex_t   lock;
    pthread_cond_t    cond;
    pthread_cond_t    flushed;
    sfs_list_t        queue;
    int               stopping;
    int               batch_running; /* the metadata thread holds a batch (under `lock`) */
    int               read_now;      /* STRIPEFS_META_READ_NOW (sfs_meta_read_now.c) */
    uint64_t          in_flight;     /* progress thread only */

    sfs_meta_chooser_t      chooser;
    struct sfs_meta_leases *leases; /* migrate leases (sfs_meta_drain.c) */
    sfs_meta_pools_t        pools;  /* the pools in force (sfs_meta_pool_set.c; metadata thread) */
    uint64_t                next_refresh_ms;
    sfs_lock_table_t       *locks; /* byte-range locks (sfs_meta_lock_rpc.c; progress thread) */
    sfs_lock_clients_t      lock_clients; /* their owners (sfs_meta_lock_client.h) */
    uint64_t                next_lock_tick_ms;

    sfs_meta_delete_t     *deletes;
    uint32_t               delete_count;
    sfs_meta_delete_rpc_t *delete_rpcs;
    int                    delete_away_said; /* the last round logged targets not online */
    uint32_t               delete_rpc_count;
    uint64_t               next_delete_ms;

    sfs_meta_batch_stats_t batch_total;  /* since the start (under `lock`) */
    sfs_meta_batch_stats_t batch_recent; /* since the last report (under `lock`) */

    sfs_hash_t counters;
    sfs_list_t counter_list;
    sfs_hash_t counter_clients;    /* kept COUNTER answers, by client (sfs_meta_counter.c) */
    sfs_list_t counter_client_lru; /* ... least recently used first */

    struct sfs_meta_mirror_link   *mirror; /* meta.mirror's link (sfs_meta_mirror.h); NULL: none */
    struct sfs_meta_mirror_report *mirror_report; /* its state for management; NULL: none */

    char *test_die_file; /* STRIPEFS_TEST_META_DIE_BEFORE_REPLY's file; NULL: none */
};

/* sfs_meta_commit.c */
void *sfs_meta_thread(void *arg);
/* Queue an operation for the metadata thread (any thread). */
void sfs_meta_enqueue(sfs_meta_t *meta, sfs_meta_op_t *op);
int  sfs_meta_is_write(const sfs_meta_op_t *op);

/* sfs_meta_run.c: run `op` in `txn` (metadata thread); sets op->status
 * and, on failure, op->detail. */
void sfs_meta_run_op(sfs_meta_t *meta, sfs_meta_txn_t *txn, sfs_meta_op_t *op, uint64_t now);
/* QUOTA_* (sfs_meta_quota_rpc.c): the work in the batch's transaction
 * (returns the status), then the reply's arguments and payload (0 or
 * -ENOMEM; the payload lives in op->list_data). */
int sfs_meta_quota_run(sfs_meta_txn_t *txn, sfs_meta_op_t *op);
int sfs_meta_quota_reply(sfs_meta_t *meta, sfs_meta_op_t *op, sfs_wbuf_t *wb,
                         struct iovec *payload);
/* sfs_meta_quota_rpc.c, write bounds (sfs_proto_bound.h): a write open
 * (LOOKUP, CREATE) of a file of a limited owner gets SFS_CAP_BOUNDED
 * (sets op->bounded, in the op's transaction); the bound of a grant up to
 * `end` (SFS_BOUND_UNLIMITED: no limit applies) to the open of `cap`. */
int  sfs_meta_quota_open_bound(sfs_meta_txn_t *txn, sfs_meta_op_t *op);
void sfs_meta_quota_bound(sfs_meta_t *meta, const sfs_meta_op_t *op, const sfs_cap_t *cap,
                          uint64_t end, sfs_bound_t *bound);

/* POOL_SET, POOL_SHOW (sfs_meta_pool_rpc.c): the work in the batch's
 * transaction (returns the status); after the batch's commit, the pools
 * in force rebuilt from the store when a POOL_SET of `ops` succeeded; the
 * reply's arguments. */
int  sfs_meta_pool_start(sfs_meta_t *meta); /* at the start: the config's and the store's */
int  sfs_meta_pool_run(sfs_meta_t *meta, sfs_meta_txn_t *txn, sfs_meta_op_t *op);
void sfs_meta_pool_committed(sfs_meta_t *meta, sfs_list_t *ops);
void sfs_meta_pool_reply(sfs_meta_op_t *op, sfs_wbuf_t *wb);

/* sfs_meta_reply.c (progress thread) */
void sfs_meta_free_op(sfs_meta_op_t *op);
/* Reply to every operation of a batch (sfs_tp_worker_post callback). */
typedef struct sfs_meta_batch {
    sfs_meta_t *meta;
    sfs_list_t  ops;
} sfs_meta_batch_t;
void sfs_meta_batch_done(void *arg);
/* Reply to one operation (and count its times) now. */
void sfs_meta_reply_now(sfs_meta_t *meta, sfs_meta_op_t *op);

/* sfs_meta_read_now.c (progress thread) */
/* Answer a read (STAT, LOOKUP, READDIR) at once, on the progress thread,
 * when the metadata thread holds no batch and none is queued: 1 if
 * answered, 0 if it is to be queued as any other operation. */
int sfs_meta_read_now(sfs_meta_t *meta, sfs_meta_op_t *op);
/* Read STRIPEFS_META_READ_NOW (0, or -errno naming the bad value). */
int sfs_meta_read_now_init(sfs_meta_t *meta);

/* sfs_meta_counter.c (progress thread) */
int sfs_meta_counters_init(sfs_meta_t *meta);
/* Apply a COUNTER request of `client` (its worker uuid) and `uid`;
 * *before_p is the value before it. A tagged one (op_tag) is answered from
 * the answer kept for the same client, tag, uid, key and op if there is
 * one (the same call sent again after its reply was lost), without running
 * again: an ADD run twice would skip a range of the shared file. */
int sfs_meta_counter(sfs_meta_t *meta, const sfs_counter_req_t *creq, uint64_t client, uint32_t uid,
                     uint64_t *before_p);
void sfs_meta_counters_cleanup(sfs_meta_t *meta);

/* sfs_meta_replies.c: kept replies of tagged changes, in a change's
 * nested transaction (metadata thread). _replay answers `op` from a reply
 * the mirror kept before this server was promoted (1) or leaves it to run
 * (0); _keep notes the reply of one that succeeded in the batch's writes
 * for the mirror (a failure sets op->status: the change is undone with
 * it). _test_start and _test_die: the testing tunable
 * STRIPEFS_TEST_META_DIE_BEFORE_REPLY (a committed batch, no reply). */
int  sfs_meta_replies_replay(sfs_meta_t *meta, sfs_meta_op_t *op, uint64_t now);
void sfs_meta_replies_keep(sfs_meta_t *meta, sfs_meta_txn_t *txn, sfs_meta_op_t *op, uint64_t now);
/* After a batch's commit: the replies of its tagged changes that succeeded,
 * kept in this server's memory too (with a mirror only). */
void sfs_meta_replies_kept_here(sfs_meta_t *meta, sfs_list_t *ops, uint64_t now);
int  sfs_meta_replies_test_start(sfs_meta_t *meta);
void sfs_meta_replies_test_die(sfs_meta_t *meta, sfs_list_t *ops);

/* sfs_meta_delete.c (progress thread, from the timer) */
void sfs_meta_delete_tick(sfs_meta_t *meta, uint64_t now_ms);
void sfs_meta_delete_cleanup(sfs_meta_t *meta);

#endif
