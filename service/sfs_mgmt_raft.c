/*
 * One replica of management's replicated state (sfs_mgmt_raft.h). libraft
 * and libuv are not thread-safe: everything that touches them runs on the
 * replica's loop thread; other threads hand it proposals through a queue
 * and an async wake-up, and read what it publishes under `lock`.
 */
#define SFS_LOG_FAC "mgmt"
#include "sfs_mgmt_raft.h"

#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_mgmt_raft_cmd.h"

#include <errno.h>
#include <pthread.h>
#include <raft.h>
#include <raft/uv.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <uv.h>

/* how often the loop looks at who leads (libraft 0.15 has no callback) */
#define SFS_MGMT_RAFT_WATCH_MS 50

struct sfs_mgmt_raft_proposal {
    struct raft_apply              req; /* req.data: this */
    struct sfs_mgmt_raft_proposal *next;
    sfs_mgmt_raft_t               *raft;
    struct raft_buffer             buf;  /* raft_malloc'd; libraft's once applied */
    int                            refs; /* the proposer's and the loop's; under raft->lock */
    int                            done;
    int                            status;
    char                           detail[256];
};

struct sfs_mgmt_raft {
    sfs_mgmt_raft_params_t params;
    char                  *addresses[SFS_MGMT_RAFT_MEMBERS_MAX];
    char                  *dir;

    uv_loop_t                loop;
    uv_async_t               wake;
    uv_timer_t               watch;
    struct raft_uv_transport transport;
    struct raft_io           io;
    struct raft_fsm          fsm;
    struct raft              raft;
    pthread_t                thread;
    int                      closing; /* loop thread: raft_close called */
    int                      inited;  /* raft_init succeeded */

    /* loop thread: the latest text of each kind (for snapshots) */
    char  *texts[SFS_MGMT_RAFT_KINDS];
    size_t lengths[SFS_MGMT_RAFT_KINDS];

    pthread_mutex_t                lock;
    pthread_cond_t                 cond; /* proposals done */
    struct sfs_mgmt_raft_proposal *queue;
    int                            stopping;
    int                            leading;   /* published by the loop */
    uint32_t                       leader_id; /* published by the loop */
    uint64_t                       applied;   /* published by the loop */
};

static void proposal_put(struct sfs_mgmt_raft_proposal *p)
{
    int last;

    last = --p->refs == 0;
    if (last) {
        if (p->buf.base) {
            raft_free(p->buf.base);
        }
        free(p);
    }
}

/* loop thread: the proposal's outcome; the loop's reference goes */
static void proposal_finish(struct sfs_mgmt_raft_proposal *p, int status, const char *detail)
{
    sfs_mgmt_raft_t *raft = p->raft;

    pthread_mutex_lock(&raft->lock);
    p->done   = 1;
    p->status = status;
    snprintf(p->detail, sizeof(p->detail), "%s", detail ? detail : "");
    pthread_cond_broadcast(&raft->cond);
    proposal_put(p);
    pthread_mutex_unlock(&raft->lock);
}

static void leader_detail(sfs_mgmt_raft_t *raft, char *buf, size_t size)
{
    raft_id     id      = 0;
    const char *address = NULL;

    raft_leader(&raft->raft, &id, &address);
    if (id) {
        snprintf(buf, size, "management replica %u is not the leader (replica %llu at %s is)",
                 raft->params.id, (unsigned long long)id, address ? address : "?");
    } else {
        snprintf(buf, size,
                 "management replica %u is not the leader (no leader known: an election "
                 "is under way, or no majority of the replicas is reachable)",
                 raft->params.id);
    }
}

static void proposal_applied(struct raft_apply *req, int status, void *result)
{
    struct sfs_mgmt_raft_proposal *p = req->data;
    char                           detail[256];

    (void)result;
    p->buf.base = NULL; /* libraft's now, applied or not */
    switch (status) {
    case 0:
        proposal_finish(p, 0, NULL);
        return;
    case RAFT_LEADERSHIPLOST:
        snprintf(detail, sizeof(detail),
                 "management replica %u lost the leadership before the command was committed "
                 "(it may still be: propose it again to the new leader)",
                 p->raft->params.id);
        proposal_finish(p, -ECONNABORTED, detail);
        return;
    case RAFT_NOTLEADER:
        leader_detail(p->raft, detail, sizeof(detail));
        proposal_finish(p, -ENOTCONN, detail);
        return;
    case RAFT_SHUTDOWN:
        proposal_finish(p, -ESHUTDOWN, "management replica is stopping");
        return;
    default:
        snprintf(detail, sizeof(detail), "management replica %u: %s", p->raft->params.id,
                 raft_strerror(status));
        proposal_finish(p, -EIO, detail);
    }
}

/* loop thread: hand the queued proposals to libraft */
static void proposals_run(sfs_mgmt_raft_t *raft)
{
    struct sfs_mgmt_raft_proposal *p;

    struct sfs_mgmt_raft_proposal *fifo = NULL;

    pthread_mutex_lock(&raft->lock);
    p           = raft->queue;
    raft->queue = NULL;
    pthread_mutex_unlock(&raft->lock);
    while (p) { /* the queue is newest first */
        struct sfs_mgmt_raft_proposal *next = p->next;

        p->next = fifo;
        fifo    = p;
        p       = next;
    }
    p = fifo;
    while (p) {
        struct sfs_mgmt_raft_proposal *next = p->next;
        char                           detail[256];
        int                            rc;

        if (raft->closing) {
            proposal_finish(p, -ESHUTDOWN, "management replica is stopping");
        } else if (raft_state(&raft->raft) != RAFT_LEADER) {
            leader_detail(raft, detail, sizeof(detail));
            proposal_finish(p, -ENOTCONN, detail);
        } else {
            p->req.data = p;
            rc          = raft_apply(&raft->raft, &p->req, &p->buf, 1, proposal_applied);
            if (rc) {
                snprintf(detail, sizeof(detail), "management replica %u: %s (%s)", raft->params.id,
                         raft_strerror(rc), raft_errmsg(&raft->raft));
                proposal_finish(p, rc == RAFT_NOTLEADER ? -ENOTCONN : -EIO, detail);
            }
        }
        p = next;
    }
}

/* loop thread: publish who leads and what is applied; report a change */
static void watch_tick(uv_timer_t *timer)
{
    sfs_mgmt_raft_t *raft = timer->data;
    raft_id          id   = 0;
    const char      *address;
    int              leading, changed;

    raft_leader(&raft->raft, &id, &address);
    leading = raft_state(&raft->raft) == RAFT_LEADER;
    pthread_mutex_lock(&raft->lock);
    changed         = leading != raft->leading;
    raft->leading   = leading;
    raft->leader_id = (uint32_t)id;
    raft->applied   = raft_last_applied(&raft->raft);
    pthread_mutex_unlock(&raft->lock);
    if (changed) {
        sfs_info("management replica %u %s (term %llu)", raft->params.id,
                 leading ? "leads" : "no longer leads",
                 (unsigned long long)raft->raft.current_term);
        if (raft->params.leader) {
            raft->params.leader(raft->params.arg, leading);
        }
    }
}

static void raft_closed(struct raft *r)
{
    sfs_mgmt_raft_t *raft = r->data;

    raft_uv_close(&raft->io);
    raft_uv_tcp_close(&raft->transport);
    uv_close((uv_handle_t *)&raft->watch, NULL);
    uv_close((uv_handle_t *)&raft->wake, NULL);
}

static void wake_run(uv_async_t *async)
{
    sfs_mgmt_raft_t *raft = async->data;
    int              stopping;

    pthread_mutex_lock(&raft->lock);
    stopping = raft->stopping;
    pthread_mutex_unlock(&raft->lock);
    if (stopping && !raft->closing) {
        raft->closing = 1;
        uv_timer_stop(&raft->watch);
        raft_close(&raft->raft, raft_closed);
    }
    proposals_run(raft);
}

/* loop thread: `kind` is now `text` here */
static int state_set(sfs_mgmt_raft_t *raft, uint32_t kind, const char *text, size_t length)
{
    char *copy = malloc(length ? length : 1);

    if (!copy) {
        return RAFT_NOMEM;
    }
    memcpy(copy, text, length);
    free(raft->texts[kind - 1]);
    raft->texts[kind - 1]   = copy;
    raft->lengths[kind - 1] = length;
    raft->params.apply(raft->params.arg, kind, copy, length);
    return 0;
}

static int fsm_apply(struct raft_fsm *fsm, const struct raft_buffer *buf, void **result)
{
    sfs_mgmt_raft_t *raft = fsm->data;
    uint32_t         kind;
    const char      *text;
    size_t           length;

    *result = NULL;
    if (sfs_mgmt_raft_cmd_decode_one(buf->base, buf->len, &kind, &text, &length) != 0) {
        /* only a leader that checked it proposes a command: the log is damaged */
        const uint8_t *b                = buf->base;
        char           head[3 * 16 + 1] = "";

        for (size_t i = 0; i < buf->len && i < 16; i++) {
            snprintf(head + 3 * i, 4, " %02x", b[i]);
        }
        sfs_error("management replica %u: a committed command cannot be read, not applied: %s "
                  "(%zu bytes:%s)",
                  raft->params.id, sfs_error_detail(), buf->len, head);
        return RAFT_MALFORMED;
    }
    return state_set(raft, kind, text, length);
}

static int fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[], unsigned *n_bufs)
{
    sfs_mgmt_raft_t    *raft = fsm->data;
    const char         *texts[SFS_MGMT_RAFT_KINDS];
    size_t              size;
    struct raft_buffer *out;

    for (uint32_t k = 0; k < SFS_MGMT_RAFT_KINDS; k++) {
        texts[k] = raft->texts[k];
    }
    size = sfs_mgmt_raft_snapshot_size(texts, raft->lengths);
    out  = raft_malloc(sizeof(*out));
    if (!out) {
        return RAFT_NOMEM;
    }
    out->len  = size;
    out->base = raft_malloc(size ? size : 1);
    if (!out->base) {
        raft_free(out);
        return RAFT_NOMEM;
    }
    if (sfs_mgmt_raft_snapshot_encode(texts, raft->lengths, out->base, size) < 0) {
        raft_free(out->base);
        raft_free(out);
        return RAFT_INVALID;
    }
    *bufs   = out; /* libraft frees both (an FSM of version 1) */
    *n_bufs = 1;
    return 0;
}

static int fsm_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
    sfs_mgmt_raft_t *raft = fsm->data;
    const char      *texts[SFS_MGMT_RAFT_KINDS];
    size_t           lengths[SFS_MGMT_RAFT_KINDS];
    int              rc = 0;

    if (sfs_mgmt_raft_snapshot_decode(buf->base, buf->len, texts, lengths) != 0) {
        sfs_error("management replica %u: a snapshot cannot be read: %s", raft->params.id,
                  sfs_error_detail());
        return RAFT_MALFORMED;
    }
    for (uint32_t k = 0; rc == 0 && k < SFS_MGMT_RAFT_KINDS; k++) {
        if (texts[k]) {
            rc = state_set(raft, k + 1, texts[k], lengths[k]);
        }
    }
    if (rc == 0) {
        raft_free(buf->base); /* ours on success */
    }
    return rc;
}

static void *loop_main(void *arg)
{
    sfs_mgmt_raft_t *raft = arg;
    sigset_t         pipe;

    /* libuv writes to its sockets with write(): a replica that went away
     * must be an EPIPE for this thread, not a SIGPIPE for the process */
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, NULL);
    uv_run(&raft->loop, UV_RUN_DEFAULT);
    return NULL;
}

static void raft_free_all(sfs_mgmt_raft_t *raft)
{
    for (uint32_t i = 0; i < SFS_MGMT_RAFT_MEMBERS_MAX; i++) {
        free(raft->addresses[i]);
    }
    for (uint32_t k = 0; k < SFS_MGMT_RAFT_KINDS; k++) {
        free(raft->texts[k]);
    }
    free(raft->dir);
    pthread_cond_destroy(&raft->cond);
    pthread_mutex_destroy(&raft->lock);
    free(raft);
}

static int params_check(const sfs_mgmt_raft_params_t *params)
{
    if (params->count < 1 || params->count > SFS_MGMT_RAFT_MEMBERS_MAX) {
        return sfs_error_set(-EINVAL, "management replicas: %u (1 to %u)", params->count,
                             SFS_MGMT_RAFT_MEMBERS_MAX);
    }
    if (params->id < 1 || params->id > params->count) {
        return sfs_error_set(-EINVAL, "management replica %u of %u: no such member", params->id,
                             params->count);
    }
    if (!params->dir || !params->dir[0] || !params->apply || !params->addresses) {
        return sfs_error_set(-EINVAL, "management replica %u: no directory or apply function",
                             params->id);
    }
    for (uint32_t i = 0; i < params->count; i++) {
        if (!params->addresses[i] || !strchr(params->addresses[i], ':')) {
            return sfs_error_set(-EINVAL, "management replica %u: address \"%s\" is not host:port",
                                 i + 1, params->addresses[i] ? params->addresses[i] : "");
        }
    }
    return 0;
}

/* libraft's part of the start; on failure the detail is set and what was
 * made is closed again by the caller's loop run */
static int raft_open(sfs_mgmt_raft_t *raft)
{
    const sfs_mgmt_raft_params_t *params = &raft->params;
    struct raft_configuration     conf;
    int                           rc;

    rc = raft_uv_tcp_init(&raft->transport, &raft->loop);
    if (rc) {
        return sfs_error_set(-EIO, "management replica %u: TCP transport: %s", params->id,
                             raft_strerror(rc));
    }
    rc = raft_uv_init(&raft->io, &raft->loop, raft->dir, &raft->transport);
    if (rc) {
        raft_uv_tcp_close(&raft->transport);
        return sfs_error_set(-EIO, "management replica %u: log in %s: %s", params->id, raft->dir,
                             raft->io.errmsg);
    }
    raft->fsm.version  = 1;
    raft->fsm.data     = raft;
    raft->fsm.apply    = fsm_apply;
    raft->fsm.snapshot = fsm_snapshot;
    raft->fsm.restore  = fsm_restore;
    rc = raft_init(&raft->raft, &raft->io, &raft->fsm, params->id, raft->addresses[params->id - 1]);
    if (rc) {
        raft_uv_close(&raft->io);
        raft_uv_tcp_close(&raft->transport);
        return sfs_error_set(-EIO, "management replica %u at %s: %s", params->id,
                             raft->addresses[params->id - 1], raft_strerror(rc));
    }
    raft->raft.data = raft;
    raft->inited    = 1;
    raft_set_election_timeout(&raft->raft,
                              params->election_timeout_ms ? params->election_timeout_ms : 1000);
    raft_set_heartbeat_timeout(&raft->raft,
                               params->heartbeat_timeout_ms ? params->heartbeat_timeout_ms : 100);
    raft_set_snapshot_threshold(&raft->raft,
                                params->snapshot_threshold ? params->snapshot_threshold : 1024);
    raft_set_snapshot_trailing(&raft->raft,
                               params->snapshot_trailing ? params->snapshot_trailing : 128);
    raft_set_pre_vote(&raft->raft, true); /* a replica back from a cut does not depose a leader */
    raft_configuration_init(&conf);
    for (uint32_t i = 0; rc == 0 && i < params->count; i++) {
        rc = raft_configuration_add(&conf, i + 1, raft->addresses[i], RAFT_VOTER);
    }
    if (rc == 0) {
        rc = raft_bootstrap(&raft->raft, &conf);
        if (rc == RAFT_CANTBOOTSTRAP) {
            rc = 0; /* a log from before: its configuration holds */
        }
    }
    raft_configuration_close(&conf);
    if (rc == 0) {
        rc = raft_start(&raft->raft);
    }
    if (rc) {
        return sfs_error_set(-EIO, "management replica %u at %s, log in %s: %s (%s)", params->id,
                             raft->addresses[params->id - 1], raft->dir, raft_strerror(rc),
                             raft_errmsg(&raft->raft));
    }
    return 0;
}

int sfs_mgmt_raft_start(const sfs_mgmt_raft_params_t *params, sfs_mgmt_raft_t **raft_p)
{
    sfs_mgmt_raft_t *raft;
    int              rc = params_check(params);

    if (rc) {
        return rc;
    }
    raft = calloc(1, sizeof(*raft));
    if (!raft) {
        return sfs_error_set(-ENOMEM, "management replica %u: out of memory", params->id);
    }
    raft->params = *params;
    raft->dir    = strdup(params->dir);
    for (uint32_t i = 0; i < params->count; i++) {
        raft->addresses[i] = strdup(params->addresses[i]);
        rc |= !raft->addresses[i];
    }
    raft->params.addresses = NULL; /* the copies above */
    raft->params.dir       = raft->dir;
    pthread_mutex_init(&raft->lock, NULL);
    pthread_cond_init(&raft->cond, NULL);
    if (rc || !raft->dir) {
        raft_free_all(raft);
        return sfs_error_set(-ENOMEM, "management replica %u: out of memory", params->id);
    }
    if (mkdir(raft->dir, 0700) != 0 && errno != EEXIST) {
        rc = -errno;
        raft_free_all(raft);
        return sfs_error_set(rc, "management replica %u: cannot make %s: %s", params->id,
                             params->dir, strerror(-rc));
    }
    rc = uv_loop_init(&raft->loop);
    if (rc) {
        raft_free_all(raft);
        return sfs_error_set(-ENOMEM, "management replica %u: event loop: %s", params->id,
                             uv_strerror(rc));
    }
    if (uv_async_init(&raft->loop, &raft->wake, wake_run) != 0 ||
        uv_timer_init(&raft->loop, &raft->watch) != 0) { /* (neither fails on Linux) */
        uv_loop_close(&raft->loop);
        raft_free_all(raft);
        return sfs_error_set(-ENOMEM, "management replica %u: event loop handles", params->id);
    }
    raft->wake.data  = raft;
    raft->watch.data = raft;
    rc               = raft_open(raft);
    if (rc) {
        char why[512];

        snprintf(why, sizeof(why), "%s", sfs_error_detail());
        if (raft->inited) { /* its close closes the I/O and the handles */
            raft_close(&raft->raft, raft_closed);
        } else {
            uv_close((uv_handle_t *)&raft->wake, NULL);
            uv_close((uv_handle_t *)&raft->watch, NULL);
        }
        uv_run(&raft->loop, UV_RUN_DEFAULT);
        uv_loop_close(&raft->loop);
        raft_free_all(raft);
        return sfs_error_set(rc, "%s", why);
    }
    uv_timer_start(&raft->watch, watch_tick, 0, SFS_MGMT_RAFT_WATCH_MS);
    rc = pthread_create(&raft->thread, NULL, loop_main, raft);
    if (rc) {
        raft->closing = 1;
        uv_timer_stop(&raft->watch);
        raft_close(&raft->raft, raft_closed);
        uv_run(&raft->loop, UV_RUN_DEFAULT);
        uv_loop_close(&raft->loop);
        raft_free_all(raft);
        return sfs_error_set(-rc, "management replica %u: cannot start its thread", params->id);
    }
    sfs_info("management replica %u of %u at %s, log in %s", params->id, params->count,
             raft->addresses[params->id - 1], raft->dir);
    *raft_p = raft;
    return 0;
}

void sfs_mgmt_raft_stop(sfs_mgmt_raft_t *raft)
{
    if (!raft) {
        return;
    }
    pthread_mutex_lock(&raft->lock);
    raft->stopping = 1;
    pthread_mutex_unlock(&raft->lock);
    uv_async_send(&raft->wake);
    pthread_join(raft->thread, NULL);
    if (uv_loop_close(&raft->loop) != 0) {
        sfs_warn("management replica %u: its event loop closed with handles open", raft->params.id);
    }
    raft_free_all(raft);
}

int sfs_mgmt_raft_propose(sfs_mgmt_raft_t *raft, uint32_t kind, const char *text, size_t length,
                          uint32_t timeout_ms)
{
    struct sfs_mgmt_raft_proposal *p;
    struct timespec                until;
    int                            rc;

    p = calloc(1, sizeof(*p));
    if (!p) {
        return sfs_error_set(-ENOMEM, "management replica %u: out of memory", raft->params.id);
    }
    p->buf.len  = sfs_mgmt_raft_cmd_size(length);
    p->buf.base = raft_malloc(p->buf.len);
    if (!p->buf.base) {
        free(p);
        return sfs_error_set(-ENOMEM, "management replica %u: out of memory", raft->params.id);
    }
    rc = sfs_mgmt_raft_cmd_encode(kind, text, length, p->buf.base, p->buf.len);
    if (rc < 0) {
        raft_free(p->buf.base);
        free(p);
        return rc;
    }
    p->raft = raft;
    p->refs = 2;
    pthread_mutex_lock(&raft->lock);
    if (raft->stopping) {
        pthread_mutex_unlock(&raft->lock);
        raft_free(p->buf.base);
        free(p);
        return sfs_error_set(-ESHUTDOWN, "management replica %u is stopping", raft->params.id);
    }
    p->next     = raft->queue; /* (order among concurrent proposers is theirs to choose) */
    raft->queue = p;
    pthread_mutex_unlock(&raft->lock);
    uv_async_send(&raft->wake);

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&raft->lock);
    rc = 0;
    while (!p->done && rc != ETIMEDOUT) {
        rc = pthread_cond_timedwait(&raft->cond, &raft->lock, &until);
    }
    if (p->done) {
        rc = p->status;
        if (rc) {
            sfs_error_set(rc, "%s", p->detail);
        }
    } else {
        rc = sfs_error_set(-ETIMEDOUT,
                           "management replica %u: %s not committed within %u ms (it may still be)",
                           raft->params.id, sfs_mgmt_raft_kind_name(kind), timeout_ms);
    }
    proposal_put(p);
    pthread_mutex_unlock(&raft->lock);
    return rc;
}

int sfs_mgmt_raft_leading(sfs_mgmt_raft_t *raft, uint32_t *leader_p)
{
    int leading;

    pthread_mutex_lock(&raft->lock);
    leading = raft->leading;
    if (leader_p) {
        *leader_p = raft->leader_id;
    }
    pthread_mutex_unlock(&raft->lock);
    return leading;
}

uint64_t sfs_mgmt_raft_applied(sfs_mgmt_raft_t *raft)
{
    uint64_t applied;

    pthread_mutex_lock(&raft->lock);
    applied = raft->applied;
    pthread_mutex_unlock(&raft->lock);
    return applied;
}
