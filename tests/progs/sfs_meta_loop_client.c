/*
 * The client of tests/cluster/test_cluster_meta_mgmt_away.sh: connects
 * once (the map it holds is all it will get while management is away),
 * then, until the STOP file exists, makes a directory DIR/dN, stats it and
 * lists DIR, one round after another (N from 1), and prints each round's
 * outcome with its wall-clock end time, so that the test can tell which
 * rounds ended while management was cut off.
 *
 *   sfs_meta_loop_client DIR STOP
 *
 * Prints "connected", then per round "round N rc=R end=EPOCH_S ms=T
 * error=...". Exit 0 once STOP exists (the rounds' outcomes are the test's
 * to judge), 1 on a failed connect.
 */
#include "sfs/sfs_client.h"
#include "sfs_go_file.h"

#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOOP_CLIENT_MAX_NAMES 16

static double wall_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int round_once(sfs_client_t *client, const char *dir, unsigned n)
{
    static sfs_dir_entry_t entries[LOOP_CLIENT_MAX_NAMES];
    char                   path[4096];
    sfs_stat_t             st;
    uint32_t               count = 0;
    int                    eof   = 0;
    int                    rc;

    snprintf(path, sizeof(path), "%s/d%u", dir, n);
    rc = sfs_mkdir(client, path, 0755);
    if (rc == 0) {
        rc = sfs_stat(client, path, &st);
    }
    if (rc == 0) {
        rc = sfs_readdir(client, dir, "", entries, LOOP_CLIENT_MAX_NAMES, &count, &eof);
    }
    return rc;
}

int main(int argc, char **argv)
{
    sfs_client_t *client;
    struct stat   sb;

    if (argc != 3) {
        fprintf(stderr, "usage: %s DIR STOP\n", argv[0]);
        return 2;
    }
    if (sfs_client_connect(NULL, &client) != 0) {
        fprintf(stderr, "connect: %s\n", sfs_client_error());
        return 1;
    }
    printf("connected\n");
    fflush(stdout);
    for (unsigned n = 1; stat(argv[2], &sb) != 0; n++) {
        uint64_t start = sfs_go_now_ms();
        int      rc    = round_once(client, argv[1], n);

        printf("round %u rc=%d end=%.3f ms=%" PRIu64 " error=%s\n", n, rc, wall_s(),
               sfs_go_now_ms() - start, rc ? sfs_client_error() : "");
        fflush(stdout);
        usleep(100000);
    }
    sfs_client_disconnect(client);
    return 0;
}
