/* Chunk files removed lately (service/sfs_chunk_removed.c): a removal is
 * remembered for its target only, for keep_ms and no longer; the oldest
 * are forgotten first once `max` are remembered (counted as dropped); a
 * removal noted again is the newest; many entries in one bucket chain and
 * the expiry of thousands leave nothing behind (ASan's leak check). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sfs_chunk_removed.h"

static void test_recent_per_target_and_expiry(void **state)
{
    sfs_chunk_removed_t *r;

    (void)state;
    assert_int_equal(sfs_chunk_removed_create(8, 1000, &r), 0);
    assert_int_equal(sfs_chunk_removed_recent(r, 101, 7, 0), 0);
    assert_int_equal(sfs_chunk_removed_note(r, 101, 7, 5000), 0);
    assert_int_equal(sfs_chunk_removed_recent(r, 101, 7, 5000), 1);
    assert_int_equal(sfs_chunk_removed_recent(r, 101, 7, 5999), 1);
    assert_int_equal(sfs_chunk_removed_recent(r, 201, 7, 5001), 0); /* another target */
    assert_int_equal(sfs_chunk_removed_recent(r, 101, 8, 5001), 0); /* another file */
    assert_int_equal(sfs_chunk_removed_recent(r, 101, 7, 6000), 0); /* kept 1000 ms */
    /* noted again later: kept from then */
    assert_int_equal(sfs_chunk_removed_note(r, 101, 7, 5900), 0);
    assert_int_equal(sfs_chunk_removed_count(r), 1);
    assert_int_equal(sfs_chunk_removed_recent(r, 101, 7, 6800), 1);
    /* a later note expires what is old */
    assert_int_equal(sfs_chunk_removed_note(r, 201, 9, 7000), 0);
    assert_int_equal(sfs_chunk_removed_count(r), 1);
    assert_int_equal(sfs_chunk_removed_dropped(r), 0);
    sfs_chunk_removed_destroy(r);
}

static void test_full_forgets_the_oldest(void **state)
{
    sfs_chunk_removed_t *r;

    (void)state;
    assert_int_equal(sfs_chunk_removed_create(4, 60000, &r), 0);
    for (uint64_t id = 1; id <= 6; id++) {
        assert_int_equal(sfs_chunk_removed_note(r, 101, id, 100 + id), 0);
    }
    assert_int_equal(sfs_chunk_removed_count(r), 4);
    assert_int_equal(sfs_chunk_removed_dropped(r), 2);
    assert_int_equal(sfs_chunk_removed_recent(r, 101, 1, 200), 0);
    assert_int_equal(sfs_chunk_removed_recent(r, 101, 2, 200), 0);
    for (uint64_t id = 3; id <= 6; id++) {
        assert_int_equal(sfs_chunk_removed_recent(r, 101, id, 200), 1);
    }
    sfs_chunk_removed_destroy(r);
}

static void test_many(void **state)
{
    sfs_chunk_removed_t *r;

    (void)state;
    assert_int_equal(sfs_chunk_removed_create(SFS_CHUNK_REMOVED_MAX, 1000, &r), 0);
    for (uint64_t id = 0; id < 20000; id++) {
        /* both members' targets, and ids far apart */
        assert_int_equal(sfs_chunk_removed_note(r, 101, id << 20, id / 10), 0);
        assert_int_equal(sfs_chunk_removed_note(r, 201, id << 20, id / 10), 0);
    }
    assert_int_equal(sfs_chunk_removed_recent(r, 201, 19999ull << 20, 1999), 1);
    assert_int_equal(sfs_chunk_removed_recent(r, 101, 0, 1999), 0);
    assert_true(sfs_chunk_removed_count(r) <= 20000);
    assert_int_equal(sfs_chunk_removed_dropped(r), 0);
    sfs_chunk_removed_destroy(r);
    sfs_chunk_removed_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recent_per_target_and_expiry),
        cmocka_unit_test(test_full_forgets_the_oldest),
        cmocka_unit_test(test_many),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
