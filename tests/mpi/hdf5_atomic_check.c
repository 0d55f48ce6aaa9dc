/*
 * HDF5's atomicity test (testpar/t_dset.c dataset_atomicity in HDF5 1.10.8,
 * re-written here, the checks kept): a file with a DIM0 x DIM1 int dataset
 * (HDF5's is 64 x 32; larger ones span several stripefs targets),
 * reopened with H5Fset_mpi_atomicity(TRUE) (read back with
 * H5Fget_mpi_atomicity); rank 0 writes the whole dataset while the others
 * read it at the same time, and each reader must see all old or all new
 * values; rank 0 writes a strided hyperslab (noncontiguous) and the others
 * then read it back. Then every rank writes the same strided hyperslab at once,
 * collectively, each its own value, and the selection must hold one rank's
 * value throughout.
 *
 *   hdf5_atomic_check FILE ROUNDS DIM0 DIM1
 * Prints PASSED and exits 0, or names what failed and exits 1.
 */
#include <hdf5.h>
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

static int rank;

#define CHECK(cond, what)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAILED on rank %d: %s\n", rank, (what));                              \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

/* Whether the `n` values all equal `a` or all equal `b`. */
static int all_one_of(const int *v, size_t n, int a, int b)
{
    int first = v[0];

    if (first != a && first != b) {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if (v[i] != first) {
            return 0;
        }
    }
    return 1;
}

int main(int argc, char **argv)
{
    hsize_t dims[2], start[2] = {0, 0}, stride[2], count[2], block[2];
    hsize_t sel_n;
    size_t  all;
    int     np, rounds = argc == 5 ? atoi(argv[2]) : 0, value = 0;
    int    *buf;
    hbool_t atomicity = 0;
    hid_t   fapl, file, space, dset, mspace, fspace, dxpl;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (rounds <= 0 || atoi(argv[3]) < 2 * np || atoi(argv[4]) < 2 * np) {
        fprintf(stderr, "usage: hdf5_atomic_check FILE ROUNDS DIM0 DIM1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    dims[0] = (hsize_t)atoi(argv[3]);
    dims[1] = (hsize_t)atoi(argv[4]);
    /* HDF5's selection: np x np blocks, each one row and column short of
     * its share */
    for (int d = 0; d < 2; d++) {
        block[d]  = dims[d] / (hsize_t)np - 1;
        stride[d] = block[d] + 1;
        count[d]  = (hsize_t)np;
    }
    sel_n = count[0] * count[1] * block[0] * block[1];
    all   = (size_t)(dims[0] * dims[1]);
    buf   = malloc(all * sizeof(*buf));
    CHECK(buf != NULL, "out of memory");
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) >= 0, "H5Pset_fapl_mpio");
    file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(file >= 0, "H5Fcreate");
    space = H5Screate_simple(2, dims, NULL);
    dset = H5Dcreate2(file, "atomic", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(dset >= 0, "H5Dcreate2");
    for (size_t i = 0; i < all; i++) {
        buf[i] = 0;
    }
    if (rank == 0) {
        CHECK(H5Dwrite(dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0,
              "initial H5Dwrite");
    }
    H5Dclose(dset);
    H5Fclose(file);
    MPI_Barrier(MPI_COMM_WORLD);

    file = H5Fopen(argv[1], H5F_ACC_RDWR, fapl);
    CHECK(file >= 0, "H5Fopen");
    CHECK(H5Fset_mpi_atomicity(file, 1) >= 0, "H5Fset_mpi_atomicity(TRUE)");
    CHECK(H5Fget_mpi_atomicity(file, &atomicity) >= 0 && atomicity, "H5Fget_mpi_atomicity");
    dset = H5Dopen2(file, "atomic", H5P_DEFAULT);
    CHECK(dset >= 0, "H5Dopen2");

    /* 1. whole dataset: rank 0 writes while the others read */
    for (int r = 0; r < rounds; r++) {
        int old = value;

        value = 5 + r;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (size_t i = 0; i < all; i++) {
                buf[i] = value;
            }
            CHECK(H5Dwrite(dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0,
                  "H5Dwrite (contiguous)");
        } else {
            CHECK(H5Dread(dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0,
                  "H5Dread (contiguous)");
            CHECK(all_one_of(buf, all, old, value),
                  "contiguous: a reader saw part of a write (neither all old nor all new)");
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* 2. a strided hyperslab (HDF5's: blocks with gaps): rank 0 writes,
     * then the others read it (as HDF5's test does: HDF5 moves an
     * independent noncontiguous selection in several MPI calls, which no
     * MPI atomic mode makes one; ROMIO's ufs driver interleaves there too) */
    fspace = H5Dget_space(dset);
    CHECK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, stride, count, block) >= 0,
          "H5Sselect_hyperslab");
    mspace = H5Screate_simple(1, &sel_n, NULL);
    for (int r = 0; r < rounds; r++) {
        value = 100 + r;
        if (rank == 0) {
            for (size_t i = 0; i < sel_n; i++) {
                buf[i] = value;
            }
            CHECK(H5Dwrite(dset, H5T_NATIVE_INT, mspace, fspace, H5P_DEFAULT, buf) >= 0,
                  "H5Dwrite (strided)");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank != 0) {
            CHECK(H5Dread(dset, H5T_NATIVE_INT, mspace, fspace, H5P_DEFAULT, buf) >= 0,
                  "H5Dread (strided)");
            CHECK(all_one_of(buf, sel_n, value, value), "strided: a reader missed the write");
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* 3. every rank writes the strided selection at once, its own value,
     * collectively (one MPI call per rank: MPI_File_write_at_all) */
    dxpl = H5Pcreate(H5P_DATASET_XFER);
    CHECK(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) >= 0, "H5Pset_dxpl_mpio");
    for (int r = 0; r < rounds; r++) {
        for (size_t i = 0; i < sel_n; i++) {
            buf[i] = 1000 * (r + 1) + rank;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(H5Dwrite(dset, H5T_NATIVE_INT, mspace, fspace, dxpl, buf) >= 0,
              "H5Dwrite (overlapping, collective)");
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            CHECK(H5Dread(dset, H5T_NATIVE_INT, mspace, fspace, H5P_DEFAULT, buf) >= 0,
                  "H5Dread (overlapping)");
            CHECK(buf[0] >= 1000 * (r + 1) && buf[0] < 1000 * (r + 1) + np &&
                      all_one_of(buf, sel_n, buf[0], buf[0]),
                  "overlapping writes: the selection mixes two ranks' writes");
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    H5Pclose(dxpl);
    H5Sclose(mspace);
    H5Sclose(fspace);
    H5Dclose(dset);
    H5Sclose(space);
    H5Fclose(file);
    H5Pclose(fapl);
    free(buf);
    if (rank == 0) {
        printf("PASSED: %d rounds each: contiguous and strided writes seen whole by %d readers, "
               "%d overlapping strided writers serialised\n",
               rounds, np - 1, np);
    }
    MPI_Finalize();
    return 0;
}
