/* The batches a metadata mirror missed (service/sfs_meta_backlog.c): a
 * mirror at the base or at a kept batch gets the batches after it; a mirror
 * at a kept batch's number but another count of batches committed alone
 * (another history), one behind the base, or one the backlog never saw is
 * refused (a full copy); a batch that does not follow, the size limit and
 * an invalidation make it invalid until the next reset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <errno.h>

#include "sfs_meta_backlog.h"

static void test_from(void **state)
{
    sfs_meta_backlog_t *b;
    uint32_t            first = 99;
    uint64_t            seq;
    size_t              length;
    const void         *data;

    (void)state;
    assert_int_equal(sfs_meta_backlog_create(1000, &b), 0);
    assert_false(sfs_meta_backlog_valid(b)); /* before the mirror was ever in step */
    assert_int_equal(sfs_meta_backlog_from(b, 0, 0, &first), -ESTALE);
    sfs_meta_backlog_add(b, 1, 0, "x", 1);
    assert_int_equal(sfs_meta_backlog_count(b), 0);

    sfs_meta_backlog_reset(b, 10, 2);            /* the mirror acknowledged batch 10, 2 alone */
    sfs_meta_backlog_add(b, 11, 0, "eleven", 6); /* sent; failed there */
    sfs_meta_backlog_add(b, 12, 1, "twelve", 6); /* committed alone */
    sfs_meta_backlog_add(b, 13, 1, "thirteen", 8);
    assert_int_equal(sfs_meta_backlog_count(b), 3);
    assert_int_equal(sfs_meta_backlog_bytes(b), 20);

    assert_int_equal(sfs_meta_backlog_from(b, 10, 2, &first), 0);
    assert_int_equal(first, 0);
    assert_int_equal(sfs_meta_backlog_from(b, 11, 2, &first), 0); /* it got 11 */
    assert_int_equal(first, 1);
    assert_int_equal(sfs_meta_backlog_from(b, 13, 4, &first), 0); /* it has them all */
    assert_int_equal(first, 3);
    data = sfs_meta_backlog_get(b, 1, &seq, &length);
    assert_int_equal(seq, 12);
    assert_int_equal(length, 6);
    assert_memory_equal(data, "twelve", 6);
    assert_null(sfs_meta_backlog_get(b, 3, &seq, &length));

    assert_int_equal(sfs_meta_backlog_from(b, 12, 2, &first), -ESTALE); /* another history */
    assert_int_equal(sfs_meta_backlog_from(b, 10, 1, &first), -ESTALE);
    assert_int_equal(sfs_meta_backlog_from(b, 9, 2, &first), -ESTALE);  /* behind the base */
    assert_int_equal(sfs_meta_backlog_from(b, 14, 4, &first), -ESTALE); /* ahead */

    sfs_meta_backlog_reset(b, 13, 4); /* it has them: forgotten */
    assert_int_equal(sfs_meta_backlog_count(b), 0);
    assert_int_equal(sfs_meta_backlog_bytes(b), 0);
    assert_int_equal(sfs_meta_backlog_from(b, 13, 4, &first), 0);
    assert_int_equal(first, 0);
    sfs_meta_backlog_destroy(b);
}

static void test_invalid(void **state)
{
    sfs_meta_backlog_t *b;
    uint32_t            first;
    static char         big[600];

    (void)state;
    assert_int_equal(sfs_meta_backlog_create(1000, &b), 0);
    sfs_meta_backlog_reset(b, 5, 0);
    sfs_meta_backlog_add(b, 7, 1, "gap", 3); /* 6 is missing */
    assert_false(sfs_meta_backlog_valid(b));
    assert_int_equal(sfs_meta_backlog_from(b, 5, 0, &first), -ESTALE);
    sfs_meta_backlog_add(b, 6, 1, "late", 4); /* stays invalid */
    assert_int_equal(sfs_meta_backlog_count(b), 0);

    sfs_meta_backlog_reset(b, 5, 0);
    sfs_meta_backlog_add(b, 6, 1, big, sizeof(big));
    assert_true(sfs_meta_backlog_valid(b));
    sfs_meta_backlog_add(b, 7, 1, big, sizeof(big)); /* past 1000 bytes */
    assert_false(sfs_meta_backlog_valid(b));
    assert_int_equal(sfs_meta_backlog_count(b), 0);
    assert_int_equal(sfs_meta_backlog_bytes(b), 0);

    sfs_meta_backlog_reset(b, 5, 0);
    for (uint64_t s = 6; s < 206; s++) { /* grows past its first array */
        sfs_meta_backlog_add(b, s, 0, "", 0);
    }
    assert_int_equal(sfs_meta_backlog_count(b), 200);
    assert_int_equal(sfs_meta_backlog_from(b, 105, 0, &first), 0);
    assert_int_equal(first, 100);
    sfs_meta_backlog_invalidate(b); /* a commit that failed here */
    assert_int_equal(sfs_meta_backlog_from(b, 205, 0, &first), -ESTALE);
    sfs_meta_backlog_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from),
        cmocka_unit_test(test_invalid),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
