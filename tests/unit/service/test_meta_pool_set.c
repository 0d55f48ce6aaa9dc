/* The pools in force on the metadata server (service/sfs_meta_pool_set.c),
 * through a real store in a temporary directory: POOL_SET's changes and
 * every refusal (nothing written then), the records read back over the
 * config's pools (same id, same name, store only, deleted), targets kept
 * in one pool, and POOL_SHOW's list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sfs_config.h"
#include "sfs_errno.h"
#include "sfs_meta_pool.h"
#include "sfs_meta_store.h"

#include <ftw.h>
#include <unistd.h>

static const char yaml[] = "connauth_file: /etc/sfs/connauth\n"
                           "mgmt: {host: h1}\n"
                           "meta: {host: h1, dir: /meta}\n"
                           "storage:\n"
                           "  - {id: 101, host: h1, dir: /t1}\n"
                           "  - {id: 201, host: h2, dir: /t1}\n"
                           "  - {id: 301, host: h3, dir: /t1}\n"
                           "  - {id: 401, host: h4, dir: /t1}\n"
                           "  - {id: 501, host: h5, dir: /t1}\n"
                           "  - {id: 601, host: h6, dir: /t1}\n"
                           "pools:\n"
                           "  - {id: 2, name: hdd, targets: [101, 201]}\n"
                           "  - {id: 3, name: nvme, targets: [301]}\n"
                           "mirror:\n"
                           "  groups:\n"
                           "    - {primary: 101, secondary: 201}\n";

typedef struct {
    char              dir[64];
    sfs_config_t     *config;
    sfs_meta_store_t *store;
    sfs_meta_txn_t   *txn;
    sfs_meta_pools_t  pools;
} fixture_t;

static int setup(void **state)
{
    fixture_t              *f = calloc(1, sizeof(*f));
    sfs_meta_store_params_t params;

    if (!f || sfs_config_parse(yaml, sizeof(yaml) - 1, "t.yaml", &f->config) != 0) {
        free(f);
        return -1;
    }
    snprintf(f->dir, sizeof(f->dir), "/tmp/sfs-test-poolset.XXXXXX");
    if (!mkdtemp(f->dir)) {
        return -1;
    }
    memset(&params, 0, sizeof(params));
    params.dir      = f->dir;
    params.map_size = 64ull << 20;
    if (sfs_meta_store_open(&params, &f->store) != 0 ||
        sfs_meta_txn_begin(f->store, 1, &f->txn) != 0) {
        fail_msg("cannot open a metadata store in %s: %s", f->dir, sfs_error_detail());
    }
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

    if (f->txn) {
        sfs_meta_txn_abort(f->txn);
    }
    sfs_meta_store_close(f->store);
    sfs_meta_pools_cleanup(&f->pools);
    sfs_config_destroy(f->config);
    nftw(f->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

static int set(fixture_t *f, uint32_t op, const char *name, uint32_t count, ...)
{
    sfs_pool_set_req_t *req = calloc(1, sizeof(*req));
    va_list             ap;
    int                 rc;

    assert_non_null(req);
    req->op           = op;
    req->target_count = count;
    snprintf(req->name, sizeof(req->name), "%s", name);
    va_start(ap, count);
    for (uint32_t i = 0; i < count; i++) {
        req->targets[i] = va_arg(ap, uint32_t);
    }
    va_end(ap);
    sfs_error_clear();
    rc = sfs_meta_pools_change(f->txn, f->config, req, NULL);
    free(req);
    return rc;
}

/* The pools in force as "hdd:101,201 nvme:301" (the config's order, then
 * the store's), default left out. */
static const char *shown(fixture_t *f, char *buf, size_t size)
{
    sfs_pool_list_reply_t *list = calloc(1, sizeof(*list));
    size_t                 used = 0;

    assert_non_null(list);
    assert_int_equal(sfs_meta_pools_load(&f->pools, f->config, f->txn, 1), 0);
    sfs_meta_pools_list(&f->pools.view, list);
    assert_string_equal(list->pools[0].name, "default");
    buf[0] = '\0';
    for (uint32_t i = 1; i < list->count; i++) {
        const sfs_pool_info_t *p = &list->pools[i];

        used += (size_t)snprintf(buf + used, size - used, "%s%s:", i > 1 ? " " : "", p->name);
        for (uint32_t t = 0; t < p->target_count; t++) {
            used += (size_t)snprintf(buf + used, size - used, "%s%u", t ? "," : "",
                                     list->targets[p->first + t]);
        }
    }
    free(list);
    return buf;
}

static void expect_refused(fixture_t *f, int rc, int want, const char *words)
{
    char buf[256];

    if (rc != want || !strstr(sfs_error_detail(), words)) {
        fail_msg("expected %d with '%s'; got %d: %s", want, words, rc, sfs_error_detail());
    }
    assert_string_equal(shown(f, buf, sizeof(buf)), "hdd:101,201 nvme:301");
}

static void test_changes(void **state)
{
    fixture_t *f = *state;
    char       buf[256];
    uint32_t   id;

    assert_string_equal(shown(f, buf, sizeof(buf)), "hdd:101,201 nvme:301");
    assert_int_equal(set(f, SFS_POOL_SET_CREATE, "fast", 2, 401u, 501u), 0);
    assert_string_equal(shown(f, buf, sizeof(buf)), "hdd:101,201 nvme:301 fast:401,501");
    assert_int_equal(sfs_config_pool_find(&f->pools.view, "fast", &id), 0);
    assert_int_equal(id, 4); /* after the config's highest */
    assert_int_equal(set(f, SFS_POOL_SET_REMOVE, "fast", 1, 401u), 0);
    assert_int_equal(set(f, SFS_POOL_SET_ADD, "nvme", 2, 401u, 601u), 0);
    assert_string_equal(shown(f, buf, sizeof(buf)), "hdd:101,201 nvme:301,401,601 fast:501");
    assert_int_equal(sfs_config_pool_of(&f->pools.view, 401), 3);
    assert_int_equal(set(f, SFS_POOL_SET_CREATE, "empty", 0), 0);
    assert_int_equal(set(f, SFS_POOL_SET_DELETE, "empty", 0), 0);
    assert_string_equal(shown(f, buf, sizeof(buf)), "hdd:101,201 nvme:301,401,601 fast:501");
    /* a deleted pool's id is not given again */
    assert_int_equal(set(f, SFS_POOL_SET_CREATE, "empty", 0), 0);
    assert_int_equal(sfs_config_pool_find(&f->pools.view, "fast", &id), 0);
    shown(f, buf, sizeof(buf));
    assert_int_equal(sfs_config_pool_find(&f->pools.view, "empty", &id), 0);
    assert_int_equal(id, 6);
    /* a config pool deleted stays deleted */
    assert_int_equal(set(f, SFS_POOL_SET_REMOVE, "nvme", 3, 301u, 401u, 601u), 0);
    assert_int_equal(set(f, SFS_POOL_SET_DELETE, "nvme", 0), 0);
    assert_string_equal(shown(f, buf, sizeof(buf)), "hdd:101,201 fast:501 empty:");
}

static void test_refusals(void **state)
{
    fixture_t *f = *state;

    /* (a name too long for the wire is refused by the client and by the
     * request's decoding: tests/unit/common/test_proto_pool_set.c) */
    expect_refused(f, set(f, SFS_POOL_SET_CREATE, "hdd", 0), -EEXIST, "'hdd' exists already");
    expect_refused(f, set(f, SFS_POOL_SET_CREATE, "default", 0), -EINVAL, "reserved pool name");
    expect_refused(f, set(f, SFS_POOL_SET_CREATE, "none", 0), -EINVAL, "reserved pool name");
    expect_refused(f, set(f, SFS_POOL_SET_ADD, "default", 1, 501u), -EINVAL,
                   "'default' cannot be changed");
    expect_refused(f, set(f, SFS_POOL_SET_CREATE, "a b", 0), -EINVAL, "letters, digits");
    expect_refused(f, set(f, SFS_POOL_SET_CREATE, "x", 1, 999u), -EINVAL,
                   "target 999 is not a storage target");
    expect_refused(f, set(f, SFS_POOL_SET_CREATE, "x", 1, 301u), -EBUSY,
                   "target 301 is in storage pool 'nvme' already: a target is in one pool");
    expect_refused(f, set(f, SFS_POOL_SET_ADD, "nvme", 1, 301u), -EEXIST,
                   "target 301 is in storage pool 'nvme' already");
    expect_refused(f, set(f, SFS_POOL_SET_ADD, "nvme", 2, 501u, 501u), -EINVAL, "named twice");
    expect_refused(f, set(f, SFS_POOL_SET_ADD, "ssd", 1, 501u), -ENOENT, "no storage pool 'ssd'");
    expect_refused(f, set(f, SFS_POOL_SET_REMOVE, "nvme", 1, 401u), -EINVAL,
                   "target 401 is not in storage pool 'nvme'");
    expect_refused(f, set(f, SFS_POOL_SET_DELETE, "nvme", 0), -ENOTEMPTY,
                   "'nvme' still has targets (301)");
    /* the mirror group 101+201 stays in one pool */
    expect_refused(f, set(f, SFS_POOL_SET_REMOVE, "hdd", 1, 201u), -EINVAL,
                   "mirror group 1's targets 101 (pool hdd) and 201 (pool default)");
    assert_int_equal(set(f, SFS_POOL_SET_REMOVE, "hdd", 2, 101u, 201u), 0);
}

/* Records combine with a config that changed since: a record replaces the
 * config's pool of its id (its name may differ), a store pool's claim on a
 * target wins over the config's. */
static void test_config_and_store(void **state)
{
    fixture_t        *f = *state;
    sfs_config_t     *other;
    char              buf[256];
    static const char yaml2[] = "connauth_file: /etc/sfs/connauth\n"
                                "mgmt: {host: h1}\n"
                                "meta: {host: h1, dir: /meta}\n"
                                "storage:\n"
                                "  - {id: 101, host: h1, dir: /t1}\n"
                                "  - {id: 201, host: h2, dir: /t1}\n"
                                "  - {id: 301, host: h3, dir: /t1}\n"
                                "  - {id: 401, host: h4, dir: /t1}\n"
                                "  - {id: 501, host: h5, dir: /t1}\n"
                                "pools:\n"
                                "  - {id: 2, name: hdd, targets: [101, 201]}\n"
                                "  - {id: 3, name: nvme, targets: [301]}\n"
                                "  - {id: 9, name: late, targets: [501, 401]}\n";

    assert_int_equal(set(f, SFS_POOL_SET_ADD, "nvme", 1, 401u), 0);
    assert_int_equal(set(f, SFS_POOL_SET_CREATE, "fast", 1, 601u), 0);
    assert_int_equal(sfs_config_parse(yaml2, sizeof(yaml2) - 1, "t2.yaml", &other), 0);
    sfs_config_destroy(f->config);
    f->config = other;
    /* nvme's record (401 added) wins over the config's nvme; late keeps
     * 501 only; fast's 601 is not in this config's storage */
    assert_string_equal(shown(f, buf, sizeof(buf)), "hdd:101,201 nvme:301,401 late:501 fast:");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_and_store, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
