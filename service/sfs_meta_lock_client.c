/*
 * The clients that own byte-range locks (sfs_meta_lock_client.h): a hash
 * table of records by (uuid, uid).
 */
#include "sfs_meta_lock_client.h"

#include "sfs_alloc.h"
#include "sfs_list.h"

#include <stdio.h>
#include <stdlib.h>

static uint64_t sfs_lock_client_key(uint64_t uuid, uint32_t uid)
{
    return uuid ^ ((uint64_t)uid * 0x9e3779b97f4a7c15ull);
}

int sfs_lock_clients_init(sfs_lock_clients_t *clients)
{
    return sfs_hash_init(&clients->table);
}

void sfs_lock_clients_cleanup(sfs_lock_clients_t *clients)
{
    for (size_t b = 0; b < clients->table.bucket_count; b++) {
        sfs_hash_link_t *link = clients->table.buckets[b];

        while (link) {
            sfs_hash_link_t *next = link->next;

            free(sfs_container_of(link, sfs_lock_client_t, link));
            link = next;
        }
    }
    sfs_hash_cleanup(&clients->table);
}

sfs_lock_client_t *sfs_lock_client_find(sfs_lock_clients_t *clients, uint64_t uuid, uint32_t uid)
{
    uint64_t key = sfs_lock_client_key(uuid, uid);

    if (!clients->table.buckets) {
        return NULL;
    }
    /* the key mixes two numbers: compare both, not the key */
    for (sfs_hash_link_t *link = clients->table.buckets[sfs_hash_bucket(&clients->table, key)];
         link; link            = link->next) {
        sfs_lock_client_t *client = sfs_container_of(link, sfs_lock_client_t, link);

        if (client->uuid == uuid && client->uid == uid) {
            return client;
        }
    }
    return NULL;
}

sfs_lock_client_t *sfs_lock_client_speaks(sfs_lock_clients_t *clients, uint64_t uuid, uint32_t uid,
                                          uint64_t session_id, const char *host, uint32_t pid)
{
    sfs_lock_client_t *client = sfs_lock_client_find(clients, uuid, uid);

    if (!client) {
        if (!clients->table.buckets || !SFS_ALLOC_PTR(client)) {
            return NULL;
        }
        client->uuid = uuid;
        client->uid  = uid;
        sfs_hash_add(&clients->table, &client->link, sfs_lock_client_key(uuid, uid));
    }
    client->session_id = session_id;
    client->lost_ms    = 0;
    client->pid        = pid;
    snprintf(client->host, sizeof(client->host), "%s", host ? host : "?");
    return client;
}

void sfs_lock_client_forget(sfs_lock_clients_t *clients, sfs_lock_client_t *client)
{
    sfs_hash_del(&clients->table, &client->link);
    free(client);
}

void sfs_lock_client_note_released(sfs_lock_client_t *client, uint64_t entry_id, uint64_t lock_id)
{
    unsigned slot = client->released_next++ % SFS_LOCK_CLIENT_RELEASED;

    client->released[slot].entry_id = entry_id;
    client->released[slot].lock_id  = lock_id;
}

int sfs_lock_client_released_lately(const sfs_lock_client_t *client, uint64_t entry_id,
                                    uint64_t lock_id)
{
    for (unsigned i = 0; i < SFS_LOCK_CLIENT_RELEASED; i++) {
        if (client->released[i].lock_id == lock_id && client->released[i].entry_id == entry_id &&
            lock_id != 0) {
            return 1;
        }
    }
    return 0;
}

void sfs_lock_clients_expired(sfs_lock_clients_t *clients, uint64_t now_ms, uint64_t grace_ms,
                              void (*visit)(sfs_lock_client_t *client, void *arg), void *arg)
{
    for (size_t b = 0; b < clients->table.bucket_count; b++) {
        sfs_hash_link_t *link = clients->table.buckets[b];

        while (link) {
            sfs_hash_link_t   *next   = link->next;
            sfs_lock_client_t *client = sfs_container_of(link, sfs_lock_client_t, link);

            if (client->lost_ms && now_ms - client->lost_ms >= grace_ms) {
                visit(client, arg);
            }
            link = next;
        }
    }
}
