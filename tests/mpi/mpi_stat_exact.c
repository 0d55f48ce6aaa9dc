/*
 * Sizes under concurrent writers and truncates (tests/mpi/test_mpi_stat_exact.sh):
 *
 *   mpi_stat_exact PATH ROUNDS SEED
 *
 * POSIX calls on PATH (through libstripefs-posix.so for /stripefs/ paths,
 * or a local file as the control). Every rank holds PATH open for reading
 * and writing. In each round one rank truncates the file to a random size
 * (shrinking or growing it), then every rank writes 1 to 4 extents at
 * random offsets of random lengths, at once. While it writes, rank 0 stats
 * the file after each of its writes: the size must be at least what the
 * truncate and its own acknowledged writes make it. After a barrier every
 * rank stats the file by name and by descriptor: both must be exactly
 * max(truncated size, every extent's end). Every third round the ranks
 * close the file after their writes and open it again after the check (the
 * size the metadata server keeps at close, rather than the targets' answer
 * while writers hold it). Random choices come from SEED, so the sizes are
 * the same on every file system: rank 0 prints "round R size S" for each.
 * Once every rank has closed the file, a last stat must give the last size.
 * Ends with "RESULT rounds=R mismatches=M"; exits 1 when M > 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_OFFSET   (4u << 20)
#define MAX_LENGTH   65536u
#define MAX_TRUNCATE (6u << 20)

static uint64_t next_random(uint64_t *state)
{
    /* splitmix64: the same numbers everywhere */
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int open_file(const char *path, int rank)
{
    int fd = open(path, O_RDWR);

    if (fd < 0) {
        fprintf(stderr, "rank %d: open %s: %s\n", rank, path, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return fd;
}

/* stat by name (and by descriptor when fd >= 0) against `expected`:
 * exactly, or at least when `at_least`. Returns the mismatches. */
static int check_size(const char *path, int fd, uint64_t expected, int at_least, int rank,
                      int round, const char *when)
{
    struct stat st;
    int         bad = 0;

    for (int by_fd = 0; by_fd < (fd >= 0 ? 2 : 1); by_fd++) {
        int rc = by_fd ? fstat(fd, &st) : stat(path, &st);

        if (rc != 0) {
            fprintf(stderr, "MISMATCH rank %d round %d %s: %s failed: %s\n", rank, round, when,
                    by_fd ? "fstat" : "stat", strerror(errno));
            bad++;
        } else if (at_least ? (uint64_t)st.st_size < expected : (uint64_t)st.st_size != expected) {
            fprintf(stderr, "MISMATCH rank %d round %d %s: %s says %llu, expected %s%llu\n", rank,
                    round, when, by_fd ? "fstat" : "stat", (unsigned long long)st.st_size,
                    at_least ? "at least " : "", (unsigned long long)expected);
            bad++;
        }
    }
    return bad;
}

int main(int argc, char **argv)
{
    static char buf[MAX_LENGTH];
    const char *path;
    uint64_t    seed;
    uint64_t    last = 0;
    int         rank, size, rounds, fd, bad = 0, total_bad = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4) {
        if (rank == 0) {
            fprintf(stderr, "usage: mpi_stat_exact PATH ROUNDS SEED\n");
        }
        MPI_Finalize();
        return 2;
    }
    path   = argv[1];
    rounds = atoi(argv[2]);
    seed   = strtoull(argv[3], NULL, 0);
    memset(buf, 'a' + rank % 26, sizeof(buf));
    if (rank == 0) {
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            fprintf(stderr, "create %s: %s\n", path, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fd = open_file(path, rank);
    for (int round = 0; round < rounds; round++) {
        uint64_t shared    = seed * 1000003u + (uint64_t)round;
        uint64_t own       = seed * 1000003u + (uint64_t)round * 7919u + (uint64_t)rank + 1;
        uint64_t truncated = next_random(&shared) % MAX_TRUNCATE;
        uint64_t end       = truncated, expected;
        int      closing   = round % 3 == 2, extents;

        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == round % size && ftruncate(fd, (off_t)truncated) != 0) {
            fprintf(stderr, "rank %d round %d: ftruncate to %llu: %s\n", rank, round,
                    (unsigned long long)truncated, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        extents = 1 + (int)(next_random(&own) % 4);
        for (int i = 0; i < extents; i++) {
            uint64_t offset = next_random(&own) % MAX_OFFSET;
            size_t   length = 1 + (size_t)(next_random(&own) % MAX_LENGTH);
            ssize_t  done   = pwrite(fd, buf, length, (off_t)offset);

            if (done != (ssize_t)length) {
                fprintf(stderr, "rank %d round %d: pwrite of %zu at %llu: %zd (%s)\n", rank, round,
                        length, (unsigned long long)offset, done, strerror(errno));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            end = offset + length > end ? offset + length : end;
            if (rank == 0) {
                bad += check_size(path, fd, end, 1, rank, round, "while writing");
            }
        }
        if (closing) {
            close(fd);
            fd = -1;
        }
        MPI_Allreduce(&end, &expected, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
        bad +=
            check_size(path, fd, expected, 0, rank, round, closing ? "after close" : "held open");
        if (rank == 0) {
            printf("round %d size %llu\n", round, (unsigned long long)expected);
        }
        last = expected;
        if (closing) {
            MPI_Barrier(MPI_COMM_WORLD); /* every stat done before anyone opens again */
            fd = open_file(path, rank);
        }
    }
    close(fd);
    /* every writer closed: the size the metadata server kept (or asked) */
    MPI_Barrier(MPI_COMM_WORLD);
    bad += check_size(path, -1, last, 0, rank, rounds, "after the last close");
    MPI_Allreduce(&bad, &total_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("RESULT rounds=%d mismatches=%d\n", rounds, total_bad);
    }
    MPI_Finalize();
    return total_bad ? 1 : 0;
}
