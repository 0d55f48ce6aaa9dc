/* Shared file pointers (service/sfs_meta_counter.c): a live counter is never
 * dropped; past SFS_META_COUNTERS_MAX live ones a new one is refused with
 * -ENFILE, and a forgotten one makes room again. (The counters used to be
 * evicted, oldest first, silently resetting a live one.) A tagged call sent
 * again by the same client is answered from the answer kept, not run twice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sfs_meta_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t tagged(sfs_meta_t *meta, uint64_t client, uint32_t uid, uint64_t tag, uint64_t key,
                       uint32_t what, uint64_t value, int expect_rc)
{
    sfs_counter_req_t req    = {.key = key, .op = what, .value = value, .op_tag = tag};
    uint64_t          before = UINT64_MAX;

    assert_int_equal(sfs_meta_counter(meta, &req, client, uid, &before), expect_rc);
    return before;
}

static uint64_t op(sfs_meta_t *meta, uint64_t key, uint32_t what, uint64_t value, int expect_rc)
{
    return tagged(meta, 1, 1000, 0, key, what, value, expect_rc);
}

/* each test's own metadata role, its counters only */
static int setup(void **state)
{
    sfs_meta_t *meta = calloc(1, sizeof(*meta));

    if (!meta || sfs_meta_counters_init(meta) != 0) {
        free(meta);
        return -1;
    }
    *state = meta;
    return 0;
}

static int teardown(void **state)
{
    sfs_meta_counters_cleanup(*state);
    free(*state);
    return 0;
}

static void test_counts_and_forgets(void **state)
{
    sfs_meta_t *meta = *state;

    assert_int_equal(op(meta, 7, SFS_COUNTER_OP_ADD, 5, 0), 0);
    assert_int_equal(op(meta, 7, SFS_COUNTER_OP_ADD, 3, 0), 5);
    assert_int_equal(op(meta, 7, SFS_COUNTER_OP_SET, 100, 0), 8);
    assert_int_equal(op(meta, 7, SFS_COUNTER_OP_ADD, 0, 0), 100);
    op(meta, 7, SFS_COUNTER_OP_FORGET, 0, 0);
    assert_int_equal(op(meta, 7, SFS_COUNTER_OP_ADD, 0, 0), 0);
}

static void test_full_refuses_never_evicts(void **state)
{
    sfs_meta_t *meta = *state;

    op(meta, 1, SFS_COUNTER_OP_SET, 4242, 0);
    for (uint64_t key = 2; key <= SFS_META_COUNTERS_MAX; key++) {
        op(meta, key, SFS_COUNTER_OP_ADD, 1, 0);
    }
    op(meta, SFS_META_COUNTERS_MAX + 1, SFS_COUNTER_OP_ADD, 1, -ENFILE);
    assert_non_null(strstr(sfs_error_detail(), "shared file pointers are in use"));
    assert_int_equal(op(meta, 1, SFS_COUNTER_OP_ADD, 0, 0), 4242);
    op(meta, 2, SFS_COUNTER_OP_FORGET, 0, 0);
    op(meta, SFS_META_COUNTERS_MAX + 1, SFS_COUNTER_OP_ADD, 1, 0);
}

static void test_tagged_resend_answered_once(void **state)
{
    sfs_meta_t *meta = *state;

    /* client 11's ADD 10 (tag 1) ran; its resend gets the same answer */
    assert_int_equal(tagged(meta, 11, 1000, 1, 7, SFS_COUNTER_OP_ADD, 10, 0), 0);
    assert_int_equal(tagged(meta, 11, 1000, 1, 7, SFS_COUNTER_OP_ADD, 10, 0), 0);
    assert_int_equal(op(meta, 7, SFS_COUNTER_OP_ADD, 0, 0), 10); /* added once */
    /* the same tag from another client, uid, file or op is another call */
    assert_int_equal(tagged(meta, 12, 1000, 1, 7, SFS_COUNTER_OP_ADD, 1, 0), 10);
    assert_int_equal(tagged(meta, 11, 1001, 1, 7, SFS_COUNTER_OP_ADD, 1, 0), 11);
    assert_int_equal(tagged(meta, 11, 1000, 1, 8, SFS_COUNTER_OP_ADD, 1, 0), 0);
    assert_int_equal(tagged(meta, 11, 1000, 1, 7, SFS_COUNTER_OP_SET, 50, 0), 12);
    /* a client keeps its last SFS_META_COUNTER_KEEP (16) answers */
    for (uint64_t tag = 2; tag <= 17; tag++) {
        tagged(meta, 21, 1000, tag, 9, SFS_COUNTER_OP_ADD, 1, 0);
    }
    assert_int_equal(tagged(meta, 21, 1000, 2, 9, SFS_COUNTER_OP_ADD, 1, 0), 0);   /* kept */
    assert_int_equal(tagged(meta, 21, 1000, 18, 9, SFS_COUNTER_OP_ADD, 1, 0), 16); /* forgets 2 */
    assert_int_equal(tagged(meta, 21, 1000, 2, 9, SFS_COUNTER_OP_ADD, 1, 0), 17);  /* runs */
}

static void test_clients_bounded(void **state)
{
    sfs_meta_t *meta = *state;

    /* 20,000 clients are kept, the least recently heard forgotten first */
    for (uint64_t client = 1; client <= 20001; client++) {
        tagged(meta, client, 1000, 1, 5, SFS_COUNTER_OP_ADD, 1, 0);
    }
    assert_int_equal(meta->counter_clients.count, 20000);
    assert_int_equal(tagged(meta, 2, 1000, 1, 5, SFS_COUNTER_OP_ADD, 1, 0), 1);     /* kept */
    assert_int_equal(tagged(meta, 1, 1000, 1, 5, SFS_COUNTER_OP_ADD, 1, 0), 20001); /* runs */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_counts_and_forgets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_refuses_never_evicts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tagged_resend_answered_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clients_bounded, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
