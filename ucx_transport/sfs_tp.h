/*
 * Request/response RPC over UCX active messages.
 *
 * One worker per process, driven by one thread (the "progress thread"):
 * every call below except sfs_tp_worker_post() and the buffer pool must be
 * made on it. Other threads hand work back with sfs_tp_worker_post().
 *
 * Peers on one host reach each other by UCX worker address, so UCX picks
 * shared memory or CMA; between hosts they connect to the server's UCX
 * listener, so TCP gets a socket per endpoint (sfs_tp_listener.c says why).
 * A process learns a server's transport address (sfs_proto_address.h, both
 * in one) either from the cluster map or from the server's bootstrap port (a
 * plain TCP socket that hands out the address).
 *
 * Connections are mutually authenticated (sfs_auth.h) before any request is
 * served, and every later message carries a MAC. Every RPC has a deadline;
 * a peer that dies fails its RPCs at once with -ECONNRESET, one that hangs
 * fails them with -ETIMEDOUT, and the error detail names the peer.
 *
 * This layer knows nothing of files: it moves an opcode, an argument block
 * and a payload, and returns a status, reply arguments and a reply payload.
 */
#ifndef SFS_TP_H
#define SFS_TP_H

#include "sfs_auth.h"
#include "sfs_cred.h"
#include "sfs_tunable.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

typedef struct sfs_tp_worker  sfs_tp_worker_t;
typedef struct sfs_tp_conn    sfs_tp_conn_t;
typedef struct sfs_tp_rpc     sfs_tp_rpc_t;
typedef struct sfs_tp_request sfs_tp_request_t;
typedef struct sfs_tp_session sfs_tp_session_t;

/* A server's handler for authenticated requests; called on the progress
 * thread with the whole request received. The handler (or code it hands the
 * request to) must end it with exactly one sfs_tp_request_reply*(). */
typedef void (*sfs_tp_request_handler_t)(sfs_tp_request_t *req, void *arg);

/* Called on the progress thread when an RPC completes (also on error). */
typedef void (*sfs_tp_rpc_cb_t)(sfs_tp_rpc_t *rpc, void *arg);

/* Called when a session ends (peer gone or closed); servers use it to drop
 * per-client state. */
typedef void (*sfs_tp_session_end_cb_t)(sfs_tp_session_t *session, void *arg);

typedef void (*sfs_tp_post_cb_t)(void *arg);

/* What a peer proved in the handshake (serving side). */
typedef struct sfs_tp_proof {
    uint32_t    method; /* SFS_AUTH_METHOD_* */
    uint32_t    uid;    /* MUNGE: as munged vouched for them */
    uint32_t    gid;
    uint32_t    origin_ipv4; /* MUNGE: the encoding host's address (network order) */
    const char *peer_host;   /* what the peer says (for messages only) */
    uint32_t    peer_pid;
    const char *peer_program;
} sfs_tp_proof_t;

/* Serving side: turn a MUNGE proof into the session's credentials (root
 * squash, supplementary groups, admin rights), or refuse it with a negative
 * errno and sfs_error_set(). Called on the progress thread. Sessions that
 * proved the servers' secret get SFS_CRED_SERVER without asking. */
typedef int (*sfs_tp_identity_cb_t)(void *arg, const sfs_tp_proof_t *proof, sfs_cred_t *cred);

enum {
    SFS_TP_WORKER_PARAM_NODE_ID        = 1u << 0,
    SFS_TP_WORKER_PARAM_PEER_KIND      = 1u << 1,
    SFS_TP_WORKER_PARAM_HOST           = 1u << 2,
    SFS_TP_WORKER_PARAM_KEY            = 1u << 3,
    SFS_TP_WORKER_PARAM_HANDLER        = 1u << 4,
    SFS_TP_WORKER_PARAM_MAX_PAYLOAD    = 1u << 5,
    SFS_TP_WORKER_PARAM_RPC_TIMEOUT    = 1u << 6,
    SFS_TP_WORKER_PARAM_SPIN_US        = 1u << 7,
    SFS_TP_WORKER_PARAM_BOOTSTRAP_PORT = 1u << 8,
    SFS_TP_WORKER_PARAM_SESSION_END    = 1u << 9,
    SFS_TP_WORKER_PARAM_NAME           = 1u << 10,
    SFS_TP_WORKER_PARAM_MAX_RATE       = 1u << 11,
    SFS_TP_WORKER_PARAM_MUNGE          = 1u << 12,
    SFS_TP_WORKER_PARAM_IDENTITY       = 1u << 13,
    SFS_TP_WORKER_PARAM_UCX_TLS        = 1u << 14,
    SFS_TP_WORKER_PARAM_UCX_LOG_LEVEL  = 1u << 15,
};

typedef struct sfs_tp_worker_params {
    uint64_t                 field_mask;
    uint32_t                 node_id;    /* servers: their rank; clients: 0 */
    uint32_t                 peer_kind;  /* SFS_PEER_*, default SFS_PEER_CLIENT */
    const char              *host;       /* default: gethostname() */
    const char              *name;       /* program name shown to peers */
    const sfs_auth_key_t    *key;        /* cluster key: required, but for MUNGE clients */
    sfs_tp_request_handler_t on_request; /* servers only */
    void                    *handler_arg;
    sfs_tp_session_end_cb_t  on_session_end;
    uint64_t                 max_payload;    /* default 64 MiB */
    uint32_t                 rpc_timeout_ms; /* default 30000 */
    uint32_t                 spin_us;        /* busy-poll before sleeping, default 50;
                                              * STRIPEFS_SPIN_US wins */
    uint16_t bootstrap_port;                 /* serve the worker address on this TCP port */
    uint32_t max_request_rate;               /* per session per second; 0 = none */
    /* MUNGE: the requesting side proves its uid with MUNGE instead of the
     * secret (no key needed) and accepts only servers whose credential
     * carries service_uid; the serving side decodes through the same socket */
    const char *munge_socket;
    uint32_t    service_uid;
    int         munge_client;
    /* serving side: accept MUNGE sessions, with credentials from this */
    sfs_tp_identity_cb_t on_identity;
    /* UCX transports for this worker's context when the user set no UCX_TLS
     * (e.g. "^posix,sysv,cma" for a client that may not attach the servers'
     * shared memory) */
    const char *ucx_tls;
    /* UCX's log level when the user set no UCX_LOG_LEVEL ("fatal" in a
     * client, whose user should see our errors, not UCX's). UCX has one
     * level per process: this sets it for the application's own UCX too. */
    const char *ucx_log_level;
} sfs_tp_worker_params_t;

/* The transport's environment knobs (STRIPEFS_DIRECT_COPY, STRIPEFS_DIRECT_PULL,
 * STRIPEFS_SPIN_US) and the UCX variables it honours. A malformed value
 * makes sfs_tp_worker_create fail with -EINVAL naming the variable. */
extern const sfs_tunable_table_t sfs_tp_tunables;

int sfs_tp_worker_create(const sfs_tp_worker_params_t *params, sfs_tp_worker_t **worker_p);
/* Closes every connection and session (in-flight RPCs fail with
 * -ECANCELED), then frees the worker. */
void sfs_tp_worker_destroy(sfs_tp_worker_t *worker);

/* Make progress; when nothing happens for spin_us, sleep until something
 * arrives or `timeout_ms` passes (0 = just poll, -1 = no limit). Also fires
 * RPC deadlines and posted callbacks. Returns 0 or a negative errno. */
int sfs_tp_worker_progress(sfs_tp_worker_t *worker, int timeout_ms);

/* Run `cb(arg)` on the progress thread soon. Safe from any thread. */
int sfs_tp_worker_post(sfs_tp_worker_t *worker, sfs_tp_post_cb_t cb, void *arg);

/* Wake a sleeping progress thread (e.g. to notice a stop flag). Any thread. */
void sfs_tp_worker_wakeup(sfs_tp_worker_t *worker);

/* This worker's UCX address (owned by the worker). */
const void *sfs_tp_worker_address(const sfs_tp_worker_t *worker, size_t *length_p);

uint32_t sfs_tp_worker_node_id(const sfs_tp_worker_t *worker);
uint64_t sfs_tp_worker_max_payload(const sfs_tp_worker_t *worker);
/* The worker's uuid: random, one per worker, announced in its HELLOs. */
uint64_t sfs_tp_worker_uuid(const sfs_tp_worker_t *worker);
uint32_t sfs_tp_worker_rpc_timeout(const sfs_tp_worker_t *worker);

/* The TCP port the bootstrap listener is bound to (0 if none). */
uint16_t sfs_tp_worker_bootstrap_port(const sfs_tp_worker_t *worker);

/* ---------------------------------------------------------------------- */
/* Bootstrap: ask a server's bootstrap port for its worker address.        */

int sfs_tp_bootstrap_fetch(const char *host, uint16_t port, uint32_t timeout_ms, void **address_p,
                           size_t *length_p);

/* The same question asked by a thread of its own, so that a progress
 * thread that must find a restarted server again is not held for the
 * connect timeout when that host does not answer (sfs_tp_bootstrap_async.c).
 * _start returns at once; _poll gives -EINPROGRESS while the answer is
 * awaited, then once the fetch's result (0 and the address, which the
 * caller frees, or its error with the detail set) and ends the fetch.
 * _cancel ends one without waiting for it (its thread finishes alone). */
typedef struct sfs_tp_bootstrap_async sfs_tp_bootstrap_async_t;
int  sfs_tp_bootstrap_fetch_start(const char *host, uint16_t port, uint32_t timeout_ms,
                                  sfs_tp_bootstrap_async_t **fetch_p);
int  sfs_tp_bootstrap_fetch_poll(sfs_tp_bootstrap_async_t *fetch, void **address_p,
                                 size_t *length_p);
void sfs_tp_bootstrap_fetch_cancel(sfs_tp_bootstrap_async_t *fetch);

/* ---------------------------------------------------------------------- */
/* Connections (the requesting side).                                      */

/* Connect to the server with worker address `address` and authenticate.
 * `peer_name` names the server in errors ("meta server (rank 0 on host a)").
 * Blocks for at most `timeout_ms`. */
int sfs_tp_conn_create(sfs_tp_worker_t *worker, const void *address, size_t address_length,
                       const char *peer_name, uint32_t timeout_ms, sfs_tp_conn_t **conn_p);
/* Fail what is in flight with -ECANCELED and close. */
void sfs_tp_conn_destroy(sfs_tp_conn_t *conn);
/* 0 while usable; the error that broke it otherwise. */
int         sfs_tp_conn_status(const sfs_tp_conn_t *conn);
const char *sfs_tp_conn_name(const sfs_tp_conn_t *conn);
uint32_t    sfs_tp_conn_server_node(const sfs_tp_conn_t *conn);
/* The server process's uuid from its HELLO reply (a new one after the
 * server restarted); 0 from a server older than it. */
uint64_t sfs_tp_conn_server_uuid(const sfs_tp_conn_t *conn);
/* What the server can do (SFS_FEATURE_*), from its HELLO reply. */
uint64_t sfs_tp_conn_server_features(const sfs_tp_conn_t *conn);
/* Transports UCX uses for this connection, e.g. "posix/memory, cma/memory"
 * (asked of UCX at the first call; "unknown" once the connection failed). */
const char *sfs_tp_conn_transports(sfs_tp_conn_t *conn);

/* ---------------------------------------------------------------------- */
/* RPCs (the requesting side).                                              */

typedef struct sfs_tp_rpc_params {
    uint32_t            opcode;
    const void         *args; /* encoded arguments (copied before return) */
    size_t              args_length;
    const struct iovec *payload; /* must stay valid until the RPC completes */
    size_t              payload_count;
    struct iovec       *reply_iov; /* where a reply payload lands (zero-copy) */
    size_t              reply_iov_count;
    int                 alloc_reply; /* else: allocate a buffer for the reply payload */
    uint32_t            timeout_ms;  /* 0: the worker's default */
    int                 allow_pull;  /* a server on this host may copy the payload
                                      * out of our memory (it must handle pulls:
                                      * sfs_tp_request_pull) */
    sfs_tp_rpc_cb_t cb;              /* optional completion callback */
    void           *cb_arg;
} sfs_tp_rpc_params_t;

/* Send a request. On success *rpc_p is an RPC the caller waits on (or
 * polls) and then releases. Fails at once if the connection is broken. */
int sfs_tp_rpc_start(sfs_tp_conn_t *conn, const sfs_tp_rpc_params_t *params, sfs_tp_rpc_t **rpc_p);
int sfs_tp_rpc_is_done(const sfs_tp_rpc_t *rpc);
/* Progress until done; returns the RPC's status (0 or negative errno). */
int sfs_tp_rpc_wait(sfs_tp_rpc_t *rpc);
int sfs_tp_rpc_status(const sfs_tp_rpc_t *rpc);
/* The reply's argument block (valid until release). */
const void *sfs_tp_rpc_reply_args(const sfs_tp_rpc_t *rpc, size_t *length_p);
/* The reply payload: its length, and with alloc_reply its buffer. */
uint64_t sfs_tp_rpc_reply_payload_length(const sfs_tp_rpc_t *rpc);
void    *sfs_tp_rpc_reply_payload(const sfs_tp_rpc_t *rpc);
/* Whether a failed RPC was answered: the peer replied with an error status
 * (its own, even ETIMEDOUT), rather than the transport giving up. */
int sfs_tp_rpc_refused(const sfs_tp_rpc_t *rpc);
/* The server's or the transport's explanation of a failed RPC. */
const char *sfs_tp_rpc_error_detail(const sfs_tp_rpc_t *rpc);
/* Release a completed RPC; releasing one in flight cancels it. */
void sfs_tp_rpc_release(sfs_tp_rpc_t *rpc);

/* Start, wait, and on failure record the error detail (sfs_error_set) as
 * "<peer>: <OPCODE>: <detail>". The caller releases *rpc_p if it is set;
 * it is set whenever the request was sent. */
int sfs_tp_call(sfs_tp_conn_t *conn, const sfs_tp_rpc_params_t *params, sfs_tp_rpc_t **rpc_p);

/* ---------------------------------------------------------------------- */
/* Requests (the serving side).                                            */

uint32_t    sfs_tp_request_opcode(const sfs_tp_request_t *req);
const void *sfs_tp_request_args(const sfs_tp_request_t *req, size_t *length_p);
/* The request payload, fully received (valid until the reply completes). */
void             *sfs_tp_request_payload(const sfs_tp_request_t *req, size_t *length_p);
sfs_tp_session_t *sfs_tp_request_session(const sfs_tp_request_t *req);
sfs_tp_worker_t  *sfs_tp_request_worker(const sfs_tp_request_t *req);

/* Same-host direct copy (sfs_tp_direct.c): copy the reply payload into the
 * requester's buffers before replying, when it asked for that and may get
 * it (from any thread: e.g. the disk thread that has the data mapped). On 0
 * the reply then carries no payload (sfs_tp_request_reply ignores the one
 * it is given); otherwise (-EAGAIN: not asked, not allowed, under 64 KiB,
 * failed) reply with the payload as usual. */
int sfs_tp_request_deliver(sfs_tp_request_t *req, const struct iovec *payload, size_t count);
/* A pulled request (SFS_PROTO_FLAG_PULL; sent with allow_pull) names its
 * payload instead of carrying it: its length (0 for any other request), and
 * the copy of it out of the requester's memory into `buf` (from any thread).
 * On failure (not allowed, the requester's proof not seen yet, too late,
 * gone) the handler replies SFS_PULL_REFUSED, and the requester sends the
 * request again with its payload. */
uint64_t sfs_tp_request_pull_length(const sfs_tp_request_t *req);
int      sfs_tp_request_pull(sfs_tp_request_t *req, void *buf, uint64_t length);

/* Same-host file handoff (sfs_tp_fdpass.c): a server may give the requester
 * an open file. The requester calls sfs_tp_conn_files_ready() before it
 * sends such a request (-EOPNOTSUPP: the server is not on this host or has
 * no proof of our pid), and after a successful reply takes the descriptor
 * with sfs_tp_rpc_take_fd(). The server calls sfs_tp_request_send_fd()
 * before replying (from any thread); it sends only to the process whose pid
 * the session proved (-EPERM otherwise, -EAGAIN if it cannot reach it). The
 * descriptor is duplicated into the requester; the caller keeps its own. */
int sfs_tp_conn_files_ready(sfs_tp_conn_t *conn);
int sfs_tp_rpc_take_fd(sfs_tp_rpc_t *rpc, int *fd_p);
int sfs_tp_request_send_fd(sfs_tp_request_t *req, int fd);

/* Reply and end the request. `args` is copied; `payload` must stay valid
 * until `release(release_arg)` is called (on the progress thread) after the
 * reply has been sent or has failed. */
void sfs_tp_request_reply(sfs_tp_request_t *req, int status, const void *args, size_t args_length,
                          const struct iovec *payload, size_t payload_count,
                          sfs_tp_post_cb_t release, void *release_arg);
/* Reply with an error status and an explanation that reaches the caller. */
void sfs_tp_request_reply_error(sfs_tp_request_t *req, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The authenticated peer behind a session: its proven credentials. */
const sfs_cred_t *sfs_tp_session_cred(const sfs_tp_session_t *session);
/* How it authenticated (SFS_AUTH_METHOD_*). */
uint32_t    sfs_tp_session_method(const sfs_tp_session_t *session);
uint32_t    sfs_tp_session_peer_kind(const sfs_tp_session_t *session);
uint64_t    sfs_tp_session_peer_uuid(const sfs_tp_session_t *session);
uint32_t    sfs_tp_session_peer_pid(const sfs_tp_session_t *session);
const char *sfs_tp_session_peer_host(const sfs_tp_session_t *session);
const char *sfs_tp_session_peer_program(const sfs_tp_session_t *session);
uint64_t    sfs_tp_session_id(const sfs_tp_session_t *session);
uint64_t    sfs_tp_session_age_ms(const sfs_tp_session_t *session);
/* Whether the session ended because its endpoint failed (the peer's
 * process died, or the network between us did), rather than by the peer's
 * BYE or our own close: only then may the peer still be alive. */
int         sfs_tp_session_peer_lost(const sfs_tp_session_t *session);
const char *sfs_tp_session_transports(sfs_tp_session_t *session);

/* Iterate over authenticated sessions (for NET_INFO). */
typedef void (*sfs_tp_session_visit_t)(sfs_tp_session_t *session, void *arg);
void sfs_tp_worker_visit_sessions(sfs_tp_worker_t *worker, sfs_tp_session_visit_t visit, void *arg);

/* ---------------------------------------------------------------------- */
/* Payload buffers, pooled by size class. Thread-safe.                      */

void *sfs_tp_buf_get(sfs_tp_worker_t *worker, size_t size);
void  sfs_tp_buf_put(sfs_tp_worker_t *worker, void *buf);

#endif
