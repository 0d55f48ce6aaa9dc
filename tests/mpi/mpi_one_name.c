/*
 * One name for a file in MPI-IO and in POSIX calls (issue 16 item 1). Run
 * under stripefs-run, which loads the MPI-IO library and the POSIX preload:
 *
 *   mpi_one_name write NAME BYTES [STRIPING_FACTOR]
 *       collective create and write of BYTES (every rank its share, a
 *       pattern of the offset); prints the hints "striping_factor" and
 *       "romio_filesystem_type" as MPI_File_get_info reads them back
 *   mpi_one_name read NAME BYTES
 *       collective read of the file, checked against the pattern; prints
 *       MPI_File_get_size
 *   mpi_one_name posix PATH BYTES
 *       (rank 0) access F_OK/R_OK, stat size, open+read checked against the
 *       pattern, truncate to BYTES/2, stat size again
 *   mpi_one_name posix-write PATH BYTES
 *       (rank 0) creat + write of the pattern with POSIX calls
 *   mpi_one_name missing NAME
 *       errno of access/open/stat (rank 0) on the name without an "xxx:"
 *       prefix, and MPI_File_open's error class on NAME itself
 *   mpi_one_name pnetcdf NAME clobber|noclobber BYTES
 *       what PnetCDF's ncmpi_create does: rank 0 strips "xxx:", access(F_OK)
 *       decides NOCLOBBER, and for CLOBBER an existing file is truncated to
 *       0 by name; then the collective MPI-IO create and write of BYTES, and
 *       rank 0 stats the size by the stripped name
 *   mpi_one_name delete NAME
 *       MPI_File_delete (rank 0)
 *
 * Prints "RESULT ..." lines the test script compares; exits 1 on a failed
 * check, 0 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int rank, nprocs;

static unsigned char pattern(long long offset)
{
    return (unsigned char)(offset * 7 + 3);
}

static void mpi_check(int rc, const char *what, const char *name)
{
    char text[MPI_MAX_ERROR_STRING];
    int  len;

    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, text, &len);
        printf("rank %d FAILED: %s %s: %s\n", rank, what, name, text);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* PnetCDF's and HDF5's rule: a "xxx:" prefix (more than one character) is
 * cut before POSIX calls */
static const char *strip(const char *name)
{
    const char *colon = strchr(name, ':');

    return colon && colon > name + 1 ? colon + 1 : name;
}

static const char *errname(int e)
{
    switch (e) {
    case 0:
        return "OK";
    case ENOENT:
        return "ENOENT";
    case ENOTDIR:
        return "ENOTDIR";
    case EACCES:
        return "EACCES";
    case EEXIST:
        return "EEXIST";
    default:
        return strerror(e);
    }
}

static void write_file(const char *name, long long bytes, const char *factor)
{
    MPI_File   fh;
    MPI_Info   info, got;
    MPI_Status status;
    long long  share = (bytes + nprocs - 1) / nprocs, start = share * rank, n, i;
    char       value[MPI_MAX_INFO_VAL + 1];
    int        flag;

    unsigned char *buf;

    MPI_Info_create(&info);
    if (factor) {
        MPI_Info_set(info, "striping_factor", factor);
    }
    mpi_check(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh),
              "MPI_File_open(create)", name);
    n   = start >= bytes ? 0 : (start + share > bytes ? bytes - start : share);
    buf = malloc((size_t)(n ? n : 1));
    for (i = 0; i < n; i++) {
        buf[i] = pattern(start + i);
    }
    mpi_check(MPI_File_write_at_all(fh, start, buf, (int)n, MPI_BYTE, &status),
              "MPI_File_write_at_all", name);
    free(buf);
    mpi_check(MPI_File_get_info(fh, &got), "MPI_File_get_info", name);
    if (rank == 0) {
        MPI_Info_get(got, "striping_factor", MPI_MAX_INFO_VAL, value, &flag);
        printf("RESULT striping_factor %s\n", flag ? value : "(none)");
        MPI_Info_get(got, "romio_filesystem_type", MPI_MAX_INFO_VAL, value, &flag);
        printf("RESULT fstype %s\n", flag ? value : "(none)");
    }
    MPI_Info_free(&got);
    MPI_Info_free(&info);
    mpi_check(MPI_File_close(&fh), "MPI_File_close", name);
}

static int read_file(const char *name, long long bytes)
{
    MPI_File       fh;
    MPI_Status     status;
    MPI_Offset     size;
    unsigned char *buf = malloc((size_t)(bytes ? bytes : 1));
    long long      i;
    int            bad = 0, count;

    mpi_check(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
              "MPI_File_open(read)", name);
    mpi_check(MPI_File_get_size(fh, &size), "MPI_File_get_size", name);
    mpi_check(MPI_File_read_at_all(fh, 0, buf, (int)bytes, MPI_BYTE, &status),
              "MPI_File_read_at_all", name);
    MPI_Get_count(&status, MPI_BYTE, &count);
    for (i = 0; i < count; i++) {
        bad += buf[i] != pattern(i);
    }
    if (rank == 0) {
        printf("RESULT mpi size %lld read %d bad %d\n", (long long)size, count, bad);
    }
    free(buf);
    mpi_check(MPI_File_close(&fh), "MPI_File_close", name);
    return bad || count != bytes;
}

static int posix_check(const char *path, long long bytes)
{
    unsigned char *buf = malloc((size_t)(bytes ? bytes : 1));
    struct stat    st;
    long long      got = 0, i;
    int            fd, bad = 0;
    ssize_t        n;

    printf("RESULT access F_OK %s\n", errname(access(path, F_OK) ? errno : 0));
    printf("RESULT access R_OK %s\n", errname(access(path, R_OK) ? errno : 0));
    printf("RESULT stat size %lld\n", stat(path, &st) ? -(long long)errno : (long long)st.st_size);
    fd = open(path, O_RDONLY);
    if (fd < 0) {
        printf("FAILED: open %s: %s\n", path, strerror(errno));
        free(buf);
        return 1;
    }
    while (got < bytes && (n = read(fd, buf + got, (size_t)(bytes - got))) > 0) {
        got += n;
    }
    close(fd);
    for (i = 0; i < got; i++) {
        bad += buf[i] != pattern(i);
    }
    free(buf);
    printf("RESULT posix read %lld bad %d\n", got, bad);
    if (truncate(path, bytes / 2) != 0) {
        printf("FAILED: truncate %s: %s\n", path, strerror(errno));
        return 1;
    }
    printf("RESULT truncated size %lld\n",
           stat(path, &st) ? -(long long)errno : (long long)st.st_size);
    return bad || got != bytes;
}

static int posix_write(const char *path, long long bytes)
{
    unsigned char *buf = malloc((size_t)(bytes ? bytes : 1));
    long long      i;
    int            fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644), rc = 0;

    for (i = 0; i < bytes; i++) {
        buf[i] = pattern(i);
    }
    if (fd < 0 || write(fd, buf, (size_t)bytes) != (ssize_t)bytes || close(fd) != 0) {
        printf("FAILED: POSIX write of %s: %s\n", path, strerror(errno));
        rc = 1;
    }
    free(buf);
    return rc;
}

static void missing(const char *name)
{
    const char *path = strip(name);
    struct stat st;
    MPI_File    fh;
    int         fd, rc, class;

    if (rank == 0) {
        printf("RESULT access %s\n", errname(access(path, F_OK) ? errno : 0));
        fd = open(path, O_RDONLY);
        printf("RESULT open %s\n", errname(fd < 0 ? errno : 0));
        if (fd >= 0) {
            close(fd);
        }
        printf("RESULT stat %s\n", errname(stat(path, &st) ? errno : 0));
    }
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (rc == MPI_SUCCESS) {
        MPI_File_close(&fh);
    }
    MPI_Error_class(rc, &class);
    if (rank == 0) {
        printf("RESULT mpi open %s\n", class == MPI_SUCCESS            ? "OK"
                                       : class == MPI_ERR_NO_SUCH_FILE ? "MPI_ERR_NO_SUCH_FILE"
                                       : class == MPI_ERR_ACCESS       ? "MPI_ERR_ACCESS"
                                                                       : "another class");
    }
}

static int pnetcdf_create(const char *name, int clobber, long long bytes)
{
    const char *path = strip(name);
    struct stat st;
    int         exists = 0, rc = 0;

    if (rank == 0) {
        exists = access(path, F_OK) == 0;
        printf("RESULT exists %d\n", exists);
        if (exists && clobber && truncate(path, 0) != 0) {
            printf("FAILED: truncate %s: %s\n", path, strerror(errno));
            rc = 1;
        }
    }
    MPI_Bcast(&exists, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc) {
        return rc;
    }
    if (exists && !clobber) {
        if (rank == 0) {
            printf("RESULT noclobber refused\n");
        }
        return 0;
    }
    write_file(name, bytes, NULL);
    if (rank == 0) {
        printf("RESULT size %lld\n", stat(path, &st) ? -(long long)errno : (long long)st.st_size);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *op   = argc > 1 ? argv[1] : "";
    const char *name = argc > 2 ? argv[2] : "";
    long long   n    = argc > 3 ? atoll(argv[argc - 1]) : 0;
    int         rc   = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (strcmp(op, "write") == 0 && argc >= 4) {
        write_file(name, atoll(argv[3]), argc > 4 ? argv[4] : NULL);
    } else if (strcmp(op, "read") == 0 && argc == 4) {
        rc = read_file(name, n);
    } else if (strcmp(op, "posix") == 0 && argc == 4) {
        rc = rank == 0 ? posix_check(name, n) : 0;
    } else if (strcmp(op, "posix-write") == 0 && argc == 4) {
        rc = rank == 0 ? posix_write(name, n) : 0;
    } else if (strcmp(op, "missing") == 0 && argc == 3) {
        missing(name);
    } else if (strcmp(op, "pnetcdf") == 0 && argc == 5) {
        rc = pnetcdf_create(name, strcmp(argv[3], "clobber") == 0, n);
    } else if (strcmp(op, "delete") == 0 && argc == 3) {
        if (rank == 0) {
            mpi_check(MPI_File_delete(name, MPI_INFO_NULL), "MPI_File_delete", name);
        }
    } else {
        if (rank == 0) {
            fprintf(stderr, "usage: see the comment at the top of mpi_one_name.c\n");
        }
        rc = 2;
    }
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
