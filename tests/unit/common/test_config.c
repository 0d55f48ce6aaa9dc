/*
 * Tests of reading the cluster config (common/sfs_config.c, sfs_config_yaml.c,
 * sfs_config_check.c): the examples, every kind of error and its
 * FILE:LINE: KEY message, loading files, and host matching.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_imaging_parses(void **state)
{
    sfs_config_t *config = parse_ok(imaging_yaml, "/etc/stripefs/imaging.yaml");

    check_imaging(config);
    assert_string_equal(config->path, ""); /* parsed from memory */
    assert_int_equal(config->targets[2].line, 13);
    assert_int_equal(config->hosts[1].line, 7);
    sfs_config_destroy(config);
}

static void test_examples_load(void **state)
{
    char          path[PATH_MAX], expected[64];
    sfs_config_t *config = NULL;
    int           rc;

    snprintf(path, sizeof(path), "%s/examples/imaging.yaml", src_dir());
    rc = sfs_config_load(path, &config);
    if (rc != 0) {
        fail_msg("%s: %s", path, sfs_error_detail());
    }
    check_imaging(config);
    assert_string_equal(config->path, path);
    sfs_config_destroy(config);

    /* Relative paths start at the examples directory (however the source
     * directory was spelled, so only the ends are compared). */
    snprintf(path, sizeof(path), "%s/examples/one-host.yaml", src_dir());
    rc = sfs_config_load(path, &config);
    if (rc != 0) {
        fail_msg("%s: %s", path, sfs_error_detail());
    }
    assert_int_equal(config->host_count, 1);
    assert_string_equal(config->hosts[0].name, "localhost");
    assert_string_equal(config->mgmt_host, "localhost");
    assert_string_equal(config->meta_host, "localhost");
    assert_int_equal(config->target_count, 4);
    for (uint32_t i = 0; i < 4; i++) {
        snprintf(expected, sizeof(expected), "/examples/stripefs-state/targets/%u", 101 + i);
        assert_int_equal(config->targets[i].id, 101 + i);
        assert_true(ends_with(config->targets[i].dir, expected));
        assert_int_equal(config->targets[i].capacity, 0);
    }
    assert_true(ends_with(config->meta_dir, "/examples/stripefs-state/meta"));
    assert_true(ends_with(config->connauth_file, "/examples/stripefs-state/connauth"));
    sfs_config_destroy(config);
}

static void test_defaults(void **state)
{
    sfs_config_t *config = parse_ok(BASE, "t.yaml");

    assert_string_equal(config->cluster_name, "stripefs");
    assert_int_equal(config->mgmt_port, SFS_CONFIG_DEFAULT_PORT);
    assert_int_equal(config->meta_sync, 1);
    assert_int_equal(config->meta_map_size, 16 * GIB);
    assert_int_equal(config->default_chunk_size, 512 * KIB);
    assert_int_equal(config->default_stripe_count, 4);
    assert_int_equal(config->rpc_timeout_ms, 30000);
    assert_int_equal(config->connect_timeout_ms, 10000);
    assert_int_equal(config->heartbeat_interval_ms, 2000);
    assert_int_equal(config->offline_timeout_ms, 20000);
    assert_int_equal(config->max_message_size, 64 * MIB);
    assert_int_equal(config->io_threads, 4);
    /* No hosts: list: the roles' hosts, once each, ranks 1. */
    assert_int_equal(config->host_count, 1);
    assert_string_equal(config->hosts[0].name, "h1");
    assert_int_equal(config->hosts[0].ranks, 1);
    sfs_config_destroy(config);
}

static void test_values(void **state)
{
    sfs_config_t *config =
        parse_ok("cluster: lab.2\n"
                 "connauth_file: auth/key\n"
                 "mgmt:\n"
                 "  host: a\n"
                 "  port: 9000\n"
                 "meta: {host: b.example.org, dir: './m/../meta/', sync: no, map_size: 1T}\n"
                 "storage:\n"
                 "  - id: 7\n"
                 "    host: A.example.org\n"
                 "    dir: \"/data//x/./y/\"\n"
                 "    capacity: 1.5T\n"
                 "    bandwidth: 100MB/s\n"
                 "  - {id: 8, host: b, dir: /data/x/y, capacity: 12345, bandwidth: 1G}\n"
                 "  - {id: 9, host: c, dir: /}\n"
                 "pattern: {chunk_size: 4G, stripe_count: 128}\n"
                 "timeouts: {rpc: 1500ms, connect: 1m, heartbeat: 1, offline: 1h}\n"
                 "limits: {max_message: 4K, io_threads: 256, inline_io: 0, mapped_read: 1M}\n",
                 "/etc/sfs/c.yaml");

    assert_string_equal(config->cluster_name, "lab.2");
    assert_string_equal(config->connauth_file, "/etc/sfs/auth/key");
    assert_int_equal(config->mgmt_port, 9000);
    assert_string_equal(config->meta_dir, "/etc/sfs/meta");
    assert_int_equal(config->meta_sync, 0);
    assert_int_equal(config->meta_map_size, TIB);
    /* The roles' hosts by their fullest names: "a" is "A.example.org", "b" is
     * "b.example.org". */
    assert_int_equal(config->host_count, 3);
    assert_string_equal(config->hosts[0].name, "A.example.org");
    assert_int_equal(config->hosts[0].line, 9);
    assert_string_equal(config->hosts[1].name, "b.example.org");
    assert_string_equal(config->hosts[2].name, "c");
    assert_int_equal(config->hosts[2].line, 14);
    assert_string_equal(config->targets[0].dir, "/data/x/y");
    assert_int_equal(config->targets[0].capacity, 3 * TIB / 2);
    assert_int_equal(config->targets[0].bandwidth, 100 * MIB);
    assert_int_equal(config->targets[0].line, 8);
    assert_int_equal(config->targets[1].capacity, 12345);
    assert_int_equal(config->targets[1].bandwidth, GIB);
    assert_string_equal(config->targets[2].dir, "/");
    assert_int_equal(config->default_chunk_size, 4 * GIB);
    assert_int_equal(config->default_stripe_count, 128);
    assert_int_equal(config->rpc_timeout_ms, 1500);
    assert_int_equal(config->connect_timeout_ms, 60000);
    assert_int_equal(config->heartbeat_interval_ms, 1000);
    assert_int_equal(config->offline_timeout_ms, 3600000);
    assert_int_equal(config->max_message_size, 4 * KIB);
    assert_int_equal(config->io_threads, 256);
    assert_int_equal(config->inline_io_max, 0);
    assert_int_equal(config->mapped_read_min, MIB);
    sfs_config_destroy(config);
}

static void test_syntax_errors(void **state)
{
    expect_error("connauth_file: /x\nmgmt: {host: h1\n", "t.yaml:", "invalid YAML");
    expect_error("connauth_file: /x\nmgmt:\n  host: h1\n    port: 1\n",
                 "t.yaml:4:", "column 9: invalid YAML: mapping values are not allowed");
    expect_error("storage:\n  - {id: 1\n  - x\n", "t.yaml:", "invalid YAML");
    expect_error("key: \"unterminated\n", "t.yaml:", "invalid YAML");
    /* Control characters are a reader error, placed by byte offset. */
    expect_error("connauth_file: /x\nmgmt: \x01\n", "t.yaml:2: invalid YAML: control", "0x1");
    /* Invalid UTF-8. */
    expect_error("connauth_file: /x\xff\n", "t.yaml:1: invalid YAML", NULL);
}

static void test_document_errors(void **state)
{
    static const char nul_text[] = BASE "cluster: a\0b\n";

    expect_error("", "t.yaml:1: the file is empty", NULL);
    expect_error("# just a comment\n\n", "t.yaml:", "the file is empty");
    expect_error("---\n", "t.yaml:", "the file is empty");
    expect_error("- a\n- b\n", "t.yaml:1: expected a mapping of settings", "found a list");
    expect_error("hello\n", "t.yaml:1: expected a mapping of settings", "found 'hello'");
    expect_error(BASE "---\nmore: 1\n", "t.yaml:6: a second YAML document", NULL);
    /* Named even when the first document lacks keys that the second holds
     * (it was "t.yaml:1: mgmt: required key is missing"). */
    expect_error("connauth_file: /x\n---\n"
                 "mgmt: {host: h1}\n",
                 "t.yaml:2: a second YAML document", "exactly one");
    expect_error(BASE_TOP "---\n" BASE_STORAGE, "t.yaml:4: a second YAML document", NULL);
    expect_error("---\n" BASE_TOP "...\n---\n" BASE_STORAGE, "t.yaml:6: a second YAML document",
                 NULL);
    expect_error_len(nul_text, sizeof(nul_text) - 1, "t.yaml:6: NUL byte in the file", NULL);
    expect_error(BASE "cluster: \"a\\0b\"\n", "t.yaml:6: cluster: the value contains a NUL byte",
                 NULL);
    expect_error("? [a, b]\n: c\n", "t.yaml:1: expected a key name, found a list", NULL);
    expect_error("!!map {connauth_file: /x}\n", "t.yaml:1: YAML tags", NULL);
}

static void test_key_errors(void **state)
{
    /* Missing required keys, at the line of the mapping that lacks them. */
    expect_error("mgmt: {host: h1}\nmeta: {host: h1, dir: /m}\n" BASE_STORAGE,
                 "t.yaml:1: connauth_file: required key is missing", NULL);
    expect_error(BASE_TOP, "t.yaml:1: storage: required key is missing", NULL);
    expect_error("connauth_file: /x\nmgmt: {port: 1}\nmeta: {host: h1, dir: /m}\n" BASE_STORAGE,
                 "t.yaml:2: mgmt.host: required key is missing", NULL);
    expect_error(BASE_TOP "storage:\n  - {id: 101, host: h1}\n",
                 "t.yaml:5: storage[0].dir: required key is missing", NULL);
    expect_error(BASE "hosts:\n  - {ranks: 2}\n",
                 "t.yaml:7: hosts[0].name: required key is missing", NULL);
    /* Unknown keys, with a suggestion for typos. */
    expect_error("clustr: x\n" BASE, "t.yaml:1: clustr: unknown key (did you mean 'cluster'?)",
                 NULL);
    expect_error(BASE_TOP "storage:\n  - {id: 101, host: h1, dir: /t1, capcity: 1T}\n",
                 "t.yaml:5: storage[0].capcity: unknown key (did you mean 'capacity'?)", NULL);
    expect_error(BASE "pattern: {chunk: 1M}\n", "t.yaml:6: pattern.chunk: unknown key", NULL);
    expect_error(BASE "frobnicate: 1\n", "t.yaml:6: frobnicate: unknown key", NULL);
    expect_error(BASE "timeouts: {RPC: 1s}\n", "timeouts.RPC: unknown key (did you mean 'rpc'?)",
                 NULL);
    /* Keys given twice. */
    expect_error(BASE "mgmt: {host: h1}\n", "t.yaml:6: mgmt: given twice (first at line 2)", NULL);
    expect_error(BASE_TOP "storage:\n  - {id: 101, id: 102, host: h1, dir: /t1}\n",
                 "t.yaml:5: storage[0].id: given twice", NULL);
}

static void test_type_errors(void **state)
{
    expect_error(BASE "cluster: [a]\n", "t.yaml:6: cluster: expected a name, found a list", NULL);
    expect_error(BASE "mgmt2: 1\n", "mgmt2: unknown key", NULL);
    expect_error("connauth_file: /x\nmgmt: h1\n", "t.yaml:2: mgmt: expected a mapping",
                 "found 'h1'");
    expect_error("connauth_file: /x\nmgmt: {host: h1, port: abc}\n",
                 "t.yaml:2: mgmt.port: expected a whole number, found 'abc'", NULL);
    expect_error("connauth_file: /x\nmgmt: {host: h1, port: \"8008\"}\n",
                 "t.yaml:2: mgmt.port: expected a number, found the quoted string '8008'", NULL);
    expect_error("connauth_file: /x\nmgmt: {host: h1, port: -1}\n",
                 "mgmt.port: expected a whole number", NULL);
    expect_error("connauth_file: /x\nmgmt: {host: {a: b}}\n",
                 "t.yaml:2: mgmt.host: expected a name, found a mapping", NULL);
    expect_error("connauth_file: /x\nmgmt: {host: }\n",
                 "t.yaml:2: mgmt.host: expected a name, found no value", NULL);
    expect_error("connauth_file: ~\n", "t.yaml:1: connauth_file: expected a path, found no value",
                 NULL);
    expect_error(BASE_TOP "storage: {id: 1}\n",
                 "t.yaml:4: storage: expected a list of targets, found a mapping", NULL);
    expect_error(BASE_TOP "storage:\n  - 101\n", "t.yaml:5: storage[0]: expected a target",
                 "found '101'");
    expect_error(BASE_TOP "storage: []\n", "t.yaml:4: storage: the list is empty", NULL);
    expect_error(BASE "hosts: []\n", "t.yaml:6: hosts: the list is empty", NULL);
    expect_error(BASE "hosts: h1\n", "t.yaml:6: hosts: expected a list of hosts", NULL);
    expect_error("connauth_file: /x\nmeta: {host: h1, dir: /m, sync: maybe}\n",
                 "t.yaml:2: meta.sync: expected true or false, found 'maybe'", NULL);
    expect_error("connauth_file: /x\nmeta: {host: h1, dir: /m, sync: 'true'}\n",
                 "meta.sync: expected true or false", NULL);
    expect_error("connauth_file: /x\nmeta: {host: &h h1, dir: /m}\nmgmt: {host: *h}\n",
                 "t.yaml:3: mgmt.host: aliases (*h) are not supported", NULL);
    expect_error("connauth_file: /x\nmgmt: {host: !!str h1}\n",
                 "t.yaml:2: mgmt.host: YAML tags (tag:yaml.org,2002:str) are not supported", NULL);
    expect_error("connauth_file: /x\nmgmt: {host: h 1}\n",
                 "t.yaml:2: mgmt.host: 'h 1' is not a valid host name", NULL);
    expect_error("cluster: 'my cluster'\n",
                 "t.yaml:1: cluster: 'my cluster' is not a valid "
                 "cluster name",
                 NULL);
    expect_error(BASE "hosts:\n  - {name: h1, address: 'a b'}\n",
                 "t.yaml:7: hosts[0].address: 'a b' is not a valid address", NULL);
    expect_error("connauth_file: \"/x\\ny\"\n",
                 "t.yaml:1: connauth_file: '/x\\x0ay' is not a "
                 "valid path: no control characters",
                 NULL);
    expect_error("connauth_file: ''\n",
                 "connauth_file: '' is not a valid path: the value is "
                 "empty",
                 NULL);
}

static void test_range_errors(void **state)
{
    expect_error("connauth_file: /x\nmgmt: {host: h1, port: 70000}\n",
                 "t.yaml:2: mgmt.port: 70000 is out of range (1..65535)", NULL);
    expect_error("connauth_file: /x\nmgmt: {host: h1, port: 0}\n",
                 "mgmt.port: 0 is out of range (1..65535)", NULL);
    expect_error("connauth_file: /x\nmgmt: {host: h1, port: 99999999999999999999999999}\n",
                 "mgmt.port: 99999999999999999999999999 is out of range", NULL);
    expect_error(BASE "hosts:\n  - {name: h1, ranks: 0}\n",
                 "t.yaml:7: hosts[0].ranks: 0 is out of range (1..64)", NULL);
    expect_error(BASE "hosts:\n  - {name: h1, ranks: 65}\n",
                 "t.yaml:7: hosts[0].ranks: 65 is out of range (1..64)", NULL);
    expect_error(BASE_TOP "storage:\n  - {id: 0, host: h1, dir: /t1}\n",
                 "t.yaml:5: storage[0].id: 0 is out of range (1..65535)", NULL);
    expect_error(BASE_TOP "storage:\n  - {id: 65536, host: h1, dir: /t1}\n",
                 "storage[0].id: 65536 is out of range", NULL);
    expect_error(BASE "pattern: {chunk_size: 100K}\n",
                 "t.yaml:6: pattern.chunk_size: 100K is not a power of two", NULL);
    /* Powers of two outside the range say which end they miss, and so do
     * sizes that are neither. */
    expect_error(BASE "pattern: {chunk_size: 4K}\n",
                 "t.yaml:6: pattern.chunk_size: 4K is too small (minimum 64K)", NULL);
    expect_error(BASE "pattern: {chunk_size: 4096}\n",
                 "pattern.chunk_size: 4096 is too small (minimum 64K)", NULL);
    expect_error(BASE "pattern: {chunk_size: 32K}\n",
                 "pattern.chunk_size: 32K is too small (minimum 64K)", NULL);
    expect_error(BASE "pattern: {chunk_size: 33K}\n",
                 "pattern.chunk_size: 33K is too small (minimum 64K)", NULL);
    expect_error(BASE "pattern: {chunk_size: 8G}\n",
                 "pattern.chunk_size: 8G is too large (maximum 4G)", NULL);
    expect_error(BASE "pattern: {chunk_size: 5G}\n",
                 "pattern.chunk_size: 5G is too large (maximum 4G)", NULL);
    expect_error("connauth_file: /x\nmeta: {host: h1, dir: /m, map_size: 32M}\n",
                 "t.yaml:2: meta.map_size: 32M is too small (minimum 64M)", NULL);
    expect_error("connauth_file: /x\nmeta: {host: h1, dir: /m, map_size: 2T}\n",
                 "t.yaml:2: meta.map_size: 2T is too large (maximum 1T)", NULL);
    expect_error("connauth_file: /x\nmeta: {host: h1, dir: /m, map_size: 16}\n",
                 "meta.map_size: 16 is too small (minimum 64M)", NULL);
    expect_error("connauth_file: /x\nmeta: {host: h1, dir: /m, map_size: big}\n",
                 "meta.map_size: bad size 'big'", NULL);
    expect_error(BASE "pattern: {stripe_count: 0}\n",
                 "pattern.stripe_count: 0 is out of range (1..128)", NULL);
    expect_error(BASE "pattern: {stripe_count: 129}\n", "pattern.stripe_count: 129 is out", NULL);
    expect_error(BASE "limits: {max_message: 1K}\n",
                 "t.yaml:6: limits.max_message: 1K is too small (minimum 4K)", NULL);
    expect_error(BASE "limits: {io_threads: 0}\n", "limits.io_threads: 0 is out of range", NULL);
    expect_error(BASE "limits: {io_threads: 257}\n", "limits.io_threads: 257 is out of range",
                 NULL);
    expect_error(BASE "limits: {inline_io: 17M}\n",
                 "limits.inline_io: 17M is too large (maximum 16M)", NULL);
}

static void test_size_duration_errors(void **state)
{
    expect_error(BASE_TOP "storage:\n  - {id: 101, host: h1, dir: /t1, capacity: 12X}\n",
                 "t.yaml:5: storage[0].capacity: bad size '12X': unknown unit 'X'", NULL);
    expect_error(BASE_TOP "storage:\n  - {id: 101, host: h1, dir: /t1, capacity: lots}\n",
                 "storage[0].capacity: bad size 'lots'", NULL);
    expect_error(BASE_TOP "storage:\n  - {id: 101, host: h1, dir: /t1, capacity: 17E}\n",
                 "storage[0].capacity: size '17E' is too large", NULL);
    expect_error(BASE_TOP "storage:\n  - {id: 101, host: h1, dir: /t1, bandwidth: 100M/h}\n",
                 "storage[0].bandwidth: bad size", NULL);
    expect_error(BASE_TOP "storage:\n  - {id: 101, host: h1, dir: /t1, capacity: [1]}\n",
                 "storage[0].capacity: expected a size like 512K", "found a list");
    expect_error(BASE "timeouts: {rpc: 30 parsecs}\n",
                 "t.yaml:6: timeouts.rpc: bad duration '30 parsecs': unknown unit", NULL);
    expect_error(BASE "timeouts: {rpc: 0}\n", "timeouts.rpc: 0 is too short (at least 1ms)", NULL);
    expect_error(BASE "timeouts: {connect: 60d}\n",
                 "timeouts.connect: duration '60d' is too "
                 "large",
                 NULL);
    expect_error(BASE "timeouts: {heartbeat: 2s, offline: 2s}\n",
                 "t.yaml:6: timeouts.offline: 2s must be longer than the heartbeat interval (2s)",
                 NULL);
    expect_error(BASE "timeouts: {heartbeat: 30s}\n",
                 "timeouts.offline: 20s must be longer than the heartbeat interval (30s)", NULL);
}

static void test_cross_errors(void **state)
{
    expect_error(BASE "  - {id: 101, host: h1, dir: /t2}\n",
                 "t.yaml:6: storage[1].id: duplicate target id 101 (first at line 5)", NULL);
    expect_error(BASE_TOP "storage:\n  - id: 101\n    host: h1\n    dir: /t1\n"
                          "  - host: h1\n    dir: /t2\n    id: 101\n",
                 "t.yaml:10: storage[1].id: duplicate target id 101 (first at line 5)", NULL);
    expect_error(BASE "  - {id: 102, host: h1, dir: /t1}\n",
                 "t.yaml:6: storage[1].dir: /t1 on host h1 is already the directory of target 101 "
                 "at line 5",
                 NULL);
    /* Same directory spelled differently, host by its full name. */
    expect_error(BASE "  - {id: 102, host: H1.example.org, dir: /x/../t1/}\n",
                 "storage[1].dir: /t1 on host H1.example.org is already the directory", NULL);
    expect_error(BASE "  - {id: 102, host: h1, dir: /meta}\n",
                 "t.yaml:3: meta.dir: /meta on host h1 is also the directory of target 102 at "
                 "line 6",
                 NULL);
    expect_error(BASE "hosts:\n  - {name: h1}\n  - {name: h2}\n  - {name: H1.example.org}\n",
                 "t.yaml:9: hosts[2].name: host 'H1.example.org' is listed twice (as 'h1' at line "
                 "7)",
                 NULL);
    expect_error(BASE "  - {id: 201, host: h2, dir: /t1}\nhosts:\n  - {name: h1}\n",
                 "t.yaml:6: storage[1].host: host 'h2' is not in the hosts list at line 7", NULL);
    expect_error("connauth_file: /x\nmgmt: {host: m}\nmeta: {host: h1, dir: /m}\n" BASE_STORAGE
                 "hosts:\n  - {name: h1}\n",
                 "t.yaml:2: mgmt.host: host 'm' is not in the hosts list", NULL);
    expect_error("connauth_file: /x\nmgmt: {host: a}\nmeta: {host: a.x.org, dir: /m}\n"
                 "storage:\n  - {id: 1, host: a.y.org, dir: /t}\n",
                 "t.yaml:2: mgmt.host: host 'a' matches both 'a.x.org' at line 3 and 'a.y.org' "
                 "at line 5",
                 NULL);
}

static void test_too_long(void **state)
{
    size_t big  = 5000;
    char  *text = malloc(big + 256);
    char  *name = malloc(big);

    assert_non_null(text);
    assert_non_null(name);
    memset(name, 'h', 300);
    name[300] = '\0';
    snprintf(text, big + 256, "connauth_file: /x\nmgmt: {host: %s}\n", name);
    expect_error(text, "t.yaml:2: mgmt.host: the value is too long (300 bytes, at most 255)", NULL);

    name[0] = '/';
    memset(name + 1, 'd', PATH_MAX);
    name[PATH_MAX] = '\0';
    snprintf(text, big + 256, "connauth_file: %s\n", name);
    expect_error(text, "t.yaml:1: connauth_file: the value is too long (4096 bytes, at most 4095)",
                 NULL);

    /* Short enough by itself (4095 bytes), too long once joined to the
     * config's directory, whatever the working directory is. */
    memset(name, 'd', PATH_MAX - 1);
    name[PATH_MAX - 1] = '\0';
    snprintf(text, big + 256, "connauth_file: %s\n", name);
    expect_error(text, "connauth_file: 'dddd", "is too long once made absolute");

    memset(name, '1', 100);
    name[100] = '\0';
    snprintf(text, big + 256, BASE "pattern: {chunk_size: %s}\n", name);
    expect_error(text, "pattern.chunk_size: expected a size like 512K, found a 100-byte value",
                 NULL);
    free(name);
    free(text);
}

static void test_too_many(void **state)
{
    size_t size = 1100 * 64 + 256;
    char  *text = malloc(size);
    size_t used;

    assert_non_null(text);
    used = (size_t)snprintf(text, size, "%s", BASE_TOP "storage:\n");
    for (int i = 0; i < 1025; i++) {
        used += (size_t)snprintf(text + used, size - used, "  - {id: %d, host: h1, dir: /t%d}\n",
                                 i + 1, i);
    }
    expect_error(text, "t.yaml:1029: storage[1024]: too many targets (at most 1024)", NULL);

    /* 1024 is fine. */
    *strstr(text, "  - {id: 1025,") = '\0';
    {
        sfs_config_t *config = parse_ok(text, "t.yaml");

        assert_int_equal(config->target_count, 1024);
        sfs_config_destroy(config);
    }
    free(text);
}

static void test_too_many_hosts(void **state)
{
    size_t size = 1100 * 48 + 256;
    char  *text = malloc(size);
    size_t used;

    assert_non_null(text);
    used = (size_t)snprintf(text, size, "%s", BASE "hosts:\n");
    for (int i = 0; i < 1025; i++) {
        used += (size_t)snprintf(text + used, size - used, "  - {name: h%d}\n", i + 1);
    }
    expect_error(text, "t.yaml:1031: hosts[1024]: too many hosts (at most 1024)", NULL);

    /* Without a hosts list: 1024 target hosts plus distinct mgmt and meta hosts. */
    used = (size_t)snprintf(text, size, "%s",
                            "connauth_file: /k\nmgmt: {host: m}\nmeta: {host: n, dir: /m}\n"
                            "storage:\n");
    for (int i = 0; i < 1024; i++) {
        used += (size_t)snprintf(text + used, size - used, "  - {id: %d, host: h%d, dir: /t}\n",
                                 i + 1, i);
    }
    expect_error(text, "t.yaml:1027: hosts: too many hosts (at most 1024)", NULL);
    free(text);
}

static void test_load_errors(void **state)
{
    char          path[PATH_MAX + 64];
    sfs_config_t *config = NULL;
    FILE         *file;

    snprintf(path, sizeof(path), "%s/missing.yaml", test_tmp_dir);
    assert_int_equal(sfs_config_load(path, &config), -ENOENT);
    assert_non_null(strstr(sfs_error_detail(), "missing.yaml"));
    assert_int_equal(sfs_config_load(test_tmp_dir, &config), -EISDIR);
    assert_int_equal(sfs_config_load(NULL, &config), -EINVAL);
    assert_int_equal(sfs_config_load(path, NULL), -EINVAL);
    assert_null(config);

    /* Errors name the file as given; relative paths start at its directory. */
    snprintf(path, sizeof(path), "%s/sub", test_tmp_dir);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/sub/c.yaml", test_tmp_dir);
    file = fopen(path, "w");
    assert_non_null(file);
    fputs(BASE "cluster: bad name\n", file);
    fclose(file);
    assert_int_equal(sfs_config_load(path, &config), -EINVAL);
    assert_non_null(strstr(sfs_error_detail(), "/sub/c.yaml:6: cluster: 'bad name'"));

    file = fopen(path, "w");
    assert_non_null(file);
    fputs("connauth_file: ../auth\nmgmt: {host: h1}\nmeta: {host: h1, dir: m}\n"
          "storage:\n  - {id: 1, host: h1, dir: ./t/../t1}\n",
          file);
    fclose(file);
    assert_int_equal(sfs_config_load(path, &config), 0);
    snprintf(path, sizeof(path), "%s/auth", test_tmp_dir);
    assert_string_equal(config->connauth_file, path);
    snprintf(path, sizeof(path), "%s/sub/m", test_tmp_dir);
    assert_string_equal(config->meta_dir, path);
    snprintf(path, sizeof(path), "%s/sub/t1", test_tmp_dir);
    assert_string_equal(config->targets[0].dir, path);
    sfs_config_destroy(config);

    assert_int_equal(sfs_config_parse(NULL, 1, "x", &config), -EINVAL);
    assert_int_equal(sfs_config_parse(BASE, strlen(BASE), "x", NULL), -EINVAL);
}

static void test_parse_relative_name(void **state)
{
    char          cwd[PATH_MAX], expected[PATH_MAX + 32];
    sfs_config_t *config;

    assert_non_null(getcwd(cwd, sizeof(cwd)));
    config = parse_ok("connauth_file: k\nmgmt: {host: h}\nmeta: {host: h, dir: m}\n"
                      "storage:\n  - {id: 1, host: h, dir: t}\n",
                      "conf/c.yaml");
    snprintf(expected, sizeof(expected), "%s/conf/k", strcmp(cwd, "/") ? cwd : "");
    assert_string_equal(config->connauth_file, expected);
    sfs_config_destroy(config);

    config = parse_ok("connauth_file: k\nmgmt: {host: h}\nmeta: {host: h, dir: m}\n"
                      "storage:\n  - {id: 1, host: h, dir: t}\n",
                      NULL);
    snprintf(expected, sizeof(expected), "%s/k", strcmp(cwd, "/") ? cwd : "");
    assert_string_equal(config->connauth_file, expected);
    sfs_config_destroy(config);
}

static void test_host_matching(void **state)
{
    sfs_config_t            *config;
    const sfs_config_host_t *host;

    assert_true(sfs_config_host_matches("imaging-01", "imaging-01"));
    assert_true(sfs_config_host_matches("IMAGING-01", "imaging-01"));
    assert_true(sfs_config_host_matches("imaging-01", "imaging-01.example.org"));
    assert_true(sfs_config_host_matches("imaging-01.example.org", "imaging-01"));
    assert_true(sfs_config_host_matches("Imaging-01.Example.org", "imaging-01.example.ORG"));
    assert_false(sfs_config_host_matches("imaging-01", "imaging-010"));
    assert_false(sfs_config_host_matches("imaging-0", "imaging-01.example.org"));
    assert_false(sfs_config_host_matches("imaging-01.a.org", "imaging-01.b.org"));
    assert_false(sfs_config_host_matches("imaging-01.a", "imaging-01.a.org"));
    assert_false(sfs_config_host_matches("10", "10.0.0.1"));
    assert_true(sfs_config_host_matches("10.0.0.1", "10.0.0.1"));
    assert_false(sfs_config_host_matches("", ""));
    assert_false(sfs_config_host_matches(NULL, "a"));
    assert_false(sfs_config_host_matches("a", NULL));

    config = parse_ok(imaging_yaml, "t.yaml");
    host   = sfs_config_find_host(config, "IMAGING-03.lab.example.org");
    assert_non_null(host);
    assert_string_equal(host->name, "imaging-03");
    assert_ptr_equal(sfs_config_find_host(config, "imaging-04"), &config->hosts[3]);
    assert_null(sfs_config_find_host(config, "imaging-05"));
    assert_null(sfs_config_find_host(config, NULL));
    assert_null(sfs_config_find_host(NULL, "imaging-01"));
    sfs_config_destroy(config);

    /* An exact match wins; a short name matching two full names is ambiguous. */
    config = parse_ok("connauth_file: /k\nmgmt: {host: a.x.org}\nmeta: {host: a.x.org, dir: /m}\n"
                      "storage:\n  - {id: 1, host: a.y.org, dir: /t}\n"
                      "  - {id: 2, host: b, dir: /t}\n",
                      "t.yaml");
    assert_int_equal(config->host_count, 3);
    assert_ptr_equal(sfs_config_find_host(config, "a.y.org"), &config->hosts[1]);
    assert_null(sfs_config_find_host(config, "a"));
    assert_ptr_equal(sfs_config_find_host(config, "b.z.org"), &config->hosts[2]);
    sfs_config_destroy(config);
}

int main(void)
{
    // clang-format off
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_imaging_parses),
        cmocka_unit_test(test_examples_load),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_document_errors),
        cmocka_unit_test(test_key_errors),
        cmocka_unit_test(test_type_errors),
        cmocka_unit_test(test_range_errors),
        cmocka_unit_test(test_size_duration_errors),
        cmocka_unit_test(test_cross_errors),
        cmocka_unit_test(test_too_long),
        cmocka_unit_test(test_too_many),
        cmocka_unit_test(test_too_many_hosts),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_parse_relative_name),
        cmocka_unit_test(test_host_matching),
    };
    // clang-format on

    return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
