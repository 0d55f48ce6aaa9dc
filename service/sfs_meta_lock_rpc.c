/*
 * LOCK and UNLOCK on the metadata role (the `lock` handler of
 * SFS_PROTO_OPS), on the progress thread: check the open's capability,
 * then ask the lock table (sfs_meta_lock.h). A lock that must wait keeps
 * its request, answered when the lock is granted (a deferred reply, as
 * group commit answers later).
 *
 * The owner of a lock is the client process (its worker's uuid and its
 * uid: sfs_meta_lock_client.h), not one session: a client whose link was
 * cut comes back on a new session and still holds its locks, and sends
 * again a LOCK or UNLOCK whose reply was lost, answered as the first. A
 * session that ends takes its client's locks with it at once when the
 * client closed it (BYE) or its process is gone (on this host: no such
 * pid); a session lost otherwise (the network, or a process on another
 * host that died) keeps them for the offline timeout and one RPC timeout
 * more (sfs_meta_lock_grace_ms).
 */
#define SFS_LOG_FAC "lock"
#include "sfs_handlers.h"

#include "sfs_meta_internal.h"
#include "sfs_meta_lock.h"

#include "sfs_cap.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* How often the kept locks of lost clients are looked at. */
#define SFS_META_LOCK_TICK_MS 250

/* A queued LOCK ends: granted (0) or not. */
static void sfs_meta_lock_done(void *waiter, int status, void *arg)
{
    sfs_tp_request_t *req = waiter;

    (void)arg;
    if (status == 0) {
        sfs_tp_request_reply(req, 0, NULL, 0, NULL, 0, NULL, NULL);
        return;
    }
    sfs_tp_request_reply_error(req, status, "byte-range lock not granted: %s",
                               status == -ECANCELED ? "cancelled by its owner, or asked again"
                                                    : sfs_strerror(status));
}

int sfs_meta_locks_init(sfs_meta_t *meta)
{
    int rc = sfs_lock_clients_init(&meta->lock_clients);

    if (rc) {
        return rc;
    }
    rc = sfs_lock_table_create(sfs_meta_lock_done, meta, &meta->locks);
    if (rc) {
        sfs_lock_clients_cleanup(&meta->lock_clients);
    }
    return rc;
}

void sfs_meta_locks_cleanup(sfs_meta_t *meta)
{
    sfs_lock_table_destroy(meta->locks, -ESHUTDOWN);
    meta->locks = NULL;
    sfs_lock_clients_cleanup(&meta->lock_clients);
}

/* How long a lost client's locks are kept: the offline timeout (how long
 * management lets a host be silent) and one RPC timeout more (how long the
 * client waits for a reply before it sends the call again). */
static uint64_t sfs_meta_lock_grace_ms(const sfs_meta_t *meta)
{
    return (uint64_t)meta->service->config->offline_timeout_ms +
           meta->service->config->rpc_timeout_ms;
}

/* Whether process `pid` of this host is gone: no such process, or a
 * zombie that its parent has not reaped yet. */
static int sfs_meta_lock_pid_gone(uint32_t pid)
{
    char  path[64], line[256], *state;
    FILE *stat_file;

    if (pid == 0) {
        return 0;
    }
    snprintf(path, sizeof(path), "/proc/%u/stat", pid);
    stat_file = fopen(path, "r");
    if (!stat_file) {
        return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
    }
    state = fgets(line, sizeof(line), stat_file) ? strrchr(line, ')') : NULL;
    fclose(stat_file);
    /* "pid (comm) S ...": the state follows the command's last ')' */
    return state && (state[1] == ' ') && (state[2] == 'Z' || state[2] == 'X');
}

/* Whether a client is known to be gone: its process ran on this host and
 * no longer exists. (A pid of another host, or of another pid namespace
 * here, says nothing: kept, the safe side.) */
static int sfs_meta_lock_peer_gone(const char *peer_host, uint32_t peer_pid)
{
    char host[256];

    if (gethostname(host, sizeof(host)) != 0) {
        return 0;
    }
    host[sizeof(host) - 1] = '\0';
    if (strcmp(host, peer_host) != 0) {
        return 0;
    }
    return sfs_meta_lock_pid_gone(peer_pid);
}

/* Release everything the client holds or waits for, and forget it. */
static size_t sfs_meta_lock_client_gone(sfs_meta_t *meta, sfs_lock_client_t *client)
{
    size_t gone = sfs_lock_release_owner(meta->locks, client, -ECONNRESET);

    sfs_lock_client_forget(&meta->lock_clients, client);
    return gone;
}

void sfs_meta_locks_session_end(sfs_meta_t *meta, sfs_tp_session_t *session)
{
    sfs_lock_client_t *client;
    size_t             held;

    if (!meta || !meta->locks) {
        return;
    }
    client = sfs_lock_client_find(&meta->lock_clients, sfs_tp_session_peer_uuid(session),
                                  sfs_tp_session_cred(session)->uid);
    if (!client || client->session_id != sfs_tp_session_id(session)) {
        return; /* no locks, or it speaks on a newer session */
    }
    held = sfs_lock_owner_count(meta->locks, client);
    if (held && sfs_tp_session_peer_lost(session) &&
        !sfs_meta_lock_peer_gone(sfs_tp_session_peer_host(session),
                                 sfs_tp_session_peer_pid(session))) {
        client->session_id = 0;
        client->lost_ms    = sfs_time_ms();
        sfs_info("session %016llx (%s pid %u, uid %u) lost: its %zu byte-range lock(s) kept for "
                 "%.0f s, for the client to come back",
                 (unsigned long long)sfs_tp_session_id(session), sfs_tp_session_peer_host(session),
                 sfs_tp_session_peer_pid(session), client->uid, held,
                 (double)sfs_meta_lock_grace_ms(meta) / 1000.0);
        return;
    }
    held = sfs_meta_lock_client_gone(meta, client);
    if (held) {
        sfs_info("session %016llx (%s pid %u) ended: %zu byte-range lock(s) released",
                 (unsigned long long)sfs_tp_session_id(session), sfs_tp_session_peer_host(session),
                 sfs_tp_session_peer_pid(session), held);
    }
}

typedef struct {
    sfs_meta_t        *meta;
    sfs_lock_client_t *client;
    sfs_tp_session_t  *session; /* a live session of that client */
} sfs_meta_lock_look_t;

static void sfs_meta_lock_look(sfs_tp_session_t *session, void *arg)
{
    sfs_meta_lock_look_t *look = arg;

    if (sfs_tp_session_peer_uuid(session) == look->client->uuid &&
        sfs_tp_session_cred(session)->uid == look->client->uid) {
        look->session = session;
    }
}

/* A lost client's grace is over: released, unless it came back on a
 * session that has not asked for a lock yet. */
static void sfs_meta_lock_expired(sfs_lock_client_t *client, void *arg)
{
    sfs_meta_lock_look_t look = {.meta = arg, .client = client};

    sfs_tp_worker_visit_sessions(look.meta->service->worker, sfs_meta_lock_look, &look);
    if (look.session) {
        sfs_lock_client_speaks(
            &look.meta->lock_clients, client->uuid, client->uid, sfs_tp_session_id(look.session),
            sfs_tp_session_peer_host(look.session), sfs_tp_session_peer_pid(look.session));
        return;
    }
    /* (said before: the record goes with its locks) */
    sfs_warn("the client %s pid %u (uid %u) did not come back within %.0f s of losing its "
             "session: its %zu byte-range lock(s) released",
             client->host, client->pid, client->uid,
             (double)sfs_meta_lock_grace_ms(look.meta) / 1000.0,
             sfs_lock_owner_count(look.meta->locks, client));
    sfs_meta_lock_client_gone(look.meta, client);
}

/* A lost client of this host whose process is gone by now is released at
 * once. The check when its session was lost can come too early: a killed
 * process's sockets are closed before it becomes a zombie. */
static void sfs_meta_lock_lost_here(sfs_lock_client_t *client, void *arg)
{
    if (!sfs_meta_lock_peer_gone(client->host, client->pid)) {
        return;
    }
    /* (said before: the record goes with its locks) */
    sfs_info("the client %s pid %u (uid %u), whose session was lost, has exited: its %zu "
             "byte-range lock(s) released",
             client->host, client->pid, client->uid,
             sfs_lock_owner_count(((sfs_meta_t *)arg)->locks, client));
    sfs_meta_lock_client_gone(arg, client);
}

void sfs_meta_locks_tick(sfs_meta_t *meta, uint64_t now_ms)
{
    if (!meta->locks || now_ms < meta->next_lock_tick_ms) {
        return;
    }
    meta->next_lock_tick_ms = now_ms + SFS_META_LOCK_TICK_MS;
    sfs_lock_clients_expired(&meta->lock_clients, now_ms, 0, sfs_meta_lock_lost_here, meta);
    sfs_lock_clients_expired(&meta->lock_clients, now_ms, sfs_meta_lock_grace_ms(meta),
                             sfs_meta_lock_expired, meta);
}

/* The record of the client behind req's session, now speaking on it. */
static sfs_lock_client_t *sfs_meta_lock_client(sfs_meta_t *meta, sfs_tp_request_t *req, int make)
{
    sfs_tp_session_t  *session = sfs_tp_request_session(req);
    uint64_t           uuid    = sfs_tp_session_peer_uuid(session);
    uint32_t           uid     = sfs_tp_session_cred(session)->uid;
    sfs_lock_client_t *client  = sfs_lock_client_find(&meta->lock_clients, uuid, uid);

    if (!client && !make) {
        return NULL;
    }
    return sfs_lock_client_speaks(&meta->lock_clients, uuid, uid, sfs_tp_session_id(session),
                                  sfs_tp_session_peer_host(session),
                                  sfs_tp_session_peer_pid(session));
}

static void sfs_meta_lock(sfs_meta_t *meta, sfs_tp_request_t *req)
{
    sfs_tp_session_t  *session = sfs_tp_request_session(req);
    const sfs_cred_t  *cred    = sfs_tp_session_cred(session);
    sfs_lock_req_t     lreq;
    sfs_lock_spec_t    spec;
    sfs_lock_client_t *client;
    uint32_t           access;
    int                rc;

    if (sfs_handler_decode(req, &lreq, sizeof(lreq), 0) != 0) {
        return;
    }
    /* an exclusive lock is for writers: it needs what WRITE needs */
    access = lreq.mode == SFS_LOCK_EXCLUSIVE ? SFS_CAP_WRITE : SFS_CAP_READ;
    rc     = sfs_cap_check(&meta->service->cap_key, &lreq.cap, lreq.entry_id, access, cred->uid,
                           sfs_wall_ns() / 1000000000u);
    if (rc) {
        sfs_warn("refused LOCK of file %llu from uid %u (%s pid %u): %s",
                 (unsigned long long)lreq.entry_id, cred->uid, sfs_tp_session_peer_host(session),
                 sfs_tp_session_peer_pid(session), sfs_error_detail());
        sfs_tp_request_reply_error(req, rc, "%s lock of file %llu: %s",
                                   lreq.mode == SFS_LOCK_EXCLUSIVE ? "exclusive" : "shared",
                                   (unsigned long long)lreq.entry_id, sfs_error_detail());
        return;
    }
    client = sfs_meta_lock_client(meta, req, 1);
    if (!client) {
        sfs_tp_request_reply_error(req, -ENOMEM, "lock of file %llu: out of memory",
                                   (unsigned long long)lreq.entry_id);
        return;
    }
    spec = (sfs_lock_spec_t){.owner    = client,
                             .entry_id = lreq.entry_id,
                             .lock_id  = lreq.lock_id,
                             .offset   = lreq.offset,
                             .length   = lreq.length,
                             .mode     = lreq.mode};
    rc   = sfs_lock_acquire(meta->locks, &spec, req);
    if (rc == SFS_LOCK_QUEUED) {
        return; /* answered by sfs_meta_lock_done */
    }
    if (rc) {
        sfs_tp_request_reply_error(
            req, rc, "lock %llu of file %llu: %s", (unsigned long long)lreq.lock_id,
            (unsigned long long)lreq.entry_id,
            rc == -EEXIST   ? "this client uses that lock id already, for another range"
            : rc == -ENOLCK ? "too many locks held or queued by this client"
                            : sfs_strerror(rc));
        return;
    }
    sfs_tp_request_reply(req, 0, NULL, 0, NULL, 0, NULL, NULL);
}

static void sfs_meta_unlock(sfs_meta_t *meta, sfs_tp_request_t *req)
{
    sfs_unlock_req_t   ureq;
    sfs_lock_client_t *client;
    int                rc = -ENOENT;

    if (sfs_handler_decode(req, &ureq, sizeof(ureq), 0) != 0) {
        return;
    }
    /* only this client's own locks can be named: no capability needed */
    client = sfs_meta_lock_client(meta, req, 0);
    if (client) {
        rc = sfs_lock_release(meta->locks, client, ureq.entry_id, ureq.lock_id);
        if (rc == 0) {
            sfs_lock_client_note_released(client, ureq.entry_id, ureq.lock_id);
        } else if (sfs_lock_client_released_lately(client, ureq.entry_id, ureq.lock_id)) {
            rc = 0; /* sent again: its first reply was lost */
        }
    }
    if (rc) {
        sfs_tp_request_reply_error(
            req, rc,
            "lock %llu of file %llu: this client holds no such lock (a client's locks go when it "
            "closes its session, or %.0f s after it lost it)",
            (unsigned long long)ureq.lock_id, (unsigned long long)ureq.entry_id,
            (double)sfs_meta_lock_grace_ms(meta) / 1000.0);
        return;
    }
    sfs_tp_request_reply(req, 0, NULL, 0, NULL, 0, NULL, NULL);
}

void sfs_handle_lock(sfs_service_t *service, sfs_tp_request_t *req)
{
    if (sfs_tp_request_opcode(req) == SFS_OP_LOCK) {
        sfs_meta_lock(service->meta, req);
    } else {
        sfs_meta_unlock(service->meta, req);
    }
}
