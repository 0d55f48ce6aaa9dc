/*
 * The client of tests/cluster/test_cluster_meta_read_fence.sh: connects
 * (and so holds the cluster map that names the metadata server of then),
 * waits for a go-file, then reads metadata only: a stat of FILE and a
 * listing of DIR, and prints each outcome with its time, so that the test
 * can cut the metadata server off from management and have the mirror
 * promoted in between.
 *
 *   sfs_meta_read_client GO FILE DIR
 *
 * Prints "connected", then "stat rc=N ms=T size=S error=..." and
 * "list rc=N ms=T names=a,b,... error=...". Exit 0 once both were tried
 * (their outcomes are the test's to judge), 1 on a failed connect or a
 * go-file that never came (300 s).
 */
#include "sfs/sfs_client.h"
#include "sfs_go_file.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define READ_CLIENT_MAX_NAMES 64

static void list(sfs_client_t *client, const char *dir)
{
    static sfs_dir_entry_t entries[READ_CLIENT_MAX_NAMES];
    char                   names[READ_CLIENT_MAX_NAMES * 258] = "";
    uint32_t               count                              = 0;
    int                    eof                                = 0;
    uint64_t               start                              = sfs_go_now_ms();
    int rc = sfs_readdir(client, dir, "", entries, READ_CLIENT_MAX_NAMES, &count, &eof);

    for (uint32_t i = 0; rc == 0 && i < count; i++) {
        strcat(names, i ? "," : "");
        strcat(names, entries[i].name);
    }
    printf("list rc=%d ms=%" PRIu64 " names=%s error=%s\n", rc, sfs_go_now_ms() - start, names,
           rc ? sfs_client_error() : "");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    sfs_client_t *client;
    sfs_stat_t    st;
    uint64_t      start;
    int           rc;

    if (argc != 4) {
        fprintf(stderr, "usage: %s GO FILE DIR\n", argv[0]);
        return 2;
    }
    if (sfs_client_connect(NULL, &client) != 0) {
        fprintf(stderr, "connect: %s\n", sfs_client_error());
        return 1;
    }
    printf("connected\n");
    fflush(stdout);
    if (sfs_go_wait(argv[1]) != 0) {
        sfs_client_disconnect(client);
        return 1;
    }
    start = sfs_go_now_ms();
    rc    = sfs_stat(client, argv[2], &st);
    printf("stat rc=%d ms=%" PRIu64 " size=%" PRIu64 " error=%s\n", rc, sfs_go_now_ms() - start,
           rc ? 0 : st.size, rc ? sfs_client_error() : "");
    fflush(stdout);
    list(client, argv[3]);
    sfs_client_disconnect(client);
    return 0;
}
