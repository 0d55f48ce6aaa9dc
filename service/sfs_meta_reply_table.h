/*
 * The kept replies a metadata mirror holds in memory (docs/metadata-mirror.md,
 * "Changes sent again are answered once"). The metadata server puts the
 * reply of each tagged change that succeeded into its batch's write set as a
 * note (SFS_META_TABLE_REPLIES, sfs_meta_reply_record.h), never into its
 * own store; its mirror keeps the notes here once the batch is applied, and
 * answers from them after a promotion; the server keeps its own here too
 * once the batch is committed, for a client that got no answer while the
 * map still names it (a cut of the client's link). Nothing reaches a disk, so
 * a mirrored commit writes no more pages for them; a mirror that restarts
 * loses them, and is not promoted before it is in step again, after which
 * every change still unanswered comes in a batch it applies.
 *
 * Bounded: per client the last SFS_META_REPLY_KEEP tags (each put forgets
 * the one that far back), none kept longer than SFS_META_REPLY_MAX_AGE_S,
 * and at most SFS_META_REPLY_TABLE_MAX in all (the oldest go first).
 * Thread-safe (one lock): the mirror's thread puts, the metadata thread
 * puts and reads.
 */
#ifndef SFS_META_REPLY_TABLE_H
#define SFS_META_REPLY_TABLE_H

#include "sfs_meta_reply_record.h"

#include <stddef.h>
#include <stdint.h>

#define SFS_META_REPLY_KEEP      4096
#define SFS_META_REPLY_MAX_AGE_S 3600
#define SFS_META_REPLY_TABLE_MAX 1000000

typedef struct sfs_meta_reply_table sfs_meta_reply_table_t;

int  sfs_meta_reply_table_create(sfs_meta_reply_table_t **table_p);
void sfs_meta_reply_table_destroy(sfs_meta_reply_table_t *table);
/* Keep the notes of an encoded write set (sfs_meta_writes.h) that a store
 * applied; `now_ns` (wall clock) dates them. A note that does not read as a
 * kept reply is skipped (counted in the return value: how many were). */
uint32_t sfs_meta_reply_table_apply(sfs_meta_reply_table_t *table, const void *data, size_t length,
                                    uint64_t now_ns);
/* Keep one reply directly: the metadata server's own, once its batch is
 * committed (a client that lost its link sends a change again to the same
 * server). 0, or -ENOMEM / -EINVAL (not a kept reply: does not read back). */
int sfs_meta_reply_table_put(sfs_meta_reply_table_t *table, uint64_t client, uint64_t op_tag,
                             const sfs_meta_reply_record_t *record, uint64_t now_ns);
/* 0 and the record, or a bare -ENOENT (-EPROTO can not come: a note is
 * checked when kept). */
int    sfs_meta_reply_table_get(sfs_meta_reply_table_t *table, uint64_t client, uint64_t op_tag,
                                sfs_meta_reply_record_t *record);
size_t sfs_meta_reply_table_count(sfs_meta_reply_table_t *table);

#endif
