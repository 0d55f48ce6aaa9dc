/*
 * The wire codecs of the header and of the requests (sfs_proto.h); replies
 * are in sfs_proto_replies.c, the table of operations in sfs_proto_ops.c.
 */
#include "sfs_proto.h"

#include <errno.h>
#include <string.h>

void sfs_proto_hdr_pack(const sfs_proto_hdr_t *hdr, uint8_t out[SFS_PROTO_HDR_SIZE])
{
    sfs_wbuf_t wb;

    sfs_wbuf_init(&wb, out, SFS_PROTO_HDR_SIZE);
    sfs_wbuf_u32(&wb, hdr->magic);
    sfs_wbuf_u16(&wb, hdr->version);
    sfs_wbuf_u16(&wb, hdr->opcode);
    sfs_wbuf_u32(&wb, hdr->flags);
    sfs_wbuf_u32(&wb, hdr->args_length);
    sfs_wbuf_u64(&wb, hdr->request_id);
    sfs_wbuf_u64(&wb, hdr->session_id);
    sfs_wbuf_i32(&wb, hdr->status);
    sfs_wbuf_u32(&wb, hdr->sender);
    sfs_wbuf_u64(&wb, hdr->payload_length);
    sfs_wbuf_bytes(&wb, hdr->mac, SFS_PROTO_MAC_SIZE);
}

int sfs_proto_hdr_unpack(const void *in, size_t length, uint64_t max_payload, sfs_proto_hdr_t *hdr)
{
    sfs_rbuf_t rb;

    if (length != SFS_PROTO_HDR_SIZE) {
        return -EBADMSG;
    }
    sfs_rbuf_init(&rb, in, length);
    hdr->magic          = sfs_rbuf_u32(&rb);
    hdr->version        = sfs_rbuf_u16(&rb);
    hdr->opcode         = sfs_rbuf_u16(&rb);
    hdr->flags          = sfs_rbuf_u32(&rb);
    hdr->args_length    = sfs_rbuf_u32(&rb);
    hdr->request_id     = sfs_rbuf_u64(&rb);
    hdr->session_id     = sfs_rbuf_u64(&rb);
    hdr->status         = sfs_rbuf_i32(&rb);
    hdr->sender         = sfs_rbuf_u32(&rb);
    hdr->payload_length = sfs_rbuf_u64(&rb);
    sfs_rbuf_bytes(&rb, hdr->mac, SFS_PROTO_MAC_SIZE);
    if (rb.error) {
        return -EBADMSG;
    }
    if (hdr->magic != SFS_PROTO_MAGIC || hdr->version != SFS_PROTO_VERSION) {
        return -EPROTO;
    }
    if (sfs_op_name(hdr->opcode) == NULL || (hdr->flags & ~SFS_PROTO_FLAGS_KNOWN) != 0 ||
        hdr->args_length > SFS_PROTO_ARGS_MAX || hdr->payload_length > max_payload) {
        return -EBADMSG;
    }
    if (!(hdr->flags & SFS_PROTO_FLAG_REPLY) && hdr->status != 0) {
        return -EBADMSG;
    }
    /* a pulled payload is named, not carried, and only by a request */
    if ((hdr->flags & SFS_PROTO_FLAG_PULL) &&
        ((hdr->flags & (SFS_PROTO_FLAG_REPLY | SFS_PROTO_FLAG_DIRECT | SFS_PROTO_FLAG_DELIVERED)) ||
         hdr->payload_length != 0)) {
        return -EBADMSG;
    }
    if (hdr->status > 0 || hdr->status < -4095) {
        return -EBADMSG;
    }
    return 0;
}

/* ---------------------------------------------------------------------- */

static void sfs_proto_pattern_pack(sfs_wbuf_t *wb, const sfs_pattern_t *pattern,
                                   uint32_t target_count)
{
    sfs_wbuf_u32(wb, pattern->type);
    sfs_wbuf_u64(wb, pattern->chunk_size);
    sfs_wbuf_u32(wb, pattern->stripe_count);
    sfs_wbuf_u32(wb, target_count);
    for (uint32_t i = 0; i < target_count && i < SFS_STRIPE_COUNT_MAX; i++) {
        sfs_wbuf_u32(wb, pattern->targets[i]);
    }
}

static void sfs_proto_pattern_unpack(sfs_rbuf_t *rb, sfs_pattern_t *pattern,
                                     uint32_t *target_count_p)
{
    uint32_t target_count;

    memset(pattern, 0, sizeof(*pattern));
    pattern->type         = sfs_rbuf_u32(rb);
    pattern->chunk_size   = sfs_rbuf_u64(rb);
    pattern->stripe_count = sfs_rbuf_u32(rb);
    target_count          = sfs_rbuf_u32(rb);
    if (target_count > SFS_STRIPE_COUNT_MAX || pattern->stripe_count > SFS_STRIPE_COUNT_MAX ||
        (target_count != 0 && target_count != pattern->stripe_count)) {
        rb->error       = -EBADMSG;
        *target_count_p = 0;
        return;
    }
    for (uint32_t i = 0; i < target_count; i++) {
        pattern->targets[i] = sfs_rbuf_u32(rb);
    }
    *target_count_p = target_count;
}

void sfs_proto_attr_pack(sfs_wbuf_t *wb, const sfs_attr_t *attr)
{
    sfs_wbuf_u64(wb, attr->entry_id);
    sfs_wbuf_u64(wb, attr->parent_id);
    sfs_wbuf_u32(wb, attr->type);
    sfs_wbuf_u32(wb, attr->mode);
    sfs_wbuf_u32(wb, attr->uid);
    sfs_wbuf_u32(wb, attr->gid);
    sfs_wbuf_u64(wb, attr->ctime_ns);
    sfs_wbuf_u64(wb, attr->mtime_ns);
    sfs_wbuf_u64(wb, attr->atime_ns);
    sfs_wbuf_u64(wb, attr->nlink);
    sfs_proto_pattern_pack(wb, &attr->pattern, attr->pattern_targets);
}

void sfs_proto_attr_unpack(sfs_rbuf_t *rb, sfs_attr_t *attr)
{
    attr->entry_id  = sfs_rbuf_u64(rb);
    attr->parent_id = sfs_rbuf_u64(rb);
    attr->type      = sfs_rbuf_u32(rb);
    attr->mode      = sfs_rbuf_u32(rb);
    attr->uid       = sfs_rbuf_u32(rb);
    attr->gid       = sfs_rbuf_u32(rb);
    attr->ctime_ns  = sfs_rbuf_u64(rb);
    attr->mtime_ns  = sfs_rbuf_u64(rb);
    attr->atime_ns  = sfs_rbuf_u64(rb);
    attr->nlink     = sfs_rbuf_u64(rb);
    sfs_proto_pattern_unpack(rb, &attr->pattern, &attr->pattern_targets);
    if (!rb->error && attr->type != SFS_TYPE_FILE && attr->type != SFS_TYPE_DIR) {
        rb->error = -EBADMSG;
    }
}

/* ---------------------------------------------------------------------- */

void sfs_proto_hello_req_pack(sfs_wbuf_t *wb, const sfs_hello_req_t *req)
{
    sfs_wbuf_u32(wb, req->peer_kind);
    sfs_wbuf_u64(wb, req->peer_uuid);
    sfs_wbuf_u32(wb, req->pid);
    sfs_wbuf_str(wb, req->host);
    sfs_wbuf_str(wb, req->program);
    sfs_wbuf_bytes(wb, req->nonce, SFS_NONCE_SIZE);
    sfs_wbuf_blob(wb, req->address, req->address_length);
    sfs_wbuf_u32(wb, req->method);
    sfs_wbuf_bytes(wb, req->kx_public, SFS_KX_PUBLIC_SIZE);
    sfs_wbuf_u64(wb, req->features);
}

/* The end of HELLO and its reply: features when there are any, then what a
 * newer peer added (skipped). */
static uint64_t sfs_proto_hello_features(sfs_rbuf_t *rb)
{
    uint64_t features = 0;

    if (!rb->error && sfs_rbuf_remaining(rb) >= 8) {
        features = sfs_rbuf_u64(rb);
        sfs_rbuf_take(rb, sfs_rbuf_remaining(rb));
    }
    return features;
}

void sfs_proto_hello_req_unpack(sfs_rbuf_t *rb, sfs_hello_req_t *req)
{
    req->peer_kind = sfs_rbuf_u32(rb);
    req->peer_uuid = sfs_rbuf_u64(rb);
    req->pid       = sfs_rbuf_u32(rb);
    sfs_rbuf_str(rb, req->host, sizeof(req->host));
    sfs_rbuf_str(rb, req->program, sizeof(req->program));
    sfs_rbuf_bytes(rb, req->nonce, SFS_NONCE_SIZE);
    req->address = sfs_rbuf_blob(rb, &req->address_length);
    req->method  = sfs_rbuf_u32(rb);
    sfs_rbuf_bytes(rb, req->kx_public, SFS_KX_PUBLIC_SIZE);
    req->features = sfs_proto_hello_features(rb);
    if (!rb->error &&
        (req->peer_kind < SFS_PEER_CLIENT || req->peer_kind > SFS_PEER_ADMIN ||
         req->address_length == 0 || req->address_length > SFS_ADDRESS_MAX ||
         (req->method != SFS_AUTH_METHOD_SECRET && req->method != SFS_AUTH_METHOD_MUNGE))) {
        rb->error = -EBADMSG;
    }
}

void sfs_proto_hello_reply_pack(sfs_wbuf_t *wb, const sfs_hello_reply_t *reply)
{
    sfs_wbuf_u64(wb, reply->session_id);
    sfs_wbuf_u32(wb, reply->server_node);
    sfs_wbuf_str(wb, reply->server_host);
    sfs_wbuf_bytes(wb, reply->nonce, SFS_NONCE_SIZE);
    sfs_wbuf_bytes(wb, reply->proof, SFS_PROOF_SIZE);
    sfs_wbuf_bytes(wb, reply->kx_public, SFS_KX_PUBLIC_SIZE);
    sfs_wbuf_str(wb, reply->credential);
    sfs_wbuf_u64(wb, reply->features);
    sfs_wbuf_u64(wb, reply->server_uuid);
}

void sfs_proto_hello_reply_unpack(sfs_rbuf_t *rb, sfs_hello_reply_t *reply)
{
    reply->session_id  = sfs_rbuf_u64(rb);
    reply->server_node = sfs_rbuf_u32(rb);
    sfs_rbuf_str(rb, reply->server_host, sizeof(reply->server_host));
    sfs_rbuf_bytes(rb, reply->nonce, SFS_NONCE_SIZE);
    sfs_rbuf_bytes(rb, reply->proof, SFS_PROOF_SIZE);
    sfs_rbuf_bytes(rb, reply->kx_public, SFS_KX_PUBLIC_SIZE);
    sfs_rbuf_str(rb, reply->credential, sizeof(reply->credential));
    reply->features    = 0;
    reply->server_uuid = 0;
    /* features, then the server's uuid (a peer older than either sends
     * less), then what a newer peer added (skipped) */
    if (!rb->error && sfs_rbuf_remaining(rb) >= 8) {
        reply->features = sfs_rbuf_u64(rb);
    }
    if (!rb->error && sfs_rbuf_remaining(rb) >= 8) {
        reply->server_uuid = sfs_rbuf_u64(rb);
    }
    sfs_rbuf_take(rb, sfs_rbuf_remaining(rb));
}

void sfs_proto_auth_req_pack(sfs_wbuf_t *wb, const sfs_auth_req_t *req)
{
    sfs_wbuf_bytes(wb, req->proof, SFS_PROOF_SIZE);
    sfs_wbuf_str(wb, req->credential);
}

void sfs_proto_auth_req_unpack(sfs_rbuf_t *rb, sfs_auth_req_t *req)
{
    sfs_rbuf_bytes(rb, req->proof, SFS_PROOF_SIZE);
    sfs_rbuf_str(rb, req->credential, sizeof(req->credential));
}

void sfs_proto_counter_req_pack(sfs_wbuf_t *wb, const sfs_counter_req_t *req)
{
    sfs_wbuf_u64(wb, req->key);
    sfs_wbuf_u32(wb, req->op);
    sfs_wbuf_u64(wb, req->value);
    /* only to a server that announced its uuid in HELLO: an older one
     * decodes the 20 bytes before it exactly */
    if (req->server_uuid != 0) {
        sfs_wbuf_u64(wb, req->server_uuid);
        /* only to a server that announced SFS_FEATURE_COUNTER_TAGS */
        if (req->op_tag != 0) {
            sfs_wbuf_u64(wb, req->op_tag);
        }
    }
}

void sfs_proto_counter_req_unpack(sfs_rbuf_t *rb, sfs_counter_req_t *req)
{
    int has_uuid, has_tag;

    req->key   = sfs_rbuf_u64(rb);
    req->op    = sfs_rbuf_u32(rb);
    req->value = sfs_rbuf_u64(rb);
    /* a client older than server_uuid, or talking to a server that sent
     * none, sends none: it asks for any server */
    has_uuid         = !rb->error && sfs_rbuf_remaining(rb) >= 8;
    req->server_uuid = has_uuid ? sfs_rbuf_u64(rb) : 0;
    has_tag          = has_uuid && !rb->error && sfs_rbuf_remaining(rb) >= 8;
    req->op_tag      = has_tag ? sfs_rbuf_u64(rb) : 0;
    /* a uuid or a tag of 0 is sent as none: one encoding per request */
    if (!rb->error && (req->op > SFS_COUNTER_OP_FORGET || (has_uuid && req->server_uuid == 0) ||
                       (has_tag && req->op_tag == 0))) {
        rb->error = -EBADMSG;
    }
}

/* ---------------------------------------------------------------------- */

void sfs_proto_meta_req_pack(sfs_wbuf_t *wb, uint32_t opcode, const sfs_meta_req_t *req)
{
    sfs_wbuf_str(wb, req->path);
    switch (opcode) {
    case SFS_OP_CREATE:
    case SFS_OP_MKDIR:
    case SFS_OP_SETPATTERN:
        sfs_wbuf_u32(wb, req->flags);
        sfs_wbuf_u32(wb, req->mode);
        sfs_wbuf_u32(wb, req->uid);
        sfs_wbuf_u32(wb, req->gid);
        sfs_wbuf_u64(wb, req->chunk_size);
        sfs_wbuf_u32(wb, req->stripe_count);
        sfs_wbuf_u32(wb, req->start_target);
        if (req->flags & SFS_PATTERN_REQ_POOL) {
            sfs_wbuf_str(wb, req->pool);
        }
        break;
    case SFS_OP_RENAME:
        sfs_wbuf_str(wb, req->new_path);
        sfs_wbuf_u32(wb, req->flags);
        break;
    case SFS_OP_READDIR:
        sfs_wbuf_str(wb, req->after_name);
        sfs_wbuf_u32(wb, req->max_entries);
        break;
    case SFS_OP_STAT: /* SFS_STAT_ENTRIES: a page of a directory's entries too */
        sfs_wbuf_u32(wb, req->flags);
        sfs_wbuf_str(wb, req->after_name);
        sfs_wbuf_u32(wb, req->max_entries);
        break;
    case SFS_OP_META_LIST:
    case SFS_OP_META_PENDING:
        sfs_wbuf_u64(wb, req->after_id);
        sfs_wbuf_u32(wb, req->max_entries);
        break;
    case SFS_OP_META_CHECK:
    case SFS_OP_META_STATS:
    case SFS_OP_LOOKUP: /* SFS_OPEN_*: the access an open asks for */
        sfs_wbuf_u32(wb, req->flags);
        break;
    case SFS_OP_SETATTR:
        sfs_wbuf_u32(wb, req->flags);
        sfs_wbuf_u32(wb, req->mode);
        sfs_wbuf_u32(wb, req->uid);
        sfs_wbuf_u32(wb, req->gid);
        sfs_wbuf_u64(wb, req->atime_ns);
        sfs_wbuf_u64(wb, req->mtime_ns);
        break;
    default: /* RMDIR, UNLINK, META_STATFS: the path only */
        break;
    }
    if (req->op_tag != 0 && sfs_proto_meta_tagged(opcode)) {
        sfs_wbuf_u64(wb, req->op_tag);
    }
}

int sfs_proto_meta_tagged(uint32_t opcode)
{
    switch (opcode) {
    case SFS_OP_CREATE:
    case SFS_OP_MKDIR:
    case SFS_OP_RMDIR:
    case SFS_OP_UNLINK:
    case SFS_OP_RENAME:
    case SFS_OP_SETATTR:
    case SFS_OP_SETPATTERN:
        return 1;
    default:
        return 0;
    }
}

void sfs_proto_meta_req_unpack(sfs_rbuf_t *rb, uint32_t opcode, sfs_meta_req_t *req)
{
    req->new_path[0]   = '\0';
    req->after_name[0] = '\0';
    req->after_id      = 0;
    req->flags         = 0;
    req->mode          = 0;
    req->uid           = 0;
    req->gid           = 0;
    req->chunk_size    = 0;
    req->stripe_count  = 0;
    req->start_target  = 0;
    req->max_entries   = 0;
    req->atime_ns      = 0;
    req->mtime_ns      = 0;
    req->pool[0]       = '\0';
    req->op_tag        = 0;

    sfs_rbuf_str(rb, req->path, sizeof(req->path));
    switch (opcode) {
    case SFS_OP_CREATE:
    case SFS_OP_MKDIR:
    case SFS_OP_SETPATTERN:
        req->flags        = sfs_rbuf_u32(rb);
        req->mode         = sfs_rbuf_u32(rb);
        req->uid          = sfs_rbuf_u32(rb);
        req->gid          = sfs_rbuf_u32(rb);
        req->chunk_size   = sfs_rbuf_u64(rb);
        req->stripe_count = sfs_rbuf_u32(rb);
        req->start_target = sfs_rbuf_u32(rb);
        if (req->flags & SFS_PATTERN_REQ_POOL) {
            sfs_rbuf_str(rb, req->pool, sizeof(req->pool));
        }
        break;
    case SFS_OP_RENAME:
        sfs_rbuf_str(rb, req->new_path, sizeof(req->new_path));
        req->flags = sfs_rbuf_u32(rb);
        break;
    case SFS_OP_READDIR:
        sfs_rbuf_str(rb, req->after_name, sizeof(req->after_name));
        req->max_entries = sfs_rbuf_u32(rb);
        break;
    case SFS_OP_STAT:
        req->flags = sfs_rbuf_u32(rb);
        sfs_rbuf_str(rb, req->after_name, sizeof(req->after_name));
        req->max_entries = sfs_rbuf_u32(rb);
        if (req->flags & ~SFS_STAT_ENTRIES) {
            rb->error = -EBADMSG;
        }
        break;
    case SFS_OP_META_LIST:
    case SFS_OP_META_PENDING:
        req->after_id    = sfs_rbuf_u64(rb);
        req->max_entries = sfs_rbuf_u32(rb);
        break;
    case SFS_OP_META_CHECK:
    case SFS_OP_META_STATS:
        req->flags = sfs_rbuf_u32(rb);
        break;
    case SFS_OP_LOOKUP:
        req->flags = sfs_rbuf_u32(rb);
        if (req->flags & ~(SFS_OPEN_READ | SFS_OPEN_WRITE | SFS_OPEN_EXEC)) {
            rb->error = -EBADMSG;
        }
        break;
    case SFS_OP_SETATTR:
        req->flags    = sfs_rbuf_u32(rb);
        req->mode     = sfs_rbuf_u32(rb);
        req->uid      = sfs_rbuf_u32(rb);
        req->gid      = sfs_rbuf_u32(rb);
        req->atime_ns = sfs_rbuf_u64(rb);
        req->mtime_ns = sfs_rbuf_u64(rb);
        break;
    default:
        break;
    }
    if (sfs_proto_meta_tagged(opcode) && sfs_rbuf_remaining(rb) != 0) {
        /* the optional op_tag (an older client sends none); never 0 */
        req->op_tag = sfs_rbuf_u64(rb);
        if (req->op_tag == 0) {
            rb->error = -EBADMSG;
        }
    }
}

void sfs_proto_dirent_pack(sfs_wbuf_t *wb, const sfs_dirent_t *dirent)
{
    sfs_wbuf_str(wb, dirent->name);
    sfs_wbuf_u64(wb, dirent->entry_id);
    sfs_wbuf_u32(wb, dirent->type);
}

void sfs_proto_dirent_unpack(sfs_rbuf_t *rb, sfs_dirent_t *dirent)
{
    sfs_rbuf_str(rb, dirent->name, sizeof(dirent->name));
    dirent->entry_id = sfs_rbuf_u64(rb);
    dirent->type     = sfs_rbuf_u32(rb);
}

/* ---------------------------------------------------------------------- */

void sfs_proto_chunk_req_pack(sfs_wbuf_t *wb, uint32_t opcode, const sfs_chunk_req_t *req)
{
    sfs_wbuf_u32(wb, req->target_id);
    sfs_wbuf_u64(wb, req->entry_id);
    sfs_wbuf_u32(wb, req->flags);
    sfs_wbuf_u64(wb, req->length);
    if (opcode == SFS_OP_WRITE || opcode == SFS_OP_READ) {
        if (req->extent_count > SFS_PROTO_MAX_EXTENTS) {
            wb->error = -EMSGSIZE;
            return;
        }
        sfs_wbuf_u32(wb, req->extent_count);
        for (uint32_t i = 0; i < req->extent_count; i++) {
            sfs_wbuf_u64(wb, req->extents[i].chunk_offset);
            sfs_wbuf_u64(wb, req->extents[i].length);
        }
    }
    sfs_cap_pack(wb, &req->cap);
    if ((req->flags & SFS_CHUNK_BOUND) && (opcode == SFS_OP_WRITE || opcode == SFS_OP_TRUNCATE)) {
        sfs_bound_pack(wb, &req->bound);
    }
}

void sfs_proto_chunk_req_unpack(sfs_rbuf_t *rb, uint32_t opcode, sfs_chunk_req_t *req)
{
    req->target_id    = sfs_rbuf_u32(rb);
    req->entry_id     = sfs_rbuf_u64(rb);
    req->flags        = sfs_rbuf_u32(rb);
    req->length       = sfs_rbuf_u64(rb);
    req->extent_count = 0;
    if (opcode == SFS_OP_WRITE || opcode == SFS_OP_READ) {
        uint32_t count = sfs_rbuf_u32(rb);

        if (count > SFS_PROTO_MAX_EXTENTS) {
            rb->error = -EBADMSG;
            return;
        }
        for (uint32_t i = 0; i < count; i++) {
            uint64_t offset = sfs_rbuf_u64(rb);
            uint64_t length = sfs_rbuf_u64(rb);

            /* reject wrap-around and offsets no file system can hold */
            if (length > INT64_MAX || offset > (uint64_t)INT64_MAX - length) {
                rb->error = -EBADMSG;
                return;
            }
            req->extents[i].chunk_offset = offset;
            req->extents[i].length       = length;
        }
        req->extent_count = count;
    }
    sfs_cap_unpack(rb, &req->cap);
    if ((req->flags & SFS_CHUNK_BOUND) && (opcode == SFS_OP_WRITE || opcode == SFS_OP_TRUNCATE)) {
        sfs_bound_unpack(rb, &req->bound);
    }
    if (opcode == SFS_OP_TRUNCATE &&
        (req->length > INT64_MAX || (req->flags & ~(SFS_CHUNK_MIRRORED | SFS_CHUNK_BOUND |
                                                    SFS_CHUNK_BUDDY)) > SFS_TRUNCATE_SHRINK_ONLY)) {
        rb->error = -EBADMSG;
    }
}

/* Capabilities travel in chunk requests and open replies (sfs_cap.h). */
void sfs_cap_pack(sfs_wbuf_t *wb, const sfs_cap_t *cap)
{
    sfs_wbuf_u64(wb, cap->entry_id);
    sfs_wbuf_u32(wb, cap->access);
    sfs_wbuf_u32(wb, cap->uid);
    sfs_wbuf_u64(wb, cap->expires_s);
    sfs_wbuf_bytes(wb, cap->mac, SFS_CAP_MAC_SIZE);
}

void sfs_cap_unpack(sfs_rbuf_t *rb, sfs_cap_t *cap)
{
    cap->entry_id  = sfs_rbuf_u64(rb);
    cap->access    = sfs_rbuf_u32(rb);
    cap->uid       = sfs_rbuf_u32(rb);
    cap->expires_s = sfs_rbuf_u64(rb);
    sfs_rbuf_bytes(rb, cap->mac, SFS_CAP_MAC_SIZE);
    if (cap->access & ~(SFS_CAP_READ | SFS_CAP_WRITE | SFS_CAP_BOUNDED)) {
        rb->error = -EBADMSG;
    }
}

void sfs_proto_register_req_pack(sfs_wbuf_t *wb, const sfs_register_req_t *req)
{
    sfs_wbuf_u32(wb, req->rank);
    sfs_wbuf_u32(wb, req->roles);
    sfs_wbuf_u32(wb, req->pid);
    sfs_wbuf_str(wb, req->host);
    sfs_wbuf_blob(wb, req->address, req->address_length);
    sfs_wbuf_u32(wb, req->target_count);
    for (uint32_t i = 0; i < req->target_count && i < SFS_REGISTER_MAX_TARGETS; i++) {
        sfs_wbuf_u32(wb, req->targets[i].target_id);
        sfs_wbuf_str(wb, req->targets[i].dir);
        sfs_wbuf_u64(wb, req->targets[i].capacity);
        sfs_wbuf_u64(wb, req->targets[i].free);
        sfs_wbuf_u64(wb, req->targets[i].bandwidth);
    }
}

void sfs_proto_register_req_unpack(sfs_rbuf_t *rb, sfs_register_req_t *req)
{
    req->rank  = sfs_rbuf_u32(rb);
    req->roles = sfs_rbuf_u32(rb);
    req->pid   = sfs_rbuf_u32(rb);
    sfs_rbuf_str(rb, req->host, sizeof(req->host));
    req->address      = sfs_rbuf_blob(rb, &req->address_length);
    req->target_count = sfs_rbuf_u32(rb);
    if (rb->error || req->target_count > SFS_REGISTER_MAX_TARGETS || req->address_length == 0 ||
        req->address_length > SFS_ADDRESS_MAX ||
        (req->roles & ~(SFS_ROLE_MGMT | SFS_ROLE_META | SFS_ROLE_STORAGE | SFS_ROLE_META_MIRROR))) {
        rb->error         = -EBADMSG;
        req->target_count = 0;
        return;
    }
    for (uint32_t i = 0; i < req->target_count; i++) {
        sfs_register_target_t *t = &req->targets[i];

        t->target_id = sfs_rbuf_u32(rb);
        sfs_rbuf_str(rb, t->dir, sizeof(t->dir));
        t->capacity  = sfs_rbuf_u64(rb);
        t->free      = sfs_rbuf_u64(rb);
        t->bandwidth = sfs_rbuf_u64(rb);
    }
}

void sfs_proto_chunk_unlink_req_pack(sfs_wbuf_t *wb, const sfs_chunk_unlink_req_t *req)
{
    if (req->count > SFS_CHUNK_UNLINK_MAX) {
        wb->error = -EMSGSIZE;
        return;
    }
    sfs_wbuf_u32(wb, req->target_id);
    sfs_wbuf_u32(wb, req->count);
    for (uint32_t i = 0; i < req->count; i++) {
        sfs_wbuf_u64(wb, req->entry_ids[i]);
    }
}

void sfs_proto_chunk_unlink_req_unpack(sfs_rbuf_t *rb, sfs_chunk_unlink_req_t *req)
{
    req->target_id = sfs_rbuf_u32(rb);
    req->count     = sfs_rbuf_u32(rb);
    if (rb->error || req->count > SFS_CHUNK_UNLINK_MAX) {
        rb->error  = -EBADMSG;
        req->count = 0;
        return;
    }
    for (uint32_t i = 0; i < req->count; i++) {
        req->entry_ids[i] = sfs_rbuf_u64(rb);
    }
    if (rb->error) {
        req->count = 0;
    }
}

void sfs_proto_heartbeat_req_pack(sfs_wbuf_t *wb, const sfs_heartbeat_req_t *req)
{
    if (req->target_count > SFS_REGISTER_MAX_TARGETS) {
        wb->error = -EMSGSIZE;
        return;
    }
    sfs_wbuf_u32(wb, req->rank);
    sfs_wbuf_u32(wb, req->target_count);
    for (uint32_t i = 0; i < req->target_count; i++) {
        sfs_wbuf_u32(wb, req->targets[i].target_id);
        sfs_wbuf_u64(wb, req->targets[i].capacity);
        sfs_wbuf_u64(wb, req->targets[i].free);
        sfs_wbuf_u64(wb, req->targets[i].bandwidth);
    }
}

void sfs_proto_heartbeat_req_unpack(sfs_rbuf_t *rb, sfs_heartbeat_req_t *req)
{
    req->rank         = sfs_rbuf_u32(rb);
    req->target_count = sfs_rbuf_u32(rb);
    if (rb->error || req->target_count > SFS_REGISTER_MAX_TARGETS) {
        rb->error         = -EBADMSG;
        req->target_count = 0;
        return;
    }
    for (uint32_t i = 0; i < req->target_count; i++) {
        req->targets[i].target_id = sfs_rbuf_u32(rb);
        req->targets[i].capacity  = sfs_rbuf_u64(rb);
        req->targets[i].free      = sfs_rbuf_u64(rb);
        req->targets[i].bandwidth = sfs_rbuf_u64(rb);
    }
    if (rb->error) {
        req->target_count = 0;
    }
}

uint64_t sfs_chunk_req_bytes(const sfs_chunk_req_t *req)
{
    uint64_t total = 0;

    for (uint32_t i = 0; i < req->extent_count; i++) {
        if (total + req->extents[i].length < total) {
            return UINT64_MAX; /* saturate: never equals a real payload length */
        }
        total += req->extents[i].length;
    }
    return total;
}

/* ---------------------------------------------------------------------- */

size_t sfs_proto_direct_desc_size(uint32_t count)
{
    return (size_t)count * 16 + 12;
}

void sfs_proto_direct_desc_pack(sfs_wbuf_t *wb, const sfs_direct_desc_t *desc)
{
    for (uint32_t i = 0; i < desc->count && i < SFS_PROTO_DIRECT_MAX_IOV; i++) {
        sfs_wbuf_u64(wb, desc->address[i]);
        sfs_wbuf_u64(wb, desc->length[i]);
    }
    sfs_wbuf_u64(wb, desc->deadline_ms);
    sfs_wbuf_u32(wb, desc->count);
}

long sfs_proto_direct_desc_unpack(const uint8_t *args, size_t args_length, sfs_direct_desc_t *desc)
{
    sfs_rbuf_t rb;
    size_t     size;

    if (args_length < sfs_proto_direct_desc_size(0)) {
        return -EBADMSG;
    }
    sfs_rbuf_init(&rb, args + args_length - 4, 4);
    desc->count = sfs_rbuf_u32(&rb);
    if (desc->count == 0 || desc->count > SFS_PROTO_DIRECT_MAX_IOV) {
        return -EBADMSG;
    }
    size = sfs_proto_direct_desc_size(desc->count);
    if (size > args_length) {
        return -EBADMSG;
    }
    sfs_rbuf_init(&rb, args + args_length - size, size - 4);
    for (uint32_t i = 0; i < desc->count; i++) {
        desc->address[i] = sfs_rbuf_u64(&rb);
        desc->length[i]  = sfs_rbuf_u64(&rb);
    }
    desc->deadline_ms = sfs_rbuf_u64(&rb);
    return rb.error ? -EBADMSG : (long)(args_length - size);
}
