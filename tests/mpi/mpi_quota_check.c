/* MPI-IO writes against a space quota (tests/service/test_service_quota.sh):
 * mpi_quota_check FILE MIB writes MIB blocks of 1 MiB with
 * MPI_File_write_at and prints "WROTE n" and, for the first write that
 * failed, "CLASS name" (MPI_ERR_QUOTA, ...) and "MESSAGE text". Exit 0
 * either way; 1 when the open failed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *class_name(int cls)
{
    return cls == MPI_ERR_QUOTA      ? "MPI_ERR_QUOTA"
           : cls == MPI_ERR_NO_SPACE ? "MPI_ERR_NO_SPACE"
           : cls == MPI_ERR_ACCESS   ? "MPI_ERR_ACCESS"
           : cls == MPI_ERR_IO       ? "MPI_ERR_IO"
                                     : "other";
}

int main(int argc, char **argv)
{
    static char block[1 << 20];
    MPI_File    fh;
    int         rc, blocks, n = 0;

    MPI_Init(&argc, &argv);
    if (argc != 3) {
        fprintf(stderr, "usage: mpi_quota_check FILE MIB\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    blocks = atoi(argv[2]);
    memset(block, 'q', sizeof(block));
    rc = MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                       &fh);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "open %s failed\n", argv[1]);
        MPI_Finalize();
        return 1;
    }
    for (; n < blocks; n++) {
        MPI_Status st;

        rc = MPI_File_write_at(fh, (MPI_Offset)n << 20, block, (int)sizeof(block), MPI_BYTE, &st);
        if (rc != MPI_SUCCESS) {
            char msg[MPI_MAX_ERROR_STRING];
            int  cls, len;

            MPI_Error_class(rc, &cls);
            MPI_Error_string(rc, msg, &len);
            printf("CLASS %s\nMESSAGE %s\n", class_name(cls), msg);
            break;
        }
    }
    printf("WROTE %d\n", n);
    MPI_File_close(&fh);
    MPI_Finalize();
    return 0;
}
