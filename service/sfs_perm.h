/*
 * POSIX permission rules, decided on the server with the proven
 * credentials of the caller (sfs_cred.h), so that they give the answers a
 * local ext4 gives for the same call. Pure functions: no I/O.
 */
#ifndef SFS_PERM_H
#define SFS_PERM_H

#include "sfs_cred.h"
#include "sfs_proto.h"

#define SFS_MAY_EXEC  1u
#define SFS_MAY_WRITE 2u
#define SFS_MAY_READ  4u

/* 0 if `cred` may access `attr` as `want` (SFS_MAY_* bits), else -EACCES.
 * The owner's, group's or others' bits apply, whichever class the caller
 * falls in first; privileged callers pass, but execute of a file needs an
 * execute bit somewhere (as root's CAP_DAC_OVERRIDE). */
int sfs_perm_check(const sfs_cred_t *cred, const sfs_attr_t *attr, unsigned want);

/* 1 if the caller owns the entry or is privileged. */
int sfs_perm_owner(const sfs_cred_t *cred, const sfs_attr_t *attr);

/* Removing or renaming `victim` out of `dir`: with the sticky bit only its
 * owner, the directory's owner or a privileged caller may (else -EPERM). */
int sfs_perm_sticky(const sfs_cred_t *cred, const sfs_attr_t *dir, const sfs_attr_t *victim);

/* chmod: -EPERM unless owner or privileged; *mode_p gets the mode to store
 * (setgid dropped when a non-privileged owner is not in the file's group). */
int sfs_perm_chmod(const sfs_cred_t *cred, const sfs_attr_t *attr, uint32_t mode, uint32_t *mode_p);

/* chown: uid/gid SFS_ID_UNCHANGED keep. Only privileged callers change the
 * owner; an owner may change the group to one of their groups. On success
 * *attr gets the new ids and the setuid/setgid bits chown clears. */
int sfs_perm_chown(const sfs_cred_t *cred, sfs_attr_t *attr, uint32_t uid, uint32_t gid);

/* SFS_SETATTR_KILL_PRIV (a write is about to change the file): set-id
 * bits cleared (sfs_perm_privs) unless privileged; -EACCES without write
 * permission. */
int sfs_perm_kill_privs(const sfs_cred_t *cred, sfs_attr_t *attr);

/* Setting times: explicit times need ownership (-EPERM), "now" needs
 * ownership or write permission (-EACCES). */
int sfs_perm_utimes(const sfs_cred_t *cred, const sfs_attr_t *attr, int to_now);

/* Owner, group and mode of a new entry in `parent`: the caller's ids, the
 * parent's group under a setgid directory (which new directories inherit),
 * and a file's setgid dropped when its group is not the caller's. */
void sfs_perm_new_entry(const sfs_cred_t *cred, const sfs_attr_t *parent, int is_dir, uint32_t mode,
                        uint32_t *uid_p, uint32_t *gid_p, uint32_t *mode_p);

#endif
