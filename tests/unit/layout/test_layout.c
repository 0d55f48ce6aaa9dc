/* Stripe layout math: offsets, extents, sizes and truncation lengths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sfs_layout.h"

static sfs_pattern_t pattern_of(uint64_t chunk, uint32_t count)
{
    sfs_pattern_t p;

    memset(&p, 0, sizeof(p));
    p.type         = SFS_PATTERN_RAID0;
    p.chunk_size   = chunk;
    p.stripe_count = count;
    for (uint32_t i = 0; i < count; i++) {
        p.targets[i] = 101 + 100 * i;
    }
    return p;
}

static void test_offset_mapping(void **state)
{
    sfs_pattern_t p = pattern_of(65536, 4);

    (void)state;
    /* the design's formula: s = o / c, t = s % n, (s / n) * c + o % c */
    assert_int_equal(sfs_layout_target_index(&p, 0), 0);
    assert_int_equal(sfs_layout_target_index(&p, 65536), 1);
    assert_int_equal(sfs_layout_target_index(&p, 4 * 65536), 0);
    assert_int_equal(sfs_layout_chunk_file_offset(&p, 4 * 65536 + 17), 65536 + 17);
    assert_int_equal(sfs_layout_chunk_file_offset(&p, 3 * 65536 + 5), 5);
    for (uint64_t o = 0; o < 40 * 65536; o += 4099) {
        uint32_t t = sfs_layout_target_index(&p, o);

        assert_int_equal(sfs_layout_file_offset(&p, t, sfs_layout_chunk_file_offset(&p, o)), o);
    }
}

typedef struct collect {
    sfs_layout_extent_t extents[64];
    int                 count;
} collect_t;

static int collect_cb(const sfs_layout_extent_t *extent, void *arg)
{
    collect_t *c = arg;

    c->extents[c->count++] = *extent;
    return 0;
}

static void test_map_extents(void **state)
{
    sfs_pattern_t p     = pattern_of(65536, 3);
    collect_t     c     = {.count = 0};
    uint64_t      total = 0;

    (void)state;
    assert_int_equal(sfs_layout_map(&p, 65536 - 10, 3 * 65536, collect_cb, &c), 0);
    assert_int_equal(c.count, 4);
    assert_int_equal(c.extents[0].length, 10);
    assert_int_equal(c.extents[0].target_index, 0);
    assert_int_equal(c.extents[1].target_index, 1);
    assert_int_equal(c.extents[1].chunk_file_offset, 0);
    assert_int_equal(c.extents[3].target_index, 0);
    assert_int_equal(c.extents[3].chunk_file_offset, 65536);
    for (int i = 0; i < c.count; i++) {
        total += c.extents[i].length;
    }
    assert_int_equal(total, 3 * 65536);
}

static void test_size_round_trip(void **state)
{
    sfs_pattern_t p  = pattern_of(65536, 4);
    uint64_t sizes[] = {0,      1, 65535, 65536, 65537, 3 * 65536 + 9, 4 * 65536, 17 * 65536 + 3,
                        1000000};

    (void)state;
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        uint64_t lengths[4];

        for (uint32_t t = 0; t < 4; t++) {
            lengths[t] = sfs_layout_chunk_length_for_size(&p, t, sizes[i]);
        }
        assert_int_equal(sfs_layout_file_size(&p, lengths), sizes[i]);
    }
}

static void test_sparse_size(void **state)
{
    sfs_pattern_t p          = pattern_of(65536, 4);
    uint64_t      lengths[4] = {0, 0, 0, 0};

    (void)state;
    /* one byte written at 10 MiB lands on one target only */
    lengths[sfs_layout_target_index(&p, 10 << 20)] = sfs_layout_chunk_file_offset(&p, 10 << 20) + 1;
    assert_int_equal(sfs_layout_file_size(&p, lengths), (10 << 20) + 1);
    assert_int_equal(sfs_layout_last_byte_target(&p, (10 << 20) + 1),
                     sfs_layout_target_index(&p, 10 << 20));
}

static void test_validate(void **state)
{
    sfs_pattern_t p = pattern_of(65536, 4);

    (void)state;
    assert_int_equal(sfs_pattern_validate(&p), 0);
    p.chunk_size = 65536 + 1;
    assert_int_not_equal(sfs_pattern_validate(&p), 0);
    p.chunk_size = 32768;
    assert_int_not_equal(sfs_pattern_validate(&p), 0);
    p            = pattern_of(1ull << 20, 4);
    p.targets[2] = p.targets[0];
    assert_int_not_equal(sfs_pattern_validate(&p), 0);
    p = pattern_of(1ull << 20, 0);
    assert_int_not_equal(sfs_pattern_validate(&p), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offset_mapping),  cmocka_unit_test(test_map_extents),
        cmocka_unit_test(test_size_round_trip), cmocka_unit_test(test_sparse_size),
        cmocka_unit_test(test_validate),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
