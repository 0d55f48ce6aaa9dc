/* Transport addresses (common/sfs_proto_address.[ch]): what a server
 * publishes round-trips; a client's (no listener) too; and every malformed
 * one is refused with a message naming the peer and what is wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sfs_errno.h"
#include "sfs_proto.h"
#include "sfs_proto_address.h"

static const uint8_t ucx[40] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};

static size_t encode(const sfs_peer_address_t *address, uint8_t *out, size_t capacity)
{
    sfs_wbuf_t wb;

    sfs_wbuf_init(&wb, out, capacity);
    sfs_peer_address_pack(&wb, address);
    assert_int_equal(wb.error, 0);
    return wb.length;
}

static void server(sfs_peer_address_t *a)
{
    memset(a, 0, sizeof(*a));
    a->family  = SFS_PEER_ADDRESS_IPV4;
    a->port    = 40123;
    a->ipv4[0] = 10, a->ipv4[1] = 199, a->ipv4[2] = 0, a->ipv4[3] = 2;
    a->ucx        = ucx;
    a->ucx_length = sizeof(ucx);
}

static void test_round_trip(void **state)
{
    sfs_peer_address_t in, out;
    uint8_t            buf[128];
    size_t             length;

    (void)state;
    server(&in);
    length = encode(&in, buf, sizeof(buf));
    assert_int_equal(length, SFS_PEER_ADDRESS_HEAD + sizeof(ucx));
    assert_int_equal(sfs_peer_address_unpack(buf, length, "rank 2", &out), 0);
    assert_int_equal(out.family, SFS_PEER_ADDRESS_IPV4);
    assert_int_equal(out.port, 40123);
    assert_memory_equal(out.ipv4, in.ipv4, 4);
    assert_int_equal(out.ucx_length, sizeof(ucx));
    assert_memory_equal(out.ucx, ucx, sizeof(ucx));
    /* the IPv4 bytes sit where the bootstrap fetch rewrites them */
    assert_memory_equal(buf + SFS_PEER_ADDRESS_IPV4_AT, in.ipv4, 4);
    assert_int_equal(SFS_PEER_ADDRESS_IPV4_AT, 8);

    in.family = SFS_PEER_ADDRESS_NONE; /* a client: no listener */
    in.port   = 0;
    memset(in.ipv4, 0, 4);
    length = encode(&in, buf, sizeof(buf));
    assert_int_equal(sfs_peer_address_unpack(buf, length, "a client", &out), 0);
    assert_int_equal(out.family, SFS_PEER_ADDRESS_NONE);
}

static void expect_refused(const uint8_t *buf, size_t length, const char *what)
{
    sfs_peer_address_t out;

    assert_int_equal(sfs_peer_address_unpack(buf, length, "rank 7 on imaging-03", &out), -EPROTO);
    assert_non_null(strstr(sfs_error_detail(), "rank 7 on imaging-03"));
    assert_non_null(strstr(sfs_error_detail(), what));
}

static void test_refusals(void **state)
{
    sfs_peer_address_t in;
    uint8_t            good[128], bad[128];
    size_t             length;

    (void)state;
    server(&in);
    length = encode(&in, good, sizeof(good));

    /* a bare UCX worker address, as servers before transport addresses sent */
    expect_refused(ucx, sizeof(ucx), "older stripefs");
    memcpy(bad, good, length);
    bad[4] = 2;
    expect_refused(bad, length, "version 2");
    memcpy(bad, good, length);
    bad[5] = 6;
    expect_refused(bad, length, "family 6");
    expect_refused(good, length - 1, "cut short");
    memcpy(bad, good, length);
    bad[length] = 0;
    expect_refused(bad, length + 1, "too long");
    memcpy(bad, good, length);
    bad[6] = bad[7] = 0; /* IPv4 without a port */
    expect_refused(bad, length, "without a port");
    in.ucx_length = 0;
    length        = encode(&in, bad, sizeof(bad));
    expect_refused(bad, length, "UCX address of 0 bytes");
    expect_refused(good, 3, "not one");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_refusals),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
