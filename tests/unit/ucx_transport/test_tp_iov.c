/* Joining payload pieces: adjacent pieces become one, empty ones vanish,
 * and the bytes named stay the same, in the same order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sfs_tp_iov.h"

static void test_adjacent_joined(void **state)
{
    char         buf[4096];
    struct iovec iov[4] = {{buf, 512}, {buf + 512, 512}, {buf + 1024, 0}, {buf + 1024, 3072}};
    ucp_dt_iov_t out[4];

    (void)state;
    assert_int_equal(sfs_tp_iov_coalesce(iov, 4, out), 1);
    assert_ptr_equal(out[0].buffer, buf);
    assert_int_equal(out[0].length, 4096);
}

static void test_gaps_kept(void **state)
{
    char         buf[4096];
    struct iovec iov[5] = {
        {buf + 1024, 512}, {buf, 512}, {buf + 512, 256}, {NULL, 0}, {buf + 2048, 1024}};
    ucp_dt_iov_t out[5];

    (void)state;
    /* out of order stays out of order: only a piece that starts where the
     * one before it ends is joined */
    assert_int_equal(sfs_tp_iov_coalesce(iov, 5, out), 3);
    assert_ptr_equal(out[0].buffer, buf + 1024);
    assert_int_equal(out[0].length, 512);
    assert_ptr_equal(out[1].buffer, buf);
    assert_int_equal(out[1].length, 768);
    assert_ptr_equal(out[2].buffer, buf + 2048);
    assert_int_equal(out[2].length, 1024);
}

static void test_empty(void **state)
{
    char         buf[8];
    struct iovec iov[2] = {{buf, 0}, {NULL, 0}};
    ucp_dt_iov_t out[2];

    (void)state;
    assert_int_equal(sfs_tp_iov_coalesce(iov, 2, out), 0);
    assert_int_equal(sfs_tp_iov_coalesce(iov, 0, out), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adjacent_joined),
        cmocka_unit_test(test_gaps_kept),
        cmocka_unit_test(test_empty),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
