/*
 * Files created through MPI-IO, for their permission bits: a collective
 * create (one process creates, ROMIO's collective open), one exclusive
 * create per process (MPI_COMM_SELF), and a file chmod'ed to 0604 and then
 * opened again with MPI_MODE_CREATE (which must leave its mode alone). The
 * test script runs it on stripefs and on a local directory (ROMIO's ufs
 * driver, so the kernel decides there) under several umasks and compares
 * the modes. chmod of a stripefs: name goes through the POSIX preload
 * library, which stripefs-run loads too.
 *
 *   mpi_mode_check DIR   (DIR like stripefs:/m or /tmp/local/m, existing)
 *
 * Prints "created NAME" per file; exits 0 when every open succeeded.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int rank, failures;

static void expect(int rc, const char *what, const char *path)
{
    char text[MPI_MAX_ERROR_STRING];
    int  len;

    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, text, &len);
        printf("rank %d FAILED: %s %s: %s\n", rank, what, path, text);
        failures++;
    }
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "stripefs:/";
    char        path[1024];
    MPI_File    fh;
    MPI_Status  status;
    int         rc, all;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);

    /* collective create: ROMIO lets one process create the file */
    snprintf(path, sizeof(path), "%s/coll", dir);
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    expect(rc, "collective create", path);
    if (rc == MPI_SUCCESS) {
        rc = MPI_File_write_at_all(fh, rank * 4, "data", 4, MPI_BYTE, &status);
        expect(rc, "write_at_all", path);
        MPI_File_close(&fh);
    }
    if (rank == 0 && rc == MPI_SUCCESS) {
        printf("created coll\n");
    }

    /* one file per process, exclusive, write-only */
    snprintf(path, sizeof(path), "%s/indep_%d", dir, rank);
    rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_EXCL,
                       MPI_INFO_NULL, &fh);
    expect(rc, "exclusive create", path);
    if (rc == MPI_SUCCESS) {
        MPI_File_close(&fh);
        printf("created indep_%d\n", rank);
    }

    /* MPI_MODE_CREATE on an existing file opens it and changes nothing */
    snprintf(path, sizeof(path), "%s/kept", dir);
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    expect(rc, "collective create", path);
    if (rc == MPI_SUCCESS) {
        MPI_File_close(&fh);
    }
    if (rank == 0 && chmod(path, 0604) != 0) {
        printf("rank 0 FAILED: chmod %s 0604: %m\n", path);
        failures++;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    expect(rc, "MPI_MODE_CREATE of an existing file", path);
    if (rc == MPI_SUCCESS) {
        MPI_File_close(&fh);
    }
    if (rank == 0 && rc == MPI_SUCCESS) {
        printf("created kept\n");
    }

    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return all ? 1 : 0;
}
