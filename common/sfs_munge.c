#include "sfs_munge.h"

#include "sfs_errno.h"

#include <munge.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int sfs_munge_ctx(const char *socket, munge_ctx_t *ctx_p)
{
    munge_ctx_t ctx = munge_ctx_create();

    if (!ctx) {
        return sfs_error_set(-ENOMEM, "cannot create a MUNGE context");
    }
    if (munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket ? socket : SFS_MUNGE_SOCKET_DEFAULT) !=
        EMUNGE_SUCCESS) {
        munge_ctx_destroy(ctx);
        return sfs_error_set(-EINVAL, "bad MUNGE socket path '%s'", socket);
    }
    *ctx_p = ctx;
    return 0;
}

/* The errno a MUNGE failure maps to. */
static int sfs_munge_errno(munge_err_t err)
{
    switch (err) {
    case EMUNGE_SOCKET:
        return -ECONNREFUSED;
    case EMUNGE_CRED_EXPIRED:
    case EMUNGE_CRED_REWOUND:
        return -EKEYEXPIRED;
    case EMUNGE_NO_MEMORY:
        return -ENOMEM;
    default:
        return -EACCES;
    }
}

int sfs_munge_encode(const char *socket, const void *payload, size_t length, char **cred_p)
{
    munge_ctx_t ctx;
    munge_err_t err;
    char       *cred = NULL;
    int         rc   = sfs_munge_ctx(socket, &ctx);

    if (rc) {
        return rc;
    }
    err = munge_encode(&cred, ctx, payload, (int)length);
    if (err != EMUNGE_SUCCESS) {
        rc = sfs_error_set(sfs_munge_errno(err),
                           "MUNGE: cannot get a credential from munged at %s: %s",
                           socket ? socket : SFS_MUNGE_SOCKET_DEFAULT, munge_ctx_strerror(ctx));
        free(cred);
        munge_ctx_destroy(ctx);
        return rc;
    }
    munge_ctx_destroy(ctx);
    *cred_p = cred;
    return 0;
}

int sfs_munge_decode(const char *socket, const char *cred, const void *payload, size_t length,
                     sfs_munge_info_t *info)
{
    munge_ctx_t    ctx;
    munge_err_t    err;
    void          *got        = NULL;
    int            got_length = 0;
    uid_t          uid;
    gid_t          gid;
    struct in_addr addr;
    time_t         encoded = 0, now = time(NULL);
    int            rc = sfs_munge_ctx(socket, &ctx);

    if (rc) {
        return rc;
    }
    err = munge_decode(cred, ctx, &got, &got_length, &uid, &gid);
    if (err != EMUNGE_SUCCESS) {
        rc = sfs_error_set(sfs_munge_errno(err), "MUNGE credential refused: %s%s",
                           munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(err),
                           err == EMUNGE_CRED_REPLAYED ? " (a replay)" : "");
        goto out;
    }
    if (got_length < 0 || (size_t)got_length != length ||
        (length && memcmp(got, payload, length) != 0)) {
        rc = sfs_error_set(-EACCES, "MUNGE credential refused: it was made for another "
                                    "session (payload differs)");
        goto out;
    }
    memset(&addr, 0, sizeof(addr));
    munge_ctx_get(ctx, MUNGE_OPT_ADDR4, &addr);
    munge_ctx_get(ctx, MUNGE_OPT_ENCODE_TIME, &encoded);
    if (encoded + SFS_MUNGE_MAX_AGE_S < now) {
        rc = sfs_error_set(-EKEYEXPIRED, "MUNGE credential refused: made %ld s ago (at most %d)",
                           (long)(now - encoded), SFS_MUNGE_MAX_AGE_S);
        goto out;
    }
    info->uid         = (uint32_t)uid;
    info->gid         = (uint32_t)gid;
    info->origin_ipv4 = addr.s_addr;
    info->encoded_s   = (uint64_t)encoded;
    rc                = 0;
out:
    free(got);
    munge_ctx_destroy(ctx);
    return rc;
}
