/*
 * What HDF5's testpar/t_pshutdown does: create a file with the MPI-IO
 * driver, write a dataset collectively, and call MPI_Finalize with the file,
 * the dataset and the property lists still open: HDF5 closes them in its
 * MPI_COMM_SELF attribute hook inside MPI_Finalize (and writes its
 * metadata there). Each rank writes N values rank * N + i. Then, after
 * MPI_Finalize, the program checks that HDF5 let go of its file (H5Fis_hdf5
 * would open it again through MPI: not allowed), and exits 0.
 *
 *   hdf5_shutdown FILE
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4096

int main(int argc, char **argv)
{
    int     rank, nprocs, flag = 0;
    hid_t   fapl, file, space, mem, dset, dxpl;
    hsize_t dims[1], start[1], count[1] = {N};
    int    *data;

    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE\n", argv[0]);
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    data = malloc(N * sizeof(*data));
    if (!data) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < N; i++) {
        data[i] = rank * N + i;
    }
    dims[0]  = (hsize_t)nprocs * N;
    start[0] = (hsize_t)rank * N;
    fapl     = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) < 0) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (file < 0) {
        fprintf(stderr, "rank %d: H5Fcreate %s failed\n", rank, argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    space = H5Screate_simple(1, dims, NULL);
    mem   = H5Screate_simple(1, count, NULL);
    dset  = H5Dcreate2(file, "data", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    dxpl  = H5Pcreate(H5P_DATASET_XFER);
    if (space < 0 || mem < 0 || dset < 0 || dxpl < 0 ||
        H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
        H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) < 0 ||
        H5Dwrite(dset, H5T_NATIVE_INT, mem, space, dxpl, data) < 0) {
        fprintf(stderr, "rank %d: the dataset write failed\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    printf("acked %d\n", rank);
    fflush(stdout);
    /* nothing closed: HDF5's hook does it inside MPI_Finalize */
    MPI_Finalize();
    if (MPI_Finalized(&flag) != MPI_SUCCESS || !flag) {
        fprintf(stderr, "rank %d: MPI_Finalized says MPI is not finalized\n", rank);
        return 1;
    }
    free(data);
    return 0;
}
