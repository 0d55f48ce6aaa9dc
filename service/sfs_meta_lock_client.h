/*
 * The clients that own byte-range locks (sfs_meta_lock_rpc.c): one record
 * per client process, named by its worker's uuid and its uid, so that a
 * lock belongs to the process rather than to one connection. A client
 * whose link is cut reconnects with a new session and still holds its
 * locks; the record says which session it speaks on now and, once that
 * session is lost, since when (the caller releases its locks when it does
 * not come back in time).
 *
 * Promises:
 *  - A record is found by (uuid, uid) only: a process cannot reach another
 *    uid's locks, whatever uuid it claims.
 *  - It remembers the last SFS_LOCK_CLIENT_RELEASED locks it released, so
 *    that an UNLOCK sent again (its reply lost) is answered as the first.
 *  - One thread (the progress thread); no locking inside.
 */
#ifndef SFS_META_LOCK_CLIENT_H
#define SFS_META_LOCK_CLIENT_H

#include "sfs_hash.h"

#include <stdint.h>

#define SFS_LOCK_CLIENT_RELEASED 16
#define SFS_LOCK_CLIENT_HOST_MAX 64

typedef struct sfs_lock_client {
    sfs_hash_link_t link; /* by uuid and uid mixed */
    uint64_t        uuid;
    uint32_t        uid;
    uint32_t        pid;
    char            host[SFS_LOCK_CLIENT_HOST_MAX];
    uint64_t        session_id; /* the session it spoke on last */
    uint64_t        lost_ms;    /* when that session was lost; 0: connected */
    struct {
        uint64_t entry_id;
        uint64_t lock_id;
    } released[SFS_LOCK_CLIENT_RELEASED];
    unsigned released_next;
} sfs_lock_client_t;

typedef struct sfs_lock_clients {
    sfs_hash_t table;
} sfs_lock_clients_t;

int  sfs_lock_clients_init(sfs_lock_clients_t *clients);
void sfs_lock_clients_cleanup(sfs_lock_clients_t *clients);

/* The record of (uuid, uid), or NULL. */
sfs_lock_client_t *sfs_lock_client_find(sfs_lock_clients_t *clients, uint64_t uuid, uint32_t uid);
/* The record of (uuid, uid), made if missing (NULL: out of memory), now
 * speaking on session_id from host/pid: connected again if it was lost. */
sfs_lock_client_t *sfs_lock_client_speaks(sfs_lock_clients_t *clients, uint64_t uuid, uint32_t uid,
                                          uint64_t session_id, const char *host, uint32_t pid);
void               sfs_lock_client_forget(sfs_lock_clients_t *clients, sfs_lock_client_t *client);

/* Remember that the client released (entry_id, lock_id); whether it did
 * lately. */
void sfs_lock_client_note_released(sfs_lock_client_t *client, uint64_t entry_id, uint64_t lock_id);
int  sfs_lock_client_released_lately(const sfs_lock_client_t *client, uint64_t entry_id,
                                     uint64_t lock_id);

/* Call visit for each client lost since at least grace_ms before now_ms;
 * visit may forget it. */
void sfs_lock_clients_expired(sfs_lock_clients_t *clients, uint64_t now_ms, uint64_t grace_ms,
                              void (*visit)(sfs_lock_client_t *client, void *arg), void *arg);

#endif
