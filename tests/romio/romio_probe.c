/*
 * romio_probe: an unmodified MPI-IO program (nothing stripefs-specific in it)
 * that reports which MPI-IO implementation handled its files.
 *
 *   romio_probe PLAIN_PATH [OTHER_PATH]
 *
 * Opens PLAIN_PATH (created) and prints the hint romio_filesystem_type, which
 * only ROMIO sets ("romio_filesystem_type: NONE" when absent). Then, if given,
 * opens OTHER_PATH (e.g. "stripefs:/x") and prints the outcome: the error
 * class and MPI_Error_string of the returned code. Rank 0 prints.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static const char *class_name(int cls)
{
    switch (cls) {
    case MPI_SUCCESS:
        return "MPI_SUCCESS";
    case MPI_ERR_IO:
        return "MPI_ERR_IO";
    case MPI_ERR_NO_SUCH_FILE:
        return "MPI_ERR_NO_SUCH_FILE";
    case MPI_ERR_FILE:
        return "MPI_ERR_FILE";
    case MPI_ERR_BAD_FILE:
        return "MPI_ERR_BAD_FILE";
    case MPI_ERR_ACCESS:
        return "MPI_ERR_ACCESS";
    case MPI_ERR_UNSUPPORTED_OPERATION:
        return "MPI_ERR_UNSUPPORTED_OPERATION";
    case MPI_ERR_ARG:
        return "MPI_ERR_ARG";
    default:
        return "other";
    }
}

int main(int argc, char **argv)
{
    int      rank, rc, cls, len, flag;
    MPI_File fh;
    MPI_Info info;
    char     value[MPI_MAX_INFO_VAL + 1], msg[MPI_MAX_ERROR_STRING];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: romio_probe PLAIN_PATH [OTHER_PATH]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    rc =
        MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "romio_probe: cannot open %s: %s\n", argv[1], msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_get_info(fh, &info);
    MPI_Info_get(info, "romio_filesystem_type", MPI_MAX_INFO_VAL, value, &flag);
    if (rank == 0)
        printf("romio_filesystem_type: %s\n", flag ? value : "NONE");
    MPI_Info_free(&info);
    MPI_File_close(&fh);

    if (argc > 2) {
        rc = MPI_File_open(MPI_COMM_WORLD, argv[2], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                           &fh);
        if (rank == 0) {
            if (rc == MPI_SUCCESS) {
                printf("open %s: succeeded\n", argv[2]);
            } else {
                MPI_Error_class(rc, &cls);
                MPI_Error_string(rc, msg, &len);
                printf("open %s: failed: class=%s(%d) code=%d\n", argv[2], class_name(cls), cls,
                       rc);
                printf("error string: %s\n", msg);
            }
        }
        if (rc == MPI_SUCCESS)
            MPI_File_close(&fh);
        /* a second failure must give the same code (codes are reused) */
        rc = MPI_File_delete(argv[2], MPI_INFO_NULL);
        if (rank == 0 && rc != MPI_SUCCESS) {
            MPI_Error_class(rc, &cls);
            MPI_Error_string(rc, msg, &len);
            printf("delete %s: failed: class=%s(%d)\n", argv[2], class_name(cls), cls);
            printf("delete error string: %s\n", msg);
        }
    }
    MPI_Finalize();
    return 0;
}
