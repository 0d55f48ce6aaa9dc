/*
 * A metadata transaction's writes: kept in order, encoded for the mirror,
 * and checked before a mirror applies any (sfs_meta_writes.h).
 */
#include "sfs_meta_writes.h"

#include "sfs_buf.h"
#include "sfs_errno.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void sfs_meta_writes_init(sfs_meta_writes_t *writes)
{
    memset(writes, 0, sizeof(*writes));
}

void sfs_meta_writes_free(sfs_meta_writes_t *writes)
{
    free(writes->data);
    sfs_meta_writes_init(writes);
}

const char *sfs_meta_table_name(sfs_meta_table_t table)
{
    switch (table) {
    case SFS_META_TABLE_INODES:
        return "inodes";
    case SFS_META_TABLE_DENTRIES:
        return "dentries";
    case SFS_META_TABLE_COUNTERS:
        return "counters";
    case SFS_META_TABLE_UNLINKED:
        return "unlinked";
    case SFS_META_TABLE_REPLIES:
        return "replies";
    default:
        return "unknown table";
    }
}

static int sfs_meta_writes_grow(sfs_meta_writes_t *writes, size_t need)
{
    size_t   capacity = writes->capacity ? writes->capacity : 4096;
    uint8_t *grown;

    if (writes->capacity - writes->length >= need) {
        return 0;
    }
    while (capacity - writes->length < need) {
        capacity *= 2;
    }
    grown = realloc(writes->data, capacity);
    if (!grown) {
        return sfs_error_set(-ENOMEM, "metadata writes: cannot keep %zu bytes for the mirror",
                             capacity);
    }
    writes->data     = grown;
    writes->capacity = capacity;
    return 0;
}

int sfs_meta_writes_add(sfs_meta_writes_t *writes, sfs_meta_write_op_t op, sfs_meta_table_t table,
                        const void *key, size_t key_length, const void *value, size_t value_length)
{
    int        put = op == SFS_META_WRITE_PUT;
    size_t     need;
    sfs_wbuf_t wb;
    int        rc;

    if ((op != SFS_META_WRITE_PUT && op != SFS_META_WRITE_DEL) || table >= SFS_META_TABLES ||
        key_length == 0 || key_length > SFS_META_WRITES_KEY_MAX ||
        (put && value_length > SFS_META_WRITES_VALUE_MAX)) {
        return sfs_error_set(-EINVAL,
                             "metadata writes: cannot keep a write of %zu key and %zu value bytes "
                             "in table %s for the mirror",
                             key_length, put ? value_length : 0, sfs_meta_table_name(table));
    }
    need = 4 + (put ? 4 : 0) + key_length + (put ? value_length : 0);
    if (writes->length == 0) {
        need += SFS_META_WRITES_HEADER; /* the header's room, filled in when encoded */
    }
    if ((rc = sfs_meta_writes_grow(writes, need)) != 0) {
        return rc;
    }
    if (writes->length == 0) {
        writes->length = SFS_META_WRITES_HEADER;
    }
    sfs_wbuf_init(&wb, writes->data + writes->length, writes->capacity - writes->length);
    sfs_wbuf_u8(&wb, (uint8_t)op);
    sfs_wbuf_u8(&wb, (uint8_t)table);
    sfs_wbuf_u16(&wb, (uint16_t)key_length);
    if (put) {
        sfs_wbuf_u32(&wb, (uint32_t)value_length);
    }
    sfs_wbuf_bytes(&wb, key, key_length);
    if (put && value_length) {
        sfs_wbuf_bytes(&wb, value, value_length);
    }
    if (wb.error) { /* cannot happen: the room was made above */
        return sfs_error_set(-EIO, "metadata writes: encoding a record failed");
    }
    writes->length += wb.length;
    writes->count++;
    return 0;
}

void sfs_meta_writes_mark(const sfs_meta_writes_t *writes, sfs_meta_writes_mark_t *mark)
{
    mark->length = writes->length;
    mark->count  = writes->count;
}

void sfs_meta_writes_rewind(sfs_meta_writes_t *writes, const sfs_meta_writes_mark_t *mark)
{
    writes->length = mark->length;
    writes->count  = mark->count;
}

const void *sfs_meta_writes_encoded(sfs_meta_writes_t *writes, size_t *length_p)
{
    sfs_wbuf_t wb;

    if (writes->length == 0) {
        *length_p = 0;
        return NULL;
    }
    sfs_wbuf_init(&wb, writes->data, SFS_META_WRITES_HEADER);
    sfs_wbuf_u32(&wb, SFS_META_WRITES_MAGIC);
    sfs_wbuf_u16(&wb, SFS_META_WRITES_VERSION);
    sfs_wbuf_u16(&wb, 0);
    sfs_wbuf_u32(&wb, writes->count);
    *length_p = writes->length;
    return writes->data;
}

/* One pass over the records: checks only (fn NULL) or walks them. */
static int sfs_meta_writes_walk(const void *data, size_t length, sfs_meta_write_fn fn, void *arg)
{
    sfs_rbuf_t rb;
    uint32_t   magic, version, reserved, count;

    sfs_rbuf_init(&rb, data, length);
    magic    = sfs_rbuf_u32(&rb);
    version  = sfs_rbuf_u16(&rb);
    reserved = sfs_rbuf_u16(&rb);
    count    = sfs_rbuf_u32(&rb);
    if (rb.error || magic != SFS_META_WRITES_MAGIC) {
        return sfs_error_set(-EPROTO, "metadata writes: not a write set (%zu bytes, no header)",
                             length);
    }
    if (version != SFS_META_WRITES_VERSION || reserved != 0) {
        return sfs_error_set(-EPROTO, "metadata writes: version %u, this server reads version %u",
                             version, SFS_META_WRITES_VERSION);
    }
    for (uint32_t i = 0; i < count; i++) {
        unsigned       op        = sfs_rbuf_u8(&rb);
        unsigned       table     = sfs_rbuf_u8(&rb);
        size_t         key_len   = sfs_rbuf_u16(&rb);
        size_t         value_len = op == SFS_META_WRITE_PUT ? sfs_rbuf_u32(&rb) : 0;
        const uint8_t *key, *value;
        int            rc;

        if (rb.error) {
            return sfs_error_set(-EPROTO, "metadata writes: record %u of %u is cut short", i + 1,
                                 count);
        }
        if (op != SFS_META_WRITE_PUT && op != SFS_META_WRITE_DEL) {
            return sfs_error_set(-EPROTO, "metadata writes: record %u: unknown operation %u", i + 1,
                                 op);
        }
        if (table >= SFS_META_TABLES) {
            return sfs_error_set(-EPROTO, "metadata writes: record %u: unknown table %u", i + 1,
                                 table);
        }
        if (key_len == 0 || key_len > SFS_META_WRITES_KEY_MAX ||
            value_len > SFS_META_WRITES_VALUE_MAX) {
            return sfs_error_set(-EPROTO,
                                 "metadata writes: record %u: a %zu-byte key and %zu-byte value "
                                 "(at most %u and %u)",
                                 i + 1, key_len, value_len, SFS_META_WRITES_KEY_MAX,
                                 SFS_META_WRITES_VALUE_MAX);
        }
        key   = sfs_rbuf_take(&rb, key_len);
        value = value_len ? sfs_rbuf_take(&rb, value_len) : NULL;
        if (rb.error) {
            return sfs_error_set(-EPROTO, "metadata writes: record %u of %u is cut short", i + 1,
                                 count);
        }
        if (fn && (rc = fn(arg, (sfs_meta_write_op_t)op, (sfs_meta_table_t)table, key, key_len,
                           value ? (const void *)value : (const void *)"", value_len)) != 0) {
            return rc;
        }
    }
    if (sfs_rbuf_remaining(&rb) != 0) {
        return sfs_error_set(-EPROTO, "metadata writes: %zu bytes after the last of %u records",
                             sfs_rbuf_remaining(&rb), count);
    }
    return 0;
}

int sfs_meta_writes_parse(const void *data, size_t length, sfs_meta_write_fn fn, void *arg)
{
    int rc = sfs_meta_writes_walk(data, length, NULL, NULL);

    if (rc || !fn) {
        return rc;
    }
    return sfs_meta_writes_walk(data, length, fn, arg);
}
