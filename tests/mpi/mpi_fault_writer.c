/*
 * Writes its own file (1 MiB at a time) until a write fails or the time is
 * up; on failure prints the MPI error string and when it happened. Used by
 * the fault tests: a storage rank is killed while this runs.
 *
 *   mpi_fault_writer DIR SECONDS
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static double wall_seconds(void)
{
    struct timeval tv;

    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
    const char *dir     = argc > 1 ? argv[1] : "stripefs:/stream";
    double      seconds = argc > 2 ? atof(argv[2]) : 60;
    int         rank, rc = MPI_SUCCESS, failed = 0;
    char        path[512], *buf = malloc(1 << 20);
    double      start;
    MPI_File    fh;
    MPI_Offset  offset = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    memset(buf, 'a' + rank, 1 << 20);
    snprintf(path, sizeof(path), "%s/f%d", dir, rank);
    rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int  len;

        MPI_Error_string(rc, text, &len);
        printf("rank %d: cannot open %s: %s\n", rank, path, text);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    start = MPI_Wtime();
    printf("rank %d: writing %s\n", rank, path);
    fflush(stdout);
    while (MPI_Wtime() - start < seconds) {
        rc = MPI_File_write_at(fh, offset, buf, 1 << 20, MPI_BYTE, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            char text[MPI_MAX_ERROR_STRING];
            int  len, cls;

            MPI_Error_string(rc, text, &len);
            MPI_Error_class(rc, &cls);
            printf("rank %d: write failed at %.3f (epoch s) after %lld MiB: class %s: %s\n", rank,
                   wall_seconds(), (long long)(offset >> 20),
                   cls == MPI_ERR_NO_SPACE ? "MPI_ERR_NO_SPACE"
                   : cls == MPI_ERR_IO     ? "MPI_ERR_IO"
                                           : "other",
                   text);
            fflush(stdout);
            failed = 1;
            break;
        }
        offset += 1 << 20;
        if (offset >= (MPI_Offset)256 << 20) {
            offset = 0; /* keep the file bounded */
        }
    }
    MPI_File_close(&fh);
    free(buf);
    MPI_Finalize();
    return failed ? 3 : 0;
}
