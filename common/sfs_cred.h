/*
 * Who is asking: the identity a server proved for a session, on which every
 * permission decision is made (service/sfs_perm.h). Clients never state it;
 * the transport fills it in from the MUNGE credential of the handshake (or
 * from the servers' shared secret for other servers), and the service's
 * policy applies root squash, supplementary groups and admin rights.
 */
#ifndef SFS_CRED_H
#define SFS_CRED_H

#include <stdint.h>

#define SFS_CRED_GROUPS_MAX 64

/* Bits of sfs_cred_t.flags (never renumbered). */
#define SFS_CRED_SERVER                                                                            \
    0x1u /* proved the servers' secret: another server rank, or a tool                             \
          * run with the connauth file; trusted with every operation */
#define SFS_CRED_ROOT                                                                              \
    0x2u /* uid 0 from a trusted host: bypasses permission bits, as                                \
          * root does on a local file system */
#define SFS_CRED_ADMIN                                                                             \
    0x4u                       /* may run administrative operations (shutdown, fsck repair,        \
                                * patterns on other users' directories) */
#define SFS_CRED_SQUASHED 0x8u /* was uid 0 from an untrusted host, now nobody */

#define SFS_UID_NOBODY 65534u
#define SFS_GID_NOBODY 65534u

typedef struct sfs_cred {
    uint32_t uid;
    uint32_t gid;
    uint32_t flags;
    uint32_t group_count; /* supplementary groups, resolved on the server */
    uint32_t groups[SFS_CRED_GROUPS_MAX];
} sfs_cred_t;

/* 1 if `gid` is the primary group or one of the supplementary groups. */
static inline int sfs_cred_in_group(const sfs_cred_t *cred, uint32_t gid)
{
    if (cred->gid == gid) {
        return 1;
    }
    for (uint32_t i = 0; i < cred->group_count; i++) {
        if (cred->groups[i] == gid) {
            return 1;
        }
    }
    return 0;
}

/* 1 if the holder bypasses permission bits (a server, or trusted root). */
static inline int sfs_cred_privileged(const sfs_cred_t *cred)
{
    return (cred->flags & (SFS_CRED_SERVER | SFS_CRED_ROOT)) != 0;
}

/* 1 if the holder may run administrative operations. */
static inline int sfs_cred_admin(const sfs_cred_t *cred)
{
    return (cred->flags & (SFS_CRED_SERVER | SFS_CRED_ROOT | SFS_CRED_ADMIN)) != 0;
}

#endif
