/* The client's tunable table: every entry well formed, defaults that parse,
 * and sfs_client_env_read refusing bad values by name. */
#include "sfs_client_tunables.h"
#include "sfs_errno.h"

#include <setjmp.h> /* cmocka needs these before it */
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"STRIPEFS_CONFIG",
                                    "STRIPEFS_MGMT",
                                    "STRIPEFS_CONNAUTH",
                                    "STRIPEFS_MUNGE_SOCKET",
                                    "STRIPEFS_SERVICE_UID",
                                    "STRIPEFS_TIMEOUT",
                                    "STRIPEFS_MAX_REQUEST",
                                    "STRIPEFS_WINDOW",
                                    "STRIPEFS_LOCAL_READ",
                                    "STRIPEFS_REPLY_CACHE",
                                    "STRIPEFS_TEST_MIRROR_OLD_MAP"};

static int clear_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        unsetenv(names[i]);
    }
    return 0;
}

static void test_table(void **state)
{
    const sfs_tunable_table_t *t = &sfs_client_tunables;

    (void)state;
    assert_string_equal(t->subsystem, "client");
    assert_int_equal(t->count, sizeof(names) / sizeof(names[0]));
    for (size_t i = 0; i < t->count; i++) {
        const sfs_tunable_t *e = &t->entries[i];
        int64_t              value;

        assert_non_null(sfs_tunable_find(t, names[i]));
        assert_int_equal(strncmp(e->name, "STRIPEFS_", 9), 0);
        assert_true(e->help && strlen(e->help) > 10);
        if (e->default_value && (e->type == SFS_TUNABLE_INT || e->type == SFS_TUNABLE_SIZE)) {
            assert_int_equal(sfs_tunable_parse_int(e, e->default_value, &value), 0);
        }
    }
}

static void test_defaults(void **state)
{
    sfs_client_env_t env;

    (void)state;
    assert_int_equal(sfs_client_env_read(&env), 0);
    assert_null(env.config);
    assert_null(env.mgmt);
    assert_int_equal(env.timeout_ms, 0);
    assert_int_equal(env.window, 32);
    assert_int_equal(env.max_request, 8u << 20);
    assert_true(env.local_reads);
    assert_true(env.reply_cache);
    assert_int_equal(env.service_uid, 0);
    assert_non_null(env.munge_socket);
}

static void test_values(void **state)
{
    sfs_client_env_t env;

    (void)state;
    setenv("STRIPEFS_TIMEOUT", "5", 1);
    setenv("STRIPEFS_MAX_REQUEST", "1M", 1);
    setenv("STRIPEFS_WINDOW", "4", 1);
    setenv("STRIPEFS_LOCAL_READ", "off", 1);
    setenv("STRIPEFS_REPLY_CACHE", "0", 1);
    assert_int_equal(sfs_client_env_read(&env), 0);
    assert_false(env.reply_cache);
    assert_int_equal(env.timeout_ms, 5000);
    assert_int_equal(env.max_request, 1u << 20);
    assert_int_equal(env.window, 4);
    assert_false(env.local_reads);
}

static void test_bad(void **state)
{
    static const char *const bad[][2] = {
        {"STRIPEFS_TIMEOUT", "abc"},    {"STRIPEFS_TIMEOUT", "-1"},
        {"STRIPEFS_TIMEOUT", "0"},      {"STRIPEFS_TIMEOUT", "86401"},
        {"STRIPEFS_WINDOW", "0"},       {"STRIPEFS_MAX_REQUEST", "65535"},
        {"STRIPEFS_LOCAL_READ", "2"},   {"STRIPEFS_SERVICE_UID", "x"},
        {"STRIPEFS_MAX_REQUEST", "2G"}, {"STRIPEFS_REPLY_CACHE", "maybe"},
    };
    sfs_client_env_t env;
    char             want[64];

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        clear_env(NULL);
        setenv(bad[i][0], bad[i][1], 1);
        sfs_error_clear();
        assert_int_equal(sfs_client_env_read(&env), -EINVAL);
        snprintf(want, sizeof(want), "%s=%s", bad[i][0], bad[i][1]);
        assert_non_null(strstr(sfs_error_detail(), want));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_table, clear_env),
        cmocka_unit_test_setup(test_defaults, clear_env),
        cmocka_unit_test_setup(test_values, clear_env),
        cmocka_unit_test_setup(test_bad, clear_env),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
