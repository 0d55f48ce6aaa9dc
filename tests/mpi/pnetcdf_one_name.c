/*
 * PnetCDF on one name (issue 16 item 1), with the real library:
 *
 *   pnetcdf_one_name NAME
 *
 * creates NAME (NC_CLOBBER) with one 1-D int variable of 130 values and
 * closes it; creates it again with NC_NOCLOBBER, which must fail with
 * NC_EEXIST (PnetCDF asks access(F_OK) on the name without its prefix);
 * creates it again with NC_CLOBBER and a variable of 10 values (a smaller
 * file: the old bytes must be cut, PnetCDF truncates by name); opens it
 * (PnetCDF reads the header with a POSIX open of the stripped name) and reads
 * the variable's length back. Prints "RESULT ..." lines; exits 1 on a
 * failed call.
 */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <string.h>

static int rank;

static int create(const char *name, int cmode, MPI_Offset length)
{
    int ncid, dim, var, rc, values[130];

    rc = ncmpi_create(MPI_COMM_WORLD, name, cmode, MPI_INFO_NULL, &ncid);
    if (rc != NC_NOERR) {
        return rc;
    }
    if ((rc = ncmpi_def_dim(ncid, "x", length, &dim)) != NC_NOERR ||
        (rc = ncmpi_def_var(ncid, "v", NC_INT, 1, &dim, &var)) != NC_NOERR ||
        (rc = ncmpi_enddef(ncid)) != NC_NOERR) {
        ncmpi_close(ncid);
        return rc;
    }
    for (int i = 0; i < 130; i++) {
        values[i] = i;
    }
    if (rank == 0) {
        MPI_Offset start = 0, count = length;

        rc = ncmpi_put_vara_int_all(ncid, var, &start, &count, values);
    } else {
        MPI_Offset start = 0, count = 0;

        rc = ncmpi_put_vara_int_all(ncid, var, &start, &count, values);
    }
    if (rc != NC_NOERR) {
        ncmpi_close(ncid);
        return rc;
    }
    return ncmpi_close(ncid);
}

int main(int argc, char **argv)
{
    const char *name   = argc > 1 ? argv[1] : "stripefs:/stripefs/nc";
    MPI_Offset  length = -1;
    int         failed = 0, rc, ncid, dim;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    rc = create(name, NC_CLOBBER, 130);
    if (rank == 0) {
        printf("RESULT create %s\n", rc == NC_NOERR ? "OK" : ncmpi_strerror(rc));
    }
    failed |= rc != NC_NOERR;
    rc = create(name, NC_NOCLOBBER, 130);
    if (rank == 0) {
        printf("RESULT noclobber %s\n", rc == NC_EEXIST ? "NC_EEXIST" : ncmpi_strerror(rc));
    }
    rc = create(name, NC_CLOBBER, 10);
    if (rank == 0) {
        printf("RESULT clobber %s\n", rc == NC_NOERR ? "OK" : ncmpi_strerror(rc));
    }
    failed |= rc != NC_NOERR;
    rc = ncmpi_open(MPI_COMM_WORLD, name, NC_NOWRITE, MPI_INFO_NULL, &ncid);
    if (rc == NC_NOERR) {
        if (ncmpi_inq_dimid(ncid, "x", &dim) == NC_NOERR) {
            ncmpi_inq_dimlen(ncid, dim, &length);
        }
        ncmpi_close(ncid);
    }
    if (rank == 0) {
        printf("RESULT open %s\n", rc == NC_NOERR ? "OK" : ncmpi_strerror(rc));
        printf("RESULT length %lld\n", (long long)length);
    }
    failed |= rc != NC_NOERR;
    MPI_Finalize();
    return failed;
}
