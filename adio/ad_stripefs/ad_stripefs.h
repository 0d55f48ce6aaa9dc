/*
 * ad_stripefs: the ROMIO ADIO driver for "stripefs:" paths (private header).
 *
 * This driver is compiled outside ROMIO's own build, against the headers of a
 * configured ROMIO tree (see adio/build-romio.sh and adio/local.mk), and linked
 * with libromio into libstripefs-mpiio.so. ROMIO knows the driver only by the
 * ops table ADIO_STRIPEFS_operations (adio/romio-patches/0001).
 *
 * Status: stub. The stripefs client library is not linked in yet, so every
 * open and delete of a "stripefs:" path fails with a clear MPI_ERR_IO error.
 */
#ifndef AD_STRIPEFS_H_INCLUDED
#define AD_STRIPEFS_H_INCLUDED

#include "adio.h"

/* Prefix of the paths this driver serves; also its fsname, which
 * MPI_File_get_info reports as the hint "romio_filesystem_type". */
#define ADIOI_STRIPEFS_PREFIX "stripefs:"
#define ADIOI_STRIPEFS_FSNAME "stripefs: the stripefs parallel file system (ad_stripefs)"

/* Per-file driver state, hung off fd->fs_ptr once the client exists. */
typedef struct ADIOI_STRIPEFS_file {
    void *client_file; /* the client library's open-file handle (not yet) */
} ADIOI_STRIPEFS_file_t;

/* ad_stripefs_open.c */
void ADIOI_STRIPEFS_Open(ADIO_File fd, int *error_code);

/* ad_stripefs_delete.c */
void ADIOI_STRIPEFS_Delete(const char *filename, int *error_code);

/* ad_stripefs_common.c */
int ADIOI_STRIPEFS_Err_unavailable(const char *myname, const char *verb, const char *filename);

#endif /* AD_STRIPEFS_H_INCLUDED */
