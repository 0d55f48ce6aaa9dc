/* The chunk-size and stripe-count rules of the metadata server
 * (service/sfs_ns_pattern.c), alone and through a real metadata store in a
 * temporary directory: a refusal says which rule was broken. (Before the
 * rules were split, a striping_unit of 4096 was refused with "is not a
 * power of two in 64 KiB..4 GiB".) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sfs_errno.h"
#include "sfs_layout.h"
#include "sfs_meta_store.h"
#include "sfs_meta_store_internal.h" /* sfs_meta_put_inode: a directory's pool */
#include "sfs_ns_pattern.h"

#include <ftw.h>
#include <unistd.h>

/* The detail names the path and the rule. */
static void assert_refused(int rc, const char *path, const char *rule)
{
    const char *detail = sfs_error_detail();

    assert_int_equal(rc, -EINVAL);
    if (!strstr(detail, rule) || !strstr(detail, path)) {
        fail_msg("expected '%s' about '%s', got '%s'", rule, path, detail);
    }
}

static void test_chunk_size_rules(void **state)
{
    (void)state;
    assert_int_equal(sfs_ns_check_chunk_size("/d", SFS_CHUNK_SIZE_MIN), 0);
    assert_int_equal(sfs_ns_check_chunk_size("/d", 512 * 1024), 0);
    assert_int_equal(sfs_ns_check_chunk_size("/d", SFS_CHUNK_SIZE_MAX), 0);
    /* a power of two, but below the minimum: what MPI's striping_unit=4096 asks */
    assert_refused(sfs_ns_check_chunk_size("/d", 4096), "/d", "too small (minimum 64 KiB)");
    assert_refused(sfs_ns_check_chunk_size("/d", 1), "/d", "too small");
    assert_refused(sfs_ns_check_chunk_size("/d", 12345), "/d", "too small");
    assert_refused(sfs_ns_check_chunk_size("/d", SFS_CHUNK_SIZE_MAX * 2), "/d",
                   "too large (maximum 4 GiB)");
    assert_refused(sfs_ns_check_chunk_size("/d", SFS_CHUNK_SIZE_MAX + 1), "/d", "too large");
    assert_refused(sfs_ns_check_chunk_size("/d", 100 * 1024), "/d", "not a power of two");
    assert_refused(sfs_ns_check_chunk_size("/d", SFS_CHUNK_SIZE_MIN + 1), "/d",
                   "not a power of two");
    /* a small size is not also called "not a power of two" */
    sfs_ns_check_chunk_size("/d", 4096);
    assert_null(strstr(sfs_error_detail(), "power of two"));
}

static void test_stripe_count_rules(void **state)
{
    (void)state;
    assert_int_equal(sfs_ns_check_stripe_count("/d", 1), 0);
    assert_int_equal(sfs_ns_check_stripe_count("/d", SFS_STRIPE_COUNT_MAX), 0);
    assert_refused(sfs_ns_check_stripe_count("/d", 0), "/d", "out of range 1..128");
    assert_refused(sfs_ns_check_stripe_count("/d", SFS_STRIPE_COUNT_MAX + 1), "/d", "out of range");
}

/* ---- through the store ---- */

typedef struct {
    char                 dir[64];
    sfs_meta_store_t    *store;
    sfs_meta_txn_t      *txn;
    sfs_cred_t           server;
    sfs_ns_create_args_t create;
} store_fixture_t;

static uint32_t chosen_pool = 99; /* the pool the last choice was asked for */

static int choose_first(void *arg, uint32_t pool, uint32_t count, uint32_t start_target,
                        uint32_t *targets)
{
    (void)arg;
    (void)start_target;
    chosen_pool = pool;
    for (uint32_t i = 0; i < count; i++) {
        targets[i] = 101 + i;
    }
    return (int)count;
}

static int store_setup(void **state)
{
    store_fixture_t        *f = calloc(1, sizeof(*f));
    sfs_meta_store_params_t params;
    sfs_attr_t              attr;

    if (!f) {
        return -1;
    }
    snprintf(f->dir, sizeof(f->dir), "/tmp/sfs-test-ns-pattern.XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    memset(&params, 0, sizeof(params));
    params.dir      = f->dir;
    params.map_size = 64ull << 20;
    if (sfs_meta_store_open(&params, &f->store) != 0 ||
        sfs_meta_txn_begin(f->store, 1, &f->txn) != 0) {
        fail_msg("cannot open a metadata store in %s: %s", f->dir, sfs_error_detail());
    }
    f->server.flags = SFS_CRED_SERVER;
    assert_int_equal(sfs_ns_mkdir(f->txn, &f->server, "/d", 0755, 0, 0, 1, &attr), 0);
    f->create.cred       = &f->server;
    f->create.mode       = 0644;
    f->create.now_ns     = 2;
    f->create.choose     = choose_first;
    f->create.choose_arg = NULL;
    *state               = f;
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int store_teardown(void **state)
{
    store_fixture_t *f = *state;

    sfs_meta_txn_abort(f->txn);
    sfs_meta_store_close(f->store);
    nftw(f->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

static void test_setpattern_says_why(void **state)
{
    store_fixture_t *f = *state;
    sfs_attr_t       attr;

    assert_refused(sfs_ns_setpattern(f->txn, &f->server, "/d", 4096, 0, 3, &attr), "/d",
                   "too small (minimum 64 KiB)");
    assert_refused(sfs_ns_setpattern(f->txn, &f->server, "/d", 8ull << 30, 0, 3, &attr), "/d",
                   "too large (maximum 4 GiB)");
    assert_refused(sfs_ns_setpattern(f->txn, &f->server, "/d", 100 * 1024, 0, 3, &attr), "/d",
                   "not a power of two");
    assert_refused(
        sfs_ns_setpattern(f->txn, &f->server, "/d", 0, SFS_STRIPE_COUNT_MAX + 1, 3, &attr), "/d",
        "stripe count");
    /* a good one is kept, and 0 keeps what is there */
    assert_int_equal(sfs_ns_setpattern(f->txn, &f->server, "/d", 1 << 20, 2, 3, &attr), 0);
    assert_int_equal(sfs_ns_setpattern(f->txn, &f->server, "/d", 0, 0, 4, &attr), 0);
    assert_int_equal(sfs_ns_lookup(f->txn, &f->server, "/d", 0, &attr), 0);
    assert_int_equal(attr.pattern.chunk_size, 1 << 20);
    assert_int_equal(attr.pattern.stripe_count, 2);
}

static void test_create_hint_says_why(void **state)
{
    store_fixture_t *f = *state;
    sfs_attr_t       attr;
    int              created = -1;

    /* ROMIO passes striping_unit as the create's chunk size */
    f->create.path       = "/d/small";
    f->create.chunk_size = 4096;
    assert_refused(sfs_ns_create(f->txn, &f->create, &attr, &created), "/d/small",
                   "too small (minimum 64 KiB)");
    assert_int_equal(created, 0);
    assert_int_equal(sfs_ns_lookup(f->txn, &f->server, "/d/small", 0, &attr), -ENOENT);
    f->create.path       = "/d/odd";
    f->create.chunk_size = 3 << 16;
    assert_refused(sfs_ns_create(f->txn, &f->create, &attr, &created), "/d/odd",
                   "not a power of two");
    f->create.path       = "/d/ok";
    f->create.chunk_size = 128 * 1024;
    assert_int_equal(sfs_ns_create(f->txn, &f->create, &attr, &created), 0);
    assert_int_equal(created, 1);
    assert_int_equal(attr.pattern.chunk_size, 128 * 1024);
}

/* A mirrored file's targets come from the mirror chooser (groups' primaries). */
static int choose_primaries(void *arg, uint32_t pool, uint32_t count, uint32_t start_target,
                            uint32_t *targets)
{
    (void)arg;
    (void)pool;
    (void)start_target;
    for (uint32_t i = 0; i < count && i < 2; i++) {
        targets[i] = 201 + 100 * i;
    }
    return count < 2 ? (int)count : 2;
}

static void test_create_mirrored(void **state)
{
    store_fixture_t *f = *state;
    sfs_attr_t       attr;
    int              created = -1;

    /* asked for by the create; refused where no mirror chooser is given */
    f->create.path  = "/d/m";
    f->create.flags = SFS_PATTERN_REQ_MIRROR;
    assert_refused(sfs_ns_create(f->txn, &f->create, &attr, &created), "/d/m",
                   "mirrored files cannot be created here");
    f->create.choose_mirror = choose_primaries;
    assert_int_equal(sfs_ns_create(f->txn, &f->create, &attr, &created), 0);
    assert_int_equal(attr.pattern.type, SFS_PATTERN_MIRROR);
    assert_int_equal(attr.pattern_targets, 2);
    assert_int_equal(attr.pattern.targets[0], 201);
    assert_int_equal(attr.pattern.targets[1], 301);
    /* a directory's plain pattern gives plain files */
    f->create.path  = "/d/plain";
    f->create.flags = 0;
    assert_int_equal(sfs_ns_create(f->txn, &f->create, &attr, &created), 0);
    assert_int_equal(attr.pattern.type, SFS_PATTERN_RAID0);
    assert_int_equal(attr.pattern.targets[0], 101);
}

/* mirror.default: a new store's root mirrors new files; subdirectories
 * inherit it; a create may still ask for a plain file. */
static void test_mirrored_root(void **state)
{
    char                    dir[64];
    sfs_meta_store_params_t params;
    sfs_meta_store_t       *store;
    sfs_meta_txn_t         *txn;
    sfs_cred_t              server = {.flags = SFS_CRED_SERVER};
    sfs_ns_create_args_t    create = {.cred          = &server,
                                      .mode          = 0644,
                                      .now_ns        = 2,
                                      .choose        = choose_first,
                                      .choose_mirror = choose_primaries};
    sfs_attr_t              attr;
    int                     created;

    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/sfs-test-ns-mirror.XXXXXX");
    assert_non_null(mkdtemp(dir));
    memset(&params, 0, sizeof(params));
    params.dir      = dir;
    params.map_size = 64ull << 20;
    params.mirror   = 1;
    if (sfs_meta_store_open(&params, &store) != 0 || sfs_meta_txn_begin(store, 1, &txn) != 0) {
        fail_msg("cannot open a metadata store in %s: %s", dir, sfs_error_detail());
    }
    assert_int_equal(sfs_ns_lookup(txn, &server, "/", 0, &attr), 0);
    assert_int_equal(attr.pattern.type, SFS_PATTERN_MIRROR);
    assert_int_equal(sfs_ns_mkdir(txn, &server, "/sub", 0755, 0, 0, 1, &attr), 0);
    assert_int_equal(attr.pattern.type, SFS_PATTERN_MIRROR);
    create.path = "/sub/f";
    assert_int_equal(sfs_ns_create(txn, &create, &attr, &created), 0);
    assert_int_equal(attr.pattern.type, SFS_PATTERN_MIRROR);
    create.path  = "/sub/plain";
    create.flags = SFS_PATTERN_REQ_NO_MIRROR;
    assert_int_equal(sfs_ns_create(txn, &create, &attr, &created), 0);
    assert_int_equal(attr.pattern.type, SFS_PATTERN_RAID0);
    sfs_meta_txn_abort(txn);
    sfs_meta_store_close(store);
    nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* A directory's storage pool: new subdirectories inherit it, new files
 * are chosen in it (and keep it), a create that names a pool gets that
 * one; without a pool (0) the choice may take any target. */
static void test_pool_inherited(void **state)
{
    store_fixture_t *f = *state;
    sfs_attr_t       attr;
    int              created = -1;

    f->create.path = "/d/nopool";
    assert_int_equal(sfs_ns_create(f->txn, &f->create, &attr, &created), 0);
    assert_int_equal(chosen_pool, SFS_POOL_NONE);
    assert_int_equal(attr.pool, SFS_POOL_NONE);
    assert_int_equal(sfs_ns_lookup(f->txn, &f->server, "/d", 0, &attr), 0);
    attr.pool = 3;
    assert_int_equal(sfs_meta_put_inode(f->txn, &attr), 0);
    assert_int_equal(sfs_ns_mkdir(f->txn, &f->server, "/d/sub", 0755, 0, 0, 1, &attr), 0);
    assert_int_equal(attr.pool, 3);
    assert_int_equal(sfs_ns_mkdir(f->txn, &f->server, "/d/sub/deeper", 0755, 0, 0, 1, &attr), 0);
    assert_int_equal(attr.pool, 3);
    f->create.path = "/d/sub/deeper/f";
    assert_int_equal(sfs_ns_create(f->txn, &f->create, &attr, &created), 0);
    assert_int_equal(created, 1);
    assert_int_equal(chosen_pool, 3);
    assert_int_equal(sfs_ns_lookup(f->txn, &f->server, "/d/sub/deeper/f", 0, &attr), 0);
    assert_int_equal(attr.pool, 3); /* kept in the inode record */
    f->create.path  = "/d/sub/hinted";
    f->create.flags = SFS_PATTERN_REQ_POOL;
    f->create.pool  = 2;
    assert_int_equal(sfs_ns_create(f->txn, &f->create, &attr, &created), 0);
    assert_int_equal(chosen_pool, 2);
    assert_int_equal(attr.pool, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunk_size_rules),
        cmocka_unit_test(test_stripe_count_rules),
        cmocka_unit_test_setup_teardown(test_setpattern_says_why, store_setup, store_teardown),
        cmocka_unit_test_setup_teardown(test_create_hint_says_why, store_setup, store_teardown),
        cmocka_unit_test_setup_teardown(test_create_mirrored, store_setup, store_teardown),
        cmocka_unit_test(test_mirrored_root),
        cmocka_unit_test_setup_teardown(test_pool_inherited, store_setup, store_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
