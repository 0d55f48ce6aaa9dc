/*
 * The primary's change log while its buddy is away (sfs_mirror_log.h).
 * Entries are kept in memory too (in order, with an open-addressing set so
 * that a chunk file written again costs no disk I/O).
 */
#define SFS_LOG_FAC "storage"
#include "sfs_mirror_log.h"

#include "sfs_dirsync.h"
#include "sfs_errno.h"
#include "sfs_log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sfs_mirror_log {
    char      path[PATH_MAX];
    char      dir[PATH_MAX];
    uint32_t  target_id;
    uint32_t  buddy_id;
    int       fd; /* -1 while the buddy is good */
    uint64_t *ids;
    uint32_t  count, room;
    uint64_t *set; /* id + 1 per slot, 0 = free; size set_size (a power of 2) */
    uint32_t  set_size;
    uint32_t  copied;     /* entries [0, copied) are on the buddy (a resync's passes) */
    uint32_t  pass_end;   /* the pass under way copies [copied, pass_end) */
    uint32_t  set_from;   /* the set holds the ids of entries [set_from, count) */
    uint64_t  generation; /* passes begun + clears */
};

static int sfs_mirror_log_has(const sfs_mirror_log_t *log, uint64_t id)
{
    if (!log->set_size) {
        return 0;
    }
    for (uint32_t i = (uint32_t)(id * 0x9e3779b97f4a7c15ull) & (log->set_size - 1);;
         i          = (i + 1) & (log->set_size - 1)) {
        if (log->set[i] == 0) {
            return 0;
        }
        if (log->set[i] == id + 1) {
            return 1;
        }
    }
}

static void sfs_mirror_log_set_put(uint64_t *set, uint32_t size, uint64_t id)
{
    uint32_t i = (uint32_t)(id * 0x9e3779b97f4a7c15ull) & (size - 1);

    while (set[i] != 0) {
        i = (i + 1) & (size - 1);
    }
    set[i] = id + 1;
}

/* Add an entry to memory, recorded or not. */
static int sfs_mirror_log_append(sfs_mirror_log_t *log, uint64_t id)
{
    if (log->count == log->room) {
        uint32_t  room = log->room ? log->room * 2 : 64;
        uint64_t *ids  = realloc(log->ids, room * sizeof(*ids));

        if (!ids) {
            return -ENOMEM;
        }
        log->ids  = ids;
        log->room = room;
    }
    if ((uint64_t)(log->count + 1) * 2 > log->set_size) {
        uint32_t  size = log->set_size ? log->set_size * 2 : 128;
        uint64_t *set  = calloc(size, sizeof(*set));

        if (!set) {
            return -ENOMEM;
        }
        for (uint32_t i = log->set_from; i < log->count; i++) {
            sfs_mirror_log_set_put(set, size, log->ids[i]);
        }
        free(log->set);
        log->set      = set;
        log->set_size = size;
    }
    sfs_mirror_log_set_put(log->set, log->set_size, id);
    log->ids[log->count++] = id;
    return 0;
}

/* Add to memory only. */
static int sfs_mirror_log_add(sfs_mirror_log_t *log, uint64_t id)
{
    if (sfs_mirror_log_has(log, id)) {
        return 0;
    }
    return sfs_mirror_log_append(log, id);
}

static int sfs_mirror_log_load(sfs_mirror_log_t *log)
{
    FILE *f = fopen(log->path, "r");
    char  line[128];
    long  good_end; /* the end of the last complete line */
    int   rc = 0, torn = 0;

    if (!f) {
        return errno == ENOENT ? 0 : sfs_error_set(-errno, "cannot read %s: %m", log->path);
    }
    if (!fgets(line, sizeof(line), f) || strncmp(line, "stripefs mirror changes:", 24) != 0 ||
        !strchr(line, '\n')) {
        /* created, crashed before the header was complete: nothing was
         * answered. Removed, so that nothing is ever appended to a torn
         * header (the next change creates the log again). */
        fclose(f);
        sfs_warn("%s: no header, read as an empty change log and removed", log->path);
        return unlink(log->path) == 0 || errno == ENOENT
                   ? 0
                   : sfs_error_set(-errno, "cannot remove %s: %m", log->path);
    }
    good_end = ftell(f);
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        char              *end;
        unsigned long long id;

        if (!strchr(line, '\n')) {
            sfs_warn("%s: a torn last line ignored (its request was not answered)", log->path);
            torn = 1;
            break;
        }
        good_end = ftell(f);
        errno    = 0;
        id       = strtoull(line, &end, 10);
        if (errno || end == line || *end != '\n') {
            rc = sfs_error_set(-EBADMSG, "%s: not an entry id: %.40s", log->path, line);
            break;
        }
        rc = sfs_mirror_log_add(log, id);
    }
    fclose(f);
    if (rc == 0 && torn && truncate(log->path, good_end) != 0) {
        /* the next line must not be appended to the torn one */
        rc = sfs_error_set(-errno, "cannot cut the torn line of %s: %m", log->path);
    }
    if (rc == 0) {
        log->fd = open(log->path, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (log->fd < 0) {
            rc = sfs_error_set(-errno, "cannot open %s: %m", log->path);
        }
    }
    return rc;
}

int sfs_mirror_log_open(const char *dir, uint32_t target_id, uint32_t buddy_id,
                        sfs_mirror_log_t **log_p)
{
    sfs_mirror_log_t *log = calloc(1, sizeof(*log));
    int               rc;

    if (!log) {
        return -ENOMEM;
    }
    log->fd        = -1;
    log->target_id = target_id;
    log->buddy_id  = buddy_id;
    snprintf(log->dir, sizeof(log->dir), "%s", dir);
    if (snprintf(log->path, sizeof(log->path), "%s/%s", dir, SFS_MIRROR_LOG_NAME) >=
        (int)sizeof(log->path)) {
        free(log);
        return sfs_error_set(-ENAMETOOLONG, "target %" PRIu32 ": %s is too long", target_id, dir);
    }
    rc = sfs_mirror_log_load(log);
    if (rc) {
        sfs_mirror_log_close(log);
        return rc;
    }
    if (log->fd >= 0) {
        sfs_warn("target %" PRIu32 ": its buddy %" PRIu32 " needs a resync of %" PRIu32
                 " chunk files (%s)",
                 target_id, buddy_id, log->count, log->path);
    }
    *log_p = log;
    return 0;
}

void sfs_mirror_log_close(sfs_mirror_log_t *log)
{
    if (!log) {
        return;
    }
    if (log->fd >= 0) {
        close(log->fd);
    }
    free(log->ids);
    free(log->set);
    free(log);
}

int sfs_mirror_log_degraded(const sfs_mirror_log_t *log)
{
    return log->fd >= 0;
}

uint32_t sfs_mirror_log_target(const sfs_mirror_log_t *log)
{
    return log->target_id;
}

uint32_t sfs_mirror_log_buddy(const sfs_mirror_log_t *log)
{
    return log->buddy_id;
}

uint32_t sfs_mirror_log_count(const sfs_mirror_log_t *log)
{
    return log->count;
}

uint64_t sfs_mirror_log_entry(const sfs_mirror_log_t *log, uint32_t i)
{
    return i < log->count ? log->ids[i] : 0;
}

static int sfs_mirror_log_write(sfs_mirror_log_t *log, const char *text)
{
    size_t  len    = strlen(text);
    off_t   before = lseek(log->fd, 0, SEEK_END);
    ssize_t n      = write(log->fd, text, len);

    if (n != (ssize_t)len) {
        int rc = sfs_error_set(n < 0 ? -errno : -EIO, "cannot append to %s: %s", log->path,
                               n < 0 ? strerror(errno) : "short write");

        /* a part of a line would join the next one into a wrong id */
        if (n > 0 && before >= 0 && ftruncate(log->fd, before) != 0) {
            sfs_warn("%s: cannot cut a short write: %m", log->path);
        }
        return rc;
    }
    if (fdatasync(log->fd) != 0) {
        return sfs_error_set(-errno, "cannot sync %s: %m", log->path);
    }
    return 0;
}

int sfs_mirror_log_begin(sfs_mirror_log_t *log)
{
    char header[96];
    int  rc;

    if (log->fd >= 0) {
        return 0;
    }
    log->fd = open(log->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (log->fd < 0) {
        return sfs_error_set(-errno, "cannot create %s: %m", log->path);
    }
    snprintf(header, sizeof(header),
             "stripefs mirror changes: target %" PRIu32 " buddy %" PRIu32 "\n", log->target_id,
             log->buddy_id);
    rc = sfs_mirror_log_write(log, header);
    if (rc == 0) {
        /* the file's name must survive a crash too */
        rc = sfs_fsync_dir(log->dir);
        if (rc) {
            rc = sfs_error_set(rc, "cannot sync %s: %s", log->dir, strerror(-rc));
        }
    }
    if (rc) {
        close(log->fd);
        log->fd = -1;
        unlink(log->path);
        return rc;
    }
    sfs_warn("target %" PRIu32 ": serving alone, its buddy %" PRIu32
             " needs a resync; changed chunk files are listed in %s",
             log->target_id, log->buddy_id, log->path);
    return 0;
}

int sfs_mirror_log_note(sfs_mirror_log_t *log, uint64_t entry_id)
{
    char line[32];
    int  rc;

    if (log->fd >= 0 && sfs_mirror_log_has(log, entry_id)) {
        return 0;
    }
    rc = sfs_mirror_log_begin(log);
    if (rc) {
        return rc;
    }
    snprintf(line, sizeof(line), "%" PRIu64 "\n", entry_id);
    rc = sfs_mirror_log_write(log, line);
    return rc ? rc : sfs_mirror_log_add(log, entry_id);
}

int sfs_mirror_log_clear(sfs_mirror_log_t *log)
{
    if (log->fd < 0) {
        return 0;
    }
    if (unlink(log->path) != 0 && errno != ENOENT) {
        return sfs_error_set(-errno, "cannot remove %s: %m", log->path);
    }
    close(log->fd);
    log->fd = -1;
    log->generation++;
    log->count    = 0;
    log->copied   = 0;
    log->pass_end = 0;
    log->set_from = 0;
    free(log->set);
    log->set      = NULL;
    log->set_size = 0;
    sfs_info("target %" PRIu32 ": its buddy %" PRIu32 " is in sync again", log->target_id,
             log->buddy_id);
    return 0;
}

/* The set made again from entries [from, count) (it is sized for all). */
static int sfs_mirror_log_reset_set(sfs_mirror_log_t *log, uint32_t from)
{
    log->set_from = from;
    if (log->set_size) {
        memset(log->set, 0, (size_t)log->set_size * sizeof(*log->set));
    }
    for (uint32_t i = from; i < log->count; i++) {
        if (!sfs_mirror_log_has(log, log->ids[i])) {
            sfs_mirror_log_set_put(log->set, log->set_size, log->ids[i]);
        }
    }
    return 0;
}

void sfs_mirror_log_pass_begin(sfs_mirror_log_t *log, uint32_t *first_p, uint32_t *end_p)
{
    log->pass_end = log->count;
    log->generation++;
    /* recorded again if changed during the pass: a new entry */
    sfs_mirror_log_reset_set(log, log->count);
    *first_p = log->copied;
    *end_p   = log->pass_end;
}

int sfs_mirror_log_pass_done(sfs_mirror_log_t *log)
{
    log->copied = log->pass_end;
    return log->copied == log->count;
}

int sfs_mirror_log_pass_abandon(sfs_mirror_log_t *log)
{
    log->pass_end = log->copied;
    return sfs_mirror_log_reset_set(log, log->copied);
}

uint64_t sfs_mirror_log_generation(const sfs_mirror_log_t *log)
{
    return log->generation;
}

uint32_t sfs_mirror_log_copied(const sfs_mirror_log_t *log)
{
    return log->copied;
}
