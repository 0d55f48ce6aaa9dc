/*
 * ad_stripefs: close. Nothing is cached on the client, so closing only
 * drops the handle (MPI_MODE_DELETE_ON_CLOSE is ROMIO's: it calls Delete).
 */
#include "ad_stripefs.h"
#include "adioi.h"

void ADIOI_STRIPEFS_Close(ADIO_File fd, int *error_code)
{
    sfs_file_close(ADIOI_STRIPEFS_FILE(fd));
    fd->fs_ptr  = NULL;
    *error_code = MPI_SUCCESS;
}
