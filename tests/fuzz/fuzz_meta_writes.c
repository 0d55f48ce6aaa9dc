/*
 * The metadata mirror's write sets (service/sfs_meta_writes.c), fed
 * arbitrary bytes: the parser must never read out of bounds, and a set it
 * accepts must encode again, record by record, to the same bytes (the
 * encoding is canonical), so a mirror applies exactly what was sent.
 */
#include "sfs_meta_writes.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int copy_record(void *arg, sfs_meta_write_op_t op, sfs_meta_table_t table, const void *key,
                       size_t key_length, const void *value, size_t value_length)
{
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
