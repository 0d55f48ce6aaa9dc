/*
 * The wire codecs of the replies (sfs_proto.h), and of `none`. Each decoder
 * leaves rb->error set for what does not fit; the caller checks that every
 * byte was used (sfs_proto_decode does).
 */
#include "sfs_proto.h"

#include <errno.h>
#include <string.h>

void sfs_proto_none_pack(sfs_wbuf_t *wb, const sfs_none_t *none)
{
    (void)wb;
    (void)none;
}

void sfs_proto_none_unpack(sfs_rbuf_t *rb, sfs_none_t *none)
{
    (void)rb;
    none->unused = 0;
}

void sfs_proto_auth_reply_pack(sfs_wbuf_t *wb, const sfs_auth_reply_t *reply)
{
    sfs_wbuf_u64(wb, reply->direct_id);
}

void sfs_proto_auth_reply_unpack(sfs_rbuf_t *rb, sfs_auth_reply_t *reply)
{
    reply->direct_id = sfs_rbuf_u64(rb);
}

/* LOOKUP and CREATE of a file carry a capability; the others none. */
static int sfs_proto_open_reply_has_cap(uint32_t opcode, const sfs_attr_t *attr)
{
    return (opcode == SFS_OP_LOOKUP || opcode == SFS_OP_CREATE) && attr->type == SFS_TYPE_FILE;
}

void sfs_proto_open_reply_pack(sfs_wbuf_t *wb, uint32_t opcode, const sfs_open_reply_t *reply)
{
    sfs_proto_attr_pack(wb, &reply->attr);
    if (opcode == SFS_OP_CREATE) {
        sfs_wbuf_u8(wb, reply->created);
    }
    if (sfs_proto_open_reply_has_cap(opcode, &reply->attr)) {
        sfs_cap_pack(wb, &reply->cap);
    }
}

void sfs_proto_open_reply_unpack(sfs_rbuf_t *rb, uint32_t opcode, sfs_open_reply_t *reply)
{
    memset(reply, 0, sizeof(*reply));
    sfs_proto_attr_unpack(rb, &reply->attr);
    if (rb->error) {
        return;
    }
    if (opcode == SFS_OP_CREATE) {
        reply->created = sfs_rbuf_u8(rb);
        if (reply->created > SFS_CREATED_WRITER_QUOTA) {
            rb->error = -EBADMSG;
        }
    }
    if (sfs_proto_open_reply_has_cap(opcode, &reply->attr)) {
        sfs_cap_unpack(rb, &reply->cap);
        reply->has_cap = 1;
    }
}

void sfs_proto_stat_reply_pack(sfs_wbuf_t *wb, const sfs_stat_reply_t *reply)
{
    sfs_proto_attr_pack(wb, &reply->attr);
    sfs_wbuf_u8(wb, reply->size_valid);
    sfs_wbuf_u64(wb, reply->attr.size);
    sfs_wbuf_u64(wb, reply->attr.write_gen);
    sfs_wbuf_u8(wb, reply->has_cap);
    if (reply->has_cap) {
        sfs_cap_pack(wb, &reply->cap);
    }
    sfs_wbuf_u32(wb, reply->count);
    sfs_wbuf_u8(wb, reply->eof);
}

void sfs_proto_stat_reply_unpack(sfs_rbuf_t *rb, sfs_stat_reply_t *reply)
{
    memset(reply, 0, sizeof(*reply));
    sfs_proto_attr_unpack(rb, &reply->attr);
    reply->size_valid     = sfs_rbuf_u8(rb);
    reply->attr.size      = sfs_rbuf_u64(rb);
    reply->attr.write_gen = sfs_rbuf_u64(rb);
    reply->has_cap        = sfs_rbuf_u8(rb);
    if (reply->size_valid > 1 || reply->has_cap > 1) {
        rb->error = -EBADMSG;
        return;
    }
    if (reply->has_cap) {
        sfs_cap_unpack(rb, &reply->cap);
    }
    reply->count = sfs_rbuf_u32(rb);
    reply->eof   = sfs_rbuf_u8(rb);
    if (reply->eof > 1) {
        rb->error = -EBADMSG;
    }
}

void sfs_proto_dirent_plus_pack(sfs_wbuf_t *wb, const sfs_dirent_plus_t *plus)
{
    sfs_proto_dirent_pack(wb, &plus->dirent);
    sfs_proto_attr_pack(wb, &plus->attr);
    sfs_wbuf_u8(wb, plus->size_valid);
    sfs_wbuf_u64(wb, plus->attr.size);
}

void sfs_proto_dirent_plus_unpack(sfs_rbuf_t *rb, sfs_dirent_plus_t *plus)
{
    memset(plus, 0, sizeof(*plus));
    sfs_proto_dirent_unpack(rb, &plus->dirent);
    sfs_proto_attr_unpack(rb, &plus->attr);
    plus->size_valid = sfs_rbuf_u8(rb);
    plus->attr.size  = sfs_rbuf_u64(rb);
    if (plus->size_valid > 1 || (!rb->error && plus->dirent.entry_id != plus->attr.entry_id)) {
        rb->error = -EBADMSG;
    }
}

void sfs_proto_size_req_pack(sfs_wbuf_t *wb, const sfs_size_req_t *req)
{
    sfs_wbuf_u64(wb, req->entry_id);
    sfs_wbuf_u32(wb, req->op);
    sfs_wbuf_u32(wb, req->flags);
    sfs_wbuf_u64(wb, req->write_gen);
    sfs_wbuf_u64(wb, req->size);
    sfs_cap_pack(wb, &req->cap);
}

void sfs_proto_size_req_unpack(sfs_rbuf_t *rb, sfs_size_req_t *req)
{
    memset(req, 0, sizeof(*req));
    req->entry_id  = sfs_rbuf_u64(rb);
    req->op        = sfs_rbuf_u32(rb);
    req->flags     = sfs_rbuf_u32(rb);
    req->write_gen = sfs_rbuf_u64(rb);
    req->size      = sfs_rbuf_u64(rb);
    sfs_cap_unpack(rb, &req->cap);
    if (req->op > SFS_SIZE_OP_MAX || (req->flags & ~SFS_SIZE_FLAGS)) {
        rb->error = -EBADMSG;
    }
}

void sfs_proto_size_reply_pack(sfs_wbuf_t *wb, const sfs_size_reply_t *reply)
{
    sfs_wbuf_u32(wb, reply->writers);
    sfs_wbuf_u8(wb, reply->stored);
    sfs_wbuf_u8(wb, reply->base);
    sfs_wbuf_u64(wb, reply->size);
    if (reply->base & SFS_SIZE_QUOTA) {
        sfs_wbuf_u64(wb, reply->granted);
    }
    if (reply->base & SFS_SIZE_BOUND) {
        sfs_bound_pack(wb, &reply->bound);
    }
}

void sfs_proto_size_reply_unpack(sfs_rbuf_t *rb, sfs_size_reply_t *reply)
{
    reply->writers = sfs_rbuf_u32(rb);
    reply->stored  = sfs_rbuf_u8(rb);
    reply->base    = sfs_rbuf_u8(rb);
    reply->size    = sfs_rbuf_u64(rb);
    reply->granted = (reply->base & SFS_SIZE_QUOTA) ? sfs_rbuf_u64(rb) : 0;
    if (reply->base & SFS_SIZE_BOUND) {
        sfs_bound_unpack(rb, &reply->bound);
    }
    if (reply->stored > 1 || (reply->base & ~(1u | SFS_SIZE_QUOTA | SFS_SIZE_BOUND))) {
        rb->error = -EBADMSG;
    }
}

void sfs_proto_page_reply_pack(sfs_wbuf_t *wb, const sfs_page_reply_t *reply)
{
    sfs_wbuf_u32(wb, reply->count);
    sfs_wbuf_u8(wb, reply->eof);
}

void sfs_proto_page_reply_unpack(sfs_rbuf_t *rb, sfs_page_reply_t *reply)
{
    reply->count = sfs_rbuf_u32(rb);
    reply->eof   = sfs_rbuf_u8(rb);
    if (reply->eof > 1) {
        rb->error = -EBADMSG;
    }
}

void sfs_proto_check_reply_pack(sfs_wbuf_t *wb, const sfs_check_reply_t *reply)
{
    sfs_wbuf_u64(wb, reply->inodes);
    sfs_wbuf_u64(wb, reply->dentries);
    sfs_wbuf_u64(wb, reply->problems);
    sfs_wbuf_u64(wb, reply->repaired);
    sfs_wbuf_u32(wb, reply->lines);
}

void sfs_proto_check_reply_unpack(sfs_rbuf_t *rb, sfs_check_reply_t *reply)
{
    reply->inodes   = sfs_rbuf_u64(rb);
    reply->dentries = sfs_rbuf_u64(rb);
    reply->problems = sfs_rbuf_u64(rb);
    reply->repaired = sfs_rbuf_u64(rb);
    reply->lines    = sfs_rbuf_u32(rb);
}

void sfs_proto_meta_statfs_pack(sfs_wbuf_t *wb, const sfs_meta_statfs_t *stats)
{
    sfs_wbuf_u64(wb, stats->files);
    sfs_wbuf_u64(wb, stats->dirs);
    sfs_wbuf_u64(wb, stats->pending_chunk_deletes);
}

void sfs_proto_meta_statfs_unpack(sfs_rbuf_t *rb, sfs_meta_statfs_t *stats)
{
    stats->files                 = sfs_rbuf_u64(rb);
    stats->dirs                  = sfs_rbuf_u64(rb);
    stats->pending_chunk_deletes = sfs_rbuf_u64(rb);
}

void sfs_proto_counter_reply_pack(sfs_wbuf_t *wb, const sfs_counter_reply_t *reply)
{
    sfs_wbuf_u64(wb, reply->before);
}

void sfs_proto_counter_reply_unpack(sfs_rbuf_t *rb, sfs_counter_reply_t *reply)
{
    reply->before = sfs_rbuf_u64(rb);
}

void sfs_proto_length_reply_pack(sfs_wbuf_t *wb, const sfs_length_reply_t *reply)
{
    sfs_wbuf_u64(wb, reply->length);
}

void sfs_proto_length_reply_unpack(sfs_rbuf_t *rb, sfs_length_reply_t *reply)
{
    reply->length = sfs_rbuf_u64(rb);
}

void sfs_proto_chunk_list_reply_pack(sfs_wbuf_t *wb, const sfs_chunk_list_reply_t *reply)
{
    sfs_wbuf_u32(wb, reply->count);
}

void sfs_proto_chunk_list_reply_unpack(sfs_rbuf_t *rb, sfs_chunk_list_reply_t *reply)
{
    reply->count = sfs_rbuf_u32(rb);
}

void sfs_proto_chunk_unlink_reply_pack(sfs_wbuf_t *wb, const sfs_chunk_unlink_reply_t *reply)
{
    sfs_wbuf_u32(wb, reply->removed);
}

void sfs_proto_chunk_unlink_reply_unpack(sfs_rbuf_t *rb, sfs_chunk_unlink_reply_t *reply)
{
    reply->removed = sfs_rbuf_u32(rb);
    if (!rb->error && reply->removed > SFS_CHUNK_UNLINK_MAX) {
        rb->error = -EBADMSG;
    }
}

void sfs_proto_heartbeat_reply_pack(sfs_wbuf_t *wb, const sfs_heartbeat_reply_t *reply)
{
    sfs_wbuf_u32(wb, reply->flags);
}

void sfs_proto_heartbeat_reply_unpack(sfs_rbuf_t *rb, sfs_heartbeat_reply_t *reply)
{
    reply->flags = sfs_rbuf_u32(rb); /* unknown bits are a newer peer's: kept, ignored */
}

void sfs_proto_ping_reply_pack(sfs_wbuf_t *wb, const sfs_ping_reply_t *reply)
{
    sfs_wbuf_u32(wb, reply->rank);
    sfs_wbuf_u32(wb, reply->roles);
}

void sfs_proto_ping_reply_unpack(sfs_rbuf_t *rb, sfs_ping_reply_t *reply)
{
    reply->rank  = sfs_rbuf_u32(rb);
    reply->roles = sfs_rbuf_u32(rb);
}

void sfs_proto_net_info_reply_pack(sfs_wbuf_t *wb, const sfs_net_info_reply_t *reply)
{
    sfs_wbuf_u32(wb, reply->rank);
    sfs_wbuf_u32(wb, reply->count);
}

void sfs_proto_net_info_reply_unpack(sfs_rbuf_t *rb, sfs_net_info_reply_t *reply)
{
    reply->rank  = sfs_rbuf_u32(rb);
    reply->count = sfs_rbuf_u32(rb);
}

void sfs_proto_net_session_pack(sfs_wbuf_t *wb, const sfs_net_session_t *session)
{
    sfs_wbuf_u32(wb, session->peer_kind);
    sfs_wbuf_u64(wb, session->peer_uuid);
    sfs_wbuf_u32(wb, session->pid);
    sfs_wbuf_str(wb, session->host);
    sfs_wbuf_str(wb, session->program);
    sfs_wbuf_str(wb, session->transports);
    sfs_wbuf_u64(wb, session->age_ms);
}

void sfs_proto_net_session_unpack(sfs_rbuf_t *rb, sfs_net_session_t *session)
{
    session->peer_kind = sfs_rbuf_u32(rb);
    session->peer_uuid = sfs_rbuf_u64(rb);
    session->pid       = sfs_rbuf_u32(rb);
    sfs_rbuf_str(rb, session->host, sizeof(session->host));
    sfs_rbuf_str(rb, session->program, sizeof(session->program));
    sfs_rbuf_str(rb, session->transports, sizeof(session->transports));
    session->age_ms = sfs_rbuf_u64(rb);
}

void sfs_proto_mirror_list_reply_pack(sfs_wbuf_t *wb, const sfs_mirror_list_reply_t *reply)
{
    if (reply->count > SFS_MIRROR_LIST_MAX) {
        wb->error = -EINVAL;
        return;
    }
    sfs_wbuf_u32(wb, reply->count);
    for (uint32_t i = 0; i < reply->count; i++) {
        const sfs_mirror_group_info_t *g = &reply->groups[i];

        sfs_wbuf_u32(wb, g->group_id);
        sfs_wbuf_u32(wb, g->primary);
        sfs_wbuf_u32(wb, g->secondary);
        sfs_wbuf_u32(wb, g->primary_state);
        sfs_wbuf_u32(wb, g->secondary_state);
    }
    sfs_wbuf_u32(wb, reply->meta.configured);
    sfs_wbuf_u32(wb, reply->meta.state);
    sfs_wbuf_u64(wb, reply->meta.seq);
}

void sfs_proto_mirror_list_reply_unpack(sfs_rbuf_t *rb, sfs_mirror_list_reply_t *reply)
{
    reply->count = sfs_rbuf_u32(rb);
    if (reply->count > SFS_MIRROR_LIST_MAX) {
        reply->count = 0;
        rb->error    = -EBADMSG;
        return;
    }
    for (uint32_t i = 0; i < reply->count && !rb->error; i++) {
        sfs_mirror_group_info_t *g = &reply->groups[i];

        g->group_id        = sfs_rbuf_u32(rb);
        g->primary         = sfs_rbuf_u32(rb);
        g->secondary       = sfs_rbuf_u32(rb);
        g->primary_state   = sfs_rbuf_u32(rb);
        g->secondary_state = sfs_rbuf_u32(rb);
        if (g->primary_state > SFS_MIRROR_STATE_BAD || g->secondary_state > SFS_MIRROR_STATE_BAD) {
            rb->error = -EBADMSG;
        }
    }
    reply->meta.configured = sfs_rbuf_u32(rb);
    reply->meta.state      = sfs_rbuf_u32(rb);
    reply->meta.seq        = sfs_rbuf_u64(rb);
    if (reply->meta.configured > 1 || reply->meta.state > SFS_MIRROR_STATE_RESYNCING) {
        rb->error = -EBADMSG;
    }
}

const char *sfs_mirror_state_name(uint32_t state)
{
    static const char *const names[] = {"good", "needs-resync", "resyncing", "bad"};

    return state <= SFS_MIRROR_STATE_BAD ? names[state] : "?";
}
