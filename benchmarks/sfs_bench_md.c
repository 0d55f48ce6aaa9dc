/*
 * sfs_bench_md: an mdtest-style metadata benchmark. One MPI program, two
 * back ends, so both sides run the same loop:
 *   -a sfs    the stripefs client library directly (sfs_client.h; every
 *             acknowledged create/mkdir/unlink/rmdir is durable on the
 *             metadata server when meta.sync is on, the default)
 *   -a posix  POSIX calls: a local directory, or stripefs paths when the
 *             program runs under LD_PRELOAD=libstripefs-posix.so
 *
 *   mpirun -np 4 sfs_bench_md -a sfs -d /bench/md -n 1000 [-u] [-D]
 *
 * Phases, as mdtest's: file creation (create + close, 0 bytes), file stat,
 * file open/close (read-only), file removal, directory creation, directory
 * stat, directory removal. Items are named like mdtest's
 * (file.mdtest.<rank>.<i>) in one shared directory, or in a directory per
 * rank with -u. Each phase is timed from a barrier to the slowest rank;
 * rate = items of all ranks / that time (mdtest's SUMMARY rate).
 *
 * -D (posix only): after every create, mkdir, unlink and rmdir, fsync the
 * parent directory, so that the local file system also acknowledges only
 * durable changes (the stripefs metadata server does that by itself).
 *
 * Rank 0 prints one CSV line per phase, starting "csv," (see --help).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <sfs/sfs_client.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    PHASE_FILE_CREATE,
    PHASE_FILE_STAT,
    PHASE_FILE_OPEN,
    PHASE_FILE_REMOVE,
    PHASE_DIR_CREATE,
    PHASE_DIR_STAT,
    PHASE_DIR_REMOVE,
    PHASE_COUNT
};

static const char *const phase_names[PHASE_COUNT] = {"file_create", "file_stat",  "file_open_close",
                                                     "file_remove", "dir_create", "dir_stat",
                                                     "dir_remove"};

typedef struct md_args {
    const char *backend;
    const char *dir;
    const char *label;
    int         items;
    int         unique;
    int         durable;
    int         header;
} md_args_t;

static int           rank, nprocs;
static int           use_sfs;
static sfs_client_t *client;
static int           errors;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: sfs_bench_md -a sfs|posix -d DIR -n ITEMS [-u] [-D] [-l LABEL] [-x]\n"
            "  -a sfs     client library (DIR is a stripefs path: /x or stripefs:/x)\n"
            "  -a posix   POSIX calls (a local DIR, or /stripefs/x under the preload library)\n"
            "  -n ITEMS   files and directories per rank\n"
            "  -u         a directory per rank (default: one shared directory)\n"
            "  -D         posix: fsync the parent directory after each change\n"
            "  -l LABEL   first column of the CSV lines; -x prints the CSV header\n"
            "CSV: label,backend,ranks,items_per_rank,layout,phase,seconds,ops_s,errors\n");
}

static void fail(int rc, const char *what, const char *path)
{
    if (errors++ < 5) {
        fprintf(stderr, "sfs_bench_md: rank %d: %s %s: %s\n", rank, what, path,
                use_sfs ? sfs_client_error() : strerror(rc < 0 ? -rc : errno));
    }
}

static void sync_parent(const char *path)
{
    char  parent[PATH_MAX + 96];
    char *slash;
    int   fd;

    snprintf(parent, sizeof(parent), "%s", path);
    slash = strrchr(parent, '/');
    if (!slash) {
        return;
    }
    *slash = '\0';
    fd     = open(parent[0] ? parent : "/", O_RDONLY | O_DIRECTORY);
    if (fd < 0 || fsync(fd) != 0) {
        fail(-errno, "fsync", parent);
    }
    if (fd >= 0) {
        close(fd);
    }
}

/* One operation of a phase on one item. */
static void operate(int phase, const char *path, int durable)
{
    if (use_sfs) {
        sfs_file_t *file;
        sfs_stat_t  st;
        int         rc = 0;

        switch (phase) {
        case PHASE_FILE_CREATE:
            rc = sfs_file_open(client, path, SFS_O_CREAT | SFS_O_EXCL | SFS_O_WRONLY, 0644, NULL,
                               &file);
            if (rc == 0) {
                rc = sfs_file_close(file);
            }
            break;
        case PHASE_FILE_OPEN:
            rc = sfs_file_open(client, path, SFS_O_RDONLY, 0, NULL, &file);
            if (rc == 0) {
                rc = sfs_file_close(file);
            }
            break;
        case PHASE_FILE_STAT:
        case PHASE_DIR_STAT:
            rc = sfs_stat(client, path, &st);
            break;
        case PHASE_FILE_REMOVE:
            rc = sfs_unlink(client, path);
            break;
        case PHASE_DIR_CREATE:
            rc = sfs_mkdir(client, path, 0755);
            break;
        case PHASE_DIR_REMOVE:
            rc = sfs_rmdir(client, path);
            break;
        default:
            break;
        }
        if (rc < 0) {
            fail(rc, phase_names[phase], path);
        }
        return;
    }

    struct stat st;
    int         fd, rc = 0;

    switch (phase) {
    case PHASE_FILE_CREATE:
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        rc = fd < 0 ? -1 : close(fd);
        break;
    case PHASE_FILE_OPEN:
        fd = open(path, O_RDONLY);
        rc = fd < 0 ? -1 : close(fd);
        break;
    case PHASE_FILE_STAT:
    case PHASE_DIR_STAT:
        rc = stat(path, &st);
        break;
    case PHASE_FILE_REMOVE:
        rc = unlink(path);
        break;
    case PHASE_DIR_CREATE:
        rc = mkdir(path, 0755);
        break;
    case PHASE_DIR_REMOVE:
        rc = rmdir(path);
        break;
    default:
        break;
    }
    if (rc != 0) {
        fail(-errno, phase_names[phase], path);
        return;
    }
    if (durable && phase != PHASE_FILE_STAT && phase != PHASE_DIR_STAT &&
        phase != PHASE_FILE_OPEN) {
        sync_parent(path);
    }
}

static int make_dir(const char *path)
{
    if (use_sfs) {
        int rc = sfs_mkdir(client, path, 0755);

        return rc == -EEXIST ? 0 : rc;
    }
    return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -errno;
}

static int remove_dir(const char *path)
{
    if (use_sfs) {
        return sfs_rmdir(client, path);
    }
    return rmdir(path) == 0 ? 0 : -errno;
}

int main(int argc, char **argv)
{
    md_args_t args = {.label = "run"};
    char      base[PATH_MAX], work[PATH_MAX + 32], path[PATH_MAX + 96];
    int       opt, usage_rc = 0, rc, all_errors;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    while ((opt = getopt(argc, argv, "a:d:n:uDl:xh")) != -1) {
        switch (opt) {
        case 'a':
            args.backend = optarg;
            break;
        case 'd':
            args.dir = optarg;
            break;
        case 'n':
            args.items = atoi(optarg);
            break;
        case 'u':
            args.unique = 1;
            break;
        case 'D':
            args.durable = 1;
            break;
        case 'l':
            args.label = optarg;
            break;
        case 'x':
            args.header = 1;
            break;
        case 'h':
            usage_rc = 1;
            break;
        default:
            usage_rc = -1;
            break;
        }
    }
    if (!usage_rc && (!args.backend || !args.dir || args.items <= 0 || optind != argc ||
                      (strcmp(args.backend, "sfs") && strcmp(args.backend, "posix")))) {
        usage_rc = -1;
    }
    if (usage_rc) {
        if (rank == 0) {
            usage(usage_rc > 0 ? stdout : stderr);
        }
        MPI_Finalize();
        return usage_rc > 0 ? 0 : 2;
    }
    use_sfs = strcmp(args.backend, "sfs") == 0;
    snprintf(base, sizeof(base), "%s",
             use_sfs && strncmp(args.dir, "stripefs:", 9) == 0 ? args.dir + 9 : args.dir);
    if (use_sfs) {
        rc = sfs_client_connect(NULL, &client);
        if (rc) {
            fprintf(stderr, "sfs_bench_md: rank %d: cannot connect: %s\n", rank,
                    sfs_client_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }

    /* the tree: DIR (rank 0), then DIR/rank.N for -u (each rank) */
    if (rank == 0 && make_dir(base) != 0) {
        fprintf(stderr, "sfs_bench_md: cannot create %s\n", base);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (args.unique) {
        snprintf(work, sizeof(work), "%s/rank.%d", base, rank);
        if (make_dir(work) != 0) {
            fprintf(stderr, "sfs_bench_md: rank %d: cannot create %s\n", rank, work);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    } else {
        snprintf(work, sizeof(work), "%s", base);
    }
    if (rank == 0 && args.header) {
        printf("csv,label,backend,ranks,items_per_rank,layout,phase,seconds,ops_s,errors\n");
    }

    for (int phase = 0; phase < PHASE_COUNT; phase++) {
        double start, elapsed, slowest;
        int    before = errors, phase_errors, sum;

        MPI_Barrier(MPI_COMM_WORLD);
        start = MPI_Wtime();
        for (int i = 0; i < args.items; i++) {
            snprintf(path, sizeof(path), "%s/%s.mdtest.%d.%d", work,
                     phase < PHASE_DIR_CREATE ? "file" : "dir", rank, i);
            operate(phase, path, args.durable);
        }
        elapsed = MPI_Wtime() - start;
        MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        phase_errors = errors - before;
        MPI_Reduce(&phase_errors, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("csv,%s,%s%s,%d,%d,%s,%s,%.4f,%.1f,%d\n", args.label,
                   use_sfs ? "stripefs-lib" : "posix", args.durable ? "-durable" : "", nprocs,
                   args.items, args.unique ? "unique-dir" : "shared-dir", phase_names[phase],
                   slowest, (double)args.items * nprocs / slowest, sum);
            fflush(stdout);
        }
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (args.unique && remove_dir(work) != 0) {
        fail(-errno, "rmdir", work);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && remove_dir(base) != 0) {
        fail(-errno, "rmdir", base);
    }
    MPI_Allreduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (client) {
        sfs_client_disconnect(client);
    }
    MPI_Finalize();
    return all_errors ? 1 : 0;
}
