/* The fencing lease (service/sfs_lease.c): none before management ever
 * answered; renewed for half the offline timeout counted from a heartbeat's
 * SEND time; an older heartbeat's late answer does not move it back; and
 * its end is always before management could promote the buddy (the
 * heartbeat arrived no earlier than it was sent, and management waits the
 * whole offline timeout after the arrival). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sfs_lease.h"

static void test_length(void **state)
{
    (void)state;
    assert_int_equal(sfs_lease_length_ms(20000), 10000);
    assert_int_equal(sfs_lease_length_ms(3000), 1500);
    assert_int_equal(sfs_lease_length_ms(1), 0);
}

static void test_none_before_an_answer(void **state)
{
    sfs_lease_t lease;

    (void)state;
    sfs_lease_init(&lease, 3000);
    assert_false(sfs_lease_valid(&lease, 0));
    assert_false(sfs_lease_valid(&lease, 1000));
    assert_true(sfs_lease_age_ms(&lease, 1000) == UINT64_MAX);
}

static void test_renew_from_send_time(void **state)
{
    sfs_lease_t lease;

    (void)state;
    sfs_lease_init(&lease, 3000);
    sfs_lease_renew(&lease, 10000); /* sent at 10 s, answered whenever */
    assert_true(sfs_lease_valid(&lease, 10000));
    assert_true(sfs_lease_valid(&lease, 11499));
    assert_false(sfs_lease_valid(&lease, 11500));
    assert_int_equal(sfs_lease_age_ms(&lease, 11500), 1500);
    /* an older heartbeat's answer that comes late does not shorten it */
    sfs_lease_renew(&lease, 10600);
    sfs_lease_renew(&lease, 10100);
    assert_true(sfs_lease_valid(&lease, 12099));
    assert_false(sfs_lease_valid(&lease, 12100));
}

static void test_expired_before_promotion(void **state)
{
    (void)state;
    /* management promotes at arrival + T at the earliest; arrival >= send:
     * the lease's end (send + L) comes first for every delay */
    for (uint64_t t = 2; t <= 60000; t = t * 3 + 1) {
        for (uint64_t delay = 0; delay < 5000; delay += 250) {
            sfs_lease_t lease;
            uint64_t    sent = 100000, arrival = sent + delay;

            sfs_lease_init(&lease, t);
            sfs_lease_renew(&lease, sent);
            assert_false(sfs_lease_valid(&lease, arrival + t));
            /* and with the rank's clock running 1.9 times slower (it
             * reads less time gone by) */
            assert_false(sfs_lease_valid(&lease, sent + (arrival + t - sent) * 10 / 19));
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_length),
        cmocka_unit_test(test_none_before_an_answer),
        cmocka_unit_test(test_renew_from_send_time),
        cmocka_unit_test(test_expired_before_promotion),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
