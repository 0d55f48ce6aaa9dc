/*
 * Parallel HDF5 on stripefs: a 2-D dataset written collectively (each rank
 * a band of rows), read back collectively and independently, every value
 * checked. Run under stripefs-run so HDF5's MPI-IO calls reach the driver.
 *
 *   hdf5_check stripefs:/dir/file.h5
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define ROWS_PER_RANK 64
#define COLS          1000

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "stripefs:/hdf5_check.h5";
    int         rank, nprocs, bad = 0, all_bad;
    hsize_t     dims[2], start[2], count[2];
    double     *out, *in;
    hid_t       fapl, file, space, memspace, dset, dxpl;
    herr_t      status;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    dims[0]  = (hsize_t)ROWS_PER_RANK * nprocs;
    dims[1]  = COLS;
    start[0] = (hsize_t)ROWS_PER_RANK * rank;
    start[1] = 0;
    count[0] = ROWS_PER_RANK;
    count[1] = COLS;
    out      = malloc(sizeof(double) * ROWS_PER_RANK * COLS);
    in       = malloc(sizeof(double) * ROWS_PER_RANK * COLS);
    for (int i = 0; i < ROWS_PER_RANK * COLS; i++) {
        out[i] = rank * 1e6 + i * 0.5;
    }

    fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (file < 0) {
        fprintf(stderr, "rank %d: H5Fcreate(%s) failed\n", rank, path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    space = H5Screate_simple(2, dims, NULL);
    dset =
        H5Dcreate2(file, "field", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
    memspace = H5Screate_simple(2, count, NULL);
    dxpl     = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    status = H5Dwrite(dset, H5T_NATIVE_DOUBLE, memspace, space, dxpl, out);
    bad |= status < 0;
    H5Dclose(dset);
    H5Sclose(space);
    H5Fclose(file);

    /* reopen read-only and read collectively, then one rank's band independently */
    file  = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    dset  = H5Dopen2(file, "field", H5P_DEFAULT);
    space = H5Dget_space(dset);
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
    status = H5Dread(dset, H5T_NATIVE_DOUBLE, memspace, space, dxpl, in);
    bad |= status < 0;
    for (int i = 0; i < ROWS_PER_RANK * COLS; i++) {
        bad |= in[i] != out[i];
    }
    {
        hsize_t other_start[2] = {(hsize_t)ROWS_PER_RANK * ((rank + 1) % nprocs), 0};

        H5Sselect_hyperslab(space, H5S_SELECT_SET, other_start, NULL, count, NULL);
        status = H5Dread(dset, H5T_NATIVE_DOUBLE, memspace, space, H5P_DEFAULT, in);
        bad |= status < 0;
        for (int i = 0; i < ROWS_PER_RANK * COLS; i++) {
            bad |= in[i] != ((rank + 1) % nprocs) * 1e6 + i * 0.5;
        }
    }
    H5Sclose(space);
    H5Sclose(memspace);
    H5Dclose(dset);
    H5Pclose(dxpl);
    H5Pclose(fapl);
    H5Fclose(file);
    MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%s: %d x %d doubles written collectively by %d ranks and read back: %s\n", path,
               (int)dims[0], (int)dims[1], nprocs, all_bad ? "MISMATCH" : "identical");
    }
    free(out);
    free(in);
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
