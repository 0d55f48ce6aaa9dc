/*
 * sfs_bench_mirror: who should write the second copy of a mirrored file
 * (docs/mirroring.md, "The data path")? One client process, through the
 * stripefs client library, no MPI:
 *
 *   sfs_bench_mirror one  -f PATH -S BYTES -x BLOCK [-q DEPTH] [-k FILE]
 *   sfs_bench_mirror both -f PATH -g PATH2 -S BYTES -x BLOCK [-q DEPTH] [-k FILE]
 *
 * "one" writes PATH, block after block (sfs_file_iwrite), DEPTH blocks in
 * flight (default 1: each write waits for its acknowledgement): for a
 * mirrored file (its directory set with setpattern --mirror) that is
 * primary forwarding, acknowledged once both copies hold
 * the block; for an unmirrored one, a single copy. "both" is the other
 * direction of the trade-off, the client writing both copies itself: the
 * same blocks go to two unmirrored files at once (sfs_file_iwrite on each,
 * then both waited for), placed by the script on the two members' hosts.
 * Then every file is synced (for "both" one after the other: the client
 * library has no asynchronous fsync; forwarding also syncs the two copies
 * one after the other). Timed: the writes and the syncs. Untimed, after:
 * every file is read back and every block checked (its index in its first
 * 8 bytes, the rest 0x5a). Prints one CSV line:
 *   csv,MODE,block,bytes,depth,seconds,MB_s,lat_us_median,lat_us_p99,lat_us_max
 * where a latency is one block's write, from its send until it is waited
 * for and acknowledged (both copies), in order. -k FILE (with -q 1): once
 * a quarter of the blocks are written, FILE is created and the writer waits
 * until it is removed (benchmarks/failover.sh kills a mirror member
 * meanwhile); the longest latency is then the pause the failover cost.
 */
#include "sfs_config.h" /* sfs_parse_size (common/sfs_units.c) */

#include <getopt.h>
#include <inttypes.h>
#include <sfs/sfs_client.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MIRROR_FILL 0x5a

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fail(const char *what, const char *path)
{
    fprintf(stderr, "sfs_bench_mirror: %s %s: %s\n", what, path, sfs_client_error());
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* A block in flight: its request to each file and when it was sent. */
typedef struct write_slot {
    sfs_request_t *req[2];
    int            sent; /* requests in req[] to wait for */
    double         t0;
} write_slot_t;

/* Waits for every request of a slot; 0 when each wrote the whole block. */
static int finish(write_slot_t *slot, uint64_t block, const char *path)
{
    int rc = 0;

    for (int f = 0; f < slot->sent; f++) {
        if (sfs_request_wait(slot->req[f]) != (ssize_t)block && rc == 0) {
            rc = fail("write", path);
        }
    }
    slot->sent = 0;
    return rc;
}

/* Reads PATH back and checks every block (untimed). */
static int verify(sfs_client_t *client, const char *path, uint64_t bytes, uint64_t block,
                  uint8_t *buf)
{
    sfs_file_t *file;
    int         rc = 0;

    if (sfs_file_open(client, path, SFS_O_RDONLY, 0, NULL, &file) != 0) {
        return fail("reopen", path);
    }
    for (uint64_t i = 0; i < bytes / block && rc == 0; i++) {
        uint64_t index;

        if (sfs_file_pread(file, buf, block, i * block) != (ssize_t)block) {
            rc = fail("read back", path);
            break;
        }
        memcpy(&index, buf, sizeof(index));
        for (uint64_t k = sizeof(index); k < block && index == i; k++) {
            if (buf[k] != MIRROR_FILL) {
                index = ~i;
            }
        }
        if (index != i) {
            fprintf(stderr, "sfs_bench_mirror: %s: block %" PRIu64 " reads back wrong\n", path, i);
            rc = 1;
        }
    }
    sfs_file_close(file);
    return rc;
}

/* -k FILE: create FILE, then wait (at most 60 s) until it is gone: the
 * script kills a mirror member and removes FILE once the process is dead,
 * so the blocks from here on meet the loss. Nothing is in flight meanwhile
 * (-q 1), so no block's latency holds the wait. 0, or 1 (said). */
static int kill_point(const char *kill_file)
{
    FILE           *k        = fopen(kill_file, "w");
    struct timespec tick     = {0, 1000000};
    double          deadline = now() + 60.0;

    if (!k || fclose(k) != 0) {
        fprintf(stderr, "sfs_bench_mirror: cannot create %s\n", kill_file);
        return 1;
    }
    while (access(kill_file, F_OK) == 0) {
        if (now() > deadline) {
            fprintf(stderr, "sfs_bench_mirror: %s was not removed within 60 s\n", kill_file);
            return 1;
        }
        nanosleep(&tick, NULL);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char   *path = NULL, *path2 = NULL, *kill_file = NULL, *mode = argc > 1 ? argv[1] : "";
    uint64_t      bytes = 0, block = 0, count;
    sfs_client_t *client;
    sfs_file_t   *files[2] = {NULL, NULL};
    uint8_t      *bufs;
    write_slot_t *slots;
    double       *lat, start, seconds;
    unsigned      depth = 1;
    int           both = strcmp(mode, "both") == 0, nfiles, opt, rc = 0;

    if (!both && strcmp(mode, "one") != 0) {
        fprintf(stderr, "usage: sfs_bench_mirror one|both -f PATH [-g PATH2] -S BYTES -x BLOCK "
                        "[-q DEPTH] [-k FILE]\n");
        return 2;
    }
    optind = 2;
    while ((opt = getopt(argc, argv, "f:g:S:x:q:k:")) != -1) {
        switch (opt) {
        case 'f':
            path = optarg;
            break;
        case 'g':
            path2 = optarg;
            break;
        case 'S':
            rc |= sfs_parse_size(optarg, &bytes);
            break;
        case 'x':
            rc |= sfs_parse_size(optarg, &block);
            break;
        case 'q':
            depth = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'k':
            kill_file = optarg;
            break;
        default:
            return 2;
        }
    }
    if (rc || !path || (both && !path2) || block < sizeof(uint64_t) || bytes < block ||
        bytes % block || depth < 1 || depth > 64 || (kill_file && depth != 1)) {
        fprintf(stderr, "sfs_bench_mirror: need -f PATH (and -g PATH2 for both), -x BLOCK of 8 "
                        "bytes or more, -S BYTES a multiple of it and -q DEPTH from 1 to 64 "
                        "(1 with -k)\n");
        return 2;
    }
    count  = bytes / block;
    nfiles = both ? 2 : 1;
    bufs   = malloc((size_t)depth * block);
    slots  = calloc(depth, sizeof(*slots));
    lat    = malloc(count * sizeof(*lat));
    if (!bufs || !slots || !lat) {
        fprintf(stderr, "sfs_bench_mirror: out of memory\n");
        return 1;
    }
    memset(bufs, MIRROR_FILL, (size_t)depth * block);
    if (sfs_client_connect(NULL, &client) != 0) {
        return fail("connect", "");
    }
    for (int f = 0; f < nfiles; f++) {
        const char *p = f ? path2 : path;

        if (sfs_file_open(client, p, SFS_O_WRONLY | SFS_O_CREAT | SFS_O_EXCL, 0644, NULL,
                          &files[f]) != 0) {
            return fail("create", p);
        }
    }
    start = now();
    /* block i goes into slot i % depth once block i - depth there is done;
     * after a failure nothing more is sent, what is in flight is waited for */
    for (uint64_t i = 0; i < count + depth; i++) {
        write_slot_t *slot = &slots[i % depth];
        uint8_t      *buf  = bufs + (size_t)(i % depth) * block;

        if (slot->sent) {
            int done = finish(slot, block, both ? path2 : path);

            rc             = rc ? rc : done;
            lat[i - depth] = now() - slot->t0;
        }
        if (i >= count || rc) {
            continue;
        }
        if (kill_file && i == count / 4 && (rc = kill_point(kill_file)) != 0) {
            continue;
        }
        memcpy(buf, &i, sizeof(i));
        slot->t0 = now();
        for (int f = 0; f < nfiles && rc == 0; f++) {
            if (sfs_file_iwrite(files[f], buf, block, i * block, &slot->req[f]) != 0) {
                rc = fail("iwrite", f ? path2 : path);
            } else {
                slot->sent++;
            }
        }
    }
    for (int f = 0; f < nfiles && rc == 0; f++) {
        if (sfs_file_sync(files[f]) != 0) {
            rc = fail("fsync", f ? path2 : path);
        }
    }
    seconds = now() - start;
    for (int f = 0; f < nfiles; f++) {
        sfs_file_close(files[f]);
    }
    for (int f = 0; f < nfiles && rc == 0; f++) {
        rc = verify(client, f ? path2 : path, bytes, block, bufs);
    }
    if (rc == 0) {
        qsort(lat, count, sizeof(*lat), cmp_double);
        printf("csv,%s,%" PRIu64 ",%" PRIu64 ",%u,%.6f,%.1f,%.0f,%.0f,%.0f\n", mode, block, bytes,
               depth, seconds, (double)bytes / seconds / 1e6, lat[count / 2] * 1e6,
               lat[(count * 99) / 100] * 1e6, lat[count - 1] * 1e6);
    }
    sfs_client_disconnect(client);
    free(lat);
    free(slots);
    free(bufs);
    return rc;
}
