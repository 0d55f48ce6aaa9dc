/* Shared file pointers (service/sfs_meta_counter.c): a live counter is never
 * dropped; past SFS_META_COUNTERS_MAX live ones a new one is refused with
 * -ENFILE, and a forgotten one makes room again. (The counters used to be
 * evicted, oldest first, silently resetting a live one.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sfs_meta_internal.h"

#include <errno.h>
#include <string.h>

static uint64_t op(sfs_meta_t *meta, uint64_t key, uint32_t what, uint64_t value, int expect_rc)
{
    sfs_counter_req_t req    = {.key = key, .op = what, .value = value};
    uint64_t          before = UINT64_MAX;

    assert_int_equal(sfs_meta_counter(meta, &req, &before), expect_rc);
    return before;
}

static void test_counts_and_forgets(void **state)
{
    sfs_meta_t meta;

    (void)state;
    memset(&meta, 0, sizeof(meta));
    assert_int_equal(sfs_meta_counters_init(&meta), 0);
    assert_int_equal(op(&meta, 7, SFS_COUNTER_OP_ADD, 5, 0), 0);
    assert_int_equal(op(&meta, 7, SFS_COUNTER_OP_ADD, 3, 0), 5);
    assert_int_equal(op(&meta, 7, SFS_COUNTER_OP_SET, 100, 0), 8);
    assert_int_equal(op(&meta, 7, SFS_COUNTER_OP_ADD, 0, 0), 100);
    op(&meta, 7, SFS_COUNTER_OP_FORGET, 0, 0);
    assert_int_equal(op(&meta, 7, SFS_COUNTER_OP_ADD, 0, 0), 0);
    sfs_meta_counters_cleanup(&meta);
}

static void test_full_refuses_never_evicts(void **state)
{
    sfs_meta_t meta;

    (void)state;
    memset(&meta, 0, sizeof(meta));
    assert_int_equal(sfs_meta_counters_init(&meta), 0);
    op(&meta, 1, SFS_COUNTER_OP_SET, 4242, 0);
    for (uint64_t key = 2; key <= SFS_META_COUNTERS_MAX; key++) {
        op(&meta, key, SFS_COUNTER_OP_ADD, 1, 0);
    }
    op(&meta, SFS_META_COUNTERS_MAX + 1, SFS_COUNTER_OP_ADD, 1, -ENFILE);
    assert_non_null(strstr(sfs_error_detail(), "shared file pointers are in use"));
    assert_int_equal(op(&meta, 1, SFS_COUNTER_OP_ADD, 0, 0), 4242);
    op(&meta, 2, SFS_COUNTER_OP_FORGET, 0, 0);
    op(&meta, SFS_META_COUNTERS_MAX + 1, SFS_COUNTER_OP_ADD, 1, 0);
    sfs_meta_counters_cleanup(&meta);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_and_forgets),
        cmocka_unit_test(test_full_refuses_never_evicts),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
