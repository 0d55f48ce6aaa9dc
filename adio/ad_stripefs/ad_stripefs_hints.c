/*
 * ad_stripefs: hints. striping_factor, striping_unit and start_iodevice ask
 * for a pattern when a file is created (a directory's pattern otherwise);
 * stripefs_config / stripefs_mgmt / stripefs_connauth say where the service
 * is (else STRIPEFS_* environment variables or the default config);
 * stripefs_mirror=enable|disable makes a new file mirrored or not whatever
 * its directory says (docs/mirroring.md); stripefs_pool=NAME puts a new
 * file on that storage pool's targets (docs/pools.md). Every
 * hint must agree across the ranks that open the file.
 */
#include "ad_stripefs.h"
#include "adioi.h"
#include "hint_fns.h"

void ADIOI_STRIPEFS_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code)
{
    static const char myname[] = "ADIOI_STRIPEFS_SETINFO";
    char             *value    = NULL;

    *error_code = MPI_SUCCESS;
    if (fd->info == MPI_INFO_NULL) {
        /* part of the open: defaults (-1: let the directory's pattern decide) */
        MPI_Info_create(&fd->info);
        fd->hints->striping_unit   = -1;
        fd->hints->striping_factor = -1;
        fd->hints->start_iodevice  = -1;
    }
    if (users_info != MPI_INFO_NULL) {
        ADIOI_Info_check_and_install_int(fd, users_info, "striping_unit", &fd->hints->striping_unit,
                                         (char *)myname, error_code);
        if (*error_code != MPI_SUCCESS) {
            return;
        }
        ADIOI_Info_check_and_install_int(fd, users_info, "striping_factor",
                                         &fd->hints->striping_factor, (char *)myname, error_code);
        if (*error_code != MPI_SUCCESS) {
            return;
        }
        ADIOI_Info_check_and_install_int(fd, users_info, "start_iodevice",
                                         &fd->hints->start_iodevice, (char *)myname, error_code);
        if (*error_code != MPI_SUCCESS) {
            return;
        }
        /* where the service is: the string hints are kept in fd->info */
        for (int i = 0; i < 5; i++) {
            static const char *const keys[] = {ADIOI_STRIPEFS_HINT_CONFIG, ADIOI_STRIPEFS_HINT_MGMT,
                                               ADIOI_STRIPEFS_HINT_AUTH, ADIOI_STRIPEFS_HINT_MIRROR,
                                               ADIOI_STRIPEFS_HINT_POOL};

            ADIOI_Info_check_and_install_str(fd, users_info, keys[i], &value, (char *)myname,
                                             error_code);
            if (*error_code != MPI_SUCCESS) {
                return;
            }
            if (value) {
                ADIOI_Free(value);
                value = NULL;
            }
        }
    }
    /* collective buffering and data sieving hints */
    ADIOI_GEN_SetInfo(fd, users_info, error_code);
}

int ADIOI_STRIPEFS_mirror_hint(ADIO_File fd)
{
    char value[16];
    int  flag = 0;

    if (fd->info == MPI_INFO_NULL) {
        return -1;
    }
    MPI_Info_get(fd->info, ADIOI_STRIPEFS_HINT_MIRROR, (int)sizeof(value) - 1, value, &flag);
    if (!flag) {
        return -1;
    }
    if (strcmp(value, "enable") == 0 || strcmp(value, "true") == 0) {
        return 1;
    }
    if (strcmp(value, "disable") == 0 || strcmp(value, "false") == 0) {
        return 0;
    }
    return -1; /* "automatic" and anything else: the directory decides */
}

int ADIOI_STRIPEFS_pool_hint(ADIO_File fd, char *buf)
{
    int flag = 0;

    buf[0] = '\0';
    if (fd->info != MPI_INFO_NULL) {
        MPI_Info_get(fd->info, ADIOI_STRIPEFS_HINT_POOL, ADIOI_STRIPEFS_POOL_MAX - 1, buf, &flag);
    }
    return flag && buf[0] != '\0';
}
