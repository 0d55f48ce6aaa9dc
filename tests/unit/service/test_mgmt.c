/* Management's target states (service/sfs_mgmt.c): a rank is
 * probably-offline, and gets no new file, as soon as it missed one
 * heartbeat; offline only after the offline timeout. (Probably-offline
 * used to come at half the offline timeout, 10 s by default.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "sfs_mgmt_internal.h"

static void test_default_states(void **state)
{
    sfs_config_t config;

    (void)state;
    memset(&config, 0, sizeof(config));
    config.heartbeat_interval_ms = 2000;
    config.offline_timeout_ms    = 20000;
    assert_int_equal(sfs_mgmt_suspect_after_ms(&config), 2750);
    assert_int_equal(sfs_mgmt_state_after(&config, 0), SFS_STATE_ONLINE);
    /* a heartbeat a little late is not a missed one */
    assert_int_equal(sfs_mgmt_state_after(&config, 2600), SFS_STATE_ONLINE);
    assert_int_equal(sfs_mgmt_state_after(&config, 2751), SFS_STATE_PROBABLY_OFFLINE);
    assert_int_equal(sfs_mgmt_state_after(&config, 10001), SFS_STATE_PROBABLY_OFFLINE);
    assert_int_equal(sfs_mgmt_state_after(&config, 20000), SFS_STATE_PROBABLY_OFFLINE);
    assert_int_equal(sfs_mgmt_state_after(&config, 20001), SFS_STATE_OFFLINE);
}

/* A short offline timeout (as tests set) keeps online < probably-offline <
 * offline: probably-offline at half of it. */
static void test_short_offline_timeout(void **state)
{
    sfs_config_t config;

    (void)state;
    memset(&config, 0, sizeof(config));
    config.heartbeat_interval_ms = 1000;
    config.offline_timeout_ms    = 1200;
    assert_int_equal(sfs_mgmt_suspect_after_ms(&config), 600);
    assert_int_equal(sfs_mgmt_state_after(&config, 600), SFS_STATE_ONLINE);
    assert_int_equal(sfs_mgmt_state_after(&config, 601), SFS_STATE_PROBABLY_OFFLINE);
    assert_int_equal(sfs_mgmt_state_after(&config, 1201), SFS_STATE_OFFLINE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_states),
        cmocka_unit_test(test_short_offline_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
