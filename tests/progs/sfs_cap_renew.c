/*
 * A file kept open for longer than a capability lives (the config's
 * security.capability_lifetime): writes and reads must go on, on the handle
 * that opened it and on one passed on as MPI-IO passes it to other ranks
 * (sfs_file_local2global/global2local), because the client renews the
 * capability at half its life. Without renewal the targets refuse them
 * (the capability expired).
 *
 *   sfs_cap_renew PATH SECONDS     open PATH (created), write, sleep, write,
 *                                  read back through both handles
 * Prints PASSED and exits 0, or names the step that failed and exits 1.
 */
#include "sfs/sfs_client.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SFS_RENEW_BYTES (1u << 20)

static int fail(const char *step, long rc)
{
    fprintf(stderr, "FAILED: %s: %ld (%s)\n", step, rc, sfs_client_error());
    return 1;
}

int main(int argc, char **argv)
{
    sfs_client_t *client;
    sfs_file_t   *file, *passed;
    uint8_t      *data, *back, handle[16384];
    size_t        handle_length = sizeof(handle);
    int           rc;

    if (argc != 3 || atoi(argv[2]) <= 0) {
        fprintf(stderr, "usage: sfs_cap_renew PATH SECONDS\n");
        return 2;
    }
    data = malloc(2 * SFS_RENEW_BYTES);
    back = malloc(2 * SFS_RENEW_BYTES);
    if (!data || !back) {
        return 1;
    }
    for (size_t i = 0; i < 2 * SFS_RENEW_BYTES; i++) {
        data[i] = (uint8_t)(i * 131 + 7);
    }
    if ((rc = sfs_client_connect(NULL, &client)) != 0) {
        return fail("connect", rc);
    }
    rc = sfs_file_open(client, argv[1], SFS_O_RDWR | SFS_O_CREAT | SFS_O_TRUNC, 0644, NULL, &file);
    if (rc) {
        return fail("open", rc);
    }
    if (sfs_file_pwrite(file, data, SFS_RENEW_BYTES, 0) != SFS_RENEW_BYTES) {
        return fail("first write", -1);
    }
    if ((rc = sfs_file_local2global(file, handle, &handle_length)) != 0) {
        return fail("local2global", rc);
    }
    printf("written 1 MiB; sleeping %s s, past the capability's lifetime\n", argv[2]);
    fflush(stdout);
    sleep((unsigned)atoi(argv[2]));
    if (sfs_file_pwrite(file, data + SFS_RENEW_BYTES, SFS_RENEW_BYTES, SFS_RENEW_BYTES) !=
        SFS_RENEW_BYTES) {
        return fail("write after the lifetime", -1);
    }
    if (sfs_file_pread(file, back, 2 * SFS_RENEW_BYTES, 0) != 2 * SFS_RENEW_BYTES ||
        memcmp(back, data, 2 * SFS_RENEW_BYTES) != 0) {
        return fail("read back after the lifetime", -1);
    }
    /* a handle passed on before the sleep, as ROMIO's collective open does */
    if ((rc = sfs_file_global2local(client, handle, handle_length, &passed)) != 0) {
        return fail("global2local", rc);
    }
    memset(back, 0, 2 * SFS_RENEW_BYTES);
    if (sfs_file_pread(passed, back, 2 * SFS_RENEW_BYTES, 0) != 2 * SFS_RENEW_BYTES ||
        memcmp(back, data, 2 * SFS_RENEW_BYTES) != 0) {
        return fail("read through the passed handle", -1);
    }
    sfs_file_close(passed);
    sfs_file_close(file);
    sfs_client_disconnect(client);
    free(data);
    free(back);
    printf("PASSED: writes and reads after the capability's lifetime\n");
    return 0;
}
