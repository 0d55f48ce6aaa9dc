/*
 * Direct copies between processes of one host.
 *
 * UCX 1.13 cannot use CMA (process_vm_readv/writev) on endpoints with
 * peer-failure handling, which stripefs needs, so a large reply between two
 * processes of one host would travel through shared-memory bounce buffers:
 * two copies. Here the server instead copies a read's payload straight from
 * its source (the chunk file's page cache, mapped) into the requester's
 * buffer with process_vm_writev: one copy, and the reply carries no data.
 *
 * Writing into another process is only safe into the process that asked,
 * and only into memory it named. So:
 *  - A server binds an abstract unix datagram socket with SO_PASSCRED (a
 *    random name, sent in the AUTH reply). A client on the same host sends
 *    it one datagram sealed with its session key; the kernel attaches the
 *    sender's real pid, which must be the pid the client announced in HELLO.
 *    Only then may the session's replies be delivered directly, into that
 *    pid (a forged HELLO pid, a replayed datagram from another process, or
 *    a client in another namespace get no direct copies).
 *  - The requester names its buffers (addresses and lengths) in the
 *    request's MAC-covered arguments, with its deadline. The server copies
 *    only while the requester still waits: not in the last part of its
 *    timeout (a requester that gave up may reuse the buffers).
 *  - Whatever fails (no permission, a process gone, a bad address) falls
 *    back to an ordinary reply through UCX.
 *  - Writes the other way round: a WRITE names its payload (a pull,
 *    SFS_PROTO_FLAG_PULL) and the storage server copies it out of the
 *    requester with process_vm_readv, on its disk thread, under the same
 *    proof and deadline; a refused pull is answered SFS_PULL_REFUSED and the
 *    requester sends the data through UCX instead. A pull only reads the
 *    memory of the process that asked, and only what it named.
 * STRIPEFS_DIRECT_COPY=0 turns it all off in a process (server or client);
 * STRIPEFS_DIRECT_PULL=0 only the pulls (a server refuses them, a client
 * does not ask).
 */
#define SFS_LOG_FAC "ucx"
#include "sfs_tp_internal.h"

#include "sfs_errno.h"
#include "sfs_log.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#define SFS_TP_DIRECT_MARGIN_MS 5000 /* copy no later than this before the deadline */
#define SFS_TP_DIRECT_CLOCK_MS  1000 /* the two monotonic clocks must agree this well */
#define SFS_TP_DIRECT_MSG       SFS_DIRECT_PROOF_MSG_SIZE

socklen_t sfs_tp_unix_name(const char *kind, uint64_t id, struct sockaddr_un *addr)
{
    int n;

    memset(addr, 0, sizeof(*addr));
    addr->sun_family = AF_UNIX;
    /* abstract namespace: sun_path[0] stays 0, nothing on disk to clean up */
    n = snprintf(addr->sun_path + 1, sizeof(addr->sun_path) - 1, "stripefs-%s-%016" PRIx64, kind,
                 id);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

int sfs_tp_direct_listen(sfs_tp_worker_t *worker)
{
    struct sockaddr_un addr;
    socklen_t          addr_length;
    int                one = 1;
    int                fd;

    if (!worker->direct_copies) {
        return 0;
    }
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        sfs_warn("no same-host direct copies: socket: %m");
        return 0;
    }
    addr_length = sfs_tp_unix_name("direct", worker->uuid, &addr);
    if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) != 0 ||
        bind(fd, (struct sockaddr *)&addr, addr_length) != 0) {
        sfs_warn("no same-host direct copies: cannot bind their socket: %m");
        close(fd);
        return 0;
    }
    worker->direct_fd = fd;
    return 0;
}

void sfs_tp_direct_close(sfs_tp_worker_t *worker)
{
    if (worker->direct_fd >= 0) {
        close(worker->direct_fd);
        worker->direct_fd = -1;
    }
}

uint64_t sfs_tp_direct_id(const sfs_tp_worker_t *worker)
{
    return worker->direct_fd >= 0 ? worker->uuid : 0;
}

/* One datagram: is it a valid proof for one of our sessions, from the
 * process that session belongs to? */
static void sfs_tp_direct_check(sfs_tp_worker_t *worker, const uint8_t *msg, ssize_t length,
                                const struct ucred *cred)
{
    sfs_proto_hdr_t    hdr;
    sfs_tp_session_t  *session;
    sfs_direct_proof_t proof;
    uint64_t           client_now, now = sfs_tp_now_ms();

    if (length < 0 || sfs_proto_direct_proof_msg_unpack(msg, (size_t)length, &hdr, &proof) != 0 ||
        !cred) {
        sfs_tp_note_dropped(worker, "malformed direct-copy proof");
        return;
    }
    session = sfs_tp_session_find(worker, hdr.session_id);
    if (!session || !session->authenticated || session->closed ||
        sfs_auth_mac_check(&session->session_key, msg, msg + SFS_PROTO_HDR_SIZE, 8) != 0) {
        sfs_tp_note_dropped(worker, "direct-copy proof for no session of ours");
        return;
    }
    client_now = proof.now_ms;
    if ((uint32_t)cred->pid != session->peer_pid) {
        sfs_warn("direct copies refused to %s pid %u (%s): the proof came from pid %d",
                 session->peer_host, session->peer_pid, session->peer_program, (int)cred->pid);
        return;
    }
    if (client_now + SFS_TP_DIRECT_CLOCK_MS < now || now + SFS_TP_DIRECT_CLOCK_MS < client_now) {
        sfs_info("no direct copies to %s pid %u: its clock differs from ours (time namespace?)",
                 session->peer_host, session->peer_pid);
        return;
    }
    __atomic_store_n(&session->direct_pid, session->peer_pid, __ATOMIC_RELEASE);
    if (strlen(session->transports) + 8 < sizeof(session->transports)) {
        strcat(session->transports, " +direct");
    }
    sfs_debug("session %016" PRIx64 ": direct copies to pid %u", session->id, session->peer_pid);
}

void sfs_tp_direct_recv(sfs_tp_worker_t *worker)
{
    if (worker->direct_fd < 0) {
        return;
    }
    for (;;) {
        uint8_t msg[SFS_TP_DIRECT_MSG + 1];
        union {
            struct cmsghdr align;
            char           buf[CMSG_SPACE(sizeof(struct ucred))];
        } control;
        struct iovec    iov = {.iov_base = msg, .iov_len = sizeof(msg)};
        struct msghdr   mh;
        struct cmsghdr *cmsg;
        struct ucred   *cred = NULL;
        ssize_t         n;

        memset(&mh, 0, sizeof(mh));
        mh.msg_iov        = &iov;
        mh.msg_iovlen     = 1;
        mh.msg_control    = control.buf;
        mh.msg_controllen = sizeof(control.buf);
        n                 = recvmsg(worker->direct_fd, &mh, MSG_DONTWAIT);
        if (n < 0) {
            return; /* EAGAIN: drained */
        }
        for (cmsg = CMSG_FIRSTHDR(&mh); cmsg; cmsg = CMSG_NXTHDR(&mh, cmsg)) {
            if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_CREDENTIALS &&
                cmsg->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
                cred = (struct ucred *)CMSG_DATA(cmsg);
            }
        }
        sfs_tp_direct_check(worker, msg, (mh.msg_flags & MSG_TRUNC) ? -1 : n, cred);
    }
}

void sfs_tp_direct_offer(sfs_tp_conn_t *conn, uint64_t server_id)
{
    struct sockaddr_un addr;
    socklen_t          addr_length;
    sfs_proto_hdr_t    hdr;
    uint8_t            msg[SFS_TP_DIRECT_MSG];
    sfs_wbuf_t         wb;
    int                fd;

    if (!server_id || !conn->worker->direct_copies) {
        return;
    }
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return;
    }
    memset(&hdr, 0, sizeof(hdr));
    hdr.magic       = SFS_PROTO_MAGIC;
    hdr.version     = SFS_PROTO_VERSION;
    hdr.opcode      = SFS_OP_DIRECT;
    hdr.args_length = 8;
    hdr.request_id  = conn->worker->next_request_id++;
    hdr.session_id  = conn->session_id;
    hdr.sender      = conn->worker->node_id;
    sfs_wbuf_init(&wb, msg + SFS_PROTO_HDR_SIZE, 8);
    sfs_proto_direct_proof_pack(&wb, &(sfs_direct_proof_t){.now_ms = sfs_tp_now_ms()});
    sfs_tp_hdr_seal(&hdr, &conn->session_key, msg + SFS_PROTO_HDR_SIZE, 8, msg);
    addr_length = sfs_tp_unix_name("direct", server_id, &addr);
    /* fails at once where the server is not on this host (or not in this
     * network namespace): then this connection never asks for it */
    if (sendto(fd, msg, sizeof(msg), 0, (struct sockaddr *)&addr, addr_length) ==
        (ssize_t)sizeof(msg)) {
        conn->direct = 1;
        sfs_debug("%s: offered direct copies", conn->name);
    }
    close(fd);
}

/* ---------------------------------------------------------------------- */
/* The descriptor (sfs_proto.h) at the end of the request's arguments.      */

size_t sfs_tp_direct_descriptor_size(size_t count)
{
    return sfs_proto_direct_desc_size((uint32_t)count);
}

int sfs_tp_direct_fits(const sfs_tp_conn_t *conn, size_t args_length, const struct iovec *iov,
                       size_t count)
{
    return conn->direct && iov && count > 0 && count <= SFS_TP_DIRECT_MAX_IOV &&
           sfs_tp_iov_bytes(iov, count) >= SFS_TP_DIRECT_MIN &&
           args_length + sfs_tp_direct_descriptor_size(count) <= SFS_PROTO_ARGS_MAX;
}

void sfs_tp_direct_descriptor_pack(uint8_t *out, const struct iovec *iov, size_t count,
                                   uint64_t deadline_ms)
{
    sfs_direct_desc_t desc;
    sfs_wbuf_t        wb;

    desc.count       = (uint32_t)count;
    desc.deadline_ms = deadline_ms;
    for (size_t i = 0; i < count; i++) {
        desc.address[i] = (uint64_t)(uintptr_t)iov[i].iov_base;
        desc.length[i]  = iov[i].iov_len;
    }
    sfs_wbuf_init(&wb, out, sfs_tp_direct_descriptor_size(count));
    sfs_proto_direct_desc_pack(&wb, &desc);
}

int sfs_tp_direct_descriptor_take(sfs_tp_request_t *req)
{
    sfs_direct_desc_t desc;
    uint64_t          now = sfs_tp_now_ms(), remaining;
    long              args_length;

    args_length = sfs_proto_direct_desc_unpack(req->data, req->hdr.args_length, &desc);
    if (args_length < 0) {
        return (int)args_length;
    }
    req->direct_iov = calloc(desc.count, sizeof(*req->direct_iov));
    if (!req->direct_iov) {
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < desc.count; i++) {
        req->direct_iov[i].iov_base = (void *)(uintptr_t)desc.address[i];
        req->direct_iov[i].iov_len  = desc.length[i];
    }
    req->direct_count = desc.count;
    req->direct_bytes = sfs_tp_iov_bytes(req->direct_iov, req->direct_count);
    req->args_length  = (size_t)args_length; /* the handler sees the arguments alone */
    /* copy only while the requester still waits, with a margin */
    remaining = desc.deadline_ms > now ? desc.deadline_ms - now : 0;
    req->direct_until_ms =
        now + remaining -
        (remaining / 2 < SFS_TP_DIRECT_MARGIN_MS ? remaining / 2 : SFS_TP_DIRECT_MARGIN_MS);
    return 0;
}

/* The part of `in` after its first `skip` bytes, into `out`; the count. */
static size_t sfs_tp_iov_skip(const struct iovec *in, size_t count, uint64_t skip,
                              struct iovec *out)
{
    size_t n = 0;

    for (size_t i = 0; i < count; i++) {
        if (skip >= in[i].iov_len) {
            skip -= in[i].iov_len;
            continue;
        }
        out[n].iov_base  = (uint8_t *)in[i].iov_base + skip;
        out[n++].iov_len = in[i].iov_len - skip;
        skip             = 0;
    }
    return n;
}

/* Copy `total` bytes between our `local` pieces and the buffers the
 * requester named, going on after a partial copy: into them (`to_peer`,
 * a read's reply) or out of them (a pulled write). A process we may not
 * reach or that is gone gets no more direct copies on this session. */
static int sfs_tp_direct_copy(sfs_tp_request_t *req, pid_t pid, const struct iovec *local,
                              size_t local_count, uint64_t total, int to_peer)
{
    sfs_tp_session_t *session = req->session;
    uint64_t          done    = 0;

    while (done < total) {
        struct iovec local_left[SFS_TP_DIRECT_MAX_IOV], remote_left[SFS_TP_DIRECT_MAX_IOV];
        size_t       nl = sfs_tp_iov_skip(local, local_count, done, local_left);
        size_t       nr = sfs_tp_iov_skip(req->direct_iov, req->direct_count, done, remote_left);
        ssize_t      n  = to_peer ? process_vm_writev(pid, local_left, nl, remote_left, nr, 0)
                                  : process_vm_readv(pid, local_left, nl, remote_left, nr, 0);

        if (n <= 0) {
            int err = n < 0 ? errno : EIO;

            if (err == EPERM || err == ESRCH) {
                __atomic_store_n(&session->direct_pid, 0, __ATOMIC_RELEASE);
                sfs_info("direct copies %s %s pid %u stop: %s", to_peer ? "to" : "from",
                         session->peer_host, session->peer_pid, strerror(err));
            }
            return sfs_error_set(-err, "direct copy %s %s pid %u failed: %s",
                                 to_peer ? "to" : "from", session->peer_host, session->peer_pid,
                                 strerror(err));
        }
        done += (uint64_t)n;
    }
    return 0;
}

int sfs_tp_request_deliver(sfs_tp_request_t *req, const struct iovec *payload, size_t count)
{
    pid_t    pid = (pid_t)__atomic_load_n(&req->session->direct_pid, __ATOMIC_ACQUIRE);
    uint64_t total;

    if (!req->direct_count || req->pull || !pid || count == 0 || count > SFS_TP_DIRECT_MAX_IOV) {
        return -EAGAIN;
    }
    total = sfs_tp_iov_bytes(payload, count);
    if (total < SFS_TP_DIRECT_MIN) {
        return -EAGAIN; /* small: UCX carries it as cheaply */
    }
    if (req->direct_bytes < total || sfs_tp_now_ms() >= req->direct_until_ms) {
        return -EAGAIN; /* does not fit, or the requester may give up soon */
    }
    if (sfs_tp_direct_copy(req, pid, payload, count, total, 1) != 0) {
        return -EAGAIN; /* an ordinary reply rewrites it all */
    }
    req->delivered        = total;
    req->delivered_marked = 1;
    return 0;
}

uint64_t sfs_tp_request_pull_length(const sfs_tp_request_t *req)
{
    return req->pull ? req->direct_bytes : 0;
}

int sfs_tp_request_pull(sfs_tp_request_t *req, void *buf, uint64_t length)
{
    pid_t        pid   = (pid_t)__atomic_load_n(&req->session->direct_pid, __ATOMIC_ACQUIRE);
    struct iovec local = {buf, length};

    if (!req->pull || req->direct_bytes != length) {
        return sfs_error_set(-EINVAL, "no pulled payload of %" PRIu64 " bytes in this request",
                             length);
    }
    if (!req->worker->pulls) {
        return sfs_error_set(SFS_PULL_REFUSED, "pulls are off here (STRIPEFS_DIRECT_PULL=0)");
    }
    if (!pid) {
        return sfs_error_set(SFS_PULL_REFUSED, "no direct copies from %s pid %u (not proven)",
                             req->session->peer_host, req->session->peer_pid);
    }
    if (sfs_tp_now_ms() >= req->direct_until_ms) {
        return sfs_error_set(SFS_PULL_REFUSED, "too close to the requester's deadline to copy");
    }
    /* (a failed copy has said why; the requester sends the data instead) */
    return sfs_tp_direct_copy(req, pid, &local, 1, length, 0) == 0 ? 0 : SFS_PULL_REFUSED;
}
