/*
 * sfs_bench_lat: the latency of single metadata calls, one process, one
 * call at a time (benchmarks/create_latency.sh; docs/metadata.md):
 *
 *   sfs_bench_lat -d DIR [-n N] [-D] [-l LABEL] [-x]
 *
 * In DIR, which must not exist (made fresh: ext4 is slow in a directory
 * whose files were just deleted), N files are created (open O_CREAT |
 * O_WRONLY | O_EXCL, then close), then each is stat'ed, then each removed.
 * Each call is timed on its own in this process (CLOCK_MONOTONIC), so what
 * it prints is the client's round trip: for stripefs through the POSIX
 * preload (run it under stripefs-run), the client library, the wire and
 * the server together; `stripefs-ctl stats meta` says which part was the
 * server's. -D: fsync each created file and then DIR after every create
 * and unlink, as a file system whose acknowledgements are durable does
 * (ext4's baseline with an fsync per operation).
 *
 * Prints one CSV line per call kind, "lat,LABEL,CALL,N,MEAN_US,P50_US,
 * P99_US,MAX_US" (-x: a header first). CALL is create (open + close),
 * open, close, stat, unlink. Every stat is checked (a regular file of size
 * 0); a failed call stops the run with its errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { CALL_CREATE, CALL_OPEN, CALL_CLOSE, CALL_STAT, CALL_UNLINK, CALL_COUNT };

static const char *const call_names[CALL_COUNT] = {"create", "open", "close", "stat", "unlink"};

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static void report(const char *label, int call, uint64_t *ns, long n)
{
    double sum = 0;

    for (long i = 0; i < n; i++) {
        sum += (double)ns[i];
    }
    qsort(ns, (size_t)n, sizeof(*ns), cmp_u64);
    printf("lat,%s,%s,%ld,%.1f,%.1f,%.1f,%.1f\n", label, call_names[call], n, sum / (double)n / 1e3,
           (double)ns[(n - 1) / 2] / 1e3, (double)ns[(n * 99 + 99) / 100 - 1] / 1e3,
           (double)ns[n - 1] / 1e3);
}

static int sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    int rc;

    if (fd < 0) {
        return -1;
    }
    rc = fsync(fd);
    close(fd);
    return rc;
}

static void usage(const char *prog)
{
    fprintf(stderr, "usage: %s -d DIR [-n N] [-D] [-l LABEL] [-x]\n", prog);
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *label = "local";
    long        n       = 1000;
    int         durable = 0, header = 0, opt;
    uint64_t   *ns[CALL_COUNT];
    char        path[PATH_MAX];

    while ((opt = getopt(argc, argv, "d:n:Dl:x")) != -1) {
        switch (opt) {
        case 'd':
            dir = optarg;
            break;
        case 'n':
            n = strtol(optarg, NULL, 10);
            break;
        case 'D':
            durable = 1;
            break;
        case 'l':
            label = optarg;
            break;
        case 'x':
            header = 1;
            break;
        default:
            usage(argv[0]);
            return 2;
        }
    }
    if (!dir || n < 1 || n > 10000000) {
        usage(argv[0]);
        return 2;
    }
    for (int c = 0; c < CALL_COUNT; c++) {
        ns[c] = calloc((size_t)n, sizeof(uint64_t));
        if (!ns[c]) {
            fprintf(stderr, "sfs_bench_lat: out of memory for %ld samples\n", n);
            return 1;
        }
    }
    if (mkdir(dir, 0755) != 0) {
        fprintf(stderr, "sfs_bench_lat: mkdir %s: %s (it must not exist)\n", dir, strerror(errno));
        return 1;
    }
    for (long i = 0; i < n; i++) {
        uint64_t t0, t1, t2;
        int      fd;

        snprintf(path, sizeof(path), "%s/f.%ld", dir, i);
        t0 = now_ns();
        fd = open(path, O_CREAT | O_WRONLY | O_EXCL, 0644);
        t1 = now_ns();
        if (fd < 0 || (durable && fsync(fd) != 0)) {
            fprintf(stderr, "sfs_bench_lat: create %s: %s\n", path, strerror(errno));
            return 1;
        }
        if (close(fd) != 0 || (durable && sync_dir(dir) != 0)) {
            fprintf(stderr, "sfs_bench_lat: close %s: %s\n", path, strerror(errno));
            return 1;
        }
        t2                 = now_ns();
        ns[CALL_OPEN][i]   = t1 - t0;
        ns[CALL_CLOSE][i]  = t2 - t1;
        ns[CALL_CREATE][i] = t2 - t0;
    }
    for (long i = 0; i < n; i++) {
        struct stat st;
        uint64_t    t0;

        snprintf(path, sizeof(path), "%s/f.%ld", dir, i);
        t0 = now_ns();
        if (stat(path, &st) != 0) {
            fprintf(stderr, "sfs_bench_lat: stat %s: %s\n", path, strerror(errno));
            return 1;
        }
        ns[CALL_STAT][i] = now_ns() - t0;
        if (!S_ISREG(st.st_mode) || st.st_size != 0) {
            fprintf(stderr, "sfs_bench_lat: stat %s: mode %o size %lld, not an empty file\n", path,
                    (unsigned)st.st_mode, (long long)st.st_size);
            return 1;
        }
    }
    for (long i = 0; i < n; i++) {
        uint64_t t0;

        snprintf(path, sizeof(path), "%s/f.%ld", dir, i);
        t0 = now_ns();
        if (unlink(path) != 0 || (durable && sync_dir(dir) != 0)) {
            fprintf(stderr, "sfs_bench_lat: unlink %s: %s\n", path, strerror(errno));
            return 1;
        }
        ns[CALL_UNLINK][i] = now_ns() - t0;
    }
    if (rmdir(dir) != 0) {
        fprintf(stderr, "sfs_bench_lat: rmdir %s: %s\n", dir, strerror(errno));
        return 1;
    }
    if (header) {
        printf("lat,label,call,n,mean_us,p50_us,p99_us,max_us\n");
    }
    for (int c = 0; c < CALL_COUNT; c++) {
        report(label, c, ns[c], n);
        free(ns[c]);
    }
    return 0;
}
