/*
 * romio_gaps: probes for the known gaps of the standalone ROMIO build
 * (docs/romio.md, "Open gaps"). Each mode prints what happened as
 * "RESULT: <word>" (rank 0) and exits 0 unless the probe itself broke.
 *
 *   romio_gaps darray PATH      darray filetype read (1 rank is enough):
 *                               RESULT: ok | setview-refused | wrong-data
 *   romio_gaps errhandler PATH  user file error handler: RESULT: accepted | refused
 *   romio_gaps threads PATH     MPI_THREAD_MULTIPLE, threads doing I/O at once:
 *                               RESULT: provided=<level> errors=<n>
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs;

/* --- darray: a 5x5 array of doubles in 3x3 blocks, cyclic over 2x2 ranks --
 * One process checks the view of each of the 4 ranks on MPI_COMM_SELF: a
 * failing MPI_File_set_view on only some ranks of a collective open would
 * leave the others waiting in its barrier. */
static int probe_darray(const char *path)
{
    enum { N = 5, B = 3, P = 2 };
    int          gsize[2] = {N, N}, distrib[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC};
    int          darg[2] = {B, B}, psize[2] = {P, P};
    double       data[N * N], expect[N * N], got[N * N];
    MPI_Datatype darray;
    MPI_File     fh;
    int          i, r, tsize, nelem, pos, rc, len, refused = 0, wrong = 0;
    char         msg[MPI_MAX_ERROR_STRING];

    for (i = 0; i < N * N; i++)
        data[i] = i;
    if (rank == 0) {
        MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
        MPI_File_write(fh, data, N * N, MPI_DOUBLE, MPI_STATUS_IGNORE);
        MPI_File_close(&fh);
        for (r = 0; r < P * P; r++) {
            MPI_Type_create_darray(P * P, r, 2, gsize, distrib, darg, psize, MPI_ORDER_FORTRAN,
                                   MPI_DOUBLE, &darray);
            MPI_Type_commit(&darray);
            MPI_Type_size(darray, &tsize);
            nelem = tsize / (int)sizeof(double);
            pos   = 0;
            MPI_Pack(data, 1, darray, expect, sizeof(expect), &pos, MPI_COMM_SELF);
            memset(got, 0, sizeof(got));
            MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
            rc = MPI_File_set_view(fh, 0, MPI_DOUBLE, darray, "native", MPI_INFO_NULL);
            if (rc != MPI_SUCCESS) {
                MPI_Error_string(rc, msg, &len);
                printf("darray view of rank %d: MPI_File_set_view: %s\n", r, msg);
                refused++;
            } else {
                MPI_File_read(fh, got, nelem, MPI_DOUBLE, MPI_STATUS_IGNORE);
                if (memcmp(got, expect, tsize) != 0) {
                    printf("darray view of rank %d: data read differs from MPI_Pack\n", r);
                    wrong++;
                }
            }
            MPI_File_close(&fh);
            MPI_Type_free(&darray);
        }
        printf("RESULT: %s\n", refused ? "setview-refused" : wrong ? "wrong-data" : "ok");
    }
    return 0;
}

/* --- errhandler: a user-defined file error handler ------------------------ */
static int handler_calls;

static void file_handler(MPI_File *fh, int *code, ...)
{
    (void)fh;
    (void)code;
    handler_calls++;
}

static int probe_errhandler(const char *path)
{
    MPI_Errhandler eh;
    MPI_File       fh;
    int            rc, cls, len;
    char           msg[MPI_MAX_ERROR_STRING];

    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    rc = MPI_File_create_errhandler(file_handler, &eh);
    if (rc == MPI_SUCCESS)
        rc = MPI_File_set_errhandler(fh, eh);
    if (rank == 0) {
        if (rc == MPI_SUCCESS) {
            printf("RESULT: accepted\n");
        } else {
            MPI_Error_class(rc, &cls);
            MPI_Error_string(rc, msg, &len);
            printf("set_errhandler: class %d: %s\n", cls, msg);
            printf("RESULT: refused\n");
        }
    }
    MPI_File_close(&fh);
    MPI_Errhandler_free(&eh);
    return 0;
}

/* --- threads: I/O from several threads at once ---------------------------- */
#define NTHREADS 4
#define NITER    20

struct targ {
    const char *path;
    int         id;
    int         errors;
};

static void *thread_io(void *p)
{
    struct targ *t = p;
    char         name[4096];
    int          it, buf[256], i;
    MPI_File     fh;

    snprintf(name, sizeof(name), "%s.r%d.t%d", t->path, rank, t->id);
    for (i = 0; i < 256; i++)
        buf[i] = t->id * 1000 + i;
    for (it = 0; it < NITER; it++) {
        if (MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                          &fh) != MPI_SUCCESS) {
            t->errors++;
            continue;
        }
        if (MPI_File_write_at(fh, 0, buf, 256, MPI_INT, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            t->errors++;
        MPI_File_close(&fh);
    }
    return NULL;
}

static int probe_threads(const char *path, int provided)
{
    pthread_t   th[NTHREADS];
    struct targ args[NTHREADS];
    int         i, errors = 0;
    const char *level = provided == MPI_THREAD_MULTIPLE     ? "MULTIPLE"
                        : provided == MPI_THREAD_SERIALIZED ? "SERIALIZED"
                        : provided == MPI_THREAD_FUNNELED   ? "FUNNELED"
                                                            : "SINGLE";

    if (provided == MPI_THREAD_MULTIPLE) {
        for (i = 0; i < NTHREADS; i++) {
            args[i].path   = path;
            args[i].id     = i;
            args[i].errors = 0;
            pthread_create(&th[i], NULL, thread_io, &args[i]);
        }
        for (i = 0; i < NTHREADS; i++) {
            pthread_join(th[i], NULL);
            errors += args[i].errors;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("RESULT: provided=%s errors=%d\n", level, errors);
    return 0;
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE, rc = 2;

    if (argc == 3 && strcmp(argv[1], "threads") == 0)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);

    if (argc != 3) {
        if (rank == 0)
            fprintf(stderr, "usage: romio_gaps darray|errhandler|threads PATH\n");
    } else if (strcmp(argv[1], "darray") == 0) {
        rc = probe_darray(argv[2]);
    } else if (strcmp(argv[1], "errhandler") == 0) {
        rc = probe_errhandler(argv[2]);
    } else if (strcmp(argv[1], "threads") == 0) {
        rc = probe_threads(argv[2], provided);
    }
    MPI_Finalize();
    return rc;
}
