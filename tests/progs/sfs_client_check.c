/*
 * A client-library test program: each subcommand checks one area against a
 * running service and exits 0 only if every check passed.
 *
 *   sfs_client_check io PATH            striped writes/reads of many shapes
 *   sfs_client_check sparse PATH        holes, overlaps, truncate, sizes
 *   sfs_client_check listio PATH        strided list I/O and nonblocking I/O
 *   sfs_client_check coherent PATH      reads of chunk files handed to this
 *                                       process see later overwrites,
 *                                       shrinks and growth
 *   sfs_client_check overlap PATH       thousands of small writes, many
 *                                       overlapping, read back
 *   sfs_client_check creates DIR N      create N files, print "ACK name" each
 *   sfs_client_check verify DIR LOG     every ACKed name in LOG exists
 *   sfs_client_check errors DIR         error codes of bad requests
 *   sfs_client_check race-read PATH S   for S seconds read 1 MiB ranges, 4 in
 *                                       flight: every byte is the pattern or 0
 *   sfs_client_check sync PATH N MODE   N writes of 4 KiB through one open
 *                                       with MODE plain, dsync or sync
 *                                       (SFS_O_DSYNC, SFS_O_SYNC); the test
 *                                       counts the targets' fdatasync calls
 *   sfs_client_check probe PATH STEP N  write PATH on 4 targets, print
 *                                       "ready"; then N times: wait for the
 *                                       file STEP.i, look PATH up and write
 *                                       it, print both results ("step i
 *                                       lookup|write: rc: error"), and
 *                                       create STEP.i.done
 *   sfs_client_check race-truncate PATH S  for S seconds shrink and refill
 *                                       the file (run both at once: a read
 *                                       served from a mapped chunk file must
 *                                       survive the file shrinking)
 */
#include "sfs/sfs_client.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (cond) {                                                                                \
            printf("ok: ");                                                                        \
        } else {                                                                                   \
            printf("FAILED: ");                                                                    \
            failures++;                                                                            \
        }                                                                                          \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
    } while (0)

static void fill(uint8_t *buf, size_t length, uint64_t seed)
{
    for (size_t i = 0; i < length; i++) {
        buf[i] = (uint8_t)((seed + i) * 2654435761u >> 13);
    }
}

static sfs_client_t *connect_or_die(void)
{
    sfs_client_t *client;
    int           rc = sfs_client_connect(NULL, &client);

    if (rc) {
        fprintf(stderr, "connect: %s\n", sfs_client_error());
        exit(1);
    }
    return client;
}

static int check_io(sfs_client_t *client, const char *path)
{
    static const struct {
        uint64_t offset;
        size_t   length;
    } shapes[] = {{0, 1},       {0, 4096},          {100, 700000},     {524288 - 5, 10},
                  {0, 2097152}, {3000000, 5000000}, {1048576, 524288}, {7, 16777216 + 3}};
    sfs_open_params_t hints = {.field_mask =
                                   SFS_OPEN_PARAM_CHUNK_SIZE | SFS_OPEN_PARAM_STRIPE_COUNT,
                               .chunk_size   = 65536,
                               .stripe_count = 4};
    sfs_file_t       *file;
    sfs_stat_t        st;
    int               rc;

    rc = sfs_file_open(client, path, SFS_O_RDWR | SFS_O_CREAT | SFS_O_EXCL, 0644, &hints, &file);
    CHECK(rc == 0, "create %s with 64 KiB chunks on 4 targets (%s)", path,
          rc ? sfs_client_error() : "");
    if (rc) {
        return 1;
    }
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        uint8_t *out = malloc(shapes[s].length), *in = malloc(shapes[s].length);
        ssize_t  put, got;

        fill(out, shapes[s].length, s * 7919 + 1);
        put = sfs_file_pwrite(file, out, shapes[s].length, shapes[s].offset);
        memset(in, 0xEE, shapes[s].length);
        got = sfs_file_pread(file, in, shapes[s].length, shapes[s].offset);
        CHECK(put == (ssize_t)shapes[s].length && got == put &&
                  memcmp(in, out, shapes[s].length) == 0,
              "write+read %zu bytes at %lu: wrote %zd, read %zd, bytes %s", shapes[s].length,
              (unsigned long)shapes[s].offset, put, got,
              memcmp(in, out, shapes[s].length) == 0 ? "equal" : "DIFFER");
        free(out);
        free(in);
    }
    rc = sfs_file_stat(file, &st);
    CHECK(rc == 0 && st.size == 7 + 16777216 + 3, "size after the writes is %lu",
          (unsigned long)st.size);
    CHECK(st.target_count == 4 && st.chunk_size == 65536, "pattern: %u targets, chunk %lu",
          st.target_count, (unsigned long)st.chunk_size);
    sfs_file_close(file);
    return failures;
}

static int check_sparse(sfs_client_t *client, const char *path)
{
    sfs_file_t *file;
    uint64_t    size = 0;
    uint8_t    *buf = calloc(1, 3 << 20), *a = malloc(1 << 20), *b = malloc(1 << 20);
    uint8_t     one = 0x5A;
    int         rc;
    ssize_t     got;

    rc = sfs_file_open(client, path, SFS_O_RDWR | SFS_O_CREAT, 0644, NULL, &file);
    CHECK(rc == 0, "create %s (directory's pattern)", path);
    if (rc) {
        return 1;
    }
    got = sfs_file_pwrite(file, &one, 1, 10u << 20);
    sfs_file_size(file, &size);
    CHECK(got == 1 && size == (10u << 20) + 1, "one byte at 10 MiB: size %lu", (unsigned long)size);
    memset(buf, 0xEE, 1 << 20);
    got = sfs_file_pread(file, buf, 1 << 20, 4u << 20);
    {
        int zeros = 1;

        for (size_t i = 0; i < (1u << 20); i++) {
            zeros &= buf[i] == 0;
        }
        CHECK(got == (1 << 20) && zeros, "a hole reads as %zd zero bytes", got);
    }
    got = sfs_file_pread(file, buf, 100, (10u << 20) - 50);
    CHECK(got == 51 && buf[50] == 0x5A, "a read across the end returns %zd bytes (51)", got);
    got = sfs_file_pread(file, buf, 100, 20u << 20);
    CHECK(got == 0, "a read past the end returns %zd", got);

    /* overlapping writes: the later one wins where they overlap */
    fill(a, 1 << 20, 1);
    fill(b, 1 << 20, 2);
    sfs_file_pwrite(file, a, 1 << 20, 0);
    sfs_file_pwrite(file, b, 1 << 20, 1 << 19);
    got = sfs_file_pread(file, buf, 3 << 19, 0);
    CHECK(got == (3 << 19) && memcmp(buf, a, 1 << 19) == 0 &&
              memcmp(buf + (1 << 19), b, 1 << 20) == 0,
          "overlapping writes read back as first-then-second");

    rc = sfs_file_truncate(file, 700000);
    sfs_file_size(file, &size);
    CHECK(rc == 0 && size == 700000, "truncate to 700000: size %lu", (unsigned long)size);
    got = sfs_file_pread(file, buf, 1 << 20, 0);
    CHECK(got == 700000 && memcmp(buf, a, 1 << 19) == 0 &&
              memcmp(buf + (1 << 19), b, 700000 - (1 << 19)) == 0,
          "after truncate %zd bytes remain, unchanged", got);
    rc = sfs_file_truncate(file, 5000000);
    sfs_file_size(file, &size);
    got = sfs_file_pread(file, buf, 100, 4999900);
    CHECK(rc == 0 && size == 5000000 && got == 100 && buf[0] == 0 && buf[99] == 0,
          "truncate up to 5000000: size %lu, the tail reads as zeros", (unsigned long)size);
    rc = sfs_file_truncate(file, 0);
    sfs_file_size(file, &size);
    CHECK(rc == 0 && size == 0, "truncate to 0: size %lu", (unsigned long)size);
    sfs_file_close(file);
    free(buf);
    free(a);
    free(b);
    return failures;
}

static int check_listio(sfs_client_t *client, const char *path)
{
    enum { PIECES = 1000, PIECE = 333, STRIDE = 4096 };
    sfs_file_extent_t *extents = calloc(PIECES, sizeof(*extents));
    struct iovec       mem[2];
    uint8_t           *out = malloc(1 << 20), *in = malloc(1 << 20); /* >= PIECES * PIECE */
    uint8_t           *whole = malloc(PIECES * STRIDE);
    sfs_file_t        *file;
    sfs_request_t     *req;
    ssize_t            put, got;
    int                rc, ok = 1;

    rc = sfs_file_open(client, path, SFS_O_RDWR | SFS_O_CREAT | SFS_O_TRUNC, 0644, NULL, &file);
    CHECK(rc == 0, "create %s", path);
    if (rc) {
        return 1;
    }
    /* a strided view, written in reverse order from two memory pieces */
    for (int i = 0; i < PIECES; i++) {
        extents[i].offset = (uint64_t)(PIECES - 1 - i) * STRIDE + 17;
        extents[i].length = PIECE;
    }
    fill(out, PIECES * PIECE, 99);
    mem[0].iov_base = out;
    mem[0].iov_len  = 100000;
    mem[1].iov_base = out + 100000;
    mem[1].iov_len  = PIECES * PIECE - 100000;
    put             = sfs_file_writev(file, extents, PIECES, mem, 2);
    CHECK(put == PIECES * PIECE, "list write of %d pieces: %zd bytes", PIECES, put);
    got = sfs_file_pread(file, whole, PIECES * STRIDE, 0);
    for (int i = 0; i < PIECES; i++) {
        ok &= memcmp(whole + extents[i].offset, out + (size_t)i * PIECE, PIECE) == 0;
    }
    CHECK(got > 0 && ok, "contiguous read sees every piece where the list put it");
    mem[0].iov_base = in;
    mem[0].iov_len  = PIECES * PIECE;
    got             = sfs_file_readv(file, extents, PIECES, mem, 1);
    CHECK(got == PIECES * PIECE && memcmp(in, out, PIECES * PIECE) == 0,
          "list read returns the same bytes (%zd)", got);

    fill(out, 1 << 20, 5);
    rc = sfs_file_iwrite(file, out, 1 << 20, 1 << 22, &req);
    CHECK(rc == 0, "nonblocking write started");
    while (rc == 0 && !sfs_request_test(req)) {
    }
    put = rc == 0 ? sfs_request_wait(req) : rc;
    rc  = sfs_file_iread(file, in, 1 << 20, 1 << 22, &req);
    got = rc == 0 ? sfs_request_wait(req) : rc;
    CHECK(put == (1 << 20) && got == (1 << 20) && memcmp(in, out, 1 << 20) == 0,
          "nonblocking write/read of 1 MiB: %zd/%zd", put, got);
    sfs_file_close(file);
    free(extents);
    free(out);
    free(in);
    free(whole);
    return failures;
}

static int check_creates(sfs_client_t *client, const char *dir, long count)
{
    char name[4200];

    for (long i = 0; i < count; i++) {
        sfs_file_t *file;
        int         rc;

        snprintf(name, sizeof(name), "%s/f%06ld", dir, i);
        rc =
            sfs_file_open(client, name, SFS_O_WRONLY | SFS_O_CREAT | SFS_O_EXCL, 0644, NULL, &file);
        if (rc) {
            fprintf(stderr, "create %s: %s\n", name, sfs_client_error());
            return 1;
        }
        sfs_file_close(file);
        /* printed only after the service acknowledged the create */
        printf("ACK %s\n", name);
        fflush(stdout);
    }
    return 0;
}

static int check_verify(sfs_client_t *client, const char *log)
{
    FILE *file = fopen(log, "r");
    char  line[4300];
    long  acked = 0, found = 0;

    if (!file) {
        perror(log);
        return 1;
    }
    while (fgets(line, sizeof(line), file)) {
        sfs_stat_t st;

        if (strncmp(line, "ACK ", 4) != 0) {
            continue;
        }
        line[strcspn(line, "\n")] = '\0';
        acked++;
        if (sfs_lookup(client, line + 4, &st) == 0 && st.type == SFS_FILE_TYPE_REGULAR) {
            found++;
        } else {
            printf("FAILED: acknowledged create of %s is lost: %s\n", line + 4, sfs_client_error());
        }
    }
    fclose(file);
    CHECK(acked > 0 && found == acked, "%ld of %ld acknowledged creates survived", found, acked);
    return failures;
}

static int check_errors(sfs_client_t *client, const char *dir)
{
    char        path[4200], longname[600];
    sfs_file_t *file;
    sfs_stat_t  st;
    int         rc;

    snprintf(path, sizeof(path), "%s/missing", dir);
    rc = sfs_file_open(client, path, SFS_O_RDONLY, 0, NULL, &file);
    CHECK(rc == -ENOENT && strstr(sfs_client_error(), "missing"), "open of a missing file: %d (%s)",
          rc, sfs_client_error());
    snprintf(path, sizeof(path), "%s/exists", dir);
    rc = sfs_file_open(client, path, SFS_O_RDWR | SFS_O_CREAT | SFS_O_EXCL, 0644, NULL, &file);
    CHECK(rc == 0, "create %s", path);
    if (rc == 0) {
        sfs_file_close(file);
    }
    rc = sfs_file_open(client, path, SFS_O_RDWR | SFS_O_CREAT | SFS_O_EXCL, 0644, NULL, &file);
    CHECK(rc == -EEXIST, "exclusive create of an existing file: %d (%s)", rc, sfs_client_error());
    rc = sfs_mkdir(client, path, 0755);
    CHECK(rc == -EEXIST, "mkdir over a file: %d", rc);
    snprintf(path, sizeof(path), "%s/exists/below", dir);
    rc = sfs_mkdir(client, path, 0755);
    CHECK(rc == -ENOTDIR, "mkdir below a file: %d", rc);
    rc = sfs_rmdir(client, dir);
    CHECK(rc == -ENOTEMPTY, "rmdir of a non-empty directory: %d", rc);
    rc = sfs_unlink(client, dir);
    CHECK(rc == -EISDIR, "unlink of a directory: %d", rc);
    memset(longname, 'x', 300);
    longname[300] = '\0';
    snprintf(path, sizeof(path), "%s/%s", dir, longname);
    rc = sfs_mkdir(client, path, 0755);
    CHECK(rc == -ENAMETOOLONG, "a 300-byte name: %d (%s)", rc, sfs_client_error());
    rc = sfs_lookup(client, "", &st);
    CHECK(rc == -EINVAL, "an empty path: %d", rc);
    snprintf(path, sizeof(path), "stripefs:%s/./a/../exists", dir);
    rc = sfs_lookup(client, path, &st);
    CHECK(rc == 0, "'.' and '..' resolve lexically (%s)", path);
    rc = sfs_setpattern(client, dir, 12345, 0);
    CHECK(rc == -EINVAL, "a chunk size that is no power of two: %d (%s)", rc, sfs_client_error());
    snprintf(path, sizeof(path), "%s/d1", dir);
    sfs_mkdir(client, path, 0755);
    snprintf(longname, sizeof(longname), "%s/d1/d2", dir);
    rc = sfs_rename(client, path, longname);
    CHECK(rc == -EINVAL, "moving a directory into itself: %d", rc);
    {
        /* a create naming a start target the cluster does not have */
        sfs_open_params_t params = {.field_mask   = SFS_OPEN_PARAM_START_TARGET,
                                    .start_target = 4242};

        snprintf(path, sizeof(path), "%s/on-no-target", dir);
        rc = sfs_file_open(client, path, SFS_O_RDWR | SFS_O_CREAT, 0644, &params, &file);
        CHECK(rc == -EINVAL && strstr(sfs_client_error(), "target 4242"),
              "create on target 4242, which does not exist: %d (%s)", rc, sfs_client_error());
        if (rc == 0) {
            sfs_file_close(file);
        }
        rc = sfs_lookup(client, path, &st);
        CHECK(rc == -ENOENT, "no file left by the refused create: %d", rc);
    }
    return failures;
}

#define RACE_FILE_SIZE (8u << 20)
#define RACE_XFER      (1u << 20)
#define RACE_DEPTH     4

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The race file: one target, 1 MiB chunks, so that every 1 MiB read is one
 * contiguous range of one chunk file (what the server maps). */
static int race_open(sfs_client_t *client, const char *path, sfs_file_t **file_p)
{
    sfs_open_params_t hints = {.field_mask =
                                   SFS_OPEN_PARAM_CHUNK_SIZE | SFS_OPEN_PARAM_STRIPE_COUNT,
                               .chunk_size   = RACE_XFER,
                               .stripe_count = 1};
    int rc = sfs_file_open(client, path, SFS_O_RDWR | SFS_O_CREAT, 0644, &hints, file_p);

    if (rc) {
        fprintf(stderr, "open %s: %s\n", path, sfs_client_error());
    }
    return rc;
}

static int race_fill(sfs_file_t *file, uint8_t *pattern, uint64_t from)
{
    ssize_t put = sfs_file_pwrite(file, pattern + from, RACE_FILE_SIZE - from, from);

    if (put != (ssize_t)(RACE_FILE_SIZE - from)) {
        fprintf(stderr, "refill: %s\n", put < 0 ? sfs_client_error() : "short write");
        return 1;
    }
    return 0;
}

static int check_race_truncate(sfs_client_t *client, const char *path, double seconds)
{
    uint8_t    *pattern = malloc(RACE_FILE_SIZE);
    sfs_file_t *file;
    double      end  = now_s() + seconds;
    long        done = 0;
    uint64_t    cut  = 12345;

    if (!pattern || race_open(client, path, &file)) {
        free(pattern);
        return 1;
    }
    fill(pattern, RACE_FILE_SIZE, 0);
    if (race_fill(file, pattern, 0)) {
        failures++;
    }
    while (!failures && now_s() < end) {
        int rc;

        cut = (cut * 2654435761u + 40503) % RACE_FILE_SIZE;
        rc  = sfs_file_truncate(file, cut);
        if (rc) {
            fprintf(stderr, "truncate to %" PRIu64 ": %s\n", cut, sfs_client_error());
            failures++;
            break;
        }
        if (race_fill(file, pattern, cut)) {
            failures++;
            break;
        }
        done++;
    }
    CHECK(failures == 0 && done > 0, "%ld shrink-and-refill rounds on %s", done, path);
    sfs_file_close(file);
    free(pattern);
    return failures;
}

static int check_race_read(sfs_client_t *client, const char *path, double seconds)
{
    uint8_t       *pattern = malloc(RACE_FILE_SIZE), *buf = malloc(RACE_XFER * RACE_DEPTH);
    sfs_request_t *requests[RACE_DEPTH];
    uint64_t       offsets[RACE_DEPTH];
    sfs_file_t    *file;
    double         end   = now_s() + seconds;
    long           reads = 0, bad = 0;

    if (!pattern || !buf || race_open(client, path, &file)) {
        free(pattern);
        free(buf);
        return 1;
    }
    fill(pattern, RACE_FILE_SIZE, 0);
    while (!bad && now_s() < end) {
        for (int d = 0; d < RACE_DEPTH; d++) {
            offsets[d] = (uint64_t)((reads + d) % (RACE_FILE_SIZE / RACE_XFER)) * RACE_XFER;
            if (sfs_file_iread(file, buf + (size_t)d * RACE_XFER, RACE_XFER, offsets[d],
                               &requests[d])) {
                fprintf(stderr, "iread: %s\n", sfs_client_error());
                bad++;
                break;
            }
        }
        for (int d = 0; d < RACE_DEPTH && !bad; d++) {
            ssize_t        got = sfs_request_wait(requests[d]);
            const uint8_t *b   = buf + (size_t)d * RACE_XFER;

            if (got < 0) {
                fprintf(stderr, "read at %" PRIu64 ": %s\n", offsets[d], sfs_client_error());
                bad++;
                break;
            }
            /* a short read ends inside the range: the rest is not data */
            for (ssize_t i = 0; i < got; i++) {
                if (b[i] != 0 && b[i] != pattern[offsets[d] + (uint64_t)i]) {
                    fprintf(stderr, "byte %" PRIu64 " is %u: neither the pattern nor 0\n",
                            offsets[d] + (uint64_t)i, b[i]);
                    bad++;
                    break;
                }
            }
            reads++;
        }
    }
    CHECK(bad == 0 && reads > 0, "%ld reads of 1 MiB while the file shrank and grew", reads);
    sfs_file_close(file);
    free(pattern);
    free(buf);
    return failures;
}

/* Small writes in a 4 MiB span, at random places (many overlap earlier
 * ones), checked against a copy kept here: reads in between see them,
 * another handle sees them, and the file reads back identical after the
 * close. */
static int check_overlap(sfs_client_t *client, const char *path)
{
    enum { SPAN = 4 << 20, WRITES = 3000 };
    static const size_t sizes[] = {1, 100, 4096, 65536, 65536 + 7, 300000, 1 << 20};
    sfs_open_params_t   hints   = {.field_mask =
                                       SFS_OPEN_PARAM_CHUNK_SIZE | SFS_OPEN_PARAM_STRIPE_COUNT,
                                   .chunk_size   = 65536,
                                   .stripe_count = 4};
    uint8_t            *shadow = calloc(1, SPAN), *buf = malloc(1 << 20), *back = malloc(SPAN);
    uint64_t            rnd = 42, end = 0;
    sfs_file_t         *file, *other;
    int                 rc, bad_writes = 0, bad_reads = 0;
    ssize_t             got;

    rc = sfs_file_open(client, path, SFS_O_RDWR | SFS_O_CREAT | SFS_O_TRUNC, 0644, &hints, &file);
    CHECK(rc == 0, "create %s (%s)", path, rc ? sfs_client_error() : "");
    if (rc || !shadow || !buf || !back) {
        return 1;
    }
    for (int i = 0; i < WRITES; i++) {
        size_t   length;
        uint64_t offset;

        rnd    = rnd * 6364136223846793005ull + 1442695040888963407ull;
        length = sizes[(rnd >> 33) % (sizeof(sizes) / sizeof(sizes[0]))];
        offset = (rnd >> 11) % (SPAN - length);
        fill(buf, length, (uint64_t)i * 31 + 3);
        if (sfs_file_pwrite(file, buf, length, offset) != (ssize_t)length) {
            fprintf(stderr, "write %d (%zu at %" PRIu64 "): %s\n", i, length, offset,
                    sfs_client_error());
            bad_writes++;
            break;
        }
        memcpy(shadow + offset, buf, length);
        end = offset + length > end ? offset + length : end;
        if (i % 500 == 499) {
            got = sfs_file_pread(file, back, SPAN, 0);
            bad_reads += got != (ssize_t)end || memcmp(back, shadow, end) != 0;
        }
    }
    CHECK(bad_writes == 0 && bad_reads == 0,
          "%d writes of 1 B to 1 MiB, overlapping; reads in between see them all", WRITES);
    rc = sfs_file_open(client, path, SFS_O_RDONLY, 0, NULL, &other);
    if (rc == 0) {
        got = sfs_file_pread(other, back, SPAN, 0);
        CHECK(got == (ssize_t)end && memcmp(back, shadow, end) == 0,
              "another handle reads every byte (%zd of %" PRIu64 ")", got, end);
        sfs_file_close(other);
    }
    rc = sfs_file_close(file);
    CHECK(rc == 0, "close (%s)", rc ? sfs_client_error() : "no write failed");
    rc = sfs_file_open(client, path, SFS_O_RDONLY, 0, NULL, &file);
    if (rc == 0) {
        got = sfs_file_pread(file, back, SPAN, 0);
        CHECK(got == (ssize_t)end && memcmp(back, shadow, end) == 0,
              "reopened, the file reads back identical (%zd bytes)", got);
        sfs_file_close(file);
    }
    free(shadow);
    free(buf);
    free(back);
    return failures;
}

/* A same-host client reads chunk files itself once they are handed over
 * (after 1 MiB read from a target); what goes through the servers after
 * that must show in those reads. */
static int check_coherent(sfs_client_t *client, const char *path)
{
    enum { MiB = 1 << 20, SIZE = 8 * MiB };
    uint8_t    *a = malloc(SIZE), *b = malloc(SIZE), *want = malloc(SIZE), *got_buf = malloc(SIZE);
    sfs_file_t *file, *second;
    ssize_t     got;
    int         rc;

    rc = sfs_file_open(client, path, SFS_O_RDWR | SFS_O_CREAT | SFS_O_EXCL, 0644, NULL, &file);
    CHECK(rc == 0, "create %s (%s)", path, rc ? sfs_client_error() : "");
    if (rc) {
        return 1;
    }
    fill(a, SIZE, 11);
    fill(b, SIZE, 12);
    got = sfs_file_pwrite(file, a, SIZE, 0);
    for (int pass = 0; pass < 2; pass++) { /* the second pass reads handed-over files */
        memset(got_buf, 0xEE, SIZE);
        got = sfs_file_pread(file, got_buf, SIZE, 0);
        CHECK(got == SIZE && memcmp(got_buf, a, SIZE) == 0, "read %d of 8 MiB: %zd bytes, %s",
              pass + 1, got, memcmp(got_buf, a, SIZE) == 0 ? "equal" : "DIFFER");
    }
    /* an overwrite through the servers */
    sfs_file_pwrite(file, b + MiB, 2 * MiB, MiB);
    memcpy(want, a, SIZE);
    memcpy(want + MiB, b + MiB, 2 * MiB);
    got = sfs_file_pread(file, got_buf, SIZE, 0);
    CHECK(got == SIZE && memcmp(got_buf, want, SIZE) == 0, "an overwrite of 2 MiB shows: %s",
          memcmp(got_buf, want, SIZE) == 0 ? "equal" : "DIFFER");
    /* a shrink, then growth past a hole */
    rc  = sfs_file_truncate(file, 5 * MiB);
    got = sfs_file_pread(file, got_buf, SIZE, 0);
    CHECK(rc == 0 && got == 5 * MiB && memcmp(got_buf, want, 5 * MiB) == 0,
          "after a truncate to 5 MiB a read returns %zd bytes, unchanged", got);
    sfs_file_pwrite(file, b, MiB, 6 * MiB);
    memset(want + 5 * MiB, 0, MiB);
    memcpy(want + 6 * MiB, b, MiB);
    memset(got_buf, 0xEE, SIZE);
    got = sfs_file_pread(file, got_buf, SIZE, 0);
    CHECK(got == 7 * MiB && memcmp(got_buf, want, 7 * MiB) == 0,
          "a write at 6 MiB after it: %zd bytes, the hole zeros, %s", got,
          memcmp(got_buf, want, 7 * MiB) == 0 ? "equal" : "DIFFER");
    /* a second open of the file reads the same */
    rc = sfs_file_open(client, path, SFS_O_RDONLY, 0, NULL, &second);
    if (rc == 0) {
        for (int pass = 0; pass < 2; pass++) {
            memset(got_buf, 0xEE, SIZE);
            got = sfs_file_pread(second, got_buf, SIZE, 0);
        }
        CHECK(got == 7 * MiB && memcmp(got_buf, want, 7 * MiB) == 0,
              "a second open reads the same %zd bytes", got);
        sfs_file_close(second);
    }
    CHECK(rc == 0, "second open (%s)", rc ? sfs_client_error() : "");
    sfs_file_close(file);
    free(a);
    free(b);
    free(want);
    free(got_buf);
    return failures;
}

/* N writes through one open; with SFS_O_(D)SYNC each must be durable on its
 * target when it returns (the test counts the targets' fdatasync calls). */
static int check_sync(sfs_client_t *client, const char *path, long n, const char *mode)
{
    int         flags = SFS_O_RDWR | SFS_O_CREAT | SFS_O_TRUNC;
    uint8_t     buf[4096];
    sfs_file_t *file;
    long        done = 0;
    int         rc;

    if (strcmp(mode, "dsync") == 0) {
        flags |= SFS_O_DSYNC;
    } else if (strcmp(mode, "sync") == 0) {
        flags |= SFS_O_SYNC;
    } else if (strcmp(mode, "plain") != 0) {
        fprintf(stderr, "sync: mode is plain, dsync or sync\n");
        return 2;
    }
    rc = sfs_file_open(client, path, flags, 0644, NULL, &file);
    CHECK(rc == 0, "open %s with flags %#x (%s)", path, (unsigned)flags,
          rc ? sfs_client_error() : mode);
    if (rc) {
        return 1;
    }
    for (long i = 0; i < n; i++) {
        fill(buf, sizeof(buf), (uint64_t)i);
        done += sfs_file_pwrite(file, buf, sizeof(buf), (uint64_t)i * (1u << 20)) ==
                (ssize_t)sizeof(buf);
    }
    CHECK(done == n, "%ld of %ld writes of 4 KiB (%s)", done, n, mode);
    sfs_file_close(file);
    return failures;
}

/* Calls at moments the test chooses (it stops or kills servers in between),
 * printing what each returned and the error's words. */
static int check_probe(sfs_client_t *client, const char *path, const char *step, long n)
{
    sfs_open_params_t hints = {.field_mask =
                                   SFS_OPEN_PARAM_CHUNK_SIZE | SFS_OPEN_PARAM_STRIPE_COUNT,
                               .chunk_size   = 65536,
                               .stripe_count = 4};
    static uint8_t    buf[1 << 20];
    char              name[4200];
    sfs_file_t       *file;
    int               rc;

    rc = sfs_file_open(client, path, SFS_O_RDWR | SFS_O_CREAT, 0644, &hints, &file);
    if (rc == 0 && sfs_file_pwrite(file, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf)) {
        rc = -EIO;
    }
    if (rc) {
        fprintf(stderr, "probe %s: %s\n", path, sfs_client_error());
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    for (long i = 1; i <= n; i++) {
        sfs_stat_t st;
        ssize_t    put;
        FILE      *done;

        snprintf(name, sizeof(name), "%s.%ld", step, i);
        while (access(name, F_OK) != 0) {
            usleep(50000);
        }
        rc = sfs_lookup(client, path, &st);
        printf("step %ld lookup: %d: %s\n", i, rc, rc ? sfs_client_error() : "ok");
        put = sfs_file_pwrite(file, buf, sizeof(buf), 0);
        printf("step %ld write: %zd: %s\n", i, put, put < 0 ? sfs_client_error() : "ok");
        fflush(stdout);
        snprintf(name, sizeof(name), "%s.%ld.done", step, i);
        done = fopen(name, "w");
        if (done) {
            fclose(done);
        }
    }
    sfs_file_close(file);
    return 0;
}

int main(int argc, char **argv)
{
    sfs_client_t *client;
    int           rc;

    if (argc < 3) {
        fprintf(stderr, "usage: %s io|sparse|listio|creates|verify|errors ARGS\n", argv[0]);
        return 2;
    }
    client = connect_or_die();
    if (strcmp(argv[1], "io") == 0) {
        rc = check_io(client, argv[2]);
    } else if (strcmp(argv[1], "sparse") == 0) {
        rc = check_sparse(client, argv[2]);
    } else if (strcmp(argv[1], "listio") == 0) {
        rc = check_listio(client, argv[2]);
    } else if (strcmp(argv[1], "coherent") == 0) {
        rc = check_coherent(client, argv[2]);
    } else if (strcmp(argv[1], "overlap") == 0) {
        rc = check_overlap(client, argv[2]);
    } else if (strcmp(argv[1], "creates") == 0 && argc == 4) {
        rc = check_creates(client, argv[2], atol(argv[3]));
    } else if (strcmp(argv[1], "verify") == 0 && argc == 4) {
        rc = check_verify(client, argv[3]);
    } else if (strcmp(argv[1], "errors") == 0) {
        rc = check_errors(client, argv[2]);
    } else if (strcmp(argv[1], "probe") == 0 && argc == 5) {
        rc = check_probe(client, argv[2], argv[3], atol(argv[4]));
    } else if (strcmp(argv[1], "sync") == 0 && argc == 5) {
        rc = check_sync(client, argv[2], atol(argv[3]), argv[4]);
    } else if (strcmp(argv[1], "race-read") == 0 && argc == 4) {
        rc = check_race_read(client, argv[2], atof(argv[3]));
    } else if (strcmp(argv[1], "race-truncate") == 0 && argc == 4) {
        rc = check_race_truncate(client, argv[2], atof(argv[3]));
    } else {
        fprintf(stderr, "unknown subcommand %s\n", argv[1]);
        rc = 2;
    }
    sfs_client_disconnect(client);
    printf("%d check%s failed\n", failures, failures == 1 ? "" : "s");
    return rc ? 1 : 0;
}
