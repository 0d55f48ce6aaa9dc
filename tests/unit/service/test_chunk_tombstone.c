/* Tombstones of moved chunk files (service/sfs_chunk_tombstone.c) on a
 * posix target in a temporary directory: a tombstone found at start
 * removes its chunk file (a move killed between its tombstone and the
 * removal) and every request for that chunk then gets ESTALE naming it;
 * other chunks and other targets are untouched; names that are not entry
 * ids are ignored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sfs_chunk_tombstone.h"
#include "sfs_storage_internal.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void touch(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT, 0600);

    assert_true(fd >= 0);
    close(fd);
}

static void test_tombstone_at_start(void **state)
{
    char                root[64] = "/tmp/sfs-test-tombstone.XXXXXX";
    char                path[8192];
    sfs_config_target_t config;
    sfs_chunk_target_t *target = NULL;
    sfs_storage_t       storage;
    sfs_io_extent_t     extent = {.chunk_offset = 0, .length = 5};
    uint64_t            length = 0;

    (void)state;
    assert_non_null(mkdtemp(root));
    memset(&config, 0, sizeof(config));
    config.id = 101;
    snprintf(config.dir, sizeof(config.dir), "%s/t101", root);
    assert_int_equal(sfs_chunk_target_open(&config, "test", &target), 0);
    assert_int_equal(sfs_chunk_write(target, 7, &extent, 1, "hello", 0, &length), 0);
    assert_int_equal(sfs_chunk_write(target, 8, &extent, 1, "world", 0, &length), 0);
    snprintf(path, sizeof(path), "%s/tombstones", config.dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/tombstones/7", config.dir);
    touch(path);
    snprintf(path, sizeof(path), "%s/tombstones/notanid", config.dir);
    touch(path);

    memset(&storage, 0, sizeof(storage));
    storage.targets      = &target;
    storage.target_count = 1;
    assert_int_equal(sfs_tombstones_create(&storage), 0);
    /* the chunk file of 7 went; 8 stays */
    assert_int_equal(sfs_chunk_open_readonly(target, 7), -ENOENT);
    assert_int_equal(sfs_chunk_stat(target, 8, &length), 0);
    assert_int_equal(length, 5);
    assert_int_equal(sfs_tombstones_check(&storage, SFS_OP_READ, 101, 7), -ESTALE);
    assert_non_null(strstr(sfs_error_detail(), "moved off storage target 101"));
    assert_int_equal(sfs_tombstones_check(&storage, SFS_OP_WRITE, 101, 7), -ESTALE);
    assert_int_equal(sfs_tombstones_check(&storage, SFS_OP_CHUNK_STAT, 101, 7), -ESTALE);
    assert_int_equal(sfs_tombstones_check(&storage, SFS_OP_CHUNK_OPEN, 101, 7), -ESTALE);
    /* listing and removing are not refused; other chunks, other targets */
    assert_int_equal(sfs_tombstones_check(&storage, SFS_OP_CHUNK_LIST, 101, 7), 0);
    assert_int_equal(sfs_tombstones_check(&storage, SFS_OP_READ, 101, 8), 0);
    assert_int_equal(sfs_tombstones_check(&storage, SFS_OP_READ, 102, 7), 0);
    sfs_tombstones_destroy(&storage);
    assert_null(storage.tombstones);
    sfs_chunk_target_close(target);
    assert_int_equal(nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tombstone_at_start),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
