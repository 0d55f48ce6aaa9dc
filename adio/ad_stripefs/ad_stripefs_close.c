/*
 * ad_stripefs: close. The client library waits for the file's writes still
 * in flight (write-behind) and drops the handle; a failure among those
 * writes is the close's error (MPI_MODE_DELETE_ON_CLOSE is ROMIO's: it calls
 * Delete).
 */
#include "ad_stripefs.h"
#include "adioi.h"

void ADIOI_STRIPEFS_Close(ADIO_File fd, int *error_code)
{
    static const char myname[] = "ADIOI_STRIPEFS_CLOSE";
    int               rc       = sfs_file_close(ADIOI_STRIPEFS_FILE(fd));

    fd->fs_ptr  = NULL;
    *error_code = rc ? ADIOI_STRIPEFS_Err(myname, fd->filename, rc) : MPI_SUCCESS;
}
