/*
 * One byte-range lock of the metadata server (sfs_file_lock), held for a
 * while: for tests/service/test_service_locks.sh (a holder killed with
 * SIGKILL must not keep a waiter waiting; a lock needs the right access).
 *
 *   sfs_lock_hold PATH r|w s|x OFFSET LENGTH SECONDS
 *     open PATH read-only (r) or read-write (w, created 0644 if missing),
 *     print "pid P waiting", lock [OFFSET, +LENGTH) shared (s) or
 *     exclusive (x), print "granted after N ms", hold it SECONDS, release
 *     it, print "released".
 * Exits 0, or prints the error and exits with its errno (EACCES: 13).
 */
#include "sfs/sfs_client.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int fail(const char *step, int rc)
{
    fprintf(stderr, "FAILED: %s: %d (%s)\n", step, rc, sfs_client_error());
    return rc < 0 && -rc < 126 ? -rc : 1;
}

int main(int argc, char **argv)
{
    sfs_client_t *client;
    sfs_file_t   *file;
    uint64_t      lock_id, start;
    int           rc;

    if (argc != 7 || (argv[2][0] != 'r' && argv[2][0] != 'w') ||
        (argv[3][0] != 's' && argv[3][0] != 'x')) {
        fprintf(stderr, "usage: sfs_lock_hold PATH r|w s|x OFFSET LENGTH SECONDS\n");
        return 2;
    }
    if ((rc = sfs_client_connect(NULL, &client)) != 0) {
        return fail("connect", rc);
    }
    rc = sfs_file_open(client, argv[1], argv[2][0] == 'w' ? SFS_O_RDWR | SFS_O_CREAT : SFS_O_RDONLY,
                       0644, NULL, &file);
    if (rc) {
        rc = fail("open", rc);
        sfs_client_disconnect(client);
        return rc;
    }
    printf("pid %d waiting\n", (int)getpid());
    fflush(stdout);
    start = now_ms();
    rc    = sfs_file_lock(file, strtoull(argv[4], NULL, 0), strtoull(argv[5], NULL, 0),
                          argv[3][0] == 'x', &lock_id);
    if (rc) {
        /* (closed, so that the sanitizers' leak check stays quiet) */
        rc = fail("lock", rc);
        sfs_file_close(file);
        sfs_client_disconnect(client);
        return rc;
    }
    printf("granted after %llu ms\n", (unsigned long long)(now_ms() - start));
    fflush(stdout);
    sleep((unsigned)atoi(argv[6]));
    if ((rc = sfs_file_unlock(file, lock_id)) != 0) {
        rc = fail("unlock", rc);
        sfs_file_close(file);
        sfs_client_disconnect(client);
        return rc;
    }
    printf("released\n");
    sfs_file_close(file);
    sfs_client_disconnect(client);
    return 0;
}
