/*
 * Overlapping strided writes of every rank in MPI atomic mode (and, for
 * comparison, without it): each rank's file view is a vector of NBLOCKS
 * blocks of BLOCK bytes every 2*BLOCK, shifted by rank * BLOCK / nprocs, so
 * every two ranks overlap in every block. Each iteration all ranks write at
 * once, each its own byte; rank 0 reads the file back and checks that it is
 * what some serial order of the whole writes gives: every byte holds one of
 * the ranks that cover it, and "a before b" (b's byte where both wrote)
 * never holds both ways round (no cycle in the precedence graph).
 *
 *   mpi_atomic_check FILE atomic|nonatomic indep|coll ITERATIONS BLOCK NBLOCKS
 *
 * Prints one RESULT line (iterations not a serial order, the write time
 * of each iteration: mean, min and max, and the aggregate rate). Exits 1 in
 * atomic mode if any iteration was not a serial order, or on an MPI error.
 */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANKS 15 /* a byte holds 1 + rank + 16 * (iteration % 15) */

static void check_mpi(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int  length;

        MPI_Error_string(rc, text, &length);
        fprintf(stderr, "FAILED: %s: %s\n", what, text);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Whether the precedence graph (before[a][b]: a's write came before b's)
 * has no cycle: repeatedly remove a rank that nothing remaining precedes. */
static int acyclic(int np, int before[MAX_RANKS][MAX_RANKS])
{
    int removed[MAX_RANKS] = {0};

    for (int round = 0; round < np; round++) {
        int found = -1;

        for (int b = 0; b < np && found < 0; b++) {
            int free_of_preds = !removed[b];

            for (int a = 0; a < np && free_of_preds; a++) {
                free_of_preds = removed[a] || a == b || !before[a][b];
            }
            if (free_of_preds) {
                found = b;
            }
        }
        if (found < 0) {
            return 0;
        }
        removed[found] = 1;
    }
    return 1;
}

/* Rank 0: is `data` (the file's first `extent` bytes) a serial order of
 * iteration `it`'s writes? */
static int serial_order(const uint8_t *data, size_t extent, int np, size_t block, size_t shift,
                        int it, long *lost_p)
{
    int  before[MAX_RANKS][MAX_RANKS];
    long lost = 0;

    memset(before, 0, sizeof(before));
    for (size_t x = 0; x < extent; x++) {
        int covered = 0, owner;

        for (int r = 0; r < np; r++) {
            if (x >= r * shift && (x - r * shift) % (2 * block) < block) {
                covered |= 1 << r;
            }
        }
        if (!covered) {
            continue;
        }
        owner = (data[x] - 1) % 16;
        if (data[x] == 0 || (data[x] - 1) / 16 != it % 15 || !(covered & (1 << owner))) {
            lost++; /* not this iteration's, or from a rank that does not write here */
            continue;
        }
        for (int r = 0; r < np; r++) {
            if (r != owner && (covered & (1 << r))) {
                before[r][owner] = 1;
            }
        }
    }
    *lost_p = lost;
    return lost == 0 && acyclic(np, before);
}

int main(int argc, char **argv)
{
    int          rank, np, atomic, coll, iterations, bad = 0;
    size_t       block, nblocks, shift, bytes, extent;
    double       sum = 0, min = 1e30, max = 0;
    long         lost_total = 0;
    uint8_t     *buf, *back = NULL;
    MPI_File     fh;
    MPI_Datatype filetype;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc != 7 || np > MAX_RANKS) {
        if (rank == 0) {
            fprintf(stderr,
                    "usage: mpi_atomic_check FILE atomic|nonatomic indep|coll ITERATIONS "
                    "BLOCK NBLOCKS (at most %d ranks)\n",
                    MAX_RANKS);
        }
        MPI_Finalize();
        return 2;
    }
    atomic     = strcmp(argv[2], "atomic") == 0;
    coll       = strcmp(argv[3], "coll") == 0;
    iterations = atoi(argv[4]);
    block      = strtoul(argv[5], NULL, 0);
    nblocks    = strtoul(argv[6], NULL, 0);
    shift      = block / (size_t)np;
    bytes      = block * nblocks;
    extent     = (size_t)(np - 1) * shift + (nblocks - 1) * 2 * block + block;
    buf        = malloc(bytes);
    if (rank == 0) {
        back = malloc(extent);
    }
    if (!buf || (rank == 0 && !back)) {
        fprintf(stderr, "FAILED: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    check_mpi(
        MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
        "open");
    check_mpi(MPI_File_set_atomicity(fh, atomic), "set_atomicity");
    {
        int flag;

        check_mpi(MPI_File_get_atomicity(fh, &flag), "get_atomicity");
        if (flag != atomic) {
            fprintf(stderr, "FAILED: get_atomicity says %d\n", flag);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Type_vector((int)nblocks, (int)block, (int)(2 * block), MPI_BYTE, &filetype);
    MPI_Type_commit(&filetype);
    check_mpi(MPI_File_set_view(fh, (MPI_Offset)(rank * shift), MPI_BYTE, filetype, "native",
                                MPI_INFO_NULL),
              "set_view");
    for (int it = 0; it < iterations; it++) {
        double t0, t;

        memset(buf, 1 + rank + 16 * (it % 15), bytes);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        if (coll) {
            check_mpi(MPI_File_write_at_all(fh, 0, buf, (int)bytes, MPI_BYTE, MPI_STATUS_IGNORE),
                      "write_at_all");
        } else {
            check_mpi(MPI_File_write_at(fh, 0, buf, (int)bytes, MPI_BYTE, MPI_STATUS_IGNORE),
                      "write_at");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime() - t0;
        sum += t;
        min = t < min ? t : min;
        max = t > max ? t : max;
        if (rank == 0) {
            MPI_File check;
            long     lost;

            check_mpi(MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &check),
                      "open to check");
            check_mpi(MPI_File_read_at(check, 0, back, (int)extent, MPI_BYTE, MPI_STATUS_IGNORE),
                      "read back");
            MPI_File_close(&check);
            if (!serial_order(back, extent, np, block, shift, it, &lost)) {
                bad++;
                lost_total += lost;
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Type_free(&filetype);
    MPI_File_close(&fh);
    if (rank == 0) {
        double mean = sum / iterations;

        printf("RESULT mode=%s path=%s ranks=%d iterations=%d bytes_per_rank=%zu "
               "not_serial=%d lost_bytes=%ld write_s_mean=%.4f min=%.4f max=%.4f MiB_s=%.1f\n",
               argv[2], argv[3], np, iterations, bytes, bad, lost_total, mean, min, max,
               (double)bytes * np / mean / 1048576.0);
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(buf);
    free(back);
    MPI_Finalize();
    return atomic && bad ? 1 : 0;
}
