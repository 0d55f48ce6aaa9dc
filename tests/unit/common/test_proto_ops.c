/* The table of operations (common/sfs_proto_ops.c) and the codecs it names:
 * every operation has its codecs and handler, decoding goes through the
 * right struct, the typed fields round-trip, and HELLO's features let
 * neighbouring versions talk. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sfs_map.h"
#include "sfs_proto.h"

static void test_every_op_in_the_table(void **state)
{
    unsigned ops = 0;

    (void)state;
    for (uint32_t op = 0; op < SFS_OP_MAX; op++) {
        const sfs_proto_op_info_t *info = sfs_proto_op_info(op);

        if (!info) {
            assert_null(sfs_op_name(op));
            assert_int_equal(sfs_op_role(op), -1);
            continue;
        }
        ops++;
        assert_int_equal(info->opcode, op);
        assert_string_equal(sfs_op_name(op), info->name);
        assert_non_null(info->unpack_request);
        assert_non_null(info->unpack_reply);
        assert_true(info->request_size > 0 && info->reply_size > 0);
        assert_true(info->handler[0] != '\0');
    }
    assert_int_equal(ops, 56); /* 44 + META_STATS, MIGRATE_COMMIT, _DRAIN, _BEGIN, CHUNK_MOVED,
                                * MIRROR_REBUILD */
    /* + POOL_SET, POOL_SHOW, MIGRATE_LEASE, META_MIRROR, META_MIRROR_STATE, META_PROMOTE */
    assert_int_equal(sfs_op_role(SFS_OP_META_PROMOTE), SFS_ROLE_META_MIRROR);
    assert_string_equal(sfs_proto_op_info(SFS_OP_META_PROMOTE)->handler, "meta_promote");
    assert_string_equal(sfs_proto_op_info(SFS_OP_META_PROMOTE)->reply_codec, "meta_mirror_reply");
    assert_int_equal(sfs_op_role(SFS_OP_META_MIRROR_STATE), SFS_ROLE_MGMT);
    assert_string_equal(sfs_proto_op_info(SFS_OP_META_MIRROR_STATE)->handler, "meta_mirror_state");
    assert_string_equal(sfs_proto_op_info(SFS_OP_META_MIRROR)->handler, "meta_mirror");
    assert_int_equal(sfs_op_role(SFS_OP_META_MIRROR), SFS_ROLE_META_MIRROR);
    assert_string_equal(sfs_proto_op_info(SFS_OP_META_STATS)->handler, "meta_stats");
    assert_string_equal(sfs_proto_op_info(SFS_OP_MIRROR_REBUILD)->handler, "mirror_rebuild");
    assert_string_equal(sfs_proto_op_info(SFS_OP_MIRROR_LIST)->reply_codec, "mirror_list_reply");
    assert_string_equal(sfs_proto_op_info(SFS_OP_MIRROR_REPORT)->request_codec,
                        "mirror_report_req");
    assert_string_equal(sfs_proto_op_info(SFS_OP_CHUNK_UNLINK)->request_codec, "chunk_unlink_req");
    assert_string_equal(sfs_proto_op_info(SFS_OP_HEARTBEAT)->reply_codec, "heartbeat_reply");
    assert_string_equal(sfs_proto_op_info(SFS_OP_HELLO)->handler, "transport");
    assert_null(sfs_proto_op_info(SFS_OP_MAX));
    assert_null(sfs_proto_op_info(UINT32_MAX));
}

static void test_decode_checks_size_and_rest(void **state)
{
    uint8_t                  buf[64];
    sfs_wbuf_t               wb;
    sfs_heartbeat_reply_t    reply = {.flags = SFS_HEARTBEAT_REGISTER_AGAIN | 0x80000000u}, got;
    sfs_chunk_unlink_reply_t wrong;

    (void)state;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_heartbeat_reply_pack(&wb, &reply);
    assert_int_equal(sfs_proto_decode(SFS_OP_HEARTBEAT, 1, buf, wb.length, &got, sizeof(got)), 0);
    assert_int_equal(got.flags, reply.flags); /* an unknown bit is kept, not refused */
    assert_int_equal(sfs_proto_decode(SFS_OP_HEARTBEAT, 1, buf, wb.length + 1, &got, sizeof(got)),
                     -EBADMSG);
    assert_int_equal(sfs_proto_decode(SFS_OP_HEARTBEAT, 1, buf, 2, &got, sizeof(got)), -EBADMSG);
    assert_int_equal(
        sfs_proto_decode(SFS_OP_HEARTBEAT, 0, buf, wb.length, &wrong, sizeof(wrong) + 1), -EINVAL);
    assert_int_equal(sfs_proto_decode(63, 0, buf, 0, &got, sizeof(got)), -EINVAL);
}

/* MIGRATE_*'s codecs: every field back; a bad op and a long list refused */
static void test_migrate_codecs(void **state)
{
    sfs_migrate_req_t req = {.op            = SFS_DRAIN_SET,
                             .from          = 101,
                             .to            = 203,
                             .entry_id      = UINT64_MAX - 1,
                             .write_gen     = 77,
                             .fence_until_s = 1800000000u},
                      got;
    static sfs_migrate_reply_t reply = {.count = 2, .targets = {101, 304}}, back;
    uint8_t                    buf[64 + 4 * SFS_DRAIN_LIST_MAX];
    sfs_wbuf_t                 wb;

    (void)state;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_migrate_req_pack(&wb, &req);
    assert_int_equal(sfs_proto_decode(SFS_OP_MIGRATE_COMMIT, 0, buf, wb.length, &got, sizeof(got)),
                     0);
    assert_int_equal(got.op, req.op);
    assert_int_equal(got.from, 101);
    assert_int_equal(got.to, 203);
    assert_true(got.entry_id == UINT64_MAX - 1);
    assert_int_equal(got.write_gen, 77);
    assert_int_equal(got.fence_until_s, 1800000000u);
    req.op = 9;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_migrate_req_pack(&wb, &req);
    assert_int_equal(sfs_proto_decode(SFS_OP_MIGRATE_DRAIN, 0, buf, wb.length, &got, sizeof(got)),
                     -EBADMSG);
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_migrate_reply_pack(&wb, &reply);
    assert_int_equal(sfs_proto_decode(SFS_OP_MIGRATE_DRAIN, 1, buf, wb.length, &back, sizeof(back)),
                     0);
    assert_int_equal(back.count, 2);
    assert_int_equal(back.targets[1], 304);
    reply.count = SFS_DRAIN_LIST_MAX + 1;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_migrate_reply_pack(&wb, &reply);
    assert_int_not_equal(wb.error, 0);
    assert_string_equal(sfs_proto_op_info(SFS_OP_CHUNK_MOVED)->request_codec, "chunk_req");
}

/* MIGRATE_LEASE's codec: every field back; a bad op, lease, count or token
 * refused both ways */
static void test_migrate_lease_codec(void **state)
{
    static sfs_migrate_lease_req_t req, got;
    static uint8_t                 buf[32 + 4 * SFS_LEASE_TARGETS_MAX];
    sfs_wbuf_t                     wb;

    (void)state;
    req.op         = SFS_LEASE_TAKE;
    req.lease_s    = 30;
    req.pid        = 31540;
    req.count      = 3;
    req.token      = UINT64_MAX - 5;
    req.targets[0] = 101;
    req.targets[1] = 102;
    req.targets[2] = UINT32_MAX;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_migrate_lease_req_pack(&wb, &req);
    assert_int_equal(wb.error, 0);
    assert_int_equal(wb.length, 24 + 3 * 4);
    assert_int_equal(sfs_proto_decode(SFS_OP_MIGRATE_LEASE, 0, buf, wb.length, &got, sizeof(got)),
                     0);
    assert_int_equal(got.op, SFS_LEASE_TAKE);
    assert_int_equal(got.lease_s, 30);
    assert_int_equal(got.pid, 31540);
    assert_int_equal(got.count, 3);
    assert_true(got.token == UINT64_MAX - 5);
    assert_int_equal(got.targets[1], 102);
    assert_int_equal(got.targets[2], UINT32_MAX);
    assert_int_equal(
        sfs_proto_decode(SFS_OP_MIGRATE_LEASE, 0, buf, wb.length - 1, &got, sizeof(got)), -EBADMSG);
    assert_string_equal(sfs_proto_op_info(SFS_OP_MIGRATE_LEASE)->handler, "meta_lease");
    assert_string_equal(sfs_proto_op_info(SFS_OP_MIGRATE_LEASE)->reply_codec, "none");
    /* out of range: refused by the packer and by the decoder */
    for (int bad = 0; bad < 5; bad++) {
        sfs_migrate_lease_req_t b = req;

        b.op      = bad == 0 ? 3 : b.op;
        b.lease_s = bad == 1 ? 0 : bad == 2 ? SFS_LEASE_S_MAX + 1 : b.lease_s;
        b.count   = bad == 3 ? SFS_LEASE_TARGETS_MAX + 1 : b.count;
        b.token   = bad == 4 ? 0 : b.token;
        sfs_wbuf_init(&wb, buf, sizeof(buf));
        sfs_proto_migrate_lease_req_pack(&wb, &b);
        assert_int_not_equal(wb.error, 0);
        sfs_wbuf_init(&wb, buf, sizeof(buf));
        sfs_wbuf_u32(&wb, b.op);
        sfs_wbuf_u32(&wb, b.lease_s);
        sfs_wbuf_u32(&wb, b.pid);
        sfs_wbuf_u32(&wb, b.count);
        sfs_wbuf_u64(&wb, b.token);
        sfs_wbuf_u32(&wb, 101);
        assert_int_equal(
            sfs_proto_decode(SFS_OP_MIGRATE_LEASE, 0, buf, wb.length, &got, sizeof(got)), -EBADMSG);
    }
    assert_true((SFS_FEATURES_THIS & SFS_FEATURE_MIGRATE_LEASE) != 0);
    assert_true(SFS_FEATURE_MIGRATE_LEASE == 1ull << 15);
}

static void test_chunk_unlink_ids(void **state)
{
    static sfs_chunk_unlink_req_t req, got;
    static uint8_t                buf[16 + 8 * SFS_CHUNK_UNLINK_MAX + 8];
    sfs_wbuf_t                    wb;

    (void)state;
    req.target_id    = 7;
    req.count        = 3;
    req.entry_ids[0] = 11;
    req.entry_ids[1] = UINT64_MAX;
    req.entry_ids[2] = 1;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_chunk_unlink_req_pack(&wb, &req);
    assert_int_equal(sfs_proto_decode(SFS_OP_CHUNK_UNLINK, 0, buf, wb.length, &got, sizeof(got)),
                     0);
    assert_int_equal(got.target_id, 7);
    assert_int_equal(got.count, 3);
    assert_true(got.entry_ids[1] == UINT64_MAX);
    /* a count over the maximum is refused both ways */
    req.count = SFS_CHUNK_UNLINK_MAX + 1;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_chunk_unlink_req_pack(&wb, &req);
    assert_int_equal(wb.error, -EMSGSIZE);
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_wbuf_u32(&wb, 7);
    sfs_wbuf_u32(&wb, SFS_CHUNK_UNLINK_MAX + 1);
    assert_int_equal(sfs_proto_decode(SFS_OP_CHUNK_UNLINK, 0, buf, wb.length, &got, sizeof(got)),
                     -EBADMSG);
}

static void test_listing_cursors(void **state)
{
    static sfs_meta_req_t req, got;
    static uint8_t        buf[SFS_PROTO_ARGS_MAX];
    sfs_wbuf_t            wb;

    (void)state;
    snprintf(req.path, sizeof(req.path), "/d");
    snprintf(req.after_name, sizeof(req.after_name), "file-0042");
    req.after_id    = 1ull << 40;
    req.max_entries = 99;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_meta_req_pack(&wb, SFS_OP_READDIR, &req);
    assert_int_equal(sfs_proto_decode(SFS_OP_READDIR, 0, buf, wb.length, &got, sizeof(got)), 0);
    assert_string_equal(got.after_name, "file-0042");
    assert_true(got.after_id == 0);
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_meta_req_pack(&wb, SFS_OP_META_LIST, &req);
    assert_int_equal(sfs_proto_decode(SFS_OP_META_LIST, 0, buf, wb.length, &got, sizeof(got)), 0);
    assert_true(got.after_id == 1ull << 40);
    assert_string_equal(got.after_name, "");
    assert_int_equal(got.max_entries, 99);
}

static size_t pack_hello(uint8_t *buf, size_t size, uint64_t features, int with_features, int extra)
{
    sfs_hello_req_t req;
    sfs_wbuf_t      wb;
    static uint8_t  address[8] = {1, 2, 3};

    memset(&req, 0, sizeof(req));
    req.peer_kind      = SFS_PEER_CLIENT;
    req.method         = SFS_AUTH_METHOD_SECRET;
    req.address        = address;
    req.address_length = sizeof(address);
    req.features       = features;
    sfs_wbuf_init(&wb, buf, size);
    sfs_proto_hello_req_pack(&wb, &req);
    if (!with_features) {
        return wb.length - 8; /* what a version before features sent */
    }
    for (int i = 0; i < extra; i++) {
        sfs_wbuf_u8(&wb, 0x5a); /* a newer version's fields after features */
    }
    return wb.length;
}

/* MIRROR_LIST's groups travel in the reply's arguments: round trip, too
 * many groups and unknown states refused. */
static void test_mirror_list(void **state)
{
    static sfs_mirror_list_reply_t list, got;
    static uint8_t                 buf[SFS_PROTO_ARGS_MAX];
    sfs_wbuf_t                     wb;

    (void)state;
    list.count     = 2;
    list.groups[0] = (sfs_mirror_group_info_t){1, 101, 201, SFS_MIRROR_STATE_GOOD,
                                               SFS_MIRROR_STATE_NEEDS_RESYNC};
    list.groups[1] =
        (sfs_mirror_group_info_t){2, 301, 401, SFS_MIRROR_STATE_RESYNCING, SFS_MIRROR_STATE_BAD};
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    assert_int_equal(sfs_proto_encode(SFS_OP_MIRROR_LIST, 1, &list, sizeof(list), &wb), 0);
    assert_int_equal(sfs_proto_decode(SFS_OP_MIRROR_LIST, 1, buf, wb.length, &got, sizeof(got)), 0);
    assert_int_equal(got.count, 2);
    assert_memory_equal(got.groups, list.groups, 2 * sizeof(list.groups[0]));
    assert_string_equal(sfs_mirror_state_name(got.groups[0].secondary_state), "needs-resync");
    assert_string_equal(sfs_mirror_state_name(got.groups[1].secondary_state), "bad");
    buf[4 + 4 * 4] = 9; /* group 0's secondary state: no such state */
    assert_int_equal(sfs_proto_decode(SFS_OP_MIRROR_LIST, 1, buf, wb.length, &got, sizeof(got)),
                     -EBADMSG);
    /* the metadata mirror's part, after the groups */
    list.meta = (sfs_meta_mirror_info_t){1, SFS_MIRROR_STATE_RESYNCING, 0x123456789ull};
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    assert_int_equal(sfs_proto_encode(SFS_OP_MIRROR_LIST, 1, &list, sizeof(list), &wb), 0);
    assert_int_equal(sfs_proto_decode(SFS_OP_MIRROR_LIST, 1, buf, wb.length, &got, sizeof(got)), 0);
    assert_memory_equal(&got.meta, &list.meta, sizeof(list.meta));
    buf[wb.length - 12] = SFS_MIRROR_STATE_BAD; /* never a metadata mirror's state */
    assert_int_equal(sfs_proto_decode(SFS_OP_MIRROR_LIST, 1, buf, wb.length, &got, sizeof(got)),
                     -EBADMSG);
    list.count = SFS_MIRROR_LIST_MAX + 1;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    assert_int_not_equal(sfs_proto_encode(SFS_OP_MIRROR_LIST, 1, &list, sizeof(list), &wb), 0);
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_wbuf_u32(&wb, SFS_MIRROR_LIST_MAX + 1);
    assert_int_equal(sfs_proto_decode(SFS_OP_MIRROR_LIST, 1, buf, wb.length, &got, sizeof(got)),
                     -EBADMSG);
}

/* META_MIRROR_STATE: every field back; bad and unknown states refused. */
static void test_meta_mirror_state(void **state)
{
    sfs_meta_mirror_state_req_t req = {.node_id = 3, .state = SFS_MIRROR_STATE_GOOD, .seq = 77},
                                got;
    uint8_t    buf[32];
    sfs_wbuf_t wb;

    (void)state;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    assert_int_equal(sfs_proto_encode(SFS_OP_META_MIRROR_STATE, 0, &req, sizeof(req), &wb), 0);
    assert_int_equal(wb.length, 16);
    assert_int_equal(
        sfs_proto_decode(SFS_OP_META_MIRROR_STATE, 0, buf, wb.length, &got, sizeof(got)), 0);
    assert_memory_equal(&got, &req, sizeof(req));
    for (uint32_t bad = SFS_MIRROR_STATE_BAD; bad <= SFS_MIRROR_STATE_BAD + 1; bad++) {
        req.state = bad;
        sfs_wbuf_init(&wb, buf, sizeof(buf));
        assert_int_equal(sfs_proto_encode(SFS_OP_META_MIRROR_STATE, 0, &req, sizeof(req), &wb), 0);
        assert_int_equal(
            sfs_proto_decode(SFS_OP_META_MIRROR_STATE, 0, buf, wb.length, &got, sizeof(got)),
            -EBADMSG);
    }
}

/* META_PROMOTE: both fields back, and a request cut short refused. */
static void test_meta_promote(void **state)
{
    sfs_meta_promote_req_t req = {.old_node = 4, .seq = UINT64_MAX - 1}, got;
    uint8_t                buf[32];
    sfs_wbuf_t             wb;

    (void)state;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    assert_int_equal(sfs_proto_encode(SFS_OP_META_PROMOTE, 0, &req, sizeof(req), &wb), 0);
    assert_int_equal(wb.length, 12);
    assert_int_equal(sfs_proto_decode(SFS_OP_META_PROMOTE, 0, buf, wb.length, &got, sizeof(got)),
                     0);
    assert_int_equal(got.old_node, 4);
    assert_true(got.seq == UINT64_MAX - 1);
    assert_int_not_equal(
        sfs_proto_decode(SFS_OP_META_PROMOTE, 0, buf, wb.length - 1, &got, sizeof(got)), 0);
}

/* The pools' wire: POOL_LIST round trip and its limits, POOL_GET, and a
 * CREATE's pool name carried only with SFS_PATTERN_REQ_POOL. */
static void test_pool_codecs(void **state)
{
    static sfs_pool_list_reply_t list, got;
    static uint8_t               buf[SFS_PROTO_ARGS_MAX];
    static sfs_meta_req_t        req, back;
    sfs_pool_reply_t             pool = {.pool = 2, .name = "hdd"}, pool_back;
    sfs_wbuf_t                   wb;
    size_t                       plain;

    (void)state;
    list.count        = 2;
    list.pools[0]     = (sfs_pool_info_t){.id = 1, .name = "default", .first = 0};
    list.pools[1]     = (sfs_pool_info_t){.id = 2, .name = "hdd", .first = 0, .target_count = 2};
    list.target_total = 2;
    list.targets[0]   = 101;
    list.targets[1]   = 201;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    assert_int_equal(sfs_proto_encode(SFS_OP_POOL_LIST, 1, &list, sizeof(list), &wb), 0);
    assert_int_equal(sfs_proto_decode(SFS_OP_POOL_LIST, 1, buf, wb.length, &got, sizeof(got)), 0);
    assert_int_equal(got.count, 2);
    assert_string_equal(got.pools[1].name, "hdd");
    assert_int_equal(got.pools[1].target_count, 2);
    assert_int_equal(got.targets[got.pools[1].first + 1], 201);
    assert_int_equal(got.pools[0].target_count, 0);
    /* a pool whose targets lie outside the list is not sent */
    list.pools[1].first = 1;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    assert_int_not_equal(sfs_proto_encode(SFS_OP_POOL_LIST, 1, &list, sizeof(list), &wb), 0);
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_wbuf_u32(&wb, SFS_POOL_LIST_MAX + 1);
    assert_int_equal(sfs_proto_decode(SFS_OP_POOL_LIST, 1, buf, wb.length, &got, sizeof(got)),
                     -EBADMSG);
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_wbuf_u32(&wb, 1);
    sfs_wbuf_u32(&wb, 2);
    sfs_wbuf_str(&wb, "big");
    sfs_wbuf_u32(&wb, SFS_POOL_LIST_TARGETS + 1);
    assert_int_equal(sfs_proto_decode(SFS_OP_POOL_LIST, 1, buf, wb.length, &got, sizeof(got)),
                     -EBADMSG);

    sfs_wbuf_init(&wb, buf, sizeof(buf));
    assert_int_equal(sfs_proto_encode(SFS_OP_POOL_GET, 1, &pool, sizeof(pool), &wb), 0);
    assert_int_equal(
        sfs_proto_decode(SFS_OP_POOL_GET, 1, buf, wb.length, &pool_back, sizeof(pool_back)), 0);
    assert_int_equal(pool_back.pool, 2);
    assert_string_equal(pool_back.name, "hdd");

    snprintf(req.path, sizeof(req.path), "/d/f");
    snprintf(req.pool, sizeof(req.pool), "nvme");
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    assert_int_equal(sfs_proto_encode(SFS_OP_CREATE, 0, &req, sizeof(req), &wb), 0);
    plain     = wb.length; /* no flag: no name on the wire (what older servers read) */
    req.flags = SFS_PATTERN_REQ_POOL;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    assert_int_equal(sfs_proto_encode(SFS_OP_CREATE, 0, &req, sizeof(req), &wb), 0);
    assert_int_equal(wb.length, plain + 2 + 4);
    assert_int_equal(sfs_proto_decode(SFS_OP_CREATE, 0, buf, wb.length, &back, sizeof(back)), 0);
    assert_string_equal(back.pool, "nvme");
    assert_int_equal(back.flags, SFS_PATTERN_REQ_POOL);
}

/* A namespace change's op_tag (kept replies): present only when not 0,
 * last, for the changes only; 0 on the wire and a cut tag are refused. */
static void test_meta_op_tag(void **state)
{
    static const uint32_t changes[] = {SFS_OP_CREATE,    SFS_OP_MKDIR,  SFS_OP_RMDIR,
                                       SFS_OP_UNLINK,    SFS_OP_RENAME, SFS_OP_SETATTR,
                                       SFS_OP_SETPATTERN};
    static sfs_meta_req_t req, back;
    uint8_t               buf[SFS_PROTO_ARGS_MAX];
    sfs_wbuf_t            wb;
    size_t                plain;

    (void)state;
    for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
        memset(&req, 0, sizeof(req));
        snprintf(req.path, sizeof(req.path), "/d/x");
        snprintf(req.new_path, sizeof(req.new_path), "/d/y");
        sfs_wbuf_init(&wb, buf, sizeof(buf));
        assert_int_equal(sfs_proto_encode(changes[i], 0, &req, sizeof(req), &wb), 0);
        plain = wb.length; /* no tag: what an older client sends */
        assert_int_equal(sfs_proto_decode(changes[i], 0, buf, plain, &back, sizeof(back)), 0);
        assert_int_equal(back.op_tag, 0);
        req.op_tag = 0x0102030405060708ull;
        sfs_wbuf_init(&wb, buf, sizeof(buf));
        assert_int_equal(sfs_proto_encode(changes[i], 0, &req, sizeof(req), &wb), 0);
        assert_int_equal(wb.length, plain + 8);
        assert_int_equal(sfs_proto_decode(changes[i], 0, buf, wb.length, &back, sizeof(back)), 0);
        assert_true(back.op_tag == req.op_tag);
        assert_int_equal(sfs_proto_decode(changes[i], 0, buf, wb.length - 1, &back, sizeof(back)),
                         -EBADMSG);
        memset(buf + plain, 0, 8); /* a tag of 0 is never sent */
        assert_int_equal(sfs_proto_decode(changes[i], 0, buf, wb.length, &back, sizeof(back)),
                         -EBADMSG);
    }
    /* not a change: no tag is sent, and trailing bytes stay refused */
    memset(&req, 0, sizeof(req));
    snprintf(req.path, sizeof(req.path), "/d/x");
    req.op_tag = 5;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    assert_int_equal(sfs_proto_encode(SFS_OP_LOOKUP, 0, &req, sizeof(req), &wb), 0);
    plain = wb.length;
    sfs_wbuf_u64(&wb, 5);
    assert_int_equal(sfs_proto_decode(SFS_OP_LOOKUP, 0, buf, plain, &back, sizeof(back)), 0);
    assert_int_equal(sfs_proto_decode(SFS_OP_LOOKUP, 0, buf, wb.length, &back, sizeof(back)),
                     -EBADMSG);
}

/* STAT and SIZE (the kept size): what is sent comes back, unknown
 * operations and flags are refused, the listing's flag travels. */
/* The map's header and a target's mirror fields survive pack and unpack;
 * every shorter buffer is refused (the offline timeout, in the map since
 * 2026-12-05, bounds a client's handed-over mirrored chunk file). */
/* COUNTER's op_tag follows the server's uuid, never alone; 0 is not sent */
static void test_counter_op_tag(void **state)
{
    const sfs_counter_req_t with = {
        .key = 5, .op = SFS_COUNTER_OP_ADD, .value = 3, .server_uuid = 77, .op_tag = 9};
    sfs_counter_req_t req = with;
    uint8_t           buf[64];
    sfs_wbuf_t        wb;
    sfs_rbuf_t        rb;

    (void)state;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_counter_req_pack(&wb, &req);
    assert_int_equal(wb.length, 20 + 8 + 8);
    memset(&req, 0, sizeof(req));
    sfs_rbuf_init(&rb, buf, wb.length);
    sfs_proto_counter_req_unpack(&rb, &req);
    assert_int_equal(rb.error, 0);
    assert_int_equal(req.op_tag, 9);
    assert_int_equal(req.server_uuid, 77);
    /* without a uuid the tag is not sent (an older server reads 20 bytes) */
    req             = with;
    req.server_uuid = 0;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_counter_req_pack(&wb, &req);
    assert_int_equal(wb.length, 20);
    /* a tag of 0 on the wire is refused: one encoding per request */
    req        = with;
    req.op_tag = 0;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_counter_req_pack(&wb, &req);
    assert_int_equal(wb.length, 28);
    sfs_wbuf_u64(&wb, 0);
    sfs_rbuf_init(&rb, buf, wb.length);
    sfs_proto_counter_req_unpack(&rb, &req);
    assert_int_equal(rb.error, -EBADMSG);
}

static void test_map_round_trip(void **state)
{
    sfs_map_node_t   node   = {.node_id = 2, .roles = 4, .state = SFS_STATE_OFFLINE, .pid = 77};
    sfs_map_target_t target = {.target_id      = 301,
                               .node_id        = 2,
                               .mirror_primary = 401,
                               .mirror_state   = 2,
                               .resync_done    = 5,
                               .resync_total   = 9};
    sfs_map_t        map    = {.version              = 12,
                               .mgmt_node            = 0,
                               .meta_node            = 1,
                               .default_chunk_size   = 524288,
                               .default_stripe_count = 4,
                               .rpc_timeout_ms       = 6000,
                               .offline_timeout_ms   = 3000,
                               .node_count           = 1,
                               .target_count         = 1,
                               .nodes                = &node,
                               .targets              = &target};
    uint8_t          buf[4096];
    sfs_map_t       *back = NULL;
    sfs_wbuf_t       wb;

    (void)state;
    snprintf(map.cluster, sizeof(map.cluster), "imaging");
    snprintf(node.host, sizeof(node.host), "imaging-03");
    snprintf(target.dir, sizeof(target.dir), "/mnt/7t_drive/stripefs");
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_map_pack(&wb, &map);
    assert_int_equal(wb.error, 0);
    assert_int_equal(wb.length, sfs_map_packed_size(&map));
    assert_int_equal(sfs_map_unpack(buf, wb.length, &back), 0);
    assert_int_equal(back->rpc_timeout_ms, 6000);
    assert_int_equal(back->offline_timeout_ms, 3000);
    assert_int_equal(back->meta_node, 1);
    assert_string_equal(back->cluster, "imaging");
    assert_int_equal(back->node_count, 1);
    assert_int_equal(back->nodes[0].state, SFS_STATE_OFFLINE);
    assert_string_equal(back->nodes[0].host, "imaging-03");
    assert_int_equal(back->target_count, 1);
    assert_int_equal(back->targets[0].mirror_primary, 401);
    assert_int_equal(back->targets[0].resync_total, 9);
    assert_string_equal(back->targets[0].dir, "/mnt/7t_drive/stripefs");
    sfs_map_destroy(back);
    for (size_t cut = 0; cut < wb.length; cut++) {
        back = NULL;
        assert_int_not_equal(sfs_map_unpack(buf, cut, &back), 0);
        assert_null(back);
    }
}

static void test_kept_size_codecs(void **state)
{
    uint8_t        buf[512];
    sfs_wbuf_t     wb;
    sfs_size_req_t req = {
        .entry_id = 9, .op = SFS_SIZE_OP_END, .flags = SFS_SIZE_VIEW, .size = 3901};
    sfs_size_req_t   got;
    sfs_size_reply_t reply = {.writers = 1, .base = 1, .size = 42}, reply_got;
    sfs_meta_req_t  *meta  = calloc(2, sizeof(*meta));

    (void)state;
    assert_non_null(meta);
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_size_req_pack(&wb, &req);
    assert_int_equal(sfs_proto_decode(SFS_OP_SIZE, 0, buf, wb.length, &got, sizeof(got)), 0);
    assert_int_equal(got.op, SFS_SIZE_OP_END);
    assert_int_equal(got.flags, SFS_SIZE_VIEW);
    assert_int_equal(got.size, 3901);
    req.op = SFS_SIZE_OP_MAX + 1;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_size_req_pack(&wb, &req);
    assert_int_equal(sfs_proto_decode(SFS_OP_SIZE, 0, buf, wb.length, &got, sizeof(got)), -EBADMSG);
    req.op    = SFS_SIZE_OP_BEGIN;
    req.flags = 0x80;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_size_req_pack(&wb, &req);
    assert_int_equal(sfs_proto_decode(SFS_OP_SIZE, 0, buf, wb.length, &got, sizeof(got)), -EBADMSG);

    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_size_reply_pack(&wb, &reply);
    assert_int_equal(
        sfs_proto_decode(SFS_OP_SIZE, 1, buf, wb.length, &reply_got, sizeof(reply_got)), 0);
    assert_int_equal(reply_got.base, 1);
    assert_int_equal(reply_got.size, 42);

    snprintf(meta[0].path, sizeof(meta[0].path), "/dir");
    snprintf(meta[0].after_name, sizeof(meta[0].after_name), "b");
    meta[0].flags       = SFS_STAT_ENTRIES;
    meta[0].max_entries = 7;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_meta_req_pack(&wb, SFS_OP_STAT, &meta[0]);
    assert_int_equal(sfs_proto_decode(SFS_OP_STAT, 0, buf, wb.length, &meta[1], sizeof(*meta)), 0);
    assert_int_equal(meta[1].flags, SFS_STAT_ENTRIES);
    assert_int_equal(meta[1].max_entries, 7);
    assert_string_equal(meta[1].after_name, "b");
    meta[0].flags = 0x2;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_meta_req_pack(&wb, SFS_OP_STAT, &meta[0]);
    assert_int_equal(sfs_proto_decode(SFS_OP_STAT, 0, buf, wb.length, &meta[1], sizeof(*meta)),
                     -EBADMSG);
    free(meta);
}

static void test_hello_features(void **state)
{
    uint8_t         buf[1024];
    sfs_hello_req_t got;
    sfs_rbuf_t      rb;
    size_t          n;
    char            names[128];

    (void)state;
    n = pack_hello(buf, sizeof(buf), SFS_FEATURES_THIS, 1, 0);
    sfs_rbuf_init(&rb, buf, n);
    sfs_proto_hello_req_unpack(&rb, &got);
    assert_int_equal(rb.error, 0);
    assert_int_equal(sfs_rbuf_remaining(&rb), 0);
    assert_true(got.features == SFS_FEATURES_THIS);

    n = pack_hello(buf, sizeof(buf), SFS_FEATURES_THIS, 0, 0);
    sfs_rbuf_init(&rb, buf, n);
    sfs_proto_hello_req_unpack(&rb, &got);
    assert_int_equal(rb.error, 0);
    assert_int_equal(sfs_rbuf_remaining(&rb), 0);
    assert_true(got.features == 0);

    n = pack_hello(buf, sizeof(buf), SFS_FEATURES_THIS | (1ull << 50), 1, 24);
    sfs_rbuf_init(&rb, buf, n);
    sfs_proto_hello_req_unpack(&rb, &got);
    assert_int_equal(rb.error, 0);
    assert_int_equal(sfs_rbuf_remaining(&rb), 0);
    assert_true(got.features == (SFS_FEATURES_THIS | (1ull << 50)));

    assert_string_equal(
        sfs_features_string(SFS_FEATURE_CAPABILITIES | (1ull << 50), names, sizeof(names)),
        "capabilities, bit 50");
    assert_string_equal(sfs_features_string(0, names, sizeof(names)), "");
}

/* LOCK carries the range, the mode and the open's capability; an unknown
 * mode is refused; UNLOCK names the lock. */
static void test_lock_codecs(void **state)
{
    sfs_lock_req_t req = {.entry_id = 42,
                          .lock_id  = 7,
                          .offset   = 4096,
                          .length   = 0,
                          .mode     = SFS_LOCK_EXCLUSIVE},
                   got;
    sfs_unlock_req_t ureq = {.entry_id = 42, .lock_id = 7}, ugot;
    uint8_t          buf[128];
    sfs_wbuf_t       wb;

    (void)state;
    req.cap.entry_id = 42;
    req.cap.access   = SFS_CAP_WRITE;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    assert_int_equal(sfs_proto_encode(SFS_OP_LOCK, 0, &req, sizeof(req), &wb), 0);
    assert_int_equal(sfs_proto_decode(SFS_OP_LOCK, 0, buf, wb.length, &got, sizeof(got)), 0);
    assert_int_equal(got.lock_id, 7);
    assert_int_equal(got.offset, 4096);
    assert_int_equal(got.mode, SFS_LOCK_EXCLUSIVE);
    assert_int_equal(got.cap.access, SFS_CAP_WRITE);
    buf[32] = 2; /* the mode's low byte */
    assert_int_equal(sfs_proto_decode(SFS_OP_LOCK, 0, buf, wb.length, &got, sizeof(got)), -EBADMSG);
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    assert_int_equal(sfs_proto_encode(SFS_OP_UNLOCK, 0, &ureq, sizeof(ureq), &wb), 0);
    assert_int_equal(sfs_proto_decode(SFS_OP_UNLOCK, 0, buf, wb.length, &ugot, sizeof(ugot)), 0);
    assert_int_equal(ugot.lock_id, 7);
    assert_string_equal(sfs_proto_op_info(SFS_OP_LOCK)->handler, "lock");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_op_in_the_table),
        cmocka_unit_test(test_decode_checks_size_and_rest),
        cmocka_unit_test(test_chunk_unlink_ids),
        cmocka_unit_test(test_migrate_codecs),
        cmocka_unit_test(test_migrate_lease_codec),
        cmocka_unit_test(test_listing_cursors),
        cmocka_unit_test(test_mirror_list),
        cmocka_unit_test(test_meta_mirror_state),
        cmocka_unit_test(test_meta_promote),
        cmocka_unit_test(test_meta_op_tag),
        cmocka_unit_test(test_pool_codecs),
        cmocka_unit_test(test_hello_features),
        cmocka_unit_test(test_lock_codecs),
        cmocka_unit_test(test_kept_size_codecs),
        cmocka_unit_test(test_map_round_trip),
        cmocka_unit_test(test_counter_op_tag),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
