/*
 * ad_stripefs: helpers shared by the operation families (error codes).
 */
#include "ad_stripefs.h"
#include "adioi.h"

/* The MPI error (class MPI_ERR_IO) for an operation on a stripefs path while
 * the client library is not part of the driver. filename is the name ROMIO
 * passes to the driver, without the "stripefs:" prefix. */
int ADIOI_STRIPEFS_Err_unavailable(const char *myname, const char *verb, const char *filename)
{
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__, MPI_ERR_IO,
                                "**io",
                                "stripefs: cannot %s '" ADIOI_STRIPEFS_PREFIX "%s': the stripefs "
                                "client library is not built into this driver yet (no stripefs "
                                "service can be reached)",
                                verb, filename);
}
