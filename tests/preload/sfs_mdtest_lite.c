/*
 * sfs_mdtest_lite: mdtest's metadata workload in plain POSIX calls, for
 * running under LD_PRELOAD=libstripefs-posix.so where mdtest itself is not
 * at hand (Debian ships no IOR/mdtest). It takes mdtest's options for the
 * phases it runs and prints mdtest's SUMMARY table, so that the same parser
 * reads both and their rates can be compared; unlike mdtest it also checks
 * every result.
 *
 *   mpirun -np 4 sfs_mdtest_lite -d DIR -n ITEMS [-w BYTES] [-e BYTES] [-u] [-i ITERATIONS]
 *
 *   -d DIR   the test directory (made if missing; left empty)
 *   -n N     items (files and directories) per rank
 *   -w B     bytes written to each file when it is created
 *   -e B     bytes read back from each file (checked against what was written)
 *   -u       a directory of each rank's own (mdtest's unique working directory);
 *            without it all ranks share one directory, with rank-distinct names
 *   -i N     iterations (each in DIR/test-dir.0-I, as mdtest names them)
 *
 * Phases (mdtest's names): Directory creation, stat, removal; File creation
 * (+ write), stat (type and size checked), read (bytes checked), removal
 * (then readdir must find the directory empty). Rates are items of all
 * ranks over the slowest rank's time, per iteration; the table gives their
 * max, min, mean and standard deviation over the iterations, like mdtest's.
 * The last line is "PASSED: 0 errors" or "FAILED: N errors"; the exit status
 * is 0 only if every check on every rank passed.
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
    PHASE_DIR_CREATE,
    PHASE_DIR_STAT,
    PHASE_DIR_REMOVE,
    PHASE_FILE_CREATE,
    PHASE_FILE_STAT,
    PHASE_FILE_READ,
    PHASE_FILE_REMOVE,
    PHASE_COUNT
};

/* mdtest's order of the SUMMARY table */
static const char *const phase_names[PHASE_COUNT] = {
    "Directory creation", "Directory stat", "Directory removal", "File creation",
    "File stat",          "File read",      "File removal"};

/* the order the phases run in: directories, then files */
static const int phase_order[PHASE_COUNT] = {PHASE_DIR_CREATE,  PHASE_DIR_STAT,  PHASE_DIR_REMOVE,
                                             PHASE_FILE_CREATE, PHASE_FILE_STAT, PHASE_FILE_READ,
                                             PHASE_FILE_REMOVE};

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

struct options {
    const char *top;
    int         items, unique, iterations;
    size_t      write_bytes, read_bytes;
};

static void fill(char *buf, size_t length, int item)
{
    for (size_t i = 0; i < length; i++) {
        buf[i] = (char)('a' + (item + rank + i) % 26);
    }
}

/* One phase over this rank's items in DIR; returns the seconds it took. */
static double run_phase(int phase, const char *dir, const struct options *o, char *out, char *in)
{
    size_t      expect_read = o->read_bytes < o->write_bytes ? o->read_bytes : o->write_bytes;
    char        name[4096 + 160];
    struct stat st;
    double      start;

    MPI_Barrier(MPI_COMM_WORLD);
    start = MPI_Wtime();
    for (int i = 0; i < o->items; i++) {
        int fd;

        /* mdtest's names: file.mdtest.RANK.I, dir.mdtest.RANK.I */
        snprintf(name, sizeof(name), "%s/%s.mdtest.%d.%d", dir,
                 phase < PHASE_FILE_CREATE ? "dir" : "file", rank, i);
        fill(out, o->write_bytes, i);
        switch (phase) {
        case PHASE_FILE_CREATE:
            fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0644);
            EXPECT(fd >= 0, "create %s", name);
            if (fd >= 0) {
                EXPECT(o->write_bytes == 0 ||
                           write(fd, out, o->write_bytes) == (ssize_t)o->write_bytes,
                       "write %s", name);
                EXPECT(close(fd) == 0, "close %s", name);
            }
            break;
        case PHASE_FILE_STAT:
            EXPECT(stat(name, &st) == 0 && S_ISREG(st.st_mode) &&
                       st.st_size == (off_t)o->write_bytes,
                   "stat %s", name);
            break;
        case PHASE_FILE_READ:
            fd = open(name, O_RDONLY);
            EXPECT(fd >= 0, "open %s", name);
            if (fd >= 0) {
                EXPECT(o->read_bytes == 0 || (read(fd, in, o->read_bytes) == (ssize_t)expect_read &&
                                              memcmp(in, out, expect_read) == 0),
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

/* Rank 0 makes (or, remove set, removes) a directory the others wait for. */
static void shared_dir(const char *dir, int remove)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        if (remove) {
            EXPECT(rmdir(dir) == 0, "rmdir %s", dir);
        } else {
            EXPECT(mkdir(dir, 0755) == 0 || errno == EEXIST, "mkdir %s", dir);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* One iteration; rates[phase] = ops/s of all ranks (rank 0). */
static void run_iteration(int iteration, const struct options *o, int size, char *out, char *in,
                          double *rates)
{
    char   test_dir[4096], dir[4096 + 64];
    double seconds[PHASE_COUNT], slowest[PHASE_COUNT];

    snprintf(test_dir, sizeof(test_dir), "%s/test-dir.0-%d", o->top, iteration);
    shared_dir(test_dir, 0);
    if (o->unique) {
        snprintf(dir, sizeof(dir), "%s/mdtest_tree.%d.0", test_dir, rank);
        EXPECT(mkdir(dir, 0755) == 0, "mkdir %s", dir);
    } else {
        snprintf(dir, sizeof(dir), "%s/mdtest_tree.0", test_dir);
        shared_dir(dir, 0);
    }
    for (int p = 0; p < PHASE_COUNT; p++) {
        int phase = phase_order[p];

        seconds[phase] = run_phase(phase, dir, o, out, in);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (o->unique || rank == 0) {
        EXPECT(count_entries(dir) == 0, "%s is not empty after the removals", dir);
    }
    if (o->unique) {
        EXPECT(rmdir(dir) == 0, "rmdir %s", dir);
    } else {
        shared_dir(dir, 1);
    }
    shared_dir(test_dir, 1);
    MPI_Reduce(seconds, slowest, PHASE_COUNT, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    for (int phase = 0; phase < PHASE_COUNT; phase++) {
        rates[phase] = (double)o->items * size / (slowest[phase] > 0 ? slowest[phase] : 1e-9);
    }
}

static int parse_options(int argc, char **argv, struct options *o)
{
    int opt;

    memset(o, 0, sizeof(*o));
    o->items      = 100;
    o->iterations = 1;
    while ((opt = getopt(argc, argv, "d:n:w:e:ui:")) != -1) {
        switch (opt) {
        case 'd':
            o->top = optarg;
            break;
        case 'n':
            o->items = atoi(optarg);
            break;
        case 'w':
            o->write_bytes = (size_t)atol(optarg);
            break;
        case 'e':
            o->read_bytes = (size_t)atol(optarg);
            break;
        case 'u':
            o->unique = 1;
            break;
        case 'i':
            o->iterations = atoi(optarg);
            break;
        default:
            return -1;
        }
    }
    return o->top && o->items > 0 && o->iterations > 0 && optind == argc ? 0 : -1;
}

/* (no libm for one square root) */
static double square_root(double x)
{
    double r = x > 1 ? x : 1;

    if (x <= 0) {
        return 0;
    }
    for (int i = 0; i < 100; i++) {
        r = 0.5 * (r + x / r);
    }
    return r;
}

static void print_summary(const struct options *o, int size, double (*rates)[PHASE_COUNT])
{
    printf("sfs_mdtest_lite: %d tasks, %d files/directories per task, %zu bytes written, %zu "
           "read per file%s\n",
           size, o->items, o->write_bytes, o->read_bytes, o->unique ? ", unique directories" : "");
    printf("\nSUMMARY rate: (of %d iterations)\n", o->iterations);
    printf("   %-26s %14s %14s %14s %14s\n", "Operation", "Max", "Min", "Mean", "Std Dev");
    printf("   %-26s %14s %14s %14s %14s\n", "---------", "---", "---", "----", "-------");
    for (int phase = 0; phase < PHASE_COUNT; phase++) {
        double max = 0, min = 0, sum = 0, sq = 0, mean;

        for (int it = 0; it < o->iterations; it++) {
            double r = rates[it][phase];

            max = it == 0 || r > max ? r : max;
            min = it == 0 || r < min ? r : min;
            sum += r;
        }
        mean = sum / o->iterations;
        for (int it = 0; it < o->iterations; it++) {
            sq += (rates[it][phase] - mean) * (rates[it][phase] - mean);
        }
        printf("   %-26s: %14.3f %14.3f %14.3f %14.3f\n", phase_names[phase], max, min, mean,
               square_root(sq / o->iterations));
    }
}

int main(int argc, char **argv)
{
    struct options o;
    int            size, total_errors;
    char          *out, *in;
    double(*rates)[PHASE_COUNT];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (parse_options(argc, argv, &o) != 0) {
        if (rank == 0) {
            fprintf(stderr,
                    "usage: %s -d DIR -n ITEMS [-w BYTES] [-e BYTES] [-u] [-i ITERATIONS]\n",
                    argv[0]);
        }
        MPI_Finalize();
        return 2;
    }
    out   = malloc(o.write_bytes + 1);
    in    = malloc(o.read_bytes + 1);
    rates = calloc((size_t)o.iterations, sizeof(*rates));
    if (!out || !in || !rates) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    shared_dir(o.top, 0);
    for (int it = 0; it < o.iterations; it++) {
        run_iteration(it, &o, size, out, in, rates[it]);
    }
    MPI_Allreduce(&errors, &total_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        print_summary(&o, size, rates);
        printf("\n%s: %d errors\n", total_errors ? "FAILED" : "PASSED", total_errors);
    }
    free(out);
    free(in);
    free(rates);
    MPI_Finalize();
    return total_errors ? 1 : 0;
}
