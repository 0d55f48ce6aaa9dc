/*
 * POOL_LIST on management: the storage pools of the config and their
 * targets (docs/pools.md), `default` (the targets in no named pool) first.
 * These are the config's pools only: changes made while the service runs
 * (POOL_SET) live on the metadata server, whose POOL_SHOW clients ask
 * first (sfs_admin_pool_list); this answers servers and clients from
 * before that. Anyone may ask: pools are no secret (the map's targets are
 * not either).
 */
#define SFS_LOG_FAC "mgmt"
#include "sfs_handlers.h"

#include "sfs_errno.h"
#include "sfs_log.h"

#include <stdio.h>
#include <stdlib.h>

/* Append pool `id` (its targets from the config) to the reply. */
static void sfs_mgmt_pool_add(const sfs_config_t *config, uint32_t id, sfs_pool_list_reply_t *reply)
{
    sfs_pool_info_t *pool = &reply->pools[reply->count++];

    pool->id    = id;
    pool->first = reply->target_total;
    snprintf(pool->name, sizeof(pool->name), "%s", sfs_config_pool_name(config, id));
    for (uint32_t i = 0; i < config->target_count && reply->target_total < SFS_POOL_LIST_TARGETS;
         i++) {
        if (sfs_config_pool_of(config, config->targets[i].id) == id) {
            reply->targets[reply->target_total++] = config->targets[i].id;
            pool->target_count++;
        }
    }
}

void sfs_handle_pool_list(sfs_service_t *service, sfs_tp_request_t *req)
{
    const sfs_config_t    *config = service->config;
    sfs_pool_list_reply_t *reply;
    sfs_none_t             none;
    uint8_t               *args;
    sfs_wbuf_t             wb;

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
    sfs_mgmt_pool_add(config, SFS_POOL_DEFAULT, reply);
    for (uint32_t i = 0; i < config->pool_count && reply->count < SFS_POOL_LIST_MAX; i++) {
        sfs_mgmt_pool_add(config, config->pools[i].id, reply);
    }
    sfs_wbuf_init(&wb, args, SFS_PROTO_ARGS_MAX);
    sfs_proto_pool_list_reply_pack(&wb, reply);
    if (wb.error) {
        sfs_tp_request_reply_error(req, wb.error, "%u storage pools do not fit in a reply",
                                   config->pool_count + 1);
    } else {
        sfs_tp_request_reply(req, 0, args, wb.length, NULL, 0, NULL, NULL);
    }
    free(reply);
    free(args);
}
