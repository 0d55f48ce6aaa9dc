/*
 * A writer for the kept-size tests (tests/service/test_service_dynattr.sh):
 * opens PATH for writing (created 0644) and runs the steps in order, then
 * closes it.
 *
 *   sfs_size_writer PATH [STEP...]
 *     write:OFFSET:LENGTH   pwrite LENGTH bytes at OFFSET
 *     truncate:SIZE         ftruncate
 *     hold                  print "holding" and wait for end of input
 *                           (the test stats meanwhile, or kills it)
 *     wait                  print "waiting" and wait for a line of input
 *                           (or its end): the test goes on, then lets
 *                           the writer go on
 * Prints "written N" after each write. Exits 0, or 1 naming the step.
 */
#include "sfs/sfs_client.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *step, long rc)
{
    fprintf(stderr, "FAILED: %s: %ld (%s)\n", step, rc, sfs_client_error());
    return 1;
}

int main(int argc, char **argv)
{
    sfs_client_t *client;
    sfs_file_t   *file;
    int           rc, status = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: sfs_size_writer PATH [STEP...]\n");
        return 2;
    }
    if ((rc = sfs_client_connect(NULL, &client)) != 0) {
        return fail("connect", rc);
    }
    rc = sfs_file_open(client, argv[1], SFS_O_WRONLY | SFS_O_CREAT, 0644, NULL, &file);
    if (rc) {
        status = fail("open", rc);
        sfs_client_disconnect(client);
        return status;
    }
    for (int i = 2; i < argc; i++) {
        unsigned long long a, b;

        if (sscanf(argv[i], "write:%llu:%llu", &a, &b) == 2) {
            char   *data = malloc(b ? b : 1);
            ssize_t n;

            if (!data) {
                return fail("malloc", -1);
            }
            memset(data, 'w', b);
            n = sfs_file_pwrite(file, data, b, a);
            free(data);
            if (n != (ssize_t)b) {
                status = fail(argv[i], n);
                break;
            }
            printf("written %llu\n", b);
        } else if (sscanf(argv[i], "truncate:%llu", &a) == 1) {
            if ((rc = sfs_file_truncate(file, a)) != 0) {
                status = fail(argv[i], rc);
                break;
            }
        } else if (strcmp(argv[i], "wait") == 0) {
            int c;

            printf("waiting\n");
            fflush(stdout);
            while ((c = getchar()) != EOF && c != '\n') {
            }
        } else if (strcmp(argv[i], "hold") == 0) {
            printf("holding\n");
            fflush(stdout);
            while (getchar() != EOF) {
            }
        } else {
            fprintf(stderr, "unknown step '%s'\n", argv[i]);
            status = 2;
            break;
        }
        fflush(stdout);
    }
    /* closed and disconnected after a failed step too (a leak check's
     * report would replace its exit status) */
    if ((rc = sfs_file_close(file)) != 0 && status == 0) {
        status = fail("close", rc);
    }
    sfs_client_disconnect(client);
    return status;
}
