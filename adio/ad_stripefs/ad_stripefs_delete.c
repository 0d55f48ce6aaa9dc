/*
 * ad_stripefs: delete (MPI_File_delete and MPI_MODE_DELETE_ON_CLOSE). The
 * name goes at once; the chunk files are removed by the service later.
 * /stripefs/x names /x, as at open (ad_stripefs_name.h).
 */
#include "ad_stripefs.h"
#include "ad_stripefs_name.h"
#include "adioi.h"

void ADIOI_STRIPEFS_Delete(const char *filename, int *error_code)
{
    static const char myname[] = "ADIOI_STRIPEFS_DELETE";
    sfs_client_t     *client;
    int               rc;

    if (ADIOI_STRIPEFS_Client(NULL, &client, error_code) != 0) {
        return;
    }
    rc          = sfs_unlink(client, ADIOI_STRIPEFS_Path(filename));
    *error_code = rc ? ADIOI_STRIPEFS_Err(myname, filename, rc) : MPI_SUCCESS;
}
