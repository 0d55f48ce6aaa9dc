/*
 * sfs_bench_find: the find phase of IO500's shapes, one MPI program of POSIX
 * calls for every system (stripefs paths /stripefs/x under stripefs-run,
 * which preloads the POSIX library). It walks the tree under DIR and counts
 * the regular files whose name contains -n TEXT and whose size is -S BYTES
 * (IO500's `find -name '*01*' -size 3901c`, without its -newer: every file
 * here is new).
 *
 *   mpirun -np 4 sfs_bench_find -d DIR [-n 01] [-S 3901] [-e MATCHES] [-E ENTRIES]
 *          [-l LABEL] [-B SYSTEM] [-x]
 *
 * The walk goes level by level: every rank holds the same sorted list of the
 * directories of one level, reads the ones whose index modulo the ranks is
 * its own (readdir; lstat of every entry, as find -size needs), and the
 * subdirectories found are gathered on all ranks as the next level. Timed
 * from a barrier to the slowest rank; rate = entries examined (files and
 * directories below DIR) / that time. -e and -E check the number of matches
 * and of entries (outside the time); a difference fails the run.
 *
 * Rank 0 prints one CSV line, starting "csv," (-x: a header first):
 *   label,system,ranks,entries,files,matches,seconds,ops_s,errors,verify_errors
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct find_args {
    const char *dir;
    const char *name;
    const char *label;
    const char *system;
    long        size;
    long        want_matches, want_entries;
    int         header;
} find_args_t;

/* A list of paths in one buffer of NUL-terminated strings. */
typedef struct path_list {
    char  *buf;
    size_t len, cap;
    long   count;
} path_list_t;

static int         rank, nprocs;
static find_args_t args = {.name         = "01",
                           .label        = "run",
                           .system       = "posix",
                           .size         = 3901,
                           .want_matches = -1,
                           .want_entries = -1};
static long        errors;

static void fail(const char *what, const char *path)
{
    int saved = errno;

    if (errors++ < 5) {
        fprintf(stderr, "sfs_bench_find: rank %d: %s %s: %s\n", rank, what, path, strerror(saved));
    }
}

static int list_add(path_list_t *l, const char *path)
{
    size_t n = strlen(path) + 1;

    if (l->len + n > l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4096;
        char  *buf;

        while (cap < l->len + n) {
            cap *= 2;
        }
        buf = realloc(l->buf, cap);
        if (!buf) {
            return -ENOMEM;
        }
        l->buf = buf;
        l->cap = cap;
    }
    memcpy(l->buf + l->len, path, n);
    l->len += n;
    l->count++;
    return 0;
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The entries of `l` as a sorted array of pointers into its buffer. */
static const char **list_sorted(const path_list_t *l)
{
    const char **v   = calloc((size_t)l->count + 1, sizeof(*v));
    size_t       off = 0;

    if (!v) {
        return NULL;
    }
    for (long i = 0; i < l->count; i++) {
        v[i] = l->buf + off;
        off += strlen(l->buf + off) + 1;
    }
    qsort(v, (size_t)l->count, sizeof(*v), compare_strings);
    return v;
}

/* Reads one directory: files are checked against the rule, subdirectories
 * go to `next`. */
static void scan_dir(const char *dir, path_list_t *next, long *entries, long *files, long *matches)
{
    DIR           *d = opendir(dir);
    struct dirent *e;
    char           path[PATH_MAX];

    if (!d) {
        fail("opendir", dir);
        return;
    }
    while ((errno = 0, e = readdir(d)) != NULL) {
        struct stat st;

        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) {
            continue;
        }
        if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path)) {
            errno = ENAMETOOLONG;
            fail("path", dir);
            continue;
        }
        (*entries)++;
        if (lstat(path, &st) != 0) {
            fail("lstat", path);
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            if (list_add(next, path) != 0) {
                fail("out of memory at", path);
            }
        } else if (S_ISREG(st.st_mode)) {
            (*files)++;
            if (st.st_size == args.size && strstr(e->d_name, args.name)) {
                (*matches)++;
            }
        }
    }
    if (errno) {
        fail("readdir", dir);
    }
    closedir(d);
}

/* Everyone's `mine` as one list on every rank. */
static int gather(const path_list_t *mine, path_list_t *all)
{
    int  len = (int)mine->len, *lens, *displs, total = 0;
    long count = mine->count, all_count = 0;

    lens   = calloc((size_t)nprocs, sizeof(*lens));
    displs = calloc((size_t)nprocs, sizeof(*displs));
    if (!lens || !displs) {
        free(lens);
        free(displs);
        return -ENOMEM;
    }
    MPI_Allgather(&len, 1, MPI_INT, lens, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < nprocs; r++) {
        displs[r] = total;
        total += lens[r];
    }
    MPI_Allreduce(&count, &all_count, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    all->buf = malloc((size_t)total + 1);
    if (!all->buf) {
        free(lens);
        free(displs);
        return -ENOMEM;
    }
    MPI_Allgatherv(mine->buf ? mine->buf : "", len, MPI_CHAR, all->buf, lens, displs, MPI_CHAR,
                   MPI_COMM_WORLD);
    all->len = all->cap = (size_t)total;
    all->count          = all_count;
    free(lens);
    free(displs);
    return 0;
}

static int parse_args(int argc, char **argv)
{
    int opt;

    while ((opt = getopt(argc, argv, "d:n:S:e:E:l:B:xh")) != -1) {
        switch (opt) {
        case 'd':
            args.dir = optarg;
            break;
        case 'n':
            args.name = optarg;
            break;
        case 'S':
            args.size = atol(optarg);
            break;
        case 'e':
            args.want_matches = atol(optarg);
            break;
        case 'E':
            args.want_entries = atol(optarg);
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
    return !args.dir || optind != argc ? -1 : 0;
}

int main(int argc, char **argv)
{
    path_list_t level     = {0};
    long        counts[4] = {0}, sums[4] = {0}; /* entries, files, matches, errors */
    long        verify_errors = 0;
    double      start, elapsed, slowest;
    int         rc;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    rc = parse_args(argc, argv);
    if (rc) {
        if (rank == 0) {
            fprintf(rc > 0 ? stdout : stderr,
                    "usage: sfs_bench_find -d DIR [-n TEXT] [-S BYTES] [-e MATCHES] "
                    "[-E ENTRIES] [-l LABEL] [-B SYSTEM] [-x]\n");
        }
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }
    if (list_add(&level, args.dir) != 0) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    start = MPI_Wtime();
    while (level.count > 0) {
        const char **dirs = list_sorted(&level);
        path_list_t  mine = {0}, next = {0};

        if (!dirs) {
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (long i = rank; i < level.count; i += nprocs) {
            scan_dir(dirs[i], &mine, &counts[0], &counts[1], &counts[2]);
        }
        if (gather(&mine, &next) != 0) {
            fprintf(stderr, "sfs_bench_find: rank %d: out of memory\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        free(dirs);
        free(mine.buf);
        free(level.buf);
        level = next;
    }
    elapsed = MPI_Wtime() - start;
    free(level.buf);
    MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    counts[3] = errors;
    MPI_Reduce(counts, sums, 4, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        if (args.want_matches >= 0 && sums[2] != args.want_matches) {
            fprintf(stderr, "sfs_bench_find: verify: %ld matches, expected %ld\n", sums[2],
                    args.want_matches);
            verify_errors++;
        }
        if (args.want_entries >= 0 && sums[0] != args.want_entries) {
            fprintf(stderr, "sfs_bench_find: verify: %ld entries, expected %ld\n", sums[0],
                    args.want_entries);
            verify_errors++;
        }
        if (args.header) {
            printf("csv,label,system,ranks,entries,files,matches,seconds,ops_s,errors,"
                   "verify_errors\n");
        }
        printf("csv,%s,%s,%d,%ld,%ld,%ld,%.4f,%.1f,%ld,%ld\n", args.label, args.system, nprocs,
               sums[0], sums[1], sums[2], slowest, slowest > 0 ? (double)sums[0] / slowest : 0.0,
               sums[3], verify_errors);
        fflush(stdout);
        rc = sums[3] || verify_errors ? 1 : 0;
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
