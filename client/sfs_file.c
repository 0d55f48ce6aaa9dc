/* Open files: create/open through the metadata server, then everything
 * else goes to the targets directly (size, truncate, sync). */
#define SFS_LOG_FAC "client"
#include "sfs_client_internal.h"

#include "sfs_alloc.h"
#include "sfs_auth.h"
#include "sfs_cap.h"
#include "sfs_errno.h"
#include "sfs_layout.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SFS_FILE_GLOBAL_MAGIC 0x53464647u /* "SFFG" */

int sfs_file_open(sfs_client_t *client, const char *path, int flags, uint32_t mode,
                  const sfs_open_params_t *params, sfs_file_t **file_p)
{
    sfs_meta_req_t *req;
    sfs_file_t     *file;
    int             rc, created = 0;

    SFS_ARG_CHECK(client, "the client is NULL");
    SFS_ARG_CHECK(path, "the path is NULL");
    SFS_ARG_CHECK(file_p, "file_p is NULL");
    if ((flags & 0x3) == 0x3) {
        return sfs_error_set(-EINVAL, "%s: invalid access mode", path);
    }
    if (flags & ~SFS_O_KNOWN) {
        return sfs_error_set(-EINVAL, "%s: unknown open flags %#x", path,
                             (unsigned)(flags & ~SFS_O_KNOWN));
    }
    if (params && (params->field_mask & ~SFS_OPEN_PARAM_KNOWN)) {
        return sfs_error_set(-EINVAL, "%s: unknown open parameters %#" PRIx64, path,
                             params->field_mask & ~(uint64_t)SFS_OPEN_PARAM_KNOWN);
    }
    req = calloc(1, sizeof(*req));
    if (!req || !SFS_ALLOC_PTR(file)) {
        free(req);
        return -ENOMEM;
    }
    rc = sfs_client_path(path, req->path);
    if (rc) {
        goto err;
    }
    file->client = client;
    file->flags  = flags;
    snprintf(file->path, sizeof(file->path), "%s", req->path);
    /* the metadata server checks the access against the file's mode and
     * answers with a capability the targets ask for */
    req->flags = ((flags & 0x3) != SFS_O_WRONLY ? SFS_OPEN_READ : 0) |
                 ((flags & 0x3) != SFS_O_RDONLY ? SFS_OPEN_WRITE : 0);
    if (flags & SFS_O_CREAT) {
        req->mode = mode;
        req->uid  = client->uid;
        req->gid  = client->gid;
        req->flags |= (flags & SFS_O_EXCL) ? SFS_CREATE_EXCL : 0;
        req->chunk_size   = SFS_PARAM_VALUE(params, chunk_size, SFS_OPEN_PARAM_CHUNK_SIZE, 0);
        req->stripe_count = SFS_PARAM_VALUE(params, stripe_count, SFS_OPEN_PARAM_STRIPE_COUNT, 0);
        req->start_target = SFS_PARAM_VALUE(params, start_target, SFS_OPEN_PARAM_START_TARGET, 0);
        if ((flags & 0x3) != SFS_O_RDONLY) {
            req->flags |= SFS_CREATE_WRITER; /* a new file: registered with no BEGIN */
        }
        if (params && (params->field_mask & SFS_OPEN_PARAM_MIRROR)) {
            req->flags |= params->mirror ? SFS_PATTERN_REQ_MIRROR : SFS_PATTERN_REQ_NO_MIRROR;
        }
        if (params && (params->field_mask & SFS_OPEN_PARAM_POOL)) {
            if (!params->pool || !params->pool[0] || strlen(params->pool) >= SFS_POOL_NAME_MAX) {
                rc = sfs_error_set(-EINVAL, "%s: '%.80s' is not a storage pool name", file->path,
                                   params->pool ? params->pool : "(null)");
                goto err;
            }
            req->flags |= SFS_PATTERN_REQ_POOL;
            snprintf(req->pool, sizeof(req->pool), "%s", params->pool);
        }
        rc = sfs_client_meta_attr(client, SFS_OP_CREATE, req, &file->attr, &created, &file->cap);
    } else {
        rc = sfs_client_meta_attr(client, SFS_OP_LOOKUP, req, &file->attr, NULL, &file->cap);
    }
    file->cap_got_s = sfs_wall_ns() / 1000000000u;
    if (rc) {
        goto err;
    }
    if (file->attr.type == SFS_TYPE_DIR) {
        rc = sfs_error_set(-EISDIR, "%s is a directory", file->path);
        goto err;
    }
    if (file->attr.pattern_targets == 0 ||
        file->attr.pattern_targets != file->attr.pattern.stripe_count ||
        sfs_pattern_validate(&file->attr.pattern) != 0) {
        rc = sfs_error_set(-EIO, "%s has no valid stripe pattern (run stripefs-fsck)", file->path);
        goto err;
    }
    if (created == SFS_CREATED_WRITER || created == SFS_CREATED_WRITER_QUOTA) {
        /* registered by the CREATE's own commit, with the size known: 0 */
        file->writer_registered = 1;
        file->writer_pid        = getpid();
        file->size_view_ok      = 1;
        file->size_view         = 0;
        file->quota_limited     = created == SFS_CREATED_WRITER_QUOTA; /* nothing granted yet */
        file->quota_granted     = 0;
    }
    if ((flags & SFS_O_TRUNC) && !created && (flags & 0x3) != SFS_O_RDONLY) {
        rc = sfs_file_truncate(file, 0);
        if (rc) {
            goto err;
        }
    }
    file->open_id = sfs_auth_random_u64();
    {
        sfs_tp_conn_t *meta_conn;

        /* the counter of this open lives in this metadata server's memory */
        if (sfs_cluster_meta_conn(client->cluster, &meta_conn) == 0) {
            file->meta_uuid = sfs_tp_conn_server_uuid(meta_conn);
        }
    }
    sfs_client_get(client);
    free(req);
    *file_p = file;
    return 0;

err:
    free(req);
    free(file);
    return rc;
}

void sfs_file_cap_refresh(sfs_file_t *file)
{
    uint64_t        now = sfs_wall_ns() / 1000000000u;
    sfs_meta_req_t *req;
    sfs_attr_t      attr;
    sfs_cap_t       cap;

    int64_t life = (int64_t)(file->cap.expires_s - file->cap_got_s);

    /* the expiry is the servers' clock, the rest ours: a client clock far
     * ahead of theirs must neither stop renewing nor renew at every call */
    if (life <= 0 || life > 7 * 86400) {
        life = SFS_CAP_LIFETIME_DEFAULT_S;
    }
    if (file->cap.expires_s == 0 || now < file->cap_got_s + (uint64_t)life / 2) {
        return;
    }
    req = calloc(1, sizeof(*req));
    if (!req) {
        return;
    }
    snprintf(req->path, sizeof(req->path), "%s", file->path);
    req->flags = ((file->cap.access & SFS_CAP_READ) ? SFS_OPEN_READ : 0) |
                 ((file->cap.access & SFS_CAP_WRITE) ? SFS_OPEN_WRITE : 0);
    if (sfs_client_meta_attr(file->client, SFS_OP_LOOKUP, req, &attr, NULL, &cap) == 0 &&
        attr.entry_id == file->attr.entry_id && cap.entry_id == attr.entry_id) {
        (void)sfs_file_adopt_pattern(file, &attr); /* its chunks moved (docs/migration.md) */
        file->cap       = cap;
        file->cap_got_s = now;
        sfs_file_writer_renew(file);
    } else {
        sfs_debug("%s: capability not renewed (%s); it expires in %lu s", file->path,
                  sfs_error_detail(), (unsigned long)(file->cap.expires_s - now));
        file->cap_got_s = now; /* try again at half of what is left */
    }
    sfs_error_clear();
    free(req);
}

void sfs_file_kill_privs(sfs_file_t *file)
{
    sfs_meta_req_t *req;
    sfs_attr_t      attr;

    file->privs_checked = 1;
    if (!(file->attr.mode & S_ISUID) &&
        !((file->attr.mode & S_ISGID) && (file->attr.mode & S_IXGRP))) {
        return;
    }
    req = calloc(1, sizeof(*req));
    if (!req) {
        return;
    }
    snprintf(req->path, sizeof(req->path), "%s", file->path);
    req->flags = SFS_SETATTR_KILL_PRIV;
    if (sfs_client_meta_attr(file->client, SFS_OP_SETATTR, req, &attr, NULL, NULL) == 0 &&
        attr.entry_id == file->attr.entry_id) {
        file->attr.mode = attr.mode;
    }
    sfs_error_clear();
    free(req);
}

int sfs_file_close(sfs_file_t *file)
{
    sfs_client_t *client;
    uint64_t      ignored;

    if (!file) {
        return 0;
    }
    if (file->counter_used) {
        sfs_file_counter(file, SFS_COUNTER_FORGET, 0, &ignored);
    }
    client = file->client;
    sfs_file_writer_end(file);
    sfs_file_local_close(file);
    free(file);
    sfs_client_put(client); /* after the file's last use of it */
    return 0;
}

const char *sfs_file_path(const sfs_file_t *file)
{
    if (!file) {
        sfs_error_set(-EINVAL, "sfs_file_path: the file is NULL");
        return NULL;
    }
    return file->path;
}

int sfs_file_size(sfs_file_t *file, uint64_t *size_p)
{
    uint64_t lengths[SFS_STRIPE_COUNT_MAX];
    int      rc;

    SFS_ARG_CHECK(file && size_p, "the file or size_p is NULL");
    sfs_file_cap_refresh(file);
    rc = sfs_client_chunk_lengths(file->client, &file->attr, &file->cap, lengths);
    for (int moved = 0; rc == -ESTALE && moved < 4 && sfs_file_refetch_pattern(file) == 0;
         moved++) { /* a chunk moved (docs/migration.md) */
        rc = sfs_client_chunk_lengths(file->client, &file->attr, &file->cap, lengths);
    }
    if (rc == 0) {
        *size_p = sfs_layout_file_size(&file->attr.pattern, lengths);
    }
    return rc;
}

/* Send one chunk request per target in parallel and wait for all. */
static int sfs_file_each_target_once(sfs_file_t *file, uint32_t opcode, uint64_t size)
{
    const sfs_pattern_t *pattern = &file->attr.pattern;
    sfs_tp_rpc_t        *rpcs[SFS_STRIPE_COUNT_MAX];
    uint32_t             last = sfs_layout_last_byte_target(pattern, size);
    int                  rc   = 0;

    sfs_file_cap_refresh(file);
    memset(rpcs, 0, sizeof(rpcs));
    for (uint32_t t = 0; t < pattern->stripe_count && rc == 0; t++) {
        sfs_chunk_req_t     chunk;
        uint8_t             args[96 + SFS_BOUND_WIRE_MAX];
        sfs_wbuf_t          wb;
        sfs_tp_rpc_params_t params;
        sfs_tp_conn_t      *conn;

        memset(&chunk, 0, offsetof(sfs_chunk_req_t, extents));
        chunk.target_id = sfs_client_mirror_target(file->client, pattern, t);
        chunk.entry_id  = file->attr.entry_id;
        chunk.cap       = file->cap;
        if (opcode == SFS_OP_TRUNCATE) {
            /* the target holding the last byte gets the exact length (it
             * may grow, with a hole); the others are only cut */
            chunk.length = sfs_layout_chunk_length_for_size(pattern, t, size);
            chunk.flags  = (size > 0 && t == last) ? SFS_TRUNCATE_EXACT : SFS_TRUNCATE_SHRINK_ONLY;
            if (file->cap.access & SFS_CAP_BOUNDED) {
                chunk.flags |= SFS_CHUNK_BOUND; /* the targets check it (sfs_quota.c) */
                chunk.bound = file->bound;
            }
        }
        if (pattern->type == SFS_PATTERN_MIRROR) {
            chunk.flags |= SFS_CHUNK_MIRRORED; /* the primary passes it to its buddy */
        }
        sfs_wbuf_init(&wb, args, sizeof(args));
        sfs_proto_chunk_req_pack(&wb, opcode, &chunk);
        memset(&params, 0, sizeof(params));
        params.opcode      = opcode;
        params.args        = args;
        params.args_length = wb.length;
        rc                 = sfs_cluster_target_conn(file->client->cluster, chunk.target_id, &conn);
        if (rc == 0) {
            rc = sfs_tp_rpc_start(conn, &params, &rpcs[t]);
        }
    }
    for (uint32_t t = 0; t < pattern->stripe_count; t++) {
        int one;

        if (!rpcs[t]) {
            continue;
        }
        one = sfs_tp_rpc_wait(rpcs[t]);
        if (one && !rc) {
            const char *detail = sfs_tp_rpc_error_detail(rpcs[t]);
            char        name[SFS_CLIENT_NAME_MAX];

            rc = sfs_error_set(
                one, "%s: %s on %s: %s", file->path, sfs_op_name(opcode),
                sfs_client_target_name(file->client, pattern->targets[t], name, sizeof(name)),
                detail[0] ? detail : sfs_strerror(one));
        }
        sfs_tp_rpc_release(rpcs[t]);
    }
    return rc;
}

/* The same, again after a mirror failover (TRUNCATE and FSYNC may be
 * repeated: the same length, the same sync). */
static int sfs_file_each_target(sfs_file_t *file, uint32_t opcode, uint64_t size)
{
    uint64_t deadline = 0;
    int      rc;

    /* again once every group has a primary the map shows online (or none
     * to promote): not to the dead one, whose failure UCX's keepalive
     * reports only 2 s on (sfs_client_mirror_serving) */
    while ((rc = sfs_file_each_target_once(file, opcode, size)) != 0 &&
           sfs_client_mirror_retryable(&file->attr.pattern, rc) &&
           sfs_client_mirror_wait(file->client, &deadline) == 0 &&
           sfs_client_mirror_wait_serving(file->client, &file->attr.pattern,
                                          file->attr.pattern.stripe_count, NULL, &deadline) == 0) {
    }
    /* a chunk moved (docs/migration.md): again with the new pattern */
    for (int moved = 0; rc == -ESTALE && moved < 4 && sfs_file_refetch_pattern(file) == 0;
         moved++) {
        rc = sfs_file_each_target_once(file, opcode, size);
    }
    return rc;
}

int sfs_file_truncate(sfs_file_t *file, uint64_t size)
{
    int rc;

    SFS_ARG_CHECK(file, "the file is NULL");
    if (size > (uint64_t)INT64_MAX) {
        return sfs_error_set(-EFBIG, "%s: size %lu too large", file->path, (unsigned long)size);
    }
    rc = sfs_file_writer_begin(file);
    if (rc == 0) {
        /* a space quota counts sizes: growing by truncate is charged too */
        sfs_file_extent_t grown = {.offset = 0, .length = size};

        rc = sfs_file_quota_grow(file, &grown, 1);
    }
    if (rc == 0) {
        rc = sfs_file_each_target(file, SFS_OP_TRUNCATE, size);
        if (rc) {
            sfs_file_writer_failed(file);
        } else {
            sfs_file_writer_truncated(file, size);
        }
    }
    return rc;
}

int sfs_file_sync(sfs_file_t *file)
{
    SFS_ARG_CHECK(file, "the file is NULL");
    return sfs_file_each_target(file, SFS_OP_FSYNC, 0);
}

int sfs_file_stat(sfs_file_t *file, sfs_stat_t *stat)
{
    int rc;

    SFS_ARG_CHECK(file && stat, "the file or stat is NULL");
    sfs_client_attr_to_stat(&file->attr, stat);
    rc = sfs_file_size(file, &stat->size);
    return rc;
}

void sfs_file_layout(const sfs_file_t *file, sfs_stat_t *stat)
{
    if (!stat) {
        return;
    }
    if (!file) {
        memset(stat, 0, sizeof(*stat));
        return;
    }
    sfs_client_attr_to_stat(&file->attr, stat);
}

int sfs_file_local2global(const sfs_file_t *file, void *buf, size_t *length_p)
{
    uint8_t    tmp[SFS_PATH_MAX + 1024];
    sfs_wbuf_t wb;

    SFS_ARG_CHECK(file && length_p, "the file or length_p is NULL");
    sfs_wbuf_init(&wb, tmp, sizeof(tmp));
    sfs_wbuf_u32(&wb, SFS_FILE_GLOBAL_MAGIC);
    sfs_wbuf_u32(&wb, (uint32_t)file->flags);
    sfs_wbuf_u64(&wb, file->open_id);
    sfs_wbuf_str(&wb, file->path);
    sfs_proto_attr_pack(&wb, &file->attr);
    sfs_cap_pack(&wb, &file->cap);
    sfs_wbuf_u64(&wb, file->cap_got_s);
    sfs_wbuf_u64(&wb, file->meta_uuid);
    if (wb.error) {
        return sfs_error_set(-EOVERFLOW, "%s: handle does not fit", file->path);
    }
    if (buf) {
        if (*length_p < wb.length) {
            return sfs_error_set(-EOVERFLOW, "%s: handle needs %zu bytes", file->path, wb.length);
        }
        memcpy(buf, tmp, wb.length);
    }
    *length_p = wb.length;
    return 0;
}

int sfs_file_global2local(sfs_client_t *client, const void *buf, size_t length, sfs_file_t **file_p)
{
    sfs_file_t *file;
    sfs_rbuf_t  rb;

    SFS_ARG_CHECK(client && file_p, "the client or file_p is NULL");
    SFS_ARG_CHECK(buf && length > 0, "the handle is NULL or empty");
    if (!SFS_ALLOC_PTR(file)) {
        return -ENOMEM;
    }
    sfs_rbuf_init(&rb, buf, length);
    if (sfs_rbuf_u32(&rb) != SFS_FILE_GLOBAL_MAGIC) {
        free(file);
        return sfs_error_set(-EINVAL, "not a stripefs file handle");
    }
    file->flags   = (int)sfs_rbuf_u32(&rb);
    file->open_id = sfs_rbuf_u64(&rb);
    sfs_rbuf_str(&rb, file->path, sizeof(file->path));
    sfs_proto_attr_unpack(&rb, &file->attr);
    sfs_cap_unpack(&rb, &file->cap);
    file->cap_got_s = sfs_rbuf_u64(&rb);
    file->meta_uuid = sfs_rbuf_u64(&rb);
    if (rb.error || sfs_pattern_validate(&file->attr.pattern) != 0) {
        free(file);
        return sfs_error_set(-EINVAL, "malformed stripefs file handle");
    }
    file->client = client;
    sfs_client_get(client);
    *file_p = file;
    return 0;
}

/* A COUNTER call gets a number of its own, which its resend keeps: the
 * server answers the same call sent again (its reply lost on a cut of this
 * client's link) from the answer it kept, so an ADD is not run twice (a
 * skipped range of the shared file). Only to a server that keeps them, and
 * with the server's uuid (the field before it). */
static uint64_t sfs_file_counter_tag(sfs_file_t *file)
{
    sfs_client_t *client = file->client;

    if (!client->reply_cache || file->meta_uuid == 0 ||
        !(sfs_cluster_meta_features(client->cluster) & SFS_FEATURE_COUNTER_TAGS)) {
        return 0;
    }
    return __atomic_add_fetch(&client->last_op_tag, 1, __ATOMIC_RELAXED);
}

int sfs_file_counter(sfs_file_t *file, int op, uint64_t value, uint64_t *before_p)
{
    sfs_counter_req_t req;
    uint8_t           args[48];
    sfs_wbuf_t        wb;
    sfs_tp_rpc_t     *rpc;
    int               rc;

    SFS_ARG_CHECK(file && before_p, "the file or before_p is NULL");
    SFS_ARG_CHECK(op == SFS_COUNTER_ADD || op == SFS_COUNTER_SET || op == SFS_COUNTER_FORGET,
                  "op is not SFS_COUNTER_ADD, _SET or _FORGET");
    req = (sfs_counter_req_t){
        .key = file->open_id, .op = (uint32_t)op, .value = value, .server_uuid = file->meta_uuid};
    req.op_tag = sfs_file_counter_tag(file);
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_counter_req_pack(&wb, &req);
    if (wb.error) {
        return sfs_error_set(-EPROTO, "%s: shared file pointer: arguments too long", file->path);
    }
    rc = sfs_client_meta_call_args(file->client, SFS_OP_COUNTER, args, wb.length, &rpc);
    if (rc == 0) {
        size_t      length;
        const void *reply = sfs_tp_rpc_reply_args(rpc, &length);
        sfs_rbuf_t  rb;

        sfs_rbuf_init(&rb, reply, length);
        *before_p          = sfs_rbuf_u64(&rb);
        rc                 = rb.error ? sfs_error_set(-EPROTO, "malformed COUNTER reply") : 0;
        file->counter_used = 1;
    } else {
        char detail[SFS_ERROR_DETAIL_MAX];

        snprintf(detail, sizeof(detail), "%s", sfs_error_detail());
        sfs_error_set(rc, "%s: shared file pointer: %s", file->path, detail);
    }
    sfs_tp_rpc_release(rpc);
    return rc;
}
