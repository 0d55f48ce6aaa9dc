/*
 * MPI-IO against stripefs, as an unmodified MPI program sees it (the
 * driver comes in by LD_PRELOAD or link order). Every byte written is read
 * back and compared; error classes are checked.
 *
 *   mpi_io_check DIR   (DIR like stripefs:/t) runs all cases
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs, failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        int ok_ = (cond) ? 1 : 0, all_;                                                            \
        MPI_Allreduce(&ok_, &all_, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);                           \
        if (!ok_) {                                                                                \
            printf("rank %d FAILED: ", rank);                                                      \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        } else if (rank == 0 && all_) {                                                            \
            printf("ok: ");                                                                        \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
        if (!all_) {                                                                               \
            failures++;                                                                            \
        }                                                                                          \
        fflush(stdout);                                                                            \
    } while (0)

static unsigned char pattern_byte(int who, long i)
{
    return (unsigned char)((who * 131 + i * 7 + (i >> 9)) & 0xff);
}

static const char *error_text(int code)
{
    static char text[MPI_MAX_ERROR_STRING];
    int         len;

    MPI_Error_string(code, text, &len);
    return text;
}

static int error_class_of(int code)
{
    int cls;

    MPI_Error_class(code, &cls);
    return cls;
}

/* A strided view: rank r owns blocks r, r+P, r+2P... of BLOCK bytes. */
static void case_collective_strided(const char *dir)
{
    enum { BLOCK = 65536 + 17, BLOCKS = 24 };
    char           path[512], value[MPI_MAX_INFO_VAL + 1];
    MPI_File       fh;
    MPI_Datatype   filetype;
    MPI_Info       info;
    MPI_Status     status;
    unsigned char *out = malloc((size_t)BLOCK * BLOCKS), *in = malloc((size_t)BLOCK * BLOCKS);
    int            rc, flag, count, same = 1;
    MPI_Offset     size;

    snprintf(path, sizeof(path), "%s/coll_strided", dir);
    for (long i = 0; i < (long)BLOCK * BLOCKS; i++) {
        out[i] = pattern_byte(rank, i);
    }
    MPI_Type_vector(BLOCKS, BLOCK, BLOCK * nprocs, MPI_BYTE, &filetype);
    MPI_Type_commit(&filetype);
    MPI_Info_create(&info);
    MPI_Info_set(info, "striping_unit", "131072");
    MPI_Info_set(info, "striping_factor", "4");
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_cb_read", "enable");
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    CHECK(rc == MPI_SUCCESS, "collective open of %s (%s)", path, rc ? error_text(rc) : "");
    if (rc != MPI_SUCCESS) {
        return;
    }
    MPI_File_get_info(fh, &info);
    MPI_Info_get(info, "romio_filesystem_type", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && strstr(value, "stripefs") != NULL, "romio_filesystem_type is '%s'",
          flag ? value : "(unset)");
    MPI_Info_get(info, "striping_unit", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && atoi(value) == 131072, "striping_unit hint honoured: %s", flag ? value : "-");
    MPI_Info_get(info, "striping_factor", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && atoi(value) == 4, "striping_factor hint honoured: %s", flag ? value : "-");
    MPI_Info_free(&info);

    MPI_File_set_view(fh, (MPI_Offset)rank * BLOCK, MPI_BYTE, filetype, "native", MPI_INFO_NULL);
    rc = MPI_File_write_all(fh, out, BLOCK * BLOCKS, MPI_BYTE, &status);
    MPI_Get_count(&status, MPI_BYTE, &count);
    CHECK(rc == MPI_SUCCESS && count == BLOCK * BLOCKS,
          "write_all of %d strided blocks per rank (count %d)", BLOCKS, count);
    MPI_File_get_size(fh, &size);
    CHECK(size == (MPI_Offset)BLOCK * BLOCKS * nprocs, "file size %lld", (long long)size);
    memset(in, 0, (size_t)BLOCK * BLOCKS);
    rc = MPI_File_read_at_all(fh, 0, in, BLOCK * BLOCKS, MPI_BYTE, &status);
    MPI_Get_count(&status, MPI_BYTE, &count);
    CHECK(rc == MPI_SUCCESS && count == BLOCK * BLOCKS &&
              memcmp(in, out, (size_t)BLOCK * BLOCKS) == 0,
          "read_at_all returns every byte written (count %d)", count);
    MPI_File_close(&fh);

    /* every byte of the file, read contiguously by rank 0, is where the
     * views put it */
    if (rank == 0) {
        unsigned char *whole = malloc((size_t)BLOCK * BLOCKS * nprocs);

        MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        MPI_File_read_at(fh, 0, whole, BLOCK * BLOCKS * nprocs, MPI_BYTE, &status);
        for (long b = 0; b < (long)BLOCKS * nprocs && same; b++) {
            int owner = (int)(b % nprocs);

            for (long i = 0; i < BLOCK; i++) {
                if (whole[b * BLOCK + i] != pattern_byte(owner, (b / nprocs) * BLOCK + i)) {
                    same = 0;
                    break;
                }
            }
        }
        MPI_File_close(&fh);
        free(whole);
    }
    CHECK(same, "the interleaved file holds each rank's blocks in place");
    MPI_Type_free(&filetype);
    free(out);
    free(in);
}

/* Independent noncontiguous I/O in memory and file (list I/O). */
static void case_independent_noncontig(const char *dir)
{
    enum { N = 1000 };
    char         path[512];
    MPI_File     fh;
    MPI_Datatype memtype, filetype;
    MPI_Status   status;
    int         *out = calloc(2 * N, sizeof(int)), *in = calloc(2 * N, sizeof(int));
    int          rc, count, same = 1;

    snprintf(path, sizeof(path), "%s/indep_%d", dir, rank);
    for (int i = 0; i < 2 * N; i++) {
        out[i] = rank * 100000 + i;
    }
    MPI_Type_vector(N, 1, 2, MPI_INT, &memtype); /* every other int of the buffer */
    MPI_Type_commit(&memtype);
    MPI_Type_vector(N, 3, 5, MPI_INT, &filetype); /* 3 of every 5 ints in the file */
    MPI_Type_commit(&filetype);
    rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_EXCL,
                       MPI_INFO_NULL, &fh);
    CHECK(rc == MPI_SUCCESS, "file-per-process exclusive create (%s)", rc ? error_text(rc) : "");
    if (rc) {
        return;
    }
    MPI_File_set_view(fh, 0, MPI_INT, filetype, "native", MPI_INFO_NULL);
    rc = MPI_File_write(fh, out, 1, memtype, &status);
    MPI_Get_count(&status, memtype, &count);
    CHECK(rc == MPI_SUCCESS && count == 1, "noncontiguous memory into a noncontiguous view");
    MPI_File_seek(fh, 0, MPI_SEEK_SET);
    rc = MPI_File_read(fh, in, 1, memtype, &status);
    for (int i = 0; i < 2 * N; i += 2) {
        same &= in[i] == out[i];
    }
    CHECK(rc == MPI_SUCCESS && same, "read back through the same types");
    MPI_File_close(&fh);
    MPI_Type_free(&memtype);
    MPI_Type_free(&filetype);
    free(out);
    free(in);
}

static void case_errors(const char *dir)
{
    char     path[512];
    MPI_File fh;
    int      rc;

    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    snprintf(path, sizeof(path), "%s/no_such_file", dir);
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(rc != MPI_SUCCESS && error_class_of(rc) == MPI_ERR_NO_SUCH_FILE,
          "opening a missing file: class MPI_ERR_NO_SUCH_FILE, '%s'", error_text(rc));
    snprintf(path, sizeof(path), "%s/coll_strided", dir);
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                       MPI_INFO_NULL, &fh);
    CHECK(rc != MPI_SUCCESS && error_class_of(rc) == MPI_ERR_FILE_EXISTS,
          "exclusive create of an existing file: class MPI_ERR_FILE_EXISTS, '%s'", error_text(rc));
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (rc == MPI_SUCCESS) {
        int atomic = 0;

        rc = MPI_File_set_atomicity(fh, 1);
        MPI_File_get_atomicity(fh, &atomic);
        CHECK(rc == MPI_SUCCESS && atomic == 1, "atomic mode is set (docs/atomic-mode.md): '%s'",
              error_text(rc));
        {
            /* ROMIO locks shared-pointer I/O itself in atomic mode (fcntl on
             * fd_sys, which stripefs does not have): it must not abort */
            char one = 'a';

            rc = MPI_File_write_shared(fh, &one, 1, MPI_CHAR, MPI_STATUS_IGNORE);
            CHECK(rc == MPI_SUCCESS, "write_shared in atomic mode: '%s'", error_text(rc));
        }
        MPI_File_set_atomicity(fh, 0);
        rc              = MPI_File_set_size(fh, 1000);
        MPI_Offset size = 0;
        MPI_File_get_size(fh, &size);
        CHECK(rc == MPI_SUCCESS && size == 1000, "set_size shrinks to 1000 (%lld)",
              (long long)size);
        MPI_File_close(&fh);
    }
    if (rank == 0) {
        rc = MPI_File_delete(path, MPI_INFO_NULL);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "MPI_File_delete");
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(rc != MPI_SUCCESS && error_class_of(rc) == MPI_ERR_NO_SUCH_FILE,
          "the deleted file is gone");
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "stripefs:/";

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    case_collective_strided(dir);
    case_independent_noncontig(dir);
    case_errors(dir);
    if (rank == 0) {
        printf("%d check%s failed\n", failures, failures == 1 ? "" : "s");
    }
    MPI_Finalize();
    return failures ? 1 : 0;
}
