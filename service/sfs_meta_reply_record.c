/* A kept reply's key and record (sfs_meta_reply_record.h). */
#include "sfs_meta_reply_record.h"

#include "sfs_buf.h"
#include "sfs_errno.h"
#include "sfs_meta_key.h"
#include "sfs_proto_quota.h"

#include <errno.h>
#include <string.h>

void sfs_meta_reply_key(uint64_t client, uint64_t op_tag, uint8_t key[SFS_META_REPLY_KEY])
{
    sfs_meta_put_be64(key, client);
    sfs_meta_put_be64(key + 8, op_tag);
}

int sfs_meta_reply_key_parse(const void *key, size_t length, uint64_t *client_p, uint64_t *op_tag_p)
{
    if (length != SFS_META_REPLY_KEY) {
        return sfs_error_set(-EPROTO, "kept reply: a key of %zu bytes (not %d)", length,
                             SFS_META_REPLY_KEY);
    }
    *client_p = sfs_meta_get_be64(key);
    *op_tag_p = sfs_meta_get_be64((const uint8_t *)key + 8);
    return 0;
}

size_t sfs_meta_reply_record_encode(const sfs_meta_reply_record_t *record, uint8_t *buf,
                                    size_t size)
{
    sfs_wbuf_t wb;

    sfs_wbuf_init(&wb, buf, size);
    sfs_wbuf_u8(&wb, SFS_META_REPLY_VERSION);
    sfs_wbuf_u8(&wb, record->created);
    sfs_wbuf_u8(&wb, record->bounded);
    sfs_wbuf_u8(&wb, record->has_attr ? 1 : 0);
    sfs_wbuf_u32(&wb, record->opcode);
    sfs_wbuf_u32(&wb, record->uid);
    sfs_wbuf_u64(&wb, record->time_ns);
    if (record->has_attr) {
        sfs_proto_attr_pack(&wb, &record->attr);
    }
    return wb.error ? 0 : wb.length;
}

int sfs_meta_reply_record_decode(const void *data, size_t length, sfs_meta_reply_record_t *record)
{
    sfs_rbuf_t rb;
    uint8_t    version;

    memset(record, 0, sizeof(*record));
    sfs_rbuf_init(&rb, data, length);
    version          = sfs_rbuf_u8(&rb);
    record->created  = sfs_rbuf_u8(&rb);
    record->bounded  = sfs_rbuf_u8(&rb);
    record->has_attr = sfs_rbuf_u8(&rb);
    record->opcode   = sfs_rbuf_u32(&rb);
    record->uid      = sfs_rbuf_u32(&rb);
    record->time_ns  = sfs_rbuf_u64(&rb);
    if (rb.error == 0 && version != SFS_META_REPLY_VERSION) {
        return sfs_error_set(-EPROTO, "kept reply: version %u (this server reads %d)", version,
                             SFS_META_REPLY_VERSION);
    }
    if (record->has_attr) {
        sfs_proto_attr_unpack(&rb, &record->attr);
    }
    if (rb.error || sfs_rbuf_remaining(&rb) != 0) {
        return sfs_error_set(-EPROTO,
                             "kept reply: a record of %zu bytes that is cut short or "
                             "too long",
                             length);
    }
    if (record->has_attr > 1 || record->created > SFS_CREATED_WRITER_QUOTA || record->bounded > 1 ||
        !sfs_proto_meta_tagged(record->opcode)) {
        return sfs_error_set(-EPROTO,
                             "kept reply: a record with has_attr %u, created %u, bounded %u, "
                             "opcode %u (a change's opcode expected)",
                             record->has_attr, record->created, record->bounded, record->opcode);
    }
    return 0;
}
