/* Management's failover decision (service/sfs_mgmt_mirror.c): when a
 * rank goes offline, the secondary of each group whose primary it served
 * is promoted only if it is good and its rank online; the old primary is
 * then needs-resync, and the map names the new primary for both members.
 * The mirror state file (service/sfs_mgmt_mirror_store.c): what is saved
 * reads back; a promotion is saved and a new management loads it; the
 * strict parser refuses every malformed line, naming the file and line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "sfs_errno.h"
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

static void test_state_format_parse(void **state)
{
    sfs_mgmt_mirror_t *g = sfs_mgmt_mirrors(&mgmt);
    sfs_mgmt_mirror_t  back[3];
    char               text[1024];
    int                n;

    (void)state;
    g[0].primary  = 201;
    g[0].state[0] = SFS_MIRROR_STATE_NEEDS_RESYNC;
    g[2].state[1] = SFS_MIRROR_STATE_BAD;
    n             = sfs_mgmt_mirror_format(&config, g, text, sizeof(text));
    assert_true(n > 0);
    assert_string_equal(text, "stripefs mirror state 1\n"
                              "group 1 members 101 201 primary 201 states needs-resync good\n"
                              "group 2 members 102 202 primary 102 states good good\n"
                              "group 3 members 103 203 primary 103 states good bad\n");
    memset(back, 0, sizeof(back));
    assert_int_equal(sfs_mgmt_mirror_parse(&config, text, "f", back), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(back[i].primary, g[i].primary);
        assert_int_equal(back[i].state[0], g[i].state[0]);
        assert_int_equal(back[i].state[1], g[i].state[1]);
    }
    /* too small a buffer is an error, not a cut file */
    assert_int_equal(sfs_mgmt_mirror_format(&config, g, text, 40), -ENOSPC);
}

static void test_state_parse_strict(void **state)
{
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"", "f: empty"},
        {"stripefs mirror state 2\n", "f, line 1: not"},
        {"stripefs mirror state 1", "f, line 1: no end of line"},
        {"stripefs mirror state 1\ngroup 1 members 101 201 primary 201 states good good",
         "f, line 2: no end of line"},
        {"stripefs mirror state 1\ngroup 1 members 101 201 primary 201 states good\n",
         "f, line 2: not \"group ID"},
        {"stripefs mirror state 1\ngroup 1 members 101 201 primary 201 states good good x\n",
         "f, line 2: not \"group ID"},
        {"stripefs mirror state 1\ngroup 1 members 101 201 primary 2x1 states good good\n",
         "f, line 2: not \"group ID"},
        {"stripefs mirror state 1\ngroup 1 members 101 201 primary 201 states good fine\n",
         "f, line 2: unknown state \"fine\""},
        {"stripefs mirror state 1\ngroup 9 members 101 201 primary 201 states good good\n",
         "f, line 2: mirror group 9 is not in the config"},
        {"stripefs mirror state 1\ngroup 1 members 101 202 primary 202 states good good\n",
         "f, line 2: mirror group 1 has members 101 and 202 here, 101 and 201"},
        {"stripefs mirror state 1\ngroup 1 members 101 201 primary 102 states good good\n",
         "f, line 2: primary 102 is not a member of mirror group 1"},
        {"stripefs mirror state 1\ngroup 1 members 101 201 primary 201 states good good\n"
         "group 1 members 101 201 primary 101 states good good\n",
         "f, line 3: mirror group 1 a second time"},
        {"stripefs mirror state 1\n\n", "f, line 2: not \"group ID"},
    };
    sfs_mgmt_mirror_t parsed[3];

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(parsed, 0, sizeof(parsed));
        sfs_error_clear();
        assert_int_equal(sfs_mgmt_mirror_parse(&config, bad[i].text, "f", parsed), -EBADMSG);
        if (strstr(sfs_error_detail(), bad[i].says) != sfs_error_detail()) {
            fail_msg("case %zu: \"%s\" does not start with \"%s\"", i, sfs_error_detail(),
                     bad[i].says);
        }
    }
    /* a header alone: every group as the config has it */
    assert_int_equal(sfs_mgmt_mirror_parse(&config, "stripefs mirror state 1\n", "f", parsed), 0);
}

static void test_state_saved_and_loaded(void **state)
{
    char               dir[] = "/tmp/sfs-mgmt-mirror-XXXXXX";
    char               file[PATH_MAX], path[PATH_MAX + 16];
    sfs_mgmt_mirror_t *g;
    sfs_mgmt_t         again;
    FILE              *f;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(config.path, sizeof(config.path), "%s/stripefs.yaml", dir);
    assert_int_equal(sfs_mgmt_mirror_state_path(&config, file, sizeof(file)), 1);
    snprintf(path, sizeof(path), "%s/mirror-state", dir);
    assert_string_equal(file, path);
    /* no file yet: the config's primaries */
    assert_int_equal(sfs_mgmt_mirror_load(&mgmt), 0);
    g = sfs_mgmt_mirrors(&mgmt);
    assert_int_equal(g[0].primary, 101);
    assert_int_equal(sfs_mgmt_mirror_failover(&mgmt, 1), 1); /* 201 promoted, saved */
    assert_int_equal(access(path, R_OK), 0);

    memset(&again, 0, sizeof(again)); /* a management that restarted */
    again.service = &service;
    assert_int_equal(sfs_mgmt_mirror_load(&again), 0);
    assert_int_equal(again.mirrors[0].primary, 201);
    assert_int_equal(again.mirrors[0].state[0], SFS_MIRROR_STATE_NEEDS_RESYNC);
    assert_int_equal(again.mirrors[1].primary, 202);
    assert_int_equal(again.mirrors[2].primary, 103); /* its secondary offline */
    free(again.mirrors);

    f = fopen(path, "w");
    assert_non_null(f);
    fputs("stripefs mirror state 1\ngroup 1 members 101 201 primary 201 states good\n", f);
    fclose(f);
    memset(&again, 0, sizeof(again));
    again.service = &service;
    assert_int_equal(sfs_mgmt_mirror_load(&again), -EBADMSG);
    assert_non_null(strstr(sfs_error_detail(), path));
    free(again.mirrors);
    unlink(path);
    rmdir(dir);
    config.path[0] = '\0';
}

/* The metadata mirror's state file (service/sfs_mgmt_meta_mirror.c): the
 * strict parser, and a load: no file is needs-resync (nothing says the copy
 * is in step), a file is taken as it says, a bad one refuses the start
 * naming the file. */
static void test_meta_mirror_state_file(void **state)
{
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"", "f, line 1: not"},
        {"stripefs meta mirror state 2\nstate good batch 1\n", "f, line 1: not"},
        {"stripefs meta mirror state 1", "f, line 1: not"},
        {"stripefs meta mirror state 1\n", "f, line 2: not"},
        {"stripefs meta mirror state 1\nstate good batch 1", "f, line 2: not"},
        {"stripefs meta mirror state 1\nstate good batch\n", "f, line 2: not"},
        {"stripefs meta mirror state 1\nstate good batch 1x\n", "f, line 2: not"},
        {"stripefs meta mirror state 1\nstate good batch 1\n\n", "f, line 2: not"},
        {"stripefs meta mirror state 1\nstate bad batch 1\n", "f, line 2: unknown state \"bad\""},
        {"stripefs meta mirror state 1\nstate fine batch 1\n", "f, line 2: unknown state"},
        {"stripefs meta mirror state 1\nstate good batch 99999999999999999999\n",
         "f, line 2: batch 99999999999999999999 is out of range"},
        {"stripefs meta mirror state 1\nstate good batch 18446744073709551616\n",
         "f, line 2: batch 18446744073709551616 is out of range"},
        /* only what the formatter writes (sscanf took these before) */
        {"stripefs meta mirror state 1\nstategood batch 1\n", "f, line 2: not"},
        {"stripefs meta mirror state 1\nstate\tgood batch 1\n", "f, line 2: not"},
        {"stripefs meta mirror state 1\nstate  good batch 1\n", "f, line 2: not"},
        {"stripefs meta mirror state 1\nstate good batch 01\n", "f, line 2: not"},
        {"stripefs meta mirror state 1\nstate good  batch 1\n", "f, line 2: not"},
    };
    char     text[128];
    char     dir[] = "/tmp/sfs-meta-mirror-XXXXXX", path[PATH_MAX + 32];
    uint32_t st;
    uint64_t seq;
    FILE    *f;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sfs_error_clear();
        assert_int_equal(sfs_mgmt_meta_mirror_parse(bad[i].text, "f", &st, &seq), -EBADMSG);
        if (strstr(sfs_error_detail(), bad[i].says) != sfs_error_detail()) {
            fail_msg("case %zu: \"%s\" does not start with \"%s\"", i, sfs_error_detail(),
                     bad[i].says);
        }
    }
    assert_int_equal(sfs_mgmt_meta_mirror_parse("stripefs meta mirror state 1\nstate resyncing "
                                                "batch 18446744073709551615\n",
                                                "f", &st, &seq),
                     0);
    assert_int_equal(st, SFS_MIRROR_STATE_RESYNCING);
    assert_true(seq == UINT64_MAX);
    assert_int_equal(sfs_mgmt_meta_mirror_format(st, seq, text, sizeof(text)),
                     (int)strlen("stripefs meta mirror state 1\nstate resyncing "
                                 "batch 18446744073709551615\n"));
    assert_string_equal(text, "stripefs meta mirror state 1\nstate resyncing "
                              "batch 18446744073709551615\n");
    assert_int_equal(sfs_mgmt_meta_mirror_format(st, seq, text, 20), -ENOSPC);

    assert_non_null(mkdtemp(dir));
    snprintf(config.path, sizeof(config.path), "%s/stripefs.yaml", dir);
    snprintf(config.meta_mirror_host, sizeof(config.meta_mirror_host), "host-b");
    mgmt.meta_mirror_state = SFS_MIRROR_STATE_GOOD;
    assert_int_equal(sfs_mgmt_meta_mirror_load(&mgmt), 0); /* no file */
    assert_int_equal(mgmt.meta_mirror_state, SFS_MIRROR_STATE_NEEDS_RESYNC);
    snprintf(path, sizeof(path), "%s/meta-mirror-state", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("stripefs meta mirror state 1\nstate good batch 21\n", f);
    fclose(f);
    assert_int_equal(sfs_mgmt_meta_mirror_load(&mgmt), 0);
    assert_int_equal(mgmt.meta_mirror_state, SFS_MIRROR_STATE_GOOD);
    assert_int_equal(mgmt.meta_mirror_seq, 21);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("stripefs meta mirror state 1\nstate good\n", f);
    fclose(f);
    assert_int_equal(sfs_mgmt_meta_mirror_load(&mgmt), -EBADMSG);
    assert_non_null(strstr(sfs_error_detail(), path));
    unlink(path);
    rmdir(dir);
    config.path[0]             = '\0';
    config.meta_mirror_host[0] = '\0';
}

/* meta-primary (a promotion of the metadata mirror): strict parse, and a
 * management that finds one refuses to start, naming the file and what
 * to do. */
static void test_meta_primary_file(void **state)
{
    static const char *bad[] = {
        "",
        "stripefs meta primary 2\nrank 1 batch 1\n",
        "stripefs meta primary 1\n",
        "stripefs meta primary 1\nrank 1 batch 1",
        "stripefs meta primary 1\nrank 1 batch 1\n\n",
        "stripefs meta primary 1\nrank 01 batch 1\n",
        "stripefs meta primary 1\nrank  1 batch 1\n",
        "stripefs meta primary 1\nrank 1 batch\n",
        "stripefs meta primary 1\nrank 4294967296 batch 1\n",
        "stripefs meta primary 1\nrank 1 batch 18446744073709551616\n",
        "stripefs meta primary 1\nrank -1 batch 1\n",
    };
    sfs_role_plan_t plan = {.meta_rank = 0};
    char            text[128], dir[] = "/tmp/sfs-meta-primary-XXXXXX", path[PATH_MAX + 32];
    uint32_t        rank;
    uint64_t        seq;
    FILE           *f;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sfs_error_clear();
        if (sfs_mgmt_meta_primary_parse(bad[i], "f", &rank, &seq) != -EBADMSG) {
            fail_msg("case %zu accepted: \"%s\"", i, bad[i]);
        }
        assert_true(strncmp(sfs_error_detail(), "f, line ", 8) == 0);
    }
    assert_int_equal(sfs_mgmt_meta_primary_parse("stripefs meta primary 1\nrank 4294967295 batch "
                                                 "18446744073709551615\n",
                                                 "f", &rank, &seq),
                     0);
    assert_true(rank == UINT32_MAX && seq == UINT64_MAX);
    assert_int_equal(sfs_mgmt_meta_primary_format(1, 21, text, sizeof(text)),
                     (int)strlen("stripefs meta primary 1\nrank 1 batch 21\n"));
    assert_string_equal(text, "stripefs meta primary 1\nrank 1 batch 21\n");
    assert_int_equal(sfs_mgmt_meta_primary_format(1, 21, text, 10), -ENOSPC);

    assert_non_null(mkdtemp(dir));
    service.plan = &plan;
    snprintf(config.path, sizeof(config.path), "%s/stripefs.yaml", dir);
    snprintf(config.meta_mirror_host, sizeof(config.meta_mirror_host), "host-b");
    snprintf(config.meta_host, sizeof(config.meta_host), "host-a");
    snprintf(config.mgmt_host, sizeof(config.mgmt_host), "host-c");
    mgmt.meta_node = 7;
    assert_int_equal(sfs_mgmt_meta_primary_load(&mgmt), 0); /* no file */
    assert_int_equal(mgmt.meta_node, 0);
    snprintf(path, sizeof(path), "%s/meta-primary", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("stripefs meta primary 1\nrank 1 batch 21\n", f);
    fclose(f);
    assert_int_equal(sfs_mgmt_meta_primary_load(&mgmt), -EEXIST);
    assert_non_null(strstr(sfs_error_detail(), path));
    assert_non_null(strstr(sfs_error_detail(), "was promoted to metadata server at batch 21"));
    assert_non_null(strstr(sfs_error_detail(), "then remove"));
    unlink(path);
    rmdir(dir);
    service.plan               = NULL;
    config.path[0]             = '\0';
    config.meta_mirror_host[0] = '\0';
    config.meta_host[0]        = '\0';
    config.mgmt_host[0]        = '\0';
}

/* No promotion while the service is being stopped (ranks stop one after
 * the other: it would be saved and name the wrong member next start). */
static void test_no_failover_in_shutdown(void **state)
{
    (void)state;
    mgmt.shutdown_requested = 1;
    assert_int_equal(sfs_mgmt_mirror_failover(&mgmt, 1), 0);
    assert_int_equal(sfs_mgmt_mirrors(&mgmt)[0].primary, 101);
    mgmt.shutdown_requested = 0;
}

/* Management's own stall (its checks did not run: the service's start)
 * does not count as the ranks' silence; a real silence still does. */
static void test_stall_forgiven(void **state)
{
    uint64_t now = sfs_time_ms();

    (void)state;
    for (uint32_t i = 0; i < 3; i++) {
        nodes[i].state           = SFS_STATE_ONLINE;
        nodes[i].last_contact_ms = now - 5000; /* silent for more than the offline timeout */
    }
    mgmt.last_check_ms = now - 10000; /* ... but management did not look for 10 s */
    mgmt.next_check_ms = 0;
    sfs_mgmt_timer(&mgmt);
    for (uint32_t i = 0; i < 3; i++) {
        assert_int_equal(nodes[i].state, SFS_STATE_ONLINE);
    }
    assert_int_equal(sfs_mgmt_mirrors(&mgmt)[0].primary, 101);

    for (uint32_t i = 0; i < 3; i++) {
        nodes[i].last_contact_ms = sfs_time_ms() - 5000;
    }
    mgmt.last_check_ms = sfs_time_ms(); /* it looked just now: the silence is real */
    mgmt.next_check_ms = 0;
    sfs_mgmt_timer(&mgmt);
    assert_int_equal(nodes[0].state, SFS_STATE_OFFLINE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_failover_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_format_parse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_parse_strict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_saved_and_loaded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_meta_mirror_state_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_meta_primary_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_failover_in_shutdown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stall_forgiven, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
