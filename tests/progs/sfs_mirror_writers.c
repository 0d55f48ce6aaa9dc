/*
 * One writer of tests/service/test_service_mirror.sh, started as several
 * ranks of one mpirun job (each passes its rank): every rank writes
 * `writes` pieces of 1..MAXLEN bytes at random offsets of one mirrored file,
 * each filled with its own byte pattern, so that the ranks' writes overlap
 * everywhere and race. The test then compares the two copies of each
 * chunk file byte for byte.
 *
 *   sfs_mirror_writers PATH RANK WRITES SPAN_BYTES MAXLEN [sync]
 *   sfs_mirror_writers bench PATH BYTES BLOCK mirror|plain   (one writer, MB/s)
 *   sfs_mirror_writers truncate PATH SIZE
 */
#include "sfs/sfs_client.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int bench(sfs_client_t *client, const char *path, uint64_t bytes, uint64_t block, int mirror)
{
    sfs_open_params_t params = {.field_mask = SFS_OPEN_PARAM_MIRROR, .mirror = mirror};
    sfs_file_t       *file;
    uint8_t          *buf = malloc(block);
    double            start;
    int               rc;

    if (!buf) {
        return 1;
    }
    memset(buf, 0x5a, block);
    rc = sfs_file_open(client, path, SFS_O_WRONLY | SFS_O_CREAT | SFS_O_EXCL, 0644, &params, &file);
    if (rc) {
        fprintf(stderr, "open %s: %s\n", path, sfs_client_error());
        free(buf);
        return 1;
    }
    start = now_s();
    for (uint64_t off = 0; off < bytes && rc == 0; off += block) {
        ssize_t n = sfs_file_pwrite(file, buf, block, off);

        rc = n == (ssize_t)block ? 0 : 1;
    }
    if (rc == 0) {
        rc = sfs_file_sync(file);
    }
    if (rc) {
        fprintf(stderr, "write %s: %s\n", path, sfs_client_error());
    } else {
        printf("%.1f\n", (double)bytes / (now_s() - start) / 1e6);
    }
    sfs_file_close(file);
    free(buf);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    sfs_open_params_t params = {.field_mask = SFS_OPEN_PARAM_MIRROR, .mirror = 1};
    sfs_client_t     *client;
    sfs_file_t       *file;
    uint8_t          *buf;
    unsigned          rank, writes, seed;
    uint64_t          span, maxlen;
    int               rc, sync;

    if (argc == 6 && strcmp(argv[1], "bench") == 0) {
        if (sfs_client_connect(NULL, &client) != 0) {
            fprintf(stderr, "connect: %s\n", sfs_client_error());
            return 1;
        }
        rc = bench(client, argv[2], strtoull(argv[3], NULL, 0), strtoull(argv[4], NULL, 0),
                   strcmp(argv[5], "mirror") == 0);
        sfs_client_disconnect(client);
        return rc;
    }
    if (argc == 4 && strcmp(argv[1], "truncate") == 0) {
        if (sfs_client_connect(NULL, &client) != 0 ||
            sfs_file_open(client, argv[2], SFS_O_RDWR, 0, NULL, &file) != 0 ||
            sfs_file_truncate(file, strtoull(argv[3], NULL, 0)) != 0) {
            fprintf(stderr, "truncate %s: %s\n", argv[2], sfs_client_error());
            return 1;
        }
        sfs_file_close(file);
        sfs_client_disconnect(client);
        return 0;
    }
    if (argc < 6) {
        fprintf(stderr, "usage: %s PATH RANK WRITES SPAN_BYTES MAXLEN [sync]\n", argv[0]);
        return 2;
    }
    rank   = (unsigned)strtoul(argv[2], NULL, 10);
    writes = (unsigned)strtoul(argv[3], NULL, 10);
    span   = strtoull(argv[4], NULL, 10);
    maxlen = strtoull(argv[5], NULL, 10);
    sync   = argc > 6 && strcmp(argv[6], "sync") == 0;
    seed   = 12345u + rank * 7919u;
    buf    = maxlen ? malloc(maxlen) : NULL;
    if (!buf || span <= maxlen) {
        return 2;
    }
    if (sfs_client_connect(NULL, &client) != 0) {
        fprintf(stderr, "connect: %s\n", sfs_client_error());
        return 1;
    }
    rc = sfs_file_open(client, argv[1], SFS_O_RDWR | SFS_O_CREAT, 0644, &params, &file);
    if (rc) {
        fprintf(stderr, "rank %u: open %s: %s\n", rank, argv[1], sfs_client_error());
        return 1;
    }
    for (unsigned i = 0; i < writes && rc == 0; i++) {
        uint64_t length = 1 + (uint64_t)rand_r(&seed) % maxlen;
        uint64_t offset = (uint64_t)rand_r(&seed) % (span - length);
        ssize_t  n;

        memset(buf, (int)(1 + (rank * 31 + i) % 255), length);
        n = sfs_file_pwrite(file, buf, length, offset);
        if (n != (ssize_t)length) {
            fprintf(stderr, "rank %u: write %u: %s\n", rank, i, sfs_client_error());
            rc = 1;
        }
    }
    if (rc == 0 && sync && sfs_file_sync(file) != 0) {
        fprintf(stderr, "rank %u: fsync: %s\n", rank, sfs_client_error());
        rc = 1;
    }
    sfs_file_close(file);
    sfs_client_disconnect(client);
    free(buf);
    if (rc == 0) {
        printf("rank %u: %u writes done\n", rank, writes);
    }
    return rc;
}
