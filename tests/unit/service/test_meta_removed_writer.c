/* A file removed while open for writing (service/sfs_ns_size.c,
 * sfs_ns_pending_deletes): its chunk deletion waits while a writer's
 * registration lives, so that a write after the removal does not make a
 * chunk file again that nothing removes. An END or RENEW of the removed
 * file updates the pending deletion's record (a live registration only);
 * a BEGIN or a QUOTA_GROW, or any call once no registration lives, is
 * ENOENT naming the removal; a deletion is ready once the last writer
 * ended or its lease ran out, and SFS_META_DELETE_WRITER_WAIT_S after the
 * removal at the latest; a listing (ready_s 0, stripefs-fsck's) shows
 * every pending deletion. Through a real store in a temporary directory. */
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

#define S(seconds) ((uint64_t)(seconds)*1000000000ull)
#define LEASE_S    10u

typedef struct {
    char              dir[64];
    sfs_meta_store_t *store;
    sfs_meta_txn_t   *txn;
    sfs_cred_t        server;
} fixture_t;

static int choose_one(void *arg, uint32_t pool, uint32_t count, uint32_t start_target,
                      uint32_t *targets)
{
    (void)arg;
    (void)pool;
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
    snprintf(f->dir, sizeof(f->dir), "/tmp/sfs-test-removed.XXXXXX");
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
    *state = f;
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

static uint64_t make_file(fixture_t *f, const char *path)
{
    sfs_ns_create_args_t create = {
        .cred = &f->server, .path = path, .mode = 0644, .now_ns = 2, .choose = choose_one};
    sfs_attr_t attr;
    int        created = 0;

    assert_int_equal(sfs_ns_create(f->txn, &create, &attr, &created), 0);
    assert_int_equal(created, 1);
    return attr.entry_id;
}

/* SIZE `op` on `id` at `now_s`: its result; *writers_p the writers after */
static int size_op(fixture_t *f, uint64_t id, uint32_t op, uint64_t now_s, uint32_t *writers_p)
{
    sfs_size_req_t   req = {.entry_id = id, .op = op};
    sfs_size_reply_t reply;
    sfs_attr_t       attr;
    int              rc = sfs_ns_size(f->txn, &f->server, &req, S(now_s), LEASE_S, &attr, &reply);

    if (writers_p) {
        *writers_p = reply.writers;
    }
    return rc;
}

/* How many deletions are ready at `ready_s` (0: all pending); the first
 * one must be `id` when there is one. */
static uint32_t ready(fixture_t *f, uint64_t ready_s, uint64_t id)
{
    uint64_t      ids[4];
    sfs_pattern_t patterns[4];
    uint32_t      count = 0;

    assert_int_equal(sfs_ns_pending_deletes(f->txn, 0, 4, ready_s, ids, patterns, &count), 0);
    if (count) {
        assert_int_equal(ids[0], id);
        assert_int_equal(patterns[0].stripe_count, 1);
        assert_int_equal(patterns[0].targets[0], 101);
    }
    return count;
}

static void test_deletion_waits_for_the_writer(void **state)
{
    fixture_t *f  = *state;
    uint64_t   id = make_file(f, "/d/f");
    sfs_attr_t attr;
    uint32_t   writers = 99;

    /* registered at 1 s: its lease runs to 11 s */
    assert_int_equal(size_op(f, id, SFS_SIZE_OP_BEGIN, 1, &writers), 0);
    assert_int_equal(writers, 1);
    assert_int_equal(sfs_ns_unlink(f->txn, &f->server, "/d/f", S(5), &attr), 0);
    assert_int_equal(ready(f, 5, id), 0);
    assert_int_equal(ready(f, 0, id), 1); /* listed all the same */
    /* nor grow its quota grant (a removed file is charged to no one) */
    {
        uint64_t granted = 0;
        int      limited = 0;

        assert_int_equal(sfs_meta_quota_grow(f->txn, id, 4096, &granted, &limited), -ENOENT);
        assert_non_null(strstr(sfs_error_detail(), "was removed"));
    }
    /* a new writer cannot register on a removed file */
    assert_int_equal(size_op(f, id, SFS_SIZE_OP_BEGIN, 6, NULL), -ENOENT);
    assert_non_null(strstr(sfs_error_detail(), "was removed"));
    /* a RENEW keeps it from running out */
    assert_int_equal(size_op(f, id, SFS_SIZE_OP_RENEW, 8, &writers), 0);
    assert_int_equal(writers, 1);
    assert_int_equal(ready(f, 15, id), 0);
    /* the close: ready at once */
    assert_int_equal(size_op(f, id, SFS_SIZE_OP_END, 16, &writers), 0);
    assert_int_equal(writers, 0);
    assert_int_equal(ready(f, 16, id), 1);
    /* nothing lives any more: a second END changes nothing */
    assert_int_equal(size_op(f, id, SFS_SIZE_OP_END, 17, NULL), -ENOENT);
    assert_int_equal(ready(f, 17, id), 1);
    /* done: a late END finds nothing, and says so */
    assert_int_equal(sfs_ns_deletes_done(f->txn, &id, 1), 0);
    assert_int_equal(ready(f, 0, id), 0);
    assert_int_equal(size_op(f, id, SFS_SIZE_OP_END, 18, NULL), -ENOENT);
    assert_non_null(strstr(sfs_error_detail(), "was removed"));
}

static void test_two_writers_and_a_lease_that_ran_out(void **state)
{
    fixture_t *f  = *state;
    uint64_t   id = make_file(f, "/d/g");
    sfs_attr_t attr;
    uint32_t   writers = 0;

    assert_int_equal(size_op(f, id, SFS_SIZE_OP_BEGIN, 1, NULL), 0);
    assert_int_equal(size_op(f, id, SFS_SIZE_OP_BEGIN, 2, &writers), 0);
    assert_int_equal(writers, 2);
    assert_int_equal(sfs_ns_unlink(f->txn, &f->server, "/d/g", S(3), &attr), 0);
    assert_int_equal(size_op(f, id, SFS_SIZE_OP_END, 4, &writers), 0);
    assert_int_equal(writers, 1);
    assert_int_equal(ready(f, 4, id), 0); /* one still writes */
    /* it crashed: its lease (to 12 s) runs out */
    assert_int_equal(ready(f, 11, id), 0);
    assert_int_equal(ready(f, 12, id), 1);
    assert_int_equal(size_op(f, id, SFS_SIZE_OP_RENEW, 13, NULL), -ENOENT);
}

/* A writer that renews for ever (or a close whose END was lost, whose
 * registration lasts the capability's life): the deletion waits at most
 * SFS_META_DELETE_WRITER_WAIT_S after the removal. */
static void test_wait_is_bounded(void **state)
{
    fixture_t *f  = *state;
    uint64_t   id = make_file(f, "/d/k");
    sfs_attr_t attr;

    assert_int_equal(size_op(f, id, SFS_SIZE_OP_BEGIN, 1, NULL), 0);
    assert_int_equal(sfs_ns_unlink(f->txn, &f->server, "/d/k", S(3), &attr), 0);
    for (uint64_t t = 8; t <= 32; t += 8) {
        assert_int_equal(size_op(f, id, SFS_SIZE_OP_RENEW, t, NULL), 0);
    }
    assert_int_equal(ready(f, 3 + SFS_META_DELETE_WRITER_WAIT_S - 1, id), 0);
    assert_int_equal(ready(f, 3 + SFS_META_DELETE_WRITER_WAIT_S, id), 1);
}

static void test_removed_without_a_writer(void **state)
{
    fixture_t *f  = *state;
    uint64_t   id = make_file(f, "/d/h");
    sfs_attr_t attr;

    assert_int_equal(sfs_ns_unlink(f->txn, &f->server, "/d/h", S(3), &attr), 0);
    assert_int_equal(ready(f, 3, id), 1);
    assert_int_equal(size_op(f, id, SFS_SIZE_OP_END, 4, NULL), -ENOENT);
    assert_int_equal(ready(f, 4, id), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_deletion_waits_for_the_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_writers_and_a_lease_that_ran_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wait_is_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_removed_without_a_writer, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
