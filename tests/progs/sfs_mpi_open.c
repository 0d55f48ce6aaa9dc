/*
 * Open one file through MPI-IO with a given access mode and print the MPI
 * error class, by name, that every rank got (for the permission tests: run
 * it as a user, with the stripefs driver preloaded by stripefs-run).
 *
 *   sfs_mpi_open PATH AMODE [read|write]
 *
 * AMODE is a '|'-separated list of rdonly, wronly, rdwr, create, excl,
 * append, delete_on_close, unique_open. After a successful open, "read"
 * reads the first bytes (each rank, independently) and "write" writes 4
 * bytes per rank. Rank 0 prints "open: CLASS" (and "read: CLASS bytes=N" or
 * "write: CLASS"); if the ranks disagree, each prints its own. Exit 0
 * whatever the classes are, 2 on a usage error.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    int         cls;
    const char *name;
} classes[] = {
#define C(x)                                                                                       \
    {                                                                                              \
        x, #x                                                                                      \
    }
    C(MPI_SUCCESS),
    C(MPI_ERR_ACCESS),
    C(MPI_ERR_NO_SUCH_FILE),
    C(MPI_ERR_FILE_EXISTS),
    C(MPI_ERR_READ_ONLY),
    C(MPI_ERR_AMODE),
    C(MPI_ERR_BAD_FILE),
    C(MPI_ERR_FILE),
    C(MPI_ERR_FILE_IN_USE),
    C(MPI_ERR_IO),
    C(MPI_ERR_NO_SPACE),
    C(MPI_ERR_QUOTA),
    C(MPI_ERR_NOT_SAME),
    C(MPI_ERR_UNSUPPORTED_OPERATION),
    C(MPI_ERR_UNSUPPORTED_DATAREP),
    C(MPI_ERR_NO_MEM),
    C(MPI_ERR_ARG),
    C(MPI_ERR_OTHER),
    C(MPI_ERR_INTERN),
    C(MPI_ERR_UNKNOWN),
#undef C
};

static int rank;

static const char *class_name(int code)
{
    static char buf[48];
    int         cls;

    if (MPI_Error_class(code, &cls) != MPI_SUCCESS) {
        snprintf(buf, sizeof(buf), "invalid-error-code-%d", code);
        return buf;
    }
    for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
        if (classes[i].cls == cls) {
            return classes[i].name;
        }
    }
    snprintf(buf, sizeof(buf), "class-%d", cls);
    return buf;
}

/* print what every rank got: once if they agree, else rank by rank */
static void report(const char *what, int code, const char *extra)
{
    int cls, lo, hi;

    if (MPI_Error_class(code, &cls) != MPI_SUCCESS) {
        cls = -1;
    }
    MPI_Allreduce(&cls, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&cls, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (lo == hi) {
        if (rank == 0) {
            printf("%s: %s%s\n", what, class_name(code), extra);
        }
    } else {
        printf("%s: rank %d: %s%s (the ranks disagree)\n", what, rank, class_name(code), extra);
    }
    fflush(stdout);
}

static int parse_amode(const char *text, int *amode)
{
    static const struct {
        const char *name;
        int         bit;
    } bits[]   = {{"rdonly", MPI_MODE_RDONLY},
                  {"wronly", MPI_MODE_WRONLY},
                  {"rdwr", MPI_MODE_RDWR},
                  {"create", MPI_MODE_CREATE},
                  {"excl", MPI_MODE_EXCL},
                  {"append", MPI_MODE_APPEND},
                  {"delete_on_close", MPI_MODE_DELETE_ON_CLOSE},
                  {"unique_open", MPI_MODE_UNIQUE_OPEN}};
    char *copy = strdup(text), *save = NULL;

    *amode = 0;
    for (char *word = strtok_r(copy, "|", &save); word; word = strtok_r(NULL, "|", &save)) {
        size_t i;

        for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
            if (strcmp(word, bits[i].name) == 0) {
                *amode |= bits[i].bit;
                break;
            }
        }
        if (i == sizeof(bits) / sizeof(bits[0])) {
            free(copy);
            return -1;
        }
    }
    free(copy);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_File   fh;
    MPI_Status status;
    char       buf[64], extra[32] = "";
    int        amode, rc;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3 || argc > 4 || parse_amode(argv[2], &amode) != 0 ||
        (argc == 4 && strcmp(argv[3], "read") != 0 && strcmp(argv[3], "write") != 0)) {
        if (rank == 0) {
            fprintf(stderr, "usage: sfs_mpi_open PATH rdonly|wronly|rdwr[|create|excl|...] "
                            "[read|write]\n");
        }
        MPI_Finalize();
        return 2;
    }
    /* an invalid error code must be reported, not abort the job */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    rc = MPI_File_open(MPI_COMM_WORLD, argv[1], amode, MPI_INFO_NULL, &fh);
    report("open", rc, "");
    if (rc == MPI_SUCCESS) {
        if (argc == 4 && strcmp(argv[3], "read") == 0) {
            int count = 0;

            rc = MPI_File_read_at(fh, 0, buf, (int)sizeof(buf), MPI_BYTE, &status);
            if (rc == MPI_SUCCESS) {
                MPI_Get_count(&status, MPI_BYTE, &count);
                snprintf(extra, sizeof(extra), " bytes=%d", count);
            }
            report("read", rc, extra);
        } else if (argc == 4) {
            rc = MPI_File_write_at(fh, 4 * rank, "mpi\n", 4, MPI_BYTE, &status);
            report("write", rc, "");
        }
        rc = MPI_File_close(&fh);
        report("close", rc, "");
    }
    MPI_Finalize();
    return 0;
}
