/* The environment's knobs (common/sfs_tunable.c): typed readers that refuse
 * bad text naming the variable, ranges, the accepted boolean and size forms,
 * defaults, string checks, the printer; and every table's entries (log,
 * transport, storage) follow the naming rule and have defaults that parse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define SFS_LOG_FAC "test"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_storage_tunables.h"
#include "sfs_tp.h"
#include "sfs_tunable.h"

static int test_check_even(const sfs_tunable_t *entry, const char *text)
{
    return strlen(text) % 2 == 0 ? 0 : sfs_error_set(-EINVAL, "%s=%s: odd", entry->name, text);
}

static const sfs_tunable_t test_entries[] = {
    {.name          = "STRIPEFS_T_INT",
     .type          = SFS_TUNABLE_INT,
     .default_value = "7",
     .min           = -5,
     .max           = 100,
     .help          = "an int"},
    {.name = "STRIPEFS_T_NODEF",
     .type = SFS_TUNABLE_INT,
     .min  = 0,
     .max  = 10,
     .help = "no default"},
    {.name = "STRIPEFS_T_BOOL", .type = SFS_TUNABLE_BOOL, .default_value = "1", .help = "a bool"},
    {.name          = "STRIPEFS_T_SIZE",
     .type          = SFS_TUNABLE_SIZE,
     .default_value = "64K",
     .min           = 4096,
     .max           = 1ll << 40,
     .help          = "a size"},
    {.name = "STRIPEFS_T_STR", .type = SFS_TUNABLE_STRING, .help = "a string"},
    {.name  = "STRIPEFS_T_EVEN",
     .type  = SFS_TUNABLE_STRING,
     .help  = "checked",
     .check = test_check_even},
    {.name  = "UCX_T_EXT",
     .type  = SFS_TUNABLE_STRING,
     .help  = "theirs",
     .flags = SFS_TUNABLE_EXTERNAL},
};

static const sfs_tunable_table_t test_table = SFS_TUNABLE_TABLE("test", test_entries);

static int test_setup(void **state)
{
    (void)state;
    for (size_t i = 0; i < test_table.count; i++) {
        unsetenv(test_entries[i].name);
    }
    sfs_error_clear();
    return 0;
}

/* The last error detail names the variable and contains `what`. */
static void assert_detail(const char *name, const char *what)
{
    const char *detail = sfs_error_detail();

    if (!strstr(detail, name) || !strstr(detail, what)) {
        fail_msg("error detail '%s' does not name %s with '%s'", detail, name, what);
    }
}

static void test_int_bad_text(void **state)
{
    static const char *const bad[] = {"abc", "12x", "1.5", " 3", "0x10", "-"};
    int64_t                  value = 42;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        setenv("STRIPEFS_T_INT", bad[i], 1);
        assert_int_equal(sfs_tunable_int(&test_table, "STRIPEFS_T_INT", &value), -EINVAL);
        assert_detail("STRIPEFS_T_INT", bad[i]);
        assert_int_equal(value, 42); /* untouched on failure */
    }
    setenv("STRIPEFS_T_INT", "-5", 1);
    assert_int_equal(sfs_tunable_int(&test_table, "STRIPEFS_T_INT", &value), 0);
    assert_int_equal(value, -5);
}

static void test_int_range(void **state)
{
    int64_t value = 0;

    (void)state;
    setenv("STRIPEFS_T_INT", "101", 1);
    assert_int_equal(sfs_tunable_int(&test_table, "STRIPEFS_T_INT", &value), -EINVAL);
    assert_detail("STRIPEFS_T_INT", "out of range -5..100");
    setenv("STRIPEFS_T_INT", "-6", 1);
    assert_int_equal(sfs_tunable_int(&test_table, "STRIPEFS_T_INT", &value), -EINVAL);
    assert_detail("STRIPEFS_T_INT", "out of range");
    setenv("STRIPEFS_T_INT", "99999999999999999999", 1); /* beyond int64 */
    assert_int_equal(sfs_tunable_int(&test_table, "STRIPEFS_T_INT", &value), -EINVAL);
    assert_detail("STRIPEFS_T_INT", "expected an integer");
    setenv("STRIPEFS_T_INT", "100", 1);
    assert_int_equal(sfs_tunable_int(&test_table, "STRIPEFS_T_INT", &value), 0);
    assert_int_equal(value, 100);
}

static void test_bool_forms(void **state)
{
    static const char *const yes[] = {"1", "yes", "YES", "on", "On", "true", "TRUE", "y"};
    static const char *const no[]  = {"0", "no", "No", "off", "OFF", "false", "False", "n"};
    static const char *const bad[] = {"2", "maybe", "yess", "-1", "enable"};
    bool                     flag;

    (void)state;
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        flag = false;
        setenv("STRIPEFS_T_BOOL", yes[i], 1);
        assert_int_equal(sfs_tunable_bool(&test_table, "STRIPEFS_T_BOOL", &flag), 0);
        assert_true(flag);
        flag = true;
        setenv("STRIPEFS_T_BOOL", no[i], 1);
        assert_int_equal(sfs_tunable_bool(&test_table, "STRIPEFS_T_BOOL", &flag), 0);
        assert_false(flag);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        setenv("STRIPEFS_T_BOOL", bad[i], 1);
        assert_int_equal(sfs_tunable_bool(&test_table, "STRIPEFS_T_BOOL", &flag), -EINVAL);
        assert_detail("STRIPEFS_T_BOOL", bad[i]);
    }
    /* a bool is not read as a number, nor a number as a bool */
    int64_t number;
    assert_int_equal(sfs_tunable_int(&test_table, "STRIPEFS_T_BOOL", &number), -EINVAL);
    assert_int_equal(sfs_tunable_bool(&test_table, "STRIPEFS_T_INT", &flag), -EINVAL);
}

static void test_size_suffixes(void **state)
{
    static const struct {
        const char *text;
        uint64_t    bytes;
    } good[] = {{"4096", 4096},     {"512K", 512ull << 10}, {"4M", 4ull << 20},
                {"1G", 1ull << 30}, {"2T", 1ull << 41},     {"1t", 1ull << 40}};
    static const char *const bad[] = {"4Q", "M", "1.5.5G", "abc"};
    uint64_t                 bytes = 0;

    (void)state;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        setenv("STRIPEFS_T_SIZE", good[i].text, 1);
        if (good[i].bytes > (1ull << 40)) {
            assert_int_equal(sfs_tunable_size(&test_table, "STRIPEFS_T_SIZE", &bytes), -EINVAL);
            assert_detail("STRIPEFS_T_SIZE", "out of range");
            continue;
        }
        assert_int_equal(sfs_tunable_size(&test_table, "STRIPEFS_T_SIZE", &bytes), 0);
        assert_int_equal(bytes, good[i].bytes);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        setenv("STRIPEFS_T_SIZE", bad[i], 1);
        assert_int_equal(sfs_tunable_size(&test_table, "STRIPEFS_T_SIZE", &bytes), -EINVAL);
        assert_detail("STRIPEFS_T_SIZE", "expected a size");
    }
    setenv("STRIPEFS_T_SIZE", "1K", 1); /* below min */
    assert_int_equal(sfs_tunable_size(&test_table, "STRIPEFS_T_SIZE", &bytes), -EINVAL);
    assert_detail("STRIPEFS_T_SIZE", "out of range");
}

static void test_defaults(void **state)
{
    int64_t     value = 0;
    uint64_t    bytes = 0;
    bool        flag  = false;
    const char *text  = "x";

    (void)state;
    assert_int_equal(sfs_tunable_int(&test_table, "STRIPEFS_T_INT", &value), 0);
    assert_int_equal(value, 7);
    assert_int_equal(sfs_tunable_size(&test_table, "STRIPEFS_T_SIZE", &bytes), 0);
    assert_int_equal(bytes, 64u << 10);
    assert_int_equal(sfs_tunable_bool(&test_table, "STRIPEFS_T_BOOL", &flag), 0);
    assert_true(flag);
    /* empty counts as unset */
    setenv("STRIPEFS_T_INT", "", 1);
    assert_false(sfs_tunable_is_set(&test_table, "STRIPEFS_T_INT"));
    assert_int_equal(sfs_tunable_int(&test_table, "STRIPEFS_T_INT", &value), 0);
    assert_int_equal(value, 7);
    /* no default, unset */
    assert_int_equal(sfs_tunable_int(&test_table, "STRIPEFS_T_NODEF", &value), -ENOENT);
    assert_int_equal(sfs_tunable_string(&test_table, "STRIPEFS_T_STR", &text), 0);
    assert_null(text);
    setenv("STRIPEFS_T_STR", "hello", 1);
    assert_true(sfs_tunable_is_set(&test_table, "STRIPEFS_T_STR"));
    assert_int_equal(sfs_tunable_string(&test_table, "STRIPEFS_T_STR", &text), 0);
    assert_string_equal(text, "hello");
    assert_string_equal(sfs_tunable_env(&test_table, "STRIPEFS_T_STR"), "hello");
    /* a name outside the table is a programming error, said as such */
    assert_int_equal(sfs_tunable_int(&test_table, "STRIPEFS_NOT_THERE", &value), -EINVAL);
    assert_detail("STRIPEFS_NOT_THERE", "not a tunable of test");
    assert_null(sfs_tunable_find(&test_table, "STRIPEFS_NOT_THERE"));
}

static void test_string_check(void **state)
{
    const char *text = NULL;

    (void)state;
    setenv("STRIPEFS_T_EVEN", "abc", 1);
    assert_int_equal(sfs_tunable_string(&test_table, "STRIPEFS_T_EVEN", &text), -EINVAL);
    assert_detail("STRIPEFS_T_EVEN", "odd");
    assert_null(text);
    setenv("STRIPEFS_T_EVEN", "ab", 1);
    assert_int_equal(sfs_tunable_string(&test_table, "STRIPEFS_T_EVEN", &text), 0);
    assert_string_equal(text, "ab");
}

static char *test_print(const sfs_tunable_table_t *table)
{
    char  *text = NULL;
    size_t size = 0;
    FILE  *out  = open_memstream(&text, &size);

    assert_non_null(out);
    sfs_tunable_print(out, table);
    fclose(out);
    return text;
}

static void test_print_values(void **state)
{
    char *text;

    (void)state;
    setenv("STRIPEFS_T_INT", "12", 1);
    setenv("STRIPEFS_T_BOOL", "perhaps", 1);
    setenv("STRIPEFS_T_EVEN", "odd", 1);
    text = test_print(&test_table);
    assert_non_null(strstr(text, "# test\n"));
    assert_non_null(strstr(text, "STRIPEFS_T_INT=12  # int, an int\n"));
    assert_non_null(strstr(text, "STRIPEFS_T_SIZE=64K (default)  # size, a size\n"));
    assert_non_null(strstr(text, "STRIPEFS_T_BOOL=perhaps (INVALID)  # bool, a bool\n"));
    assert_non_null(strstr(text, "#   error: STRIPEFS_T_BOOL=perhaps: expected"));
    assert_non_null(strstr(text, "STRIPEFS_T_EVEN=odd (INVALID)"));
    assert_non_null(strstr(text, "#   error: STRIPEFS_T_EVEN=odd: odd\n"));
    assert_non_null(strstr(text, "UCX_T_EXT= (default)  # string, theirs [external]\n"));
    free(text);
}

static void test_log_mask(void **state)
{
    static const char *const good[] = {"info", "all=info,meta=debug", "ucx=trace,warning"};
    static const char *const bad[]  = {"loud", "meta=loud", "=debug", "all=info,meta"};
    const char              *text;

    (void)state;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        setenv("STRIPEFS_LOG_MASK", good[i], 1);
        assert_int_equal(sfs_tunable_string(&sfs_log_tunables, "STRIPEFS_LOG_MASK", &text), 0);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        setenv("STRIPEFS_LOG_MASK", bad[i], 1);
        assert_int_equal(sfs_tunable_string(&sfs_log_tunables, "STRIPEFS_LOG_MASK", &text),
                         -EINVAL);
        assert_detail("STRIPEFS_LOG_MASK", "is not LEVEL or FACILITY=LEVEL");
    }
    unsetenv("STRIPEFS_LOG_MASK");
}

/* Every real table: STRIPEFS_ names (or marked external), help text, a
 * default that parses with the variable unset, no name twice. */
static void test_tables(void **state)
{
    const sfs_tunable_table_t *tables[] = {&sfs_log_tunables, &sfs_tp_tunables,
                                           &sfs_storage_tunables};

    (void)state;
    for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
        const sfs_tunable_table_t *table = tables[t];

        assert_true(table->count > 0);
        for (size_t i = 0; i < table->count; i++) {
            const sfs_tunable_t *entry = &table->entries[i];
            int64_t              number;
            bool                 flag;
            const char          *text;
            int                  rc = 0;

            unsetenv(entry->name);
            if (!(entry->flags & SFS_TUNABLE_EXTERNAL) && strncmp(entry->name, "STRIPEFS_", 9)) {
                fail_msg("%s: %s is neither STRIPEFS_* nor external", table->subsystem,
                         entry->name);
            }
            assert_non_null(entry->help);
            assert_true(strlen(entry->help) > 10);
            assert_ptr_equal(sfs_tunable_find(table, entry->name), entry); /* once */
            switch (entry->type) {
            case SFS_TUNABLE_BOOL:
                rc = sfs_tunable_bool(table, entry->name, &flag);
                break;
            case SFS_TUNABLE_INT:
            case SFS_TUNABLE_SIZE:
                rc = sfs_tunable_int(table, entry->name, &number);
                rc = rc == -ENOENT ? 0 : rc;
                break;
            case SFS_TUNABLE_STRING:
                rc = sfs_tunable_string(table, entry->name, &text);
                break;
            }
            if (rc != 0) {
                fail_msg("%s: the default of %s does not parse: %s", table->subsystem, entry->name,
                         sfs_error_detail());
            }
        }
    }
    /* the renamed ones */
    assert_non_null(sfs_tunable_find(&sfs_tp_tunables, "STRIPEFS_SPIN_US"));
    assert_null(sfs_tunable_find(&sfs_tp_tunables, "SFS_SPIN_US"));
    assert_non_null(sfs_tunable_find(&sfs_log_tunables, "STRIPEFS_LOG_FILE"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_int_bad_text, test_setup),
        cmocka_unit_test_setup(test_int_range, test_setup),
        cmocka_unit_test_setup(test_bool_forms, test_setup),
        cmocka_unit_test_setup(test_size_suffixes, test_setup),
        cmocka_unit_test_setup(test_defaults, test_setup),
        cmocka_unit_test_setup(test_string_check, test_setup),
        cmocka_unit_test_setup(test_print_values, test_setup),
        cmocka_unit_test_setup(test_log_mask, test_setup),
        cmocka_unit_test_setup(test_tables, test_setup),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
