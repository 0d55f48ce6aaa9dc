/*
 * Shared by the files of sfs_posix_check (see sfs_posix_check.c): the CHECK
 * macros that print "ok:" or "FAILED:" per check, the directories under
 * test, and small file helpers.
 */
#ifndef SFS_POSIX_CHECK_H
#define SFS_POSIX_CHECK_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#define SFS_MAGIC 0x53465321 /* what statfs says f_type is */

extern int failures; /* checks that failed so far */

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (cond) {                                                                                \
            printf("ok: ");                                                                        \
        } else {                                                                                   \
            printf("FAILED (line %d): ", __LINE__);                                                \
            failures++;                                                                            \
        }                                                                                          \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
    } while (0)

/* `call` must fail with -1 (or MAP_FAILED/NULL, via `failed`) and errno `expected`. */
#define CHECK_ERRNO(call, expected)                                                                \
    do {                                                                                           \
        long _result;                                                                              \
        int  _errno;                                                                               \
        errno   = 0;                                                                               \
        _result = (long)(call);                                                                    \
        _errno  = errno;                                                                           \
        CHECK(_result == -1 && _errno == (expected), "%s fails with %s (got %ld, %s)", #call,      \
              #expected, _result, strerrorname_np(_errno) ? strerrorname_np(_errno) : "0");        \
    } while (0)

/* shorter than PATH_MAX: names are made by appending to them */
extern char base[1024];  /* the stripefs directory under test */
extern char local[1024]; /* a local (ext4) scratch directory */

/* base/name, in a rotating set of buffers so several can be used at once. */
static inline const char *P(const char *name)
{
    static char buffers[8][PATH_MAX];
    static int  next;
    char       *out = buffers[next++ % 8];

    snprintf(out, PATH_MAX, "%s/%s", base, name);
    return out;
}

static inline const char *L(const char *name)
{
    static char buffers[4][PATH_MAX];
    static int  next;
    char       *out = buffers[next++ % 4];

    snprintf(out, PATH_MAX, "%s/%s", local, name);
    return out;
}

static inline void fill(unsigned char *buf, size_t length, unsigned seed)
{
    for (size_t i = 0; i < length; i++) {
        buf[i] = (unsigned char)((seed + i) * 2654435761u >> 13);
    }
}

static inline off_t size_of(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 ? st.st_size : -1;
}

/* Write a whole file with open/write/close; 0 on success. */
static inline int put_file(const char *path, const void *data, size_t length)
{
    int     fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ssize_t n;

    if (fd < 0) {
        return -1;
    }
    n = write(fd, data, length);
    return close(fd) == 0 && n == (ssize_t)length ? 0 : -1;
}

/* ------------------------------------------------------------------------ */

/* The check groups in other files. */
void check_create_modes(void); /* sfs_posix_check_modes.c */
void check_libc_entries(void); /* sfs_posix_check_libc.c */
void check_status_flags(void); /* sfs_posix_check_libc.c */

#endif /* SFS_POSIX_CHECK_H */
