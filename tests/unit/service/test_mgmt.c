/* Management's target states (service/sfs_mgmt.c): a rank is
 * probably-offline, and gets no new file, as soon as it missed one
 * heartbeat; offline just before the offline timeout. (Probably-offline
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
    /* offline (buddies promoted) 1 s before the timeout: a waiting client
     * sees the new map and resends within it */
    assert_int_equal(sfs_mgmt_offline_after_ms(&config), 19000);
    assert_int_equal(sfs_mgmt_state_after(&config, 19000), SFS_STATE_PROBABLY_OFFLINE);
    assert_int_equal(sfs_mgmt_state_after(&config, 19001), SFS_STATE_OFFLINE);
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
    /* the slack is a quarter of a short timeout */
    assert_int_equal(sfs_mgmt_offline_after_ms(&config), 900);
    assert_int_equal(sfs_mgmt_state_after(&config, 900), SFS_STATE_PROBABLY_OFFLINE);
    assert_int_equal(sfs_mgmt_state_after(&config, 901), SFS_STATE_OFFLINE);
}

/* A heartbeat close to the offline timeout: offline still comes after
 * probably-offline (midway between it and the timeout). */
static void test_offline_after_suspect(void **state)
{
    sfs_config_t config;

    (void)state;
    memset(&config, 0, sizeof(config));
    config.heartbeat_interval_ms = 2000;
    config.offline_timeout_ms    = 3000;
    assert_int_equal(sfs_mgmt_suspect_after_ms(&config), 2750);
    assert_int_equal(sfs_mgmt_offline_after_ms(&config), 2875);
    assert_int_equal(sfs_mgmt_state_after(&config, 2800), SFS_STATE_PROBABLY_OFFLINE);
    assert_int_equal(sfs_mgmt_state_after(&config, 2876), SFS_STATE_OFFLINE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_states),
        cmocka_unit_test(test_short_offline_timeout),
        cmocka_unit_test(test_offline_after_suspect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
