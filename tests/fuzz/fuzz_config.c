/*
 * libFuzzer target for the config parser: any bytes must give either a
 * config or -EINVAL with a message, never a crash, a leak or a hang. An
 * accepted config must keep its promises: every role's host is found in the
 * host list, and writing it and loading it back gives the same config.
 */
#include "sfs_config.h"
#include "sfs_errno.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_dir[64];
static char fuzz_file[128];

static void fuzz_cleanup(void)
{
    unlink(fuzz_file);
    rmdir(fuzz_dir);
}

/* A private directory for the round trip, on tmpfs where there is one. */
static const char *fuzz_round_trip_path(void)
{
    if (fuzz_file[0] == '\0') {
        snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/sfs-fuzz-config.XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        if (mkdtemp(fuzz_dir) == NULL) {
            abort();
        }
        snprintf(fuzz_file, sizeof(fuzz_file), "%s/config.yaml", fuzz_dir);
        atexit(fuzz_cleanup);
    }
    return fuzz_file;
}

static int fuzz_same(const sfs_config_t *a, const sfs_config_t *b)
{
    if (strcmp(a->cluster_name, b->cluster_name) || strcmp(a->connauth_file, b->connauth_file) ||
        strcmp(a->mgmt_host, b->mgmt_host) || a->mgmt_port != b->mgmt_port ||
        strcmp(a->meta_host, b->meta_host) || strcmp(a->meta_dir, b->meta_dir) ||
        a->meta_sync != b->meta_sync || a->meta_map_size != b->meta_map_size ||
        a->host_count != b->host_count || a->target_count != b->target_count ||
        a->default_chunk_size != b->default_chunk_size ||
        a->default_stripe_count != b->default_stripe_count ||
        a->rpc_timeout_ms != b->rpc_timeout_ms || a->connect_timeout_ms != b->connect_timeout_ms ||
        a->heartbeat_interval_ms != b->heartbeat_interval_ms ||
        a->offline_timeout_ms != b->offline_timeout_ms ||
        a->max_message_size != b->max_message_size || a->io_threads != b->io_threads ||
        a->inline_io_max != b->inline_io_max || a->mapped_read_min != b->mapped_read_min ||
        a->max_request_rate != b->max_request_rate) {
        return 0;
    }
    for (uint32_t i = 0; i < a->host_count; i++) {
        if (strcmp(a->hosts[i].name, b->hosts[i].name) ||
            strcmp(a->hosts[i].address, b->hosts[i].address) ||
            a->hosts[i].ranks != b->hosts[i].ranks) {
            return 0;
        }
    }
    for (uint32_t i = 0; i < a->target_count; i++) {
        if (a->targets[i].id != b->targets[i].id ||
            strcmp(a->targets[i].host, b->targets[i].host) ||
            strcmp(a->targets[i].dir, b->targets[i].dir) ||
            a->targets[i].capacity != b->targets[i].capacity ||
            a->targets[i].bandwidth != b->targets[i].bandwidth) {
            return 0;
        }
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sfs_config_t *config = NULL, *again = NULL;
    const char   *path;
    int           rc;

    rc = sfs_config_parse((const char *)data, size, "/fuzz/config.yaml", &config);
    if (rc != 0) {
        if (rc != -EINVAL || sfs_error_detail()[0] == '\0') {
            abort(); /* a bad config is -EINVAL with a message, nothing else */
        }
        return 0;
    }
    if (sfs_config_find_host(config, config->mgmt_host) == NULL ||
        sfs_config_find_host(config, config->meta_host) == NULL) {
        abort();
    }
    for (uint32_t i = 0; i < config->target_count; i++) {
        if (sfs_config_find_host(config, config->targets[i].host) == NULL) {
            abort();
        }
    }
    path = fuzz_round_trip_path();
    if (sfs_config_write(config, path) != 0) {
        fprintf(stderr, "write: %s\n", sfs_error_detail());
        abort();
    }
    if (sfs_config_load(path, &again) != 0) {
        fprintf(stderr, "load back: %s\n", sfs_error_detail());
        abort();
    }
    if (!fuzz_same(config, again)) {
        fprintf(stderr, "the config read back differs\n");
        abort();
    }
    sfs_config_destroy(again);
    sfs_config_destroy(config);
    return 0;
}
