/*
 * A kept reply of the metadata server (docs/metadata-mirror.md, "Resent
 * changes"): the outcome of a namespace change that succeeded, stored in
 * the same batch as the change (and so mirrored with it), under the
 * client's worker uuid and the operation's op_tag (sfs_proto.h). A client
 * that sends the change again after a failover gets this reply back
 * instead of the change running twice (a mkdir that succeeded, then
 * EEXIST).
 *
 * Key (SFS_META_REPLY_KEY bytes): u64 client uuid, u64 op_tag, both big
 * endian, so that one client's records are adjacent and in tag order.
 * Record (little endian, sfs_buf.h):
 *   u8 version (1), u8 created, u8 bounded, u8 has_attr, u32 opcode,
 *   u32 uid, u64 time_ns (the batch's wall clock), then with has_attr 1
 *   the attributes the reply carries (sfs_proto_attr_pack; RMDIR's and
 *   RENAME's replies carry none).
 *
 * Pure code without LMDB, so that its parser can be fuzzed.
 */
#ifndef SFS_META_REPLY_RECORD_H
#define SFS_META_REPLY_RECORD_H

#include "sfs_proto.h"

#include <stddef.h>
#include <stdint.h>

#define SFS_META_REPLY_KEY        16
#define SFS_META_REPLY_VERSION    1
#define SFS_META_REPLY_RECORD_MAX (20 + 96 + 4 * SFS_STRIPE_COUNT_MAX)

typedef struct sfs_meta_reply_record {
    uint32_t   opcode;
    uint32_t   uid; /* who asked: another uid's resend is not answered from it */
    uint8_t    created;
    uint8_t    bounded;
    uint8_t    has_attr;
    uint64_t   time_ns;
    sfs_attr_t attr; /* with has_attr */
} sfs_meta_reply_record_t;

void sfs_meta_reply_key(uint64_t client, uint64_t op_tag, uint8_t key[SFS_META_REPLY_KEY]);
/* The two numbers of a key; -EPROTO (detail set) for a key of another size. */
int sfs_meta_reply_key_parse(const void *key, size_t length, uint64_t *client_p,
                             uint64_t *op_tag_p);
/* The record into buf (SFS_META_REPLY_RECORD_MAX bytes); its length. */
size_t sfs_meta_reply_record_encode(const sfs_meta_reply_record_t *record, uint8_t *buf,
                                    size_t size);
/* -EPROTO with a detail naming what is wrong for anything but a record
 * this version wrote (a record encodes again to the same bytes). */
int sfs_meta_reply_record_decode(const void *data, size_t length, sfs_meta_reply_record_t *record);

#endif
