/*
 * ad_stripefs: the ROMIO ADIO driver for "stripefs:" paths (private header).
 *
 * The driver is compiled outside ROMIO's own build, against the headers of a
 * configured ROMIO tree (adio/build-romio.sh, adio/local.mk), and linked with
 * libromio and the stripefs client library into libstripefs-mpiio.so. ROMIO
 * knows it only by the ops table ADIO_STRIPEFS_operations (romio patch 0001).
 *
 * One client connection per process, made at the first open and closed in
 * MPI_Finalize; every open file keeps the client library's handle in
 * fd->fs_ptr. Errors carry the client library's explanation (which path,
 * target or server) in the MPI error string.
 */
#ifndef AD_STRIPEFS_H_INCLUDED
#define AD_STRIPEFS_H_INCLUDED

#include "adio.h"

#include "sfs/sfs_client.h"

/* Prefix of the paths this driver serves; also its fsname, which
 * MPI_File_get_info reports as the hint "romio_filesystem_type". */
#define ADIOI_STRIPEFS_PREFIX "stripefs:"
#define ADIOI_STRIPEFS_FSNAME "stripefs: the stripefs parallel file system (ad_stripefs)"

/* Hints of our own (see ad_stripefs_hints.c). */
#define ADIOI_STRIPEFS_HINT_CONFIG "stripefs_config"   /* cluster config file */
#define ADIOI_STRIPEFS_HINT_MGMT   "stripefs_mgmt"     /* management host:port */
#define ADIOI_STRIPEFS_HINT_AUTH   "stripefs_connauth" /* connauth file */
#define ADIOI_STRIPEFS_HINT_MIRROR "stripefs_mirror"   /* enable/disable: a mirrored file */
#define ADIOI_STRIPEFS_HINT_POOL   "stripefs_pool"     /* a new file's storage pool */
#define ADIOI_STRIPEFS_POOL_MAX    64                  /* a pool name and its NUL */

/* The file's client handle. */
#define ADIOI_STRIPEFS_FILE(fd) ((sfs_file_t *)(fd)->fs_ptr)

/* ad_stripefs_common.c */
int ADIOI_STRIPEFS_Client(ADIO_File fd, sfs_client_t **client_p, int *error_code);
int ADIOI_STRIPEFS_Err(const char *myname, const char *filename, int rc);
/* The same with an explanation given (e.g. one another rank sent). */
int ADIOI_STRIPEFS_Err_detail(const char *myname, const char *filename, int rc, const char *detail);

/* ad_stripefs_open.c */
void ADIOI_STRIPEFS_Open(ADIO_File fd, int *error_code);
void ADIOI_STRIPEFS_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code);

/* ad_stripefs_close.c */
void ADIOI_STRIPEFS_Close(ADIO_File fd, int *error_code);

/* ad_stripefs_io.c */
void ADIOI_STRIPEFS_ReadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                               int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                               int *error_code);
void ADIOI_STRIPEFS_WriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                                int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                                int *error_code);

/* ad_stripefs_io_str.c */
void ADIOI_STRIPEFS_ReadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                                int *error_code);
void ADIOI_STRIPEFS_WriteStrided(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                                 int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                                 int *error_code);

/* ad_stripefs_hints.c */
void ADIOI_STRIPEFS_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code);
/* The stripefs_mirror hint: 1 "enable", 0 "disable", -1 not given (the
 * directory decides). */
int ADIOI_STRIPEFS_mirror_hint(ADIO_File fd);
/* The stripefs_pool hint into buf (ADIOI_STRIPEFS_POOL_MAX bytes): 1 when
 * given, 0 when not (the directory's pool). */
int ADIOI_STRIPEFS_pool_hint(ADIO_File fd, char *buf);

/* ad_stripefs_fcntl.c */
void ADIOI_STRIPEFS_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t *fcntl_struct, int *error_code);
void ADIOI_STRIPEFS_Flush(ADIO_File fd, int *error_code);
void ADIOI_STRIPEFS_Resize(ADIO_File fd, ADIO_Offset size, int *error_code);
int  ADIOI_STRIPEFS_Feature(ADIO_File fd, int flag);

/* shared file pointers (ad_stripefs_fcntl.c; declared for ROMIO in
 * adioi_fs_proto.h by romio patch 0008) */
void ADIOI_STRIPEFS_Get_shared_fp(ADIO_File fd, ADIO_Offset incr, ADIO_Offset *shared_fp,
                                  int *error_code);
void ADIOI_STRIPEFS_Set_shared_fp(ADIO_File fd, ADIO_Offset offset, int *error_code);

/* ad_stripefs_delete.c */
void ADIOI_STRIPEFS_Delete(const char *filename, int *error_code);

#endif /* AD_STRIPEFS_H_INCLUDED */
