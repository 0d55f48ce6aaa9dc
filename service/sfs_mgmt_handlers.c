/*
 * Handlers of management's requests (sfs_handlers.h): a rank registers and
 * reports its free space, clients fetch the map, an administrator stops the
 * service. Only server ranks (which proved the servers' secret) join and
 * report; only administrators stop the service.
 */
#define SFS_LOG_FAC "mgmt"
#include "sfs_handlers.h"

#include "sfs_mgmt_internal.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether the peer may do this (admin: an administrator's request, else a
 * server's); refuses it otherwise. */
static int sfs_mgmt_allowed(sfs_tp_request_t *req, int admin)
{
    sfs_tp_session_t *who  = sfs_tp_request_session(req);
    const sfs_cred_t *cred = sfs_tp_session_cred(who);
    uint32_t          op   = sfs_tp_request_opcode(req);

    if (admin ? sfs_cred_admin(cred) : (cred->flags & SFS_CRED_SERVER) != 0) {
        return 1;
    }
    sfs_warn("refused %s from uid %u on %s pid %u (%s): %s", sfs_op_name(op), cred->uid,
             sfs_tp_session_peer_host(who), sfs_tp_session_peer_pid(who),
             sfs_tp_session_peer_program(who), admin ? "not an administrator" : "not a server");
    sfs_tp_request_reply_error(req, -EPERM, "%s",
                               admin ? "only an administrator (root on a trusted host, the "
                                       "admin group or the servers' own user) may stop the "
                                       "service"
                                     : "only server ranks may do that");
    return 0;
}

void sfs_handle_register(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_mgmt_t         *mgmt = service->mgmt;
    sfs_register_req_t *reg;
    sfs_mgmt_node_t    *node;
    char                roles[64];
    void               *address;

    if (!sfs_mgmt_allowed(req, 0)) {
        return;
    }
    if (!SFS_ALLOC_PTR(reg)) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    if (sfs_handler_decode(req, reg, sizeof(*reg), 0) != 0) {
        goto out;
    }
    if (sfs_tp_session_peer_kind(sfs_tp_request_session(req)) != SFS_PEER_SERVER) {
        sfs_tp_request_reply_error(req, -EBADMSG, "malformed registration: not from a server");
        goto out;
    }
    /* a target id may belong to one rank only */
    for (uint32_t i = 0; i < reg->target_count; i++) {
        sfs_mgmt_target_t *t = sfs_mgmt_find_target(mgmt, reg->targets[i].target_id);

        if (t && t->node_id != reg->rank) {
            sfs_error("rank %u on %s claims target %u, which rank %u serves: refused", reg->rank,
                      reg->host, t->target_id, t->node_id);
            sfs_tp_request_reply_error(req, -EEXIST, "target %u is already served by rank %u",
                                       t->target_id, t->node_id);
            goto out;
        }
    }
    address = malloc(reg->address_length);
    if (!address) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        goto out;
    }
    memcpy(address, reg->address, reg->address_length);
    node = sfs_mgmt_find_node(mgmt, reg->rank);
    if (node) {
        sfs_info("rank %u on %s (pid %u) registered again (was pid %u)", reg->rank, reg->host,
                 reg->pid, node->pid);
        free(node->address);
    } else {
        sfs_mgmt_node_t *grown = realloc(mgmt->nodes, (mgmt->node_count + 1) * sizeof(*grown));

        if (!grown) {
            free(address);
            sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
            goto out;
        }
        mgmt->nodes = grown;
        node        = &mgmt->nodes[mgmt->node_count++];
        memset(node, 0, sizeof(*node));
        sfs_info("rank %u on %s (pid %u) registered: %s, %u target%s", reg->rank, reg->host,
                 reg->pid, sfs_roles_string(reg->roles, roles, sizeof(roles)), reg->target_count,
                 reg->target_count == 1 ? "" : "s");
    }
    node->node_id        = reg->rank;
    node->roles          = reg->roles;
    node->pid            = reg->pid;
    node->address        = address;
    node->address_length = reg->address_length;
    sfs_mgmt_heard(mgmt, node, sfs_time_ms());
    node->state = SFS_STATE_ONLINE;
    snprintf(node->host, sizeof(node->host), "%s", reg->host);
    for (uint32_t i = 0; i < reg->target_count; i++) {
        sfs_mgmt_target_t *t = sfs_mgmt_find_target(mgmt, reg->targets[i].target_id);

        if (!t) {
            sfs_mgmt_target_t *grown =
                realloc(mgmt->targets, (mgmt->target_count + 1) * sizeof(*grown));

            if (!grown) {
                sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
                goto out;
            }
            mgmt->targets = grown;
            t             = &mgmt->targets[mgmt->target_count++];
            memset(t, 0, sizeof(*t));
        }
        t->target_id = reg->targets[i].target_id;
        t->node_id   = reg->rank;
        t->capacity  = reg->targets[i].capacity;
        t->free      = reg->targets[i].free;
        t->bandwidth = reg->targets[i].bandwidth;
        snprintf(t->dir, sizeof(t->dir), "%s", reg->targets[i].dir);
    }
    mgmt->version++;
    sfs_tp_request_reply(req, 0, NULL, 0, NULL, 0, NULL, NULL);
out:
    free(reg);
}

void sfs_handle_heartbeat(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_mgmt_t           *mgmt = service->mgmt;
    sfs_heartbeat_req_t  *hb;
    sfs_heartbeat_reply_t reply = {0};
    sfs_mgmt_node_t      *node;
    uint8_t               out[8];
    sfs_wbuf_t            wb;

    if (!sfs_mgmt_allowed(req, 0)) {
        return;
    }
    if (!SFS_ALLOC_PTR(hb)) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    if (sfs_handler_decode(req, hb, sizeof(*hb), 0) != 0) {
        free(hb);
        return;
    }
    node = sfs_mgmt_find_node(mgmt, hb->rank);
    if (!node) {
        reply.flags |= SFS_HEARTBEAT_REGISTER_AGAIN; /* management restarted */
    } else {
        sfs_mgmt_heard(mgmt, node, sfs_time_ms());
        /* a metadata server cut off or stopped while its mirror was promoted
         * learns it here, before it answers another read (fencing); not the
         * rank a promotion is going to (the answer that records it may not
         * have come yet) */
        if (hb->rank != mgmt->meta_node && !(mgmt->promote_rpc && mgmt->promote_to == hb->rank)) {
            reply.flags |= SFS_HEARTBEAT_NOT_META;
        }
        for (uint32_t i = 0; i < hb->target_count; i++) {
            const sfs_heartbeat_target_t *src = &hb->targets[i];
            sfs_mgmt_target_t            *t   = sfs_mgmt_find_target(mgmt, src->target_id);

            if (t && t->node_id == hb->rank) {
                /* a target full (it answered ENOSPC) or filling: this
                 * process's metadata role places new files by it now */
                if (service->meta && t->free != src->free &&
                    (src->free == 0 ||
                     (t->free > src->free ? t->free - src->free : src->free - t->free) >=
                         src->capacity / 100)) {
                    sfs_meta_map_changed(service->meta);
                }
                t->capacity  = src->capacity;
                t->free      = src->free;
                t->bandwidth = src->bandwidth;
            }
        }
    }
    free(hb);
    sfs_wbuf_init(&wb, out, sizeof(out));
    sfs_proto_heartbeat_reply_pack(&wb, &reply);
    sfs_tp_request_reply(req, 0, out, wb.length, NULL, 0, NULL, NULL);
}

static void sfs_mgmt_free_cb(void *arg)
{
    free(arg);
}

void sfs_handle_get_map(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_mgmt_t  *mgmt = service->mgmt;
    sfs_none_t   none;
    sfs_map_t    map;
    uint8_t     *buf;
    size_t       size;
    sfs_wbuf_t   wb;
    struct iovec iov;

    if (sfs_handler_decode(req, &none, sizeof(none), 0) != 0) {
        return;
    }
    if (sfs_mgmt_build_map(mgmt, &map) != 0) {
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    size = sfs_map_packed_size(&map);
    buf  = malloc(size);
    if (!buf) {
        free(map.nodes);
        free(map.targets);
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    sfs_wbuf_init(&wb, buf, size);
    sfs_map_pack(&wb, &map);
    free(map.nodes);
    free(map.targets);
    iov.iov_base = buf;
    iov.iov_len  = wb.length;
    sfs_tp_request_reply(req, 0, NULL, 0, &iov, 1, sfs_mgmt_free_cb, buf);
}

void sfs_handle_shutdown(sfs_service_t *service, sfs_tp_request_t *req)
{
    sfs_tp_session_t *session = sfs_tp_request_session(req);
    sfs_none_t        none;

    if (!sfs_mgmt_allowed(req, 1) || sfs_handler_decode(req, &none, sizeof(none), 0) != 0) {
        return;
    }
    sfs_info("shutdown requested by %s pid %u (%s, uid %u)", sfs_tp_session_peer_host(session),
             sfs_tp_session_peer_pid(session), sfs_tp_session_peer_program(session),
             sfs_tp_session_cred(session)->uid);
    service->mgmt->shutdown_requested = 1;
    sfs_tp_request_reply(req, 0, NULL, 0, NULL, 0, NULL, NULL);
}
