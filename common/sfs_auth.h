/*
 * Shared-secret authentication (libsodium).
 *
 * Every node of a cluster holds the same connauth file (random bytes, mode
 * 0400 or 0600). The handshake is a mutual challenge-response:
 *   client -> server  HELLO(client nonce, ...)
 *   server -> client  session id, server nonce,
 *                     server proof = HMAC(secret, "server" | nonces | session id)
 *   client -> server  AUTH(client proof = HMAC(secret, "client" | nonces | session id))
 * Both proofs are compared in constant time. A replayed AUTH fails because
 * every HELLO gets a fresh server nonce and session id. After the handshake
 * both sides derive a session key and every message carries a MAC over its
 * header and arguments, so requests cannot be forged without the secret.
 */
#ifndef SFS_AUTH_H
#define SFS_AUTH_H

#include "sfs_proto.h"

#include <stddef.h>
#include <stdint.h>

#define SFS_AUTH_KEY_SIZE         32
#define SFS_CONNAUTH_MIN          16 /* bytes of secret at least */
#define SFS_CONNAUTH_MAX          4096
#define SFS_CONNAUTH_DEFAULT_SIZE 128

typedef struct sfs_auth_key {
    uint8_t bytes[SFS_AUTH_KEY_SIZE];
} sfs_auth_key_t;

/* Initialise libsodium once (thread-safe). */
int sfs_auth_init(void);

/* Read a connauth file and derive the cluster key. Refuses a file whose mode
 * lets group or others read it, one that is too short or too long, and one
 * that is not a regular file; the error names the file. */
int sfs_auth_load_connauth(const char *path, sfs_auth_key_t *key);

/* Create a connauth file with `size` random bytes and mode 0400. Fails with
 * -EEXIST rather than overwrite an existing file. */
int sfs_auth_make_connauth(const char *path, size_t size);

void     sfs_auth_random(void *buf, size_t length);
uint64_t sfs_auth_random_u64(void);

/* Proofs of the handshake (see above). */
void sfs_auth_server_proof(const sfs_auth_key_t *key, const uint8_t client_nonce[SFS_NONCE_SIZE],
                           const uint8_t server_nonce[SFS_NONCE_SIZE], uint64_t session_id,
                           uint8_t proof[SFS_PROOF_SIZE]);
void sfs_auth_client_proof(const sfs_auth_key_t *key, const uint8_t client_nonce[SFS_NONCE_SIZE],
                           const uint8_t server_nonce[SFS_NONCE_SIZE], uint64_t session_id,
                           uint8_t proof[SFS_PROOF_SIZE]);
/* Constant-time comparison of two proofs: 0 if equal. */
int sfs_auth_proof_check(const uint8_t expected[SFS_PROOF_SIZE],
                         const uint8_t received[SFS_PROOF_SIZE]);

/* The session key both sides derive after the handshake. */
void sfs_auth_session_key(const sfs_auth_key_t *key, const uint8_t client_nonce[SFS_NONCE_SIZE],
                          const uint8_t server_nonce[SFS_NONCE_SIZE], uint64_t session_id,
                          sfs_auth_key_t *session_key);

/* MUNGE sessions: an X25519 key exchange (libsodium crypto_kx). */
typedef struct sfs_auth_kx {
    uint8_t public_key[SFS_KX_PUBLIC_SIZE];
    uint8_t secret_key[32];
} sfs_auth_kx_t;

void sfs_auth_kx_keypair(sfs_auth_kx_t *kx);
/* The session key on either side; -EACCES for a bad peer key. The two
 * sides derive the same key. */
int sfs_auth_kx_client_key(const sfs_auth_kx_t *mine,
                           const uint8_t        server_public[SFS_KX_PUBLIC_SIZE],
                           sfs_auth_key_t      *session_key);
int sfs_auth_kx_server_key(const sfs_auth_kx_t *mine,
                           const uint8_t        client_public[SFS_KX_PUBLIC_SIZE],
                           sfs_auth_key_t      *session_key);
/* What a MUNGE credential of the handshake carries: a hash of `side`
 * ("client" or "server"), both nonces, the session id and both public keys. */
void sfs_auth_transcript(const char *side, const uint8_t client_nonce[SFS_NONCE_SIZE],
                         const uint8_t server_nonce[SFS_NONCE_SIZE], uint64_t session_id,
                         const uint8_t client_public[SFS_KX_PUBLIC_SIZE],
                         const uint8_t server_public[SFS_KX_PUBLIC_SIZE], uint8_t out[32]);

/* MAC of a packed header (its first SFS_PROTO_MAC_COVERS bytes) and the
 * argument block. */
void sfs_auth_mac(const sfs_auth_key_t *session_key, const uint8_t *packed_hdr, const void *args,
                  size_t args_length, uint8_t mac[SFS_PROTO_MAC_SIZE]);
/* Verify it in constant time: 0 if it matches, else -EACCES. */
int sfs_auth_mac_check(const sfs_auth_key_t *session_key, const uint8_t *packed_hdr,
                       const void *args, size_t args_length);

#endif
