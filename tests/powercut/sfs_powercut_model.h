/*
 * The durable side of sfs_powercut_fs: what a disk would still hold after a
 * power cut. The working side is the backing directory itself (every
 * operation goes through to it at once, like a page cache); this module
 * keeps apart what has been made durable, and writes exactly that out as a
 * new directory tree at the cut.
 *
 * The model (see tests/powercut/README.md):
 * - file data is durable as of the file's last fsync/fdatasync (or msync,
 *   which reaches the file system as fsync); data never synced is lost,
 *   all of it, however long ago it was written;
 * - a directory's entries (creates, renames, unlinks in it) are durable as
 *   of that directory's last fsync;
 * - in the "file" names mode (the default, ext4's behaviour for a new file)
 *   an fsync/fdatasync of a file also makes durable its current path, every
 *   component from the root, and drops its other durable names;
 *   in the "strict" mode only a directory fsync does;
 * - owner and mode are those seen when the name or data became durable;
 *   times are not kept. syncfs/sync(2) do not reach a FUSE file system and
 *   so make nothing durable.
 * Identity is the backing inode while it has a name (or is open); an inode
 * number reused after an unlink is a new file.
 */
#ifndef SFS_POWERCUT_MODEL_H
#define SFS_POWERCUT_MODEL_H

#include <stdint.h>
#include <sys/stat.h>

typedef struct pc_node pc_node_t;

typedef struct {
    uint64_t dirs, files, symlinks, bytes;
} pc_image_stats_t;

/* Everything in the backing dir (open as root_fd) is durable at the start;
 * file contents are copied to objects_dir. strict: names only by dir fsync. */
int pc_model_init(int root_fd, const char *objects_dir, int strict);

/* The node of a backing inode (made on first sight). */
pc_node_t *pc_model_node(const struct stat *st);

/* The backing inode lost its last name: a later inode with its number is
 * another file. */
void pc_model_retire(const struct stat *st);

/* fsync/fdatasync of the file open as fd; rel is its path relative to the
 * root, or NULL when unknown (unlinked). */
int pc_model_sync_file(pc_node_t *node, int fd, const char *rel);

/* fsync of the directory open as dir_fd. */
int pc_model_sync_dir(int dir_fd);

/* Write the durable tree to image_dir (made here; must not exist). */
int pc_model_write_image(const char *image_dir, pc_image_stats_t *stats_p);

/* Files written since their last sync (their unsynced data is dropped). */
uint64_t pc_model_dirty_count(void);
void     pc_model_mark_dirty(pc_node_t *node);

#endif
