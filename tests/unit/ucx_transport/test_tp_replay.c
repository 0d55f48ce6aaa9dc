/* The replay window: each request id is accepted once, out-of-order ids
 * inside the window are accepted, ids below it are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sfs_tp_replay.h"

#define W SFS_TP_REPLAY_WINDOW

static void test_each_id_once(void **state)
{
    sfs_tp_replay_t window;

    (void)state;
    sfs_tp_replay_init(&window);
    assert_int_equal(sfs_tp_replay_check(&window, 0), SFS_TP_REPLAY_TOO_OLD);
    for (uint64_t id = 1; id <= 3 * W; id++) {
        assert_int_equal(sfs_tp_replay_check(&window, id), SFS_TP_REPLAY_FRESH);
    }
    /* the last W ids are remembered, older ones cannot be told from replays */
    for (uint64_t id = 2 * W + 1; id <= 3 * W; id++) {
        assert_int_equal(sfs_tp_replay_check(&window, id), SFS_TP_REPLAY_SEEN);
    }
    assert_int_equal(sfs_tp_replay_check(&window, 2 * W), SFS_TP_REPLAY_TOO_OLD);
    assert_int_equal(sfs_tp_replay_check(&window, 1), SFS_TP_REPLAY_TOO_OLD);
}

static void test_out_of_order_and_gaps(void **state)
{
    sfs_tp_replay_t window;

    (void)state;
    sfs_tp_replay_init(&window);
    /* a session sees every third id of its sender, and one late request */
    assert_int_equal(sfs_tp_replay_check(&window, 10), SFS_TP_REPLAY_FRESH);
    assert_int_equal(sfs_tp_replay_check(&window, 40), SFS_TP_REPLAY_FRESH);
    assert_int_equal(sfs_tp_replay_check(&window, 25), SFS_TP_REPLAY_FRESH);
    assert_int_equal(sfs_tp_replay_check(&window, 25), SFS_TP_REPLAY_SEEN);
    assert_int_equal(sfs_tp_replay_check(&window, 10), SFS_TP_REPLAY_SEEN);
    assert_int_equal(sfs_tp_replay_check(&window, 11), SFS_TP_REPLAY_FRESH);
    /* a late id just inside the window after a jump */
    assert_int_equal(sfs_tp_replay_check(&window, 40 + W - 1), SFS_TP_REPLAY_FRESH);
    assert_int_equal(sfs_tp_replay_check(&window, 40), SFS_TP_REPLAY_SEEN);
    assert_int_equal(sfs_tp_replay_check(&window, 41), SFS_TP_REPLAY_FRESH);
    assert_int_equal(sfs_tp_replay_check(&window, 39), SFS_TP_REPLAY_TOO_OLD);
}

static void test_slots_reused_after_a_move(void **state)
{
    sfs_tp_replay_t window;

    (void)state;
    sfs_tp_replay_init(&window);
    assert_int_equal(sfs_tp_replay_check(&window, 5), SFS_TP_REPLAY_FRESH);
    assert_int_equal(sfs_tp_replay_check(&window, 7), SFS_TP_REPLAY_FRESH);
    /* 5 + W and 7 + W share the slots of 5 and 7; 6 + W must not look seen */
    assert_int_equal(sfs_tp_replay_check(&window, 7 + W), SFS_TP_REPLAY_FRESH);
    assert_int_equal(sfs_tp_replay_check(&window, 5 + W), SFS_TP_REPLAY_FRESH);
    assert_int_equal(sfs_tp_replay_check(&window, 6 + W), SFS_TP_REPLAY_FRESH);
    assert_int_equal(sfs_tp_replay_check(&window, 7), SFS_TP_REPLAY_TOO_OLD);
    /* a jump past the whole window forgets everything below it */
    assert_int_equal(sfs_tp_replay_check(&window, 100 * W), SFS_TP_REPLAY_FRESH);
    assert_int_equal(sfs_tp_replay_check(&window, 100 * W - 1), SFS_TP_REPLAY_FRESH);
    assert_int_equal(sfs_tp_replay_check(&window, 99 * W + 7), SFS_TP_REPLAY_FRESH);
    assert_int_equal(sfs_tp_replay_check(&window, 99 * W), SFS_TP_REPLAY_TOO_OLD);
    assert_int_equal(sfs_tp_replay_check(&window, UINT64_MAX), SFS_TP_REPLAY_FRESH);
    assert_int_equal(sfs_tp_replay_check(&window, UINT64_MAX), SFS_TP_REPLAY_SEEN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_id_once),
        cmocka_unit_test(test_out_of_order_and_gaps),
        cmocka_unit_test(test_slots_reused_after_a_move),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
