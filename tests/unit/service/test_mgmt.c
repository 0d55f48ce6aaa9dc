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
#include "sfs_service.h"

/* A config with only the two timeouts that decide the states. */
static sfs_config_t timeouts(uint32_t heartbeat_ms, uint32_t offline_ms)
{
    sfs_config_t config;

    memset(&config, 0, sizeof(config));
    config.heartbeat_interval_ms = heartbeat_ms;
    config.offline_timeout_ms    = offline_ms;
    return config;
}

static void test_default_states(void **state)
{
    sfs_config_t config = timeouts(2000, 20000);

    (void)state;
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
    sfs_config_t config = timeouts(1000, 1200);

    (void)state;
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
    sfs_config_t config = timeouts(2000, 3000);

    (void)state;
    assert_int_equal(sfs_mgmt_suspect_after_ms(&config), 2750);
    assert_int_equal(sfs_mgmt_offline_after_ms(&config), 2875);
    assert_int_equal(sfs_mgmt_state_after(&config, 2800), SFS_STATE_PROBABLY_OFFLINE);
    assert_int_equal(sfs_mgmt_state_after(&config, 2876), SFS_STATE_OFFLINE);
}

/* sfs_mgmt_heard: after management heard no other rank for the offline
 * time (its own host cut off), the first heartbeat leaves the others
 * probably-offline, not offline, for a while; otherwise nothing moves. */
static void test_heard_after_own_cut(void **state)
{
    sfs_config_t    config;
    sfs_service_t   service;
    sfs_mgmt_t      mgmt;
    sfs_mgmt_node_t nodes[3];
    uint64_t        now = 1000000;

    (void)state;
    config = timeouts(500, 3000); /* suspect 875 ms, offline 2250 ms */
    memset(&service, 0, sizeof(service));
    memset(&mgmt, 0, sizeof(mgmt));
    memset(nodes, 0, sizeof(nodes));
    service.config  = &config;
    service.rank    = 2;
    mgmt.service    = &service;
    mgmt.nodes      = nodes;
    mgmt.node_count = 3;
    for (uint32_t i = 0; i < 3; i++) {
        nodes[i].node_id         = i;
        nodes[i].last_contact_ms = now - 8000; /* an 8 s cut */
    }
    nodes[2].last_contact_ms = now - 100; /* management's own rank */
    mgmt.heard_ms            = now - 8000;
    sfs_mgmt_heard(&mgmt, &nodes[0], now);
    assert_int_equal(nodes[0].last_contact_ms, now);
    assert_int_equal(sfs_mgmt_state_after(&config, now - nodes[1].last_contact_ms),
                     SFS_STATE_PROBABLY_OFFLINE);
    /* offline again if it stays silent past the offline time from there */
    assert_int_equal(sfs_mgmt_state_after(&config, now + 1400 - nodes[1].last_contact_ms),
                     SFS_STATE_OFFLINE);
    assert_int_equal(nodes[2].last_contact_ms, now - 100);

    /* others heard recently: a silent rank stays offline */
    nodes[1].last_contact_ms = now - 8000;
    sfs_mgmt_heard(&mgmt, &nodes[0], now + 500);
    assert_int_equal(nodes[1].last_contact_ms, now - 8000);
    /* management's own heartbeat does not count as hearing another rank */
    sfs_mgmt_heard(&mgmt, &nodes[2], now + 9000);
    assert_int_equal(mgmt.heard_ms, now + 500);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_states),
        cmocka_unit_test(test_short_offline_timeout),
        cmocka_unit_test(test_offline_after_suspect),
        cmocka_unit_test(test_heard_after_own_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
