/*
 * romio_filetypes: file views of common derived filetypes (subarray, darray
 * block and cyclic, resized, hindexed, nested) read by one process; each read
 * must match MPI_Pack of the same type over the same data. An unmodified
 * MPI-IO program.
 *
 *   romio_filetypes PATH
 *
 * Prints one line per type ("ok", "WRONG" or "REFUSED <why>") and
 * "filetypes: OK" when all matched; exits 1 otherwise.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define NDATA 4096

static double data[NDATA], expect[NDATA], got[NDATA];

static int check(const char *path, MPI_Datatype ft, const char *name)
{
    MPI_File fh;
    int      tsize, pos = 0, rc, len, bad = 0;
    char     msg[MPI_MAX_ERROR_STRING];

    MPI_Type_commit(&ft);
    MPI_Type_size(ft, &tsize);
    MPI_Pack(data, 1, ft, expect, sizeof(expect), &pos, MPI_COMM_SELF);
    memset(got, 0, sizeof(got));
    MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    rc = MPI_File_set_view(fh, 0, MPI_DOUBLE, ft, "native", MPI_INFO_NULL);
    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, msg, &len);
        printf("%-26s REFUSED %s\n", name, msg);
        bad = 1;
    } else {
        MPI_File_read(fh, got, tsize / (int)sizeof(double), MPI_DOUBLE, MPI_STATUS_IGNORE);
        bad = memcmp(got, expect, tsize) != 0;
        printf("%-26s %s\n", name, bad ? "WRONG" : "ok");
    }
    MPI_File_close(&fh);
    MPI_Type_free(&ft);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Datatype t, t2, r;
    MPI_File     fh;
    char         name[64];
    int          i, k, errs = 0;
    int          sz[2] = {10, 10}, sub[2] = {3, 4}, st[2] = {2, 5};
    int          sz3[3] = {6, 7, 8}, sub3[3] = {2, 3, 4}, st3[3] = {1, 2, 3};
    int          bl[3]  = {2, 3, 1};
    MPI_Aint     dp[3]  = {0, 80, 200};
    int          gs1[1] = {21}, ds1[1] = {MPI_DISTRIBUTE_CYCLIC}, da1[1] = {3}, ps1[1] = {3};
    int          gs2[2] = {8, 6}, ds2[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
    int          da2[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, ps2[2] = {2, 2};

    MPI_Init(&argc, &argv);
    if (argc != 2) {
        fprintf(stderr, "usage: romio_filetypes PATH\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    for (i = 0; i < NDATA; i++)
        data[i] = i;
    MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    MPI_File_write(fh, data, NDATA, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);

    MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_DOUBLE, &t);
    errs += check(argv[1], t, "subarray 2d C");
    MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_FORTRAN, MPI_DOUBLE, &t);
    errs += check(argv[1], t, "subarray 2d Fortran");
    MPI_Type_create_subarray(3, sz3, sub3, st3, MPI_ORDER_C, MPI_DOUBLE, &t);
    errs += check(argv[1], t, "subarray 3d C");
    MPI_Type_vector(5, 2, 7, MPI_DOUBLE, &t2);
    MPI_Type_create_resized(t2, 0, 400, &t);
    MPI_Type_free(&t2);
    errs += check(argv[1], t, "resized(vector)");
    MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &t2);
    MPI_Type_contiguous(3, t2, &t);
    MPI_Type_free(&t2);
    errs += check(argv[1], t, "contiguous(vector)");
    MPI_Type_create_hindexed(3, bl, dp, MPI_DOUBLE, &t);
    errs += check(argv[1], t, "hindexed");
    MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &t2);
    MPI_Type_create_resized(t2, 0, 48, &r);
    MPI_Type_contiguous(4, r, &t);
    MPI_Type_free(&t2);
    MPI_Type_free(&r);
    errs += check(argv[1], t, "contiguous(resized(vec))");
    /* 21 = 7 full blocks of 3: cyclic distributions without a partial block */
    for (k = 0; k < 3; k++) {
        MPI_Type_create_darray(3, k, 1, gs1, ds1, da1, ps1, MPI_ORDER_C, MPI_DOUBLE, &t);
        snprintf(name, sizeof(name), "darray 1d cyclic(3) r%d", k);
        errs += check(argv[1], t, name);
    }
    for (k = 0; k < 4; k++) {
        MPI_Type_create_darray(4, k, 2, gs2, ds2, da2, ps2, MPI_ORDER_C, MPI_DOUBLE, &t);
        snprintf(name, sizeof(name), "darray 2d block r%d", k);
        errs += check(argv[1], t, name);
    }
    printf("filetypes: %s\n", errs ? "FAILED" : "OK");
    MPI_Finalize();
    return errs ? 1 : 0;
}
