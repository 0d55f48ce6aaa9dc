/*
 * sfs_powercut_fs: a FUSE pass-through file system over a backing
 * directory that can lose power. Every operation goes through to the
 * backing directory at once; sfs_powercut_model keeps apart what fsync and
 * fdatasync (of files, and of directories) made durable. Writing to the
 * file .powercut in the mount root cuts the power: the durable state is
 * written out as a new directory (IMAGE) and every later operation fails
 * with EIO until the file system is unmounted. Mount IMAGE again to see
 * what survived.
 *
 *   sfs_powercut_fs [--strict] BACKING IMAGE MOUNTPOINT [fuse options]
 *
 * (--strict: a new name is durable only by an fsync of its directory.)
 * Runs single-threaded in the foreground; see tests/powercut/README.md.
 */
#define FUSE_USE_VERSION 31
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sfs_powercut_model.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <unistd.h>

#define PC_CONTROL "/.powercut"

typedef struct {
    int        fd;
    pc_node_t *node;
    int        control;
} pc_handle_t;

static struct {
    int  root_fd;
    int  cut;
    char image[PATH_MAX];
} fs;

/* FUSE paths start with '/'; the backing dir is reached relative to it. */
static const char *pc_rel(const char *path)
{
    return (path == NULL || path[1] == '\0') ? "." : path + 1;
}

#define PC_LIVE()                                                                                  \
    do {                                                                                           \
        if (fs.cut) {                                                                              \
            return -EIO;                                                                           \
        }                                                                                          \
    } while (0)

static pc_handle_t *pc_handle(struct fuse_file_info *fi)
{
    return (pc_handle_t *)(uintptr_t)fi->fh;
}

/* The file's new entry belongs to the caller (the backing dir is root's). */
static void pc_own(const char *path)
{
    struct fuse_context *ctx = fuse_get_context();

    if (fchownat(fs.root_fd, pc_rel(path), ctx->uid, ctx->gid, AT_SYMLINK_NOFOLLOW) != 0) {
        fprintf(stderr, "sfs_powercut_fs: chown %s: %m\n", path);
    }
}

static int pc_cut(void)
{
    pc_image_stats_t stats;
    uint64_t         dirty = pc_model_dirty_count();
    int              rc;

    fs.cut = 1;
    rc     = pc_model_write_image(fs.image, &stats);
    if (rc) {
        fprintf(stderr, "sfs_powercut_fs: cannot write the durable image %s: %s\n", fs.image,
                strerror(-rc));
        return rc;
    }
    fprintf(stderr,
            "sfs_powercut_fs: power cut: %llu files had unsynced data; durable image %s: %llu "
            "directories, %llu files, %llu symlinks, %llu bytes\n",
            (unsigned long long)dirty, fs.image, (unsigned long long)stats.dirs,
            (unsigned long long)stats.files, (unsigned long long)stats.symlinks,
            (unsigned long long)stats.bytes);
    return 0;
}

static int pc_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    PC_LIVE();
    if (path && strcmp(path, PC_CONTROL) == 0) {
        memset(st, 0, sizeof(*st));
        st->st_mode  = S_IFREG | 0200;
        st->st_nlink = 1;
        return 0;
    }
    if (fi && fi->fh) {
        return fstat(pc_handle(fi)->fd, st) != 0 ? -errno : 0;
    }
    return fstatat(fs.root_fd, pc_rel(path), st, AT_SYMLINK_NOFOLLOW) != 0 ? -errno : 0;
}

static int pc_readlink(const char *path, char *buf, size_t size)
{
    ssize_t n;

    PC_LIVE();
    n = readlinkat(fs.root_fd, pc_rel(path), buf, size - 1);
    if (n < 0) {
        return -errno;
    }
    buf[n] = '\0';
    return 0;
}

static int pc_mkdir(const char *path, mode_t mode)
{
    PC_LIVE();
    if (mkdirat(fs.root_fd, pc_rel(path), mode) != 0) {
        return -errno;
    }
    pc_own(path);
    return 0;
}

/* An entry is about to go (unlink, rmdir, rename over it): its inode is
 * another file's once its number is reused. */
static int pc_remove(const char *path, int (*op)(const char *, void *), void *arg)
{
    struct stat st;
    int         had = fstatat(fs.root_fd, pc_rel(path), &st, AT_SYMLINK_NOFOLLOW) == 0;

    if (op(path, arg) != 0) {
        return -errno;
    }
    if (had && (S_ISDIR(st.st_mode) || st.st_nlink <= 1)) {
        pc_model_retire(&st);
    }
    return 0;
}

static int pc_do_unlink(const char *path, void *arg)
{
    return unlinkat(fs.root_fd, pc_rel(path), arg ? AT_REMOVEDIR : 0);
}

static int pc_unlink(const char *path)
{
    PC_LIVE();
    return pc_remove(path, pc_do_unlink, NULL);
}

static int pc_rmdir(const char *path)
{
    PC_LIVE();
    return pc_remove(path, pc_do_unlink, (void *)1);
}

static int pc_symlink(const char *target, const char *path)
{
    PC_LIVE();
    if (symlinkat(target, fs.root_fd, pc_rel(path)) != 0) {
        return -errno;
    }
    pc_own(path);
    return 0;
}

typedef struct {
    const char  *from;
    unsigned int flags;
} pc_rename_t;

static int pc_do_rename(const char *to, void *arg)
{
    pc_rename_t *r = arg;

    return renameat2(fs.root_fd, pc_rel(r->from), fs.root_fd, pc_rel(to), r->flags);
}

static int pc_rename(const char *from, const char *to, unsigned int flags)
{
    pc_rename_t r = {from, flags};
    struct stat a, b;

    PC_LIVE();
    /* renaming a name onto another name of the same inode removes nothing */
    if (fstatat(fs.root_fd, pc_rel(from), &a, AT_SYMLINK_NOFOLLOW) == 0 &&
        fstatat(fs.root_fd, pc_rel(to), &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_ino == b.st_ino) {
        return pc_do_rename(to, &r) != 0 ? -errno : 0;
    }
    if (flags & RENAME_EXCHANGE) {
        return pc_do_rename(to, &r) != 0 ? -errno : 0;
    }
    return pc_remove(to, pc_do_rename, &r);
}

static int pc_link(const char *from, const char *to)
{
    PC_LIVE();
    return linkat(fs.root_fd, pc_rel(from), fs.root_fd, pc_rel(to), 0) != 0 ? -errno : 0;
}

static int pc_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    PC_LIVE();
    if (fi && fi->fh) {
        return fchmod(pc_handle(fi)->fd, mode) != 0 ? -errno : 0;
    }
    return fchmodat(fs.root_fd, pc_rel(path), mode, 0) != 0 ? -errno : 0;
}

static int pc_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
    PC_LIVE();
    if (fi && fi->fh) {
        return fchown(pc_handle(fi)->fd, uid, gid) != 0 ? -errno : 0;
    }
    return fchownat(fs.root_fd, pc_rel(path), uid, gid, AT_SYMLINK_NOFOLLOW) != 0 ? -errno : 0;
}

static int pc_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    struct stat st;
    int         fd, rc = 0;

    PC_LIVE();
    if (fi && fi->fh && pc_handle(fi)->control) {
        return 0;
    }
    if (path && strcmp(path, PC_CONTROL) == 0) {
        return 0;
    }
    if (fi && fi->fh) {
        pc_model_mark_dirty(pc_handle(fi)->node);
        return ftruncate(pc_handle(fi)->fd, size) != 0 ? -errno : 0;
    }
    fd = openat(fs.root_fd, pc_rel(path), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        return -errno;
    }
    if (ftruncate(fd, size) != 0 || fstat(fd, &st) != 0) {
        rc = -errno;
    } else {
        pc_model_mark_dirty(pc_model_node(&st));
    }
    close(fd);
    return rc;
}

static int pc_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
    PC_LIVE();
    if (fi && fi->fh) {
        return futimens(pc_handle(fi)->fd, tv) != 0 ? -errno : 0;
    }
    return utimensat(fs.root_fd, pc_rel(path), tv, AT_SYMLINK_NOFOLLOW) != 0 ? -errno : 0;
}

static int pc_open_handle(int fd, int control, struct fuse_file_info *fi)
{
    pc_handle_t *h = calloc(1, sizeof(*h));
    struct stat  st;

    if (!h || (fd >= 0 && fstat(fd, &st) != 0)) {
        int rc = h ? -errno : -ENOMEM;

        free(h);
        if (fd >= 0) {
            close(fd);
        }
        return rc;
    }
    h->fd      = fd;
    h->control = control;
    h->node    = fd >= 0 ? pc_model_node(&st) : NULL;
    fi->fh     = (uint64_t)(uintptr_t)h;
    return 0;
}

static int pc_open(const char *path, struct fuse_file_info *fi)
{
    int fd;

    PC_LIVE();
    if (strcmp(path, PC_CONTROL) == 0) {
        return pc_open_handle(-1, 1, fi);
    }
    fd = openat(fs.root_fd, pc_rel(path), (fi->flags & ~O_NOFOLLOW) | O_CLOEXEC);
    if (fd < 0) {
        return -errno;
    }
    if (fi->flags & O_TRUNC) {
        struct stat st;

        if (fstat(fd, &st) == 0) {
            pc_model_mark_dirty(pc_model_node(&st));
        }
    }
    return pc_open_handle(fd, 0, fi);
}

static int pc_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    int fd;

    PC_LIVE();
    fd = openat(fs.root_fd, pc_rel(path), fi->flags | O_CREAT | O_CLOEXEC, mode);
    if (fd < 0) {
        return -errno;
    }
    pc_own(path);
    return pc_open_handle(fd, 0, fi);
}

static int pc_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    ssize_t n;

    (void)path;
    PC_LIVE();
    if (pc_handle(fi)->control) {
        return 0;
    }
    n = pread(pc_handle(fi)->fd, buf, size, off);
    return n < 0 ? -errno : (int)n;
}

static int pc_write(const char *path, const char *buf, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
    ssize_t n;
    int     rc;

    (void)path;
    PC_LIVE();
    if (pc_handle(fi)->control) {
        rc = pc_cut();
        return rc ? rc : (int)size;
    }
    pc_model_mark_dirty(pc_handle(fi)->node);
    n = pwrite(pc_handle(fi)->fd, buf, size, off);
    return n < 0 ? -errno : (int)n;
}

static int pc_statfs(const char *path, struct statvfs *st)
{
    int fd, rc;

    PC_LIVE();
    fd = openat(fs.root_fd, pc_rel(path), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -errno;
    }
    rc = fstatvfs(fd, st) != 0 ? -errno : 0;
    close(fd);
    return rc;
}

static int pc_release(const char *path, struct fuse_file_info *fi)
{
    pc_handle_t *h = pc_handle(fi);

    (void)path;
    if (h->fd >= 0) {
        close(h->fd);
    }
    free(h);
    return 0;
}

static int pc_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
    pc_handle_t *h = pc_handle(fi);
    int          rc;

    (void)datasync; /* fdatasync is modelled as fsync: ext4 keeps a new file's name either way */
    PC_LIVE();
    if (h->control) {
        return 0;
    }
    rc = pc_model_sync_file(h->node, h->fd, path ? pc_rel(path) : NULL);
    if (rc) {
        fprintf(stderr, "sfs_powercut_fs: cannot record the fsync of %s: %s\n",
                path ? path : "(unlinked)", strerror(-rc));
        return -EIO;
    }
    return 0;
}

static int pc_opendir(const char *path, struct fuse_file_info *fi)
{
    int fd;

    PC_LIVE();
    fd = openat(fs.root_fd, pc_rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return -errno;
    }
    return pc_open_handle(fd, 0, fi);
}

static int pc_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
    struct dirent *de;
    DIR           *d;
    int            fd;

    (void)path;
    (void)off;
    (void)flags;
    PC_LIVE();
    fd = dup(pc_handle(fi)->fd);
    if (fd < 0) {
        return -errno;
    }
    d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -errno;
    }
    rewinddir(d);
    while ((de = readdir(d)) != NULL) {
        if (fill(buf, de->d_name, NULL, 0, 0)) {
            break;
        }
    }
    closedir(d);
    return 0;
}

static int pc_releasedir(const char *path, struct fuse_file_info *fi)
{
    return pc_release(path, fi);
}

static int pc_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
    int rc;

    (void)datasync;
    PC_LIVE();
    rc = pc_model_sync_dir(pc_handle(fi)->fd);
    if (rc) {
        fprintf(stderr, "sfs_powercut_fs: cannot record the fsync of directory %s: %s\n",
                path ? path : "?", strerror(-rc));
        return -EIO;
    }
    return 0;
}

static int pc_access(const char *path, int mask)
{
    PC_LIVE();
    if (strcmp(path, PC_CONTROL) == 0) {
        return 0;
    }
    return faccessat(fs.root_fd, pc_rel(path), mask, AT_SYMLINK_NOFOLLOW) != 0 ? -errno : 0;
}

static int pc_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi)
{
    (void)path;
    PC_LIVE();
    pc_model_mark_dirty(pc_handle(fi)->node);
    return fallocate(pc_handle(fi)->fd, mode, off, len) != 0 ? -errno : 0;
}

static void *pc_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    (void)conn;
    /* paths for every call (an fsync makes its file's name durable); an
     * open file that is unlinked is renamed to .fuse_hidden* by libfuse,
     * a rename like any other in the model */
    cfg->use_ino      = 1;
    cfg->nullpath_ok  = 0;
    cfg->hard_remove  = 0;
    cfg->direct_io    = 0; /* mmap (LMDB, the chunk store) needs the page cache */
    cfg->kernel_cache = 0;
    return NULL;
}

static const struct fuse_operations pc_ops = {
    .init       = pc_init,
    .getattr    = pc_getattr,
    .readlink   = pc_readlink,
    .mkdir      = pc_mkdir,
    .unlink     = pc_unlink,
    .rmdir      = pc_rmdir,
    .symlink    = pc_symlink,
    .rename     = pc_rename,
    .link       = pc_link,
    .chmod      = pc_chmod,
    .chown      = pc_chown,
    .truncate   = pc_truncate,
    .utimens    = pc_utimens,
    .open       = pc_open,
    .create     = pc_create,
    .read       = pc_read,
    .write      = pc_write,
    .statfs     = pc_statfs,
    .release    = pc_release,
    .fsync      = pc_fsync,
    .opendir    = pc_opendir,
    .readdir    = pc_readdir,
    .releasedir = pc_releasedir,
    .fsyncdir   = pc_fsyncdir,
    .access     = pc_access,
    .fallocate  = pc_fallocate,
};

int main(int argc, char **argv)
{
    char        objects[PATH_MAX + 16];
    char       *fargv[64];
    int         fargc = 0, strict = 0, a = 1, rc;
    const char *backing, *mountpoint;

    if (a < argc && strcmp(argv[a], "--strict") == 0) {
        strict = 1;
        a++;
    }
    if (argc - a < 3 || argc - a > 40) {
        fprintf(stderr, "usage: %s [--strict] BACKING IMAGE MOUNTPOINT [fuse options]\n", argv[0]);
        return 2;
    }
    backing    = argv[a];
    mountpoint = argv[a + 2];
    /* fuse_main changes the working directory: keep an absolute path */
    if (argv[a + 1][0] == '/' || !getcwd(objects, sizeof(objects))) {
        snprintf(fs.image, sizeof(fs.image), "%s", argv[a + 1]);
    } else {
        snprintf(fs.image, sizeof(fs.image), "%.*s/%s", PATH_MAX / 2, objects, argv[a + 1]);
    }
    if (access(fs.image, F_OK) == 0) {
        fprintf(stderr, "sfs_powercut_fs: image %s exists already\n", fs.image);
        return 1;
    }
    fs.root_fd = open(backing, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fs.root_fd < 0) {
        fprintf(stderr, "sfs_powercut_fs: cannot open backing dir %s: %m\n", backing);
        return 1;
    }
    /* the durable copies live next to the image, outside the backing dir */
    snprintf(objects, sizeof(objects), "%s.objects", fs.image);
    rc = pc_model_init(fs.root_fd, objects, strict);
    if (rc) {
        fprintf(stderr, "sfs_powercut_fs: cannot record the state of %s in %s: %s\n", backing,
                objects, strerror(-rc));
        return 1;
    }
    umask(0);
    fargv[fargc++] = argv[0];
    fargv[fargc++] = (char *)mountpoint;
    fargv[fargc++] = "-f";
    fargv[fargc++] = "-s";
    for (int i = a + 3; i < argc; i++) {
        fargv[fargc++] = argv[i];
    }
    fargv[fargc] = NULL;
    rc           = fuse_main(fargc, fargv, &pc_ops, NULL);
    close(fs.root_fd);
    return rc;
}
