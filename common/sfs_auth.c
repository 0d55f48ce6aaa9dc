#include "sfs_auth.h"
#include "sfs_errno.h"

#include <fcntl.h>
#include <pthread.h>
#include <sodium.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_once_t sfs_auth_once = PTHREAD_ONCE_INIT;
static int            sfs_auth_init_rc;

static void sfs_auth_do_init(void)
{
    sfs_auth_init_rc = sodium_init() < 0 ? -EIO : 0;
}

int sfs_auth_init(void)
{
    pthread_once(&sfs_auth_once, sfs_auth_do_init);
    if (sfs_auth_init_rc) {
        return sfs_error_set(sfs_auth_init_rc, "libsodium failed to initialise");
    }
    return 0;
}

int sfs_auth_load_connauth(const char *path, sfs_auth_key_t *key)
{
    uint8_t     secret[SFS_CONNAUTH_MAX + 1];
    struct stat st;
    ssize_t     got;
    size_t      total = 0;
    int         fd, rc;

    rc = sfs_auth_init();
    if (rc) {
        return rc;
    }
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        rc = -errno;
        return sfs_error_set(rc, "cannot open connauth file %s: %s", path, strerror(-rc));
    }
    if (fstat(fd, &st) != 0) {
        rc = -errno;
        sfs_error_set(rc, "cannot stat connauth file %s: %s", path, strerror(-rc));
        goto out_close;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = sfs_error_set(-EINVAL, "connauth file %s is not a regular file", path);
        goto out_close;
    }
    if (st.st_mode & 0177) { /* anything beyond 0600 */
        rc = sfs_error_set(-EPERM,
                           "connauth file %s has mode %04o; it must be 0400 or 0600 "
                           "(chmod 0400 %s)",
                           path, (unsigned)(st.st_mode & 07777), path);
        goto out_close;
    }
    while (total < sizeof(secret)) {
        got = read(fd, secret + total, sizeof(secret) - total);
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            rc = -errno;
            sfs_error_set(rc, "cannot read connauth file %s: %s", path, strerror(-rc));
            goto out_wipe;
        }
        if (got == 0) {
            break;
        }
        total += (size_t)got;
    }
    if (total < SFS_CONNAUTH_MIN || total > SFS_CONNAUTH_MAX) {
        rc = sfs_error_set(-EINVAL, "connauth file %s holds %zu%s bytes; it must hold %d to %d",
                           path, total, total > SFS_CONNAUTH_MAX ? "+" : "", SFS_CONNAUTH_MIN,
                           SFS_CONNAUTH_MAX);
        goto out_wipe;
    }
    /* The key is a hash of the whole file, so any file length works. */
    crypto_generichash(key->bytes, sizeof(key->bytes), secret, total,
                       (const uint8_t *)"stripefs-connauth-v1", 20);
    rc = 0;
out_wipe:
    sodium_memzero(secret, sizeof(secret));
out_close:
    close(fd);
    return rc;
}

int sfs_auth_make_connauth(const char *path, size_t size)
{
    uint8_t secret[SFS_CONNAUTH_MAX];
    size_t  done = 0;
    int     fd, rc;

    if (size < SFS_CONNAUTH_MIN || size > SFS_CONNAUTH_MAX) {
        return sfs_error_set(-EINVAL, "connauth size %zu out of range %d..%d", size,
                             SFS_CONNAUTH_MIN, SFS_CONNAUTH_MAX);
    }
    rc = sfs_auth_init();
    if (rc) {
        return rc;
    }
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
    if (fd < 0) {
        rc = -errno;
        return sfs_error_set(rc, "cannot create connauth file %s: %s", path, strerror(-rc));
    }
    randombytes_buf(secret, size);
    while (done < size) {
        ssize_t put = write(fd, secret + done, size - done);

        if (put < 0) {
            if (errno == EINTR) {
                continue;
            }
            rc = -errno;
            sfs_error_set(rc, "cannot write connauth file %s: %s", path, strerror(-rc));
            goto err_unlink;
        }
        done += (size_t)put;
    }
    if (fsync(fd) != 0 || fchmod(fd, 0400) != 0) {
        rc = -errno;
        sfs_error_set(rc, "cannot sync connauth file %s: %s", path, strerror(-rc));
        goto err_unlink;
    }
    sodium_memzero(secret, sizeof(secret));
    close(fd);
    return 0;

err_unlink:
    sodium_memzero(secret, sizeof(secret));
    close(fd);
    unlink(path);
    return rc;
}

void sfs_auth_random(void *buf, size_t length)
{
    sfs_auth_init();
    randombytes_buf(buf, length);
}

uint64_t sfs_auth_random_u64(void)
{
    uint64_t value;

    sfs_auth_random(&value, sizeof(value));
    return value;
}

static void sfs_auth_hmac(const sfs_auth_key_t *key, const char *label, const uint8_t *nonce_a,
                          const uint8_t *nonce_b, uint64_t session_id, uint8_t out[32])
{
    crypto_auth_hmacsha256_state state;
    uint8_t                      sid[8];

    for (int i = 0; i < 8; i++) {
        sid[i] = (uint8_t)(session_id >> (8 * i));
    }
    crypto_auth_hmacsha256_init(&state, key->bytes, sizeof(key->bytes));
    crypto_auth_hmacsha256_update(&state, (const uint8_t *)label, strlen(label) + 1);
    crypto_auth_hmacsha256_update(&state, nonce_a, SFS_NONCE_SIZE);
    crypto_auth_hmacsha256_update(&state, nonce_b, SFS_NONCE_SIZE);
    crypto_auth_hmacsha256_update(&state, sid, sizeof(sid));
    crypto_auth_hmacsha256_final(&state, out);
    sodium_memzero(&state, sizeof(state));
}

void sfs_auth_server_proof(const sfs_auth_key_t *key, const uint8_t client_nonce[SFS_NONCE_SIZE],
                           const uint8_t server_nonce[SFS_NONCE_SIZE], uint64_t session_id,
                           uint8_t proof[SFS_PROOF_SIZE])
{
    sfs_auth_hmac(key, "stripefs-server-proof", client_nonce, server_nonce, session_id, proof);
}

void sfs_auth_client_proof(const sfs_auth_key_t *key, const uint8_t client_nonce[SFS_NONCE_SIZE],
                           const uint8_t server_nonce[SFS_NONCE_SIZE], uint64_t session_id,
                           uint8_t proof[SFS_PROOF_SIZE])
{
    sfs_auth_hmac(key, "stripefs-client-proof", server_nonce, client_nonce, session_id, proof);
}

int sfs_auth_proof_check(const uint8_t expected[SFS_PROOF_SIZE],
                         const uint8_t received[SFS_PROOF_SIZE])
{
    return sodium_memcmp(expected, received, SFS_PROOF_SIZE) == 0 ? 0 : -EACCES;
}

void sfs_auth_session_key(const sfs_auth_key_t *key, const uint8_t client_nonce[SFS_NONCE_SIZE],
                          const uint8_t server_nonce[SFS_NONCE_SIZE], uint64_t session_id,
                          sfs_auth_key_t *session_key)
{
    sfs_auth_hmac(key, "stripefs-session-key", client_nonce, server_nonce, session_id,
                  session_key->bytes);
}

void sfs_auth_mac(const sfs_auth_key_t *session_key, const uint8_t *packed_hdr, const void *args,
                  size_t args_length, uint8_t mac[SFS_PROTO_MAC_SIZE])
{
    crypto_generichash_state state;

    crypto_generichash_init(&state, session_key->bytes, sizeof(session_key->bytes),
                            SFS_PROTO_MAC_SIZE);
    crypto_generichash_update(&state, packed_hdr, SFS_PROTO_MAC_COVERS);
    if (args_length) {
        crypto_generichash_update(&state, args, args_length);
    }
    crypto_generichash_final(&state, mac, SFS_PROTO_MAC_SIZE);
}

int sfs_auth_mac_check(const sfs_auth_key_t *session_key, const uint8_t *packed_hdr,
                       const void *args, size_t args_length)
{
    uint8_t expected[SFS_PROTO_MAC_SIZE];

    sfs_auth_mac(session_key, packed_hdr, args, args_length, expected);
    return sodium_memcmp(expected, packed_hdr + SFS_PROTO_MAC_COVERS, SFS_PROTO_MAC_SIZE) == 0
               ? 0
               : -EACCES;
}

void sfs_auth_kx_keypair(sfs_auth_kx_t *kx)
{
    sfs_auth_init();
    crypto_kx_keypair(kx->public_key, kx->secret_key);
}

/* One key from the two directions' keys, in client-to-server order. */
static void sfs_auth_kx_combine(const uint8_t *to_server, const uint8_t *to_client,
                                sfs_auth_key_t *session_key)
{
    crypto_generichash_state state;

    crypto_generichash_init(&state, NULL, 0, sizeof(session_key->bytes));
    crypto_generichash_update(&state, (const uint8_t *)"stripefs-kx-v1", 14);
    crypto_generichash_update(&state, to_server, crypto_kx_SESSIONKEYBYTES);
    crypto_generichash_update(&state, to_client, crypto_kx_SESSIONKEYBYTES);
    crypto_generichash_final(&state, session_key->bytes, sizeof(session_key->bytes));
}

int sfs_auth_kx_client_key(const sfs_auth_kx_t *mine,
                           const uint8_t        server_public[SFS_KX_PUBLIC_SIZE],
                           sfs_auth_key_t      *session_key)
{
    uint8_t rx[crypto_kx_SESSIONKEYBYTES], tx[crypto_kx_SESSIONKEYBYTES];

    if (crypto_kx_client_session_keys(rx, tx, mine->public_key, mine->secret_key, server_public) !=
        0) {
        return sfs_error_set(-EACCES, "the server's key-exchange key is not valid");
    }
    sfs_auth_kx_combine(tx, rx, session_key);
    sodium_memzero(rx, sizeof(rx));
    sodium_memzero(tx, sizeof(tx));
    return 0;
}

int sfs_auth_kx_server_key(const sfs_auth_kx_t *mine,
                           const uint8_t        client_public[SFS_KX_PUBLIC_SIZE],
                           sfs_auth_key_t      *session_key)
{
    uint8_t rx[crypto_kx_SESSIONKEYBYTES], tx[crypto_kx_SESSIONKEYBYTES];

    if (crypto_kx_server_session_keys(rx, tx, mine->public_key, mine->secret_key, client_public) !=
        0) {
        return sfs_error_set(-EACCES, "the client's key-exchange key is not valid");
    }
    sfs_auth_kx_combine(rx, tx, session_key);
    sodium_memzero(rx, sizeof(rx));
    sodium_memzero(tx, sizeof(tx));
    return 0;
}

void sfs_auth_transcript(const char *side, const uint8_t client_nonce[SFS_NONCE_SIZE],
                         const uint8_t server_nonce[SFS_NONCE_SIZE], uint64_t session_id,
                         const uint8_t client_public[SFS_KX_PUBLIC_SIZE],
                         const uint8_t server_public[SFS_KX_PUBLIC_SIZE], uint8_t out[32])
{
    crypto_generichash_state state;
    uint8_t                  sid[8];

    for (int i = 0; i < 8; i++) {
        sid[i] = (uint8_t)(session_id >> (8 * i));
    }
    crypto_generichash_init(&state, NULL, 0, 32);
    crypto_generichash_update(&state, (const uint8_t *)"stripefs-munge-v1", 17);
    crypto_generichash_update(&state, (const uint8_t *)side, strlen(side) + 1);
    crypto_generichash_update(&state, client_nonce, SFS_NONCE_SIZE);
    crypto_generichash_update(&state, server_nonce, SFS_NONCE_SIZE);
    crypto_generichash_update(&state, sid, sizeof(sid));
    crypto_generichash_update(&state, client_public, SFS_KX_PUBLIC_SIZE);
    crypto_generichash_update(&state, server_public, SFS_KX_PUBLIC_SIZE);
    crypto_generichash_final(&state, out, 32);
}
