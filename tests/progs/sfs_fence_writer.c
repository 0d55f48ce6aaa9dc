/*
 * The writer of tests/faults/test_fault_mirror_fence.sh: one client, one
 * mirrored file, numbered 4 KiB records written one after the other at
 * record * 4096, each printed with the wall-clock time once acknowledged.
 * The client keeps the map it started with until a request fails (then it
 * refreshes it and sends again: client/sfs_client_mirror.c), so it keeps
 * writing to the old primary for as long as that one acknowledges.
 *
 *   sfs_fence_writer write PATH STOPFILE MAX   (until STOPFILE exists)
 *   sfs_fence_writer write-on PATH STOPFILE MAX
 *   sfs_fence_writer check FILE COUNT          (records 0..COUNT-1 of a local file)
 *
 * write-on does not stop at a failed write: it prints "refused N TIME
 * error" and writes the same record again 20 ms later, so that the
 * acknowledged records stay 0..done-1 (the writer on the old side of a cut,
 * with STRIPEFS_TEST_MIRROR_OLD_MAP=1: it never leaves the old primary).
 */
#include "sfs/sfs_client.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RECORD 4096

static void record_fill(uint8_t *buf, unsigned i)
{
    for (unsigned j = 0; j < RECORD; j++) {
        buf[j] = (uint8_t)(i * 131u + j * 7u + 1u);
    }
    snprintf((char *)buf, 24, "record %08u\n", i);
}

static int write_loop(const char *path, const char *stop, unsigned max, int keep_going)
{
    sfs_open_params_t params = {.field_mask = SFS_OPEN_PARAM_MIRROR, .mirror = 1};
    sfs_client_t     *client;
    sfs_file_t       *file;
    uint8_t           buf[RECORD];
    struct stat       st;
    unsigned          i;
    int               rc = 0;

    if (sfs_client_connect(NULL, &client) != 0) {
        fprintf(stderr, "connect: %s\n", sfs_client_error());
        return 1;
    }
    if (sfs_file_open(client, path, SFS_O_WRONLY | SFS_O_CREAT, 0644, &params, &file) != 0) {
        fprintf(stderr, "open %s: %s\n", path, sfs_client_error());
        sfs_client_disconnect(client);
        return 1;
    }
    for (i = 0; i < max && stat(stop, &st) != 0; i++) {
        struct timespec ts;

        record_fill(buf, i);
        if (sfs_file_pwrite(file, buf, RECORD, (uint64_t)i * RECORD) != RECORD) {
            if (keep_going) {
                clock_gettime(CLOCK_REALTIME, &ts);
                printf("refused %u %lld.%06ld %s\n", i, (long long)ts.tv_sec, ts.tv_nsec / 1000,
                       sfs_client_error());
                fflush(stdout);
                usleep(20000);
                i--; /* the same record again */
                continue;
            }
            fprintf(stderr, "write of record %u: %s\n", i, sfs_client_error());
            rc = 1;
            break;
        }
        clock_gettime(CLOCK_REALTIME, &ts);
        printf("ack %u %lld.%06ld\n", i, (long long)ts.tv_sec, ts.tv_nsec / 1000);
        fflush(stdout);
        usleep(20000);
    }
    printf("done %u\n", i);
    if (sfs_file_close(file) != 0 && rc == 0) {
        fprintf(stderr, "close %s: %s\n", path, sfs_client_error());
        rc = 1;
    }
    sfs_client_disconnect(client);
    return rc;
}

static int check(const char *path, unsigned count)
{
    FILE    *f = fopen(path, "rb");
    uint8_t  want[RECORD], got[RECORD];
    unsigned bad = 0;

    if (!f) {
        perror(path);
        return 1;
    }
    for (unsigned i = 0; i < count; i++) {
        record_fill(want, i);
        if (fread(got, 1, RECORD, f) != RECORD || memcmp(got, want, RECORD) != 0) {
            if (bad++ < 5) {
                fprintf(stderr, "%s: record %u missing or different\n", path, i);
            }
        }
    }
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: %u of %u acknowledged records missing or different\n", path, bad,
                count);
        return 1;
    }
    printf("%s: all %u acknowledged records present and identical\n", path, count);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && (strcmp(argv[1], "write") == 0 || strcmp(argv[1], "write-on") == 0)) {
        return write_loop(argv[2], argv[3], (unsigned)strtoul(argv[4], NULL, 10),
                          strcmp(argv[1], "write-on") == 0);
    }
    if (argc == 4 && strcmp(argv[1], "check") == 0) {
        return check(argv[2], (unsigned)strtoul(argv[3], NULL, 10));
    }
    fprintf(stderr, "usage: %s write|write-on PATH STOPFILE MAX | check FILE COUNT\n", argv[0]);
    return 2;
}
