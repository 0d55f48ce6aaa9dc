/*
 * romio_gaps: what a correct MPI-IO does in the cases where the standalone
 * ROMIO build had gaps (docs/romio.md). Each mode prints what happened as
 * "RESULT: <word>" (rank 0) and exits 0 unless the probe itself broke; the
 * test scripts compare the word with what MPI-IO must give.
 *
 *   romio_gaps darray PATH      darray filetype read (1 rank is enough):
 *                               RESULT: ok | setview-refused | wrong-data
 *   romio_gaps errhandler PATH  user file error handlers: RESULT: ok | refused |
 *                               <the first check that failed>
 *   romio_gaps fatal PATH       MPI_ERRORS_ARE_FATAL on a file: must abort;
 *                               RESULT: survived if it did not
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

/* --- errhandler: user-defined file error handlers -------------------------
 * What MPI-IO promises (MPI 4.0, 9.3 and 14.7): a handler made by
 * MPI_File_create_errhandler can be set on a file and on MPI_FILE_NULL (the
 * default of later opens); an error on the file calls it with the file and
 * the code, and the call then returns that code; MPI_File_call_errhandler
 * calls it; it stays valid after MPI_Errhandler_free while a file uses it;
 * MPI_ERRORS_RETURN set again stops the calls. */
static int      handler_calls, handler_code;
static MPI_File handler_file;

static void file_handler(MPI_File *fh, int *code, ...)
{
    handler_calls++;
    handler_file = *fh;
    handler_code = *code;
}

#define ERRH_CHECK(cond, what)                                                                     \
    do {                                                                                           \
        if (!(cond) && !failed) {                                                                  \
            failed = what;                                                                         \
        }                                                                                          \
    } while (0)

static int probe_errhandler(const char *path)
{
    MPI_Errhandler eh, got, eh2;
    MPI_File       fh, nofh = MPI_FILE_NULL;
    int            rc, cls, len, buf[4] = {0}, all_ok;
    const char    *failed = NULL;
    char           msg[MPI_MAX_ERROR_STRING], missing[4096 + 16];

    /* errors come from writing to a file opened read-only */
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_close(&fh);
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    rc = MPI_File_create_errhandler(file_handler, &eh);
    if (rc == MPI_SUCCESS)
        rc = MPI_File_set_errhandler(fh, eh);
    if (rc != MPI_SUCCESS) {
        if (rank == 0) {
            MPI_Error_class(rc, &cls);
            MPI_Error_string(rc, msg, &len);
            printf("set_errhandler: class %d: %s\n", cls, msg);
            printf("RESULT: refused\n");
        }
        MPI_File_close(&fh);
        return 0;
    }
    rc = MPI_File_get_errhandler(fh, &got);
    ERRH_CHECK(rc == MPI_SUCCESS && got == eh, "get_errhandler-differs");
    if (rc == MPI_SUCCESS)
        MPI_Errhandler_free(&got);
    /* the file keeps the handler alive */
    MPI_Errhandler_free(&eh);

    rc = MPI_File_write_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE);
    ERRH_CHECK(rc != MPI_SUCCESS, "write-to-read-only-file-accepted");
    ERRH_CHECK(handler_calls == 1, "handler-not-called");
    ERRH_CHECK(handler_file == fh && handler_code == rc, "handler-got-wrong-file-or-code");

    rc = MPI_File_call_errhandler(fh, MPI_ERR_OTHER);
    ERRH_CHECK(rc == MPI_SUCCESS && handler_calls == 2 && handler_code == MPI_ERR_OTHER,
               "call_errhandler-did-not-call-it");

    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    rc = MPI_File_write_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE);
    ERRH_CHECK(rc != MPI_SUCCESS && handler_calls == 2, "called-after-errors-return");
    MPI_File_close(&fh);

    /* the default handler of files not yet open */
    rc = MPI_File_create_errhandler(file_handler, &eh2);
    if (rc == MPI_SUCCESS)
        rc = MPI_File_set_errhandler(MPI_FILE_NULL, eh2);
    ERRH_CHECK(rc == MPI_SUCCESS, "set-on-file-null-refused");
    snprintf(missing, sizeof(missing), "%s.missing.%d", path, rank);
    rc = MPI_File_open(MPI_COMM_SELF, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &nofh);
    ERRH_CHECK(rc != MPI_SUCCESS && handler_calls == 3 && handler_file == MPI_FILE_NULL &&
                   handler_code == rc,
               "default-handler-not-called-on-failed-open");
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh2);

    all_ok = failed == NULL;
    if (!all_ok)
        printf("rank %d: %s (handler calls %d)\n", rank, failed, handler_calls);
    MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0)
        printf("RESULT: %s\n", all_ok ? "ok" : failed ? failed : "wrong-on-another-rank");
    return 0;
}

/* --- fatal: MPI_ERRORS_ARE_FATAL on a file aborts at the first error ------ */
static int probe_fatal(const char *path)
{
    MPI_File fh;
    int      buf = 0;

    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_close(&fh);
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    MPI_File_set_errhandler(fh, MPI_ERRORS_ARE_FATAL);
    MPI_File_write_at(fh, 0, &buf, 1, MPI_INT, MPI_STATUS_IGNORE);
    printf("RESULT: survived\n");
    MPI_File_close(&fh);
    return 0;
}

/* --- threads: MPI-IO from several threads at once --------------------------
 * Three workloads, each from NTHREADS threads of every rank:
 *  c2f      MPI_File_c2f/f2c on each thread's own file (ROMIO's handle table)
 *  own      open, vector view, write_at_all, read back, get_info, close,
 *           delete on a file of the thread's own (MPI_COMM_SELF)
 *  shared   collective writes and reads of one file per thread, opened on a
 *           communicator of that thread's own: collectives of different
 *           threads run at once (MPI allows it) and must not wait on each
 *           other */
#define NTHREADS 8
#define NITER    20
#define NC2F     50000

struct targ {
    const char *path;
    int         id;
    MPI_Comm    comm;
    int         errors;
};

static void *thread_c2f(void *p)
{
    struct targ *t = p;
    char         name[4096 + 64];
    MPI_File     fh;
    int          i;

    snprintf(name, sizeof(name), "%s.c2f.r%d.t%d", t->path, rank, t->id);
    if (MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) !=
        MPI_SUCCESS) {
        t->errors++;
        return NULL;
    }
    for (i = 0; i < NC2F; i++)
        if (MPI_File_f2c(MPI_File_c2f(fh)) != fh)
            t->errors++;
    MPI_File_close(&fh);
    MPI_File_delete(name, MPI_INFO_NULL);
    return NULL;
}

static void *thread_own(void *p)
{
    struct targ *t = p;
    char         name[4096 + 64];
    int          it, buf[512], back[512], i, n;
    MPI_File     fh;
    MPI_Info     info, got;
    MPI_Datatype vec;

    snprintf(name, sizeof(name), "%s.own.r%d.t%d", t->path, rank, t->id);
    n = 16 * (4 + t->id % 3);
    for (it = 0; it < NITER; it++) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "cb_config_list", "*:1");
        MPI_Info_set(info, "romio_cb_write", "enable");
        if (MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh) !=
            MPI_SUCCESS) {
            t->errors++;
            MPI_Info_free(&info);
            continue;
        }
        MPI_Info_free(&info);
        MPI_Type_vector(16, 4 + t->id % 3, 8, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        for (i = 0; i < n; i++)
            buf[i] = t->id * 100000 + it * 1000 + i;
        memset(back, 0, sizeof(back));
        t->errors += MPI_File_set_view(fh, 0, MPI_INT, vec, "native", MPI_INFO_NULL) != 0;
        t->errors += MPI_File_write_at_all(fh, 0, buf, n, MPI_INT, MPI_STATUS_IGNORE) != 0;
        t->errors += MPI_File_read_at_all(fh, 0, back, n, MPI_INT, MPI_STATUS_IGNORE) != 0;
        t->errors += memcmp(buf, back, n * sizeof(int)) != 0;
        if (MPI_File_get_info(fh, &got) == MPI_SUCCESS)
            MPI_Info_free(&got);
        else
            t->errors++;
        t->errors += MPI_File_close(&fh) != 0;
        MPI_Type_free(&vec);
        t->errors += MPI_File_delete(name, MPI_INFO_NULL) != 0;
    }
    return NULL;
}

static void *thread_shared(void *p)
{
    struct targ *t = p;
    char         name[4096 + 64];
    int          it, buf[256], back[256], i;
    MPI_File     fh;
    MPI_Offset   off = (MPI_Offset)rank * sizeof(buf);

    snprintf(name, sizeof(name), "%s.shared.t%d", t->path, t->id);
    for (it = 0; it < NITER / 2; it++) {
        if (MPI_File_open(t->comm, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) !=
            MPI_SUCCESS) {
            t->errors++;
            continue;
        }
        for (i = 0; i < 256; i++)
            buf[i] = rank * 1000000 + t->id * 10000 + it * 256 + i;
        t->errors += MPI_File_write_at_all(fh, off, buf, 256, MPI_INT, MPI_STATUS_IGNORE) != 0;
        memset(back, 0, sizeof(back));
        t->errors += MPI_File_read_at_all(fh, off, back, 256, MPI_INT, MPI_STATUS_IGNORE) != 0;
        t->errors += memcmp(buf, back, sizeof(buf)) != 0;
        t->errors += MPI_File_close(&fh) != 0;
    }
    return NULL;
}

static int run_threads(const char *what, void *(*fn)(void *), const char *path)
{
    pthread_t   th[NTHREADS];
    struct targ args[NTHREADS];
    int         i, errors = 0;

    for (i = 0; i < NTHREADS; i++) {
        args[i].path   = path;
        args[i].id     = i;
        args[i].errors = 0;
        /* made here, in the same order on every rank */
        MPI_Comm_dup(MPI_COMM_WORLD, &args[i].comm);
    }
    for (i = 0; i < NTHREADS; i++)
        pthread_create(&th[i], NULL, fn, &args[i]);
    for (i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        errors += args[i].errors;
        MPI_Comm_free(&args[i].comm);
    }
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("threads %s: %d errors\n", what, errors);
    return errors;
}

static int probe_threads(const char *path, int provided)
{
    int         errors = 0;
    const char *level  = provided == MPI_THREAD_MULTIPLE     ? "MULTIPLE"
                         : provided == MPI_THREAD_SERIALIZED ? "SERIALIZED"
                         : provided == MPI_THREAD_FUNNELED   ? "FUNNELED"
                                                             : "SINGLE";

    if (provided == MPI_THREAD_MULTIPLE) {
        errors += run_threads("c2f", thread_c2f, path);
        errors += run_threads("own", thread_own, path);
        errors += run_threads("shared", thread_shared, path);
        if (rank == 0)
            for (int i = 0; i < NTHREADS; i++) {
                char name[4096 + 64];

                snprintf(name, sizeof(name), "%s.shared.t%d", path, i);
                MPI_File_delete(name, MPI_INFO_NULL);
            }
    }
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
            fprintf(stderr, "usage: romio_gaps darray|errhandler|fatal|threads PATH\n");
    } else if (strcmp(argv[1], "darray") == 0) {
        rc = probe_darray(argv[2]);
    } else if (strcmp(argv[1], "errhandler") == 0) {
        rc = probe_errhandler(argv[2]);
    } else if (strcmp(argv[1], "fatal") == 0) {
        rc = probe_fatal(argv[2]);
    } else if (strcmp(argv[1], "threads") == 0) {
        rc = probe_threads(argv[2], provided);
    }
    MPI_Finalize();
    return rc;
}
