/* The codecs of POOL_SET and POOL_SHOW (common/sfs_proto_pool.c) through
 * the op table: what is packed comes back, an unknown change, too many
 * targets, a name too long and a short message are refused; POOL_SHOW's
 * reply is POOL_LIST's; both are the metadata role's; feature bit 17. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sfs_proto.h"

static void test_pool_set_req(void **state)
{
    static sfs_pool_set_req_t req, got;
    uint8_t                   buf[64 + 4 * SFS_POOL_SET_TARGETS_MAX + 8];
    sfs_wbuf_t                wb;

    (void)state;
    req.op           = SFS_POOL_SET_ADD;
    req.target_count = 3;
    req.targets[0]   = 101;
    req.targets[1]   = 65535;
    req.targets[2]   = 7;
    snprintf(req.name, sizeof(req.name), "nvme");
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    assert_int_equal(sfs_proto_encode(SFS_OP_POOL_SET, 0, &req, sizeof(req), &wb), 0);
    assert_int_equal(wb.length, 4 + 2 + 4 + 4 + 12);
    assert_int_equal(sfs_proto_decode(SFS_OP_POOL_SET, 0, buf, wb.length, &got, sizeof(got)), 0);
    assert_int_equal(got.op, SFS_POOL_SET_ADD);
    assert_string_equal(got.name, "nvme");
    assert_int_equal(got.target_count, 3);
    assert_int_equal(got.targets[1], 65535);
    assert_int_equal(got.targets[2], 7);
    /* short */
    assert_int_equal(sfs_proto_decode(SFS_OP_POOL_SET, 0, buf, wb.length - 1, &got, sizeof(got)),
                     -EBADMSG);
    /* an unknown change */
    buf[0] = 9;
    assert_int_equal(sfs_proto_decode(SFS_OP_POOL_SET, 0, buf, wb.length, &got, sizeof(got)),
                     -EBADMSG);
    buf[0] = SFS_POOL_SET_DELETE;
    assert_int_equal(sfs_proto_decode(SFS_OP_POOL_SET, 0, buf, wb.length, &got, sizeof(got)), 0);
    /* too many targets, either way */
    buf[4 + 2 + 4 + 1] = 0x01; /* count 0x0103 (little endian) */
    assert_int_equal(sfs_proto_decode(SFS_OP_POOL_SET, 0, buf, wb.length, &got, sizeof(got)),
                     -EBADMSG);
    req.target_count = SFS_POOL_SET_TARGETS_MAX + 1;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    assert_int_equal(sfs_proto_encode(SFS_OP_POOL_SET, 0, &req, sizeof(req), &wb), -EINVAL);
    req.target_count = 0;
    req.op           = 0;
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    assert_int_equal(sfs_proto_encode(SFS_OP_POOL_SET, 0, &req, sizeof(req), &wb), -EINVAL);
    /* a name of 64 bytes does not fit */
    sfs_wbuf_init(&wb, buf, sizeof(buf));
    sfs_wbuf_u32(&wb, SFS_POOL_SET_CREATE);
    sfs_wbuf_u16(&wb, SFS_POOL_NAME_MAX);
    for (int i = 0; i < SFS_POOL_NAME_MAX; i++) {
        sfs_wbuf_u8(&wb, 'a');
    }
    sfs_wbuf_u32(&wb, 0);
    assert_int_equal(sfs_proto_decode(SFS_OP_POOL_SET, 0, buf, wb.length, &got, sizeof(got)),
                     -ENAMETOOLONG);
    assert_string_equal(sfs_pool_set_op_name(SFS_POOL_SET_CREATE), "create");
    assert_null(sfs_pool_set_op_name(5));
}

static void test_pool_show(void **state)
{
    static sfs_pool_list_reply_t list, got;
    uint8_t                     *buf = malloc(SFS_PROTO_ARGS_MAX);
    sfs_wbuf_t                   wb;

    (void)state;
    assert_non_null(buf);
    list.count        = 2;
    list.pools[0]     = (sfs_pool_info_t){.id = 1, .name = "default"};
    list.pools[1]     = (sfs_pool_info_t){.id = 4, .name = "fast", .target_count = 1};
    list.target_total = 1;
    list.targets[0]   = 501;
    sfs_wbuf_init(&wb, buf, SFS_PROTO_ARGS_MAX);
    assert_int_equal(sfs_proto_encode(SFS_OP_POOL_SHOW, 1, &list, sizeof(list), &wb), 0);
    assert_int_equal(sfs_proto_decode(SFS_OP_POOL_SHOW, 1, buf, wb.length, &got, sizeof(got)), 0);
    assert_string_equal(got.pools[1].name, "fast");
    assert_int_equal(got.targets[got.pools[1].first], 501);
    assert_string_equal(sfs_proto_op_info(SFS_OP_POOL_SHOW)->reply_codec, "pool_list_reply");
    assert_string_equal(sfs_proto_op_info(SFS_OP_POOL_SHOW)->request_codec, "none");
    assert_string_equal(sfs_proto_op_info(SFS_OP_POOL_SET)->request_codec, "pool_set_req");
    assert_string_equal(sfs_op_name(SFS_OP_POOL_SET), "POOL_SET");
    assert_int_equal(SFS_OP_POOL_SET, 61);
    assert_int_equal(SFS_OP_POOL_SHOW, 62);
    assert_int_equal(sfs_op_role(SFS_OP_POOL_SET), (int)SFS_ROLE_META);
    assert_int_equal(sfs_op_role(SFS_OP_POOL_SHOW), (int)SFS_ROLE_META);
    assert_true(SFS_FEATURE_POOL_SET == (1ull << 17));
    assert_true((SFS_FEATURES_THIS & SFS_FEATURE_POOL_SET) != 0);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_set_req),
        cmocka_unit_test(test_pool_show),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
