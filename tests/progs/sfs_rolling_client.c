/*
 * The running job of tests/cluster/test_cluster_rolling_all.sh: one client,
 * connected once, that goes on making, writing, syncing, reading back,
 * checking, listing and removing files in DIR (a mirrored directory) until
 * STOPFILE exists, while the test kills and rejoins every server rank in
 * turn. Each round prints one line:
 *
 *   round N rc=R seconds=S [step=STEP error=...]
 *
 * A failover must be a pause inside a round, never an error. Exit 0 when
 * every round succeeded, 1 when one failed (it goes on after a failure, so
 * that the test sees them all), 2 on bad arguments or no connection.
 *
 *   sfs_rolling_client DIR STOPFILE
 */
#include "sfs/sfs_client.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ROUND_BYTES (256u * 1024u)
#define ROUND_PIECE (64u * 1024u)
#define ROUND_MAX   100000u

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fill(uint8_t *buf, unsigned round)
{
    for (unsigned i = 0; i < ROUND_BYTES; i++) {
        buf[i] = (uint8_t)(round * 29u + i * 13u + (i >> 12));
    }
}

/* Write the round's file, sync it, read it back and compare. */
static int write_and_check(sfs_client_t *client, const char *path, unsigned round, uint8_t *out,
                           uint8_t *in, const char **step)
{
    sfs_file_t *file;
    int         rc;

    *step = "create";
    rc    = sfs_file_open(client, path, SFS_O_WRONLY | SFS_O_CREAT | SFS_O_EXCL, 0640, NULL, &file);
    if (rc) {
        return rc;
    }
    fill(out, round);
    *step = "write";
    for (unsigned off = 0; off < ROUND_BYTES && rc == 0; off += ROUND_PIECE) {
        ssize_t n = sfs_file_pwrite(file, out + off, ROUND_PIECE, off);

        rc = n == (ssize_t)ROUND_PIECE ? 0 : (n < 0 ? (int)n : -5);
    }
    if (rc == 0) {
        *step = "sync";
        rc    = sfs_file_sync(file);
    }
    if (rc) {
        (void)sfs_file_close(file);
        return rc;
    }
    *step = "close";
    rc    = sfs_file_close(file);
    if (rc) {
        return rc;
    }
    *step = "open to read";
    rc    = sfs_file_open(client, path, SFS_O_RDONLY, 0, NULL, &file);
    if (rc) {
        return rc;
    }
    *step = "read";
    memset(in, 0, ROUND_BYTES);
    {
        ssize_t n = sfs_file_pread(file, in, ROUND_BYTES, 0);

        rc = n == (ssize_t)ROUND_BYTES ? 0 : (n < 0 ? (int)n : -5);
    }
    (void)sfs_file_close(file);
    if (rc == 0 && memcmp(in, out, ROUND_BYTES) != 0) {
        *step = "compare (the bytes read back differ)";
        rc    = -5;
    }
    return rc;
}

static int one_round(sfs_client_t *client, const char *dir, unsigned round, uint8_t *out,
                     uint8_t *in, const char **step)
{
    char       path[4096], sub[4096];
    sfs_stat_t st;
    int        rc;

    snprintf(path, sizeof(path), "%s/f%u", dir, round);
    rc = write_and_check(client, path, round, out, in, step);
    if (rc) {
        return rc;
    }
    *step = "stat";
    rc    = sfs_stat(client, path, &st);
    if (rc == 0 && st.size != ROUND_BYTES) {
        *step = "stat (wrong size)";
        return -5;
    }
    if (rc) {
        return rc;
    }
    *step = "mkdir";
    snprintf(sub, sizeof(sub), "%s/d%u", dir, round);
    rc = sfs_mkdir(client, sub, 0750);
    if (rc == 0 && round > 2) {
        /* the file of two rounds ago goes: removals under the failovers too */
        *step = "unlink";
        snprintf(path, sizeof(path), "%s/f%u", dir, round - 2);
        rc = sfs_unlink(client, path);
    }
    return rc;
}

int main(int argc, char **argv)
{
    sfs_client_t *client;
    uint8_t      *out, *in;
    struct stat   sb;
    int           failed = 0;

    if (argc != 3) {
        fprintf(stderr, "usage: %s DIR STOPFILE\n", argv[0]);
        return 2;
    }
    out = malloc(ROUND_BYTES);
    in  = malloc(ROUND_BYTES);
    if (!out || !in) {
        fprintf(stderr, "out of memory\n");
        return 2;
    }
    if (sfs_client_connect(NULL, &client) != 0) {
        fprintf(stderr, "connect: %s\n", sfs_client_error());
        return 2;
    }
    for (unsigned round = 1; round <= ROUND_MAX && stat(argv[2], &sb) != 0; round++) {
        const char *step  = "";
        double      start = now_s();
        int         rc    = one_round(client, argv[1], round, out, in, &step);

        if (rc) {
            failed = 1;
            printf("round %u rc=%d seconds=%.1f step=%s error=%s\n", round, rc, now_s() - start,
                   step, sfs_client_error());
            usleep(200000); /* (a failure that repeats does not flood the log) */
        } else {
            printf("round %u rc=0 seconds=%.1f\n", round, now_s() - start);
        }
        fflush(stdout);
    }
    sfs_client_disconnect(client);
    free(out);
    free(in);
    return failed;
}
