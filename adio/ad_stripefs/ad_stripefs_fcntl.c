/*
 * ad_stripefs: size, preallocation, atomicity, sync, resize and features.
 */
#include "ad_stripefs.h"
#include "adioi.h"

#include <errno.h>

void ADIOI_STRIPEFS_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t *fcntl_struct, int *error_code)
{
    static const char myname[] = "ADIOI_STRIPEFS_FCNTL";
    uint64_t          size;
    int               rc;

    *error_code = MPI_SUCCESS;
    switch (flag) {
    case ADIO_FCNTL_GET_FSIZE:
        /* the size is derived from the chunk files: ask every target */
        rc = sfs_file_size(ADIOI_STRIPEFS_FILE(fd), &size);
        if (rc) {
            *error_code = ADIOI_STRIPEFS_Err(myname, fd->filename, rc);
            return;
        }
        fcntl_struct->fsize = (ADIO_Offset)size;
        break;
    case ADIO_FCNTL_SET_DISKSPACE:
        /* grow the file to the size (sparse): space is not reserved, as on
         * most parallel file systems */
        rc = sfs_file_size(ADIOI_STRIPEFS_FILE(fd), &size);
        if (rc == 0 && (uint64_t)fcntl_struct->diskspace > size) {
            rc = sfs_file_truncate(ADIOI_STRIPEFS_FILE(fd), (uint64_t)fcntl_struct->diskspace);
        }
        if (rc) {
            *error_code = ADIOI_STRIPEFS_Err(myname, fd->filename, rc);
        }
        break;
    case ADIO_FCNTL_SET_ATOMICITY:
        /* atomic mode: each independent read and write locks its extent
         * with the metadata server's byte-range locks (ad_stripefs_io.c,
         * ad_stripefs_io_str.c); collective writes reach them through the
         * aggregators' contiguous writes, whose data ROMIO's exchange
         * already orders by rank in atomic mode */
        if (fcntl_struct->atomicity) {
            /* one lock taken and given back: a metadata server too old for
             * locks (EOPNOTSUPP) is told now, not at the first write */
            uint64_t lock_id;
            int      exclusive = (fd->access_mode & MPI_MODE_WRONLY) != 0;

            rc = sfs_file_lock(ADIOI_STRIPEFS_FILE(fd), 0, 1, exclusive, &lock_id);
            if (rc == 0) {
                rc = sfs_file_unlock(ADIOI_STRIPEFS_FILE(fd), lock_id);
            }
            if (rc) {
                *error_code = ADIOI_STRIPEFS_Err(myname, fd->filename, rc);
                return;
            }
        }
        fd->atomicity = fcntl_struct->atomicity ? 1 : 0;
        break;
    default:
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           MPI_ERR_ARG, "**flag", "**flag %d", flag);
        break;
    }
}

/* Data reaches the targets when a write returns (no client cache), so a
 * sync is about durability: one process makes every target flush the
 * file's chunk files; everyone gets its result. */
void ADIOI_STRIPEFS_Flush(ADIO_File fd, int *error_code)
{
    static const char myname[] = "ADIOI_STRIPEFS_FLUSH";
    int               rank, rc = 0;

    MPI_Comm_rank(fd->comm, &rank);
    if (rank == fd->hints->ranklist[0]) {
        rc = sfs_file_sync(ADIOI_STRIPEFS_FILE(fd));
    }
    MPI_Bcast(&rc, 1, MPI_INT, fd->hints->ranklist[0], fd->comm);
    *error_code = rc ? ADIOI_STRIPEFS_Err(myname, fd->filename, rc) : MPI_SUCCESS;
}

void ADIOI_STRIPEFS_Resize(ADIO_File fd, ADIO_Offset size, int *error_code)
{
    static const char myname[] = "ADIOI_STRIPEFS_RESIZE";
    int               rank, rc = 0;

    MPI_Comm_rank(fd->comm, &rank);
    if (size < 0) {
        rc = -EINVAL;
    } else if (rank == fd->hints->ranklist[0]) {
        rc = sfs_file_truncate(ADIOI_STRIPEFS_FILE(fd), (uint64_t)size);
    }
    MPI_Bcast(&rc, 1, MPI_INT, fd->hints->ranklist[0], fd->comm);
    *error_code = rc ? ADIOI_STRIPEFS_Err(myname, fd->filename, rc) : MPI_SUCCESS;
}

int ADIOI_STRIPEFS_Feature(ADIO_File fd, int flag)
{
    (void)fd;
    switch (flag) {
    case ADIO_SCALABLE_OPEN:   /* one process opens, the handle is broadcast */
    case ADIO_SCALABLE_RESIZE: /* one process truncates */
    case ADIO_TWO_PHASE:       /* ROMIO's generic collective buffering */
    case ADIO_SHARED_FP:       /* a counter on the metadata server */
    case ADIO_ATOMIC_MODE:     /* byte-range locks of the metadata server */
        return 1;
    case ADIO_UNLINK_AFTER_CLOSE: /* chunk files of an unlinked file go at once */
    case ADIO_LOCKS: /* no fcntl locks for ROMIO to take (ours are inside the driver) ... */
    case ADIO_DATA_SIEVING_WRITES: /* ... so no read-modify-write: list I/O instead */
    case ADIO_SEQUENTIAL:
    default:
        return 0;
    }
}

/* Shared file pointers (MPI_File_*_shared, *_ordered): an atomic counter of
 * this collective open on the metadata server, in etypes as ROMIO keeps it
 * (romio patch 0008 routes ADIO_Get/Set_shared_fp here). */
void ADIOI_STRIPEFS_Get_shared_fp(ADIO_File fd, ADIO_Offset incr, ADIO_Offset *shared_fp,
                                  int *error_code)
{
    static const char myname[] = "ADIOI_STRIPEFS_GET_SHARED_FP";
    uint64_t          before;
    int               rc;

    rc = sfs_file_counter(ADIOI_STRIPEFS_FILE(fd), SFS_COUNTER_ADD, (uint64_t)incr, &before);
    if (rc) {
        *error_code = ADIOI_STRIPEFS_Err(myname, fd->filename, rc);
        return;
    }
    *shared_fp  = (ADIO_Offset)before;
    *error_code = MPI_SUCCESS;
}

void ADIOI_STRIPEFS_Set_shared_fp(ADIO_File fd, ADIO_Offset offset, int *error_code)
{
    static const char myname[] = "ADIOI_STRIPEFS_SET_SHARED_FP";
    uint64_t          before;
    int               rc;

    rc = sfs_file_counter(ADIOI_STRIPEFS_FILE(fd), SFS_COUNTER_SET, (uint64_t)offset, &before);
    *error_code = rc ? ADIOI_STRIPEFS_Err(myname, fd->filename, rc) : MPI_SUCCESS;
}
