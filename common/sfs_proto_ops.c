/*
 * The table of operations, generated from SFS_PROTO_OPS (sfs_proto.h): each
 * operation's name, role, codecs and handler, and decoding through it.
 */
#include "sfs_proto.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>

/* Each codec's decoder behind one signature. Codecs whose layout depends
 * on the operation take the opcode; the others ignore it. */
#define SFS_PROTO_CODEC(_codec)                                                                    \
    static void sfs_proto_unpack_##_codec(sfs_rbuf_t *rb, uint32_t opcode, void *out)              \
    {                                                                                              \
        (void)opcode;                                                                              \
        sfs_proto_##_codec##_unpack(rb, out);                                                      \
    }                                                                                              \
    static void sfs_proto_pack_##_codec(sfs_wbuf_t *wb, uint32_t opcode, const void *in)           \
    {                                                                                              \
        (void)opcode;                                                                              \
        sfs_proto_##_codec##_pack(wb, in);                                                         \
    }
#define SFS_PROTO_CODEC_BY_OP(_codec)                                                              \
    static void sfs_proto_unpack_##_codec(sfs_rbuf_t *rb, uint32_t opcode, void *out)              \
    {                                                                                              \
        sfs_proto_##_codec##_unpack(rb, opcode, out);                                              \
    }                                                                                              \
    static void sfs_proto_pack_##_codec(sfs_wbuf_t *wb, uint32_t opcode, const void *in)           \
    {                                                                                              \
        sfs_proto_##_codec##_pack(wb, opcode, in);                                                 \
    }

SFS_PROTO_CODEC(none)
SFS_PROTO_CODEC(hello_req)
SFS_PROTO_CODEC(hello_reply)
SFS_PROTO_CODEC(auth_req)
SFS_PROTO_CODEC(auth_reply)
SFS_PROTO_CODEC(ping_reply)
SFS_PROTO_CODEC(net_info_reply)
SFS_PROTO_CODEC(register_req)
SFS_PROTO_CODEC(heartbeat_req)
SFS_PROTO_CODEC(heartbeat_reply)
SFS_PROTO_CODEC_BY_OP(meta_req)
SFS_PROTO_CODEC_BY_OP(open_reply)
SFS_PROTO_CODEC(page_reply)
SFS_PROTO_CODEC(meta_statfs)
SFS_PROTO_CODEC(check_reply)
SFS_PROTO_CODEC(counter_req)
SFS_PROTO_CODEC(counter_reply)
SFS_PROTO_CODEC(lock_req)
SFS_PROTO_CODEC(unlock_req)
SFS_PROTO_CODEC(stat_reply)
SFS_PROTO_CODEC(size_req)
SFS_PROTO_CODEC(size_reply)
SFS_PROTO_CODEC(quota_req)
SFS_PROTO_CODEC(quota_grow_req)
SFS_PROTO_CODEC(quota_grow_reply)
SFS_PROTO_CODEC_BY_OP(chunk_req)
SFS_PROTO_CODEC(length_reply)
SFS_PROTO_CODEC(chunk_unlink_req)
SFS_PROTO_CODEC(chunk_unlink_reply)
SFS_PROTO_CODEC(chunk_list_reply)
SFS_PROTO_CODEC(mirror_list_reply)
SFS_PROTO_CODEC(mirror_report_req)
SFS_PROTO_CODEC(meta_mirror_req)
SFS_PROTO_CODEC(meta_mirror_state_req)
SFS_PROTO_CODEC(meta_mirror_reply)
SFS_PROTO_CODEC(meta_promote_req)
SFS_PROTO_CODEC(pool_list_reply)
SFS_PROTO_CODEC(pool_reply)
SFS_PROTO_CODEC(pool_set_req)
SFS_PROTO_CODEC(migrate_req)
SFS_PROTO_CODEC(migrate_reply)
SFS_PROTO_CODEC(migrate_lease_req)
SFS_PROTO_CODEC(direct_proof)

static const sfs_proto_op_info_t sfs_proto_ops[SFS_OP_MAX] = {
#define SFS_PROTO_OP_INFO(_name, _num, _role, _req, _rep, _handler)                                \
    [_num] = {.opcode         = _num,                                                              \
              .name           = #_name,                                                            \
              .role           = SFS_ROLE_##_role,                                                  \
              .request_codec  = #_req,                                                             \
              .reply_codec    = #_rep,                                                             \
              .handler        = #_handler,                                                         \
              .unpack_request = sfs_proto_unpack_##_req,                                           \
              .pack_request   = sfs_proto_pack_##_req,                                             \
              .request_size   = sizeof(sfs_##_req##_t),                                            \
              .unpack_reply   = sfs_proto_unpack_##_rep,                                           \
              .pack_reply     = sfs_proto_pack_##_rep,                                             \
              .reply_size     = sizeof(sfs_##_rep##_t)},
    SFS_PROTO_OPS(SFS_PROTO_OP_INFO)
#undef SFS_PROTO_OP_INFO
};

const sfs_proto_op_info_t *sfs_proto_op_info(uint32_t opcode)
{
    return opcode < SFS_OP_MAX && sfs_proto_ops[opcode].name ? &sfs_proto_ops[opcode] : NULL;
}

const char *sfs_op_name(uint32_t opcode)
{
    const sfs_proto_op_info_t *info = sfs_proto_op_info(opcode);

    return info ? info->name : NULL;
}

int sfs_op_role(uint32_t opcode)
{
    const sfs_proto_op_info_t *info = sfs_proto_op_info(opcode);

    return info ? (int)info->role : -1;
}

int sfs_proto_decode(uint32_t opcode, int reply, const void *args, size_t length, void *out,
                     size_t out_size)
{
    const sfs_proto_op_info_t *info = sfs_proto_op_info(opcode);
    sfs_rbuf_t                 rb;

    if (!info || out_size != (reply ? info->reply_size : info->request_size)) {
        return -EINVAL;
    }
    sfs_rbuf_init(&rb, args, length);
    (reply ? info->unpack_reply : info->unpack_request)(&rb, opcode, out);
    if (rb.error == -ENAMETOOLONG) {
        return -ENAMETOOLONG;
    }
    return rb.error || sfs_rbuf_remaining(&rb) ? -EBADMSG : 0;
}

int sfs_proto_encode(uint32_t opcode, int reply, const void *in, size_t in_size, sfs_wbuf_t *wb)
{
    const sfs_proto_op_info_t *info = sfs_proto_op_info(opcode);

    if (!info || in_size != (reply ? info->reply_size : info->request_size)) {
        return -EINVAL;
    }
    (reply ? info->pack_reply : info->pack_request)(wb, opcode, in);
    return wb->error;
}

const char *sfs_features_string(uint64_t features, char *buf, size_t size)
{
    static const char *const names[] = {
        "MUNGE authentication", "capabilities",        "fd handoff",
        "direct copy",          "typed cursors",       "byte-range locks",
        "dynamic attributes",   "mirroring",           [10] = "storage pools",
        [11] = "quotas",        [14] = "migrate",      [15] = "migrate leases",
        [16] = "write bounds",  [17] = "pool changes", [18] = "reply cache",
        [19] = "counter tags",  [20] = "lock owners"};
    size_t used = 0;

    buf[0] = '\0';
    for (unsigned bit = 0; bit < 64 && used < size; bit++) {
        int n;

        if (!(features & (1ull << bit))) {
            continue;
        }
        n = bit < sizeof(names) / sizeof(names[0]) && names[bit]
                ? snprintf(buf + used, size - used, "%s%s", used ? ", " : "", names[bit])
                : snprintf(buf + used, size - used, "%sbit %u", used ? ", " : "", bit);
        if (n < 0) {
            break;
        }
        used += (size_t)n;
    }
    return buf;
}
