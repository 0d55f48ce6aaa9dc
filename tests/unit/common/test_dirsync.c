/*
 * Tests of common/sfs_dirsync.c: which directory each call fsyncs, told by
 * what it answers for directories that exist, do not exist, or are files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sfs_dirsync.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct dirsync_fixture {
    char root[64];  /* a fresh directory */
    char dir[128];  /* root/d */
    char file[128]; /* root/f, a regular file */
} dirsync_fixture_t;

static int dirsync_setup(void **state)
{
    dirsync_fixture_t *fx = calloc(1, sizeof(*fx));
    int                fd;

    assert_non_null(fx);
    snprintf(fx->root, sizeof(fx->root), "/tmp/sfs-dirsync.XXXXXX");
    assert_non_null(mkdtemp(fx->root));
    snprintf(fx->dir, sizeof(fx->dir), "%s/d", fx->root);
    snprintf(fx->file, sizeof(fx->file), "%s/f", fx->root);
    assert_int_equal(mkdir(fx->dir, 0700), 0);
    fd = open(fx->file, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    close(fd);
    *state = fx;
    return 0;
}

static int dirsync_teardown(void **state)
{
    dirsync_fixture_t *fx = *state;

    unlink(fx->file);
    rmdir(fx->dir);
    rmdir(fx->root);
    free(fx);
    return 0;
}

static void test_fsync_dir(void **state)
{
    dirsync_fixture_t *fx = *state;
    char               missing[160];

    assert_int_equal(sfs_fsync_dir(fx->dir), 0);
    assert_int_equal(sfs_fsync_dir("/"), 0);
    assert_int_equal(sfs_fsync_dir(fx->file), -ENOTDIR);
    snprintf(missing, sizeof(missing), "%s/none", fx->root);
    assert_int_equal(sfs_fsync_dir(missing), -ENOENT);
}

static void test_fsync_dirat(void **state)
{
    dirsync_fixture_t *fx = *state;
    int                fd = open(fx->root, O_RDONLY | O_DIRECTORY);

    assert_true(fd >= 0);
    assert_int_equal(sfs_fsync_dirat(fd, "d"), 0);
    assert_int_equal(sfs_fsync_dirat(fd, "f"), -ENOTDIR);
    assert_int_equal(sfs_fsync_dirat(fd, "none"), -ENOENT);
    close(fd);
}

/* The parent, not the name itself: a name that does not exist in an
 * existing directory is fine; one under a missing or non-directory parent
 * is not. */
static void test_fsync_parent(void **state)
{
    dirsync_fixture_t *fx = *state;
    char               path[PATH_MAX + 8];
    char              *cwd;

    snprintf(path, sizeof(path), "%s/not-yet", fx->dir);
    assert_int_equal(sfs_fsync_parent(path), 0);
    snprintf(path, sizeof(path), "%s/d/", fx->root); /* "root/d/": d's name is in root */
    assert_int_equal(sfs_fsync_parent(path), 0);
    snprintf(path, sizeof(path), "%s/none/x", fx->root);
    assert_int_equal(sfs_fsync_parent(path), -ENOENT);
    snprintf(path, sizeof(path), "%s/x", fx->file);
    assert_int_equal(sfs_fsync_parent(path), -ENOTDIR);
    snprintf(path, sizeof(path), "%s//x", fx->dir);
    assert_int_equal(sfs_fsync_parent(path), 0);
    assert_int_equal(sfs_fsync_parent("/tmp"), 0); /* "/" */
    assert_int_equal(sfs_fsync_parent("/"), 0);

    /* relative names: "x" is in ".", "d/x" in "d", "f/x" under a file */
    cwd = getcwd(NULL, 0);
    assert_non_null(cwd);
    assert_int_equal(chdir(fx->root), 0);
    assert_int_equal(sfs_fsync_parent("x"), 0);
    assert_int_equal(sfs_fsync_parent("d/x"), 0);
    assert_int_equal(sfs_fsync_parent("f/x"), -ENOTDIR);
    assert_int_equal(sfs_fsync_parent("none/x"), -ENOENT);
    assert_int_equal(chdir(cwd), 0);
    free(cwd);

    memset(path, 'a', sizeof(path) - 1);
    path[sizeof(path) - 1] = '\0';
    assert_int_equal(sfs_fsync_parent(path), -ENAMETOOLONG);
}

int main(void)
{
    // clang-format off
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fsync_dir, dirsync_setup, dirsync_teardown),
        cmocka_unit_test_setup_teardown(test_fsync_dirat, dirsync_setup, dirsync_teardown),
        cmocka_unit_test_setup_teardown(test_fsync_parent, dirsync_setup, dirsync_teardown),
    };
    // clang-format on

    return cmocka_run_group_tests(tests, NULL, NULL);
}
