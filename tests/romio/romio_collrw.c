/*
 * romio_collrw: collective write and read of one file by all ranks through an
 * interleaved file view (two-phase collective buffering), plus a nonblocking
 * collective write and MPI_Get_count checks. An unmodified MPI-IO program.
 *
 *   romio_collrw PATH [BLOCK_INTS [NBLOCKS]]
 *
 * Rank r owns blocks r, r+P, r+2P, ... of BLOCK_INTS ints each; the value at
 * global int index i is i * 7 + 3 (so the file's bytes do not depend on how it
 * was written). The second half of the blocks is written with
 * MPI_File_iwrite_at_all. Prints the hints romio_filesystem_type and
 * romio_standalone (or NONE) and "collrw: OK" when every check passed; exits
 * non-zero otherwise.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int check(int ok, int rank, const char *what)
{
    if (!ok)
        fprintf(stderr, "collrw: rank %d: FAILED: %s\n", rank, what);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    int          rank, nprocs, errs = 0, flag, count, i, b;
    int          block = 1024, nblocks = 8, half;
    MPI_File     fh;
    MPI_Datatype ftype;
    MPI_Info     info;
    MPI_Status   st;
    MPI_Request  req;
    char         value[MPI_MAX_INFO_VAL + 1];
    int         *wbuf, *rbuf;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: romio_collrw PATH [BLOCK_INTS [NBLOCKS]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (argc > 2)
        block = atoi(argv[2]);
    if (argc > 3)
        nblocks = atoi(argv[3]);
    half = nblocks / 2;

    wbuf = malloc(sizeof(int) * block * nblocks);
    rbuf = calloc(block * nblocks, sizeof(int));
    for (b = 0; b < nblocks; b++)
        for (i = 0; i < block; i++) {
            long g              = ((long)b * nprocs + rank) * block + i;
            wbuf[b * block + i] = (int)(g * 7 + 3);
        }

    MPI_Type_vector(nblocks, block, block * nprocs, MPI_INT, &ftype);
    MPI_Type_commit(&ftype);

    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_set_size(fh, 0);
    MPI_File_set_view(fh, (MPI_Offset)rank * block * sizeof(int), MPI_INT, ftype, "native",
                      MPI_INFO_NULL);

    /* first half: blocking collective write */
    MPI_File_write_at_all(fh, 0, wbuf, half * block, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    errs += check(count == half * block, rank, "MPI_Get_count after write_at_all");

    /* second half: nonblocking collective write */
    MPI_File_iwrite_at_all(fh, (MPI_Offset)half * block, wbuf + half * block,
                           (nblocks - half) * block, MPI_INT, &req);
    MPI_Wait(&req, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    errs += check(count == (nblocks - half) * block, rank, "MPI_Get_count after iwrite_at_all");
    MPI_File_sync(fh);

    MPI_File_read_at_all(fh, 0, rbuf, nblocks * block, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    errs += check(count == nblocks * block, rank, "MPI_Get_count after read_at_all");
    for (i = 0; i < nblocks * block; i++)
        if (rbuf[i] != wbuf[i]) {
            errs += check(0, rank, "data read back differs from data written");
            break;
        }

    MPI_File_get_info(fh, &info);
    MPI_Info_get(info, "romio_filesystem_type", MPI_MAX_INFO_VAL, value, &flag);
    if (rank == 0)
        printf("romio_filesystem_type: %s\n", flag ? value : "NONE");
    /* only a standalone ROMIO (the stripefs library) sets this one */
    MPI_Info_get(info, "romio_standalone", MPI_MAX_INFO_VAL, value, &flag);
    if (rank == 0)
        printf("romio_standalone: %s\n", flag ? value : "NONE");
    MPI_Info_free(&info);
    MPI_File_close(&fh);
    MPI_Type_free(&ftype);

    MPI_Allreduce(MPI_IN_PLACE, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("collrw: %s (%d ranks, %d blocks of %d ints each)\n", errs ? "FAILED" : "OK", nprocs,
               nblocks, block);
    free(wbuf);
    free(rbuf);
    MPI_Finalize();
    return errs ? 1 : 0;
}
