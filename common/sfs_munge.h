/*
 * User identities from MUNGE (libmunge): the local munged vouches for the
 * uid and gid of the process that asks it for a credential, and any host
 * with the site's munge key can decode the credential, which munged refuses
 * to decode twice (replay) or after its time to live.
 *
 * stripefs binds each credential to one handshake: its payload is a hash of
 * that handshake's nonces, session id and key-exchange keys, so a
 * credential seen on the wire is worthless for any other session.
 */
#ifndef SFS_MUNGE_H
#define SFS_MUNGE_H

#include <stddef.h>
#include <stdint.h>

#define SFS_MUNGE_SOCKET_DEFAULT "/run/munge/munge.socket.2"
#define SFS_MUNGE_CRED_MAX       2048 /* bytes of an encoded credential, at most */
#define SFS_MUNGE_MAX_AGE_S      60   /* a credential older than this is refused */

typedef struct sfs_munge_info {
    uint32_t uid;
    uint32_t gid;
    uint32_t origin_ipv4; /* network byte order: the address munged gave the encoding host */
    uint64_t encoded_s;   /* when it was made (wall clock, seconds) */
} sfs_munge_info_t;

/* A credential of the calling process carrying `payload` (NUL-terminated,
 * caller frees with free()). `socket` NULL: the default. Fails with
 * -ECONNREFUSED (munged not reachable at the socket: the detail names it). */
int sfs_munge_encode(const char *socket, const void *payload, size_t length, char **cred_p);

/* Decode a credential and check that its payload is exactly `payload`, and
 * that it is at most SFS_MUNGE_MAX_AGE_S old. -EACCES (invalid, replayed,
 * another payload), -EKEYEXPIRED (expired or too old), -ECONNREFUSED
 * (munged not reachable); the detail says which. */
int sfs_munge_decode(const char *socket, const char *cred, const void *payload, size_t length,
                     sfs_munge_info_t *info);

#endif
