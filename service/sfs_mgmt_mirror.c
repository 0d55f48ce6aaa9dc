/*
 * MIRROR_LIST on management: the config's mirror groups, which member is
 * primary, and each member's consistency state (docs/mirroring.md). The
 * states are all GOOD until failover and resync exist to change them; the
 * primary is the config's (no failover swaps it yet). Anyone may ask: the
 * groups are no secret (the map's targets are not either).
 */
#define SFS_LOG_FAC "mgmt"
#include "sfs_handlers.h"

#include "sfs_errno.h"
#include "sfs_log.h"

#include <stdlib.h>

void sfs_handle_mirror_list(sfs_service_t *service, sfs_tp_request_t *req)
{
    const sfs_config_t      *config = service->config;
    sfs_mirror_list_reply_t *reply;
    sfs_none_t               none;
    uint8_t                 *args;
    sfs_wbuf_t               wb;

    if (sfs_handler_decode(req, &none, sizeof(none), 0) != 0) {
        return;
    }
    reply = calloc(1, sizeof(*reply));
    args  = malloc(SFS_PROTO_ARGS_MAX);
    if (!reply || !args) {
        free(reply);
        free(args);
        sfs_tp_request_reply_error(req, -ENOMEM, "out of memory");
        return;
    }
    for (uint32_t i = 0; i < config->mirror_group_count && i < SFS_MIRROR_LIST_MAX; i++) {
        sfs_mirror_group_info_t *g = &reply->groups[reply->count++];

        g->group_id        = config->mirror_groups[i].id;
        g->primary         = config->mirror_groups[i].primary;
        g->secondary       = config->mirror_groups[i].secondary;
        g->primary_state   = SFS_MIRROR_STATE_GOOD;
        g->secondary_state = SFS_MIRROR_STATE_GOOD;
    }
    sfs_wbuf_init(&wb, args, SFS_PROTO_ARGS_MAX);
    sfs_proto_mirror_list_reply_pack(&wb, reply);
    if (wb.error) {
        sfs_tp_request_reply_error(req, wb.error, "%u mirror groups do not fit in a reply",
                                   config->mirror_group_count);
    } else {
        sfs_tp_request_reply(req, 0, args, wb.length, NULL, 0, NULL, NULL);
    }
    free(reply);
    free(args);
}
