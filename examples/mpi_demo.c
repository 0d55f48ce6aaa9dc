/*
 * A small IOR-like MPI-IO job for the quick start: every rank writes its
 * block of one shared file collectively, the file is read back collectively
 * and checked, then each rank writes and reads a file of its own.
 *
 *   mpirun -np 4 stripefs-run ./mpi_demo stripefs:/demo [MiB per rank]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fill(char *buf, size_t n, int rank)
{
    for (size_t i = 0; i < n; i++) {
        buf[i] = (char)(rank * 31 + i * 13);
    }
}

static double phase(const char *what, MPI_File fh, MPI_Offset offset, char *buf, int bytes,
                    int write, int collective)
{
    MPI_Status status;
    double     start, elapsed, slowest;
    int        rc;

    MPI_Barrier(MPI_COMM_WORLD);
    start = MPI_Wtime();
    if (write) {
        rc = collective ? MPI_File_write_at_all(fh, offset, buf, bytes, MPI_BYTE, &status)
                        : MPI_File_write_at(fh, offset, buf, bytes, MPI_BYTE, &status);
    } else {
        rc = collective ? MPI_File_read_at_all(fh, offset, buf, bytes, MPI_BYTE, &status)
                        : MPI_File_read_at(fh, offset, buf, bytes, MPI_BYTE, &status);
    }
    elapsed = MPI_Wtime() - start;
    MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int  len;

        MPI_Error_string(rc, text, &len);
        fprintf(stderr, "%s failed: %s\n", what, text);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return slowest;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "stripefs:/demo";
    int         mib = argc > 2 ? atoi(argv[2]) : 64;
    int         rank, nprocs, bad = 0, all_bad, len;
    int         bytes;
    char        path[1024], value[MPI_MAX_INFO_VAL + 1];
    char       *out, *in;
    double      t;
    MPI_File    fh;
    MPI_Info    info;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    bytes = mib << 20;
    out   = malloc((size_t)bytes);
    in    = malloc((size_t)bytes);
    fill(out, (size_t)bytes, rank);

    snprintf(path, sizeof(path), "%s/shared", dir);
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) !=
        MPI_SUCCESS) {
        fprintf(stderr, "cannot open %s\n", path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_get_info(fh, &info);
    if (rank == 0) {
        int flag;

        MPI_Info_get(info, "romio_filesystem_type", MPI_MAX_INFO_VAL, value, &flag);
        printf("%s is handled by: %s\n", path, flag ? value : "?");
        MPI_Info_get(info, "striping_unit", MPI_MAX_INFO_VAL, value, &flag);
        printf("  chunk size %s bytes, ", flag ? value : "?");
        MPI_Info_get(info, "striping_factor", MPI_MAX_INFO_VAL, value, &flag);
        printf("striped over %s targets\n", flag ? value : "?");
    }
    MPI_Info_free(&info);
    t = phase("collective write", fh, (MPI_Offset)rank * bytes, out, bytes, 1, 1);
    if (rank == 0) {
        printf("shared file, collective write: %d ranks x %d MiB in %.3f s = %.0f MiB/s\n", nprocs,
               mib, t, nprocs * mib / t);
    }
    t = phase("collective read", fh, (MPI_Offset)rank * bytes, in, bytes, 0, 1);
    bad |= memcmp(in, out, (size_t)bytes) != 0;
    if (rank == 0) {
        printf("shared file, collective read:  %d ranks x %d MiB in %.3f s = %.0f MiB/s\n", nprocs,
               mib, t, nprocs * mib / t);
    }
    MPI_File_close(&fh);

    snprintf(path, sizeof(path), "%s/rank%03d", dir, rank);
    MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    t = phase("file-per-process write", fh, 0, out, bytes, 1, 0);
    if (rank == 0) {
        printf("file per process, write:       %d ranks x %d MiB in %.3f s = %.0f MiB/s\n", nprocs,
               mib, t, nprocs * mib / t);
    }
    memset(in, 0, (size_t)bytes);
    t = phase("file-per-process read", fh, 0, in, bytes, 0, 0);
    bad |= memcmp(in, out, (size_t)bytes) != 0;
    if (rank == 0) {
        printf("file per process, read:        %d ranks x %d MiB in %.3f s = %.0f MiB/s\n", nprocs,
               mib, t, nprocs * mib / t);
    }
    MPI_File_close(&fh);
    MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("every byte read back: %s\n", all_bad ? "MISMATCH" : "identical");
    }
    (void)len;
    free(out);
    free(in);
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
