/* One server process per state directory (service/sfs_dirlock.c): a second
 * claim, in this process or another, is refused naming the holder; the
 * kernel drops a dead holder's claim. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sfs_dirlock.h"
#include "sfs_errno.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[PATH_MAX];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "%s/sfs-dirlock-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    char path[PATH_MAX + 32];

    (void)state;
    snprintf(path, sizeof(path), "%s/%s", dir, SFS_DIRLOCK_FILE);
    unlink(path);
    rmdir(dir);
    return 0;
}

static void test_second_claim_refused(void **state)
{
    sfs_dirlock_t *first = NULL, *second = NULL;
    char           pid[32];

    (void)state;
    assert_int_equal(sfs_dirlock_acquire(dir, "storage target 7", &first), 0);
    {
        /* the service's own: no one else reads who holds it */
        char        path[PATH_MAX + 32];
        struct stat st;

        snprintf(path, sizeof(path), "%s/%s", dir, SFS_DIRLOCK_FILE);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
    }
    assert_int_equal(sfs_dirlock_acquire(dir, "storage target 7", &second), -EBUSY);
    assert_null(second);
    snprintf(pid, sizeof(pid), "pid %d on ", (int)getpid());
    assert_non_null(strstr(sfs_error_detail(), pid));
    assert_non_null(strstr(sfs_error_detail(), "(storage target 7, since "));
    assert_non_null(strstr(sfs_error_detail(), dir));
    sfs_dirlock_release(first);
    assert_int_equal(sfs_dirlock_acquire(dir, "metadata store", &second), 0);
    sfs_dirlock_release(second);
    sfs_dirlock_release(NULL);
}

/* A holder in another process; killed with SIGKILL, its claim is gone. */
static void test_dead_holder_released(void **state)
{
    sfs_dirlock_t *lock = NULL;
    int            ready[2], status;
    char           byte;
    pid_t          child;

    (void)state;
    assert_int_equal(pipe(ready), 0);
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        sfs_dirlock_t *held = NULL;

        close(ready[0]);
        if (sfs_dirlock_acquire(dir, "state dir", &held) != 0) {
            _exit(2);
        }
        if (write(ready[1], "x", 1) != 1) {
            _exit(3);
        }
        pause();
        _exit(0);
    }
    close(ready[1]);
    assert_int_equal(read(ready[0], &byte, 1), 1);
    close(ready[0]);
    assert_int_equal(sfs_dirlock_acquire(dir, "state dir", &lock), -EBUSY);
    {
        char pid[32];

        snprintf(pid, sizeof(pid), "pid %d on ", (int)child);
        assert_non_null(strstr(sfs_error_detail(), pid));
    }
    assert_int_equal(kill(child, SIGKILL), 0);
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_int_equal(sfs_dirlock_acquire(dir, "state dir", &lock), 0);
    sfs_dirlock_release(lock);
}

static void test_bad_arguments(void **state)
{
    sfs_dirlock_t *lock = NULL;

    (void)state;
    assert_int_equal(sfs_dirlock_acquire(NULL, "x", &lock), -EINVAL);
    assert_int_equal(sfs_dirlock_acquire(dir, NULL, &lock), -EINVAL);
    assert_int_equal(sfs_dirlock_acquire(dir, "x", NULL), -EINVAL);
    assert_int_equal(sfs_dirlock_acquire("/nonexistent/sfs-dirlock", "storage target 9", &lock),
                     -ENOENT);
    assert_non_null(strstr(sfs_error_detail(), "storage target 9"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_second_claim_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dead_holder_released, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
