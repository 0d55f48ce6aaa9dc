/*
 * An open that outlives a move of its file's chunks
 * (tests/service/test_service_migrate.sh): opens PATH, reads its first
 * bytes (so the open holds the old pattern, and with same-host reads the
 * old chunk files), prints "opened" and waits for the end of its input
 * (the test migrates meanwhile). Then it reads the whole file and compares
 * it with LOCAL; with `write`, it first writes 4 KiB of 'Z' at offset
 * OFFSET into both the file and LOCAL (a write with the old pattern must
 * land on the new target, not be lost), and reads back. With --read-all it
 * first reads the whole file twice, 1.2 s apart (past 1 MiB per target, and
 * after the server has seen the client's pid proof, a same-host client is
 * handed the chunk files' descriptors) instead of its first bytes
 * (tests/faults/test_fault_mirror_primary_down.sh: an open that outlives a
 * mirror failover).
 *
 * With --stat OTHER, before that last read it stats OTHER and prints
 * "stat OTHER size N flags F" (test_fault_mirror_fence.sh: a file another
 * client has open for writing, whose size only its targets know).
 *
 *   sfs_migrate_reader [--read-all] [--stat OTHER] PATH LOCAL [write OFFSET]
 *
 * Prints "same N bytes" and exits 0, or says where it differs and exits 1.
 */
#include "sfs/sfs_client.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int fail(const char *step, long rc)
{
    fprintf(stderr, "FAILED: %s: %ld (%s)\n", step, rc, sfs_client_error());
    return 1;
}

int main(int argc, char **argv)
{
    sfs_client_t *client;
    sfs_file_t   *file;
    FILE         *local;
    char         *want, *got;
    long          size;
    const char   *stat_path = NULL;
    int           read_all  = 0;
    int           writing, rc;
    long          offset;
    ssize_t       n;

    while (argc > 1 && strncmp(argv[1], "--", 2) == 0) {
        if (strcmp(argv[1], "--read-all") == 0) {
            read_all = 1;
        } else if (strcmp(argv[1], "--stat") == 0 && argc > 2) {
            stat_path = argv[2];
            argc--;
            argv++;
        } else {
            fprintf(stderr, "sfs_migrate_reader: unknown option '%s'\n", argv[1]);
            return 2;
        }
        argc--;
        argv++;
    }
    writing = argc == 5 && strcmp(argv[3], "write") == 0;
    offset  = writing ? atol(argv[4]) : 0;
    if (argc != 3 && !writing) {
        fprintf(
            stderr,
            "usage: sfs_migrate_reader [--read-all] [--stat OTHER] PATH LOCAL [write OFFSET]\n");
        return 2;
    }
    local = fopen(argv[2], writing ? "r+" : "r");
    if (!local || fseek(local, 0, SEEK_END) != 0 || (size = ftell(local)) < 0) {
        perror(argv[2]);
        return 2;
    }
    want = malloc((size_t)size + 1);
    got  = malloc((size_t)size + 1);
    rewind(local);
    if (!want || !got || fread(want, 1, (size_t)size, local) != (size_t)size) {
        perror(argv[2]);
        return 2;
    }
    if ((rc = sfs_client_connect(NULL, &client)) != 0) {
        return fail("connect", rc);
    }
    rc = sfs_file_open(client, argv[1], writing ? SFS_O_RDWR : SFS_O_RDONLY, 0, NULL, &file);
    if (rc) {
        return fail("open", rc);
    }
    n = sfs_file_pread(file, got, read_all ? (size_t)size : (size < 4096 ? (size_t)size : 4096), 0);
    if (n < 0) {
        return fail("first read", n);
    }
    if (read_all) {
        nanosleep(&(struct timespec){.tv_sec = 1, .tv_nsec = 200000000}, NULL);
        n = sfs_file_pread(file, got, (size_t)size, 0);
        if (n < 0) {
            return fail("second read", n);
        }
    }
    printf("opened\n");
    fflush(stdout);
    while (getchar() != EOF) {
    }
    if (writing) {
        char z[4096];

        memset(z, 'Z', sizeof(z));
        n = sfs_file_pwrite(file, z, sizeof(z), (uint64_t)offset);
        if (n != (ssize_t)sizeof(z)) {
            return fail("write after the move", n);
        }
        if (offset + (long)sizeof(z) > size) {
            fprintf(stderr, "write offset past the end of the file\n");
            return 2;
        }
        memcpy(want + offset, z, sizeof(z));
        if (fseek(local, offset, SEEK_SET) != 0 || fwrite(z, 1, sizeof(z), local) != sizeof(z)) {
            perror(argv[2]);
            return 2;
        }
    }
    fclose(local);
    if (stat_path) {
        sfs_stat_t st;

        if ((rc = sfs_stat(client, stat_path, &st)) != 0) {
            return fail("stat", rc);
        }
        printf("stat %s size %" PRIu64 " flags %u\n", stat_path, st.size, st.flags);
    }
    n = sfs_file_pread(file, got, (size_t)size, 0);
    if (n != size) {
        return fail("read after the move", n);
    }
    for (long i = 0; i < size; i++) {
        if (got[i] != want[i]) {
            fprintf(stderr, "FAILED: %s differs at byte %ld: 0x%02x, want 0x%02x\n", argv[1], i,
                    (unsigned char)got[i], (unsigned char)want[i]);
            return 1;
        }
    }
    printf("same %ld bytes\n", size);
    if ((rc = sfs_file_close(file)) != 0) {
        return fail("close", rc);
    }
    sfs_client_disconnect(client);
    free(want);
    free(got);
    return 0;
}
