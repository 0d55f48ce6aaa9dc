/*
 * Tests of writing configs (common/sfs_config_write.c) and of the generated
 * ones (sfs_config_generate.c): write -> load round trips, write errors,
 * genconfig's host list and the one-host default.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_config_lib.h"
#include "sfs_errno.h"

#include <inttypes.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void round_trip(const sfs_config_t *config, const char *file)
{
    char          path[PATH_MAX + 64];
    sfs_config_t *again = NULL;
    struct stat   st;
    int           rc;

    snprintf(path, sizeof(path), "%s/%s", test_tmp_dir, file);
    rc = sfs_config_write(config, path);
    if (rc != 0) {
        fail_msg("write %s: %s", path, sfs_error_detail());
    }
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    rc = sfs_config_load(path, &again);
    if (rc != 0) {
        fail_msg("load %s: %s", path, sfs_error_detail());
    }
    assert_config_equal(config, again);
    assert_string_equal(again->path, path);
    sfs_config_destroy(again);
}

static void test_round_trip(void **state)
{
    sfs_config_t *config = parse_ok(imaging_yaml, "/etc/stripefs/imaging.yaml");

    round_trip(config, "imaging.yaml");
    config->mirror_stale_reads = 1; /* written only when true */
    round_trip(config, "imaging-stale-reads.yaml");
    sfs_config_destroy(config);

    /* Strings that YAML would read differently unless quoted, and values
     * that are not round numbers. */
    config = parse_ok("cluster: 'null'\n"
                      "connauth_file: \"/etc/my auth: #1/key'\\\"\"\n"
                      "mgmt: {host: '123', port: 65535}\n"
                      "meta: {host: 'true', dir: \"/- dash/\\u00e9t\\u00e9 [x]{y}\", sync: off, "
                      "map_size: 1536M}\n"
                      "hosts:\n"
                      "  - {name: '123', ranks: 64, address: 'fe80::1%eth0'}\n"
                      "  - {name: 'true', address: '10.0.0.2'}\n"
                      "  - {name: 'null'}\n"
                      "storage:\n"
                      "  - {id: 65535, host: 'null', dir: '/~', capacity: 12345, bandwidth: 1}\n"
                      "  - {id: 1, host: '123', dir: '/a,b', capacity: 1536}\n"
                      "pattern: {chunk_size: 64K, stripe_count: 1}\n"
                      "timeouts: {rpc: 1ms, connect: 1500ms, heartbeat: 90s, offline: 49d}\n"
                      "limits: {max_message: 4G, io_threads: 1}\n",
                      "/x/t.yaml");
    assert_string_equal(config->cluster_name, "null");
    assert_string_equal(config->connauth_file, "/etc/my auth: #1/key'\"");
    assert_string_equal(config->meta_dir, "/- dash/\xc3\xa9t\xc3\xa9 [x]{y}");
    assert_int_equal(config->meta_map_size, 1536 * MIB);
    round_trip(config, "quoted.yaml");
    sfs_config_destroy(config);
}

static void test_write_errors(void **state)
{
    sfs_config_t *config = parse_ok(BASE, "t.yaml");
    char          path[PATH_MAX + 64];

    snprintf(path, sizeof(path), "%s/no/such/dir/c.yaml", test_tmp_dir);
    assert_int_equal(sfs_config_write(config, path), -ENOENT);
    assert_non_null(strstr(sfs_error_detail(), "cannot create"));
    assert_int_equal(sfs_config_write(NULL, path), -EINVAL);
    assert_int_equal(sfs_config_write(config, NULL), -EINVAL);
    /* a FIFO stands for a device (root once replaced /dev/stdout this way):
     * refused, and left as it was */
    snprintf(path, sizeof(path), "%s/fifo.yaml", test_tmp_dir);
    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(sfs_config_write(config, path), -EINVAL);
    assert_non_null(strstr(sfs_error_detail(), "not a regular file"));
    {
        struct stat st;

        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISFIFO(st.st_mode));
    }
    unlink(path);
    sfs_config_destroy(config);
}

static void test_generate(void **state)
{
    static const char *const hosts[] = {"imaging-01", "imaging-02", "imaging-03", "imaging-04"};
    static const char *const dup[]   = {"a", "b", "A.example.org"};
    static const char *const bad[]   = {"a", "b c"};
    const char              *many[700];
    sfs_config_t            *config = NULL;
    int                      rc;

    rc = sfs_config_generate(hosts, 4, "/mnt/data/stripefs", "/var/lib/stripefs/meta",
                             "/etc/stripefs/connauth", 0, &config);
    if (rc != 0) {
        fail_msg("generate: %s", sfs_error_detail());
    }
    assert_string_equal(config->cluster_name, "stripefs");
    assert_string_equal(config->mgmt_host, "imaging-01");
    assert_string_equal(config->meta_host, "imaging-01");
    assert_int_equal(config->mgmt_port, SFS_CONFIG_DEFAULT_PORT);
    assert_string_equal(config->meta_dir, "/var/lib/stripefs/meta");
    assert_string_equal(config->connauth_file, "/etc/stripefs/connauth");
    assert_int_equal(config->host_count, 4);
    assert_int_equal(config->target_count, 4);
    for (uint32_t i = 0; i < 4; i++) {
        assert_string_equal(config->hosts[i].name, hosts[i]);
        assert_int_equal(config->hosts[i].ranks, 1);
        assert_int_equal(config->targets[i].id, (i + 1) * 100 + 1);
        assert_string_equal(config->targets[i].host, hosts[i]);
        assert_string_equal(config->targets[i].dir, "/mnt/data/stripefs");
    }
    assert_int_equal(config->default_chunk_size, 512 * KIB);
    /* consecutive hosts pair into mirror groups: Imaging's 101+201, 301+401 */
    assert_int_equal(config->mirror_group_count, 2);
    assert_int_equal(config->mirror_groups[0].primary, 101);
    assert_int_equal(config->mirror_groups[0].secondary, 201);
    assert_int_equal(config->mirror_groups[1].primary, 301);
    assert_int_equal(config->mirror_groups[1].secondary, 401);
    assert_int_equal(config->mirror_default, 0);
    round_trip(config, "generated.yaml");
    sfs_config_destroy(config);

    rc = sfs_config_generate(hosts, 1, "/d", "/m", "/k", 9000, &config);
    assert_int_equal(rc, 0);
    assert_int_equal(config->mgmt_port, 9000);
    sfs_config_destroy(config);

    config = NULL;
    assert_int_equal(sfs_config_generate(dup, 3, "/d", "/m", "/k", 0, &config), -EINVAL);
    assert_non_null(strstr(sfs_error_detail(), "hosts[2].name: host 'A.example.org' is listed "
                                               "twice (as 'a')"));
    assert_int_equal(sfs_config_generate(bad, 2, "/d", "/m", "/k", 0, &config), -EINVAL);
    assert_non_null(strstr(sfs_error_detail(), "hosts[1].name: 'b c'"));
    assert_int_equal(sfs_config_generate(hosts, 4, NULL, "/m", "/k", 0, &config), -EINVAL);
    assert_non_null(strstr(sfs_error_detail(), "storage[0].dir: not given"));
    assert_int_equal(sfs_config_generate(hosts, 4, "/d", "/d", "/k", 0, &config), -EINVAL);
    assert_non_null(strstr(sfs_error_detail(), "meta.dir: /d on host imaging-01"));
    assert_int_equal(sfs_config_generate(hosts, 0, "/d", "/m", "/k", 0, &config), -EINVAL);
    assert_int_equal(sfs_config_generate(NULL, 1, "/d", "/m", "/k", 0, &config), -EINVAL);
    for (size_t i = 0; i < 700; i++) {
        many[i] = "x";
    }
    assert_int_equal(sfs_config_generate(many, 656, "/d", "/m", "/k", 0, &config), -EINVAL);
    assert_null(config);
}

static void test_generate_many(void **state)
{
    static char   names[655][16];
    const char   *hosts[655];
    sfs_config_t *config = NULL;

    for (int i = 0; i < 655; i++) {
        snprintf(names[i], sizeof(names[i]), "node%03d", i);
        hosts[i] = names[i];
    }
    assert_int_equal(sfs_config_generate(hosts, 655, "/d", "/m", "/k", 0, &config), 0);
    assert_int_equal(config->targets[654].id, 65501);
    sfs_config_destroy(config);
}

static void test_one_host(void **state)
{
    sfs_config_t *config = NULL;
    char          expected[PATH_MAX + 64], cwd[PATH_MAX], this_host[256];
    int           rc;

    rc = sfs_config_one_host("/tmp/sfs-state/", "node1", 4, 0, &config);
    if (rc != 0) {
        fail_msg("one_host: %s", sfs_error_detail());
    }
    assert_int_equal(config->host_count, 1);
    assert_string_equal(config->hosts[0].name, "node1");
    assert_int_equal(config->hosts[0].ranks, 1);
    assert_string_equal(config->mgmt_host, "node1");
    assert_string_equal(config->meta_host, "node1");
    assert_int_equal(config->mgmt_port, SFS_CONFIG_DEFAULT_PORT);
    assert_string_equal(config->meta_dir, "/tmp/sfs-state/meta");
    assert_string_equal(config->connauth_file, "/tmp/sfs-state/connauth");
    assert_int_equal(config->target_count, 4);
    for (uint32_t i = 0; i < 4; i++) {
        snprintf(expected, sizeof(expected), "/tmp/sfs-state/targets/%u", 101 + i);
        assert_int_equal(config->targets[i].id, 101 + i);
        assert_string_equal(config->targets[i].host, "node1");
        assert_string_equal(config->targets[i].dir, expected);
    }
    round_trip(config, "one-host.yaml");
    sfs_config_destroy(config);

    /* Relative state dir: from the current directory; no name: this host. */
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(gethostname(this_host, sizeof(this_host)), 0);
    assert_int_equal(sfs_config_one_host("state", NULL, 1, 9001, &config), 0);
    snprintf(expected, sizeof(expected), "%s/state/targets/101", strcmp(cwd, "/") ? cwd : "");
    assert_string_equal(config->targets[0].dir, expected);
    assert_string_equal(config->hosts[0].name, this_host);
    assert_int_equal(config->mgmt_port, 9001);
    sfs_config_destroy(config);

    config = NULL;
    assert_int_equal(sfs_config_one_host("/s", "h", 0, 0, &config), -EINVAL);
    assert_int_equal(sfs_config_one_host("/s", "h", 1025, 0, &config), -EINVAL);
    assert_int_equal(sfs_config_one_host(NULL, "h", 1, 0, &config), -EINVAL);
    assert_int_equal(sfs_config_one_host("/s", "bad host", 1, 0, &config), -EINVAL);
    assert_null(config);
}

int main(void)
{
    // clang-format off
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_generate),
        cmocka_unit_test(test_generate_many),
        cmocka_unit_test(test_one_host),
    };
    // clang-format on

    return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
