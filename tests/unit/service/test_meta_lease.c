/*
 * The migrate lease table (service/sfs_meta_lease.c): a second holder is
 * refused with the holder named, all or nothing; the holder renews; a
 * lease runs out; release frees only the holder's own.
 */
#include "sfs_meta_lease.h"

#include "sfs_errno.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

static sfs_migrate_lease_req_t lease_req(uint32_t op, uint64_t token, uint32_t lease_s, uint32_t a,
                                         uint32_t b)
{
    sfs_migrate_lease_req_t req;

    memset(&req, 0, sizeof(req));
    req.op         = op;
    req.token      = token;
    req.lease_s    = lease_s;
    req.pid        = (uint32_t)token;
    req.targets[0] = a;
    req.targets[1] = b;
    req.count      = b ? 2 : 1;
    return req;
}

static void test_one_holder(void **state)
{
    sfs_meta_leases_t      *leases;
    sfs_migrate_lease_req_t one     = lease_req(SFS_LEASE_TAKE, 111, 30, 101, 0);
    sfs_migrate_lease_req_t two     = lease_req(SFS_LEASE_TAKE, 222, 10, 102, 101);
    sfs_migrate_lease_req_t only102 = lease_req(SFS_LEASE_TAKE, 333, 10, 102, 0);

    (void)state;
    assert_int_equal(sfs_meta_leases_create(&leases), 0);
    assert_int_equal(sfs_meta_leases_apply(leases, &one, 0, "hostA", 1000), 0);
    /* all or nothing: 101 is held, so 102 is not taken either */
    assert_int_equal(sfs_meta_leases_apply(leases, &two, 0, "hostB", 2000), -EBUSY);
    assert_string_equal(sfs_error_detail(),
                        "storage target 101: another migrate runs on it (uid 0, pid 111 on "
                        "hostA; its lease runs out in 29 s if it died)");
    assert_int_equal(sfs_meta_leases_apply(leases, &only102, 0, "hostC", 2000), 0);
    /* the holder renews */
    assert_int_equal(sfs_meta_leases_apply(leases, &one, 0, "hostA", 20000), 0);
    assert_int_equal(sfs_meta_leases_apply(leases, &two, 0, "hostB", 40000), -EBUSY);
    assert_non_null(strstr(sfs_error_detail(), "runs out in 10 s"));
    /* runs out: 30 s after the renewal (102's 10 s long gone) */
    assert_int_equal(sfs_meta_leases_apply(leases, &two, 0, "hostB", 50000), 0);
    assert_int_equal(sfs_meta_leases_apply(leases, &one, 0, "hostA", 51000), -EBUSY);
    assert_non_null(strstr(sfs_error_detail(), "pid 222 on hostB"));
    sfs_meta_leases_destroy(leases);
}

static void test_release(void **state)
{
    sfs_meta_leases_t      *leases;
    sfs_migrate_lease_req_t one   = lease_req(SFS_LEASE_TAKE, 111, 30, 101, 102);
    sfs_migrate_lease_req_t other = lease_req(SFS_LEASE_RELEASE, 222, 30, 101, 0);
    sfs_migrate_lease_req_t mine  = lease_req(SFS_LEASE_RELEASE, 111, 30, 101, 0);
    sfs_migrate_lease_req_t take  = lease_req(SFS_LEASE_TAKE, 222, 30, 101, 0);
    sfs_migrate_lease_req_t t102  = lease_req(SFS_LEASE_TAKE, 222, 30, 102, 0);

    (void)state;
    assert_int_equal(sfs_meta_leases_create(&leases), 0);
    assert_int_equal(sfs_meta_leases_apply(leases, &one, 0, "h", 1000), 0);
    assert_int_equal(sfs_meta_leases_apply(leases, &other, 0, "h", 1000), 0); /* not its */
    assert_int_equal(sfs_meta_leases_apply(leases, &take, 0, "h", 1000), -EBUSY);
    assert_int_equal(sfs_meta_leases_apply(leases, &mine, 0, "h", 1000), 0);
    assert_int_equal(sfs_meta_leases_apply(leases, &take, 0, "h", 1000), 0);
    assert_int_equal(sfs_meta_leases_apply(leases, &t102, 0, "h", 1000), -EBUSY); /* kept */
    sfs_meta_leases_destroy(leases);
    sfs_meta_leases_destroy(NULL);
}

/* Many targets: the table grows */
static void test_many(void **state)
{
    static sfs_migrate_lease_req_t req;
    sfs_meta_leases_t             *leases;

    (void)state;
    assert_int_equal(sfs_meta_leases_create(&leases), 0);
    req       = lease_req(SFS_LEASE_TAKE, 7, 5, 0, 0);
    req.count = SFS_LEASE_TARGETS_MAX;
    for (uint32_t i = 0; i < req.count; i++) {
        req.targets[i] = 1000 + i;
    }
    assert_int_equal(sfs_meta_leases_apply(leases, &req, 0, NULL, 0), 0);
    req.token      = 8;
    req.count      = 1;
    req.targets[0] = 1000 + SFS_LEASE_TARGETS_MAX - 1;
    assert_int_equal(sfs_meta_leases_apply(leases, &req, 0, NULL, 100), -EBUSY);
    assert_non_null(strstr(sfs_error_detail(), "pid 7 on ?;"));
    assert_int_equal(sfs_meta_leases_apply(leases, &req, 0, NULL, 5000), 0);
    sfs_meta_leases_destroy(leases);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_holder),
        cmocka_unit_test(test_release),
        cmocka_unit_test(test_many),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
