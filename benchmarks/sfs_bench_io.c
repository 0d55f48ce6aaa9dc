/*
 * sfs_bench_io: an IOR-style MPI-IO bandwidth driver. The same binary runs on
 * stripefs ("stripefs:/path", through the stripefs ADIO driver) and on a
 * plain directory (ROMIO's ufs driver), so both sides use one library.
 *
 *   mpirun -np 4 stripefs-run sfs_bench_io -o stripefs:/bench/f -t 1m -s 64m [-F] [-c] [-e]
 *
 * Layout (IOR's -b T -t T -s S/T): every rank moves S bytes in transfers of
 * T bytes. File per process (-F): rank r writes PATH.r from offset 0 up.
 * Shared file: transfer i of rank r is at offset (i * nprocs + r) * T, so
 * the ranks interleave and a collective call (-c) covers one contiguous
 * region of nprocs * T bytes.
 *
 * Phases: write (open, transfers, MPI_File_sync with -e, close), then read
 * (open, transfers, close) into a second buffer, then the read data is
 * compared with what was written (outside the timed part). Each phase is
 * timed from a barrier to the slowest rank's close; bandwidth = all bytes /
 * that time (IOR's aggregate bandwidth). With -C, rank 0 writes back and
 * drops the page cache (root only) before the read phase. With -R, each rank
 * reads what the next rank wrote (rank r reads rank r+1's file or segments,
 * IOR's -C), so that no rank reads back its own writes.
 *
 * Byte counts: every call's MPI_Get_count is added up and compared with -s
 * after the phase (outside its time); a short phase is "SHORT" in the CSV's
 * verified column and the program exits with 1.
 *
 * Rank 0 prints one CSV line per phase, starting "csv," (see --help).
 */
#include "sfs_config.h" /* sfs_parse_size (common/sfs_units.c) */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BENCH_MAX_HINTS 16

typedef struct bench_args {
    const char *path;
    const char *label;
    uint64_t    xfer;
    uint64_t    per_rank;
    int         fpp;
    int         collective;
    int         do_write;
    int         do_read;
    int         fsync;
    int         cold;
    int         keep;
    int         shift;
    int         header;
    int         hint_count;
    char       *hints[BENCH_MAX_HINTS];
} bench_args_t;

/* Seconds, slowest rank, of the parts of one phase. */
typedef struct bench_times {
    double open;
    double xfer;
    double sync;
    double close;
    double total;
} bench_times_t;

static int rank, nprocs;
static int owner; /* whose data this rank moves: rank, or rank + 1 with -R */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: sfs_bench_io -o PATH -t SIZE -s SIZE [options]\n"
            "  -o PATH     file (shared) or prefix (-F: PATH.<rank>); stripefs:/x or a plain path\n"
            "  -t SIZE     transfer size (64k, 1m, 16m, ...)\n"
            "  -s SIZE     bytes per rank (a multiple of the transfer size)\n"
            "  -F          file per process (default: one shared file)\n"
            "  -c          collective calls (MPI_File_write_at_all / read_at_all)\n"
            "  -w / -r     only write / only read (default: write, then read and verify)\n"
            "  -e          MPI_File_sync before closing the written file (in the write time)\n"
            "  -C          drop the page cache before the read phase (root only)\n"
            "  -k          keep the files (default: delete them at the end)\n"
            "  -R          read the next rank's data (rank r reads rank r+1's; IOR's -C)\n"
            "  -H KEY=VAL  MPI_Info hint for the open (repeatable)\n"
            "  -l LABEL    first column of the CSV lines\n"
            "  -x          print the CSV header first\n"
            "CSV: label,api,layout,access,ranks,xfer_bytes,bytes_per_rank,op,seconds,MiB_s,\n"
            "     open_s,xfer_s,sync_s,close_s,verified\n");
}

static int parse_args(int argc, char **argv, bench_args_t *args)
{
    int opt;

    memset(args, 0, sizeof(*args));
    args->label = "run";
    while ((opt = getopt(argc, argv, "o:t:s:FcwreCkRH:l:xh")) != -1) {
        switch (opt) {
        case 'o':
            args->path = optarg;
            break;
        case 't':
            if (sfs_parse_size(optarg, &args->xfer) || args->xfer == 0 || args->xfer > INT_MAX) {
                fprintf(stderr, "sfs_bench_io: bad transfer size '%s'\n", optarg);
                return -1;
            }
            break;
        case 's':
            if (sfs_parse_size(optarg, &args->per_rank)) {
                fprintf(stderr, "sfs_bench_io: bad size '%s'\n", optarg);
                return -1;
            }
            break;
        case 'F':
            args->fpp = 1;
            break;
        case 'c':
            args->collective = 1;
            break;
        case 'w':
            args->do_write = 1;
            break;
        case 'r':
            args->do_read = 1;
            break;
        case 'e':
            args->fsync = 1;
            break;
        case 'C':
            args->cold = 1;
            break;
        case 'k':
            args->keep = 1;
            break;
        case 'R':
            args->shift = 1;
            break;
        case 'H':
            if (args->hint_count == BENCH_MAX_HINTS || !strchr(optarg, '=')) {
                fprintf(stderr, "sfs_bench_io: bad or too many hints at '%s'\n", optarg);
                return -1;
            }
            args->hints[args->hint_count++] = optarg;
            break;
        case 'l':
            args->label = optarg;
            break;
        case 'x':
            args->header = 1;
            break;
        case 'h':
            return 1;
        default:
            return -1;
        }
    }
    if (!args->path || !args->xfer || !args->per_rank || optind != argc) {
        return -1;
    }
    if (args->per_rank % args->xfer) {
        fprintf(stderr, "sfs_bench_io: -s must be a multiple of -t\n");
        return -1;
    }
    if (!args->do_write && !args->do_read) {
        args->do_write = args->do_read = 1;
    }
    return 0;
}

static void check(int rc, const char *what, const char *path)
{
    char text[MPI_MAX_ERROR_STRING];
    int  len;

    if (rc == MPI_SUCCESS) {
        return;
    }
    MPI_Error_string(rc, text, &len);
    fprintf(stderr, "sfs_bench_io: rank %d: %s %s failed: %s\n", rank, what, path, text);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The data of one rank: every 8-byte word tells its file offset and file. */
static void fill(uint64_t *buf, const bench_args_t *args, uint64_t segments)
{
    uint64_t words = args->xfer / 8;
    uint64_t tag   = args->fpp ? (uint64_t)owner + 1 : 0;

    for (uint64_t s = 0; s < segments; s++) {
        uint64_t base = args->fpp ? s * args->xfer : (s * (uint64_t)nprocs + owner) * args->xfer;

        for (uint64_t w = 0; w < words; w++) {
            buf[s * words + w] = ((base + w * 8) * 0x9E3779B97F4A7C15ull) ^ (tag << 56);
        }
    }
}

static uint64_t offset_of(const bench_args_t *args, uint64_t segment)
{
    return args->fpp ? segment * args->xfer
                     : (segment * (uint64_t)nprocs + (uint64_t)owner) * args->xfer;
}

static void drop_caches(void)
{
    int fd;

    sync();
    fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
    if (fd < 0 || write(fd, "3\n", 2) != 2) {
        fprintf(stderr, "sfs_bench_io: cannot drop the page cache: %s\n", strerror(errno));
    }
    if (fd >= 0) {
        close(fd);
    }
}

static double max_over_ranks(double value)
{
    double result;

    MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return result;
}

/* Returns the bytes this rank's calls moved (MPI_Get_count). */
static uint64_t phase(const bench_args_t *args, const char *path, MPI_Info info, char *buf,
                      uint64_t segments, int write, bench_times_t *times)
{
    MPI_Comm   comm = args->fpp ? MPI_COMM_SELF : MPI_COMM_WORLD;
    MPI_File   fh;
    MPI_Status status;
    int        amode = write ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
    int        count = (int)args->xfer, got;
    double     t0, t1, t2, t3, t4;
    uint64_t   moved = 0;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    check(MPI_File_open(comm, path, amode, info, &fh), "open", path);
    t1 = MPI_Wtime();
    for (uint64_t s = 0; s < segments; s++) {
        MPI_Offset off = (MPI_Offset)offset_of(args, s);
        char      *p   = buf + s * args->xfer;
        int        rc;

        if (write) {
            rc = args->collective ? MPI_File_write_at_all(fh, off, p, count, MPI_BYTE, &status)
                                  : MPI_File_write_at(fh, off, p, count, MPI_BYTE, &status);
        } else {
            rc = args->collective ? MPI_File_read_at_all(fh, off, p, count, MPI_BYTE, &status)
                                  : MPI_File_read_at(fh, off, p, count, MPI_BYTE, &status);
        }
        check(rc, write ? "write" : "read", path);
        if (MPI_Get_count(&status, MPI_BYTE, &got) == MPI_SUCCESS && got > 0) {
            moved += (uint64_t)got;
        }
    }
    t2 = MPI_Wtime();
    if (write && args->fsync) {
        check(MPI_File_sync(fh), "sync", path);
    }
    t3 = MPI_Wtime();
    check(MPI_File_close(&fh), "close", path);
    t4           = MPI_Wtime();
    times->open  = max_over_ranks(t1 - t0);
    times->xfer  = max_over_ranks(t2 - t1);
    times->sync  = max_over_ranks(t3 - t2);
    times->close = max_over_ranks(t4 - t3);
    times->total = max_over_ranks(t4 - t0);
    return moved;
}

/* 1 on every rank when some rank's calls moved fewer or more bytes than -s. */
static int any_short(const bench_args_t *args, uint64_t moved, const char *path, const char *op)
{
    int bad = moved != args->per_rank, all = 0;

    if (bad) {
        fprintf(stderr, "sfs_bench_io: rank %d: %s %s moved %" PRIu64 " bytes, not %" PRIu64 "\n",
                rank, op, path, moved, args->per_rank);
    }
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

static void make_path(char *path, size_t size, const bench_args_t *args)
{
    if (args->fpp) {
        snprintf(path, size, "%s.%05d", args->path, owner);
    } else {
        snprintf(path, size, "%s", args->path);
    }
}

static void report(const bench_args_t *args, const char *api, const char *op,
                   const bench_times_t *t, const char *verified)
{
    double total = (double)args->per_rank * nprocs;

    if (rank != 0) {
        return;
    }
    printf("csv,%s,%s,%s,%s,%d,%" PRIu64 ",%" PRIu64 ",%s,%.4f,%.1f,%.4f,%.4f,%.4f,%.4f,%s\n",
           args->label, api, args->fpp ? "fpp" : "shared", args->collective ? "coll" : "indep",
           nprocs, args->xfer, args->per_rank, op, t->total, total / t->total / (1 << 20), t->open,
           t->xfer, t->sync, t->close, verified);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    bench_args_t  args;
    bench_times_t times;
    MPI_Info      info = MPI_INFO_NULL;
    char          path[PATH_MAX + 16];
    char         *wbuf, *rbuf;
    const char   *api;
    uint64_t      segments;
    int           rc, bad = 0, all_bad = 0, short_io = 0;
    uint64_t      moved;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    rc = parse_args(argc, argv, &args);
    if (rc) {
        if (rank == 0) {
            usage(rc > 0 ? stdout : stderr);
        }
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }
    api      = strncmp(args.path, "stripefs:", 9) == 0 ? "stripefs" : "local";
    segments = args.per_rank / args.xfer;
    owner    = rank;
    make_path(path, sizeof(path), &args);
    if (args.hint_count) {
        MPI_Info_create(&info);
        for (int i = 0; i < args.hint_count; i++) {
            char *eq = strchr(args.hints[i], '=');

            *eq = '\0';
            MPI_Info_set(info, args.hints[i], eq + 1);
            *eq = '=';
        }
    }

    /* both buffers are touched before any timing */
    wbuf = aligned_alloc(4096, (args.per_rank + 4095) / 4096 * 4096);
    rbuf = aligned_alloc(4096, (args.per_rank + 4095) / 4096 * 4096);
    if (!wbuf || !rbuf) {
        fprintf(stderr, "sfs_bench_io: rank %d: cannot allocate 2 x %" PRIu64 " bytes\n", rank,
                args.per_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fill((uint64_t *)wbuf, &args, segments);
    memset(rbuf, 0, args.per_rank);
    if (rank == 0 && args.header) {
        printf("csv,label,api,layout,access,ranks,xfer_bytes,bytes_per_rank,op,seconds,MiB_s,"
               "open_s,xfer_s,sync_s,close_s,verified\n");
    }

    if (args.do_write) {
        moved    = phase(&args, path, info, wbuf, segments, 1, &times);
        short_io = any_short(&args, moved, path, "write");
        report(&args, api, "write", &times, short_io ? "SHORT" : "-");
    }
    if (args.do_read) {
        if (args.shift) { /* the data and the file of the next rank */
            owner = (rank + 1) % nprocs;
            make_path(path, sizeof(path), &args);
            fill((uint64_t *)wbuf, &args, segments);
        }
        if (args.cold) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                drop_caches();
            }
        }
        moved = phase(&args, path, info, rbuf, segments, 0, &times);
        if (any_short(&args, moved, path, "read")) {
            short_io = 1;
        }
        bad = memcmp(rbuf, wbuf, args.per_rank) != 0;
        MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (bad) {
            fprintf(stderr,
                    "sfs_bench_io: rank %d: the data read back differs from the data "
                    "written (%s)\n",
                    rank, path);
        }
        report(&args, api, "read", &times, all_bad ? "MISMATCH" : (short_io ? "SHORT" : "ok"));
    }

    if (!args.keep) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (args.fpp || rank == 0) {
            check(MPI_File_delete(path, info), "delete", path);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (info != MPI_INFO_NULL) {
        MPI_Info_free(&info);
    }
    free(wbuf);
    free(rbuf);
    MPI_Finalize();
    return all_bad || short_io ? 1 : 0;
}
