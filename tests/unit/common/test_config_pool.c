/*
 * Storage pools in the config (common/sfs_config_pool.c): parsing, ids and
 * names, the refusals (unknown target, a target in two pools, an empty
 * pool, reserved and repeated names, a mirror group across pools), the
 * Imaging example's pools, and writing them back.
 */
#include "test_config_lib.h"

#include "sfs_errno.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define STORAGE4                                                                                   \
    "storage:\n"                          /* 4 */                                                  \
    "  - {id: 101, host: h1, dir: /t1}\n" /* 5 */                                                  \
    "  - {id: 201, host: h2, dir: /t1}\n" /* 6 */                                                  \
    "  - {id: 301, host: h3, dir: /t1}\n" /* 7 */                                                  \
    "  - {id: 401, host: h4, dir: /t1}\n" /* 8 */

static void test_pools_parse(void **state)
{
    sfs_config_t *config;
    uint32_t      id = 0;

    (void)state;
    config = parse_ok(BASE_TOP STORAGE4 "pools:\n"
                                        "  - {name: hdd, targets: [101, 201]}\n"
                                        "  - name: nvme\n"
                                        "    targets:\n"
                                        "      - 301\n",
                      "t.yaml");
    assert_int_equal(config->pool_count, 2);
    assert_int_equal(config->pools[0].id, 2);
    assert_string_equal(config->pools[0].name, "hdd");
    assert_int_equal(config->pools[0].target_count, 2);
    assert_int_equal(config->pools[0].targets[0], 101);
    assert_int_equal(config->pools[0].targets[1], 201);
    assert_int_equal(config->pools[0].line, 10);
    assert_int_equal(config->pools[1].id, 3);
    assert_int_equal(config->pools[1].target_count, 1);
    assert_int_equal(sfs_config_pool_of(config, 201), 2);
    assert_int_equal(sfs_config_pool_of(config, 301), 3);
    /* in no named pool: `default` */
    assert_int_equal(sfs_config_pool_of(config, 401), SFS_CONFIG_POOL_DEFAULT);
    assert_int_equal(sfs_config_pool_find(config, "nvme", &id), 0);
    assert_int_equal(id, 3);
    assert_int_equal(sfs_config_pool_find(config, "default", &id), 0);
    assert_int_equal(id, SFS_CONFIG_POOL_DEFAULT);
    assert_int_equal(sfs_config_pool_find(config, "ssd", &id), -ENOENT);
    assert_non_null(strstr(sfs_error_detail(), "no storage pool 'ssd' in the config"));
    assert_string_equal(sfs_config_pool_name(config, 2), "hdd");
    assert_string_equal(sfs_config_pool_name(config, SFS_CONFIG_POOL_DEFAULT), "default");
    assert_string_equal(sfs_config_pool_name(config, SFS_CONFIG_POOL_NONE), "none");
    assert_null(sfs_config_pool_name(config, 9));
    sfs_config_destroy(config);

    /* id: fixes a pool's id (what directories keep), whatever the order */
    config = parse_ok(BASE_TOP STORAGE4 "pools:\n"
                                        "  - {id: 7, name: nvme, targets: [301]}\n"
                                        "  - {id: 2, name: hdd, targets: [101]}\n",
                      "t.yaml");
    assert_int_equal(config->pools[0].id, 7);
    assert_int_equal(sfs_config_pool_of(config, 301), 7);
    assert_string_equal(sfs_config_pool_name(config, 2), "hdd");
    sfs_config_destroy(config);

    /* without pools: every target is in `default` */
    config = parse_ok(BASE_TOP STORAGE4, "t.yaml");
    assert_int_equal(config->pool_count, 0);
    assert_int_equal(sfs_config_pool_of(config, 101), SFS_CONFIG_POOL_DEFAULT);
    sfs_config_destroy(config);
}

static void test_pools_refused(void **state)
{
    (void)state;
    expect_error(BASE_TOP STORAGE4 "pools:\n  - {name: hdd, targets: [101, 999]}\n",
                 "t.yaml:10: pools[0].targets[1]", "pool 'hdd': target 999 is not in storage:");
    expect_error(BASE_TOP STORAGE4 "pools:\n"
                                   "  - {name: hdd, targets: [101, 201]}\n"
                                   "  - {name: nvme, targets: [301, 201]}\n",
                 "t.yaml:11: pools[1].targets[1]",
                 "target 201 is already in pool 'hdd' (line 10): a target is in one pool");
    expect_error(BASE_TOP STORAGE4 "pools:\n  - {name: hdd, targets: [101, 101]}\n",
                 "pools[0].targets[1]", "pool 'hdd' names target 101 twice");
    expect_error(BASE_TOP STORAGE4 "pools:\n  - {name: hdd, targets: []}\n",
                 "t.yaml:10: pools[0].targets", "pool 'hdd' has no targets");
    expect_error(BASE_TOP STORAGE4 "pools: []\n", "t.yaml:9: pools", "name at least one pool");
    expect_error(BASE_TOP STORAGE4 "pools:\n  - {name: hdd}\n", "targets", NULL);
    expect_error(BASE_TOP STORAGE4 "pools:\n  - {targets: [101]}\n", "name", NULL);
    expect_error(BASE_TOP STORAGE4 "pools:\n  - {name: default, targets: [101]}\n", "pools[0]",
                 "'default' is a reserved pool name");
    expect_error(BASE_TOP STORAGE4 "pools:\n  - {name: none, targets: [101]}\n", "pools[0]",
                 "'none' is a reserved pool name");
    expect_error(BASE_TOP STORAGE4 "pools:\n  - {name: 'a/b', targets: [101]}\n", "pools[0]",
                 "is not a valid pool name");
    expect_error(BASE_TOP STORAGE4 "pools:\n"
                                   "  - {name: hdd, targets: [101]}\n"
                                   "  - {name: hdd, targets: [201]}\n",
                 "t.yaml:11: pools[1]", "pool 'hdd' is named twice (first at line 10)");
    expect_error(BASE_TOP STORAGE4 "pools:\n"
                                   "  - {id: 3, name: hdd, targets: [101]}\n"
                                   "  - {name: nvme, targets: [201]}\n",
                 "t.yaml:11: pools[1]", "pool 'nvme' has id 3, as pool 'hdd' (line 10) has");
    expect_error(BASE_TOP STORAGE4 "pools:\n  - {id: 1, name: hdd, targets: [101]}\n", "id", NULL);
    expect_error(BASE_TOP STORAGE4 "pools:\n  - {name: hdd, targets: [abc]}\n",
                 "pools[0].targets[0]", "'abc' is not a target id");
    expect_error(BASE_TOP STORAGE4 "pools:\n  - {name: hdd, targets: [0]}\n", "pools[0].targets[0]",
                 "'0' is not a target id");
    expect_error(BASE_TOP STORAGE4 "pools:\n  - {name: hdd, targets: 101}\n", "pools[0].targets",
                 "a list of target ids");
    expect_error(BASE_TOP STORAGE4 "pools:\n  - {name: hdd, targets: [101], x: 1}\n", "x", NULL);
    /* a mirrored file's two copies stay in its pool */
    expect_error(BASE_TOP STORAGE4 "pools:\n  - {name: hdd, targets: [101, 201]}\n"
                                   "mirror: {groups: [{primary: 101, secondary: 301}]}\n",
                 "mirror.groups[0]",
                 "targets 101 (pool hdd) and 301 (pool default) are in different pools");
}

static void test_imaging_pools(void **state)
{
    char          path[PATH_MAX];
    sfs_config_t *config = NULL;

    (void)state;
    snprintf(path, sizeof(path), "%s/examples/imaging.yaml", src_dir());
    if (sfs_config_load(path, &config) != 0) {
        fail_msg("%s: %s", path, sfs_error_detail());
    }
    assert_int_equal(config->pool_count, 2);
    assert_string_equal(config->pools[0].name, "hdd");
    assert_int_equal(config->pools[0].id, 2);
    assert_int_equal(config->pools[0].target_count, 2);
    assert_int_equal(config->pools[0].targets[0], 101);
    assert_int_equal(config->pools[0].targets[1], 201);
    assert_string_equal(config->pools[1].name, "nvme");
    assert_int_equal(config->pools[1].id, 3);
    assert_int_equal(config->pools[1].targets[0], 301);
    assert_int_equal(config->pools[1].targets[1], 401);
    /* the 12T drives on /mnt/14t_drive, the 7T ones on /mnt/7t_drive */
    for (uint32_t i = 0; i < config->target_count; i++) {
        const char *want = sfs_config_pool_of(config, config->targets[i].id) == 2
                               ? "/mnt/14t_drive/"
                               : "/mnt/7t_drive/";

        assert_non_null(strstr(config->targets[i].dir, want));
    }
    sfs_config_destroy(config);
}

static void test_pools_written_back(void **state)
{
    sfs_config_t *config, *back = NULL;
    char          path[PATH_MAX + 16];

    (void)state;
    config = parse_ok(BASE_TOP STORAGE4 "pools:\n"
                                        "  - {name: hdd, targets: [201, 101]}\n"
                                        "  - {name: nvme, targets: [301]}\n",
                      "t.yaml");
    snprintf(path, sizeof(path), "%s/pools.yaml", test_tmp_dir);
    assert_int_equal(sfs_config_write(config, path), 0);
    if (sfs_config_load(path, &back) != 0) {
        fail_msg("%s: %s", path, sfs_error_detail());
    }
    assert_config_equal(config, back);
    assert_int_equal(back->pool_count, 2);
    assert_int_equal(back->pools[0].targets[0], 201);
    assert_int_equal(back->pools[0].targets[1], 101);
    sfs_config_destroy(back);
    sfs_config_destroy(config);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pools_parse),
        cmocka_unit_test(test_pools_refused),
        cmocka_unit_test(test_imaging_pools),
        cmocka_unit_test_setup_teardown(test_pools_written_back, setup_tmp, teardown_tmp),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
