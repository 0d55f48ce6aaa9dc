/*
 * Shutdown orders for tests/mpi/test_mpi_shutdown.sh. Every rank writes its
 * block of FILE (an MPI-IO name) and then leaves in the way MODE says:
 *
 *   finalize-open   MPI_Finalize with the file still open (never closed)
 *   hook-close      a library-style MPI_COMM_SELF attribute, set before the
 *                   first MPI_File_open, whose delete callback (run inside
 *                   MPI_Finalize) writes the block's second half and closes
 *                   the file: what HDF5 does
 *   after-finalize  MPI_Finalize, then MPI_Finalized must say so; the file is
 *                   not closed (MPI forbids MPI_File_close after MPI_Finalize)
 *   atexit          as finalize-open, and POSIX stdio (through the preload)
 *                   on FILE.before.RANK (an atexit handler registered before
 *                   the preload's first call opens and writes it) and
 *                   FILE.after.RANK (opened in main, written again by a
 *                   handler registered after), neither fclose'd: exit
 *                   flushes them
 *   sigterm-exit    every rank writes "term RANK" to a stdio stream on
 *                   FILE.after.RANK (not flushed), appends its pid to PIDFILE,
 *                   then waits; SIGTERM's handler calls exit(0) (no
 *                   MPI_Finalize): exit flushes the stream
 *   sigterm-default the same with SIGTERM's default action (the stream's
 *                   buffer is never written)
 *
 *   mpi_shutdown expect NP LOCALFILE  writes the bytes FILE must hold
 *
 * It prints "acked" when its writes returned; any failed call prints why and
 * makes the exit status 1. alarm(60) bounds every run.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK (256 * 1024 + 123) /* crosses chunk boundaries unaligned */

static char       *block;
static int         rank, nprocs;
static MPI_File    fh;
static const char *name, *pids;
static int         hook_status = -1; /* the callback's result, 0 = wrote and closed */
static FILE       *after_stream;
static char        before_path[4096], after_path[4096];

static unsigned char pattern(int r, long i)
{
    return (unsigned char)(((r + 1) * 31 + i + i / 4096) & 0xff);
}

static void fill(int r)
{
    for (long i = 0; i < BLOCK; i++) {
        block[i] = (char)pattern(r, i);
    }
}

static int check(int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int  len = 0;

    if (rc == MPI_SUCCESS) {
        return 0;
    }
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "rank %d: %s: %s\n", rank, what, msg);
    return 1;
}

static int write_range(long from, long to)
{
    MPI_Status st;

    return check(MPI_File_write_at(fh, (MPI_Offset)rank * BLOCK + from, block + from,
                                   (int)(to - from), MPI_BYTE, &st),
                 "MPI_File_write_at");
}

/* What HDF5's H5_mpi_delete_cb does: close the library's files inside
 * MPI_Finalize. */
static int library_hook(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)value;
    (void)extra;
    hook_status = write_range(BLOCK / 2, BLOCK) | check(MPI_File_close(&fh), "MPI_File_close");
    return MPI_SUCCESS;
}

static void stdio_write(FILE *f, const char *who, const char *path)
{
    if (!f || fprintf(f, "%s %d\n", who, rank) < 0) {
        fprintf(stderr, "rank %d: %s: cannot write %s\n", rank, who, path);
        _exit(3); /* at exit: the only way to say it */
    }
}

static void atexit_before(void)
{
    /* registered before the preload's first call: runs after its handler */
    FILE *f = fopen(before_path, "w");

    stdio_write(f, "before", before_path);
}

static void atexit_after(void)
{
    stdio_write(after_stream, "after", after_path);
}

static void on_sigterm(int sig)
{
    (void)sig;
    exit(0);
}

int main(int argc, char **argv)
{
    const char *mode;
    int         failed = 0, keyval, flag = 0;

    if (argc == 4 && strcmp(argv[1], "expect") == 0) {
        FILE *out = fopen(argv[3], "w");

        block = malloc(BLOCK);
        if (!out || !block) {
            perror(argv[3]);
            return 1;
        }
        for (int r = 0; r < atoi(argv[2]); r++) {
            fill(r);
            if (fwrite(block, 1, BLOCK, out) != BLOCK) {
                perror(argv[3]);
                return 1;
            }
        }
        return fclose(out) != 0;
    }
    if (argc != 3 && !(argc == 4 && strncmp(argv[1], "sigterm", 7) == 0)) {
        fprintf(stderr, "usage: %s MODE FILE [PIDFILE] | expect NP LOCALFILE\n", argv[0]);
        return 2;
    }
    mode = argv[1];
    name = argv[2];
    pids = argc == 4 ? argv[3] : "/dev/null";
    alarm(60);
    if (strcmp(mode, "atexit") == 0) {
        atexit(atexit_before);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    snprintf(before_path, sizeof(before_path), "%s.before.%d", name, rank);
    snprintf(after_path, sizeof(after_path), "%s.after.%d", name, rank);
    block = malloc(BLOCK);
    if (!block) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fill(rank);
    if (strcmp(mode, "hook-close") == 0) {
        failed |= check(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, library_hook, &keyval, NULL),
                        "MPI_Comm_create_keyval");
        failed |= check(MPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL), "MPI_Comm_set_attr");
    }
    failed |= check(
        MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
        "MPI_File_open");
    if (failed) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    failed |= write_range(0, strcmp(mode, "hook-close") == 0 ? BLOCK / 2 : BLOCK);
    if (strcmp(mode, "atexit") == 0) {
        after_stream = fopen(after_path, "w");
        stdio_write(after_stream, "main", after_path);
        atexit(atexit_after);
    }
    if (strncmp(mode, "sigterm", 7) == 0) {
        /* a stdio stream, buffered and never flushed: exit flushes it,
         * the default action never writes it */
        after_stream = fopen(after_path, "w");
        if (!after_stream || fprintf(after_stream, "term %d\n", rank) < 0) {
            fprintf(stderr, "rank %d: cannot write %s\n", rank, after_path);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (strcmp(mode, "sigterm-exit") == 0) {
            signal(SIGTERM, on_sigterm);
        }
        printf("acked %d\n", rank);
        fflush(stdout);
        MPI_Barrier(MPI_COMM_WORLD);
        {
            FILE *f = fopen(pids, "a"); /* (O_APPEND: one line per rank) */

            if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0) {
                perror(pids);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        for (;;) {
            pause(); /* SIGTERM ends it; alarm(60) if it never comes */
        }
    }
    printf("acked %d\n", rank);
    fflush(stdout);
    MPI_Finalize();
    if (strcmp(mode, "hook-close") == 0 && hook_status != 0) {
        fprintf(stderr, "rank %d: the library's hook %s\n", rank,
                hook_status < 0 ? "did not run" : "failed");
        failed = 1;
    }
    if (MPI_Finalized(&flag) != MPI_SUCCESS || !flag) {
        fprintf(stderr, "rank %d: MPI_Finalized says MPI is not finalized\n", rank);
        failed = 1;
    }
    return failed;
}
