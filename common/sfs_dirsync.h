/*
 * Making names durable. A new file's or directory's name is on the disk
 * only once the directory holding it has been fsynced: POSIX promises no
 * more, and although ext4 and XFS commit a new name with the file's own
 * fsync, other file systems (and tests/powercut's --strict model) do not.
 * Each call returns 0 or a negative errno; none sets an error detail.
 */
#ifndef SFS_DIRSYNC_H
#define SFS_DIRSYNC_H

/* fsync the directory `path`. */
int sfs_fsync_dir(const char *path);
/* fsync the directory `name` under the open directory `dirfd`. */
int sfs_fsync_dirat(int dirfd, const char *name);
/* fsync the directory that holds `path` (its name's parent). */
int sfs_fsync_parent(const char *path);

#endif
