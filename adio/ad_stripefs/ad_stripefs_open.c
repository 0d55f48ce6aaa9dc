/*
 * ad_stripefs: open.
 */
#include "ad_stripefs.h"
#include "adioi.h"

void ADIOI_STRIPEFS_Open(ADIO_File fd, int *error_code)
{
    static const char myname[] = "ADIOI_STRIPEFS_OPEN";

    fd->fs_ptr  = NULL;
    *error_code = ADIOI_STRIPEFS_Err_unavailable(myname, "open", fd->filename);
}
