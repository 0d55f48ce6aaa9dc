#define SFS_LOG_FAC "chunk"
#include "sfs_chunk_store.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define SFS_CHUNK_MARKER   "target.id"
#define SFS_CHUNK_FD_CACHE 128 /* open chunk files kept per target */
/* An open chunk file keeps one mapping of its first bytes for large reads,
 * so that reading it again costs no mmap, page faults and munmap (with its
 * TLB shootdown) per request: a window of the file's length rounded up to
 * this, at most SFS_CHUNK_KEEP_MAP_MAX. */
#define SFS_CHUNK_KEEP_MAP_ROUND (64ull << 20)
#define SFS_CHUNK_KEEP_MAP_MAX   (1ull << 30)
/* Writes at least this large start their writeback at once (not waiting
 * for the kernel's dirty thresholds), so that the disk works while the
 * client still sends and a later fsync has little left to do. */
#define SFS_CHUNK_EARLY_WRITEBACK_MIN (256 * 1024)

/* An open chunk file kept for the next request on it: small I/O then costs
 * no open/close. Slots are used by several I/O threads at once. */
typedef struct sfs_chunk_fd {
    uint64_t entry_id;
    int      fd;       /* -1: empty slot */
    uint32_t users;    /* requests using it now */
    int      doomed;   /* unlinked: close when the last user is done */
    uint32_t mapped;   /* mapped reads in flight (see sfs_chunk_read_map) */
    uint64_t last_use; /* for LRU eviction */
    void    *kept_map; /* the lasting mapping of [0, kept_length), or NULL */
    uint64_t kept_length;
} sfs_chunk_fd_t;

/* What an I/O request holds while it uses a chunk file. */
typedef struct sfs_chunk_handle {
    int fd;
    int slot; /* -1: not cached, close after use */
} sfs_chunk_handle_t;

struct sfs_chunk_target {
    uint32_t        id;
    char            dir[PATH_MAX];
    int             chunks_fd;
    uint64_t        capacity_limit;
    uint64_t        bandwidth;
    uint64_t        used_bytes;         /* atomic: bytes in chunk files */
    int             no_early_writeback; /* the file system refused sync_file_range */
    int             no_nowait_write;    /* ... or buffered RWF_NOWAIT writes */
    pthread_mutex_t throttle_lock;
    uint64_t        disk_free_at_ns; /* emulated disk: busy until then */
    pthread_mutex_t fd_lock;
    pthread_cond_t  unmapped; /* a mapped read ended */
    uint64_t        fd_clock;
    sfs_chunk_fd_t  fds[SFS_CHUNK_FD_CACHE];
};

static void sfs_chunk_name(uint64_t entry_id, char *buf, size_t buflen)
{
    snprintf(buf, buflen, "%02x/%016" PRIx64, (unsigned)(entry_id & 0xff), entry_id);
}

static int sfs_chunk_mkdirs(const char *path)
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
            if (mkdir(copy, 0755) != 0 && errno != EEXIST) {
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
static int sfs_chunk_check_marker(sfs_chunk_target_t *target, const char *cluster_name)
{
    char  path[PATH_MAX + 32];
    char  line[512];
    FILE *file;
    int   fd;

    snprintf(path, sizeof(path), "%s/%s", target->dir, SFS_CHUNK_MARKER);
    file = fopen(path, "r");
    if (file) {
        unsigned id                           = 0;
        char     cluster[SFS_CONFIG_NAME_MAX] = "";

        if (!fgets(line, sizeof(line), file) ||
            sscanf(line, "stripefs target %u cluster %255s", &id, cluster) < 1) {
            fclose(file);
            return sfs_error_set(-EINVAL, "target directory %s: %s is not a stripefs marker",
                                 target->dir, path);
        }
        fclose(file);
        if (id != target->id) {
            return sfs_error_set(-EINVAL,
                                 "target directory %s belongs to target %u, but the config "
                                 "gives it to target %u",
                                 target->dir, id, target->id);
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
    snprintf(line, sizeof(line), "stripefs target %u cluster %s\n", target->id, cluster_name);
    if (write(fd, line, strlen(line)) != (ssize_t)strlen(line) || fsync(fd) != 0) {
        int rc = -errno;

        close(fd);
        return sfs_error_set(rc, "cannot write %s: %s", path, strerror(-rc));
    }
    close(fd);
    return 0;
}

static uint64_t sfs_chunk_scan_used(sfs_chunk_target_t *target)
{
    uint64_t used = 0;

    for (unsigned sub = 0; sub < 256; sub++) {
        char           name[4];
        int            fd;
        DIR           *dir;
        struct dirent *de;

        snprintf(name, sizeof(name), "%02x", sub);
        fd = openat(target->chunks_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || !(dir = fdopendir(fd))) {
            if (fd >= 0) {
                close(fd);
            }
            continue;
        }
        while ((de = readdir(dir)) != NULL) {
            struct stat st;

            if (de->d_name[0] != '.' && fstatat(dirfd(dir), de->d_name, &st, 0) == 0) {
                used += (uint64_t)st.st_size;
            }
        }
        closedir(dir);
    }
    return used;
}

int sfs_chunk_target_open(const sfs_config_target_t *config, const char *cluster_name,
                          sfs_chunk_target_t **target_p)
{
    sfs_chunk_target_t *target;
    char                path[PATH_MAX + 16];
    int                 rc;

    if (!SFS_ALLOC_PTR(target)) {
        return -ENOMEM;
    }
    target->id             = config->id;
    target->capacity_limit = config->capacity;
    target->bandwidth      = config->bandwidth;
    target->chunks_fd      = -1;
    pthread_mutex_init(&target->throttle_lock, NULL);
    pthread_mutex_init(&target->fd_lock, NULL);
    pthread_cond_init(&target->unmapped, NULL);
    for (int i = 0; i < SFS_CHUNK_FD_CACHE; i++) {
        target->fds[i].fd = -1;
    }
    snprintf(target->dir, sizeof(target->dir), "%s", config->dir);
    rc = sfs_chunk_mkdirs(target->dir);
    if (rc) {
        sfs_error_set(rc, "cannot create target directory %s: %s", target->dir, strerror(-rc));
        goto err;
    }
    rc = sfs_chunk_check_marker(target, cluster_name);
    if (rc) {
        goto err;
    }
    snprintf(path, sizeof(path), "%s/chunks", target->dir);
    if (mkdir(path, 0700) != 0 && errno != EEXIST) {
        rc = -errno;
        sfs_error_set(rc, "cannot create %s: %s", path, strerror(-rc));
        goto err;
    }
    target->chunks_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (target->chunks_fd < 0) {
        rc = -errno;
        sfs_error_set(rc, "cannot open %s: %s", path, strerror(-rc));
        goto err;
    }
    for (unsigned sub = 0; sub < 256; sub++) {
        char name[4];

        snprintf(name, sizeof(name), "%02x", sub);
        if (mkdirat(target->chunks_fd, name, 0700) != 0 && errno != EEXIST) {
            rc = -errno;
            sfs_error_set(rc, "cannot create %s/%s: %s", path, name, strerror(-rc));
            goto err;
        }
    }
    target->used_bytes = sfs_chunk_scan_used(target);
    *target_p          = target;
    return 0;

err:
    sfs_chunk_target_close(target);
    return rc;
}

/* Close a cache slot's file and drop its lasting mapping (fd_lock held, or
 * the target going away; nobody uses the slot). */
static void sfs_chunk_fd_close_slot(sfs_chunk_fd_t *e)
{
    if (e->kept_map && munmap(e->kept_map, e->kept_length) != 0) {
        sfs_warn("munmap of chunk %016" PRIx64 " failed: %m", e->entry_id);
    }
    e->kept_map    = NULL;
    e->kept_length = 0;
    if (e->fd >= 0) {
        close(e->fd);
    }
    e->fd = -1;
}

void sfs_chunk_target_close(sfs_chunk_target_t *target)
{
    if (!target) {
        return;
    }
    if (target->chunks_fd >= 0) {
        close(target->chunks_fd);
    }
    for (int i = 0; i < SFS_CHUNK_FD_CACHE; i++) {
        sfs_chunk_fd_close_slot(&target->fds[i]);
    }
    pthread_cond_destroy(&target->unmapped);
    pthread_mutex_destroy(&target->fd_lock);
    pthread_mutex_destroy(&target->throttle_lock);
    free(target);
}

uint32_t sfs_chunk_target_id(const sfs_chunk_target_t *target)
{
    return target->id;
}

const char *sfs_chunk_target_dir(const sfs_chunk_target_t *target)
{
    return target->dir;
}

uint64_t sfs_chunk_target_bandwidth(const sfs_chunk_target_t *target)
{
    return target->bandwidth;
}

int sfs_chunk_target_space(sfs_chunk_target_t *target, uint64_t *capacity_p, uint64_t *free_p)
{
    struct statvfs st;
    uint64_t       capacity, avail, used;

    if (fstatvfs(target->chunks_fd, &st) != 0) {
        int rc = -errno;

        return sfs_error_set(rc, "target %u: statvfs %s: %s", target->id, target->dir,
                             strerror(-rc));
    }
    capacity = (uint64_t)st.f_blocks * st.f_frsize;
    avail    = (uint64_t)st.f_bavail * st.f_frsize;
    if (target->capacity_limit) {
        used = __atomic_load_n(&target->used_bytes, __ATOMIC_RELAXED);
        if (target->capacity_limit < capacity) {
            capacity = target->capacity_limit;
        }
        if (capacity - (used < capacity ? used : capacity) < avail) {
            avail = capacity - (used < capacity ? used : capacity);
        }
    }
    *capacity_p = capacity;
    *free_p     = avail;
    return 0;
}

int sfs_chunk_target_sync(sfs_chunk_target_t *target)
{
    if (syncfs(target->chunks_fd) != 0) {
        int rc = -errno;

        return sfs_error_set(rc, "target %u: syncfs %s: %s", target->id, target->dir,
                             strerror(-rc));
    }
    return 0;
}

/* Emulated disk bandwidth: the disk serves one request at a time at
 * `bandwidth` bytes/s, so a request waits for the ones before it. */
static void sfs_chunk_throttle(sfs_chunk_target_t *target, uint64_t bytes)
{
    uint64_t        now, finish;
    struct timespec ts;

    if (!target->bandwidth || !bytes) {
        return;
    }
    pthread_mutex_lock(&target->throttle_lock);
    now = sfs_time_ns();
    if (target->disk_free_at_ns < now) {
        target->disk_free_at_ns = now;
    }
    target->disk_free_at_ns += bytes * 1000000000ull / target->bandwidth;
    finish = target->disk_free_at_ns;
    pthread_mutex_unlock(&target->throttle_lock);
    if (finish > now) {
        ts.tv_sec  = (time_t)(finish / 1000000000ull);
        ts.tv_nsec = (long)(finish % 1000000000ull);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        }
    }
}

static int sfs_chunk_open(sfs_chunk_target_t *target, uint64_t entry_id, int flags)
{
    char name[32];
    int  fd;

    sfs_chunk_name(entry_id, name, sizeof(name));
    fd = openat(target->chunks_fd, name, flags | O_CLOEXEC, 0600);
    return fd < 0 ? -errno : fd;
}

static int sfs_chunk_fd_find(sfs_chunk_target_t *target, uint64_t entry_id)
{
    for (int i = 0; i < SFS_CHUNK_FD_CACHE; i++) {
        if (target->fds[i].fd >= 0 && target->fds[i].entry_id == entry_id &&
            !target->fds[i].doomed) {
            return i;
        }
    }
    return -1;
}

/* Take a reference on cache slot `slot` (fd_lock held). */
static void sfs_chunk_fd_use(sfs_chunk_target_t *target, int slot, sfs_chunk_handle_t *handle)
{
    target->fds[slot].users++;
    target->fds[slot].last_use = ++target->fd_clock;
    handle->fd                 = target->fds[slot].fd;
    handle->slot               = slot;
}

/* The chunk file of `entry_id` if it is open in the cache; -EAGAIN if not
 * (opening it could wait for the disk). */
static int sfs_chunk_fd_get_cached(sfs_chunk_target_t *target, uint64_t entry_id,
                                   sfs_chunk_handle_t *handle)
{
    int slot;

    pthread_mutex_lock(&target->fd_lock);
    slot = sfs_chunk_fd_find(target, entry_id);
    if (slot >= 0) {
        sfs_chunk_fd_use(target, slot, handle);
    }
    pthread_mutex_unlock(&target->fd_lock);
    return slot >= 0 ? 0 : -EAGAIN;
}

/* The chunk file of `entry_id`, open read-write (created if `create`), from
 * the cache when it is there. -ENOENT when it does not exist and !create. */
static int sfs_chunk_fd_get(sfs_chunk_target_t *target, uint64_t entry_id, int create,
                            sfs_chunk_handle_t *handle)
{
    int slot, fd, victim = -1;

    if (sfs_chunk_fd_get_cached(target, entry_id, handle) == 0) {
        return 0;
    }
    fd = sfs_chunk_open(target, entry_id, O_RDWR | (create ? O_CREAT : 0));
    if (fd < 0) {
        return fd;
    }
    pthread_mutex_lock(&target->fd_lock);
    slot = sfs_chunk_fd_find(target, entry_id);
    if (slot >= 0) { /* another thread opened it meanwhile */
        sfs_chunk_fd_use(target, slot, handle);
        pthread_mutex_unlock(&target->fd_lock);
        close(fd);
        return 0;
    }
    for (int i = 0; i < SFS_CHUNK_FD_CACHE; i++) {
        sfs_chunk_fd_t *e = &target->fds[i];

        if (e->fd < 0) {
            victim = i;
            break;
        }
        if (e->users == 0 && (victim < 0 || e->last_use < target->fds[victim].last_use)) {
            victim = i;
        }
    }
    handle->fd   = fd;
    handle->slot = victim;
    if (victim >= 0) {
        sfs_chunk_fd_t *e = &target->fds[victim];

        sfs_chunk_fd_close_slot(e);
        e->entry_id = entry_id;
        e->fd       = fd;
        e->users    = 1;
        e->doomed   = 0;
        e->mapped   = 0;
        e->last_use = ++target->fd_clock;
    }
    pthread_mutex_unlock(&target->fd_lock);
    return 0;
}

static void sfs_chunk_fd_put(sfs_chunk_target_t *target, sfs_chunk_handle_t *handle)
{
    if (handle->slot < 0) {
        close(handle->fd);
        return;
    }
    pthread_mutex_lock(&target->fd_lock);
    if (--target->fds[handle->slot].users == 0 && target->fds[handle->slot].doomed) {
        sfs_chunk_fd_close_slot(&target->fds[handle->slot]);
    }
    pthread_mutex_unlock(&target->fd_lock);
}

/* The file is going away: drop it from the cache (at once, or when the
 * last request on it is done). */
static void sfs_chunk_fd_forget(sfs_chunk_target_t *target, uint64_t entry_id)
{
    int slot;

    pthread_mutex_lock(&target->fd_lock);
    slot = sfs_chunk_fd_find(target, entry_id);
    if (slot >= 0) {
        if (target->fds[slot].users == 0) {
            sfs_chunk_fd_close_slot(&target->fds[slot]);
        } else {
            target->fds[slot].doomed = 1;
        }
    }
    pthread_mutex_unlock(&target->fd_lock);
}

/* Start writing the just-written ranges to the disk without waiting for
 * it. Only a hint: a file system without sync_file_range is remembered
 * and not asked again; other failures will show at the next fsync. */
static void sfs_chunk_start_writeback(sfs_chunk_target_t *target, int fd,
                                      const sfs_io_extent_t *extents, uint32_t count)
{
    if (__atomic_load_n(&target->no_early_writeback, __ATOMIC_RELAXED)) {
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        if (sync_file_range(fd, (off_t)extents[i].chunk_offset, (off_t)extents[i].length,
                            SYNC_FILE_RANGE_WRITE) != 0) {
            if (errno == EINVAL || errno == ENOSYS || errno == ESPIPE || errno == EOPNOTSUPP) {
                sfs_debug("target %u: no early writeback (sync_file_range: %s)", target->id,
                          strerror(errno));
                __atomic_store_n(&target->no_early_writeback, 1, __ATOMIC_RELAXED);
            }
            return;
        }
    }
}

int sfs_chunk_write(sfs_chunk_target_t *target, uint64_t entry_id, const sfs_io_extent_t *extents,
                    uint32_t count, const void *data, unsigned flags, uint64_t *length_p)
{
    int                sync   = (flags & SFS_CHUNK_IO_SYNC) != 0;
    int                nowait = (flags & SFS_CHUNK_IO_NOWAIT) != 0;
    const uint8_t     *src    = data;
    sfs_chunk_handle_t handle;
    struct stat        st;
    uint64_t           end = 0, total = 0, before = 0;
    int                rc;

    for (uint32_t i = 0; i < count; i++) {
        total += extents[i].length;
        if (extents[i].chunk_offset + extents[i].length > end) {
            end = extents[i].chunk_offset + extents[i].length;
        }
    }
    if (nowait && (sync || target->capacity_limit ||
                   __atomic_load_n(&target->no_nowait_write, __ATOMIC_RELAXED))) {
        return -EAGAIN;
    }
    rc = nowait ? sfs_chunk_fd_get_cached(target, entry_id, &handle)
                : sfs_chunk_fd_get(target, entry_id, 1, &handle);
    if (rc == -EAGAIN) {
        return rc;
    }
    if (rc) {
        return sfs_error_set(rc, "target %u: cannot open chunk %016" PRIx64 ": %s", target->id,
                             entry_id, strerror(-rc));
    }
    /* only a capacity limit needs to know how much the file grows */
    if (target->capacity_limit) {
        if (fstat(handle.fd, &st) != 0) {
            rc = -errno;
            goto out;
        }
        before = (uint64_t)st.st_size;
        if (end > before &&
            __atomic_load_n(&target->used_bytes, __ATOMIC_RELAXED) + (end - before) >
                target->capacity_limit) {
            rc = sfs_error_set(-ENOSPC, "target %u is full (capacity limit %" PRIu64 " bytes)",
                               target->id, target->capacity_limit);
            goto out_nodetail;
        }
    }
    sfs_chunk_throttle(target, total);
    for (uint32_t i = 0; i < count; i++) {
        uint64_t done = 0;

        while (done < extents[i].length) {
            struct iovec iov = {.iov_base = (void *)(src + done),
                                .iov_len  = extents[i].length - done};
            ssize_t      put = pwritev2(handle.fd, &iov, 1, (off_t)(extents[i].chunk_offset + done),
                                   nowait ? RWF_NOWAIT : 0);

            if (put < 0) {
                if (errno == EINTR) {
                    continue;
                }
                rc = -errno;
                if (nowait && (rc == -EAGAIN || rc == -EOPNOTSUPP)) {
                    if (rc == -EOPNOTSUPP) { /* never again on this file system */
                        __atomic_store_n(&target->no_nowait_write, 1, __ATOMIC_RELAXED);
                    }
                    rc = -EAGAIN; /* done again on a disk thread: the same bytes */
                    goto out_nodetail;
                }
                goto out;
            }
            done += (uint64_t)put;
        }
        src += extents[i].length;
    }
    if (sync && fdatasync(handle.fd) != 0) {
        rc = -errno;
        goto out;
    }
    if (!sync && total >= SFS_CHUNK_EARLY_WRITEBACK_MIN) {
        sfs_chunk_start_writeback(target, handle.fd, extents, count);
    }
    if (target->capacity_limit && end > before) {
        __atomic_add_fetch(&target->used_bytes, end - before, __ATOMIC_RELAXED);
    }
    /* the chunk file is at least this long (exact only with a capacity limit) */
    *length_p = end > before ? end : before;
out:
    if (rc) {
        sfs_error_set(rc, "target %u: writing chunk %016" PRIx64 " failed: %s", target->id,
                      entry_id, sfs_strerror(rc));
    }
out_nodetail:
    sfs_chunk_fd_put(target, &handle);
    return rc;
}

int sfs_chunk_read(sfs_chunk_target_t *target, uint64_t entry_id, const sfs_io_extent_t *extents,
                   uint32_t count, void *buf, unsigned flags, uint64_t *length_p)
{
    int                nowait = (flags & SFS_CHUNK_IO_NOWAIT) != 0;
    uint8_t           *dst    = buf;
    sfs_chunk_handle_t handle;
    struct stat        st;
    uint64_t           total = 0;
    int                rc;

    for (uint32_t i = 0; i < count; i++) {
        total += extents[i].length;
    }
    rc = nowait ? sfs_chunk_fd_get_cached(target, entry_id, &handle)
                : sfs_chunk_fd_get(target, entry_id, 0, &handle);
    if (rc == -EAGAIN) {
        return rc;
    }
    if (rc == -ENOENT) {
        memset(buf, 0, total);
        *length_p = 0;
        return 0;
    }
    if (rc) {
        return sfs_error_set(rc, "target %u: cannot open chunk %016" PRIx64 ": %s", target->id,
                             entry_id, strerror(-rc));
    }
    if (fstat(handle.fd, &st) != 0) {
        rc = -errno;
        goto out;
    }
    sfs_chunk_throttle(target, total);
    for (uint32_t i = 0; i < count; i++) {
        uint64_t done = 0;

        while (done < extents[i].length) {
            struct iovec iov = {.iov_base = dst + done, .iov_len = extents[i].length - done};
            ssize_t      got = preadv2(handle.fd, &iov, 1, (off_t)(extents[i].chunk_offset + done),
                                  nowait ? RWF_NOWAIT : 0);

            if (got < 0) {
                if (errno == EINTR) {
                    continue;
                }
                rc = -errno;
                if (nowait && (rc == -EAGAIN || rc == -EOPNOTSUPP)) {
                    rc = -EAGAIN; /* not in the page cache: read on a disk thread */
                    sfs_chunk_fd_put(target, &handle);
                    return rc;
                }
                goto out;
            }
            if (got == 0) {
                /* past the end of the chunk file: a hole */
                memset(dst + done, 0, extents[i].length - done);
                break;
            }
            done += (uint64_t)got;
        }
        dst += extents[i].length;
    }
    *length_p = (uint64_t)st.st_size;
out:
    if (rc) {
        sfs_error_set(rc, "target %u: reading chunk %016" PRIx64 " failed: %s", target->id,
                      entry_id, sfs_strerror(rc));
    }
    sfs_chunk_fd_put(target, &handle);
    return rc;
}

int sfs_chunk_stat(sfs_chunk_target_t *target, uint64_t entry_id, uint64_t *length_p)
{
    char        name[32];
    struct stat st;

    sfs_chunk_name(entry_id, name, sizeof(name));
    if (fstatat(target->chunks_fd, name, &st, 0) != 0) {
        if (errno == ENOENT) {
            *length_p = 0;
            return 0;
        }
        return sfs_error_set(-errno, "target %u: stat chunk %016" PRIx64 ": %m", target->id,
                             entry_id);
    }
    *length_p = (uint64_t)st.st_size;
    return 0;
}

int sfs_chunk_open_readonly(sfs_chunk_target_t *target, uint64_t entry_id)
{
    int fd = sfs_chunk_open(target, entry_id, O_RDONLY);

    if (fd < 0 && fd != -ENOENT) {
        sfs_error_set(fd, "target %u: cannot open chunk %016" PRIx64 ": %s", target->id, entry_id,
                      strerror(-fd));
    }
    return fd;
}

/* A file must not shrink under a mapped read: the pages past the new end
 * would fault (SIGBUS) when the transport copies from them. Shrinking is
 * rare: it waits until the replies that map the file have gone (bounded
 * by the transport's own timeouts on a dead client) and truncates with
 * the cache locked, so that no new mapping sees the old length. */
static int sfs_chunk_shrink(sfs_chunk_target_t *target, uint64_t entry_id, int fd, uint64_t length)
{
    int slot, rc = 0;

    pthread_mutex_lock(&target->fd_lock);
    slot = sfs_chunk_fd_find(target, entry_id);
    if (slot >= 0 && target->fds[slot].mapped > 0) {
        sfs_debug("target %u: shrinking chunk %016" PRIx64 " waits for %u mapped reads", target->id,
                  entry_id, target->fds[slot].mapped);
    }
    while ((slot = sfs_chunk_fd_find(target, entry_id)) >= 0 && target->fds[slot].mapped > 0) {
        pthread_cond_wait(&target->unmapped, &target->fd_lock);
    }
    if (ftruncate(fd, (off_t)length) != 0) {
        rc = -errno;
    }
    pthread_mutex_unlock(&target->fd_lock);
    return rc;
}

static void sfs_chunk_map_end(sfs_chunk_target_t *target, int slot)
{
    pthread_mutex_lock(&target->fd_lock);
    target->fds[slot].mapped--;
    pthread_cond_broadcast(&target->unmapped);
    pthread_mutex_unlock(&target->fd_lock);
}

/* Whether the mapping's pages are in the page cache, judged by a sample
 * (the first, the last and three between): checking every page costs
 * about a sixth of the copy it would save, and files are read into and
 * evicted from the cache in long runs. A miss costs one wait for the disk. */
static int sfs_chunk_resident(void *addr, uint64_t length, long page)
{
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

/* [start, end) of the slot's file through its lasting mapping, made or
 * widened if no other mapped read uses it now (we are counted in `mapped`);
 * MAP_FAILED if it cannot serve (then map the extent alone). The mapping may
 * reach past the end of the file: only bytes inside it are ever read, and
 * the file cannot shrink while a mapped read is in flight. */
static void *sfs_chunk_kept_map(sfs_chunk_target_t *target, int slot, uint64_t start, uint64_t end,
                                uint64_t file_length)
{
    sfs_chunk_fd_t *e    = &target->fds[slot];
    void           *addr = MAP_FAILED;
    uint64_t        length;

    if (end > SFS_CHUNK_KEEP_MAP_MAX) {
        return MAP_FAILED;
    }
    pthread_mutex_lock(&target->fd_lock);
    if (e->kept_map && end <= e->kept_length) {
        addr = (uint8_t *)e->kept_map + start;
    } else if (e->mapped == 1) { /* nobody else reads through the old one */
        length = (file_length + SFS_CHUNK_KEEP_MAP_ROUND - 1) / SFS_CHUNK_KEEP_MAP_ROUND *
                 SFS_CHUNK_KEEP_MAP_ROUND;
        if (length > SFS_CHUNK_KEEP_MAP_MAX) {
            length = SFS_CHUNK_KEEP_MAP_MAX;
        }
        if (e->kept_map && munmap(e->kept_map, e->kept_length) != 0) {
            sfs_warn("target %u: munmap failed: %m", target->id);
        }
        e->kept_map = mmap(NULL, length, PROT_READ, MAP_SHARED, e->fd, 0);
        if (e->kept_map == MAP_FAILED) {
            e->kept_map    = NULL;
            e->kept_length = 0;
        } else {
            e->kept_length = length;
            addr           = (uint8_t *)e->kept_map + start;
        }
    }
    pthread_mutex_unlock(&target->fd_lock);
    return addr;
}

int sfs_chunk_read_map(sfs_chunk_target_t *target, uint64_t entry_id, const sfs_io_extent_t *extent,
                       sfs_chunk_map_t *map, uint64_t *length_p)
{
    sfs_chunk_handle_t handle;
    struct stat        st;
    long               page  = sysconf(_SC_PAGESIZE);
    uint64_t           start = extent->chunk_offset & ~((uint64_t)page - 1);
    uint64_t           end   = extent->chunk_offset + extent->length;
    void              *addr;
    int                kept = 0;
    int                rc;

    memset(map, 0, sizeof(*map));
    if (target->bandwidth || extent->length == 0) {
        return -EAGAIN;
    }
    rc = sfs_chunk_fd_get(target, entry_id, 0, &handle);
    if (rc) {
        return rc == -ENOENT ? -EAGAIN
                             : sfs_error_set(rc, "target %u: cannot open chunk %016" PRIx64 ": %s",
                                             target->id, entry_id, strerror(-rc));
    }
    /* only a cached file can be guarded against shrinking */
    if (handle.slot < 0) {
        sfs_chunk_fd_put(target, &handle);
        return -EAGAIN;
    }
    /* counted before the length is read: a shrink after this waits */
    pthread_mutex_lock(&target->fd_lock);
    target->fds[handle.slot].mapped++;
    pthread_mutex_unlock(&target->fd_lock);
    /* only bytes inside the file can be mapped (past its end: zeros) */
    addr = MAP_FAILED;
    if (fstat(handle.fd, &st) == 0 && (uint64_t)st.st_size >= end) {
        addr = sfs_chunk_kept_map(target, handle.slot, start, end, (uint64_t)st.st_size);
        kept = addr != MAP_FAILED;
        if (!kept) {
            addr = mmap(NULL, end - start, PROT_READ, MAP_SHARED, handle.fd, (off_t)start);
        }
    }
    /* only pages in the page cache: the transport must never wait for
     * the disk (a read that needs the disk copies on a disk thread) */
    if (addr != MAP_FAILED && !sfs_chunk_resident(addr, end - start, page)) {
        if (!kept && munmap(addr, end - start) != 0) {
            sfs_warn("target %u: munmap failed: %m", target->id);
        }
        addr = MAP_FAILED;
    }
    if (addr == MAP_FAILED) {
        sfs_chunk_map_end(target, handle.slot);
        sfs_chunk_fd_put(target, &handle);
        return -EAGAIN;
    }
    /* the handle's reference keeps the slot (and its entry) until unmap */
    map->addr     = addr;
    map->length   = end - start;
    map->kept     = kept;
    map->data     = (uint8_t *)addr + (extent->chunk_offset - start);
    map->slot     = handle.slot;
    map->fd       = handle.fd;
    map->entry_id = entry_id;
    *length_p     = (uint64_t)st.st_size;
    return 0;
}

void sfs_chunk_unmap(sfs_chunk_target_t *target, sfs_chunk_map_t *map)
{
    sfs_chunk_handle_t handle = {.fd = map->fd, .slot = map->slot};

    if (!map->addr) {
        return;
    }
    if (!map->kept && munmap(map->addr, map->length) != 0) {
        sfs_warn("target %u: munmap of chunk %016" PRIx64 " failed: %m", target->id, map->entry_id);
    }
    sfs_chunk_map_end(target, map->slot);
    sfs_chunk_fd_put(target, &handle);
    map->addr = NULL;
}

int sfs_chunk_truncate(sfs_chunk_target_t *target, uint64_t entry_id, uint64_t length,
                       uint32_t mode)
{
    struct stat st;
    int         fd, rc = 0;

    fd = sfs_chunk_open(target, entry_id, O_RDWR | (mode == SFS_TRUNCATE_EXACT ? O_CREAT : 0));
    if (fd == -ENOENT) {
        return 0; /* shrinking a chunk file that does not exist */
    }
    if (fd < 0) {
        return sfs_error_set(fd, "target %u: cannot open chunk %016" PRIx64 ": %s", target->id,
                             entry_id, strerror(-fd));
    }
    if (fstat(fd, &st) != 0) {
        rc = -errno;
    } else if ((uint64_t)st.st_size != length &&
               (mode == SFS_TRUNCATE_EXACT || (uint64_t)st.st_size > length)) {
        if ((uint64_t)st.st_size > length) {
            rc = sfs_chunk_shrink(target, entry_id, fd, length);
        } else if (ftruncate(fd, (off_t)length) != 0) {
            rc = -errno;
        }
        if (rc == 0 && (uint64_t)st.st_size > length) {
            __atomic_sub_fetch(&target->used_bytes, (uint64_t)st.st_size - length,
                               __ATOMIC_RELAXED);
        } else if (rc == 0) {
            __atomic_add_fetch(&target->used_bytes, length - (uint64_t)st.st_size,
                               __ATOMIC_RELAXED);
        }
    }
    close(fd);
    if (rc) {
        return sfs_error_set(rc, "target %u: truncating chunk %016" PRIx64 ": %s", target->id,
                             entry_id, strerror(-rc));
    }
    return 0;
}

int sfs_chunk_fsync(sfs_chunk_target_t *target, uint64_t entry_id)
{
    sfs_chunk_handle_t handle;
    int                rc = sfs_chunk_fd_get(target, entry_id, 0, &handle);

    if (rc == -ENOENT) {
        return 0;
    }
    if (rc) {
        return sfs_error_set(rc, "target %u: cannot open chunk %016" PRIx64 ": %s", target->id,
                             entry_id, strerror(-rc));
    }
    if (fdatasync(handle.fd) != 0) {
        rc = sfs_error_set(-errno, "target %u: fsync chunk %016" PRIx64 ": %m", target->id,
                           entry_id);
    }
    sfs_chunk_fd_put(target, &handle);
    return rc;
}

int sfs_chunk_unlink(sfs_chunk_target_t *target, uint64_t entry_id)
{
    char        name[32];
    struct stat st;

    sfs_chunk_fd_forget(target, entry_id);
    sfs_chunk_name(entry_id, name, sizeof(name));
    if (fstatat(target->chunks_fd, name, &st, 0) != 0) {
        return errno == ENOENT ? 0 : sfs_error_set(-errno, "target %u: stat chunk: %m", target->id);
    }
    if (unlinkat(target->chunks_fd, name, 0) != 0) {
        return errno == ENOENT ? 0
                               : sfs_error_set(-errno, "target %u: unlink chunk %016" PRIx64 ": %m",
                                               target->id, entry_id);
    }
    __atomic_sub_fetch(&target->used_bytes, (uint64_t)st.st_size, __ATOMIC_RELAXED);
    return 0;
}

typedef struct sfs_chunk_entry {
    uint64_t id;
    uint64_t length;
} sfs_chunk_entry_t;

static int sfs_chunk_entry_cmp(const void *a, const void *b)
{
    const sfs_chunk_entry_t *x = a, *y = b;

    return x->id < y->id ? -1 : x->id > y->id;
}

int sfs_chunk_list(sfs_chunk_target_t *target, uint64_t after, uint32_t max, uint64_t *ids,
                   uint64_t *lengths, uint32_t *count_p)
{
    sfs_chunk_entry_t *found = NULL;
    size_t             count = 0, capacity = 0;

    /* a full walk per page: simple, and fsck is not a hot path */
    for (unsigned sub = 0; sub < 256; sub++) {
        char           name[4];
        int            fd;
        DIR           *dir;
        struct dirent *de;

        snprintf(name, sizeof(name), "%02x", sub);
        fd = openat(target->chunks_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || !(dir = fdopendir(fd))) {
            if (fd >= 0) {
                close(fd);
            }
            continue;
        }
        while ((de = readdir(dir)) != NULL) {
            char       *end;
            uint64_t    id;
            struct stat st;

            if (de->d_name[0] == '.') {
                continue;
            }
            id = strtoull(de->d_name, &end, 16);
            if (*end != '\0' || id <= after || fstatat(dirfd(dir), de->d_name, &st, 0) != 0) {
                continue;
            }
            if (count == capacity) {
                sfs_chunk_entry_t *grown;

                capacity = capacity ? capacity * 2 : 1024;
                grown    = realloc(found, capacity * sizeof(*grown));
                if (!grown) {
                    closedir(dir);
                    free(found);
                    return -ENOMEM;
                }
                found = grown;
            }
            found[count].id       = id;
            found[count++].length = (uint64_t)st.st_size;
        }
        closedir(dir);
    }
    if (count) {
        qsort(found, count, sizeof(*found), sfs_chunk_entry_cmp);
    }
    *count_p = (uint32_t)(count < max ? count : max);
    for (uint32_t i = 0; i < *count_p; i++) {
        ids[i]     = found[i].id;
        lengths[i] = found[i].length;
    }
    free(found);
    return 0;
}
