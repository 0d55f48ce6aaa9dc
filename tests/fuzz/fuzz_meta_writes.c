/*
 * The metadata mirror's write sets (service/sfs_meta_writes.c), fed
 * arbitrary bytes: the parser must never read out of bounds, and a set it
 * accepts must encode again, record by record, to the same bytes (the
 * encoding is canonical), so a mirror applies exactly what was sent. The
 * puts into the kept replies' table are then read as a promoted mirror
 * reads them (sfs_meta_reply_record.c): a record it accepts encodes again
 * to the same bytes.
 */
#include "sfs_meta_reply_record.h"
#include "sfs_meta_writes.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void read_reply(const void *key, size_t key_length, const void *value, size_t value_length)
{
    sfs_meta_reply_record_t record;
    uint8_t                 again[SFS_META_REPLY_RECORD_MAX];
    uint64_t                client, tag;

    (void)sfs_meta_reply_key_parse(key, key_length, &client, &tag);
    if (sfs_meta_reply_record_decode(value, value_length, &record) == 0) {
        size_t length = sfs_meta_reply_record_encode(&record, again, sizeof(again));

        if (length != value_length || memcmp(again, value, length) != 0) {
            abort();
        }
    }
}

static int copy_record(void *arg, sfs_meta_write_op_t op, sfs_meta_table_t table, const void *key,
                       size_t key_length, const void *value, size_t value_length)
{
    if (op == SFS_META_WRITE_PUT && table == SFS_META_TABLE_REPLIES) {
        read_reply(key, key_length, value, value_length);
    }
    return sfs_meta_writes_add(arg, op, table, key, key_length, value, value_length) ? 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t length)
{
    sfs_meta_writes_t again;
    const void       *out;
    size_t            out_length;

    sfs_meta_writes_init(&again);
    if (sfs_meta_writes_parse(data, length, copy_record, &again) == 0) {
        out = sfs_meta_writes_encoded(&again, &out_length);
        if (again.count == 0) {
            /* a set of no record: valid, and nothing to encode */
            if (length != SFS_META_WRITES_HEADER) {
                abort();
            }
        } else if (out_length != length || memcmp(out, data, length) != 0) {
            abort();
        }
    }
    sfs_meta_writes_free(&again);
    return 0;
}
