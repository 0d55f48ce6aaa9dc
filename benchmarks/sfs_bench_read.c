/*
 * sfs_bench_read: the read bandwidth of one client process through the
 * stripefs client library, to compare with UCX's own bandwidth between two
 * processes (ucx_perftest). No MPI.
 *
 *   sfs_bench_read -p /bench/stream -S 1g -x 16m -r 5 [-q 2] [-c 1] [-H REGION] [-W]
 *   sfs_bench_read -C -S 1g -x 16m -r 5           (memcpy)
 *   sfs_bench_read -P /local/file -S 1g -x 16m -r 5   (local pread)
 *
 * Writes a file of S bytes striped over -c targets (default 1: one storage
 * rank), syncs it, reads it once and checks every byte (this also puts the
 * chunk files in the server's page cache), then reads it -r more times with
 * requests of -x bytes, -q of them in flight (sfs_file_iread), into one
 * reused buffer, as ucx_perftest reuses its buffer. With -H, each pass still
 * reads S bytes but over and over the file's first REGION bytes (REGION = XFER:
 * the same bytes every time, as ucx_perftest sends the same buffer every
 * time, so that both sides copy data that is in the CPU caches; without -H
 * every pass streams the whole file through memory). With -W, the timed
 * passes write instead (the same pieces of the same data, -q in flight with
 * sfs_file_iwrite, to the server's page cache: no fsync in the timed part);
 * afterwards the file is synced and every byte checked, untimed. With -C, no
 * stripefs at all: the same passes as memcpy from a SIZE-byte buffer in this
 * process, what one core copies when the data is not in its caches (the
 * ceiling of a read that streams from the server's page cache). With -P
 * FILE, no stripefs either: a local FILE of SIZE bytes is written, synced,
 * checked, and read in the same passes with pread (from the page cache: the
 * ceiling of the same-host short-circuit read). Prints one CSV line per
 * timed pass (with the slowest request's milliseconds and the number of
 * requests slower than 50 ms), then the best and the median pass:
 *   csv,label,xfer_bytes,depth,pass,bytes,seconds,MiB_s,max_request_ms,slow_requests
 *   csv,label,xfer_bytes,depth,best,...   and   ...,median,...
 */
#include "sfs_config.h" /* sfs_parse_size (common/sfs_units.c) */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sfs/sfs_client.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define READ_MAX_DEPTH 64

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "sfs_bench_read: %s: %s\n", what, sfs_client_error());
    exit(1);
}

/* -C: memcpy passes over a SIZE-byte buffer into one reused XFER buffer. */
static void copy_passes(uint64_t size, uint64_t xfer, int reps, char *buf, double *secs)
{
    char *source = malloc(size);

    if (!source) {
        fprintf(stderr, "sfs_bench_read: no memory for a %" PRIu64 "-byte buffer\n", size);
        exit(1);
    }
    memset(source, 0x5a, size);
    for (int r = 0; r < reps; r++) {
        double start = now();

        for (uint64_t off = 0; off < size; off += xfer) {
            memcpy(buf, source + off, xfer);
            __asm__ volatile("" : : "r"(buf) : "memory"); /* keep every copy */
        }
        secs[r] = now() - start;
    }
    free(source);
}

static uint64_t word_at(uint64_t offset)
{
    return offset * 0x9E3779B97F4A7C15ull + 1;
}

/* -P: a local file of SIZE bytes, written, synced and checked, then read in
 * XFER pieces with pread (from the page cache). */
static void pread_passes(const char *local, uint64_t size, uint64_t xfer, int reps, char *buf,
                         double *secs)
{
    int fd = open(local, O_RDWR | O_CREAT | O_TRUNC, 0600);

    if (fd < 0) {
        fprintf(stderr, "sfs_bench_read: cannot create %s: %s\n", local, strerror(errno));
        exit(1);
    }
    for (uint64_t off = 0; off < size; off += xfer) {
        for (uint64_t w = 0; w < xfer / 8; w++) {
            ((uint64_t *)buf)[w] = word_at(off + w * 8);
        }
        if (pwrite(fd, buf, xfer, (off_t)off) != (ssize_t)xfer) {
            fprintf(stderr, "sfs_bench_read: write %s: %s\n", local, strerror(errno));
            exit(1);
        }
    }
    if (fsync(fd) != 0) {
        fprintf(stderr, "sfs_bench_read: fsync %s: %s\n", local, strerror(errno));
        exit(1);
    }
    for (uint64_t off = 0; off < size; off += xfer) {
        if (pread(fd, buf, xfer, (off_t)off) != (ssize_t)xfer) {
            fprintf(stderr, "sfs_bench_read: read %s: %s\n", local, strerror(errno));
            exit(1);
        }
        for (uint64_t w = 0; w < xfer / 8; w++) {
            if (((uint64_t *)buf)[w] != word_at(off + w * 8)) {
                fprintf(stderr, "sfs_bench_read: wrong data in %s at %" PRIu64 "\n", local,
                        off + w * 8);
                exit(1);
            }
        }
    }
    for (int r = 0; r < reps; r++) {
        double start = now();

        for (uint64_t off = 0; off < size; off += xfer) {
            if (pread(fd, buf, xfer, (off_t)off) != (ssize_t)xfer) {
                fprintf(stderr, "sfs_bench_read: read %s: %s\n", local, strerror(errno));
                exit(1);
            }
        }
        secs[r] = now() - start;
    }
    close(fd);
    unlink(local);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

typedef struct pass_stats {
    double seconds;
    double max_request;   /* seconds, slowest request from issue to completion */
    int    slow_requests; /* requests that took more than 50 ms */
} pass_stats_t;

/* One pass over the file. */
static void pass(sfs_file_t *file, uint64_t size, uint64_t region, uint64_t xfer, int depth,
                 int writes, char *buf, pass_stats_t *stats)
{
    sfs_request_t *requests[READ_MAX_DEPTH];
    double         issued[READ_MAX_DEPTH];
    uint64_t       next = 0, done = 0;
    int            head = 0, inflight = 0;
    double         start = now(), took;

    memset(stats, 0, sizeof(*stats));

    while (done < size) {
        while (inflight < depth && next < size) {
            int slot = (head + inflight) % depth;

            issued[slot] = now();
            if (writes ? sfs_file_iwrite(file, buf + (size_t)slot * xfer, xfer, next % region,
                                         &requests[slot])
                       : sfs_file_iread(file, buf + (size_t)slot * xfer, xfer, next % region,
                                        &requests[slot])) {
                die(writes ? "iwrite" : "iread");
            }
            next += xfer;
            inflight++;
        }
        ssize_t got = sfs_request_wait(requests[head]);

        if (got != (ssize_t)xfer) {
            fprintf(stderr, "sfs_bench_read: %s returned %zd, not %" PRIu64 ": %s\n",
                    writes ? "write" : "read", got, xfer,
                    got < 0 ? sfs_client_error() : "short transfer");
            exit(1);
        }
        took = now() - issued[head];
        if (took > stats->max_request) {
            stats->max_request = took;
        }
        stats->slow_requests += took > 0.05;
        done += xfer;
        head = (head + 1) % depth;
        inflight--;
    }
    stats->seconds = now() - start;
}

int main(int argc, char **argv)
{
    const char       *path = "/bench-stream", *label = "run";
    uint64_t          size = 1ull << 30, xfer = 16ull << 20, stripes = 1, region = 0;
    int               reps = 5, depth = 1, copy_only = 0, writes = 0, opt;
    const char       *local = NULL;
    sfs_client_t     *client;
    sfs_file_t       *file;
    sfs_open_params_t params = {0};
    double           *secs;
    char             *buf;

    while ((opt = getopt(argc, argv, "p:S:x:r:q:c:l:H:CWP:h")) != -1) {
        switch (opt) {
        case 'p':
            path = optarg;
            break;
        case 'S':
            if (sfs_parse_size(optarg, &size)) {
                return 2;
            }
            break;
        case 'x':
            if (sfs_parse_size(optarg, &xfer) || xfer == 0 || xfer % 8) {
                return 2;
            }
            break;
        case 'r':
            reps = atoi(optarg);
            break;
        case 'q':
            depth = atoi(optarg);
            break;
        case 'c':
            stripes = strtoull(optarg, NULL, 10);
            break;
        case 'l':
            label = optarg;
            break;
        case 'C':
            copy_only = 1;
            break;
        case 'W':
            writes = 1;
            break;
        case 'P':
            local = optarg;
            break;
        case 'H':
            if (sfs_parse_size(optarg, &region) || region == 0) {
                return 2;
            }
            break;
        default:
            fprintf(opt == 'h' ? stdout : stderr,
                    "usage: sfs_bench_read [-p PATH] [-S SIZE] [-x XFER] [-r REPS] [-q DEPTH] "
                    "[-c STRIPES] [-l LABEL] [-H REGION] [-W] [-C] [-P LOCALFILE]\n");
            return opt == 'h' ? 0 : 2;
        }
    }
    if (!region) {
        region = size;
    }
    if (size % xfer || region % xfer || region > size || reps < 1 || depth < 1 ||
        depth > READ_MAX_DEPTH || stripes < 1) {
        fprintf(stderr,
                "sfs_bench_read: SIZE and REGION must be multiples of XFER, REGION <= SIZE; "
                "REPS >= 1; DEPTH 1..%d\n",
                READ_MAX_DEPTH);
        return 2;
    }
    buf  = aligned_alloc(4096, (size_t)((xfer * (uint64_t)depth + 4095) / 4096 * 4096));
    secs = calloc((size_t)reps, sizeof(*secs));
    if (!buf || !secs) {
        return 1;
    }
    if (copy_only || local) {
        if (local) {
            pread_passes(local, size, xfer, reps, buf, secs);
        } else {
            copy_passes(size, xfer, reps, buf, secs);
        }
        for (int r = 0; r < reps; r++) {
            printf("csv,%s,%" PRIu64 ",1,%d,%" PRIu64 ",%.4f,%.1f,-,-\n", label, xfer, r + 1, size,
                   secs[r], (double)size / secs[r] / (1 << 20));
        }
        qsort(secs, (size_t)reps, sizeof(*secs), compare_doubles);
        printf("csv,%s,%" PRIu64 ",1,best,%" PRIu64 ",%.4f,%.1f,-,-\n", label, xfer, size, secs[0],
               (double)size / secs[0] / (1 << 20));
        printf("csv,%s,%" PRIu64 ",1,median,%" PRIu64 ",%.4f,%.1f,-,-\n", label, xfer, size,
               secs[reps / 2], (double)size / secs[reps / 2] / (1 << 20));
        free(buf);
        free(secs);
        return 0;
    }
    if (sfs_client_connect(NULL, &client)) {
        die("connect");
    }

    /* the file: written in XFER pieces, every word telling its offset */
    params.field_mask   = SFS_OPEN_PARAM_STRIPE_COUNT;
    params.stripe_count = (uint32_t)stripes;
    if (sfs_file_open(client, path, SFS_O_CREAT | SFS_O_TRUNC | SFS_O_RDWR, 0644, &params, &file)) {
        die(path);
    }
    for (uint64_t off = 0; off < size; off += xfer) {
        for (uint64_t w = 0; w < xfer / 8; w++) {
            ((uint64_t *)buf)[w] = word_at(off + w * 8);
        }
        if (sfs_file_pwrite(file, buf, xfer, off) != (ssize_t)xfer) {
            die("write");
        }
    }
    if (sfs_file_sync(file)) {
        die("sync");
    }
    /* untimed pass: check every byte (and warm the server's page cache) */
    for (uint64_t off = 0; off < size; off += xfer) {
        if (sfs_file_pread(file, buf, xfer, off) != (ssize_t)xfer) {
            die("read");
        }
        for (uint64_t w = 0; w < xfer / 8; w++) {
            if (((uint64_t *)buf)[w] != word_at(off + w * 8)) {
                fprintf(stderr, "sfs_bench_read: wrong data at offset %" PRIu64 "\n", off + w * 8);
                return 1;
            }
        }
    }

    if (writes) {
        /* every piece gets the same bytes (filled once: no work in the
         * timed part but the transfer), checked after the passes */
        for (int d = 0; d < depth; d++) {
            for (uint64_t w = 0; w < xfer / 8; w++) {
                ((uint64_t *)(buf + (size_t)d * xfer))[w] = word_at(w * 8);
            }
        }
    }
    for (int r = 0; r < reps; r++) {
        pass_stats_t stats;

        pass(file, size, region, xfer, depth, writes, buf, &stats);
        secs[r] = stats.seconds;
        printf("csv,%s,%" PRIu64 ",%d,%d,%" PRIu64 ",%.4f,%.1f,%.1f,%d\n", label, xfer, depth,
               r + 1, size, secs[r], (double)size / secs[r] / (1 << 20), stats.max_request * 1e3,
               stats.slow_requests);
    }
    qsort(secs, (size_t)reps, sizeof(*secs), compare_doubles);
    printf("csv,%s,%" PRIu64 ",%d,best,%" PRIu64 ",%.4f,%.1f,-,-\n", label, xfer, depth, size,
           secs[0], (double)size / secs[0] / (1 << 20));
    printf("csv,%s,%" PRIu64 ",%d,median,%" PRIu64 ",%.4f,%.1f,-,-\n", label, xfer, depth, size,
           secs[reps / 2], (double)size / secs[reps / 2] / (1 << 20));
    if (writes) {
        /* untimed: synced, and every piece written holds what was sent */
        if (sfs_file_sync(file)) {
            die("sync");
        }
        for (uint64_t off = 0; off < region; off += xfer) {
            if (sfs_file_pread(file, buf, xfer, off) != (ssize_t)xfer) {
                die("read back");
            }
            for (uint64_t w = 0; w < xfer / 8; w++) {
                if (((uint64_t *)buf)[w] != word_at(w * 8)) {
                    fprintf(stderr, "sfs_bench_read: wrong data written at offset %" PRIu64 "\n",
                            off + w * 8);
                    return 1;
                }
            }
        }
    }
    if (sfs_file_close(file) || sfs_unlink(client, path)) {
        die("close/unlink");
    }
    sfs_client_disconnect(client);
    free(buf);
    free(secs);
    return 0;
}
