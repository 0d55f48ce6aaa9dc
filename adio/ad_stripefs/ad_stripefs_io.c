/*
 * ad_stripefs: contiguous reads and writes. The client library cuts the
 * range at chunk boundaries and sends the pieces to all targets at once.
 * In atomic mode (MPI_File_set_atomicity) the range is locked for the call,
 * exclusively for a write and shared for a read, by the metadata server's
 * byte-range locks: pieces on several targets then reach the file as one
 * write, never interleaved with another process's.
 */
#include "ad_stripefs.h"
#include "adioi.h"

static void ADIOI_STRIPEFS_contig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                  int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                                  int write, int *error_code)
{
    static const char myname[] = "ADIOI_STRIPEFS_CONTIG";
    MPI_Count         type_size;
    size_t            length;
    ssize_t           done;
    uint64_t          lock_id = 0;
    int               locked  = 0, rc;

    MPI_Type_size_x(datatype, &type_size);
    length = (size_t)type_size * (size_t)count;
    if (file_ptr_type == ADIO_INDIVIDUAL) {
        offset = fd->fp_ind;
    }
    if (fd->atomicity && length > 0) {
        rc = sfs_file_lock(ADIOI_STRIPEFS_FILE(fd), (uint64_t)offset, length, write, &lock_id);
        if (rc) {
            *error_code = ADIOI_STRIPEFS_Err(myname, fd->filename, rc);
            return;
        }
        locked = 1;
    }
    done = write ? sfs_file_pwrite(ADIOI_STRIPEFS_FILE(fd), buf, length, (uint64_t)offset)
                 : sfs_file_pread(ADIOI_STRIPEFS_FILE(fd), buf, length, (uint64_t)offset);
    /* released once every target acknowledged its piece (pwrite returned) */
    if (locked && (rc = sfs_file_unlock(ADIOI_STRIPEFS_FILE(fd), lock_id)) != 0 && done >= 0) {
        done = rc;
    }
    if (done < 0) {
        *error_code = ADIOI_STRIPEFS_Err(myname, fd->filename, (int)done);
        return;
    }
    if (file_ptr_type == ADIO_INDIVIDUAL) {
        fd->fp_ind += done;
    }
    fd->fp_sys_posn = -1; /* no system file pointer to keep in step */
    if (write) {
        fd->dirty_write = 1;
    }
#ifdef HAVE_STATUS_SET_BYTES
    if (status) {
        MPIR_Status_set_bytes(status, datatype, (MPI_Count)done);
    }
#else
    (void)status;
#endif
    *error_code = MPI_SUCCESS;
}

void ADIOI_STRIPEFS_ReadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                               int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                               int *error_code)
{
    ADIOI_STRIPEFS_contig(fd, buf, count, datatype, file_ptr_type, offset, status, 0, error_code);
}

void ADIOI_STRIPEFS_WriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                                int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                                int *error_code)
{
    ADIOI_STRIPEFS_contig(fd, (void *)buf, count, datatype, file_ptr_type, offset, status, 1,
                          error_code);
}
