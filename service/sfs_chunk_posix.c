/*
 * The posix chunk backend: one file per chunk under
 * <target dir>/chunks/<id % 256>/<id in hex>, read and written with
 * preadv2/pwritev2 (RWF_NOWAIT for reads and writes that must not wait for
 * the disk), mapped with mmap, made durable with fdatasync and syncfs. A
 * <target dir>/target.id marker ties the directory to its target id so that
 * a misconfigured host cannot write into another target's directory.
 * Names are made durable as POSIX asks (sfs_dirsync.h): the target's
 * directories once at attach, and a new chunk file's name by an fsync of
 * its <id % 256> directory at the next fsync of a chunk file there.
 */
#define SFS_LOG_FAC "chunk"
#include "sfs_chunk_backend.h"
#include "sfs_dirlock.h"

#include "sfs_alloc.h"
#include "sfs_config.h"
#include "sfs_dirsync.h"
#include "sfs_errno.h"
#include "sfs_log.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#define SFS_CHUNK_MARKER     "target.id"
#define SFS_CHUNK_FS_ID_FILE "filesystem.id"

typedef struct sfs_chunk_posix {
    char           dir[PATH_MAX];
    uint32_t       target_id;
    int            chunks_fd;
    int            no_early_writeback; /* the file system refused sync_file_range */
    sfs_dirlock_t *lock;               /* this process's claim on the directory */
    /* per chunks/<k>/ (atomic): names made there, and how many of them an
     * fsync of it has covered (the count it read before it began) */
    uint64_t names_made[256];
    uint64_t names_synced[256];
} sfs_chunk_posix_t;

struct sfs_chunk_obj {
    int                fd;
    unsigned           sub; /* its directory, chunks/<sub>/ */
    sfs_chunk_posix_t *px;
};

/* The directory of chunk files of `sub` has a new name. */
static void sfs_chunk_posix_new_name(sfs_chunk_posix_t *px, unsigned sub)
{
    __atomic_fetch_add(&px->names_made[sub], 1, __ATOMIC_ACQ_REL);
}

/* Make the names made so far in chunks/<sub>/ durable, unless an fsync of
 * it that began after the last of them has ended. Callers on other disk
 * threads may fsync it at the same time: each returns only after an fsync
 * that began after the names it saw were made. */
static int sfs_chunk_posix_sync_names(sfs_chunk_posix_t *px, unsigned sub)
{
    uint64_t made = __atomic_load_n(&px->names_made[sub], __ATOMIC_ACQUIRE);
    uint64_t synced;
    char     name[4];
    int      rc;

    if (__atomic_load_n(&px->names_synced[sub], __ATOMIC_ACQUIRE) >= made) {
        return 0;
    }
    snprintf(name, sizeof(name), "%02x", sub);
    rc = sfs_fsync_dirat(px->chunks_fd, name);
    if (rc) {
        return rc; /* not durable: this and the next fsync try again */
    }
    synced = __atomic_load_n(&px->names_synced[sub], __ATOMIC_ACQUIRE);
    while (synced < made && !__atomic_compare_exchange_n(&px->names_synced[sub], &synced, made, 0,
                                                         __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    }
    return 0;
}

static void sfs_chunk_posix_name(uint64_t entry_id, char *buf, size_t buflen)
{
    snprintf(buf, buflen, "%02x/%016" PRIx64, (unsigned)(entry_id & 0xff), entry_id);
}

/* mkdir -p; each directory it makes has its name fsynced in its parent, so
 * that a power cut cannot lose a target directory made at this start (the
 * target directory's own name is fsynced at attach). */
static int sfs_chunk_posix_mkdirs(const char *path)
{
    char   copy[PATH_MAX];
    size_t n = strlen(path);

    if (n >= sizeof(copy)) {
        return -ENAMETOOLONG;
    }
    memcpy(copy, path, n + 1);
    for (char *p = copy + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(copy, 0755) == 0) {
                int rc = sfs_fsync_parent(copy);

                if (rc) {
                    return rc;
                }
            } else if (errno != EEXIST) {
                return -errno;
            }
            *p = '/';
        }
    }
    if (mkdir(copy, 0700) != 0 && errno != EEXIST) {
        return -errno;
    }
    return 0;
}

/* Tie the directory to the target id, or check that it is tied to it. */
static int sfs_chunk_posix_check_marker(sfs_chunk_posix_t *px, const char *cluster_name)
{
    char  path[PATH_MAX + 32];
    char  line[512];
    FILE *file;
    int   fd;

    snprintf(path, sizeof(path), "%s/%s", px->dir, SFS_CHUNK_MARKER);
    file = fopen(path, "r");
    if (file) {
        unsigned id                           = 0;
        char     cluster[SFS_CONFIG_NAME_MAX] = "";

        if (!fgets(line, sizeof(line), file) ||
            sscanf(line, "stripefs target %u cluster %255s", &id, cluster) < 1) {
            fclose(file);
            return sfs_error_set(-EINVAL, "target directory %s: %s is not a stripefs marker",
                                 px->dir, path);
        }
        fclose(file);
        if (id != px->target_id) {
            return sfs_error_set(-EINVAL,
                                 "target directory %s belongs to target %u, but the config "
                                 "gives it to target %u",
                                 px->dir, id, px->target_id);
        }
        return 0;
    }
    if (errno != ENOENT) {
        int rc = -errno;

        return sfs_error_set(rc, "cannot read %s: %s", path, strerror(-rc));
    }
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        int rc = -errno;

        return sfs_error_set(rc, "cannot create %s: %s", path, strerror(-rc));
    }
    snprintf(line, sizeof(line), "stripefs target %u cluster %s\n", px->target_id, cluster_name);
    if (write(fd, line, strlen(line)) != (ssize_t)strlen(line) || fsync(fd) != 0) {
        int rc = -errno;

        close(fd);
        return sfs_error_set(rc, "cannot write %s: %s", path, strerror(-rc));
    }
    close(fd);
    return 0;
}

/* <dir>/filesystem.id: the file system (its metadata store's id) whose
 * chunks this target holds; missing until the first start that checked it. */
static void sfs_chunk_posix_fs_id_path(const char *dir, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, SFS_CHUNK_FS_ID_FILE);
}

/* "stripefs file system " and exactly 16 hex digits, then the end of the
 * line: anything else is a damaged record. */
static int sfs_chunk_posix_parse_fs_id(const char *line, uint64_t *fs_id_p)
{
    static const char prefix[] = "stripefs file system ";
    const char       *hex      = line + sizeof(prefix) - 1;
    uint64_t          id       = 0;

    if (strncmp(line, prefix, sizeof(prefix) - 1) != 0 || strspn(hex, "0123456789abcdef") != 16 ||
        strcmp(hex + 16, "\n") != 0) {
        return -EBADMSG;
    }
    for (int i = 0; i < 16; i++) {
        id = (id << 4) | (uint64_t)(hex[i] <= '9' ? hex[i] - '0' : hex[i] - 'a' + 10);
    }
    if (id == 0) {
        return -EBADMSG;
    }
    *fs_id_p = id;
    return 0;
}

static int sfs_chunk_posix_read_fs_id(const char *dir, uint64_t *fs_id_p)
{
    char  path[PATH_MAX + 32], line[128];
    FILE *file;
    int   rc;

    sfs_chunk_posix_fs_id_path(dir, path, sizeof(path));
    file = fopen(path, "r");
    if (!file) {
        if (errno == ENOENT) {
            *fs_id_p = 0;
            return 0;
        }
        return -errno;
    }
    rc = fgets(line, sizeof(line), file) != NULL ? sfs_chunk_posix_parse_fs_id(line, fs_id_p)
                                                 : -EBADMSG;
    fclose(file);
    return rc;
}

static int sfs_chunk_posix_fs_id(void *state, uint64_t *fs_id_p)
{
    return sfs_chunk_posix_read_fs_id(((sfs_chunk_posix_t *)state)->dir, fs_id_p);
}

/* Written whole or not at all: a temporary file, fsynced, renamed over,
 * and the directory fsynced. */
static int sfs_chunk_posix_set_fs_id(void *state, uint64_t fs_id)
{
    sfs_chunk_posix_t *px = state;
    char               path[PATH_MAX + 32], tmp[PATH_MAX + 40], line[64];
    int                fd, rc = 0;
    size_t             n;

    sfs_chunk_posix_fs_id_path(px->dir, path, sizeof(path));
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    n  = (size_t)snprintf(line, sizeof(line), "stripefs file system %016" PRIx64 "\n", fs_id);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return -errno;
    }
    if (write(fd, line, n) != (ssize_t)n || fsync(fd) != 0) {
        rc = errno ? -errno : -EIO;
    }
    if (close(fd) != 0 && rc == 0) {
        rc = -errno;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = -errno;
    }
    if (rc) {
        unlink(tmp);
        return rc;
    }
    return sfs_fsync_dir(px->dir);
}

static void sfs_chunk_posix_detach(void *state)
{
    sfs_chunk_posix_t *px = state;

    if (!px) {
        return;
    }
    if (px->chunks_fd >= 0) {
        close(px->chunks_fd);
    }
    sfs_dirlock_release(px->lock);
    free(px);
}

static int sfs_chunk_posix_attach(const sfs_chunk_backend_params_t *params, void **state_p)
{
    sfs_chunk_posix_t *px;
    char               path[PATH_MAX + 16];
    int                rc;

    if (!SFS_ALLOC_PTR(px)) {
        return -ENOMEM;
    }
    px->chunks_fd = -1;
    px->target_id = params->target_id;
    snprintf(px->dir, sizeof(px->dir), "%s", params->dir);
    rc = sfs_chunk_posix_mkdirs(px->dir);
    if (rc) {
        sfs_error_set(rc, "cannot create target directory %s: %s", px->dir, strerror(-rc));
        goto err;
    }
    {
        char what[64];

        /* before the marker or anything else is touched: a second server on
         * a live target is refused, naming the one that serves it */
        snprintf(what, sizeof(what), "storage target %u", px->target_id);
        rc = sfs_dirlock_acquire(px->dir, what, &px->lock);
        if (rc) {
            goto err;
        }
    }
    rc = sfs_chunk_posix_check_marker(px, params->cluster_name);
    if (rc) {
        goto err;
    }
    snprintf(path, sizeof(path), "%s/chunks", px->dir);
    if (mkdir(path, 0700) != 0 && errno != EEXIST) {
        rc = -errno;
        sfs_error_set(rc, "cannot create %s: %s", path, strerror(-rc));
        goto err;
    }
    px->chunks_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (px->chunks_fd < 0) {
        rc = -errno;
        sfs_error_set(rc, "cannot open %s: %s", path, strerror(-rc));
        goto err;
    }
    for (unsigned sub = 0; sub < 256; sub++) {
        char name[4];

        snprintf(name, sizeof(name), "%02x", sub);
        if (mkdirat(px->chunks_fd, name, 0700) != 0 && errno != EEXIST) {
            rc = -errno;
            sfs_error_set(rc, "cannot create %s/%s: %s", path, name, strerror(-rc));
            goto err;
        }
    }
    /* names an earlier run made and did not fsync (it was killed) may be
     * only in the page cache: the first fsync in each directory covers them */
    for (unsigned sub = 0; sub < 256; sub++) {
        px->names_made[sub] = 1;
    }
    /* chunks/'s entries, the target directory's (target.id, chunks) and the
     * target directory's own name: once, here */
    if ((rc = fsync(px->chunks_fd) != 0 ? -errno : 0) != 0 || (rc = sfs_fsync_dir(px->dir)) != 0 ||
        (rc = sfs_fsync_parent(px->dir)) != 0) {
        sfs_error_set(rc, "target %u: cannot make the names in %s durable (fsync): %s",
                      px->target_id, px->dir, strerror(-rc));
        goto err;
    }
    *state_p = px;
    return 0;

err:
    sfs_chunk_posix_detach(px);
    return rc;
}

static int sfs_chunk_posix_space(void *state, uint64_t *capacity_p, uint64_t *free_p)
{
    sfs_chunk_posix_t *px = state;
    struct statvfs     st;

    if (fstatvfs(px->chunks_fd, &st) != 0) {
        return -errno;
    }
    *capacity_p = (uint64_t)st.f_blocks * st.f_frsize;
    *free_p     = (uint64_t)st.f_bavail * st.f_frsize;
    return 0;
}

static int sfs_chunk_posix_sync(void *state)
{
    sfs_chunk_posix_t *px = state;
    int                rc = 0;

    if (syncfs(px->chunks_fd) != 0) {
        return -errno;
    }
    /* syncfs need not reach every file system (FUSE's, for one) */
    for (unsigned sub = 0; sub < 256 && rc == 0; sub++) {
        rc = sfs_chunk_posix_sync_names(px, sub);
    }
    return rc;
}

static int sfs_chunk_posix_openat(sfs_chunk_posix_t *px, uint64_t entry_id, int flags)
{
    char name[32];
    int  fd;

    sfs_chunk_posix_name(entry_id, name, sizeof(name));
    fd = openat(px->chunks_fd, name, flags | O_CLOEXEC, 0600);
    return fd < 0 ? -errno : fd;
}

static int sfs_chunk_posix_open(void *state, uint64_t entry_id, int create, sfs_chunk_obj_t **obj_p)
{
    sfs_chunk_posix_t *px = state;
    sfs_chunk_obj_t   *obj;
    unsigned           sub = (unsigned)(entry_id & 0xff);
    int                fd  = sfs_chunk_posix_openat(px, entry_id, O_RDWR);

    if (fd == -ENOENT && create) {
        /* made here: its name is new (EEXIST: another thread made it) */
        fd = sfs_chunk_posix_openat(px, entry_id, O_RDWR | O_CREAT | O_EXCL);
        if (fd >= 0) {
            sfs_chunk_posix_new_name(px, sub);
        } else if (fd == -EEXIST) {
            fd = sfs_chunk_posix_openat(px, entry_id, O_RDWR);
        }
    }
    if (fd < 0) {
        return fd;
    }
    if (!SFS_ALLOC_PTR(obj)) {
        close(fd);
        return -ENOMEM;
    }
    obj->fd  = fd;
    obj->sub = sub;
    obj->px  = px;
    *obj_p   = obj;
    return 0;
}

static void sfs_chunk_posix_close(void *state, sfs_chunk_obj_t *obj)
{
    (void)state;
    close(obj->fd);
    free(obj);
}

static ssize_t sfs_chunk_posix_pread(sfs_chunk_obj_t *obj, void *buf, size_t length,
                                     uint64_t offset, int nowait)
{
    struct iovec iov = {.iov_base = buf, .iov_len = length};
    ssize_t      got = preadv2(obj->fd, &iov, 1, (off_t)offset, nowait ? RWF_NOWAIT : 0);

    return got < 0 ? -errno : got;
}

static ssize_t sfs_chunk_posix_pwrite(sfs_chunk_obj_t *obj, const void *buf, size_t length,
                                      uint64_t offset, int nowait)
{
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = length};
    ssize_t      put = pwritev2(obj->fd, &iov, 1, (off_t)offset, nowait ? RWF_NOWAIT : 0);

    return put < 0 ? -errno : put;
}

static int sfs_chunk_posix_size(sfs_chunk_obj_t *obj, uint64_t *length_p)
{
    struct stat st;

    if (fstat(obj->fd, &st) != 0) {
        return -errno;
    }
    *length_p = (uint64_t)st.st_size;
    return 0;
}

static int sfs_chunk_posix_truncate(sfs_chunk_obj_t *obj, uint64_t length)
{
    return ftruncate(obj->fd, (off_t)length) != 0 ? -errno : 0;
}

static int sfs_chunk_posix_fsync(sfs_chunk_obj_t *obj)
{
    if (fdatasync(obj->fd) != 0) {
        return -errno;
    }
    return sfs_chunk_posix_sync_names(obj->px, obj->sub);
}

/* Start writing the just-written ranges to the disk without waiting for
 * it. Only a hint: a file system without sync_file_range is remembered
 * and not asked again; other failures will show at the next fsync. */
static void sfs_chunk_posix_writeback(void *state, sfs_chunk_obj_t *obj,
                                      const sfs_io_extent_t *extents, uint32_t count)
{
    sfs_chunk_posix_t *px = state;

    if (__atomic_load_n(&px->no_early_writeback, __ATOMIC_RELAXED)) {
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        if (sync_file_range(obj->fd, (off_t)extents[i].chunk_offset, (off_t)extents[i].length,
                            SYNC_FILE_RANGE_WRITE) != 0) {
            if (errno == EINVAL || errno == ENOSYS || errno == ESPIPE || errno == EOPNOTSUPP) {
                sfs_debug("target %u: no early writeback (sync_file_range: %s)", px->target_id,
                          strerror(errno));
                __atomic_store_n(&px->no_early_writeback, 1, __ATOMIC_RELAXED);
            }
            return;
        }
    }
}

static int sfs_chunk_posix_stat(void *state, uint64_t entry_id, uint64_t *length_p)
{
    sfs_chunk_posix_t *px = state;
    char               name[32];
    struct stat        st;

    sfs_chunk_posix_name(entry_id, name, sizeof(name));
    if (fstatat(px->chunks_fd, name, &st, 0) != 0) {
        return -errno;
    }
    *length_p = (uint64_t)st.st_size;
    return 0;
}

static int sfs_chunk_posix_unlink(void *state, uint64_t entry_id, uint64_t *length_p)
{
    sfs_chunk_posix_t *px = state;
    char               name[32];
    struct stat        st;

    sfs_chunk_posix_name(entry_id, name, sizeof(name));
    if (fstatat(px->chunks_fd, name, &st, 0) != 0 || unlinkat(px->chunks_fd, name, 0) != 0) {
        return -errno;
    }
    *length_p = (uint64_t)st.st_size;
    return 0;
}

/* Every chunk file under the open chunks/ directory `chunks_fd`. */
static int sfs_chunk_posix_walk(int chunks_fd, sfs_chunk_list_cb cb, void *arg)
{
    for (unsigned sub = 0; sub < 256; sub++) {
        char           name[4];
        int            fd, rc = 0;
        DIR           *dir;
        struct dirent *de;

        snprintf(name, sizeof(name), "%02x", sub);
        fd = openat(chunks_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || !(dir = fdopendir(fd))) {
            if (fd >= 0) {
                close(fd);
            }
            continue;
        }
        while (rc == 0 && (de = readdir(dir)) != NULL) {
            char       *end;
            uint64_t    id;
            struct stat st;

            if (de->d_name[0] == '.') {
                continue;
            }
            id = strtoull(de->d_name, &end, 16);
            if (*end != '\0' || fstatat(dirfd(dir), de->d_name, &st, 0) != 0) {
                continue;
            }
            rc = cb(arg, id, (uint64_t)st.st_size);
        }
        closedir(dir);
        if (rc) {
            return rc;
        }
    }
    return 0;
}

static int sfs_chunk_posix_list(void *state, sfs_chunk_list_cb cb, void *arg)
{
    sfs_chunk_posix_t *px = state;

    return sfs_chunk_posix_walk(px->chunks_fd, cb, arg);
}

static int sfs_chunk_posix_found(void *arg, uint64_t entry_id, uint64_t length)
{
    (void)entry_id;
    (void)length;
    *(uint64_t *)arg = 1;
    return 1; /* one is enough */
}

int sfs_chunk_posix_survey(const char *dir, uint64_t *fs_id_p, uint64_t *chunks_p)
{
    char path[PATH_MAX + 16];
    int  fd, rc;

    *chunks_p = 0;
    rc        = sfs_chunk_posix_read_fs_id(dir, fs_id_p);
    if (rc) {
        return rc;
    }
    snprintf(path, sizeof(path), "%s/chunks", dir);
    fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return errno == ENOENT ? 0 : -errno;
    }
    sfs_chunk_posix_walk(fd, sfs_chunk_posix_found, chunks_p);
    close(fd);
    return 0;
}

static int sfs_chunk_posix_open_fd(void *state, uint64_t entry_id)
{
    return sfs_chunk_posix_openat(state, entry_id, O_RDONLY);
}

static int sfs_chunk_posix_map(sfs_chunk_obj_t *obj, uint64_t offset, uint64_t length,
                               void **addr_p)
{
    void *addr = mmap(NULL, length, PROT_READ, MAP_SHARED, obj->fd, (off_t)offset);

    if (addr == MAP_FAILED) {
        return -errno;
    }
    *addr_p = addr;
    return 0;
}

static int sfs_chunk_posix_unmap(void *addr, uint64_t length)
{
    return munmap(addr, length) != 0 ? -errno : 0;
}

/* Whether the mapping's pages are in the page cache, judged by a sample
 * (the first, the last and three between): checking every page costs
 * about a sixth of the copy it would save, and files are read into and
 * evicted from the cache in long runs. A miss costs one wait for the disk. */
static int sfs_chunk_posix_resident(void *addr, uint64_t length)
{
    long     page  = sysconf(_SC_PAGESIZE);
    uint64_t pages = (length + (uint64_t)page - 1) / (uint64_t)page;

    for (int k = 0; k <= 4; k++) {
        uint64_t      index = (pages - 1) * (uint64_t)k / 4;
        unsigned char vec;

        if (mincore((uint8_t *)addr + index * (uint64_t)page, (size_t)page, &vec) != 0 ||
            !(vec & 1)) {
            return 0;
        }
    }
    return 1;
}

const sfs_chunk_backend_ops_t sfs_chunk_backend_posix = {
    .name      = "posix",
    .attach    = sfs_chunk_posix_attach,
    .detach    = sfs_chunk_posix_detach,
    .space     = sfs_chunk_posix_space,
    .sync      = sfs_chunk_posix_sync,
    .open      = sfs_chunk_posix_open,
    .close     = sfs_chunk_posix_close,
    .pread     = sfs_chunk_posix_pread,
    .pwrite    = sfs_chunk_posix_pwrite,
    .size      = sfs_chunk_posix_size,
    .truncate  = sfs_chunk_posix_truncate,
    .fsync     = sfs_chunk_posix_fsync,
    .writeback = sfs_chunk_posix_writeback,
    .stat      = sfs_chunk_posix_stat,
    .unlink    = sfs_chunk_posix_unlink,
    .list      = sfs_chunk_posix_list,
    .open_fd   = sfs_chunk_posix_open_fd,
    .map       = sfs_chunk_posix_map,
    .unmap     = sfs_chunk_posix_unmap,
    .resident  = sfs_chunk_posix_resident,
    .fs_id     = sfs_chunk_posix_fs_id,
    .set_fs_id = sfs_chunk_posix_set_fs_id,
};
