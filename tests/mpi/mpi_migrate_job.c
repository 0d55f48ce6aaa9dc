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
 * roll: the job under a rolling restart of the servers
 * (tests/cluster/test_cluster_rolling_mpi.sh), until STOPFILE exists: each
 * round R (from 1) writes its files as run does, then makes an mdtest-style
 * storm (every rank creates STORM_FILES empty files, one MPI_File_open and
 * close each, checks their size and deletes them), reads back round 0's
 * files (written before any fault), round R-1's and R's, and deletes round
 * R-2's. Rank 0 prints one line per round, as tests/cluster/rolling_lib.sh
 * reads them: "round R rc=E seconds=S" (E: the round's errors on all
 * ranks; S: its longest time on any rank, which holds the pause).
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
#define STORM_FILES  16

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

/* Every rank creates STORM_FILES empty files in DIR (as mdtest -F -u does
 * through MPI-IO: open with MPI_MODE_CREATE, close), checks each is empty
 * and deletes them. */
static void storm_round(const char *dir, int round)
{
    char       path[4096];
    MPI_File   fh;
    MPI_Offset size;
    int        rc;

    for (int i = 0; i < STORM_FILES; i++) {
        snprintf(path, sizeof(path), "%s/storm.%d.%d.%d", dir, round, rank, i);
        rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                           MPI_INFO_NULL, &fh);
        if (rc != MPI_SUCCESS) {
            report("create", path, 0, rc);
            continue;
        }
        if ((rc = MPI_File_close(&fh)) != MPI_SUCCESS) {
            report("close", path, 0, rc);
        }
    }
    for (int i = 0; i < STORM_FILES; i++) {
        snprintf(path, sizeof(path), "%s/storm.%d.%d.%d", dir, round, rank, i);
        rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        if (rc != MPI_SUCCESS) {
            report("open for stat", path, 0, rc);
            continue;
        }
        if ((rc = MPI_File_get_size(fh, &size)) != MPI_SUCCESS || size != 0) {
            report(rc != MPI_SUCCESS ? "size" : "size not 0", path, size, rc);
        }
        if ((rc = MPI_File_close(&fh)) != MPI_SUCCESS) {
            report("close", path, 0, rc);
        }
        if ((rc = MPI_File_delete(path, MPI_INFO_NULL)) != MPI_SUCCESS) {
            report("delete", path, 0, rc);
        }
    }
}

/* Round ROUND's files go: each rank deletes its own, rank 0 the shared one. */
static void delete_round(const char *dir, int round)
{
    char path[4096];
    int  rc;

    path_fpp(path, sizeof(path), dir, round, rank);
    if ((rc = MPI_File_delete(path, MPI_INFO_NULL)) != MPI_SUCCESS) {
        report("delete", path, 0, rc);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* nobody reads the shared file any more */
    if (rank == 0) {
        path_shared(path, sizeof(path), dir, round);
        if ((rc = MPI_File_delete(path, MPI_INFO_NULL)) != MPI_SUCCESS) {
            report("delete", path, 0, rc);
        }
    }
}

/* every rank's error count summed; printed by rank 0 */
static long errors_all(void)
{
    long total = 0;

    MPI_Allreduce(&errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

/* Whether STOPFILE exists (rank 0 looks, every rank follows). */
static int stop_now(const char *stopfile)
{
    int stop = 0;

    if (rank == 0) {
        stop = access(stopfile, F_OK) == 0;
    }
    MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return stop;
}

/* The roll mode's rounds (see the top); returns the rounds made. */
static int roll_rounds(const char *dir, const char *stopfile, unsigned char *buf)
{
    long before = 0, after;
    int  round;

    write_round(dir, 0, buf); /* the files read back in every round */
    verify_round(dir, 0, buf);
    for (round = 1; !stop_now(stopfile); round++) {
        double start = MPI_Wtime(), took, longest;

        write_round(dir, round, buf);
        storm_round(dir, round);
        verify_round(dir, 0, buf);
        if (round > 1) {
            verify_round(dir, round - 1, buf);
        }
        verify_round(dir, round, buf);
        if (round > 2) {
            delete_round(dir, round - 2);
        }
        took = MPI_Wtime() - start;
        MPI_Reduce(&took, &longest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        after = errors_all();
        if (rank == 0) {
            printf("round %d rc=%ld seconds=%.2f\n", round, after - before, longest);
            fflush(stdout);
        }
        before = after;
    }
    return round - 1;
}

int main(int argc, char **argv)
{
    unsigned char *buf;
    int            rounds = 0, verify, roll, max_rounds = 0;
    long           total;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    verify = argc == 4 && strcmp(argv[2], "verify") == 0;
    roll   = argc == 4 && strcmp(argv[2], "roll") == 0;
    if (!verify && !roll && !(argc == 5 && strcmp(argv[2], "run") == 0)) {
        if (rank == 0) {
            fprintf(stderr, "usage: mpi_migrate_job DIR run STOPFILE MAXROUNDS\n"
                            "       mpi_migrate_job DIR verify ROUNDS\n"
                            "       mpi_migrate_job DIR roll STOPFILE\n");
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
    if (roll) {
        rounds = roll_rounds(argv[1], argv[3], buf);
    } else if (verify) {
        rounds = atoi(argv[3]);
        for (int r = 0; r < rounds; r++) {
            verify_round(argv[1], r, buf);
        }
    } else {
        max_rounds = atoi(argv[4]);
        /* (rounds is the same on every rank) */
        while (rounds < max_rounds && !stop_now(argv[3])) {
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
