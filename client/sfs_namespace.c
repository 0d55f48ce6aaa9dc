/* Namespace calls: each one metadata RPC (stat of a file adds the chunk
 * length queries to its targets only where the metadata server does not
 * know its size: sfs_file_size.c). */
#define SFS_LOG_FAC "client"
#include "sfs_client_internal.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_layout.h"
#include "sfs_log.h"
#include "sfs_map.h"
#include "sfs_time.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A namespace change gets a number of its own, which its resend after a
 * failover keeps (the packed arguments are sent again as they are): the
 * server that finds it among the replies it kept answers with that one
 * instead of running the change twice (a mkdir that succeeded, then
 * EEXIST). Only to a server that keeps replies (an older one would refuse
 * the unknown field). */
static uint64_t sfs_client_op_tag(sfs_client_t *client, uint32_t opcode)
{
    if (!client->reply_cache || !sfs_proto_meta_tagged(opcode) ||
        !(sfs_cluster_meta_features(client->cluster) & SFS_FEATURE_REPLY_CACHE)) {
        return 0;
    }
    return __atomic_add_fetch(&client->last_op_tag, 1, __ATOMIC_RELAXED);
}

int sfs_client_meta_call(sfs_client_t *client, uint32_t opcode, const sfs_meta_req_t *req,
                         sfs_tp_rpc_t **rpc_p)
{
    uint8_t    args[SFS_PROTO_ARGS_MAX];
    sfs_wbuf_t wb;
    uint64_t   op_tag = req->op_tag ? 0 : sfs_client_op_tag(client, opcode);

    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_meta_req_pack(&wb, opcode, req);
    if (op_tag) {
        sfs_wbuf_u64(&wb, op_tag); /* the field sfs_proto_meta_req_pack ends with */
    }
    if (wb.error) {
        *rpc_p = NULL;
        return sfs_error_set(-ENAMETOOLONG, "%s: arguments too long", sfs_op_name(opcode));
    }
    return sfs_client_meta_call_args(client, opcode, args, wb.length, rpc_p);
}

int sfs_client_meta_call_args(sfs_client_t *client, uint32_t opcode, const void *args,
                              size_t length, sfs_tp_rpc_t **rpc_p)
{
    sfs_tp_rpc_params_t params;
    const sfs_map_t    *map    = sfs_cluster_map(client->cluster);
    uint32_t            called = map ? map->meta_node : UINT32_MAX;
    uint64_t            start  = sfs_time_ms();
    int                 rc;

    memset(&params, 0, sizeof(params));
    params.opcode      = opcode;
    params.args        = args;
    params.args_length = length;
    params.alloc_reply = 1;
    rc                 = sfs_cluster_call_meta(client->cluster, &params, rpc_p);
    if (rc) {
        /* lost or replaced: sent again once the map names its successor */
        rc = sfs_client_meta_failover(client, &params, called, start, rc, rpc_p);
    }
    if (rc && sfs_client_no_answer(rc)) {
        /* dead, hung or unreachable: say which server */
        sfs_client_meta_error(client, rc);
    } else if (rc && *rpc_p && sfs_tp_rpc_error_detail(*rpc_p)[0]) {
        /* the server's own words name the path: prefer them */
        sfs_error_set(rc, "%s", sfs_tp_rpc_error_detail(*rpc_p));
    }
    return rc;
}

void sfs_client_dirent_to_entry(const sfs_dirent_t *dirent, sfs_dir_entry_t *entry)
{
    snprintf(entry->name, sizeof(entry->name), "%s", dirent->name);
    entry->entry_id = dirent->entry_id;
    entry->type     = dirent->type == SFS_TYPE_DIR ? SFS_FILE_TYPE_DIR : SFS_FILE_TYPE_REGULAR;
}

void sfs_client_attr_to_stat(const sfs_attr_t *attr, sfs_stat_t *stat)
{
    memset(stat, 0, sizeof(*stat));
    stat->entry_id     = attr->entry_id;
    stat->type         = attr->type == SFS_TYPE_DIR ? SFS_FILE_TYPE_DIR : SFS_FILE_TYPE_REGULAR;
    stat->mode         = attr->mode;
    stat->uid          = attr->uid;
    stat->gid          = attr->gid;
    stat->nlink        = attr->nlink;
    stat->atime_ns     = attr->atime_ns;
    stat->mtime_ns     = attr->mtime_ns;
    stat->ctime_ns     = attr->ctime_ns;
    stat->chunk_size   = attr->pattern.chunk_size;
    stat->stripe_count = attr->pattern.stripe_count;
    stat->target_count = attr->pattern_targets;
    stat->flags        = attr->pattern.type == SFS_PATTERN_MIRROR ? SFS_STAT_MIRRORED : 0;
    for (uint32_t i = 0; i < attr->pattern_targets && i < SFS_CLIENT_MAX_TARGETS; i++) {
        stat->targets[i] = attr->pattern.targets[i];
    }
}

/* A metadata call whose reply is an attribute block. */
int sfs_client_meta_attr(sfs_client_t *client, uint32_t opcode, sfs_meta_req_t *req,
                         sfs_attr_t *attr, int *created_p, sfs_cap_t *cap_p)
{
    sfs_tp_rpc_t *rpc;
    const void   *reply;
    size_t        length;
    sfs_rbuf_t    rb;
    int           rc;

    rc = sfs_client_meta_call(client, opcode, req, &rpc);
    if (rc == 0 && attr) {
        reply = sfs_tp_rpc_reply_args(rpc, &length);
        sfs_rbuf_init(&rb, reply, length);
        sfs_proto_attr_unpack(&rb, attr);
        if (opcode == SFS_OP_CREATE) {
            uint8_t created = sfs_rbuf_u8(&rb);

            if (created_p) {
                *created_p = created;
            }
        }
        if (cap_p) {
            memset(cap_p, 0, sizeof(*cap_p));
            if (sfs_rbuf_remaining(&rb) >= SFS_CAP_WIRE_SIZE) {
                sfs_cap_unpack(&rb, cap_p);
            }
        }
        if (rb.error) {
            rc = sfs_error_set(-EPROTO, "metadata server sent a malformed %s reply",
                               sfs_op_name(opcode));
        }
    }
    sfs_tp_rpc_release(rpc);
    return rc;
}

/* A request for `path` by `client`; NULL (with *rc_p) when either is NULL
 * (the error names `call`, the public function) or the path is bad. */
static sfs_meta_req_t *sfs_client_req_for(const char *call, sfs_client_t *client, const char *path,
                                          int *rc_p)
{
    sfs_meta_req_t *req;

    if (!client || !path) {
        *rc_p = sfs_error_set(-EINVAL, "%s: %s is NULL", call, client ? "the path" : "the client");
        return NULL;
    }
    req = calloc(1, sizeof(*req));
    if (!req) {
        *rc_p = -ENOMEM;
        return NULL;
    }
    *rc_p = sfs_client_path(path, req->path);
    if (*rc_p) {
        free(req);
        return NULL;
    }
    req->uid = client->uid;
    req->gid = client->gid;
    return req;
}
#define sfs_client_req(client, path, rc_p) sfs_client_req_for(__func__, (client), (path), (rc_p))

int sfs_lookup(sfs_client_t *client, const char *path, sfs_stat_t *stat)
{
    sfs_attr_t      attr;
    int             rc;
    sfs_meta_req_t *req;

    SFS_ARG_CHECK(stat, "stat is NULL");
    req = sfs_client_req(client, path, &rc);
    if (!req) {
        return rc;
    }
    rc = sfs_client_meta_attr(client, SFS_OP_LOOKUP, req, &attr, NULL, NULL);
    free(req);
    if (rc == 0) {
        sfs_client_attr_to_stat(&attr, stat);
    }
    return rc;
}

int sfs_access(sfs_client_t *client, const char *path, int mode, sfs_stat_t *stat)
{
    sfs_attr_t      attr;
    int             rc;
    sfs_meta_req_t *req;

    if (mode & ~(R_OK | W_OK | X_OK)) {
        return sfs_error_set(-EINVAL, "%s: access mode %#x is not R_OK, W_OK, X_OK",
                             path ? path : "(null)", mode);
    }
    req = sfs_client_req(client, path, &rc);
    if (!req) {
        return rc;
    }
    /* the server answers with the caller's proven identity (root squash,
     * its groups): a client cannot know them itself */
    req->flags = ((mode & R_OK) ? SFS_OPEN_READ : 0) | ((mode & W_OK) ? SFS_OPEN_WRITE : 0) |
                 ((mode & X_OK) ? SFS_OPEN_EXEC : 0);
    rc = sfs_client_meta_attr(client, SFS_OP_LOOKUP, req, &attr, NULL, NULL);
    free(req);
    if (rc == 0 && stat) {
        sfs_client_attr_to_stat(&attr, stat);
    }
    return rc;
}

/* Failures that say nothing about a target being down: they fail the stat. */
static int sfs_client_hard_error(int rc)
{
    return rc == -EACCES || rc == -EPERM || rc == -ENOMEM || rc == -EPROTO || rc == -EINVAL;
}

int sfs_client_chunk_lengths(sfs_client_t *client, const sfs_attr_t *attr, const sfs_cap_t *cap,
                             uint64_t *lengths)
{
    return sfs_client_chunk_lengths_down(client, attr, cap, lengths, NULL);
}

int sfs_client_chunk_lengths_down(sfs_client_t *client, const sfs_attr_t *attr,
                                  const sfs_cap_t *cap, uint64_t *lengths, uint8_t *down)
{
    return sfs_client_chunk_lengths_some(client, attr, cap, lengths, down, NULL);
}

/* One round of CHUNK_STATs to the targets not `known`; a mirrored file's
 * target whose answer says "ask again after a failover" (not the primary
 * now, fenced, unreachable: sfs_client_mirror_retryable) is marked in
 * `again` instead of failing or being taken as down. */
static int sfs_client_chunk_lengths_round(sfs_client_t *client, const sfs_attr_t *attr,
                                          const sfs_cap_t *cap, uint64_t *lengths, uint8_t *down,
                                          const uint8_t *known, uint8_t *again)
{
    sfs_tp_rpc_t *rpcs[SFS_STRIPE_COUNT_MAX];
    uint8_t       args[SFS_STRIPE_COUNT_MAX][96];
    uint32_t      n      = attr->pattern_targets;
    int           mirror = attr->pattern.type == SFS_PATTERN_MIRROR && !client->mirror_old_map;
    int           rc     = 0;

    memset(rpcs, 0, sizeof(rpcs));
    for (uint32_t t = 0; t < n; t++) {
        sfs_chunk_req_t     chunk;
        sfs_tp_rpc_params_t params;
        sfs_tp_conn_t      *conn;
        sfs_wbuf_t          wb;

        if (known && known[t]) {
            continue; /* lengths[t] is the caller's */
        }
        memset(&chunk, 0, offsetof(sfs_chunk_req_t, extents));
        chunk.target_id = sfs_client_mirror_target(client, &attr->pattern, t);
        chunk.entry_id  = attr->entry_id;
        chunk.cap       = *cap;
        if (attr->pattern.type == SFS_PATTERN_MIRROR) {
            chunk.flags = SFS_CHUNK_MIRRORED; /* the primary's length, as its reads */
        }
        sfs_wbuf_init(&wb, args[t], sizeof(args[t]));
        sfs_proto_chunk_req_pack(&wb, SFS_OP_CHUNK_STAT, &chunk);
        memset(&params, 0, sizeof(params));
        params.opcode      = SFS_OP_CHUNK_STAT;
        params.args        = args[t];
        params.args_length = wb.length;
        rc                 = sfs_cluster_target_conn(client->cluster, chunk.target_id, &conn);
        if (rc == 0) {
            rc = sfs_tp_rpc_start(conn, &params, &rpcs[t]);
        }
        if (rc && mirror && sfs_client_mirror_retryable(&attr->pattern, rc)) {
            again[t] = 1;
            rc       = 0;
            continue;
        }
        if (rc && down && !sfs_client_hard_error(rc)) {
            down[t]    = 1; /* unreachable: the others are still asked */
            lengths[t] = 0;
            rc         = 0;
            continue;
        }
        if (rc) {
            break;
        }
    }
    for (uint32_t t = 0; t < n; t++) {
        int one;

        if (!rpcs[t]) {
            continue;
        }
        one = sfs_tp_rpc_wait(rpcs[t]);
        if (one == 0) {
            size_t      length;
            const void *reply = sfs_tp_rpc_reply_args(rpcs[t], &length);
            sfs_rbuf_t  rb;

            sfs_rbuf_init(&rb, reply, length);
            lengths[t] = sfs_rbuf_u64(&rb);
            if (rb.error) {
                one = -EPROTO;
            }
        }
        if (one && mirror && sfs_client_mirror_retryable(&attr->pattern, one)) {
            again[t] = 1;
            one      = 0;
        }
        if (one && down && !sfs_client_hard_error(one)) {
            down[t]    = 1;
            lengths[t] = 0;
            one        = 0;
        }
        if (one && !rc) {
            char name[SFS_CLIENT_NAME_MAX];

            rc = sfs_error_set(
                one, "%s: chunk length of entry %016lx: %s",
                sfs_client_target_name(client, attr->pattern.targets[t], name, sizeof(name)),
                (unsigned long)attr->entry_id,
                sfs_tp_rpc_error_detail(rpcs[t])[0] ? sfs_tp_rpc_error_detail(rpcs[t])
                                                    : sfs_strerror(one));
        }
        sfs_tp_rpc_release(rpcs[t]);
    }
    return rc;
}

int sfs_client_chunk_lengths_some(sfs_client_t *client, const sfs_attr_t *attr,
                                  const sfs_cap_t *cap, uint64_t *lengths, uint8_t *down,
                                  const uint8_t *known)
{
    uint8_t  skip[SFS_STRIPE_COUNT_MAX], again[SFS_STRIPE_COUNT_MAX];
    uint32_t n        = attr->pattern_targets;
    uint64_t deadline = 0;
    int      rc, more;

    memset(skip, 0, sizeof(skip));
    if (known) {
        memcpy(skip, known, n);
    }
    for (;;) {
        memset(again, 0, sizeof(again));
        rc   = sfs_client_chunk_lengths_round(client, attr, cap, lengths, down, skip, again);
        more = 0;
        for (uint32_t t = 0; t < n; t++) {
            if (again[t] && down && sfs_client_mirror_lost(client, &attr->pattern, t)) {
                down[t]    = 1; /* both members away: down now, not after the wait */
                lengths[t] = 0;
                again[t]   = 0;
            }
            skip[t] = skip[t] || !again[t];
            more    = more || again[t];
        }
        if (rc || !more) {
            return rc;
        }
        /* a mirrored file's member answered "not the primary" or did not
         * answer: a pause and a map refresh, as its reads get */
        rc = sfs_client_mirror_wait(client, &deadline);
        if (rc == 0) {
            rc = sfs_client_mirror_wait_serving(client, &attr->pattern, n, again, &deadline);
        }
        if (rc == 0) {
            continue;
        }
        /* past the failover's deadline: down (as an unreachable target is),
         * or the stat fails naming the first such target */
        for (uint32_t t = 0; t < n; t++) {
            if (!again[t]) {
                continue;
            }
            if (!down) {
                char name[SFS_CLIENT_NAME_MAX];

                return sfs_error_set(
                    rc, "%s: chunk length of entry %016lx: no member of its mirror group answered",
                    sfs_client_target_name(client, attr->pattern.targets[t], name, sizeof(name)),
                    (unsigned long)attr->entry_id);
            }
            down[t]    = 1;
            lengths[t] = 0;
        }
        return 0;
    }
}

int sfs_stat(sfs_client_t *client, const char *path, sfs_stat_t *stat)
{
    sfs_attr_t      attr;
    sfs_cap_t       cap;
    uint64_t        lengths[SFS_STRIPE_COUNT_MAX];
    int             rc;
    sfs_meta_req_t *req;

    SFS_ARG_CHECK(stat, "stat is NULL");
    req = sfs_client_req(client, path, &rc);
    if (!req) {
        return rc;
    }
    /* one round trip where the metadata server knows the size */
    rc = sfs_client_stat_kept(client, req, stat);
    if (rc != -EOPNOTSUPP && rc != -ENOSYS) {
        free(req);
        return rc;
    }
    sfs_error_clear(); /* an older server: its lookup, then the targets */
    rc = sfs_client_meta_attr(client, SFS_OP_LOOKUP, req, &attr, NULL, &cap);
    free(req);
    if (rc) {
        return rc;
    }
    sfs_client_attr_to_stat(&attr, stat);
    if (attr.type == SFS_TYPE_FILE && attr.pattern_targets) {
        uint8_t down[SFS_STRIPE_COUNT_MAX] = {0};

        rc = sfs_client_chunk_lengths_down(client, &attr, &cap, lengths, down);
        if (rc == 0) {
            attr.pattern.stripe_count = attr.pattern_targets;
            /* with a target down this is what the others hold: a lower
             * bound, flagged, rather than a failed stat (ls -l of a
             * directory must not fail for every file on a dead rank) */
            stat->size = sfs_layout_file_size(&attr.pattern, lengths);
            for (uint32_t t = 0; t < attr.pattern_targets && t < SFS_CLIENT_MAX_TARGETS; t++) {
                stat->target_down[t] = down[t];
                if (down[t]) {
                    stat->flags |= SFS_STAT_SIZE_UNKNOWN;
                }
            }
        }
    }
    return rc;
}

int sfs_mkdir(sfs_client_t *client, const char *path, uint32_t mode)
{
    int             rc;
    sfs_meta_req_t *req = sfs_client_req(client, path, &rc);

    if (!req) {
        return rc;
    }
    req->mode = mode;
    rc        = sfs_client_meta_attr(client, SFS_OP_MKDIR, req, NULL, NULL, NULL);
    free(req);
    return rc;
}

static int sfs_client_simple(sfs_client_t *client, uint32_t opcode, const char *path)
{
    int             rc;
    sfs_meta_req_t *req = sfs_client_req(client, path, &rc);

    if (!req) {
        return rc;
    }
    rc = sfs_client_meta_attr(client, opcode, req, NULL, NULL, NULL);
    free(req);
    return rc;
}

int sfs_rmdir(sfs_client_t *client, const char *path)
{
    return sfs_client_simple(client, SFS_OP_RMDIR, path);
}

int sfs_unlink(sfs_client_t *client, const char *path)
{
    return sfs_client_simple(client, SFS_OP_UNLINK, path);
}

int sfs_rename(sfs_client_t *client, const char *from, const char *to)
{
    int             rc;
    sfs_meta_req_t *req;

    SFS_ARG_CHECK(to, "the new path is NULL");
    req = sfs_client_req(client, from, &rc);
    if (!req) {
        return rc;
    }
    rc = sfs_client_path(to, req->new_path);
    if (rc == 0) {
        rc = sfs_client_meta_attr(client, SFS_OP_RENAME, req, NULL, NULL, NULL);
    }
    free(req);
    return rc;
}

int sfs_chmod(sfs_client_t *client, const char *path, uint32_t mode)
{
    int             rc;
    sfs_meta_req_t *req = sfs_client_req(client, path, &rc);

    if (!req) {
        return rc;
    }
    req->flags = SFS_SETATTR_MODE;
    req->mode  = mode;
    rc         = sfs_client_meta_attr(client, SFS_OP_SETATTR, req, NULL, NULL, NULL);
    free(req);
    return rc;
}

int sfs_chown(sfs_client_t *client, const char *path, uint32_t uid, uint32_t gid)
{
    int             rc;
    sfs_meta_req_t *req = sfs_client_req(client, path, &rc);

    if (!req) {
        return rc;
    }
    /* SFS_ID_UNCHANGED goes as it is: the server keeps that id */
    req->flags = SFS_SETATTR_OWNER;
    req->uid   = uid;
    req->gid   = gid;
    rc         = sfs_client_meta_attr(client, SFS_OP_SETATTR, req, NULL, NULL, NULL);
    free(req);
    return rc;
}

/* One time of sfs_utimens into the request: an explicit time sets `flag`
 * and the value; SFS_UTIME_NOW sets only `now_flag` (the server takes its
 * own clock, and with no explicit time lets whoever may write do it);
 * SFS_UTIME_OMIT sets nothing. */
static void sfs_client_utime_arg(uint64_t value, uint32_t flag, uint32_t now_flag, uint32_t *flags,
                                 uint64_t *out)
{
    if (value == SFS_UTIME_NOW) {
        *flags |= now_flag;
    } else if (value != SFS_UTIME_OMIT) {
        *flags |= flag;
        *out = value;
    }
}

int sfs_utimens(sfs_client_t *client, const char *path, uint64_t atime_ns, uint64_t mtime_ns)
{
    int             rc;
    sfs_meta_req_t *req = sfs_client_req(client, path, &rc);

    if (!req) {
        return rc;
    }
    req->flags = 0;
    sfs_client_utime_arg(atime_ns, SFS_SETATTR_ATIME, SFS_SETATTR_ATIME_NOW, &req->flags,
                         &req->atime_ns);
    sfs_client_utime_arg(mtime_ns, SFS_SETATTR_MTIME, SFS_SETATTR_MTIME_NOW, &req->flags,
                         &req->mtime_ns);
    /* both omitted: nothing changes (not even ctime); the path must exist */
    rc = sfs_client_meta_attr(client, req->flags ? SFS_OP_SETATTR : SFS_OP_LOOKUP, req, NULL, NULL,
                              NULL);
    free(req);
    return rc;
}

int sfs_setpattern(sfs_client_t *client, const char *path, uint64_t chunk_size,
                   uint32_t stripe_count)
{
    return sfs_setpattern_mirror(client, path, chunk_size, stripe_count, -1);
}

int sfs_setpattern_mirror(sfs_client_t *client, const char *path, uint64_t chunk_size,
                          uint32_t stripe_count, int mirror)
{
    int             rc;
    sfs_meta_req_t *req = sfs_client_req(client, path, &rc);

    if (!req) {
        return rc;
    }
    req->chunk_size   = chunk_size;
    req->stripe_count = stripe_count;
    req->flags = mirror < 0 ? 0 : mirror ? SFS_PATTERN_REQ_MIRROR : SFS_PATTERN_REQ_NO_MIRROR;
    rc         = sfs_client_meta_attr(client, SFS_OP_SETPATTERN, req, NULL, NULL, NULL);
    free(req);
    return rc;
}

int sfs_client_meta_page(sfs_client_t *client, uint32_t opcode, const char *path,
                         const char *after_name, uint64_t after_id, uint32_t max,
                         sfs_tp_rpc_t **rpc_p, uint32_t *count_p, int *eof_p, sfs_rbuf_t *payload)
{
    sfs_tp_rpc_t    *rpc = NULL;
    const void      *reply;
    size_t           length;
    sfs_page_reply_t page;
    int              rc;
    sfs_meta_req_t  *req = sfs_client_req(client, path, &rc);

    *rpc_p = NULL;
    if (!req) {
        return rc;
    }
    if (after_name && strlen(after_name) > SFS_NAME_MAX) {
        free(req);
        return sfs_error_set(-ENAMETOOLONG, "readdir of '%s': resume name too long", path);
    }
    snprintf(req->after_name, sizeof(req->after_name), "%s", after_name ? after_name : "");
    req->after_id    = after_id;
    req->max_entries = max;
    rc               = sfs_client_meta_call(client, opcode, req, &rpc);
    free(req);
    if (rc) {
        sfs_tp_rpc_release(rpc);
        return rc;
    }
    reply = sfs_tp_rpc_reply_args(rpc, &length);
    if (sfs_proto_decode(opcode, 1, reply, length, &page, sizeof(page)) != 0 || page.count > max) {
        sfs_tp_rpc_release(rpc);
        return sfs_error_set(-EPROTO, "metadata server sent a malformed %s reply",
                             sfs_op_name(opcode));
    }
    sfs_rbuf_init(payload, sfs_tp_rpc_reply_payload(rpc), sfs_tp_rpc_reply_payload_length(rpc));
    *rpc_p   = rpc;
    *count_p = page.count;
    *eof_p   = page.eof;
    return 0;
}

int sfs_readdir(sfs_client_t *client, const char *path, const char *after, sfs_dir_entry_t *entries,
                uint32_t max, uint32_t *count_p, int *eof_p)
{
    sfs_tp_rpc_t *rpc;
    sfs_rbuf_t    rb;
    uint32_t      count;
    int           rc;

    SFS_ARG_CHECK(entries && count_p && eof_p, "entries, count_p or eof_p is NULL");
    SFS_ARG_CHECK(max > 0, "max is 0: no room for an entry");
    *count_p = 0;
    rc =
        sfs_client_meta_page(client, SFS_OP_READDIR, path, after, 0, max, &rpc, &count, eof_p, &rb);
    if (rc) {
        return rc;
    }
    for (uint32_t i = 0; i < count; i++) {
        sfs_dirent_t dirent;

        sfs_proto_dirent_unpack(&rb, &dirent);
        sfs_client_dirent_to_entry(&dirent, &entries[i]);
    }
    sfs_tp_rpc_release(rpc);
    if (rb.error) {
        return sfs_error_set(-EPROTO, "metadata server sent malformed directory entries");
    }
    *count_p = count;
    return 0;
}
