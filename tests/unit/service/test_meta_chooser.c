/* The metadata role's target chooser (service/sfs_meta_chooser.c): how
 * many targets a new file gets, which first, which never (offline, full),
 * no target twice, and a start target that does not exist refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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
    /* a start target that cannot take the file is refused, naming it
     * (the defect: it was silently replaced by another) */
    assert_int_equal(sfs_meta_choose(&chooser, 1, 102, picked), -EHOSTDOWN);
    assert_non_null(strstr(sfs_error_detail(), "start target 102 is offline"));
    assert_int_equal(sfs_meta_choose(&chooser, 2, 103, picked), -EHOSTDOWN);
    assert_int_equal(sfs_meta_choose(&chooser, 1, 104, picked), -ENOSPC);
    assert_non_null(strstr(sfs_error_detail(), "start target 104 is full"));

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
    assert_int_equal(sfs_meta_choose(&chooser, 4, 102, picked), -EHOSTDOWN);
    for (int round = 0; round < 40; round++) {
        n = sfs_meta_choose(&chooser, 4, round % 2 ? 101 : 0, picked);
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

/* A map of targets 101.. on `ranks` (target i on node_of[i]) whose nodes
 * live on `hosts` (node r on host_of[r]); every target 100 GiB free. */
static void setup_nodes(sfs_meta_chooser_t *chooser, uint32_t n, sfs_map_target_t *targets,
                        const uint32_t *node_of, uint32_t node_count, sfs_map_node_t *nodes,
                        const char *const *host_of)
{
    sfs_map_t map;

    memset(&map, 0, sizeof(map));
    for (uint32_t r = 0; r < node_count; r++) {
        memset(&nodes[r], 0, sizeof(nodes[r]));
        nodes[r].node_id = r + 1;
        nodes[r].state   = SFS_STATE_ONLINE;
        snprintf(nodes[r].host, sizeof(nodes[r].host), "%s", host_of[r]);
    }
    for (uint32_t i = 0; i < n; i++) {
        memset(&targets[i], 0, sizeof(targets[i]));
        targets[i].target_id = 101 + i;
        targets[i].node_id   = node_of[i];
        targets[i].state     = SFS_STATE_ONLINE;
        targets[i].free      = 100 * 1024 * MIB;
    }
    map.nodes        = nodes;
    map.node_count   = node_count;
    map.targets      = targets;
    map.target_count = n;
    assert_int_equal(sfs_meta_chooser_update(chooser, &map), 0);
}

static uint32_t node_of_target(const sfs_map_target_t *targets, uint32_t id)
{
    return targets[id - 101].node_id;
}

/* The defect: a two-target file got two targets of one rank (101+102 here,
 * both on rank 1) while rank 2 had usable ones. Other hosts come first,
 * then other ranks of one host. */
static void test_nodes_first(void **state)
{
    sfs_meta_chooser_t chooser;
    sfs_map_target_t   targets[5];
    sfs_map_node_t     nodes[3];
    uint32_t           picked[SFS_STRIPE_COUNT_MAX];
    const uint32_t     one_host_nodes[4] = {1, 1, 2, 2};
    const char *const  one_host[2]       = {"h1", "h1"};
    const uint32_t     two_host_nodes[5] = {1, 1, 2, 3, 3};
    const char *const  two_hosts[3]      = {"h1", "h1", "h2"};

    (void)state;
    sfs_meta_chooser_init(&chooser);
    setup_nodes(&chooser, 4, targets, one_host_nodes, 2, nodes, one_host);
    for (int round = 0; round < 100; round++) {
        assert_int_equal(sfs_meta_choose(&chooser, 2, 0, picked), 2);
        assert_int_not_equal(node_of_target(targets, picked[0]),
                             node_of_target(targets, picked[1]));
    }
    /* a start target's rank counts too */
    assert_int_equal(sfs_meta_choose(&chooser, 2, 102, picked), 2);
    assert_int_equal(node_of_target(targets, picked[1]), 2);
    /* 101, 102 on rank 1 and 103 on rank 2 of host h1; 104, 105 on rank 3
     * of host h2: a two-target file takes one of each host */
    setup_nodes(&chooser, 5, targets, two_host_nodes, 3, nodes, two_hosts);
    for (int round = 0; round < 100; round++) {
        int on_h2 = 0;

        assert_int_equal(sfs_meta_choose(&chooser, 2, 0, picked), 2);
        on_h2 = (picked[0] >= 104) + (picked[1] >= 104);
        assert_int_equal(on_h2, 1);
        /* three targets: both hosts, and both ranks of h1 before a second
         * target of rank 1 or 3 */
        assert_int_equal(sfs_meta_choose(&chooser, 3, 0, picked), 3);
        assert_true(node_of_target(targets, picked[0]) != node_of_target(targets, picked[1]) &&
                    node_of_target(targets, picked[1]) != node_of_target(targets, picked[2]) &&
                    node_of_target(targets, picked[0]) != node_of_target(targets, picked[2]));
    }
    sfs_meta_chooser_cleanup(&chooser);
}

/* A draining target gets no new file (kept across map refreshes), a start
 * hint naming it is refused; undrained, it takes files again. A flag set
 * before the first map (read from the store at start) holds when the map
 * comes. */
static void test_draining(void **state)
{
    sfs_meta_chooser_t chooser;
    sfs_map_target_t   targets[4];
    uint32_t           picked[SFS_STRIPE_COUNT_MAX];
    uint32_t           total, usable;

    (void)state;
    sfs_meta_chooser_init(&chooser);
    assert_int_equal(sfs_meta_chooser_set_draining(&chooser, 103, 1), 0); /* no map yet */
    assert_int_equal(sfs_meta_chooser_set_draining(&chooser, 103, 1), 0); /* once */
    assert_int_equal(sfs_meta_chooser_set_draining(&chooser, 0, 1), -EINVAL);
    assert_int_equal(sfs_meta_chooser_has_target(&chooser, 103), 0);
    setup_map(&chooser, 4, targets);
    assert_int_equal(sfs_meta_chooser_has_target(&chooser, 103), 1);
    assert_int_equal(sfs_meta_chooser_has_target(&chooser, 999), 0);
    update(&chooser, targets, 4);
    sfs_meta_chooser_counts(&chooser, &total, &usable);
    assert_int_equal(usable, 3);
    for (int round = 0; round < 50; round++) {
        int n = sfs_meta_choose(&chooser, 4, 0, picked);

        assert_int_equal(n, 3);
        for (int i = 0; i < n; i++) {
            assert_int_not_equal(picked[i], 103);
        }
    }
    assert_int_equal(sfs_meta_choose(&chooser, 1, 103, picked), -EBUSY);
    assert_non_null(strstr(sfs_error_detail(), "start target 103 is draining"));
    /* the list migrate and listtargets show */
    assert_int_equal(sfs_meta_chooser_draining(&chooser, picked, SFS_STRIPE_COUNT_MAX), 1);
    assert_int_equal(picked[0], 103);
    assert_int_equal(sfs_meta_chooser_draining(&chooser, picked, 0), 0);
    assert_int_equal(sfs_meta_chooser_set_draining(&chooser, 103, 0), 0);
    assert_int_equal(sfs_meta_chooser_draining(&chooser, picked, SFS_STRIPE_COUNT_MAX), 0);
    update(&chooser, targets, 4);
    assert_int_equal(sfs_meta_choose(&chooser, 4, 0, picked), 4);
    assert_int_equal(sfs_meta_choose(&chooser, 1, 103, picked), 1);
    sfs_meta_chooser_cleanup(&chooser);
}

/* Full means below the reserve (1% of the capacity, at least 1 MiB), not
 * only 0 bytes: a 12 TB target with 100 GB left takes no new file. */
static void test_reserve(void **state)
{
    sfs_meta_chooser_t chooser;
    sfs_map_target_t   targets[2];
    uint32_t           picked[SFS_STRIPE_COUNT_MAX];

    (void)state;
    assert_int_equal(sfs_meta_chooser_reserve(0), MIB);
    assert_int_equal(sfs_meta_chooser_reserve(4 * MIB), MIB);
    assert_int_equal(sfs_meta_chooser_reserve(12000000000000ull), 120000000000ull);
    sfs_meta_chooser_init(&chooser);
    setup_map(&chooser, 2, targets);
    targets[0].capacity = 12000000000000ull;
    targets[0].free     = 100000000000ull;
    targets[1].capacity = 64 * MIB;
    targets[1].free     = MIB - 1;
    update(&chooser, targets, 2);
    assert_int_equal(sfs_meta_choose(&chooser, 1, 0, picked), -ENOSPC);
    targets[1].free = MIB;
    update(&chooser, targets, 2);
    for (int round = 0; round < 10; round++) {
        assert_int_equal(sfs_meta_choose(&chooser, 2, 0, picked), 1);
        assert_int_equal(picked[0], 102);
    }
    sfs_meta_chooser_cleanup(&chooser);
}

/* The defect: when every file takes every target, the first target went
 * round equally, so one-chunk files put as many bytes on a 7 TB target as
 * on a 12 TB one. It now follows the weights: 12:12:7:7. */
static void test_first_target_weighted(void **state)
{
    sfs_meta_chooser_t chooser;
    sfs_map_target_t   targets[4];
    uint32_t           picked[SFS_STRIPE_COUNT_MAX];
    unsigned           first[4] = {0};
    const uint64_t     size[4]  = {12, 12, 7, 7};

    (void)state;
    sfs_meta_chooser_init(&chooser);
    setup_map(&chooser, 4, targets);
    for (int i = 0; i < 4; i++) {
        targets[i].free = size[i] * 1024 * MIB;
    }
    update(&chooser, targets, 4);
    for (int i = 0; i < 380; i++) {
        assert_int_equal(sfs_meta_choose(&chooser, 4, 0, picked), 4);
        assert_distinct(picked, 4);
        first[picked[0] - 101]++;
    }
    for (int i = 0; i < 4; i++) {
        assert_in_range(first[i], size[i] * 10 - 3, size[i] * 10 + 3);
    }
    sfs_meta_chooser_cleanup(&chooser);
}

/* The model of the acceptance run (benchmarks/capacity_fill.sh does it
 * for real): targets of 12, 12, 7 and 7 units, files of 1 to 3 targets
 * (narrower than the cluster) and 1 to 16 chunks, the free space fed back
 * after each file, until the first file that does not fit: every target
 * is then within 5% of the mean fill, and 95% of the sum is used. */
static void test_capacity_fill_model(void **state)
{
    sfs_meta_chooser_t chooser;
    sfs_map_target_t   targets[4];
    uint32_t           picked[SFS_STRIPE_COUNT_MAX];
    const uint64_t     chunk = 512 * 1024, cap[4] = {120 * MIB, 120 * MIB, 70 * MIB, 70 * MIB};
    uint64_t           used[4] = {0};
    double             mean    = 0;
    unsigned           seed    = 7;

    (void)state;
    sfs_meta_chooser_init(&chooser);
    setup_map(&chooser, 4, targets);
    for (int files = 0; files < 100000; files++) {
        uint32_t width  = 1 + (seed = seed * 1103515245u + 12345u) / 65536 % 3;
        uint32_t chunks = 1 + (seed = seed * 1103515245u + 12345u) / 65536 % 16;
        uint64_t add[4] = {0};
        int      n, fits = 1;

        for (int i = 0; i < 4; i++) {
            targets[i].capacity = cap[i];
            targets[i].free     = cap[i] - used[i];
        }
        update(&chooser, targets, 4);
        n = sfs_meta_choose(&chooser, width, 0, picked);
        if (n < (int)width) {
            break; /* fewer usable than asked: as good as full */
        }
        for (uint32_t c = 0; c < chunks; c++) {
            add[picked[c % width] - 101] += chunk;
        }
        for (int i = 0; i < 4; i++) {
            fits &= used[i] + add[i] <= cap[i];
        }
        if (!fits) {
            break; /* the first ENOSPC */
        }
        for (int i = 0; i < 4; i++) {
            used[i] += add[i];
        }
    }
    for (int i = 0; i < 4; i++) {
        mean += (double)used[i] / (double)cap[i] / 4;
    }
    for (int i = 0; i < 4; i++) {
        double fill = (double)used[i] / (double)cap[i];

        assert_true(fill > mean * 0.95 && fill < mean * 1.05);
    }
    assert_true(mean > 0.95);
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
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_fewer_than_asked),
        cmocka_unit_test(test_start_target),
        cmocka_unit_test(test_offline_and_full_skipped),
        cmocka_unit_test(test_no_targets),
        cmocka_unit_test(test_unknown_start_target),
        cmocka_unit_test(test_spread),
        cmocka_unit_test(test_probably_offline_last_resort),
        cmocka_unit_test(test_nodes_first),
        cmocka_unit_test(test_draining),
        cmocka_unit_test(test_reserve),
        cmocka_unit_test(test_first_target_weighted),
        cmocka_unit_test(test_capacity_fill_model),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
