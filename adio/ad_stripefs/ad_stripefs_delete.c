/*
 * ad_stripefs: delete (MPI_File_delete and MPI_MODE_DELETE_ON_CLOSE).
 */
#include "ad_stripefs.h"
#include "adioi.h"

void ADIOI_STRIPEFS_Delete(const char *filename, int *error_code)
{
    static const char myname[] = "ADIOI_STRIPEFS_DELETE";

    *error_code = ADIOI_STRIPEFS_Err_unavailable(myname, "delete", filename);
}
