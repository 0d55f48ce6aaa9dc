/*
 * Directory streams. A stripefs DIR* is our own struct (glibc's is opaque):
 * every open one is on a list, and the dirent calls check that list before
 * handing a DIR* on to libc. Entries come from sfs_readdir a page at a
 * time, resuming after the last name, with "." and ".." first as a local
 * file system gives them.
 *
 * A page comes with its entries' attributes (sfs_readdir_attrs: one round
 * trip, as NFS's READDIRPLUS), kept for the stats that follow
 * (sfs_preload_listed.c says which they answer): `ls -l` stats every
 * entry as it reads it. A stream whose page no stat used fetches the next
 * one plain (`ls`, and `find` until it stats), and goes back to attributes
 * once a stat wanted an entry of a plain page.
 */
#include "sfs_preload.h"

#include "sfs_time.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SFS_PL_DIR_PAGE SFS_PL_LISTED_PAGE /* entries per sfs_readdir call */

_Static_assert(sizeof(struct dirent) == sizeof(struct dirent64), "struct dirent64 differs");

typedef struct sfs_pl_dir {
    struct sfs_pl_dir *next; /* the list of open stripefs streams */
    int                fd;   /* owned: closedir closes it */
    char               path[SFS_PL_PATH_MAX];
    uint64_t           entry_id; /* its open's (0: look it up for ".") */
    long               position; /* entries returned so far (telldir) */
    sfs_dir_entry_t    page[SFS_PL_DIR_PAGE];
    uint32_t           count, next_index;
    int                eof;
    uint64_t           page_ticket; /* the last page's (sfs_pl_listed_keep/plain) */
    int                plain;       /* fetch pages without attributes */
    char               after[256];  /* resume point: the last name returned */
    struct dirent64    entry;
} sfs_pl_dir_t;

SFS_REAL_DECL(opendir);
SFS_REAL_DECL(fdopendir);
SFS_REAL_DECL(readdir);
SFS_REAL_DECL(readdir64);
/* readdir_r is deprecated, but old programs still call it */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
SFS_REAL_DECL(readdir_r);
SFS_REAL_DECL(readdir64_r);
#pragma GCC diagnostic pop
SFS_REAL_DECL(closedir);
SFS_REAL_DECL(rewinddir);
SFS_REAL_DECL(telldir);
SFS_REAL_DECL(seekdir);
SFS_REAL_DECL(dirfd);
SFS_REAL_DECL(scandir);
SFS_REAL_DECL(scandir64);

static pthread_mutex_t sfs_pl_dirs_lock = PTHREAD_MUTEX_INITIALIZER;
static sfs_pl_dir_t   *sfs_pl_dirs;
static int             sfs_pl_dir_count;

/* Ours, or NULL for a libc stream (no lock taken while none is open). */
static sfs_pl_dir_t *sfs_pl_dir_find(DIR *stream)
{
    sfs_pl_dir_t *dir;

    if (sfs_pl_busy || !stream || !__atomic_load_n(&sfs_pl_dir_count, __ATOMIC_ACQUIRE)) {
        return NULL;
    }
    pthread_mutex_lock(&sfs_pl_dirs_lock);
    for (dir = sfs_pl_dirs; dir && (DIR *)dir != stream; dir = dir->next) {
    }
    pthread_mutex_unlock(&sfs_pl_dirs_lock);
    return dir;
}

/* A stream over our directory descriptor fd (which it then owns). */
static DIR *sfs_pl_dir_create(int fd)
{
    sfs_pl_dir_t *dir;
    int           is_dir = 0, found;

    sfs_pl_lock();
    {
        sfs_pl_fd_t *entry = sfs_pl_fd_get(fd);

        found = entry != NULL;
        if (found) {
            is_dir = entry->ofd->is_dir;
        }
        dir = found && is_dir ? calloc(1, sizeof(*dir)) : NULL;
        if (dir) {
            snprintf(dir->path, sizeof(dir->path), "%s", entry->ofd->path);
            dir->entry_id = entry->ofd->entry_id;
        }
    }
    sfs_pl_unlock();
    if (!dir) {
        errno = !found ? EBADF : !is_dir ? ENOTDIR : ENOMEM;
        return NULL;
    }
    dir->fd = fd;
    pthread_mutex_lock(&sfs_pl_dirs_lock);
    dir->next   = sfs_pl_dirs;
    sfs_pl_dirs = dir;
    __atomic_add_fetch(&sfs_pl_dir_count, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&sfs_pl_dirs_lock);
    return (DIR *)dir;
}

SFS_PL_EXPORT DIR *opendir(const char *path)
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);
    int  fd, saved;
    DIR *stream;

    if (!rc) {
        return SFS_REAL(opendir)(path);
    }
    fd = rc < 0 ? rc : sfs_pl_open_path(sfs_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0) {
        sfs_pl_fail(fd, "opendir", sfs_path);
        return NULL;
    }
    stream = sfs_pl_dir_create(fd);
    if (!stream) {
        saved = errno;
        sfs_pl_close_fd(fd);
        errno = saved;
    }
    return stream;
}

SFS_PL_EXPORT DIR *fdopendir(int fd)
{
    return sfs_pl_fd_is_ours(fd) ? sfs_pl_dir_create(fd) : SFS_REAL(fdopendir)(fd);
}

/* The entry id of a directory for "." and "..": a lookup; 1 if that fails
 * (0 would read as a deleted entry to some programs). */
static uint64_t sfs_pl_dir_id(const char *sfs_path)
{
    sfs_stat_t s;

    return sfs_pl_stat_path(sfs_path, 0, &s) == 0 && s.entry_id ? s.entry_id : 1;
}

/* Whether the page to fetch brings attributes: not after a page that no
 * stat used (one with attributes none took, a plain one none wanted). */
static int sfs_pl_dir_with_attrs(sfs_pl_dir_t *dir)
{
    if (dir->page_ticket) {
        dir->plain = !sfs_pl_listed_used_by_stats(dir->page_ticket);
    }
    return sfs_pl_list_attrs() && !dir->plain && !sfs_pl_listed_refused(dir->path);
}

/* The next page after dir->after, with attributes kept for stats
 * (sfs_pl_listed_keep): 0 or -errno. */
static int sfs_pl_dir_fetch_attrs(sfs_pl_dir_t *dir)
{
    sfs_client_t    *client;
    sfs_dir_entry_t *entries  = malloc(SFS_PL_DIR_PAGE * sizeof(*entries));
    sfs_stat_t      *stats    = malloc(SFS_PL_DIR_PAGE * sizeof(*stats));
    uint64_t         asked_ms = 0, calls = 0;
    int              rc = entries && stats ? sfs_pl_enter_to_read(&client) : -ENOMEM;

    if (rc == 0) {
        /* (a change made from now on, by any thread, ends the attributes) */
        asked_ms = sfs_time_ms();
        calls    = sfs_pl_call_count();
        rc       = sfs_readdir_attrs(client, dir->path, dir->after, entries, stats, SFS_PL_DIR_PAGE,
                                     &dir->count, &dir->eof);
        sfs_pl_unlock();
    }
    if (rc) {
        free(entries);
        free(stats);
        return rc;
    }
    memcpy(dir->page, entries, dir->count * sizeof(*entries));
    dir->page_ticket = sfs_pl_listed_keep(dir->path, dir->after, dir->eof, entries, stats,
                                          dir->count, asked_ms, calls);
    return 0;
}

/* The next page after dir->after: 0 or -errno. */
static int sfs_pl_dir_fetch(sfs_pl_dir_t *dir)
{
    sfs_client_t *client;
    int           rc = -EOPNOTSUPP;

    if (sfs_pl_dir_with_attrs(dir)) {
        rc = sfs_pl_dir_fetch_attrs(dir);
        if (rc == -EACCES || rc == -EOPNOTSUPP) {
            /* a directory one may read but not search (its entries' stats
             * fail, as on a local file system), or an older server: not
             * asked again */
            sfs_pl_listed_refuse(dir->path);
        }
        if (rc != -EACCES && rc != -EOPNOTSUPP && rc != -ENOMEM) {
            goto out;
        }
    }
    rc = sfs_pl_enter_to_read(&client);
    if (rc == 0) {
        rc = sfs_readdir(client, dir->path, dir->after, dir->page, SFS_PL_DIR_PAGE, &dir->count,
                         &dir->eof);
        sfs_pl_unlock();
    }
    if (rc == 0) {
        dir->page_ticket =
            sfs_pl_listed_plain(dir->path, dir->after, dir->eof, dir->page, dir->count);
    }
out:
    if (rc) {
        dir->count       = 0;
        dir->page_ticket = 0;
    }
    return rc;
}

/* The next entry, or NULL at the end (errno untouched) or on error. */
static struct dirent64 *sfs_pl_dir_next(sfs_pl_dir_t *dir)
{
    struct dirent64 *out   = &dir->entry;
    int              saved = errno;
    int              rc;

    memset(out, 0, sizeof(*out));
    if (dir->position < 2) {
        char  parent[SFS_PL_PATH_MAX];
        char *slash;

        snprintf(parent, sizeof(parent), "%s", dir->path);
        slash = strrchr(parent, '/');
        if (dir->position == 1 && slash) {
            slash[slash == parent ? 1 : 0] = '\0';
        }
        /* ".": the entry the open looked up (ids never change), no lookup */
        out->d_ino  = dir->position == 0 && dir->entry_id
                          ? dir->entry_id
                          : sfs_pl_dir_id(dir->position == 0 ? dir->path : parent);
        out->d_type = DT_DIR;
        snprintf(out->d_name, sizeof(out->d_name), "%s", dir->position == 0 ? "." : "..");
    } else {
        if (dir->next_index == dir->count) {
            if (dir->eof) {
                errno = saved;
                return NULL;
            }
            rc = sfs_pl_dir_fetch(dir);
            if (rc) {
                dir->next_index = 0;
                sfs_pl_fail(rc, "readdir", dir->path);
                return NULL;
            }
            dir->next_index = 0;
            if (dir->count == 0) {
                dir->eof = 1;
                errno    = saved;
                return NULL;
            }
        }
        {
            const sfs_dir_entry_t *e = &dir->page[dir->next_index++];

            out->d_ino  = e->entry_id ? e->entry_id : 1;
            out->d_type = e->type == SFS_FILE_TYPE_DIR ? DT_DIR : DT_REG;
            snprintf(out->d_name, sizeof(out->d_name), "%s", e->name);
            snprintf(dir->after, sizeof(dir->after), "%s", e->name);
        }
    }
    dir->position++;
    out->d_off    = dir->position;
    out->d_reclen = sizeof(*out);
    errno         = saved;
    return out;
}

SFS_PL_EXPORT struct dirent *readdir(DIR *stream)
{
    sfs_pl_dir_t *dir = sfs_pl_dir_find(stream);

    return dir ? (struct dirent *)sfs_pl_dir_next(dir) : SFS_REAL(readdir)(stream);
}

SFS_PL_EXPORT struct dirent64 *readdir64(DIR *stream)
{
    sfs_pl_dir_t *dir = sfs_pl_dir_find(stream);

    return dir ? sfs_pl_dir_next(dir) : SFS_REAL(readdir64)(stream);
}

/* readdir_r: 0 with *result NULL at the end, else an error number. */
static int sfs_pl_dir_next_r(sfs_pl_dir_t *dir, struct dirent64 *entry, struct dirent64 **result)
{
    int              saved = errno;
    struct dirent64 *next;

    errno = 0;
    next  = sfs_pl_dir_next(dir);
    if (!next) {
        int rc = errno;

        errno   = saved;
        *result = NULL;
        return rc;
    }
    errno = saved;
    memcpy(entry, next, sizeof(*entry));
    *result = entry;
    return 0;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

SFS_PL_EXPORT int readdir_r(DIR *stream, struct dirent *entry, struct dirent **result)
{
    sfs_pl_dir_t *dir = sfs_pl_dir_find(stream);

    return dir ? sfs_pl_dir_next_r(dir, (struct dirent64 *)entry, (struct dirent64 **)result)
               : SFS_REAL(readdir_r)(stream, entry, result);
}

SFS_PL_EXPORT int readdir64_r(DIR *stream, struct dirent64 *entry, struct dirent64 **result)
{
    sfs_pl_dir_t *dir = sfs_pl_dir_find(stream);

    return dir ? sfs_pl_dir_next_r(dir, entry, result)
               : SFS_REAL(readdir64_r)(stream, entry, result);
}

#pragma GCC diagnostic pop

static void sfs_pl_dir_rewind(sfs_pl_dir_t *dir)
{
    dir->count      = 0;
    dir->position   = 0;
    dir->next_index = 0;
    dir->eof        = 0;
    dir->after[0]   = '\0';
}

SFS_PL_EXPORT void rewinddir(DIR *stream)
{
    sfs_pl_dir_t *dir = sfs_pl_dir_find(stream);

    if (dir) {
        sfs_pl_dir_rewind(dir);
    } else {
        SFS_REAL(rewinddir)(stream);
    }
}

SFS_PL_EXPORT long telldir(DIR *stream)
{
    sfs_pl_dir_t *dir = sfs_pl_dir_find(stream);

    return dir ? dir->position : SFS_REAL(telldir)(stream);
}

/* Positions are entry counts: go back to the start and skip that many. */
SFS_PL_EXPORT void seekdir(DIR *stream, long position)
{
    sfs_pl_dir_t *dir = sfs_pl_dir_find(stream);

    if (!dir) {
        SFS_REAL(seekdir)(stream, position);
        return;
    }
    if (position < dir->position) {
        sfs_pl_dir_rewind(dir);
    }
    while (dir->position < position && sfs_pl_dir_next(dir)) {
    }
}

SFS_PL_EXPORT int dirfd(DIR *stream)
{
    sfs_pl_dir_t *dir = sfs_pl_dir_find(stream);

    return dir ? dir->fd : SFS_REAL(dirfd)(stream);
}

SFS_PL_EXPORT int closedir(DIR *stream)
{
    sfs_pl_dir_t  *dir = sfs_pl_dir_find(stream);
    sfs_pl_dir_t **link;
    int            rc;

    if (!dir) {
        return SFS_REAL(closedir)(stream);
    }
    pthread_mutex_lock(&sfs_pl_dirs_lock);
    for (link = &sfs_pl_dirs; *link && *link != dir; link = &(*link)->next) {
    }
    if (*link) {
        *link = dir->next;
        __atomic_sub_fetch(&sfs_pl_dir_count, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&sfs_pl_dirs_lock);
    rc = sfs_pl_close_fd(dir->fd);
    free(dir);
    return rc;
}

/* scandir: glibc's own opens the directory internally, past us. */
static int sfs_pl_scandir(const char *sfs_path, struct dirent64 ***list_p,
                          int (*filter)(const struct dirent64 *),
                          int (*compar)(const struct dirent64 **, const struct dirent64 **))
{
    struct dirent64 **list  = NULL, *entry;
    size_t            count = 0, capacity = 0;
    int               fd, saved;
    DIR              *stream;

    fd = sfs_pl_open_path(sfs_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0) {
        return sfs_pl_fail(fd, "scandir", sfs_path);
    }
    stream = sfs_pl_dir_create(fd);
    if (!stream) {
        saved = errno;
        sfs_pl_close_fd(fd);
        errno = saved;
        return -1;
    }
    errno = 0;
    while ((entry = sfs_pl_dir_next((sfs_pl_dir_t *)stream)) != NULL) {
        if (filter && !filter(entry)) {
            continue;
        }
        if (count == capacity) {
            struct dirent64 **bigger;

            capacity = capacity ? 2 * capacity : 64;
            bigger   = realloc(list, capacity * sizeof(*list));
            if (!bigger) {
                errno = ENOMEM;
                break;
            }
            list = bigger;
        }
        list[count] = malloc(sizeof(*entry));
        if (!list[count]) {
            errno = ENOMEM;
            break;
        }
        memcpy(list[count++], entry, sizeof(*entry));
        errno = 0;
    }
    saved = errno;
    closedir(stream);
    if (saved) {
        while (count) {
            free(list[--count]);
        }
        free(list);
        errno = saved;
        return -1;
    }
    if (compar && count > 1) {
        qsort(list, count, sizeof(*list), (int (*)(const void *, const void *))compar);
    }
    *list_p = list;
    return (int)count;
}

SFS_PL_EXPORT int scandir(const char *path, struct dirent ***list_p,
                          int (*filter)(const struct dirent *),
                          int (*compar)(const struct dirent **, const struct dirent **))
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    if (!rc) {
        return SFS_REAL(scandir)(path, list_p, filter, compar);
    }
    if (rc < 0) {
        return sfs_pl_fail(rc, "scandir", sfs_path);
    }
    return sfs_pl_scandir(sfs_path, (struct dirent64 ***)list_p,
                          (int (*)(const struct dirent64 *))filter,
                          (int (*)(const struct dirent64 **, const struct dirent64 **))compar);
}

SFS_PL_EXPORT int scandir64(const char *path, struct dirent64 ***list_p,
                            int (*filter)(const struct dirent64 *),
                            int (*compar)(const struct dirent64 **, const struct dirent64 **))
{
    char sfs_path[SFS_PL_PATH_MAX];
    int  rc = sfs_pl_path(path, sfs_path);

    if (!rc) {
        return SFS_REAL(scandir64)(path, list_p, filter, compar);
    }
    if (rc < 0) {
        return sfs_pl_fail(rc, "scandir", sfs_path);
    }
    return sfs_pl_scandir(sfs_path, list_p, filter, compar);
}
