/* Storage pools on the metadata role (service/sfs_meta_pool.c): a new
 * file's targets come from its pool only, weighted as the chooser weighs
 * them; a full pool fails with ENOSPC naming the pool instead of spilling
 * into another; a start target of another pool is refused; names resolve
 * ("none" included) and unknown ones are refused naming the pool. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sfs_config.h"
#include "sfs_errno.h"
#include "sfs_meta_pool.h"
#include "sfs_proto.h"

#define MIB (1ull << 20)

static const char pools_yaml[] = "connauth_file: /etc/sfs/connauth\n"
                                 "mgmt: {host: h1}\n"
                                 "meta: {host: h1, dir: /meta}\n"
                                 "storage:\n"
                                 "  - {id: 101, host: h1, dir: /t1}\n"
                                 "  - {id: 201, host: h2, dir: /t1}\n"
                                 "  - {id: 301, host: h3, dir: /t1}\n"
                                 "  - {id: 401, host: h4, dir: /t1}\n"
                                 "  - {id: 501, host: h5, dir: /t1}\n"
                                 "pools:\n"
                                 "  - {name: hdd, targets: [101, 201]}\n"
                                 "  - {name: nvme, targets: [301, 401]}\n";

typedef struct {
    sfs_config_t      *config;
    sfs_meta_chooser_t chooser;
    sfs_map_target_t   targets[5];
} fixture_t;

static void update(fixture_t *f)
{
    sfs_map_t map;

    memset(&map, 0, sizeof(map));
    map.targets      = f->targets;
    map.target_count = 5;
    assert_int_equal(sfs_meta_chooser_update(&f->chooser, &map), 0);
}

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));

    if (!f || sfs_config_parse(pools_yaml, sizeof(pools_yaml) - 1, "t.yaml", &f->config) != 0) {
        free(f);
        return -1;
    }
    sfs_meta_chooser_init(&f->chooser);
    for (uint32_t i = 0; i < 5; i++) {
        f->targets[i].target_id = (i + 1) * 100 + 1;
        f->targets[i].state     = SFS_STATE_ONLINE;
        f->targets[i].free      = 1000 * MIB;
    }
    update(f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;

    sfs_meta_chooser_cleanup(&f->chooser);
    sfs_config_destroy(f->config);
    free(f);
    return 0;
}

static void assert_detail(const char *want)
{
    if (!strstr(sfs_error_detail(), want)) {
        fail_msg("expected '%s' in '%s'", want, sfs_error_detail());
    }
}

static void test_choice_stays_in_pool(void **state)
{
    fixture_t *f = *state;
    uint32_t   picked[SFS_STRIPE_COUNT_MAX], candidates = 0;
    uint32_t   hdd = 0, nvme = 0;
    int        n;

    assert_int_equal(sfs_meta_pool_resolve(f->config, "/d", "hdd", &hdd), 0);
    assert_int_equal(sfs_meta_pool_resolve(f->config, "/d", "nvme", &nvme), 0);
    for (int round = 0; round < 20; round++) {
        n = sfs_meta_pool_choose(&f->chooser, f->config, hdd, 4, 0, picked, &candidates);
        assert_int_equal(n, 2); /* as many as the pool has */
        assert_int_equal(candidates, 2);
        for (int i = 0; i < n; i++) {
            assert_true(picked[i] == 101 || picked[i] == 201);
        }
        n = sfs_meta_pool_choose(&f->chooser, f->config, nvme, 1, 0, picked, NULL);
        assert_int_equal(n, 1);
        assert_true(picked[0] == 301 || picked[0] == 401);
        /* `default`: the target in no named pool */
        n = sfs_meta_pool_choose(&f->chooser, f->config, SFS_POOL_DEFAULT, 4, 0, picked, NULL);
        assert_int_equal(n, 1);
        assert_int_equal(picked[0], 501);
    }
    /* no pool: any target */
    n = sfs_meta_pool_choose(&f->chooser, f->config, SFS_POOL_NONE, 5, 0, picked, &candidates);
    assert_int_equal(n, 5);
    assert_int_equal(candidates, 5);
    /* a start target of the pool comes first; another pool's is refused */
    n = sfs_meta_pool_choose(&f->chooser, f->config, nvme, 2, 401, picked, NULL);
    assert_int_equal(n, 2);
    assert_int_equal(picked[0], 401);
    assert_int_equal(sfs_meta_pool_choose(&f->chooser, f->config, nvme, 2, 101, picked, NULL),
                     -EINVAL);
    assert_detail("start target 101 is in storage pool 'hdd', not in 'nvme'");
}

static void test_full_pool_does_not_spill(void **state)
{
    fixture_t *f = *state;
    uint32_t   picked[SFS_STRIPE_COUNT_MAX], nvme = 0;

    assert_int_equal(sfs_meta_pool_resolve(f->config, "/d", "nvme", &nvme), 0);
    f->targets[2].free = 0; /* 301 and 401 full, the others have room */
    f->targets[3].free = 0;
    update(f);
    assert_int_equal(sfs_meta_pool_choose(&f->chooser, f->config, nvme, 1, 0, picked, NULL),
                     -ENOSPC);
    assert_detail("storage pool 'nvme' is full (targets 301, 401)");
    /* one of them online again with room: only it is taken */
    f->targets[3].free = 10 * MIB;
    update(f);
    assert_int_equal(sfs_meta_pool_choose(&f->chooser, f->config, nvme, 2, 0, picked, NULL), 1);
    assert_int_equal(picked[0], 401);
    /* offline: not online in the pool, said so */
    f->targets[3].state = SFS_STATE_OFFLINE;
    f->targets[2].state = SFS_STATE_OFFLINE;
    update(f);
    assert_int_equal(sfs_meta_pool_choose(&f->chooser, f->config, nvme, 1, 0, picked, NULL),
                     -EHOSTDOWN);
    assert_detail("no target of storage pool 'nvme' is online");
}

static void test_names(void **state)
{
    fixture_t *f    = *state;
    uint32_t   pool = 99;

    assert_int_equal(sfs_meta_pool_resolve(f->config, "/d", "none", &pool), 0);
    assert_int_equal(pool, SFS_POOL_NONE);
    assert_int_equal(sfs_meta_pool_resolve(f->config, "/d", "default", &pool), 0);
    assert_int_equal(pool, SFS_POOL_DEFAULT);
    assert_int_equal(sfs_meta_pool_resolve(f->config, "/d", "ssd", &pool), -EINVAL);
    assert_detail("'/d': no storage pool 'ssd' in the config");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_choice_stays_in_pool, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_pool_does_not_spill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_names, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
