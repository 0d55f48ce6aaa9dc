/* The codecs of QUOTA_SET, QUOTA_GET and QUOTA_GROW (common/sfs_proto_quota.c)
 * through the op table: what is packed comes back, an unknown kind or flag
 * is refused, and SIZE's reply carries SFS_SIZE_QUOTA but no other bit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "sfs_proto.h"

static void test_quota_req(void **state)
{
    sfs_quota_req_t req = {.kind        = SFS_QUOTA_GROUP,
                           .id          = 4101,
                           .flags       = SFS_QUOTA_SET_FILES | SFS_QUOTA_SET_SPACE,
                           .files_limit = 3,
                           .space_limit = 10u << 20},
                    got;
    uint8_t    buf[64];
    sfs_wbuf_t wb;

    (void)state;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    assert_int_equal(sfs_proto_encode(SFS_OP_QUOTA_SET, 0, &req, sizeof(req), &wb), 0);
    assert_int_equal(sfs_proto_decode(SFS_OP_QUOTA_SET, 0, buf, wb.length, &got, sizeof(got)), 0);
    assert_memory_equal(&req, &got, sizeof(req));
    assert_int_equal(sfs_proto_decode(SFS_OP_QUOTA_GET, 0, buf, wb.length, &got, sizeof(got)), 0);
    buf[0] = 2; /* kind: neither user nor group */
    assert_int_equal(sfs_proto_decode(SFS_OP_QUOTA_SET, 0, buf, wb.length, &got, sizeof(got)),
                     -EBADMSG);
    buf[0] = 1;
    buf[8] = 0x80; /* an unknown flag */
    assert_int_equal(sfs_proto_decode(SFS_OP_QUOTA_SET, 0, buf, wb.length, &got, sizeof(got)),
                     -EBADMSG);
    assert_int_equal(sfs_proto_decode(SFS_OP_QUOTA_SET, 0, buf, wb.length - 1, &got, sizeof(got)),
                     -EBADMSG);
    assert_string_equal(sfs_proto_op_info(SFS_OP_QUOTA_GET)->reply_codec, "page_reply");
    assert_int_equal(sfs_op_role(SFS_OP_QUOTA_GROW), (int)SFS_ROLE_META);
}

static void test_quota_entry_and_grow(void **state)
{
    sfs_quota_entry_t e = {.kind        = SFS_QUOTA_USER,
                           .id          = 7,
                           .files       = 2,
                           .space       = 99,
                           .files_limit = 5,
                           .space_limit = 1000},
                      eg;
    sfs_quota_grow_req_t   greq = {.entry_id = 42, .end = 1u << 20}, ggot;
    sfs_quota_grow_reply_t grep = {.granted = 5u << 20, .limited = 1}, gr;
    uint8_t                buf[128];
    sfs_wbuf_t             wb;
    sfs_rbuf_t             rb;

    (void)state;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_quota_entry_pack(&wb, &e);
    sfs_rbuf_init(&rb, buf, wb.length);
    sfs_proto_quota_entry_unpack(&rb, &eg);
    assert_int_equal(rb.error, 0);
    assert_int_equal(sfs_rbuf_remaining(&rb), 0);
    assert_memory_equal(&e, &eg, sizeof(e));

    greq.cap.entry_id = 42;
    greq.cap.access   = SFS_CAP_WRITE;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    assert_int_equal(sfs_proto_encode(SFS_OP_QUOTA_GROW, 0, &greq, sizeof(greq), &wb), 0);
    assert_int_equal(sfs_proto_decode(SFS_OP_QUOTA_GROW, 0, buf, wb.length, &ggot, sizeof(ggot)),
                     0);
    assert_int_equal(ggot.end, 1u << 20);
    assert_int_equal(ggot.cap.access, SFS_CAP_WRITE);
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    assert_int_equal(sfs_proto_encode(SFS_OP_QUOTA_GROW, 1, &grep, sizeof(grep), &wb), 0);
    assert_int_equal(sfs_proto_decode(SFS_OP_QUOTA_GROW, 1, buf, wb.length, &gr, sizeof(gr)), 0);
    assert_int_equal(gr.granted, 5u << 20);
    assert_int_equal(gr.limited, 1);
    buf[8] = 2;
    assert_int_equal(sfs_proto_decode(SFS_OP_QUOTA_GROW, 1, buf, wb.length, &gr, sizeof(gr)),
                     -EBADMSG);
}

static void test_size_reply_quota_bit(void **state)
{
    sfs_size_reply_t reply = {.writers = 1, .base = 1 | SFS_SIZE_QUOTA, .size = 5, .granted = 77},
                     plain = {.writers = 1, .base = 1, .size = 5, .granted = 77}, got;
    uint8_t    buf[32];
    sfs_wbuf_t wb;

    (void)state;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_size_reply_pack(&wb, &reply);
    assert_int_equal(sfs_proto_decode(SFS_OP_SIZE, 1, buf, wb.length, &got, sizeof(got)), 0);
    assert_int_equal(got.base, 1 | SFS_SIZE_QUOTA);
    assert_int_equal(got.granted, 77);
    assert_int_equal(wb.length, 22); /* the grant follows only with SFS_SIZE_QUOTA */
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_size_reply_pack(&wb, &plain);
    assert_int_equal(wb.length, 14);
    assert_int_equal(sfs_proto_decode(SFS_OP_SIZE, 1, buf, wb.length, &got, sizeof(got)), 0);
    assert_int_equal(got.granted, 0);
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_proto_size_reply_pack(&wb, &reply);
    buf[5] = 4; /* base: an unknown bit */
    assert_int_equal(sfs_proto_decode(SFS_OP_SIZE, 1, buf, wb.length, &got, sizeof(got)), -EBADMSG);
    assert_true(SFS_FEATURES_THIS & SFS_FEATURE_QUOTAS);
}

/* CREATE's reply: SFS_CREATED_WRITER_QUOTA is a value it may carry, the
 * next one is not. */
static void test_created_writer_quota(void **state)
{
    sfs_open_reply_t reply, got;
    uint8_t          buf[512];
    sfs_wbuf_t       wb;

    (void)state;
    memset(&reply, 0, sizeof(reply));
    reply.attr.type     = SFS_TYPE_DIR; /* no capability to pack */
    reply.attr.entry_id = 5;
    for (uint8_t created = SFS_CREATED_WRITER_QUOTA; created <= SFS_CREATED_WRITER_QUOTA + 1;
         created++) {
        reply.created = created;
        sfs_wbuf_init(&wb, buf, sizeof(buf));
        assert_int_equal(sfs_proto_encode(SFS_OP_CREATE, 1, &reply, sizeof(reply), &wb), 0);
        assert_int_equal(sfs_proto_decode(SFS_OP_CREATE, 1, buf, wb.length, &got, sizeof(got)),
                         created == SFS_CREATED_WRITER_QUOTA ? 0 : -EBADMSG);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quota_req),
        cmocka_unit_test(test_quota_entry_and_grow),
        cmocka_unit_test(test_size_reply_quota_bit),
        cmocka_unit_test(test_created_writer_quota),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
