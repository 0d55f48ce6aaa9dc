/*
 * The core of the preload library: resolving libc's own functions, telling
 * stripefs paths from others, the one lazy connection (remade after fork),
 * the lock, and the table of stripefs descriptors.
 */
#include "sfs_preload.h"
#include "sfs_name_prefix.h"
#include "sfs_preload_tunables.h"

#include "sfs_errno.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__thread int sfs_pl_busy __attribute__((tls_model("initial-exec")));

#define SFS_PL_FD_PAGE_SHIFT 10
#define SFS_PL_FD_PAGE_SIZE  (1 << SFS_PL_FD_PAGE_SHIFT)
#define SFS_PL_FD_PAGES      1024 /* descriptors up to 1M can be ours */
#define SFS_PL_RETRY_S       2    /* after a failed connect, fail fast for this long */
#define SFS_PL_REPORT_MAX    20   /* unexpected errors reported per process */
#define SFS_PL_NAME_MAX      255  /* a path component, as the service allows */
#define SFS_PL_CLIENT_SONAME "libstripefs.so.0"

sfs_pl_api_t sfs_pl_api;

static const char sfs_pl_scheme[] = "stripefs:";

static struct {
    pthread_mutex_t lock;
    sfs_client_t   *client;
    pid_t           pid;        /* the process `client` belongs to */
    uint64_t        generation; /* of `client`; bumps with every connect */
    time_t          retry_after;
    int             connect_reported;
    int             api_loaded;
    int             exiting; /* after the exit handler: connect no more */
    int             reports;
    int             debug;
    int             list_attrs; /* STRIPEFS_PRELOAD_LIST_ATTRS */
    /* descriptor table: pages of entry pointers, read without the lock */
    sfs_pl_fd_t **fd_pages[SFS_PL_FD_PAGES];
    int           fd_count;
    int           fd_highest;
    /* the working directory when the program chdir'ed into stripefs */
    pthread_mutex_t   cwd_lock;
    int               cwd_active;
    char              cwd[SFS_PL_PATH_MAX];
    sfs_name_prefix_t prefix; /* STRIPEFS_PREFIX */
} sfs_pl = {
    .lock       = PTHREAD_MUTEX_INITIALIZER,
    .cwd_lock   = PTHREAD_MUTEX_INITIALIZER,
    .fd_highest = -1,
};

static pthread_once_t sfs_pl_prefix_once = PTHREAD_ONCE_INIT;
static pthread_once_t sfs_pl_atfork_once = PTHREAD_ONCE_INIT;

SFS_REAL_DECL(open);
SFS_REAL_DECL(read);
SFS_REAL_DECL(close);

void *sfs_pl_dlsym(const char *name)
{
    void *fn = dlsym(RTLD_NEXT, name);

    if (!fn) {
        /* nothing sensible can continue: the program would call NULL; say
         * why without stdio, which may be what is being resolved */
        static const char msg[] = "stripefs-posix: a libc function is missing\n";

        (void)!syscall(SYS_write, 2, msg, sizeof(msg) - 1);
        (void)!syscall(SYS_write, 2, name, strlen(name));
        abort();
    }
    return fn;
}

uint64_t sfs_pl_generation(void)
{
    return sfs_pl.generation;
}

/* ------------------------------------------------------------------------ */
/* Paths                                                                     */

static void sfs_pl_prefix_init(void)
{
    bool debug = false, list_attrs = true;

    /* a bad value is reported, never silently taken for the default */
    if (sfs_tunable_bool(&sfs_preload_tunables, "STRIPEFS_PRELOAD_DEBUG", &debug) != 0) {
        fprintf(stderr, "stripefs-posix: %s; debug reports stay off\n", sfs_error_detail());
    }
    sfs_pl.debug = debug;
    if (sfs_tunable_bool(&sfs_preload_tunables, "STRIPEFS_PRELOAD_LIST_ATTRS", &list_attrs) != 0) {
        fprintf(stderr, "stripefs-posix: %s; listings bring their attributes\n",
                sfs_error_detail());
    }
    sfs_pl.list_attrs = list_attrs;
    /* the same rule as the MPI-IO driver's (sfs_name_prefix.h) */
    if (sfs_name_prefix_load(&sfs_pl.prefix) != 0) {
        fprintf(stderr, "stripefs-posix: %s\n", sfs_error_detail());
    }
}

/* Lexical normal form of a stripefs path, as the client library makes it
 * (here, so that telling paths apart does not need the library loaded):
 * absolute, single '/', no "." or "..", ".." of the root is the root. */
static int sfs_pl_canonical(const char *path, char *out)
{
    size_t length = 0;

    out[0] = '\0';
    while (*path) {
        const char *end;
        size_t      n;

        while (*path == '/') {
            path++;
        }
        end = strchrnul(path, '/');
        n   = (size_t)(end - path);
        if (n == 0 || (n == 1 && path[0] == '.')) {
            /* nothing to add */
        } else if (n == 2 && path[0] == '.' && path[1] == '.') {
            while (length > 0 && out[length - 1] != '/') {
                length--;
            }
            if (length > 0) {
                length--; /* the '/' before the dropped component */
            }
            out[length] = '\0';
        } else {
            if (n > SFS_PL_NAME_MAX || length + 1 + n >= SFS_PL_PATH_MAX) {
                return -ENAMETOOLONG;
            }
            out[length++] = '/';
            memcpy(out + length, path, n);
            length += n;
            out[length] = '\0';
        }
        path = end;
    }
    if (length == 0) {
        out[0] = '/';
        out[1] = '\0';
    }
    return 0;
}

/* Join dir (canonical stripefs path) and a relative name, then canonicalise. */
static int sfs_pl_path_join(const char *dir, const char *name, char *out)
{
    char joined[2 * SFS_PL_PATH_MAX + 2];
    int  rc;

    snprintf(joined, sizeof(joined), "%s/%s", dir, name);
    rc = sfs_pl_canonical(joined, out);
    return rc ? rc : 1;
}

int sfs_pl_path(const char *path, char *out)
{
    const char *rest;
    int         scheme = 0;
    int         rc;

    if (sfs_pl_busy || !path || !path[0]) {
        return 0;
    }
    pthread_once(&sfs_pl_prefix_once, sfs_pl_prefix_init);
    /* one rule for both APIs (sfs_name_prefix.h, as the MPI-IO driver):
     * an optional "stripefs:", then the prefix is cut, so
     * stripefs:/stripefs/x, /stripefs/x and stripefs:/x are all /x */
    if (strncmp(path, sfs_pl_scheme, sizeof(sfs_pl_scheme) - 1) == 0) {
        path += sizeof(sfs_pl_scheme) - 1;
        scheme = 1;
    }
    rest = sfs_name_prefix_strip(&sfs_pl.prefix, path);
    if (!rest && scheme) {
        rest = path[0] ? path : "/";
    } else if (!rest && path[0] != '/' && __atomic_load_n(&sfs_pl.cwd_active, __ATOMIC_ACQUIRE)) {
        char cwd[SFS_PL_PATH_MAX];

        if (!sfs_pl_cwd_get(cwd)) {
            return 0;
        }
        return sfs_pl_path_join(cwd, path, out);
    } else if (!rest) {
        return 0;
    }
    rc = sfs_pl_canonical(rest, out);
    return rc ? rc : 1;
}

int sfs_pl_path_at(int dirfd, const char *path, char *out)
{
    char dir[SFS_PL_PATH_MAX];
    int  is_dir;

    if (!path || sfs_pl_busy) {
        return 0;
    }
    if (path[0] == '/' || dirfd == AT_FDCWD ||
        strncmp(path, sfs_pl_scheme, sizeof(sfs_pl_scheme) - 1) == 0) {
        return sfs_pl_path(path, out);
    }
    if (!sfs_pl_fd_is_ours(dirfd)) {
        return 0;
    }
    sfs_pl_lock();
    {
        sfs_pl_fd_t *entry = sfs_pl_fd_get(dirfd);

        if (!entry) {
            sfs_pl_unlock();
            return 0;
        }
        is_dir = entry->ofd->is_dir;
        snprintf(dir, sizeof(dir), "%s", entry->ofd->path);
    }
    sfs_pl_unlock();
    if (!is_dir) {
        return -ENOTDIR;
    }
    if (!path[0]) {
        return -ENOENT;
    }
    return sfs_pl_path_join(dir, path, out);
}

int sfs_pl_path_user(const char *sfs_path, char *out, size_t out_size)
{
    int n;

    pthread_once(&sfs_pl_prefix_once, sfs_pl_prefix_init);
    if (sfs_pl.prefix.length) {
        n = snprintf(out, out_size, "%s%s", sfs_pl.prefix.path,
                     strcmp(sfs_path, "/") ? sfs_path : "");
    } else {
        n = snprintf(out, out_size, "%s%s", sfs_pl_scheme, sfs_path);
    }
    return (n < 0 || (size_t)n >= out_size) ? -ERANGE : 0;
}

void sfs_pl_cwd_set(const char *sfs_path)
{
    pthread_mutex_lock(&sfs_pl.cwd_lock);
    if (sfs_path) {
        snprintf(sfs_pl.cwd, sizeof(sfs_pl.cwd), "%s", sfs_path);
    }
    __atomic_store_n(&sfs_pl.cwd_active, sfs_path != NULL, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&sfs_pl.cwd_lock);
}

int sfs_pl_cwd_get(char *out)
{
    int active;

    pthread_mutex_lock(&sfs_pl.cwd_lock);
    active = sfs_pl.cwd_active;
    if (active) {
        memcpy(out, sfs_pl.cwd, sizeof(sfs_pl.cwd));
    }
    pthread_mutex_unlock(&sfs_pl.cwd_lock);
    return active;
}

/* ------------------------------------------------------------------------ */
/* The lock, the connection, fork                                            */

void sfs_pl_lock(void)
{
    pthread_mutex_lock(&sfs_pl.lock);
    sfs_pl_busy = 1;
}

void sfs_pl_unlock(void)
{
    sfs_pl_busy = 0;
    pthread_mutex_unlock(&sfs_pl.lock);
}

static void sfs_pl_atfork_prepare(void)
{
    pthread_mutex_lock(&sfs_pl.lock);
}

static void sfs_pl_atfork_parent(void)
{
    pthread_mutex_unlock(&sfs_pl.lock);
}

/* The child must not talk over the parent's UCX connections, nor tear them
 * down: it forgets the client (its memory stays, unused) and connects anew
 * when it first needs to. */
static void sfs_pl_atfork_child(void)
{
    sfs_pl.client      = NULL;
    sfs_pl.retry_after = 0;
    pthread_mutex_unlock(&sfs_pl.lock);
}

static void sfs_pl_atfork_register(void)
{
    if (pthread_atfork(sfs_pl_atfork_prepare, sfs_pl_atfork_parent, sfs_pl_atfork_child) != 0) {
        fprintf(stderr, "stripefs-posix: pthread_atfork failed; a forked child must not use "
                        "stripefs descriptors of its parent\n");
    }
}

/* Where libstripefs.so is: $STRIPEFS_CLIENT_LIBRARY, else next to this
 * library (installed side by side; .libs/ in a build tree), else the
 * loader's search path. */
static void *sfs_pl_api_open(char *error, size_t error_size)
{
    const char *env = NULL;
    char        path[PATH_MAX];
    Dl_info     info;
    void       *handle;

    if (sfs_tunable_string(&sfs_preload_tunables, "STRIPEFS_CLIENT_LIBRARY", &env) == 0 && env) {
        handle = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        goto out;
    }
    if (dladdr((void *)sfs_pl_api_open, &info) && info.dli_fname && strrchr(info.dli_fname, '/')) {
        int n = snprintf(path, sizeof(path), "%.*s/%s",
                         (int)(strrchr(info.dli_fname, '/') - info.dli_fname), info.dli_fname,
                         SFS_PL_CLIENT_SONAME);

        if (n > 0 && (size_t)n < sizeof(path) && access(path, F_OK) == 0) {
            handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            goto out;
        }
    }
    handle = dlopen(SFS_PL_CLIENT_SONAME, RTLD_NOW | RTLD_LOCAL);
out:
    if (!handle) {
        snprintf(error, error_size, "%s", dlerror());
    }
    return handle;
}

/* Load the client library once (lock held). */
static int sfs_pl_api_load(void)
{
    char  error[512];
    void *handle;

    if (sfs_pl.api_loaded) {
        return 0;
    }
    handle = sfs_pl_api_open(error, sizeof(error));
    if (!handle) {
        fprintf(stderr, "stripefs-posix: cannot load the stripefs client library: %s\n", error);
        return -ELIBACC;
    }
#define SFS_PL_API_RESOLVE(_name)                                                                  \
    sfs_pl_api._name = (__typeof__(sfs_pl_api._name))dlsym(handle, "sfs_" #_name);                 \
    if (!sfs_pl_api._name) {                                                                       \
        fprintf(stderr, "stripefs-posix: the stripefs client library lacks sfs_%s\n", #_name);     \
        return -ELIBBAD;                                                                           \
    }
    SFS_PL_API(SFS_PL_API_RESOLVE)
#undef SFS_PL_API_RESOLVE
    sfs_pl.api_loaded = 1;
    return 0;
}

static const char *sfs_pl_detail(void)
{
    return sfs_pl.api_loaded ? sfs_client_error() : "";
}

/* At exit, in two steps, so that no order of the program's atexit handlers
 * loses what they write to stripefs streams:
 *  - this atexit handler (registered at the first connect, so it runs
 *    before the handlers registered earlier and after the later ones)
 *    flushes stdio while everything is up; the connection stays, for the
 *    handlers that run after it;
 *  - the destructor below runs after every atexit handler, in the loader's
 *    pass over the libraries' destructors, and there before those of the
 *    client library and UCX (dlopen'ed after this library was preloaded:
 *    glibc runs their destructors later, measured with glibc 2.36): it
 *    flushes stdio again, closes the files and disconnects.
 * exit's own final flush of stdio comes after all that (UCX gone): a
 * stream written after the destructor fails (ENOTCONN), it never crashes.
 * Writes that returned are on the servers already: a file that was never
 * closed loses nothing. Nothing here waits: interrupted inside a call of
 * ours (exit from a signal handler) or with another thread in one, it
 * leaves the connection be. */
static void sfs_pl_at_exit(void)
{
    if (!sfs_pl.client || sfs_pl.pid != getpid() || sfs_pl_busy) {
        return;
    }
    fflush(NULL);
}

/* Close every stripefs file handle (lock held): the descriptors stay, and
 * calls on them fail from now on (sfs_pl_enter refuses while exiting). */
static void sfs_pl_close_all(void)
{
    for (int p = 0; p < SFS_PL_FD_PAGES; p++) {
        sfs_pl_fd_t **page = sfs_pl.fd_pages[p];

        for (int i = 0; page && i < SFS_PL_FD_PAGE_SIZE; i++) {
            if (page[i] && page[i]->ofd->file && page[i]->ofd->generation == sfs_pl.generation) {
                sfs_file_close(page[i]->ofd->file);
                page[i]->ofd->file = NULL;
            }
        }
    }
}

__attribute__((destructor)) static void sfs_pl_fini(void)
{
    if (!sfs_pl.client || sfs_pl.pid != getpid() || sfs_pl_busy) {
        return;
    }
    fflush(NULL);
    if (pthread_mutex_trylock(&sfs_pl.lock) != 0) {
        return; /* another thread is inside a call: leave the connection be */
    }
    sfs_pl.exiting = 1;
    sfs_pl_close_all();
    sfs_client_disconnect(sfs_pl.client);
    sfs_pl.client = NULL;
    pthread_mutex_unlock(&sfs_pl.lock);
}

static int sfs_pl_connect(void)
{
    static int          at_exit_registered;
    sfs_client_params_t params;
    time_t              now = time(NULL);
    int                 rc;

    if (now < sfs_pl.retry_after || sfs_pl.exiting) {
        return -ENOTCONN;
    }
    rc = sfs_pl_api_load();
    if (rc) {
        sfs_pl.retry_after = (time_t)1 << 62; /* no point in trying again */
        return -ENOTCONN;
    }
    memset(&params, 0, sizeof(params));
    params.field_mask = SFS_CLIENT_PARAM_PROGRAM;
    params.program    = program_invocation_short_name;
    rc                = sfs_client_connect(&params, &sfs_pl.client);
    if (rc) {
        sfs_pl.client      = NULL;
        sfs_pl.retry_after = now + SFS_PL_RETRY_S;
        if (!sfs_pl.connect_reported || sfs_pl.debug) {
            sfs_pl.connect_reported = 1;
            fprintf(stderr, "stripefs-posix: cannot connect to the stripefs service: %s (%s)\n",
                    sfs_client_error(), strerror(-rc));
        }
        return -ENOTCONN;
    }
    sfs_pl.pid = getpid();
    sfs_pl.generation++;
    if (!at_exit_registered && atexit(sfs_pl_at_exit) == 0) {
        at_exit_registered = 1;
    }
    return 0;
}

/* (sfs_pl_call_count) */
static uint64_t sfs_pl_calls;

uint64_t sfs_pl_call_count(void)
{
    return __atomic_load_n(&sfs_pl_calls, __ATOMIC_ACQUIRE);
}

int sfs_pl_list_attrs(void)
{
    return sfs_pl.list_attrs;
}

int sfs_pl_enter(sfs_client_t **client_p)
{
    int rc = sfs_pl_enter_to_read(client_p);

    if (rc == 0) {
        __atomic_add_fetch(&sfs_pl_calls, 1, __ATOMIC_ACQ_REL);
    }
    return rc;
}

int sfs_pl_enter_to_read(sfs_client_t **client_p)
{
    int rc = 0;

    pthread_once(&sfs_pl_atfork_once, sfs_pl_atfork_register);
    sfs_pl_lock();
    if (sfs_pl.client && sfs_pl.pid != getpid()) {
        /* a child made without fork() (no atfork handler ran) */
        sfs_pl.client = NULL;
    }
    if (!sfs_pl.client) {
        rc = sfs_pl_connect();
    }
    if (rc) {
        sfs_pl_unlock();
        return rc;
    }
    *client_p = sfs_pl.client;
    return 0;
}

int sfs_pl_ofd_file(sfs_pl_ofd_t *ofd, sfs_client_t *client, sfs_file_t **file_p)
{
    uint8_t     buf[SFS_PL_PATH_MAX + 2048];
    size_t      length = sizeof(buf);
    sfs_file_t *moved;
    int         rc;

    if (ofd->generation != sfs_pl.generation) {
        /* opened by the parent before fork: re-create the handle for this
         * process's client from its serialised form (no round trip) */
        rc = sfs_file_local2global(ofd->file, buf, &length);
        if (rc == 0) {
            rc = sfs_file_global2local(client, buf, length, &moved);
        }
        if (rc) {
            return rc;
        }
        sfs_file_close(ofd->file);
        ofd->file       = moved;
        ofd->generation = sfs_pl.generation;
    }
    *file_p = ofd->file;
    return 0;
}

static int sfs_pl_expected(int rc)
{
    switch (-rc) {
    case ENOENT:
    case EEXIST:
    case ENOTDIR:
    case EISDIR:
    case ENOTEMPTY:
    case EACCES:
    case EPERM:
    case EINVAL:
    case EBADF:
    case ENAMETOOLONG:
    case EXDEV:
    case ENOTSUP:
    case ENOTTY:
    case ESPIPE:
    case ENXIO:
    case ENOLCK:
    case ENOSYS:
    case ENODEV:
    case ERANGE:
    case ENOTCONN: /* reported once by sfs_pl_connect */
        return 1;
    default:
        return 0;
    }
}

int sfs_pl_fail(int rc, const char *call, const char *what)
{
    if (rc >= 0) {
        rc = -EIO;
    }
    if (sfs_pl.debug || (!sfs_pl_expected(rc) && sfs_pl.reports < SFS_PL_REPORT_MAX)) {
        sfs_pl.reports++;
        fprintf(stderr, "stripefs-posix: %s %s: %s: %s\n", call, what ? what : "", strerror(-rc),
                sfs_pl_detail());
    }
    errno = -rc;
    return -1;
}

/* The umask as it is now, as the kernel applies it to each create: read
 * afresh every time (a create is a round trip to the metadata server
 * anyway), so that however the program changed it (umask(), a raw system
 * call, a library) the result is what the kernel would give. /proc is the
 * only way to read it without changing it; without /proc (or before Linux
 * 4.7) it is set and set back at once, as ROMIO's ufs driver does. */
mode_t sfs_pl_umask(void)
{
    char    buf[512];
    ssize_t n = -1;
    char   *line;
    mode_t  mask;
    int     fd = SFS_REAL(open)("/proc/self/status", O_RDONLY | O_CLOEXEC);

    if (fd >= 0) {
        n = SFS_REAL(read)(fd, buf, sizeof(buf) - 1);
        SFS_REAL(close)(fd);
    }
    if (n > 0) {
        buf[n] = '\0';
        line   = strstr(buf, "\nUmask:");
        if (line) {
            return (mode_t)strtoul(line + 7, NULL, 8) & 0777;
        }
    }
    mask = umask(077);
    umask(mask);
    return mask & 0777;
}

/* ------------------------------------------------------------------------ */
/* Descriptors                                                               */

int sfs_pl_fd_is_ours(int fd)
{
    sfs_pl_fd_t **page;

    if (fd < 0 || fd >= SFS_PL_FD_PAGES * SFS_PL_FD_PAGE_SIZE || sfs_pl_busy ||
        __atomic_load_n(&sfs_pl.fd_count, __ATOMIC_ACQUIRE) == 0) {
        return 0;
    }
    page = __atomic_load_n(&sfs_pl.fd_pages[fd >> SFS_PL_FD_PAGE_SHIFT], __ATOMIC_ACQUIRE);
    return page && __atomic_load_n(&page[fd & (SFS_PL_FD_PAGE_SIZE - 1)], __ATOMIC_ACQUIRE);
}

sfs_pl_fd_t *sfs_pl_fd_get(int fd)
{
    sfs_pl_fd_t **page;

    if (fd < 0 || fd >= SFS_PL_FD_PAGES * SFS_PL_FD_PAGE_SIZE) {
        return NULL;
    }
    page = sfs_pl.fd_pages[fd >> SFS_PL_FD_PAGE_SHIFT];
    return page ? page[fd & (SFS_PL_FD_PAGE_SIZE - 1)] : NULL;
}

int sfs_pl_fd_max(void)
{
    return __atomic_load_n(&sfs_pl.fd_count, __ATOMIC_ACQUIRE) ? sfs_pl.fd_highest : -1;
}

int sfs_pl_fd_install_at(int fd, sfs_pl_ofd_t *ofd, int cloexec)
{
    sfs_pl_fd_t ***pagep;
    sfs_pl_fd_t   *entry;

    if (fd < 0 || fd >= SFS_PL_FD_PAGES * SFS_PL_FD_PAGE_SIZE) {
        return -EMFILE;
    }
    pagep = &sfs_pl.fd_pages[fd >> SFS_PL_FD_PAGE_SHIFT];
    if (!*pagep) {
        sfs_pl_fd_t **page = calloc(SFS_PL_FD_PAGE_SIZE, sizeof(*page));

        if (!page) {
            return -ENOMEM;
        }
        __atomic_store_n(pagep, page, __ATOMIC_RELEASE);
    }
    if ((*pagep)[fd & (SFS_PL_FD_PAGE_SIZE - 1)]) {
        /* the number was closed behind our back (a raw syscall) and the
         * kernel handed it out again: forget the stale entry */
        sfs_pl_fd_drop(fd, 0);
    }
    entry = calloc(1, sizeof(*entry));
    if (!entry) {
        return -ENOMEM;
    }
    entry->ofd     = ofd;
    entry->cloexec = cloexec;
    ofd->refs++;
    __atomic_store_n(&(*pagep)[fd & (SFS_PL_FD_PAGE_SIZE - 1)], entry, __ATOMIC_RELEASE);
    if (fd > sfs_pl.fd_highest) {
        sfs_pl.fd_highest = fd;
    }
    __atomic_add_fetch(&sfs_pl.fd_count, 1, __ATOMIC_RELEASE);
    return 0;
}

int sfs_pl_fd_install(sfs_pl_ofd_t *ofd, int cloexec, int *fd_p)
{
    /* a fresh O_PATH descriptor each time: nothing the program does to
     * another descriptor can reach it */
    int fd = SFS_REAL(open)("/dev/null", O_PATH | O_CLOEXEC);
    int rc;

    if (fd < 0) {
        return -errno;
    }
    rc = sfs_pl_fd_install_at(fd, ofd, cloexec);
    if (rc) {
        SFS_REAL(close)(fd);
        return rc;
    }
    *fd_p = fd;
    return 0;
}

void sfs_pl_ofd_put(sfs_pl_ofd_t *ofd)
{
    if (--ofd->refs > 0) {
        return;
    }
    if (ofd->file) {
        sfs_file_close(ofd->file); /* no I/O: frees the handle */
    }
    free(ofd);
}

int sfs_pl_fd_drop(int fd, int close_real)
{
    sfs_pl_fd_t **page  = sfs_pl.fd_pages[fd >> SFS_PL_FD_PAGE_SHIFT];
    sfs_pl_fd_t  *entry = sfs_pl_fd_get(fd);
    int           rc    = 0;

    if (!entry) {
        return -EBADF;
    }
    if (!entry->ofd->is_dir) {
        __atomic_add_fetch(&sfs_pl_calls, 1, __ATOMIC_ACQ_REL); /* a close keeps a size */
    }
    __atomic_store_n(&page[fd & (SFS_PL_FD_PAGE_SIZE - 1)], NULL, __ATOMIC_RELEASE);
    __atomic_sub_fetch(&sfs_pl.fd_count, 1, __ATOMIC_RELEASE);
    sfs_pl_ofd_put(entry->ofd);
    free(entry);
    if (close_real && SFS_REAL(close)(fd) != 0) {
        rc = -errno;
    }
    return rc;
}
