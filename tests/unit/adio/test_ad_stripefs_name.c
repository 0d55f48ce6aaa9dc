/*
 * adio/ad_stripefs/ad_stripefs_name.c: the name rule shared with the POSIX
 * preload. The prefix is read once per process, so every case runs in a
 * child process with its own STRIPEFS_PREFIX.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ad_stripefs_name.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* name -> expected claim and namespace path, under one STRIPEFS_PREFIX */
typedef struct {
    const char *name;
    int         claimed;
    const char *path;
} name_case_t;

/* Runs the cases in a child with STRIPEFS_PREFIX=prefix (NULL: unset);
 * returns how many failed (each printed). */
static int run_cases(const char *prefix, const name_case_t *cases, size_t n)
{
    pid_t pid = fork();
    int   status;

    assert_true(pid >= 0);
    if (pid == 0) {
        int failed = 0;

        if (prefix) {
            setenv("STRIPEFS_PREFIX", prefix, 1);
        } else {
            unsetenv("STRIPEFS_PREFIX");
        }
        for (size_t i = 0; i < n; i++) {
            int         claimed = ADIOI_STRIPEFS_Claims(cases[i].name);
            const char *path    = ADIOI_STRIPEFS_Path(cases[i].name);

            if (claimed != cases[i].claimed || strcmp(path, cases[i].path) != 0) {
                print_error("STRIPEFS_PREFIX=%s: '%s': claimed %d path '%s', expected %d '%s'\n",
                            prefix ? prefix : "(unset)", cases[i].name, claimed, path,
                            cases[i].claimed, cases[i].path);
                failed++;
            }
        }
        _exit(failed > 100 ? 100 : failed);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void test_default_prefix(void **state)
{
    static const name_case_t cases[] = {
        {"/stripefs/d/f", 1, "/d/f"},
        {"/stripefs", 1, "/"},
        {"/stripefs/", 1, "/"},
        {"/stripefs/stripefs/y", 1, "/stripefs/y"},
        {"/stripefsx/f", 0, "/stripefsx/f"},
        {"/tmp/stripefs/f", 0, "/tmp/stripefs/f"},
        {"/d/f", 0, "/d/f"},
        {"d/f", 0, "d/f"},
        {"stripefs:/stripefs/f", 0, "stripefs:/stripefs/f"},
        {"", 0, ""},
    };

    (void)state;
    assert_int_equal(run_cases(NULL, cases, sizeof(cases) / sizeof(cases[0])), 0);
    /* an empty variable counts as unset */
    assert_int_equal(run_cases("", cases, sizeof(cases) / sizeof(cases[0])), 0);
}

static void test_own_prefix(void **state)
{
    static const name_case_t cases[] = {
        {"/scratch/sfs/a", 1, "/a"},
        {"/scratch/sfs", 1, "/"},
        {"/stripefs/a", 0, "/stripefs/a"},
        {"/scratch/sfsa", 0, "/scratch/sfsa"},
    };

    (void)state;
    /* trailing slashes of the prefix do not count, as in the preload */
    assert_int_equal(run_cases("/scratch/sfs//", cases, sizeof(cases) / sizeof(cases[0])), 0);
}

static void test_no_prefix(void **state)
{
    static const name_case_t cases[] = {
        {"/stripefs/a", 0, "/stripefs/a"},
        {"/a", 0, "/a"},
    };

    (void)state;
    assert_int_equal(run_cases("none", cases, sizeof(cases) / sizeof(cases[0])), 0);
    /* a bad prefix is reported and ignored, never "/" that would claim all */
    assert_int_equal(run_cases("/", cases, sizeof(cases) / sizeof(cases[0])), 0);
    assert_int_equal(run_cases("relative", cases, sizeof(cases) / sizeof(cases[0])), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_prefix),
        cmocka_unit_test(test_own_prefix),
        cmocka_unit_test(test_no_prefix),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
