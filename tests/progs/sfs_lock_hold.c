/*
 * One byte-range lock of the metadata server (sfs_file_lock), held for a
 * while: for tests/service/test_service_locks.sh (a holder killed with
 * SIGKILL must not keep a waiter waiting; a lock needs the right access)
 * and tests/cluster/test_cluster_lock_cut.sh (a holder whose link is cut).
 *
 *   sfs_lock_hold PATH r|w s|x OFFSET LENGTH SECONDS [busy]
 *     open PATH read-only (r) or read-write (w, created 0644 if missing),
 *     print "pid P waiting", lock [OFFSET, +LENGTH) shared (s) or
 *     exclusive (x), print "granted after N ms (wall W)", hold it SECONDS,
 *     print "releasing (wall W)", release it, print "released (wall W)"
 *     (W: ms since the epoch).
 *     With `busy`, while it holds the lock it takes and releases other
 *     locks of the same mode past OFFSET + LENGTH, one after the other,
 *     each of which must succeed; then it prints "busy: N locks, longest
 *     call M ms".
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

static uint64_t wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int fail(const char *step, int rc)
{
    fprintf(stderr, "FAILED: %s: %d (%s)\n", step, rc, sfs_client_error());
    return rc < 0 && -rc < 126 ? -rc : 1;
}

/* For `seconds`, take and release locks past `from`, one after the other. */
static int hold_busy(sfs_file_t *file, uint64_t from, int exclusive, unsigned seconds)
{
    uint64_t end = now_ms() + seconds * 1000ull, longest = 0, count = 0;

    while (now_ms() < end) {
        uint64_t started = now_ms(), lock_id;
        int      rc      = sfs_file_lock(file, from + (count % 64) * 16, 8, exclusive, &lock_id);

        if (rc) {
            return fail("busy lock", rc);
        }
        if ((rc = sfs_file_unlock(file, lock_id)) != 0) {
            return fail("busy unlock", rc);
        }
        longest = now_ms() - started > longest ? now_ms() - started : longest;
        count++;
    }
    printf("busy: %llu locks, longest call %llu ms\n", (unsigned long long)count,
           (unsigned long long)longest);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    sfs_client_t *client;
    sfs_file_t   *file;
    uint64_t      lock_id, start;
    int           rc;

    if ((argc != 7 && !(argc == 8 && strcmp(argv[7], "busy") == 0)) ||
        (argv[2][0] != 'r' && argv[2][0] != 'w') || (argv[3][0] != 's' && argv[3][0] != 'x')) {
        fprintf(stderr, "usage: sfs_lock_hold PATH r|w s|x OFFSET LENGTH SECONDS [busy]\n");
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
    printf("granted after %llu ms (wall %llu)\n", (unsigned long long)(now_ms() - start),
           (unsigned long long)wall_ms());
    fflush(stdout);
    if (argc == 8) {
        rc = hold_busy(file, strtoull(argv[4], NULL, 0) + strtoull(argv[5], NULL, 0),
                       argv[3][0] == 'x', (unsigned)atoi(argv[6]));
        if (rc) {
            sfs_file_close(file);
            sfs_client_disconnect(client);
            return rc;
        }
    } else {
        sleep((unsigned)atoi(argv[6]));
    }
    /* (a waiter may hear of its grant before this process hears that its
     * UNLOCK is done: "releasing" is the time to compare with) */
    printf("releasing (wall %llu)\n", (unsigned long long)wall_ms());
    fflush(stdout);
    if ((rc = sfs_file_unlock(file, lock_id)) != 0) {
        rc = fail("unlock", rc);
        sfs_file_close(file);
        sfs_client_disconnect(client);
        return rc;
    }
    printf("released (wall %llu)\n", (unsigned long long)wall_ms());
    sfs_file_close(file);
    sfs_client_disconnect(client);
    return 0;
}
