/*
 * The client of tests/cluster/test_cluster_meta_fence.sh: connects (and so
 * holds the cluster map) while management still answers, then makes two
 * directories, each once its go-file exists, and prints each outcome with
 * its time, so that the test can stop management in between: metadata
 * requests go to the metadata server alone, with the map already held.
 *
 *   sfs_meta_fence_client DIR GO1 GO2 [SHARED_FILE]
 *
 * Prints "connected", then "first rc=N ms=T error=..." and "second ...".
 * With SHARED_FILE (tests/cluster/test_cluster_meta_failover.sh) it also
 * opens that file before GO1 and takes 7 from its shared file pointer
 * ("counter before rc=N value=V"), and again after the first mkdir
 * ("counter after rc=N error=..."): across a failover of the metadata
 * server the counter is lost, which must be an error, never a reset. It
 * also takes a byte-range lock before GO1 ("lock before rc=N") and
 * unlocks it after the first mkdir ("unlock after rc=N error=..."), then
 * locks and unlocks again ("relock after rc=N ...").
 * Exit 0 once both were tried (their outcomes are the test's to judge),
 * 1 on a failed connect or a go-file that never came (300 s).
 */
#include "sfs/sfs_client.h"
#include "sfs_go_file.h"

#include <inttypes.h>
#include <stdio.h>

static int make(sfs_client_t *client, const char *dir, const char *name, const char *go)
{
    char     path[4096];
    uint64_t start;
    int      rc;

    if (sfs_go_wait(go) != 0) {
        return 1;
    }
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    start = sfs_go_now_ms();
    rc    = sfs_mkdir(client, path, 0755);
    printf("%s rc=%d ms=%" PRIu64 " error=%s\n", name, rc, sfs_go_now_ms() - start,
           rc ? sfs_client_error() : "");
    fflush(stdout);
    return 0;
}

/* Take `add` from the shared file pointer; print the outcome as `label`. */
static void counter(sfs_file_t *file, const char *label, uint64_t add)
{
    uint64_t before = 0;
    int      rc     = sfs_file_counter(file, SFS_COUNTER_ADD, add, &before);

    printf("counter %s rc=%d value=%" PRIu64 " error=%s\n", label, rc, before,
           rc ? sfs_client_error() : "");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    sfs_client_t *client;
    sfs_file_t   *file    = NULL;
    uint64_t      lock_id = 0;
    int           rc;

    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s DIR GO1 GO2 [SHARED_FILE]\n", argv[0]);
        return 2;
    }
    if (sfs_client_connect(NULL, &client) != 0) {
        fprintf(stderr, "connect: %s\n", sfs_client_error());
        return 1;
    }
    if (argc == 5) {
        if (sfs_file_open(client, argv[4], SFS_O_RDWR | SFS_O_CREAT, 0644, NULL, &file) != 0) {
            fprintf(stderr, "open %s: %s\n", argv[4], sfs_client_error());
            sfs_client_disconnect(client);
            return 1;
        }
        counter(file, "before", 7);
        rc = sfs_file_lock(file, 0, 4096, 1, &lock_id);
        printf("lock before rc=%d error=%s\n", rc, rc ? sfs_client_error() : "");
    }
    printf("connected\n");
    fflush(stdout);
    rc = make(client, argv[1], "first", argv[2]);
    if (rc == 0 && file) {
        uint64_t again = 0;
        int      locked;

        counter(file, "after", 7);
        rc = sfs_file_unlock(file, lock_id);
        printf("unlock after rc=%d error=%s\n", rc, rc ? sfs_client_error() : "");
        locked = sfs_file_lock(file, 0, 4096, 1, &again);
        rc     = locked ? locked : sfs_file_unlock(file, again);
        printf("relock after rc=%d error=%s\n", rc, rc ? sfs_client_error() : "");
        fflush(stdout);
        rc = 0;
    }
    if (rc == 0) {
        rc = make(client, argv[1], "second", argv[3]);
    }
    if (file) {
        int closed = sfs_file_close(file);

        printf("close rc=%d error=%s\n", closed, closed ? sfs_client_error() : "");
    }
    sfs_client_disconnect(client);
    return rc;
}
