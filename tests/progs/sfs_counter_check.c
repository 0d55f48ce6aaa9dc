/*
 * Shared file pointers (sfs_file_counter) against a running service:
 *
 *   sfs_counter_check bench FILE N         N ADDs on one open; prints ops/s
 *   sfs_counter_check many FILE N          a live counter keeps its value
 *                                          while N other opens use theirs
 *   sfs_counter_check save FILE HANDLE V   SET V, keep the open in HANDLE
 *                                          (local2global), exit unclosed
 *   sfs_counter_check load HANDLE V        the open in HANDLE reads V back
 *   sfs_counter_check stale HANDLE         the open in HANDLE, made with a
 *                                          metadata server that has restarted
 *                                          since, gets -ESTALE, not a reset
 *   sfs_counter_check through FILE STOP    ADD 1 after ADD 1 on one open until
 *                                          the file STOP exists: each answer is
 *                                          the last plus one (none twice, none
 *                                          skipped), none fails; prints the
 *                                          count and the longest call
 *
 * Exit 0 when what it checks holds, 1 otherwise (a FAILED line says why).
 */
#include "sfs/sfs_client.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fail(const char *what, long rc)
{
    printf("FAILED: %s: %ld (%s)\n", what, rc, sfs_client_error());
    return 1;
}

static int open_file(sfs_client_t *client, const char *path, sfs_file_t **file_p)
{
    int rc = sfs_file_open(client, path, SFS_O_RDWR | SFS_O_CREAT, 0644, NULL, file_p);

    return rc ? fail("open", rc) : 0;
}

static int bench(sfs_client_t *client, const char *path, long n)
{
    sfs_file_t *file;
    uint64_t    before = 0;
    double      start;
    int         rc;

    if (open_file(client, path, &file)) {
        return 1;
    }
    start = now_s();
    for (long i = 0; i < n; i++) {
        rc = sfs_file_counter(file, SFS_COUNTER_ADD, 1, &before);
        if (rc) {
            return fail("ADD", rc);
        }
    }
    printf("counter: %ld ADDs in %.3f s: %.0f ops/s (last before %lu)\n", n, now_s() - start,
           (double)n / (now_s() - start), (unsigned long)before);
    sfs_file_close(file);
    return before == (uint64_t)n - 1 ? 0 : fail("the counter did not count", (long)before);
}

static int many(sfs_client_t *client, const char *path, long n)
{
    sfs_file_t *live, **files = calloc((size_t)n, sizeof(*files));
    uint64_t    before;
    int         rc;
    double      start = now_s();

    if (!files || open_file(client, path, &live)) {
        return 1;
    }
    if ((rc = sfs_file_counter(live, SFS_COUNTER_SET, 4242, &before)) != 0) {
        return fail("SET on the live open", rc);
    }
    for (long i = 0; i < n; i++) {
        if (open_file(client, path, &files[i]) ||
            (rc = sfs_file_counter(files[i], SFS_COUNTER_ADD, 1, &before)) != 0) {
            return fail("ADD on another open", rc);
        }
    }
    rc = sfs_file_counter(live, SFS_COUNTER_ADD, 0, &before);
    if (rc) {
        return fail("ADD 0 on the live open", rc);
    }
    printf("%ld other counters in %.1f s; the live one reads %lu\n", n, now_s() - start,
           (unsigned long)before);
    for (long i = 0; i < n; i++) {
        sfs_file_close(files[i]);
    }
    free(files);
    sfs_file_close(live);
    if (before != 4242) {
        printf("FAILED: the live counter was reset: %lu, not 4242\n", (unsigned long)before);
        return 1;
    }
    return 0;
}

static int save(sfs_client_t *client, const char *path, const char *handle, uint64_t value)
{
    sfs_file_t *file;
    char        buf[8192];
    size_t      length = sizeof(buf);
    uint64_t    before;
    FILE       *out;
    int         rc;

    if (open_file(client, path, &file)) {
        return 1;
    }
    if ((rc = sfs_file_counter(file, SFS_COUNTER_SET, value, &before)) != 0) {
        return fail("SET", rc);
    }
    if ((rc = sfs_file_local2global(file, buf, &length)) != 0) {
        return fail("local2global", rc);
    }
    out = fopen(handle, "w");
    if (!out || fwrite(buf, 1, length, out) != length || fclose(out) != 0) {
        printf("FAILED: cannot write %s: %s\n", handle, strerror(errno));
        return 1;
    }
    printf("set the counter to %lu; the open is in %s\n", (unsigned long)value, handle);
    return 0; /* not closed: a close forgets the counter */
}

/* The open that `save` left in the file `handle`. */
static int open_handle(sfs_client_t *client, const char *handle, sfs_file_t **file_p)
{
    char   buf[8192];
    size_t length;
    FILE  *in = fopen(handle, "r");
    int    rc;

    if (!in) {
        printf("FAILED: cannot read %s: %s\n", handle, strerror(errno));
        return 1;
    }
    length = fread(buf, 1, sizeof(buf), in);
    fclose(in);
    rc = sfs_file_global2local(client, buf, length, file_p);
    return rc ? fail("global2local", rc) : 0;
}

static int load(sfs_client_t *client, const char *handle, uint64_t expect)
{
    sfs_file_t *file;
    uint64_t    before;
    int         rc;

    if (open_handle(client, handle, &file)) {
        return 1;
    }
    if ((rc = sfs_file_counter(file, SFS_COUNTER_ADD, 0, &before)) != 0) {
        return fail("ADD 0", rc);
    }
    printf("the counter reads %lu (expected %lu)\n", (unsigned long)before, (unsigned long)expect);
    sfs_file_close(file);
    return before == expect ? 0 : 1;
}

static int stale(sfs_client_t *client, const char *handle)
{
    sfs_file_t *file;
    uint64_t    before;
    int         rc;

    if (open_handle(client, handle, &file)) {
        return 1;
    }
    rc = sfs_file_counter(file, SFS_COUNTER_ADD, 1, &before);
    if (rc == 0) {
        printf("FAILED: after a restart the counter reads %lu: it was reset\n",
               (unsigned long)before);
        return 1;
    }
    printf("after a restart: %d (%s)\n", rc, sfs_client_error());
    sfs_file_close(file);
    return rc == -ESTALE ? 0 : 1;
}

static int through(sfs_client_t *client, const char *path, const char *stop)
{
    sfs_file_t *file;
    uint64_t    before = 0, n = 0;
    double      longest = 0;
    int         rc;

    if (open_file(client, path, &file)) {
        return 1;
    }
    printf("connected\n");
    while (access(stop, F_OK) != 0) {
        double start = now_s();

        rc = sfs_file_counter(file, SFS_COUNTER_ADD, 1, &before);
        if (rc) {
            return fail("ADD", rc);
        }
        if (now_s() - start > longest) {
            longest = now_s() - start;
        }
        if (before != n) {
            printf("FAILED: ADD number %lu was answered %lu, not %lu (%s)\n", (unsigned long)n + 1,
                   (unsigned long)before, (unsigned long)n,
                   before < n ? "an offset handed out twice" : "a range skipped");
            return 1;
        }
        n++;
    }
    rc = sfs_file_counter(file, SFS_COUNTER_ADD, 0, &before);
    if (rc) {
        return fail("the last ADD 0", rc);
    }
    sfs_file_close(file);
    printf("through: %lu ADDs, each answer the last plus one, the counter at %lu; longest call "
           "%.2f s\n",
           (unsigned long)n, (unsigned long)before, longest);
    return before == n ? 0 : fail("the counter is not the count of ADDs", (long)before);
}

int main(int argc, char **argv)
{
    sfs_client_t *client;
    int           rc;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 3) {
        fprintf(stderr, "usage: see the comment at the top of %s\n", __FILE__);
        return 2;
    }
    rc = sfs_client_connect(NULL, &client);
    if (rc) {
        return fail("connect", rc);
    }
    if (strcmp(argv[1], "bench") == 0 && argc == 4) {
        rc = bench(client, argv[2], atol(argv[3]));
    } else if (strcmp(argv[1], "many") == 0 && argc == 4) {
        rc = many(client, argv[2], atol(argv[3]));
    } else if (strcmp(argv[1], "save") == 0 && argc == 5) {
        rc = save(client, argv[2], argv[3], strtoull(argv[4], NULL, 10));
    } else if (strcmp(argv[1], "load") == 0 && argc == 4) {
        rc = load(client, argv[2], strtoull(argv[3], NULL, 10));
    } else if (strcmp(argv[1], "stale") == 0 && argc == 3) {
        rc = stale(client, argv[2]);
    } else if (strcmp(argv[1], "through") == 0 && argc == 4) {
        rc = through(client, argv[2], argv[3]);
    } else {
        fprintf(stderr, "%s: bad arguments\n", argv[0]);
        rc = 2;
    }
    sfs_client_disconnect(client);
    return rc;
}
