/* Management's failover decision (service/sfs_mgmt_mirror.c): when a
 * rank goes offline, the secondary of each group whose primary it served
 * is promoted only if it is good and its rank online; the old primary is
 * then needs-resync, and the map names the new primary for both members. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sfs_mgmt_internal.h"
#include "sfs_time.h"

static sfs_config_mirror_group_t groups[] = {{1, 101, 201, 0}, {2, 102, 202, 0}, {3, 103, 203, 0}};
static sfs_mgmt_node_t           nodes[3];
static sfs_mgmt_target_t         targets[6];
static sfs_config_t              config;
static sfs_service_t             service;
static sfs_mgmt_t                mgmt;

static int setup(void **state)
{
    (void)state;
    memset(&config, 0, sizeof(config));
    memset(&mgmt, 0, sizeof(mgmt));
    config.heartbeat_interval_ms = 1000;
    config.offline_timeout_ms    = 3000;
    config.mirror_groups         = groups;
    config.mirror_group_count    = 3;
    service.config               = &config;
    mgmt.service                 = &service;
    mgmt.nodes                   = nodes;
    mgmt.node_count              = 3;
    mgmt.targets                 = targets;
    mgmt.target_count            = 6;
    for (uint32_t i = 0; i < 3; i++) {
        nodes[i].node_id         = i + 1;
        nodes[i].last_contact_ms = 0; /* silent since boot: offline */
    }
    nodes[1].last_contact_ms = sfs_time_ms(); /* rank 2: online */
    for (uint32_t i = 0; i < 3; i++) {
        targets[i].target_id     = 101 + i;
        targets[i].node_id       = 1;
        targets[3 + i].target_id = 201 + i;
        targets[3 + i].node_id   = 2;
    }
    targets[5].node_id = 3; /* 203 on rank 3, offline too */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(mgmt.mirrors);
    return 0;
}

static void test_failover_rules(void **state)
{
    sfs_mgmt_mirror_t *g = sfs_mgmt_mirrors(&mgmt);
    sfs_map_target_t   map_targets[6];
    sfs_map_t          map;

    (void)state;
    assert_non_null(g);
    g[1].state[1] = SFS_MIRROR_STATE_NEEDS_RESYNC; /* 202: never promoted */
    assert_int_equal(sfs_mgmt_mirror_failover(&mgmt, 1), 1);
    assert_int_equal(g[0].primary, 201); /* good, online: promoted */
    assert_int_equal(g[0].state[0], SFS_MIRROR_STATE_NEEDS_RESYNC);
    assert_int_equal(g[0].state[1], SFS_MIRROR_STATE_GOOD);
    assert_int_equal(g[1].primary, 102); /* needs-resync: the group is down */
    assert_int_equal(g[1].state[0], SFS_MIRROR_STATE_GOOD);
    assert_int_equal(g[2].primary, 103); /* secondary's rank offline */
    /* the rank of the new primary going away does not swap back */
    assert_int_equal(sfs_mgmt_mirror_failover(&mgmt, 1), 0);

    memset(&map, 0, sizeof(map));
    memset(map_targets, 0, sizeof(map_targets));
    for (uint32_t i = 0; i < 6; i++) {
        map_targets[i].target_id = targets[i].target_id;
    }
    map.targets      = map_targets;
    map.target_count = 6;
    sfs_mgmt_mirror_map(&mgmt, &map);
    assert_int_equal(map_targets[0].mirror_primary, 201);
    assert_int_equal(map_targets[0].mirror_state, SFS_MIRROR_STATE_NEEDS_RESYNC);
    assert_int_equal(map_targets[3].mirror_primary, 201);
    assert_int_equal(map_targets[4].mirror_primary, 102);
    assert_int_equal(map_targets[4].mirror_state, SFS_MIRROR_STATE_NEEDS_RESYNC);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_failover_rules, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
