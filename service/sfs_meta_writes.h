/*
 * The writes of a metadata transaction, as a mirror replays them: every
 * put and delete, in order, of the records of the metadata store's four
 * tables, and notes for the mirror's memory (kept replies, table 4). The
 * primary metadata server keeps them while a group-commit batch runs
 * (sfs_meta_store_record_writes) and sends the encoded set to its mirror,
 * which applies it in one transaction of its own (sfs_meta_store_apply):
 * the two stores then hold the same bytes.
 * Shipping the records rather than the operations means the mirror never
 * decides anything (ids, times, targets): it cannot diverge by deciding
 * differently.
 *
 * Encoding (little endian, sfs_buf.h):
 *   header  u32 magic "SFMW", u16 version (1), u16 0, u32 record count
 *   record  u8 op (SFS_META_WRITE_PUT/_DEL), u8 table (sfs_meta_table_t),
 *           u16 key length (1..SFS_META_WRITES_KEY_MAX),
 *           PUT only: u32 value length (0..SFS_META_WRITES_VALUE_MAX),
 *           the key, PUT only: the value
 * The count makes a set cut at a record's boundary invalid, not shorter.
 *
 * Pure code without LMDB, so that its parser can be fuzzed alone.
 */
#ifndef SFS_META_WRITES_H
#define SFS_META_WRITES_H

#include <stddef.h>
#include <stdint.h>

#define SFS_META_WRITES_MAGIC     0x574d4653u /* "SFMW" little endian */
#define SFS_META_WRITES_VERSION   1
#define SFS_META_WRITES_HEADER    12
#define SFS_META_WRITES_KEY_MAX   511 /* LMDB's default key limit */
#define SFS_META_WRITES_VALUE_MAX (1u << 20)

typedef enum {
    SFS_META_WRITE_PUT = 1,
    SFS_META_WRITE_DEL = 2,
} sfs_meta_write_op_t;

typedef enum {
    SFS_META_TABLE_INODES   = 0,
    SFS_META_TABLE_DENTRIES = 1,
    SFS_META_TABLE_COUNTERS = 2,
    SFS_META_TABLE_UNLINKED = 3,
    /* not a table of the store: kept replies for the mirror's memory
     * (sfs_meta_reply_table.h), which a store's apply skips; always last */
    SFS_META_TABLE_REPLIES = 4,
    SFS_META_TABLES
} sfs_meta_table_t;

typedef struct sfs_meta_writes {
    uint8_t *data; /* the header's room, then the records */
    size_t   length;
    size_t   capacity;
    uint32_t count;
} sfs_meta_writes_t;

/* Where a nested transaction began, to forget its writes when it aborts. */
typedef struct sfs_meta_writes_mark {
    size_t   length;
    uint32_t count;
} sfs_meta_writes_mark_t;

void sfs_meta_writes_init(sfs_meta_writes_t *writes);
void sfs_meta_writes_free(sfs_meta_writes_t *writes);
/* Append one write; `value` is ignored for a delete. -EINVAL (detail set)
 * for a key or value too long to encode, -ENOMEM. */
int  sfs_meta_writes_add(sfs_meta_writes_t *writes, sfs_meta_write_op_t op, sfs_meta_table_t table,
                         const void *key, size_t key_length, const void *value, size_t value_length);
void sfs_meta_writes_mark(const sfs_meta_writes_t *writes, sfs_meta_writes_mark_t *mark);
void sfs_meta_writes_rewind(sfs_meta_writes_t *writes, const sfs_meta_writes_mark_t *mark);
/* The encoded set (header filled in), valid until the next add or free;
 * NULL and 0 for a set without a record when nothing was ever added. */
const void *sfs_meta_writes_encoded(sfs_meta_writes_t *writes, size_t *length_p);

/* Called for each record of an encoded set, in order; a non-zero return
 * stops the walk and is returned. */
typedef int (*sfs_meta_write_fn)(void *arg, sfs_meta_write_op_t op, sfs_meta_table_t table,
                                 const void *key, size_t key_length, const void *value,
                                 size_t value_length);
/* Check an encoded set whole, then (with `fn`) walk it. -EPROTO with a
 * detail naming the record and what is wrong for anything malformed:
 * nothing is walked then. */
int sfs_meta_writes_parse(const void *data, size_t length, sfs_meta_write_fn fn, void *arg);

const char *sfs_meta_table_name(sfs_meta_table_t table);

#endif
