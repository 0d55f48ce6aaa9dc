/*
 * Quotas of the metadata store (docs/quotas.md): per-uid and per-gid usage
 * (regular files, and the sum of their kept sizes) and limits, in the
 * store's counters table, changed in the same transaction as the inode
 * they count. sfs_meta_quota_charge is called by every inode put and
 * delete (sfs_meta_store_record.c), so usage cannot drift from the inodes:
 * what a commit makes durable is both or neither.
 *
 * Functions return 0 or a negative errno with the detail set; -EDQUOT
 * details name the quota ("quota: user alice (uid 1001) over its ...").
 */
#ifndef SFS_META_QUOTA_H
#define SFS_META_QUOTA_H

#include "sfs_meta_store.h"

#include <stdint.h>

/* An inode changes from `old` to `new` (either NULL: created, removed):
 * move its file and bytes between the usage records of its owners. Never
 * refuses (creates, moves and growth are checked before, below). */
int sfs_meta_quota_charge(sfs_meta_txn_t *txn, const sfs_attr_t *old, const sfs_attr_t *new);

/* A new file owned as `attr` says may be created (-EDQUOT naming the
 * quota and `path` when its owner or group is at its file limit). */
int sfs_meta_quota_may_create(sfs_meta_txn_t *txn, const sfs_attr_t *attr, const char *path);

/* A file going from the owners of `old` to those of `new` (chown, chgrp
 * by a user) may join them (-EDQUOT naming the quota and `path` when a
 * new owner or group would pass a limit). */
int sfs_meta_quota_may_move(sfs_meta_txn_t *txn, const sfs_attr_t *old, const sfs_attr_t *new,
                            const char *path);

/* 1 when a space limit applies to the owner or group of `attr`, 0 when
 * not, or a negative errno. */
int sfs_meta_quota_limited(sfs_meta_txn_t *txn, const sfs_attr_t *attr);

/* A grant to a writer of `attr` about to write up to `end` (the kept size
 * for SIZE BEGIN's first grant): -EDQUOT if growing to `end` passes a
 * limit; else attr->size becomes the granted end (>= end; not known any
 * more if it grew), which the caller's sfs_meta_put_inode charges.
 * Nothing changes where no space limit applies (*limited_p 0). */
int sfs_meta_quota_grant(sfs_meta_txn_t *txn, sfs_attr_t *attr, uint64_t end, uint64_t *granted_p,
                         int *limited_p);

/* QUOTA_GROW: a writer of `entry_id` is about to write up to `end`. Past
 * the kept size, the growth is charged (the kept size becomes `end`, not
 * known: stats ask the targets) if no limit is passed; the grant may be a
 * little beyond `end` (*granted_p), so that not every write asks.
 * *limited_p: whether any space limit applies. */
int sfs_meta_quota_grow(sfs_meta_txn_t *txn, uint64_t entry_id, uint64_t end, uint64_t *granted_p,
                        int *limited_p);

/* QUOTA_SET: the limits `flags` name (SFS_QUOTA_SET_*) of (kind, id). */
int sfs_meta_quota_set(sfs_meta_txn_t *txn, const sfs_quota_req_t *req);

/* One record (zeros where none is kept). */
int sfs_meta_quota_get(sfs_meta_txn_t *txn, uint32_t kind, uint32_t id, sfs_quota_entry_t *entry);

/* Write a whole record (usage and limits; all zeros: remove it). */
int sfs_meta_quota_put_record(sfs_meta_txn_t *txn, const sfs_quota_entry_t *entry);

/* Records from (kind, id) on, in (kind, id) order: up to `max` in
 * entries[], *count_p of them, *eof_p when they are the last. */
int sfs_meta_quota_list(sfs_meta_txn_t *txn, uint32_t kind, uint32_t id, uint32_t max,
                        sfs_quota_entry_t *entries, uint32_t *count_p, int *eof_p);

/* The check (stripefs-fsck): recount usage from every inode and compare
 * with the records; with `repair`, write the recount. `line` gets each
 * difference; stats->problems and ->repaired are added to.
 * (sfs_meta_quota_check.c) */
int sfs_meta_quota_check(sfs_meta_txn_t *txn, int repair, sfs_ns_report_fn line, void *arg,
                         sfs_ns_check_stats_t *stats);

/* At the metadata server's start: a store whose usage was never counted
 * (from before quotas) gets it counted from its inodes, once. */
int sfs_meta_quota_upgrade(sfs_meta_store_t *store);

/* "user alice (uid 1001)" / "group staff (gid 50)" into buf. */
const char *sfs_meta_quota_who(uint32_t kind, uint32_t id, char *buf, size_t size);

#endif
