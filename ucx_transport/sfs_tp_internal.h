/*
 * Internal structures of the UCX transport. Only the transport's .c files include
 * this; everyone else uses sfs_tp.h.
 */
#ifndef SFS_TP_INTERNAL_H
#define SFS_TP_INTERNAL_H

#include "sfs_tp.h"
#include "sfs_tp_replay.h"
#include "sfs_hash.h"
#include "sfs_list.h"
#include "sfs_proto.h"
#include "sfs_proto_address.h"

#include <limits.h>
#include <net/if.h>
#include <pthread.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <ucp/api/ucp.h>

typedef struct sfs_tp_accepted sfs_tp_accepted_t;

/* An IPv4 address of this host, as getifaddrs gave it at the start. */
typedef struct sfs_tp_local_if {
    char    name[IF_NAMESIZE];
    uint8_t ipv4[4];
    int     up;       /* IFF_UP */
    int     loopback; /* IFF_LOOPBACK */
} sfs_tp_local_if_t;

#define SFS_TP_POOL_CLASSES         16 /* 4 KiB .. 128 MiB */
#define SFS_TP_POOL_MIN_SHIFT       12
#define SFS_TP_POOL_KEEP_BYTES      (512ull << 20) /* free bytes kept per worker */
#define SFS_TP_MAX_PENDING_SESSIONS 1024
#define SFS_TP_LOCAL_IPV4_MAX       32
#define SFS_TP_HANDSHAKE_TIMEOUT_MS 15000 /* HELLO to AUTH, and connection to HELLO */
#define SFS_TP_INLINE_IOV           8
#define SFS_TP_DETAIL_MAX           512
#define SFS_TP_DIRECT_MIN           (64u << 10) /* smaller replies go through UCX */
#define SFS_TP_DIRECT_MAX_IOV       SFS_PROTO_DIRECT_MAX_IOV
#define SFS_TP_PULL_REFUSALS_MAX    4 /* then a connection sends its data */
#define SFS_TP_PEER_NAME_MAX        (SFS_HOST_MAX + SFS_NAME_MAX + 64) /* for messages */

struct sfs_tp_worker {
    ucp_context_h context;
    ucp_worker_h  ucp_worker;
    void         *address; /* what we publish (sfs_proto_address.h) */
    size_t        address_length;
    void         *ucx_address; /* UCX's worker address, inside `address` too */
    size_t        ucx_address_length;
    int           ucx_fd;
    int           event_fd;
    int           epoll_fd;

    uint32_t                 node_id;
    uint32_t                 peer_kind;
    char                     host[SFS_HOST_MAX];
    char                     name[SFS_NAME_MAX + 1];
    sfs_auth_key_t           key;
    int                      has_key;
    int                      munge_client; /* connections prove our uid with MUNGE */
    char                     munge_socket[PATH_MAX];
    uint32_t                 service_uid;
    sfs_tp_identity_cb_t     on_identity; /* NULL: MUNGE sessions are refused */
    sfs_tp_request_handler_t on_request;
    void                    *handler_arg;
    sfs_tp_session_end_cb_t  on_session_end;
    uint64_t                 max_payload;
    size_t                   max_am_header; /* UCX's limit for the AM header */
    uint32_t                 max_request_rate;
    uint32_t                 rpc_timeout_ms;
    uint32_t                 spin_us;
    uint64_t                 uuid;

    uint64_t   next_request_id;
    sfs_hash_t rpcs; /* by request id */
    sfs_list_t conns;
    sfs_list_t held_rpcs; /* failed RPCs whose buffers UCX still holds */
    sfs_hash_t sessions;  /* by session id */
    sfs_list_t session_list;
    uint32_t   pending_sessions;
    uint64_t   next_timer_ms;

    pthread_mutex_t post_lock;
    sfs_list_t      posted;

    int      bootstrap_fd;
    uint16_t bootstrap_port;
    int      direct_fd;     /* servers: same-host direct-copy proofs arrive here */
    int      files_fd;      /* requesters: same-host files arrive here (sfs_tp_fdpass.c) */
    int      pulls;         /* write pulls allowed here (STRIPEFS_DIRECT_PULL is not 0) */
    int      direct_copies; /* same-host direct copies wanted (STRIPEFS_DIRECT_COPY is not 0) */

    /* UCX connections between hosts (sfs_tp_listener.c) */
    int               use_listener; /* STRIPEFS_UCX_LISTENER */
    ucp_listener_h    listener;     /* servers: connections from other hosts arrive here */
    uint16_t          listener_port;
    uint8_t           listener_ipv4[4]; /* published as the listener's address */
    sfs_list_t        accepted;         /* sfs_tp_accepted_t not claimed by a HELLO yet */
    uint32_t          accepted_count;
    sfs_tp_local_if_t local_ifs[SFS_TP_LOCAL_IPV4_MAX]; /* this host's, at start */
    unsigned          local_if_count;

    pthread_mutex_t pool_lock;
    void           *pool[SFS_TP_POOL_CLASSES]; /* free lists */
    uint64_t        pool_free_bytes;
    uint64_t        buffers_out;     /* for the leak check at destroy */
    uint64_t        closes_out;      /* endpoint closes in flight (in `closing`) */
    sfs_list_t      closing;         /* sfs_tp_closing_t: closes UCX has not finished */
    sfs_list_t      closes_given_up; /* ... and those destroy freed unfinished */
    /* UCX sends and receives not yet complete: while any is, the worker
     * must not sleep in epoll, since shared-memory transports do not wake
     * a sleeping sender when the peer frees FIFO space (rendezvous
     * transfers stalled for a timer tick per fragment) */
    uint64_t ucx_inflight;

    uint64_t dropped_messages; /* malformed or unauthenticated */
    uint64_t last_drop_log_ms;
};

struct sfs_tp_conn {
    sfs_list_t       list;
    sfs_tp_worker_t *worker;
    ucp_ep_h         ep;
    int              status;
    int              authenticated;
    uint32_t         server_node;
    uint64_t         server_uuid;     /* its HELLO reply's; 0: an older server */
    uint64_t         server_features; /* its HELLO reply's (SFS_FEATURE_*) */
    uint64_t         session_id;
    sfs_auth_key_t   session_key;
    sfs_list_t       rpcs; /* in flight */
    char             name[SFS_HOST_MAX];
    char             transports[256];
    int              direct;        /* the server may copy replies into our memory */
    uint32_t         pull_refusals; /* pulls of request data the server refused */
    int              pull_off;      /* ... so many that we stopped asking */
};

struct sfs_tp_rpc {
    sfs_hash_link_t link;      /* in worker->rpcs while awaiting the reply */
    sfs_list_t      conn_list; /* in conn->rpcs while in flight, then in
                                * worker->held_rpcs while failed but held */
    sfs_tp_conn_t   *conn;     /* valid while !done */
    sfs_tp_worker_t *worker;
    uint32_t         opcode;
    uint64_t         request_id;
    uint64_t         deadline_ms;
    int              status;
    int              done;         /* reply (or failure) is final */
    int              send_pending; /* UCX sends (of this request) not complete */
    int              recv_pending; /* a rendezvous receive is running */
    int              held;         /* failed, UCX still holds buffers */
    int              abandoned;    /* ... given back to the owner anyway */
    uint64_t         failed_ms;    /* when it failed (for `held`) */
    int              released;
    int              hashed;
    int              direct_sent;     /* the request named our reply buffers */
    int              pulled;          /* the server copies the payload from us */
    int              reply_delivered; /* ... and the server copied into them */
    int              refused;         /* the peer answered with an error status */

    uint8_t            *head;             /* packed header followed by a copy of the arguments */
    uint8_t            *args;             /* = head + SFS_PROTO_HDR_SIZE */
    size_t              call_args_length; /* the caller's arguments */
    size_t              args_length;      /* ... and a direct-copy descriptor, if any */
    size_t              head_length;      /* what goes in the AM header (sfs_tp_args_in_header) */
    ucp_dt_iov_t        send_iov_inline[SFS_TP_INLINE_IOV];
    ucp_dt_iov_t       *send_iov;       /* [0] for the arguments, then the payload */
    size_t              send_iov_count; /* 1 + the payload's non-empty pieces */
    const struct iovec *payload;        /* the caller's (valid until completion) */
    size_t              payload_count;
    uint64_t            payload_length;

    struct iovec *reply_iov;
    size_t        reply_iov_count;
    int           alloc_reply;
    uint8_t       reply_hdr[SFS_PROTO_HDR_SIZE];
    void         *reply_args;
    size_t        reply_args_length;
    void         *reply_payload; /* with alloc_reply */
    uint64_t      reply_payload_length;
    ucp_dt_iov_t *recv_iov;

    sfs_tp_rpc_cb_t cb;
    void           *cb_arg;
    char            error_detail[SFS_TP_DETAIL_MAX];
};

struct sfs_tp_session {
    sfs_hash_link_t    link;
    sfs_list_t         list;
    sfs_tp_worker_t   *worker;
    ucp_ep_h           ep;
    sfs_tp_accepted_t *accepted; /* `ep` came through our listener (freed with us) */
    uint64_t           id;
    int                authenticated;
    int                closed;
    int                peer_failed;
    int                refcount;
    sfs_auth_key_t     session_key;
    uint8_t            client_nonce[SFS_NONCE_SIZE];
    uint8_t            server_nonce[SFS_NONCE_SIZE];
    uint32_t           method; /* SFS_AUTH_METHOD_* */
    uint8_t            client_public[SFS_KX_PUBLIC_SIZE];
    uint8_t            server_public[SFS_KX_PUBLIC_SIZE];
    sfs_cred_t         cred; /* set when authenticated */
    uint32_t           peer_kind;
    uint64_t           peer_uuid;
    uint32_t           peer_pid;
    char               peer_host[SFS_HOST_MAX];
    char               peer_program[SFS_NAME_MAX + 1];
    uint64_t           created_ms;
    uint64_t           rate_window_ms; /* start of the current one-second window */
    uint32_t           rate_count;     /* requests in it */
    uint32_t           direct_pid;     /* verified: replies may be copied into it (atomic) */
    char               transports[256];
    char               transports_shown[288]; /* ... with " +listener +files" (NET_INFO) */
    int                files_handed;          /* a file was handed over (atomic) */
    sfs_tp_replay_t    replay;                /* request ids served (after their MAC check) */
    uint64_t           replays;               /* requests refused as replayed or too old */
    uint64_t           forgeries;             /* requests naming it that failed their MAC */
};

struct sfs_tp_request {
    sfs_tp_worker_t  *worker;
    sfs_tp_session_t *session;
    sfs_proto_hdr_t   hdr;
    uint8_t           packed_hdr[SFS_PROTO_HDR_SIZE];
    uint8_t          *data; /* args followed by payload (pooled) */
    size_t            data_length;
    size_t            args_length; /* what the handler sees (without a direct descriptor) */
    int               replied;
    struct iovec     *direct_iov;   /* the requester's reply buffers (or its payload) */
    int               pull;         /* ... its payload: SFS_PROTO_FLAG_PULL */
    uint64_t          direct_bytes; /* what direct_iov covers */
    size_t            direct_count;
    uint64_t          direct_until_ms;  /* no direct copy after this */
    uint64_t          delivered;        /* payload bytes copied directly */
    int               delivered_marked; /* ... and the reply says so */

    uint8_t         *reply_head; /* packed header followed by the reply arguments */
    ucp_dt_iov_t     reply_iov_inline[SFS_TP_INLINE_IOV];
    ucp_dt_iov_t    *reply_iov;
    sfs_tp_post_cb_t release;
    void            *release_arg;
};

static inline uint64_t sfs_tp_iov_bytes(const struct iovec *iov, size_t count)
{
    uint64_t bytes = 0;

    for (size_t i = 0; i < count; i++) {
        bytes += iov[i].iov_len;
    }
    return bytes;
}

/* sfs_tp_worker.c */
/* Release the UCX worker's address and destroy it. */
void sfs_tp_ucp_worker_close(sfs_tp_worker_t *worker);

/* sfs_tp_context.c */
/* The worker's UCX context (worker->context), configured for stripefs;
 * `ucx_tls` (may be NULL) are the transports to use when the user set no
 * UCX_TLS, `ucx_log_level` (may be NULL) UCX's log level when the user set
 * no UCX_LOG_LEVEL. */
int sfs_tp_context_create(sfs_tp_worker_t *worker, const char *ucx_tls, const char *ucx_log_level);

/* sfs_tp_progress.c */
uint64_t sfs_tp_now_ms(void);
/* Watch `fd` in the progress loop's epoll set. */
int sfs_tp_epoll_add(sfs_tp_worker_t *worker, int fd);
/* The fds the progress loop sleeps on: UCX's, our wakeup eventfd, epoll. */
int  sfs_tp_wakeup_open(sfs_tp_worker_t *worker);
void sfs_tp_wakeup_close(sfs_tp_worker_t *worker);
/* Run the callbacks posted so far; returns how many ran. */
int sfs_tp_run_posted(sfs_tp_worker_t *worker);

/* sfs_tp_pool.c */
/* Free the pooled buffers (at destroy; warns of any still out). */
void sfs_tp_pool_cleanup(sfs_tp_worker_t *worker);

/* sfs_tp_ep.c */
/* Close `ep` without blocking: gracefully (what was queued is sent first)
 * or, with `force`, at once (for a peer that failed or does not answer).
 * `peer` names the other side in the warnings. An unfinished close is kept
 * in worker->closing until UCX completes it. */
int sfs_tp_ep_close(sfs_tp_worker_t *worker, ucp_ep_h ep, int force, const char *peer);
/* At destroy, after the drain: give every unfinished close request back to
 * UCX (ucp_request_free), so that ucp_worker_destroy may complete it; its
 * callback then frees nothing of UCX's. Returns how many there were. */
unsigned sfs_tp_ep_closes_give_up(sfs_tp_worker_t *worker, uint64_t waited_ms);
/* After ucp_worker_destroy: free what the given-up closes left (UCX calls
 * back no more). */
void sfs_tp_ep_closes_free(sfs_tp_worker_t *worker);
void sfs_tp_describe_transports(ucp_ep_h ep, char *buf, size_t buflen);

/* sfs_tp_am.c */
int  sfs_tp_ucs_errno(ucs_status_t status);
void sfs_tp_note_dropped(sfs_tp_worker_t *worker, const char *why);
/* Where a message's argument block travels. In the AM header, after the
 * packed header, when UCX allows a header that large: the AM data is then
 * the payload alone, and a payload in one piece goes as a contiguous buffer,
 * which lets UCX use zero-copy rendezvous (CMA between processes of one
 * host, RDMA) instead of copying it through bounce buffers. Otherwise
 * (arguments near SFS_PROTO_ARGS_MAX) they lead the AM data. Receivers tell
 * the two apart by the header length. */
int sfs_tp_args_in_header(const sfs_tp_worker_t *worker, size_t args_length);
/* A received message's header length and data length agree with its header
 * (either layout); sets *args_p to where its argument block is. */
int sfs_tp_message_layout(const sfs_proto_hdr_t *hdr, const void *header, size_t header_length,
                          const void *data, size_t length, const uint8_t **args_p);
/* Hand UCX one active message: `head` is the AM header, `iov` the data, as
 * one contiguous buffer when iov_count is 1 (UCX may then move it by
 * zero-copy rendezvous). UCX reads `iov` until `cb` runs. `flags`: UCX's
 * UCP_AM_SEND_FLAG_*. */
ucs_status_ptr_t sfs_tp_am_send(ucp_ep_h ep, unsigned am_id, uint32_t flags, const void *head,
                                size_t head_length, const ucp_dt_iov_t *iov, size_t iov_count,
                                ucp_send_nbx_callback_t cb, void *user_data);
/* Receive a rendezvous message's data into `iov` (contiguous when one). */
ucs_status_ptr_t sfs_tp_am_recv(sfs_tp_worker_t *worker, void *data, const ucp_dt_iov_t *iov,
                                size_t iov_count, ucp_am_recv_data_nbx_callback_t cb,
                                void *user_data);
/* Pack a header, with a MAC when `key` is given. */
void sfs_tp_hdr_seal(const sfs_proto_hdr_t *hdr, const sfs_auth_key_t *key, const void *args,
                     size_t args_length, uint8_t packed[SFS_PROTO_HDR_SIZE]);

/* sfs_tp_rpc.c */
ucs_status_t sfs_tp_am_reply_cb(void *arg, const void *header, size_t header_length, void *data,
                                size_t length, const ucp_am_recv_param_t *param);
void         sfs_tp_rpc_fail(sfs_tp_rpc_t *rpc, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Fails the RPCs past their deadline and gives back failed ones whose
 * buffers UCX keeps too long; returns how many changed state. */
int sfs_tp_rpcs_check_deadlines(sfs_tp_worker_t *worker, uint64_t now_ms);
/* After ucp_worker_destroy: frees released RPCs UCX never let go of. */
void sfs_tp_rpcs_free_held(sfs_tp_worker_t *worker);

/* sfs_tp_conn.c */
void sfs_tp_conn_fail(sfs_tp_conn_t *conn, int status, const char *why);

/* sfs_tp_session.c */
void              sfs_tp_session_handle_hello(sfs_tp_worker_t *worker, const sfs_proto_hdr_t *hdr,
                                              const void *args, size_t args_length, ucp_ep_h reply_ep);
void              sfs_tp_session_handle_auth(sfs_tp_worker_t *worker, const sfs_proto_hdr_t *hdr,
                                             const uint8_t *packed_hdr, const void *args, size_t args_length);
sfs_tp_session_t *sfs_tp_session_find(sfs_tp_worker_t *worker, uint64_t session_id);
void              sfs_tp_session_get(sfs_tp_session_t *session);
void              sfs_tp_session_put(sfs_tp_session_t *session);
void              sfs_tp_session_close(sfs_tp_session_t *session, const char *why);
void              sfs_tp_sessions_expire(sfs_tp_worker_t *worker, uint64_t now_ms);
/* The session's endpoint failed (UCX's error callback). */
void sfs_tp_session_peer_failed(sfs_tp_session_t *session, ucp_ep_h ep, ucs_status_t status);

/* sfs_tp_listener.c: servers' UCX listener and the endpoints it accepted.
 * Open also builds the address we publish (with or without a listener). */
int  sfs_tp_listener_open(sfs_tp_worker_t *worker);
void sfs_tp_listener_close(sfs_tp_worker_t *worker);
/* The endpoint `ep` (a HELLO's reply endpoint) if our listener accepted it
 * and no session has it yet: it is now `session`'s; else NULL. */
sfs_tp_accepted_t *sfs_tp_accepted_claim(sfs_tp_worker_t *worker, ucp_ep_h ep,
                                         sfs_tp_session_t *session);
/* Whether a peer's listener address is one of this host's (then we connect
 * by worker address: shared memory, which UCX 1.13 does not offer through
 * a listener). */
int sfs_tp_listener_is_local(const sfs_tp_worker_t *worker, const uint8_t ipv4[4]);
/* Closes accepted endpoints that sent no HELLO within the handshake time. */
void sfs_tp_accepted_expire(sfs_tp_worker_t *worker, uint64_t now_ms);
/* Send a message on a session's endpoint (replies). */
/* `head` (`head_length` bytes: the packed header, maybe the arguments) is
 * the AM header; `iov` the data, sent as one contiguous buffer when
 * iov_count is 1. */
int sfs_tp_session_send(sfs_tp_session_t *session, const uint8_t *head, size_t head_length,
                        const ucp_dt_iov_t *iov, size_t iov_count, ucp_send_nbx_callback_t cb,
                        void *cb_arg, void **ucx_req_p);

/* sfs_tp_request.c */
ucs_status_t sfs_tp_am_request_cb(void *arg, const void *header, size_t header_length, void *data,
                                  size_t length, const ucp_am_recv_param_t *param);

/* sfs_tp_fdpass.c */
void sfs_tp_files_close(sfs_tp_worker_t *worker);

/* sfs_tp_direct.c */
/* The abstract unix socket "stripefs-<kind>-<id>" (same-host mechanisms:
 * "direct" proofs to a server, "files" handed to a requester). */
socklen_t sfs_tp_unix_name(const char *kind, uint64_t id, struct sockaddr_un *addr);
int       sfs_tp_direct_listen(sfs_tp_worker_t *worker);
void      sfs_tp_direct_close(sfs_tp_worker_t *worker);
void      sfs_tp_direct_recv(sfs_tp_worker_t *worker);
uint64_t  sfs_tp_direct_id(const sfs_tp_worker_t *worker); /* 0: none */
/* After AUTH: prove our pid to a server on this host (sets conn->direct). */
void sfs_tp_direct_offer(sfs_tp_conn_t *conn, uint64_t server_id);
/* May a request with `args_length` bytes of arguments name `iov` for a
 * direct copy (either way): the server is on this host, and it is large
 * enough and fits a descriptor. */
int    sfs_tp_direct_fits(const sfs_tp_conn_t *conn, size_t args_length, const struct iovec *iov,
                          size_t count);
size_t sfs_tp_direct_descriptor_size(size_t count);
void   sfs_tp_direct_descriptor_pack(uint8_t *out, const struct iovec *iov, size_t count,
                                     uint64_t deadline_ms);
/* Strip the descriptor from a request's arguments into req->direct_*. */
int sfs_tp_direct_descriptor_take(sfs_tp_request_t *req);

/* sfs_tp_bootstrap.c */
int  sfs_tp_bootstrap_listen(sfs_tp_worker_t *worker, uint16_t port);
void sfs_tp_bootstrap_accept(sfs_tp_worker_t *worker);
void sfs_tp_bootstrap_close(sfs_tp_worker_t *worker);

#endif
