/* Quota usage and limits of the metadata store (service/sfs_meta_quota.c),
 * through a real store in a temporary directory: creates, kept-size
 * changes (SIZE END, STORE), grants (QUOTA_GROW), chown and unlink move
 * usage in the same transaction as the inode; the file and space limits
 * refuse with -EDQUOT naming the quota; the check finds and repairs usage
 * that disagrees with the inodes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sfs_errno.h"
#include "sfs_meta_quota.h"
#include "sfs_meta_store.h"

#include <ftw.h>
#include <unistd.h>

#define UID_A 4001u
#define GID_A 4101u
#define UID_B 4002u
#define GID_B 4102u

typedef struct {
    char                 dir[64];
    sfs_meta_store_t    *store;
    sfs_meta_txn_t      *txn;
    sfs_cred_t           server;
    sfs_ns_create_args_t create;
} fixture_t;

static int choose_one(void *arg, uint32_t pool, uint32_t count, uint32_t start_target,
                      uint32_t *targets)
{
    (void)pool;
    (void)arg;
    (void)count;
    (void)start_target;
    targets[0] = 101;
    return 1;
}

static int setup(void **state)
{
    fixture_t              *f = calloc(1, sizeof(*f));
    sfs_meta_store_params_t params;
    sfs_attr_t              attr;

    if (!f) {
        return -1;
    }
    snprintf(f->dir, sizeof(f->dir), "/tmp/sfs-test-quota.XXXXXX");
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
    assert_int_equal(sfs_ns_mkdir(f->txn, &f->server, "/d", 01777, 0, 0, 1, &attr), 0);
    f->create.cred   = &f->server;
    f->create.mode   = 0644;
    f->create.now_ns = 2;
    f->create.choose = choose_one;
    f->create.uid    = UID_A;
    f->create.gid    = GID_A;
    *state           = f;
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    fixture_t *f = *state;

    sfs_meta_txn_abort(f->txn);
    sfs_meta_store_close(f->store);
    nftw(f->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

static void expect_usage(fixture_t *f, uint32_t kind, uint32_t id, uint64_t files, uint64_t space)
{
    sfs_quota_entry_t e;

    assert_int_equal(sfs_meta_quota_get(f->txn, kind, id, &e), 0);
    if (e.files != files || e.space != space) {
        fail_msg("%s %u: expected %lu files, %lu bytes; got %lu, %lu",
                 kind == SFS_QUOTA_USER ? "user" : "group", id, (unsigned long)files,
                 (unsigned long)space, (unsigned long)e.files, (unsigned long)e.space);
    }
}

static uint64_t make_file(fixture_t *f, const char *path)
{
    sfs_attr_t attr;
    int        created = 0;

    f->create.path = path;
    assert_int_equal(sfs_ns_create(f->txn, &f->create, &attr, &created), 0);
    assert_int_equal(created, 1);
    return attr.entry_id;
}

/* SIZE op on `id` by the server (permission bypass), as a writer would;
 * STORE names the write_gen a stat of `path` would have seen */
static void size_op_at(fixture_t *f, const char *path, uint64_t id, uint32_t op, uint32_t flags,
                       uint64_t size)
{
    sfs_size_req_t   req = {.entry_id = id, .op = op, .flags = flags, .size = size};
    sfs_size_reply_t reply;
    sfs_attr_t       attr;

    if (path) {
        assert_int_equal(sfs_ns_lookup(f->txn, &f->server, path, 0, &attr), 0);
        req.write_gen = attr.write_gen;
    }
    assert_int_equal(sfs_ns_size(f->txn, &f->server, &req, 1000000000ull, 100, &attr, &reply), 0);
}

static void size_op(fixture_t *f, uint64_t id, uint32_t op, uint32_t flags, uint64_t size)
{
    size_op_at(f, NULL, id, op, flags, size);
}

static void test_usage_follows_inodes(void **state)
{
    fixture_t *f = *state;
    sfs_attr_t attr;
    uint64_t   a, b, granted;
    int        limited;

    a = make_file(f, "/d/a");
    b = make_file(f, "/d/b");
    expect_usage(f, SFS_QUOTA_USER, UID_A, 2, 0);
    expect_usage(f, SFS_QUOTA_GROUP, GID_A, 2, 0);
    /* a lone writer closes with its size: charged at END */
    size_op(f, a, SFS_SIZE_OP_BEGIN, 0, 0);
    size_op(f, a, SFS_SIZE_OP_END, SFS_SIZE_MODIFIED | SFS_SIZE_VIEW, 3000);
    expect_usage(f, SFS_QUOTA_USER, UID_A, 2, 3000);
    /* the close charges the truth */
    size_op(f, b, SFS_SIZE_OP_BEGIN, 0, 0);
    assert_int_equal(sfs_meta_quota_grow(f->txn, b, 5000, &granted, &limited), 0);
    assert_int_equal(limited, 0); /* no limit: nothing charged ahead */
    assert_int_equal(granted, 5000);
    expect_usage(f, SFS_QUOTA_USER, UID_A, 2, 3000);
    size_op(f, b, SFS_SIZE_OP_END, SFS_SIZE_MODIFIED | SFS_SIZE_VIEW, 4000);
    expect_usage(f, SFS_QUOTA_USER, UID_A, 2, 7000);
    /* a size read from the targets and kept (STORE) */
    size_op_at(f, "/d/b", b, SFS_SIZE_OP_STORE, 0, 1000);
    expect_usage(f, SFS_QUOTA_USER, UID_A, 2, 4000);
    expect_usage(f, SFS_QUOTA_GROUP, GID_A, 2, 4000);
    /* chown moves the file and its bytes */
    assert_int_equal(sfs_ns_setattr(f->txn, &f->server, "/d/a", SFS_SETATTR_OWNER, 0, UID_B, GID_B,
                                    0, 0, 3, &attr),
                     0);
    expect_usage(f, SFS_QUOTA_USER, UID_A, 1, 1000);
    expect_usage(f, SFS_QUOTA_USER, UID_B, 1, 3000);
    expect_usage(f, SFS_QUOTA_GROUP, GID_A, 1, 1000);
    expect_usage(f, SFS_QUOTA_GROUP, GID_B, 1, 3000);
    /* rename over a file removes the victim's usage; unlink too */
    assert_int_equal(sfs_ns_rename(f->txn, &f->server, "/d/b", "/d/a", 4), 0);
    expect_usage(f, SFS_QUOTA_USER, UID_B, 0, 0);
    expect_usage(f, SFS_QUOTA_USER, UID_A, 1, 1000);
    assert_int_equal(sfs_ns_unlink(f->txn, &f->server, "/d/a", 5, &attr), 0);
    expect_usage(f, SFS_QUOTA_USER, UID_A, 0, 0);
    expect_usage(f, SFS_QUOTA_GROUP, GID_A, 0, 0);
    /* directories are not counted */
    assert_int_equal(sfs_ns_mkdir(f->txn, &f->server, "/d/sub", 0755, UID_A, GID_A, 6, &attr), 0);
    expect_usage(f, SFS_QUOTA_USER, UID_A, 0, 0);
}

static void test_file_limit(void **state)
{
    fixture_t      *f   = *state;
    sfs_quota_req_t set = {
        .kind = SFS_QUOTA_GROUP, .id = GID_A, .flags = SFS_QUOTA_SET_FILES, .files_limit = 2};
    sfs_attr_t attr;
    int        created = -1;

    assert_int_equal(sfs_meta_quota_set(f->txn, &set), 0);
    make_file(f, "/d/1");
    make_file(f, "/d/2");
    f->create.path = "/d/3";
    assert_int_equal(sfs_ns_create(f->txn, &f->create, &attr, &created), -EDQUOT);
    assert_int_equal(created, 0);
    assert_non_null(strstr(sfs_error_detail(), "quota: group"));
    assert_non_null(strstr(sfs_error_detail(), "(gid 4101) over its file limit 2 on /d/3"));
    /* another owner is not limited; opening an existing file is not a create */
    f->create.uid = UID_B;
    f->create.gid = GID_B;
    make_file(f, "/d/3");
    f->create.uid  = UID_A;
    f->create.gid  = GID_A;
    f->create.path = "/d/1";
    assert_int_equal(sfs_ns_create(f->txn, &f->create, &attr, &created), 0);
    assert_int_equal(created, 0);
    expect_usage(f, SFS_QUOTA_GROUP, GID_A, 2, 0);
}

static void test_space_limit(void **state)
{
    fixture_t      *f   = *state;
    sfs_quota_req_t set = {.kind        = SFS_QUOTA_USER,
                           .id          = UID_A,
                           .flags       = SFS_QUOTA_SET_SPACE,
                           .space_limit = 10u << 20};
    sfs_attr_t      attr;
    uint64_t        a, granted;
    int             limited;

    assert_int_equal(sfs_meta_quota_set(f->txn, &set), 0);
    a = make_file(f, "/d/big");
    assert_int_equal(sfs_ns_lookup(f->txn, &f->server, "/d/big", 0, &attr), 0);
    assert_int_equal(sfs_meta_quota_limited(f->txn, &attr), 1);
    /* BEGIN grants a first step (4 MiB, at most half of what is left) in
     * its own commit, and says a quota applies */
    {
        sfs_size_req_t   req = {.entry_id = a, .op = SFS_SIZE_OP_BEGIN};
        sfs_size_reply_t reply;

        assert_int_equal(sfs_ns_size(f->txn, &f->server, &req, 1000000000ull, 100, &attr, &reply),
                         0);
        assert_int_equal(reply.base, 1 | SFS_SIZE_QUOTA);
        assert_int_equal(reply.size, 0);
        assert_int_equal(reply.granted, 4u << 20);
    }
    expect_usage(f, SFS_QUOTA_USER, UID_A, 1, 4u << 20);
    /* past it: the growth charged, a little more granted, never more than
     * half of what is left */
    assert_int_equal(sfs_meta_quota_grow(f->txn, a, 9u << 20, &granted, &limited), 0);
    assert_int_equal(limited, 1);
    assert_int_equal(granted, (9u << 20) + (512u << 10));
    /* exactly to the limit is allowed, a byte more is not */
    assert_int_equal(sfs_meta_quota_grow(f->txn, a, 10u << 20, &granted, &limited), 0);
    assert_int_equal(granted, 10u << 20);
    assert_int_equal(sfs_meta_quota_grow(f->txn, a, (10u << 20) + 1, &granted, &limited), -EDQUOT);
    assert_non_null(strstr(sfs_error_detail(), "quota: user"));
    assert_non_null(strstr(sfs_error_detail(), "over its space limit 10 MiB (10 MiB used"));
    expect_usage(f, SFS_QUOTA_USER, UID_A, 1, 10u << 20);
    /* the close with 6 MiB written gives 4 MiB back */
    size_op(f, a, SFS_SIZE_OP_END, SFS_SIZE_MODIFIED | SFS_SIZE_VIEW, 6u << 20);
    expect_usage(f, SFS_QUOTA_USER, UID_A, 1, 6u << 20);
    /* removing the limit: no longer limited, the usage stays */
    set.space_limit = 0;
    assert_int_equal(sfs_meta_quota_set(f->txn, &set), 0);
    assert_int_equal(sfs_meta_quota_limited(f->txn, &attr), 0);
    expect_usage(f, SFS_QUOTA_USER, UID_A, 1, 6u << 20);
}

static int  lines;
static void count_line(void *arg, const char *line)
{
    (void)arg;
    (void)line;
    lines++;
}

static void test_check_repairs(void **state)
{
    fixture_t           *f = *state;
    sfs_ns_check_stats_t stats;
    sfs_quota_entry_t    e;
    uint64_t             a;

    a = make_file(f, "/d/x");
    size_op(f, a, SFS_SIZE_OP_BEGIN, 0, 0);
    size_op(f, a, SFS_SIZE_OP_END, SFS_SIZE_MODIFIED | SFS_SIZE_VIEW, 777);
    memset(&stats, 0, sizeof(stats));
    lines = 0;
    assert_int_equal(sfs_meta_quota_check(f->txn, 0, count_line, NULL, &stats), 0);
    assert_int_equal(stats.problems, 0);
    /* damage: a record that disagrees, and one for a user with no files */
    assert_int_equal(sfs_meta_quota_get(f->txn, SFS_QUOTA_USER, UID_A, &e), 0);
    e.space = 5;
    assert_int_equal(sfs_meta_quota_put_record(f->txn, &e), 0);
    e.id    = UID_B;
    e.files = 9;
    assert_int_equal(sfs_meta_quota_put_record(f->txn, &e), 0);
    assert_int_equal(sfs_meta_quota_check(f->txn, 0, count_line, NULL, &stats), 0);
    assert_int_equal(stats.problems, 2);
    assert_int_equal(lines, 2);
    assert_int_equal(sfs_meta_quota_check(f->txn, 1, count_line, NULL, &stats), 0);
    assert_int_equal(stats.repaired, 2);
    expect_usage(f, SFS_QUOTA_USER, UID_A, 1, 777);
    expect_usage(f, SFS_QUOTA_USER, UID_B, 0, 0);
    memset(&stats, 0, sizeof(stats));
    assert_int_equal(sfs_meta_quota_check(f->txn, 0, count_line, NULL, &stats), 0);
    assert_int_equal(stats.problems, 0);
}

/* A store from before quotas has inodes but no usage: the metadata
 * server's start counts it once, and not again. */
static void test_upgrade_counts_once(void **state)
{
    fixture_t        *f    = *state;
    sfs_quota_entry_t none = {.kind = SFS_QUOTA_USER, .id = UID_A};
    uint64_t          a;

    a = make_file(f, "/d/old");
    size_op(f, a, SFS_SIZE_OP_BEGIN, 0, 0);
    size_op(f, a, SFS_SIZE_OP_END, SFS_SIZE_MODIFIED | SFS_SIZE_VIEW, 1234);
    assert_int_equal(sfs_meta_quota_put_record(f->txn, &none), 0); /* as before quotas */
    none.kind = SFS_QUOTA_GROUP;
    none.id   = GID_A;
    assert_int_equal(sfs_meta_quota_put_record(f->txn, &none), 0);
    expect_usage(f, SFS_QUOTA_USER, UID_A, 0, 0);
    assert_int_equal(sfs_meta_txn_commit(f->txn), 0);
    assert_int_equal(sfs_meta_quota_upgrade(f->store), 0);
    assert_int_equal(sfs_meta_txn_begin(f->store, 1, &f->txn), 0);
    expect_usage(f, SFS_QUOTA_USER, UID_A, 1, 1234);
    expect_usage(f, SFS_QUOTA_GROUP, GID_A, 1, 1234);
    /* counted once: a later start leaves the records alone */
    assert_int_equal(sfs_meta_quota_put_record(f->txn, &none), 0);
    assert_int_equal(sfs_meta_txn_commit(f->txn), 0);
    assert_int_equal(sfs_meta_quota_upgrade(f->store), 0);
    assert_int_equal(sfs_meta_txn_begin(f->store, 1, &f->txn), 0);
    expect_usage(f, SFS_QUOTA_GROUP, GID_A, 0, 0);
}

/* A user's chgrp into a group at its limit is refused (as ext4); root's
 * is not, and usage moves either way. */
static void test_chgrp_into_a_full_group(void **state)
{
    fixture_t      *f     = *state;
    sfs_cred_t      alice = {.uid = UID_A, .gid = GID_A, .group_count = 1, .groups = {GID_B}};
    sfs_quota_req_t set   = {
          .kind = SFS_QUOTA_GROUP, .id = GID_B, .flags = SFS_QUOTA_SET_FILES, .files_limit = 1};
    sfs_attr_t attr;

    make_file(f, "/d/x");
    make_file(f, "/d/y");
    assert_int_equal(sfs_meta_quota_set(f->txn, &set), 0);
    assert_int_equal(sfs_ns_setattr(f->txn, &alice, "/d/x", SFS_SETATTR_OWNER, 0, SFS_ID_UNCHANGED,
                                    GID_B, 0, 0, 3, &attr),
                     0);
    expect_usage(f, SFS_QUOTA_GROUP, GID_B, 1, 0);
    assert_int_equal(sfs_ns_setattr(f->txn, &alice, "/d/y", SFS_SETATTR_OWNER, 0, SFS_ID_UNCHANGED,
                                    GID_B, 0, 0, 3, &attr),
                     -EDQUOT);
    assert_non_null(strstr(sfs_error_detail(), "(gid 4102) over its file limit 1 on /d/y"));
    expect_usage(f, SFS_QUOTA_GROUP, GID_A, 1, 0);
    /* root may */
    assert_int_equal(sfs_ns_setattr(f->txn, &f->server, "/d/y", SFS_SETATTR_OWNER, 0,
                                    SFS_ID_UNCHANGED, GID_B, 0, 0, 3, &attr),
                     0);
    expect_usage(f, SFS_QUOTA_GROUP, GID_B, 2, 0);
    expect_usage(f, SFS_QUOTA_GROUP, GID_A, 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_usage_follows_inodes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_space_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_repairs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upgrade_counts_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chgrp_into_a_full_group, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
