#include "sfs_perm.h"

#include "sfs_errno.h"

#include <sys/stat.h>

int sfs_perm_check(const sfs_cred_t *cred, const sfs_attr_t *attr, unsigned want)
{
    unsigned bits;

    if (sfs_cred_privileged(cred)) {
        if ((want & SFS_MAY_EXEC) && attr->type != SFS_TYPE_DIR && !(attr->mode & 0111)) {
            return -EACCES;
        }
        return 0;
    }
    if (cred->uid == attr->uid) {
        bits = (attr->mode >> 6) & 7;
    } else if (sfs_cred_in_group(cred, attr->gid)) {
        bits = (attr->mode >> 3) & 7;
    } else {
        bits = attr->mode & 7;
    }
    return (bits & want) == want ? 0 : -EACCES;
}

int sfs_perm_owner(const sfs_cred_t *cred, const sfs_attr_t *attr)
{
    return sfs_cred_privileged(cred) || cred->uid == attr->uid;
}

int sfs_perm_sticky(const sfs_cred_t *cred, const sfs_attr_t *dir, const sfs_attr_t *victim)
{
    if (!(dir->mode & S_ISVTX) || sfs_cred_privileged(cred) || cred->uid == victim->uid ||
        cred->uid == dir->uid) {
        return 0;
    }
    return -EPERM;
}

int sfs_perm_chmod(const sfs_cred_t *cred, const sfs_attr_t *attr, uint32_t mode, uint32_t *mode_p)
{
    if (!sfs_perm_owner(cred, attr)) {
        return -EPERM;
    }
    mode &= 07777;
    if (!sfs_cred_privileged(cred) && !sfs_cred_in_group(cred, attr->gid)) {
        mode &= ~(uint32_t)S_ISGID;
    }
    *mode_p = mode;
    return 0;
}

/* The set-id bits a change of the file clears (regular files). */
static uint32_t sfs_perm_privs(const sfs_attr_t *attr)
{
    if (attr->type == SFS_TYPE_DIR) {
        return 0;
    }
    return (attr->mode & S_ISUID) | ((attr->mode & S_IXGRP) ? (attr->mode & S_ISGID) : 0);
}

int sfs_perm_kill_privs(const sfs_cred_t *cred, sfs_attr_t *attr)
{
    if (sfs_cred_privileged(cred)) {
        return 0; /* CAP_FSETID */
    }
    if (sfs_perm_check(cred, attr, SFS_MAY_WRITE) != 0 && !sfs_perm_owner(cred, attr)) {
        return -EACCES;
    }
    attr->mode &= ~sfs_perm_privs(attr);
    return 0;
}

int sfs_perm_chown(const sfs_cred_t *cred, sfs_attr_t *attr, uint32_t uid, uint32_t gid)
{
    int privileged = sfs_cred_privileged(cred);

    /* chown(f, -1, -1) changes no owner, so anyone may; but it still
     * clears the set-id bits, which only the owner may (Linux: ATTR_KILL_SUID
     * turns into a mode change) */
    if (uid == SFS_ID_UNCHANGED && gid == SFS_ID_UNCHANGED) {
        if (sfs_perm_privs(attr) && !sfs_perm_owner(cred, attr)) {
            return -EPERM;
        }
        attr->mode &= ~sfs_perm_privs(attr);
        return 0;
    }

    if (uid == SFS_ID_UNCHANGED) {
        uid = attr->uid;
    }
    if (gid == SFS_ID_UNCHANGED) {
        gid = attr->gid;
    }
    if (!privileged) {
        if (uid != attr->uid || cred->uid != attr->uid) {
            return -EPERM;
        }
        if (gid != attr->gid && !sfs_cred_in_group(cred, gid)) {
            return -EPERM;
        }
    }
    /* chown of a regular file clears setuid, and setgid where group
     * execute is set (Linux: for root too) */
    attr->mode &= ~sfs_perm_privs(attr);
    attr->uid = uid;
    attr->gid = gid;
    return 0;
}

int sfs_perm_utimes(const sfs_cred_t *cred, const sfs_attr_t *attr, int to_now)
{
    if (sfs_perm_owner(cred, attr)) {
        return 0;
    }
    if (!to_now) {
        return -EPERM;
    }
    return sfs_perm_check(cred, attr, SFS_MAY_WRITE);
}

void sfs_perm_new_entry(const sfs_cred_t *cred, const sfs_attr_t *parent, int is_dir, uint32_t mode,
                        uint32_t *uid_p, uint32_t *gid_p, uint32_t *mode_p)
{
    uint32_t gid = cred->gid;

    mode &= 07777;
    if (parent->mode & S_ISGID) {
        gid = parent->gid;
        if (is_dir) {
            mode |= S_ISGID;
        }
    }
    if (!is_dir && (mode & S_ISGID) && !sfs_cred_privileged(cred) &&
        !sfs_cred_in_group(cred, gid)) {
        mode &= ~(uint32_t)S_ISGID;
    }
    *uid_p  = cred->uid;
    *gid_p  = gid;
    *mode_p = mode;
}
