/*
 * ad_stripefs: the process's client connection, and error codes.
 */
#include "ad_stripefs.h"
#include "adioi.h"

#include <errno.h>
#include <string.h>

static sfs_client_t *ADIOI_STRIPEFS_client;
static int           ADIOI_STRIPEFS_keyval = MPI_KEYVAL_INVALID;

/* Runs inside MPI_Finalize, where MPI_COMM_SELF's attributes are deleted,
 * in an order the MPI library chooses (Open MPI: the reverse of their
 * registration, so before the hook of a library, HDF5, that registered
 * earlier and closes its files in it). So files may still be open: the
 * client library keeps the connection for them, and the last close ends it
 * (a file never closed keeps it to the process's exit; what its writes
 * acknowledged is on the servers already). A file opened after this hook
 * connects anew (without a hook: the process's exit ends it). */
static int ADIOI_STRIPEFS_finalize(MPI_Comm comm, int keyval, void *attribute, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)attribute;
    (void)extra;
    sfs_client_disconnect(ADIOI_STRIPEFS_client);
    ADIOI_STRIPEFS_client = NULL;
    return MPI_SUCCESS;
}

static const char *ADIOI_STRIPEFS_info_value(MPI_Info info, const char *key, char *buf, int buflen)
{
    int flag = 0;

    if (info == MPI_INFO_NULL) {
        return NULL;
    }
    ADIOI_Info_get(info, key, buflen - 1, buf, &flag);
    return flag && buf[0] ? buf : NULL;
}

int ADIOI_STRIPEFS_Client(ADIO_File fd, sfs_client_t **client_p, int *error_code)
{
    static const char   myname[] = "ADIOI_STRIPEFS_CLIENT";
    sfs_client_params_t params;
    char                config[MPI_MAX_INFO_VAL + 1], mgmt[MPI_MAX_INFO_VAL + 1];
    char                auth[MPI_MAX_INFO_VAL + 1];
    int                 rc;

    *error_code = MPI_SUCCESS;
    if (ADIOI_STRIPEFS_client) {
        *client_p = ADIOI_STRIPEFS_client;
        return 0;
    }
    /* the service's address: hints first, then the environment (see
     * sfs_client.h) */
    memset(&params, 0, sizeof(params));
    params.field_mask = SFS_CLIENT_PARAM_PROGRAM;
    params.program    = "mpi-io (stripefs ROMIO driver)";
    if (fd) {
        params.config_path =
            ADIOI_STRIPEFS_info_value(fd->info, ADIOI_STRIPEFS_HINT_CONFIG, config, sizeof(config));
        params.mgmt =
            ADIOI_STRIPEFS_info_value(fd->info, ADIOI_STRIPEFS_HINT_MGMT, mgmt, sizeof(mgmt));
        params.connauth_file =
            ADIOI_STRIPEFS_info_value(fd->info, ADIOI_STRIPEFS_HINT_AUTH, auth, sizeof(auth));
        params.field_mask |= (params.config_path ? SFS_CLIENT_PARAM_CONFIG : 0) |
                             (params.mgmt ? SFS_CLIENT_PARAM_MGMT : 0) |
                             (params.connauth_file ? SFS_CLIENT_PARAM_CONNAUTH : 0);
    }
    rc = sfs_client_connect(&params, &ADIOI_STRIPEFS_client);
    if (rc) {
        *error_code = ADIOI_STRIPEFS_Err(myname, fd ? fd->filename : NULL, rc);
        return rc;
    }
    if (ADIOI_STRIPEFS_keyval == MPI_KEYVAL_INVALID) {
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, ADIOI_STRIPEFS_finalize,
                               &ADIOI_STRIPEFS_keyval, NULL);
        MPI_Comm_set_attr(MPI_COMM_SELF, ADIOI_STRIPEFS_keyval, NULL);
    }
    *client_p = ADIOI_STRIPEFS_client;
    return 0;
}

/* The MPI error class of a negative errno from the client library. */
static int ADIOI_STRIPEFS_class(int rc)
{
    switch (-rc) {
    case ENOENT:
        return MPI_ERR_NO_SUCH_FILE;
    case EEXIST:
        return MPI_ERR_FILE_EXISTS;
    case EACCES:
    case EPERM:
        return MPI_ERR_ACCESS;
    case ENOSPC:
        return MPI_ERR_NO_SPACE;
    case EDQUOT:
        return MPI_ERR_QUOTA;
    case EROFS:
        return MPI_ERR_READ_ONLY;
    case EISDIR:
    case ENOTDIR:
    case ENAMETOOLONG:
    case EINVAL:
        return MPI_ERR_BAD_FILE;
    case EOPNOTSUPP:
        return MPI_ERR_UNSUPPORTED_OPERATION;
    default:
        return MPI_ERR_IO;
    }
}

int ADIOI_STRIPEFS_Err(const char *myname, const char *filename, int rc)
{
    return ADIOI_STRIPEFS_Err_detail(myname, filename, rc, sfs_client_error());
}

int ADIOI_STRIPEFS_Err_detail(const char *myname, const char *filename, int rc, const char *detail)
{
    if (!detail || !detail[0]) {
        detail = strerror(-rc);
    }
    if (filename) {
        return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                    ADIOI_STRIPEFS_class(rc), "**io",
                                    ADIOI_STRIPEFS_PREFIX "%s: %s", filename, detail);
    }
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                ADIOI_STRIPEFS_class(rc), "**io", "stripefs: %s", detail);
}
