#include "sfs_map.h"
#include "sfs_alloc.h"
#include "sfs_errno.h"

#include <stdio.h>
#include <string.h>

#define SFS_MAP_MAX_NODES   4096
#define SFS_MAP_MAX_TARGETS 4096

size_t sfs_map_packed_size(const sfs_map_t *map)
{
    size_t size = 8 + 2 + strlen(map->cluster) + 5 * 4 + 8 + 4 + 4;

    for (uint32_t i = 0; i < map->node_count; i++) {
        size += 4 * 4 + 8 + 2 + strlen(map->nodes[i].host) + 4 + map->nodes[i].address_length;
    }
    for (uint32_t i = 0; i < map->target_count; i++) {
        size += 4 * 5 + 8 * 6 + 2 + strlen(map->targets[i].dir);
    }
    return size;
}

void sfs_map_pack(sfs_wbuf_t *wb, const sfs_map_t *map)
{
    sfs_wbuf_u64(wb, map->version);
    sfs_wbuf_str(wb, map->cluster);
    sfs_wbuf_u32(wb, map->mgmt_node);
    sfs_wbuf_u32(wb, map->meta_node);
    sfs_wbuf_u64(wb, map->default_chunk_size);
    sfs_wbuf_u32(wb, map->default_stripe_count);
    sfs_wbuf_u32(wb, map->rpc_timeout_ms);
    sfs_wbuf_u32(wb, map->offline_timeout_ms);
    sfs_wbuf_u32(wb, map->node_count);
    for (uint32_t i = 0; i < map->node_count; i++) {
        const sfs_map_node_t *node = &map->nodes[i];

        sfs_wbuf_u32(wb, node->node_id);
        sfs_wbuf_u32(wb, node->roles);
        sfs_wbuf_u32(wb, node->state);
        sfs_wbuf_u32(wb, node->pid);
        sfs_wbuf_u64(wb, node->last_contact_ms);
        sfs_wbuf_str(wb, node->host);
        sfs_wbuf_blob(wb, node->address, node->address_length);
    }
    sfs_wbuf_u32(wb, map->target_count);
    for (uint32_t i = 0; i < map->target_count; i++) {
        const sfs_map_target_t *target = &map->targets[i];

        sfs_wbuf_u32(wb, target->target_id);
        sfs_wbuf_u32(wb, target->node_id);
        sfs_wbuf_u32(wb, target->state);
        sfs_wbuf_u64(wb, target->capacity);
        sfs_wbuf_u64(wb, target->free);
        sfs_wbuf_u64(wb, target->bandwidth);
        sfs_wbuf_u64(wb, target->last_contact_ms);
        sfs_wbuf_str(wb, target->dir);
        sfs_wbuf_u32(wb, target->mirror_primary);
        sfs_wbuf_u32(wb, target->mirror_state);
        sfs_wbuf_u64(wb, target->resync_done);
        sfs_wbuf_u64(wb, target->resync_total);
    }
}

void sfs_map_destroy(sfs_map_t *map)
{
    if (!map) {
        return;
    }
    for (uint32_t i = 0; i < map->node_count; i++) {
        free(map->nodes[i].address);
    }
    free(map->nodes);
    free(map->targets);
    free(map);
}

int sfs_map_unpack(const void *data, size_t length, sfs_map_t **map_p)
{
    sfs_rbuf_t rb;
    sfs_map_t *map;
    uint32_t   count;
    int        rc = -EBADMSG;

    if (!SFS_ALLOC_PTR(map)) {
        return -ENOMEM;
    }
    sfs_rbuf_init(&rb, data, length);
    map->version = sfs_rbuf_u64(&rb);
    sfs_rbuf_str(&rb, map->cluster, sizeof(map->cluster));
    map->mgmt_node            = sfs_rbuf_u32(&rb);
    map->meta_node            = sfs_rbuf_u32(&rb);
    map->default_chunk_size   = sfs_rbuf_u64(&rb);
    map->default_stripe_count = sfs_rbuf_u32(&rb);
    map->rpc_timeout_ms       = sfs_rbuf_u32(&rb);
    map->offline_timeout_ms   = sfs_rbuf_u32(&rb);
    count                     = sfs_rbuf_u32(&rb);
    if (rb.error || count > SFS_MAP_MAX_NODES || count > sfs_rbuf_remaining(&rb) / 24) {
        goto err;
    }
    if (!SFS_ALLOC_ARRAY(map->nodes, count)) {
        rc = -ENOMEM;
        goto err;
    }
    for (uint32_t i = 0; i < count; i++) {
        sfs_map_node_t *node = &map->nodes[i];
        const void     *address;

        node->node_id         = sfs_rbuf_u32(&rb);
        node->roles           = sfs_rbuf_u32(&rb);
        node->state           = sfs_rbuf_u32(&rb);
        node->pid             = sfs_rbuf_u32(&rb);
        node->last_contact_ms = sfs_rbuf_u64(&rb);
        sfs_rbuf_str(&rb, node->host, sizeof(node->host));
        address = sfs_rbuf_blob(&rb, &node->address_length);
        if (rb.error || node->address_length > SFS_ADDRESS_MAX) {
            goto err;
        }
        map->node_count = i + 1; /* so that destroy frees what was copied */
        if (node->address_length) {
            node->address = malloc(node->address_length);
            if (!node->address) {
                rc = -ENOMEM;
                goto err;
            }
            memcpy(node->address, address, node->address_length);
        }
    }
    map->node_count = count;
    count           = sfs_rbuf_u32(&rb);
    if (rb.error || count > SFS_MAP_MAX_TARGETS || count > sfs_rbuf_remaining(&rb) / 70) {
        goto err;
    }
    if (!SFS_ALLOC_ARRAY(map->targets, count)) {
        rc = -ENOMEM;
        goto err;
    }
    for (uint32_t i = 0; i < count; i++) {
        sfs_map_target_t *target = &map->targets[i];

        target->target_id       = sfs_rbuf_u32(&rb);
        target->node_id         = sfs_rbuf_u32(&rb);
        target->state           = sfs_rbuf_u32(&rb);
        target->capacity        = sfs_rbuf_u64(&rb);
        target->free            = sfs_rbuf_u64(&rb);
        target->bandwidth       = sfs_rbuf_u64(&rb);
        target->last_contact_ms = sfs_rbuf_u64(&rb);
        sfs_rbuf_str(&rb, target->dir, sizeof(target->dir));
        target->mirror_primary = sfs_rbuf_u32(&rb);
        target->mirror_state   = sfs_rbuf_u32(&rb);
        target->resync_done    = sfs_rbuf_u64(&rb);
        target->resync_total   = sfs_rbuf_u64(&rb);
    }
    map->target_count = count;
    if (rb.error || sfs_rbuf_remaining(&rb) != 0) {
        goto err;
    }
    *map_p = map;
    return 0;

err:
    sfs_map_destroy(map);
    return rc;
}

int sfs_map_dup(const sfs_map_t *map, sfs_map_t **copy_p)
{
    size_t     size = sfs_map_packed_size(map);
    uint8_t   *buf  = malloc(size);
    sfs_wbuf_t wb;
    int        rc;

    if (!buf) {
        return -ENOMEM;
    }
    sfs_wbuf_init(&wb, buf, size);
    sfs_map_pack(&wb, map);
    rc = wb.error ? wb.error : sfs_map_unpack(buf, wb.length, copy_p);
    free(buf);
    return rc;
}

const sfs_map_node_t *sfs_map_find_node(const sfs_map_t *map, uint32_t node_id)
{
    for (uint32_t i = 0; i < map->node_count; i++) {
        if (map->nodes[i].node_id == node_id) {
            return &map->nodes[i];
        }
    }
    return NULL;
}

const sfs_map_target_t *sfs_map_find_target(const sfs_map_t *map, uint32_t target_id)
{
    for (uint32_t i = 0; i < map->target_count; i++) {
        if (map->targets[i].target_id == target_id) {
            return &map->targets[i];
        }
    }
    return NULL;
}

const char *sfs_state_name(uint32_t state)
{
    switch (state) {
    case SFS_STATE_ONLINE:
        return "online";
    case SFS_STATE_PROBABLY_OFFLINE:
        return "probably-offline";
    case SFS_STATE_OFFLINE:
        return "offline";
    default:
        return "unknown";
    }
}

const char *sfs_roles_string(uint32_t roles, char *buf, size_t buflen)
{
    snprintf(buf, buflen, "%s%s%s%s%s%s%s", (roles & SFS_ROLE_MGMT) ? "mgmt" : "",
             ((roles & SFS_ROLE_MGMT) && (roles & ~SFS_ROLE_MGMT)) ? "," : "",
             (roles & SFS_ROLE_META) ? "meta" : "",
             ((roles & SFS_ROLE_META) && (roles & (SFS_ROLE_STORAGE | SFS_ROLE_META_MIRROR))) ? ","
                                                                                              : "",
             (roles & SFS_ROLE_STORAGE) ? "storage" : "",
             ((roles & SFS_ROLE_STORAGE) && (roles & SFS_ROLE_META_MIRROR)) ? "," : "",
             (roles & SFS_ROLE_META_MIRROR) ? "metamirror" : "");
    if (buf[0] == '\0') {
        snprintf(buf, buflen, "none");
    }
    return buf;
}
