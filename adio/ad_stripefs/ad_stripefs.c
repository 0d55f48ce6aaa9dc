/*
 * ad_stripefs: the ops table, and nothing else (see ad_stripefs.h).
 * Operations the driver does not implement point at ROMIO's generic code.
 */
#include "ad_stripefs.h"
#include "adioi.h"

struct ADIOI_Fns_struct ADIO_STRIPEFS_operations = {
    .ADIOI_xxx_Open              = ADIOI_STRIPEFS_Open,
    .ADIOI_xxx_OpenColl          = ADIOI_GEN_OpenColl,
    .ADIOI_xxx_ReadContig        = ADIOI_GEN_ReadContig,
    .ADIOI_xxx_WriteContig       = ADIOI_GEN_WriteContig,
    .ADIOI_xxx_ReadStridedColl   = ADIOI_GEN_ReadStridedColl,
    .ADIOI_xxx_WriteStridedColl  = ADIOI_GEN_WriteStridedColl,
    .ADIOI_xxx_SeekIndividual    = ADIOI_GEN_SeekIndividual,
    .ADIOI_xxx_Fcntl             = ADIOI_GEN_Fcntl,
    .ADIOI_xxx_SetInfo           = ADIOI_GEN_SetInfo,
    .ADIOI_xxx_ReadStrided       = ADIOI_GEN_ReadStrided,
    .ADIOI_xxx_WriteStrided      = ADIOI_GEN_WriteStrided,
    .ADIOI_xxx_Close             = ADIOI_GEN_Close,
    .ADIOI_xxx_IreadContig       = ADIOI_FAKE_IreadContig,
    .ADIOI_xxx_IwriteContig      = ADIOI_FAKE_IwriteContig,
    .ADIOI_xxx_ReadDone          = ADIOI_FAKE_IODone,
    .ADIOI_xxx_WriteDone         = ADIOI_FAKE_IODone,
    .ADIOI_xxx_ReadComplete      = ADIOI_FAKE_IOComplete,
    .ADIOI_xxx_WriteComplete     = ADIOI_FAKE_IOComplete,
    .ADIOI_xxx_IreadStrided      = ADIOI_FAKE_IreadStrided,
    .ADIOI_xxx_IwriteStrided     = ADIOI_FAKE_IwriteStrided,
    .ADIOI_xxx_Flush             = ADIOI_GEN_Flush,
    .ADIOI_xxx_Resize            = ADIOI_GEN_Resize,
    .ADIOI_xxx_Delete            = ADIOI_STRIPEFS_Delete,
    .ADIOI_xxx_Feature           = ADIOI_GEN_Feature,
    .fsname                      = ADIOI_STRIPEFS_FSNAME,
    .ADIOI_xxx_IreadStridedColl  = ADIOI_GEN_IreadStridedColl,
    .ADIOI_xxx_IwriteStridedColl = ADIOI_GEN_IwriteStridedColl,
#if defined(F_SETLKW64)
    .ADIOI_xxx_SetLock = ADIOI_GEN_SetLock,
#else
    .ADIOI_xxx_SetLock = ADIOI_GEN_SetLock64,
#endif
};
