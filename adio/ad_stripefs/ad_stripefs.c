/*
 * ad_stripefs: the ops table, and nothing else (see ad_stripefs.h).
 * Collective I/O is ROMIO's generic two-phase code, fed the file's stripe
 * layout as striping_unit/striping_factor so file domains align to chunks.
 * Nonblocking I/O is carried out at once and returns a completed request
 * (ROMIO's FAKE routines): the client library has no progress thread that
 * could finish it in the background.
 */
#include "ad_stripefs.h"
#include "adioi.h"

struct ADIOI_Fns_struct ADIO_STRIPEFS_operations = {
    .ADIOI_xxx_Open              = ADIOI_STRIPEFS_Open,
    .ADIOI_xxx_OpenColl          = ADIOI_STRIPEFS_OpenColl,
    .ADIOI_xxx_ReadContig        = ADIOI_STRIPEFS_ReadContig,
    .ADIOI_xxx_WriteContig       = ADIOI_STRIPEFS_WriteContig,
    .ADIOI_xxx_ReadStridedColl   = ADIOI_GEN_ReadStridedColl,
    .ADIOI_xxx_WriteStridedColl  = ADIOI_GEN_WriteStridedColl,
    .ADIOI_xxx_SeekIndividual    = ADIOI_GEN_SeekIndividual,
    .ADIOI_xxx_Fcntl             = ADIOI_STRIPEFS_Fcntl,
    .ADIOI_xxx_SetInfo           = ADIOI_STRIPEFS_SetInfo,
    .ADIOI_xxx_ReadStrided       = ADIOI_STRIPEFS_ReadStrided,
    .ADIOI_xxx_WriteStrided      = ADIOI_STRIPEFS_WriteStrided,
    .ADIOI_xxx_Close             = ADIOI_STRIPEFS_Close,
    .ADIOI_xxx_IreadContig       = ADIOI_FAKE_IreadContig,
    .ADIOI_xxx_IwriteContig      = ADIOI_FAKE_IwriteContig,
    .ADIOI_xxx_ReadDone          = ADIOI_FAKE_IODone,
    .ADIOI_xxx_WriteDone         = ADIOI_FAKE_IODone,
    .ADIOI_xxx_ReadComplete      = ADIOI_FAKE_IOComplete,
    .ADIOI_xxx_WriteComplete     = ADIOI_FAKE_IOComplete,
    .ADIOI_xxx_IreadStrided      = ADIOI_FAKE_IreadStrided,
    .ADIOI_xxx_IwriteStrided     = ADIOI_FAKE_IwriteStrided,
    .ADIOI_xxx_Flush             = ADIOI_STRIPEFS_Flush,
    .ADIOI_xxx_Resize            = ADIOI_STRIPEFS_Resize,
    .ADIOI_xxx_Delete            = ADIOI_STRIPEFS_Delete,
    .ADIOI_xxx_Feature           = ADIOI_STRIPEFS_Feature,
    .fsname                      = ADIOI_STRIPEFS_FSNAME,
    .ADIOI_xxx_IreadStridedColl  = ADIOI_GEN_IreadStridedColl,
    .ADIOI_xxx_IwriteStridedColl = ADIOI_GEN_IwriteStridedColl,
#if defined(F_SETLKW64)
    .ADIOI_xxx_SetLock = ADIOI_GEN_SetLock,
#else
    .ADIOI_xxx_SetLock = ADIOI_GEN_SetLock64,
#endif
};
