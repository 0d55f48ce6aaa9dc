/*
 * sfs_bench_md: mdtest's phases in the shapes of IO500's mdtest-easy and
 * mdtest-hard, one MPI program for every system so that all sides run the
 * same loop of POSIX calls: a local directory (ext4, tmpfs), or stripefs
 * paths (/stripefs/x) when it runs under stripefs-run (the POSIX preload).
 *
 *   mpirun -np 4 sfs_bench_md -d DIR -n 1000 -s easy|hard [-w BYTES] [-D]
 *          [-b BRANCH -z DEPTH] [-P SECONDS] [-l LABEL] [-B SYSTEM] [-x]
 *
 * Shapes: easy = a directory per rank, empty files (mdtest -F -u -e 0 -w 0);
 * hard = one shared directory, files of 3901 bytes written at creation and
 * read back (mdtest -w 3901 -e 3901). DIR must not exist: a fresh directory
 * every run (ext4 is slow in a directory whose files were just deleted).
 *
 * Phases, in mdtest's order: tree creation (the directories the items go
 * in: a tree of -b BRANCH x -z DEPTH below each rank's, or the shared,
 * root), directory creation, stat, removal; file creation (create, write
 * -w bytes, close), stat, read (open, read -w bytes, close), removal; tree
 * removal. Each phase is timed from a barrier to the slowest rank; rate =
 * all ranks' items / that time (mdtest's SUMMARY rate).
 *
 * Verified after each phase, outside its time: the number of entries in
 * the directories (readdir), every stat's type and size, every byte read
 * (each file has its own contents). -D (the durable variant): fsync each
 * file written and then its directory after every create, mkdir, unlink
 * and rmdir, as a file system whose acknowledgements are durable does.
 * -P: sleep that long after each phase (outside its time), so that a
 * server's per-burst statistics fall apart by phase.
 *
 * -p PHASES (comma-separated names, as in the CSV) runs only those phases,
 * so that the phases of one tree can be split over several runs with other
 * work between them, as IO500 does (create; ...; stat; ...; remove): DIR is
 * made only by a run with tree_create (it must not exist then) and must
 * exist otherwise; it is removed only by a run with tree_remove.
 *
 * Rank 0 prints one CSV line per phase, starting "csv," (-x: a header).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
    PHASE_TREE_CREATE,
    PHASE_DIR_CREATE,
    PHASE_DIR_STAT,
    PHASE_DIR_REMOVE,
    PHASE_FILE_CREATE,
    PHASE_FILE_STAT,
    PHASE_FILE_READ,
    PHASE_FILE_REMOVE,
    PHASE_TREE_REMOVE,
    PHASE_COUNT
};

static const char *const phase_names[PHASE_COUNT] = {"tree_create", "dir_create",  "dir_stat",
                                                     "dir_remove",  "file_create", "file_stat",
                                                     "file_read",   "file_remove", "tree_remove"};

typedef struct md_args {
    const char *dir;
    const char *label;
    const char *system;
    int         items;
    int         hard;
    long        bytes;
    int         durable;
    int         branch, depth;
    double      pause;
    int         header;
    unsigned    phases; /* bit per phase to run */
} md_args_t;

static int       rank, nprocs;
static md_args_t args = {.label  = "run",
                         .system = "posix",
                         .bytes  = -1,
                         .branch = 10,
                         .depth  = 1,
                         .phases = (1u << PHASE_COUNT) - 1};
static int       errors, verify_errors;
static char      base[PATH_MAX], root[PATH_MAX + 64];
static char    **tree;       /* this rank's tree directories, parents first */
static int       tree_count; /* 0 on ranks that make no tree (hard: all but rank 0) */
static char     *readback;   /* items x bytes, what the read phase read */
static long     *got;        /* bytes each read returned, or the size each stat saw */

static void usage(FILE *out)
{
    fprintf(out, "usage: sfs_bench_md -d DIR -n ITEMS [-s easy|hard] [-w BYTES] [-D] [-b BRANCH]\n"
                 "                    [-z DEPTH] [-P SECONDS] [-p PHASES] [-l LABEL] [-B SYSTEM] "
                 "[-x]\n"
                 "  -s easy    a directory per rank, empty files (default)\n"
                 "  -s hard    one shared directory, files of 3901 bytes (-w changes it)\n"
                 "  -D         fsync each written file and its directory after each change\n"
                 "  -b, -z     the tree below each root: BRANCH subdirectories, DEPTH levels "
                 "(10, 1)\n"
                 "  -P SECONDS sleep after each phase, outside its time\n"
                 "  -p PHASES  only these phases (comma-separated CSV names; default all)\n"
                 "  -l LABEL, -B SYSTEM  the first two columns of the CSV; -x prints a header\n"
                 "CSV: label,system,shape,ranks,items_per_rank,bytes,phase,seconds,ops_s,errors,"
                 "verify_errors,t_start,t_end\n");
}

static void fail(const char *what, const char *path)
{
    int saved = errno;

    if (errors++ < 5) {
        fprintf(stderr, "sfs_bench_md: rank %d: %s %s: %s\n", rank, what, path, strerror(saved));
    }
}

static void mismatch(const char *what, const char *path)
{
    if (verify_errors++ < 5) {
        fprintf(stderr, "sfs_bench_md: rank %d: verify: %s: %s\n", rank, path, what);
    }
}

static double wall_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The contents of file i of this rank: no two files alike. */
static unsigned char content_byte(int i, long j)
{
    return (unsigned char)((rank * 131 + i * 7 + j * 13 + (j >> 8)) & 0xff);
}

static void item_path(char *out, size_t size, int dir_item, int i)
{
    snprintf(out, size, "%s/%s.mdtest.%d.%d", root, dir_item ? "dir" : "file", rank, i);
}

static void sync_path(const char *path, int directory)
{
    int fd = open(path, (directory ? O_DIRECTORY : 0) | O_RDONLY);

    if (fd < 0 || fsync(fd) != 0) {
        fail("fsync", path);
    }
    if (fd >= 0) {
        close(fd);
    }
}

static void sync_parent(const char *path)
{
    char  parent[PATH_MAX + 128];
    char *slash;

    snprintf(parent, sizeof(parent), "%s", path);
    slash = strrchr(parent, '/');
    if (slash && slash != parent) {
        *slash = '\0';
        sync_path(parent, 1);
    }
}

static int write_all(int fd, const unsigned char *buf, long n)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, (size_t)n);

        if (w <= 0) {
            return -1;
        }
        buf += w;
        n -= w;
    }
    return 0;
}

static void file_create(const char *path, int i, unsigned char *buf)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);

    if (fd < 0) {
        fail("create", path);
        return;
    }
    if (args.bytes > 0) {
        for (long j = 0; j < args.bytes; j++) {
            buf[j] = content_byte(i, j);
        }
        if (write_all(fd, buf, args.bytes) != 0) {
            fail("write", path);
        }
    }
    if (args.durable && fsync(fd) != 0) {
        fail("fsync", path);
    }
    if (close(fd) != 0) {
        fail("close", path);
    }
    if (args.durable) {
        sync_parent(path);
    }
}

static void file_read(const char *path, int i)
{
    char *dst = readback + (size_t)i * (size_t)args.bytes;
    int   fd  = open(path, O_RDONLY);
    long  n   = 0;

    if (fd < 0) {
        fail("open", path);
        return;
    }
    while (n < args.bytes) { /* mdtest -e 0 opens and closes only */
        ssize_t r = read(fd, dst + n, (size_t)(args.bytes - n));

        if (r < 0) {
            fail("read", path);
            break;
        }
        if (r == 0) {
            break;
        }
        n += r;
    }
    got[i] = n;
    if (close(fd) != 0) {
        fail("close", path);
    }
}

/* One operation of a phase on item i. */
static void operate(int phase, int i, unsigned char *buf)
{
    char        path[PATH_MAX + 128];
    struct stat st;

    item_path(path, sizeof(path), phase <= PHASE_DIR_REMOVE, i);
    switch (phase) {
    case PHASE_DIR_CREATE:
        if (mkdir(path, 0755) != 0) {
            fail("mkdir", path);
        } else if (args.durable) {
            sync_path(path, 1);
            sync_parent(path);
        }
        break;
    case PHASE_DIR_STAT:
    case PHASE_FILE_STAT:
        if (stat(path, &st) != 0) {
            fail("stat", path);
            got[i] = -1;
        } else {
            got[i] = phase == PHASE_DIR_STAT ? (S_ISDIR(st.st_mode) ? 0 : -2)
                                             : (S_ISREG(st.st_mode) ? (long)st.st_size : -2);
        }
        break;
    case PHASE_DIR_REMOVE:
    case PHASE_FILE_REMOVE:
        if ((phase == PHASE_DIR_REMOVE ? rmdir(path) : unlink(path)) != 0) {
            fail(phase == PHASE_DIR_REMOVE ? "rmdir" : "unlink", path);
        } else if (args.durable) {
            sync_parent(path);
        }
        break;
    case PHASE_FILE_CREATE:
        file_create(path, i, buf);
        break;
    case PHASE_FILE_READ:
        file_read(path, i);
        break;
    default:
        break;
    }
}

/* The tree: each root (one per rank, or rank 0's shared one) and below it
 * BRANCH subdirectories per level, DEPTH levels; parents first. */
static int tree_build_list(void)
{
    int total = 1, level = 1, start = 0;

    if (args.hard && rank != 0) {
        return 0;
    }
    for (int d = 0; d < args.depth; d++) {
        level *= args.branch;
        total += level;
    }
    tree = calloc((size_t)total, sizeof(*tree));
    if (!tree) {
        return -ENOMEM;
    }
    tree[tree_count++] = strdup(root);
    for (int d = 0; d < args.depth; d++) {
        int end = tree_count;

        for (int p = start; p < end; p++) {
            for (int b = 0; b < args.branch; b++) {
                char sub[PATH_MAX + 160];

                snprintf(sub, sizeof(sub), "%s/b.%d", tree[p], b);
                tree[tree_count++] = strdup(sub);
            }
        }
        start = end;
    }
    for (int k = 0; k < tree_count; k++) {
        if (!tree[k]) {
            return -ENOMEM;
        }
    }
    return 0;
}

static void tree_operate(int phase)
{
    if (phase == PHASE_TREE_CREATE) {
        for (int k = 0; k < tree_count; k++) {
            if (mkdir(tree[k], 0755) != 0) {
                fail("mkdir", tree[k]);
            } else if (args.durable) {
                sync_path(tree[k], 1);
                sync_parent(tree[k]);
            }
        }
        return;
    }
    for (int k = tree_count - 1; k >= 0; k--) { /* children first */
        if (rmdir(tree[k]) != 0) {
            fail("rmdir", tree[k]);
        } else if (args.durable) {
            sync_parent(tree[k]);
        }
    }
}

/* Entries of DIR whose names start with `prefix` (all with ""). */
static long count_entries(const char *dir, const char *prefix)
{
    DIR           *d = opendir(dir);
    struct dirent *e;
    long           n = 0;

    if (!d) {
        fail("opendir", dir);
        return -1;
    }
    while ((errno = 0, e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            n++;
        }
    }
    if (errno) {
        fail("readdir", dir);
    }
    closedir(d);
    return n;
}

/* The entries of the items' directories: each rank counts its own (easy),
 * or rank 0 counts everyone's (hard). */
static void verify_count(const char *prefix, long want_per_rank, const char *what)
{
    long want = args.hard ? want_per_rank * nprocs : want_per_rank, n;
    char text[160];

    if (args.hard && rank != 0) {
        return;
    }
    n = count_entries(root, prefix);
    if (n != want) {
        snprintf(text, sizeof(text), "%s: %ld entries '%s*', expected %ld", what, n, prefix, want);
        mismatch(text, root);
    }
}

static void verify(int phase)
{
    char path[PATH_MAX + 128], text[128];

    switch (phase) {
    case PHASE_TREE_CREATE:
        for (int k = 0; k < tree_count; k++) {
            struct stat st;

            if (stat(tree[k], &st) != 0 || !S_ISDIR(st.st_mode)) {
                mismatch("tree directory missing after creation", tree[k]);
            }
        }
        break;
    case PHASE_DIR_CREATE:
        verify_count("dir.mdtest.", args.items, "after directory creation");
        break;
    case PHASE_DIR_REMOVE:
        verify_count("dir.mdtest.", 0, "after directory removal");
        break;
    case PHASE_FILE_CREATE:
        verify_count("file.mdtest.", args.items, "after file creation");
        break;
    case PHASE_FILE_REMOVE:
        verify_count("file.mdtest.", 0, "after file removal");
        break;
    case PHASE_DIR_STAT:
    case PHASE_FILE_STAT:
    case PHASE_FILE_READ:
        for (int i = 0; i < args.items; i++) {
            long want = phase == PHASE_DIR_STAT ? 0 : args.bytes;

            if (got[i] == want) {
                continue;
            }
            item_path(path, sizeof(path), phase == PHASE_DIR_STAT, i);
            snprintf(text, sizeof(text), "%s: got %ld, expected %ld (-2: wrong type)",
                     phase_names[phase], got[i], want);
            mismatch(text, path);
        }
        if (phase != PHASE_FILE_READ) {
            break;
        }
        for (int i = 0; i < args.items; i++) {
            const unsigned char *r = (const unsigned char *)readback + (size_t)i * args.bytes;

            for (long j = 0; j < args.bytes; j++) {
                if (r[j] != content_byte(i, j)) {
                    item_path(path, sizeof(path), 0, i);
                    snprintf(text, sizeof(text), "byte %ld read back differs", j);
                    mismatch(text, path);
                    break;
                }
            }
        }
        break;
    case PHASE_TREE_REMOVE:
        if (rank == 0 && count_entries(base, "") != 0) {
            mismatch("entries left after tree removal", base);
        }
        break;
    default:
        break;
    }
}

/* "file_create,file_stat" -> their bits; 0 for an unknown name. */
static unsigned parse_phases(const char *list)
{
    char     copy[256], *save = NULL, *name;
    unsigned mask = 0;

    snprintf(copy, sizeof(copy), "%s", list);
    for (name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        int p;

        for (p = 0; p < PHASE_COUNT && strcmp(name, phase_names[p]); p++) {
        }
        if (p == PHASE_COUNT) {
            fprintf(stderr, "sfs_bench_md: unknown phase '%s'\n", name);
            return 0;
        }
        mask |= 1u << p;
    }
    return mask;
}

static int parse_args(int argc, char **argv)
{
    const char *shape = "easy";
    int         opt;

    while ((opt = getopt(argc, argv, "d:n:s:w:Db:z:P:p:l:B:xh")) != -1) {
        switch (opt) {
        case 'd':
            args.dir = optarg;
            break;
        case 'n':
            args.items = atoi(optarg);
            break;
        case 's':
            shape = optarg;
            break;
        case 'w':
            args.bytes = atol(optarg);
            break;
        case 'D':
            args.durable = 1;
            break;
        case 'b':
            args.branch = atoi(optarg);
            break;
        case 'z':
            args.depth = atoi(optarg);
            break;
        case 'P':
            args.pause = atof(optarg);
            break;
        case 'p':
            args.phases = parse_phases(optarg);
            if (!args.phases) {
                return -1;
            }
            break;
        case 'l':
            args.label = optarg;
            break;
        case 'B':
            args.system = optarg;
            break;
        case 'x':
            args.header = 1;
            break;
        case 'h':
            return 1;
        default:
            return -1;
        }
    }
    args.hard = strcmp(shape, "hard") == 0;
    if (args.bytes < 0) {
        args.bytes = args.hard ? 3901 : 0;
    }
    if (!args.dir || args.items <= 0 || optind != argc || args.branch < 0 || args.depth < 0 ||
        args.depth > 4 || args.bytes > (1 << 20) || (!args.hard && strcmp(shape, "easy"))) {
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    unsigned char *buf;
    int            usage_rc, all_errors, rc = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    usage_rc = parse_args(argc, argv);
    if (usage_rc) {
        if (rank == 0) {
            usage(usage_rc > 0 ? stdout : stderr);
        }
        MPI_Finalize();
        return usage_rc > 0 ? 0 : 2;
    }
    snprintf(base, sizeof(base), "%s", args.dir);
    if (args.hard) {
        snprintf(root, sizeof(root), "%s/mdtest_tree.0", base);
    } else {
        snprintf(root, sizeof(root), "%s/mdtest_tree.%d.0", base, rank);
    }
    buf      = malloc((size_t)args.bytes + 1);
    readback = malloc((size_t)args.items * (size_t)args.bytes + 1);
    got      = calloc((size_t)args.items, sizeof(*got));
    if (!buf || !readback || !got || tree_build_list() != 0) {
        fprintf(stderr, "sfs_bench_md: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* a fresh directory: one that exists already is an error */
    if (rank == 0 && (args.phases & (1u << PHASE_TREE_CREATE)) && mkdir(base, 0755) != 0) {
        fprintf(stderr, "sfs_bench_md: cannot create %s: %s (it must not exist)\n", base,
                strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0 && args.header) {
        printf("csv,label,system,shape,ranks,items_per_rank,bytes,phase,seconds,ops_s,errors,"
               "verify_errors,t_start,t_end\n");
    }

    for (int phase = 0; phase < PHASE_COUNT; phase++) {
        int    before = errors, vbefore, counts[2], sums[2], ops, all_ops;
        double start, t_start, elapsed, slowest;

        if (!(args.phases & (1u << phase))) {
            continue;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        t_start = wall_now();
        start   = MPI_Wtime();
        if (phase == PHASE_TREE_CREATE || phase == PHASE_TREE_REMOVE) {
            tree_operate(phase);
            ops = tree_count;
        } else {
            for (int i = 0; i < args.items; i++) {
                operate(phase, i, buf);
            }
            ops = args.items;
        }
        elapsed = MPI_Wtime() - start;
        MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(&ops, &all_ops, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        /* verification is outside the time: after the slowest rank is done */
        vbefore = verify_errors;
        verify(phase);
        counts[0] = errors - before;
        counts[1] = verify_errors - vbefore;
        MPI_Reduce(counts, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("csv,%s,%s,%s,%d,%d,%ld,%s,%.4f,%.1f,%d,%d,%.3f,%.3f\n", args.label, args.system,
                   args.hard ? "hard" : "easy", nprocs, args.items, args.bytes, phase_names[phase],
                   slowest, slowest > 0 ? all_ops / slowest : 0.0, sums[0], sums[1], t_start,
                   t_start + slowest);
            fflush(stdout);
        }
        if (args.pause > 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            usleep((useconds_t)(args.pause * 1e6));
        }
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && (args.phases & (1u << PHASE_TREE_REMOVE)) && rmdir(base) != 0) {
        fail("rmdir", base);
    }
    all_errors = errors + verify_errors;
    MPI_Allreduce(MPI_IN_PLACE, &all_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int k = 0; k < tree_count; k++) {
        free(tree[k]);
    }
    free(tree);
    free(buf);
    free(readback);
    free(got);
    MPI_Finalize();
    if (all_errors) {
        rc = 1;
    }
    return rc;
}
