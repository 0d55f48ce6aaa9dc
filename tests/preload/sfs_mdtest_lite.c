/*
 * An mdtest-like metadata workload in plain POSIX calls, for running under
 * LD_PRELOAD=libstripefs-posix.so when mdtest itself is not at hand. Every
 * rank works in its own directory DIR/rank.N:
 *
 *   files: create (+ write BYTES), stat (size checked), read (checked),
 *          remove; then readdir finds the directory empty
 *   dirs:  mkdir, stat (type checked), rmdir
 *
 *   mpirun -np 4 sfs_mdtest_lite -d /stripefs/mdt -n 100 [-w 4096]
 *
 * Rank 0 prints one rate line per phase (items of all ranks / slowest
 * rank's time), like mdtest's SUMMARY. Exit status 0 only if every check on
 * every rank passed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    PHASE_FILE_CREATE,
    PHASE_FILE_STAT,
    PHASE_FILE_READ,
    PHASE_FILE_REMOVE,
    PHASE_DIR_CREATE,
    PHASE_DIR_STAT,
    PHASE_DIR_REMOVE,
    PHASE_COUNT
};

static const char *const phase_names[PHASE_COUNT] = {
    "File creation",      "File stat",      "File read",        "File removal",
    "Directory creation", "Directory stat", "Directory removal"};

static int rank;
static int errors;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (errors++ < 10) {                                                                   \
                fprintf(stderr, "rank %d: ", rank);                                                \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fprintf(stderr, " (%s)\n", strerror(errno));                                       \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static void fill(char *buf, size_t length, int item)
{
    for (size_t i = 0; i < length; i++) {
        buf[i] = (char)('a' + (item + i) % 26);
    }
}

/* One phase over all items; returns the seconds this rank took. */
static double run_phase(int phase, const char *dir, int items, size_t bytes, char *out, char *in)
{
    char        name[4096 + 64];
    struct stat st;
    double      start;

    MPI_Barrier(MPI_COMM_WORLD);
    start = MPI_Wtime();
    for (int i = 0; i < items; i++) {
        int fd;

        snprintf(name, sizeof(name), "%s/%s.%d", dir, phase < PHASE_DIR_CREATE ? "file" : "dir", i);
        fill(out, bytes, i);
        switch (phase) {
        case PHASE_FILE_CREATE:
            fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0644);
            EXPECT(fd >= 0, "create %s", name);
            if (fd >= 0) {
                EXPECT(bytes == 0 || write(fd, out, bytes) == (ssize_t)bytes, "write %s", name);
                EXPECT(close(fd) == 0, "close %s", name);
            }
            break;
        case PHASE_FILE_STAT:
            EXPECT(stat(name, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == (off_t)bytes,
                   "stat %s", name);
            break;
        case PHASE_FILE_READ:
            fd = open(name, O_RDONLY);
            EXPECT(fd >= 0, "open %s", name);
            if (fd >= 0) {
                EXPECT(read(fd, in, bytes + 1) == (ssize_t)bytes && memcmp(in, out, bytes) == 0,
                       "read back %s", name);
                EXPECT(close(fd) == 0, "close %s", name);
            }
            break;
        case PHASE_FILE_REMOVE:
            EXPECT(unlink(name) == 0, "unlink %s", name);
            break;
        case PHASE_DIR_CREATE:
            EXPECT(mkdir(name, 0755) == 0, "mkdir %s", name);
            break;
        case PHASE_DIR_STAT:
            EXPECT(stat(name, &st) == 0 && S_ISDIR(st.st_mode), "stat %s", name);
            break;
        case PHASE_DIR_REMOVE:
            EXPECT(rmdir(name) == 0, "rmdir %s", name);
            break;
        }
    }
    return MPI_Wtime() - start;
}

/* Number of entries other than "." and "..". */
static int count_entries(const char *dir)
{
    DIR           *stream = opendir(dir);
    struct dirent *entry;
    int            n = 0;

    if (!stream) {
        return -1;
    }
    while ((entry = readdir(stream)) != NULL) {
        n += strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0;
    }
    closedir(stream);
    return n;
}

int main(int argc, char **argv)
{
    const char *top   = NULL;
    int         items = 100, size, opt, total_errors;
    size_t      bytes = 0;
    char        dir[4096], *out, *in;
    double      seconds[PHASE_COUNT], slowest[PHASE_COUNT];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while ((opt = getopt(argc, argv, "d:n:w:")) != -1) {
        switch (opt) {
        case 'd':
            top = optarg;
            break;
        case 'n':
            items = atoi(optarg);
            break;
        case 'w':
            bytes = (size_t)atol(optarg);
            break;
        default:
            top = NULL;
            break;
        }
    }
    if (!top || items <= 0) {
        if (rank == 0) {
            fprintf(stderr, "usage: %s -d DIR -n ITEMS_PER_RANK [-w BYTES]\n", argv[0]);
        }
        MPI_Finalize();
        return 2;
    }
    out = malloc(bytes + 1);
    in  = malloc(bytes + 1);
    if (rank == 0) {
        EXPECT(mkdir(top, 0755) == 0 || errno == EEXIST, "mkdir %s", top);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(dir, sizeof(dir), "%s/rank.%d", top, rank);
    EXPECT(mkdir(dir, 0755) == 0, "mkdir %s", dir);
    for (int phase = 0; phase < PHASE_COUNT; phase++) {
        seconds[phase] = run_phase(phase, dir, items, bytes, out, in);
        if (phase == PHASE_FILE_REMOVE) {
            EXPECT(count_entries(dir) == 0, "%s is not empty after the removals", dir);
        }
    }
    EXPECT(rmdir(dir) == 0, "rmdir %s", dir);
    MPI_Reduce(seconds, slowest, PHASE_COUNT, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&errors, &total_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("sfs_mdtest_lite: %d ranks, %d items per rank, %zu bytes per file\n", size, items,
               bytes);
        printf("   %-22s %14s\n", "Operation", "Rate (ops/s)");
        for (int phase = 0; phase < PHASE_COUNT; phase++) {
            printf("   %-22s %14.1f\n", phase_names[phase],
                   (double)items * size / (slowest[phase] > 0 ? slowest[phase] : 1e-9));
        }
        printf("%s: %d errors\n", total_errors ? "FAILED" : "PASSED", total_errors);
    }
    free(out);
    free(in);
    MPI_Finalize();
    return total_errors ? 1 : 0;
}
