/*
 * ad_stripefs: close. Nothing is cached on the client, so closing only
 * drops the handle (MPI_MODE_DELETE_ON_CLOSE is ROMIO's: it calls Delete),
 * and with it the handle's hold on the client: the last close after the
 * driver's MPI_Finalize hook ends the connections (ad_stripefs_common.c).
 */
#include "ad_stripefs.h"
#include "adioi.h"

void ADIOI_STRIPEFS_Close(ADIO_File fd, int *error_code)
{
    sfs_file_close(ADIOI_STRIPEFS_FILE(fd));
    fd->fs_ptr  = NULL;
    *error_code = MPI_SUCCESS;
}
