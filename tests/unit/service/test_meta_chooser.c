/* The metadata role's target chooser (service/sfs_meta_chooser.c): how
 * many targets a new file gets, which first, which never (offline, full),
 * no target twice, and a start target that does not exist refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sfs_errno.h"
#include "sfs_meta_chooser.h"

#define MIB (1ull << 20)

/* A chooser over targets 1..n, each online with 100 GiB free. */
static void setup_map(sfs_meta_chooser_t *chooser, uint32_t n, sfs_map_target_t *targets)
{
    sfs_map_t map;

    memset(&map, 0, sizeof(map));
    for (uint32_t i = 0; i < n; i++) {
        memset(&targets[i], 0, sizeof(targets[i]));
        targets[i].target_id = 101 + i;
        targets[i].state     = SFS_STATE_ONLINE;
        targets[i].free      = 100 * 1024 * MIB;
    }
    map.targets      = targets;
    map.target_count = n;
    assert_int_equal(sfs_meta_chooser_update(chooser, &map), 0);
}

static void update(sfs_meta_chooser_t *chooser, sfs_map_target_t *targets, uint32_t n)
{
    sfs_map_t map;

    memset(&map, 0, sizeof(map));
    map.targets      = targets;
    map.target_count = n;
    assert_int_equal(sfs_meta_chooser_update(chooser, &map), 0);
}

static void assert_distinct(const uint32_t *picked, int n)
{
    for (int i = 0; i < n; i++) {
        for (int j = i + 1; j < n; j++) {
            assert_int_not_equal(picked[i], picked[j]);
        }
    }
}

static void test_counts(void **state)
{
    sfs_meta_chooser_t chooser;
    sfs_map_target_t   targets[8];
    uint32_t           picked[SFS_STRIPE_COUNT_MAX];

    (void)state;
    sfs_meta_chooser_init(&chooser);
    setup_map(&chooser, 8, targets);
    for (uint32_t count = 1; count <= 8; count++) {
        int n = sfs_meta_choose(&chooser, count, 0, picked);

        assert_int_equal(n, (int)count);
        assert_distinct(picked, n);
        for (int i = 0; i < n; i++) {
            assert_in_range(picked[i], 101, 108);
        }
    }
    sfs_meta_chooser_cleanup(&chooser);
}

static void test_fewer_than_asked(void **state)
{
    sfs_meta_chooser_t chooser;
    sfs_map_target_t   targets[3];
    uint32_t           picked[SFS_STRIPE_COUNT_MAX];
    int                n;

    (void)state;
    sfs_meta_chooser_init(&chooser);
    setup_map(&chooser, 3, targets);
    n = sfs_meta_choose(&chooser, 16, 0, picked);
    assert_int_equal(n, 3);
    assert_distinct(picked, n);
    sfs_meta_chooser_cleanup(&chooser);
}

static void test_start_target(void **state)
{
    sfs_meta_chooser_t chooser;
    sfs_map_target_t   targets[4];
    uint32_t           picked[SFS_STRIPE_COUNT_MAX];

    (void)state;
    sfs_meta_chooser_init(&chooser);
    setup_map(&chooser, 4, targets);
    for (uint32_t start = 101; start <= 104; start++) {
        for (uint32_t count = 1; count <= 4; count++) {
            int n = sfs_meta_choose(&chooser, count, start, picked);

            assert_int_equal(n, (int)count);
            assert_int_equal(picked[0], start);
            assert_distinct(picked, n);
        }
    }
    sfs_meta_chooser_cleanup(&chooser);
}

static void test_offline_and_full_skipped(void **state)
{
    sfs_meta_chooser_t chooser;
    sfs_map_target_t   targets[4];
    uint32_t           picked[SFS_STRIPE_COUNT_MAX];
    int                n;

    (void)state;
    sfs_meta_chooser_init(&chooser);
    setup_map(&chooser, 4, targets);
    targets[1].state = SFS_STATE_OFFLINE;          /* 102 */
    targets[2].state = SFS_STATE_PROBABLY_OFFLINE; /* 103 */
    targets[3].free  = 1000;                       /* 104: full (< 1 MiB) */
    update(&chooser, targets, 4);
    for (int round = 0; round < 20; round++) {
        n = sfs_meta_choose(&chooser, 4, 0, picked);
        assert_int_equal(n, 1);
        assert_int_equal(picked[0], 101);
    }
    /* an offline start target exists: the file goes elsewhere */
    n = sfs_meta_choose(&chooser, 1, 102, picked);
    assert_int_equal(n, 1);
    assert_int_equal(picked[0], 101);

    targets[0].state = SFS_STATE_OFFLINE;
    targets[2].state = SFS_STATE_OFFLINE;
    update(&chooser, targets, 4);
    assert_int_equal(sfs_meta_choose(&chooser, 1, 0, picked), -ENOSPC);
    targets[3].state = SFS_STATE_OFFLINE;
    update(&chooser, targets, 4);
    assert_int_equal(sfs_meta_choose(&chooser, 1, 0, picked), -EHOSTDOWN);
    sfs_meta_chooser_cleanup(&chooser);
}

/* A probably-offline target (a missed heartbeat) gets no new file while an
 * online one can take it, and is the last resort when none can: a late
 * heartbeat under load must not fail every create. */
static void test_probably_offline_last_resort(void **state)
{
    sfs_meta_chooser_t chooser;
    sfs_map_target_t   targets[4];
    uint32_t           picked[SFS_STRIPE_COUNT_MAX];
    uint32_t           total, usable;
    int                n;

    (void)state;
    sfs_meta_chooser_init(&chooser);
    setup_map(&chooser, 4, targets);
    targets[1].state = SFS_STATE_PROBABLY_OFFLINE; /* 102 */
    targets[3].state = SFS_STATE_PROBABLY_OFFLINE; /* 104 */
    update(&chooser, targets, 4);
    sfs_meta_chooser_counts(&chooser, &total, &usable);
    assert_int_equal(total, 4);
    assert_int_equal(usable, 2);
    for (int round = 0; round < 40; round++) {
        n = sfs_meta_choose(&chooser, 4, round % 2 ? 102 : 0, picked);
        assert_int_equal(n, 2);
        for (int i = 0; i < n; i++) {
            assert_true(picked[i] == 101 || picked[i] == 103);
        }
    }
    targets[0].state = SFS_STATE_OFFLINE;
    targets[2].state = SFS_STATE_OFFLINE;
    update(&chooser, targets, 4);
    n = sfs_meta_choose(&chooser, 4, 0, picked);
    assert_int_equal(n, 2);
    assert_distinct(picked, n);
    for (int i = 0; i < n; i++) {
        assert_true(picked[i] == 102 || picked[i] == 104);
    }
    sfs_meta_chooser_counts(&chooser, &total, &usable);
    assert_int_equal(usable, 0);
    sfs_meta_chooser_cleanup(&chooser);
}

static void test_no_targets(void **state)
{
    sfs_meta_chooser_t chooser;
    uint32_t           picked[SFS_STRIPE_COUNT_MAX];

    (void)state;
    sfs_meta_chooser_init(&chooser);
    assert_int_equal(sfs_meta_choose(&chooser, 1, 0, picked), -EHOSTDOWN);
    sfs_meta_chooser_cleanup(&chooser);
}

/* The defect: a start target that does not exist was silently replaced. */
static void test_unknown_start_target(void **state)
{
    sfs_meta_chooser_t chooser;
    sfs_map_target_t   targets[4];
    uint32_t           picked[SFS_STRIPE_COUNT_MAX];

    (void)state;
    sfs_meta_chooser_init(&chooser);
    setup_map(&chooser, 4, targets);
    assert_int_equal(sfs_meta_choose(&chooser, 2, 999, picked), -EINVAL);
    assert_non_null(strstr(sfs_error_detail(), "target 999 does not exist"));
    sfs_meta_chooser_cleanup(&chooser);
}

/* Equal free space: over many one-target files every target is used
 * about as often; twice the free space, about twice as often. */
static void test_spread(void **state)
{
    sfs_meta_chooser_t chooser;
    sfs_map_target_t   targets[4];
    uint32_t           picked[SFS_STRIPE_COUNT_MAX];
    unsigned           hits[4] = {0};

    (void)state;
    sfs_meta_chooser_init(&chooser);
    setup_map(&chooser, 4, targets);
    targets[3].free *= 2;
    update(&chooser, targets, 4);
    for (int i = 0; i < 500; i++) {
        assert_int_equal(sfs_meta_choose(&chooser, 1, 0, picked), 1);
        hits[picked[0] - 101]++;
    }
    for (int i = 0; i < 3; i++) {
        assert_in_range(hits[i], 90, 110);
    }
    assert_in_range(hits[3], 190, 210);
    sfs_meta_chooser_cleanup(&chooser);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts),       cmocka_unit_test(test_fewer_than_asked),
        cmocka_unit_test(test_start_target), cmocka_unit_test(test_offline_and_full_skipped),
        cmocka_unit_test(test_no_targets),   cmocka_unit_test(test_unknown_start_target),
        cmocka_unit_test(test_spread),       cmocka_unit_test(test_probably_offline_last_resort),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
