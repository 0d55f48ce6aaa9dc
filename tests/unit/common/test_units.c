/*
 * Tests of sizes and durations as people write them (common/sfs_units.c):
 * parsing "512K", "1.5T", "30s", "500ms" and their errors, and formatting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sfs_config.h"
#include "sfs_errno.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KIB (1ull << 10)
#define MIB (1ull << 20)
#define GIB (1ull << 30)
#define TIB (1ull << 40)

static void test_sizes(void **state)
{
    static const struct {
        const char *text;
        uint64_t    bytes;
    } good[] = {
        {"512K", 512 * KIB},
        {"4MiB", 4 * MIB},
        {"12T", 12 * TIB},
        {"100M", 100 * MIB},
        {"65536", 65536},
        {"0", 0},
        {"1.5K", 1536},
        {"0.5k", 512},
        {"1 KiB", KIB},
        {"2gb", 2 * GIB},
        {"3P", 3ull << 50},
        {"15E", 15ull << 60},
        {"7B", 7},
        {"18446744073709551615", UINT64_MAX},
        {"000000000000000000000000000000000001K", KIB},
    };
    static const struct {
        const char *text;
        int         rc;
    } bad[] = {
        {"", -EINVAL},
        {"K", -EINVAL},
        {"-1", -EINVAL},
        {"1.K", -EINVAL},
        {".5K", -EINVAL},
        {"0.1K", -EINVAL},
        {"1.5", -EINVAL},
        {"12X", -EINVAL},
        {"1KK", -EINVAL},
        {"1 2", -EINVAL},
        {"0x10", -EINVAL},
        {"16E", -ERANGE},
        {"18446744073709551616", -ERANGE},
        {"99999999999999999999999999999999999", -ERANGE},
        {"1.0000000000000000001K", -EINVAL},
    };
    uint64_t bytes;

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        bytes = 1;
        if (sfs_parse_size(good[i].text, &bytes) != 0 || bytes != good[i].bytes) {
            fail_msg("'%s': got %" PRIu64 " (%s), want %" PRIu64, good[i].text, bytes,
                     sfs_error_detail(), good[i].bytes);
        }
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        bytes = 7;
        if (sfs_parse_size(bad[i].text, &bytes) != bad[i].rc || bytes != 7) {
            fail_msg("'%s' should fail with %s", bad[i].text, sfs_strerror(bad[i].rc));
        }
        assert_non_null(strstr(sfs_error_detail(), "size"));
    }
    assert_int_equal(sfs_parse_size(NULL, &bytes), -EINVAL);
}

static void test_durations(void **state)
{
    static const struct {
        const char *text;
        uint32_t    ms;
    } good[] = {
        {"30s", 30000},
        {"500ms", 500},
        {"2m", 120000},
        {"1h", 3600000},
        {"10", 10000},
        {"1d", 86400000},
        {"1.5s", 1500},
        {"0.25", 250},
        {"2 min", 120000},
        {"49d", 4233600000u},
        {"4294967295ms", UINT32_MAX},
        {"0", 0},
        {"3SEC", 3000},
    };
    static const struct {
        const char *text;
        int         rc;
    } bad[] = {
        {"", -EINVAL},      {"s", -EINVAL},   {"5x", -EINVAL},  {"0.0005s", -EINVAL},
        {"1.5ms", -EINVAL}, {"-1s", -EINVAL}, {"50d", -ERANGE}, {"4294967296ms", -ERANGE},
        {"1e3", -EINVAL},
    };
    uint32_t ms;

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        ms = 1;
        if (sfs_parse_duration_ms(good[i].text, &ms) != 0 || ms != good[i].ms) {
            fail_msg("'%s': got %" PRIu32 " (%s), want %" PRIu32, good[i].text, ms,
                     sfs_error_detail(), good[i].ms);
        }
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ms = 7;
        if (sfs_parse_duration_ms(bad[i].text, &ms) != bad[i].rc || ms != 7) {
            fail_msg("'%s' should fail with %s", bad[i].text, sfs_strerror(bad[i].rc));
        }
    }
    assert_int_equal(sfs_parse_duration_ms(NULL, &ms), -EINVAL);
}

static void test_format_size(void **state)
{
    char buf[32];

    assert_string_equal(sfs_format_size(0, buf, sizeof(buf)), "0B");
    assert_string_equal(sfs_format_size(1023, buf, sizeof(buf)), "1023B");
    assert_string_equal(sfs_format_size(1024, buf, sizeof(buf)), "1.0K");
    assert_string_equal(sfs_format_size(512 * KIB, buf, sizeof(buf)), "512K");
    assert_string_equal(sfs_format_size(12 * TIB, buf, sizeof(buf)), "12.0T");
    assert_string_equal(sfs_format_size(3 * GIB + 400 * MIB, buf, sizeof(buf)), "3.4G");
    assert_string_equal(sfs_format_size(1023 * KIB + 1000, buf, sizeof(buf)), "1024K");
    assert_string_equal(sfs_format_size(UINT64_MAX, buf, sizeof(buf)), "16.0E");
    assert_string_equal(sfs_format_size(12 * TIB, buf, 3), "12");
    assert_string_equal(sfs_format_size(12 * TIB, NULL, 0), "");
}

int main(void)
{
    // clang-format off
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_format_size),
    };
    // clang-format on

    return cmocka_run_group_tests(tests, NULL, NULL);
}
