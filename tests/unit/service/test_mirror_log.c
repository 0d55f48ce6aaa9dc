/* The primary's change log while its buddy is away (service/sfs_mirror_log.c):
 * nothing on disk while the buddy is good; each changed chunk file listed
 * once, durably; read back after a restart (a torn last line ignored, a
 * line that is no entry id refused); cleared after a resync. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sfs_errno.h"
#include "sfs_mirror_log.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[PATH_MAX];
static char path[PATH_MAX + 32];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/sfs-mirror-log-XXXXXX");
    if (!mkdtemp(dir)) {
        return -1;
    }
    snprintf(path, sizeof(path), "%s/%s", dir, SFS_MIRROR_LOG_NAME);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    return rmdir(dir);
}

static void test_log_lifecycle(void **state)
{
    sfs_mirror_log_t *log;
    FILE             *f;
    char              text[256];
    size_t            n;

    (void)state;
    assert_int_equal(sfs_mirror_log_open(dir, 101, 201, &log), 0);
    assert_false(sfs_mirror_log_degraded(log));
    assert_int_equal(access(path, F_OK), -1); /* nothing while the buddy is good */
    assert_int_equal(sfs_mirror_log_note(log, 7), 0);
    assert_int_equal(sfs_mirror_log_note(log, 9), 0);
    assert_int_equal(sfs_mirror_log_note(log, 7), 0); /* once */
    for (uint64_t id = 1000; id < 1300; id++) {       /* the set grows */
        assert_int_equal(sfs_mirror_log_note(log, id), 0);
    }
    assert_true(sfs_mirror_log_degraded(log));
    assert_int_equal(sfs_mirror_log_count(log), 302);
    sfs_mirror_log_close(log);

    f = fopen(path, "r");
    assert_non_null(f);
    n       = fread(text, 1, sizeof(text) - 1, f);
    text[n] = '\0';
    fclose(f);
    assert_int_equal(
        strncmp(text, "stripefs mirror changes: target 101 buddy 201\n7\n9\n1000\n", 55), 0);

    /* a restart reads it back: still degraded, same entries */
    f = fopen(path, "a");
    assert_non_null(f);
    fputs("12", f); /* a torn append: no newline */
    fclose(f);
    assert_int_equal(sfs_mirror_log_open(dir, 101, 201, &log), 0);
    assert_true(sfs_mirror_log_degraded(log));
    assert_int_equal(sfs_mirror_log_count(log), 302);
    assert_int_equal(sfs_mirror_log_entry(log, 0), 7);
    assert_int_equal(sfs_mirror_log_entry(log, 1), 9);
    assert_int_equal(sfs_mirror_log_note(log, 9), 0);
    assert_int_equal(sfs_mirror_log_count(log), 302);
    /* the torn line was cut: the next note is not appended to it ("12" +
     * "345" read back as 12345, and 345 lost) */
    assert_int_equal(sfs_mirror_log_note(log, 345), 0);
    sfs_mirror_log_close(log);
    assert_int_equal(sfs_mirror_log_open(dir, 101, 201, &log), 0);
    assert_int_equal(sfs_mirror_log_count(log), 303);
    assert_int_equal(sfs_mirror_log_entry(log, 302), 345);

    assert_int_equal(sfs_mirror_log_clear(log), 0);
    assert_false(sfs_mirror_log_degraded(log));
    assert_int_equal(sfs_mirror_log_count(log), 0);
    assert_int_equal(access(path, F_OK), -1);
    sfs_mirror_log_close(log);
}

static void test_log_refuses_garbage(void **state)
{
    sfs_mirror_log_t *log = NULL;
    FILE             *f   = fopen(path, "w");

    (void)state;
    assert_non_null(f);
    fputs("stripefs mirror changes: target 101 buddy 201\n7\nseven\n", f);
    fclose(f);
    assert_int_equal(sfs_mirror_log_open(dir, 101, 201, &log), -EBADMSG);
    assert_null(log);
    assert_non_null(strstr(sfs_error_detail(), SFS_MIRROR_LOG_NAME));
}

/* Resync passes: an id written again during a pass is recorded again (a
 * new entry for the next pass); an abandoned pass leaves its entries. */
/* a header torn by a crash at the log's creation: nothing was answered, so
 * the log is empty and goes; a later change starts a whole one */
static void test_log_torn_header(void **state)
{
    sfs_mirror_log_t *log = NULL;
    FILE             *f   = fopen(path, "w");

    (void)state;
    assert_non_null(f);
    fputs("stripefs mir", f);
    fclose(f);
    assert_int_equal(sfs_mirror_log_open(dir, 101, 201, &log), 0);
    assert_false(sfs_mirror_log_degraded(log));
    assert_int_equal(sfs_mirror_log_count(log), 0);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(sfs_mirror_log_note(log, 5), 0);
    sfs_mirror_log_close(log);
    assert_int_equal(sfs_mirror_log_open(dir, 101, 201, &log), 0);
    assert_int_equal(sfs_mirror_log_count(log), 1);
    assert_int_equal(sfs_mirror_log_entry(log, 0), 5);
    sfs_mirror_log_close(log);
}

static void test_log_passes(void **state)
{
    sfs_mirror_log_t *log;
    uint32_t          first, end;
    uint64_t          gen;

    (void)state;
    assert_int_equal(sfs_mirror_log_open(dir, 101, 201, &log), 0);
    assert_int_equal(sfs_mirror_log_note(log, 5), 0);
    assert_int_equal(sfs_mirror_log_note(log, 6), 0);
    /* a removal recorded now and done after a pass began must be
     * recorded again: the generation says a pass began in between */
    gen = sfs_mirror_log_generation(log);
    assert_int_equal(sfs_mirror_log_note(log, 6), 0);
    assert_int_equal(sfs_mirror_log_generation(log), gen); /* notes do not move it */
    sfs_mirror_log_pass_begin(log, &first, &end);
    assert_int_not_equal(sfs_mirror_log_generation(log), gen);
    assert_int_equal(first, 0);
    assert_int_equal(end, 2);
    assert_int_equal(sfs_mirror_log_pass_abandon(log), 0);
    assert_int_equal(sfs_mirror_log_note(log, 6), 0); /* still recorded: nothing new */
    assert_int_equal(sfs_mirror_log_count(log), 2);

    sfs_mirror_log_pass_begin(log, &first, &end);
    assert_int_equal(sfs_mirror_log_note(log, 6), 0); /* changed during the pass */
    for (uint64_t id = 100; id < 200; id++) {         /* the set grows meanwhile */
        assert_int_equal(sfs_mirror_log_note(log, id), 0);
    }
    assert_int_equal(sfs_mirror_log_note(log, 5), 0);
    assert_int_equal(sfs_mirror_log_count(log), 104);
    assert_false(sfs_mirror_log_pass_done(log));
    assert_int_equal(sfs_mirror_log_copied(log), 2);
    sfs_mirror_log_pass_begin(log, &first, &end);
    assert_int_equal(first, 2);
    assert_int_equal(end, 104);
    assert_int_equal(sfs_mirror_log_entry(log, 2), 6);
    assert_true(sfs_mirror_log_pass_done(log));
    gen = sfs_mirror_log_generation(log);
    assert_int_equal(sfs_mirror_log_clear(log), 0);
    assert_int_not_equal(sfs_mirror_log_generation(log), gen); /* a clear moves it too */
    assert_false(sfs_mirror_log_degraded(log));
    sfs_mirror_log_close(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_log_lifecycle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_refuses_garbage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_torn_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_passes, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
