/*
 * Internals of libstripefs-posix.so, the LD_PRELOAD library that serves
 * POSIX calls on stripefs paths ("stripefs:/a/b", or "$STRIPEFS_PREFIX/a/b",
 * default "/stripefs/a/b") through the client library and hands everything
 * else to the next definition (libc) untouched.
 *
 * Every stripefs descriptor is a real descriptor too: an O_PATH descriptor of
 * /dev/null, always close-on-exec, so its number never collides with the
 * program's other descriptors, and a call that slips past us (or survives an
 * exec) fails with EBADF instead of touching something real.
 *
 * The client library (libstripefs.so, and UCX with it) is loaded with dlopen
 * on the first stripefs path, not linked: a process that never touches
 * stripefs (mpirun, a shell, ls of /tmp) pays nothing and keeps its own
 * signal handlers, which UCX would otherwise replace when it loads.
 */
#ifndef SFS_PRELOAD_H
#define SFS_PRELOAD_H

/* The wrappers define open, stat, ... themselves: fortified inline versions
 * and 32-bit offset redirections would collide with them. */
#undef _FORTIFY_SOURCE
#undef _FILE_OFFSET_BITS

#include "sfs/sfs_client.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/types.h>

/* The client library's functions, resolved from libstripefs.so. */
/* clang-format off */
#define SFS_PL_API(_x)                                                                             \
    _x(client_connect) _x(client_disconnect) _x(client_error)                                      \
    _x(stat) _x(lookup) _x(access) _x(mkdir) _x(rmdir) _x(unlink) _x(rename) _x(chmod) _x(chown)              \
    _x(utimens) _x(readdir) _x(readdir_attrs) _x(statfs)                                           \
    _x(file_open) _x(file_close) _x(file_pwrite) _x(file_pread) _x(file_writev) _x(file_readv)     \
    _x(file_size) _x(file_truncate) _x(file_sync) _x(file_stat)                                    \
    _x(file_local2global) _x(file_global2local) _x(file_layout)
/* clang-format on */

#define SFS_PL_API_FIELD(_name) __typeof__(sfs_##_name) *_name;
typedef struct sfs_pl_api {
    SFS_PL_API(SFS_PL_API_FIELD)
} sfs_pl_api_t;
#undef SFS_PL_API_FIELD

/* Filled before the first client call (by sfs_pl_enter); read-only after. */
extern sfs_pl_api_t sfs_pl_api;

/* The wrappers call the client library by its usual names. */
#define sfs_client_connect(...)    sfs_pl_api.client_connect(__VA_ARGS__)
#define sfs_client_disconnect(...) sfs_pl_api.client_disconnect(__VA_ARGS__)
#define sfs_client_error(...)      sfs_pl_api.client_error(__VA_ARGS__)
#define sfs_stat(...)              sfs_pl_api.stat(__VA_ARGS__)
#define sfs_lookup(...)            sfs_pl_api.lookup(__VA_ARGS__)
#define sfs_access(...)            sfs_pl_api.access(__VA_ARGS__)
#define sfs_mkdir(...)             sfs_pl_api.mkdir(__VA_ARGS__)
#define sfs_rmdir(...)             sfs_pl_api.rmdir(__VA_ARGS__)
#define sfs_unlink(...)            sfs_pl_api.unlink(__VA_ARGS__)
#define sfs_rename(...)            sfs_pl_api.rename(__VA_ARGS__)
#define sfs_chmod(...)             sfs_pl_api.chmod(__VA_ARGS__)
#define sfs_chown(...)             sfs_pl_api.chown(__VA_ARGS__)
#define sfs_utimens(...)           sfs_pl_api.utimens(__VA_ARGS__)
#define sfs_readdir(...)           sfs_pl_api.readdir(__VA_ARGS__)
#define sfs_readdir_attrs(...)     sfs_pl_api.readdir_attrs(__VA_ARGS__)
#define sfs_statfs(...)            sfs_pl_api.statfs(__VA_ARGS__)
#define sfs_file_open(...)         sfs_pl_api.file_open(__VA_ARGS__)
#define sfs_file_close(...)        sfs_pl_api.file_close(__VA_ARGS__)
#define sfs_file_pwrite(...)       sfs_pl_api.file_pwrite(__VA_ARGS__)
#define sfs_file_pread(...)        sfs_pl_api.file_pread(__VA_ARGS__)
#define sfs_file_writev(...)       sfs_pl_api.file_writev(__VA_ARGS__)
#define sfs_file_readv(...)        sfs_pl_api.file_readv(__VA_ARGS__)
#define sfs_file_size(...)         sfs_pl_api.file_size(__VA_ARGS__)
#define sfs_file_truncate(...)     sfs_pl_api.file_truncate(__VA_ARGS__)
#define sfs_file_sync(...)         sfs_pl_api.file_sync(__VA_ARGS__)
#define sfs_file_stat(...)         sfs_pl_api.file_stat(__VA_ARGS__)
#define sfs_file_local2global(...) sfs_pl_api.file_local2global(__VA_ARGS__)
#define sfs_file_global2local(...) sfs_pl_api.file_global2local(__VA_ARGS__)
#define sfs_file_layout(...)       sfs_pl_api.file_layout(__VA_ARGS__)

#define SFS_PL_PATH_MAX 4096 /* a stripefs path, including the NUL */

/* What statfs reports as f_type, and the device number of every entry. */
#define SFS_PL_FS_MAGIC  0x53465321u /* "SFS!" */
#define SFS_PL_DEV_MAJOR 0x5346u
#define SFS_PL_DEV_MINOR 0x0001u

/* Exported names: the interposed libc functions only. */
#define SFS_PL_EXPORT __attribute__((visibility("default")))

/* The next definition of a libc function (resolved on first use: other
 * libraries' constructors call open() before ours could run). */
void *sfs_pl_dlsym(const char *name);
#define SFS_REAL_DECL(_name) static __typeof__(_name) *sfs_real_##_name
#define SFS_REAL(_name)                                                                            \
    (__extension__({                                                                               \
        __typeof__(_name) *_fn = __atomic_load_n(&sfs_real_##_name, __ATOMIC_RELAXED);             \
        if (!_fn) {                                                                                \
            _fn = (__typeof__(_name) *)sfs_pl_dlsym(#_name);                                       \
            __atomic_store_n(&sfs_real_##_name, _fn, __ATOMIC_RELAXED);                            \
        }                                                                                          \
        _fn;                                                                                       \
    }))

/* The status flags an open file description keeps and F_GETFL reports.
 * O_SYNC and O_DSYNC make every write durable before it returns (the client
 * library's SFS_O_SYNC/SFS_O_DSYNC; without them in the client, a sync after
 * each write). O_DIRECT is kept and reported only: there is no client cache
 * to bypass, and it asks for no alignment (docs/posix-preload.md). */
#define SFS_PL_STATUS_FLAGS (O_APPEND | O_NONBLOCK | O_SYNC | O_DSYNC | O_DIRECT)
/* What F_SETFL may change (as in Linux: O_SYNC and O_DSYNC stay as opened). */
#define SFS_PL_SETFL_FLAGS (O_APPEND | O_NONBLOCK | O_DIRECT)

/* An open file description: shared by descriptors made with dup. */
typedef struct sfs_pl_ofd {
    int         refs;
    int         is_dir;
    int         flags; /* O_ACCMODE and SFS_PL_STATUS_FLAGS, as F_GETFL reports */
    uint64_t    offset;
    uint64_t    generation;            /* of the client `file` belongs to */
    sfs_file_t *file;                  /* regular files only */
    uint64_t    entry_id;              /* directories: from the open's lookup (0: unknown) */
    char        path[SFS_PL_PATH_MAX]; /* stripefs path at open time */
} sfs_pl_ofd_t;

/* One descriptor number of ours. */
typedef struct sfs_pl_fd {
    sfs_pl_ofd_t *ofd;
    int           cloexec; /* what F_GETFD reports; the real one is always set */
} sfs_pl_fd_t;

/* Set while this thread is inside the library: the client library's own
 * open/read/... then go straight to libc. */
extern __thread int sfs_pl_busy __attribute__((tls_model("initial-exec")));

/* --- paths (sfs_preload.c) ---------------------------------------------- */

/* "" (for AT_EMPTY_PATH); a function so that libc's nonnull declarations
 * do not turn the NULL test into a warning. */
static inline int sfs_pl_is_empty(const char *path)
{
    return path && !path[0];
}

static inline int sfs_pl_is_null(const void *pointer)
{
    return pointer == NULL;
}

/* 1 if `path` names stripefs (out gets the canonical stripefs path),
 * 0 if not, or -errno for a stripefs path that cannot be one. */
int sfs_pl_path(const char *path, char *out);
/* The same for (dirfd, path) of the *at calls. */
int sfs_pl_path_at(int dirfd, const char *path, char *out);
/* The user-visible form of a stripefs path (prefix or "stripefs:"). */
int sfs_pl_path_user(const char *sfs_path, char *out, size_t out_size);
/* Set or clear the virtual working directory (NULL: none). */
void sfs_pl_cwd_set(const char *sfs_path);
/* 1 and the directory in `out` if the working directory is in stripefs. */
int sfs_pl_cwd_get(char *out);

/* --- the connection and the lock (sfs_preload.c) ------------------------ */

/* Take the lock and make sure there is a client; on failure the lock is
 * not held and -errno comes back. */
int sfs_pl_enter(sfs_client_t **client_p);
/* The same for a call that changes nothing (a stat): it does not move
 * sfs_pl_call_count. */
int sfs_pl_enter_to_read(sfs_client_t **client_p);
/* Take only the lock (no connection needed). */
void sfs_pl_lock(void);
void sfs_pl_unlock(void);
/* The client handle of an open file, moved to this process's client after
 * a fork (lock held). */
int sfs_pl_ofd_file(sfs_pl_ofd_t *ofd, sfs_client_t *client, sfs_file_t **file_p);
/* The generation of the current client (lock held). */
uint64_t sfs_pl_generation(void);
/* How many times this process has called the client library or dropped a
 * descriptor: attributes read before the count last moved may still be
 * taken as they were (nothing this process did changed them). */
uint64_t sfs_pl_call_count(void);
/* Whether listings bring their entries' attributes (STRIPEFS_PRELOAD_LIST_ATTRS). */
int sfs_pl_list_attrs(void);
/* Set errno from a negative code, report the unexpected ones, return -1. */
int sfs_pl_fail(int rc, const char *call, const char *what);
/* The process umask, read now. */
mode_t sfs_pl_umask(void);

/* --- attributes of recent listings (sfs_preload_listed.c) -------------- */

#define SFS_PL_LISTED_PAGE 256 /* entries per listing call */

/* Keep a page just fetched with attributes (entries in strcmp order, after
 * `after`; eof: it ends the directory), asked for at asked_ms with
 * sfs_pl_call_count() `calls`. Takes entries and stats (malloc'd). Returns
 * its ticket (0: nothing kept). */
uint64_t sfs_pl_listed_keep(const char *dir_path, const char *after, int eof,
                            sfs_dir_entry_t *entries, sfs_stat_t *stats, uint32_t count,
                            uint64_t asked_ms, uint64_t calls);
/* Remember the range of names of a page fetched plain: its ticket. */
uint64_t sfs_pl_listed_plain(const char *dir_path, const char *after, int eof,
                             const sfs_dir_entry_t *entries, uint32_t count);
/* Whether the page of ticket served stats: a kept page answered one, or a
 * stat fetched a plain page's attributes. 0 once forgotten. */
int sfs_pl_listed_used_by_stats(uint64_t ticket);
/* A directory whose listing with attributes was refused: not asked again;
 * whether dir_path is it. */
void sfs_pl_listed_refuse(const char *dir_path);
int  sfs_pl_listed_refused(const char *dir_path);
/* A stat of sfs_path from a kept page, still what a round trip would
 * answer (sfs_preload_listed.c says when): 1 and *s, or 0. */
int sfs_pl_listed_stat(const char *sfs_path, int need_size, sfs_stat_t *s);
/* Where sfs_path's name is in a page lately fetched plain, fetch that
 * page's attributes (one round trip for up to 256 entries, once per page)
 * and answer from them: 1 and *s, or 0 (the caller asks on its own). */
int sfs_pl_listed_ahead(const char *sfs_path, int need_size, sfs_stat_t *s);

/* --- descriptors (sfs_preload.c) ---------------------------------------- */

/* 1 if fd is a stripefs descriptor (no lock: a quick filter). */
int sfs_pl_fd_is_ours(int fd);
/* The entry of fd (lock held), or NULL. */
sfs_pl_fd_t *sfs_pl_fd_get(int fd);
/* Reserve a descriptor number and record it (lock held); takes a reference
 * on ofd on success. */
int sfs_pl_fd_install(sfs_pl_ofd_t *ofd, int cloexec, int *fd_p);
/* Record `fd` (already a real descriptor of ours) as a copy of ofd. */
int sfs_pl_fd_install_at(int fd, sfs_pl_ofd_t *ofd, int cloexec);
/* Forget fd (lock held); with close_real also close the real descriptor. */
int sfs_pl_fd_drop(int fd, int close_real);
/* Drop a reference; the last one closes the stripefs file (lock held). */
void sfs_pl_ofd_put(sfs_pl_ofd_t *ofd);
/* The highest descriptor number that may be ours, or -1 if none is. */
int sfs_pl_fd_max(void);

/* --- shared helpers ----------------------------------------------------- */

/* Open a stripefs path as open(2) would; returns the descriptor or -errno. */
int sfs_pl_open_path(const char *sfs_path, int flags, mode_t mode);
/* I/O on a stripefs descriptor, with the results of the libc calls
 * (-1 and errno on failure). */
ssize_t sfs_pl_read_fd(int fd, void *buf, size_t count);
ssize_t sfs_pl_write_fd(int fd, const void *buf, size_t count);
off_t   sfs_pl_lseek_fd(int fd, off_t offset, int whence);
int     sfs_pl_close_fd(int fd);
/* Stat a stripefs path or descriptor; without need_size one metadata
 * lookup is enough (size reads 0). Returns 0 or -errno. */
int  sfs_pl_stat_path(const char *sfs_path, int need_size, sfs_stat_t *s);
int  sfs_pl_stat_fd(int fd, int need_size, sfs_stat_t *s);
void sfs_pl_stat_fill(const sfs_stat_t *s, struct stat *st);
/* FILE* over a stripefs descriptor (fopencookie); NULL and errno on failure. */
FILE *sfs_pl_fd_stream(int fd, const char *mode);

#endif
