/*
 * The durable side of sfs_powercut_fs (see sfs_powercut_model.h): nodes
 * (one per backing inode seen), each with its durable attributes, its
 * durable content (a copy in the objects dir, or none: empty) and, for a
 * directory, its durable entries. Single-threaded: the FUSE loop runs -s.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sfs_powercut_model.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PC_HASH 4096

typedef struct {
    char      *name;
    pc_node_t *node;
} pc_entry_t;

struct pc_node {
    uint64_t    id;
    ino_t       ino;
    int         live;    /* in the inode hash */
    int         has_obj; /* objects/<id> holds its durable content */
    int         dirty;   /* written since its last sync */
    unsigned    seen;    /* image pass that wrote it (a directory once) */
    mode_t      mode;
    uid_t       uid;
    gid_t       gid;
    char       *link; /* durable symlink target */
    pc_entry_t *entries;
    size_t      count, cap;
    pc_node_t  *hash_next, *all_next;
};

static struct {
    int        root_fd;
    int        strict;
    char       objects[PATH_MAX / 2];
    uint64_t   next_id;
    pc_node_t *hash[PC_HASH];
    pc_node_t *all;
    pc_node_t *root;
    unsigned   pass;
} pc;

pc_node_t *pc_model_node(const struct stat *st)
{
    pc_node_t **slot = &pc.hash[st->st_ino % PC_HASH];
    pc_node_t  *node;

    for (node = *slot; node; node = node->hash_next) {
        if (node->ino == st->st_ino) {
            return node;
        }
    }
    node = calloc(1, sizeof(*node));
    if (!node) {
        return NULL;
    }
    node->id        = pc.next_id++;
    node->ino       = st->st_ino;
    node->live      = 1;
    node->mode      = st->st_mode;
    node->uid       = st->st_uid;
    node->gid       = st->st_gid;
    node->hash_next = *slot;
    *slot           = node;
    node->all_next  = pc.all;
    pc.all          = node;
    return node;
}

void pc_model_retire(const struct stat *st)
{
    pc_node_t **slot = &pc.hash[st->st_ino % PC_HASH];

    for (; *slot; slot = &(*slot)->hash_next) {
        if ((*slot)->ino == st->st_ino) {
            (*slot)->live = 0;
            *slot         = (*slot)->hash_next;
            return;
        }
    }
}

void pc_model_mark_dirty(pc_node_t *node)
{
    if (node) {
        node->dirty = 1;
    }
}

uint64_t pc_model_dirty_count(void)
{
    uint64_t n = 0;

    for (pc_node_t *node = pc.all; node; node = node->all_next) {
        n += node->live && node->dirty;
    }
    return n;
}

/* Copy from to to, data extents only (sparse files stay sparse). */
static int pc_copy_fd(int from, int to, uint64_t *bytes_p)
{
    struct stat st;
    char        buf[1 << 16];
    off_t       data, hole;

    if (fstat(from, &st) != 0) {
        return -errno;
    }
    for (data = lseek(from, 0, SEEK_DATA); data >= 0 && data < st.st_size;
         data = lseek(from, hole, SEEK_DATA)) {
        hole = lseek(from, data, SEEK_HOLE);
        if (hole < 0) {
            return -errno;
        }
        while (data < hole) {
            size_t want = (size_t)(hole - data) < sizeof(buf) ? (size_t)(hole - data) : sizeof(buf);
            ssize_t got = pread(from, buf, want, data);

            if (got <= 0) {
                return got < 0 ? -errno : -EIO;
            }
            if (pwrite(to, buf, (size_t)got, data) != got) {
                return -errno;
            }
            data += got;
            if (bytes_p) {
                *bytes_p += (uint64_t)got;
            }
        }
    }
    if (data < 0 && errno != ENXIO) {
        return -errno;
    }
    return ftruncate(to, st.st_size) != 0 ? -errno : 0;
}

static void pc_object_path(const pc_node_t *node, char *path, size_t size)
{
    snprintf(path, size, "%s/%llu", pc.objects, (unsigned long long)node->id);
}

/* Snapshot the content of fd as the node's durable content. */
static int pc_snapshot(pc_node_t *node, int fd)
{
    char path[PATH_MAX], tmp[PATH_MAX + 8];
    int  out, rc;

    pc_object_path(node, path, sizeof(path));
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out < 0) {
        return -errno;
    }
    rc = pc_copy_fd(fd, out, NULL);
    if (close(out) != 0 && rc == 0) {
        rc = -errno;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = -errno;
    }
    if (rc == 0) {
        node->has_obj = 1;
        node->dirty   = 0;
    }
    return rc;
}

static void pc_set_attrs(pc_node_t *node, const struct stat *st)
{
    node->mode = st->st_mode;
    node->uid  = st->st_uid;
    node->gid  = st->st_gid;
}

/* The durable entry name of dir becomes child (added or replaced). */
static int pc_entry_set(pc_node_t *dir, const char *name, pc_node_t *child)
{
    for (size_t i = 0; i < dir->count; i++) {
        if (strcmp(dir->entries[i].name, name) == 0) {
            dir->entries[i].node = child;
            return 0;
        }
    }
    if (dir->count == dir->cap) {
        size_t      cap = dir->cap ? dir->cap * 2 : 8;
        pc_entry_t *e   = realloc(dir->entries, cap * sizeof(*e));

        if (!e) {
            return -ENOMEM;
        }
        dir->entries = e;
        dir->cap     = cap;
    }
    dir->entries[dir->count].name = strdup(name);
    if (!dir->entries[dir->count].name) {
        return -ENOMEM;
    }
    dir->entries[dir->count++].node = child;
    return 0;
}

static void pc_entries_clear(pc_node_t *dir)
{
    for (size_t i = 0; i < dir->count; i++) {
        free(dir->entries[i].name);
    }
    dir->count = 0;
}

/* Drop every durable name of node except dir/name (a file with one name
 * whose rename became durable). */
static void pc_drop_other_names(pc_node_t *node, const pc_node_t *dir, const char *name)
{
    for (pc_node_t *d = pc.all; d; d = d->all_next) {
        for (size_t i = 0; i < d->count;) {
            if (d->entries[i].node == node &&
                !(d == dir && strcmp(d->entries[i].name, name) == 0)) {
                free(d->entries[i].name);
                d->entries[i] = d->entries[--d->count];
            } else {
                i++;
            }
        }
    }
}

/* The node of the symlink/file/dir at rel (relative to the root). */
static int pc_stat_node(const char *rel, struct stat *st, pc_node_t **node_p)
{
    if (fstatat(pc.root_fd, rel, st, AT_SYMLINK_NOFOLLOW) != 0) {
        return -errno;
    }
    *node_p = pc_model_node(st);
    return *node_p ? 0 : -ENOMEM;
}

static int pc_read_link(pc_node_t *node, int dir_fd, const char *name)
{
    char    target[PATH_MAX];
    ssize_t n = readlinkat(dir_fd, name, target, sizeof(target) - 1);

    if (n < 0) {
        return -errno;
    }
    target[n] = '\0';
    free(node->link);
    node->link = strdup(target);
    return node->link ? 0 : -ENOMEM;
}

/* The durable entries of the directory open as dir_fd become its current
 * ones; with initial, every file's content becomes durable too, recursively
 * (the state at mount time). */
static int pc_scan_dir(int dir_fd, int initial)
{
    struct stat    st;
    struct dirent *de;
    pc_node_t     *dir, *child = NULL;
    DIR           *d;
    int            fd, rc = 0;

    if (fstat(dir_fd, &st) != 0) {
        return -errno;
    }
    dir = pc_model_node(&st);
    if (!dir) {
        return -ENOMEM;
    }
    pc_set_attrs(dir, &st);
    fd = dup(dir_fd);
    if (fd < 0) {
        return -errno;
    }
    d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -errno;
    }
    rewinddir(d);
    pc_entries_clear(dir);
    while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
            continue;
        }
        if (fstatat(dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = errno == ENOENT ? 0 : -errno;
            continue;
        }
        child = pc_model_node(&st);
        if (!child) {
            rc = -ENOMEM;
            break;
        }
        if (!child->has_obj || initial) {
            pc_set_attrs(child, &st);
        }
        if (S_ISLNK(st.st_mode)) {
            rc = pc_read_link(child, dir_fd, de->d_name);
        } else if (initial && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) {
            fd = openat(dir_fd, de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0) {
                rc = -errno;
            } else {
                rc = S_ISDIR(st.st_mode) ? pc_scan_dir(fd, 1) : pc_snapshot(child, fd);
                close(fd);
            }
        }
        if (rc == 0) {
            rc = pc_entry_set(dir, de->d_name, child);
        }
    }
    if (rc == 0 && errno != 0) {
        rc = -errno;
    }
    closedir(d);
    return rc;
}

int pc_model_init(int root_fd, const char *objects_dir, int strict)
{
    struct stat st;

    pc.root_fd = root_fd;
    pc.strict  = strict;
    pc.next_id = 1;
    snprintf(pc.objects, sizeof(pc.objects), "%s", objects_dir);
    if (mkdir(objects_dir, 0700) != 0) {
        return -errno;
    }
    if (fstat(root_fd, &st) != 0) {
        return -errno;
    }
    pc.root = pc_model_node(&st);
    return pc.root ? pc_scan_dir(root_fd, 1) : -ENOMEM;
}

/* File mode: rel's current path, every component, becomes durable. */
static int pc_sync_path(const char *rel)
{
    char        prefix[PATH_MAX];
    const char *p      = rel;
    pc_node_t  *parent = pc.root, *child = NULL;
    struct stat st;
    int         rc;

    while (*p) {
        const char *slash = strchr(p, '/');
        size_t      len   = slash ? (size_t)(slash - p) : strlen(p);
        char        name[NAME_MAX + 1];

        if (len == 0 || len > NAME_MAX) {
            return -EINVAL;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        snprintf(prefix, sizeof(prefix), "%.*s", (int)(p - rel + len), rel);
        rc = pc_stat_node(prefix, &st, &child);
        if (rc) {
            return rc;
        }
        if (!child->has_obj && !S_ISREG(st.st_mode)) {
            pc_set_attrs(child, &st);
        }
        rc = pc_entry_set(parent, name, child);
        if (rc) {
            return rc;
        }
        if (S_ISDIR(st.st_mode) || st.st_nlink == 1) {
            pc_drop_other_names(child, parent, name);
        }
        parent = child;
        p += len;
        while (*p == '/') {
            p++;
        }
    }
    return 0;
}

int pc_model_sync_file(pc_node_t *node, int fd, const char *rel)
{
    struct stat st;
    char        proc[64];
    int         rfd, rc;

    /* the handle may be write-only: read the same open file anew */
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    rfd = open(proc, O_RDONLY | O_CLOEXEC);
    if (rfd < 0) {
        return -errno;
    }
    rc = fstat(rfd, &st) != 0 ? -errno : 0;
    if (rc == 0) {
        pc_set_attrs(node, &st);
        rc = pc_snapshot(node, rfd);
    }
    close(rfd);
    if (rc == 0 && !pc.strict && rel && *rel) {
        rc = pc_sync_path(rel);
    }
    return rc;
}

int pc_model_sync_dir(int dir_fd)
{
    return pc_scan_dir(dir_fd, 0);
}

static int pc_write_node(pc_node_t *node, int dir_fd, const char *name, pc_image_stats_t *stats);

static int pc_write_dir(pc_node_t *dir, int dir_fd, pc_image_stats_t *stats)
{
    int rc = 0;

    for (size_t i = 0; rc == 0 && i < dir->count; i++) {
        rc = pc_write_node(dir->entries[i].node, dir_fd, dir->entries[i].name, stats);
    }
    return rc;
}

static int pc_write_node(pc_node_t *node, int dir_fd, const char *name, pc_image_stats_t *stats)
{
    char path[PATH_MAX];
    int  fd, in, rc = 0;

    if (S_ISDIR(node->mode)) {
        /* only a rename split over two directory syncs reaches one twice */
        if (node->seen == pc.pass) {
            fprintf(stderr, "sfs_powercut_fs: directory %s has two durable names; kept one\n",
                    name);
            return 0;
        }
        node->seen = pc.pass;
        if (mkdirat(dir_fd, name, 0700) != 0) {
            return -errno;
        }
        fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
            return -errno;
        }
        stats->dirs++;
        rc = pc_write_dir(node, fd, stats);
    } else if (S_ISLNK(node->mode)) {
        stats->symlinks++;
        return symlinkat(node->link ? node->link : "", dir_fd, name) != 0 ? -errno : 0;
    } else if (S_ISREG(node->mode)) {
        fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0) {
            return -errno;
        }
        stats->files++;
        if (node->has_obj) {
            pc_object_path(node, path, sizeof(path));
            in = open(path, O_RDONLY | O_CLOEXEC);
            rc = in < 0 ? -errno : pc_copy_fd(in, fd, &stats->bytes);
            if (in >= 0) {
                close(in);
            }
        }
    } else {
        return 0; /* devices, fifos, sockets: not modelled */
    }
    if (rc == 0 && (fchown(fd, node->uid, node->gid) != 0 || fchmod(fd, node->mode & 07777) != 0)) {
        rc = -errno;
    }
    if (close(fd) != 0 && rc == 0) {
        rc = -errno;
    }
    return rc;
}

int pc_model_write_image(const char *image_dir, pc_image_stats_t *stats_p)
{
    pc_image_stats_t stats = {0};
    int              fd, rc;

    pc.pass++;
    if (mkdir(image_dir, 0700) != 0) {
        return -errno;
    }
    fd = open(image_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return -errno;
    }
    pc.root->seen = pc.pass;
    rc            = pc_write_dir(pc.root, fd, &stats);
    if (rc == 0 &&
        (fchown(fd, pc.root->uid, pc.root->gid) != 0 || fchmod(fd, pc.root->mode & 07777) != 0)) {
        rc = -errno;
    }
    close(fd);
    *stats_p = stats;
    return rc;
}
