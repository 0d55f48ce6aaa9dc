/* An IOR-style job that checks every byte it ever wrote while a storage
 * target is drained under it (tests/mpi/test_mpi_migrate_job.sh).
 *
 *   mpi_migrate_job DIR run STOPFILE MAXROUNDS
 *   mpi_migrate_job DIR verify ROUNDS
 *
 * run: round after round, until STOPFILE exists (rank 0 looks, every rank
 * follows) or MAXROUNDS: every rank writes its own file DIR/fpp.R.RANK
 * (2 MiB in 1 MiB MPI_File_write_at) and all ranks write DIR/shared.R
 * collectively (MPI_File_write_at_all, 256 KiB per rank per step,
 * interleaved, 4 steps); both are synced and closed. Then every byte of this
 * round's files and of every earlier round's (which the drain may be moving
 * at that moment) is read back (MPI_File_read_at, MPI_File_read_at_all) and
 * compared. Rank 0 prints "ROUND R ok" after each round that every rank
 * verified, and "RESULT rounds=N errors=E" at the end; exit 1 on any error.
 * verify: only the read-back of rounds 0..ROUNDS-1 (after a restart).
 * Errors are printed with the MPI error string and counted, not fatal, so
 * that one failing call shows with its file and offset. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FPP_BYTES    (2u << 20)
#define FPP_XFER     (1u << 20)
#define SHARED_BLOCK (256u << 10)
#define SHARED_STEPS 4

static int  rank, nprocs;
static long errors;

/* the byte at OFFSET of the file with id FILE_ID: a mix of both, so that a
 * block in the wrong place or from another file does not compare equal */
static unsigned char pattern_byte(uint64_t file_id, uint64_t offset)
{
    uint64_t x = file_id * 0x9E3779B97F4A7C15ull ^ (offset / 8) * 0xC2B2AE3D27D4EB4Full;

    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (unsigned char)(x >> (8 * (offset % 8)));
}

static void pattern_fill(unsigned char *buf, size_t len, uint64_t file_id, uint64_t offset)
{
    for (size_t i = 0; i < len; i++) {
        buf[i] = pattern_byte(file_id, offset + i);
    }
}

static void report(const char *what, const char *path, long long offset, int rc)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int  len                       = 0;

    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, msg, &len);
    }
    fprintf(stderr, "rank %d: %s %s at %lld: %s\n", rank, what, path, offset,
            rc != MPI_SUCCESS ? msg : "wrong bytes");
    fflush(stderr);
    errors++;
}

static void path_fpp(char *out, size_t size, const char *dir, int round, int owner)
{
    snprintf(out, size, "%s/fpp.%d.%d", dir, round, owner);
}

static void path_shared(char *out, size_t size, const char *dir, int round)
{
    snprintf(out, size, "%s/shared.%d", dir, round);
}

static uint64_t id_fpp(int round, int owner)
{
    return (uint64_t)round * 1000 + (uint64_t)owner;
}

static uint64_t id_shared(int round)
{
    return (uint64_t)round * 1000 + 999;
}

/* the offset of this rank's block in step STEP of a shared file */
static MPI_Offset shared_offset(int step)
{
    return ((MPI_Offset)step * nprocs + rank) * SHARED_BLOCK;
}

static void write_round(const char *dir, int round, unsigned char *buf)
{
    char     path[4096];
    MPI_File fh;
    int      rc;

    path_fpp(path, sizeof(path), dir, round, rank);
    rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
        report("open for writing", path, 0, rc);
    } else {
        for (MPI_Offset off = 0; off < FPP_BYTES; off += FPP_XFER) {
            MPI_Status st;
            int        count = 0;

            pattern_fill(buf, FPP_XFER, id_fpp(round, rank), (uint64_t)off);
            rc = MPI_File_write_at(fh, off, buf, FPP_XFER, MPI_BYTE, &st);
            if (rc == MPI_SUCCESS) {
                MPI_Get_count(&st, MPI_BYTE, &count);
            }
            if (rc != MPI_SUCCESS || count != (int)FPP_XFER) {
                report("write", path, off, rc);
            }
        }
        if ((rc = MPI_File_sync(fh)) != MPI_SUCCESS) {
            report("sync", path, 0, rc);
        }
        if ((rc = MPI_File_close(&fh)) != MPI_SUCCESS) {
            report("close", path, 0, rc);
        }
    }

    path_shared(path, sizeof(path), dir, round);
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
        report("collective open for writing", path, 0, rc);
        return;
    }
    for (int step = 0; step < SHARED_STEPS; step++) {
        MPI_Offset off = shared_offset(step);

        pattern_fill(buf, SHARED_BLOCK, id_shared(round), (uint64_t)off);
        rc = MPI_File_write_at_all(fh, off, buf, SHARED_BLOCK, MPI_BYTE, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            report("collective write", path, off, rc);
        }
    }
    if ((rc = MPI_File_sync(fh)) != MPI_SUCCESS) {
        report("collective sync", path, 0, rc);
    }
    if ((rc = MPI_File_close(&fh)) != MPI_SUCCESS) {
        report("collective close", path, 0, rc);
    }
}

static void check_block(const char *path, MPI_Offset off, const unsigned char *buf, size_t len,
                        uint64_t file_id)
{
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != pattern_byte(file_id, (uint64_t)off + i)) {
            fprintf(stderr, "rank %d: %s: byte %lld is 0x%02x, not 0x%02x\n", rank, path,
                    (long long)off + (long long)i, buf[i],
                    pattern_byte(file_id, (uint64_t)off + i));
            report("read back", path, off + (MPI_Offset)i, MPI_SUCCESS);
            return;
        }
    }
}

static void verify_round(const char *dir, int round, unsigned char *buf)
{
    char     path[4096];
    MPI_File fh;
    int      rc;

    path_fpp(path, sizeof(path), dir, round, rank);
    rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
        report("open for reading", path, 0, rc);
    } else {
        for (MPI_Offset off = 0; off < FPP_BYTES; off += FPP_XFER) {
            MPI_Status st;
            int        count = 0;

            memset(buf, 0, FPP_XFER);
            rc = MPI_File_read_at(fh, off, buf, FPP_XFER, MPI_BYTE, &st);
            if (rc == MPI_SUCCESS) {
                MPI_Get_count(&st, MPI_BYTE, &count);
            }
            if (rc != MPI_SUCCESS || count != (int)FPP_XFER) {
                report(rc != MPI_SUCCESS ? "read" : "short read", path, off, rc);
                continue;
            }
            check_block(path, off, buf, FPP_XFER, id_fpp(round, rank));
        }
        if ((rc = MPI_File_close(&fh)) != MPI_SUCCESS) {
            report("close", path, 0, rc);
        }
    }

    path_shared(path, sizeof(path), dir, round);
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
        report("collective open for reading", path, 0, rc);
        return;
    }
    for (int step = 0; step < SHARED_STEPS; step++) {
        MPI_Offset off = shared_offset(step);

        memset(buf, 0, SHARED_BLOCK);
        rc = MPI_File_read_at_all(fh, off, buf, SHARED_BLOCK, MPI_BYTE, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            report("collective read", path, off, rc);
            continue;
        }
        check_block(path, off, buf, SHARED_BLOCK, id_shared(round));
    }
    if ((rc = MPI_File_close(&fh)) != MPI_SUCCESS) {
        report("collective close", path, 0, rc);
    }
}

/* every rank's error count summed; printed by rank 0 */
static long errors_all(void)
{
    long total = 0;

    MPI_Allreduce(&errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

int main(int argc, char **argv)
{
    unsigned char *buf;
    int            rounds = 0, verify, max_rounds = 0;
    long           total;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    verify = argc == 4 && strcmp(argv[2], "verify") == 0;
    if (!verify && !(argc == 5 && strcmp(argv[2], "run") == 0)) {
        if (rank == 0) {
            fprintf(stderr, "usage: mpi_migrate_job DIR run STOPFILE MAXROUNDS\n"
                            "       mpi_migrate_job DIR verify ROUNDS\n");
        }
        MPI_Finalize();
        return 2;
    }
    /* errors come back as codes, printed by report() */
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    buf = malloc(FPP_XFER);
    if (!buf) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (verify) {
        rounds = atoi(argv[3]);
        for (int r = 0; r < rounds; r++) {
            verify_round(argv[1], r, buf);
        }
    } else {
        max_rounds = atoi(argv[4]);
        for (;;) {
            int stop = 0;

            if (rank == 0) {
                stop = access(argv[3], F_OK) == 0 || rounds >= max_rounds;
            }
            MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
            if (stop) {
                break;
            }
            write_round(argv[1], rounds, buf);
            for (int r = 0; r <= rounds; r++) {
                verify_round(argv[1], r, buf);
            }
            total = errors_all();
            if (rank == 0) {
                printf("ROUND %d %s\n", rounds, total ? "errors" : "ok");
                fflush(stdout);
            }
            rounds++;
        }
    }
    total = errors_all();
    if (rank == 0) {
        printf("RESULT rounds=%d errors=%ld\n", rounds, total);
        fflush(stdout);
    }
    free(buf);
    MPI_Finalize();
    return total ? 1 : 0;
}
