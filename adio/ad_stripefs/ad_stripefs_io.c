/*
 * ad_stripefs: contiguous reads and writes. The client library cuts the
 * range at chunk boundaries and sends the pieces to all targets at once.
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

    MPI_Type_size_x(datatype, &type_size);
    length = (size_t)type_size * (size_t)count;
    if (file_ptr_type == ADIO_INDIVIDUAL) {
        offset = fd->fp_ind;
    }
    done = write ? sfs_file_pwrite(ADIOI_STRIPEFS_FILE(fd), buf, length, (uint64_t)offset)
                 : sfs_file_pread(ADIOI_STRIPEFS_FILE(fd), buf, length, (uint64_t)offset);
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
