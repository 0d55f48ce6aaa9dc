/* The buddy's word (service/sfs_buddy_word.c): none before a forward was
 * taken; held for half the offline timeout from the forward's SEND time;
 * dropped by a failed forward, and not revived by a forward sent before
 * the failure; and, the property fencing rests on, a promoted buddy's
 * wait (from when it TOOK the copy) ends no earlier than the old primary's
 * word, for any delay of the copy on the way. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sfs_buddy_word.h"

static void test_none_before_a_forward(void **state)
{
    sfs_buddy_word_t word;

    (void)state;
    sfs_buddy_word_init(&word, 3000, 0);
    assert_false(sfs_buddy_word_holds(&word, 0));
    assert_false(sfs_buddy_word_holds(&word, 5000));
    assert_int_equal(sfs_buddy_word_wait_ms(&word, 0), 0);
}

static void test_held_from_send_time(void **state)
{
    sfs_buddy_word_t word;

    (void)state;
    sfs_buddy_word_init(&word, 3000, 0);
    sfs_buddy_word_renew(&word, 10000);
    assert_true(sfs_buddy_word_holds(&word, 11499));
    assert_false(sfs_buddy_word_holds(&word, 11500));
    sfs_buddy_word_renew(&word, 10400); /* a later forward's answer */
    sfs_buddy_word_renew(&word, 10100); /* an earlier one's, late: no step back */
    assert_true(sfs_buddy_word_holds(&word, 11899));
    assert_false(sfs_buddy_word_holds(&word, 11900));
}

static void test_dropped_by_a_failed_forward(void **state)
{
    sfs_buddy_word_t word;

    (void)state;
    sfs_buddy_word_init(&word, 3000, 0);
    sfs_buddy_word_renew(&word, 10000);
    sfs_buddy_word_drop(&word, 10500, 0);
    assert_false(word.refused);
    assert_false(sfs_buddy_word_holds(&word, 10500));
    /* a forward sent before the failure, answered after: the buddy may
     * have restarted in between and forgotten it gave it */
    sfs_buddy_word_renew(&word, 10400);
    assert_false(sfs_buddy_word_holds(&word, 10600));
    /* one sent after it counts */
    sfs_buddy_word_renew(&word, 10700);
    assert_true(sfs_buddy_word_holds(&word, 10800));
    sfs_buddy_word_drop(&word, 10900, 1); /* refused: the buddy is primary */
    assert_true(word.refused);
    sfs_buddy_word_drop(&word, 11000, 0); /* stands */
    assert_true(word.refused);
    sfs_buddy_word_forgive(&word);
    assert_false(word.refused);
}

static void test_given_until(void **state)
{
    sfs_buddy_word_t word;

    (void)state;
    /* a restarted member assumes it gave its word until its start + L */
    sfs_buddy_word_init(&word, 3000, 21500);
    assert_int_equal(sfs_buddy_word_wait_ms(&word, 20000), 1500);
    assert_int_equal(sfs_buddy_word_wait_ms(&word, 21500), 0);
    sfs_buddy_word_give(&word, 30000);
    assert_int_equal(sfs_buddy_word_wait_ms(&word, 30000), 1500);
    sfs_buddy_word_give(&word, 29000); /* never shortened */
    assert_int_equal(sfs_buddy_word_wait_ms(&word, 31000), 500);
}

static void test_no_two_primaries(void **state)
{
    (void)state;
    /* the primary sends a copy at `sent`; the buddy takes it at `taken`
     * (>= sent) and is promoted at once: the primary's word is over
     * before the buddy's wait is, for every delay and timeout */
    for (uint64_t t = 2; t <= 60000; t = t * 3 + 1) {
        for (uint64_t delay = 0; delay < 5000; delay += 250) {
            sfs_buddy_word_t primary, buddy;
            uint64_t         sent = 100000, taken = sent + delay;

            sfs_buddy_word_init(&primary, t, 0);
            sfs_buddy_word_init(&buddy, t, 0);
            sfs_buddy_word_renew(&primary, sent);
            sfs_buddy_word_give(&buddy, taken);
            assert_false(
                sfs_buddy_word_holds(&primary, taken + sfs_buddy_word_wait_ms(&buddy, taken)));
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_none_before_a_forward),
        cmocka_unit_test(test_held_from_send_time),
        cmocka_unit_test(test_dropped_by_a_failed_forward),
        cmocka_unit_test(test_given_until),
        cmocka_unit_test(test_no_two_primaries),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
