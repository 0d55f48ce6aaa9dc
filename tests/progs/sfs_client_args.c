/*
 * Every public function of client/include/sfs/sfs_client.h called with bad
 * arguments (NULL client, path, buffers and out-pointers; unknown flags and
 * parameter bits; a zero count): each must return -EINVAL and say why,
 * never crash. A crash names the call it died in.
 *
 *   sfs_client_args DIR      (DIR: an existing directory of the service)
 */
#include "sfs/sfs_client.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int         failures;
static const char *current = "(none)";

static void on_crash(int sig)
{
    char line[256];
    int  n = snprintf(line, sizeof(line), "FAILED: signal %d in %s\n", sig, current);

    if (write(2, line, (size_t)n) < 0) {
        _exit(3);
    }
    _exit(3);
}

/* Expect -EINVAL with an error detail. */
static void expect_einval(const char *what, long rc)
{
    const char *detail = sfs_client_error();

    if (rc == -EINVAL && detail[0]) {
        printf("ok: %s: -EINVAL (%s)\n", what, detail);
    } else {
        printf("FAILED: %s returned %ld (%s), not -EINVAL\n", what, rc, detail);
        failures++;
    }
}

#define BAD(call)                                                                                  \
    do {                                                                                           \
        current = #call;                                                                           \
        expect_einval(#call, (long)(call));                                                        \
    } while (0)

int main(int argc, char **argv)
{
    sfs_client_params_t params  = {0};
    sfs_open_params_t   oparams = {0};
    sfs_client_t       *client = NULL, *other = NULL;
    sfs_file_t         *file = NULL, *file2 = NULL;
    sfs_request_t      *request = NULL;
    sfs_stat_t          st;
    sfs_statfs_t        sfs;
    sfs_dir_entry_t     entries[4];
    sfs_file_extent_t   extent = {0, 1};
    struct iovec        iov    = {NULL, 1}, good_iov;
    uint32_t            count;
    uint64_t            value;
    size_t              length = 0;
    char                path[4096], out[64], buf[16] = "x", handle[8192];
    int                 eof, rc;

    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0); /* what passed shows even after a crash */
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    good_iov.iov_base = buf;
    good_iov.iov_len  = 1;

    BAD(sfs_client_connect(NULL, NULL));
    params.field_mask = UINT64_C(1) << 40;
    BAD(sfs_client_connect(&params, &other));
    params.field_mask = SFS_CLIENT_PARAM_CONFIG;
    BAD(sfs_client_connect(&params, &other));
    params.field_mask = SFS_CLIENT_PARAM_MGMT;
    BAD(sfs_client_connect(&params, &other));
    params.field_mask = SFS_CLIENT_PARAM_TIMEOUT;
    BAD(sfs_client_connect(&params, &other));
    current = "sfs_client_connect(NULL, &client)";
    rc      = sfs_client_connect(NULL, &client);
    if (rc) {
        fprintf(stderr, "connect: %s\n", sfs_client_error());
        return 1;
    }
    snprintf(path, sizeof(path), "%s/f", argv[1]);

    /* namespace */
    BAD(sfs_stat(NULL, "/", &st));
    BAD(sfs_stat(client, NULL, &st));
    BAD(sfs_stat(client, "/", NULL));
    BAD(sfs_lookup(NULL, "/", &st));
    BAD(sfs_lookup(client, NULL, &st));
    BAD(sfs_lookup(client, "/", NULL));
    BAD(sfs_access(NULL, "/", 0, NULL));
    BAD(sfs_access(client, NULL, 0, NULL));
    BAD(sfs_access(client, "/", 0x100, NULL));
    BAD(sfs_mkdir(NULL, path, 0755));
    BAD(sfs_mkdir(client, NULL, 0755));
    BAD(sfs_rmdir(client, NULL));
    BAD(sfs_unlink(client, NULL));
    BAD(sfs_unlink(NULL, path));
    BAD(sfs_rename(client, NULL, path));
    BAD(sfs_rename(client, path, NULL));
    BAD(sfs_rename(NULL, path, path));
    BAD(sfs_chmod(client, NULL, 0644));
    BAD(sfs_chown(client, NULL, 0, 0));
    BAD(sfs_utimens(client, NULL, SFS_UTIME_NOW, SFS_UTIME_NOW));
    BAD(sfs_setpattern(client, NULL, 1 << 20, 1));
    BAD(sfs_readdir(NULL, "/", "", entries, 4, &count, &eof));
    BAD(sfs_readdir(client, NULL, "", entries, 4, &count, &eof));
    BAD(sfs_readdir(client, "/", "", NULL, 4, &count, &eof));
    BAD(sfs_readdir(client, "/", "", entries, 0, &count, &eof));
    BAD(sfs_readdir(client, "/", "", entries, 4, NULL, &eof));
    BAD(sfs_readdir(client, "/", "", entries, 4, &count, NULL));
    BAD(sfs_statfs(NULL, &sfs));
    BAD(sfs_statfs(client, NULL));
    BAD(sfs_path_canonical(NULL, out, sizeof(out)));
    BAD(sfs_path_canonical("/a", NULL, sizeof(out)));
    BAD(sfs_path_canonical("/a", out, 0));

    /* opens */
    BAD(sfs_file_open(client, NULL, SFS_O_RDONLY, 0, NULL, &file));
    BAD(sfs_file_open(NULL, path, SFS_O_RDONLY, 0, NULL, &file));
    BAD(sfs_file_open(client, path, SFS_O_RDWR | SFS_O_CREAT, 0644, NULL, NULL));
    BAD(sfs_file_open(client, path, 0x3, 0, NULL, &file));
    BAD(sfs_file_open(client, path, SFS_O_RDWR | 0x40000000, 0, NULL, &file));
    oparams.field_mask = 1u << 20;
    BAD(sfs_file_open(client, path, SFS_O_RDWR | SFS_O_CREAT, 0644, &oparams, &file));
    current = "sfs_file_open (good)";
    rc      = sfs_file_open(client, path, SFS_O_RDWR | SFS_O_CREAT, 0644, NULL, &file);
    if (rc) {
        fprintf(stderr, "open %s: %s\n", path, sfs_client_error());
        return 1;
    }

    /* I/O */
    BAD(sfs_file_pwrite(NULL, buf, 1, 0));
    BAD(sfs_file_pwrite(file, NULL, 1, 0));
    BAD(sfs_file_pwrite(file, buf, (size_t)SSIZE_MAX + 1, 0));
    BAD(sfs_file_pread(NULL, buf, 1, 0));
    BAD(sfs_file_pread(file, NULL, 1, 0));
    BAD(sfs_file_writev(NULL, &extent, 1, &good_iov, 1));
    BAD(sfs_file_writev(file, NULL, 1, &good_iov, 1));
    BAD(sfs_file_writev(file, &extent, 1, NULL, 1));
    BAD(sfs_file_writev(file, &extent, 1, &iov, 1));
    BAD(sfs_file_readv(NULL, &extent, 1, &good_iov, 1));
    BAD(sfs_file_readv(file, NULL, 1, &good_iov, 1));
    BAD(sfs_file_readv(file, &extent, 1, &iov, 1));
    BAD(sfs_file_iwrite(file, buf, 1, 0, NULL));
    BAD(sfs_file_iwrite(NULL, buf, 1, 0, &request));
    BAD(sfs_file_iwrite(file, NULL, 1, 0, &request));
    BAD(sfs_file_iread(file, buf, 1, 0, NULL));
    BAD(sfs_file_iread(NULL, buf, 1, 0, &request));
    BAD(sfs_request_test(NULL));
    BAD(sfs_request_wait(NULL));

    /* the rest of the file calls */
    BAD(sfs_file_size(NULL, &value));
    BAD(sfs_file_size(file, NULL));
    BAD(sfs_file_truncate(NULL, 0));
    BAD(sfs_file_sync(NULL));
    BAD(sfs_file_stat(NULL, &st));
    BAD(sfs_file_stat(file, NULL));
    BAD(sfs_file_counter(NULL, SFS_COUNTER_ADD, 1, &value));
    BAD(sfs_file_counter(file, 7, 1, &value));
    BAD(sfs_file_counter(file, SFS_COUNTER_ADD, 1, NULL));
    BAD(sfs_file_local2global(NULL, NULL, &length));
    BAD(sfs_file_local2global(file, NULL, NULL));
    length  = sizeof(handle);
    current = "sfs_file_local2global (good)";
    if (sfs_file_local2global(file, handle, &length) != 0) {
        printf("FAILED: local2global: %s\n", sfs_client_error());
        failures++;
    }
    BAD(sfs_file_global2local(NULL, handle, length, &file2));
    BAD(sfs_file_global2local(client, NULL, length, &file2));
    BAD(sfs_file_global2local(client, handle, 0, &file2));
    BAD(sfs_file_global2local(client, handle, length, NULL));
    current = "sfs_file_layout(NULL, &st)";
    memset(&st, 0xEE, sizeof(st));
    sfs_file_layout(NULL, &st);
    sfs_file_layout(file, NULL);
    printf("%s: sfs_file_layout with a NULL file or stat returns\n",
           st.entry_id == 0 ? "ok" : (failures++, "FAILED"));
    current = "sfs_file_path(NULL)";
    printf("%s: sfs_file_path(NULL) is NULL\n",
           sfs_file_path(NULL) == NULL ? "ok" : (failures++, "FAILED"));
    current = "sfs_file_close(NULL)";
    printf("%s: sfs_file_close(NULL) is 0\n",
           sfs_file_close(NULL) == 0 ? "ok" : (failures++, "FAILED"));

    /* the good calls still work after all that */
    current = "good I/O";
    if (sfs_file_pwrite(file, buf, 1, 0) != 1 || sfs_file_close(file) != 0 ||
        sfs_unlink(client, path) != 0) {
        printf("FAILED: a good write, close and unlink after the bad calls: %s\n",
               sfs_client_error());
        failures++;
    }
    current = "sfs_client_disconnect(NULL)";
    sfs_client_disconnect(NULL);
    sfs_client_disconnect(client);
    printf("%d check%s failed\n", failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
