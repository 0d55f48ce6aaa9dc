/*
 * ad_stripefs: open. In a collective open one process asks the metadata
 * server (creating the file if asked) and broadcasts the handle; the others
 * need no metadata round trip at all.
 */
#include "ad_stripefs.h"
#include "ad_stripefs_name.h"
#include "adioi.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>

/* The permission bits a file created by this open gets, what open(2) with
 * O_CREAT gives on a local file system: MPI_File_open passes no permission
 * (ADIO_PERM_NULL), which means 0666, and either way the process's umask
 * applies (ROMIO's ufs driver leaves that to the kernel; here the driver is
 * the kernel). The umask is read by setting it and setting it back at once,
 * as the ufs driver does. */
static uint32_t ADIOI_STRIPEFS_create_mode(ADIO_File fd)
{
    mode_t   mask = umask(077);
    uint32_t perm = fd->perm == ADIO_PERM_NULL ? 0666 : (uint32_t)fd->perm & 07777;

    umask(mask);
    return perm & ~(uint32_t)mask;
}

/* Client open flags and pattern wishes from the access mode and hints. */
static void ADIOI_STRIPEFS_open_args(ADIO_File fd, int access_mode, int *flags_p,
                                     sfs_open_params_t *params)
{
    /* the access asked for, which the servers check against the file's
     * mode (a write-only open is tried read-write first: see
     * ADIOI_STRIPEFS_open_file) */
    int flags = (access_mode & ADIO_RDONLY)   ? SFS_O_RDONLY
                : (access_mode & ADIO_WRONLY) ? SFS_O_WRONLY
                                              : SFS_O_RDWR;

    if (access_mode & ADIO_CREATE) {
        flags |= SFS_O_CREAT;
    }
    if (access_mode & ADIO_EXCL) {
        flags |= SFS_O_EXCL;
    }
    memset(params, 0, sizeof(*params));
    /* striping hints apply to a file being created (ignored otherwise) */
    if (fd->hints->striping_unit > 0) {
        params->field_mask |= SFS_OPEN_PARAM_CHUNK_SIZE;
        params->chunk_size = (uint64_t)fd->hints->striping_unit;
    }
    if (fd->hints->striping_factor > 0) {
        params->field_mask |= SFS_OPEN_PARAM_STRIPE_COUNT;
        params->stripe_count = (uint32_t)fd->hints->striping_factor;
    }
    if (fd->hints->start_iodevice >= 0) {
        params->field_mask |= SFS_OPEN_PARAM_START_TARGET;
        params->start_target = (uint32_t)fd->hints->start_iodevice;
    }
    if (ADIOI_STRIPEFS_mirror_hint(fd) >= 0) {
        params->field_mask |= SFS_OPEN_PARAM_MIRROR;
        params->mirror = ADIOI_STRIPEFS_mirror_hint(fd);
    }
    *flags_p = flags;
}

/* The file is open: tell ROMIO its layout, so collective buffering aligns
 * file domains to chunks, and show it to MPI_File_get_info. */
static void ADIOI_STRIPEFS_publish_layout(ADIO_File fd)
{
    sfs_stat_t st;
    char       value[64];

    sfs_file_layout(ADIOI_STRIPEFS_FILE(fd), &st);
    /* ROMIO keeps the stripe size in an int: chunks of 2 GiB and more stay
     * unknown to its aggregation */
    fd->hints->striping_unit   = st.chunk_size <= INT_MAX ? (int)st.chunk_size : 0;
    fd->hints->striping_factor = (int)st.target_count;
    fd->blksize                = st.chunk_size <= INT_MAX ? (long)st.chunk_size : 4194304;
    snprintf(value, sizeof(value), "%d", fd->hints->striping_unit);
    ADIOI_Info_set(fd->info, "striping_unit", value);
    snprintf(value, sizeof(value), "%d", fd->hints->striping_factor);
    ADIOI_Info_set(fd->info, "striping_factor", value);
    snprintf(value, sizeof(value), "%u", st.target_count ? st.targets[0] : 0);
    ADIOI_Info_set(fd->info, "stripefs_first_target", value);
}

/* Open with the MPI access mode. A write-only open is tried read-write
 * first, since ROMIO's data sieving and two-phase writes read back what
 * they partly cover; if the file may not be read, it is opened write-only
 * and *write_only_p is set (the caller turns data sieving of writes off),
 * as ROMIO's generic open does (adio/common/ad_opencoll.c). */
static int ADIOI_STRIPEFS_open_file(ADIO_File fd, sfs_client_t *client, int access_mode,
                                    sfs_file_t **file_p, int *write_only_p)
{
    /* /stripefs/x names /x, as for the POSIX preload (ad_stripefs_name.h) */
    const char       *path = ADIOI_STRIPEFS_Path(fd->filename);
    sfs_open_params_t params;
    char              pool[ADIOI_STRIPEFS_POOL_MAX];
    int               flags, rc, has_pool = ADIOI_STRIPEFS_pool_hint(fd, pool);

    *write_only_p = 0;
    ADIOI_STRIPEFS_open_args(
        fd, (access_mode & ADIO_WRONLY) ? ((access_mode & ~ADIO_WRONLY) | ADIO_RDWR) : access_mode,
        &flags, &params);
    /* a create's storage pool (the name lives in `pool` for the open) */
    params.field_mask |= has_pool ? SFS_OPEN_PARAM_POOL : 0;
    params.pool = has_pool ? pool : NULL;
    rc = sfs_file_open(client, path, flags, ADIOI_STRIPEFS_create_mode(fd), &params, file_p);
    if (rc == -EACCES && (access_mode & ADIO_WRONLY)) {
        ADIOI_STRIPEFS_open_args(fd, access_mode, &flags, &params);
        params.field_mask |= has_pool ? SFS_OPEN_PARAM_POOL : 0;
        params.pool = has_pool ? pool : NULL;
        rc = sfs_file_open(client, path, flags, ADIOI_STRIPEFS_create_mode(fd), &params, file_p);
        *write_only_p = rc == 0;
    }
    return rc;
}

static void ADIOI_STRIPEFS_write_only(ADIO_File fd)
{
    fd->hints->ds_write = ADIOI_HINT_DISABLE;
    ADIOI_Info_set(fd->info, "romio_ds_write", "disable");
}

void ADIOI_STRIPEFS_Open(ADIO_File fd, int *error_code)
{
    static const char myname[] = "ADIOI_STRIPEFS_OPEN";
    sfs_client_t     *client;
    sfs_file_t       *file;
    int               write_only, rc;

    fd->fs_ptr = NULL;
    if (ADIOI_STRIPEFS_Client(fd, &client, error_code) != 0) {
        return;
    }
    rc = ADIOI_STRIPEFS_open_file(fd, client, fd->access_mode, &file, &write_only);
    if (rc == 0 && write_only) {
        ADIOI_STRIPEFS_write_only(fd);
    }
    if (rc) {
        *error_code = ADIOI_STRIPEFS_Err(myname, fd->filename, rc);
        return;
    }
    fd->fs_ptr = file;
    ADIOI_STRIPEFS_publish_layout(fd);
    *error_code = MPI_SUCCESS;
}

void ADIOI_STRIPEFS_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code)
{
    static const char myname[] = "ADIOI_STRIPEFS_OPENCOLL";
    int               root     = fd->hints->ranklist[0];
    sfs_client_t     *client;
    void             *handle = NULL;
    size_t            length = 0;
    /* what the root tells everyone: its result, and why it failed */
    struct {
        int       rc;
        int       write_only;
        long long length;
        char      detail[512];
    } outcome;
    int rc;

    memset(&outcome, 0, sizeof(outcome));
    /* every process needs a connection for its I/O anyway */
    rc = ADIOI_STRIPEFS_Client(fd, &client, error_code);
    if (rank == root) {
        sfs_file_t *file = NULL;

        if (rc == 0) {
            rc = ADIOI_STRIPEFS_open_file(fd, client, access_mode, &file, &outcome.write_only);
        }
        if (rc == 0) {
            fd->fs_ptr = file;
            rc         = sfs_file_local2global(file, NULL, &length);
        }
        if (rc == 0) {
            handle = ADIOI_Malloc(length);
            rc     = sfs_file_local2global(file, handle, &length);
        }
        outcome.rc     = rc;
        outcome.length = (long long)length;
        if (rc) {
            snprintf(outcome.detail, sizeof(outcome.detail), "%s", sfs_client_error());
        }
    }
    MPI_Bcast(&outcome, sizeof(outcome), MPI_BYTE, root, fd->comm);
    if (outcome.rc) {
        *error_code = ADIOI_STRIPEFS_Err_detail(myname, fd->filename, outcome.rc, outcome.detail);
        goto out;
    }
    if (rank != root) {
        handle = ADIOI_Malloc((size_t)outcome.length);
    }
    MPI_Bcast(handle, (int)outcome.length, MPI_BYTE, root, fd->comm);
    if (rank != root) {
        sfs_file_t *file;

        rc = rc ? rc : sfs_file_global2local(client, handle, (size_t)outcome.length, &file);
        if (rc) {
            *error_code = ADIOI_STRIPEFS_Err(myname, fd->filename, rc);
            goto out;
        }
        fd->fs_ptr = file;
    }
    fd->access_mode = access_mode;
    if (outcome.write_only) {
        ADIOI_STRIPEFS_write_only(fd);
    }
    ADIOI_STRIPEFS_publish_layout(fd);
    fd->is_open     = 1;
    fd->dirty_write = 0;
    *error_code     = MPI_SUCCESS;
out:
    if (handle) {
        ADIOI_Free(handle);
    }
}
