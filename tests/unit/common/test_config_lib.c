/*
 * Helpers of the config unit tests (test_config_lib.h says what each does).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_config_lib.h"
#include "sfs_errno.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SFS_TEST_SRCDIR
#define SFS_TEST_SRCDIR "."
#endif

const char imaging_yaml[] =
    "cluster: imaging\n"
    "connauth_file: /etc/stripefs/connauth\n"
    "mgmt: {host: imaging-01, port: 8008}\n"
    "meta: {host: imaging-01, dir: /var/lib/stripefs/meta, sync: true}\n"
    "hosts:\n"
    "  - {name: imaging-01, ranks: 1}\n"
    "  - {name: imaging-02, ranks: 1}\n"
    "  - {name: imaging-03, ranks: 1}\n"
    "  - {name: imaging-04, ranks: 1}\n"
    "storage:\n"
    "  - {id: 101, host: imaging-01, dir: /mnt/14t_drive/stripefs, capacity: 12T}\n"
    "  - {id: 201, host: imaging-02, dir: /mnt/14t_drive/stripefs, capacity: 12T}\n"
    "  - {id: 301, host: imaging-03, dir: /mnt/7t_drive/stripefs, capacity: 7T}\n"
    "  - {id: 401, host: imaging-04, dir: /mnt/7t_drive/stripefs, capacity: 7T}\n"
    "pattern: {chunk_size: 512K, stripe_count: 3}\n"
    "timeouts: {rpc: 30s, connect: 10s, heartbeat: 2s, offline: 20s}\n"
    "limits: {max_message: 64M, io_threads: 4}\n";

char test_tmp_dir[PATH_MAX];

int setup_tmp(void **state)
{
    const char *root = getenv("SFS_TEST_TMP");

    snprintf(test_tmp_dir, sizeof(test_tmp_dir), "%s/test_config.XXXXXX", root ? root : "/tmp");
    return mkdtemp(test_tmp_dir) ? 0 : -1;
}

int teardown_tmp(void **state)
{
    char command[PATH_MAX + 16];

    snprintf(command, sizeof(command), "rm -rf '%s'", test_tmp_dir);
    return system(command) == 0 ? 0 : -1;
}

sfs_config_t *parse_ok(const char *text, const char *name)
{
    sfs_config_t *config = NULL;
    int           rc     = sfs_config_parse(text, strlen(text), name, &config);

    if (rc != 0) {
        fail_msg("parse failed: %s: %s", sfs_strerror(rc), sfs_error_detail());
    }
    assert_non_null(config);
    return config;
}

/* Parse `length` bytes and expect -EINVAL with every non-NULL string in the
 * message. */
void expect_error_len(const char *text, size_t length, const char *want1, const char *want2)
{
    sfs_config_t *config = (sfs_config_t *)0x1;
    int           rc;

    sfs_error_clear();
    rc = sfs_config_parse(text, length, "t.yaml", &config);
    if (rc != -EINVAL) {
        fail_msg("expected -EINVAL, got %s (%s) for:\n%.300s", sfs_strerror(rc), sfs_error_detail(),
                 text);
    }
    assert_ptr_equal(config, (sfs_config_t *)0x1); /* output untouched on failure */
    if ((want1 && !strstr(sfs_error_detail(), want1)) ||
        (want2 && !strstr(sfs_error_detail(), want2))) {
        fail_msg("message '%s' lacks '%s' / '%s'", sfs_error_detail(), want1 ? want1 : "",
                 want2 ? want2 : "");
    }
}

void expect_error(const char *text, const char *want1, const char *want2)
{
    expect_error_len(text, strlen(text), want1, want2);
}

void check_imaging(const sfs_config_t *config)
{
    static const uint32_t ids[]        = {101, 201, 301, 401};
    static const char    *dirs[]       = {"/mnt/14t_drive/stripefs", "/mnt/14t_drive/stripefs",
                                          "/mnt/7t_drive/stripefs", "/mnt/7t_drive/stripefs"};
    static const uint64_t capacities[] = {12 * TIB, 12 * TIB, 7 * TIB, 7 * TIB};
    char                  name[32];

    assert_string_equal(config->cluster_name, "imaging");
    assert_string_equal(config->connauth_file, "/etc/stripefs/connauth");
    assert_string_equal(config->mgmt_host, "imaging-01");
    assert_int_equal(config->mgmt_port, 8008);
    assert_string_equal(config->meta_host, "imaging-01");
    assert_string_equal(config->meta_dir, "/var/lib/stripefs/meta");
    assert_int_equal(config->meta_sync, 1);
    assert_int_equal(config->host_count, 4);
    assert_int_equal(config->target_count, 4);
    for (uint32_t i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "imaging-%02u", i + 1);
        assert_string_equal(config->hosts[i].name, name);
        assert_string_equal(config->hosts[i].address, "");
        assert_int_equal(config->hosts[i].ranks, 1);
        assert_int_equal(config->targets[i].id, ids[i]);
        assert_string_equal(config->targets[i].host, name);
        assert_string_equal(config->targets[i].dir, dirs[i]);
        assert_int_equal(config->targets[i].capacity, capacities[i]);
        assert_int_equal(config->targets[i].bandwidth, 0);
    }
    assert_int_equal(config->default_chunk_size, 512 * KIB);
    assert_int_equal(config->default_stripe_count, 3);
    assert_int_equal(config->rpc_timeout_ms, 30000);
    assert_int_equal(config->connect_timeout_ms, 10000);
    assert_int_equal(config->heartbeat_interval_ms, 2000);
    assert_int_equal(config->offline_timeout_ms, 20000);
    assert_int_equal(config->max_message_size, 64 * MIB);
    assert_int_equal(config->io_threads, 4);
    assert_int_equal(config->inline_io_max, 64 * KIB);
    assert_int_equal(config->mapped_read_min, 256 * KIB);
}

/* Everything but `path` and the line numbers. */
void assert_config_equal(const sfs_config_t *a, const sfs_config_t *b)
{
    assert_string_equal(a->cluster_name, b->cluster_name);
    assert_string_equal(a->connauth_file, b->connauth_file);
    assert_string_equal(a->mgmt_host, b->mgmt_host);
    assert_int_equal(a->mgmt_port, b->mgmt_port);
    assert_string_equal(a->meta_host, b->meta_host);
    assert_string_equal(a->meta_dir, b->meta_dir);
    assert_int_equal(a->meta_sync, b->meta_sync);
    assert_int_equal(a->meta_map_size, b->meta_map_size);
    assert_int_equal(a->host_count, b->host_count);
    for (uint32_t i = 0; i < a->host_count; i++) {
        assert_string_equal(a->hosts[i].name, b->hosts[i].name);
        assert_string_equal(a->hosts[i].address, b->hosts[i].address);
        assert_int_equal(a->hosts[i].ranks, b->hosts[i].ranks);
    }
    assert_int_equal(a->target_count, b->target_count);
    for (uint32_t i = 0; i < a->target_count; i++) {
        assert_int_equal(a->targets[i].id, b->targets[i].id);
        assert_string_equal(a->targets[i].host, b->targets[i].host);
        assert_string_equal(a->targets[i].dir, b->targets[i].dir);
        assert_int_equal(a->targets[i].capacity, b->targets[i].capacity);
        assert_int_equal(a->targets[i].bandwidth, b->targets[i].bandwidth);
    }
    assert_int_equal(a->default_chunk_size, b->default_chunk_size);
    assert_int_equal(a->default_stripe_count, b->default_stripe_count);
    assert_int_equal(a->rpc_timeout_ms, b->rpc_timeout_ms);
    assert_int_equal(a->connect_timeout_ms, b->connect_timeout_ms);
    assert_int_equal(a->heartbeat_interval_ms, b->heartbeat_interval_ms);
    assert_int_equal(a->offline_timeout_ms, b->offline_timeout_ms);
    assert_int_equal(a->max_message_size, b->max_message_size);
    assert_int_equal(a->io_threads, b->io_threads);
    assert_int_equal(a->inline_io_max, b->inline_io_max);
    assert_int_equal(a->mapped_read_min, b->mapped_read_min);
    assert_int_equal(a->mirror_group_count, b->mirror_group_count);
    for (uint32_t i = 0; i < a->mirror_group_count; i++) {
        assert_int_equal(a->mirror_groups[i].id, b->mirror_groups[i].id);
        assert_int_equal(a->mirror_groups[i].primary, b->mirror_groups[i].primary);
        assert_int_equal(a->mirror_groups[i].secondary, b->mirror_groups[i].secondary);
    }
    assert_int_equal(a->mirror_default, b->mirror_default);
    assert_int_equal(a->pool_count, b->pool_count);
    for (uint32_t i = 0; i < a->pool_count; i++) {
        assert_int_equal(a->pools[i].id, b->pools[i].id);
        assert_string_equal(a->pools[i].name, b->pools[i].name);
        assert_int_equal(a->pools[i].target_count, b->pools[i].target_count);
        for (uint32_t t = 0; t < a->pools[i].target_count; t++) {
            assert_int_equal(a->pools[i].targets[t], b->pools[i].targets[t]);
        }
    }
    assert_int_equal(a->mirror_same_host, b->mirror_same_host);
    assert_int_equal(a->mirror_stale_reads, b->mirror_stale_reads);
    assert_string_equal(a->meta_mirror_host, b->meta_mirror_host);
    assert_string_equal(a->meta_mirror_dir, b->meta_mirror_dir);
}

int ends_with(const char *text, const char *end)
{
    size_t text_len = strlen(text), end_len = strlen(end);

    return text[0] == '/' && text_len >= end_len && strcmp(text + text_len - end_len, end) == 0;
}

const char *src_dir(void)
{
    const char *src = getenv("SFS_SRC");

    return src && *src ? src : SFS_TEST_SRCDIR;
}
